// cat3_bf16 (GPT-2's q/k/v gradients concatenated along the last dim, [4, 32, 3 x 64]) through
// its strided entry: parts dense and aligned (vector path, 128-bit gathers), one part read with
// stride 2 along the last dim (vector path, that part lane by lane: its own layout test fails)
// and one part shifted by an element (misaligned: the same), and the output shifted (no vector
// path). Every case against the reference.
#include "cat3_bf16.cc"
#include "harness.h"
using namespace tccd_kernel_cat3_bf16;
int main() {
  int failures = 0;
  std::mt19937 rng(3);
  const int B = 4, S = 32, W = 64;
  // Each part's storage holds [B, S, 2W] so that a stride-2 view fits.
  std::vector<Buf<unsigned short>> parts;
  for (int p = 0; p < 3; ++p) {
    parts.emplace_back(B * S * 2 * W + 8);
    for (int i = 0; i < B * S * 2 * W + 8; ++i)
      parts[p].at(0)[i] = static_cast<unsigned short>(rng() & 0x3fff);  // finite bf16
  }
  for (int mode = 0; mode < 4; ++mode) {
    // mode 0: dense parts; 1: part 1 with stride 2; 2: part 2 shifted by one element;
    // 3: output shifted by one element.
    Buf<unsigned short> out(B * S * 3 * W + 8);
    StridedParams p;
    long long elem_stride[3] = {1, mode == 1 ? 2 : 1, 1};
    int shift[3] = {0, 0, mode == 2 ? 1 : 0};
    for (int k = 0; k < 3; ++k) {
      p.ptr[k] = (char*)parts[k].at(shift[k]);
      p.stride[k][0] = S * W * elem_stride[k];
      p.stride[k][1] = W * elem_stride[k];
      p.stride[k][2] = elem_stride[k];
    }
    p.ptr[3] = (char*)out.at(mode == 3 ? 1 : 0);
    p.stride[3][0] = S * 3 * W;
    p.stride[3][1] = 3 * W;
    p.stride[3][2] = 1;
    g_vec_calls = 0;
    Launch(p, cat3_bf16_strided);
    long long bad = 0;
    for (int b = 0; b < B; ++b)
      for (int s = 0; s < S; ++s)
        for (int c = 0; c < 3 * W; ++c) {
          const int k = c / W, j = c % W;
          const unsigned short want =
              parts[k].at(shift[k])[(b * S * W + s * W + j) * elem_stride[k]];
          bad += ((unsigned short*)p.ptr[3])[b * S * 3 * W + s * 3 * W + c] != want;
        }
    failures += bad != 0;
    printf("cat3 mode=%d PointVec calls %lld mismatches %lld\n", mode, g_vec_calls, bad);
  }
  return failures;
}
