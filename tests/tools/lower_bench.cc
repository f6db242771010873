// tccd_lower_bench: the daemon's compile stages before machine code, on saved requests.
//
// Reads CompileRequests (binary protobuf, as `cuda_plan_census.py --dump-requests DIR` writes
// them), and for each runs what the daemon runs before NVRTC or LLVM (codegen::Prepare, then
// codegen::Lower: graph passes, fusion partition, kernel IR, schedule and its passes, the plan)
// --repeat times, printing the wall time of each run and, from the pipeline's own debug log, the
// time of every stage and pass ("compile stages: ..."). Why: the stages before machine code run
// serially per graph on the daemon, ahead of the kernels' parallel compile, so their cost is a
// cold first step's wait; timing them here needs no GPU and no daemon. --plans=DIR writes every
// request's plan, to compare two builds' (a refactor of the partition must leave them identical);
// with TCCD_DUMP_DIR set the pipeline also writes the partition (partition.txt) and the IR.
//
//   build/bin/tccd_lower_bench --repeat=3 /tmp/req/resnet50_0_forward.request.pb
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "codegen/pipeline.h"
#include "google/protobuf/text_format.h"
#include "server/request_checks.h"
#include "spdlog/spdlog.h"
#include "tccd/v1/tccd.pb.h"

ABSL_FLAG(int, repeat, 1, "times to lower each request (the first run pays one-time setup)");
ABSL_FLAG(bool, stages, true, "print the pipeline's per-stage and per-pass times (debug log)");
ABSL_FLAG(
    std::string, plans, "",
    "directory: write each request's plan (protobuf text) to DIR/<request file name>.plan.txt, "
    "to compare two builds' plans (a refactor of the partition must leave them identical)");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Times Prepare + Lower (the daemon's stages before machine code) on saved CompileRequests.\n"
      "  tccd_lower_bench [--repeat=N] [--stages=false] REQUEST.pb...");
  std::vector<char*> files = absl::ParseCommandLine(argc, argv);
  if (files.size() < 2) {
    std::fprintf(stderr, "usage: tccd_lower_bench [--repeat=N] REQUEST.pb...\n");
    return 2;
  }
  // The pipeline logs "compile stages: ..." (every stage and pass with its time) at debug level.
  spdlog::set_level(absl::GetFlag(FLAGS_stages) ? spdlog::level::debug : spdlog::level::warn);
  spdlog::set_pattern("%v");
  int failures = 0;
  for (size_t f = 1; f < files.size(); ++f) {
    std::ifstream in(files[f], std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    tccd::v1::CompileRequest request;
    if (!in || !request.ParseFromString(bytes.str())) {
      std::fprintf(stderr, "%s: not a CompileRequest\n", files[f]);
      ++failures;
      continue;
    }
    for (int r = 0; r < absl::GetFlag(FLAGS_repeat); ++r) {
      const auto start = std::chrono::steady_clock::now();
      absl::StatusOr<tccd::codegen::Prepared> prepared =
          tccd::codegen::Prepare(tccd::server::CompileInputOf(request));
      absl::StatusOr<tccd::codegen::Lowered> lowered =
          prepared.ok() ? tccd::codegen::Lower(*prepared)
                        : absl::StatusOr<tccd::codegen::Lowered>(prepared.status());
      const absl::Status status = lowered.status();
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      if (!status.ok()) {
        std::fprintf(stderr, "%s: %s\n", files[f], status.ToString().c_str());
        ++failures;
        break;
      }
      if (const std::string dir = absl::GetFlag(FLAGS_plans); !dir.empty() && r == 0) {
        std::string text;
        google::protobuf::TextFormat::PrintToString(lowered->plan, &text);
        const std::string name = files[f];
        std::ofstream(dir + "/" + name.substr(name.find_last_of('/') + 1) + ".plan.txt") << text;
      }
      std::printf("%s run %d: prepare + lower %.1f ms (%d nodes)\n", files[f], r + 1, ms,
                  request.graph().nodes_size());
      std::fflush(stdout);
    }
  }
  return failures == 0 ? 0 : 1;
}
