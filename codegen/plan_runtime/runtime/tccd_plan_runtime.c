/* The native plan runtime: parses a plan descriptor (tccd_plan_format.h) and runs the whole
 * plan per call (tccd_plan_runtime.h). Plain C, compiled when the daemon is built and shipped to
 * clients as one artifact with the same digest for every graph.
 *
 * Memory comes from PyTorch's allocator (aoti_torch_empty_strided: the caching allocator on
 * CUDA), so a value is an owned AtenTensorHandle in a per-call environment indexed by plan value
 * id; a step's release list deletes handles at their last use, exactly as the Python interpreter
 * (client/tccd/runtime.py) drops its references.
 *
 * Symbolic plans (dynamic shapes): each call first binds the symbols from its inputs' sizes and
 * strides (and the caller's values for SymInt graph inputs), then evaluates every expression of
 * the descriptor once into the call's environment; dim words (tccd_plan_format.h) read from it.
 */
#include "tccd_plan_runtime.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tccd_plan_arena.h"
#include "tccd_plan_blas.h"
#include "tccd_plan_column_sum.h"
#include "tccd_plan_format.h"
#include "tccd_plan_torch_abi.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_RANK 16
/* Arena groups (tccd_plan_enable_arena): one per (dtype, device type) a plan's arena values have;
 * values of further combinations are allocated on their own. */
#define MAX_ARENAS 8
/* Every arena value starts at a multiple of this many bytes (vector loads need 16, cuBLASLt
 * prefers 256), as the caching allocator's own blocks do. */
#define ARENA_ALIGN 256
/* tccd_cuda_runtime.h: TCCD_RT_ERROR_INVALID_CONTEXT (no current context on this thread). */
#define RT_ERROR_INVALID_CONTEXT 201

/* ------------------------------------------------------------------------------------------ */
/* Errors and the torch ABI                                                                    */
/* ------------------------------------------------------------------------------------------ */

static __thread char g_error[2048];

static int fail(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_error, sizeof(g_error), fmt, ap);
  va_end(ap);
  return -1;
}

EXPORT const char* tccd_plan_last_error(void) { return g_error; }
EXPORT const char* tccd_plan_runtime_abi(void) { return TCCD_PLAN_RUNTIME_ABI; }

/* One function pointer per ABI line, named t_<symbol>. */
#define DECLARE(required, lib, ret, name, params) static ret(*t_##name) params;
TCCD_TORCH_ABI(DECLARE)
#undef DECLARE

/* Before torch 2.13 (no torch_new_stable_ivalue) an optional argument's boxed StableIValue is
 * allocated by the caller with C++ `new StableIValue` and freed by libtorch with `delete`
 * (torch/csrc/stable/stableivalue_conversions.h keeps that path for extensions built against
 * 2.10..2.12): the runtime allocates it with the process's global operator new. */
static void* (*g_operator_new)(size_t);

static pthread_mutex_t g_init_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_cpu_ready; /* guarded by g_init_mu for writes; read after init returned */
static int g_cuda_ready;

/* The library must already be loaded by the process (torch imported it): RTLD_NOLOAD never
 * loads a second copy, and an explicit handle works although Python loaded it RTLD_LOCAL. */
static void* open_loaded(const char* path) {
  if (path == NULL || path[0] == 0) return NULL;
  return dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
}

/* Direct BLAS for CPU float matmuls (tccd_plan_cpu_blas): sgemm_ / dgemm_ of libtorch_cpu, or
 * NULL (the C shims run them). Written under g_init_mu, read by running plans (atomically: a
 * client may switch them while another thread runs a plan). */
static TccdBlasGemmFn g_sgemm, g_dgemm;
static char g_cpu_path[4096]; /* libtorch_cpu's path from tccd_plan_runtime_init */
static int64_t g_blas_calls;   /* direct calls made, process-wide (tccd_plan_cpu_blas_calls) */
static int g_column_sums;      /* tccd_plan_cpu_column_sums: on (1) or off (0, the default) */
static int64_t g_column_sum_calls;

EXPORT int tccd_plan_runtime_init(const char* libtorch_cpu_path, const char* libtorch_cuda_path) {
  pthread_mutex_lock(&g_init_mu);
  int rc = 0;
  void* libs[2] = {NULL, NULL};
  if (!g_cpu_ready) {
    libs[TCCD_LIB_CPU] = open_loaded(libtorch_cpu_path);
    if (libs[TCCD_LIB_CPU] == NULL) {
      rc = fail("libtorch_cpu (%s) is not loaded in this process: %s",
                libtorch_cpu_path ? libtorch_cpu_path : "(null)", dlerror());
      goto out;
    }
  }
  if (!g_cuda_ready && libtorch_cuda_path != NULL)
    libs[TCCD_LIB_CUDA] = open_loaded(libtorch_cuda_path);
#define RESOLVE(required, lib, ret, name, params)                                      \
  if (libs[lib] != NULL && t_##name == NULL) {                                         \
    t_##name = (ret(*) params)dlsym(libs[lib], #name);                                 \
    if (t_##name == NULL && required) {                                                \
      rc = fail("this torch has no %s (the plan runtime needs torch %s to %s)", #name, \
                TCCD_PLAN_TORCH_MIN, TCCD_PLAN_TORCH_MAX);                             \
      goto out;                                                                        \
    }                                                                                  \
  }
  TCCD_TORCH_ABI(RESOLVE)
#undef RESOLVE
  if (libs[TCCD_LIB_CPU] != NULL && g_operator_new == NULL) {
    /* libstdc++ is loaded with libtorch; RTLD_NOLOAD never loads another copy. */
    void* cxx = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD);
    if (cxx != NULL) {
      g_operator_new = (void* (*)(size_t))dlsym(cxx, "_Znwm");
      dlclose(cxx);
    }
  }
  /* Test hook: box optionals as torch 2.11/2.12 need (operator new) on a newer torch too, so CI
   * (torch 2.15) runs the path the oldest supported torch takes for every optional argument. */
  if (libs[TCCD_LIB_CPU] != NULL && getenv("TCCD_PLAN_RUNTIME_BOX_WITH_OPERATOR_NEW") != NULL) {
    if (g_operator_new == NULL) {
      rc = fail("TCCD_PLAN_RUNTIME_BOX_WITH_OPERATOR_NEW: no operator new in this process");
      goto out;
    }
    t_torch_new_stable_ivalue = NULL;
  }
  if (libs[TCCD_LIB_CPU] != NULL) {
    g_cpu_ready = 1;
    snprintf(g_cpu_path, sizeof(g_cpu_path), "%s", libtorch_cpu_path);
  }
  if (libs[TCCD_LIB_CUDA] != NULL && t_aoti_torch_get_current_cuda_stream != NULL) g_cuda_ready = 1;
out:
  /* The handles only count references: the libraries stay loaded by torch. */
  for (int i = 0; i < 2; ++i) {
    if (libs[i] != NULL) dlclose(libs[i]);
  }
  pthread_mutex_unlock(&g_init_mu);
  return rc;
}

/* Resolves one BLAS gemm by name in libtorch_cpu and checks it with tccd_blas_probe. */
static TccdBlasGemmFn resolve_gemm(void* lib, const char* name, int is_double) {
  if (name == NULL || name[0] == 0) return NULL;
  TccdBlasGemmFn fn = (TccdBlasGemmFn)dlsym(lib, name);
  if (fn == NULL) {
    fail("libtorch_cpu exports no %s", name);
    return NULL;
  }
  if (tccd_blas_probe(fn, is_double) != 0) {
    fail("%s failed the runtime's probe (not the Fortran BLAS ABI the runtime calls)", name);
    return NULL;
  }
  return fn;
}

EXPORT int tccd_plan_cpu_blas(const char* sgemm_name, const char* dgemm_name) {
  pthread_mutex_lock(&g_init_mu);
  int rc = 0;
  TccdBlasGemmFn s = NULL, d = NULL;
  void* lib = g_cpu_ready ? open_loaded(g_cpu_path) : NULL;
  if ((sgemm_name != NULL || dgemm_name != NULL) && lib == NULL) {
    rc = fail("tccd_plan_cpu_blas before tccd_plan_runtime_init");
  } else if (lib != NULL) {
    s = resolve_gemm(lib, sgemm_name, 0);
    if (sgemm_name != NULL && sgemm_name[0] && s == NULL) rc = -1;
    d = resolve_gemm(lib, dgemm_name, 1);
    if (dgemm_name != NULL && dgemm_name[0] && d == NULL) rc = -1;
  }
  if (lib != NULL) dlclose(lib);
  __atomic_store_n(&g_sgemm, s, __ATOMIC_RELEASE);
  __atomic_store_n(&g_dgemm, d, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&g_init_mu);
  return rc;
}

EXPORT void tccd_plan_cpu_column_sums(int on) {
  __atomic_store_n(&g_column_sums, on != 0, __ATOMIC_RELAXED);
}

EXPORT int64_t tccd_plan_cpu_column_sum_calls(void) {
  return __atomic_load_n(&g_column_sum_calls, __ATOMIC_RELAXED);
}

