// ZeroAttentionMasks (see zero_attention_masks.h).
#include "codegen/passes/zero_attention_masks.h"

#include <optional>
#include <string>
#include <vector>

namespace tccd::codegen {
namespace {

bool IsZeroNumber(const ir::Arg& a) {
  if (const auto* i = std::get_if<int64_t>(&a.v)) return *i == 0;
  if (const auto* d = std::get_if<double>(&a.v)) return *d == 0.0;
  if (const auto* b = std::get_if<bool>(&a.v)) return !*b;
  return false;
}

// Whether `r` is a floating tensor of zeros made by a fill node.
bool IsZeroFill(const ir::Graph& g, const ir::ValueRef& r) {
  if (r.is_input() || r.output != 0) return false;
  const ir::Node& n = g.nodes[r.node];
  if (n.outputs.size() != 1 || !ir::IsFloatingPoint(n.outputs[0].dtype)) return false;
  const std::string& t = n.target;
  if (t == "aten::zeros.default" || t == "aten::zeros_like.default" ||
      t == "aten::new_zeros.default")
    return true;
  auto value_at = [&](size_t i, const char* name) -> const ir::Arg* {
    if (i < n.args.size()) return &n.args[i];
    return n.kwarg(name);
  };
  const ir::Arg* v = nullptr;
  if (t == "aten::full.default" || t == "aten::full_like.default") v = value_at(1, "fill_value");
  if (t == "aten::new_full.default") v = value_at(2, "fill_value");
  return v != nullptr && IsZeroNumber(*v);
}

}  // namespace

absl::StatusOr<bool> ZeroAttentionMasks::Run(ir::Graph& graph) {
  bool changed = false;
  for (ir::Node& node : graph.nodes) {
    ir::Arg* mask = nullptr;
    if (node.target == "aten::_scaled_dot_product_flash_attention_for_cpu.default") {
      for (ir::NamedArg& kw : node.kwargs)
        if (kw.name == "attn_mask") mask = &kw.value;
    } else if (node.target == "aten::_scaled_dot_product_efficient_attention.default" ||
               node.target == "aten::_scaled_dot_product_cudnn_attention.default") {
      if (node.args.size() > 3) mask = &node.args[3];
      for (ir::NamedArg& kw : node.kwargs)
        if (kw.name == "attn_bias") mask = &kw.value;
    }
    if (mask == nullptr || !mask->is_ref() || !IsZeroFill(graph, mask->ref())) continue;
    *mask = ir::Arg{ir::NoneArg{}};
    changed = true;
  }
  return changed;
}

}  // namespace tccd::codegen
