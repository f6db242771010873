// What a kernels_cuda.so runs besides single kernels: cuBLASLt matmuls and segments (straight
// sequences of kernels and matmuls over one io array and one workspace, ABI
// "tccd-cuda-segment-1", tccd.v1.NativeSegment). Built by codegen/cuda_host/segment_builder.h from
// a schedule, emitted by host_module.cc as the constant tables of runtime/tccd_cuda_runtime.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tccd::codegen {

// cuBLASLt codes the daemon writes into GemmSpec (values of cublasLt.h/library_types.h; the
// runtime test checks them against the toolkit's headers).
inline constexpr int kCudaR32F = 0;
inline constexpr int kCudaR16F = 2;
inline constexpr int kCudaR16BF = 14;
inline constexpr int kCublasCompute32F = 68;
inline constexpr int kCublasEpilogueDefault = 1;
inline constexpr int kCublasEpilogueBias = 4;
inline constexpr int kCublasEpilogueReluBias = 6;

// The most cuBLASLt scratch one static gemm may use, by default: what cuBLAS recommends for
// Hopper (cublasSetWorkspace: 32 MiB) and what ATen gives its cuBLAS handles there. With 8 MiB
// (the default before the thirteenth session, TCCD_GEMM_WORKSPACE_MB=8) cuBLASLt's heuristic
// ranks for ConvNeXt-T's weight gradients (96 x 384 outputs over k = 200704 tokens: split-K
// with many slices, whose partial sums live in the workspace) 128x64 and 64x64 tiles at
// 100-120 us where ATen's cuBLAS takes 128x128 ones at 54 us (H200, 2026-11-27). The segment
// reserves this much (SegmentSpec::gemm_workspace_bytes) and the runtime lets the heuristic use
// it (tccd_rt_gemm.tune's workspace bits, TCCD_RT_TUNE_WORKSPACE_MIB).
inline constexpr int64_t kGemmWorkspaceBytes = int64_t{32} << 20;
// What the runtime assumes when tccd_rt_gemm.tune names no workspace (plans before the
// workspace bits; gemms with run-time sizes, which get TCCD_GEMM_WORKSPACE_BYTES per call).
inline constexpr int64_t kLegacyGemmWorkspaceBytes = int64_t{8} << 20;

// The ABI of a gemm with run-time sizes, exported by the host library as its own entry point:
//   extern "C" int <name>(void* const* data, const int64_t* dims, void* workspace,
//                         uint64_t workspace_bytes, void* stream);
// data: A, B[, bias], D; dims: m, n, k, lda, ldb, ldd, batch, stride_a, stride_b, stride_d
// (tccd_rt_gemm_sized in runtime/tccd_cuda_runtime.h).
inline constexpr char kCudaSizedGemmAbi[] = "tccd-cuda-sym-gemm-1";
inline constexpr int kGemmDims = 10;

// D[m x n] = alpha * op(A) * op(B) (+ bias), column-major, as struct tccd_rt_gemm.
struct GemmSpec {
  std::string name;
  // Sizes come with each call (kCudaSizedGemmAbi; the matmuls of symbolic plans): m .. stride_d
  // are unused, and the host library exports `name` as the gemm's entry point. Default: false.
  bool sized = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldd = 0;
  int64_t batch = 1;
  int64_t stride_a = 0, stride_b = 0, stride_d = 0;
  int trans_a = 0, trans_b = 0;
  int dtype = kCudaR32F;
  int compute = kCublasCompute32F;
  int epilogue = kCublasEpilogueDefault;
  float alpha = 1.0f;
  // Algorithms the runtime times at load to pick the fastest (tccd_rt_gemm.tune,
  // runtime/tccd_cuda_tune.h), in the low byte; 0 takes cuBLASLt's heuristic's first;
  // | kGemmTuneSwap also times the swapped formulation. Not a library-call parameter: the
  // backend sets it on the finished program (BackendOptions::gemm_autotune). Bits 16..23: the
  // cuBLASLt workspace in MiB the algorithm may use (kGemmTuneWorkspaceShift; 0: 8 MiB, as
  // before the bits existed). Default: 0.
  int tune = 0;
};

struct SegmentOperandSpec {
  int32_t io_index = -1;  // -1: the workspace
  int64_t byte_offset = 0;
};

struct SegmentStepSpec {
  enum class Kind { kKernel = 0, kGemm = 1 };
  Kind kind = Kind::kKernel;
  int index = 0;  // kernel index in the CudaModule, or gemm index in HostProgram::gemms
  std::vector<SegmentOperandSpec> operands;
  std::vector<int64_t> strides;  // kernels: [operands x rank] as in tccd-cuda-1
};

struct SegmentSpec {
  std::string name;  // the exported symbol
  std::vector<SegmentStepSpec> steps;
  int num_io = 0;
  int64_t workspace_bytes = 0;
  int64_t gemm_workspace_offset = 0;
  int64_t gemm_workspace_bytes = 0;
};

struct HostProgram {
  std::vector<GemmSpec> gemms;
  std::vector<SegmentSpec> segments;
  bool empty() const { return gemms.empty() && segments.empty(); }
};

// The entry point a library with tuned gemms exports: int tccd_cuda_set_tune_table(void*),
// through which the client shares one table of autotuning's choices between the libraries of a
// device and processes (runtime/tccd_cuda_tune.h).
inline constexpr char kCudaSetTuneTableEntry[] = "tccd_cuda_set_tune_table";
// Exported by a library with gemms of run-time sizes: int tccd_cuda_gemm_stats(uint64_t* out,
// int n) copies the sized gemm cache's counters (TCCD_RT_GEMM_STAT_*, tccd_cuda_runtime.h:
// calls, hits, misses, key churn, evictions, heuristic queries, set-up and matmul ns).
inline constexpr char kCudaGemmStatsEntry[] = "tccd_cuda_gemm_stats";

// GemmSpec::tune's flag for the swapped formulation (TCCD_RT_TUNE_SWAP).
inline constexpr int kGemmTuneSwap = 0x100;
// GemmSpec::tune's workspace in MiB, shifted (TCCD_RT_TUNE_WORKSPACE_MIB).
inline constexpr int kGemmTuneWorkspaceShift = 16;

// GemmSpec::tune for a static gemm timing `candidates` (with kGemmTuneSwap) whose segment
// reserves `workspace_bytes` of cuBLASLt scratch (a whole number of MiB, 1..255).
inline int GemmTuneWord(int candidates, int64_t workspace_bytes) {
  const int mib = static_cast<int>(workspace_bytes >> 20);
  return candidates | (workspace_bytes == kLegacyGemmWorkspaceBytes ? 0 : mib << kGemmTuneWorkspaceShift);
}

// Whether a gemm of `program` times its candidates at load (more than one candidate).
inline bool HasTunedGemm(const HostProgram& program) {
  for (const GemmSpec& gemm : program.gemms)
    if (!gemm.sized && (gemm.tune & 0xff) > 1) return true;
  return false;
}

}  // namespace tccd::codegen
