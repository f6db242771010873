/* cuBLASLt matmuls for kernels_cuda.so (the gemm steps of segments; tccd_cuda_runtime.h).
 *
 * cuBLASLt is dlopen'ed like the driver: RTLD_NOLOAD first, because PyTorch has loaded its own
 * copy (libtorch_cuda links it), so the artifact uses exactly the library PyTorch uses; then a
 * normal load. Types and constants are declared by hand from cublasLt.h (no CUDA header at
 * build time); tests/codegen/cuda_host checks them against the toolkit's header.
 *
 * Per context, at load time (never during capture): one matmul descriptor, three layouts and
 * the heuristic's best algorithm per gemm, or, for a gemm with tune > 1, the fastest of the
 * heuristic's first `tune` candidates, timed on scratch operands (tccd_cuda_tune.h) unless a
 * table of earlier choices has it. A launch is then one cublasLtMatmul on the caller's
 * stream: no allocation (cuBLASLt's scratch is part of the segment workspace), no sync.
 *
 * Gemms with run-time sizes (m == TCCD_RT_GEMM_SIZED: the matmuls of symbolic plans) cannot be
 * made at load time: their objects are made at the first call with each distinct set of sizes
 * and kept in a small set-associative cache (g_sized: TCCD_RT_SIZED_WAYS sizes per set, sets
 * picked by a hash of gemm, context and sizes; the least recently used entry of a full set is
 * destroyed). A training loop over a few sequence lengths then pays the heuristic once per
 * length and gemm; a hit is a hash, a compare and the matmul. The cache is guarded by one mutex
 * held through the matmul call (its bias pointer is a descriptor attribute, and an entry may be
 * evicted by another thread), which costs an uncontended lock per call. Its counters (calls,
 * hits, misses and why, heuristic queries, the wall time of the misses' set-up and of the
 * matmul calls: tccd_rt_gemm_sized_stats) say where a sized call's host time goes.
 */
#include <pthread.h>
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "tccd_cuda_internal.h"
#include "tccd_cuda_tune.h"

