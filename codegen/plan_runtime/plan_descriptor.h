// v1::Plan -> the plan descriptor ("plan.tccdplan", ArtifactKind PLAN_DESCRIPTOR): the flat,
// versioned binary form the native plan runtime reads (layout and codes:
// runtime/tccd_plan_format.h). The wire Plan stays in the manifest for the client's Python
// interpreter, the fallback; the two describe the same steps in the same order.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "tccd/v1/tccd.pb.h"

namespace tccd::codegen {

inline constexpr char kPlanDescriptorName[] = "plan.tccdplan";
inline constexpr char kPlanRuntimeName[] = "tccd_plan_runtime.so";

// A gemm with run-time sizes (NativeCall ABI "tccd-cuda-sym-gemm-1", codegen/symbolic_gemms.h)
// has ten NativeCall.shape words, its m, n, k, lda, ldb, ldd, batch, stride_a, stride_b and
// stride_d: a word >= 0 is that size; a negative word names where the size is at each call,
// the size (part 0) or stride (part 1) in dim `dim` of operand `operand` (the step's inputs,
// then its output), i.e. that value's meta's size expression. The descriptor turns each into a
// dim word; the client's interpreter evaluates it from the meta (runtime.py).
inline constexpr int64_t GemmDimRef(int operand, int part, int dim) {
  return -(1 + (int64_t{operand} * 2 + part) * 16 + dim);
}

// Symbolic plans (size expressions, SymInt arguments) carry their expressions and the symbols'
// input bindings (format version 2). UNIMPLEMENTED for what the runtime cannot run (segments or
// aliases in a symbolic plan, ranks above 16, an unknown ABI): the manifest then carries no
// descriptor and the client interprets the plan.
// INVALID_ARGUMENT/INTERNAL for a malformed plan (a bug in the plan builder).
absl::StatusOr<std::string> WritePlanDescriptor(const v1::Plan& plan);

}  // namespace tccd::codegen
