// The wire Plan is the schedule's serialisation: plans the builders write read back into a
// schedule and serialise to the same bytes.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/passes/fusion.h"
#include "codegen/passes/kernel_builder.h"
#include "codegen/passes/plan_builder.h"
#include "codegen/cuda_host/match_gemms.h"
#include "codegen/cuda_host/segment_builder.h"
#include "codegen/schedule/parser.h"
#include "codegen/schedule/plan_serializer.h"
#include "codegen/schedule/printer.h"
#include "codegen/schedule/release_after_last_use.h"
#include "codegen/schedule/sink_views_to_first_reader.h"

namespace tccd::schedule {
namespace {

// A CUDA plan of `graph_text`, segmented when `segments` is set.
v1::Plan CudaPlan(const std::string& graph_text, bool segments) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(graph_text);
  REQUIRE(g.ok());
  codegen::Partition p = *codegen::PartitionForFusion(*g, {});
  std::vector<codegen::PointwiseKernel> kernels;
  std::vector<std::string> symbols;
  for (size_t i = 0; i < p.groups.size(); ++i) {
    kernels.push_back(*codegen::BuildPointwiseKernel(*g, p.groups[i], "k" + std::to_string(i)));
    symbols.push_back(kernels.back().name);
  }
  absl::StatusOr<Schedule> s =
      codegen::BuildSchedule(*g, p, kernels, {"kernels_cuda.so", "tccd-cuda-1", "cuda_pointwise"});
  REQUIRE(s.ok());
  if (segments) {
    REQUIRE(codegen::MatchGemms().Run(*s).ok());
    REQUIRE(SinkViewsToFirstReader().Run(*s).ok());
    REQUIRE(codegen::SegmentBuilder(symbols, "kernels_cuda.so").Run(*s).ok());
  }
  REQUIRE(ReleaseAfterLastUse().Run(*s).ok());
  absl::StatusOr<v1::Plan> plan = PlanFromSchedule(*s);
  REQUIRE(plan.ok());
  return *plan;
}

constexpr char kMlp[] =
    R"(graph(%a0: f32[8,16]{16,1}@cuda, %a1: f32[32,16]{16,1}@cuda, %a2: f32[32]{1}@cuda, %a3: f32[4,32]{32,1}@cuda) {
  %0 = aten::t.default(%a1) -> f32[16,32]{1,16}@cuda
  %1 = aten::addmm.default(%a2, %a0, %0) -> f32[8,32]{32,1}@cuda
  %2 = aten::relu.default(%1) -> f32[8,32]{32,1}@cuda
  %3 = aten::t.default(%a3) -> f32[32,4]{1,32}@cuda
  %4 = aten::mm.default(%2, %3) -> f32[8,4]{4,1}@cuda
  %5 = aten::cumsum.default(%4, 1) -> f32[8,4]{4,1}@cuda
  %6 = aten::view.default(%4, [32]) -> f32[32]{1}@cuda
  %7 = aten::max.dim(%5, 1) -> (f32[8]{1}@cuda, i64[8]{1}@cuda)
  return (%5, %2, %6, %7, None)
})";

