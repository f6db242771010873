// Fused kernels with run-time sizes for graphs with symbolic sizes (symbolic_plan.h).
//
// The fusion partition and the kernel bodies come from the static pipeline, run on a
// *surrogate* graph: the symbolic graph with every symbol replaced by a fixed placeholder
// value (distinct primes > 96, never the example sizes, so the output depends on the key's
// contents only). A group of the surrogate's partition becomes a symbolic kernel only when it
// is right for every size, which is checked on the symbolic graph itself, expression by
// expression:
//  * every member's output has the same sizes (canonical Dim: value or expression) as the
//    group's iteration space, and every input broadcasts to it by static 1s or equal dims;
//  * no member has a symbolic argument (a SymInt scalar would be baked in as the placeholder);
//  * the kernel is a plain pointwise loop: no index-aware op (cat offsets, gathers and random
//    draws are computed from sizes), no reduction section; or, with SymbolicKernelOptions::rows
//    (CUDA), a row reduction whose rows are static dims or one symbolic dim (the row count may
//    be symbolic), every member value at one level of the reduced tensor's sizes (element or
//    row) and every output of the kernel's rank. Row groups come from the static CUDA
//    regrouping (reduction_fusion.h) run on the surrogate: softmax, log_softmax, their
//    backwards, layer norm forward, sums/means/amax over trailing dims, with their pointwise
//    prologues and epilogues. Static rows keep the static geometry (persistent or looped, the
//    vector width the length allows); rows of run-time length (attention's softmax over a
//    symbolic sequence) take the looped, shifted form, which no length can break.
// A group that fails a check stays extern steps, with the reason logged. The iteration space's
// symbolic dims become kRuntimeDim (kernel/pointwise_kernel.h): the kernels specialise on the
// static dims only, and the client passes the sizes, evaluated from the symbols, at each call.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/cuda_host/host_program.h"
#include "codegen/kernel/pointwise_kernel.h"
#include "codegen/symbolic_plan.h"
#include "tccd/v1/tccd.pb.h"

