// shim.h for row-reduction kernels (cuda_row_emitter.cc): as tile_shim.h, each of a block's
// threads is a host thread and __syncthreads a barrier over the block; warp shuffles exchange
// through a block-wide array between two barriers (every thread of the block calls them in the
// same order: a row kernel's rows reduce together, and no thread leaves early in the golden
// cases run here).
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
struct uint4 {
  unsigned x, y, z, w;
};
struct uint2 {
  unsigned x, y;
};
static thread_local Dim3 blockIdx, threadIdx;
static Dim3 blockDim, gridDim;
static std::barrier<>* g_block_barrier = nullptr;
inline void __syncthreads() { g_block_barrier->arrive_and_wait(); }
static float g_shuffle[1024];
inline float __shfl_xor_sync(unsigned, float v, int lane_mask) {
  g_shuffle[threadIdx.x] = v;
  g_block_barrier->arrive_and_wait();
  const float other = g_shuffle[threadIdx.x ^ static_cast<unsigned>(lane_mask)];
  g_block_barrier->arrive_and_wait();
  return other;
}
inline float __uint_as_float(unsigned u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
inline float __int_as_float(int i) {
  float f;
  memcpy(&f, &i, 4);
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
