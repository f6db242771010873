/* cuBLASLt matmuls for kernels_cuda.so (the gemm steps of segments; tccd_cuda_runtime.h).
 *
 * cuBLASLt is dlopen'ed like the driver: RTLD_NOLOAD first, because PyTorch has loaded its own
 * copy (libtorch_cuda links it), so the artifact uses exactly the library PyTorch uses; then a
 * normal load. Types and constants are declared by hand from cublasLt.h (no CUDA header at
 * build time); tests/codegen/cuda_host checks them against the toolkit's header.
 *
 * Per context, at load time (never during capture): one matmul descriptor, three layouts and
 * the heuristic's best algorithm per gemm. A launch is then one cublasLtMatmul on the caller's
 * stream: no allocation (cuBLASLt's scratch is part of the segment workspace), no sync.
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tccd_cuda_internal.h"

struct cublaslt {
  tccd_lt_status (*create)(tccd_lt_handle*);
  const char* (*status_string)(tccd_lt_status);
  tccd_lt_status (*desc_create)(void** desc, int compute, int scale_type);
  tccd_lt_status (*desc_set)(void* desc, int attr, const void* buf, size_t size);
  tccd_lt_status (*layout_create)(void** layout, int type, uint64_t rows, uint64_t cols,
                                  int64_t ld);
  tccd_lt_status (*layout_set)(void* layout, int attr, const void* buf, size_t size);
  tccd_lt_status (*pref_create)(void** pref);
  tccd_lt_status (*pref_set)(void* pref, int attr, const void* buf, size_t size);
  tccd_lt_status (*pref_destroy)(void* pref);
  tccd_lt_status (*heuristic)(tccd_lt_handle, void* desc, void* a, void* b, void* c, void* d,
                              void* pref, int requested, heuristic_result* results, int* returned);
  tccd_lt_status (*matmul)(tccd_lt_handle, void* desc, const void* alpha, const void* A, void* a,
                           const void* B, void* b, const void* beta, const void* C, void* c,
                           void* D, void* d, const void* algo, void* workspace,
                           size_t workspace_size, void* stream);
};

/* Written under the runtime's mutex (tccd_rt_gemm_load_context is only called under it), read
 * only by launches in contexts published after it was written. */
static struct cublaslt g_lt;
static tccd_lt_handle g_handle;
static int g_lt_ready;

/* The most scratch a gemm may ask for; the segment builder reserves this much
 * (kGemmWorkspaceBytes, host_program.h). */
#define TCCD_RT_GEMM_MAX_WORKSPACE (8u << 20)

static void* open_cublaslt(void) {
  static const char* const kNames[] = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"};
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < sizeof(kNames) / sizeof(kNames[0]); ++i) {
      void* lib = dlopen(kNames[i], RTLD_NOW | RTLD_GLOBAL | (pass == 0 ? RTLD_NOLOAD : 0));
      if (lib != NULL) return lib;
    }
  }
  return NULL;
}

