// SinkViewsToFirstReader: text in, text out.
#include <catch2/catch.hpp>

#include "codegen/schedule/parser.h"
#include "codegen/schedule/printer.h"
#include "codegen/schedule/sink_views_to_first_reader.h"

namespace tccd::schedule {
namespace {

std::pair<std::string, bool> Run(const std::string& in) {
  absl::StatusOr<Schedule> s = ParseSchedule(in);
  REQUIRE(s.ok());
  absl::StatusOr<bool> changed = SinkViewsToFirstReader().Run(*s);
  REQUIRE(changed.ok());
  return {PrintSchedule(*s), *changed};
}

constexpr char kValues[] = R"(schedule(inputs=2) {
  %0: f32[4,8]{8,1}@cuda
  %1: f32[8,4]{4,1}@cuda
  %2: f32[8,4]{1,8}@cuda
  %3: f32[4,8]{1,4}@cuda
  %4: f32[8,4]{4,1}@cuda
  %5: f32[8,4]{4,1}@cuda
  %6: f32[32]{1}@cuda
)";

TEST_CASE("a chain of views moves to just before its first reader", "[schedule][sink-views]") {
  auto [out, changed] = Run(std::string(kValues) + R"(  %2 = extern aten::t.default(%0)
  %3 = extern aten::t.default(%1)
  %4 = extern aten::cumsum.default(%1, 0)
  %5 = kernel(%2, %4) artifact="k.so" symbol="k0" abi="tccd-cuda-1" shape=[8,4] strides=[1,8,4,1,4,1] kernels=[]
  %6 = extern aten::view.default(%5, [32])
  return (%3, %6)
}
)");
  CHECK(changed);
  // t(%0) sinks past cumsum to the kernel; t(%1) is read by no step (an output only) and the
  // view of %5 is read by nothing: both stay.
  CHECK(out == std::string(kValues) + R"(  %3 = extern aten::t.default(%1)
  %4 = extern aten::cumsum.default(%1, 0)
  %2 = extern aten::t.default(%0)
  %5 = kernel(%2, %4) artifact="k.so" symbol="k0" abi="tccd-cuda-1" shape=[8,4] strides=[1,8,4,1,4,1] kernels=[]
  %6 = extern aten::view.default(%5, [32])
  return (%3, %6)
}
)");
}

TEST_CASE("views read by the next step and non-views stay where they are",
          "[schedule][sink-views]") {
  const std::string in = std::string(kValues) + R"(  %4 = extern aten::cumsum.default(%1, 0)
  %2 = extern aten::t.default(%0)
  %3 = extern aten::t.default(%2)
  %5 = extern aten::add.Tensor(%3, %4)
  %6 = extern aten::view.default(%5, [32])
  return (%6)
}
)";
  auto [out, changed] = Run(in);
  CHECK_FALSE(changed);
  CHECK(out == in);
}

}  // namespace
}  // namespace tccd::schedule
