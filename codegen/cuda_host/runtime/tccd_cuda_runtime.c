/* The fixed part of every kernels_cuda.so: loads the CUDA driver and the embedded cubin, and
 * launches kernels on the caller's stream (interface and data layout: tccd_cuda_runtime.h).
 *
 * Built once at daemon build time (codegen/cuda_host/CMakeLists.txt) with
 *   -O2 -fPIC -fvisibility=hidden -fno-stack-protector -fno-asynchronous-unwind-tables
 * and embedded in the daemon; every symbol here is hidden, so the .so exports only the generated
 * entry points. It may reference nothing but libc (dlopen, dlsym, dlerror, pthread_mutex_lock/
 * unlock, memcpy, vsnprintf) and __tls_get_addr (the thread-local error message): the .so has no
 * DT_NEEDED entries and resolves these against the loading process. The driver is dlopen'ed
 * (libcuda.so.1, RTLD_NOLOAD first: PyTorch has normally loaded it already) and its functions
 * dlsym'ed, so the .so loads on machines without a driver and fails only when called.
 *
 * Concurrency: the driver table and each context's entry are written once, under g_mutex, and
 * published with a release store that readers pair with an acquire load; after that a launch
 * takes no lock, allocates nothing and never synchronises with the device, so it may run from
 * many threads at once and inside CUDA graph capture.
 */
#include "tccd_cuda_runtime.h"
#include "tccd_cuda_internal.h"
#include "tccd_cuda_tune.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---- The driver API subset, declared by hand (no cuda.h at build time) ------------------- */

typedef int CUresult;
typedef int CUdevice;
typedef void* CUcontext;
typedef void* CUmodule;
typedef void* CUfunction;
typedef void* CUstream;

enum { kCuDeviceAttributeMultiprocessorCount = 16 };

/* Names are the ABI symbols cuda.h maps the API to (cuCtxPushCurrent -> cuCtxPushCurrent_v2);
 * the legacy-default-stream variants (not *_ptsz), which is what a NULL stream means to PyTorch. */
struct driver {
  CUresult (*cuInit)(unsigned flags);
  CUresult (*cuGetErrorName)(CUresult error, const char** name);
  CUresult (*cuGetErrorString)(CUresult error, const char** text);
  CUresult (*cuCtxGetCurrent)(CUcontext* ctx);
  CUresult (*cuCtxGetDevice)(CUdevice* device);
  CUresult (*cuCtxPushCurrent)(CUcontext ctx);
  CUresult (*cuCtxPopCurrent)(CUcontext* ctx);
  CUresult (*cuStreamGetCtx)(CUstream stream, CUcontext* ctx);
  CUresult (*cuDeviceGetAttribute)(int* value, int attribute, CUdevice device);
  CUresult (*cuModuleLoadData)(CUmodule* module, const void* image);
  CUresult (*cuModuleUnload)(CUmodule module);
  CUresult (*cuModuleGetFunction)(CUfunction* function, CUmodule module, const char* name);
  CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int* blocks, CUfunction function,
                                                          int block_size, size_t dynamic_smem);
  CUresult (*cuLaunchKernel)(CUfunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                             unsigned block_x, unsigned block_y, unsigned block_z,
                             unsigned shared_bytes, CUstream stream, void** params, void** extra);
  CUresult (*cuMemsetD32Async)(uint64_t device_ptr, unsigned value, size_t count, CUstream stream);
};

/* Guards loading the driver and loading a module into a context (both rare, both slow). */
static struct tccd_rt_tune_driver g_tune; /* written under g_mutex before g_driver_ready */
static int g_tune_ready;                  /* every g_tune function resolved */

static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct driver g_driver; /* written under g_mutex before g_driver_ready is set */
static int g_driver_ready;     /* 0, then 1 forever (release store / acquire load) */

/* ---- Errors --------------------------------------------------------------------------------- */

static __thread char t_last_error[512];

int tccd_rt_set_error(int code, const char* format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(t_last_error, sizeof(t_last_error), format, args);
  va_end(args);
  return code;
}

/* `what` names the failed call and its object, e.g. "cuLaunchKernel(relu_0_contig)". */
static int driver_error(const struct driver* d, CUresult result, const char* what) {
  const char* name = NULL;
  const char* text = NULL;
  if (d->cuGetErrorName(result, &name) != 0 || name == NULL) name = "unknown CUresult";
  if (d->cuGetErrorString(result, &text) != 0 || text == NULL) text = "";
  return tccd_rt_set_error(result, "tccd: %s failed: %s (%d) %s", what, name, result, text);
}

const char* tccd_rt_last_error(void) { return t_last_error; }

/* ---- The driver ----------------------------------------------------------------------------- */

