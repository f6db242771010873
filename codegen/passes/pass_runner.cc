// PassRunner (see pass_runner.h).
#include "codegen/passes/pass_runner.h"

#include <chrono>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "codegen/ir/printer.h"
#include "codegen/ir/verifier.h"
#include "spdlog/spdlog.h"

namespace tccd::codegen {

absl::Status PassRunner::Run(ir::Graph& graph) {
  int index = 0;
  for (const auto& pass : passes_) {
    const std::string name(pass->name());
    ++index;
    if (options_.disabled.contains(name)) {
      spdlog::debug("pass {} disabled", name);
      continue;
    }
    auto start = std::chrono::steady_clock::now();
    absl::StatusOr<bool> changed = pass->Run(graph);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!changed.ok())
      return absl::Status(changed.status().code(), absl::StrCat("pass ", name, ": ", changed.status().message()));
    timings_.push_back({name, ms, *changed});
    spdlog::debug("pass {} {:.2f} ms{}", name, ms, *changed ? " (changed)" : "");
    if (!*changed) continue;
    absl::Status verified = ir::VerifyGraph(graph);
    if (!verified.ok())
      return absl::InternalError(absl::StrCat("graph invalid after pass ", name, ": ", verified.message()));
    if (!options_.dump_dir.empty()) {
      std::ofstream(absl::StrFormat("%s/%02d-%s.ir", options_.dump_dir, index, name)) << ir::PrintGraph(graph);
    }
  }
  return absl::OkStatus();
}

}  // namespace tccd::codegen
