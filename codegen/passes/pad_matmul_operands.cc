// PadMatmulOperands (see pad_matmul_operands.h).
#include "codegen/passes/pad_matmul_operands.h"

#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "codegen/passes/graph_rebuild.h"

namespace tccd::codegen {
namespace {

constexpr int64_t kAlign = 8;  // elements of a 16-bit type in 16 bytes

int64_t RoundUp(int64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

// How a 2-D operand is laid out: row-major contiguous, or the transpose of a contiguous tensor.
enum class Layout { kRowMajor, kColumnMajor };

std::optional<Layout> LayoutOf(const ir::TensorType& t) {
  if (t.rank() != 2 || t.storage_offset != 0 || t.sizes[0] < 2 || t.sizes[1] < 2)
    return std::nullopt;
  if (t.strides[1] == 1 && t.strides[0] == t.sizes[1]) return Layout::kRowMajor;
  if (t.strides[0] == 1 && t.strides[1] == t.sizes[0]) return Layout::kColumnMajor;
  return std::nullopt;
}

// Emits pads and transposes into `out`; identical pads (one value padded the same way for two
// matmuls, like a gradient and its transpose) are emitted once.
class Emitter {
 public:
  explicit Emitter(ir::Graph& out) : out_(out) {}

  ir::Arg Emit(std::string target, std::vector<ir::Arg> args, ir::TensorType type) {
    out_.nodes.push_back(ir::Node{
        .target = std::move(target), .args = std::move(args), .outputs = {std::move(type)}});
    return ir::Arg{ir::ValueRef{static_cast<int>(out_.nodes.size()) - 1, 0}};
  }

  static ir::TensorType Contiguous(const ir::TensorType& like, std::vector<int64_t> sizes) {
    ir::TensorType t = like;
    t.strides = ir::ContiguousStrides(sizes);
    t.sizes = std::move(sizes);
    t.storage_offset = 0;
    return t;
  }

  ir::Arg Transpose(const ir::Arg& a) {
    const ir::ValueRef& r = a.ref();
    // t(t(x)) is x.
    if (!r.is_input() && out_.nodes[r.node].target == "aten::t.default")
      return out_.nodes[r.node].args[0];
    const ir::TensorType& t = out_.type_of(r);
    ir::TensorType tt = t;
    tt.sizes = {t.sizes[1], t.sizes[0]};
    tt.strides = {t.strides[1], t.strides[0]};
    return Emit("aten::t.default", {a}, tt);
  }

  // `operand` ([rows, cols] in the matmul) zero-padded to [rows + pad_rows, cols + pad_cols] in
  // the same layout.
  // A contiguous [n] vector (a bias) zero-padded to [n + pad].
  ir::Arg PadVector(const ir::Arg& v, int64_t pad) {
    if (pad == 0) return v;
    const ir::TensorType t = out_.type_of(v.ref());
    return Emit("aten::constant_pad_nd.default", {v, IntListArg({0, pad}), ir::Arg{int64_t{0}}},
                Contiguous(t, {t.sizes[0] + pad}));
  }

  ir::Arg Pad(const ir::Arg& operand, Layout layout, int64_t pad_rows, int64_t pad_cols) {
    if (pad_rows == 0 && pad_cols == 0) return operand;
    const ir::TensorType t = out_.type_of(operand.ref());
    if (layout == Layout::kRowMajor) return PadContiguous(operand, pad_rows, pad_cols);
    // Column-major: pad the contiguous storage [cols, rows], then transpose back.
    return Transpose(PadContiguous(Transpose(operand), pad_cols, pad_rows));
  }

 private:
  ir::Arg PadContiguous(const ir::Arg& x, int64_t pad_rows, int64_t pad_cols) {
    const std::tuple<ir::ValueRef, int64_t, int64_t> key{x.ref(), pad_rows, pad_cols};
    if (auto it = pads_.find(key); it != pads_.end()) return it->second;
    const ir::TensorType t = out_.type_of(x.ref());
    // The padded copy of autocast's cast of a weight (a graph input) is the cast of the padded
    // weight (cast(0) is 0): the pad, an index op, then fuses with the cast, its pointwise
    // reader, into one kernel that writes only the padded 16-bit copy. Padding the cast made
    // the cast a kernel of its own whose output lived beside the pad's (BERT's decoder weight:
    // 45 MiB each; GPT-2's: 74 MiB). Only graph inputs: a cast of a computed value (a gradient)
    // would be padded in its wider dtype.
    if (const std::optional<ir::ValueRef> source = CastOfInput(x.ref())) {
      const ir::TensorType s = out_.type_of(*source);
      const ir::Arg padded_source =
          Emit("aten::constant_pad_nd.default",
               {ir::Arg{*source}, IntListArg({0, pad_cols, 0, pad_rows}), ir::Arg{int64_t{0}}},
               Contiguous(s, {s.sizes[0] + pad_rows, s.sizes[1] + pad_cols}));
      ir::Node cast = out_.nodes[x.ref().node];
      cast.args[0] = padded_source;
      cast.outputs = {Contiguous(t, {t.sizes[0] + pad_rows, t.sizes[1] + pad_cols})};
      out_.nodes.push_back(std::move(cast));
      const ir::Arg padded{ir::ValueRef{static_cast<int>(out_.nodes.size()) - 1, 0}};
      pads_[key] = padded;
      return padded;
    }
    const ir::Arg padded = Emit("aten::constant_pad_nd.default",
                                {x, IntListArg({0, pad_cols, 0, pad_rows}), ir::Arg{int64_t{0}}},
                                Contiguous(t, {t.sizes[0] + pad_rows, t.sizes[1] + pad_cols}));
    pads_[key] = padded;
    return padded;
  }

  // The graph input `r` casts (a _to_copy with only a dtype, a contiguous input of the same
  // sizes, floating point to floating point), or nullopt.
  std::optional<ir::ValueRef> CastOfInput(const ir::ValueRef& r) const {
    if (r.is_input()) return std::nullopt;
    const ir::Node& n = out_.nodes[r.node];
    if (n.target != "aten::_to_copy.default" || n.args.size() != 1 || !n.args[0].is_ref() ||
        !n.args[0].ref().is_input() || n.outputs.size() != 1)
      return std::nullopt;
    for (const ir::NamedArg& kw : n.kwargs)
      if (kw.name != "dtype") return std::nullopt;
    const ir::TensorType& s = out_.type_of(n.args[0].ref());
    const ir::TensorType& t = n.outputs[0];
    if (s.sizes != t.sizes || !s.IsContiguous() || s.storage_offset != 0 ||
        !ir::IsFloatingPoint(s.dtype) || !ir::IsFloatingPoint(t.dtype) || s.device != t.device)
      return std::nullopt;
    return n.args[0].ref();
  }

  ir::Graph& out_;
  std::map<std::tuple<ir::ValueRef, int64_t, int64_t>, ir::Arg> pads_;
};

// The padded matmul's value for `node` (args remapped into `out`), or nullopt (nothing emitted).
std::optional<ir::Arg> PadMatmul(ir::Graph& out, Emitter& e, const ir::Node& node) {
  // mm(A, B), or addmm(bias, A, B) with a [N] bias and the default beta = alpha = 1 (a linear
  // layer with bias: BERT's vocabulary projection).
  const bool addmm = node.target == "aten::addmm.default";
  if ((!addmm && node.target != "aten::mm.default") || node.args.size() != (addmm ? 3u : 2u) ||
      !node.kwargs.empty() || node.outputs.size() != 1)
    return std::nullopt;
  for (const ir::Arg& arg : node.args) {
    if (!arg.is_ref()) return std::nullopt;
  }
  const size_t ia = addmm ? 1 : 0;
  const ir::Arg& arg_a = node.args[ia];
  const ir::Arg& arg_b = node.args[ia + 1];
  const ir::TensorType a = out.type_of(arg_a.ref()), b = out.type_of(arg_b.ref());
  const ir::TensorType& c = node.outputs[0];
  if (c.device != ir::DeviceType::kCuda ||
      (c.dtype != ir::DType::kBF16 && c.dtype != ir::DType::kF16) || a.dtype != c.dtype ||
      b.dtype != c.dtype || !c.IsContiguous() || c.storage_offset != 0)
    return std::nullopt;
  std::optional<ir::TensorType> bias;
  if (addmm) {
    bias = out.type_of(node.args[0].ref());
    if (bias->dtype != c.dtype || bias->rank() != 1 || bias->sizes[0] != b.sizes[1] ||
        bias->strides[0] != 1 || bias->storage_offset != 0)
      return std::nullopt;
  }
  const std::optional<Layout> la = LayoutOf(a), lb = LayoutOf(b);
  if (!la || !lb) return std::nullopt;
  const int64_t m = a.sizes[0], k = a.sizes[1], n = b.sizes[1];
  if (static_cast<double>(m) * n * k < static_cast<double>(kMinPaddedMatmulWork))
    return std::nullopt;
  // K is a leading dimension when A is row-major or B column-major; M when A is column-major; N
  // always (the result is row-major).
  const bool pad_k = k % kAlign != 0 && (*la == Layout::kRowMajor || *lb == Layout::kColumnMajor);
  const bool pad_m = m % kAlign != 0 && *la == Layout::kColumnMajor;
  const bool pad_n = n % kAlign != 0;
  if (!pad_k && !pad_m && !pad_n) return std::nullopt;
  const int64_t dk = pad_k ? RoundUp(k) - k : 0, dm = pad_m ? RoundUp(m) - m : 0,
                dn = pad_n ? RoundUp(n) - n : 0;

  const ir::Arg a2 = e.Pad(arg_a, *la, dm, dk);
  const ir::Arg b2 = e.Pad(arg_b, *lb, dk, dn);
  ir::Arg product =
      addmm ? e.Emit("aten::addmm.default", {e.PadVector(node.args[0], dn), a2, b2},
                     Emitter::Contiguous(c, {m + dm, n + dn}))
            : e.Emit("aten::mm.default", {a2, b2}, Emitter::Contiguous(c, {m + dm, n + dn}));
  if (dm == 0 && dn == 0) return product;
  if (dm > 0) {
    // The first m rows of the contiguous product: exactly the unpadded result's layout.
    product =
        e.Emit("aten::slice.Tensor",
               {product, ir::Arg{int64_t{0}}, ir::Arg{int64_t{0}}, ir::Arg{m}, ir::Arg{int64_t{1}}},
               Emitter::Contiguous(c, {m, n + dn}));
    if (dn == 0) return product;
  }
  // The first n columns have row stride n + dn: the result's readers were built for a contiguous
  // tensor, so a clone restores that layout. Readers that are kernels take the copy as their
  // prologue (a log_softmax over the logits reads the padded rows directly); a graph output pays
  // one copy, still several times cheaper than the align-1 matmul (GPT-2's vocabulary projection
  // at the zoo's large batch: 6.7 ms).
  ir::TensorType strided = c;
  strided.strides = {n + dn, 1};
  const ir::Arg columns =
      e.Emit("aten::slice.Tensor",
             {product, ir::Arg{int64_t{1}}, ir::Arg{int64_t{0}}, ir::Arg{n}, ir::Arg{int64_t{1}}},
             strided);
  return e.Emit("aten::clone.default", {columns}, c);
}

}  // namespace

absl::StatusOr<bool> PadMatmulOperands::Run(ir::Graph& graph) {
  std::optional<Emitter> emitter;  // one for the rebuild: identical pads are shared across matmuls
  return RebuildGraph(
      graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        if (!emitter) emitter.emplace(out);
        std::optional<ir::Arg> padded = PadMatmul(out, *emitter, node);
        if (!padded) return std::nullopt;
        return std::vector<ir::Arg>{*padded};
      });
}

}  // namespace tccd::codegen
