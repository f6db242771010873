// VerifySchedule: what it accepts and each thing it rejects.
#include <catch2/catch.hpp>

#include "codegen/schedule/parser.h"
#include "codegen/schedule/verifier.h"

namespace tccd::schedule {
namespace {

constexpr char kValues[] = R"(schedule(inputs=1) {
  %0: f32[4]{1}@cuda
  %1: f32[4]{1}@cuda
  %2: f32[4]{1}@cuda
)";

std::string Verify(const std::string& steps) {
  absl::StatusOr<Schedule> s = ParseSchedule(std::string(kValues) + steps + "}\n");
  REQUIRE(s.ok());
  absl::Status status = VerifySchedule(*s);
  if (!status.ok()) CHECK(status.code() == absl::StatusCode::kInternal);
  return status.ok() ? "ok" : std::string(status.message());
}

TEST_CASE("a well-formed schedule verifies; workspace values need no definition",
          "[schedule][verifier]") {
  CHECK(Verify("  %1 = extern aten::relu.default(%0)\n  release(%0)\n  return (%1)\n") == "ok");
}

TEST_CASE("dataflow errors are internal errors naming the step", "[schedule][verifier]") {
  CHECK(Verify("  %1 = extern aten::relu.default(%2)\n  return (%1)\n") ==
        "step 0 (%1 = extern aten::relu.default(%2)): reads %2 before it is defined");
  CHECK(Verify("  %1 = extern aten::relu.default(%7)\n  return (%1)\n") ==
        "step 0 (%1 = extern aten::relu.default(%7)): reads undeclared %7");
  CHECK(Verify("  release(%0)\n  %1 = extern aten::relu.default(%0)\n  return (%1)\n") ==
        "step 1 (%1 = extern aten::relu.default(%0)): reads %0 after its release");
  CHECK(Verify("  %1 = alias(%0)\n  %1 = alias(%0)\n  return (%1)\n") ==
        "step 1 (%1 = alias(%0)): defines %1 again");
  CHECK(Verify("  %1, %2 = alias(%0)\n  return (%1)\n") ==
        "step 0 (%1, %2 = alias(%0)): an alias defines one value");
  CHECK(Verify("  release(%0)\n  release(%0)\n  return ()\n") ==
        "step 1 (release(%0)): releases %0, which is not live");
  CHECK(Verify("  %1 = alias(%0)\n  return (%2)\n") == "schedule output %2 is not a live value");
}

}  // namespace
}  // namespace tccd::schedule
