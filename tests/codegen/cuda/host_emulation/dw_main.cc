// Host run of the depthwise templates (cuda_depthwise_emitter.h; golden
// depthwise_{conv7,conv7_dgrad,weight_partials7}_bf16_template.cu, ConvNeXt-T's stage 2 at batch
// 64: [64, 28, 28, 192], 7x7) against a host reference that sums the same terms in the same order
// (f32 FMAs, taps row-major; the partials over their rows then columns), so the results must be
// bit-identical. The first images only (a prefix of the grid: every thread of those blocks),
// which covers every border case of the window. DW_CASE 1: forward, 2: input gradient (flipped
// window), 3: weight partials (7 rows a partial).
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>
// shim.h comes with the prepared kernel source (prep.py).
struct float2 {
  float x, y;
};
inline float2 make_float2(float a, float b) { return float2{a, b}; }
#if DW_CASE == 1
#include "depthwise_conv7_bf16_template.cc"
using namespace tccd_kernel_depthwise_conv7_bf16_template;
#define ENTRY depthwise_conv7_bf16_template_dw
#elif DW_CASE == 2
#include "depthwise_conv7_dgrad_bf16_template.cc"
using namespace tccd_kernel_depthwise_conv7_dgrad_bf16_template;
#define ENTRY depthwise_conv7_dgrad_bf16_template_dw
#else
#include "depthwise_weight_partials7_bf16_template.cc"
using namespace tccd_kernel_depthwise_weight_partials7_bf16_template;
#define ENTRY depthwise_weight_partials7_bf16_template_dw
#endif

constexpr long long N = 64, H = 28, W = 28, C = 192, K = 7, P = 3, R = 7, B = H / R;
constexpr long long kImages = 2;  // the prefix of the grid run here

static float Bf(unsigned short h) {
  unsigned u = static_cast<unsigned>(h) << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static unsigned short ToBf(float f) { return tccd_rt::f32_to_bf16(f); }

static std::vector<unsigned short> Random(long long n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<unsigned short> v(n);
  for (auto& x : v) {
    const float f = std::normal_distribution<float>()(rng);
    unsigned u;
    memcpy(&u, &f, 4);
    x = static_cast<unsigned short>(u >> 16);
  }
  return v;
}

static void Run(const StridedParams& p, long long threads) {
  blockDim.x = 256;
  for (unsigned b = 0; b < (threads + 255) / 256; ++b)
    for (unsigned t = 0; t < 256; ++t) {
      blockIdx.x = b;
      threadIdx.x = t;
      ENTRY(p);
    }
}

int main() {
  const std::vector<unsigned short> x = Random(N * H * W * C, 1);
  StridedParams p{};
  long long bad = 0, checked = 0;
#if DW_CASE <= 2
  const bool flip = DW_CASE == 2;
  std::vector<float> taps(K * K * C);
  std::mt19937 rng(2);
  for (auto& t : taps) t = std::normal_distribution<float>()(rng);
  std::vector<unsigned short> out(N * H * W * C, 0xdead);
  p.ptr[0] = reinterpret_cast<char*>(const_cast<unsigned short*>(x.data()));
  p.ptr[1] = reinterpret_cast<char*>(taps.data());
  p.ptr[2] = reinterpret_cast<char*>(out.data());
  Run(p, kImages * H * (W / 7) * (C / 2));
  for (long long n = 0; n < kImages; ++n)
    for (long long h = 0; h < H; ++h)
      for (long long w = 0; w < W; ++w)
        for (long long c = 0; c < C; ++c) {
          float sum = 0.0f;
          for (long long i = 0; i < K; ++i)
            for (long long j = 0; j < K; ++j) {
              const long long hx = h + i - P, wx = w + j - P;
              const float v = hx >= 0 && hx < H && wx >= 0 && wx < W
                                  ? Bf(x[((n * H + hx) * W + wx) * C + c])
                                  : 0.0f;
              const long long ti = flip ? K - 1 - i : i, tj = flip ? K - 1 - j : j;
              sum = std::fmaf(v, taps[(ti * K + tj) * C + c], sum);
            }
          const unsigned short got = out[((n * H + h) * W + w) * C + c];
          ++checked;
          if (got != ToBf(sum) && bad++ < 5)
            printf("  (%lld, %lld, %lld, %lld): got %g want %g\n", n, h, w, c, Bf(got), sum);
        }
  // Nothing past the images run.
  for (long long e = kImages * H * W * C; e < N * H * W * C; ++e)
    if (out[e] != 0xdead && bad++ < 5) printf("  element %lld written\n", e);
#else
  const std::vector<unsigned short> g = Random(N * H * W * C, 3);
  std::vector<float> out(N * B * K * K * C, -12345.0f);
  p.ptr[0] = reinterpret_cast<char*>(const_cast<unsigned short*>(g.data()));
  p.ptr[1] = reinterpret_cast<char*>(const_cast<unsigned short*>(x.data()));
  p.ptr[2] = reinterpret_cast<char*>(out.data());
  Run(p, kImages * B * K * (C / 2));
  for (long long n = 0; n < kImages; ++n)
    for (long long b = 0; b < B; ++b)
      for (long long i = 0; i < K; ++i)
        for (long long j = 0; j < K; ++j)
          for (long long c = 0; c < C; ++c) {
            float sum = 0.0f;
            for (long long r = 0; r < R; ++r)
              for (long long w = 0; w < W; ++w) {
                const long long h = b * R + r, hx = h + i - P, wx = w + j - P;
                const float v = hx >= 0 && hx < H && wx >= 0 && wx < W
                                    ? Bf(x[((n * H + hx) * W + wx) * C + c])
                                    : 0.0f;
                sum = std::fmaf(Bf(g[((n * H + h) * W + w) * C + c]), v, sum);
              }
            const float got = out[(((n * B + b) * K + i) * K + j) * C + c];
            ++checked;
            if (memcmp(&got, &sum, 4) != 0 && bad++ < 5)
              printf("  (%lld, %lld, %lld, %lld, %lld): got %g want %g\n", n, b, i, j, c, got, sum);
          }
  for (long long e = kImages * B * K * K * C; e < N * B * K * K * C; ++e)
    if (out[e] != -12345.0f && bad++ < 5) printf("  partial %lld written\n", e);
#endif
  printf("depthwise template case %d: %lld points checked, %lld wrong\n", DW_CASE, checked, bad);
  return bad == 0 ? 0 : 1;
}
