// shim.h for row-reduction kernels (cuda_row_emitter.cc): tile_shim.h's block of host threads
// (__syncthreads a barrier over the block), plus warp shuffles that exchange through a
// block-wide array between two barriers (every thread of the block calls them in the same
// order: a row kernel's rows reduce together, and no thread leaves early in the golden cases run
// here), the vector types of the vector gathers, and __int_as_float.
#pragma once
#include "tile_shim.h"
struct uint4 {
  unsigned x, y, z, w;
};
struct uint2 {
  unsigned x, y;
};
static float g_shuffle[1024];
inline float __shfl_xor_sync(unsigned, float v, int lane_mask) {
  g_shuffle[threadIdx.x] = v;
  g_block_barrier->arrive_and_wait();
  const float other = g_shuffle[threadIdx.x ^ static_cast<unsigned>(lane_mask)];
  g_block_barrier->arrive_and_wait();
  return other;
}
inline float __int_as_float(int i) {
  float f;
  memcpy(&f, &i, 4);
  return f;
}