static int load_driver_locked(void) {
  if (g_driver_ready) return TCCD_RT_SUCCESS;
  /* RTLD_NOLOAD first: in PyTorch the driver is already there and this only takes a
   * reference; otherwise load it. Never closed: the driver outlives every module. */
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
  if (lib == NULL) lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (lib == NULL) {
    const char* why = dlerror();
    return tccd_rt_set_error(TCCD_RT_ERROR_NO_DRIVER,
                             "tccd: the CUDA driver could not be loaded: %s",
                             why != NULL ? why : "dlopen(libcuda.so.1) failed");
  }
  struct driver d;
  memset(&d, 0, sizeof(d));
  /* POSIX's idiom for turning dlsym's void* into a function pointer. */
#define TCCD_RT_RESOLVE(field, symbol)                                                          \
  do {                                                                                          \
    *(void**)(&d.field) = dlsym(lib, symbol);                                                   \
    if (d.field == NULL) {                                                                      \
      return tccd_rt_set_error(TCCD_RT_ERROR_NO_DRIVER,                                         \
                               "tccd: the CUDA driver (libcuda.so.1) lacks %s: driver too old", \
                               symbol);                                                         \
    }                                                                                           \
  } while (0)
  TCCD_RT_RESOLVE(cuInit, "cuInit");
  TCCD_RT_RESOLVE(cuGetErrorName, "cuGetErrorName");
  TCCD_RT_RESOLVE(cuGetErrorString, "cuGetErrorString");
  TCCD_RT_RESOLVE(cuCtxGetCurrent, "cuCtxGetCurrent");
  TCCD_RT_RESOLVE(cuCtxGetDevice, "cuCtxGetDevice");
  TCCD_RT_RESOLVE(cuCtxPushCurrent, "cuCtxPushCurrent_v2");
  TCCD_RT_RESOLVE(cuCtxPopCurrent, "cuCtxPopCurrent_v2");
  TCCD_RT_RESOLVE(cuStreamGetCtx, "cuStreamGetCtx");
  TCCD_RT_RESOLVE(cuDeviceGetAttribute, "cuDeviceGetAttribute");
  TCCD_RT_RESOLVE(cuModuleLoadData, "cuModuleLoadData");
  TCCD_RT_RESOLVE(cuModuleUnload, "cuModuleUnload");
  TCCD_RT_RESOLVE(cuModuleGetFunction, "cuModuleGetFunction");
  TCCD_RT_RESOLVE(cuOccupancyMaxActiveBlocksPerMultiprocessor,
                  "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  TCCD_RT_RESOLVE(cuLaunchKernel, "cuLaunchKernel");
  TCCD_RT_RESOLVE(cuMemsetD32Async, "cuMemsetD32Async");
#undef TCCD_RT_RESOLVE
  /* Idempotent, and cheap when the process already initialised the driver. */
  const CUresult result = d.cuInit(0);
  if (result != 0) return driver_error(&d, result, "cuInit");
  /* Autotuning's functions: optional (a missing one turns autotuning off, nothing else). */
  struct tccd_rt_tune_driver t;
  memset(&t, 0, sizeof(t));
  int tune_ok = 1;
#define TCCD_RT_RESOLVE_OPTIONAL(field, symbol)  \
  do {                                           \
    *(void**)(&t.field) = dlsym(lib, symbol);    \
    if (t.field == NULL) tune_ok = 0;            \
  } while (0)
  TCCD_RT_RESOLVE_OPTIONAL(cuCtxGetDevice, "cuCtxGetDevice");
  TCCD_RT_RESOLVE_OPTIONAL(cuMemAlloc, "cuMemAlloc_v2");
  TCCD_RT_RESOLVE_OPTIONAL(cuMemFree, "cuMemFree_v2");
  TCCD_RT_RESOLVE_OPTIONAL(cuMemsetD32Async, "cuMemsetD32Async");
  TCCD_RT_RESOLVE_OPTIONAL(cuStreamCreate, "cuStreamCreate");
  TCCD_RT_RESOLVE_OPTIONAL(cuStreamDestroy, "cuStreamDestroy_v2");
  TCCD_RT_RESOLVE_OPTIONAL(cuStreamSynchronize, "cuStreamSynchronize");
  TCCD_RT_RESOLVE_OPTIONAL(cuEventCreate, "cuEventCreate");
  TCCD_RT_RESOLVE_OPTIONAL(cuEventRecord, "cuEventRecord");
  TCCD_RT_RESOLVE_OPTIONAL(cuEventElapsedTime, "cuEventElapsedTime");
  TCCD_RT_RESOLVE_OPTIONAL(cuEventDestroy, "cuEventDestroy_v2");
  TCCD_RT_RESOLVE_OPTIONAL(cuThreadExchangeStreamCaptureMode, "cuThreadExchangeStreamCaptureMode");
#undef TCCD_RT_RESOLVE_OPTIONAL
  *(void**)(&t.cuStreamBeginCapture) = dlsym(lib, "cuStreamBeginCapture_v2");
  *(void**)(&t.cuStreamEndCapture) = dlsym(lib, "cuStreamEndCapture");
  *(void**)(&t.cuGraphGetNodes) = dlsym(lib, "cuGraphGetNodes");
  *(void**)(&t.cuGraphDestroy) = dlsym(lib, "cuGraphDestroy");
  g_tune = t;
  g_tune_ready = tune_ok;
  g_driver = d;
  __atomic_store_n(&g_driver_ready, 1, __ATOMIC_RELEASE);
  return TCCD_RT_SUCCESS;
}

/* The driver, loaded on first use. A failure is not remembered: a later call tries again. */
static int get_driver(const struct driver** out) {
  if (!__atomic_load_n(&g_driver_ready, __ATOMIC_ACQUIRE)) {
    pthread_mutex_lock(&g_mutex);
    const int code = load_driver_locked();
    pthread_mutex_unlock(&g_mutex);
    if (code != TCCD_RT_SUCCESS) return code;
  }
  *out = &g_driver;
  return TCCD_RT_SUCCESS;
}

const struct tccd_rt_tune_driver* tccd_rt_get_tune_driver(void) {
  return __atomic_load_n(&g_driver_ready, __ATOMIC_ACQUIRE) && g_tune_ready ? &g_tune : NULL;
}

/* ---- Contexts ------------------------------------------------------------------------------- */

/* The slot of `ctx` in module->contexts, or -1. Lock-free: published entries are never
 * modified and fill the table from the front. */
static int find_context(const struct tccd_rt_module* module, CUcontext ctx) {
  for (int i = 0; i < TCCD_RT_MAX_CONTEXTS; ++i) {
    const CUcontext entry = __atomic_load_n(&module->contexts[i].ctx, __ATOMIC_ACQUIRE);
    if (entry == ctx) return i;
    if (entry == NULL) break;
  }
  return -1;
}

/* Loads the cubin into `ctx` (the current context) and resolves every kernel's functions and
 * occupancy into a free slot, which it publishes last. Caller holds g_mutex. */
static int load_context_locked(const struct tccd_rt_module* module, const struct driver* d,
                               CUcontext ctx, int* slot_out) {
  int slot = find_context(module, ctx); /* another thread may have loaded it meanwhile */
  if (slot >= 0) {
    *slot_out = slot;
    return TCCD_RT_SUCCESS;
  }
  for (int i = 0; i < TCCD_RT_MAX_CONTEXTS && slot < 0; ++i) {
    if (module->contexts[i].ctx == NULL) slot = i;
  }
  if (slot < 0) {
    return tccd_rt_set_error(TCCD_RT_ERROR_NOT_SUPPORTED,
                             "tccd: the kernels are already loaded into %d CUDA contexts, the most "
                             "one kernels_cuda.so supports",
                             TCCD_RT_MAX_CONTEXTS);
  }
  CUdevice device = 0;
  CUresult result = d->cuCtxGetDevice(&device);
  if (result != 0) return driver_error(d, result, "cuCtxGetDevice");
  int num_sms = 0;
  result = d->cuDeviceGetAttribute(&num_sms, kCuDeviceAttributeMultiprocessorCount, device);
  if (result != 0) return driver_error(d, result, "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)");

  CUmodule loaded = NULL;
  /* A module of matmuls only has no cubin. */
  result = module->num_kernels > 0 ? d->cuModuleLoadData(&loaded, module->image) : 0;
  if (result != 0) {
    char what[96];
    snprintf(what, sizeof(what), "cuModuleLoadData(%llu-byte cubin)",
             (unsigned long long)module->image_size);
    return driver_error(d, result, what);
  }
  struct tccd_rt_function* functions = module->functions + (size_t)slot * module->num_kernels;
  for (int k = 0; k < module->num_kernels; ++k) {
    const struct tccd_rt_kernel* kernel = &module->kernels[k];
    struct tccd_rt_function* f = &functions[k];
    const char* entries[2] = {kernel->contig_entry, kernel->strided_entry};
    void** handles[2] = {&f->contig, &f->strided};
    int32_t* occupancy[2] = {&f->contig_blocks_per_sm, &f->strided_blocks_per_sm};
    for (int e = 0; e < 2; ++e) {
      char what[192];
      /* A kernel compiled for one layout has only that entry (an empty name for the other). */
      if (entries[e][0] == '\0') {
        *handles[e] = NULL;
        *occupancy[e] = 1;
        continue;
      }
      result = d->cuModuleGetFunction(handles[e], loaded, entries[e]);
      if (result == 0) {
        int blocks = 0;
        result = d->cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, *handles[e],
                                                                kernel->block_size, 0);
        *occupancy[e] = blocks > 0 ? blocks : 1;
        snprintf(what, sizeof(what), "cuOccupancyMaxActiveBlocksPerMultiprocessor(%s)", entries[e]);
      } else {
        snprintf(what, sizeof(what), "cuModuleGetFunction(%s)", entries[e]);
      }
      if (result != 0) {
        const int code = driver_error(d, result, what);
        (void)d->cuModuleUnload(loaded); /* deliberately ignored: already failing */
        return code;
      }
    }
  }
  const int gemm_code = tccd_rt_gemm_load_context(module, slot);
  if (gemm_code != TCCD_RT_SUCCESS) {
    if (loaded != NULL) (void)d->cuModuleUnload(loaded); /* deliberately ignored: already failing */
    return gemm_code;
  }
  module->contexts[slot].module = loaded;
  module->contexts[slot].num_sms = num_sms > 0 ? num_sms : 1;
  __atomic_store_n(&module->contexts[slot].ctx, ctx, __ATOMIC_RELEASE);
  *slot_out = slot;
  return TCCD_RT_SUCCESS;
}

