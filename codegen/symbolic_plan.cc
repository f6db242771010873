// Symbolic graphs: validation, canonical key text and the extern plan; see symbolic_plan.h.
#include "codegen/symbolic_plan.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "codegen/ir/sym_expr.h"
#include "codegen/ir/verifier.h"
#include "google/protobuf/text_format.h"
#include "base/status_macros.h"

namespace tccd::codegen {
namespace {

constexpr int kMaxFacts = 4096;
constexpr size_t kMaxFactBytes = 1024;
constexpr int kMaxArgDepth = 8;

bool DimIsSymbolic(const v1::Dim& d) { return d.kind_case() == v1::Dim::kExpr; }

bool MetaIsSymbolic(const v1::TensorMeta& m) {
  return std::any_of(m.sizes().begin(), m.sizes().end(), DimIsSymbolic) ||
         std::any_of(m.strides().begin(), m.strides().end(), DimIsSymbolic) ||
         DimIsSymbolic(m.storage_offset());
}

bool ValueIsSymbolic(const v1::Value& v) {
  if (v.kind_case() == v1::Value::kSymExpr) return true;
  if (v.kind_case() == v1::Value::kList)
    return std::any_of(v.list().items().begin(), v.list().items().end(), ValueIsSymbolic);
  return false;
}

// Rewrites one expression to canonical text, noting the highest symbol index.
absl::Status Canonicalize(std::string& text, int& num_symbols, const std::string& where) {
  absl::StatusOr<ir::SymExpr> e = ir::ParseSymExpr(text);
  if (!e.ok()) return absl::InvalidArgumentError(absl::StrCat(where, ": ", e.status().message()));
  std::vector<int> symbols;
  ir::CollectSymbols(*e, symbols);
  for (int s : symbols) num_symbols = std::max(num_symbols, s + 1);
  text = ir::PrintSymExpr(*e);
  return absl::OkStatus();
}

// A static size, stride or storage offset: what the static verifier (ir::VerifyTensorType)
// would allow one of them alone, so that the symbolic passes may scale it by an element size
// without overflow (a request fuzzer finding: a storage offset of INT64_MAX times 4 bytes in
// the symbolic gemm matcher).
absl::Status CheckStaticDim(int64_t value, const std::string& where) {
  if (value < 0 || value > ir::kMaxTensorBytes)
    return absl::InvalidArgumentError(absl::StrCat(where, ": a size, stride or offset of ", value,
                                                   " (0 to ", ir::kMaxTensorBytes, ")"));
  return absl::OkStatus();
}

absl::Status CanonicalDim(v1::Dim& d, int& num_symbols, const std::string& where) {
  switch (d.kind_case()) {
    case v1::Dim::kValue:
      return CheckStaticDim(d.value(), where);
    case v1::Dim::kExpr: {
      RETURN_IF_ERROR(Canonicalize(*d.mutable_expr(), num_symbols, where));
      // An expression that folded to a constant ("2*3") is that constant.
      absl::StatusOr<ir::SymExpr> e = ir::ParseSymExpr(d.expr());
      if (e.ok() && e->IsConst()) {
        d.set_value(e->value);
        return CheckStaticDim(d.value(), where);
      }
      return absl::OkStatus();
    }
    default:
      return absl::InvalidArgumentError(absl::StrCat(where, ": a size/stride has no value"));
  }
}

absl::Status CanonicalMeta(v1::TensorMeta& m, int& num_symbols, const std::string& where) {
  if (!v1::DType_IsValid(m.dtype()) || m.dtype() == v1::DTYPE_UNSPECIFIED)
    return absl::InvalidArgumentError(absl::StrCat(where, ": missing or unknown dtype"));
  if (m.device().type() != v1::CPU && m.device().type() != v1::CUDA)
    return absl::InvalidArgumentError(absl::StrCat(where, ": device must be cpu or cuda"));
  if (m.sizes_size() > ir::kMaxRank || m.strides_size() != m.sizes_size())
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": rank above ", ir::kMaxRank, " or strides do not match sizes"));
  for (v1::Dim& d : *m.mutable_sizes()) RETURN_IF_ERROR(CanonicalDim(d, num_symbols, where));
  for (v1::Dim& d : *m.mutable_strides()) RETURN_IF_ERROR(CanonicalDim(d, num_symbols, where));
  if (m.has_storage_offset())
    RETURN_IF_ERROR(CanonicalDim(*m.mutable_storage_offset(), num_symbols, where));
  // Neither enters a key (tccd.proto): rank 0 on cuda:0 and rank 7 on cuda:7 share the entry.
  m.mutable_device()->set_index(-1);
  m.set_requires_grad(false);
  return absl::OkStatus();
}