static int load_cublaslt_locked(void) {
  if (g_lt_ready) return TCCD_RT_SUCCESS;
  void* lib = open_cublaslt();
  if (lib == NULL) {
    const char* why = dlerror();
    return tccd_rt_set_error(
        TCCD_RT_ERROR_CUBLAS, "tccd: cuBLASLt could not be loaded: %s",
        why != NULL ? why : "no libcublasLt.so.13/.12 in the process or on the path");
  }
  struct cublaslt lt;
  memset(&lt, 0, sizeof(lt));
#define TCCD_RT_RESOLVE(field, symbol)                                                   \
  do {                                                                                   \
    *(void**)(&lt.field) = dlsym(lib, symbol);                                           \
    if (lt.field == NULL)                                                                \
      return tccd_rt_set_error(TCCD_RT_ERROR_CUBLAS, "tccd: cuBLASLt lacks %s", symbol); \
  } while (0)
  TCCD_RT_RESOLVE(create, "cublasLtCreate");
  TCCD_RT_RESOLVE(status_string, "cublasLtGetStatusString");
  TCCD_RT_RESOLVE(desc_create, "cublasLtMatmulDescCreate");
  TCCD_RT_RESOLVE(desc_set, "cublasLtMatmulDescSetAttribute");
  TCCD_RT_RESOLVE(layout_create, "cublasLtMatrixLayoutCreate");
  TCCD_RT_RESOLVE(layout_set, "cublasLtMatrixLayoutSetAttribute");
  TCCD_RT_RESOLVE(pref_create, "cublasLtMatmulPreferenceCreate");
  TCCD_RT_RESOLVE(pref_set, "cublasLtMatmulPreferenceSetAttribute");
  TCCD_RT_RESOLVE(pref_destroy, "cublasLtMatmulPreferenceDestroy");
  TCCD_RT_RESOLVE(heuristic, "cublasLtMatmulAlgoGetHeuristic");
  TCCD_RT_RESOLVE(matmul, "cublasLtMatmul");
#undef TCCD_RT_RESOLVE
  const tccd_lt_status status = lt.create(&g_handle);
  if (status != 0) {
    return tccd_rt_set_error(TCCD_RT_ERROR_CUBLAS, "tccd: cublasLtCreate failed: %s (%d)",
                             lt.status_string(status), status);
  }
  g_lt = lt;
  g_lt_ready = 1;
  return TCCD_RT_SUCCESS;
}

static int lt_error(tccd_lt_status status, const char* what, const char* gemm) {
  return tccd_rt_set_error(TCCD_RT_ERROR_CUBLAS, "tccd: %s(%s) failed: %s (%d)", what, gemm,
                           g_lt.status_string(status), status);
}

#define TCCD_RT_CHECK(call, what)                              \
  do {                                                         \
    const tccd_lt_status status_ = (call);                     \
    if (status_ != 0) return lt_error(status_, what, g->name); \
  } while (0)

static int make_layout(const struct tccd_rt_gemm* g, void** layout, uint64_t rows, uint64_t cols,
                       int64_t ld, int64_t batch_stride) {
  TCCD_RT_CHECK(g_lt.layout_create(layout, g->dtype, rows, cols, ld), "cublasLtMatrixLayoutCreate");
  if (g->batch > 1) {
    const int32_t count = (int32_t)g->batch;
    TCCD_RT_CHECK(g_lt.layout_set(*layout, kLayoutBatchCount, &count, sizeof(count)),
                  "cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)");
    TCCD_RT_CHECK(g_lt.layout_set(*layout, kLayoutBatchOffset, &batch_stride, sizeof(batch_stride)),
                  "cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)");
  }
  return TCCD_RT_SUCCESS;
}