/* The slot for `ctx`, loading the module into it on first use. */
static int get_context(const struct tccd_rt_module* module, const struct driver* d, CUcontext ctx,
                       int* slot_out) {
  *slot_out = find_context(module, ctx);
  if (*slot_out >= 0) return TCCD_RT_SUCCESS;
  pthread_mutex_lock(&g_mutex);
  const int code = load_context_locked(module, d, ctx, slot_out);
  pthread_mutex_unlock(&g_mutex);
  return code;
}

/* The context to work in: the current one; without one, the stream's, which is pushed (and
 * *pushed set) for the caller to pop. PyTorch's threads normally have a current context. */
static int enter_context(const struct driver* d, CUstream stream, CUcontext* ctx, int* pushed) {
  *pushed = 0;
  *ctx = NULL;
  CUresult result = d->cuCtxGetCurrent(ctx);
  if (result != 0) return driver_error(d, result, "cuCtxGetCurrent");
  if (*ctx != NULL) return TCCD_RT_SUCCESS;
  if (stream == NULL) {
    return tccd_rt_set_error(
        TCCD_RT_ERROR_INVALID_CONTEXT,
        "tccd: no current CUDA context on this thread (make the device current "
        "first, e.g. torch.cuda.set_device, or pass a non-default stream)");
  }
  result = d->cuStreamGetCtx(stream, ctx);
  if (result != 0) return driver_error(d, result, "cuStreamGetCtx");
  result = d->cuCtxPushCurrent(*ctx);
  if (result != 0) return driver_error(d, result, "cuCtxPushCurrent");
  *pushed = 1;
  return TCCD_RT_SUCCESS;
}

