// Tiled kernels on the host (tile_shim.h): golden tile_transpose_cast_bf16 (f32 [192, 64, 512]
// read through a transpose, * 0.125, bf16 out) and tile_nchw_to_nhwc_bf16 (bf16 [8, 96, 28, 28]
// NCHW -> NHWC, * 0.125: tiled dims that no tile divides), every point against a reference.
// One golden file per binary (each carries the prelude): -DTILE_CASE=1 or 2.
#include <cstdio>
#include <random>
#include <thread>
#include <vector>

#include "tile_shim.h"
#if TILE_CASE == 1
#include "tile_transpose_cast_bf16.cc"
#else
#include "tile_nchw_to_nhwc_bf16.cc"
#endif

// grid blocks of 256 host threads; each thread runs the kernel for every block in turn, the
// block barrier between blocks keeping one block's shared tiles from the next one's writes.
template <typename P, typename F>
void Launch(const P& p, F kernel, unsigned grid) {
  std::barrier<> barrier(256);
  g_block_barrier = &barrier;
  gridDim.x = grid;
  blockDim.x = 256;
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 256; ++t)
    threads.emplace_back([&, t] {
      threadIdx.x = t;
      for (unsigned b = 0; b < grid; ++b) {
        blockIdx.x = b;
        kernel(p);
        barrier.arrive_and_wait();
      }
    });
  for (std::thread& t : threads) t.join();
}

unsigned short Bf16(float f) {  // c10's round to nearest even
  unsigned w;
  memcpy(&w, &f, 4);
  return static_cast<unsigned short>((w + 0x7fffu + ((w >> 16) & 1u)) >> 16);
}
float F32(unsigned short h) {
  unsigned w = static_cast<unsigned>(h) << 16;
  float f;
  memcpy(&f, &w, 4);
  return f;
}

// out[i] for iteration point (c0, c1, ...) against in at the same point, both through strides.
template <typename In, typename Conv>
long long Check(const std::vector<long long>& shape, const std::vector<long long>& in_strides,
                const std::vector<long long>& out_strides, const In* in, const unsigned short* out,
                Conv ref) {
  long long numel = 1, bad = 0;
  for (long long s : shape) numel *= s;
  for (long long i = 0; i < numel; ++i) {
    long long rest = i, ioff = 0, ooff = 0;
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      const long long c = rest % shape[d];
      rest /= shape[d];
      ioff += c * in_strides[d];
      ooff += c * out_strides[d];
    }
    const unsigned short want = Bf16(ref(in[ioff]) * 0.125f);
    if (out[ooff] != want && bad++ < 5)
      printf("  point %lld: got %04x want %04x\n", i, out[ooff], want);
  }
  return bad;
}

int main() {
  int failures = 0;
  std::mt19937 rng(1);
#if TILE_CASE == 1
  {
    using namespace tccd_kernel_tile_transpose_cast_bf16;
    const std::vector<long long> shape = {192, 64, 512}, is = {32768, 1, 64}, os = {32768, 512, 1};
    std::vector<float> in(192 * 512 * 64);
    for (float& x : in) x = std::normal_distribution<float>()(rng);
    std::vector<unsigned short> out(in.size(), 0xdead);
    StridedParams p{};
    p.ptr[0] = reinterpret_cast<char*>(in.data());
    p.ptr[1] = reinterpret_cast<char*>(out.data());
    Launch(p, tile_transpose_cast_bf16_tile, 192 * 2 * 16);
    const long long bad = Check(shape, is, os, in.data(), out.data(), [](float x) { return x; });
    printf("tile_transpose_cast_bf16: %lld mismatches of %zu\n", bad, out.size());
    failures += bad != 0;
  }
#else
  {
    using namespace tccd_kernel_tile_nchw_to_nhwc_bf16;
    const std::vector<long long> shape = {8, 96, 28, 28}, is = {75264, 784, 28, 1},
                                 os = {75264, 1, 2688, 96};
    std::vector<unsigned short> in(8 * 96 * 28 * 28);
    for (unsigned short& x : in) x = Bf16(std::normal_distribution<float>()(rng));
    std::vector<unsigned short> out(in.size(), 0xdead);
    StridedParams p{};
    p.ptr[0] = reinterpret_cast<char*>(in.data());
    p.ptr[1] = reinterpret_cast<char*>(out.data());
    Launch(p, tile_nchw_to_nhwc_bf16_tile, 8 * 28 * 3 * 1);
    const long long bad =
        Check(shape, is, os, in.data(), out.data(), [](unsigned short x) { return F32(x); });
    printf("tile_nchw_to_nhwc_bf16: %lld mismatches of %zu\n", bad, out.size());
    failures += bad != 0;
  }
#endif
  return failures;
}
