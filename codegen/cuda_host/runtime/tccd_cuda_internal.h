/* Shared between the runtime's two translation units (tccd_cuda_runtime.c: driver, contexts,
 * kernel launches, segments; tccd_cuda_gemm.c: cuBLASLt). Everything here is hidden: the .so
 * exports only the generated entry points. */
#ifndef TCCD_CODEGEN_CUDA_HOST_RUNTIME_TCCD_CUDA_INTERNAL_H_
#define TCCD_CODEGEN_CUDA_HOST_RUNTIME_TCCD_CUDA_INTERNAL_H_

#include <stddef.h>
#include <stdint.h>

#include "tccd_cuda_runtime.h"

typedef int tccd_lt_status;
typedef void* tccd_lt_handle;

/* cuBLASLt, declared by hand (no CUDA header at build time): values and layouts of
 * cublasLt.h / library_types.h, which tests/codegen/cuda_host/cublaslt_abi_test.cc checks against
 * the toolkit's headers. */
enum {
  kDescTransA = 3,        /* CUBLASLT_MATMUL_DESC_TRANSA, int32 */
  kDescTransB = 4,        /* CUBLASLT_MATMUL_DESC_TRANSB, int32 */
  kDescEpilogue = 7,      /* CUBLASLT_MATMUL_DESC_EPILOGUE, uint32 */
  kDescBiasPointer = 8,   /* CUBLASLT_MATMUL_DESC_BIAS_POINTER, void* */
  kLayoutBatchCount = 5,  /* CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, int32 */
  kLayoutBatchOffset = 6, /* CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, int64 */
  kLayoutOrder = 1,       /* CUBLASLT_MATRIX_LAYOUT_ORDER, int32 */
  kOrderRow = 1,          /* CUBLASLT_ORDER_ROW */
  kPrefMaxWorkspace = 1,  /* CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64 */
  kPrefMinAlignmentA = 5, /* CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, uint32 (B, C, D: +1..3) */
  kScaleTypeF32 = 0,      /* CUDA_R_32F */
};

typedef struct {
  uint64_t algo[8];
  size_t workspace_size;
  tccd_lt_status state;
  float waves_count;
  int reserved[4];
} heuristic_result;

/* Driver values autotuning passes (cuda.h's; the ABI test checks them). */
enum {
  kCuStreamNonBlocking = 1,  /* CU_STREAM_NON_BLOCKING */
  kCuCaptureModeRelaxed = 2, /* CU_STREAM_CAPTURE_MODE_RELAXED */
};

/* The driver functions gemm autotuning needs (tccd_cuda_gemm.c), resolved with the driver in
 * tccd_cuda_runtime.c. Optional: a driver that lacks one only turns autotuning off. */
struct tccd_rt_tune_driver {
  int (*cuCtxGetDevice)(int* device);
  int (*cuMemAlloc)(uint64_t* ptr, size_t bytes);
  int (*cuMemFree)(uint64_t ptr);
  int (*cuMemsetD32Async)(uint64_t ptr, unsigned value, size_t count, void* stream);
  int (*cuStreamCreate)(void** stream, unsigned flags);
  int (*cuStreamDestroy)(void* stream);
  int (*cuStreamSynchronize)(void* stream);
  int (*cuEventCreate)(void** event, unsigned flags);
  int (*cuEventRecord)(void* event, void* stream);
  int (*cuEventElapsedTime)(float* ms, void* start, void* end);
  int (*cuEventDestroy)(void* event);
  int (*cuThreadExchangeStreamCaptureMode)(int* mode);
  /* Counting an algorithm's launches (a capture of one run into a graph): NULL when the driver
   * lacks them, and the launches are then not counted. */
  int (*cuStreamBeginCapture)(void* stream, int mode);
  int (*cuStreamEndCapture)(void* stream, void** graph);
  int (*cuGraphGetNodes)(void* graph, void** nodes, size_t* count);
  int (*cuGraphDestroy)(void* graph);
};

/* The table, or NULL when the driver is not loaded or lacks one of its functions. */
const struct tccd_rt_tune_driver* tccd_rt_get_tune_driver(void);

/* Formats the calling thread's last error and returns `code`. */
__attribute__((format(printf, 2, 3))) int tccd_rt_set_error(int code, const char* format, ...);

/* Creates the cuBLASLt objects of every gemm of `module` for context slot `slot` (the current
 * context). Loads cuBLASLt on first use. Called under the runtime's mutex, before the slot is
 * published. */
int tccd_rt_gemm_load_context(const struct tccd_rt_module* module, int slot);

struct tccd_rt_tune_table;

/* Makes `table` (checked by the caller) the table of autotuning's choices for later loads.
 * Called under the runtime's mutex. */
void tccd_rt_gemm_set_tune_table(struct tccd_rt_tune_table* table);

/* Re-reads the table for the tuned static gemms of every context `module` has loaded: a gemm
 * whose entry now holds another algorithm (the daemon's, chosen by another process) takes it
 * when cuBLASLt accepts it here. Called under the runtime's mutex, at load, before the plan
 * runs: a launch of that gemm on another thread meanwhile would race with the rewrite. */
void tccd_rt_gemm_apply_table(const struct tccd_rt_module* module);

/* Enqueues gemm `index` (static sizes) on `stream`. operands: A, B, D[, bias]. */
int tccd_rt_gemm_run(const struct tccd_rt_module* module, int slot, int32_t index,
                     void* const* operands, void* workspace, uint64_t workspace_bytes,
                     void* stream);

/* Enqueues sized gemm `index` (tccd_rt_gemm_sized) in context slot `slot`. */
int tccd_rt_gemm_run_sized(const struct tccd_rt_module* module, int slot, int32_t index,
                           void* const* data, const int64_t* dims, void* workspace,
                           uint64_t workspace_bytes, void* stream);

#endif /* TCCD_CODEGEN_CUDA_HOST_RUNTIME_TCCD_CUDA_INTERNAL_H_ */
