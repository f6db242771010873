// The runtime's direct BLAS call (codegen/plan_runtime/runtime/tccd_plan_blas.h): every layout a
// plan's mm / addmm operands take (row- and column-major outputs, transposed and strided
// operands, broadcast biases) gives a @ b (+ bias), through a reference gemm of the Fortran ABI
// that reads its integers as int32 (LP64, torch's MKL) or int64 (ILP64); layouts BLAS cannot
// take are refused without writing the output.
#include "codegen/plan_runtime/runtime/tccd_plan_blas.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include <catch2/catch.hpp>

namespace {

template <typename Int>
int64_t Read(const int64_t* p) {
  Int v;
  std::memcpy(&v, p, sizeof(v));  // LP64 reads the low 4 bytes of the caller's int64
  return static_cast<int64_t>(v);
}

// Column-major C = alpha op(A) op(B) + beta C, as reference BLAS defines it.
template <typename T, typename Int>
void ReferenceGemm(const char* ta, const char* tb, const int64_t* pm, const int64_t* pn,
                   const int64_t* pk, const void* palpha, const void* pa, const int64_t* plda,
                   const void* pb, const int64_t* pldb, const void* pbeta, void* pc,
                   const int64_t* pldc) {
  const int64_t m = Read<Int>(pm), n = Read<Int>(pn), k = Read<Int>(pk);
  const int64_t lda = Read<Int>(plda), ldb = Read<Int>(pldb), ldc = Read<Int>(pldc);
  const T alpha = *static_cast<const T*>(palpha), beta = *static_cast<const T*>(pbeta);
  const T* a = static_cast<const T*>(pa);
  const T* b = static_cast<const T*>(pb);
  T* c = static_cast<T*>(pc);
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = 0; i < m; ++i) {
      double acc = 0;
      for (int64_t l = 0; l < k; ++l) {
        const double x = *ta == 'N' ? a[i + l * lda] : a[l + i * lda];
        const double y = *tb == 'N' ? b[l + j * ldb] : b[j + l * ldb];
        acc += x * y;
      }
      T& out = c[i + j * ldc];
      out = static_cast<T>(alpha * acc + (beta == 0 ? 0 : beta * out));
    }
  }
}

TccdBlasGemmFn Sgemm32 = ReferenceGemm<float, int32_t>;
TccdBlasGemmFn Sgemm64 = ReferenceGemm<float, int64_t>;
TccdBlasGemmFn Dgemm32 = ReferenceGemm<double, int32_t>;

// A strided matrix of T over its own storage: element (i, j) at i * rs + j * cs.
template <typename T>
struct Mat {
  int64_t rows, cols, rs, cs;
  std::vector<T> data;
  Mat(int64_t r, int64_t c, int64_t row_stride, int64_t col_stride, int64_t storage)
      : rows(r), cols(c), rs(row_stride), cs(col_stride), data(storage, T(-7)) {}
  T& at(int64_t i, int64_t j) { return data[i * rs + j * cs]; }
  TccdBlasMatrix view() { return TccdBlasMatrix{data.data(), rows, cols, rs, cs}; }
};

template <typename T>
Mat<T> RowMajor(int64_t r, int64_t c, int64_t ld = -1) {
  if (ld < 0) ld = c;
  return Mat<T>(r, c, ld, 1, r * ld);
}
template <typename T>
Mat<T> ColMajor(int64_t r, int64_t c, int64_t ld = -1) {
  if (ld < 0) ld = r;
  return Mat<T>(r, c, 1, ld, c * ld);
}
template <typename T>
void Fill(Mat<T>& x, int seed) {
  for (int64_t i = 0; i < x.rows; ++i)
    for (int64_t j = 0; j < x.cols; ++j) x.at(i, j) = T(((i * 7 + j * 3 + seed) % 11) - 5);
}

// c == alpha a @ b + beta bias, exactly (small integers).
template <typename T>
void CheckProduct(Mat<T>& a, Mat<T>& b, Mat<T>& c, Mat<T>* bias, double beta, double alpha) {
  for (int64_t i = 0; i < c.rows; ++i) {
    for (int64_t j = 0; j < c.cols; ++j) {
      double acc = 0;
      for (int64_t l = 0; l < a.cols; ++l) acc += double(a.at(i, l)) * double(b.at(l, j));
      double want = alpha * acc;
      if (bias != nullptr && beta != 0)
        want += beta * double(bias->at(bias->rows == 1 ? 0 : i, bias->cols == 1 ? 0 : j));
      INFO("c(" << i << ", " << j << ")");
      CHECK(double(c.at(i, j)) == want);
    }
  }
}

template <typename T>
int Gemm(TccdBlasGemmFn fn, Mat<T>& a, Mat<T>& b, Mat<T>& c, Mat<T>* bias = nullptr,
         double beta = 0, double alpha = 1) {
  const TccdBlasMatrix av = a.view(), bv = b.view(), cv = c.view();
  TccdBlasMatrix biasv;
  if (bias != nullptr) biasv = bias->view();
  return tccd_blas_gemm(fn, sizeof(T) == 8, &av, &bv, &cv, bias ? &biasv : nullptr, beta, alpha);
}

TEST_CASE("A linear layer's addmm: row-major output, the weight read transposed, a row bias",
          "[blas]") {
  auto x = RowMajor<float>(5, 4);
  auto w = RowMajor<float>(3, 4);  // nn.Linear's [out, in] weight; the plan reads w.t()
  Fill(x, 1);
  Fill(w, 2);
  Mat<float> wt(4, 3, 1, 4, 12);
  wt.data = w.data;
  auto bias = Mat<float>(1, 3, 0, 1, 3);
  Fill(bias, 3);
  auto y = RowMajor<float>(5, 3);
  REQUIRE(Gemm(Sgemm32, x, wt, y, &bias, 1.0, 1.0) == 0);
  CheckProduct(x, wt, y, &bias, 1.0, 1.0);
}

