#include "cat_f32.cc"
#include "harness.h"
using namespace tccd_kernel_cat_f32;
int main() {
  int failures = 0;
  std::mt19937 rng(2);
  Buf<float> a(64 * 64), b(64 * 64), scale(64 * 128);
  for (int i = 0; i < 64 * 64; ++i) {
    a.at(0)[i] = std::normal_distribution<float>()(rng);
    b.at(0)[i] = std::normal_distribution<float>()(rng);
  }
  for (int i = 0; i < 64 * 128; ++i) scale.at(0)[i] = std::normal_distribution<float>()(rng);
  for (int bcast = 0; bcast < 2; ++bcast) {
    std::vector<std::vector<float>> results;
    for (int shift = 0; shift < 2; ++shift) {
      Buf<float> out(64 * 128);
      StridedParams p;
      p.ptr[0] = (char*)a.at(0);
      p.stride[0][0] = 64;
      p.stride[0][1] = 1;
      p.ptr[1] = (char*)b.at(0);
      p.stride[1][0] = 64;
      p.stride[1][1] = 1;
      p.ptr[2] = (char*)scale.at(0);
      p.stride[2][0] = bcast ? 0 : 128;
      p.stride[2][1] = 1;
      p.ptr[3] = (char*)out.at(shift);
      p.stride[3][0] = 128;
      p.stride[3][1] = 1;
      g_vec_calls = 0;
      Launch(p, cat_f32_strided);
      printf("cat strided bcast=%d shift=%d PointVec calls %lld\n", bcast, shift, g_vec_calls);
      results.emplace_back(out.at(shift), out.at(shift) + 64 * 128);
    }
    // reference
    long long bad = 0;
    for (int i = 0; i < 64; ++i)
      for (int j = 0; j < 128; ++j) {
        float v = j < 64 ? a.at(0)[i * 64 + j] : b.at(0)[i * 64 + j - 64];
        float want = v * scale.at(0)[bcast ? j : i * 128 + j];
        for (auto& r : results) bad += r[i * 128 + j] != want;
      }
    failures += bad != 0;
    printf("cat bcast=%d mismatches %lld\n", bcast, bad);
  }
  // contig entry
  {
    Buf<float> out(64 * 128);
    ContigParams p;
    p.ptr[0] = (char*)a.at(0);
    p.ptr[1] = (char*)b.at(0);
    p.ptr[2] = (char*)scale.at(0);
    p.ptr[3] = (char*)out.at(0);
    g_vec_calls = 0;
    Launch(p, cat_f32_contig);
    long long bad = 0;
    // contig: gather strides are the row-major [64,128] ones (the runtime only picks it when they
    // match); compare with the same formula to check vector == scalar semantics.
    for (int i = 0; i < 64; ++i)
      for (int j = 0; j < 128; ++j) {
        float v = j < 64 ? a.at(0)[i * 128 + j] : b.at(0)[i * 128 + j - 64];
        bad += out.at(0)[i * 128 + j] != v * scale.at(0)[i * 128 + j];
      }
    failures += bad != 0;
    printf("cat contig PointVec calls %lld mismatches %lld\n", g_vec_calls, bad);
  }
  return failures;
}