static void leave_context(const struct driver* d, int pushed) {
  if (!pushed) return;
  CUcontext ignored;
  (void)d->cuCtxPopCurrent(&ignored); /* deliberately ignored: it was pushed just before */
}

/* ---- Launching ------------------------------------------------------------------------------ */

/* codegen::GridSize, for the same arguments (tests compare the two). */
static int64_t grid_size(int64_t numel, int elements_per_thread, int block_size, int num_sms,
                         int blocks_per_sm) {
  if (numel <= 0) return 0;
  const int64_t per_block = (int64_t)(elements_per_thread > 1 ? elements_per_thread : 1) *
                            (block_size > 1 ? block_size : 1);
  const int64_t needed = (numel + per_block - 1) / per_block;
  const int64_t wave =
      (int64_t)(num_sms > 1 ? num_sms : 1) * (blocks_per_sm > 1 ? blocks_per_sm : 1);
  return needed < wave ? needed : wave;
}

/* The contig entry's precondition (codegen/cuda/cuda_backend.h): every operand's strides are the
 * row-major strides of the shape, ignoring dims of size 1, and every pointer is 16-byte aligned.
 * Fixed-layout operands (bits of row_operands) are skipped: the entry was compiled for their
 * declared layout, and the plan runtimes copy inputs into the declared layout first. */
static int is_contiguous(const struct tccd_rt_kernel* kernel, void* const* data,
                         const int64_t* strides) {
  for (int32_t o = 0; o < kernel->num_operands; ++o) {
    if (o < 64 && ((kernel->row_operands >> o) & 1u)) continue;
    if (((uintptr_t)data[o] & 15u) != 0) return 0;
    int64_t expected = 1;
    for (int32_t dim = kernel->rank - 1; dim >= 0; --dim) {
      const int64_t size = kernel->shape[dim];
      if (size != 1 && strides[(int64_t)o * kernel->rank + dim] != expected) return 0;
      expected *= size;
    }
  }
  return 1;
}

/* The row-reduction contig entry's precondition (TCCD_RT_KIND_ROWS in tccd_cuda_runtime.h). */
static int rows_are_contiguous(const struct tccd_rt_kernel* kernel, void* const* data,
                               const int64_t* strides) {
  /* The vectorised dims are the trailing ones: the reduced dims of a row reduction, the kept
   * dims of a column reduction. */
  const int32_t outer = kernel->kind == TCCD_RT_KIND_COLUMNS
                            ? kernel->num_reduced_dims
                            : kernel->rank - kernel->num_reduced_dims;
  for (int32_t o = 0; o < kernel->num_operands; ++o) {
    if (o < 64 && ((kernel->row_operands >> o) & 1u)) continue;
    if (((uintptr_t)data[o] & 15u) != 0) return 0;
    const int64_t* s = strides + (int64_t)o * kernel->rank;
    int64_t expected = 1;
    for (int32_t dim = kernel->rank - 1; dim >= outer; --dim) {
      const int64_t size = kernel->shape[dim];
      if (size != 1 && s[dim] != expected) return 0;
      expected *= size;
    }
    for (int32_t dim = 0; dim < outer; ++dim) {
      if (kernel->shape[dim] != 1 && s[dim] % kernel->elements_per_thread != 0) return 0;
    }
  }
  return 1;
}

/* A kernel compiled with its contig entry only (its plan declared every operand dense and
 * 16-byte aligned) launched with another layout: the plan runtimes copy such inputs into the
 * declared layout first (client/tccd/runtime.py), so this is a tccd bug, reported, not run. */
static int missing_strided(const struct tccd_rt_kernel* kernel) {
  return tccd_rt_set_error(TCCD_RT_ERROR_INVALID_VALUE,
                           "tccd: %s was compiled for dense 16-byte aligned operands only (its "
                           "plan's declared layout) and was launched with another layout",
                           kernel->name);
}

/* Row reductions: the fixed grid and block of the kernel, the strided parameter block for
 * both entries. */
