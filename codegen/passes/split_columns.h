// The column count that two-stage column sums aim for (batch_norm_channels_last.h,
// layer_norm_param_grad_split.h): rows [M, N] seen as [A, B, N] with B * N >= this many columns.
// TCCD_SPLIT_COLUMNS=n (daemon environment; a power of two from 256 to 65536, keyed in
// pipeline.cc's DebugOptionsKey) overrides the default, to measure wider stage-one tiles (the
// column kernel widens its tiles from 4 threads, 64 bytes of a bf16 row, as columns grow)
// against the default on a GPU without a rebuild.
#pragma once

#include <cstdint>
#include <cstdlib>

namespace tccd::codegen {

inline constexpr int64_t kDefaultSplitColumns = 2048;

inline int64_t SplitColumnTarget() {
  static const int64_t n = [] {
    const char* v = std::getenv("TCCD_SPLIT_COLUMNS");
    const long long c = v == nullptr ? 0 : std::atoll(v);
    const bool power_of_two = c > 0 && (c & (c - 1)) == 0;
    return power_of_two && c >= 256 && c <= 65536 ? static_cast<int64_t>(c) : kDefaultSplitColumns;
  }();
  return n;
}

}  // namespace tccd::codegen