EXPORT int64_t tccd_plan_cpu_blas_calls(void) {
  return __atomic_load_n(&g_blas_calls, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------------------------------ */
/* The loaded plan                                                                             */
/* ------------------------------------------------------------------------------------------ */

typedef struct {
  int32_t dtype; /* c10 code; -1: an absent value */
  int32_t device_type;
  int32_t device_index;
  int32_t rank;
  int64_t sizes[MAX_RANK]; /* dim words: -(k + 1) is expression k's value at this call */
  int64_t strides[MAX_RANK];
  int64_t offset;
  int symbolic; /* some dim word is an expression (resolved per call by meta_of) */
} ValueMeta;

typedef struct {
  int64_t tag;
  int64_t a; /* ref id, int, float bits, bool, code, device type, list length */
  int64_t b; /* device index */
  const char* str;
  int64_t str_len;
} Value; /* lists are flattened: a LIST value is followed by its items */

/* How an extern step runs. */
#define EXTERN_UNBOUND 0
#define EXTERN_DISPATCHER 1
#define EXTERN_PYTHON 2
#define EXTERN_OUT_SHIM 3 /* an AOTInductor C shim with Scalars as doubles (TCCD_SHIM_*) */
#define EXTERN_ARANGE 4   /* arange with SymInt bounds, computed here (tccd_plan_bind_arange) */
#define EXTERN_TYPED_SHIM \
  5 /* convolution(_backward), copy_ through a typed C shim (tccd_plan_bind_typed_shim) */

typedef struct {
  int kind;
  int abi;
  const char* artifact; /* points into the descriptor copy; NUL-terminated by the loader */
  const char* symbol;
  void* fn;
  int32_t rank;
  int64_t shape[MAX_RANK]; /* dim words */
  int64_t n_in, n_out;
  int64_t* in;
  int64_t* out;
  int64_t* into;     /* KERNEL, SEGMENT: per output -1 or the graph input written in place */
  int layout;        /* TCCD_LAYOUT_* */
  int64_t* expected; /* (n_in + n_out) * rank */
  /* TCCD_LAYOUT_OWN kernels read from a TCCD_LAYOUT_OWN_GATHER word: per operand (inputs, then
   * outputs), nonzero for a gather operand or a scatter output (its own strides, dim k in slot
   * k); NULL: none. */
  unsigned char* gather;
  int64_t workspace_bytes;
  int64_t alias_base, alias_delta;
  /* EXTERN */
  char* op_name;        /* "aten::add" (owned) */
  const char* overload; /* "Tensor" or "" (into op_name's buffer) */
  int extern_mode;
  int64_t n_args;
  int64_t* arg_kinds;
  int64_t* arg_payloads;
  int64_t n_pool;
  int64_t* pool;
  int64_t n_returns;
  int64_t* ret_kinds; /* TCCD_RET_* per schema return */
  int shim;           /* EXTERN_OUT_SHIM: TCCD_SHIM_* */
  double shim_beta, shim_alpha;
  int64_t shim_args[4]; /* value ids of the shim's tensor arguments (-1: None) */
  int64_t arange[6];    /* EXTERN_ARANGE: (is_expr, v) for start, end, step */
  /* EXTERN_TYPED_SHIM (TCCD_SHIM_CONVOLUTION*): offsets in `pool` of the [n, items] lists stride,
   * padding, dilation, output_padding and bias_sizes (-1: None), the flags and the mask. */
  int64_t conv_list[5];
  int32_t conv_transposed; /* TCCD_SHIM_COPY: non_blocking */
  int64_t conv_groups;
  int32_t conv_mask[3];
  /* A view op bound to the dispatcher (tccd_plan_bind_view): when its base (alias_base) has the
   * sizes and strides the plan declares, the output is made from the plan's metadata instead
   * (alias_delta: the offset increment), no dispatcher call. */
  int view_fast;
  /* aten::sum.dim_IntList over dim 0 of a 2-D float tensor (a bias gradient), bound to the
   * dispatcher: with column sums on (tccd_plan_cpu_column_sums), a CPU input whose columns are
   * unit stride is summed by the runtime (tccd_plan_column_sum.h), no dispatcher call. */
  int column_sum;
  int64_t n_refs; /* EXTERN_PYTHON */
  int64_t* refs;
  int64_t n_release;
  int64_t* release;
  /* tccd_plan_cache_sized_output: a sized kernel without inputs (an arange: its output is a
   * function of the call's sizes only) keeps its output per (sizes, device, stream) and hands
   * out a new handle of it at a call with the same key, no launch and no allocation. NULL: off. */
  struct SizedCacheEntry* sized_cache;
  int64_t n_sized_cache;
} Step;

#define SIZED_CACHE_ENTRIES 8
typedef struct SizedCacheEntry {
  int64_t shape[MAX_RANK];
  int32_t device;
  void* stream;
  void* handle; /* owned; NULL: an empty entry */
} SizedCacheEntry;
/* Guards every step's sized_cache: a plan may run on several threads at once. */
static pthread_mutex_t g_sized_cache_mu = PTHREAD_MUTEX_INITIALIZER;

/* Host-time profile, on when TCCD_PLAN_PROFILE is set as a plan loads: wall time per class of
 * step summed over every call (tccd_plan_profile), to see where a plan's host time goes. Counters
 * are updated atomically (a plan may run on several threads); off, a run reads no clock. */
enum {
  PROF_KERNEL,
  PROF_SEGMENT,
  PROF_ALIAS,
  PROF_EXTERN_DISPATCHER,
  PROF_EXTERN_SHIM,
  PROF_EXTERN_PYTHON,
  PROF_RELEASE,
  PROF_ENTRY_EXIT,
  PROF_CLASSES
};

/* Per-call counts beside the profile's times (tccd_plan_profile_counts), for the host work that
 * is not a step of its own: allocations of values through PyTorch's allocator, inputs copied
 * into their declared layout (misaligned or strided: an extra kernel each call), outputs copied
 * back into a mutated input, workspace allocations (segments' scratch, cuBLASLt's), and lookups
 * of the current CUDA stream. */
enum {
  COUNT_ALLOC,
  COUNT_LAYOUT_COPY,
  COUNT_OUTPUT_COPY,
  COUNT_WORKSPACE,
  COUNT_STREAM,
  COUNT_ARENA, /* values and workspaces carved from the call's arena (no allocation of their own) */
  COUNT_SIZED_CACHE_HIT, /* sized outputs handed out from Step.sized_cache (no launch) */
  COUNTS
};

/* One buffer of the per-call arena: every arena value of one dtype on one device type, packed
 * by lifetime (tccd_arena_pack). Allocated at the first value a call carves from it, as a 1-D
 * tensor of `dtype`, and dropped when the call ends. */
typedef struct {
  int32_t dtype, device_type;
  int64_t bytes;
} ArenaGroup;
static int64_t item_size(int32_t dtype);
static int64_t arena_item_size(int32_t dtype);

/* The native steps (kernels and segments) by what they run, for tccd_plan_profile_native: a
 * step's wall time split into its launch (call_cuda: the kernels .so, the CUDA driver, cuBLASLt,
 * or a CPU kernel's body), its allocations (empty_strided of outputs and scratch) and the rest
 * (reading operands' metadata, strides, binding outputs), to tell where a symbolic kernel's host
 * time goes against a static one's. */
enum {
  NATIVE_CUDA,     /* a CUDA kernel with static sizes */
  NATIVE_CUDA_SYM, /* a CUDA kernel with run-time sizes */
  NATIVE_SYM_GEMM, /* a cuBLASLt gemm with run-time sizes */
  NATIVE_SEGMENT,  /* a CUDA segment (several kernels and gemms in one call) */
  NATIVE_CPU,      /* a CPU kernel, static or sized */
  NATIVE_KINDS
};
enum { NATIVE_NS, NATIVE_LAUNCH_NS, NATIVE_ALLOC_NS, NATIVE_STEPS, NATIVE_FIELDS };

/* A symbol read from an input at each call. */
typedef struct {
  int64_t input, part, dim, symbol; /* part 0: a size, 1: a stride */
} Binding;

struct TccdPlan {
  int profile;
  int64_t prof_runs;  /* every run, the first included */
  int64_t prof_calls; /* the runs profiled: all but the first */
  int64_t prof_ns[PROF_CLASSES];
  int64_t prof_steps[PROF_CLASSES];
  int64_t* prof_step_ns; /* [num_steps]: wall time per step (its releases not included) */
  /* [num_steps]: the first run's wall time per step (its releases included): the one-time
   * costs (module loads, cuDNN/cuBLAS set-up) that the profile above leaves out, by step. */
  int64_t* first_step_ns;
  int64_t prof_count[COUNTS]; /* tccd_plan_profile_counts */
  int64_t prof_native[NATIVE_KINDS][NATIVE_FIELDS]; /* tccd_plan_profile_native */
  char* bytes;                /* the descriptor, copied (strings point into it) */
  int64_t num_symbols, n_bindings, n_exprs;
  Binding* bindings;
  const char** expr_text;   /* [n_exprs], into bytes */
  const int64_t** expr_ops; /* [n_exprs], into bytes */
  int64_t* expr_len;        /* [n_exprs] words */
  int64_t max_stack;        /* the deepest expression's stack */
  int64_t num_inputs, num_values, num_steps, num_outputs;
  ValueMeta* values;
  Step* steps;
  int64_t* output_refs; /* value id per ref output */
  int64_t num_ref_outputs;
  TccdPythonStep python_step;
  TccdMakeContextCurrent make_current;
  void** constants; /* owned handles, read-only (TCCD_ARG_CONSTANT) */
  int64_t n_constants;
  /* The per-call arena (tccd_plan_enable_arena; all NULL/0 without one): per value its group
   * (-1: allocated on its own) and element offset in that group's buffer; per step a segment
   * workspace's byte offset in group ws_group (-1: allocated on its own). */
  int n_arenas;
  ArenaGroup arenas[MAX_ARENAS];
  int32_t* arena_group;  /* [num_values] */
  int64_t* arena_offset; /* [num_values], elements of the group's dtype */
  int64_t* ws_offset;    /* [num_steps], bytes */
  int32_t ws_group;
  /* Symbolic segments (tccd_plan_enable_symbolic_segments; all NULL/0 without): values of a
   * symbolic plan that live only between its sized kernels, gemms and views. They never become
   * tensors: a root (a kernel's or gemm's output) is carved from its segment's workspace, packed
   * by lifetime at the call's sizes; a view is its root's storage at the view's declared offset
   * (its view step does nothing). A segment is a run of roots whose lifetimes chain (each
   * defined before the ones before it all died): its workspace is allocated at its first root
   * and dropped after its last read, so the bytes go back to the allocator between segments.
   * Per value: SEG_NONE, SEG_ROOT or SEG_VIEW. */
  unsigned char* seg;     /* [num_values] */
  int64_t* seg_root;      /* [num_values]: a view's root */
  int64_t* seg_comp_of;   /* [num_values]: a segment value's segment */
  int64_t n_seg_roots;    /* in definition order: */
  int64_t* seg_roots;     /* value ids */
  int64_t* seg_start;     /* defining step */
  int64_t* seg_end;       /* the last step that reads it or a view of it */
  int64_t n_seg_comps;    /* segments, in step order: */
  int64_t* seg_comp_first; /* [n_seg_comps + 1]: its roots are [first[c], first[c + 1]) */
  int64_t* seg_comp_last;  /* [n_seg_comps]: its workspace is dropped after this step */
  int32_t seg_device_type;
};

#define SEG_NONE 0
#define SEG_ROOT 1
#define SEG_VIEW 2

/* A bounds-checked reader over the descriptor's words. */
typedef struct {
  const int64_t* w;
  int64_t n, pos;
  int bad;
} Reader;

static int64_t rd(Reader* r) {
  if (r->pos >= r->n) {
    r->bad = 1;
    return 0;
  }
  return r->w[r->pos++];
}

/* A string in place: its length word, then bytes padded to 8; returned NUL-terminated by
 * overwriting the first padding byte (strings are always followed by at least one byte of
 * padding: the writer pads len + 1). */
static const char* rd_str(Reader* r, int64_t* len_out) {
  int64_t len = rd(r);
  int64_t words = (len + 1 + 7) / 8;
  if (r->bad || len < 0 || words > r->n - r->pos) {
    r->bad = 1;
    return "";
  }
  char* s = (char*)(r->w + r->pos);
  r->pos += words;
  if (s[len] != 0) r->bad = 1;
  if (len_out) *len_out = len;
  return s;
}

static int64_t* rd_ids(Reader* r, int64_t n, int64_t num_values, int allow_absent) {
  if (n < 0 || n > r->n - r->pos) {
    r->bad = 1;
    return NULL;
  }
  int64_t* ids = calloc((size_t)(n ? n : 1), sizeof(int64_t));
  for (int64_t i = 0; i < n; ++i) {
    ids[i] = rd(r);
    if (ids[i] >= num_values || ids[i] < (allow_absent ? -1 : 0)) r->bad = 1;
  }
  return ids;
}

/* Skips one value (and its list items), checking refs and expression indices. */
static void skip_value(Reader* r, const TccdPlan* p, int depth) {
  const int64_t num_values = p->num_values;
  int64_t tag = rd(r);
  if (depth > 8) r->bad = 1;
  switch (tag) {
    case TCCD_VAL_NONE:
      break;
    case TCCD_VAL_REF: {
      int64_t id = rd(r);
      if (id < 0 || id >= num_values) r->bad = 1;
      break;
    }
    case TCCD_VAL_INT:
    case TCCD_VAL_FLOAT:
    case TCCD_VAL_BOOL:
    case TCCD_VAL_DTYPE:
    case TCCD_VAL_LAYOUT:
    case TCCD_VAL_MEMORY_FORMAT:
      rd(r);
      break;
    case TCCD_VAL_DEVICE:
      rd(r);
      rd(r);
      break;
    case TCCD_VAL_SYM: {
      int64_t k = rd(r);
      if (k < 0 || k >= p->n_exprs) r->bad = 1;
      break;
    }
    case TCCD_VAL_STRING:
      rd_str(r, NULL);
      break;
    case TCCD_VAL_LIST: {
      int64_t n = rd(r);
      if (n < 0 || n > r->n) {
        r->bad = 1;
        break;
      }
      for (int64_t i = 0; i < n && !r->bad; ++i) skip_value(r, p, depth + 1);
      break;
    }
    default:
      r->bad = 1;
  }
}

/* A dim word is a size (>= 0) or names an expression of the table. */
static int dim_word_ok(const TccdPlan* p, int64_t w) { return w >= 0 || -(w + 1) < p->n_exprs; }

/* The symbols, their input bindings and the expression table (postfix programs, checked here
 * so that evaluation never underflows its stack or reads a symbol out of range). */
static int parse_symbols(Reader* r, TccdPlan* p) {
  p->num_symbols = rd(r);
  p->n_bindings = rd(r);
  if (r->bad || p->num_symbols < 0 || p->num_symbols > 4096 || p->n_bindings < 0 ||
      p->n_bindings > r->n)
    return fail("descriptor: %ld symbols, %ld bindings", (long)p->num_symbols, (long)p->n_bindings);
  p->bindings = calloc((size_t)(p->n_bindings ? p->n_bindings : 1), sizeof(Binding));
  for (int64_t b = 0; b < p->n_bindings; ++b) {
    Binding* x = &p->bindings[b];
    x->input = rd(r);
    x->part = rd(r);
    x->dim = rd(r);
    x->symbol = rd(r);
    if (x->input < 0 || (x->part != 0 && x->part != 1) || x->dim < 0 || x->symbol < 0 ||
        x->symbol >= p->num_symbols)
      return fail("descriptor: malformed symbol binding %ld", (long)b);
  }
  p->n_exprs = rd(r);
  if (r->bad || p->n_exprs < 0 || p->n_exprs > r->n)
    return fail("descriptor: %ld expressions", (long)p->n_exprs);
  size_t n = (size_t)(p->n_exprs ? p->n_exprs : 1);
  p->expr_text = calloc(n, sizeof(char*));
  p->expr_ops = calloc(n, sizeof(int64_t*));
  p->expr_len = calloc(n, sizeof(int64_t));
  for (int64_t k = 0; k < p->n_exprs; ++k) {
    p->expr_text[k] = rd_str(r, NULL);
    int64_t len = rd(r);
    if (r->bad || len <= 0 || len > r->n - r->pos)
      return fail("expression %ld: truncated", (long)k);
    p->expr_ops[k] = r->w + r->pos;
    p->expr_len[k] = len;
    int64_t depth = 0;
    for (int64_t i = 0; i < len; ++i) {
      int64_t op = rd(r);
      if (op == TCCD_EXPR_CONST || op == TCCD_EXPR_SYM) {
        int64_t v = rd(r);
        ++i;
        if (op == TCCD_EXPR_SYM && (v < 0 || v >= p->num_symbols))
          return fail("expression %ld: symbol %ld", (long)k, (long)v);
        if (++depth > p->max_stack) p->max_stack = depth;
      } else if (op >= TCCD_EXPR_ADD && op <= TCCD_EXPR_POW) {
        if (--depth < 1) return fail("expression %ld: stack underflow", (long)k);
      } else {
        return fail("expression %ld: op %ld", (long)k, (long)op);
      }
    }
    if (r->bad || depth != 1)
      return fail("expression %ld (%s): malformed", (long)k, p->expr_text[k]);
  }
  return 0;
}

static void free_step(Step* s) {
  free(s->in);
  free(s->out);
  free(s->into);
  free(s->expected);
  free(s->gather);
  free(s->op_name);
  free(s->arg_kinds);
  free(s->arg_payloads);
  free(s->pool);
  free(s->refs);
  free(s->release);
  free(s->ret_kinds);
  for (int64_t i = 0; i < s->n_sized_cache; ++i)
    if (s->sized_cache[i].handle != NULL)
      (void)t_aoti_torch_delete_tensor_object(s->sized_cache[i].handle);
  free(s->sized_cache);
}

EXPORT void tccd_plan_free(TccdPlan* plan) {
  if (plan == NULL) return;
  for (int64_t i = 0; plan->steps && i < plan->num_steps; ++i) free_step(&plan->steps[i]);
  for (int64_t i = 0; i < plan->n_constants; ++i)
    (void)t_aoti_torch_delete_tensor_object(plan->constants[i]);
  free(plan->constants);
  free(plan->steps);
  free(plan->values);
  free(plan->output_refs);
  free(plan->bytes);
  free(plan->bindings);
  free(plan->expr_text);
  free(plan->expr_ops);
  free(plan->expr_len);
  free(plan->prof_step_ns);
  free(plan->first_step_ns);
  free(plan->arena_group);
  free(plan->arena_offset);
  free(plan->ws_offset);
  free(plan->seg), free(plan->seg_root), free(plan->seg_roots), free(plan->seg_start);
  free(plan->seg_end), free(plan->seg_comp_of), free(plan->seg_comp_first), free(plan->seg_comp_last);
  free(plan);
}

static void* find_symbol(int64_t n, const char** names, void** handles, const char* artifact,
                         const char* symbol) {
  for (int64_t i = 0; i < n; ++i) {
    if (strcmp(names[i], artifact) == 0) return handles[i] ? dlsym(handles[i], symbol) : NULL;
  }
  return NULL;
}

/* "ns::name.overload" -> op_name "ns::name", overload "overload" ("" for .default). */
static int set_target(Step* s, const char* target) {
  size_t len = strlen(target);
  const char* sep = strstr(target, "::");
  if (sep == NULL) return -1;
  free(s->op_name);
  s->op_name = malloc(len + 1);
  memcpy(s->op_name, target, len + 1);
  char* dot = strchr(s->op_name + (sep - target) + 2, '.');
  s->overload = "";
  if (dot != NULL) {
    *dot = 0;
    if (strcmp(dot + 1, "default") != 0) s->overload = dot + 1;
  }
  return 0;
}

/* Row-major contiguous (strides of size-1 dims ignored); its element count in *numel. */
static int contiguous(const ValueMeta* m, int64_t* numel) {
  int64_t expect = 1;
  for (int d = m->rank - 1; d >= 0; --d) {
    if (m->sizes[d] != 1 && m->strides[d] != expect) return 0;
    expect *= m->sizes[d];
  }
  *numel = expect;
  return 1;
}

/* An output of meta `out` may be written into an input of meta `in` (schedule::CanWriteInto):
 * the same layout, or both contiguous over the same elements from the same offset. */
static int can_write_into(const ValueMeta* out, const ValueMeta* in) {
  if (out->dtype != in->dtype || out->device_type != in->device_type ||
      out->offset != in->offset || out->symbolic || in->symbolic)
    return 0;
  int same = out->rank == in->rank;
  for (int d = 0; same && d < out->rank; ++d)
    same = out->sizes[d] == in->sizes[d] && out->strides[d] == in->strides[d];
  int64_t n_out = 0, n_in = 0;
  return same || (contiguous(out, &n_out) && contiguous(in, &n_in) && n_out == n_in);
}

static int parse_step(Reader* r, TccdPlan* p, Step* s, int64_t index, int64_t n_art,
                      const char** names, void** handles) {
  const int64_t nv = p->num_values;
  s->kind = (int)rd(r);
  switch (s->kind) {
    case TCCD_STEP_KERNEL:
    case TCCD_STEP_SEGMENT: {
      s->abi = (int)rd(r);
      s->artifact = rd_str(r, NULL);
      s->symbol = rd_str(r, NULL);
      if (s->kind == TCCD_STEP_KERNEL) {
        s->rank = (int32_t)rd(r);
        if (s->rank < 0 || s->rank > MAX_RANK)
          return fail("step %ld: rank %d", (long)index, s->rank);
        for (int i = 0; i < s->rank; ++i) {
          s->shape[i] = rd(r);
          if (!dim_word_ok(p, s->shape[i]))
            return fail("step %ld: shape word %ld", (long)index, (long)s->shape[i]);
        }
      }
      s->n_in = rd(r);
      s->in = rd_ids(r, s->n_in, nv, 0);
      s->n_out = rd(r);
      s->out = rd_ids(r, s->n_out, nv, 0);
      s->into = rd_ids(r, s->n_out, nv, 1);
      if (r->bad) return fail("step %ld: truncated", (long)index);
      for (int64_t i = 0; i < s->n_out; ++i) {
        const int64_t k = s->into[i];
        /* A graph input (a kept mutation) or a value that dies at this step (the daemon's
         * DyingInputsIntoOutputs); either way of the output's meta. */
        if (k >= 0 && (k == s->out[i] || !can_write_into(&p->values[s->out[i]], &p->values[k])))
          return fail("step %ld: output %ld written into value %ld, not a value of its meta",
                      (long)index, (long)s->out[i], (long)k);
      }
      if (s->kind == TCCD_STEP_KERNEL) {
        s->layout = (int)rd(r);
        if (s->layout == TCCD_LAYOUT_OWN_GATHER) {
          /* A symbolic index kernel: TCCD_LAYOUT_OWN, its gather operands flagged. */
          if (s->abi != TCCD_ABI_CPU_SYM && s->abi != TCCD_ABI_CUDA_SYM && s->abi != TCCD_ABI_CPU &&
              s->abi != TCCD_ABI_CUDA)
            return fail("step %ld: gather operands of a kernel of abi %d", (long)index, s->abi);
          s->gather = calloc((size_t)(s->n_in + s->n_out + 1), 1);
          if (s->gather == NULL) return fail("out of memory");
          for (int64_t i = 0; i < s->n_in + s->n_out; ++i) s->gather[i] = rd(r) != 0;
          s->layout = TCCD_LAYOUT_OWN;
        }
        if (s->layout != TCCD_LAYOUT_DECLARED && s->layout != TCCD_LAYOUT_COPY &&
            s->layout != TCCD_LAYOUT_OWN)
          return fail("step %ld: layout %d", (long)index, s->layout);
        int64_t n = s->layout == TCCD_LAYOUT_OWN ? 0 : (s->n_in + s->n_out) * s->rank;
        s->expected = calloc((size_t)(n ? n : 1), sizeof(int64_t));
        for (int64_t i = 0; i < n; ++i) s->expected[i] = rd(r);
        if (s->abi != TCCD_ABI_CPU && s->abi != TCCD_ABI_CUDA && s->abi != TCCD_ABI_CPU_SYM &&
            s->abi != TCCD_ABI_CUDA_SYM && s->abi != TCCD_ABI_CUDA_SYM_GEMM)
          return fail("step %ld: abi %d", (long)index, s->abi);
        /* Kernels with run-time sizes take their operands' own strides; declared layouts are
         * static (the shape is then plain sizes). */
        if ((s->abi == TCCD_ABI_CPU_SYM || s->abi == TCCD_ABI_CUDA_SYM ||
             s->abi == TCCD_ABI_CUDA_SYM_GEMM) &&
            s->layout != TCCD_LAYOUT_OWN)
          return fail("step %ld: a kernel with run-time sizes and a declared layout", (long)index);
        for (int i = 0; s->layout != TCCD_LAYOUT_OWN && i < s->rank; ++i)
          if (s->shape[i] < 0)
            return fail("step %ld: a symbolic shape and a declared layout", (long)index);
        /* A sized gemm's shape is its ten sizes: A, B[, bias] in, D out. */
        if (s->abi == TCCD_ABI_CUDA_SYM_GEMM &&
            (s->rank != TCCD_GEMM_DIMS || s->n_in < 2 || s->n_in > 3 || s->n_out != 1))
          return fail("step %ld: a malformed sized gemm", (long)index);
        /* Outputs of a lower rank are right-aligned to the iteration space (a column kernel's
         * per-column outputs drop the reduced dims: the layer norm backward's parameter
         * gradients, [N] of an [..., N] space; run_kernel_own gives them stride 0 there), as the
         * daemon's descriptor writer and runtime.py take them. */
        for (int64_t i = 0; s->layout == TCCD_LAYOUT_OWN && s->abi != TCCD_ABI_CUDA_SYM_GEMM &&
                            i < s->n_out;
             ++i)
          if (p->values[s->out[i]].rank > s->rank)
            return fail("step %ld: output %ld has a higher rank than the kernel's", (long)index,
                        (long)s->out[i]);
      } else {
        s->workspace_bytes = rd(r);
        if (s->abi != TCCD_ABI_CUDA_SEGMENT) return fail("step %ld: abi %d", (long)index, s->abi);
      }
      if (r->bad) return fail("step %ld: truncated", (long)index);
      for (int64_t i = 0; i < s->n_out; ++i) {
        const ValueMeta* m = &p->values[s->out[i]];
        if (m->dtype < 0 || m->offset != 0)
          return fail("step %ld: output %ld is not allocatable", (long)index, (long)s->out[i]);
      }
      if ((s->abi == TCCD_ABI_CUDA || s->abi == TCCD_ABI_CUDA_SYM ||
           s->abi == TCCD_ABI_CUDA_SEGMENT || s->abi == TCCD_ABI_CUDA_SYM_GEMM) &&
          !g_cuda_ready)
        return fail("step %ld: a CUDA step, but libtorch_cuda's ABI is not resolved", (long)index);
      s->fn = find_symbol(n_art, names, handles, s->artifact, s->symbol);
      if (s->fn == NULL)
        return fail("step %ld: no symbol %s in artifact %s", (long)index, s->symbol, s->artifact);
      break;
    }
    case TCCD_STEP_ALIAS:
      s->alias_base = rd(r);
      s->n_out = 1;
      s->out = rd_ids(r, 1, nv, 0);
      s->alias_delta = rd(r);
      if (r->bad || s->alias_base < 0 || s->alias_base >= nv)
        return fail("step %ld: malformed alias", (long)index);
      if (p->values[s->out[0]].rank < 0)
        return fail("step %ld: alias of an absent value", (long)index);
      break;
    case TCCD_STEP_EXTERN: {
      int64_t len = 0;
      const char* target = rd_str(r, &len);
      (void)len;
      if (r->bad || set_target(s, target) != 0)
        return fail("step %ld: extern target %s", (long)index, target);
      int64_t n_args = rd(r);
      for (int64_t i = 0; i < n_args && !r->bad; ++i) skip_value(r, p, 0);
      int64_t n_kwargs = rd(r);
      for (int64_t i = 0; i < n_kwargs && !r->bad; ++i) {
        rd_str(r, NULL);
        skip_value(r, p, 0);
      }
      s->n_out = rd(r);
      s->out = rd_ids(r, s->n_out, nv, 1);
      if (r->bad) return fail("step %ld: malformed extern call", (long)index);
      break;
    }
    default:
      return fail("step %ld: unknown kind %d", (long)index, s->kind);
  }
  s->n_release = rd(r);
  s->release = rd_ids(r, s->n_release, nv, 0);
  if (r->bad) return fail("step %ld: truncated", (long)index);
  return 0;
}

EXPORT TccdPlan* tccd_plan_load(const void* bytes, int64_t size, int64_t n_artifacts,
                                const char** names, void** handles) {
  if (!g_cpu_ready) {
    fail("tccd_plan_runtime_init has not succeeded");
    return NULL;
  }
  if (size < 16 || size % 8 != 0) {
    fail("descriptor of %ld bytes", (long)size);
    return NULL;
  }
  TccdPlan* p = calloc(1, sizeof(TccdPlan));
  p->profile = getenv("TCCD_PLAN_PROFILE") != NULL && getenv("TCCD_PLAN_PROFILE")[0] != 0 &&
               strcmp(getenv("TCCD_PLAN_PROFILE"), "0") != 0;
  p->bytes = malloc((size_t)size);
  memcpy(p->bytes, bytes, (size_t)size);
  Reader r = {(const int64_t*)p->bytes, size / 8, 0, 0};
  if (rd(&r) != TCCD_PLAN_MAGIC) {
    fail("not a tccd plan descriptor");
    goto error;
  }
  int64_t version = rd(&r);
  if (version != TCCD_PLAN_FORMAT_VERSION) {
    fail("descriptor format %ld, this runtime reads %d", (long)version, TCCD_PLAN_FORMAT_VERSION);
    goto error;
  }
  if (parse_symbols(&r, p) != 0) goto error;
  p->num_inputs = rd(&r);
  p->num_values = rd(&r);
  if (r.bad || p->num_values < 0 || p->num_values > r.n || p->num_inputs < 0 ||
      p->num_inputs > p->num_values) {
    fail("descriptor: %ld inputs, %ld values", (long)p->num_inputs, (long)p->num_values);
    goto error;
  }
  p->values = calloc((size_t)(p->num_values ? p->num_values : 1), sizeof(ValueMeta));
  for (int64_t i = 0; i < p->num_values; ++i) {
    ValueMeta* m = &p->values[i];
    m->dtype = (int32_t)rd(&r);
    m->device_type = (int32_t)rd(&r);
    m->device_index = (int32_t)rd(&r);
    m->rank = (int32_t)rd(&r);
    if (m->rank < 0 || m->rank > MAX_RANK) {
      fail("value %ld: rank %d (at most %d)", (long)i, m->rank, MAX_RANK);
      goto error;
    }
    for (int d = 0; d < m->rank; ++d) m->sizes[d] = rd(&r);
    for (int d = 0; d < m->rank; ++d) m->strides[d] = rd(&r);
    m->offset = rd(&r);
    int ok = m->dtype < 0 || dim_word_ok(p, m->offset);
    for (int d = 0; d < m->rank; ++d)
      ok = ok && dim_word_ok(p, m->sizes[d]) && dim_word_ok(p, m->strides[d]);
    if (!ok) {
      fail("value %ld: a dim word names no expression", (long)i);
      goto error;
    }
    m->symbolic = m->dtype >= 0 && m->offset < 0;
    for (int d = 0; d < m->rank; ++d) m->symbolic |= m->sizes[d] < 0 || m->strides[d] < 0;
  }
  for (int64_t b = 0; b < p->n_bindings; ++b) {
    const Binding* x = &p->bindings[b];
    if (x->input >= p->num_inputs || x->dim >= p->values[x->input].rank) {
      fail("binding %ld: input %ld has no dim %ld", (long)b, (long)x->input, (long)x->dim);
      goto error;
    }
  }
  p->num_steps = rd(&r);
  if (r.bad || p->num_steps < 0 || p->num_steps > r.n) {
    fail("descriptor truncated in its values");
    goto error;
  }
  p->steps = calloc((size_t)(p->num_steps ? p->num_steps : 1), sizeof(Step));
  if (p->profile) {
    p->prof_step_ns = calloc((size_t)(p->num_steps ? p->num_steps : 1), sizeof(int64_t));
    p->first_step_ns = calloc((size_t)(p->num_steps ? p->num_steps : 1), sizeof(int64_t));
  }
  for (int64_t i = 0; i < p->num_steps; ++i) {
    if (parse_step(&r, p, &p->steps[i], i, n_artifacts, names, handles) != 0) goto error;
  }
  p->num_outputs = rd(&r);
  if (r.bad || p->num_outputs < 0 || p->num_outputs > r.n) {
    fail("descriptor truncated in its steps");
    goto error;
  }
  p->output_refs = calloc((size_t)(p->num_outputs ? p->num_outputs : 1), sizeof(int64_t));
  for (int64_t i = 0; i < p->num_outputs; ++i) {
    int64_t at = r.pos;
    skip_value(&r, p, 0);
    if (!r.bad && r.w[at] == TCCD_VAL_REF) p->output_refs[p->num_ref_outputs++] = r.w[at + 1];
  }
  if (r.bad || r.pos != r.n) {
    fail("descriptor: malformed outputs or trailing bytes");
    goto error;
  }
  return p;
error:
  tccd_plan_free(p);
  return NULL;
}

EXPORT int tccd_plan_set_callbacks(TccdPlan* p, TccdPythonStep python_step,
                                   TccdMakeContextCurrent make_current) {
  p->python_step = python_step;
  p->make_current = make_current;
  return 0;
}

static Step* extern_step(TccdPlan* p, int64_t step) {
  if (step < 0 || step >= p->num_steps || p->steps[step].kind != TCCD_STEP_EXTERN) {
    fail("step %ld is not an extern step", (long)step);
    return NULL;
  }
  return &p->steps[step];
}

static int is_pool_kind(int64_t base) {
  return base == TCCD_ARG_INT_LIST || base == TCCD_ARG_SYM_INT_LIST ||
         base == TCCD_ARG_TENSOR_LIST || base == TCCD_ARG_BOOL_LIST ||
         base == TCCD_ARG_FLOAT_LIST || base == TCCD_ARG_OPTIONAL_TENSOR_LIST ||
         base == TCCD_ARG_STRING;
}

EXPORT int tccd_plan_add_constant(TccdPlan* p, void* handle, int64_t* index) {
  void** grown = realloc(p->constants, (size_t)(p->n_constants + 1) * sizeof(void*));
  if (grown == NULL) return fail("out of memory");
  p->constants = grown;
  p->constants[p->n_constants] = handle;
  *index = p->n_constants++;
  return 0;
}

/* Whether a dispatcher step is aten::sum.dim_IntList(x, [0] or [-2], keepdim, dtype=None) with one
 * float32/float64 CPU output allocated as a contiguous [n] or [1, n] (a bias gradient). */
static int is_column_sum(const TccdPlan* p, const Step* s) {
  if (strcmp(s->op_name, "aten::sum") != 0 || strcmp(s->overload, "dim_IntList") != 0 ||
      s->n_args < 3 || s->n_args > 4 || s->n_out != 1 || s->out[0] < 0 || s->n_returns != 1)
    return 0;
  const int64_t* k = s->arg_kinds;
  if (k[0] != TCCD_ARG_TENSOR || (k[1] & ~TCCD_ARG_OPTIONAL) != TCCD_ARG_INT_LIST ||
      k[2] != TCCD_ARG_BOOL || (s->n_args == 4 && k[3] != TCCD_ARG_NONE))
    return 0;
  const int64_t* dims = s->pool + s->arg_payloads[1];
  if (dims[0] != 1 || (dims[1] != 0 && dims[1] != -2)) return 0;
  const ValueMeta* m = &p->values[s->out[0]];
  if (m->symbolic || m->device_type != TCCD_C10_DEVICE_CPU || m->offset != 0 ||
      (m->dtype != TCCD_C10_FLOAT32 && m->dtype != TCCD_C10_FLOAT64))
    return 0;
  const int keepdim = s->arg_payloads[2] != 0;
  if (keepdim ? !(m->rank == 2 && m->sizes[0] == 1 && (m->sizes[1] <= 1 || m->strides[1] == 1))
              : !(m->rank == 1 && (m->sizes[0] <= 1 || m->strides[0] == 1)))
    return 0;
  return 1;
}

EXPORT int tccd_plan_bind_extern(TccdPlan* p, int64_t step, const char* target, int64_t n_args,
                                 const int64_t* kinds, const int64_t* payloads, int64_t n_returns,
                                 const int64_t* ret_kinds, int64_t n_pool, const int64_t* pool) {
  Step* s = extern_step(p, step);
  if (s == NULL) return -1;
  if (target != NULL && set_target(s, target) != 0)
    return fail("step %ld: target %s", (long)step, target);
  if (n_args < 0 || n_returns < 0) return fail("step %ld: %ld args", (long)step, (long)n_args);
  for (int64_t i = 0; i < n_args; ++i) {
    int64_t base = kinds[i] & ~TCCD_ARG_OPTIONAL;
    if (base < 0 || base > TCCD_ARG_LAST)
      return fail("step %ld: argument kind %ld", (long)step, (long)kinds[i]);
    if (is_pool_kind(base)) {
      if (base != TCCD_ARG_STRING &&
          (t_torch_new_list_reserve_size == NULL || t_torch_list_push_back == NULL))
        return fail("step %ld: list arguments need torch >= 2.10", (long)step);
      if (base == TCCD_ARG_STRING && t_torch_new_string_handle == NULL)
        return fail("step %ld: string arguments need torch >= 2.10", (long)step);
      int64_t at = payloads[i];
      int64_t words = base == TCCD_ARG_STRING && at >= 0 && at < n_pool ? (pool[at] + 7) / 8
                      : base == TCCD_ARG_SYM_INT_LIST && at >= 0 && at < n_pool
                          ? 2 * pool[at]
                          : (at >= 0 && at < n_pool ? pool[at] : -1);
      if (at < 0 || at >= n_pool || pool[at] < 0 || words > n_pool - at - 1)
        return fail("step %ld: argument %ld: bad list", (long)step, (long)i);
      for (int64_t k = 0;
           (base == TCCD_ARG_TENSOR_LIST || base == TCCD_ARG_OPTIONAL_TENSOR_LIST) && k < pool[at];
           ++k) {
        int64_t id = pool[at + 1 + k];
        if (id >= p->num_values || id < (base == TCCD_ARG_OPTIONAL_TENSOR_LIST ? -1 : 0))
          return fail("step %ld: list reads value %ld", (long)step, (long)id);
      }
      for (int64_t k = 0; base == TCCD_ARG_SYM_INT_LIST && k < pool[at]; ++k) {
        if (pool[at + 1 + 2 * k] &&
            (pool[at + 2 + 2 * k] < 0 || pool[at + 2 + 2 * k] >= p->n_exprs))
          return fail("step %ld: argument %ld names expression %ld", (long)step, (long)i,
                      (long)pool[at + 2 + 2 * k]);
      }
    }
    if (((kinds[i] & TCCD_ARG_OPTIONAL) || base == TCCD_ARG_OPTIONAL_TENSOR_LIST) &&
        t_torch_new_stable_ivalue == NULL && g_operator_new == NULL)
      return fail("step %ld: an optional argument with a value, and no way to box it", (long)step);
    if (base == TCCD_ARG_UNDEFINED_TENSOR &&
        ((kinds[i] & TCCD_ARG_OPTIONAL) || t_aoti_torch_new_uninitialized_tensor == NULL))
      return fail(
          "step %ld: argument %ld: an undefined tensor needs aoti_torch_new_uninitialized_tensor",
          (long)step, (long)i);
    if (base == TCCD_ARG_TENSOR && (payloads[i] < 0 || payloads[i] >= p->num_values))
      return fail("step %ld: argument %ld reads value %ld", (long)step, (long)i, (long)payloads[i]);
    if (base == TCCD_ARG_SYM && (payloads[i] < 0 || payloads[i] >= p->n_exprs))
      return fail("step %ld: argument %ld names expression %ld", (long)step, (long)i,
                  (long)payloads[i]);
    if (base == TCCD_ARG_CONSTANT && (payloads[i] < 0 || payloads[i] >= p->n_constants))
      return fail("step %ld: argument %ld reads constant %ld", (long)step, (long)i,
                  (long)payloads[i]);
  }
  int64_t tensor_returns = 0;
  for (int64_t i = 0; i < n_returns; ++i) {
    if (ret_kinds[i] == TCCD_RET_TENSOR) {
      ++tensor_returns;
    } else if (ret_kinds[i] == TCCD_RET_TENSOR_LIST) {
      if (n_returns != 1) return fail("step %ld: a list return among others", (long)step);
      if (t_torch_list_size == NULL || t_torch_list_get_item == NULL || t_torch_delete_list == NULL)
        return fail("step %ld: list returns need torch >= 2.10", (long)step);
    } else if (ret_kinds[i] != TCCD_RET_DISCARD) {
      return fail("step %ld: return kind %ld", (long)step, (long)ret_kinds[i]);
    }
  }
  /* Outputs map to returns in order; a list return fills every output. */
  if (!(n_returns == 1 && ret_kinds[0] == TCCD_RET_TENSOR_LIST)) {
    for (int64_t i = 0; i < s->n_out && i < n_returns; ++i) {
      if (s->out[i] >= 0 && ret_kinds[i] != TCCD_RET_TENSOR)
        return fail("step %ld: output %ld reads a discarded return", (long)step, (long)i);
    }
    if (n_returns < s->n_out)
      return fail("step %ld: %ld returns for %ld outputs", (long)step, (long)n_returns,
                  (long)s->n_out);
  }
  (void)tensor_returns;
  /* A step may be bound again (a constant's clone rebound as an alias once the caller says the
   * value is a saved tensor: native_plan.py share_saved_constants): the old arrays go. */
  free(s->arg_kinds);
  free(s->arg_payloads);
  free(s->pool);
  free(s->ret_kinds);
  size_t bytes = (size_t)(n_args ? n_args : 1) * sizeof(int64_t);
  s->arg_kinds = malloc(bytes);
  s->arg_payloads = malloc(bytes);
  memcpy(s->arg_kinds, kinds, (size_t)n_args * sizeof(int64_t));
  memcpy(s->arg_payloads, payloads, (size_t)n_args * sizeof(int64_t));
  s->pool = malloc((size_t)(n_pool ? n_pool : 1) * sizeof(int64_t));
  memcpy(s->pool, pool, (size_t)n_pool * sizeof(int64_t));
  s->n_pool = n_pool;
  s->n_args = n_args;
  s->n_returns = n_returns;
  s->ret_kinds = malloc((size_t)(n_returns ? n_returns : 1) * sizeof(int64_t));
  memcpy(s->ret_kinds, ret_kinds, (size_t)n_returns * sizeof(int64_t));
  s->extern_mode = EXTERN_DISPATCHER;
  s->column_sum = is_column_sum(p, s);
  return 0;
}

/* The C shim `shim` (TCCD_SHIM_*) for a device type, or NULL where this torch has none. */
static void* shim_fn(int32_t device_type, int shim) {
  const int cuda = device_type == TCCD_C10_DEVICE_CUDA;
  switch (shim) {
    case TCCD_SHIM_ADDMM_OUT:
      return cuda ? (void*)t_aoti_torch_cuda_addmm_out : (void*)t_aoti_torch_cpu_addmm_out;
    case TCCD_SHIM_BADDBMM_OUT:
      return cuda ? (void*)t_aoti_torch_cuda_baddbmm_out : (void*)t_aoti_torch_cpu_baddbmm_out;
    case TCCD_SHIM_ADD_TENSOR:
      return cuda ? (void*)t_aoti_torch_cuda_add_Tensor : (void*)t_aoti_torch_cpu_add_Tensor;
    case TCCD_SHIM_MM_OUT:
      return cuda ? (void*)t_aoti_torch_cuda_mm_out : (void*)t_aoti_torch_cpu_mm_out;
    case TCCD_SHIM_BMM_OUT:
      return cuda ? (void*)t_aoti_torch_cuda_bmm_out : (void*)t_aoti_torch_cpu_bmm_out;
    case TCCD_SHIM_CONVOLUTION:
      return cuda ? (void*)t_aoti_torch_cuda_convolution : (void*)t_aoti_torch_cpu_convolution;
    case TCCD_SHIM_CONVOLUTION_BACKWARD:
      return cuda ? (void*)t_aoti_torch_cuda_convolution_backward
                  : (void*)t_aoti_torch_cpu_convolution_backward;
    case TCCD_SHIM_SDPA_FLASH:
      return cuda ? (void*)t_aoti_torch_cuda__scaled_dot_product_flash_attention : NULL;
    case TCCD_SHIM_SDPA_CUDNN:
      return cuda ? (void*)t_aoti_torch_cuda__scaled_dot_product_cudnn_attention : NULL;
    default:
      return NULL;
  }
}

/* The number of tensor arguments of an out shim (TCCD_SHIM_*). */
static int shim_arity(int shim) {
  return shim == TCCD_SHIM_ADD_TENSOR || shim == TCCD_SHIM_MM_OUT || shim == TCCD_SHIM_BMM_OUT ? 2
                                                                                               : 3;
}

/* An extern step run by an AOTInductor C shim (TCCD_SHIM_*): `ids` are its tensor arguments
 * (three for the _out shims, whose one output is allocated as the plan declares it; two for
 * add_Tensor, which returns its result). */
EXPORT int tccd_plan_bind_out_shim(TccdPlan* p, int64_t step, int64_t shim, const int64_t* ids,
                                   double beta, double alpha) {
  Step* s = extern_step(p, step);
  if (s == NULL) return -1;
  if (shim != TCCD_SHIM_ADDMM_OUT && shim != TCCD_SHIM_BADDBMM_OUT &&
      shim != TCCD_SHIM_ADD_TENSOR && shim != TCCD_SHIM_MM_OUT && shim != TCCD_SHIM_BMM_OUT)
    return fail("step %ld: shim %ld", (long)step, (long)shim);
  if (s->n_out != 1 || s->out[0] < 0)
    return fail("step %ld: a shim step has one output", (long)step);
  const ValueMeta* m = &p->values[s->out[0]];
  if (m->dtype < 0 || (shim != TCCD_SHIM_ADD_TENSOR && m->offset != 0))
    return fail("step %ld: output is not allocatable", (long)step);
  if (shim_fn(m->device_type, (int)shim) == NULL)
    return fail("step %ld: this torch has no C shim for it", (long)step);
  for (int i = 0; i < shim_arity((int)shim); ++i) {
    if (ids[i] < 0 || ids[i] >= p->num_values)
      return fail("step %ld reads value %ld", (long)step, (long)ids[i]);
    s->shim_args[i] = ids[i];
  }
  s->shim = (int)shim;
  s->shim_beta = beta;
  s->shim_alpha = alpha;
  s->extern_mode = EXTERN_OUT_SHIM;
  return 0;
}

/* Flash or cuDNN attention's forward through its typed CUDA shim (TCCD_SHIM_SDPA_*): ids query,
 * key, value, attn_bias (-1: None); words as tccd_plan_format.h lays them out. The int returns
 * max_q / max_k are dropped, so no step may read them. */
static int bind_attention_shim(TccdPlan* p, Step* s, int64_t step, int64_t shim, const int64_t* ids,
                               int64_t n_words, const int64_t* words) {
  const int cudnn = shim == TCCD_SHIM_SDPA_CUDNN;
  if (n_words != (cudnn ? 6 : 5))
    return fail("step %ld: %ld words for an attention shim", (long)step, (long)n_words);
  if (s->n_out < 1 || s->n_out > 9 || s->out[0] < 0)
    return fail("step %ld: %ld outputs for an attention shim", (long)step, (long)s->n_out);
  for (int i = 4; i < 6 && i < s->n_out; ++i) {
    if (s->out[i] >= 0) return fail("step %ld reads the int return %d", (long)step, i);
  }
  for (int i = 0; i < 4; ++i) {
    const int optional = i == 3;
    if (ids[i] >= p->num_values || ids[i] < (optional ? -1 : 0) ||
        (optional && !cudnn && ids[i] >= 0))
      return fail("step %ld reads value %ld", (long)step, (long)ids[i]);
  }
  if (shim_fn(p->values[ids[0]].device_type, (int)shim) == NULL)
    return fail("step %ld: this torch has no C shim for it", (long)step);
  int64_t* pool = malloc((size_t)n_words * sizeof(int64_t));
  if (pool == NULL) return fail("out of memory");
  memcpy(pool, words, (size_t)n_words * sizeof(int64_t));
  free(s->pool);
  s->pool = pool;
  s->n_pool = n_words;
  for (int i = 0; i < 4; ++i) s->shim_args[i] = ids[i];
  s->shim = (int)shim;
  s->extern_mode = EXTERN_TYPED_SHIM;
  return 0;
}

/* Extern step `step` (convolution or convolution_backward) runs through its typed C shim `shim`
 * (TCCD_SHIM_CONVOLUTION*): `ids` are input, weight, bias (-1: None) for the forward,
 * grad_output, input, weight for the backward; `words` as tccd_plan_format.h lays them out. */
EXPORT int tccd_plan_bind_typed_shim(TccdPlan* p, int64_t step, int64_t shim, const int64_t* ids,
                                     int64_t n_words, const int64_t* words) {
  Step* s = extern_step(p, step);
  if (s == NULL) return -1;
  if (shim == TCCD_SHIM_COPY) {
    if (s->n_out != 1 || n_words != 1)
      return fail("step %ld: copy_ has one output and one word", (long)step);
    for (int i = 0; i < 2; ++i) {
      if (ids[i] < 0 || ids[i] >= p->num_values)
        return fail("step %ld reads value %ld", (long)step, (long)ids[i]);
      s->shim_args[i] = ids[i];
    }
    s->conv_transposed = words[0] != 0; /* non_blocking */
    s->shim = (int)shim;
    s->extern_mode = EXTERN_TYPED_SHIM;
    return 0;
  }
  if (shim == TCCD_SHIM_SDPA_FLASH || shim == TCCD_SHIM_SDPA_CUDNN)
    return bind_attention_shim(p, s, step, shim, ids, n_words, words);
  const int backward = shim == TCCD_SHIM_CONVOLUTION_BACKWARD;
  if (shim != TCCD_SHIM_CONVOLUTION && !backward)
    return fail("step %ld: conv shim %ld", (long)step, (long)shim);
  if (backward ? s->n_out < 1 || s->n_out > 3 : s->n_out != 1 || s->out[0] < 0)
    return fail("step %ld: %ld outputs for a convolution shim", (long)step, (long)s->n_out);
  for (int i = 0; i < 3; ++i) {
    if (ids[i] >= p->num_values || ids[i] < (!backward && i == 2 ? -1 : 0))
      return fail("step %ld reads value %ld", (long)step, (long)ids[i]);
  }
  /* The shim's device is its first tensor's (the plan's values carry it). */
  if (shim_fn(p->values[ids[0]].device_type, (int)shim) == NULL)
    return fail("step %ld: this torch has no C shim for it", (long)step);
  int64_t at = 0, list[5] = {-1, -1, -1, -1, -1};
#define TAKE_LIST(k)                                                    \
  do {                                                                  \
    if (at >= n_words || words[at] < 0 || words[at] > n_words - at - 1) \
      return fail("step %ld: malformed convolution words", (long)step); \
    list[k] = at;                                                       \
    at += 1 + words[at];                                                \
  } while (0)
  TAKE_LIST(0); /* stride */
  TAKE_LIST(1); /* padding */
  TAKE_LIST(2); /* dilation */
  if (at >= n_words) return fail("step %ld: malformed convolution words", (long)step);
  const int64_t transposed = words[at++];
  TAKE_LIST(3); /* output_padding */
  if (at >= n_words) return fail("step %ld: malformed convolution words", (long)step);
  const int64_t groups = words[at++];
  int32_t mask[3] = {1, 0, 0};
  if (backward) {
    if (at >= n_words) return fail("step %ld: malformed convolution words", (long)step);
    const int64_t has_bias_sizes = words[at++];
    TAKE_LIST(4);
    if (!has_bias_sizes) list[4] = -1;
    if (at + 3 != n_words) return fail("step %ld: malformed convolution words", (long)step);
    for (int i = 0; i < 3; ++i) {
      mask[i] = words[at + i] != 0;
      /* An output the plan reads must be computed: a false mask leaves it undefined. */
      if (i < s->n_out && s->out[i] >= 0 && !mask[i])
        return fail("step %ld: output %d is read but masked off", (long)step, i);
    }
  } else if (at != n_words) {
    return fail("step %ld: malformed convolution words", (long)step);
  }
#undef TAKE_LIST
  int64_t* pool = malloc((size_t)(n_words ? n_words : 1) * sizeof(int64_t));
  if (pool == NULL) return fail("out of memory");
  memcpy(pool, words, (size_t)n_words * sizeof(int64_t));
  free(s->pool);
  s->pool = pool;
  s->n_pool = n_words;
  memcpy(s->conv_list, list, sizeof(list));
  memcpy(s->conv_mask, mask, sizeof(mask));
  s->conv_transposed = transposed != 0;
  s->conv_groups = groups;
  for (int i = 0; i < 3; ++i) s->shim_args[i] = ids[i];
  s->shim = (int)shim;
  s->extern_mode = EXTERN_TYPED_SHIM;
  return 0;
}

/* Extern step `step` (aten::arange with SymInt bounds: Scalars no dispatcher carries) is
 * computed here: `words` holds (is_expr, v) for start, end and step (v an int, or with is_expr
 * an expression index). Integral outputs only (their values are exact: start + i * step). */
EXPORT int tccd_plan_bind_arange(TccdPlan* p, int64_t step, const int64_t* words) {
  Step* s = extern_step(p, step);
  if (s == NULL) return -1;
  if (s->n_out != 1 || s->out[0] < 0) return fail("step %ld: arange has one output", (long)step);
  const ValueMeta* m = &p->values[s->out[0]];
  if ((m->dtype != TCCD_C10_INT64 && m->dtype != TCCD_C10_INT32) || m->rank != 1)
    return fail("step %ld: arange into dtype %d, rank %d", (long)step, m->dtype, m->rank);
  for (int i = 0; i < 3; ++i) {
    if (words[2 * i] && (words[2 * i + 1] < 0 || words[2 * i + 1] >= p->n_exprs))
      return fail("step %ld: arange names expression %ld", (long)step, (long)words[2 * i + 1]);
    s->arange[2 * i] = words[2 * i];
    s->arange[2 * i + 1] = words[2 * i + 1];
  }
  if (!s->arange[4] && s->arange[5] == 0) return fail("step %ld: arange with step 0", (long)step);
  s->extern_mode = EXTERN_ARANGE;
  return 0;
}

/* Extern step `step`, already bound to the dispatcher, is a view of value `base` (view, t,
 * transpose, ...): made from the declared metadata where the base's layout is the declared one. */
EXPORT int tccd_plan_bind_view(TccdPlan* p, int64_t step, int64_t base) {
  Step* s = extern_step(p, step);
  if (s == NULL) return -1;
  if (s->extern_mode != EXTERN_DISPATCHER)
    return fail("step %ld: bind the dispatcher first", (long)step);
  if (s->n_out != 1 || s->out[0] < 0 || base < 0 || base >= p->num_values)
    return fail("step %ld: not a view", (long)step);
  const ValueMeta* b = &p->values[base];
  const ValueMeta* o = &p->values[s->out[0]];
  /* Symbolic metas too: try_view resolves both at each call (the declared output is what the op
   * computes from the declared base for every size the guards allow). */
  if (b->dtype < 0 || b->dtype != o->dtype || b->device_type != o->device_type)
    return fail("step %ld: not a view of the same dtype", (long)step);
  s->alias_base = base;
  s->view_fast = 1;
  return 0;
}

EXPORT int tccd_plan_bind_python_extern(TccdPlan* p, int64_t step, int64_t n_refs,
                                        const int64_t* ids) {
  Step* s = extern_step(p, step);
  if (s == NULL) return -1;
  for (int64_t i = 0; i < n_refs; ++i) {
    if (ids[i] < 0 || ids[i] >= p->num_values)
      return fail("step %ld reads value %ld", (long)step, (long)ids[i]);
  }
  s->refs = malloc((size_t)(n_refs ? n_refs : 1) * sizeof(int64_t));
  memcpy(s->refs, ids, (size_t)n_refs * sizeof(int64_t));
  s->n_refs = n_refs;
  s->extern_mode = EXTERN_PYTHON;
  return 0;
}

/* The step defining value `id` through allocate() (a kernel's or segment's output not written
 * into a graph input, an out shim's output), or -1. */
static int64_t allocating_step(const TccdPlan* p, int64_t id) {
  for (int64_t index = 0; index < p->num_steps; ++index) {
    const Step* s = &p->steps[index];
    for (int64_t o = 0; o < s->n_out; ++o) {
      if (s->out[o] != id) continue;
      if (s->kind == TCCD_STEP_SEGMENT ||
          (s->kind == TCCD_STEP_KERNEL && (s->abi == TCCD_ABI_CPU || s->abi == TCCD_ABI_CUDA) &&
           s->layout != TCCD_LAYOUT_OWN))
        return s->into && s->into[o] >= 0 ? -1 : index;
      if (s->kind == TCCD_STEP_EXTERN && s->extern_mode == EXTERN_OUT_SHIM &&
          s->shim != TCCD_SHIM_ADD_TENSOR && o == 0)
        return index;
      return -1;
    }
  }
  return -1;
}

/* The bytes value `id` spans from its storage's start (allocate gives it a storage of its own
 * at offset 0); 0 for an empty value. */
static int64_t value_bytes(const ValueMeta* m) {
  int64_t last = 0;
  for (int d = 0; d < m->rank; ++d) {
    if (m->sizes[d] == 0) return 0;
    last += (m->sizes[d] - 1) * m->strides[d];
  }
  return (last + 1) * arena_item_size(m->dtype);
}

EXPORT int64_t tccd_plan_enable_arena(TccdPlan* p, int64_t n, const int64_t* ids) {
  if (p->arena_group != NULL) return fail("tccd plan: the arena is already enabled");
  if (p->n_exprs > 0 || p->num_symbols > 0) return 0; /* sizes vary per call */
  const int64_t nv = p->num_values, ns = p->num_steps;
  int32_t* group = malloc(sizeof(int32_t) * (size_t)(nv ? nv : 1));
  int64_t* offset = calloc((size_t)(nv ? nv : 1), sizeof(int64_t));
  int64_t* ws = malloc(sizeof(int64_t) * (size_t)(ns ? ns : 1));
  /* Per buffer (values, then workspaces): bytes, live interval, group, where it goes. */
  const int64_t cap = n + ns;
  int64_t* bytes = malloc(sizeof(int64_t) * (size_t)(cap ? cap : 1));
  int64_t* start = malloc(sizeof(int64_t) * (size_t)(cap ? cap : 1));
  int64_t* end = malloc(sizeof(int64_t) * (size_t)(cap ? cap : 1));
  int64_t* owner = malloc(sizeof(int64_t) * (size_t)(cap ? cap : 1)); /* id, or -(step + 1) */
  int64_t* at = malloc(sizeof(int64_t) * (size_t)(cap ? cap : 1));
  int32_t* of = malloc(sizeof(int32_t) * (size_t)(cap ? cap : 1));
  int64_t* released = malloc(sizeof(int64_t) * (size_t)(nv ? nv : 1));
  int64_t total = 0, m = 0;
  int n_groups = 0, ws_group = -1;
  ArenaGroup groups[MAX_ARENAS];
  if (!group || !offset || !ws || !bytes || !start || !end || !owner || !at || !of || !released) {
    total = fail("out of memory");
    goto out;
  }
  for (int64_t i = 0; i < nv; ++i) group[i] = -1, released[i] = ns;
  for (int64_t i = 0; i < ns; ++i) ws[i] = -1;
  /* A value never released lives to the call's end (the runtime drops it there). */
  for (int64_t index = 0; index < ns; ++index)
    for (int64_t r = 0; r < p->steps[index].n_release; ++r)
      released[p->steps[index].release[r]] = index;
  for (int64_t k = 0; k < cap; ++k) {
    int32_t dtype, device_type;
    if (k < n) {
      const int64_t id = ids[k];
      if (id < p->num_inputs || id >= nv) continue;
      const ValueMeta* meta = &p->values[id];
      const int64_t def = allocating_step(p, id);
      if (def < 0 || meta->symbolic || meta->offset != 0 || arena_item_size(meta->dtype) == 0 ||
          value_bytes(meta) == 0 || released[id] < def)
        continue;
      dtype = meta->dtype, device_type = meta->device_type;
      bytes[m] = value_bytes(meta), start[m] = def, end[m] = released[id], owner[m] = id;
    } else {
      const int64_t index = k - n;
      const Step* s = &p->steps[index];
      if (s->kind != TCCD_STEP_SEGMENT || s->workspace_bytes <= 0) continue;
      dtype = TCCD_C10_UINT8, device_type = TCCD_C10_DEVICE_CUDA;
      bytes[m] = s->workspace_bytes, start[m] = index, end[m] = index, owner[m] = -(index + 1);
    }
    int g = 0;
    while (g < n_groups && (groups[g].dtype != dtype || groups[g].device_type != device_type)) ++g;
    if (g == n_groups) {
      if (n_groups == MAX_ARENAS) continue;
      groups[n_groups++] = (ArenaGroup){dtype, device_type, 0};
    }
    of[m++] = g;
  }
  /* Each group packed on its own (first fit in definition order), into the shared arrays. */
  int64_t* g_bytes = malloc(sizeof(int64_t) * (size_t)(m ? m : 1));
  int64_t* g_start = malloc(sizeof(int64_t) * (size_t)(m ? m : 1));
  int64_t* g_end = malloc(sizeof(int64_t) * (size_t)(m ? m : 1));
  int64_t* g_at = malloc(sizeof(int64_t) * (size_t)(m ? m : 1));
  int64_t* order = malloc(sizeof(int64_t) * (size_t)(m ? m : 1));
  for (int g = 0; g < n_groups && total >= 0; ++g) {
    int64_t k = 0;
    if (!g_bytes || !g_start || !g_end || !g_at || !order) {
      total = fail("out of memory");
      break;
    }
    /* Definition order: by start step, workspaces (defined and dead within their step) last
     * among equals. */
    for (int64_t j = 0; j < m; ++j)
      if (of[j] == g) order[k++] = j;
    for (int64_t a = 1; a < k; ++a) {
      const int64_t v = order[a];
      int64_t b = a;
      while (b > 0 && start[order[b - 1]] > start[v]) order[b] = order[b - 1], --b;
      order[b] = v;
    }
    for (int64_t j = 0; j < k; ++j)
      g_bytes[j] = bytes[order[j]], g_start[j] = start[order[j]], g_end[j] = end[order[j]];
    const int64_t size = tccd_arena_pack(k, g_bytes, g_start, g_end, ARENA_ALIGN, g_at);
    if (size < 0) {
      total = fail("out of memory");
      break;
    }
    for (int64_t j = 0; j < k; ++j) at[order[j]] = g_at[j];
    groups[g].bytes = size;
    total += size;
  }
  free(g_bytes), free(g_start), free(g_end), free(g_at), free(order);
  if (total < 0) goto out;
  /* A group of one buffer would still be one allocation per call, and a view besides: its
   * buffer is allocated on its own as before. */
  int members[MAX_ARENAS] = {0};
  for (int64_t j = 0; j < m; ++j) ++members[of[j]];
  for (int g = 0; g < n_groups; ++g) {
    if (members[g] >= 2) continue;
    total -= groups[g].bytes;
    groups[g].bytes = 0;
  }
  for (int64_t j = 0; j < m; ++j) {
    const int g = of[j];
    if (members[g] < 2) continue;
    if (owner[j] >= 0) {
      group[owner[j]] = g;
      offset[owner[j]] = at[j] / arena_item_size(groups[g].dtype);
    } else {
      ws[-owner[j] - 1] = at[j];
      ws_group = g;
    }
  }
  p->n_arenas = n_groups;
  memcpy(p->arenas, groups, sizeof(ArenaGroup) * (size_t)n_groups);
  p->arena_group = group, p->arena_offset = offset, p->ws_offset = ws, p->ws_group = ws_group;
  group = NULL, offset = NULL, ws = NULL;
out:
  free(group), free(offset), free(ws), free(bytes), free(start), free(end), free(owner);
  free(at), free(of), free(released);
  return total;
}

/* A kernel step that takes every operand's own strides from its pointer and meta alone (a
 * symbolic plan's sized kernel or gemm): it may read and define segment values. */
static int seg_kernel(const Step* s) {
  return s->kind == TCCD_STEP_KERNEL &&
         (s->abi == TCCD_ABI_CUDA_SYM_GEMM ||
          (s->layout == TCCD_LAYOUT_OWN &&
           (s->abi == TCCD_ABI_CUDA_SYM || s->abi == TCCD_ABI_CPU_SYM)));
}

static int seg_view(const Step* s) {
  return s->kind == TCCD_STEP_EXTERN && s->view_fast && s->n_out == 1 && s->out[0] >= 0;
}

/* Clears the segment flags that break a rule; 1 when one was cleared (run to a fixed point). */
static int seg_prune(TccdPlan* p, unsigned char* seg) {
  int changed = 0;
  for (int64_t index = 0; index < p->num_steps; ++index) {
    const Step* s = &p->steps[index];
    if (seg_view(s)) {
      const int64_t base = s->alias_base, out = s->out[0];
      /* A view of a tensor is a tensor; a tensor view of a segment value needs its base. */
      if (seg[out] && !seg[base]) seg[out] = SEG_NONE, changed = 1;
      if (seg[base] && !seg[out]) seg[base] = SEG_NONE, changed = 1;
      continue;
    }
    for (int64_t i = 0; i < s->n_in; ++i) {
      const int64_t v = s->in[i];
      if (v < 0 || !seg[v]) continue;
      /* Only sized kernels and gemms read pointers; a gemm's operand must be 16-byte aligned,
       * which a root is (ARENA_ALIGN) and a view is where its offset is static and aligned. */
      int ok = seg_kernel(s);
      if (ok && s->abi == TCCD_ABI_CUDA_SYM_GEMM && seg[v] == SEG_VIEW) {
        const ValueMeta* m = &p->values[v];
        ok = m->offset >= 0 && (m->offset * arena_item_size(m->dtype)) % 16 == 0;
      }
      if (!ok) seg[v] = SEG_NONE, changed = 1;
    }
    if (s->kind == TCCD_STEP_ALIAS && s->alias_base >= 0 && seg[s->alias_base])
      seg[s->alias_base] = SEG_NONE, changed = 1;
  }
  return changed;
}

/* `one_workspace`: every root in one segment (one workspace per call, packed by lifetime over
 * the whole run of roots: see tccd_plan_enable_symbolic_segments_one_workspace). */
static int64_t enable_symbolic_segments(TccdPlan* p, int64_t n, const int64_t* ids,
                                        int one_workspace) {
  if (p->seg != NULL) return fail("tccd plan: symbolic segments are already enabled");
  const int64_t nv = p->num_values, ns = p->num_steps;
  unsigned char* want = calloc((size_t)(nv ? nv : 1), 1);
  unsigned char* seg = calloc((size_t)(nv ? nv : 1), 1);
  int64_t* root = malloc(sizeof(int64_t) * (size_t)(nv ? nv : 1));
  int64_t* def = malloc(sizeof(int64_t) * (size_t)(nv ? nv : 1));
  int64_t* rel = malloc(sizeof(int64_t) * (size_t)(nv ? nv : 1));
  int64_t* roots = malloc(sizeof(int64_t) * (size_t)(nv ? nv : 1));
  int64_t* start = malloc(sizeof(int64_t) * (size_t)(nv ? nv : 1));
  int64_t* end = malloc(sizeof(int64_t) * (size_t)(nv ? nv : 1));
  int64_t* vend = malloc(sizeof(int64_t) * (size_t)(nv ? nv : 1));
  int64_t* comp_of = malloc(sizeof(int64_t) * (size_t)(nv ? nv : 1));
  int64_t* comp_first = malloc(sizeof(int64_t) * (size_t)(nv + 1));
  int64_t* comp_last = malloc(sizeof(int64_t) * (size_t)(nv ? nv : 1));
  int64_t count_seg = 0, n_roots = 0, n_comps = 0;
  int32_t device_type = -1;
  if (!want || !seg || !root || !def || !rel || !roots || !start || !end || !vend || !comp_of ||
      !comp_first || !comp_last) {
    count_seg = fail("out of memory");
    goto out;
  }
  for (int64_t k = 0; k < n; ++k)
    if (ids[k] >= p->num_inputs && ids[k] < nv) want[ids[k]] = 1;
  for (int64_t i = 0; i < p->num_ref_outputs; ++i) want[p->output_refs[i]] = 0;
  for (int64_t v = 0; v < nv; ++v) root[v] = -1, def[v] = -1, rel[v] = ns - 1;
  for (int64_t index = 0; index < ns; ++index) {
    const Step* s = &p->steps[index];
    for (int64_t r = 0; r < s->n_release; ++r) rel[s->release[r]] = index;
    for (int64_t o = 0; o < s->n_out; ++o) {
      const int64_t v = s->out[o];
      if (v < 0) continue;
      def[v] = index;
      if (!want[v]) continue;
      if (seg_kernel(s)) {
        const ValueMeta* m = &p->values[v];
        if ((s->into && s->into[o] >= 0) || (s->gather && s->gather[s->n_in + o]) ||
            arena_item_size(m->dtype) == 0 || m->offset != 0)
          continue;
        if (device_type < 0) device_type = m->device_type;
        if (m->device_type != device_type) continue;
        seg[v] = SEG_ROOT, root[v] = v;
      } else if (seg_view(s) && seg[s->alias_base]) {
        seg[v] = SEG_VIEW, root[v] = root[s->alias_base];
      }
    }
  }
  /* A value a later step writes into (Step.into) stays a tensor: that step binds it. */
  for (int64_t index = 0; index < ns; ++index) {
    const Step* s = &p->steps[index];
    for (int64_t o = 0; s->into && o < s->n_out; ++o)
      if (s->into[o] >= 0) seg[s->into[o]] = SEG_NONE;
  }
  while (seg_prune(p, seg)) {
  }
  /* A root's bytes are live from its definition to the last read of it or of a view of it. */
  for (int64_t v = 0; v < nv; ++v) vend[v] = -1;
  for (int64_t v = 0; v < nv; ++v)
    if (seg[v] && rel[v] > vend[root[v]]) vend[root[v]] = rel[v];
  for (int64_t index = 0; index < ns; ++index) {
    const Step* s = &p->steps[index];
    for (int64_t o = 0; o < s->n_out; ++o) {
      const int64_t v = s->out[o];
      if (v < 0 || !seg[v]) continue;
      ++count_seg;
      if (seg[v] != SEG_ROOT) continue;
      roots[n_roots] = v, start[n_roots] = index, end[n_roots] = vend[v] < index ? index : vend[v];
      /* A new segment where every earlier root is dead (roots come in definition order). */
      if (n_comps == 0 || (!one_workspace && index > comp_last[n_comps - 1])) {
        comp_first[n_comps] = n_roots, comp_last[n_comps] = end[n_roots];
        ++n_comps;
      } else if (end[n_roots] > comp_last[n_comps - 1]) {
        comp_last[n_comps - 1] = end[n_roots];
      }
      comp_of[v] = n_comps - 1;
      ++n_roots;
    }
  }
  if (n_roots == 0) goto out; /* nothing to do: the plan runs as before */
  comp_first[n_comps] = n_roots;
  for (int64_t v = 0; v < nv; ++v)
    if (seg[v] == SEG_VIEW) comp_of[v] = comp_of[root[v]];
  p->seg = seg, p->seg_root = root, p->seg_roots = roots, p->seg_start = start, p->seg_end = end;
  p->seg_comp_of = comp_of, p->seg_comp_first = comp_first, p->seg_comp_last = comp_last;
  p->n_seg_roots = n_roots, p->n_seg_comps = n_comps, p->seg_device_type = device_type;
  seg = NULL, root = NULL, roots = NULL, start = NULL, end = NULL;
  comp_of = NULL, comp_first = NULL, comp_last = NULL;
out:
  free(want), free(seg), free(root), free(def), free(rel), free(roots), free(start), free(end);
  free(vend), free(comp_of), free(comp_first), free(comp_last);
  return count_seg;
}

EXPORT int64_t tccd_plan_enable_symbolic_segments(TccdPlan* p, int64_t n, const int64_t* ids) {
  return enable_symbolic_segments(p, n, ids, 0);
}

/* As tccd_plan_enable_symbolic_segments, but every segment value's root lives in one workspace
 * per call, allocated at the first root's definition and dropped after the last read of any:
 * roots whose lifetimes do not overlap share bytes (tccd_arena_pack), so it is about the
 * largest segment's size, held across the gaps between segments where the segment-per-
 * workspace form gives the bytes back. What it saves is host time: one allocation and one
 * release per call instead of one per segment (a symbolic forward of the dynamic bench has
 * five segments at ~2.5 us of the caching allocator each way). Optional: clients look it up. */
EXPORT int64_t tccd_plan_enable_symbolic_segments_one_workspace(TccdPlan* p, int64_t n,
                                                                const int64_t* ids) {
  return enable_symbolic_segments(p, n, ids, 1);
}

/* Turns on the per-size output cache of sized kernel step `step` (Step.sized_cache): the
 * caller (NativePlan.share_saved_sized_aranges) has checked that only kernels, views and the
 * forward's saved outputs read its value, which nothing writes, so one tensor per size may be
 * handed out to every call. Refused (-1) unless the step is a kernel with run-time sizes, no
 * input and one output. */
EXPORT int tccd_plan_cache_sized_output(TccdPlan* p, int64_t step) {
  if (step < 0 || step >= p->num_steps) return fail("cache_sized_output: no step %ld", (long)step);
  Step* s = &p->steps[step];
  if (s->kind != TCCD_STEP_KERNEL || s->layout != TCCD_LAYOUT_OWN || s->n_in != 0 ||
      s->n_out != 1 || (s->abi != TCCD_ABI_CUDA_SYM && s->abi != TCCD_ABI_CPU_SYM))
    return fail("cache_sized_output: step %ld is not a sized kernel without inputs", (long)step);
  if (s->sized_cache != NULL) return 0;
  s->sized_cache = (SizedCacheEntry*)calloc(SIZED_CACHE_ENTRIES, sizeof(SizedCacheEntry));
  if (s->sized_cache == NULL) return fail("cache_sized_output: out of memory");
  s->n_sized_cache = SIZED_CACHE_ENTRIES;
  return 0;
}

/* How many sizes step `step` keeps (tccd_plan_cache_sized_output), or -1 (no such cache). */
EXPORT int64_t tccd_plan_sized_cache_entries(TccdPlan* p, int64_t step) {
  if (step < 0 || step >= p->num_steps || p->steps[step].sized_cache == NULL) return -1;
  int64_t n = 0;
  pthread_mutex_lock(&g_sized_cache_mu);
  for (int64_t i = 0; i < p->steps[step].n_sized_cache; ++i)
    n += p->steps[step].sized_cache[i].handle != NULL;
  pthread_mutex_unlock(&g_sized_cache_mu);
  return n;
}

EXPORT int64_t tccd_plan_num_inputs(const TccdPlan* p) { return p->num_inputs; }
EXPORT int64_t tccd_plan_num_symbols(const TccdPlan* p) { return p->num_symbols; }
EXPORT int64_t tccd_plan_num_exprs(const TccdPlan* p) { return p->n_exprs; }
EXPORT const char* tccd_plan_expr_text(const TccdPlan* p, int64_t k) {
  return k >= 0 && k < p->n_exprs ? p->expr_text[k] : NULL;
}
EXPORT int64_t tccd_plan_num_ref_outputs(const TccdPlan* p) { return p->num_ref_outputs; }
EXPORT int64_t tccd_plan_num_unbound(const TccdPlan* p) {
  int64_t n = 0;
  for (int64_t i = 0; i < p->num_steps; ++i)
    n += p->steps[i].kind == TCCD_STEP_EXTERN && p->steps[i].extern_mode == EXTERN_UNBOUND;
  return n;
}

/* ------------------------------------------------------------------------------------------ */
/* Running                                                                                     */
/* ------------------------------------------------------------------------------------------ */

typedef struct {
  TccdPlan* p;
  void** env;          /* owned handles, by value id */
  const int64_t* expr; /* every expression's value at this call (symbolic plans) */
  /* cuBLASLt's scratch for the call's sized gemms (run_gemm_sized): allocated at the first one,
   * shared by the rest (they run in order on one stream), dropped when the call ends. */
  void* gemm_ws;
  int32_t gemm_ws_device;
  int profiled; /* this run counts into the plan's profile */
  /* The current stream of `stream_device` (-1: none looked up yet), looked up at the first
   * launch of the call: nothing a step does changes the current stream. */
  void* stream;
  int32_t stream_device;
  /* The call's arena buffers by group (NULL until a value is carved from one), the device
   * each was allocated on, and its data pointer. */
  void* arena[MAX_ARENAS];
  int32_t arena_device[MAX_ARENAS];
  char* arena_data[MAX_ARENAS];
  /* Profiled runs only: the current step's time in call_cuda and in allocations so far. */
  int64_t step_launch_ns, step_alloc_ns;
  /* Symbolic segments (NULL without): per segment its workspace (allocated at its first root's
   * definition, dropped after its last step) and whether it is packed at this call; per value
   * a root's storage in it; the next segment to drop. One allocation (seg_storage's). */
  void** seg_ws;
  unsigned char* seg_ready;
  char** seg_storage;
  int64_t seg_next_drop;
} Run;

static int64_t now_ns(void);

static inline void count(Run* run, int c) {
  if (run->profiled) __atomic_fetch_add(&run->p->prof_count[c], 1, __ATOMIC_RELAXED);
}

/* A dim word's value at this call. */
static inline int64_t dimv(const Run* run, int64_t w) { return w >= 0 ? w : run->expr[-(w + 1)]; }

/* Value `id`'s meta with every dim word resolved: the plan's own for a static value, else
 * `tmp` filled in from this call's expressions. */
static const ValueMeta* meta_of(const Run* run, int64_t id, ValueMeta* tmp) {
  const ValueMeta* m = &run->p->values[id];
  if (!m->symbolic) return m;
  *tmp = *m;
  for (int d = 0; d < m->rank; ++d) {
    tmp->sizes[d] = dimv(run, m->sizes[d]);
    tmp->strides[d] = dimv(run, m->strides[d]);
  }
  tmp->offset = dimv(run, m->offset);
  tmp->symbolic = 0;
  return tmp;
}

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* Binds the symbols (inputs' sizes and strides, then nothing else: `given` holds the caller's
 * values, INT64_MIN where it gave none, and the bindings override it as runtime.py does) and
 * evaluates every expression into `out`. */
static int eval_exprs(const TccdPlan* p, void** inputs, int64_t n_given, const int64_t* given,
                      int64_t* out) {
  int64_t sym[p->num_symbols ? p->num_symbols : 1];
  for (int64_t i = 0; i < p->num_symbols; ++i) sym[i] = i < n_given ? given[i] : INT64_MIN;
  for (int64_t b = 0; b < p->n_bindings; ++b) {
    const Binding* x = &p->bindings[b];
    int64_t dim = 0, *v = NULL;
    if (t_aoti_torch_get_dim(inputs[x->input], &dim) != 0 || x->dim >= dim)
      return fail("tccd plan: input %ld has no dim %ld (it binds s%ld)", (long)x->input,
                  (long)x->dim, (long)x->symbol);
    if ((x->part == 0 ? t_aoti_torch_get_sizes : t_aoti_torch_get_strides)(inputs[x->input], &v) !=
        0)
      return fail("tccd plan: reading input %ld failed", (long)x->input);
    sym[x->symbol] = v[x->dim];
  }
  int64_t stack[p->max_stack ? p->max_stack : 1];
  for (int64_t k = 0; k < p->n_exprs; ++k) {
    const int64_t* ops = p->expr_ops[k];
    int64_t top = 0;
    for (int64_t i = 0; i < p->expr_len[k]; ++i) {
      int64_t op = ops[i];
      if (op == TCCD_EXPR_CONST) {
        stack[top++] = ops[++i];
        continue;
      }
      if (op == TCCD_EXPR_SYM) {
        int64_t v = sym[ops[++i]];
        if (v == INT64_MIN)
          return fail("tccd plan: %s: no input size binds s%ld", p->expr_text[k], (long)ops[i]);
        stack[top++] = v;
        continue;
      }
      int64_t b = stack[--top], a = stack[top - 1], r = 0;
      int overflow = 0;
      switch (op) {
        case TCCD_EXPR_ADD:
          overflow = __builtin_add_overflow(a, b, &r);
          break;
        case TCCD_EXPR_MUL:
          overflow = __builtin_mul_overflow(a, b, &r);
          break;
        case TCCD_EXPR_FLOORDIV:
        case TCCD_EXPR_MOD:
          if (b == 0) return fail("tccd plan: %s divides by zero", p->expr_text[k]);
          if (a == INT64_MIN && b == -1)
            overflow = 1;
          else
            r = op == TCCD_EXPR_FLOORDIV ? floor_div(a, b) : a - floor_div(a, b) * b;
          break;
        case TCCD_EXPR_MAX:
          r = a > b ? a : b;
          break;
        case TCCD_EXPR_MIN:
          r = a < b ? a : b;
          break;
        case TCCD_EXPR_POW:
          if (b < 0) return fail("tccd plan: %s: negative exponent", p->expr_text[k]);
          r = 1;
          /* |a| >= 2 overflows within 64 steps; 0, 1 and -1 need no loop. */
          if (a == 0)
            r = b == 0 ? 1 : 0;
          else if (a == 1)
            r = 1;
          else if (a == -1)
            r = (b % 2) ? -1 : 1;
          else
            for (int64_t e = 0; e < b && !overflow; ++e)
              overflow = __builtin_mul_overflow(r, a, &r);
          break;
      }
      if (overflow) return fail("tccd plan: %s overflows int64", p->expr_text[k]);
      stack[top - 1] = r;
    }
    out[k] = stack[0];
  }
  return 0;
}

static void drop(void** h) {
  if (*h != NULL) {
    (void)t_aoti_torch_delete_tensor_object(
        *h); /* deliberately ignored: nothing to do on failure */
    *h = NULL;
  }
}

static int get(Run* run, int64_t step, int64_t id, void** out) {
  *out = run->env[id];
  if (*out == NULL)
    return fail("tccd plan step %ld: value %ld is not defined", (long)step, (long)id);
  return 0;
}

/* Bytes per element of a dtype an arena may hold; 0 for the others (their values are
 * allocated on their own). */
static int64_t arena_item_size(int32_t dtype) {
  switch (dtype) {
    case TCCD_C10_UINT8:
    case TCCD_C10_INT8:
    case TCCD_C10_BOOL:
      return 1;
    case TCCD_C10_COMPLEX64:
      return 8;
    case TCCD_C10_COMPLEX128:
      return 16;
    default:
      return item_size(dtype) > 1 ? item_size(dtype) : 0;
  }
}

/* Group g's buffer for this call on `device`, allocated at its first use; NULL when the call's
 * buffer lives on another device or cannot be allocated (the caller then allocates on its own:
 * the arena is an optimisation, never a new way to fail). */
static void* arena_buffer(Run* run, int g, int32_t device) {
  const ArenaGroup* a = &run->p->arenas[g];
  if (run->arena[g] != NULL) return run->arena_device[g] == device ? run->arena[g] : NULL;
  int64_t size = a->bytes / arena_item_size(a->dtype), stride = 1;
  int32_t index = a->device_type == TCCD_C10_DEVICE_CPU ? 0 : device;
  void* data = NULL;
  count(run, COUNT_ALLOC);
  if (t_aoti_torch_empty_strided(1, &size, &stride, a->dtype, a->device_type, index,
                                 &run->arena[g]) != 0 ||
      t_aoti_torch_get_data_ptr(run->arena[g], &data) != 0) {
    drop(&run->arena[g]);
    return NULL;
  }
  run->arena_device[g] = device;
  run->arena_data[g] = data;
  return run->arena[g];
}

/* `device`: the step's device index (device_of), used where the plan leaves the index unset
 * (plans are shared by every rank, so CUDA values usually carry -1). */
static int allocate(Run* run, int64_t step, int64_t id, int32_t device) {
  ValueMeta tmp;
  const ValueMeta* m = meta_of(run, id, &tmp);
  drop(&run->env[id]);
  const int g = run->p->arena_group ? run->p->arena_group[id] : -1;
  if (g >= 0) {
    /* A view of the group's buffer at the value's packed offset: no allocation, and its
     * bytes go back to the arena (not the allocator) when the value is released. */
    void* arena = arena_buffer(run, g, device);
    if (arena != NULL &&
        t_aoti_torch__reinterpret_tensor(arena, m->rank, m->sizes, m->strides,
                                         run->p->arena_offset[id], &run->env[id]) == 0) {
      count(run, COUNT_ARENA);
      return 0;
    }
  }
  count(run, COUNT_ALLOC);
  int32_t index = m->device_type == TCCD_C10_DEVICE_CPU ? m->device_index : device;
  const int64_t start = run->profiled ? now_ns() : 0;
  const int rc = t_aoti_torch_empty_strided(m->rank, m->sizes, m->strides, m->dtype, m->device_type,
                                            index, &run->env[id]);
  if (run->profiled) run->step_alloc_ns += now_ns() - start;
  if (rc != 0) return fail("tccd plan step %ld: allocating value %ld failed", (long)step, (long)id);
  return 0;
}

/* Symbolic segments: packs segment c's roots by lifetime at this call's sizes and allocates its
 * workspace (at its first root's definition). */
static int seg_prepare(Run* run, int64_t step, int64_t c, int32_t device) {
  const TccdPlan* p = run->p;
  const int64_t first = p->seg_comp_first[c], n = p->seg_comp_first[c + 1] - first;
  int64_t bytes[n], at[n];
  for (int64_t k = 0; k < n; ++k) {
    ValueMeta tmp;
    bytes[k] = value_bytes(meta_of(run, p->seg_roots[first + k], &tmp));
  }
  const int64_t size =
      tccd_arena_pack(n, bytes, p->seg_start + first, p->seg_end + first, ARENA_ALIGN, at);
  if (size < 0) return fail("out of memory");
  char* data = NULL;
  if (size > 0) {
    int64_t stride = 1, numel = size;
    const int32_t index = p->seg_device_type == TCCD_C10_DEVICE_CPU ? 0 : device;
    count(run, COUNT_WORKSPACE);
    const int64_t start = run->profiled ? now_ns() : 0;
    if (t_aoti_torch_empty_strided(1, &numel, &stride, TCCD_C10_UINT8, p->seg_device_type, index,
                                   &run->seg_ws[c]) != 0 ||
        t_aoti_torch_get_data_ptr(run->seg_ws[c], (void**)&data) != 0) {
      drop(&run->seg_ws[c]);
      return fail("tccd plan step %ld: allocating %ld bytes of segment workspace failed",
                  (long)step, (long)size);
    }
    if (run->profiled) run->step_alloc_ns += now_ns() - start;
  }
  for (int64_t k = 0; k < n; ++k)
    run->seg_storage[p->seg_roots[first + k]] = data != NULL ? data + at[k] : NULL;
  run->seg_ready[c] = 1;
  return 0;
}

static inline int is_seg(const Run* run, int64_t id) {
  return run->p->seg != NULL && id >= 0 && run->p->seg[id];
}

/* A segment value's data at this call (*out): its root's storage at the value's declared
 * offset, in the root's dtype (a view has its base's: tccd_plan_bind_view), as packed. */
static int seg_data(Run* run, int64_t step, int64_t id, int32_t device, void** out) {
  const TccdPlan* p = run->p;
  const int64_t c = p->seg_comp_of[id];
  if (!run->seg_ready[c] && seg_prepare(run, step, c, device) != 0) return -1;
  char* base = run->seg_storage[p->seg_root[id]];
  const ValueMeta* m = &p->values[id];
  *out = base == NULL ? NULL : base + dimv(run, m->offset) * arena_item_size(m->dtype);
  return 0;
}

/* Checks a kernel input against its declared meta; *declared_layout tells whether its strides
 * are the declared ones (on every dim of size > 1). */
static int check_input(Run* run, int64_t step, int64_t id, void* h, int* declared_layout) {
  ValueMeta tmp;
  const ValueMeta* m = meta_of(run, id, &tmp);
  int32_t dtype = -1;
  int64_t dim = -1, *sizes = NULL, *strides = NULL;
  if (t_aoti_torch_get_dtype(h, &dtype) || t_aoti_torch_get_dim(h, &dim) ||
      t_aoti_torch_get_sizes(h, &sizes) || t_aoti_torch_get_strides(h, &strides))
    return fail("tccd plan step %ld: reading value %ld failed", (long)step, (long)id);
  if (dtype != m->dtype)
    return fail("tccd plan step %ld: input %ld has dtype code %d, the kernel takes %d", (long)step,
                (long)id, dtype, m->dtype);
  int same = dim == m->rank;
  for (int d = 0; same && d < m->rank; ++d) same = sizes[d] == m->sizes[d];
  if (!same)
    return fail("tccd plan step %ld: input %ld does not have the shape the plan was compiled for",
                (long)step, (long)id);
  *declared_layout = 1;
  for (int d = 0; d < m->rank; ++d) {
    if (strides[d] != m->strides[d] && m->sizes[d] != 1) *declared_layout = 0;
  }
  return 0;
}

/* Bytes per element of the dtypes kernels take (c10 codes); 1 for the others, whose values no
 * kernel reads. */
static int64_t item_size(int32_t dtype) {
  switch (dtype) {
    case TCCD_C10_INT16:
    case TCCD_C10_UINT16:
    case TCCD_C10_FLOAT16:
    case TCCD_C10_BFLOAT16:
      return 2;
    case TCCD_C10_INT32:
    case TCCD_C10_UINT32:
    case TCCD_C10_FLOAT32:
      return 4;
    case TCCD_C10_INT64:
    case TCCD_C10_UINT64:
    case TCCD_C10_FLOAT64:
      return 8;
    default:
      return 1;
  }
}

/* A CUDA kernel's input at `data` that its plan declared 16-byte aligned (storage offset x item
 * size; bases are aligned) but is not: the kernel may have only its vectorised entry
 * (codegen/cuda_host/entry_points.h), so it is copied, as a misaligned segment input is. */
static int misaligned(Run* run, int64_t id, const void* data) {
  ValueMeta tmp;
  const ValueMeta* m = meta_of(run, id, &tmp);
  return ((uintptr_t)data % 16) != 0 && (m->offset * item_size(m->dtype)) % 16 == 0;
}

/* A copy of `h` in its value's declared layout (a new handle in *copy). */
static int copy_declared(Run* run, int64_t step, int64_t id, void* h, void** copy) {
  ValueMeta tmp;
  const ValueMeta* m = meta_of(run, id, &tmp);
  int32_t device_index = 0;
  count(run, COUNT_LAYOUT_COPY);
  (void)t_aoti_torch_get_device_index(h, &device_index);
  if (t_aoti_torch_empty_strided(m->rank, m->sizes, m->strides, m->dtype, m->device_type,
                                 device_index < 0 ? 0 : device_index, copy) != 0 ||
      t_aoti_torch_copy_(*copy, h, 0) != 0)
    return fail("tccd plan step %ld: copying input %ld into its declared layout failed", (long)step,
                (long)id);
  return 0;
}

/* Output o of a kernel or segment step: a new handle of the value it is written into (Step.into:
 * a graph input, or a value that dies at the step) when that value has the declared layout (and on CUDA 16-byte alignment, which
 * the kernels' vector entries assume), else a fresh allocation; then *pending is the input to
 * copy the output into after the step (-1 when none), so the mutation still lands. */
static int bind_output(Run* run, const Step* s, int64_t index, int64_t o, int32_t device,
                       int64_t* pending) {
  *pending = -1;
  const int64_t into = s->into ? s->into[o] : -1;
  if (into >= 0) {
    void* h = NULL;
    int declared = 0;
    if (get(run, index, into, &h) || check_input(run, index, into, h, &declared)) return -1;
    if (declared && s->abi != TCCD_ABI_CPU && s->abi != TCCD_ABI_CPU_SYM) {
      void* data = NULL;
      t_aoti_torch_get_data_ptr(h, &data);
      declared = ((uintptr_t)data % 16) == 0;
    }
    if (declared) {
      /* The input's storage in the output's layout (the same bytes: can_write_into). */
      ValueMeta tmp;
      const ValueMeta* m = meta_of(run, s->out[o], &tmp);
      drop(&run->env[s->out[o]]);
      if (t_aoti_torch__reinterpret_tensor(h, m->rank, m->sizes, m->strides, 0,
                                           &run->env[s->out[o]]) != 0)
        return fail("tccd plan step %ld: binding output %ld to input %ld failed", (long)index,
                    (long)s->out[o], (long)into);
      return 0;
    }
    *pending = into;
  }
  return allocate(run, index, s->out[o], device);
}

/* The copies bind_output left pending, after the step ran: the output's elements in order
 * (the same count: can_write_into) into the input, through a view of the output in the
 * input's shape. */
static int copy_pending(Run* run, const Step* s, int64_t index, const int64_t* pending) {
  for (int64_t o = 0; o < s->n_out; ++o) {
    if (pending[o] < 0) continue;
    count(run, COUNT_OUTPUT_COPY);
    ValueMeta tmp_in, tmp_out;
    const ValueMeta* in = meta_of(run, pending[o], &tmp_in);
    const ValueMeta* out = meta_of(run, s->out[o], &tmp_out);
    void* src = NULL;
    int64_t strides[MAX_RANK], n = 0;
    int rc = 0;
    if (!contiguous(out, &n)) {
      src = run->env[s->out[o]]; /* the same layout as the input's declared one */
    } else {
      int64_t expect = 1;
      for (int d = in->rank - 1; d >= 0; --d) {
        strides[d] = expect;
        expect *= in->sizes[d];
      }
      rc = t_aoti_torch__reinterpret_tensor(run->env[s->out[o]], in->rank, in->sizes, strides, 0,
                                            &src);
    }
    if (rc == 0) rc = t_aoti_torch_copy_(run->env[pending[o]], src, 0);
    if (src != run->env[s->out[o]]) drop(&src);
    if (rc != 0)
      return fail("tccd plan step %ld: copying output %ld into input %ld failed", (long)index,
                  (long)s->out[o], (long)pending[o]);
  }
  return 0;
}

static int device_of(Run* run, const Step* s) {
  for (int64_t i = 0; i < s->n_in; ++i) {
    int32_t index = -1;
    if (run->env[s->in[i]] && t_aoti_torch_get_device_index(run->env[s->in[i]], &index) == 0 &&
        index >= 0)
      return index;
  }
  for (int64_t i = 0; i < s->n_out; ++i) {
    if (run->p->values[s->out[i]].device_index >= 0) return run->p->values[s->out[i]].device_index;
  }
  /* No input and no index in the plan: the current device, as torch.empty(device="cuda"). */
  int32_t current = 0;
  if (t_aoti_torch_get_current_device_index != NULL &&
      t_aoti_torch_get_current_device_index(&current) == 0 && current >= 0)
    return current;
  return 0;
}

typedef int (*CudaKernelFn)(void**, const int64_t*, void*);
typedef int (*CudaSizedKernelFn)(void**, const int64_t*, const int64_t*, void*);
typedef void (*CpuKernelFn)(void**, const int64_t*);
typedef void (*CpuSizedKernelFn)(void**, const int64_t*, const int64_t*);
typedef int (*CudaSegmentFn)(void**, void*, void*);
typedef int (*CudaSizedGemmFn)(void**, const int64_t*, void*, uint64_t, void*);

/* `shape`: the iteration space, for a kernel with run-time sizes (TCCD_ABI_CUDA_SYM). */
static int call_cuda(Run* run, const Step* s, int64_t index, int device, void** ptrs,
                     const int64_t* strides, const int64_t* shape, void* workspace) {
  if (run->stream_device != device) { /* the default stream is NULL: the device says "looked up" */
    count(run, COUNT_STREAM);
    if (t_aoti_torch_get_current_cuda_stream(device, &run->stream) != 0) {
      run->stream_device = -1;
      return fail("tccd plan step %ld: no current CUDA stream", (long)index);
    }
    run->stream_device = device;
  }
  void* stream = run->stream;
  int err = 0;
  const int64_t start = run->profiled ? now_ns() : 0;
  for (int attempt = 0; attempt < 2; ++attempt) {
    err = s->kind == TCCD_STEP_SEGMENT  ? ((CudaSegmentFn)s->fn)(ptrs, workspace, stream)
          : s->abi == TCCD_ABI_CUDA_SYM ? ((CudaSizedKernelFn)s->fn)(ptrs, strides, shape, stream)
          : s->abi == TCCD_ABI_CUDA_SYM_GEMM
              ? ((CudaSizedGemmFn)s->fn)(ptrs, shape, workspace,
                                         workspace ? (uint64_t)TCCD_GEMM_WORKSPACE_BYTES : 0,
                                         stream)
              : ((CudaKernelFn)s->fn)(ptrs, strides, stream);
    /* A thread with no current context (autograd's backward thread) cannot launch: make the
     * primary context current (through torch) and retry once, as runtime.py does. */
    if (err != RT_ERROR_INVALID_CONTEXT || run->p->make_current == NULL || attempt) break;
    if (run->p->make_current(device) != 0) break;
  }
  if (run->profiled) run->step_launch_ns += now_ns() - start;
  if (err != 0) {
    const char* (*last)(void) = NULL;
    Dl_info info;
    if (dladdr(s->fn, &info) && info.dli_fname) {
      void* lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
      if (lib) {
        last = (const char* (*)(void))dlsym(lib, "tccd_cuda_last_error");
        dlclose(lib);
      }
    }
    return fail("tccd plan step %ld (%s): CUDA error %d: %s", (long)index, s->symbol, err,
                last ? last() : "");
  }
  return 0;
}

/* The current stream of `device` for this call (looked up once per call, as call_cuda does). */
static int current_stream(Run* run, int64_t index, int device, void** stream) {
  if (run->stream_device != device) {
    count(run, COUNT_STREAM);
    if (t_aoti_torch_get_current_cuda_stream(device, &run->stream) != 0) {
      run->stream_device = -1;
      return fail("tccd plan step %ld: no current CUDA stream", (long)index);
    }
    run->stream_device = device;
  }
  *stream = run->stream;
  return 0;
}

/* Step.sized_cache at this call's `shape`: 0 when the kept output was handed out (a new handle
 * of it bound to the step's output value), 1 when the step must run (`*stream`: this call's
 * stream, the key's last part; `*keep`: whether its output may be kept afterwards), -1 on
 * failure. A value in a symbolic segment or the per-call arena is not a tensor of its own:
 * never kept. The key holds the stream: a call on another stream must not read a tensor whose
 * kernel may not have run there yet. */
static int sized_cache_lookup(Run* run, const Step* s, int64_t index, const int64_t* shape,
                              int device, int is_cuda, void** stream, int* keep) {
  *stream = NULL;
  *keep = 0;
  const int64_t id = s->out[0];
  if (is_seg(run, id) || (run->p->arena_group != NULL && run->p->arena_group[id] >= 0)) return 1;
  if (is_cuda && current_stream(run, index, device, stream) != 0) return -1;
  *keep = 1;
  pthread_mutex_lock(&g_sized_cache_mu);
  for (int64_t i = 0; i < s->n_sized_cache; ++i) {
    SizedCacheEntry* e = &s->sized_cache[i];
    if (e->handle == NULL || e->device != device || e->stream != *stream ||
        memcmp(e->shape, shape, sizeof(int64_t) * (size_t)s->rank) != 0)
      continue;
    void* fresh = NULL;
    const int rc = t_aoti_torch_new_tensor_handle(e->handle, &fresh);
    pthread_mutex_unlock(&g_sized_cache_mu);
    if (rc != 0) return fail("tccd plan step %ld: a handle of the kept output failed", (long)index);
    drop(&run->env[id]);
    run->env[id] = fresh;
    count(run, COUNT_SIZED_CACHE_HIT);
    return 0;
  }
  pthread_mutex_unlock(&g_sized_cache_mu);
  return 1;
}

/* Keeps a new handle of the step's output (just written) under this call's key in an empty
 * entry, unless another call (another thread) kept one for the key meanwhile or none is free
 * (the later sizes then launch as before). */
static void sized_cache_keep(Run* run, const Step* s, const int64_t* shape, int device,
                             void* stream) {
  pthread_mutex_lock(&g_sized_cache_mu);
  SizedCacheEntry* empty = NULL;
  for (int64_t i = 0; i < s->n_sized_cache; ++i) {
    SizedCacheEntry* e = &s->sized_cache[i];
    if (e->handle == NULL) {
      if (empty == NULL) empty = e;
    } else if (e->device == device && e->stream == stream &&
               memcmp(e->shape, shape, sizeof(int64_t) * (size_t)s->rank) == 0) {
      empty = NULL; /* kept already */
      break;
    }
  }
  if (empty != NULL && t_aoti_torch_new_tensor_handle(run->env[s->out[0]], &empty->handle) == 0) {
    memcpy(empty->shape, shape, sizeof(int64_t) * (size_t)s->rank);
    empty->device = device;
    empty->stream = stream;
  } else if (empty != NULL) {
    empty->handle = NULL;
  }
  pthread_mutex_unlock(&g_sized_cache_mu);
}

/* A kernel of a symbolic plan (TCCD_LAYOUT_OWN): the iteration space from this call's sizes,
 * every operand's own strides broadcast to it (runtime.py _symbolic_native_step). */
static int run_kernel_own(Run* run, const Step* s, int64_t index) {
  const int64_t nops = s->n_in + s->n_out;
  void* ptrs[nops ? nops : 1];
  int64_t rows[nops * s->rank + 1];
  int64_t shape[s->rank + 1];
  for (int d = 0; d < s->rank; ++d) shape[d] = dimv(run, s->shape[d]);
  const int is_cuda = s->abi == TCCD_ABI_CUDA || s->abi == TCCD_ABI_CUDA_SYM;
  const int device = is_cuda ? device_of(run, s) : 0;
  void* stream = NULL; /* Step.sized_cache: this call's key (sizes, device, stream) */
  int keep = 0;
  if (s->sized_cache != NULL) {
    int rc = sized_cache_lookup(run, s, index, shape, device, is_cuda, &stream, &keep);
    if (rc <= 0) return rc; /* 0: handed out; -1: failed */
  }
  for (int64_t i = 0; i < s->n_in; ++i) {
    void* h = NULL;
    int32_t dtype = -1;
    int64_t dim = 0, *sizes = NULL, *st = NULL;
    ValueMeta tmp;
    if (is_seg(run, s->in[i])) {
      /* A segment value: laid out as declared (it never left the plan's kernels and views). */
      const ValueMeta* m = meta_of(run, s->in[i], &tmp);
      dim = m->rank, sizes = tmp.sizes, st = tmp.strides;
      if (!m->symbolic) memcpy(&tmp, m, sizeof(tmp));
    } else {
      if (get(run, index, s->in[i], &h)) return -1;
      t_aoti_torch_get_dtype(h, &dtype);
      if (dtype != run->p->values[s->in[i]].dtype)
        return fail("tccd plan step %ld: input %ld has dtype code %d, the kernel takes %d",
                    (long)index, (long)s->in[i], dtype, run->p->values[s->in[i]].dtype);
      t_aoti_torch_get_dim(h, &dim);
      t_aoti_torch_get_sizes(h, &sizes);
      t_aoti_torch_get_strides(h, &st);
    }
    if (dim > s->rank)
      return fail("tccd plan step %ld: input of rank %ld in a rank-%d kernel", (long)index,
                  (long)dim, s->rank);
    /* A gather operand (an index kernel reads it at computed coordinates): its own strides,
     * dim k in slot k, never broadcast to the iteration space (kernel/pointwise_kernel.h). */
    for (int d = 0; s->gather != NULL && s->gather[i] && d < s->rank; ++d)
      rows[i * s->rank + d] = d < dim ? st[d] : 0;
    for (int d = 0; (s->gather == NULL || !s->gather[i]) && d < s->rank; ++d) {
      int64_t td = d - (s->rank - dim), v = 0;
      if (td >= 0) {
        if (sizes[td] == shape[d])
          v = st[td];
        else if (sizes[td] != 1)
          return fail(
              "tccd plan step %ld: an input does not broadcast to the kernel's iteration space",
              (long)index);
      }
      rows[i * s->rank + d] = v;
    }
    if (h == NULL) {
      if (seg_data(run, index, s->in[i], device, &ptrs[i])) return -1;
    } else if (t_aoti_torch_get_data_ptr(h, &ptrs[i])) {
      return fail("tccd plan step %ld: data_ptr failed", (long)index);
    }
  }
  int64_t pending[s->n_out ? s->n_out : 1];
  for (int64_t o = 0; o < s->n_out; ++o) {
    /* Right-aligned to the iteration space, 0 along the dims it lacks (a column kernel's
     * per-column outputs drop the reduced dims; the kernel never moves along them). */
    int64_t* st = NULL;
    int64_t dim = 0;
    ValueMeta tmp;
    if (is_seg(run, s->out[o])) {
      const ValueMeta* m = meta_of(run, s->out[o], &tmp);
      if (!m->symbolic) memcpy(&tmp, m, sizeof(tmp));
      dim = m->rank, st = tmp.strides, pending[o] = -1;
      if (seg_data(run, index, s->out[o], device, &ptrs[s->n_in + o])) return -1;
    } else {
      int rc = bind_output(run, s, index, o, device, &pending[o]);
      if (rc) return rc;
      t_aoti_torch_get_dim(run->env[s->out[o]], &dim);
      t_aoti_torch_get_strides(run->env[s->out[o]], &st);
      t_aoti_torch_get_data_ptr(run->env[s->out[o]], &ptrs[s->n_in + o]);
    }
    if (dim > s->rank)
      return fail("tccd plan step %ld: output of rank %ld in a rank-%d kernel", (long)index,
                  (long)dim, s->rank);
    int64_t* out_rows = rows + (s->n_in + o) * s->rank;
    if (s->gather != NULL && s->gather[s->n_in + o]) {
      /* A scatter output: its own strides, dim k in slot k (kernel/pointwise_kernel.h). */
      for (int d = 0; d < s->rank; ++d) out_rows[d] = d < dim ? st[d] : 0;
    } else {
      for (int d = 0; d < s->rank; ++d)
        out_rows[d] = d < s->rank - dim ? 0 : st[d - (s->rank - dim)];
    }
  }
  int rc = 0;
  const int64_t start = run->profiled && !is_cuda ? now_ns() : 0; /* call_cuda times CUDA's */
  switch (s->abi) {
    case TCCD_ABI_CPU:
      ((CpuKernelFn)s->fn)(ptrs, rows);
      break;
    case TCCD_ABI_CPU_SYM:
      ((CpuSizedKernelFn)s->fn)(ptrs, rows, shape);
      break;
    default:
      rc = call_cuda(run, s, index, device, ptrs, rows, shape, NULL);
  }
  if (run->profiled && !is_cuda) run->step_launch_ns += now_ns() - start;
  if (rc == 0 && keep) sized_cache_keep(run, s, shape, device, stream);
  return rc ? rc : copy_pending(run, s, index, pending);
}

/* A cuBLASLt gemm with run-time sizes (TCCD_ABI_CUDA_SYM_GEMM): its ten sizes from this call's
 * expressions; inputs in their declared layouts (this call's strides), 16-byte aligned, as the
 * daemon proved them dense for every size (codegen/symbolic_gemms.h), else copied into it as a
 * segment's inputs are; the output allocated as declared; cuBLASLt's scratch from the caching
 * allocator, one per plan call (Run.gemm_ws). */
static int run_gemm_sized(Run* run, const Step* s, int64_t index) {
  void* ptrs[4];
  void* copies[3] = {NULL, NULL, NULL};
  int64_t dims[TCCD_GEMM_DIMS];
  int64_t pending[1] = {-1};
  void* ws_ptr = NULL;
  int rc = 0;
  for (int d = 0; d < TCCD_GEMM_DIMS; ++d) dims[d] = dimv(run, s->shape[d]);
  const int device = device_of(run, s);
  for (int64_t i = 0; i < s->n_in; ++i) {
    void* h;
    int declared = 1;
    if (is_seg(run, s->in[i])) {
      /* Declared and aligned by construction (seg_prune). */
      if ((rc = seg_data(run, index, s->in[i], device, &ptrs[i]))) goto out;
      if (((uintptr_t)ptrs[i] % 16) != 0) {
        rc = fail("tccd plan step %ld: segment value %ld is misaligned", (long)index,
                  (long)s->in[i]);
        goto out;
      }
      continue;
    }
    if ((rc = get(run, index, s->in[i], &h)) ||
        (rc = check_input(run, index, s->in[i], h, &declared)))
      goto out;
    void* data = NULL;
    t_aoti_torch_get_data_ptr(h, &data);
    if (!declared || ((uintptr_t)data % 16) != 0) {
      if ((rc = copy_declared(run, index, s->in[i], h, &copies[i]))) goto out;
      t_aoti_torch_get_data_ptr(copies[i], &data);
    }
    ptrs[i] = data;
  }
  if (is_seg(run, s->out[0])) {
    if ((rc = seg_data(run, index, s->out[0], device, &ptrs[s->n_in]))) goto out;
  } else {
    if ((rc = bind_output(run, s, index, 0, device, &pending[0]))) goto out;
    t_aoti_torch_get_data_ptr(run->env[s->out[0]], &ptrs[s->n_in]);
  }
  if (run->gemm_ws == NULL || run->gemm_ws_device != device) {
    drop(&run->gemm_ws);
    count(run, COUNT_WORKSPACE);
    int64_t size = TCCD_GEMM_WORKSPACE_BYTES, stride = 1;
    const int64_t start = run->profiled ? now_ns() : 0;
    const int ws_rc = t_aoti_torch_empty_strided(1, &size, &stride, TCCD_C10_UINT8,
                                                 TCCD_C10_DEVICE_CUDA, device, &run->gemm_ws);
    if (run->profiled) run->step_alloc_ns += now_ns() - start;
    if (ws_rc != 0) {
      run->gemm_ws = NULL;
      rc = fail("tccd plan step %ld: allocating %ld bytes of gemm workspace failed", (long)index,
                (long)size);
      goto out;
    }
    run->gemm_ws_device = device;
  }
  t_aoti_torch_get_data_ptr(run->gemm_ws, &ws_ptr);
  rc = call_cuda(run, s, index, device, ptrs, NULL, dims, ws_ptr);
  if (!rc) rc = copy_pending(run, s, index, pending);
out:
  for (int64_t i = 0; i < s->n_in; ++i) drop(&copies[i]);
  return rc;
}

static int run_kernel(Run* run, const Step* s, int64_t index) {
  if (s->abi == TCCD_ABI_CUDA_SYM_GEMM) return run_gemm_sized(run, s, index);
  if (s->layout == TCCD_LAYOUT_OWN) return run_kernel_own(run, s, index);
  const int64_t nops = s->n_in + s->n_out;
  void* ptrs[nops ? nops : 1];
  void* copies[s->n_in ? s->n_in : 1];
  int64_t rows[nops * s->rank + 1];
  int64_t pending[s->n_out ? s->n_out : 1]; /* bind_output */
  const int64_t* strides = s->expected;
  int rc = 0;
  memset(copies, 0, sizeof(copies));
  for (int64_t o = 0; o < s->n_out; ++o) pending[o] = -1;
  for (int64_t i = 0; i < s->n_in; ++i) {
    void* h;
    int declared = 1;
    if ((rc = get(run, index, s->in[i], &h)) ||
        (rc = check_input(run, index, s->in[i], h, &declared)))
      goto out;
    void* data = NULL;
    if (s->abi == TCCD_ABI_CUDA && declared) {
      t_aoti_torch_get_data_ptr(h, &data);
      declared = !misaligned(run, s->in[i], data);
    }
    if (!declared && s->layout == TCCD_LAYOUT_COPY) {
      /* Index kernels take gather operands' own strides, which cannot be recomputed from the
       * iteration space, and CUDA kernels have only their declared layout's entry: copy into
       * the declared layout instead. */
      if ((rc = copy_declared(run, index, s->in[i], h, &copies[i]))) goto out;
      h = copies[i];
    } else if (!declared && strides == s->expected) {
      memcpy(rows, s->expected, sizeof(int64_t) * (size_t)(nops * s->rank));
      strides = rows;
    }
    if (t_aoti_torch_get_data_ptr(h, &ptrs[i])) {
      rc = fail("tccd plan step %ld: data_ptr failed", (long)index);
      goto out;
    }
  }
  if (strides == rows) {
    /* Some input differs from its declared layout: every input's strides in the iteration
     * space (right-aligned broadcast, 0 where broadcast). Outputs are ours: as declared. */
    for (int64_t i = 0; i < s->n_in; ++i) {
      void* h = copies[i] ? copies[i] : run->env[s->in[i]];
      int64_t dim = 0, *sizes = NULL, *st = NULL;
      t_aoti_torch_get_dim(h, &dim);
      t_aoti_torch_get_sizes(h, &sizes);
      t_aoti_torch_get_strides(h, &st);
      if (dim > s->rank) {
        rc = fail("tccd plan step %ld: input of rank %ld in a rank-%d kernel", (long)index,
                  (long)dim, s->rank);
        goto out;
      }
      for (int d = 0; d < s->rank; ++d) {
        int64_t td = d - (s->rank - dim);
        int64_t v = 0;
        if (td >= 0) {
          if (sizes[td] == s->shape[d])
            v = st[td];
          else if (sizes[td] != 1) {
            rc = fail(
                "tccd plan step %ld: an input does not broadcast to the kernel's iteration space",
                (long)index);
            goto out;
          }
        }
        rows[i * s->rank + d] = v;
      }
    }
  }
  const int device = s->abi == TCCD_ABI_CPU ? 0 : device_of(run, s);
  for (int64_t o = 0; o < s->n_out; ++o) {
    if ((rc = bind_output(run, s, index, o, device, &pending[o]))) goto out;
    t_aoti_torch_get_data_ptr(run->env[s->out[o]], &ptrs[s->n_in + o]);
  }
  if (s->abi == TCCD_ABI_CPU) {
    const int64_t start = run->profiled ? now_ns() : 0;
    ((CpuKernelFn)s->fn)(ptrs, strides);
    if (run->profiled) run->step_launch_ns += now_ns() - start;
  } else {
    rc = call_cuda(run, s, index, device, ptrs, strides, NULL, NULL);
  }
  if (!rc) rc = copy_pending(run, s, index, pending);
out:
  for (int64_t i = 0; i < s->n_in; ++i) drop(&copies[i]);
  return rc;
}

static int run_segment(Run* run, const Step* s, int64_t index) {
  const int64_t nops = s->n_in + s->n_out;
  void* ptrs[nops ? nops : 1];
  void* copies[s->n_in ? s->n_in : 1];
  int64_t pending[s->n_out ? s->n_out : 1]; /* bind_output */
  void* workspace = NULL;
  void* ws_ptr = NULL;
  int rc = 0;
  int device = device_of(run, s);
  memset(copies, 0, sizeof(copies));
  for (int64_t o = 0; o < s->n_out; ++o) pending[o] = -1;
  for (int64_t i = 0; i < s->n_in; ++i) {
    void* h;
    int declared = 1;
    if ((rc = get(run, index, s->in[i], &h)) ||
        (rc = check_input(run, index, s->in[i], h, &declared)))
      goto out;
    void* data = NULL;
    t_aoti_torch_get_data_ptr(h, &data);
    /* Compiled for the declared layouts, 16-byte aligned (vector loads, cuBLASLt). */
    if (!declared || ((uintptr_t)data % 16) != 0) {
      if ((rc = copy_declared(run, index, s->in[i], h, &copies[i]))) goto out;
      t_aoti_torch_get_data_ptr(copies[i], &data);
    }
    ptrs[i] = data;
  }
  for (int64_t o = 0; o < s->n_out; ++o) {
    if ((rc = bind_output(run, s, index, o, device, &pending[o]))) goto out;
    t_aoti_torch_get_data_ptr(run->env[s->out[o]], &ptrs[s->n_in + o]);
  }
  const int64_t ws_at = run->p->ws_offset ? run->p->ws_offset[index] : -1;
  if (s->workspace_bytes > 0 && ws_at >= 0 && arena_buffer(run, run->p->ws_group, device)) {
    count(run, COUNT_ARENA);
    ws_ptr = run->arena_data[run->p->ws_group] + ws_at;
  } else if (s->workspace_bytes > 0) {
    int64_t size = s->workspace_bytes, stride = 1;
    count(run, COUNT_WORKSPACE);
    const int64_t start = run->profiled ? now_ns() : 0;
    const int ws_rc = t_aoti_torch_empty_strided(1, &size, &stride, TCCD_C10_UINT8,
                                                 TCCD_C10_DEVICE_CUDA, device, &workspace);
    if (run->profiled) run->step_alloc_ns += now_ns() - start;
    if (ws_rc != 0) {
      rc = fail("tccd plan step %ld: allocating %ld bytes of workspace failed", (long)index,
                (long)size);
      goto out;
    }
    t_aoti_torch_get_data_ptr(workspace, &ws_ptr);
  }
  rc = call_cuda(run, s, index, device, ptrs, NULL, NULL, ws_ptr);
  if (!rc) rc = copy_pending(run, s, index, pending);
out:
  /* The caching allocator reuses the workspace and copies only for work ordered after this
   * call on the same stream, so dropping them here is safe. */
  drop(&workspace);
  for (int64_t i = 0; i < s->n_in; ++i) drop(&copies[i]);
  return rc;
}

static int run_alias(Run* run, const Step* s, int64_t index) {
  void* base;
  if (get(run, index, s->alias_base, &base)) return -1;
  ValueMeta tmp;
  const ValueMeta* m = meta_of(run, s->out[0], &tmp);
  drop(&run->env[s->out[0]]);
  /* aoti_torch__reinterpret_tensor's offset is an increment over the base's own offset (the
   * base may itself be a view), as_strided(sizes, strides, base.storage_offset() + delta). */
  if (t_aoti_torch__reinterpret_tensor(base, m->rank, m->sizes, m->strides, s->alias_delta,
                                       &run->env[s->out[0]]) != 0)
    return fail("tccd plan step %ld: alias of value %ld failed", (long)index, (long)s->alias_base);
  return 0;
}

/* A boxed optional: the StableIValue* the dispatcher unboxes and frees (see g_operator_new). */
static int box_optional(uint64_t v, uint64_t* out) {
  uint64_t* boxed = NULL;
  if (t_torch_new_stable_ivalue != NULL) {
    if (t_torch_new_stable_ivalue(&boxed) != 0) return -1;
  } else {
    boxed = (uint64_t*)g_operator_new(sizeof(uint64_t));
  }
  *boxed = v;
  *out = (uint64_t)(uintptr_t)boxed;
  return 0;
}

/* A new owning handle of value `id` (the dispatcher takes ownership of tensor arguments). */
static int new_handle(Run* run, int64_t index, int64_t id, uint64_t* out) {
  void* h;
  void* fresh = NULL;
  if (get(run, index, id, &h) || t_aoti_torch_new_tensor_handle(h, &fresh) != 0) return -1;
  *out = (uint64_t)(uintptr_t)fresh;
  return 0;
}

/* One argument as the StableIValue the dispatcher converts by the schema's type. */
static int stable_arg(Run* run, const Step* s, int64_t index, int64_t i, uint64_t* out) {
  int64_t kind = s->arg_kinds[i] & ~TCCD_ARG_OPTIONAL;
  uint64_t v = (uint64_t)s->arg_payloads[i];
  if (kind == TCCD_ARG_TENSOR) {
    if (new_handle(run, index, s->arg_payloads[i], &v))
      return fail("tccd plan step %ld (%s): argument %ld: %s", (long)index, s->op_name, (long)i,
                  g_error);
  } else if (kind == TCCD_ARG_NONE) {
    v = 0;
  } else if (kind == TCCD_ARG_UNDEFINED_TENSOR) {
    /* A fresh handle of an undefined tensor: the dispatcher takes ownership, as of any tensor. */
    void* fresh = NULL;
    if (t_aoti_torch_new_uninitialized_tensor(&fresh) != 0)
      return fail("tccd plan step %ld: new undefined tensor failed", (long)index);
    v = (uint64_t)(uintptr_t)fresh;
  } else if (kind == TCCD_ARG_SYM) {
    v = (uint64_t)run->expr[s->arg_payloads[i]];
  } else if (kind == TCCD_ARG_SYM_INT_LIST) {
    const int64_t* list = s->pool + s->arg_payloads[i];
    void* handle = NULL;
    if (t_torch_new_list_reserve_size((size_t)list[0], &handle) != 0)
      return fail("tccd plan step %ld: new list failed", (long)index);
    for (int64_t k = 0; k < list[0]; ++k) {
      int64_t item = list[1 + 2 * k] ? run->expr[list[2 + 2 * k]] : list[2 + 2 * k];
      if (t_torch_list_push_back(handle, (uint64_t)item) != 0)
        return fail("tccd plan step %ld: list push failed", (long)index);
    }
    v = (uint64_t)(uintptr_t)handle;
  } else if (kind == TCCD_ARG_CONSTANT) {
    void* fresh = NULL;
    if (t_aoti_torch_new_tensor_handle(run->p->constants[s->arg_payloads[i]], &fresh) != 0)
      return fail("tccd plan step %ld: new handle of a constant failed", (long)index);
    v = (uint64_t)(uintptr_t)fresh;
  } else if (kind == TCCD_ARG_STRING) {
    const int64_t* at = s->pool + s->arg_payloads[i];
    void* handle = NULL;
    if (t_torch_new_string_handle((const char*)(at + 1), (size_t)at[0], &handle) != 0)
      return fail("tccd plan step %ld: new string failed", (long)index);
    v = (uint64_t)(uintptr_t)handle;
  } else if (kind == TCCD_ARG_INT_LIST || kind == TCCD_ARG_TENSOR_LIST ||
             kind == TCCD_ARG_BOOL_LIST || kind == TCCD_ARG_FLOAT_LIST ||
             kind == TCCD_ARG_OPTIONAL_TENSOR_LIST) {
    /* A StableListHandle the dispatcher takes (and deletes). */
    const int64_t* list = s->pool + s->arg_payloads[i];
    void* handle = NULL;
    if (t_torch_new_list_reserve_size((size_t)list[0], &handle) != 0)
      return fail("tccd plan step %ld: new list failed", (long)index);
    for (int64_t k = 0; k < list[0]; ++k) {
      uint64_t item = (uint64_t)list[1 + k];
      if (kind == TCCD_ARG_TENSOR_LIST ||
          (kind == TCCD_ARG_OPTIONAL_TENSOR_LIST && list[1 + k] >= 0)) {
        if (new_handle(run, index, list[1 + k], &item)) return -1;
        if (kind == TCCD_ARG_OPTIONAL_TENSOR_LIST && box_optional(item, &item) != 0)
          return fail("tccd plan step %ld: boxing an optional failed", (long)index);
      } else if (kind == TCCD_ARG_OPTIONAL_TENSOR_LIST) {
        item = 0; /* None */
      }
      if (t_torch_list_push_back(handle, item) != 0)
        return fail("tccd plan step %ld: list push failed", (long)index);
    }
    v = (uint64_t)(uintptr_t)handle;
  }
  if ((s->arg_kinds[i] & TCCD_ARG_OPTIONAL) && kind != TCCD_ARG_NONE && box_optional(v, &v) != 0)
    return fail("tccd plan step %ld: boxing an optional failed", (long)index);
  *out = v;
  return 0;
}

static void set_output(Run* run, const Step* s, int64_t o, void* h) {
  if (o < s->n_out && s->out[o] >= 0) {
    drop(&run->env[s->out[o]]);
    run->env[s->out[o]] = h;
  } else {
    drop(&h);
  }
}

/* A view step whose base is laid out as declared: its output from the plan's metadata (as an
 * alias step), 0; 1 where the base differs (the dispatcher runs the op). */
static int try_view(Run* run, const Step* s, int64_t index) {
  void* base = run->env[s->alias_base];
  ValueMeta tmp_base, tmp_out;
  const ValueMeta* b = meta_of(run, s->alias_base, &tmp_base);
  int64_t dim = -1, *sizes = NULL, *strides = NULL;
  if (base == NULL || t_aoti_torch_get_dim(base, &dim) || dim != b->rank ||
      t_aoti_torch_get_sizes(base, &sizes) || t_aoti_torch_get_strides(base, &strides))
    return 1;
  for (int d = 0; d < b->rank; ++d) {
    if (sizes[d] != b->sizes[d] || strides[d] != b->strides[d]) return 1;
  }
  const ValueMeta* m = meta_of(run, s->out[0], &tmp_out);
  void* view = NULL;
  if (t_aoti_torch__reinterpret_tensor(base, m->rank, m->sizes, m->strides, m->offset - b->offset,
                                       &view) != 0)
    return 1;
  set_output(run, s, 0, view);
  (void)index;
  return 0;
}

/* A column-sum step (is_column_sum) run by the runtime: 0 when done, 1 when the input is not a
 * 2-D tensor of the output's dtype with unit-stride columns (the dispatcher runs it), -1 on
 * failure. */
static int try_column_sum(Run* run, const Step* s, int64_t index) {
  void* x = run->env[s->arg_payloads[0]];
  const ValueMeta* m = &run->p->values[s->out[0]];
  int64_t dim = 0, *sizes = NULL, *strides = NULL;
  int32_t dtype = -1;
  void* data = NULL;
  /* The input is on the CPU as the plan's output is: a plan's values share one device type. */
  if (x == NULL || t_aoti_torch_get_dtype(x, &dtype) != 0 || dtype != m->dtype ||
      t_aoti_torch_get_dim(x, &dim) != 0 || dim != 2 ||
      t_aoti_torch_get_sizes(x, &sizes) != 0 || t_aoti_torch_get_strides(x, &strides) != 0 ||
      sizes[1] != m->sizes[m->rank - 1] || (sizes[1] > 1 && strides[1] != 1) ||
      (sizes[0] > 1 && strides[0] < sizes[1]) || t_aoti_torch_get_data_ptr(x, &data) != 0)
    return 1;
  int rc = allocate(run, index, s->out[0], 0);
  if (rc) return rc;
  void* out = NULL;
  if (t_aoti_torch_get_data_ptr(run->env[s->out[0]], &out) != 0)
    return fail("tccd plan step %ld: no data pointer", (long)index);
  tccd_column_sum(dtype == TCCD_C10_FLOAT64, data, sizes[0], sizes[1], strides[0], out);
  __atomic_add_fetch(&g_column_sum_calls, 1, __ATOMIC_RELAXED);
  return 0;
}

static int run_extern_dispatcher(Run* run, const Step* s, int64_t index) {
  if (s->view_fast && try_view(run, s, index) == 0) return 0;
  if (s->column_sum && __atomic_load_n(&g_column_sums, __ATOMIC_RELAXED)) {
    const int rc = try_column_sum(run, s, index);
    if (rc <= 0) return rc;
  }
  int64_t n = s->n_args > s->n_returns ? s->n_args : s->n_returns;
  uint64_t stack[n ? n : 1];
  memset(stack, 0, sizeof(stack));
  for (int64_t i = 0; i < s->n_args; ++i) {
    if (stable_arg(run, s, index, i, &stack[i]) != 0) return -1;
  }
  if (t_aoti_torch_call_dispatcher(s->op_name, s->overload, stack) != 0) {
    const char* what = t_torch_exception_get_what_without_backtrace
                           ? t_torch_exception_get_what_without_backtrace()
                           : NULL;
    return fail("tccd plan step %ld (%s%s%s) failed%s%s", (long)index, s->op_name,
                s->overload[0] ? "." : "", s->overload, what && what[0] ? ": " : "",
                what && what[0] ? what : "");
  }
  if (s->n_returns == 1 && s->ret_kinds[0] == TCCD_RET_TENSOR_LIST) {
    /* A Tensor[] return: a StableListHandle of owned tensor handles, one per step output. */
    void* list = (void*)(uintptr_t)stack[0];
    size_t size = 0;
    int rc = t_torch_list_size(list, &size) != 0
                 ? fail("tccd plan step %ld: list size failed", (long)index)
                 : 0;
    if (rc == 0 && (int64_t)size < s->n_out)
      rc = fail("tccd plan step %ld (%s): %ld tensors returned, the plan reads %ld", (long)index,
                s->op_name, (long)size, (long)s->n_out);
    for (size_t k = 0; k < size; ++k) {
      uint64_t item = 0;
      if (t_torch_list_get_item(list, k, &item) != 0) continue;
      void* h = (void*)(uintptr_t)item;
      if (rc == 0)
        set_output(run, s, (int64_t)k, h);
      else
        drop(&h);
    }
    (void)t_torch_delete_list(list); /* deliberately ignored: the items are ours already */
    return rc;
  }
  for (int64_t i = 0; i < s->n_returns; ++i) {
    if (s->ret_kinds[i] == TCCD_RET_TENSOR) set_output(run, s, i, (void*)(uintptr_t)stack[i]);
  }
  return 0;
}

typedef int32_t (*OutShimFn)(void*, void*, void*, void*, double, double);

typedef int32_t (*AddShimFn)(void*, void*, double, void**);

typedef int32_t (*MmShimFn)(void*, void*, void*);

/* Tensor `t` as a BLAS operand of dtype `dtype`: 0, or 1 when it is not a 2-D tensor of that
 * dtype (or, with `row`, a 1-D one: addmm's bias, broadcast as a row). */
static int blas_matrix(void* t, int32_t dtype, int row, TccdBlasMatrix* x) {
  int64_t dim = 0, *sizes = NULL, *strides = NULL;
  int32_t d = -1;
  if (t_aoti_torch_get_dtype(t, &d) != 0 || d != dtype || t_aoti_torch_get_dim(t, &dim) != 0 ||
      (dim != 2 && !(row && dim == 1)) || t_aoti_torch_get_sizes(t, &sizes) != 0 ||
      t_aoti_torch_get_strides(t, &strides) != 0 || t_aoti_torch_get_data_ptr(t, &x->data) != 0)
    return 1;
  x->rows = dim == 2 ? sizes[0] : 1;
  x->cols = sizes[dim - 1];
  x->row_stride = dim == 2 ? strides[0] : 0;
  x->col_stride = strides[dim - 1];
  return 0;
}

/* mm / addmm (float32, float64) on the CPU as one sgemm_ / dgemm_ call into the allocated
 * output `out` (tccd_plan_blas.h); 1 (nothing written) where BLAS is off for the dtype or some
 * operand's layout is not one BLAS takes: the step's C shim runs it instead. The call runs on
 * this thread with the BLAS library's own thread setting, which torch.set_num_threads sets
 * (mkl_set_num_threads), exactly as ATen's call of the same function from here would. */
static int run_blas(const Step* s, void* out, void* const* args) {
  int32_t dtype = -1;
  if (t_aoti_torch_get_dtype(out, &dtype) != 0) return 1;
  const int is_double = dtype == TCCD_C10_FLOAT64;
  if (dtype != TCCD_C10_FLOAT32 && !is_double) return 1;
  TccdBlasGemmFn gemm = __atomic_load_n(is_double ? &g_dgemm : &g_sgemm, __ATOMIC_ACQUIRE);
  if (gemm == NULL) return 1;
  const int addmm = s->shim == TCCD_SHIM_ADDMM_OUT;
  TccdBlasMatrix a, b, c, bias;
  if (blas_matrix(out, dtype, 0, &c) || blas_matrix(args[addmm], dtype, 0, &a) ||
      blas_matrix(args[addmm + 1], dtype, 0, &b) ||
      (addmm && blas_matrix(args[0], dtype, 1, &bias)))
    return 1;
  if (tccd_blas_gemm(gemm, is_double, &a, &b, &c, addmm ? &bias : NULL, addmm ? s->shim_beta : 0,
                     addmm ? s->shim_alpha : 1) != 0)
    return 1;
  __atomic_add_fetch(&g_blas_calls, 1, __ATOMIC_RELAXED);
  return 0;
}

static int run_extern_shim(Run* run, const Step* s, int64_t index) {
  void* args[3] = {NULL, NULL, NULL};
  for (int i = 0; i < shim_arity(s->shim); ++i) {
    if (get(run, index, s->shim_args[i], &args[i])) return -1;
  }
  const ValueMeta* m = &run->p->values[s->out[0]];
  void* fn = shim_fn(m->device_type, s->shim);
  if (s->shim == TCCD_SHIM_ADD_TENSOR) {
    void* ret = NULL;
    if (((AddShimFn)fn)(args[0], args[1], s->shim_alpha, &ret) != 0) {
      const char* what = t_torch_exception_get_what_without_backtrace
                             ? t_torch_exception_get_what_without_backtrace()
                             : NULL;
      return fail("tccd plan step %ld (%s) failed%s%s", (long)index, s->op_name,
                  what && what[0] ? ": " : "", what && what[0] ? what : "");
    }
    set_output(run, s, 0, ret);
    return 0;
  }
  int32_t device = 0;
  if (m->device_type != TCCD_C10_DEVICE_CPU) {
    (void)t_aoti_torch_get_device_index(args[1], &device);
    if (device < 0) device = 0;
  }
  int rc = allocate(run, index, s->out[0], device);
  if (rc) return rc;
  void* out = run->env[s->out[0]];
  if (m->device_type == TCCD_C10_DEVICE_CPU &&
      (s->shim == TCCD_SHIM_MM_OUT || s->shim == TCCD_SHIM_ADDMM_OUT) &&
      run_blas(s, out, args) == 0)
    return 0;
  if (shim_arity(s->shim) == 2
          ? ((MmShimFn)fn)(out, args[0], args[1]) != 0
          : ((OutShimFn)fn)(out, args[0], args[1], args[2], s->shim_beta, s->shim_alpha) != 0) {
    const char* what = t_torch_exception_get_what_without_backtrace
                           ? t_torch_exception_get_what_without_backtrace()
                           : NULL;
    return fail("tccd plan step %ld (%s) failed%s%s", (long)index, s->op_name,
                what && what[0] ? ": " : "", what && what[0] ? what : "");
  }
  return 0;
}

typedef int32_t(*ConvShimFn) TCCD_CONVOLUTION_PARAMS;
typedef int32_t(*ConvBackwardShimFn) TCCD_CONVOLUTION_BACKWARD_PARAMS;
typedef int32_t(*SdpaFlashShimFn) TCCD_SDPA_FLASH_PARAMS;
typedef int32_t(*SdpaCudnnShimFn) TCCD_SDPA_CUDNN_PARAMS;

static double double_of(int64_t bits) {
  double d;
  memcpy(&d, &bits, sizeof(d));
  return d;
}

/* Flash / cuDNN attention's forward (bind_attention_shim): every Tensor return comes back as a
 * handle, undefined ones included, and set_output drops those no step reads. */
static int run_attention_shim(Run* run, const Step* s, int64_t index) {
  void* t[4] = {NULL, NULL, NULL, NULL};
  for (int i = 0; i < 4; ++i) {
    if (s->shim_args[i] >= 0 && get(run, index, s->shim_args[i], &t[i])) return -1;
  }
  const int64_t* w = s->pool;
  const int cudnn = s->shim == TCCD_SHIM_SDPA_CUDNN;
  double scale = double_of(w[4]);
  void* ret[9] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
  int64_t max_q = 0, max_k = 0;
  void* fn = shim_fn(run->p->values[s->shim_args[0]].device_type, s->shim);
  int32_t err =
      cudnn ? ((SdpaCudnnShimFn)fn)(t[0], t[1], t[2], t[3] != NULL ? &t[3] : NULL, (int32_t)w[5],
                                    double_of(w[0]), (int32_t)w[1], (int32_t)w[2],
                                    w[3] ? &scale : NULL, &ret[0], &ret[1], &ret[2], &ret[3],
                                    &max_q, &max_k, &ret[6], &ret[7], &ret[8])
            : ((SdpaFlashShimFn)fn)(t[0], t[1], t[2], double_of(w[0]), (int32_t)w[1], (int32_t)w[2],
                                    w[3] ? &scale : NULL, &ret[0], &ret[1], &ret[2], &ret[3],
                                    &max_q, &max_k, &ret[6], &ret[7], &ret[8]);
  if (err != 0) {
    const char* what = t_torch_exception_get_what_without_backtrace
                           ? t_torch_exception_get_what_without_backtrace()
                           : NULL;
    return fail("tccd plan step %ld (%s) failed%s%s", (long)index, s->op_name,
                what && what[0] ? ": " : "", what && what[0] ? what : "");
  }
  for (int i = 0; i < 9; ++i) {
    if (i != 4 && i != 5) set_output(run, s, i, ret[i]);
  }
  return 0;
}

static int run_extern_typed(Run* run, const Step* s, int64_t index) {
  void* t[3] = {NULL, NULL, NULL};
  if (s->shim == TCCD_SHIM_COPY) {
    /* copy_(self, src, non_blocking) returns self: a new handle of it where a step reads it. */
    void* ret = NULL;
    if (get(run, index, s->shim_args[0], &t[0]) || get(run, index, s->shim_args[1], &t[1]))
      return -1;
    if (t_aoti_torch_copy_(t[0], t[1], s->conv_transposed) != 0 ||
        (s->out[0] >= 0 && t_aoti_torch_new_tensor_handle(t[0], &ret) != 0)) {
      const char* what = t_torch_exception_get_what_without_backtrace
                             ? t_torch_exception_get_what_without_backtrace()
                             : NULL;
      return fail("tccd plan step %ld (%s) failed%s%s", (long)index, s->op_name,
                  what && what[0] ? ": " : "", what && what[0] ? what : "");
    }
    if (ret != NULL) set_output(run, s, 0, ret);
    return 0;
  }
  if (s->shim == TCCD_SHIM_SDPA_FLASH || s->shim == TCCD_SHIM_SDPA_CUDNN)
    return run_attention_shim(run, s, index);
  for (int i = 0; i < 3; ++i) {
    if (s->shim_args[i] >= 0 && get(run, index, s->shim_args[i], &t[i])) return -1;
  }
  const int64_t* pool = s->pool;
#define LIST(k) pool + s->conv_list[k] + 1, pool[s->conv_list[k]]
  void* fn = shim_fn(run->p->values[s->shim_args[0]].device_type, s->shim);
  int32_t err;
  if (s->shim == TCCD_SHIM_CONVOLUTION) {
    void* ret = NULL;
    err = ((ConvShimFn)fn)(t[0], t[1], t[2] != NULL ? &t[2] : NULL, LIST(0), LIST(1), LIST(2),
                           s->conv_transposed, LIST(3), s->conv_groups, &ret);
    if (err == 0) set_output(run, s, 0, ret);
  } else {
    /* Every ret pointer is passed (before torch 2.13 the shim writes all three); a masked-off
     * gradient comes back as the handle of an undefined tensor, dropped by set_output as no
     * step reads it (checked at bind). */
    void* ret[3] = {NULL, NULL, NULL};
    const int64_t* bias_sizes = s->conv_list[4] >= 0 ? pool + s->conv_list[4] + 1 : NULL;
    err = ((ConvBackwardShimFn)fn)(t[0], t[1], t[2], bias_sizes != NULL ? &bias_sizes : NULL,
                                   bias_sizes != NULL ? pool[s->conv_list[4]] : 0, LIST(0), LIST(1),
                                   LIST(2), s->conv_transposed, LIST(3), s->conv_groups,
                                   s->conv_mask, 3, &ret[0], &ret[1], &ret[2]);
    if (err == 0) {
      for (int i = 0; i < 3; ++i) set_output(run, s, i, ret[i]);
    }
  }
#undef LIST
  if (err != 0) {
    const char* what = t_torch_exception_get_what_without_backtrace
                           ? t_torch_exception_get_what_without_backtrace()
                           : NULL;
    return fail("tccd plan step %ld (%s) failed%s%s", (long)index, s->op_name,
                what && what[0] ? ": " : "", what && what[0] ? what : "");
  }
  return 0;
}

/* arange(start, end, step) of integers: n = ceil((end - start) / step) elements start + i*step,
 * filled on the host (a CUDA output is copied over: position ids, a few KB). */
static int run_extern_arange(Run* run, const Step* s, int64_t index) {
  int64_t v[3];
  for (int i = 0; i < 3; ++i)
    v[i] = s->arange[2 * i] ? run->expr[s->arange[2 * i + 1]] : s->arange[2 * i + 1];
  const int64_t start = v[0], end = v[1], step = v[2];
  if (step == 0) return fail("tccd plan step %ld (arange): step 0", (long)index);
  int64_t n = step > 0 ? (end - start + step - 1) / step : (start - end - step - 1) / -step;
  if (n < 0) n = 0;
  const ValueMeta* m = &run->p->values[s->out[0]];
  const int64_t stride = 1;
  void* host = NULL;
  if (t_aoti_torch_empty_strided(1, &n, &stride, m->dtype, TCCD_C10_DEVICE_CPU, 0, &host) != 0)
    return fail("tccd plan step %ld (arange): allocating %ld elements failed", (long)index,
                (long)n);
  void* data = NULL;
  t_aoti_torch_get_data_ptr(host, &data);
  for (int64_t i = 0; i < n; ++i) {
    if (m->dtype == TCCD_C10_INT64)
      ((int64_t*)data)[i] = start + i * step;
    else
      ((int32_t*)data)[i] = (int32_t)(start + i * step);
  }
  if (m->device_type == TCCD_C10_DEVICE_CPU) {
    set_output(run, s, 0, host);
    return 0;
  }
  void* dev = NULL;
  int32_t device = m->device_index;
  if (device < 0 && (t_aoti_torch_get_current_device_index == NULL ||
                     t_aoti_torch_get_current_device_index(&device) != 0))
    device = 0;
  int rc = 0;
  if (t_aoti_torch_empty_strided(1, &n, &stride, m->dtype, m->device_type, device, &dev) != 0 ||
      t_aoti_torch_copy_(dev, host, 0) != 0)
    rc = fail("tccd plan step %ld (arange): copying to the device failed", (long)index);
  drop(&host);
  if (rc) {
    drop(&dev);
    return rc;
  }
  set_output(run, s, 0, dev);
  return 0;
}

static int run_extern_python(Run* run, const Step* s, int64_t index) {
  void* refs[s->n_refs ? s->n_refs : 1];
  void* outs[s->n_out ? s->n_out : 1];
  memset(outs, 0, sizeof(outs));
  for (int64_t i = 0; i < s->n_refs; ++i) {
    void* h;
    refs[i] = NULL;
    if (get(run, index, s->refs[i], &h) || t_aoti_torch_new_tensor_handle(h, &refs[i]) != 0) {
      for (int64_t j = 0; j < i; ++j) drop(&refs[j]);
      return -1;
    }
  }
  /* The callee takes the ref handles, also when it fails. */
  if (run->p->python_step(index, s->n_refs, refs, s->n_out, outs) != 0) {
    for (int64_t o = 0; o < s->n_out; ++o) drop(&outs[o]);
    return fail("tccd plan step %ld (%s): the Python step failed", (long)index, s->op_name);
  }
  for (int64_t o = 0; o < s->n_out; ++o) {
    if (s->out[o] >= 0) {
      drop(&run->env[s->out[o]]);
      run->env[s->out[o]] = outs[o];
    } else {
      drop(&outs[o]);
    }
  }
  return 0;
}

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Adds the time since *since to class `c` and restarts the clock (profiling on only). */
static void charge(TccdPlan* p, int c, int64_t* since, int64_t steps) {
  int64_t t = now_ns();
  __atomic_fetch_add(&p->prof_ns[c], t - *since, __ATOMIC_RELAXED);
  __atomic_fetch_add(&p->prof_steps[c], steps, __ATOMIC_RELAXED);
  *since = t;
}

EXPORT int64_t tccd_plan_profile(const TccdPlan* p, int64_t* calls, int64_t* ns, int64_t* steps,
                                 int64_t n) {
  if (!p->profile) return 0;
  *calls = __atomic_load_n(&p->prof_calls, __ATOMIC_RELAXED);
  for (int64_t c = 0; c < n && c < PROF_CLASSES; ++c) {
    ns[c] = __atomic_load_n(&p->prof_ns[c], __ATOMIC_RELAXED);
    steps[c] = __atomic_load_n(&p->prof_steps[c], __ATOMIC_RELAXED);
  }
  return PROF_CLASSES;
}

/* With TCCD_PLAN_PROFILE: each step's wall nanoseconds in the first run (releases included),
 * into ns[n] by step index. Returns the number of steps (0: off). */
EXPORT int64_t tccd_plan_profile_first_steps(const TccdPlan* p, int64_t* ns, int64_t n) {
  if (!p->profile || p->first_step_ns == NULL) return 0;
  for (int64_t i = 0; i < n && i < p->num_steps; ++i)
    ns[i] = __atomic_load_n(&p->first_step_ns[i], __ATOMIC_RELAXED);
  return p->num_steps;
}

/* With TCCD_PLAN_PROFILE: each step's wall nanoseconds summed over the profiled runs, into ns[n]
 * (by step index; the client sums extern steps by op). Returns the number of steps (0: off). */
EXPORT int64_t tccd_plan_profile_steps(const TccdPlan* p, int64_t* ns, int64_t n) {
  if (!p->profile || p->prof_step_ns == NULL) return 0;
  for (int64_t i = 0; i < n && i < p->num_steps; ++i)
    ns[i] = __atomic_load_n(&p->prof_step_ns[i], __ATOMIC_RELAXED);
  return p->num_steps;
}

/* With TCCD_PLAN_PROFILE: the COUNTS counters summed over the profiled runs, into counts[n].
 * Returns the number of counters (0: off). */
EXPORT int64_t tccd_plan_profile_counts(const TccdPlan* p, int64_t* counts, int64_t n) {
  if (!p->profile) return 0;
  for (int64_t c = 0; c < n && c < COUNTS; ++c)
    counts[c] = __atomic_load_n(&p->prof_count[c], __ATOMIC_RELAXED);
  return COUNTS;
}

/* Which NATIVE_* kind a kernel or segment step is. */
static int native_kind(const Step* s) {
  if (s->kind == TCCD_STEP_SEGMENT) return NATIVE_SEGMENT;
  switch (s->abi) {
    case TCCD_ABI_CUDA:
      return NATIVE_CUDA;
    case TCCD_ABI_CUDA_SYM:
      return NATIVE_CUDA_SYM;
    case TCCD_ABI_CUDA_SYM_GEMM:
      return NATIVE_SYM_GEMM;
    default:
      return NATIVE_CPU;
  }
}

/* With TCCD_PLAN_PROFILE: the native steps by kind (CUDA kernels with static sizes, CUDA kernels
 * with run-time sizes, sized gemms, segments, CPU kernels), NATIVE_FIELDS words each summed over
 * the profiled runs: wall ns, ns in the launch (call_cuda, or the CPU kernel's body), ns in
 * allocations, steps; into out[n] row by row. Returns the number of words (0: off). An optional
 * symbol: clients look it up before calling it. */
EXPORT int64_t tccd_plan_profile_native(const TccdPlan* p, int64_t* out, int64_t n) {
  if (!p->profile) return 0;
  for (int64_t i = 0; i < n && i < NATIVE_KINDS * NATIVE_FIELDS; ++i)
    out[i] =
        __atomic_load_n(&p->prof_native[i / NATIVE_FIELDS][i % NATIVE_FIELDS], __ATOMIC_RELAXED);
  return NATIVE_KINDS * NATIVE_FIELDS;
}

EXPORT int tccd_plan_run_symbolic(TccdPlan* p, void** inputs, int64_t n_inputs, void** outputs,
                                  int64_t n_outputs, int64_t n_symbols, const int64_t* symbols) {
  int64_t expr[p->n_exprs ? p->n_exprs : 1];
  Run run = {.p = p,
             .expr = expr,
             .gemm_ws_device = -1,
             .stream_device = -1}; /* the others zero */
  int rc = 0;
  int64_t since = p->profile ? now_ns() : 0;
  if (n_inputs != p->num_inputs || n_outputs != p->num_ref_outputs) {
    for (int64_t i = 0; i < n_inputs; ++i) drop(&inputs[i]);
    return fail("tccd plan takes %ld inputs and gives %ld outputs, called with %ld and %ld",
                (long)p->num_inputs, (long)p->num_ref_outputs, (long)n_inputs, (long)n_outputs);
  }
  if ((p->n_exprs > 0 || p->n_bindings > 0) &&
      eval_exprs(p, inputs, n_symbols, symbols, expr) != 0) {
    for (int64_t i = 0; i < n_inputs; ++i) drop(&inputs[i]);
    return -1;
  }
  run.env = calloc((size_t)(p->num_values ? p->num_values : 1), sizeof(void*));
  if (p->seg != NULL) {
    /* Per value storage, per segment workspace and packed flag: one block. */
    const size_t n = (size_t)(p->num_values + p->n_seg_comps);
    run.seg_storage = calloc(n * sizeof(void*) + (size_t)p->n_seg_comps, 1);
    if (run.seg_storage != NULL) {
      run.seg_ws = (void**)(run.seg_storage + p->num_values);
      run.seg_ready = (unsigned char*)(run.seg_ws + p->n_seg_comps);
    } else {
      rc = fail("out of memory"); /* no step runs; the inputs are dropped below */
    }
  }
  memcpy(run.env, inputs, (size_t)n_inputs * sizeof(void*));
  for (int64_t i = 0; i < n_outputs; ++i) outputs[i] = NULL;
  /* The first run is left out of the profile: it pays one-time costs (CUDA modules, cuDNN
   * and cuBLAS set-up, autotuning) that say nothing about a step's steady host time. */
  const int64_t run_index =
      p->profile ? __atomic_fetch_add(&p->prof_runs, 1, __ATOMIC_RELAXED) : -1;
  int profiled = run_index > 0;
  /* The first run is timed apart, per step (tccd_plan_profile_first_steps). */
  int64_t* first = run_index == 0 ? p->first_step_ns : NULL;
  run.profiled = profiled;
  if (profiled) {
    __atomic_fetch_add(&p->prof_calls, 1, __ATOMIC_RELAXED);
    charge(p, PROF_ENTRY_EXIT, &since, 0);
  }
  for (int64_t index = 0; index < p->num_steps && rc == 0; ++index) {
    const Step* s = &p->steps[index];
    int cls = PROF_KERNEL;
    run.step_launch_ns = run.step_alloc_ns = 0;
    switch (s->kind) {
      case TCCD_STEP_KERNEL:
        rc = run_kernel(&run, s, index);
        break;
      case TCCD_STEP_SEGMENT:
        rc = run_segment(&run, s, index);
        cls = PROF_SEGMENT;
        break;
      case TCCD_STEP_ALIAS:
        rc = run_alias(&run, s, index);
        cls = PROF_ALIAS;
        break;
      case TCCD_STEP_EXTERN:
        if (s->view_fast && is_seg(&run, s->out[0])) {
          cls = PROF_ALIAS; /* a segment view: its data is its root's (seg_data) */
        } else if (s->extern_mode == EXTERN_DISPATCHER) {
          rc = run_extern_dispatcher(&run, s, index);
          cls = PROF_EXTERN_DISPATCHER;
        } else if (s->extern_mode == EXTERN_OUT_SHIM) {
          rc = run_extern_shim(&run, s, index);
          cls = PROF_EXTERN_SHIM;
        } else if (s->extern_mode == EXTERN_TYPED_SHIM) {
          rc = run_extern_typed(&run, s, index);
          cls = PROF_EXTERN_SHIM;
        } else if (s->extern_mode == EXTERN_ARANGE) {
          rc = run_extern_arange(&run, s, index);
          cls = PROF_EXTERN_SHIM;
        } else if (s->extern_mode == EXTERN_PYTHON && p->python_step != NULL) {
          rc = run_extern_python(&run, s, index);
          cls = PROF_EXTERN_PYTHON;
        } else {
          rc = fail("tccd plan step %ld (%s) is bound to nothing", (long)index, s->op_name);
        }
        break;
    }
    if (profiled) {
      const int64_t start = since;
      charge(p, cls, &since, 1);
      if (p->prof_step_ns != NULL)
        __atomic_fetch_add(&p->prof_step_ns[index], since - start, __ATOMIC_RELAXED);
      if (cls == PROF_KERNEL || cls == PROF_SEGMENT) {
        const int kind = native_kind(s);
        const int64_t add[NATIVE_FIELDS] = {since - start, run.step_launch_ns, run.step_alloc_ns,
                                            1};
        for (int f = 0; f < NATIVE_FIELDS; ++f)
          __atomic_fetch_add(&p->prof_native[kind][f], add[f], __ATOMIC_RELAXED);
      }
    }
    for (int64_t i = 0; rc == 0 && i < s->n_release; ++i) drop(&run.env[s->release[i]]);
    /* A segment's values are all dead: later work reuses its bytes only after this on the
     * stream (the caching allocator's order), as with any value released here. */
    while (run.seg_ws != NULL && run.seg_next_drop < p->n_seg_comps &&
           p->seg_comp_last[run.seg_next_drop] <= index)
      drop(&run.seg_ws[run.seg_next_drop++]);
    if (profiled) charge(p, PROF_RELEASE, &since, s->n_release);
    if (first != NULL) {
      const int64_t t = now_ns();
      first[index] = t - since;
      since = t;
    }
  }
  for (int64_t i = 0; rc == 0 && i < n_outputs; ++i) {
    void* h;
    if ((rc = get(&run, -1, p->output_refs[i], &h)) == 0 &&
        t_aoti_torch_new_tensor_handle(h, &outputs[i]) != 0)
      rc = fail("tccd plan: output %ld: new handle failed", (long)i);
  }
  if (rc != 0) {
    for (int64_t i = 0; i < n_outputs; ++i) drop(&outputs[i]);
  }
  for (int64_t i = 0; i < p->num_values; ++i) drop(&run.env[i]);
  free(run.env);
  /* The caching allocator reuses it only for work ordered after the gemms on their stream. */
  drop(&run.gemm_ws);
  for (int64_t c = 0; run.seg_ws != NULL && c < p->n_seg_comps; ++c) drop(&run.seg_ws[c]);
  free(run.seg_storage);
  /* The same for the arena: every step that used its bytes is ordered before this on the
   * stream (and views of it that were released hold no reference any more). */
  for (int g = 0; g < MAX_ARENAS; ++g) drop(&run.arena[g]);
  if (profiled) charge(p, PROF_ENTRY_EXIT, &since, 0);
  return rc;
}

EXPORT int tccd_plan_run(TccdPlan* p, void** inputs, int64_t n_inputs, void** outputs,
                         int64_t n_outputs) {
  return tccd_plan_run_symbolic(p, inputs, n_inputs, outputs, n_outputs, 0, NULL);
}

/* ------------------------------------------------------------------------------------------ */
/* One call from Python with the capsules themselves                                           */
/* ------------------------------------------------------------------------------------------ */

/* Python's stable C API, resolved from the calling process (tccd_plan_py_init): the client's
 * per-call work is then one foreign call whatever the number of tensors, where reading each
 * capsule's pointer and wrapping each output in a capsule cost one ctypes call per tensor
 * (~1 us each: 0.7 ms for ResNet-50's ~300 tensors per plan call). PyObject* is void* here. */
typedef struct {
  intptr_t (*PyList_Size)(void*);
  void* (*PyList_GetItem)(void*, intptr_t);
  int (*PyList_Append)(void*, void*);
  void* (*PyCapsule_GetPointer)(void*, const char*);
  void* (*PyCapsule_New)(void*, const char*, void*);
  void (*Py_DecRef)(void*);
  void* (*PyEval_SaveThread)(void);
  void (*PyEval_RestoreThread)(void*);
  void (*PyErr_Clear)(void);
} PyApi;
static PyApi g_py;
static int g_py_ready;

EXPORT int tccd_plan_py_init(void) {
  pthread_mutex_lock(&g_init_mu);
  int rc = 0;
  if (!g_py_ready) {
#define PY(name)                                                               \
  if ((*(void**)& g_py.name = dlsym(RTLD_DEFAULT, #name)) == NULL) {           \
    rc = fail("the calling process has no %s (not a Python process?)", #name); \
  }
    PY(PyList_Size)
    PY(PyList_GetItem) PY(PyList_Append) PY(PyCapsule_GetPointer) PY(PyCapsule_New) PY(Py_DecRef)
        PY(PyEval_SaveThread) PY(PyEval_RestoreThread) PY(PyErr_Clear)
#undef PY
            g_py_ready = rc == 0;
  }
  pthread_mutex_unlock(&g_init_mu);
  return rc;
}

/* tccd_plan_run_symbolic with the inputs as a Python list of capsules (of owned tensor handles,
 * torch._C._aoti.unsafe_alloc_void_ptrs_from_tensors) and the outputs appended to the Python
 * list `out_list` as capsules (for alloc_tensors_by_stealing_from_void_ptrs). Called with the
 * GIL held (ctypes.PyDLL); the plan itself runs with the GIL released, as ctypes does for
 * tccd_plan_run (the Python callback takes it back for its steps). */
EXPORT int tccd_plan_run_py(TccdPlan* p, void* in_list, void* out_list, int64_t n_symbols,
                            const int64_t* symbols) {
  if (!g_py_ready) return fail("tccd_plan_py_init was not called");
  intptr_t n = g_py.PyList_Size(in_list);
  if (n < 0) {
    g_py.PyErr_Clear();
    return fail("tccd plan inputs: not a list");
  }
  void* stack_inputs[64];
  void** inputs = n <= 64 ? stack_inputs : malloc((size_t)n * sizeof(void*));
  void* stack_outputs[64];
  void** outputs =
      p->num_ref_outputs <= 64
          ? stack_outputs
          : malloc((size_t)(p->num_ref_outputs ? p->num_ref_outputs : 1) * sizeof(void*));
  int rc = 0;
  if (inputs == NULL || outputs == NULL) {
    rc = fail("out of memory");
    goto out;
  }
  for (intptr_t i = 0; i < n; ++i) {
    inputs[i] = g_py.PyCapsule_GetPointer(g_py.PyList_GetItem(in_list, i), NULL);
    if (inputs[i] == NULL) {
      g_py.PyErr_Clear();
      /* The handles read so far are the runtime's (the plan owns its inputs, even on failure). */
      for (intptr_t j = 0; j < i; ++j) drop(&inputs[j]);
      rc = fail("tccd plan input %ld is not a tensor capsule", (long)i);
      goto out;
    }
  }
  void* state = g_py.PyEval_SaveThread();
  rc = tccd_plan_run_symbolic(p, inputs, n, outputs, p->num_ref_outputs, n_symbols, symbols);
  g_py.PyEval_RestoreThread(state);
  for (int64_t i = 0; rc == 0 && i < p->num_ref_outputs; ++i) {
    void* capsule = g_py.PyCapsule_New(outputs[i], NULL, NULL);
    if (capsule == NULL || g_py.PyList_Append(out_list, capsule) != 0) {
      g_py.PyErr_Clear();
      if (capsule != NULL) g_py.Py_DecRef(capsule);
      /* Out of memory: every handle is freed and the caller reads no capsule of `out_list`. */
      for (int64_t j = 0; j < p->num_ref_outputs; ++j) drop(&outputs[j]);
      rc = fail("tccd plan output %ld: no capsule", (long)i);
      break;
    }
    g_py.Py_DecRef(capsule);
  }
out:
  if (inputs != stack_inputs) free(inputs);
  if (outputs != stack_outputs) free(outputs);
  return rc;
}