static int launch_rows_in_context(const struct tccd_rt_module* module, const struct driver* d,
                                  int slot, int32_t index, void* const* data,
                                  const int64_t* strides, CUstream stream) {
  const struct tccd_rt_kernel* kernel = &module->kernels[index];
  const struct tccd_rt_function* f = &module->functions[(size_t)slot * module->num_kernels + index];
  uint64_t buffer[TCCD_RT_MAX_PARAM_BYTES / sizeof(uint64_t)];
  const size_t pointer_bytes = sizeof(uint64_t) * (size_t)kernel->num_operands;
  memcpy(buffer, data, pointer_bytes);
  memcpy((char*)buffer + pointer_bytes, strides,
         (size_t)kernel->strided_param_bytes - pointer_bytes);
  void* params[1] = {buffer};
  /* The strided entry runs any layout, the contig one only its own; a kernel may have one. */
  const int dense = rows_are_contiguous(kernel, data, strides);
  if (!dense && f->strided == NULL) return missing_strided(kernel);
  const int contig = dense && f->contig != NULL;
  const CUfunction function = contig ? f->contig : f->strided;
  const char* entry = contig ? kernel->contig_entry : kernel->strided_entry;
  const CUresult result =
      d->cuLaunchKernel(function, (unsigned)kernel->grid, 1, 1, (unsigned)kernel->block_size, 1, 1,
                        0, stream, params, NULL);
  if (result != 0) {
    char what[192];
    snprintf(what, sizeof(what), "cuLaunchKernel(%s, grid %lld)", entry, (long long)kernel->grid);
    return driver_error(d, result, what);
  }
  return TCCD_RT_SUCCESS;
}

static int launch_in_context(const struct tccd_rt_module* module, const struct driver* d, int slot,
                             int32_t index, void* const* data, const int64_t* strides,
                             CUstream stream) {
  const struct tccd_rt_kernel* kernel = &module->kernels[index];
  const struct tccd_rt_function* f = &module->functions[(size_t)slot * module->num_kernels + index];
  const int num_sms = module->contexts[slot].num_sms;
  /* The entry's single by-value struct parameter: data[] (contig) or data[] then strides[]
   * (strided). The driver copies it during the call, so stack storage is enough. */
  uint64_t buffer[TCCD_RT_MAX_PARAM_BYTES / sizeof(uint64_t)];
  void* params[1];
  CUfunction function;
  const char* entry;
  int64_t grid;
  const int dense = is_contiguous(kernel, data, strides);
  if (!dense && f->strided == NULL) return missing_strided(kernel);
  if (dense && f->contig != NULL) {
    params[0] = (void*)data;
    function = f->contig;
    entry = kernel->contig_entry;
    grid = grid_size(kernel->numel, kernel->elements_per_thread, kernel->block_size, num_sms,
                     f->contig_blocks_per_sm);
  } else {
    const size_t pointer_bytes = sizeof(uint64_t) * (size_t)kernel->num_operands;
    memcpy(buffer, data, pointer_bytes);
    if (kernel->rank > 0) { /* rank 0: no strides (and `strides` may be NULL) */
      memcpy((char*)buffer + pointer_bytes, strides,
             (size_t)kernel->strided_param_bytes - pointer_bytes);
    }
    params[0] = buffer;
    function = f->strided;
    entry = kernel->strided_entry;
    grid = grid_size(kernel->numel, 1, kernel->block_size, num_sms, f->strided_blocks_per_sm);
  }
  const CUresult result = d->cuLaunchKernel(
      function, (unsigned)grid, 1, 1, (unsigned)kernel->block_size, 1, 1, 0, stream, params, NULL);
  if (result != 0) {
    char what[192];
    snprintf(what, sizeof(what), "cuLaunchKernel(%s, grid %lld)", entry, (long long)grid);
    return driver_error(d, result, what);
  }
  return TCCD_RT_SUCCESS;
}

/* A pointwise kernel with run-time sizes (numel -1 in its tccd_rt_kernel): the contig entry takes
 * data[] then numel, the strided one data[], strides[] then every dim's size (cuda_backend.h).
 * The contig precondition is is_contiguous's, over the sizes of this call. */
static int launch_sized_in_context(const struct tccd_rt_module* module, const struct driver* d,
                                   int slot, int32_t index, void* const* data,
                                   const int64_t* strides, const int64_t* shape, int64_t numel,
                                   CUstream stream) {
  const struct tccd_rt_kernel* kernel = &module->kernels[index];
  const struct tccd_rt_function* f = &module->functions[(size_t)slot * module->num_kernels + index];
  const int num_sms = module->contexts[slot].num_sms;
  uint64_t buffer[TCCD_RT_MAX_PARAM_BYTES / sizeof(uint64_t)];
  const size_t pointer_bytes = sizeof(uint64_t) * (size_t)kernel->num_operands;
  const size_t stride_bytes = sizeof(int64_t) * (size_t)kernel->num_operands * (size_t)kernel->rank;
  void* params[1] = {buffer};
  memcpy(buffer, data, pointer_bytes);
  /* A kernel may have one entry (index kernels of symbolic plans: the strided one only). */
  int contig = f->contig != NULL;
  for (int32_t o = 0; o < kernel->num_operands && contig; ++o) {
    if (((uintptr_t)data[o] & 15u) != 0) contig = 0;
    int64_t expected = 1;
    for (int32_t dim = kernel->rank - 1; dim >= 0 && contig; --dim) {
      if (shape[dim] != 1 && strides[(int64_t)o * kernel->rank + dim] != expected) contig = 0;
      expected *= shape[dim];
    }
  }
  if (!contig && f->strided == NULL) return missing_strided(kernel);
  CUfunction function;
  const char* entry;
  int64_t grid;
  if (contig) {
    memcpy((char*)buffer + pointer_bytes, &numel, sizeof(numel));
    function = f->contig;
    entry = kernel->contig_entry;
    grid = grid_size(numel, kernel->elements_per_thread, kernel->block_size, num_sms,
                     f->contig_blocks_per_sm);
  } else {
    memcpy((char*)buffer + pointer_bytes, strides, stride_bytes);
    memcpy((char*)buffer + pointer_bytes + stride_bytes, shape,
           sizeof(int64_t) * (size_t)kernel->rank);
    function = f->strided;
    entry = kernel->strided_entry;
    grid = grid_size(numel, 1, kernel->block_size, num_sms, f->strided_blocks_per_sm);
  }
  const CUresult result = d->cuLaunchKernel(
      function, (unsigned)grid, 1, 1, (unsigned)kernel->block_size, 1, 1, 0, stream, params, NULL);
  if (result != 0) {
    char what[192];
    snprintf(what, sizeof(what), "cuLaunchKernel(%s, grid %lld)", entry, (long long)grid);
    return driver_error(d, result, what);
  }
  return TCCD_RT_SUCCESS;
}

