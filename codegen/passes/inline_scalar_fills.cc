// InlineScalarFills (see inline_scalar_fills.h).
#include "codegen/passes/inline_scalar_fills.h"

#include <cmath>
#include <cstring>
#include <optional>

#include "codegen/passes/pointwise_ops.h"

namespace tccd::codegen {
namespace {

using ir::DType;

double NumberOf(const ir::Arg& a) {
  if (auto* i = std::get_if<int64_t>(&a.v)) return static_cast<double>(*i);
  if (auto* d = std::get_if<double>(&a.v)) return *d;
  if (auto* b = std::get_if<bool>(&a.v)) return *b ? 1 : 0;
  return std::nan("");
}

// The fill value of a 0-dim constant node, as an argument of the fill's dtype category, when the
// dtype represents it exactly.
std::optional<ir::Arg> ScalarFill(const ir::Node& node) {
  if (node.outputs.size() != 1 || node.outputs[0].rank() != 0) return std::nullopt;
  static const ir::Arg kZero{int64_t{0}}, kOne{int64_t{1}};
  const ir::Arg* value = nullptr;
  const bool sized = node.target == "aten::full.default" || node.target == "aten::zeros.default" ||
                     node.target == "aten::ones.default";
  if (sized && !node.args.empty()) {
    const auto* size = std::get_if<ir::ArgList>(&node.args[0].v);
    if (size == nullptr || !size->empty()) return std::nullopt;
    if (node.target == "aten::full.default") {
      if (node.args.size() < 2) return std::nullopt;
      value = &node.args[1];
    } else {
      value = node.target == "aten::zeros.default" ? &kZero : &kOne;
    }
  } else if (node.target == "aten::scalar_tensor.default" && !node.args.empty()) {
    value = &node.args[0];
  } else if ((node.target == "aten::new_zeros.default" || node.target == "aten::new_ones.default" ||
              node.target == "aten::new_full.default") &&
             node.args.size() >= 2) {
    // new_*(self, size[, fill_value]): self gives only the dtype/device defaults (transformers'
    // masks: q_idx.new_ones((), dtype=torch.bool), an ATen fill kernel per step otherwise).
    const auto* size = std::get_if<ir::ArgList>(&node.args[1].v);
    if (size == nullptr || !size->empty()) return std::nullopt;
    if (node.target == "aten::new_full.default") {
      if (node.args.size() < 3) return std::nullopt;
      value = &node.args[2];
    } else {
      value = node.target == "aten::new_zeros.default" ? &kZero : &kOne;
    }
  } else {
    return std::nullopt;
  }
  const double v = NumberOf(*value);
  if (std::isnan(v) && !std::holds_alternative<double>(value->v)) return std::nullopt;
  const DType d = node.outputs[0].dtype;
  switch (d) {
    case DType::kF64:
      return ir::Arg{v};
    case DType::kF32:
      if (std::isnan(v) || static_cast<double>(static_cast<float>(v)) == v) return ir::Arg{v};
      return std::nullopt;
    case DType::kBF16: {
      const float f = static_cast<float>(v);
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      if (static_cast<double>(f) == v && (bits & 0xffffu) == 0) return ir::Arg{v};
      return std::nullopt;
    }
    case DType::kF16:
      if (v == std::trunc(v) && std::abs(v) <= 2048) return ir::Arg{v};
      return std::nullopt;
    case DType::kBool:
      return ir::Arg{v != 0};
    case DType::kC64:
    case DType::kC128:
    case DType::kC32:
    case DType::kU16:
    case DType::kU32:
    case DType::kU64:
      return std::nullopt;  // ir::IsExternOnly: these fills stay extern steps
    default:                // integers
      if (v == std::trunc(v) && std::abs(v) < 9.0e15) return ir::Arg{static_cast<int64_t>(v)};
      return std::nullopt;
  }
}

}  // namespace

absl::StatusOr<bool> InlineScalarFills::Run(ir::Graph& graph) {
  std::vector<std::optional<ir::Arg>> fill(graph.nodes.size());
  for (size_t id = 0; id < graph.nodes.size(); ++id) fill[id] = ScalarFill(graph.nodes[id]);
  bool changed = false;
  for (ir::Node& node : graph.nodes) {
    if (!IsPointwiseOp(graph, node)) continue;
    const int operands = PointwiseOperandCount(node);
    for (int i = 0; i < operands && i < static_cast<int>(node.args.size()); ++i) {
      ir::Arg& a = node.args[i];
      if (!a.is_ref() || a.ref().is_input() || !fill[a.ref().node]) continue;
      // Same device only: fusion never mixes devices either.
      if (graph.nodes[a.ref().node].outputs[0].device != node.outputs[0].device) continue;
      a = *fill[a.ref().node];
      changed = true;
    }
  }
  return changed;
}

}  // namespace tccd::codegen
