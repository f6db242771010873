// The runtime declares cuBLASLt by hand (no CUDA header when the daemon builds it); here, where
// the toolkit is, every hand-written value and layout is checked against cublasLt.h.
#include <cublasLt.h>
#include <cuda.h>

#include <catch2/catch.hpp>
#include <cstddef>

#include "codegen/cuda_host/host_program.h"
#include "codegen/cuda_host/runtime/tccd_cuda_internal.h"
#include "codegen/cuda_host/runtime/tccd_cuda_tune.h"

namespace tccd::codegen {
namespace {

static_assert(kDescTransA == CUBLASLT_MATMUL_DESC_TRANSA);
static_assert(kDescTransB == CUBLASLT_MATMUL_DESC_TRANSB);
static_assert(kDescEpilogue == CUBLASLT_MATMUL_DESC_EPILOGUE);
static_assert(kDescBiasPointer == CUBLASLT_MATMUL_DESC_BIAS_POINTER);
static_assert(kLayoutBatchCount == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT);
static_assert(kLayoutBatchOffset == CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET);
static_assert(kLayoutOrder == CUBLASLT_MATRIX_LAYOUT_ORDER && kOrderRow == CUBLASLT_ORDER_ROW);
static_assert(kPrefMaxWorkspace == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES);
static_assert(kPrefMinAlignmentA == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES &&
              kPrefMinAlignmentA + 1 == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES &&
              kPrefMinAlignmentA + 2 == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES &&
              kPrefMinAlignmentA + 3 == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES);
static_assert(kScaleTypeF32 == CUDA_R_32F);
static_assert(kCudaR32F == CUDA_R_32F && kCudaR16F == CUDA_R_16F && kCudaR16BF == CUDA_R_16BF);
static_assert(kCublasCompute32F == CUBLAS_COMPUTE_32F);
static_assert(kCublasEpilogueDefault == CUBLASLT_EPILOGUE_DEFAULT);
static_assert(kCublasEpilogueBias == CUBLASLT_EPILOGUE_BIAS);
static_assert(kCublasEpilogueReluBias == CUBLASLT_EPILOGUE_RELU_BIAS);
static_assert(sizeof(heuristic_result) == sizeof(cublasLtMatmulHeuristicResult_t));
static_assert(offsetof(heuristic_result, workspace_size) ==
              offsetof(cublasLtMatmulHeuristicResult_t, workspaceSize));
static_assert(offsetof(heuristic_result, state) ==
              offsetof(cublasLtMatmulHeuristicResult_t, state));
static_assert(sizeof(tccd_rt_gemm_state::algo) == sizeof(cublasLtMatmulAlgo_t));
// Autotuning's driver values and argument types (tccd_rt_tune_driver).
static_assert(kCuStreamNonBlocking == CU_STREAM_NON_BLOCKING);
static_assert(kCuCaptureModeRelaxed == CU_STREAM_CAPTURE_MODE_RELAXED);
static_assert(sizeof(CUdeviceptr) == sizeof(uint64_t));
static_assert(sizeof(CUstreamCaptureMode) == sizeof(int));
// The driver symbols tccd_cuda_runtime.c resolves for autotuning are the ones cuda.h maps the
// API to (the legacy-stream variants, not *_ptsz). cuEventElapsedTime is the exception: CUDA
// 13's header maps it to cuEventElapsedTime_v2, which older drivers lack; the runtime takes the
// original, which every driver still exports.
#define TCCD_STR2(x) #x
#define TCCD_STR(x) TCCD_STR2(x)
constexpr bool Same(const char* a, const char* b) {
  while (*a != 0 && *a == *b) ++a, ++b;
  return *a == *b;
}
static_assert(Same(TCCD_STR(cuMemAlloc), "cuMemAlloc_v2"));
static_assert(Same(TCCD_STR(cuMemFree), "cuMemFree_v2"));
static_assert(Same(TCCD_STR(cuStreamDestroy), "cuStreamDestroy_v2"));
static_assert(Same(TCCD_STR(cuEventDestroy), "cuEventDestroy_v2"));
static_assert(Same(TCCD_STR(cuStreamCreate), "cuStreamCreate"));
static_assert(Same(TCCD_STR(cuEventCreate), "cuEventCreate"));
static_assert(Same(TCCD_STR(cuThreadExchangeStreamCaptureMode), "cuThreadExchangeStreamCaptureMode"));
static_assert(Same(TCCD_STR(cuStreamBeginCapture), "cuStreamBeginCapture_v2"));
static_assert(Same(TCCD_STR(cuStreamEndCapture), "cuStreamEndCapture"));
static_assert(Same(TCCD_STR(cuGraphGetNodes), "cuGraphGetNodes"));
static_assert(Same(TCCD_STR(cuGraphDestroy), "cuGraphDestroy"));
// The table entry's algorithm words hold a cublasLtMatmulAlgo_t.
static_assert(sizeof(tccd_rt_tune_entry::algo) == sizeof(cublasLtMatmulAlgo_t));

TEST_CASE("the hand-declared cuBLASLt ABI matches the toolkit's header", "[cuda_host]") {
  // Everything is checked at compile time above; this case records that the file was built.
  CHECK(sizeof(cublasLtMatmulAlgo_t) == 64);
}

}  // namespace
}  // namespace tccd::codegen
