// CompileWithNvrtcProcesses without a GPU: the children's cubins and PTX are the bytes an
// in-process NVRTC compile gives, each job answered once, NVRTC's rejection carried back with
// its log, and every job compiled whatever the number of children.
#include "codegen/cuda/nvrtc_processes.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "codegen/cuda/cuda_backend.h"
#include "cuda_test_kernels.h"

namespace tccd::codegen::cuda_testing {
namespace {

std::vector<std::string> Sources() {
  std::vector<std::string> sources;
  for (const PointwiseKernel& k : {FusedReluKernel("p_k0", {64, 32}),
                                   SoftmaxRowsKernel("p_k1", {16, 128}),
                                   Bf16GeluKernel("p_k2", {1000})}) {
    absl::StatusOr<std::string> source = EmitCudaSource({k}, 9);
    REQUIRE(source.ok());
    sources.push_back(*source);
  }
  sources.push_back("extern \"C\" __global__ void broken() { this is not CUDA; }\n");
  return sources;
}

TEST_CASE("NVRTC on child processes gives the in-process bytes, one answer per job",
          "[cuda_backend][nvrtc_processes]") {
  if (!LoadedNvrtcVersion().ok()) {
    WARN("skipped, no NVRTC");
    return;
  }
  const std::vector<std::string> sources = Sources();
  std::vector<NvrtcJob> jobs;
  for (size_t i = 0; i < sources.size(); ++i)
    jobs.push_back(NvrtcJob{.source = &sources[i], .program_name = "p" + std::to_string(i)});
  const std::vector<size_t> order = {2, 0, 3, 1};  // any permutation
  for (int processes : {1, 2, 8}) {
    std::vector<int> done(jobs.size(), 0);
    absl::StatusOr<NvrtcProcessesResult> forked = CompileWithNvrtcProcesses(
        jobs, order, CudaTarget{}, /*relocatable=*/true, processes, [&](size_t i) { ++done[i]; });
    REQUIRE(forked.ok());
    CHECK(forked->children == std::min<int>(processes, static_cast<int>(jobs.size())));
    for (size_t i = 0; i < jobs.size(); ++i) {
      INFO("job " << i << ", " << processes << " processes");
      CHECK(done[i] == 1);
      REQUIRE(forked->answered[i]);
      absl::StatusOr<NvrtcOutput> here =
          CompileWithNvrtc(sources[i], jobs[i].program_name, CudaTarget{}, /*relocatable=*/true);
      const absl::StatusOr<NvrtcOutput>& there = forked->results[i].output;
      REQUIRE(here.ok() == there.ok());
      if (!here.ok()) {
        // The rejected source: the same code and NVRTC's message, from the child.
        CHECK(there.status().code() == here.status().code());
        CHECK(there.status().message() == here.status().message());
        continue;
      }
      CHECK(there->cubin == here->cubin);
      CHECK(there->ptx == here->ptx);
      CHECK(there->log == here->log);
      CHECK(forked->results[i].ms > 0);
    }
  }
}

TEST_CASE("NVRTC child processes are off unless a compile worker allows them",
          "[cuda_backend][nvrtc_processes]") {
  // This test binary never calls AllowNvrtcChildProcesses: the daemon's own process compiles
  // on threads (its gRPC threads make a fork unsafe).
  CHECK_FALSE(UseNvrtcProcesses());
}

}  // namespace
}  // namespace tccd::codegen::cuda_testing
