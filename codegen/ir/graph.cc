// Small helpers on the graph IR types.
#include "codegen/ir/graph.h"

namespace tccd::ir {

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "f32";
    case DType::kF64:
      return "f64";
    case DType::kF16:
      return "f16";
    case DType::kBF16:
      return "bf16";
    case DType::kI8:
      return "i8";
    case DType::kI16:
      return "i16";
    case DType::kI32:
      return "i32";
    case DType::kI64:
      return "i64";
    case DType::kU8:
      return "u8";
    case DType::kBool:
      return "b8";
    case DType::kC64:
      return "c64";
    case DType::kC128:
      return "c128";
    case DType::kC32:
      return "c32";
    case DType::kU16:
      return "u16";
    case DType::kU32:
      return "u32";
    case DType::kU64:
      return "u64";
  }
  return "?";
}

bool IsFloatingPoint(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF64 || dtype == DType::kF16 ||
         dtype == DType::kBF16;
}

bool IsIntegral(DType dtype) {
  return dtype == DType::kI8 || dtype == DType::kI16 || dtype == DType::kI32 ||
         dtype == DType::kI64 || dtype == DType::kU8;
}

bool IsComplex(DType dtype) {
  return dtype == DType::kC64 || dtype == DType::kC128 || dtype == DType::kC32;
}

bool IsExternOnly(DType dtype) {
  return static_cast<uint8_t>(dtype) > static_cast<uint8_t>(DType::kBool);
}

int DTypeBytes(DType dtype) {
  switch (dtype) {
    case DType::kC128:
      return 16;
    case DType::kC64:
    case DType::kU64:
      return 8;
    case DType::kC32:
    case DType::kU32:
      return 4;
    case DType::kU16:
      return 2;
    case DType::kF64:
    case DType::kI64:
      return 8;
    case DType::kF32:
    case DType::kI32:
      return 4;
    case DType::kF16:
    case DType::kBF16:
    case DType::kI16:
      return 2;
    case DType::kI8:
    case DType::kU8:
    case DType::kBool:
      return 1;
  }
  return 1;
}

int64_t TensorType::numel() const {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size());
  int64_t running = 1;
  for (int i = static_cast<int>(sizes.size()) - 1; i >= 0; --i) {
    strides[i] = running;
    running *= sizes[i] > 0 ? sizes[i] : 1;
  }
  return strides;
}

bool TensorType::IsContiguous() const {
  // Like torch: strides of size-1 dims do not matter.
  int64_t expected = 1;
  for (int i = static_cast<int>(sizes.size()) - 1; i >= 0; --i) {
    if (sizes[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

const Arg* Node::kwarg(const std::string& name) const {
  for (const NamedArg& kw : kwargs)
    if (kw.name == name) return &kw.value;
  return nullptr;
}

bool TouchesExternOnlyDType(const Graph& graph, const Node& node) {
  for (const TensorType& t : node.outputs)
    if (IsExternOnly(t.dtype)) return true;
  bool found = false;
  ForEachInput(node, [&](const ValueRef& r) { found |= IsExternOnly(graph.type_of(r).dtype); });
  return found;
}

}  // namespace tccd::ir