/* A row reduction with run-time row counts (numel -1, kind TCCD_RT_KIND_ROWS; the reduced dims
 * are static): both entries take data[], strides[] then every dim's size, and the grid is
 * ceil(rows / rows per block) of this call, the rows per block standing in kernel->grid
 * (codegen/cuda/cuda_backend.h). A column reduction with run-time row counts (kind
 * TCCD_RT_KIND_COLUMNS, the kept dims static) takes the same parameters and its fixed grid. The
 * contig precondition is rows_are_contiguous's: it reads the reduced dims' sizes only, which are
 * the kernel's. */
static int launch_sized_rows_in_context(const struct tccd_rt_module* module, const struct driver* d,
                                        int slot, int32_t index, void* const* data,
                                        const int64_t* strides, const int64_t* shape,
                                        CUstream stream) {
  const struct tccd_rt_kernel* kernel = &module->kernels[index];
  const struct tccd_rt_function* f = &module->functions[(size_t)slot * module->num_kernels + index];
  uint64_t buffer[TCCD_RT_MAX_PARAM_BYTES / sizeof(uint64_t)];
  const size_t pointer_bytes = sizeof(uint64_t) * (size_t)kernel->num_operands;
  const size_t stride_bytes = sizeof(int64_t) * (size_t)kernel->num_operands * (size_t)kernel->rank;
  memcpy(buffer, data, pointer_bytes);
  memcpy((char*)buffer + pointer_bytes, strides, stride_bytes);
  memcpy((char*)buffer + pointer_bytes + stride_bytes, shape,
         sizeof(int64_t) * (size_t)kernel->rank);
  void* params[1] = {buffer};
  int64_t rows = 1;
  for (int32_t dim = 0; dim < kernel->rank - kernel->num_reduced_dims; ++dim) rows *= shape[dim];
  /* A column reduction's grid is its column tiles (x cluster split), whatever the row count. */
  const int64_t grid = kernel->kind == TCCD_RT_KIND_COLUMNS
                           ? kernel->grid
                           : (rows + kernel->grid - 1) / kernel->grid;
  if (grid > 0x7fffffff) {
    return tccd_rt_set_error(TCCD_RT_ERROR_INVALID_VALUE, "tccd: %s called with %lld rows",
                             kernel->name, (long long)rows);
  }
  const int dense = rows_are_contiguous(kernel, data, strides);
  if (!dense && f->strided == NULL) return missing_strided(kernel);
  const int contig = dense && f->contig != NULL;
  const CUfunction function = contig ? f->contig : f->strided;
  const char* entry = contig ? kernel->contig_entry : kernel->strided_entry;
  const CUresult result = d->cuLaunchKernel(
      function, (unsigned)grid, 1, 1, (unsigned)kernel->block_size, 1, 1, 0, stream, params, NULL);
  if (result != 0) {
    char what[192];
    snprintf(what, sizeof(what), "cuLaunchKernel(%s, grid %lld)", entry, (long long)grid);
    return driver_error(d, result, what);
  }
  return TCCD_RT_SUCCESS;
}

/* Zero-fills a scatter kernel's (TCCD_RT_KIND_SCATTER) one output, its last operand (`grid`
 * 4-byte elements), on the launch's stream: capturable in a CUDA graph, as the launch is. */
static int zero_scatter_output(const struct tccd_rt_kernel* kernel, const struct driver* d,
                               void* const* data, CUstream stream) {
  const CUresult result = d->cuMemsetD32Async((uint64_t)(uintptr_t)data[kernel->num_operands - 1],
                                              0u, (size_t)kernel->grid, stream);
  if (result == 0) return TCCD_RT_SUCCESS;
  char what[192];
  snprintf(what, sizeof(what), "cuMemsetD32Async(%s output, %lld)", kernel->name,
           (long long)kernel->grid);
  return driver_error(d, result, what);
}

/* A scatter kernel (TCCD_RT_KIND_SCATTER): its output zero-filled on the same stream (capturable
 * in a CUDA graph, as the launch), then the pointwise launch. */
static int launch_scatter_in_context(const struct tccd_rt_module* module, const struct driver* d,
                                     int slot, int32_t index, void* const* data,
                                     const int64_t* strides, CUstream stream) {
  const int code = zero_scatter_output(&module->kernels[index], d, data, stream);
  if (code != TCCD_RT_SUCCESS) return code;
  return launch_in_context(module, d, slot, index, data, strides, stream);
}

