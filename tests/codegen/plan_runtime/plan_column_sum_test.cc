// The runtime's column sums (codegen/plan_runtime/runtime/tccd_plan_column_sum.h): a bias
// gradient's sum over rows, for every column count around the 32-column groups and every row
// count around the 32-row float chunks, padded rows, float32 and float64, against a double sum.
#include "codegen/plan_runtime/runtime/tccd_plan_column_sum.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

namespace {

template <typename T>
void CheckSums(int64_t rows, int64_t cols, int64_t ld) {
  std::vector<T> x(rows * ld + 1, T(1e30));  // padding holds values a wrong read would show
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) x[i * ld + j] = T(((i * 13 + j * 7) % 19) - 9) / T(8);
  std::vector<T> out(cols + 1, T(-3));
  tccd_column_sum(sizeof(T) == 8, x.data(), rows, cols, ld, out.data());
  for (int64_t j = 0; j < cols; ++j) {
    double want = 0;
    for (int64_t i = 0; i < rows; ++i) want += double(x[i * ld + j]);
    INFO("rows " << rows << " cols " << cols << " ld " << ld << " column " << j);
    CHECK(double(out[j]) == want);  // multiples of 1/8 in range: every order sums exactly
  }
  CHECK(out[cols] == T(-3));  // nothing written past the last column
}

TEST_CASE("Column sums of every shape around the groups and chunks", "[column_sum]") {
  for (int64_t rows : {0, 1, 31, 32, 33, 64, 100}) {
    for (int64_t cols : {1, 10, 31, 32, 33, 64, 300}) {
      CheckSums<float>(rows, cols, cols);
      CheckSums<float>(rows, cols, cols + 5);
      CheckSums<double>(rows, cols, cols);
      CheckSums<double>(rows, cols, cols + 3);
    }
  }
}

TEST_CASE("Float32 column sums keep a cascade's accuracy over many rows", "[column_sum]") {
  // 65536 rows of 0.1f: a float running sum drifts by ~1e-3 relative; float partials of 32
  // rows added in double stay within 32 float roundings (~2e-6), as ATen's cascade sum does.
  const int64_t rows = 65536, cols = 40;
  std::vector<float> x(rows * cols, 0.1f);
  std::vector<float> out(cols);
  tccd_column_sum(0, x.data(), rows, cols, cols, out.data());
  const double want = rows * double(0.1f);
  float naive = 0;
  for (int64_t i = 0; i < rows; ++i) naive += 0.1f;
  REQUIRE(std::abs(double(naive) - want) > want * 1e-4);  // the case a running sum gets wrong
  for (int64_t j = 0; j < cols; ++j) CHECK(std::abs(double(out[j]) - want) <= want * 2e-6);
}

}  // namespace
