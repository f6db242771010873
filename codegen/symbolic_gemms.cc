// Symbolic matmuls as cuBLASLt gemms with run-time sizes; see symbolic_gemms.h.
#include "codegen/symbolic_gemms.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "codegen/plan_runtime/plan_descriptor.h"

namespace tccd::codegen {
namespace {

const v1::TensorMeta& MetaOf(const v1::Graph& g, const v1::ValueRef& r) {
  return r.node() < 0 ? g.inputs(-(r.node() + 1)) : g.nodes(r.node()).outputs(r.output());
}

bool SameDim(const v1::Dim& a, const v1::Dim& b) {
  if (a.kind_case() != b.kind_case()) return false;
  return a.kind_case() == v1::Dim::kExpr ? a.expr() == b.expr() : a.value() == b.value();
}

bool IsValue(const v1::Dim& d, int64_t v) {
  return d.kind_case() == v1::Dim::kValue && d.value() == v;
}

std::optional<int> CudaDataType(v1::DType dtype) {
  switch (dtype) {
    case v1::FLOAT32:
      return kCudaR32F;
    case v1::FLOAT16:
      return kCudaR16F;
    case v1::BFLOAT16:
      return kCudaR16BF;
    default:
      return std::nullopt;
  }
}

int64_t ElementBytes(v1::DType dtype) { return dtype == v1::FLOAT32 ? 4 : 2; }

// A [rows, cols] operand (the last two dims of `t`) in cuBLAS's column-major terms: row-major
// storage (strides (ld, 1)) is its transpose with op N; column-major storage (strides (1, ld)) is
// itself with op T. The leading dimension must be >= the rows cuBLAS sees for every size: the
// extent it strides over (dense), or static numbers that say so.
struct Layout {
  bool row_major = true;
  v1::Dim ld;
};

std::optional<Layout> LayoutOf(const v1::TensorMeta& t) {
  const int r = t.sizes_size();
  const v1::Dim &rows = t.sizes(r - 2), &cols = t.sizes(r - 1);
  const v1::Dim &s0 = t.strides(r - 2), &s1 = t.strides(r - 1);
  auto covers = [](const v1::Dim& ld, const v1::Dim& extent) {
    if (SameDim(ld, extent)) return true;
    return ld.kind_case() == v1::Dim::kValue && extent.kind_case() == v1::Dim::kValue &&
           ld.value() >= std::max<int64_t>(extent.value(), 1);
  };
  if (IsValue(s1, 1) && covers(s0, cols)) return Layout{true, s0};
  if (IsValue(s0, 1) && covers(s1, rows)) return Layout{false, s1};
  return std::nullopt;
}

double NumberOf(const v1::Value& v, double fallback) {
  if (v.kind_case() == v1::Value::kIntValue) return static_cast<double>(v.int_value());
  if (v.kind_case() == v1::Value::kFloatValue) return v.float_value();
  return fallback;
}

// Z = X @ Y (+ bias) as a sized gemm, or why not ("" and `out` filled on success).
std::string Match(const v1::Graph& g, int node_id, SymbolicGemm& out) {
  const v1::Node& node = g.nodes(node_id);
  const std::string& target = node.target();
  const bool batched = target == "aten::bmm.default";
  v1::ValueRef x, y, bias;
  bool has_bias = false;
  // A beta or alpha that is no number (a SymFloat) reads as NaN: refused below.
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  double alpha = 1.0, beta = 1.0;
  auto ref = [](const v1::Value& v, v1::ValueRef& r) {
    if (v.kind_case() != v1::Value::kRef) return false;
    r = v.ref();
    return true;
  };
  if (target == "aten::mm.default" || batched) {
    if (node.args_size() != 2 || node.kwargs_size() != 0 || !ref(node.args(0), x) ||
        !ref(node.args(1), y))
      return "unexpected arguments";
  } else {
    if (node.args_size() < 3 || !ref(node.args(0), bias) || !ref(node.args(1), x) ||
        !ref(node.args(2), y))
      return "unexpected arguments";
    has_bias = true;
    if (node.args_size() > 3) beta = NumberOf(node.args(3), kNaN);
    if (node.args_size() > 4) alpha = NumberOf(node.args(4), kNaN);
    for (const v1::NamedValue& kw : node.kwargs()) {
      if (kw.name() == "beta")
        beta = NumberOf(kw.value(), kNaN);
      else if (kw.name() == "alpha")
        alpha = NumberOf(kw.value(), kNaN);
      else
        return absl::StrCat("keyword ", kw.name());
    }
    if (beta != 1.0) return "beta is not 1";
    if (alpha != alpha) return "alpha is not a number";
  }
  if (node.outputs_size() != 1) return "not one output";
  const v1::TensorMeta &mx = MetaOf(g, x), &my = MetaOf(g, y), &mz = node.outputs(0);
  const int rank = batched ? 3 : 2;
  if (mx.sizes_size() != rank || my.sizes_size() != rank || mz.sizes_size() != rank)
    return "operands of another rank";
  if (mx.dtype() != my.dtype() || mx.dtype() != mz.dtype()) return "mixed dtypes";
  std::optional<int> dtype = CudaDataType(mx.dtype());
  if (!dtype) return "a dtype cuBLASLt is not given here (f32, f16, bf16 only)";
  const v1::Dim &M = mx.sizes(rank - 2), &K = mx.sizes(rank - 1), &N = my.sizes(rank - 1);
  if (!SameDim(my.sizes(rank - 2), K) || !SameDim(mz.sizes(rank - 2), M) ||
      !SameDim(mz.sizes(rank - 1), N))
    return "sizes that agree at the placeholder only";
  if (batched && (!SameDim(my.sizes(0), mx.sizes(0)) || !SameDim(mz.sizes(0), mx.sizes(0))))
    return "batch sizes that differ";
  // The result: row-major, ldd N (the plan runtimes allocate it with these strides).
  if (!IsValue(mz.strides(rank - 1), 1) || !SameDim(mz.strides(rank - 2), N))
    return "a result that is not row-major";
  std::optional<Layout> ly = LayoutOf(my), lx = LayoutOf(mx);
  if (!ly || !lx) return "an operand that is not a dense matrix for every size";
  std::vector<v1::ValueRef> operands = {y, x};
  if (has_bias) {
    const v1::TensorMeta& mb = MetaOf(g, bias);
    if (mb.dtype() != mx.dtype() || mb.sizes_size() != 1 || !SameDim(mb.sizes(0), N) ||
        !(IsValue(mb.strides(0), 1) || IsValue(N, 1)))
      return "a bias that is not a dense vector of N elements";
    operands.push_back(bias);
  }
  const int64_t elem = ElementBytes(mx.dtype());
  for (const v1::ValueRef& r : operands) {
    const v1::TensorMeta& t = MetaOf(g, r);
    if (t.has_storage_offset() && !(t.storage_offset().kind_case() == v1::Dim::kValue &&
                                    t.storage_offset().value() * elem % 16 == 0))
      return "an operand at a symbolic or misaligned storage offset";
  }
  if (mz.has_storage_offset() && !IsValue(mz.storage_offset(), 0))
    return "a result with a storage offset";

  GemmSpec& spec = out.spec;
  spec.sized = true;
  // A = Y (row-major: Y^T column-major, op N), B = X likewise; D = Z^T (column-major N x M).
  spec.trans_a = ly->row_major ? 0 : 1;
  spec.trans_b = lx->row_major ? 0 : 1;
  spec.dtype = *dtype;
  spec.alpha = static_cast<float>(alpha);
  spec.epilogue = has_bias ? kCublasEpilogueBias : kCublasEpilogueDefault;
  out.node = node_id;
  out.inputs = operands;
  out.output.set_node(node_id);
  out.output.set_output(0);
  // Each size as a number, or where it is at each call: operands A = Y (0), B = X (1),
  // [bias (2),] D = Z (last).
  const int a = 0, b = 1, d = has_bias ? 3 : 2;
  auto word = [](const v1::Dim& dim, int operand, int part, int index) {
    return dim.kind_case() == v1::Dim::kValue ? dim.value() : GemmDimRef(operand, part, index);
  };
  const int ra = ly->row_major ? rank - 2 : rank - 1, rb = lx->row_major ? rank - 2 : rank - 1;
  out.shape = {word(N, a, 0, rank - 1),
               word(M, b, 0, rank - 2),
               word(K, b, 0, rank - 1),
               word(ly->ld, a, 1, ra),
               word(lx->ld, b, 1, rb),
               word(N, a, 0, rank - 1),
               batched ? word(mx.sizes(0), b, 0, 0) : 1,
               batched ? word(my.strides(0), a, 1, 0) : 0,
               batched ? word(mx.strides(0), b, 1, 0) : 0,
               batched ? word(mz.strides(0), d, 1, 0) : 0};
  return "";
}

// SymbolicGemmOptions::transposes for one gemm: operands A and B that are t(x) of a matrix x
// read x, the words naming their sizes and strides renamed to x's swapped dims (t(x) is x's
// layout transposed: same first element, dims swapped; the transpose stays in the op flags).
// Returns the t nodes.
std::vector<int> AbsorbTransposes(const v1::Graph& g, SymbolicGemm& gemm) {
  std::vector<int> absorbed;
  for (int i = 0; i < 2; ++i) {
    const v1::ValueRef r = gemm.inputs[i];
    if (r.node() < 0) continue;
    const v1::Node& t = g.nodes(r.node());
    if (t.target() != "aten::t.default" || t.args_size() != 1 || t.kwargs_size() != 0 ||
        t.outputs_size() != 1 || t.args(0).kind_case() != v1::Value::kRef)
      continue;
    const v1::TensorMeta& mt = t.outputs(0);
    const v1::TensorMeta& mx = MetaOf(g, t.args(0).ref());
    if (mt.sizes_size() != 2 || mx.sizes_size() != 2 || mt.strides_size() != 2 ||
        mx.strides_size() != 2 || mx.dtype() != mt.dtype())
      continue;
    const v1::Dim zero = [] {
      v1::Dim d;
      d.set_value(0);
      return d;
    }();
    const v1::Dim& offset_t = mt.has_storage_offset() ? mt.storage_offset() : zero;
    const v1::Dim& offset_x = mx.has_storage_offset() ? mx.storage_offset() : zero;
    if (!SameDim(offset_t, offset_x) || !SameDim(mt.sizes(0), mx.sizes(1)) ||
        !SameDim(mt.sizes(1), mx.sizes(0)) || !SameDim(mt.strides(0), mx.strides(1)) ||
        !SameDim(mt.strides(1), mx.strides(0)))
      continue;
    // GemmDimRef(i, part, d) of t(x) is GemmDimRef(i, part, 1 - d) of x.
    for (int64_t& w : gemm.shape) {
      if (w >= 0) continue;
      const int64_t v = -w - 1, operand = v / 32, part = (v / 16) % 2, dim = v % 16;
      if (operand == i) w = GemmDimRef(i, static_cast<int>(part), static_cast<int>(1 - dim));
    }
    gemm.inputs[i] = t.args(0).ref();
    absorbed.push_back(r.node());
  }
  return absorbed;
}

bool ReadsNode(const v1::Value& v, int node) {
  if (v.kind_case() == v1::Value::kRef) return v.ref().node() == node;
  if (v.kind_case() == v1::Value::kList)
    return std::any_of(v.list().items().begin(), v.list().items().end(),
                       [&](const v1::Value& item) { return ReadsNode(item, node); });
  return false;
}

// Whether anything the lowering runs (extern units' arguments, kernels' and gemms' inputs) or
// the graph's outputs read node `node`.
bool IsRead(const v1::Graph& g, const SymbolicLowering& lowering, int node) {
  auto reads = [&](const v1::ValueRef& r) { return r.node() == node; };
  for (const SymbolicUnit& unit : lowering.schedule) {
    if (unit.gemm >= 0) {
      if (std::any_of(lowering.gemms[unit.gemm].inputs.begin(),
                      lowering.gemms[unit.gemm].inputs.end(), reads))
        return true;
    } else if (unit.group >= 0) {
      if (std::any_of(lowering.groups[unit.group].inputs.begin(),
                      lowering.groups[unit.group].inputs.end(), reads))
        return true;
    } else if (unit.node >= 0 && unit.node != node) {
      const v1::Node& n = g.nodes(unit.node);
      for (const v1::Value& a : n.args())
        if (ReadsNode(a, node)) return true;
      for (const v1::NamedValue& kv : n.kwargs())
        if (ReadsNode(kv.value(), node)) return true;
    }
  }
  return std::any_of(g.outputs().begin(), g.outputs().end(),
                     [&](const v1::Value& v) { return ReadsNode(v, node); });
}

}  // namespace

int MatchSymbolicGemms(const SymbolicGraph& graph, SymbolicLowering& lowering,
                       const SymbolicGemmOptions& options) {
  const v1::Graph& g = graph.graph;
  int matched = 0;
  std::vector<int> absorbed;  // t nodes some gemm no longer reads
  for (SymbolicUnit& unit : lowering.schedule) {
    if (unit.group >= 0 || unit.gemm >= 0 || unit.node < 0 || unit.node >= g.nodes_size()) continue;
    const std::string& target = g.nodes(unit.node).target();
    if (target != "aten::mm.default" && target != "aten::addmm.default" &&
        target != "aten::bmm.default")
      continue;
    SymbolicGemm gemm;
    if (std::string why = Match(g, unit.node, gemm); !why.empty()) {
      lowering.rejected.push_back(
          absl::StrCat("matmul node ", unit.node, " (", target, "): ", why));
      continue;
    }
    if (options.transposes)
      for (int t : AbsorbTransposes(g, gemm)) absorbed.push_back(t);
    gemm.spec.name = absl::StrCat("tccd_sg", lowering.gemms.size());
    unit.gemm = static_cast<int>(lowering.gemms.size());
    unit.node = -1;
    lowering.gemms.push_back(std::move(gemm));
    ++matched;
  }
  // An absorbed t that nothing reads any more runs as no step.
  std::sort(absorbed.begin(), absorbed.end());
  absorbed.erase(std::unique(absorbed.begin(), absorbed.end()), absorbed.end());
  for (int t : absorbed) {
    if (IsRead(g, lowering, t)) continue;
    std::erase_if(lowering.schedule, [&](const SymbolicUnit& unit) {
      return unit.group < 0 && unit.gemm < 0 && unit.node == t;
    });
    lowering.elided.push_back(t);
  }
  return matched;
}

HostProgram SymbolicGemmProgram(const SymbolicLowering& lowering) {
  HostProgram program;
  for (const SymbolicGemm& gemm : lowering.gemms) program.gemms.push_back(gemm.spec);
  return program;
}

}  // namespace tccd::codegen
