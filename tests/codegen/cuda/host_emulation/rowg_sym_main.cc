// Symbolic row gathers on the host (row_shim.h): golden embedding_pair_layer_norm_rows_bf16_sym
// ([?, ?, 256]) and embedding_pair_layer_norm_rows_tail_bf16_sym ([?, ?, 40]: the row's one
// chunk lies partly past its end) — the dynamic bench's first layer norm with its token and
// position embeddings gathered in it (symbolic_kernels.h, SymbolicKernelOptions::row_gathers):
// bf16 tables tok [1000, E] and pos [1024, E], token ids i64 [B, S], position ids [S] read as
// [B, S] through strides (0, 1) (expand(arange), the plan's gather operand with its own
// strides). B = 3, S = 37 (this launch's run-time sizes in p.size: 111 rows, the last block's
// 17 past the end), ids out of range (-1, 1000) reading zeros. Cases: the contig entry with
// aligned tables (vector gathers), with the token table one element off (its per-element
// fallback), the strided entry. out0 (x = tok[id] + pos[pid], bf16) must equal a host
// reference of the same f32 sum rounded the same way, bit for bit; out1 (the norm) and the row
// values mean and rstd within bf16 rounding of a double reference.
// One golden file per binary: -DSYMG_CASE=1 or 2.
#include <cstdio>
#include <random>
#include <thread>
#include <vector>

#include "row_shim.h"
#if SYMG_CASE == 1
#include "embedding_pair_layer_norm_rows_bf16_sym.cc"
using namespace tccd_kernel_embedding_pair_layer_norm_rows_bf16_sym;
constexpr long long E = 256;
#define CONTIG embedding_pair_layer_norm_rows_bf16_sym_contig
#define STRIDED embedding_pair_layer_norm_rows_bf16_sym_strided
#else
#include "embedding_pair_layer_norm_rows_tail_bf16_sym.cc"
using namespace tccd_kernel_embedding_pair_layer_norm_rows_tail_bf16_sym;
constexpr long long E = 40;
#define CONTIG embedding_pair_layer_norm_rows_tail_bf16_sym_contig
#define STRIDED embedding_pair_layer_norm_rows_tail_bf16_sym_strided
#endif
constexpr long long B = 3, S = 37, V = 1000, P = 1024, kRowsPerBlock = 32;

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

unsigned short Bf16(float f) {  // round to nearest even, as the kernel's soft cast
  unsigned w;
  memcpy(&w, &f, 4);
  return static_cast<unsigned short>((w + 0x7fffu + ((w >> 16) & 1u)) >> 16);
}

bool Near(float got, double ref) { return std::abs(got - ref) <= 1.6e-2 * std::abs(ref) + 2e-2; }

template <typename T>
T* Aligned(std::vector<T>& v) {
  return reinterpret_cast<T*>((reinterpret_cast<uintptr_t>(v.data()) + 15) & ~uintptr_t(15));
}

int main() {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal;
  // The tables with spare elements in front (the shifted case reads from one element on).
  std::vector<unsigned short> tok_storage(V * E + 16), pos_storage(P * E + 16);
  for (unsigned short& x : tok_storage) x = Bf16(normal(rng));
  for (unsigned short& x : pos_storage) x = Bf16(normal(rng));
  std::vector<long long> ids(B * S), pids(S);
  for (long long& i : ids) i = static_cast<long long>(rng() % V);
  ids[3] = -1;
  ids[S + 5] = V;  // out of range: zeros
  ids[2 * S + 36] = V - 1;
  for (long long s = 0; s < S; ++s) pids[s] = s;  // arange(S)
  std::vector<unsigned short> w(E), bias(E);
  for (long long e = 0; e < E; ++e) w[e] = Bf16(0.5f + std::abs(normal(rng)));
  for (long long e = 0; e < E; ++e) bias[e] = Bf16(normal(rng));
  int failures = 0;
  for (int mode = 0; mode < 3; ++mode) {  // 0: contig aligned, 1: contig shifted table, 2: strided
    unsigned short* tok = Aligned(tok_storage) + (mode == 1 ? 1 : 0);
    unsigned short* pos = Aligned(pos_storage);
    std::vector<unsigned short> x_storage(B * S * E + 16, 0xffff), y_storage(B * S * E + 16, 0xffff),
        mean(B * S, 0xffff), rstd(B * S, 0xffff);
    unsigned short* x = Aligned(x_storage);
    unsigned short* y = Aligned(y_storage);
    Params p{};
    unsigned short* ptr[10] = {tok, nullptr, pos, nullptr, w.data(), bias.data(), x, y,
                               mean.data(), rstd.data()};
    for (int o = 0; o < 10; ++o) p.ptr[o] = reinterpret_cast<char*>(ptr[o]);
    p.ptr[1] = reinterpret_cast<char*>(ids.data());
    p.ptr[3] = reinterpret_cast<char*>(pids.data());
    // Gather operands: own strides, dim k in slot k (pids expanded over B: stride 0); the
    // rest right-aligned to [B, S, E] (w, b broadcast; mean, rstd one value per row).
    const long long strides[10][3] = {{E, 1, 0},     {S, 1, 0},     {E, 1, 0}, {0, 1, 0},
                                      {0, 0, 1},     {0, 0, 1},     {S * E, E, 1},
                                      {S * E, E, 1}, {S, 1, 0},     {S, 1, 0}};
    for (int o = 0; o < 10; ++o)
      for (int d = 0; d < 3; ++d) p.stride[o][d] = strides[o][d];
    p.size[0] = B, p.size[1] = S, p.size[2] = E;
    const unsigned grid = static_cast<unsigned>((B * S + kRowsPerBlock - 1) / kRowsPerBlock);
    if (mode == 2)
      Launch(p, STRIDED, grid);
    else
      Launch(p, CONTIG, grid);
    long long bad_x = 0, bad_y = 0, bad_rows = 0;
    for (long long r = 0; r < B * S; ++r) {
      const long long id = ids[r], pid = pids[r % S];
      const bool in = id >= 0 && id < V;
      std::vector<float> sum(E);
      double mu = 0, var = 0;
      for (long long e = 0; e < E; ++e) {
        sum[e] = (in ? F32(tok[id * E + e]) : 0.0f) + F32(pos[pid * E + e]);
        mu += sum[e];
      }
      mu /= E;
      for (long long e = 0; e < E; ++e) var += (sum[e] - mu) * (sum[e] - mu);
      const double rs = 1.0 / std::sqrt(var / E + 1e-5);
      for (long long e = 0; e < E; ++e) {
        bad_x += x[r * E + e] != Bf16(sum[e]);
        bad_y += !Near(F32(y[r * E + e]), (sum[e] - mu) * rs * F32(w[e]) + F32(bias[e]));
      }
      bad_rows += !Near(F32(mean[r]), mu) || !Near(F32(rstd[r]), rs);
    }
    // Nothing stored past the last row (the last block's rows past the end compute, store not).
    for (long long i = B * S * E; i < B * S * E + 8; ++i) bad_x += x[i] != 0xffff;
    printf("symbolic row gather case %d mode %d: x mismatches %lld, norm mismatches %lld of %lld, "
           "row values %lld of %lld\n",
           SYMG_CASE, mode, bad_x, bad_y, B * S * E, bad_rows, B * S);
    failures += bad_x != 0 || bad_y != 0 || bad_rows != 0;
  }
  return failures;
}