/* A kernel of any kind: pointwise, scatter, a row/column reduction or a tiled kernel (a fixed
 * grid like the reductions; its one entry is the strided one). */
static int launch_kernel_in_context(const struct tccd_rt_module* module, const struct driver* d,
                                    int slot, int32_t index, void* const* data,
                                    const int64_t* strides, CUstream stream) {
  switch (module->kernels[index].kind) {
    case TCCD_RT_KIND_POINTWISE:
      return launch_in_context(module, d, slot, index, data, strides, stream);
    case TCCD_RT_KIND_SCATTER:
      return launch_scatter_in_context(module, d, slot, index, data, strides, stream);
    case TCCD_RT_KIND_TILE:
    default:
      return launch_rows_in_context(module, d, slot, index, data, strides, stream);
  }
}

/* What every call does first: the driver, the context to work in (pushed if it had to be
 * taken from the stream; the caller pops it with leave_context, also on failure, when
 * *pushed is set) and the module's slot in it, loading the module there on first use. */
static int begin_call(const struct tccd_rt_module* module, CUstream stream, const struct driver** d,
                      int* slot, int* pushed) {
  *pushed = 0;
  int code = get_driver(d);
  if (code != TCCD_RT_SUCCESS) return code;
  CUcontext ctx;
  code = enter_context(*d, stream, &ctx, pushed);
  if (code != TCCD_RT_SUCCESS) return code;
  return get_context(module, *d, ctx, slot);
}

/* ---- The interface ------------------------------------------------------------------------- */

int tccd_rt_init(const struct tccd_rt_module* module) {
  const struct driver* d = NULL;
  int slot, pushed;
  const int code = begin_call(module, NULL, &d, &slot, &pushed);
  leave_context(d, pushed);
  return code;
}

int tccd_rt_set_tune_table(const struct tccd_rt_module* module, void* table) {
  if (!tccd_rt_tune_table_valid((const struct tccd_rt_tune_table*)table)) {
    return tccd_rt_set_error(TCCD_RT_ERROR_INVALID_VALUE,
                             "tccd: not a gemm tuning table of this runtime's layout (%s)",
                             table == NULL ? "NULL" : "magic, entry size or slots differ");
  }
  pthread_mutex_lock(&g_mutex);
  tccd_rt_gemm_set_tune_table((struct tccd_rt_tune_table*)table);
  tccd_rt_gemm_apply_table(module);
  pthread_mutex_unlock(&g_mutex);
  return TCCD_RT_SUCCESS;
}

int tccd_rt_launch(const struct tccd_rt_module* module, int32_t index, void* const* data,
                   const int64_t* strides, void* stream) {
  if (index < 0 || index >= module->num_kernels) {
    return tccd_rt_set_error(TCCD_RT_ERROR_INVALID_VALUE, "tccd: no kernel %d in this module",
                             index);
  }
  const struct tccd_rt_kernel* kernel = &module->kernels[index];
  if (kernel->numel == 0) return TCCD_RT_SUCCESS;
  if (kernel->numel < 0) {
    return tccd_rt_set_error(TCCD_RT_ERROR_INVALID_VALUE,
                             "tccd: %s takes run-time sizes (tccd_rt_launch_sized)", kernel->name);
  }
  if (data == NULL || (strides == NULL && kernel->rank > 0)) {
    return tccd_rt_set_error(TCCD_RT_ERROR_INVALID_VALUE, "tccd: %s called with NULL %s",
                             kernel->name, data == NULL ? "data" : "strides");
  }
  if (kernel->strided_param_bytes > TCCD_RT_MAX_PARAM_BYTES) {
    return tccd_rt_set_error(TCCD_RT_ERROR_INVALID_VALUE, "tccd: %s has %d bytes of parameters",
                             kernel->name, kernel->strided_param_bytes);
  }
  const struct driver* d = NULL;
  int slot, pushed;
  int code = begin_call(module, stream, &d, &slot, &pushed);
  if (code == TCCD_RT_SUCCESS)
    code = launch_kernel_in_context(module, d, slot, index, data, strides, stream);
  leave_context(d, pushed);
  return code;
}