static int load_gemm(const struct tccd_rt_gemm* g, struct tccd_rt_gemm_state* s) {
  TCCD_RT_CHECK(g_lt.desc_create(&s->desc, g->compute, kScaleTypeF32), "cublasLtMatmulDescCreate");
  const int32_t trans_a = g->trans_a, trans_b = g->trans_b;
  const uint32_t epilogue = (uint32_t)g->epilogue;
  TCCD_RT_CHECK(g_lt.desc_set(s->desc, kDescTransA, &trans_a, sizeof(trans_a)),
                "cublasLtMatmulDescSetAttribute(TRANSA)");
  TCCD_RT_CHECK(g_lt.desc_set(s->desc, kDescTransB, &trans_b, sizeof(trans_b)),
                "cublasLtMatmulDescSetAttribute(TRANSB)");
  TCCD_RT_CHECK(g_lt.desc_set(s->desc, kDescEpilogue, &epilogue, sizeof(epilogue)),
                "cublasLtMatmulDescSetAttribute(EPILOGUE)");
  int code = make_layout(g, &s->layout_a, g->trans_a ? g->k : g->m, g->trans_a ? g->m : g->k,
                         g->lda, g->stride_a);
  if (code == TCCD_RT_SUCCESS)
    code = make_layout(g, &s->layout_b, g->trans_b ? g->n : g->k, g->trans_b ? g->k : g->n, g->ldb,
                       g->stride_b);
  if (code == TCCD_RT_SUCCESS) code = make_layout(g, &s->layout_d, g->m, g->n, g->ldd, g->stride_d);
  if (code != TCCD_RT_SUCCESS) return code;

  void* pref = NULL;
  TCCD_RT_CHECK(g_lt.pref_create(&pref), "cublasLtMatmulPreferenceCreate");
  const uint64_t max_workspace = TCCD_RT_GEMM_MAX_WORKSPACE;
  tccd_lt_status status =
      g_lt.pref_set(pref, kPrefMaxWorkspace, &max_workspace, sizeof(max_workspace));
  heuristic_result result;
  memset(&result, 0, sizeof(result));
  int returned = 0;
  if (status == 0) {
    status = g_lt.heuristic(g_handle, s->desc, s->layout_a, s->layout_b, s->layout_d, s->layout_d,
                            pref, 1, &result, &returned);
  }
  (void)g_lt.pref_destroy(pref); /* deliberately ignored: only frees host memory */
  if (status != 0) return lt_error(status, "cublasLtMatmulAlgoGetHeuristic", g->name);
  if (returned < 1 || result.state != 0) {
    return tccd_rt_set_error(
        TCCD_RT_ERROR_CUBLAS,
        "tccd: cuBLASLt has no algorithm for %s (m=%lld n=%lld k=%lld batch=%lld)", g->name,
        (long long)g->m, (long long)g->n, (long long)g->k, (long long)g->batch);
  }
  memcpy(s->algo, result.algo, sizeof(s->algo));
  s->workspace_size = result.workspace_size;
  return TCCD_RT_SUCCESS;
}

int tccd_rt_gemm_load_context(const struct tccd_rt_module* module, int slot) {
  if (module->num_gemms == 0) return TCCD_RT_SUCCESS;
  const int code = load_cublaslt_locked();
  if (code != TCCD_RT_SUCCESS) return code;
  for (int32_t i = 0; i < module->num_gemms; ++i) {
    /* On failure the half-made objects leak: a few hundred bytes, once, on a failing path. */
    const int result =
        load_gemm(&module->gemms[i], &module->gemm_states[(size_t)slot * module->num_gemms + i]);
    if (result != TCCD_RT_SUCCESS) return result;
  }
  return TCCD_RT_SUCCESS;
}

int tccd_rt_gemm_run(const struct tccd_rt_module* module, int slot, int32_t index,
                     void* const* operands, void* workspace, uint64_t workspace_bytes,
                     void* stream) {
  const struct tccd_rt_gemm* g = &module->gemms[index];
  const struct tccd_rt_gemm_state* s =
      &module->gemm_states[(size_t)slot * module->num_gemms + index];
  if (s->workspace_size > workspace_bytes) {
    return tccd_rt_set_error(
        TCCD_RT_ERROR_INVALID_VALUE,
        "tccd: %s needs %llu bytes of cuBLASLt workspace, the segment has %llu", g->name,
        (unsigned long long)s->workspace_size, (unsigned long long)workspace_bytes);
  }
  if (g->epilogue == 4 || g->epilogue == 6) {
    /* The bias pointer is a descriptor attribute: the descriptor belongs to this gemm and
     * context, and setting it is a host-side store, so this stays capture-safe; concurrent calls
     * of one segment from several threads on one device would race here (PyTorch runs one graph
     * per thread per device at a time; documented in cuda_host.h). */
    void* bias = operands[3];
    TCCD_RT_CHECK(g_lt.desc_set(s->desc, kDescBiasPointer, &bias, sizeof(bias)),
                  "cublasLtMatmulDescSetAttribute(BIAS_POINTER)");
  }
  const float alpha = g->alpha, beta = 0.0f;
  TCCD_RT_CHECK(
      g_lt.matmul(g_handle, s->desc, &alpha, operands[0], s->layout_a, operands[1], s->layout_b,
                  &beta, operands[2], s->layout_d, operands[2], s->layout_d, s->algo,
                  s->workspace_size > 0 ? workspace : NULL, s->workspace_size, stream),
      "cublasLtMatmul");
  return TCCD_RT_SUCCESS;
}
