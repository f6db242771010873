#include <cstdio>
#include <random>
#include <vector>
template <typename P, typename F>
void Launch(const P& p, F kernel) {
  gridDim.x = 64;
  blockDim.x = 256;
  for (unsigned b = 0; b < gridDim.x; ++b)
    for (unsigned t = 0; t < blockDim.x; ++t) {
      blockIdx.x = b;
      threadIdx.x = t;
      kernel(p);
    }
}
// Buffer with 16 spare bytes in front, 16-byte aligned base; shift in elements.
template <typename T>
struct Buf {
  std::vector<unsigned char> raw;
  T* at(int shift) {
    return reinterpret_cast<T*>(((reinterpret_cast<uintptr_t>(raw.data()) + 15) & ~uintptr_t(15))) +
           shift;
  }
  explicit Buf(size_t n) : raw(n * sizeof(T) + 64, 0) {}
};