int tccd_rt_launch_sized(const struct tccd_rt_module* module, int32_t index, void* const* data,
                         const int64_t* strides, const int64_t* shape, void* stream) {
  if (index < 0 || index >= module->num_kernels) {
    return tccd_rt_set_error(TCCD_RT_ERROR_INVALID_VALUE, "tccd: no kernel %d in this module",
                             index);
  }
  const struct tccd_rt_kernel* kernel = &module->kernels[index];
  if (kernel->numel >= 0) {
    return tccd_rt_set_error(TCCD_RT_ERROR_INVALID_VALUE,
                             "tccd: %s has static sizes (call it without a shape)", kernel->name);
  }
  if (kernel->rank > 0 && (strides == NULL || shape == NULL)) {
    return tccd_rt_set_error(TCCD_RT_ERROR_INVALID_VALUE, "tccd: %s called with NULL %s",
                             kernel->name, strides == NULL ? "strides" : "shape");
  }
  if (kernel->strided_param_bytes > TCCD_RT_MAX_PARAM_BYTES) {
    return tccd_rt_set_error(TCCD_RT_ERROR_INVALID_VALUE, "tccd: %s has %d bytes of parameters",
                             kernel->name, kernel->strided_param_bytes);
  }
  int64_t numel = 1;
  for (int32_t dim = 0; dim < kernel->rank; ++dim) {
    /* A static dim must be what the kernel was built for; a run-time one anything >= 0. */
    if (shape[dim] < 0 || (kernel->shape[dim] >= 0 && shape[dim] != kernel->shape[dim])) {
      return tccd_rt_set_error(TCCD_RT_ERROR_INVALID_VALUE,
                               "tccd: %s called with size %lld in dim %d", kernel->name,
                               (long long)shape[dim], dim);
    }
    numel *= shape[dim];
  }
  /* No rows still stores a column reduction's identity (a sum of nothing is 0), and a scatter
   * kernel's output its zeros. */
  if (numel == 0 && kernel->kind != TCCD_RT_KIND_COLUMNS && kernel->kind != TCCD_RT_KIND_SCATTER)
    return TCCD_RT_SUCCESS;
  if (data == NULL) {
    return tccd_rt_set_error(TCCD_RT_ERROR_INVALID_VALUE, "tccd: %s called with NULL data",
                             kernel->name);
  }
  const struct driver* d = NULL;
  int slot, pushed;
  int code = begin_call(module, stream, &d, &slot, &pushed);
  if (code == TCCD_RT_SUCCESS && kernel->kind == TCCD_RT_KIND_SCATTER) {
    /* A scatter kernel with run-time sizes (symbolic plans' embedding gradients): its static
     * output zero-filled on the stream first, as launch_scatter_in_context does. */
    code = zero_scatter_output(kernel, d, data, stream);
    if (code == TCCD_RT_SUCCESS && numel == 0) {
      leave_context(d, pushed);
      return code;
    }
  }
  if (code == TCCD_RT_SUCCESS) {
    code =
        kernel->kind == TCCD_RT_KIND_ROWS || kernel->kind == TCCD_RT_KIND_COLUMNS
            ? launch_sized_rows_in_context(module, d, slot, index, data, strides, shape, stream)
            : launch_sized_in_context(module, d, slot, index, data, strides, shape, numel, stream);
  }
  leave_context(d, pushed);
  return code;
}

int tccd_rt_gemm_sized(const struct tccd_rt_module* module, int32_t index, void* const* data,
                       const int64_t* dims, void* workspace, uint64_t workspace_bytes,
                       void* stream) {
  if (index < 0 || index >= module->num_gemms || module->gemms[index].m != TCCD_RT_GEMM_SIZED) {
    return tccd_rt_set_error(TCCD_RT_ERROR_INVALID_VALUE,
                             "tccd: no gemm %d with run-time sizes in this module", index);
  }
  if (data == NULL || dims == NULL) {
    return tccd_rt_set_error(TCCD_RT_ERROR_INVALID_VALUE, "tccd: %s called with NULL %s",
                             module->gemms[index].name, data == NULL ? "data" : "dims");
  }
  const struct driver* d = NULL;
  int slot, pushed;
  int code = begin_call(module, stream, &d, &slot, &pushed);
  if (code == TCCD_RT_SUCCESS)
    code = tccd_rt_gemm_run_sized(module, slot, index, data, dims, workspace, workspace_bytes,
                                  stream);
  leave_context(d, pushed);
  return code;
}

int tccd_rt_run_segment(const struct tccd_rt_module* module, const struct tccd_rt_segment* segment,
                        void* const* io, void* workspace, void* stream) {
  if ((io == NULL && segment->num_io > 0) || (workspace == NULL && segment->workspace_bytes > 0)) {
    return tccd_rt_set_error(TCCD_RT_ERROR_INVALID_VALUE, "tccd: %s called with NULL %s",
                             segment->name, io == NULL ? "io" : "workspace");
  }
  const struct driver* d = NULL;
  int slot, pushed;
  int code = begin_call(module, stream, &d, &slot, &pushed);
  void* gemm_workspace = (char*)workspace + segment->gemm_workspace_offset;
  for (int32_t i = 0; i < segment->num_steps && code == TCCD_RT_SUCCESS; ++i) {
    const struct tccd_rt_step* step = &segment->steps[i];
    if (step->num_operands > TCCD_RT_MAX_STEP_OPERANDS) {
      code = tccd_rt_set_error(TCCD_RT_ERROR_INVALID_VALUE, "tccd: %s step %d has %d operands",
                               segment->name, i, step->num_operands);
      break;
    }
    void* pointers[TCCD_RT_MAX_STEP_OPERANDS];
    for (int32_t o = 0; o < step->num_operands; ++o) {
      const struct tccd_rt_operand* operand = &segment->operands[step->first_operand + o];
      char* base = operand->index >= 0 ? (char*)io[operand->index] : (char*)workspace;
      pointers[o] = base + operand->byte_offset;
    }
    if (step->kind == TCCD_RT_STEP_GEMM) {
      code = tccd_rt_gemm_run(module, slot, step->index, pointers, gemm_workspace,
                              (uint64_t)segment->gemm_workspace_bytes, stream);
    } else if (module->kernels[step->index].numel > 0) {
      code =
          launch_kernel_in_context(module, d, slot, step->index, pointers, step->strides, stream);
    }
  }
  leave_context(d, pushed);
  return code;
}
