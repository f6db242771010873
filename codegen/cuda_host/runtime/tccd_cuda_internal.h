/* Shared between the runtime's two translation units (tccd_cuda_runtime.c: driver, contexts,
 * kernel launches, segments; tccd_cuda_gemm.c: cuBLASLt). Everything here is hidden: the .so
 * exports only the generated entry points. */
#ifndef TCCD_CODEGEN_CUDA_HOST_RUNTIME_TCCD_CUDA_INTERNAL_H_
#define TCCD_CODEGEN_CUDA_HOST_RUNTIME_TCCD_CUDA_INTERNAL_H_

#include <stdint.h>

#include "tccd_cuda_runtime.h"

/* Formats the calling thread's last error and returns `code`. */
__attribute__((format(printf, 2, 3))) int tccd_rt_set_error(int code, const char* format, ...);

/* Creates the cuBLASLt objects of every gemm of `module` for context slot `slot` (the current
 * context). Loads cuBLASLt on first use. Called under the runtime's mutex, before the slot is
 * published. */
int tccd_rt_gemm_load_context(const struct tccd_rt_module* module, int slot);

/* Enqueues gemm `index` on `stream`. operands: A, B, D[, bias]. */
int tccd_rt_gemm_run(const struct tccd_rt_module* module, int slot, int32_t index,
                     void* const* operands, void* workspace, uint64_t workspace_bytes,
                     void* stream);

#endif /* TCCD_CODEGEN_CUDA_HOST_RUNTIME_TCCD_CUDA_INTERNAL_H_ */
