// Runs graph passes in order with the cross-cutting concerns every pass needs:
//  * timing per pass (logged at debug level, returned for stats);
//  * the verifier after every pass that changed the graph (a failure is an INTERNAL error for
//    this one request, naming the pass);
//  * an IR dump after every changed pass when a dump directory is set;
//  * skipping passes by name, to bisect a miscompile.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "codegen/passes/pass.h"

namespace tccd::codegen {

struct PassRunnerOptions {
  // Directory for IR dumps ("<NN>-<pass>.ir"); empty disables dumping. Default: "".
  std::string dump_dir;
  // Names of passes to skip. Default: none.
  absl::flat_hash_set<std::string> disabled;
};

class PassRunner {
 public:
  explicit PassRunner(PassRunnerOptions options) : options_(std::move(options)) {}

  void Add(std::unique_ptr<GraphPass> pass) { passes_.push_back(std::move(pass)); }
  absl::Status Run(ir::Graph& graph);

  struct Timing {
    std::string pass;
    double ms = 0;
    bool changed = false;
  };
  const std::vector<Timing>& timings() const { return timings_; }

 private:
  PassRunnerOptions options_;
  std::vector<std::unique_ptr<GraphPass>> passes_;
  std::vector<Timing> timings_;
};

}  // namespace tccd::codegen
