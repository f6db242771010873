/* A fake CUDA driver for cuda_host_test (see fake_cuda_driver.h): the driver functions
 * tccd_cuda_runtime.c resolves, which record what they are asked and fail on request, and a
 * control API for the test. Built with SONAME libcuda.so.1, so that once a test has dlopen'ed
 * it, a kernels_cuda.so's dlopen("libcuda.so.1", RTLD_NOLOAD) finds it: the generated library
 * runs end to end, unmodified, without a GPU.
 *
 * Contexts are whatever non-NULL pointers the test makes current; a context's device is
 * (uintptr_t)ctx >> 12. Thread-safe (one mutex); the current context is per thread, like the
 * driver's. */
#include "fake_cuda_driver.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;

enum {
  kSuccess = 0,
  kInvalidValue = 1,
  kNotInitialized = 3,
  kInvalidContext = 201,
  kInvalidHandle = 400,
  kNotFound = 500,
};

#define FAKE_MAX 256
#define FAKE_MAX_LAUNCHES 64

struct fake_module {
  void* ctx;
  const void* image;
  int loaded;
};
struct fake_function {
  char name[128];
  int param_bytes;
  struct fake_module* module;
};
struct fake_param_size {
  char entry[128];
  int bytes;
};
struct fake_failure {
  char function[64];
  int code;
};
struct fake_call_count {
  char function[64];
  int count;
};
struct fake_stream_ctx {
  void* stream;
  void* ctx;
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_initialised;
static int g_num_sms[64];
static int g_occupancy = 4;
static struct fake_module g_modules[FAKE_MAX];
static int g_num_modules;
static struct fake_function g_functions[FAKE_MAX];
static int g_num_functions;
static struct fake_param_size g_param_sizes[FAKE_MAX];
static int g_num_param_sizes;
static struct fake_failure g_failures[16];
static struct fake_call_count g_counts[64];
static struct fake_stream_ctx g_stream_ctx[16];
static struct fake_cuda_launch g_launches[FAKE_MAX_LAUNCHES];
static int g_num_launches;
static const void* g_last_image;

static __thread void* t_stack[16];
static __thread int t_depth;

/* ---- Helpers (callers hold g_mu) ----------------------------------------------------------- */

static void count_call(const char* function) {
  for (int i = 0; i < 64; ++i) {
    if (g_counts[i].function[0] == '\0') {
      snprintf(g_counts[i].function, sizeof(g_counts[i].function), "%s", function);
    }
    if (strcmp(g_counts[i].function, function) == 0) {
      ++g_counts[i].count;
      return;
    }
  }
}

/* Counts the call; the injected failure code for `function`, or 0. */
static int enter(const char* function) {
  count_call(function);
  for (int i = 0; i < 16; ++i) {
    if (strcmp(g_failures[i].function, function) == 0) return g_failures[i].code;
  }
  return kSuccess;
}

static void* current(void) { return t_depth > 0 ? t_stack[t_depth - 1] : NULL; }

static int device_of(void* ctx) { return (int)(((uintptr_t)ctx >> 12) & 63); }

#define FAKE_ENTER(name)         \
  pthread_mutex_lock(&g_mu);     \
  int fake_code_ = enter(name);  \
  if (fake_code_ != kSuccess) {  \
    pthread_mutex_unlock(&g_mu); \
    return fake_code_;           \
  }
#define FAKE_RETURN(code)        \
  do {                           \
    pthread_mutex_unlock(&g_mu); \
    return (code);               \
  } while (0)

/* ---- Driver API ------------------------------------------------------------------------------ */

CUresult cuInit(unsigned flags) {
  FAKE_ENTER("cuInit");
  if (flags != 0) FAKE_RETURN(kInvalidValue);
  g_initialised = 1;
  FAKE_RETURN(kSuccess);
}

CUresult cuGetErrorName(CUresult error, const char** name) {
  switch (error) {
    case kInvalidValue:
      *name = "CUDA_ERROR_INVALID_VALUE";
      return kSuccess;
    case 100:
      *name = "CUDA_ERROR_NO_DEVICE";
      return kSuccess;
    case 209:
      *name = "CUDA_ERROR_NO_BINARY_FOR_GPU";
      return kSuccess;
    case kInvalidContext:
      *name = "CUDA_ERROR_INVALID_CONTEXT";
      return kSuccess;
    case kInvalidHandle:
      *name = "CUDA_ERROR_INVALID_HANDLE";
      return kSuccess;
    case kNotFound:
      *name = "CUDA_ERROR_NOT_FOUND";
      return kSuccess;
    case 701:
      *name = "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
      return kSuccess;
    default:
      *name = NULL;
      return kInvalidValue;
  }
}

CUresult cuGetErrorString(CUresult error, const char** text) {
  const char* name = NULL;
  if (cuGetErrorName(error, &name) != kSuccess) return kInvalidValue;
  *text = "fake driver error";
  return kSuccess;
}

CUresult cuCtxGetCurrent(void** ctx) {
  FAKE_ENTER("cuCtxGetCurrent");
  if (!g_initialised) FAKE_RETURN(kNotInitialized);
  *ctx = current();
  FAKE_RETURN(kSuccess);
}

CUresult cuCtxGetDevice(int* device) {
  FAKE_ENTER("cuCtxGetDevice");
  if (current() == NULL) FAKE_RETURN(kInvalidContext);
  *device = device_of(current());
  FAKE_RETURN(kSuccess);
}

CUresult cuCtxPushCurrent_v2(void* ctx) {
  FAKE_ENTER("cuCtxPushCurrent_v2");
  if (ctx == NULL || t_depth == 16) FAKE_RETURN(kInvalidValue);
  t_stack[t_depth++] = ctx;
  FAKE_RETURN(kSuccess);
}

CUresult cuCtxPopCurrent_v2(void** ctx) {
  FAKE_ENTER("cuCtxPopCurrent_v2");
  if (t_depth == 0) FAKE_RETURN(kInvalidContext);
  void* popped = t_stack[--t_depth];
  if (ctx != NULL) *ctx = popped;
  FAKE_RETURN(kSuccess);
}

CUresult cuStreamGetCtx(void* stream, void** ctx) {
  FAKE_ENTER("cuStreamGetCtx");
  for (int i = 0; i < 16; ++i) {
    if (g_stream_ctx[i].stream == stream && stream != NULL) {
      *ctx = g_stream_ctx[i].ctx;
      FAKE_RETURN(kSuccess);
    }
  }
  FAKE_RETURN(kInvalidHandle);
}

CUresult cuDeviceGetAttribute(int* value, int attribute, int device) {
  FAKE_ENTER("cuDeviceGetAttribute");
  if (attribute != 16 || device < 0 || device >= 64) FAKE_RETURN(kInvalidValue);
  *value = g_num_sms[device] > 0 ? g_num_sms[device] : 132;
  FAKE_RETURN(kSuccess);
}

CUresult cuModuleLoadData(void** module, const void* image) {
  FAKE_ENTER("cuModuleLoadData");
  if (current() == NULL) FAKE_RETURN(kInvalidContext);
  if (g_num_modules == FAKE_MAX || image == NULL) FAKE_RETURN(kInvalidValue);
  struct fake_module* m = &g_modules[g_num_modules++];
  m->ctx = current();
  m->image = image;
  m->loaded = 1;
  g_last_image = image;
  *module = m;
  FAKE_RETURN(kSuccess);
}

CUresult cuModuleUnload(void* module) {
  FAKE_ENTER("cuModuleUnload");
  ((struct fake_module*)module)->loaded = 0;
  FAKE_RETURN(kSuccess);
}

CUresult cuModuleGetFunction(void** function, void* module, const char* name) {
  FAKE_ENTER("cuModuleGetFunction");
  int bytes = -1;
  for (int i = 0; i < g_num_param_sizes; ++i) {
    if (strcmp(g_param_sizes[i].entry, name) == 0) bytes = g_param_sizes[i].bytes;
  }
  if (bytes < 0) FAKE_RETURN(kNotFound); /* no such entry point in the "cubin" */
  if (g_num_functions == FAKE_MAX) FAKE_RETURN(kInvalidValue);
  struct fake_function* f = &g_functions[g_num_functions++];
  snprintf(f->name, sizeof(f->name), "%s", name);
  f->param_bytes = bytes;
  f->module = (struct fake_module*)module;
  *function = f;
  FAKE_RETURN(kSuccess);
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, void* function, int block_size,
                                                     size_t dynamic_smem) {
  FAKE_ENTER("cuOccupancyMaxActiveBlocksPerMultiprocessor");
  if (function == NULL || block_size <= 0 || dynamic_smem != 0) FAKE_RETURN(kInvalidValue);
  *blocks = g_occupancy;
  FAKE_RETURN(kSuccess);
}

CUresult cuLaunchKernel(void* function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                        unsigned block_x, unsigned block_y, unsigned block_z, unsigned shared_bytes,
                        void* stream, void** params, void** extra) {
  FAKE_ENTER("cuLaunchKernel");
  struct fake_function* f = (struct fake_function*)function;
  if (current() == NULL) FAKE_RETURN(kInvalidContext);
  /* Like the driver: the function must belong to a module loaded in the current context. */
  if (f == NULL || !f->module->loaded || f->module->ctx != current()) FAKE_RETURN(kInvalidHandle);
  if (params == NULL || params[0] == NULL || extra != NULL) FAKE_RETURN(kInvalidValue);
  if (grid_x == 0 || block_x == 0) FAKE_RETURN(kInvalidValue);
  struct fake_cuda_launch* l = &g_launches[g_num_launches % FAKE_MAX_LAUNCHES];
  ++g_num_launches;
  memset(l, 0, sizeof(*l));
  snprintf(l->entry, sizeof(l->entry), "%s", f->name);
  l->ctx = current();
  l->grid[0] = grid_x, l->grid[1] = grid_y, l->grid[2] = grid_z;
  l->block[0] = block_x, l->block[1] = block_y, l->block[2] = block_z;
  l->shared_bytes = shared_bytes;
  l->stream = stream;
  l->param_bytes = f->param_bytes;
  memcpy(l->params, params[0], (size_t)f->param_bytes);
  FAKE_RETURN(kSuccess);
}

/* Records the call only (the fake has no device memory): scatter kernels' zero fill. */
CUresult cuMemsetD32Async(unsigned long long device_ptr, unsigned value, size_t count,
                          void* stream) {
  FAKE_ENTER("cuMemsetD32Async");
  (void)value, (void)count, (void)stream;
  if (current() == NULL) FAKE_RETURN(kInvalidContext);
  if (device_ptr == 0) FAKE_RETURN(kInvalidValue);
  FAKE_RETURN(kSuccess);
}

/* ---- Autotuning's functions (tccd_cuda_gemm.c) --------------------------------------------
 * Memory is a counter of fake addresses (never dereferenced); events read a fake clock that only
 * fake_cuda_advance_clock moves (the fake cuBLASLt's matmuls do, by their algorithm's time), so
 * elapsed times are exactly what the test set. Outstanding allocations, streams and events are
 * counted so that a test can check everything made was released. */

static uint64_t g_next_address = 0x7f0000000000ull;
static int g_live_allocations, g_live_streams, g_live_events, g_capture_mode_exchanges;
static double g_clock_ms;
static int g_capture_mode; /* the calling threads' mode, one for all (tests use one thread) */

struct fake_event {
  double at_ms;
  int recorded;
};

CUresult cuMemAlloc_v2(unsigned long long* ptr, size_t bytes) {
  FAKE_ENTER("cuMemAlloc_v2");
  if (current() == NULL) FAKE_RETURN(kInvalidContext);
  if (bytes == 0) FAKE_RETURN(kInvalidValue);
  *ptr = g_next_address;
  g_next_address += (bytes + 0xffffu) & ~(uint64_t)0xffffu;
  ++g_live_allocations;
  FAKE_RETURN(kSuccess);
}

CUresult cuMemFree_v2(unsigned long long ptr) {
  FAKE_ENTER("cuMemFree_v2");
  if (ptr == 0) FAKE_RETURN(kInvalidValue);
  --g_live_allocations;
  FAKE_RETURN(kSuccess);
}

CUresult cuStreamCreate(void** stream, unsigned flags) {
  FAKE_ENTER("cuStreamCreate");
  (void)flags;
  *stream = (void*)(uintptr_t)(0x5000 + 16 * ++g_live_streams);
  FAKE_RETURN(kSuccess);
}

CUresult cuStreamDestroy_v2(void* stream) {
  FAKE_ENTER("cuStreamDestroy_v2");
  (void)stream;
  --g_live_streams;
  FAKE_RETURN(kSuccess);
}

CUresult cuStreamSynchronize(void* stream) {
  FAKE_ENTER("cuStreamSynchronize");
  (void)stream;
  FAKE_RETURN(kSuccess);
}

CUresult cuEventCreate(void** event, unsigned flags) {
  FAKE_ENTER("cuEventCreate");
  (void)flags;
  struct fake_event* e = (struct fake_event*)calloc(1, sizeof(struct fake_event));
  *event = e;
  ++g_live_events;
  FAKE_RETURN(kSuccess);
}

CUresult cuEventDestroy_v2(void* event) {
  FAKE_ENTER("cuEventDestroy_v2");
  free(event);
  --g_live_events;
  FAKE_RETURN(kSuccess);
}

CUresult cuEventRecord(void* event, void* stream) {
  FAKE_ENTER("cuEventRecord");
  (void)stream;
  ((struct fake_event*)event)->at_ms = g_clock_ms;
  ((struct fake_event*)event)->recorded = 1;
  FAKE_RETURN(kSuccess);
}

CUresult cuEventElapsedTime(float* ms, void* start, void* end) {
  FAKE_ENTER("cuEventElapsedTime");
  const struct fake_event* s = (const struct fake_event*)start;
  const struct fake_event* e = (const struct fake_event*)end;
  if (!s->recorded || !e->recorded) FAKE_RETURN(kInvalidHandle);
  *ms = (float)(e->at_ms - s->at_ms);
  FAKE_RETURN(kSuccess);
}

CUresult cuThreadExchangeStreamCaptureMode(int* mode) {
  FAKE_ENTER("cuThreadExchangeStreamCaptureMode");
  const int previous = g_capture_mode;
  g_capture_mode = *mode;
  *mode = previous;
  ++g_capture_mode_exchanges;
  FAKE_RETURN(kSuccess);
}

/* Stream capture, for counting an algorithm's launches: one capture at a time; the fake
 * cuBLASLt reports its launches through fake_cuda_count_launches, and the "graph" is the
 * count. */
static int g_capturing, g_captured_launches, g_live_graphs;

CUresult cuStreamBeginCapture_v2(void* stream, int mode) {
  FAKE_ENTER("cuStreamBeginCapture_v2");
  (void)stream;
  if (g_capturing || mode != 2 /* the runtime captures in relaxed mode */)
    FAKE_RETURN(kInvalidValue);
  g_capturing = 1;
  g_captured_launches = 0;
  FAKE_RETURN(kSuccess);
}

CUresult cuStreamEndCapture(void* stream, void** graph) {
  FAKE_ENTER("cuStreamEndCapture");
  (void)stream;
  if (!g_capturing) FAKE_RETURN(kInvalidValue);
  g_capturing = 0;
  *graph = (void*)(uintptr_t)(0x100000 + g_captured_launches);
  ++g_live_graphs;
  FAKE_RETURN(kSuccess);
}

CUresult cuGraphGetNodes(void* graph, void** nodes, size_t* count) {
  FAKE_ENTER("cuGraphGetNodes");
  if (nodes != NULL) FAKE_RETURN(kInvalidValue);
  *count = (size_t)((uintptr_t)graph - 0x100000);
  FAKE_RETURN(kSuccess);
}

CUresult cuGraphDestroy(void* graph) {
  FAKE_ENTER("cuGraphDestroy");
  (void)graph;
  --g_live_graphs;
  FAKE_RETURN(kSuccess);
}

/* ---- Control API ------------------------------------------------------------------------------
 */

int fake_cuda_count_launches(int launches) {
  pthread_mutex_lock(&g_mu);
  const int capturing = g_capturing;
  if (capturing) g_captured_launches += launches;
  pthread_mutex_unlock(&g_mu);
  return capturing;
}

void fake_cuda_advance_clock(double ms) {
  pthread_mutex_lock(&g_mu);
  g_clock_ms += ms;
  pthread_mutex_unlock(&g_mu);
}

int fake_cuda_live_objects(void) {
  pthread_mutex_lock(&g_mu);
  const int n = g_live_allocations + g_live_streams + g_live_events + g_live_graphs;
  pthread_mutex_unlock(&g_mu);
  return n;
}

int fake_cuda_capture_mode(void) {
  pthread_mutex_lock(&g_mu);
  const int mode = g_capture_mode;
  pthread_mutex_unlock(&g_mu);
  return mode;
}

void fake_cuda_set_current(void* ctx) {
  t_depth = 0;
  if (ctx != NULL) t_stack[t_depth++] = ctx;
}

void fake_cuda_set_stream_context(void* stream, void* ctx) {
  pthread_mutex_lock(&g_mu);
  for (int i = 0; i < 16; ++i) {
    if (g_stream_ctx[i].stream == NULL || g_stream_ctx[i].stream == stream) {
      g_stream_ctx[i].stream = stream;
      g_stream_ctx[i].ctx = ctx;
      break;
    }
  }
  pthread_mutex_unlock(&g_mu);
}

void fake_cuda_set_num_sms(int device, int num_sms) {
  pthread_mutex_lock(&g_mu);
  if (device >= 0 && device < 64) g_num_sms[device] = num_sms;
  pthread_mutex_unlock(&g_mu);
}

void fake_cuda_set_occupancy(int blocks_per_sm) {
  pthread_mutex_lock(&g_mu);
  g_occupancy = blocks_per_sm;
  pthread_mutex_unlock(&g_mu);
}

void fake_cuda_add_entry(const char* entry, int param_bytes) {
  pthread_mutex_lock(&g_mu);
  if (g_num_param_sizes < FAKE_MAX) {
    snprintf(g_param_sizes[g_num_param_sizes].entry, 128, "%s", entry);
    g_param_sizes[g_num_param_sizes++].bytes = param_bytes;
  }
  pthread_mutex_unlock(&g_mu);
}

void fake_cuda_fail(const char* function, int code) {
  pthread_mutex_lock(&g_mu);
  for (int i = 0; i < 16; ++i) {
    if (g_failures[i].function[0] == '\0' || strcmp(g_failures[i].function, function) == 0) {
      snprintf(g_failures[i].function, sizeof(g_failures[i].function), "%s", function);
      g_failures[i].code = code;
      break;
    }
  }
  pthread_mutex_unlock(&g_mu);
}

int fake_cuda_calls(const char* function) {
  pthread_mutex_lock(&g_mu);
  int count = 0;
  for (int i = 0; i < 64; ++i) {
    if (strcmp(g_counts[i].function, function) == 0) count = g_counts[i].count;
  }
  pthread_mutex_unlock(&g_mu);
  return count;
}

int fake_cuda_num_launches(void) {
  pthread_mutex_lock(&g_mu);
  const int n = g_num_launches;
  pthread_mutex_unlock(&g_mu);
  return n;
}

int fake_cuda_last_launch(struct fake_cuda_launch* out) {
  pthread_mutex_lock(&g_mu);
  const int n = g_num_launches;
  if (n > 0) *out = g_launches[(n - 1) % FAKE_MAX_LAUNCHES];
  pthread_mutex_unlock(&g_mu);
  return n > 0;
}

const void* fake_cuda_last_image(void) {
  pthread_mutex_lock(&g_mu);
  const void* image = g_last_image;
  pthread_mutex_unlock(&g_mu);
  return image;
}

int fake_cuda_context_depth(void) { return t_depth; }
