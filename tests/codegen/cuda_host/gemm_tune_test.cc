// The decisions of cuBLASLt autotuning (codegen/cuda_host/runtime/tccd_cuda_tune.h) on fake
// timings: which candidate a load keeps, how many rounds it times, what it fills operands with.
// The whole path through a generated library, against fake drivers, is in
// cuda_host_fake_driver_test.cc ("a static gemm with tune > 1 ...").
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>

#include "codegen/cuda_host/runtime/tccd_cuda_tune.h"

namespace {

int Pick(std::initializer_list<float> ms, float margin = TCCD_RT_TUNE_MARGIN) {
  return tccd_rt_tune_pick(std::data(ms), static_cast<int>(ms.size()), margin);
}

TEST_CASE("autotuning keeps the fastest candidate when it beats the heuristic's first by the "
          "margin") {
  CHECK(Pick({0.120f, 0.069f, 0.100f}) == 1);  // ConvNeXt's cutlass kernel vs a faster one
  CHECK(Pick({1.0f, 0.9f, 0.5f, 0.6f}) == 2);
  CHECK(Pick({1.0f, 0.96f}) == 1);  // 4% faster: past the 3% margin
}

TEST_CASE("autotuning keeps the heuristic's first within the margin or when it is fastest") {
  CHECK(Pick({1.0f, 0.98f}) == 0);
  CHECK(Pick({1.0f, 1.2f, 1.5f}) == 0);
  CHECK(Pick({1.0f}) == 0);
  CHECK(Pick({0.5f, 0.45f}, 0.8f) == 0);  // the margin is a parameter
  // Nothing timed (every entry failed): the first.
  CHECK(Pick({-1.0f, -1.0f}) == 0);
  CHECK(tccd_rt_tune_pick(nullptr, 0, TCCD_RT_TUNE_MARGIN) == 0);
}

TEST_CASE("autotuning skips candidates that failed and replaces a failed first") {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(Pick({1.0f, -1.0f, 0.0f, 0.5f}) == 3);
  CHECK(Pick({1.0f, nan, inf, 0.99f}) == 0);
  CHECK(Pick({-1.0f, 2.0f, 3.0f}) == 1);  // the first failed: any valid one beats it
  CHECK(Pick({nan, 3.0f, 2.0f}) == 2);
}

TEST_CASE("autotuning runs as many rounds as fit its budget, between two and five") {
  CHECK(tccd_rt_tune_rounds(0.01f) == TCCD_RT_TUNE_MAX_ROUNDS);  // small gemms: all rounds
  CHECK(tccd_rt_tune_rounds(3.0f) == 3);                          // 10 ms / 3 ms
  CHECK(tccd_rt_tune_rounds(4.9f) == 2);
  CHECK(tccd_rt_tune_rounds(50.0f) == 2);  // a big gemm: the least
  CHECK(tccd_rt_tune_rounds(0.0f) == TCCD_RT_TUNE_MAX_ROUNDS);
}

TEST_CASE("autotuning times again only candidates within 1.5x of the fastest first run") {
  CHECK(tccd_rt_tune_keep(0.10f, 0.10f));
  CHECK(tccd_rt_tune_keep(0.15f, 0.10f));
  CHECK_FALSE(tccd_rt_tune_keep(0.16f, 0.10f));
  CHECK_FALSE(tccd_rt_tune_keep(1.0f, 0.069f));  // a slow cutlass candidate beside nvjet
}

TEST_CASE("autotuning charges each launch beyond the first") {
  const float ms[3] = {0.100f, 0.095f, 0.060f};
  const int32_t single[3] = {1, 1, 1};
  const int32_t split[3] = {1, 3, 3};
  const int32_t uncounted[3] = {0, 0, 0};
  // 0.095 + 2 x 0.004 = 0.103: not below 0.97 x 0.100; 0.060 + 0.008 is.
  CHECK(tccd_rt_tune_pick_launches(ms, split, 2, TCCD_RT_TUNE_MARGIN) == 0);
  CHECK(tccd_rt_tune_pick_launches(ms, single, 2, TCCD_RT_TUNE_MARGIN) == 1);
  CHECK(tccd_rt_tune_pick_launches(ms, split, 3, TCCD_RT_TUNE_MARGIN) == 2);
  CHECK(tccd_rt_tune_pick_launches(ms, uncounted, 2, TCCD_RT_TUNE_MARGIN) == 1);
  CHECK(tccd_rt_tune_pick_launches(ms, nullptr, 2, TCCD_RT_TUNE_MARGIN) == 1);
  // The heuristic's first in three launches, a candidate in one: the first is charged.
  const float close[2] = {0.100f, 0.099f};
  const int32_t first_split[2] = {3, 1};
  CHECK(tccd_rt_tune_pick_launches(close, first_split, 2, TCCD_RT_TUNE_MARGIN) == 1);
}

TEST_CASE("autotuning's scratch operands hold 2^-7 in the gemm's type") {
  auto f32 = [](uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, sizeof(f));
    return f;
  };
  CHECK(f32(tccd_rt_tune_fill_word(0)) == 0.0078125f);
  // bf16 is f32's upper half.
  CHECK(f32((tccd_rt_tune_fill_word(14) & 0xffffu) << 16) == 0.0078125f);
  CHECK((tccd_rt_tune_fill_word(14) >> 16) == (tccd_rt_tune_fill_word(14) & 0xffffu));
  // f16: exponent 8 (15 - 7), mantissa 0.
  const uint32_t h = tccd_rt_tune_fill_word(2) & 0xffffu;
  CHECK(((h >> 10) & 31u) == 8u);
  CHECK((h & 1023u) == 0u);
  CHECK((tccd_rt_tune_fill_word(2) >> 16) == h);
}

}  // namespace
