/* A fake libcublasLt.so.13 for the CUDA host library's tests (fake_cublaslt.h): the entry points
 * tccd_cuda_gemm.c resolves, recording what the runtime asks for instead of computing. Objects
 * are small heap records the getters read back; nothing touches a GPU. */
#include "fake_cublaslt.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_created, g_desc_created, g_desc_destroyed, g_layout_created, g_layout_destroyed,
    g_heuristics, g_matmuls;
static uint64_t g_algo_workspace = 4096; /* what the heuristic says its algorithm needs */
static fake_lt_matmul g_last;
/* The heuristic's algorithms (fake_lt_set_algos): 0xa1, 0xa2, ... in its order, each matmul
 * with algorithm i moving the fake driver's clock by g_algo_ms[i]. One algorithm by default. */
static int g_num_algos = 1;
static double g_algo_ms[16];
static int g_last_requested;
static double g_row_factor = 1.0;
static int g_algo_launches[16]; /* 0: one */
static int g_checks;
static uint64_t g_check_fails; /* the algorithm word the check rejects; 0: none */

typedef struct {
  int32_t trans_a, trans_b;
  uint32_t epilogue;
  const void* bias;
} desc_t;

typedef struct {
  fake_lt_layout l;
} layout_t;

int cublasLtCreate(void** handle) {
  pthread_mutex_lock(&g_mu);
  ++g_created;
  pthread_mutex_unlock(&g_mu);
  *handle = (void*)0x1234;
  return 0;
}

const char* cublasLtGetStatusString(int status) { return status ? "FAKE_FAILURE" : "OK"; }

int cublasLtMatmulDescCreate(void** desc, int compute, int scale_type) {
  (void)compute;
  (void)scale_type;
  *desc = calloc(1, sizeof(desc_t));
  pthread_mutex_lock(&g_mu);
  ++g_desc_created;
  pthread_mutex_unlock(&g_mu);
  return 0;
}

int cublasLtMatmulDescDestroy(void* desc) {
  free(desc);
  pthread_mutex_lock(&g_mu);
  ++g_desc_destroyed;
  pthread_mutex_unlock(&g_mu);
  return 0;
}

int cublasLtMatmulDescSetAttribute(void* desc, int attr, const void* buf, size_t size) {
  desc_t* d = (desc_t*)desc;
  switch (attr) {
    case 3: /* TRANSA */
      memcpy(&d->trans_a, buf, size);
      break;
    case 4: /* TRANSB */
      memcpy(&d->trans_b, buf, size);
      break;
    case 7: /* EPILOGUE */
      memcpy(&d->epilogue, buf, size);
      break;
    case 8: /* BIAS_POINTER */
      memcpy(&d->bias, buf, size);
      break;
    default:
      return 7; /* CUBLAS_STATUS_INVALID_VALUE */
  }
  return 0;
}

int cublasLtMatrixLayoutCreate(void** layout, int type, uint64_t rows, uint64_t cols, int64_t ld) {
  layout_t* l = (layout_t*)calloc(1, sizeof(layout_t));
  l->l.type = type;
  l->l.rows = rows;
  l->l.cols = cols;
  l->l.ld = ld;
  l->l.batch = 1;
  *layout = l;
  pthread_mutex_lock(&g_mu);
  ++g_layout_created;
  pthread_mutex_unlock(&g_mu);
  return 0;
}

int cublasLtMatrixLayoutDestroy(void* layout) {
  free(layout);
  pthread_mutex_lock(&g_mu);
  ++g_layout_destroyed;
  pthread_mutex_unlock(&g_mu);
  return 0;
}

int cublasLtMatrixLayoutSetAttribute(void* layout, int attr, const void* buf, size_t size) {
  layout_t* l = (layout_t*)layout;
  if (attr == 5) { /* BATCH_COUNT, int32 */
    int32_t count;
    memcpy(&count, buf, size);
    l->l.batch = count;
  } else if (attr == 6) { /* STRIDED_BATCH_OFFSET, int64 */
    memcpy(&l->l.batch_stride, buf, size);
  } else if (attr == 1) { /* ORDER, int32 */
    memcpy(&l->l.order, buf, size);
  } else {
    return 7;
  }
  return 0;
}

