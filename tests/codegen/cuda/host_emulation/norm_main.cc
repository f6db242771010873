// channels_last_norm_bf16 (golden): the dense entry with fixed-layout per-channel operands
// ([0, 0, 0, 1] over [N, H, W, C]) against a host reference of the same arithmetic.
#include "channels_last_norm_bf16.cc"
#include "harness.h"
using namespace tccd_kernel_channels_last_norm_bf16;
static unsigned short ToBf16(float f) {
  unsigned w;
  memcpy(&w, &f, 4);
  return (unsigned short)(f != f ? 0x7fc0u : (w + 0x7fffu + ((w >> 16) & 1u)) >> 16);
}
static float FromBf16(unsigned short h) {
  unsigned w = (unsigned)h << 16;
  float f;
  memcpy(&f, &w, 4);
  return f;
}
int main() {
  const long long c = 256, n = 8LL * 56 * 56 * c;
  std::mt19937 rng(4);
  std::normal_distribution<float> normal;
  Buf<unsigned short> x(n), out(n);
  Buf<float> mean(c), rstd(c), w(c), b(c);
  for (long long i = 0; i < n; ++i) x.at(0)[i] = ToBf16(normal(rng));
  for (long long i = 0; i < c; ++i) {
    mean.at(0)[i] = normal(rng);
    rstd.at(0)[i] = 1.0f + 0.1f * normal(rng);
    w.at(0)[i] = normal(rng);
    b.at(0)[i] = normal(rng);
  }
  ContigParams p;
  p.ptr[0] = (char*)x.at(0);
  p.ptr[1] = (char*)mean.at(0);
  p.ptr[2] = (char*)rstd.at(0);
  p.ptr[3] = (char*)w.at(0);
  p.ptr[4] = (char*)b.at(0);
  p.ptr[5] = (char*)out.at(0);
  Launch(p, channels_last_norm_bf16_contig);
  long long bad = 0;
  for (long long i = 0; i < n; ++i) {
    const long long ch = i % c;
    float y = (FromBf16(x.at(0)[i]) - mean.at(0)[ch]) * rstd.at(0)[ch] * w.at(0)[ch] + b.at(0)[ch];
    y = y > 0.0f ? y : 0.0f;
    bad += out.at(0)[i] != ToBf16(y);
  }
  printf("channels_last_norm contig (fixed per-channel operands) mismatches %lld of %lld\n", bad,
         n);
  return bad != 0;
}
