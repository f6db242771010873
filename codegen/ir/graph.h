// The graph IR: an ATen-level dataflow graph with static tensor types.
//
// It mirrors tccd.v1.Graph but is what every pass works on. It has a textual form (printer.h,
// parser.h) that is also the canonical form a compile key is computed from: value names are
// positional (%0, %1, ... for nodes, %a0, %a1, ... for inputs), so the names the client's FX
// graph used never reach a key.
//
//   graph(%a0: f32[4,8]{8,1}@cpu, %a1: f32[8]{1}@cpu) {
//     %0 = aten::mul.Tensor(%a0, %a1) -> f32[4,8]{8,1}@cpu
//     %1 = aten::native_batch_norm.default(...) -> (f32[2]{1}@cpu, f32[2]{1}@cpu)
//     return (%0, %1#1, None)
//   }
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace tccd::ir {

// The dtypes after kBool (complex, and the unsigned types wider than u8) pass through graphs and
// extern steps only: no kernel computes on them (TouchesExternOnlyDType guards every lowering),
// so the kernel IR never sees them.
enum class DType : uint8_t {
  kF32,
  kF64,
  kF16,
  kBF16,
  kI8,
  kI16,
  kI32,
  kI64,
  kU8,
  kBool,
  kC64,
  kC128,
  kC32,
  kU16,
  kU32,
  kU64,
};
enum class DeviceType : uint8_t { kCpu, kCuda };

const char* DTypeName(DType dtype);  // "f32", "bf16", "b8", ...
bool IsFloatingPoint(DType dtype);
bool IsIntegral(DType dtype);  // excludes bool
bool IsComplex(DType dtype);
// Only extern steps compute on tensors of this dtype (complex, u16/u32/u64).
bool IsExternOnly(DType dtype);
int DTypeBytes(DType dtype);

struct TensorType {
  DType dtype = DType::kF32;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;  // elements
  int64_t storage_offset = 0;
  DeviceType device = DeviceType::kCpu;

  int64_t rank() const { return static_cast<int64_t>(sizes.size()); }
  int64_t numel() const;
  bool IsContiguous() const;
  bool operator==(const TensorType&) const = default;
};

// Row-major strides for `sizes`.
std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& sizes);

// A tensor produced by a node (node >= 0) or a graph input (node = kInput, output = index).
struct ValueRef {
  static constexpr int kInput = -1;
  int node = 0;
  int output = 0;
  bool is_input() const { return node == kInput; }
  bool operator==(const ValueRef&) const = default;
  auto operator<=>(const ValueRef&) const = default;
};

struct Arg;
using ArgList = std::vector<Arg>;
struct NoneArg {
  bool operator==(const NoneArg&) const = default;
};
// torch.layout / torch.memory_format arguments keep their own type so they print distinctly.
struct LayoutArg {
  int value = 0;
  bool operator==(const LayoutArg&) const = default;
};
struct MemoryFormatArg {
  int value = 0;
  bool operator==(const MemoryFormatArg&) const = default;
};

// An op argument or a graph output.
struct Arg {
  std::variant<NoneArg, ValueRef, int64_t, double, bool, std::string, DType, DeviceType, ArgList,
               LayoutArg, MemoryFormatArg>
      v;
  bool operator==(const Arg&) const = default;

  bool is_none() const { return std::holds_alternative<NoneArg>(v); }
  bool is_ref() const { return std::holds_alternative<ValueRef>(v); }
  const ValueRef& ref() const { return std::get<ValueRef>(v); }
};

struct NamedArg {
  std::string name;
  Arg value;
  bool operator==(const NamedArg&) const = default;
};

struct Node {
  std::string target;  // "aten::add.Tensor"
  std::vector<Arg> args;
  std::vector<NamedArg> kwargs;
  std::vector<TensorType> outputs;
  bool operator==(const Node&) const = default;

  // The keyword argument `name`, or nullptr.
  const Arg* kwarg(const std::string& name) const;
};

struct Graph {
  std::vector<TensorType> inputs;
  std::vector<Node> nodes;  // topological order; node id = index
  std::vector<Arg> outputs;
  bool operator==(const Graph&) const = default;

  const TensorType& type_of(const ValueRef& ref) const {
    return ref.is_input() ? inputs[ref.output] : nodes[ref.node].outputs[ref.output];
  }
};

// Calls fn(ref) for every tensor reference in `arg`, through nested lists.
template <typename Fn>
void ForEachRef(const Arg& arg, const Fn& fn) {
  if (arg.is_ref()) {
    fn(arg.ref());
  } else if (const auto* list = std::get_if<ArgList>(&arg.v)) {
    for (const Arg& a : *list) ForEachRef(a, fn);
  }
}

// Calls fn(ref) for every tensor a node reads (positional and keyword arguments).
template <typename Fn>
void ForEachInput(const Node& node, const Fn& fn) {
  for (const Arg& a : node.args) ForEachRef(a, fn);
  for (const NamedArg& kw : node.kwargs) ForEachRef(kw.value, fn);
}

// Whether `node` reads or produces a tensor of an IsExternOnly dtype: such a node is always an
// extern step.
bool TouchesExternOnlyDType(const Graph& graph, const Node& node);

}  // namespace tccd::ir