TEST_CASE("Gradients: a transposed left operand, column-major and strided outputs", "[blas]") {
  auto g = RowMajor<float>(6, 3);
  auto h = RowMajor<float>(6, 5);
  Fill(g, 4);
  Fill(h, 5);
  Mat<float> gt(3, 6, 1, 3, 18);  // g.t()
  gt.data = g.data;
  SECTION("row-major output") {
    auto dw = RowMajor<float>(3, 5);
    REQUIRE(Gemm(Sgemm32, gt, h, dw) == 0);
    CheckProduct<float>(gt, h, dw, nullptr, 0, 1);
  }
  SECTION("column-major output") {
    auto dw = ColMajor<float>(3, 5);
    REQUIRE(Gemm(Sgemm32, gt, h, dw) == 0);
    CheckProduct<float>(gt, h, dw, nullptr, 0, 1);
  }
  SECTION("an output with padded rows, operands sliced out of wider ones") {
    auto dw = RowMajor<float>(3, 5, 9);
    auto wide = RowMajor<float>(6, 8);  // h = wide[:, 2:7]
    Fill(wide, 6);
    Mat<float> hs(6, 5, 8, 1, 48);
    hs.data.assign(wide.data.begin() + 2, wide.data.end());
    hs.data.resize(48, 0);
    REQUIRE(Gemm(Sgemm32, gt, hs, dw) == 0);
    CheckProduct<float>(gt, hs, dw, nullptr, 0, 1);
  }
}

TEST_CASE("float64, an ILP64 library, alpha and beta, broadcast biases", "[blas]") {
  auto a = RowMajor<double>(4, 3);
  auto b = ColMajor<double>(3, 2);
  Fill(a, 7);
  Fill(b, 8);
  SECTION("float64, a column bias [m, 1], beta 2, alpha 3") {
    auto c = RowMajor<double>(4, 2);
    auto bias = Mat<double>(4, 1, 1, 0, 4);
    Fill(bias, 9);
    REQUIRE(Gemm(Dgemm32, a, b, c, &bias, 2.0, 3.0) == 0);
    CheckProduct(a, b, c, &bias, 2.0, 3.0);
  }
  SECTION("a full [m, n] bias, column-major output, int64 integers") {
    auto af = RowMajor<float>(4, 3);
    auto bf = ColMajor<float>(3, 2);
    Fill(af, 7);
    Fill(bf, 8);
    auto c = ColMajor<float>(4, 2);
    auto bias = RowMajor<float>(4, 2);
    Fill(bias, 10);
    REQUIRE(Gemm(Sgemm64, af, bf, c, &bias, 1.0, 1.0) == 0);
    CheckProduct(af, bf, c, &bias, 1.0, 1.0);
  }
  SECTION("beta 0 ignores the bias (NaN included), as addmm does") {
    auto c = RowMajor<double>(4, 2);
    auto bias = Mat<double>(1, 2, 0, 1, 2);
    bias.data = {__builtin_nan(""), 1.0};
    REQUIRE(Gemm(Dgemm32, a, b, c, &bias, 0.0, 1.0) == 0);
    CheckProduct<double>(a, b, c, nullptr, 0, 1);
  }
}

TEST_CASE("Layouts BLAS cannot take are refused and the output is not written", "[blas]") {
  auto a = RowMajor<float>(4, 3);
  auto b = RowMajor<float>(3, 2);
  auto c = RowMajor<float>(4, 2);
  Fill(a, 1);
  Fill(b, 2);
  const std::vector<float> before = c.data;
  SECTION("no unit stride in an operand") {
    Mat<float> every_other(4, 3, 6, 2, 24);
    CHECK(Gemm(Sgemm32, every_other, b, c) == 1);
  }
  SECTION("an output whose rows overlap") {
    Mat<float> overlapping(4, 2, 1, 1, 8);
    CHECK(Gemm(Sgemm32, a, b, overlapping) == 1);
  }
  SECTION("an empty dimension") {
    auto empty = RowMajor<float>(4, 0);
    auto b0 = RowMajor<float>(0, 2);
    CHECK(Gemm(Sgemm32, empty, b0, c) == 1);
  }
  SECTION("shapes that do not match") {
    auto b4 = RowMajor<float>(4, 2);
    CHECK(Gemm(Sgemm32, a, b4, c) == 1);
  }
  CHECK(c.data == before);
}

void WrongGemm(const char*, const char*, const int64_t*, const int64_t*, const int64_t*,
               const void*, const void*, const int64_t*, const void*, const int64_t*, const void*,
               void* c, const int64_t* ldc) {
  // Reads its integers as int32 but ignores the trans flags: a different ABI.
  static_cast<float*>(c)[0] = float(Read<int32_t>(ldc));
}

TEST_CASE("The load-time probe accepts LP64 and ILP64 gemms and rejects another ABI", "[blas]") {
  CHECK(tccd_blas_probe(Sgemm32, 0) == 0);
  CHECK(tccd_blas_probe(Sgemm64, 0) == 0);
  CHECK(tccd_blas_probe(Dgemm32, 1) == 0);
  CHECK(tccd_blas_probe(WrongGemm, 0) == -1);
  CHECK(tccd_blas_probe(Sgemm32, 1) == -1);  // sgemm_ where dgemm_ was asked for
}

}  // namespace
