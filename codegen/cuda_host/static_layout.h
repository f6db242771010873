// A schedule value's static layout as the CUDA schedule passes (match_gemms.h,
// segment_builder.h) read it: sizes, strides and offset in elements, and the element size of
// the dtypes they handle.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "codegen/ir/graph.h"

namespace tccd::codegen {

// A value's static layout.
struct Meta {
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;
  ir::DType dtype = ir::DType::kF32;
  int elem_bytes = 0;
  int64_t rank() const { return static_cast<int64_t>(sizes.size()); }
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    return n;
  }
  // Bytes from the first element to one past the last (0 when empty).
  int64_t extent_bytes() const {
    if (numel() == 0) return 0;
    int64_t last = 0;
    for (size_t d = 0; d < sizes.size(); ++d) last += (sizes[d] - 1) * strides[d];
    return (last + 1) * elem_bytes;
  }
};

// Bytes per element of the dtypes a segment may hold (views, kernels and matmuls over complex
// or wide unsigned tensors stay extern steps); 0 for the others.
inline int ElemBytes(ir::DType dtype) {
  return ir::IsExternOnly(dtype) ? 0 : ir::DTypeBytes(dtype);
}

inline std::optional<Meta> StaticMeta(const ir::TensorType& t) {
  Meta meta;
  meta.sizes = t.sizes;
  meta.strides = t.strides;
  meta.offset = t.storage_offset;
  meta.dtype = t.dtype;
  meta.elem_bytes = ElemBytes(t.dtype);
  if (meta.elem_bytes == 0 || meta.sizes.size() != meta.strides.size()) return std::nullopt;
  return meta;
}

}  // namespace tccd::codegen
