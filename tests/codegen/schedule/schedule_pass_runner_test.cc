// The pass runner over schedule passes: timing, verification after a change, dumps, skipping.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "codegen/passes/pass_runner.h"
#include "codegen/schedule/parser.h"
#include "codegen/schedule/printer.h"
#include "codegen/schedule/release_after_last_use.h"

namespace tccd::schedule {
namespace {

constexpr char kIn[] = R"(schedule(inputs=1) {
  %0: f32[4]{1}@cuda
  %1: f32[4]{1}@cuda
  %1 = extern aten::relu.default(%0)
  return (%1)
}
)";

// Breaks the schedule: reads a value nobody defines.
class BreakingPass : public SchedulePass {
 public:
  std::string_view name() const override { return "breaking"; }
  absl::StatusOr<bool> Run(Schedule& s) override {
    s.steps.push_back(Step{Alias{1}, {1}});
    return true;
  }
};

TEST_CASE("a changed schedule is dumped and timed, an unchanged one only timed",
          "[schedule][runner]") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "tccd_schedule_runner_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  codegen::PassRunner runner({.dump_dir = dir.string(), .disabled = {}});
  absl::StatusOr<Schedule> s = ParseSchedule(kIn);
  REQUIRE(s.ok());
  ReleaseAfterLastUse releases;
  REQUIRE(runner.Run(releases, *s).ok());
  REQUIRE(runner.Run(releases, *s).ok());  // nothing left to do
  REQUIRE(runner.timings().size() == 2);
  CHECK(runner.timings()[0].pass == "release-after-last-use");
  CHECK(runner.timings()[0].changed);
  CHECK_FALSE(runner.timings()[1].changed);
  std::ifstream dump(dir / "01-release-after-last-use.sched");
  std::stringstream text;
  text << dump.rdbuf();
  CHECK(text.str() == PrintSchedule(*s));
  CHECK_FALSE(std::filesystem::exists(dir / "02-release-after-last-use.sched"));
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "a pass that breaks the schedule is an internal error naming it; disabled passes do not run",
    "[schedule][runner]") {
  absl::StatusOr<Schedule> s = ParseSchedule(kIn);
  REQUIRE(s.ok());
  BreakingPass breaking;
  codegen::PassRunner runner({.dump_dir = "", .disabled = {}});
  absl::Status status = runner.Run(breaking, *s);
  CHECK(status.code() == absl::StatusCode::kInternal);
  CHECK(std::string(status.message()).rfind("schedule invalid after pass breaking: step 1", 0) ==
        0);

  absl::StatusOr<Schedule> fresh = ParseSchedule(kIn);
  REQUIRE(fresh.ok());
  codegen::PassRunner skipping({.dump_dir = "", .disabled = {"breaking"}});
  CHECK(skipping.disabled("breaking"));
  CHECK(skipping.Run(breaking, *fresh).ok());
  CHECK(PrintSchedule(*fresh) == kIn);
  CHECK(skipping.timings().empty());
}

}  // namespace
}  // namespace tccd::schedule

namespace tccd::schedule {
namespace {

TEST_CASE("stages are timed in order, each ended by the next", "[schedule][runner]") {
  codegen::PassRunner runner({.dump_dir = "", .disabled = {}});
  runner.BeginStage("partition");
  runner.BeginStage("kernel-ir");
  runner.EndStage();
  runner.EndStage();  // nothing to end
  REQUIRE(runner.stage_timings().size() == 2);
  CHECK(runner.stage_timings()[0].stage == "partition");
  CHECK(runner.stage_timings()[1].stage == "kernel-ir");
  CHECK(runner.stage_timings()[1].ms >= 0);
  CHECK(runner.Summary().rfind("partition ", 0) == 0);
  CHECK(runner.Summary().find("; passes:") != std::string::npos);
}

}  // namespace
}  // namespace tccd::schedule
