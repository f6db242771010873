#include "dropout_bf16.cc"
#include "harness.h"
using namespace tccd_kernel_dropout_bf16;
int main() {
  const long long n = 16 * 128 * 768;
  std::mt19937 rng(3);
  Buf<long long> seed(1);
  seed.at(0)[0] = 123456789;
  Buf<unsigned short> x(n);
  for (long long i = 0; i < n; ++i) {
    float f = std::normal_distribution<float>()(rng);
    unsigned u;
    memcpy(&u, &f, 4);
    x.at(0)[i] = u >> 16;
  }
  std::vector<std::vector<unsigned char>> masks;
  std::vector<std::vector<unsigned short>> outs;
  for (int shift = 0; shift < 2; ++shift) {
    Buf<unsigned char> m(n);
    Buf<unsigned short> o(n);
    StridedParams p;
    const long long st[3] = {128 * 768, 768, 1};
    p.ptr[0] = (char*)seed.at(0);
    for (int d = 0; d < 3; ++d) p.stride[0][d] = 0;
    p.ptr[1] = (char*)x.at(0);
    for (int d = 0; d < 3; ++d) p.stride[1][d] = st[d];
    p.ptr[2] = (char*)m.at(shift);
    for (int d = 0; d < 3; ++d) p.stride[2][d] = st[d];
    p.ptr[3] = (char*)o.at(shift);
    for (int d = 0; d < 3; ++d) p.stride[3][d] = st[d];
    g_vec_calls = 0;
    Launch(p, dropout_bf16_strided);
    printf("dropout shift=%d PointVec calls %lld\n", shift, g_vec_calls);
    masks.emplace_back(m.at(shift), m.at(shift) + n);
    outs.emplace_back(o.at(shift), o.at(shift) + n);
  }
  long long kept = 0;
  for (auto v : masks[0]) kept += v;
  printf("dropout vector vs scalar: masks equal %d, outputs equal %d, kept fraction %.4f\n",
         masks[0] == masks[1], outs[0] == outs[1], double(kept) / n);
  return !(masks[0] == masks[1] && outs[0] == outs[1]);
}
