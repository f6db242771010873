// PassRunner (see pass_runner.h).
#include "codegen/passes/pass_runner.h"

#include <chrono>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "codegen/ir/printer.h"
#include "codegen/ir/verifier.h"
#include "codegen/schedule/printer.h"
#include "codegen/schedule/verifier.h"
#include "base/status_macros.h"
#include "spdlog/spdlog.h"

namespace tccd::codegen {

template <typename Pass, typename IR, typename Print, typename Verify>
absl::Status PassRunner::RunOne(Pass& pass, IR& ir, const char* what, const char* extension,
                                const Print& print, const Verify& verify) {
  const std::string name(pass.name());
  const int index = ++index_;
  if (options_.disabled.contains(name)) {
    spdlog::debug("pass {} disabled", name);
    return absl::OkStatus();
  }
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<bool> changed = pass.Run(ir);
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!changed.ok())
    return absl::Status(changed.status().code(),
                        absl::StrCat("pass ", name, ": ", changed.status().message()));
  timings_.push_back({name, ms, *changed});
  spdlog::debug("pass {} {:.2f} ms{}", name, ms, *changed ? " (changed)" : "");
  if (!*changed) return absl::OkStatus();
  absl::Status verified = verify(ir);
  if (!verified.ok())
    return absl::InternalError(
        absl::StrCat(what, " invalid after pass ", name, ": ", verified.message()));
  if (!options_.dump_dir.empty()) {
    std::ofstream(absl::StrFormat("%s/%02d-%s.%s", options_.dump_dir, index, name, extension))
        << print(ir);
  }
  return absl::OkStatus();
}

absl::Status PassRunner::Run(ir::Graph& graph) {
  for (const auto& pass : passes_) {
    RETURN_IF_ERROR(RunOne(*pass, graph, "graph", "ir", ir::PrintGraph, ir::VerifyGraph));
  }
  return absl::OkStatus();
}

void PassRunner::BeginStage(std::string name) {
  EndStage();
  stage_ = std::move(name);
  stage_start_ = std::chrono::steady_clock::now();
}

void PassRunner::EndStage() {
  if (stage_.empty()) return;
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - stage_start_)
          .count();
  spdlog::debug("stage {} {:.2f} ms", stage_, ms);
  stage_timings_.push_back({std::move(stage_), ms});
  stage_.clear();
}

std::string PassRunner::Summary() const {
  std::string out;
  for (const StageTiming& t : stage_timings_)
    absl::StrAppend(&out, out.empty() ? "" : ", ", absl::StrFormat("%s %.2f ms", t.stage, t.ms));
  absl::StrAppend(&out, out.empty() ? "" : "; ", "passes:");
  for (const Timing& t : timings_)
    absl::StrAppend(&out, absl::StrFormat(" %s %.2f ms%s", t.pass, t.ms, t.changed ? "*" : ""));
  return out;
}

absl::Status PassRunner::Run(schedule::SchedulePass& pass, schedule::Schedule& schedule) {
  return RunOne(pass, schedule, "schedule", "sched", schedule::PrintSchedule,
                schedule::VerifySchedule);
}

}  // namespace tccd::codegen