typedef struct {
  uint64_t max_workspace;
  uint32_t alignment[4]; /* 0: not set (cuBLASLt's default, 256) */
} pref_t;

static uint32_t g_last_alignment[4];

int cublasLtMatmulPreferenceCreate(void** pref) {
  *pref = calloc(1, sizeof(pref_t));
  return 0;
}
int cublasLtMatmulPreferenceSetAttribute(void* pref, int attr, const void* buf, size_t size) {
  if (attr == 1) {
    memcpy(&((pref_t*)pref)->max_workspace, buf, size);
  } else if (attr >= 5 && attr <= 8 && size == sizeof(uint32_t)) { /* MIN_ALIGNMENT_{A,B,C,D} */
    memcpy(&((pref_t*)pref)->alignment[attr - 5], buf, size);
  } else {
    return 7;
  }
  return 0;
}
int cublasLtMatmulPreferenceDestroy(void* pref) {
  free(pref);
  return 0;
}

/* The result struct as tccd_cuda_internal.h declares it (cublasLtMatmulHeuristicResult_t). */
typedef struct {
  uint64_t algo[8];
  size_t workspace_size;
  int state;
  float waves_count;
  int reserved[4];
} heuristic_result;

int cublasLtMatmulAlgoGetHeuristic(void* handle, void* desc, void* a, void* b, void* c, void* d,
                                   void* pref, int requested, heuristic_result* results,
                                   int* returned) {
  (void)handle, (void)desc, (void)a, (void)b, (void)c, (void)d;
  if (requested < 1) return 7;
  memset(results, 0, sizeof(*results));
  pthread_mutex_lock(&g_mu);
  ++g_heuristics;
  memcpy(g_last_alignment, ((pref_t*)pref)->alignment, sizeof(g_last_alignment));
  const uint64_t need = g_algo_workspace;
  const int available = g_num_algos;
  g_last_requested = requested;
  pthread_mutex_unlock(&g_mu);
  const int n = requested < available ? requested : available;
  memset(results, 0, sizeof(*results) * (size_t)n);
  for (int i = 0; i < n; ++i) {
    /* An algorithm within the preference's workspace: the one asked for, or none needing any. */
    results[i].workspace_size = need <= ((pref_t*)pref)->max_workspace ? need : 0;
    results[i].algo[0] = 0xa1 + (uint64_t)i;
  }
  *returned = n;
  return 0;
}

/* Valid unless it is the algorithm fake_lt_set_check_fails named: the workspace the heuristic
 * would say. */
int cublasLtMatmulAlgoCheck(void* handle, void* desc, void* a, void* b, void* c, void* d,
                            const void* algo, heuristic_result* result) {
  (void)handle, (void)desc, (void)a, (void)b, (void)c, (void)d;
  pthread_mutex_lock(&g_mu);
  ++g_checks;
  const int fails = g_check_fails != 0 && ((const uint64_t*)algo)[0] == g_check_fails;
  const uint64_t need = g_algo_workspace;
  pthread_mutex_unlock(&g_mu);
  if (fails) return 15; /* CUBLAS_STATUS_NOT_SUPPORTED */
  memset(result, 0, sizeof(*result));
  result->workspace_size = need;
  return 0;
}