TEST_CASE("a segmented plan reads back as a schedule and serialises to the same bytes",
          "[schedule]") {
  const v1::Plan plan = CudaPlan(kMlp, /*segments=*/true);
  absl::StatusOr<Schedule> s = ScheduleFromPlan(plan);
  REQUIRE(s.ok());
  // Workspace: cuBLASLt's 8 MiB alone (addmm writes relu's output buffer, which relu then
  // updates in place: segment_builder.cc's io_host; 1 KiB more before).
  CHECK(PrintSchedule(*s) == R"(schedule(inputs=4) {
  %0: f32[8,16]{16,1}@cuda
  %1: f32[32,16]{16,1}@cuda
  %2: f32[32]{1}@cuda
  %3: f32[4,32]{32,1}@cuda
  %4: f32[16,32]{1,16}@cuda
  %5: f32[8,32]{32,1}@cuda
  %6: f32[8,32]{32,1}@cuda
  %7: f32[32,4]{1,32}@cuda
  %8: f32[8,4]{4,1}@cuda
  %9: f32[8,4]{4,1}@cuda
  %10: f32[32]{1}@cuda
  %11: f32[8]{1}@cuda
  %6, %8 = segment(%2, %0, %1, %3) artifact="kernels_cuda.so" symbol="tccd_seg0" abi="tccd-cuda-segment-1" workspace=33554432 kernels=[{name="tccd_seg0_addmm.default_8x16x32", kind="cublaslt_gemm", ops=["aten::addmm.default"], shape=[]}, {name="k0", kind="cuda_pointwise", ops=["aten::relu.default"], shape=[8,32]}, {name="tccd_seg0_mm.default_8x32x4", kind="cublaslt_gemm", ops=["aten::mm.default"], shape=[]}]
  release(%0, %1, %2, %3)
  %9 = extern aten::cumsum.default(%8, 1)
  %10 = extern aten::view.default(%8, [32])
  release(%8)
  %11, _ = extern aten::max.dim(%9, 1)
  return (%9, %6, %10, %11, None)
}
)");
  absl::StatusOr<v1::Plan> back = PlanFromSchedule(*s);
  REQUIRE(back.ok());
  CHECK(back->SerializeAsString() == plan.SerializeAsString());
  // And through the text form.
  absl::StatusOr<Schedule> parsed = ParseSchedule(PrintSchedule(*s));
  REQUIRE(parsed.ok());
  CHECK(*parsed == *s);
}

TEST_CASE("an unsegmented plan with kernels round-trips", "[schedule]") {
  const v1::Plan plan = CudaPlan(kMlp, /*segments=*/false);
  absl::StatusOr<Schedule> s = ScheduleFromPlan(plan);
  REQUIRE(s.ok());
  absl::StatusOr<v1::Plan> back = PlanFromSchedule(*s);
  REQUIRE(back.ok());
  CHECK(back->SerializeAsString() == plan.SerializeAsString());
  bool has_kernel = false;
  for (const Step& step : s->steps) has_kernel = has_kernel || step.is<KernelLaunch>();
  CHECK(has_kernel);
}

TEST_CASE("a library call no segment took is serialised as the op it computes", "[schedule]") {
  constexpr char kDecls[] = R"(schedule(inputs=2) {
  %0: f32[8,16]{16,1}@cuda
  %1: f32[16,8]{8,1}@cuda
  %2: f32[8,8]{8,1}@cuda
)";
  absl::StatusOr<Schedule> with_call =
      ParseSchedule(std::string(kDecls) +
                    "  %2 = library cublaslt_gemm(%1, %0, %2) name=\"mm\" params={m=8} of "
                    "aten::mm.default(%0, %1)\n"
                    "  release(%0, %1)\n  return (%2)\n}\n");
  absl::StatusOr<Schedule> with_op = ParseSchedule(
      std::string(kDecls) +
      "  %2 = extern aten::mm.default(%0, %1)\n  release(%0, %1)\n  return (%2)\n}\n");
  REQUIRE(with_call.ok());
  REQUIRE(with_op.ok());
  absl::StatusOr<v1::Plan> a = PlanFromSchedule(*with_call), b = PlanFromSchedule(*with_op);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->SerializeAsString() == b->SerializeAsString());
  CHECK(a->steps(0).extern_call().target() == "aten::mm.default");
}

TEST_CASE("serialising a schedule with undeclared values is an internal error", "[schedule]") {
  absl::StatusOr<Schedule> s =
      ParseSchedule("schedule(inputs=0) {\n  %3 = alias(%1)\n  return ()\n}\n");
  REQUIRE(s.ok());
  absl::StatusOr<v1::Plan> plan = PlanFromSchedule(*s);
  CHECK(plan.status().code() == absl::StatusCode::kInternal);
  Schedule early;
  early.steps.push_back(Step{Release{{}}, {}});
  CHECK(PlanFromSchedule(early).status().code() == absl::StatusCode::kInternal);
}

TEST_CASE("a plan that refers to undeclared values does not read back", "[schedule]") {
  v1::Plan plan;
  plan.add_steps()->mutable_alias()->set_base(3);
  CHECK(ScheduleFromPlan(plan).status().code() == absl::StatusCode::kInvalidArgument);
  v1::Plan no_kind;
  no_kind.add_steps();
  CHECK(ScheduleFromPlan(no_kind).status().code() == absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tccd::schedule
