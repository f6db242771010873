// ReleaseAfterLastUse: text in, text out.
#include <catch2/catch.hpp>

#include "codegen/schedule/parser.h"
#include "codegen/schedule/printer.h"
#include "codegen/schedule/release_after_last_use.h"

namespace tccd::schedule {
namespace {

// Runs the pass on `in`; returns the printed result and whether it changed anything.
std::pair<std::string, bool> Run(const std::string& in) {
  absl::StatusOr<Schedule> s = ParseSchedule(in);
  REQUIRE(s.ok());
  absl::StatusOr<bool> changed = ReleaseAfterLastUse().Run(*s);
  REQUIRE(changed.ok());
  return {PrintSchedule(*s), *changed};
}

constexpr char kValues[] = R"(schedule(inputs=2) {
  %0: f32[4]{1}@cuda
  %1: f32[4]{1}@cuda
  %2: f32[4]{1}@cuda
  %3: f32[4]{1}@cuda
  %4: f32[4]{1}@cuda
)";

TEST_CASE("each value is released after its last reader, outputs never", "[schedule][release]") {
  auto [out, changed] = Run(std::string(kValues) + R"(  %2 = extern aten::add.Tensor(%0, %1)
  %3, _ = extern aten::foo.default([%2, %0])
  %4 = alias(%3)
  return (%4, [%1])
}
)");
  CHECK(changed);
  CHECK(out == std::string(kValues) + R"(  %2 = extern aten::add.Tensor(%0, %1)
  %3, _ = extern aten::foo.default([%2, %0])
  release(%0, %2)
  %4 = alias(%3)
  release(%3)
  return (%4, [%1])
}
)");
}

TEST_CASE("a value nothing reads is released after the step defining it", "[schedule][release]") {
  // %3: a segment output written into %2's buffer (DyingInputsIntoOutputs) that no later step
  // reads; held to the end of the call before (ResNet-50's stem: its BN + ReLU over the
  // convolution's output, read only by the same segment's max pool).
  auto [out, changed] = Run(std::string(kValues) + R"(  %2 = extern aten::neg.default(%0)
  %3, %4 = segment(%2, %1) artifact="k.so" symbol="s0" abi="tccd-cuda-segment-1" workspace=0 kernels=[] into=[2,-1]
  return (%4)
}
)");
  CHECK(changed);
  CHECK(out == std::string(kValues) + R"(  %2 = extern aten::neg.default(%0)
  release(%0)
  %3, %4 = segment(%2, %1) artifact="k.so" symbol="s0" abi="tccd-cuda-segment-1" workspace=0 kernels=[] into=[2,-1]
  release(%1, %2, %3)
  return (%4)
}
)");
}

TEST_CASE("stale release steps are replaced; a correct schedule is left alone",
          "[schedule][release]") {
  const std::string correct =
      std::string(kValues) +
      R"(  %2 = kernel(%0, %1) artifact="k.so" symbol="k0" abi="tccd-cuda-1" shape=[4] strides=[1,1,1] kernels=[]
  release(%0, %1)
  %3 = segment(%2) artifact="k.so" symbol="s0" abi="tccd-cuda-segment-1" workspace=0 kernels=[]
  release(%2)
  return (%3)
}
)";
  auto [same, unchanged] = Run(correct);
  CHECK_FALSE(unchanged);
  CHECK(same == correct);
  auto [fixed, changed] = Run(std::string(kValues) + R"(  release(%4)
  %2 = kernel(%0, %1) artifact="k.so" symbol="k0" abi="tccd-cuda-1" shape=[4] strides=[1,1,1] kernels=[]
  release(%2)
  %3 = segment(%2) artifact="k.so" symbol="s0" abi="tccd-cuda-segment-1" workspace=0 kernels=[]
  return (%3)
}
)");
  CHECK(changed);
  CHECK(fixed == correct);
}

}  // namespace
}  // namespace tccd::schedule
