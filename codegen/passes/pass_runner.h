// Runs graph passes and schedule passes with the cross-cutting concerns every pass needs:
//  * timing per pass (logged at debug level, returned for stats);
//  * the verifier after every pass that changed its IR (ir::VerifyGraph, schedule::
//    VerifySchedule; a failure is an INTERNAL error for this one request, naming the pass);
//  * an IR dump after every changed pass when a dump directory is set ("<NN>-<pass>.ir" for the
//    graph, "<NN>-<pass>.sched" for the schedule; NN counts every pass the runner was given);
//  * skipping passes by name, to bisect a miscompile.
// It also times the pipeline's stages that are not passes (partition, kernel IR, machine code,
// ...): BeginStage(name) ends the stage before it; stage_timings() and Summary() report them.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "codegen/passes/pass.h"
#include "codegen/schedule/schedule_pass.h"

namespace tccd::codegen {

struct PassRunnerOptions {
  // Directory for IR dumps; empty disables dumping. Default: "".
  std::string dump_dir;
  // Names of passes to skip. Default: none.
  absl::flat_hash_set<std::string> disabled;
};

class PassRunner {
 public:
  explicit PassRunner(PassRunnerOptions options) : options_(std::move(options)) {}

  void Add(std::unique_ptr<GraphPass> pass) { passes_.push_back(std::move(pass)); }
  // Runs the graph passes added, in order.
  absl::Status Run(ir::Graph& graph);
  // Runs one schedule pass (owned by the caller, which may read its results afterwards).
  absl::Status Run(schedule::SchedulePass& pass, schedule::Schedule& schedule);
  bool disabled(std::string_view name) const {
    return options_.disabled.contains(std::string(name));
  }

  struct Timing {
    std::string pass;
    double ms = 0;
    bool changed = false;
  };
  const std::vector<Timing>& timings() const { return timings_; }

  // Starts timing stage `name`, ending the one before (if any).
  void BeginStage(std::string name);
  // Ends the current stage (if any).
  void EndStage();
  struct StageTiming {
    std::string stage;
    double ms = 0;
  };
  const std::vector<StageTiming>& stage_timings() const { return stage_timings_; }
  // One line: every stage and every pass that ran, with its time ("partition 0.31 ms, ...").
  std::string Summary() const;

 private:
  // Runs `pass` on `ir` with every concern above; `what` names the IR in errors, `extension`
  // its dumps; `print` and `verify` are the IR's.
  template <typename Pass, typename IR, typename Print, typename Verify>
  absl::Status RunOne(Pass& pass, IR& ir, const char* what, const char* extension,
                      const Print& print, const Verify& verify);

  PassRunnerOptions options_;
  std::vector<std::unique_ptr<GraphPass>> passes_;
  int index_ = 0;  // passes seen, for the dump file names
  std::vector<Timing> timings_;
  std::vector<StageTiming> stage_timings_;
  std::string stage_;  // the stage being timed; empty: none
  std::chrono::steady_clock::time_point stage_start_;
};

}  // namespace tccd::codegen
