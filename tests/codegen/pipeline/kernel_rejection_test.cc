// A generated kernel the target's compiler rejects becomes ATen extern steps; the rest of the
// graph still compiles (pipeline.cc, kernel_failure.h). NVRTC runs here without a GPU; the
// rejection is forced with the test-only TCCD_TEST_REJECT_KERNEL_OPS (an #error in the kernel's
// source, so NVRTC really fails). Its own executable: the pipeline reads its knobs once per
// process, so the variable must be set before any other compile.
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "codegen/cuda/cuda_kernel_objects.h"
#include "codegen/ir/parser.h"
#include "codegen/kernel/kernel_failure.h"
#include "codegen/passes/fusion.h"
#include "codegen/passes/kernel_builder.h"
#include "codegen/passes/reduction_fusion.h"
#include "codegen/pipeline.h"

namespace tccd::codegen {
namespace {

v1::TensorMeta CudaMeta(std::vector<int64_t> sizes) {
  v1::TensorMeta m;
  int64_t stride = 1;
  std::vector<int64_t> strides(sizes.size());
  for (int i = static_cast<int>(sizes.size()) - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= sizes[i];
  }
  for (int64_t s : sizes) m.add_sizes()->set_value(s);
  for (int64_t s : strides) m.add_strides()->set_value(s);
  m.set_dtype(v1::FLOAT32);
  m.mutable_device()->set_type(v1::CUDA);
  return m;
}

v1::Value Ref(int node) {
  v1::Value v;
  v.mutable_ref()->set_node(node);
  return v;
}

TEST_CASE("a kernel NVRTC rejects runs as ATen extern steps; the other kernels still compile",
          "[pipeline][cuda]") {
  REQUIRE(setenv("TCCD_TEST_REJECT_KERNEL_OPS", "aten::relu.default", 1) == 0);
  // relu(a * b) over [4, 4] and neg(c) over [8]: two kernels (different shapes).
  v1::Graph g;
  *g.add_inputs() = CudaMeta({4, 4});
  *g.add_inputs() = CudaMeta({4, 4});
  *g.add_inputs() = CudaMeta({8});
  auto node = [&](const char* target, std::vector<v1::Value> args, std::vector<int64_t> sizes) {
    v1::Node* n = g.add_nodes();
    n->set_target(target);
    for (auto& a : args) *n->add_args() = a;
    *n->add_outputs() = CudaMeta(sizes);
    return g.nodes_size() - 1;
  };
  const int mul = node("aten::mul.Tensor", {Ref(-1), Ref(-2)}, {4, 4});
  const int relu = node("aten::relu.default", {Ref(mul)}, {4, 4});
  const int neg = node("aten::neg.default", {Ref(-3)}, {8});
  *g.add_outputs() = Ref(relu);
  *g.add_outputs() = Ref(neg);
  v1::Target target;
  target.set_device_type(v1::CUDA);
  target.set_cuda_cc_major(9);
  target.set_cuda_device_name("NVIDIA H100 80GB HBM3");
  absl::StatusOr<Prepared> prepared = Prepare({&g, &target, "default"});
  if (prepared.status().code() == absl::StatusCode::kFailedPrecondition) {
    WARN("skipped: " << prepared.status().ToString());
    return;
  }
  REQUIRE(prepared.ok());
  // The knob is part of the compiler's identity: such plans never mix with normal ones.
  CHECK(CompilerFingerprint().find("reject=aten::relu.default") != std::string::npos);
  absl::StatusOr<CompileOutput> out = Compile(*prepared);
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  std::vector<std::string> externs, kernel_ops;
  for (const v1::Step& step : out->plan.steps()) {
    if (step.has_extern_call()) externs.push_back(step.extern_call().target());
    if (step.has_segment())
      for (const auto& k : step.segment().kernels()) kernel_ops.push_back(k.kind());
    if (step.has_native())
      for (const auto& k : step.native().kernels()) kernel_ops.push_back(k.kind());
  }
  // The rejected kernel's two ops, as ATen calls, in the graph's order; neg is still a kernel.
  CHECK(externs == std::vector<std::string>{"aten::mul.Tensor", "aten::relu.default"});
  CHECK(out->num_extern_steps == 2);
  CHECK(out->num_fused_kernels == 1);
  CHECK(kernel_ops == std::vector<std::string>{"cuda_pointwise"});
}

// Twelve independent bf16 column sums over [64, 768] (ViT's bias gradients), partitioned with a
// column shared-memory budget of `budget` bytes; their kernels, named k0, k1, ...
std::vector<PointwiseKernel> BiasGradientKernels(int budget) {
  std::string text = "graph(", ret;
  for (int i = 0; i < 12; ++i)
    text += (i ? ", %a" : "%a") + std::to_string(i) + ": bf16[64,768]{768,1}@cuda";
  text += ") {\n";
  for (int i = 0; i < 12; ++i) {
    text += "  %" + std::to_string(i) + " = aten::sum.dim_IntList(%a" + std::to_string(i) +
            ", [0]) -> bf16[768]{1}@cuda\n";
    ret += (i ? ", %" : "%") + std::to_string(i);
  }
  text += "  return (" + ret + ")\n}";
  absl::StatusOr<ir::Graph> graph = ir::ParseGraph(text);
  REQUIRE(graph.ok());
  FusionOptions options;
  options.column_shared_memory_bytes = budget;
  absl::StatusOr<Partition> partition = PartitionForFusion(*graph, options);
  REQUIRE(partition.ok());
  REQUIRE(FuseRowReductions(*graph, options, *partition).ok());
  std::vector<PointwiseKernel> kernels;
  for (size_t g = 0; g < partition->groups.size(); ++g) {
    absl::StatusOr<PointwiseKernel> k =
        BuildPointwiseKernel(*graph, partition->groups[g], "k" + std::to_string(g));
    REQUIRE(k.ok());
    kernels.push_back(*std::move(k));
  }
  return kernels;
}

TEST_CASE(
    "column sums merged past 48 KiB of shared memory fail to link, and only that kernel is blamed; "
    "the default budget's kernels link",
    "[pipeline][cuda]") {
  const CudaKernelObjectsOptions options{.fingerprint = "test", .threads = 2};
  // The default budget: two kernels of six sums (6 x 8 KiB tiles = 48 KiB each) that link.
  const std::vector<PointwiseKernel> fitting = BiasGradientKernels(48 * 1024);
  REQUIRE(fitting.size() == 2);
  absl::StatusOr<CudaKernelObjectsResult> ok =
      CompileCudaKernelObjects(fitting, CudaTarget{}, options);
  if (absl::IsFailedPrecondition(ok.status())) {
    WARN("skipped, no NVRTC or nvJitLink: " << ok.status().ToString());
    return;
  }
  INFO(ok.status().ToString());
  REQUIRE(ok.ok());
  // No budget: one kernel of twelve (96 KiB), as ViT's was on the H200; beside a fitting one.
  std::vector<PointwiseKernel> kernels = BiasGradientKernels(1 << 20);
  REQUIRE(kernels.size() == 1);
  kernels.push_back(fitting[0]);
  kernels.back().name = "k1";
  absl::StatusOr<CudaKernelObjectsResult> failed =
      CompileCudaKernelObjects(kernels, CudaTarget{}, options);
  REQUIRE_FALSE(failed.ok());
  INFO(failed.status().ToString());
  CHECK(FailedKernels(failed.status()) == std::vector<std::string>{"k0"});
}

}  // namespace
}  // namespace tccd::codegen