int cublasLtMatmul(void* handle, void* desc, const void* alpha, const void* A, void* a,
                   const void* B, void* b, const void* beta, const void* C, void* c, void* D,
                   void* d, const void* algo, void* workspace, size_t workspace_size,
                   void* stream) {
  (void)handle;
  const desc_t* m = (const desc_t*)desc;
  fake_lt_matmul rec;
  memset(&rec, 0, sizeof(rec));
  rec.trans_a = m->trans_a;
  rec.trans_b = m->trans_b;
  rec.epilogue = m->epilogue;
  rec.bias = m->bias;
  rec.alpha = *(const float*)alpha;
  rec.beta = *(const float*)beta;
  rec.a = ((const layout_t*)a)->l;
  rec.b = ((const layout_t*)b)->l;
  rec.c = ((const layout_t*)c)->l;
  rec.d = ((const layout_t*)d)->l;
  rec.A = A;
  rec.B = B;
  rec.C = C;
  rec.D = D;
  rec.workspace = workspace;
  rec.workspace_size = workspace_size;
  rec.stream = stream;
  rec.algo = ((const uint64_t*)algo)[0];
  pthread_mutex_lock(&g_mu);
  ++g_matmuls;
  g_last = rec;
  const int index = (int)(rec.algo - 0xa1);
  double ms = index >= 0 && index < g_num_algos ? g_algo_ms[index] : 0.0;
  if (rec.d.order == 1) ms *= g_row_factor; /* a row-ordered D: the swapped formulation */
  pthread_mutex_unlock(&g_mu);
  /* The fake driver's capture and clock, when the test loaded it (the gemm tests without
   * tuning do not need it). A captured run only counts its launches. */
  int (*count)(int) = (int (*)(int))dlsym(RTLD_DEFAULT, "fake_cuda_count_launches");
  pthread_mutex_lock(&g_mu);
  const int launches = index >= 0 && index < 16 && g_algo_launches[index] > 0
                           ? g_algo_launches[index] : 1;
  pthread_mutex_unlock(&g_mu);
  if (count != NULL && count(launches)) return 0;
  void (*advance)(double) = (void (*)(double))dlsym(RTLD_DEFAULT, "fake_cuda_advance_clock");
  if (advance != NULL) advance(ms);
  return 0;
}

/* ---- Control ---------------------------------------------------------------------------- */

int fake_lt_calls(const char* what) {
  pthread_mutex_lock(&g_mu);
  int n = -1;
  if (strcmp(what, "create") == 0) n = g_created;
  if (strcmp(what, "desc_create") == 0) n = g_desc_created;
  if (strcmp(what, "desc_destroy") == 0) n = g_desc_destroyed;
  if (strcmp(what, "layout_create") == 0) n = g_layout_created;
  if (strcmp(what, "layout_destroy") == 0) n = g_layout_destroyed;
  if (strcmp(what, "heuristic") == 0) n = g_heuristics;
  if (strcmp(what, "matmul") == 0) n = g_matmuls;
  if (strcmp(what, "check") == 0) n = g_checks;
  pthread_mutex_unlock(&g_mu);
  return n;
}

void fake_lt_last_matmul(fake_lt_matmul* out) {
  pthread_mutex_lock(&g_mu);
  *out = g_last;
  pthread_mutex_unlock(&g_mu);
}

void fake_lt_set_algo_workspace(uint64_t bytes) {
  pthread_mutex_lock(&g_mu);
  g_algo_workspace = bytes;
  pthread_mutex_unlock(&g_mu);
}

void fake_lt_set_algos(int n, const double* ms) {
  pthread_mutex_lock(&g_mu);
  g_num_algos = n < 1 ? 1 : (n > 16 ? 16 : n);
  for (int i = 0; i < 16; ++i) g_algo_ms[i] = i < n && ms != NULL ? ms[i] : 0.0;
  pthread_mutex_unlock(&g_mu);
}

void fake_lt_set_check_fails(uint64_t algo) {
  pthread_mutex_lock(&g_mu);
  g_check_fails = algo;
  pthread_mutex_unlock(&g_mu);
}

void fake_lt_set_algo_launches(int n, const int* launches) {
  pthread_mutex_lock(&g_mu);
  for (int i = 0; i < 16; ++i) g_algo_launches[i] = i < n && launches != NULL ? launches[i] : 0;
  pthread_mutex_unlock(&g_mu);
}

void fake_lt_set_row_factor(double factor) {
  pthread_mutex_lock(&g_mu);
  g_row_factor = factor;
  pthread_mutex_unlock(&g_mu);
}

int fake_lt_last_requested(void) {
  pthread_mutex_lock(&g_mu);
  const int n = g_last_requested;
  pthread_mutex_unlock(&g_mu);
  return n;
}

void fake_lt_last_alignment(uint32_t out[4]) {
  pthread_mutex_lock(&g_mu);
  memcpy(out, g_last_alignment, sizeof(g_last_alignment));
  pthread_mutex_unlock(&g_mu);
}
