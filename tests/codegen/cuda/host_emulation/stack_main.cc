#include "stack_bf16.cc"
#include <cstdio>
#include <random>
#include <vector>
using namespace tccd_kernel_stack_bf16;
static void Launch(const StridedParams& p) {
  gridDim.x = 1056;
  blockDim.x = 256;
  for (unsigned b = 0; b < gridDim.x; ++b)
    for (unsigned t = 0; t < blockDim.x; ++t) {
      blockIdx.x = b;
      threadIdx.x = t;
      stack_bf16_strided(p);
    }
}
int main() {
  int failures = 0;
  const long long B = 64, N = 197, H = 12, D = 64;
  const long long in_numel = B * H * N * D;
  std::mt19937 rng(1);
  std::vector<std::vector<unsigned short>> in(3, std::vector<unsigned short>(in_numel + 8));
  for (auto& v : in)
    for (auto& x : v) {
      float f = std::normal_distribution<float>()(rng);
      unsigned u;
      memcpy(&u, &f, 4);
      x = u >> 16;
    }
  for (int misalign = 0; misalign < 2; ++misalign) {
    std::vector<unsigned short> out(B * N * 3 * H * D, 0xdead);
    StridedParams p;
    for (int s = 0; s < 3; ++s) {
      // 16-byte aligned base (std::vector of u16 is at least 16-aligned for new[]), optionally
      // shifted.
      p.ptr[s] = reinterpret_cast<char*>(in[s].data() + misalign);
      const long long st[5] = {H * N * D, D, N * D, 1, 0};
      for (int d = 0; d < 5; ++d) p.stride[s][d] = st[d];
    }
    p.ptr[3] = reinterpret_cast<char*>(out.data());
    const long long ost[5] = {N * 3 * H * D, 3 * H * D, H * D, D, 1};
    for (int d = 0; d < 5; ++d) p.stride[3][d] = ost[d];
    Launch(p);
    long long bad = 0;
    for (long long b = 0; b < B; ++b)
      for (long long n = 0; n < N; ++n)
        for (int s = 0; s < 3; ++s)
          for (long long h = 0; h < H; ++h)
            for (long long d = 0; d < D; ++d) {
              const unsigned short want = in[s][misalign + b * H * N * D + h * N * D + n * D + d];
              const unsigned short got = out[(((b * N + n) * 3 + s) * H + h) * D + d];
              if (want != got && bad++ < 5)
                printf("mismatch b%lld n%lld s%d h%lld d%lld: %x vs %x\n", b, n, s, h, d, got,
                       want);
            }
    printf("PointVec calls %lld\n", g_vec_calls);
    g_vec_calls = 0;
    failures += bad != 0;
    printf("stack strided (misaligned inputs: %d, so %s path): %lld mismatches of %lld\n", misalign,
           misalign ? "scalar" : "vector", bad, (long long)out.size());
  }
  return failures;
}