struct cublaslt {
  tccd_lt_status (*create)(tccd_lt_handle*);
  const char* (*status_string)(tccd_lt_status);
  tccd_lt_status (*desc_create)(void** desc, int compute, int scale_type);
  tccd_lt_status (*desc_destroy)(void* desc);
  tccd_lt_status (*layout_destroy)(void* layout);
  tccd_lt_status (*desc_set)(void* desc, int attr, const void* buf, size_t size);
  tccd_lt_status (*layout_create)(void** layout, int type, uint64_t rows, uint64_t cols,
                                  int64_t ld);
  tccd_lt_status (*layout_set)(void* layout, int attr, const void* buf, size_t size);
  tccd_lt_status (*pref_create)(void** pref);
  tccd_lt_status (*pref_set)(void* pref, int attr, const void* buf, size_t size);
  tccd_lt_status (*pref_destroy)(void* pref);
  tccd_lt_status (*heuristic)(tccd_lt_handle, void* desc, void* a, void* b, void* c, void* d,
                              void* pref, int requested, heuristic_result* results, int* returned);
  tccd_lt_status (*algo_check)(tccd_lt_handle, void* desc, void* a, void* b, void* c, void* d,
                               const void* algo, heuristic_result* result);
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

/* The sized gemms' cache and counters (below), guarded by one mutex. */
static pthread_mutex_t g_sized_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_sized_stats[TCCD_RT_GEMM_STATS]; /* g_sized_mu */

/* The most scratch a gemm with run-time sizes may ask for (the plan runtimes pass
 * TCCD_GEMM_WORKSPACE_BYTES); a static gemm's is in its tune word (tccd_rt_tune_workspace_bytes:
 * what its segment reserves, codegen::kGemmWorkspaceBytes). */
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
  TCCD_RT_RESOLVE(desc_destroy, "cublasLtMatmulDescDestroy");
  TCCD_RT_RESOLVE(layout_destroy, "cublasLtMatrixLayoutDestroy");
  TCCD_RT_RESOLVE(layout_create, "cublasLtMatrixLayoutCreate");
  TCCD_RT_RESOLVE(layout_set, "cublasLtMatrixLayoutSetAttribute");
  TCCD_RT_RESOLVE(pref_create, "cublasLtMatmulPreferenceCreate");
  TCCD_RT_RESOLVE(pref_set, "cublasLtMatmulPreferenceSetAttribute");
  TCCD_RT_RESOLVE(pref_destroy, "cublasLtMatmulPreferenceDestroy");
  TCCD_RT_RESOLVE(heuristic, "cublasLtMatmulAlgoGetHeuristic");
  TCCD_RT_RESOLVE(algo_check, "cublasLtMatmulAlgoCheck");
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

/* ---- Autotuning (tccd_cuda_tune.h) ------------------------------------------------------- */

/* Bytes of a matrix of `cols` columns with leading dimension `ld`, `batch` times `stride`
 * elements apart (column-major, as cuBLASLt reads it). */
static uint64_t matrix_bytes(const struct tccd_rt_gemm* g, int64_t cols, int64_t ld,
                             int64_t stride) {
  const uint64_t element = g->dtype == 0 ? 4 : 2;
  uint64_t elements = (uint64_t)ld * (uint64_t)cols;
  if (g->batch > 1) elements += (uint64_t)stride * (uint64_t)(g->batch - 1);
  return elements * element;
}

static uint64_t round_up_256(uint64_t bytes) { return (bytes + 255u) & ~(uint64_t)255u; }

/* Times `n` candidate algorithms of gemm `g` (objects `s`, made for them) on scratch operands
 * and returns the index to use (tccd_rt_tune_pick). Never fails: anything that goes wrong
 * (no memory, a driver without a function, a candidate cuBLASLt refuses) leaves the heuristic's
 * first, index 0, or drops that candidate. Runs on a private stream in relaxed capture mode,
 * so that a CUDA graph capture on this or another thread neither sees nor forbids it. */
static int tune_gemm(const struct tccd_rt_gemm* g, struct tccd_rt_gemm_state* s,
                     const heuristic_result* candidates, int n, float* best_ms, float* first_ms) {
  *best_ms = -1.0f;
  if (first_ms != NULL) *first_ms = 0.0f;
  const struct tccd_rt_tune_driver* t = tccd_rt_get_tune_driver();
  if (t == NULL || n < 1) return 0;
  const int has_bias = g->epilogue == 4 || g->epilogue == 6;
  const uint64_t a_bytes =
      round_up_256(matrix_bytes(g, g->trans_a ? g->m : g->k, g->lda, g->stride_a));
  const uint64_t b_bytes =
      round_up_256(matrix_bytes(g, g->trans_b ? g->k : g->n, g->ldb, g->stride_b));
  const uint64_t d_bytes = round_up_256(matrix_bytes(g, g->n, g->ldd, g->stride_d));
  const uint64_t bias_bytes = has_bias ? round_up_256((uint64_t)g->m * 4u) : 0;
  uint64_t workspace_bytes = 0;
  for (int i = 0; i < n; ++i)
    if (candidates[i].workspace_size > workspace_bytes)
      workspace_bytes = candidates[i].workspace_size;
  workspace_bytes = round_up_256(workspace_bytes);
  const uint64_t total = a_bytes + b_bytes + d_bytes + bias_bytes + workspace_bytes;
  if (total > TCCD_RT_TUNE_MAX_BYTES) return 0;

  int mode = kCuCaptureModeRelaxed;
  if (t->cuThreadExchangeStreamCaptureMode(&mode) != 0) return 0;
  uint64_t base = 0;
  void* stream = NULL;
  void* events[2 * TCCD_RT_TUNE_MAX_CANDIDATES];
  memset(events, 0, sizeof(events));
  float best[TCCD_RT_TUNE_MAX_CANDIDATES];
  int pick = 0;
  int ok = t->cuMemAlloc(&base, (size_t)total) == 0;
  ok = ok && t->cuStreamCreate(&stream, kCuStreamNonBlocking) == 0;
  for (int i = 0; ok && i < 2 * n; ++i) ok = t->cuEventCreate(&events[i], 0) == 0;
  const uint64_t a = base, b = a + a_bytes, d = b + b_bytes, bias = d + d_bytes,
                 workspace = bias + bias_bytes;
  /* The swapped formulation reads B's matrix as its A and A's as its B. */
  const uint64_t first = s->swapped ? b : a, second = s->swapped ? a : b;
  const uint32_t fill = tccd_rt_tune_fill_word(g->dtype);
  ok = ok && t->cuMemsetD32Async(a, fill, (size_t)((a_bytes + b_bytes) / 4u), stream) == 0;
  ok = ok && (!has_bias || t->cuMemsetD32Async(bias, 0, (size_t)(bias_bytes / 4u), stream) == 0);
  if (ok && has_bias) {
    void* bias_pointer = (void*)(uintptr_t)bias;
    ok = g_lt.desc_set(s->desc, kDescBiasPointer, &bias_pointer, sizeof(bias_pointer)) == 0;
  }
  const float alpha = g->alpha, beta = 0.0f;
  /* One run of candidate i; a failure drops the candidate (best[i] = -1). */
#define TCCD_RT_TUNE_RUN(i)                                                                     \
  (g_lt.matmul(g_handle, s->desc, &alpha, (const void*)(uintptr_t)first, s->layout_a,           \
               (const void*)(uintptr_t)second, s->layout_b, &beta, (const void*)(uintptr_t)d,   \
               s->layout_d, (void*)(uintptr_t)d, s->layout_d, candidates[i].algo,               \
               candidates[i].workspace_size > 0 ? (void*)(uintptr_t)workspace : NULL,           \
               candidates[i].workspace_size, stream) == 0)
  for (int i = 0; i < n; ++i) best[i] = ok ? 0.0f : -1.0f;
  for (int i = 0; ok && i < n; ++i) /* the warm-up: first runs load code, fill caches */
    if (!TCCD_RT_TUNE_RUN(i)) best[i] = -1.0f;
  /* Each candidate's launches per run: one run captured into a graph (relaxed mode: nobody
   * else's calls are affected), its nodes counted (kernels and memsets). 0: not counted. */
  int32_t launches[TCCD_RT_TUNE_MAX_CANDIDATES];
  memset(launches, 0, sizeof(launches));
  const int can_count = t->cuStreamBeginCapture != NULL && t->cuStreamEndCapture != NULL &&
                        t->cuGraphGetNodes != NULL && t->cuGraphDestroy != NULL;
  for (int i = 0; ok && can_count && i < n; ++i) {
    if (best[i] < 0.0f) continue;
    if (t->cuStreamBeginCapture(stream, kCuCaptureModeRelaxed) != 0) break;
    const int ran = TCCD_RT_TUNE_RUN(i);
    void* graph = NULL;
    const int ended = t->cuStreamEndCapture(stream, &graph) == 0;
    size_t nodes = 0;
    if (ran && ended && graph != NULL && t->cuGraphGetNodes(graph, NULL, &nodes) == 0)
      launches[i] = (int32_t)nodes;
    if (graph != NULL) (void)t->cuGraphDestroy(graph); /* deliberately ignored: host memory */
    if (!ended) break; /* the stream's capture could not be ended: stop counting */
  }
  int rounds = 1;
  int dropped[TCCD_RT_TUNE_MAX_CANDIDATES]; /* not timed after the first round */
  memset(dropped, 0, sizeof(dropped));
  for (int round = 0; ok && round < rounds; ++round) {
    for (int i = 0; ok && i < n; ++i) {
      if (best[i] < 0.0f || dropped[i]) continue;
      ok = t->cuEventRecord(events[2 * i], stream) == 0;
      if (ok && !TCCD_RT_TUNE_RUN(i)) best[i] = -1.0f;
      ok = ok && t->cuEventRecord(events[2 * i + 1], stream) == 0;
    }
    ok = ok && t->cuStreamSynchronize(stream) == 0;
    float fastest = 0.0f;
    for (int i = 0; ok && i < n; ++i) {
      if (best[i] < 0.0f || dropped[i]) continue;
      float ms = 0.0f;
      if (t->cuEventElapsedTime(&ms, events[2 * i], events[2 * i + 1]) != 0 || !(ms > 0.0f)) {
        best[i] = -1.0f;
        continue;
      }
      if (best[i] == 0.0f || ms < best[i]) best[i] = ms;
      if (fastest == 0.0f || ms < fastest) fastest = ms;
    }
    if (round == 0 && ok) {
      /* Candidates far behind the fastest cannot win: only the others run again, as many
       * rounds as their time fits. */
      float round_ms = 0.0f;
      for (int i = 0; i < n; ++i) {
        if (best[i] < 0.0f) continue;
        dropped[i] = !tccd_rt_tune_keep(best[i], fastest);
        if (!dropped[i]) round_ms += best[i];
      }
      rounds = tccd_rt_tune_rounds(round_ms);
    }
  }
#undef TCCD_RT_TUNE_RUN
  if (ok) {
    pick = tccd_rt_tune_pick_launches(best, launches, n, TCCD_RT_TUNE_MARGIN);
    /* Charged like the choice (the swapped formulation is compared on the same terms). */
    const int32_t extra = launches[pick] > 1 ? launches[pick] - 1 : 0;
    *best_ms = best[pick] > 0.0f ? best[pick] + (float)extra * TCCD_RT_TUNE_LAUNCH_MS : -1.0f;
    const int32_t first_extra = launches[0] > 1 ? launches[0] - 1 : 0;
    if (first_ms != NULL && best[0] > 0.0f)
      *first_ms = best[0] + (float)first_extra * TCCD_RT_TUNE_LAUNCH_MS;
  }
  /* Cleanup; failures deliberately ignored (nothing to do about them, and the choice stands).
   * The stream is synchronised first: its work reads the scratch being freed. */
  if (stream != NULL) (void)t->cuStreamSynchronize(stream);
  for (int i = 0; i < 2 * n; ++i)
    if (events[i] != NULL) (void)t->cuEventDestroy(events[i]);
  if (stream != NULL) (void)t->cuStreamDestroy(stream);
  if (base != 0) (void)t->cuMemFree(base);
  (void)t->cuThreadExchangeStreamCaptureMode(&mode);
  return pick;
}

/* The table of autotuning's choices (tccd_cuda_tune.h): this library's own until the client
 * hands it the process's table of the device (tccd_rt_gemm_set_tune_table). Both pointers are
 * guarded by the runtime's mutex (every caller holds it); the entries by the table's lock. */
static struct tccd_rt_tune_table g_local_table;
static struct tccd_rt_tune_table* g_table;

void tccd_rt_gemm_set_tune_table(struct tccd_rt_tune_table* table) { g_table = table; }

static struct tccd_rt_tune_table* tune_table(void) {
  if (g_table == NULL) {
    g_local_table.magic = TCCD_RT_TUNE_TABLE_MAGIC;
    g_local_table.entry_bytes = sizeof(struct tccd_rt_tune_entry);
    g_local_table.slots = TCCD_RT_TUNE_TABLE_SLOTS;
    g_table = &g_local_table;
  }
  return g_table;
}

/* The key of gemm `g` on `device`: everything that makes its descriptor and layouts (the name
 * is no part of it), the number of candidates, the device ordinal last. */
static void tune_key(const struct tccd_rt_gemm* g, int32_t device,
                     uint64_t key[TCCD_RT_TUNE_KEY_WORDS]) {
  const int64_t dims[10] = {g->m,   g->n,     g->k,        g->lda,      g->ldb,
                            g->ldd, g->batch, g->stride_a, g->stride_b, g->stride_d};
  for (int i = 0; i < 10; ++i) key[i] = (uint64_t)dims[i];
  key[10] = (uint64_t)(uint32_t)g->trans_a | (uint64_t)(uint32_t)g->trans_b << 8 |
            (uint64_t)(uint32_t)g->epilogue << 16 | (uint64_t)(uint32_t)g->dtype << 32;
  key[11] = (uint64_t)(uint32_t)g->compute | (uint64_t)(uint32_t)g->tune << 32;
  uint32_t alpha_bits;
  memcpy(&alpha_bits, &g->alpha, sizeof(alpha_bits));
  key[12] = alpha_bits;
  key[13] = (uint64_t)(uint32_t)device;
}

/* The table's choice for `key`, under the table's lock: its used word (0: none yet) and, when
 * chosen, its algorithm into `algo`. */
static uint64_t tune_lookup(const uint64_t key[TCCD_RT_TUNE_KEY_WORDS], uint64_t algo[8]) {
  struct tccd_rt_tune_table* table = tune_table();
  uint64_t used = 0;
  tccd_rt_tune_lock(table);
  const struct tccd_rt_tune_entry* e = tccd_rt_tune_find(table, key);
  if (e != NULL && e->used) {
    memcpy(algo, e->algo, 8 * sizeof(uint64_t));
    used = e->used;
  }
  tccd_rt_tune_unlock(table);
  return used;
}

/* Whether `algo` (from a table: maybe chosen by another library or process) runs gemm `s`
 * within `max_workspace`; its workspace into *workspace. */
static int algo_fits(struct tccd_rt_gemm_state* s, const uint64_t* algo, uint64_t max_workspace,
                     uint64_t* workspace) {
  heuristic_result result;
  memset(&result, 0, sizeof(result));
  if (g_lt.algo_check(g_handle, s->desc, s->layout_a, s->layout_b, s->layout_d, s->layout_d, algo,
                      &result) != 0)
    return 0;
  *workspace = result.workspace_size;
  return result.workspace_size <= max_workspace;
}

static void destroy_state(struct tccd_rt_gemm_state* s);

/* The descriptor and layouts of `g` into `s`: as given, or (`swapped`, a gemm without an
 * epilogue) as D^T = op(B)^T op(A)^T with D^T row-ordered, which writes the same memory: the
 * second operand's matrix becomes the first (transposition flipped) and the other way round,
 * and D's column-major m x n is D^T's row-major n x m with the same leading dimension.
 * cuBLAS's own matmuls take that form where it is faster (its kernels whose names end in
 * "T", e.g. nvjet_..._NTT for weight gradients); cuBLASLt's heuristic only ranks the form it
 * is given. */
static int make_objects(const struct tccd_rt_gemm* g, struct tccd_rt_gemm_state* s, int swapped) {
  const int32_t trans_a = swapped ? !g->trans_b : g->trans_a;
  const int32_t trans_b = swapped ? !g->trans_a : g->trans_b;
  const uint32_t epilogue = (uint32_t)g->epilogue;
  s->swapped = swapped;
  TCCD_RT_CHECK(g_lt.desc_create(&s->desc, g->compute, kScaleTypeF32), "cublasLtMatmulDescCreate");
  TCCD_RT_CHECK(g_lt.desc_set(s->desc, kDescTransA, &trans_a, sizeof(trans_a)),
                "cublasLtMatmulDescSetAttribute(TRANSA)");
  TCCD_RT_CHECK(g_lt.desc_set(s->desc, kDescTransB, &trans_b, sizeof(trans_b)),
                "cublasLtMatmulDescSetAttribute(TRANSB)");
  TCCD_RT_CHECK(g_lt.desc_set(s->desc, kDescEpilogue, &epilogue, sizeof(epilogue)),
                "cublasLtMatmulDescSetAttribute(EPILOGUE)");
  /* Each stored matrix keeps its layout, whichever operand it is. */
  const int64_t a_rows = g->trans_a ? g->k : g->m, a_cols = g->trans_a ? g->m : g->k;
  const int64_t b_rows = g->trans_b ? g->n : g->k, b_cols = g->trans_b ? g->k : g->n;
  int code;
  if (!swapped) {
    code = make_layout(g, &s->layout_a, a_rows, a_cols, g->lda, g->stride_a);
    if (code == TCCD_RT_SUCCESS)
      code = make_layout(g, &s->layout_b, b_rows, b_cols, g->ldb, g->stride_b);
    if (code == TCCD_RT_SUCCESS)
      code = make_layout(g, &s->layout_d, g->m, g->n, g->ldd, g->stride_d);
    return code;
  }
  code = make_layout(g, &s->layout_a, b_rows, b_cols, g->ldb, g->stride_b);
  if (code == TCCD_RT_SUCCESS)
    code = make_layout(g, &s->layout_b, a_rows, a_cols, g->lda, g->stride_a);
  if (code == TCCD_RT_SUCCESS) code = make_layout(g, &s->layout_d, g->n, g->m, g->ldd, g->stride_d);
  if (code != TCCD_RT_SUCCESS) return code;
  const int32_t order = kOrderRow;
  TCCD_RT_CHECK(g_lt.layout_set(s->layout_d, kLayoutOrder, &order, sizeof(order)),
                "cublasLtMatrixLayoutSetAttribute(ORDER)");
  return TCCD_RT_SUCCESS;
}

/* The heuristic's usable candidates for the objects in `s` (at most `requested`, in its order)
 * into results[0 .. *n). An error when it has none. */
static int query(const struct tccd_rt_gemm* g, struct tccd_rt_gemm_state* s,
                 uint64_t max_workspace, const uint32_t* alignment, int requested,
                 heuristic_result* results, int* n) {
  void* pref = NULL;
  TCCD_RT_CHECK(g_lt.pref_create(&pref), "cublasLtMatmulPreferenceCreate");
  tccd_lt_status status =
      g_lt.pref_set(pref, kPrefMaxWorkspace, &max_workspace, sizeof(max_workspace));
  for (int i = 0; i < 4 && alignment != NULL && status == 0; ++i)
    status = g_lt.pref_set(pref, kPrefMinAlignmentA + i, &alignment[i], sizeof(alignment[i]));
  memset(results, 0, sizeof(heuristic_result) * (size_t)requested);
  int returned = 0;
  if (status == 0) {
    /* Only sized gemms pass an alignment; they hold g_sized_mu. */
    if (alignment != NULL) ++g_sized_stats[TCCD_RT_GEMM_STAT_HEURISTICS];
    status = g_lt.heuristic(g_handle, s->desc, s->layout_a, s->layout_b, s->layout_d, s->layout_d,
                            pref, requested, results, &returned);
  }
  (void)g_lt.pref_destroy(pref); /* deliberately ignored: only frees host memory */
  if (status != 0) return lt_error(status, "cublasLtMatmulAlgoGetHeuristic", g->name);
  if (returned < 1 || results[0].state != 0) {
    return tccd_rt_set_error(
        TCCD_RT_ERROR_CUBLAS,
        "tccd: cuBLASLt has no algorithm for %s (m=%lld n=%lld k=%lld batch=%lld)", g->name,
        (long long)g->m, (long long)g->n, (long long)g->k, (long long)g->batch);
  }
  /* The usable candidates, in the heuristic's order (a result with a failed state is not one). */
  *n = 0;
  for (int i = 0; i < returned && i < requested; ++i)
    if (results[i].state == 0) results[(*n)++] = results[i];
  return TCCD_RT_SUCCESS;
}

/* `alignment`: NULL (static gemms: the heuristic's default assumption), or the byte alignment
 * of A, B, C and D's pointers (sized gemms: what this call's pointers have, as PyTorch tells
 * cuBLASLt, so that no algorithm assumes more). `tune`: whether to time g->tune's candidates
 * (static gemms at load, outside the launch path) or take the heuristic's first. */
static int load_gemm(const struct tccd_rt_gemm* g, struct tccd_rt_gemm_state* s,
                     uint64_t max_workspace, const uint32_t* alignment, int tune) {
  const int candidates = TCCD_RT_TUNE_CANDIDATES(g->tune);
  int requested = 1;
  uint64_t key[TCCD_RT_TUNE_KEY_WORDS];
  int keyed = 0, stale = 0;
  int32_t device = -1;
  if (tune && candidates > 1 && alignment == NULL) {
    const struct tccd_rt_tune_driver* t = tccd_rt_get_tune_driver();
    if (t != NULL && t->cuCtxGetDevice(&device) == 0) {
      requested = candidates < TCCD_RT_TUNE_MAX_CANDIDATES ? candidates : TCCD_RT_TUNE_MAX_CANDIDATES;
      tune_key(g, device, key);
      keyed = 1;
      uint64_t algo[8];
      const uint64_t used = tune_lookup(key, algo);
      if (used != 0) {
        const int swapped = (used & TCCD_RT_TUNE_USED_SWAPPED) != 0 && g->epilogue == 1;
        const int code = make_objects(g, s, swapped);
        uint64_t workspace = 0;
        if (code == TCCD_RT_SUCCESS && algo_fits(s, algo, max_workspace, &workspace)) {
          memcpy(s->algo, algo, sizeof(s->algo));
          s->workspace_size = workspace;
          s->device = device;
          return TCCD_RT_SUCCESS;
        }
        /* Not valid here (another cuBLASLt's choice): chosen again below, and the stale entry
         * replaced. */
        destroy_state(s);
        stale = 1;
      }
    }
  }

  heuristic_result results[TCCD_RT_TUNE_MAX_CANDIDATES];
  int n = 0;
  int code = make_objects(g, s, 0);
  if (code == TCCD_RT_SUCCESS) code = query(g, s, max_workspace, alignment, requested, results, &n);
  if (code != TCCD_RT_SUCCESS) return code;
  float best_ms = -1.0f, first_ms = 0.0f;
  const int swap = requested > 1 && (g->tune & TCCD_RT_TUNE_SWAP) && g->epilogue == 1;
  const int pick = n > 1 || swap ? tune_gemm(g, s, results, n, &best_ms, &first_ms) : 0;
  memcpy(s->algo, results[pick].algo, sizeof(s->algo));
  s->workspace_size = results[pick].workspace_size;

  /* The swapped formulation, timed the same way; it replaces the given one only when clearly
   * faster. Anything failing in it leaves the given one. */
  if (swap && best_ms > 0.0f) {
    struct tccd_rt_gemm_state alt;
    memset(&alt, 0, sizeof(alt));
    heuristic_result alt_results[TCCD_RT_TUNE_MAX_CANDIDATES];
    int alt_n = 0;
    float alt_ms = -1.0f;
    int alt_pick = 0;
    if (make_objects(g, &alt, 1) == TCCD_RT_SUCCESS &&
        query(g, &alt, max_workspace, NULL, requested, alt_results, &alt_n) == TCCD_RT_SUCCESS)
      alt_pick = tune_gemm(g, &alt, alt_results, alt_n, &alt_ms, NULL);
    if (alt_ms > 0.0f && alt_ms <= TCCD_RT_TUNE_MARGIN * best_ms) {
      destroy_state(s);
      *s = alt;
      best_ms = alt_ms;
      memcpy(s->algo, alt_results[alt_pick].algo, sizeof(s->algo));
      s->workspace_size = alt_results[alt_pick].workspace_size;
    } else {
      destroy_state(&alt);
    }
  }

  if (keyed) {
    struct tccd_rt_tune_table* table = tune_table();
    tccd_rt_tune_lock(table);
    struct tccd_rt_tune_entry* e = tccd_rt_tune_find(table, key);
    /* NULL: the table is full, the choice not remembered. Filled meanwhile by another thread
     * or library: theirs stays, unless it is the stale one this load rejected. */
    if (e != NULL && (!e->used || stale)) {
      if (!e->used) ++table->filled;
      memcpy(e->key, key, sizeof(e->key));
      memcpy(e->algo, s->algo, sizeof(e->algo));
      e->workspace_size = s->workspace_size;
      e->used = 1u | (s->swapped ? TCCD_RT_TUNE_USED_SWAPPED : 0u);
      e->chosen_ms = best_ms > 0.0f ? best_ms : 0.0f;
      e->first_ms = first_ms;
    }
    tccd_rt_tune_unlock(table);
    s->device = device;
  }
  return TCCD_RT_SUCCESS;
}

/* Whether the 8-word algorithms are the same (no memcmp: the libc allow-list). */
static int same_algo(const uint64_t* a, const uint64_t* b) {
  for (int i = 0; i < 8; ++i)
    if (a[i] != b[i]) return 0;
  return 1;
}

void tccd_rt_gemm_apply_table(const struct tccd_rt_module* module) {
  if (!g_lt_ready || module->num_gemms == 0) return;
  for (int slot = 0; slot < TCCD_RT_MAX_CONTEXTS; ++slot) {
    if (__atomic_load_n(&module->contexts[slot].ctx, __ATOMIC_ACQUIRE) == NULL) continue;
    for (int32_t i = 0; i < module->num_gemms; ++i) {
      const struct tccd_rt_gemm* g = &module->gemms[i];
      if (g->m == TCCD_RT_GEMM_SIZED || TCCD_RT_TUNE_CANDIDATES(g->tune) <= 1) continue;
      struct tccd_rt_gemm_state* s = &module->gemm_states[(size_t)slot * module->num_gemms + i];
      uint64_t key[TCCD_RT_TUNE_KEY_WORDS];
      tune_key(g, s->device, key);
      uint64_t algo[8];
      const uint64_t used = tune_lookup(key, algo);
      if (used == 0) continue;
      const int swapped = (used & TCCD_RT_TUNE_USED_SWAPPED) != 0 && g->epilogue == 1;
      if (swapped == s->swapped && same_algo(algo, s->algo)) continue;
      /* Another process's choice: made anew; one that does not fit here leaves this one. */
      struct tccd_rt_gemm_state fresh;
      memset(&fresh, 0, sizeof(fresh));
      uint64_t workspace = 0;
      if (make_objects(g, &fresh, swapped) == TCCD_RT_SUCCESS &&
          algo_fits(&fresh, algo, tccd_rt_tune_workspace_bytes(g->tune), &workspace)) {
        const int32_t device = s->device;
        destroy_state(s);
        *s = fresh;
        memcpy(s->algo, algo, sizeof(s->algo));
        s->workspace_size = workspace;
        s->device = device;
      } else {
        destroy_state(&fresh);
      }
    }
  }
}

int tccd_rt_gemm_load_context(const struct tccd_rt_module* module, int slot) {
  if (module->num_gemms == 0) return TCCD_RT_SUCCESS;
  const int code = load_cublaslt_locked();
  if (code != TCCD_RT_SUCCESS) return code;
  for (int32_t i = 0; i < module->num_gemms; ++i) {
    if (module->gemms[i].m == TCCD_RT_GEMM_SIZED) continue; /* made per call's sizes */
    /* On failure the half-made objects leak: a few hundred bytes, once, on a failing path. */
    const int result =
        load_gemm(&module->gemms[i], &module->gemm_states[(size_t)slot * module->num_gemms + i],
                  tccd_rt_tune_workspace_bytes(module->gemms[i].tune), NULL, 1);
    if (result != TCCD_RT_SUCCESS) return result;
  }
  return TCCD_RT_SUCCESS;
}

/* One cublasLtMatmul of gemm `g` with the objects `s`. operands: A, B, D[, bias]. */
static int run_gemm(const struct tccd_rt_gemm* g, const struct tccd_rt_gemm_state* s,
                    void* const* operands, void* workspace, uint64_t workspace_bytes,
                    void* stream) {
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
  /* The swapped formulation (make_objects) takes B's matrix first. */
  const void* first = operands[s->swapped ? 1 : 0];
  const void* second = operands[s->swapped ? 0 : 1];
  TCCD_RT_CHECK(
      g_lt.matmul(g_handle, s->desc, &alpha, first, s->layout_a, second, s->layout_b,
                  &beta, operands[2], s->layout_d, operands[2], s->layout_d, s->algo,
                  s->workspace_size > 0 ? workspace : NULL, s->workspace_size, stream),
      "cublasLtMatmul");
  return TCCD_RT_SUCCESS;
}

int tccd_rt_gemm_run(const struct tccd_rt_module* module, int slot, int32_t index,
                     void* const* operands, void* workspace, uint64_t workspace_bytes,
                     void* stream) {
  return run_gemm(&module->gemms[index],
                  &module->gemm_states[(size_t)slot * module->num_gemms + index], operands,
                  workspace, workspace_bytes, stream);
}

/* ---- Gemms with run-time sizes ------------------------------------------------------------ */

#define TCCD_RT_SIZED_SETS 64
#define TCCD_RT_SIZED_WAYS 8

struct sized_entry {
  const struct tccd_rt_module* module; /* NULL: a free way */
  int32_t slot, index;
  int64_t dims[TCCD_RT_GEMM_DIMS];
  uint64_t workspace_cap; /* the workspace the algorithm was chosen for */
  uint32_t alignment[4];  /* A, B, C (= D), D pointer alignment it was chosen for */
  uint64_t used;          /* g_sized_clock at the last hit: the set's LRU order */
  struct tccd_rt_gemm_state state;
};

static struct sized_entry g_sized[TCCD_RT_SIZED_SETS][TCCD_RT_SIZED_WAYS]; /* g_sized_mu */
static uint64_t g_sized_clock;                                             /* g_sized_mu */

static uint64_t now_ns(void) {
  struct timespec t;
  if (clock_gettime(CLOCK_MONOTONIC, &t) != 0) return 0;
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int tccd_rt_gemm_sized_stats(uint64_t* out, int n) {
  pthread_mutex_lock(&g_sized_mu);
  for (int i = 0; i < n && i < TCCD_RT_GEMM_STATS; ++i) out[i] = g_sized_stats[i];
  pthread_mutex_unlock(&g_sized_mu);
  return TCCD_RT_GEMM_STATS;
}

static uint64_t sized_hash(int slot, int32_t index, const int64_t* dims) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a over the key's words */
  const int64_t words[2] = {slot, index};
  for (int i = 0; i < 2 + TCCD_RT_GEMM_DIMS; ++i) {
    h ^= (uint64_t)(i < 2 ? words[i] : dims[i - 2]);
    h *= 1099511628211ull;
  }
  return h ^ (h >> 29);
}

/* Whether the entry holds this key. (No memcmp: the .so imports only its libc allow-list,
 * codegen/cuda_host/host_imports.h.) */
static int sized_same_sizes(const struct sized_entry* e, const struct tccd_rt_module* module,
                            int slot, int32_t index, const int64_t* dims) {
  if (e->module != module || e->slot != slot || e->index != index) return 0;
  for (int i = 0; i < TCCD_RT_GEMM_DIMS; ++i)
    if (e->dims[i] != dims[i]) return 0;
  return 1;
}

static int sized_key_equal(const struct sized_entry* e, const struct tccd_rt_module* module,
                           int slot, int32_t index, const int64_t* dims, uint64_t workspace_cap,
                           const uint32_t* alignment) {
  if (!sized_same_sizes(e, module, slot, index, dims) || e->workspace_cap != workspace_cap)
    return 0;
  for (int i = 0; i < 4; ++i)
    if (e->alignment[i] != alignment[i]) return 0;
  return 1;
}

static void destroy_state(struct tccd_rt_gemm_state* s) {
  /* Deliberately ignored: destroying only frees host memory, and a failure leaves nothing to do. */
  if (s->desc != NULL) (void)g_lt.desc_destroy(s->desc);
  if (s->layout_a != NULL) (void)g_lt.layout_destroy(s->layout_a);
  if (s->layout_b != NULL) (void)g_lt.layout_destroy(s->layout_b);
  if (s->layout_d != NULL) (void)g_lt.layout_destroy(s->layout_d);
  memset(s, 0, sizeof(*s));
}

/* The cached objects for (module, slot, index, dims, workspace cap), made on a miss. Caller holds
 * g_sized_mu. */
static int sized_state(const struct tccd_rt_module* module, int slot, int32_t index,
                       const struct tccd_rt_gemm* g, uint64_t workspace_cap,
                       const uint32_t* alignment, struct tccd_rt_gemm_state** out, int* missed) {
  const int64_t dims[TCCD_RT_GEMM_DIMS] = {g->m,   g->n,     g->k,        g->lda,      g->ldb,
                                           g->ldd, g->batch, g->stride_a, g->stride_b, g->stride_d};
  struct sized_entry* set = g_sized[sized_hash(slot, index, dims) % TCCD_RT_SIZED_SETS];
  struct sized_entry* victim = &set[0];
  int churn = 0;
  ++g_sized_clock;
  for (int w = 0; w < TCCD_RT_SIZED_WAYS; ++w) {
    struct sized_entry* e = &set[w];
    if (sized_key_equal(e, module, slot, index, dims, workspace_cap, alignment)) {
      e->used = g_sized_clock;
      ++g_sized_stats[TCCD_RT_GEMM_STAT_HITS];
      *out = &e->state;
      return TCCD_RT_SUCCESS;
    }
    /* The same gemm and sizes under another alignment or workspace: the key's pointer part
     * changed between calls (same set: the hash has neither). */
    churn |= sized_same_sizes(e, module, slot, index, dims);
    if (victim->module != NULL && (e->module == NULL || e->used < victim->used)) victim = e;
  }
  ++g_sized_stats[TCCD_RT_GEMM_STAT_MISSES];
  *missed = 1;
  if (churn) ++g_sized_stats[TCCD_RT_GEMM_STAT_KEY_CHURN];
  const uint64_t start = now_ns();
  if (victim->module != NULL) {
    destroy_state(&victim->state);
    ++g_sized_stats[TCCD_RT_GEMM_STAT_EVICTIONS];
  }
  victim->module = NULL;
  /* Not tuned: a new size would time its candidates on the step's path. */
  const int code = load_gemm(g, &victim->state, workspace_cap, alignment, 0);
  g_sized_stats[TCCD_RT_GEMM_STAT_SETUP_NS] += now_ns() - start;
  if (code != TCCD_RT_SUCCESS) {
    destroy_state(&victim->state);
    return code;
  }
  victim->module = module;
  victim->slot = slot;
  victim->index = index;
  memcpy(victim->dims, dims, sizeof(dims));
  victim->workspace_cap = workspace_cap;
  memcpy(victim->alignment, alignment, sizeof(victim->alignment));
  victim->used = g_sized_clock;
  *out = &victim->state;
  return TCCD_RT_SUCCESS;
}

int tccd_rt_gemm_run_sized(const struct tccd_rt_module* module, int slot, int32_t index,
                           void* const* data, const int64_t* dims, void* workspace,
                           uint64_t workspace_bytes, void* stream) {
  struct tccd_rt_gemm sized = module->gemms[index];
  sized.m = dims[0];
  sized.n = dims[1];
  sized.k = dims[2];
  sized.lda = dims[3];
  sized.ldb = dims[4];
  sized.ldd = dims[5];
  sized.batch = dims[6];
  sized.stride_a = dims[7];
  sized.stride_b = dims[8];
  sized.stride_d = dims[9];
  const struct tccd_rt_gemm* g = &sized;
  for (int i = 0; i < TCCD_RT_GEMM_DIMS; ++i) {
    if (dims[i] < 0) {
      return tccd_rt_set_error(TCCD_RT_ERROR_INVALID_VALUE,
                               "tccd: %s called with a negative size (word %d: %lld)", g->name, i,
                               (long long)dims[i]);
    }
  }
  if (g->m == 0 || g->n == 0 || g->batch == 0) return TCCD_RT_SUCCESS;
  /* cuBLASLt rejects these; a plan only declares them for layouts it proved dense, so one here
   * is a caller's error, reported rather than passed on. k == 0 (an empty sum: D = bias or 0)
   * is not run by cuBLASLt either. */
  const int64_t rows_a = g->trans_a ? g->k : g->m, rows_b = g->trans_b ? g->n : g->k;
  if (g->k == 0 || g->lda < (rows_a > 1 ? rows_a : 1) || g->ldb < (rows_b > 1 ? rows_b : 1) ||
      g->ldd < g->m || g->batch > INT32_MAX) {
    return tccd_rt_set_error(
        TCCD_RT_ERROR_INVALID_VALUE,
        "tccd: %s called with sizes cuBLASLt does not take (m=%lld n=%lld k=%lld lda=%lld "
        "ldb=%lld ldd=%lld batch=%lld)",
        g->name, (long long)g->m, (long long)g->n, (long long)g->k, (long long)g->lda,
        (long long)g->ldb, (long long)g->ldd, (long long)g->batch);
  }
  const int has_bias = g->epilogue == 4 || g->epilogue == 6;
  void* operands[4] = {data[0], data[1], data[has_bias ? 3 : 2], has_bias ? data[2] : NULL};
  const uint64_t cap = workspace == NULL                              ? 0
                       : workspace_bytes < TCCD_RT_GEMM_MAX_WORKSPACE ? workspace_bytes
                                                                      : TCCD_RT_GEMM_MAX_WORKSPACE;
  uint32_t alignment[4];
  for (int i = 0; i < 4; ++i) {
    const uintptr_t p = (uintptr_t)operands[i == 3 ? 2 : i]; /* A, B, C = D, D */
    uint32_t a = 256;                                        /* cuBLASLt's default assumption */
    while (a > 1 && p % a != 0) a /= 2;
    alignment[i] = a;
  }
  pthread_mutex_lock(&g_sized_mu);
  ++g_sized_stats[TCCD_RT_GEMM_STAT_CALLS];
  struct tccd_rt_gemm_state* s = NULL;
  int missed = 0;
  int code = sized_state(module, slot, index, g, cap, alignment, &s, &missed);
  if (code == TCCD_RT_SUCCESS) {
    const uint64_t start = now_ns();
    code = run_gemm(g, s, operands, workspace, cap, stream);
    const uint64_t ns = now_ns() - start;
    g_sized_stats[TCCD_RT_GEMM_STAT_MATMUL_NS] += ns;
    if (missed) g_sized_stats[TCCD_RT_GEMM_STAT_MISS_MATMUL_NS] += ns;
  }
  pthread_mutex_unlock(&g_sized_mu);
  return code;
}
