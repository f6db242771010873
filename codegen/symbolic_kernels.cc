// Symbolic kernels: the surrogate graph, the per-group checks and the plan; see
// symbolic_kernels.h.
#include "codegen/symbolic_kernels.h"

#include <algorithm>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "codegen/ir/proto_convert.h"
#include "codegen/ir/sym_expr.h"
#include "codegen/passes/fusion.h"
#include "codegen/passes/horizontal_fusion.h"
#include "codegen/passes/index_ops.h"
#include "codegen/passes/kernel_builder.h"
#include "codegen/passes/reduction_fusion.h"
#include "codegen/passes/scatter_ops.h"
#include "base/status_macros.h"

namespace tccd::codegen {
namespace {

SymbolicLowering AllExtern(const v1::Graph& g) {
  SymbolicLowering out;
  for (int id = 0; id < g.nodes_size(); ++id) out.schedule.push_back({.group = -1, .node = id});
  return out;
}

// --- The surrogate graph -----------------------------------------------------------------------

absl::Status Substitute(std::string* text, absl::Span<const int64_t> values, int64_t* out) {
  ASSIGN_OR_RETURN(ir::SymExpr e, ir::ParseSymExpr(*text));
  ASSIGN_OR_RETURN(*out, ir::EvalSymExpr(e, values));
  return absl::OkStatus();
}

absl::Status SubstituteDim(v1::Dim& d, absl::Span<const int64_t> values) {
  if (d.kind_case() != v1::Dim::kExpr) return absl::OkStatus();
  int64_t v = 0;
  RETURN_IF_ERROR(Substitute(d.mutable_expr(), values, &v));
  d.set_value(v);
  return absl::OkStatus();
}

absl::Status SubstituteMeta(v1::TensorMeta& m, absl::Span<const int64_t> values) {
  for (v1::Dim& d : *m.mutable_sizes()) RETURN_IF_ERROR(SubstituteDim(d, values));
  for (v1::Dim& d : *m.mutable_strides()) RETURN_IF_ERROR(SubstituteDim(d, values));
  if (m.has_storage_offset()) RETURN_IF_ERROR(SubstituteDim(*m.mutable_storage_offset(), values));
  return absl::OkStatus();
}

absl::Status SubstituteValue(v1::Value& v, absl::Span<const int64_t> values) {
  if (v.kind_case() == v1::Value::kSymExpr) {
    int64_t x = 0;
    RETURN_IF_ERROR(Substitute(v.mutable_sym_expr(), values, &x));
    v.set_int_value(x);
  } else if (v.kind_case() == v1::Value::kList) {
    for (v1::Value& item : *v.mutable_list()->mutable_items())
      RETURN_IF_ERROR(SubstituteValue(item, values));
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::Graph> SurrogateGraph(const SymbolicGraph& sym) {
  std::vector<int64_t> values;
  for (int s = 0; s < sym.num_symbols; ++s) values.push_back(SurrogateSymbolValue(s));
  v1::Graph g = sym.graph;
  for (v1::TensorMeta& m : *g.mutable_inputs()) RETURN_IF_ERROR(SubstituteMeta(m, values));
  for (v1::Node& node : *g.mutable_nodes()) {
    for (v1::Value& a : *node.mutable_args()) RETURN_IF_ERROR(SubstituteValue(a, values));
    for (v1::NamedValue& kv : *node.mutable_kwargs())
      RETURN_IF_ERROR(SubstituteValue(*kv.mutable_value(), values));
    for (v1::TensorMeta& m : *node.mutable_outputs()) RETURN_IF_ERROR(SubstituteMeta(m, values));
  }
  for (v1::Value& v : *g.mutable_outputs()) RETURN_IF_ERROR(SubstituteValue(v, values));
  return g;
}

// --- The checks on the symbolic graph ----------------------------------------------------------

bool SameDim(const v1::Dim& a, const v1::Dim& b) {
  if (a.kind_case() != b.kind_case()) return false;
  return a.kind_case() == v1::Dim::kExpr ? a.expr() == b.expr() : a.value() == b.value();
}

bool DimIsOne(const v1::Dim& d) { return d.kind_case() == v1::Dim::kValue && d.value() == 1; }

bool HasSymArg(const v1::Value& v) {
  if (v.kind_case() == v1::Value::kSymExpr) return true;
  if (v.kind_case() == v1::Value::kList)
    return std::any_of(v.list().items().begin(), v.list().items().end(), HasSymArg);
  return false;
}

// An output the op returns as None (the client's 0-element placeholder, serialize.py
// _absent_output; the layer norm backward halves, symbolic_rewrites.h) that the group does not
// export: no kernel stores it, so it is at no level of the iteration space and needs none.
bool IsUnreadPlaceholder(const v1::TensorMeta& t, int node, int output,
                         const std::vector<v1::ValueRef>& outputs) {
  if (t.sizes_size() != 1 || t.sizes(0).kind_case() != v1::Dim::kValue || t.sizes(0).value() != 0)
    return false;
  return std::none_of(outputs.begin(), outputs.end(), [&](const v1::ValueRef& r) {
    return r.node() == node && r.output() == output;
  });
}

v1::ValueRef ProtoRef(const ir::ValueRef& r) {
  v1::ValueRef out;
  out.set_node(r.is_input() ? -(r.output + 1) : r.node);
  out.set_output(r.is_input() ? 0 : r.output);
  return out;
}

const v1::TensorMeta& MetaOf(const v1::Graph& g, const v1::ValueRef& r) {
  return r.node() < 0 ? g.inputs(-(r.node() + 1)) : g.nodes(r.node()).outputs(r.output());
}

// Whether `node` takes a SymInt argument anywhere: its value would be baked into the kernel.
bool HasSymbolicArgument(const v1::Node& node) {
  return std::any_of(node.args().begin(), node.args().end(), HasSymArg) ||
         std::any_of(node.kwargs().begin(), node.kwargs().end(),
                     [](const v1::NamedValue& kv) { return HasSymArg(kv.value()); });
}

// Why member m's output o (meta `t`) is at no level of the iteration space; "" when it is.
using MemberCheck = absl::FunctionRef<std::string(int m, int o, const v1::TensorMeta& t)>;

// The checks every kind of symbolic kernel group shares, around its own member check: no member
// with a symbolic argument, every member output passing `member` (in node order, each node's
// argument check first), every input broadcasting to `space` by static 1s or equal dims
// (right-aligned), no output with a storage offset. "" when the group passes; else why not.
std::string WhyNotGroup(const v1::Graph& g, const FusionGroup& group,
                        const std::vector<v1::ValueRef>& inputs,
                        const std::vector<v1::ValueRef>& outputs, absl::Span<const v1::Dim> space,
                        MemberCheck member, const PointwiseKernel* gathers = nullptr) {
  const int rank = static_cast<int>(space.size());
  for (int m : group.nodes) {
    const v1::Node& node = g.nodes(m);
    if (HasSymbolicArgument(node))
      return absl::StrCat("node ", m, " (", node.target(), ") has a symbolic argument");
    for (int o = 0; o < node.outputs_size(); ++o)
      if (std::string why = member(m, o, node.outputs(o)); !why.empty()) return why;
  }
  for (int i = 0; i < static_cast<int>(inputs.size()); ++i) {
    // A gather operand is read at its own coordinates with its own strides, not broadcast
    // (the caller checked what its gathers read).
    if (gathers != nullptr && IsGatherOperand(*gathers, i)) continue;
    const v1::TensorMeta& t = MetaOf(g, inputs[i]);
    if (t.sizes_size() > rank) return "an input of higher rank than the iteration space";
    for (int j = 0; j < t.sizes_size(); ++j) {
      const v1::Dim& dim = t.sizes(j);
      if (!DimIsOne(dim) && !SameDim(dim, space[rank - t.sizes_size() + j]))
        return "an input that broadcasts to the iteration space at the placeholder only";
    }
  }
  for (const v1::ValueRef& r : outputs) {
    const v1::TensorMeta& t = MetaOf(g, r);
    if (t.has_storage_offset() &&
        !(t.storage_offset().kind_case() == v1::Dim::kValue && t.storage_offset().value() == 0))
      return "an output with a storage offset";
  }
  return "";
}

// Reduction groups: the operand of the kernel's rank whose sizes at the placeholder (the
// surrogate graph) are the kernel's, its symbolic sizes into `space`. "" or why not.
std::string FindReductionSpace(const v1::Graph& g, const v1::Graph& surrogate,
                               const FusionGroup& group, const std::vector<v1::ValueRef>& inputs,
                               const PointwiseKernel& kernel, std::vector<v1::Dim>* space) {
  const int rank = static_cast<int>(kernel.shape.size());
  auto is_space = [&](const v1::TensorMeta& placeholder) {
    if (placeholder.sizes_size() != rank) return false;
    for (int d = 0; d < rank; ++d)
      if (placeholder.sizes(d).value() != kernel.shape[d]) return false;
    return true;
  };
  const v1::TensorMeta* found = nullptr;
  for (const v1::ValueRef& r : inputs)
    if (found == nullptr && is_space(MetaOf(surrogate, r))) found = &MetaOf(g, r);
  for (int m : group.nodes)
    for (int o = 0; found == nullptr && o < g.nodes(m).outputs_size(); ++o)
      if (is_space(surrogate.nodes(m).outputs(o))) found = &g.nodes(m).outputs(o);
  if (found == nullptr) return "no operand has the iteration space's sizes";
  space->assign(found->sizes().begin(), found->sizes().end());
  return "";
}

// "" when the group's kernel is right for every size its symbols take; else why not.
std::string WhyNotSymbolic(const v1::Graph& g, const FusionGroup& group,
                           const std::vector<v1::ValueRef>& inputs,
                           const std::vector<v1::ValueRef>& outputs,
                           const PointwiseKernel& kernel) {
  if (kernel.is_row_reduction()) return "a reduction kernel";
  if (HasIndexOps(kernel)) return "index-aware ops (their offsets come from sizes)";
  const v1::TensorMeta& first = g.nodes(group.nodes.front()).outputs(0);
  const std::vector<v1::Dim> space(first.sizes().begin(), first.sizes().end());
  const int rank = static_cast<int>(space.size());
  if (rank != static_cast<int>(kernel.shape.size()))
    return "the iteration space's rank differs from the kernel's";
  // Every member output is an element value: the space's sizes.
  return WhyNotGroup(
      g, group, inputs, outputs, space, [&](int m, int, const v1::TensorMeta& out) -> std::string {
        if (out.sizes_size() != rank)
          return absl::StrCat("node ", m, " has another rank than the iteration space");
        for (int d = 0; d < rank; ++d)
          if (!SameDim(out.sizes(d), space[d]))
            return absl::StrCat("node ", m, " dim ", d,
                                " is not the iteration space's (equal at the placeholder only)");
        return "";
      });
}

bool IsSymbolicEmbedding(const v1::Graph& g, int id);

// Row-reduction groups (SymbolicKernelOptions::rows). The iteration space is the operand of the
// kernel's rank whose sizes at the placeholder are the kernel's (the reduced tensor); on the
// symbolic graph its reduced dims must be static or a single run-time dim, and every
// member value must be at one level of it, exactly: element values have its sizes, row values
// its leading dims (with the reduced dims as 1s, or dropped for values that stay inside the
// group: the plan's runtimes give every kernel output the kernel's rank), and every input
// broadcasts to it by static 1s or equal dims. On success `space` holds the symbolic sizes.
// `gathers_ok`: the group's index ops passed WhyNotSymbolicRowGathers (row gathers on); its
// gather operands are then read at their own coordinates, not broadcast.
std::string WhyNotSymbolicRows(const v1::Graph& g, const v1::Graph& surrogate,
                               const FusionGroup& group, const std::vector<v1::ValueRef>& inputs,
                               const std::vector<v1::ValueRef>& outputs,
                               const PointwiseKernel& kernel, std::vector<v1::Dim>* space,
                               bool gathers_ok = false) {
  if (kernel.is_column_reduction()) return "a column reduction";
  const bool gathers = HasIndexOps(kernel);
  if (gathers && !gathers_ok) return "index-aware ops (their offsets come from sizes)";
  // 16-bit operands are fine (the row kernels compute in f32 and round at loads and stores, as
  // the static ones): the gradient gap that once kept them extern was the client's
  // log_softmax decomposition rounding its logsumexp to bf16 (client/tccd/decompositions.py),
  // in static graphs too.
  for (int64_t t : kernel.output_zero_tail)
    if (t != 0) return "a zero-padded output";
  const int rank = static_cast<int>(kernel.shape.size());
  const int outer = rank - kernel.reduction.num_reduced_dims;
  if (std::string why = FindReductionSpace(g, surrogate, group, inputs, kernel, space);
      !why.empty())
    return why;
  // A row of run-time length: one reduced dim (the emitters loop over it), and the plan's
  // runtimes take the kernel's run-time sizes from its first output, which must then have them.
  bool runtime_length = false;
  for (int d = outer; d < rank; ++d) runtime_length |= (*space)[d].kind_case() != v1::Dim::kValue;
  if (runtime_length && outer != rank - 1) return "a row of run-time length over several dims";
  // Row gathers index the table along a static row (an embedding's width); a run-time row
  // length is not needed by any graph here and not tested.
  if (runtime_length && gathers) return "a row gather in a row of run-time length";
  if (runtime_length && !outputs.empty()) {
    const v1::TensorMeta& first = MetaOf(g, outputs.front());
    if (first.sizes_size() != rank) return "an output without the reduced dims";
    for (int d = 0; d < rank; ++d)
      if (!SameDim(first.sizes(d), (*space)[d]))
        return "a row of run-time length whose first output is a row value";
  }
  std::vector<bool> is_output(g.nodes_size(), false);
  for (const v1::ValueRef& r : outputs) {
    if (MetaOf(g, r).sizes_size() != rank) return "an output without the reduced dims";
    if (r.node() >= 0) is_output[r.node()] = true;
  }
  // Element level: the space's sizes; row level: its leading dims, then 1s (keepdim) or nothing
  // (values that stay inside the group).
  return WhyNotGroup(
      g, group, inputs, outputs, *space,
      [&](int m, int o, const v1::TensorMeta& t) -> std::string {
        if (IsUnreadPlaceholder(t, m, o, outputs)) return "";
        bool element = t.sizes_size() == rank,
             row = element || (!is_output[m] && t.sizes_size() == outer);
        for (int d = 0; d < t.sizes_size() && (element || row); ++d) {
          const bool same = SameDim(t.sizes(d), (*space)[d]);
          if (!same) element = false;
          if (d < outer ? !same : !DimIsOne(t.sizes(d))) row = false;
        }
        if (element || row) return "";
        return absl::StrCat("node ", m, " (", g.nodes(m).target(),
                            ") is at no level of the iteration space for every size");
      },
      gathers ? &kernel : nullptr);
}

// Row gathers in a symbolic row group (SymbolicKernelOptions::row_gathers): "" when every
// member that needs the point's coordinates is an embedding whose kernel is right for every
// size (IsSymbolicEmbedding: a static [V, E] table, the output its ids' sizes then E) with its
// output at the element level of the kernel (rank equal: the ids' sizes are then the row's
// leading dims, which WhyNotSymbolicRows checks as the space's). The gathered tables and ids
// are then kernel inputs read by gathers only (the row regrouping's rule: no member makes or
// loads what a member gathers), so they need no broadcast. The row emitter reads the id once
// per row at the row's run-time coordinates (c<d>, from p.size) and the table per element,
// both with their own strides (NativeCall.gather_inputs).
std::string WhyNotSymbolicRowGathers(const v1::Graph& g, const ir::Graph& surrogate,
                                     const FusionGroup& group, const PointwiseKernel& kernel) {
  for (int m : group.nodes) {
    if (!NeedsCoordinates(surrogate, surrogate.nodes[m])) continue;
    if (!IsSymbolicEmbedding(g, m))
      return absl::StrCat("node ", m, " (", g.nodes(m).target(),
                          ") is an index op no symbolic row kernel takes");
    if (g.nodes(m).outputs(0).sizes_size() != static_cast<int>(kernel.shape.size()))
      return absl::StrCat("node ", m, " is an embedding below the row kernel's rank");
  }
  if (kernel.is_column_reduction() || HasScatter(kernel)) return "an index op in a column kernel";
  return "";
}

// Column-reduction groups (SymbolicKernelOptions::rows; bias and norm weight gradients): the
// leading (reduced) dims may be symbolic, the kept (trailing) ones must be static, so the
// column tiling, vector width and cluster split stay compile-time choices that hold for every
// row count. The iteration space is the operand whose sizes at the placeholder are the
// kernel's; every member value is at one level of it: element values have its sizes, column
// values its kept dims (with the reduced dims as 1s, or dropped: a bias gradient is [N] of an
// [M, N] space; the plan runtimes right-align a kernel's operands to its iteration space), and
// every input broadcasts to it by static 1s or equal dims. On success `space` holds the
// symbolic sizes.
std::string WhyNotSymbolicColumns(const v1::Graph& g, const v1::Graph& surrogate,
                                  const FusionGroup& group, const std::vector<v1::ValueRef>& inputs,
                                  const std::vector<v1::ValueRef>& outputs,
                                  const PointwiseKernel& kernel, std::vector<v1::Dim>* space) {
  if (HasIndexOps(kernel)) return "index-aware ops (their offsets come from sizes)";
  for (int64_t t : kernel.output_zero_tail)
    if (t != 0) return "a zero-padded output";
  if (!kernel.fixed_strides.empty()) return "a column kernel with fixed operand layouts";
  const int rank = static_cast<int>(kernel.shape.size());
  const int lead = kernel.reduction.num_reduced_dims;
  if (std::string why = FindReductionSpace(g, surrogate, group, inputs, kernel, space);
      !why.empty())
    return why;
  for (int d = lead; d < rank; ++d)
    if ((*space)[d].kind_case() != v1::Dim::kValue) return "a column of run-time length";
  // Right-aligned: element level has the space's sizes; column level its kept dims, after 1s
  // for the reduced dims or without them.
  return WhyNotGroup(
      g, group, inputs, outputs, *space, [&](int m, int o, const v1::TensorMeta& t) -> std::string {
        if (IsUnreadPlaceholder(t, m, o, outputs)) return "";
        const int n = t.sizes_size();
        bool element = n == rank, column = n <= rank && n >= rank - lead;
        for (int j = 0; j < n && (element || column); ++j) {
          const int d = rank - n + j;
          const bool same = SameDim(t.sizes(j), (*space)[d]);
          if (!same) element = false;
          if (d < lead ? !DimIsOne(t.sizes(j)) : !same) column = false;
        }
        if (element || column) return "";
        return absl::StrCat("node ", m, " (", g.nodes(m).target(),
                            ") is at no level of the iteration space for every size");
      });
}

// An embedding whose index kernel is right for every size (SymbolicKernelOptions::
// embeddings): the table [V, E] static (V is the kernel's bounds check, a constant), the output
// the indices' sizes then E, no symbolic argument. Its kernel reads the indices at the point's
// leading coordinates and the table at (index, last coordinate), both by gather with their own
// strides; the coordinates come from the run-time sizes. No other op decides which element a
// point reads from sizes alone, so only a lone embedding is such a group.
bool IsSymbolicEmbedding(const v1::Graph& g, int id) {
  const v1::Node& n = g.nodes(id);
  if (n.target() != "aten::embedding.default" || n.args_size() < 2 || n.outputs_size() != 1 ||
      n.args(0).kind_case() != v1::Value::kRef || n.args(1).kind_case() != v1::Value::kRef ||
      HasSymbolicArgument(n))
    return false;
  const v1::TensorMeta& table = MetaOf(g, n.args(0).ref());
  const v1::TensorMeta& indices = MetaOf(g, n.args(1).ref());
  const v1::TensorMeta& out = n.outputs(0);
  if (table.sizes_size() != 2 || out.sizes_size() != indices.sizes_size() + 1) return false;
  for (const v1::Dim& d : table.sizes())
    if (d.kind_case() != v1::Dim::kValue) return false;
  for (int d = 0; d < indices.sizes_size(); ++d)
    if (!SameDim(out.sizes(d), indices.sizes(d))) return false;
  if (!SameDim(out.sizes(out.sizes_size() - 1), table.sizes(1))) return false;
  return !out.has_storage_offset() ||
         (out.storage_offset().kind_case() == v1::Dim::kValue && out.storage_offset().value() == 0);
}

// An embedding gradient as scatter_ops.h's op (symbolic_rewrites.h made it, CUDA): the output
// [V, E] static f32, grad [indices..., E]. Its kernel iterates over grad's sizes (run-time
// dims), loads grad as an element operand, gathers the indices at the point's leading
// coordinates and adds into the output at (index, last coordinate) with its own strides; the
// launcher zero-fills the output (V * E, static) first.
bool IsSymbolicScatter(const v1::Graph& g, int id) {
  const v1::Node& n = g.nodes(id);
  if (n.target() != kEmbeddingScatterAddTarget || n.args_size() != 4 || n.outputs_size() != 1 ||
      n.args(0).kind_case() != v1::Value::kRef || n.args(1).kind_case() != v1::Value::kRef ||
      HasSymbolicArgument(n))
    return false;
  const v1::TensorMeta& grad = MetaOf(g, n.args(0).ref());
  const v1::TensorMeta& indices = MetaOf(g, n.args(1).ref());
  const v1::TensorMeta& out = n.outputs(0);
  if (out.sizes_size() != 2 || grad.sizes_size() != indices.sizes_size() + 1) return false;
  for (const v1::Dim& d : out.sizes())
    if (d.kind_case() != v1::Dim::kValue) return false;
  for (int d = 0; d < indices.sizes_size(); ++d)
    if (!SameDim(grad.sizes(d), indices.sizes(d))) return false;
  return SameDim(grad.sizes(grad.sizes_size() - 1), out.sizes(1));
}

// A cat along a static dim whose parts have the output's sizes in every other dim (the same
// expressions): the part boundaries (the kernel's masks and shifts) are constants, the other
// coordinates the point's own, so its index kernel is right for every size. (The backward's
// q/k/v gradients into [B, T, 3 x D].)
bool IsSymbolicCat(const v1::Graph& g, int id) {
  const v1::Node& n = g.nodes(id);
  if (n.target() != "aten::cat.default" || n.args_size() < 1 || n.args_size() > 2 ||
      n.kwargs_size() != 0 || n.outputs_size() != 1 || n.args(0).kind_case() != v1::Value::kList ||
      n.args(0).list().items_size() == 0 || HasSymbolicArgument(n))
    return false;
  if (n.args_size() == 2 && n.args(1).kind_case() != v1::Value::kIntValue) return false;
  const v1::TensorMeta& out = n.outputs(0);
  const int rank = out.sizes_size();
  int64_t d = n.args_size() == 2 ? n.args(1).int_value() : 0;
  if (d < 0) d += rank;
  if (d < 0 || d >= rank || out.sizes(static_cast<int>(d)).kind_case() != v1::Dim::kValue)
    return false;
  for (const v1::Value& part : n.args(0).list().items()) {
    if (part.kind_case() != v1::Value::kRef) return false;
    const v1::TensorMeta& t = MetaOf(g, part.ref());
    if (t.sizes_size() != rank) return false;
    for (int k = 0; k < rank; ++k) {
      if (k == d ? t.sizes(k).kind_case() != v1::Dim::kValue : !SameDim(t.sizes(k), out.sizes(k)))
        return false;
    }
  }
  return !out.has_storage_offset() ||
         (out.storage_offset().kind_case() == v1::Dim::kValue && out.storage_offset().value() == 0);
}

// An integral arange(end) whose one output is [end] (the position ids: arange(T) with T a
// symbol): a kernel of its own that stores each point's coordinate, its length the output's
// run-time size (SymbolicKernelOptions::aranges). Its SymInt argument is that size, which the
// kernel never reads. Else ATen's arange or the runtime's host fill and copy (54 us of host time
// per forward call of the dynamic bench, H200 profile).
bool IsSymbolicArange(const v1::Graph& g, int id) {
  const v1::Node& n = g.nodes(id);
  if (n.target() != "aten::arange.default" || n.args_size() != 1 || n.outputs_size() != 1)
    return false;
  for (const v1::NamedValue& kv : n.kwargs()) {
    if (kv.value().kind_case() == v1::Value::kRef) return false;
    if (kv.name() == "pin_memory" && kv.value().kind_case() == v1::Value::kBoolValue &&
        kv.value().bool_value())
      return false;
  }
  const v1::TensorMeta& out = n.outputs(0);
  if ((out.dtype() != v1::INT64 && out.dtype() != v1::INT32) || out.sizes_size() != 1) return false;
  if (out.strides_size() == 1 &&
      !(out.strides(0).kind_case() == v1::Dim::kValue && out.strides(0).value() == 1))
    return false;
  return !out.has_storage_offset() ||
         (out.storage_offset().kind_case() == v1::Dim::kValue && out.storage_offset().value() == 0);
}

// The kernel of an IsSymbolicArange node: out[i] = i over the surrogate's [end].
PointwiseKernel ArangeKernel(const ir::Graph& surrogate, int id, std::string name) {
  const ir::TensorType& out = surrogate.nodes[id].outputs[0];
  PointwiseKernel k;
  k.name = std::move(name);
  k.shape = out.sizes;
  k.output_dtypes = {out.dtype};
  k.fused_ops = {surrogate.nodes[id].target};
  PwBuilder b(&k.body);
  PwInstr index;
  index.op = PwOp::kIndex;
  index.dtype = ir::DType::kI64;
  index.operand = 0;
  const int value = b.Coerce(b.Emit(std::move(index)), out.dtype);
  PwInstr store;
  store.op = PwOp::kStore;
  store.dtype = out.dtype;
  store.operand = 0;
  store.args = {value};
  b.Emit(std::move(store));
  return k;
}

// Index-aware groups: "" when the group is a lone symbolic embedding (IsSymbolicEmbedding) whose
// inputs are all read by gather, or a lone symbolic scatter (IsSymbolicScatter) that gathers
// its indices and loads its values; else why not.
std::string WhyNotSymbolicIndex(const v1::Graph& g, const FusionGroup& group,
                                const PointwiseKernel& kernel,
                                const SymbolicKernelOptions& options) {
  const bool embeddings = options.embeddings;
  if (embeddings && group.nodes.size() == 1 && IsSymbolicScatter(g, group.nodes.front())) {
    if (!HasScatter(kernel) || kernel.output_dtypes.size() != 1)
      return "a scatter without its output";
    const v1::Node& n = g.nodes(group.nodes.front());
    const v1::TensorMeta& grad = MetaOf(g, n.args(0).ref());
    if (kernel.shape.size() != static_cast<size_t>(grad.sizes_size()))
      return "the iteration space's rank differs from the kernel's";
    return "";
  }
  const int front = group.nodes.front();
  if (group.nodes.size() != 1 ||
      !((embeddings && IsSymbolicEmbedding(g, front)) || (options.cats && IsSymbolicCat(g, front))))
    return "index-aware ops (their offsets come from sizes)";
  if (kernel.is_row_reduction() || kernel.is_column_reduction() || HasScatter(kernel))
    return "an index op in a reduction or scatter kernel";
  for (int i = 0; i < static_cast<int>(kernel.input_dtypes.size()); ++i)
    if (!IsGatherOperand(kernel, i)) return "an index kernel input read by a plain load";
  if (kernel.shape.size() != static_cast<size_t>(g.nodes(front).outputs(0).sizes_size()))
    return "the iteration space's rank differs from the kernel's";
  return "";
}

// Plan value ids: graph inputs first, then every node's outputs in order.
struct ValueIds {
  std::vector<int> first_output;  // per node
  int Of(const v1::ValueRef& r) const {
    return r.node() < 0 ? -(r.node() + 1) : first_output[r.node()] + r.output();
  }
};

void RemapRefs(v1::Value& v, const ValueIds& ids, std::vector<int>* uses) {
  if (v.kind_case() == v1::Value::kRef) {
    int id = ids.Of(v.ref());
    v.mutable_ref()->set_node(id);
    v.mutable_ref()->set_output(0);
    if (uses) uses->push_back(id);
  } else if (v.kind_case() == v1::Value::kList) {
    for (v1::Value& item : *v.mutable_list()->mutable_items()) RemapRefs(item, ids, uses);
  }
}

}  // namespace

int64_t SurrogateSymbolValue(int symbol) {
  // Distinct primes: no two symbols (and few sums or products of them) coincide, so that the
  // static partition rarely puts unequal symbolic dims in one group (the checks catch it when
  // it does); > 96 so that no size-1 or small-size rule of the static pipeline applies.
  static const std::vector<int64_t>* primes = [] {
    auto* p = new std::vector<int64_t>;
    for (int64_t n = 97; static_cast<int>(p->size()) < ir::kMaxSymbols; ++n) {
      bool prime = true;
      for (int64_t d = 2; d * d <= n && prime; ++d) prime = n % d != 0;
      if (prime) p->push_back(n);
    }
    return p;
  }();
  return (*primes)[std::clamp(symbol, 0, ir::kMaxSymbols - 1)];
}

absl::StatusOr<SymbolicLowering> LowerSymbolicKernels(const SymbolicGraph& sym,
                                                      const SymbolicKernelOptions& options) {
  const v1::Graph& g = sym.graph;
  if (!options.fusion) return AllExtern(g);
  absl::StatusOr<v1::Graph> surrogate_proto = SurrogateGraph(sym);
  absl::StatusOr<ir::Graph> surrogate =
      surrogate_proto.ok() ? ir::GraphFromProto(*surrogate_proto) : surrogate_proto.status();
  if (!surrogate.ok()) {
    SymbolicLowering out = AllExtern(g);
    out.rejected.push_back(
        absl::StrCat("the surrogate graph is not valid: ", surrogate.status().message()));
    return out;
  }
  ASSIGN_OR_RETURN(Partition partition, PartitionForFusion(*surrogate, FusionOptions{}));
  // Ops that need the point's coordinates (gathers, cat, random draws: their offsets come from
  // sizes) never make a kernel here, and the static partition fuses them with their pointwise
  // neighbours (an embedding with the positional add after it): peel them off, so that the
  // neighbours still become a kernel. Where that would make the groups a cycle, keep them.
  {
    Partition peeled = partition;
    bool changed = false;
    for (FusionGroup& group : peeled.groups) {
      changed |= std::erase_if(group.nodes, [&](int n) {
                   if (!NeedsCoordinates(*surrogate, surrogate->nodes[n])) return false;
                   peeled.group_of[n] = -1;
                   return true;
                 }) > 0;
    }
    if (changed && CompletePartition(*surrogate, peeled).ok()) partition = std::move(peeled);
  }
  // A peeled (or never fused) embedding whose index kernel is right for every size becomes a
  // kernel of its own (IsSymbolicEmbedding): a gather launch in place of ATen's embedding
  // (reshape, index_select, view: tens of us of host time per call); so does an embedding
  // gradient's scatter (IsSymbolicScatter), over its values' sizes.
  if (options.embeddings || options.cats || options.aranges) {
    Partition alone = partition;
    bool changed = false;
    for (int n = 0; n < g.nodes_size(); ++n) {
      if (alone.group_of[n] >= 0) continue;
      const bool scatter = options.embeddings && IsSymbolicScatter(g, n);
      if (!scatter && !(options.embeddings && IsSymbolicEmbedding(g, n)) &&
          !(options.cats && IsSymbolicCat(g, n)) && !(options.aranges && IsSymbolicArange(g, n)))
        continue;
      alone.group_of[n] = static_cast<int>(alone.groups.size());
      FusionGroup group;
      group.nodes = {n};
      group.shape = scatter ? ScatterIterationShape(*surrogate, surrogate->nodes[n])
                            : surrogate->nodes[n].outputs[0].sizes;
      group.device = surrogate->nodes[n].outputs[0].device;
      alone.groups.push_back(std::move(group));
      changed = true;
    }
    if (changed && CompletePartition(*surrogate, alone).ok()) partition = std::move(alone);
  }
  // The partition before the row regrouping: a row group the checks refuse falls back to the
  // groups it absorbed (its pointwise neighbours stay kernels, as before row kernels existed).
  const Partition pointwise_partition = partition;
  // Reductions and norms absorb their pointwise neighbours as in the static CUDA partition (the
  // graph rewrites before it, e.g. the loss rows, are not run: their nodes are not the graph's).
  if (options.rows && options.row_gathers) {
    // Row gathers: a lone embedding (above) read only by one pointwise group of its own shape
    // (the add of the token and position embeddings) rejoins that group, which the row
    // regrouping below then takes into the norm as a prologue with its gather (the static
    // partition never peels it). After `pointwise_partition`, so that a refused row group falls
    // back to the lone embedding kernel; a pointwise group that the regrouping leaves as it is
    // falls back to its parts the same way (it differs from the pointwise partition's).
    Partition joined = partition;
    bool changed = false;
    std::vector<int> reader(g.nodes_size(), -2);  // per node: its one reading group, or -1
    for (int n = 0; n < g.nodes_size(); ++n) {
      ir::ForEachInput(surrogate->nodes[n], [&](const ir::ValueRef& r) {
        if (r.is_input()) return;
        const int at = joined.group_of[n];
        int& one = reader[r.node];
        one = (one == -2 || one == at) && at >= 0 ? at : -1;
      });
    }
    for (const ir::Arg& a : surrogate->outputs)
      ir::ForEachRef(a, [&](const ir::ValueRef& r) {
        if (!r.is_input()) reader[r.node] = -1;
      });
    for (int n = 0; n < g.nodes_size(); ++n) {
      const int own = joined.group_of[n];
      if (own < 0 || joined.groups[own].nodes.size() != 1 || !IsSymbolicEmbedding(g, n)) continue;
      const int to = reader[n];
      if (to < 0 || to == own) continue;
      FusionGroup& target = joined.groups[to];
      if (target.num_reduced_dims != 0 || target.shape != joined.groups[own].shape) continue;
      target.nodes.insert(std::upper_bound(target.nodes.begin(), target.nodes.end(), n), n);
      joined.groups[own].nodes.clear();
      joined.group_of[n] = to;
      changed = true;
    }
    if (changed && CompletePartition(*surrogate, joined).ok()) partition = std::move(joined);
  }
  if (options.rows) {
    // Row gathers: the lone embeddings above may join a norm's row group (checked per group
    // on the symbolic graph by WhyNotSymbolicRowGathers; refused, the group falls back).
    ASSIGN_OR_RETURN(bool regrouped,
                     FuseRowReductions(
                         *surrogate, FusionOptions{.row_gathers = options.row_gathers}, partition));
    (void)regrouped;  // the lowering's kernels and rejections show the result
  }
  // Sibling groups of one shape as one kernel (a launch saved), after every vertical decision.
  if (options.horizontal) {
    ASSIGN_OR_RETURN(bool merged, FuseHorizontally(*surrogate, FusionOptions{}, partition));
    (void)merged;  // the same
  }
  SymbolicLowering out;
  // Lowers one group to a kernel, or schedules its nodes as extern steps with the reason;
  // returns whether it became a kernel.
  auto lower_group = [&](const FusionGroup& group) -> absl::StatusOr<bool> {
    SymbolicKernelGroup k;
    k.nodes = group.nodes;
    for (const ir::ValueRef& r : group.inputs) k.inputs.push_back(ProtoRef(r));
    for (const ir::ValueRef& r : group.outputs) k.outputs.push_back(ProtoRef(r));
    std::string why;
    std::vector<v1::Dim> row_space;  // row groups: the iteration space's symbolic sizes
    const bool arange =
        options.aranges && group.nodes.size() == 1 && IsSymbolicArange(g, group.nodes.front());
    absl::StatusOr<PointwiseKernel> kernel =
        arange
            ? ArangeKernel(*surrogate, group.nodes.front(),
                           absl::StrCat("tccd_sk", out.groups.size()))
            : BuildPointwiseKernel(*surrogate, group, absl::StrCat("tccd_sk", out.groups.size()));
    if (!kernel.ok()) {
      why = absl::StrCat("kernel: ", kernel.status().message());
    } else if (kernel->is_column_reduction() && options.rows && options.columns) {
      why = WhyNotSymbolicColumns(g, *surrogate_proto, group, k.inputs, k.outputs, *kernel,
                                  &row_space);
    } else if (kernel->is_row_reduction() && options.rows) {
      const bool gathers = HasIndexOps(*kernel);
      if (gathers && options.row_gathers)
        why = WhyNotSymbolicRowGathers(g, *surrogate, group, *kernel);
      if (why.empty())
        why = WhyNotSymbolicRows(g, *surrogate_proto, group, k.inputs, k.outputs, *kernel,
                                 &row_space, gathers && options.row_gathers);
    } else if (arange) {
      why = "";  // IsSymbolicArange: right for every size by construction
    } else if (HasIndexOps(*kernel)) {
      why = WhyNotSymbolicIndex(g, group, *kernel, options);
    } else {
      why = WhyNotSymbolic(g, group, k.inputs, k.outputs, *kernel);
    }
    if (why.empty()) {
      k.kernel = *std::move(kernel);
      if (k.kernel.is_row_reduction()) {
        for (size_t d = 0; d < row_space.size(); ++d)
          if (row_space[d].kind_case() == v1::Dim::kExpr) k.kernel.shape[d] = kRuntimeDim;
      } else {
        // A scatter kernel iterates over its values' (grad's) sizes, not its output's.
        const int front = group.nodes.front();
        const v1::TensorMeta& space = HasScatter(k.kernel) ? MetaOf(g, g.nodes(front).args(0).ref())
                                                           : g.nodes(front).outputs(0);
        for (int d = 0; d < space.sizes_size(); ++d)
          if (space.sizes(d).kind_case() == v1::Dim::kExpr) k.kernel.shape[d] = kRuntimeDim;
      }
      // Index kernels run the strided entry only: the contig one's stride table is row-major
      // for every operand, which a gather operand's own strides need not be (along a size-1
      // dim the launcher does not test, its coordinate is an index, not 0). Row kernels that
      // gather keep both: the row launcher passes every operand's own strides to either entry
      // and leaves row operands (gather operands are) out of its dense test, as for the static
      // row gathers (tccd_cuda_runtime.c, rows_are_contiguous).
      if (HasIndexOps(k.kernel) && !k.kernel.is_row_reduction())
        k.kernel.entries = KernelEntries::kStrided;
      if (std::string problem = VerifyPointwiseKernel(k.kernel); !problem.empty())
        return absl::InternalError(
            absl::StrCat("symbolic kernel ", k.kernel.name, " is invalid: ", problem));
      if (absl::Status refused = options.check ? options.check(k.kernel) : absl::OkStatus();
          !refused.ok())
        why = std::string(refused.message());
    }
    if (!why.empty()) {
      out.rejected.push_back(absl::StrCat("group of node ", group.nodes.front(), " (",
                                          g.nodes(group.nodes.front()).target(), ", ",
                                          group.nodes.size(), " ops): ", why));
      return false;
    }
    out.schedule.push_back({.group = static_cast<int>(out.groups.size()), .node = -1});
    out.groups.push_back(std::move(k));
    return true;
  };
  for (const ScheduleEntry& entry : partition.schedule) {
    if (!entry.fused) {
      out.schedule.push_back({.group = -1, .node = entry.index});
      continue;
    }
    const FusionGroup& group = partition.groups[entry.index];
    ASSIGN_OR_RETURN(bool lowered, lower_group(group));
    if (lowered) continue;
    // Refused: the group's nodes in the pointwise partition's order (a topological order of
    // them; the group as a whole was placed after its inputs and before its readers), the
    // pointwise groups wholly inside it tried as kernels of their own, the rest extern steps.
    const absl::flat_hash_set<int> members(group.nodes.begin(), group.nodes.end());
    const bool was_regrouped =
        (options.rows || options.horizontal) &&
        !(pointwise_partition.group_of[group.nodes.front()] >= 0 &&
          pointwise_partition.groups[pointwise_partition.group_of[group.nodes.front()]].nodes ==
              group.nodes);
    for (const ScheduleEntry& base : pointwise_partition.schedule) {
      if (!base.fused) {
        if (members.contains(base.index)) out.schedule.push_back({.group = -1, .node = base.index});
        continue;
      }
      const FusionGroup& part = pointwise_partition.groups[base.index];
      const bool inside = absl::c_all_of(part.nodes, [&](int n) { return members.contains(n); });
      bool part_lowered = false;
      if (inside && was_regrouped) {
        ASSIGN_OR_RETURN(part_lowered, lower_group(part));
      }
      if (!part_lowered)
        for (int m : part.nodes)
          if (members.contains(m)) out.schedule.push_back({.group = -1, .node = m});
    }
  }
  return out;
}

absl::StatusOr<v1::Plan> SymbolicKernelPlan(const SymbolicGraph& sym,
                                            const SymbolicLowering& lowering,
                                            const SymbolicNativeTarget& target) {
  const v1::Graph& g = sym.graph;
  v1::Plan plan;
  ValueIds ids;
  plan.set_num_inputs(g.inputs_size());
  for (const v1::TensorMeta& m : g.inputs()) *plan.add_values() = m;
  int next = g.inputs_size();
  for (const v1::Node& node : g.nodes()) {
    ids.first_output.push_back(next);
    next += node.outputs_size();
    for (const v1::TensorMeta& m : node.outputs()) *plan.add_values() = m;
  }

  // Refs remapped to value ids, and every value's last reader (a step index; the graph outputs
  // are read "after" every step and never released).
  const int num_steps = static_cast<int>(lowering.schedule.size());
  std::vector<int> last_use(next, -1);
  std::vector<bool> referenced(next, false);
  std::vector<int> scheduled(g.nodes_size(), 0);
  std::vector<v1::Step> steps(num_steps);
  std::vector<std::vector<int>> defines(num_steps);  // value ids each step defines (or -1)
  for (int s = 0; s < num_steps; ++s) {
    const SymbolicUnit& unit = lowering.schedule[s];
    std::vector<int> uses;
    if (unit.gemm >= 0) {
      RET_CHECK(unit.gemm < static_cast<int>(lowering.gemms.size()));
      const SymbolicGemm& gemm = lowering.gemms[unit.gemm];
      RET_CHECK(gemm.node >= 0 && gemm.node < g.nodes_size());
      ++scheduled[gemm.node];
      v1::NativeCall& call = *steps[s].mutable_native();
      call.set_artifact(target.artifact);
      call.set_symbol(gemm.spec.name);
      call.set_abi(kCudaSizedGemmAbi);
      for (const v1::ValueRef& r : gemm.inputs) {
        call.add_inputs(ids.Of(r));
        uses.push_back(ids.Of(r));
      }
      for (int64_t word : gemm.shape) call.add_shape(word);
      v1::KernelInfo& info = *call.add_kernels();
      info.set_name(gemm.spec.name);
      info.set_kind("cublaslt_gemm");
      info.add_ops(g.nodes(gemm.node).target());
      defines[s].push_back(ids.Of(gemm.output));
    } else if (unit.group < 0) {
      RET_CHECK(unit.node >= 0 && unit.node < g.nodes_size());
      ++scheduled[unit.node];
      const v1::Node& node = g.nodes(unit.node);
      v1::ExternCall& call = *steps[s].mutable_extern_call();
      call.set_target(node.target());
      for (const v1::Value& a : node.args()) {
        v1::Value* v = call.add_args();
        *v = a;
        RemapRefs(*v, ids, &uses);
      }
      for (const v1::NamedValue& kv : node.kwargs()) {
        v1::NamedValue* nv = call.add_kwargs();
        *nv = kv;
        RemapRefs(*nv->mutable_value(), ids, &uses);
      }
      for (int k = 0; k < node.outputs_size(); ++k)
        defines[s].push_back(ids.first_output[unit.node] + k);
    } else {
      RET_CHECK(unit.group < static_cast<int>(lowering.groups.size()));
      const SymbolicKernelGroup& group = lowering.groups[unit.group];
      for (int m : group.nodes) ++scheduled[m];
      v1::NativeCall& call = *steps[s].mutable_native();
      call.set_artifact(target.artifact);
      call.set_symbol(group.kernel.name);
      // A group whose iteration space is static in a symbolic graph is a plain kernel.
      call.set_abi(HasRuntimeShape(group.kernel) ? target.sized_abi : target.static_abi);
      // kRuntimeDim (-1) where the size comes from the outputs' metas at run time (runtime.py).
      for (int64_t d : group.kernel.shape) call.add_shape(d);
      for (const v1::ValueRef& r : group.inputs) {
        call.add_inputs(ids.Of(r));
        uses.push_back(ids.Of(r));
      }
      // An index kernel's gather operands take their own strides (plan_descriptor.cc).
      if (HasIndexOps(group.kernel))
        for (int i = 0; i < static_cast<int>(group.inputs.size()); ++i)
          call.add_gather_inputs(IsGatherOperand(group.kernel, i));
      // A scatter kernel's one output is its scatter output (own strides, zero-filled).
      if (HasScatter(group.kernel)) {
        RET_CHECK(group.outputs.size() == 1);
        call.add_scatter_outputs(true);
      }
      v1::KernelInfo& info = *call.add_kernels();
      info.set_name(group.kernel.name);
      info.set_kind(group.kernel.is_row_reduction() ? target.row_kind : target.kind);
      for (const std::string& op : group.kernel.fused_ops) info.add_ops(op);
      for (int64_t d : group.kernel.shape) info.add_shape(d);
      for (const v1::ValueRef& r : group.outputs) defines[s].push_back(ids.Of(r));
    }
    for (int id : uses) {
      last_use[id] = s;
      referenced[id] = true;
    }
  }
  for (int id : lowering.elided) {
    RET_CHECK(id >= 0 && id < g.nodes_size());
    ++scheduled[id];
  }
  for (int id = 0; id < g.nodes_size(); ++id)
    if (scheduled[id] != 1)
      return absl::InternalError(
          absl::StrCat("symbolic schedule runs node ", id, " ", scheduled[id], " times"));
  for (const v1::Value& v : g.outputs()) {
    v1::Value* out = plan.add_outputs();
    *out = v;
    std::vector<int> uses;
    RemapRefs(*out, ids, &uses);
    for (int id : uses) {
      last_use[id] = num_steps;  // never released
      referenced[id] = true;
    }
  }
  for (int s = 0; s < num_steps; ++s) {
    const bool native = steps[s].has_native();
    for (int id : defines[s]) {
      // An extern op's outputs nobody reads are dropped as the op returns them (-1), like the
      // static plans'; a kernel's outputs are all read (fusion.h: group outputs escape).
      steps[s].add_outputs(referenced[id] || native ? id : -1);
    }
  }
  for (int id = 0; id < next; ++id)
    if (last_use[id] >= 0 && last_use[id] < num_steps) steps[last_use[id]].add_release(id);
  for (v1::Step& step : steps) *plan.add_steps() = std::move(step);
  plan.set_symbolic(true);
  return plan;
}

absl::StatusOr<v1::Plan> SymbolicExternPlan(const SymbolicGraph& graph) {
  return SymbolicKernelPlan(graph, AllExtern(graph.graph));
}

}  // namespace tccd::codegen
