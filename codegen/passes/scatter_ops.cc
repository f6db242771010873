// Scatter ops -> kernel IR (see scatter_ops.h).
#include "codegen/passes/scatter_ops.h"

#include <optional>

#include "base/status_macros.h"

namespace tccd::codegen {
namespace {

using ir::DType;

std::optional<int64_t> IntAt(const ir::Node& node, size_t i) {
  if (i >= node.args.size()) return std::nullopt;
  if (auto* v = std::get_if<int64_t>(&node.args[i].v)) return *v;
  return std::nullopt;
}

}  // namespace

bool IsScatterOp(const ir::Graph& graph, const ir::Node& node) {
  if (node.target != kEmbeddingScatterAddTarget || node.args.size() != 4 ||
      node.outputs.size() != 1 || !node.kwargs.empty() || !node.args[0].is_ref() ||
      !node.args[1].is_ref())
    return false;
  const std::optional<int64_t> num_weights = IntAt(node, 2), padding_idx = IntAt(node, 3);
  if (!num_weights || !padding_idx) return false;
  const ir::TensorType& out = node.outputs[0];
  const ir::TensorType& grad = graph.type_of(node.args[0].ref());
  const ir::TensorType& indices = graph.type_of(node.args[1].ref());
  // The launcher zero-fills the output as one dense block (scatter_elements f32 elements).
  if (out.device != ir::DeviceType::kCuda || out.dtype != DType::kF32 || out.rank() != 2 ||
      !out.IsContiguous() || out.storage_offset != 0 || out.sizes[0] != *num_weights ||
      out.sizes[0] <= 0 || out.sizes[1] <= 0)
    return false;
  if (grad.device != out.device || indices.device != out.device || !IsFloat(grad.dtype) ||
      grad.dtype == DType::kF64 || !IsIndexDType(indices.dtype))
    return false;
  // grad is [indices..., E]; no index (0-dim indices or none at all) is left to ATen.
  if (indices.rank() < 1 || grad.rank() != indices.rank() + 1 || grad.sizes.back() != out.sizes[1])
    return false;
  for (int64_t d = 0; d < indices.rank(); ++d)
    if (grad.sizes[d] != indices.sizes[d]) return false;
  return indices.numel() > 0;
}

std::vector<int64_t> ScatterIterationShape(const ir::Graph& graph, const ir::Node& node) {
  return graph.type_of(node.args[0].ref()).sizes;
}

std::vector<ir::ValueRef> ScatterGatheredRefs(const ir::Node& node) {
  if (node.target != kEmbeddingScatterAddTarget || node.args.size() < 2 || !node.args[1].is_ref())
    return {};
  return {node.args[1].ref()};
}

absl::Status LowerScatterOp(const ir::Graph& graph, const ir::Node& node, int output,
                            const std::function<int(const ir::ValueRef&)>& input_of,
                            const std::function<int(const ir::ValueRef&)>& value_of, PwBuilder& b) {
  RET_CHECK(IsScatterOp(graph, node));
  const ir::ValueRef indices = node.args[1].ref();
  const int64_t rank = graph.type_of(node.args[0].ref()).rank();
  const int64_t num_weights = *IntAt(node, 2), padding_idx = *IntAt(node, 3);
  auto coord = [&](int64_t d) {
    PwInstr i;
    i.op = PwOp::kIndex;
    i.dtype = DType::kI64;
    i.operand = static_cast<int>(d);
    return b.Emit(std::move(i));
  };
  // The point's token id: indices at the leading coordinates (uniform along E).
  PwInstr gather;
  gather.op = PwOp::kGather;
  gather.dtype = graph.type_of(indices).dtype;
  gather.operand = input_of(indices);
  gather.args.push_back(b.Constant(1, DType::kBool));
  for (int64_t d = 0; d + 1 < rank; ++d) gather.args.push_back(coord(d));
  const int row = b.Coerce(b.Emit(std::move(gather)), DType::kI64);
  // Out-of-range ids add nothing (ATen raises a device assert; a kernel cannot, and writing out
  // of bounds is never acceptable); padding_idx's row keeps its zero gradient, as in ATen.
  const int ge = b.Compare(PwOp::kGe, row, b.Constant(0, DType::kI64));
  const int lt =
      b.Compare(PwOp::kLt, row, b.Constant(static_cast<double>(num_weights), DType::kI64));
  int mask = b.Binary(PwOp::kAnd, ge, lt);
  if (padding_idx >= 0 && padding_idx < num_weights) {
    const int kept =
        b.Compare(PwOp::kNe, row, b.Constant(static_cast<double>(padding_idx), DType::kI64));
    mask = b.Binary(PwOp::kAnd, mask, kept);
  }
  const int col = coord(rank - 1);
  const int value = b.Coerce(value_of(node.args[0].ref()), DType::kF32);
  PwInstr add;
  add.op = PwOp::kScatterAdd;
  add.dtype = DType::kF32;
  add.operand = output;
  add.args = {mask, value, row, col};
  b.Emit(std::move(add));
  return absl::OkStatus();
}

}  // namespace tccd::codegen