// Checks refs (a node reads inputs and earlier nodes' outputs only) and canonicalises the
// expressions of one argument. `defined` is the number of nodes before the reader.
absl::Status CanonicalValue(v1::Value& v, const v1::Graph& graph, int defined, int& num_symbols,
                            const std::string& where, int depth) {
  if (depth > kMaxArgDepth)
    return absl::InvalidArgumentError(absl::StrCat(where, ": lists nested too deeply"));
  switch (v.kind_case()) {
    case v1::Value::kRef: {
      const v1::ValueRef& r = v.ref();
      if (r.node() < 0) {
        if (-(r.node() + 1) >= graph.inputs_size() || r.output() != 0)
          return absl::InvalidArgumentError(
              absl::StrCat(where, ": reference to a graph input that does not exist"));
      } else if (r.node() >= defined || r.output() < 0 ||
                 r.output() >= graph.nodes(r.node()).outputs_size()) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": reference to node ", r.node(),
                                                       " output ", r.output(),
                                                       ", which is not defined before it"));
      }
      return absl::OkStatus();
    }
    case v1::Value::kSymExpr: {
      RETURN_IF_ERROR(Canonicalize(*v.mutable_sym_expr(), num_symbols, where));
      absl::StatusOr<ir::SymExpr> e = ir::ParseSymExpr(v.sym_expr());
      if (e.ok() && e->IsConst()) v.set_int_value(e->value);
      return absl::OkStatus();
    }
    case v1::Value::kList:
      for (v1::Value& item : *v.mutable_list()->mutable_items())
        RETURN_IF_ERROR(CanonicalValue(item, graph, defined, num_symbols, where, depth + 1));
      return absl::OkStatus();
    case v1::Value::kStringValue:
      if (v.string_value().size() > 4096)
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": string argument longer than 4096 bytes"));
      return absl::OkStatus();
    case v1::Value::KIND_NOT_SET:
      return absl::InvalidArgumentError(absl::StrCat(where, ": argument has no value"));
    default:
      return absl::OkStatus();
  }
}

}  // namespace

bool HasSymbols(const v1::Graph& graph) {
  if (std::any_of(graph.inputs().begin(), graph.inputs().end(), MetaIsSymbolic)) return true;
  for (const v1::Node& n : graph.nodes()) {
    if (std::any_of(n.outputs().begin(), n.outputs().end(), MetaIsSymbolic)) return true;
    if (std::any_of(n.args().begin(), n.args().end(), ValueIsSymbolic)) return true;
    for (const v1::NamedValue& kv : n.kwargs())
      if (ValueIsSymbolic(kv.value())) return true;
  }
  return std::any_of(graph.outputs().begin(), graph.outputs().end(), ValueIsSymbolic);
}

absl::StatusOr<SymbolicGraph> PrepareSymbolicGraph(const v1::Graph& proto,
                                                   const v1::ShapeEnv& shape_env) {
  if (proto.nodes_size() > ir::kMaxNodes)
    return absl::InvalidArgumentError(
        absl::StrCat("graph has ", proto.nodes_size(), " nodes; at most ", ir::kMaxNodes));
  SymbolicGraph out;
  out.graph = proto;
  v1::Graph& g = out.graph;
  int& n = out.num_symbols;
  for (int i = 0; i < g.inputs_size(); ++i)
    RETURN_IF_ERROR(CanonicalMeta(*g.mutable_inputs(i), n, absl::StrCat("input ", i)));
  for (int id = 0; id < g.nodes_size(); ++id) {
    v1::Node& node = *g.mutable_nodes(id);
    const std::string where = absl::StrCat("node ", id, " (", node.target().substr(0, 64), ")");
    if (node.target().empty() || node.target().size() > 256 ||
        node.target().find("::") == std::string::npos)
      return absl::InvalidArgumentError(absl::StrCat(where, ": target must be ns::name.overload"));
    for (v1::Value& a : *node.mutable_args())
      RETURN_IF_ERROR(CanonicalValue(a, g, id, n, where, 0));
    for (v1::NamedValue& kv : *node.mutable_kwargs())
      RETURN_IF_ERROR(CanonicalValue(*kv.mutable_value(), g, id, n, where, 0));
    for (v1::TensorMeta& m : *node.mutable_outputs()) RETURN_IF_ERROR(CanonicalMeta(m, n, where));
  }
  for (v1::Value& v : *g.mutable_outputs())
    RETURN_IF_ERROR(CanonicalValue(v, g, g.nodes_size(), n, "graph output", 0));
  for (const v1::Constant& c : g.constants())
    if (c.input() < 0 || c.input() >= g.inputs_size())
      return absl::InvalidArgumentError(
          absl::StrCat("constant names input ", c.input(), ", which does not exist"));

  if (shape_env.guards_size() > kMaxFacts)
    return absl::InvalidArgumentError(
        absl::StrCat("shape_env has ", shape_env.guards_size(), " guards; at most ", kMaxFacts));
  for (const std::string& guard : shape_env.guards()) {
    std::string fact(absl::StripAsciiWhitespace(guard));
    if (fact.empty() || fact.size() > kMaxFactBytes)
      return absl::InvalidArgumentError(
          absl::StrCat("shape_env guard of ", fact.size(), " bytes (1 to ", kMaxFactBytes, ")"));
    out.facts.push_back(std::move(fact));
  }
  std::sort(out.facts.begin(), out.facts.end());
  out.facts.erase(std::unique(out.facts.begin(), out.facts.end()), out.facts.end());

  // The key text: the canonical graph without the constants' bytes (the key adds their digests)
  // and the facts. Protobuf's text format is deterministic for messages without maps.
  v1::Graph keyed = g;
  for (v1::Constant& c : *keyed.mutable_constants()) c.clear_data();
  google::protobuf::TextFormat::Printer printer;
  printer.SetSingleLineMode(true);
  std::string text;
  if (!printer.PrintToString(keyed, &text))
    return absl::InternalError("cannot print the symbolic graph");
  out.canonical_text = absl::StrCat("symbolic-graph v1\n", text, "\n");
  for (const std::string& f : out.facts) absl::StrAppend(&out.canonical_text, "fact ", f, "\n");
  return out;
}

}  // namespace tccd::codegen
