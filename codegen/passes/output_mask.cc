// Output-mask helpers (see output_mask.h).
#include "codegen/passes/output_mask.h"

#include <variant>

namespace tccd::codegen {

std::optional<std::vector<bool>> OutputMaskAt(const ir::Node& node, size_t index) {
  if (node.args.size() <= index) return std::nullopt;
  const auto* list = std::get_if<ir::ArgList>(&node.args[index].v);
  if (list == nullptr || list->size() != 3) return std::nullopt;
  std::vector<bool> mask;
  for (const ir::Arg& a : *list) {
    const bool* bit = std::get_if<bool>(&a.v);
    if (bit == nullptr) return std::nullopt;
    mask.push_back(*bit);
  }
  return mask;
}

ir::TensorType AbsentOutput(const ir::TensorType& like) {
  ir::TensorType t = like;
  t.sizes = {0};
  t.strides = {1};
  t.storage_offset = 0;
  return t;
}

}  // namespace tccd::codegen
