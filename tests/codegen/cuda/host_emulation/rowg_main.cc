// Row gathers on the host (row_shim.h): golden embedding_rms_norm_rows_f32 ([2, 512, 1024]) and
// embedding_rms_norm_rows_tail_f32 ([2, 100, 1000]: the last chunk's vector lies past the row's
// end) — an f32 embedding [32000, E] gathered through i64 ids inside an RMS norm over E. Cases:
// the contig entry with an aligned table (vector gathers), the contig entry with the table
// shifted by one element (the per-element fallback), the strided entry; ids out of range (-1,
// 32000) read zeros. out0 (the gathered rows) must equal the table's rows bit for bit; out1
// (the bf16 norm) is within one bf16 rounding of a host reference (its sum's order differs).
// One golden file per binary: -DROWG_CASE=1 or 2.
#include <cstdio>
#include <random>
#include <thread>
#include <vector>

#include "row_shim.h"
#if ROWG_CASE == 1
#include "embedding_rms_norm_rows_f32.cc"
using namespace tccd_kernel_embedding_rms_norm_rows_f32;
constexpr long long B = 2, S = 512, E = 1024;
#define CONTIG embedding_rms_norm_rows_f32_contig
#define STRIDED embedding_rms_norm_rows_f32_strided
#else
#include "embedding_rms_norm_rows_tail_f32.cc"
using namespace tccd_kernel_embedding_rms_norm_rows_tail_f32;
constexpr long long B = 2, S = 100, E = 1000;
#define CONTIG embedding_rms_norm_rows_tail_f32_contig
#define STRIDED embedding_rms_norm_rows_tail_f32_strided
#endif
constexpr long long V = 32000;

template <typename F>
void Launch(const Params& p, F kernel, unsigned grid) {
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

float F32(unsigned short h) {
  unsigned w = static_cast<unsigned>(h) << 16;
  float f;
  memcpy(&f, &w, 4);
  return f;
}

int main() {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  // The table with one spare element in front (the shifted case reads it from there).
  std::vector<float> table_storage(V * E + 8);
  for (float& x : table_storage) x = normal(rng);
  std::vector<long long> ids(B * S);
  for (long long& i : ids) i = static_cast<long long>(rng() % V);
  ids[3] = -1;
  ids[S + 5] = V;  // out of range: zeros
  ids[7] = V - 1;
  std::vector<float> w(E);
  for (float& x : w) x = 0.5f + std::abs(normal(rng));
  int failures = 0;
  for (int mode = 0; mode < 3; ++mode) {  // 0: contig aligned, 1: contig shifted table, 2: strided
    // 16-byte aligned starts (the vector path's test), or one element off.
    float* aligned = reinterpret_cast<float*>(
        (reinterpret_cast<uintptr_t>(table_storage.data()) + 15) & ~uintptr_t(15));
    float* table = mode == 1 ? aligned + 1 : aligned;
    if (table + V * E > table_storage.data() + table_storage.size()) table -= 4;
    std::vector<float> out0(B * S * E + 8, 1e30f);
    std::vector<unsigned short> out1(B * S * E + 16, 0xffff);
    float* o0 = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(out0.data()) + 15) & ~uintptr_t(15));
    unsigned short* o1 = reinterpret_cast<unsigned short*>(
        (reinterpret_cast<uintptr_t>(out1.data()) + 15) & ~uintptr_t(15));
    Params p{};
    p.ptr[0] = reinterpret_cast<char*>(table);
    p.ptr[1] = reinterpret_cast<char*>(ids.data());
    p.ptr[2] = reinterpret_cast<char*>(w.data());
    p.ptr[3] = reinterpret_cast<char*>(o0);
    p.ptr[4] = reinterpret_cast<char*>(o1);
    const long long gather[2][3] = {{E, 1, 0}, {S, 1, 0}};  // own strides, dim k in slot k
    for (int o = 0; o < 2; ++o)
      for (int d = 0; d < 3; ++d) p.stride[o][d] = gather[o][d];
    const long long space[3][3] = {{0, 0, 1}, {S * E, E, 1}, {S * E, E, 1}};
    for (int o = 0; o < 3; ++o)
      for (int d = 0; d < 3; ++d) p.stride[2 + o][d] = space[o][d];
    const unsigned grid = static_cast<unsigned>(B * S / 8);  // 8 rows per block
    if (mode == 2)
      Launch(p, STRIDED, grid);
    else
      Launch(p, CONTIG, grid);
    long long bad0 = 0, bad1 = 0;
    for (long long r = 0; r < B * S; ++r) {
      const long long id = ids[r];
      const bool in = id >= 0 && id < V;
      double sq = 0;
      for (long long e = 0; e < E; ++e) {
        const float x = in ? table[id * E + e] : 0.0f;
        sq += static_cast<double>(x) * x;
      }
      const float rstd = 1.0f / std::sqrt(static_cast<float>(sq / E) + 1e-6f);
      for (long long e = 0; e < E; ++e) {
        const float x = in ? table[id * E + e] : 0.0f;
        bad0 += o0[r * E + e] != x;
        const float ref = w[e] * (x * rstd);
        const float got = F32(o1[r * E + e]);
        bad1 += !(std::abs(got - ref) <= 8e-3f * std::abs(ref) + 1e-6f);
      }
    }
    printf("row gather case %d mode %d: out0 mismatches %lld, out1 mismatches %lld of %lld\n",
           ROWG_CASE, mode, bad0, bad1, B * S * E);
    failures += bad0 != 0 || bad1 != 0;
  }
  return failures;
}
