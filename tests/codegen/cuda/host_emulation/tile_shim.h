// shim.h for kernels whose threads share memory (tiled kernels, cuda_tile_emitter.cc): each of a
// block's threads is a host thread with its own threadIdx and blockIdx, __shared__ arrays are
// function statics (the block's threads run one block at a time, together), __syncthreads is a
// barrier over the block's threads.
#pragma once
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#define __device__
#define __forceinline__ inline
#define __global__
#define __launch_bounds__(x)
#define __shared__ static
struct Dim3 {
  unsigned x, y, z;
};
static thread_local Dim3 blockIdx, threadIdx;
static Dim3 blockDim, gridDim;
static std::barrier<>* g_block_barrier = nullptr;
inline void __syncthreads() { g_block_barrier->arrive_and_wait(); }
inline float __uint_as_float(unsigned u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
inline unsigned __float_as_uint(float f) {
  unsigned u;
  memcpy(&u, &f, 4);
  return u;
}
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fadd_rn(float a, float b) { return a + b; }