namespace tccd::codegen {

struct SymbolicKernelGroup {
  PointwiseKernel kernel;             // shape: kRuntimeDim where the iteration space is symbolic
  std::vector<int> nodes;             // member node ids, ascending
  std::vector<v1::ValueRef> inputs;   // graph refs (proto form: node -(i+1) for input i)
  std::vector<v1::ValueRef> outputs;  // member outputs read outside the group or returned
};

// A matmul node run as a cuBLASLt gemm with run-time sizes (symbolic_gemms.h).
struct SymbolicGemm {
  GemmSpec spec;                     // sized; its name is the host library's entry point
  int node = -1;                     // the matmul node
  std::vector<v1::ValueRef> inputs;  // A, B[, bias] (graph refs, proto form)
  v1::ValueRef output;               // D: the node's output
  // m, n, k, lda, ldb, ldd, batch, stride_a, stride_b, stride_d as NativeCall.shape words: a
  // size, or GemmDimRef (plan_descriptor.h) to an operand's (A, B[, bias], D) size or stride.
  std::vector<int64_t> shape;
};

// One step of the symbolic plan, in schedule order: a fused group, a gemm or an extern node.
struct SymbolicUnit {
  int group = -1;  // index into SymbolicLowering::groups, or -1
  int node = -1;   // the extern node when group == -1 and gemm == -1
  int gemm = -1;   // index into SymbolicLowering::gemms, or -1
};

struct SymbolicLowering {
  std::vector<SymbolicKernelGroup> groups;
  std::vector<SymbolicGemm> gemms;
  std::vector<SymbolicUnit> schedule;  // a topological order covering every node once
  std::vector<std::string> rejected;   // why partition groups stayed extern (for the log)
  // Nodes no step runs: extern views whose readers read their input instead and whose output
  // nothing reads (a weight's t absorbed into its gemms, symbolic_gemms.h). Not in `schedule`.
  std::vector<int> elided;
};

struct SymbolicKernelOptions {
  // False (TCCD_DISABLE_FUSION): every node extern. Default: true.
  bool fusion = true;
  // The backend's own limits on a kernel (CUDA: its parameter block); a kernel it refuses stays
  // extern steps, with the status's message as the reason. Default: none.
  std::function<absl::Status(const PointwiseKernel&)> check;
  // True (CUDA): row reductions with run-time row counts (see the top of this file); the CPU
  // keeps ATen's reductions in static plans too. Default: false.
  bool rows = false;
  // True (CUDA, with rows): column reductions (bias and norm weight gradients) whose reduced
  // dims are symbolic and kept dims static become column kernels with run-time row counts.
  // TCCD_DISABLE_PASSES=symbolic-columns keeps them extern. Default: true.
  bool columns = true;
  // True: an embedding whose table is static becomes an index kernel of its own (a gather with
  // run-time sizes) instead of ATen's embedding. TCCD_DISABLE_PASSES=symbolic-embedding-kernels
  // keeps it extern. Default: true.
  bool embeddings = true;
  // True: a cat along a static dim whose parts share the output's other sizes becomes an index
  // kernel of its own (gathers with run-time sizes, the part boundaries constants) instead of
  // ATen's cat. TCCD_DISABLE_PASSES=symbolic-cat-kernels keeps it extern. Default: true.
  bool cats = true;
  // True: an integral arange(end) whose output is [end] becomes a kernel of its own (its
  // coordinate stored, the length a run-time size) instead of an extern step.
  // TCCD_DISABLE_PASSES=symbolic-arange-kernels keeps it extern. Default: true.
  bool aranges = true;
  // True: independent groups of one iteration shape merge into one kernel, as the static
  // pipeline's horizontal fusion merges them (passes/horizontal_fusion.h; run on the surrogate
  // after the row regrouping): the q and k clones of an attention's head split. A merged group
  // the checks refuse falls back to its parts. TCCD_DISABLE_PASSES=symbolic-horizontal-fusion
  // keeps one kernel per group. Default: true.
  bool horizontal = true;
  // True (CUDA, with rows): the row regrouping takes the lone embedding kernels whose table is
  // static (IsSymbolicEmbedding) into row kernels as row-level gathers (FusionOptions::
  // row_gathers, branch `gath`'s rows), so the first layer norm gathers its token embedding, as
  // the static plan's does: the id read once per row at the row's run-time coordinates, the
  // table per element. TCCD_DISABLE_PASSES=symbolic-row-gathers keeps the embeddings kernels of
  // their own. Default: false.
  bool row_gathers = false;
};

// Kernels are named tccd_sk<g>. A graph whose surrogate is not a valid static graph is no
// error: it gets the all-extern schedule and a `rejected` line saying why.
absl::StatusOr<SymbolicLowering> LowerSymbolicKernels(const SymbolicGraph& graph,
                                                      const SymbolicKernelOptions& options);

// How the plan names one backend's kernels.
struct SymbolicNativeTarget {
  std::string artifact;    // "kernels.so", "kernels_cuda.so"
  std::string static_abi;  // a kernel whose iteration space is static: "tccd-cpu-1", "tccd-cuda-1"
  std::string sized_abi;   // run-time sizes: "tccd-cpu-sym-1", "tccd-cuda-sym-1"
  std::string kind;        // KernelInfo.kind: "cpu_pointwise_loop", "cuda_pointwise"
  std::string row_kind = "cuda_row_reduction";  // KernelInfo.kind of row reductions
};
inline const SymbolicNativeTarget kCpuSymbolicTarget{"kernels.so", "tccd-cpu-1", "tccd-cpu-sym-1",
                                                     "cpu_pointwise_loop"};

// The plan: one NativeCall per gemm (ABI kCudaSizedGemmAbi, its sizes in `dims`), one per group
// (ABI target.sized_abi, or target.static_abi for a group
// whose iteration space is static; shape with
// kRuntimeDim where the size is symbolic; the client takes those sizes from the outputs' metas,
// which every group output shares with the iteration space) and one ExternCall per other node,
// in `lowering.schedule` order; values released after their last use.
absl::StatusOr<v1::Plan> SymbolicKernelPlan(
    const SymbolicGraph& graph, const SymbolicLowering& lowering,
    const SymbolicNativeTarget& target = kCpuSymbolicTarget);

// The placeholder value of symbol sN in the surrogate graph (the N-th prime above 96).
int64_t SurrogateSymbolValue(int symbol);

}  // namespace tccd::codegen
