// ChooseCudaEntries: a CUDA kernel of a plan keeps only the entry point its declared layout
// takes (no GPU, no NVRTC: the schedule and the emitted source are checked).
#include "codegen/cuda_host/entry_points.h"

#include <catch2/catch.hpp>

#include "codegen/cuda/cuda_backend.h"
#include "codegen/ir/parser.h"
#include "codegen/passes/fusion.h"
#include "codegen/passes/kernel_builder.h"
#include "codegen/passes/plan_builder.h"

namespace tccd::codegen {
namespace {

// The kernels of `text` (one fusion group each) with the entries the plan chose.
std::vector<PointwiseKernel> Chosen(const std::string& text) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  Partition p = *PartitionForFusion(*g, {});
  std::vector<PointwiseKernel> kernels;
  for (size_t i = 0; i < p.groups.size(); ++i)
    kernels.push_back(*BuildPointwiseKernel(*g, p.groups[i], "k" + std::to_string(i)));
  absl::StatusOr<schedule::Schedule> s = BuildSchedule(*g, p, kernels, {"kernels_cuda.so", "tccd-cuda-1", "cuda_pointwise"});
  REQUIRE(s.ok());
  REQUIRE(ChooseCudaEntries(*s, 9, kernels).ok());
  return kernels;
}

// relu(x) + y over one input whose type is `x_type`.
std::string AddRelu(const std::string& x_type) {
  return "graph(%a0: " + x_type + ", %a1: f32[8,16]{16,1}@cuda) {\n"
         "  %0 = aten::relu.default(%a0) -> f32[8,16]{16,1}@cuda\n"
         "  %1 = aten::add.Tensor(%0, %a1) -> f32[8,16]{16,1}@cuda\n"
         "  return (%1)\n}";
}

TEST_CASE("dense aligned operands: only the contig entry", "[entry-points]") {
  std::vector<PointwiseKernel> k = Chosen(AddRelu("f32[8,16]{16,1}@cuda"));
  REQUIRE(k.size() == 1);
  CHECK(k[0].entries == KernelEntries::kDense);
  // An offset of 4 f32 is 16 bytes: still aligned.
  CHECK(Chosen(AddRelu("f32[8,16]{16,1}+4@cuda"))[0].entries == KernelEntries::kDense);
}

TEST_CASE("a transposed, broadcast or misaligned operand: only the strided entry", "[entry-points]") {
  CHECK(Chosen(AddRelu("f32[8,16]{1,8}@cuda"))[0].entries == KernelEntries::kStrided);
  CHECK(Chosen(AddRelu("f32[8,16]{16,1}+1@cuda"))[0].entries == KernelEntries::kStrided);
  // A bias broadcast over rows: stride 0 in the iteration space.
  CHECK(Chosen("graph(%a0: f32[16]{1}@cuda, %a1: f32[8,16]{16,1}@cuda) {\n"
               "  %0 = aten::add.Tensor(%a1, %a0) -> f32[8,16]{16,1}@cuda\n"
               "  return (%0)\n}")[0]
            .entries == KernelEntries::kStrided);
}

TEST_CASE("the emitted source has only the chosen entry", "[entry-points]") {
  std::vector<PointwiseKernel> k = Chosen(AddRelu("f32[8,16]{16,1}@cuda"));
  absl::StatusOr<std::string> dense = EmitCudaSource(k);
  REQUIRE(dense.ok());
  CHECK(dense->find("k0_contig(") != std::string::npos);
  CHECK(dense->find("k0_strided(") == std::string::npos);
  const CudaKernelLaunchInfo info = LaunchInfoOf(k[0], 9);
  CHECK(info.contig_entry == "k0_contig");
  CHECK(info.strided_entry.empty());

  k[0].entries = KernelEntries::kStrided;
  absl::StatusOr<std::string> strided = EmitCudaSource(k);
  REQUIRE(strided.ok());
  CHECK(strided->find("k0_contig(") == std::string::npos);
  CHECK(strided->find("k0_strided(") != std::string::npos);
  // Nothing to choose from: both, as for kernels compiled outside a plan.
  k[0].entries = KernelEntries::kBoth;
  absl::StatusOr<std::string> both = EmitCudaSource(k);
  REQUIRE(both.ok());
  CHECK((both->find("k0_contig(") != std::string::npos && both->find("k0_strided(") != std::string::npos));
}

TEST_CASE("DenseEntryApplies mirrors the launcher's test", "[entry-points]") {
  std::vector<PointwiseKernel> k = Chosen(AddRelu("f32[8,16]{16,1}@cuda"));
  const std::vector<int64_t> dense = {16, 1, 16, 1, 16, 1};
  CHECK(DenseEntryApplies(k[0], 9, dense, {true, true, true}));
  CHECK_FALSE(DenseEntryApplies(k[0], 9, dense, {true, false, true}));
  // Dims of size 1 may have any stride; here none has size 1, so a different row stride fails.
  CHECK_FALSE(DenseEntryApplies(k[0], 9, {32, 1, 16, 1, 16, 1}, {true, true, true}));
}

}  // namespace
}  // namespace tccd::codegen
