#include "embedding_bf16.cc"
#include "harness.h"
using namespace tccd_kernel_embedding_bf16;
int main() {
  int failures = 0;
  std::mt19937 rng(4);
  Buf<unsigned short> w(100 * 768);
  for (int i = 0; i < 100 * 768; ++i) w.at(0)[i] = rng() & 0x7f7f;
  Buf<long long> ids(4 * 512);
  for (int i = 0; i < 4 * 512; ++i)
    ids.at(0)[i] = (long long)(rng() % 110) - 5;  // some out of range
  for (int shift = 0; shift < 2; ++shift) {
    Buf<unsigned short> o(4 * 512 * 768);
    StridedParams p;
    p.ptr[0] = (char*)w.at(0);
    p.stride[0][0] = 768;
    p.stride[0][1] = 1;
    p.stride[0][2] = 0;
    p.ptr[1] = (char*)ids.at(0);
    p.stride[1][0] = 512;
    p.stride[1][1] = 1;
    p.stride[1][2] = 0;
    p.ptr[2] = (char*)o.at(shift);
    p.stride[2][0] = 512 * 768;
    p.stride[2][1] = 768;
    p.stride[2][2] = 1;
    g_vec_calls = 0;
    Launch(p, embedding_bf16_strided);
    long long bad = 0;
    for (int t = 0; t < 4 * 512; ++t)
      for (int e = 0; e < 768; ++e) {
        long long r = ids.at(0)[t];
        unsigned short want = (r >= 0 && r < 100) ? w.at(0)[r * 768 + e] : 0;
        bad += o.at(shift)[t * 768 + e] != want;
      }
    failures += bad != 0;
    printf("embedding shift=%d PointVec calls %lld mismatches %lld\n", shift, g_vec_calls, bad);
  }
  return failures;
}
