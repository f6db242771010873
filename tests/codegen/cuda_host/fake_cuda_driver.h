/* The control API of the fake CUDA driver (fake_cuda_driver.c), which cuda_host_test dlopens in
 * a child process to run a generated kernels_cuda.so end to end without a GPU. The test reaches
 * these functions with dlsym (it does not link the fake, so that its own process has no
 * libcuda.so.1 and can test the no-driver path). */
#ifndef TCCD_TESTS_CODEGEN_CUDA_HOST_FAKE_CUDA_DRIVER_H_
#define TCCD_TESTS_CODEGEN_CUDA_HOST_FAKE_CUDA_DRIVER_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One recorded cuLaunchKernel. */
struct fake_cuda_launch {
  char entry[128]; /* the function's name */
  void* ctx;       /* the current context during the launch */
  unsigned grid[3];
  unsigned block[3];
  unsigned shared_bytes;
  void* stream;
  int param_bytes;            /* as registered with fake_cuda_add_entry */
  unsigned char params[4096]; /* copied from kernelParams[0] */
};

/* Makes `ctx` (or none, for NULL) the calling thread's only current context. */
void fake_cuda_set_current(void* ctx);
/* cuStreamGetCtx(stream) will answer ctx. */
void fake_cuda_set_stream_context(void* stream, void* ctx);
/* Multiprocessor count of a device (default 132); a context's device is (uintptr_t)ctx >> 12. */
void fake_cuda_set_num_sms(int device, int num_sms);
/* What cuOccupancyMaxActiveBlocksPerMultiprocessor answers (default 4). */
void fake_cuda_set_occupancy(int blocks_per_sm);
/* Declares an entry point of the "cubin" and its parameter size; cuModuleGetFunction of any
 * other name fails with CUDA_ERROR_NOT_FOUND. */
void fake_cuda_add_entry(const char* entry, int param_bytes);
/* Every later call of `function` (e.g. "cuLaunchKernel") fails with `code`; 0 clears. */
void fake_cuda_fail(const char* function, int code);
/* How often `function` was called. */
int fake_cuda_calls(const char* function);
int fake_cuda_num_launches(void);
/* The last launch into *out; 0 if there was none. */
int fake_cuda_last_launch(struct fake_cuda_launch* out);
/* The image of the last cuModuleLoadData. */
const void* fake_cuda_last_image(void);
/* The calling thread's context stack depth (to check that pushes are popped). */
int fake_cuda_context_depth(void);
/* Moves the clock that cuEventRecord reads (the fake cuBLASLt's matmuls call it with their
 * algorithm's time, found with dlsym). */
void fake_cuda_advance_clock(double ms);
/* Called by the fake cuBLASLt's matmuls with their launches: counted while a stream capture
 * is open (cuStreamBeginCapture_v2 .. cuStreamEndCapture, whose graph has that many nodes).
 * Returns whether a capture was open. */
int fake_cuda_count_launches(int launches);
/* Allocations, streams, events and graphs made and not yet released. */
int fake_cuda_live_objects(void);
/* The stream capture mode the last cuThreadExchangeStreamCaptureMode left (0: global, as the
 * driver starts). */
int fake_cuda_capture_mode(void);

#ifdef __cplusplus
}
#endif

#endif /* TCCD_TESTS_CODEGEN_CUDA_HOST_FAKE_CUDA_DRIVER_H_ */
