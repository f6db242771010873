// The schedule IR: what a compiled graph runs, in order, between the fusion partition and the
// wire tccd.v1.Plan (plan_serializer.h writes it; the Plan is only its serialisation).
//
// Values are tensors with a static layout, numbered like plan value ids: 0..num_inputs-1 are the
// graph's inputs, steps define the rest. A step is one of
//   kernel   one compiled kernel (a tccd.v1.NativeCall): its launch info travels with it;
//   extern   an ATen op the client runs (an op not lowered, or a view);
//   library  a call into a vendor library (a cuBLASLt matmul) computing what an ATen op does;
//            it keeps that op, and is serialised as it when no segment takes the call;
//   segment  a run of kernels and library calls behind one native call;
//   alias    a value defined as a view of a value the plan allocated itself;
//   release  the values whose last use was the step before (the client drops them).
// Allocation is implicit: a kernel's or segment's outputs are allocated by the client from
// their value's layout before the call, as on the wire, except an output written into a graph
// input's buffer (`into=[..]`: -1, or the input, per output; write_into below).
// Helpers for it: WriteIntoOf.
//
// Textual form (printer.h, parser.h); refs are %<value id>, unused outputs _:
//   schedule(inputs=2) {
//     %0: f32[8,16]{16,1}@cuda
//     %1: f32[16,8]{8,1}@cuda
//     %2: f32[8,8]{8,1}@cuda
//     %3: f32[8,8]{8,1}@cuda
//     %2 = extern aten::mm.default(%0, %1)
//     release(%0, %1)
//     %3 = kernel(%2) artifact="k.so" symbol="k0" abi="tccd-cuda-1" shape=[8,8] strides=[8,1,8,1]
//          kernels=[{name="k0", kind="cuda_pointwise", ops=["aten::relu.default"], shape=[8,8]}]
//     release(%2)
//     return (%3)
//   }
// (one line per step; the kernel above is wrapped here only for the comment's width).
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "codegen/ir/graph.h"

namespace tccd::schedule {

// A plan value id; kUnused marks an output a step returns but nothing reads.
using ValueId = int;
inline constexpr ValueId kUnused = -1;

// What one native entry point does, for stats, tests and humans (tccd.v1.KernelInfo).
struct KernelInfo {
  std::string name;
  std::string kind;  // "cpu_pointwise_loop", "cuda_pointwise", "cublaslt_gemm", ...
  std::vector<std::string> ops;
  std::vector<int64_t> grid, block;  // CUDA launch geometry, when known
  int64_t shared_mem_bytes = 0;
  std::vector<int64_t> shape;  // iteration space
  bool operator==(const KernelInfo&) const = default;
};

// Where a native entry point lives and how it is called: the backend's strings.
struct NativeEntry {
  std::string artifact;
  std::string symbol;
  std::string abi;
  bool operator==(const NativeEntry&) const = default;
};

// One compiled kernel over the iteration space `shape`; outputs are the step's outputs.
struct KernelLaunch {
  NativeEntry entry;
  std::vector<int64_t> shape;
  std::vector<ValueId> inputs;
  // [operands x rank] strides the kernel assumes (see tccd.v1.NativeCall.expected_strides).
  std::vector<int64_t> expected_strides;
  std::vector<KernelInfo> kernels;
  // Per output (empty = none): kUnused, or the graph input whose buffer the output is written
  // into instead of an allocation (mutations_into_producers.h; tccd.v1.Step.write_into).
  std::vector<ValueId> write_into;
  bool operator==(const KernelLaunch&) const = default;
};

// An ATen op; tensor arguments are ir::ValueRef{.node = value id, .output = 0}.
struct ExternOp {
  std::string target;  // "aten::convolution.default"
  std::vector<ir::Arg> args;
  std::vector<ir::NamedArg> kwargs;
  bool operator==(const ExternOp&) const = default;
};

// A vendor library function computing what `op` computes; outputs[0] is its result. Made by a
// backend pass from an extern op, taken into a segment by another; the wire has no such step,
// so one left over is serialised as `op`.
struct LibraryCall {
  std::string function;           // "cublaslt_gemm"
  std::string name;               // for KernelInfo names, e.g. "mm.default_8x32x4"
  std::vector<ValueId> operands;  // in the function's order (a gemm: A, B, D[, bias])
  // The function's parameters (a gemm: m, n, k, lda, ..., alpha). Doubles so that one list
  // holds both kinds; every integer parameter is a size or stride, exact below 2^53.
  std::vector<std::pair<std::string, double>> params;
  ExternOp op;
  bool operator==(const LibraryCall&) const = default;
};

// Kernels and library calls behind one call over one workspace (tccd.v1.NativeSegment).
struct Segment {
  NativeEntry entry;
  std::vector<ValueId> inputs;
  int64_t workspace_bytes = 0;
  std::vector<KernelInfo> kernels;  // the operations, in order
  std::vector<ValueId> write_into;  // as KernelLaunch::write_into, per segment output
  bool operator==(const Segment&) const = default;
};

// outputs[0] = a view of `base` with outputs[0]'s layout (tccd.v1.Alias).
struct Alias {
  ValueId base = kUnused;
  bool operator==(const Alias&) const = default;
};

// The values whose last use is the step before this one.
struct Release {
  std::vector<ValueId> values;
  bool operator==(const Release&) const = default;
};

struct Step {
  std::variant<KernelLaunch, ExternOp, LibraryCall, Segment, Alias, Release> op;
  std::vector<ValueId> outputs;  // values this step defines (kUnused: returned, never read)
  bool operator==(const Step&) const = default;

  template <typename T>
  bool is() const {
    return std::holds_alternative<T>(op);
  }
  template <typename T>
  const T& as() const {
    return std::get<T>(op);
  }
  template <typename T>
  T& as() {
    return std::get<T>(op);
  }
};

struct Schedule {
  int num_inputs = 0;
  std::vector<ir::TensorType> values;  // the layout of every value id
  std::vector<Step> steps;
  std::vector<ir::Arg> outputs;  // refs (.node = value id), constants or None
  bool operator==(const Schedule&) const = default;
};

// Whether a step output of layout `out` may be written into a graph input of layout `in`: the
// same layout, or both row-major contiguous over the same elements from the same offset (a
// [C, 1, 1] kernel output written into a [C] running statistic: batch norm's decomposition
// computes it in that shape and views it back).
bool CanWriteInto(const ir::TensorType& out, const ir::TensorType& in);

// The write_into list of a kernel or segment step (nullptr for other steps).
const std::vector<ValueId>* WriteIntoOf(const Step& step);
std::vector<ValueId>* WriteIntoOf(Step& step);

// A ref to value `id` in an extern argument or a schedule output.
inline ir::Arg Ref(ValueId id) { return ir::Arg{ir::ValueRef{id, 0}}; }

// The values a step reads, in operand order (duplicates kept), then the inputs it writes into
// (write_into: they must be live at the step). Release steps read nothing; a library call reads
// what its op reads.
std::vector<ValueId> ReadsOf(const Step& step);
std::vector<ValueId> ReadsOf(const ExternOp& op);

// Calls fn(value id) for every ref in `arg`, lists included.
template <typename Fn>
void ForEachValue(const ir::Arg& arg, const Fn& fn) {
  ir::ForEachRef(arg, [&](const ir::ValueRef& r) { fn(static_cast<ValueId>(r.node)); });
}

}  // namespace tccd::schedule
