// Helpers for ATen ops whose output_mask argument says which of their outputs they compute
// (aten::convolution_backward, aten::native_layer_norm_backward): reading the mask, and the
// placeholder a pass gives an output the rewritten op no longer computes.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "codegen/ir/graph.h"

namespace tccd::codegen {

// The node's argument `index` when it is a positional list of three bools (an output_mask).
std::optional<std::vector<bool>> OutputMaskAt(const ir::Node& node, size_t index);

// A 0-element placeholder like the client's for an output the op returns as None.
ir::TensorType AbsentOutput(const ir::TensorType& like);

}  // namespace tccd::codegen
