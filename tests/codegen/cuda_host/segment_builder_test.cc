// Segments: runs of kernels, matmuls and views become one NativeSegment step (no GPU needed:
// this checks the plan and the host program, not the execution).
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/passes/fusion.h"
#include "codegen/passes/kernel_builder.h"
#include "codegen/passes/plan_builder.h"
#include "codegen/cuda_host/match_gemms.h"
#include "codegen/cuda_host/segment_builder.h"
#include "codegen/schedule/plan_serializer.h"
#include "codegen/schedule/release_after_last_use.h"
#include "codegen/schedule/sink_views_to_first_reader.h"
#include "codegen/schedule/verifier.h"

namespace tccd::codegen {
namespace {

struct Built {
  v1::Plan plan;
  HostProgram program;
};

// `released`: the graph inputs the caller gives up to the plan (BackendOptions::released_inputs).
Built Build(const std::string& text, std::vector<int> released = {}) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  REQUIRE(g.ok());
  Partition p = *PartitionForFusion(*g, {});
  std::vector<PointwiseKernel> kernels;
  std::vector<std::string> symbols;
  for (size_t i = 0; i < p.groups.size(); ++i) {
    kernels.push_back(*BuildPointwiseKernel(*g, p.groups[i], "k" + std::to_string(i)));
    symbols.push_back(kernels.back().name);
  }
  // As the pipeline runs it: views sink to their readers, segments, releases, serialisation.
  absl::StatusOr<schedule::Schedule> s =
      BuildSchedule(*g, p, kernels, {"kernels_cuda.so", "tccd-cuda-1", "cuda_pointwise"});
  REQUIRE(s.ok());
  REQUIRE(MatchGemms().Run(*s).ok());
  REQUIRE(schedule::SinkViewsToFirstReader().Run(*s).ok());
  SegmentBuilder segments(symbols, "kernels_cuda.so", std::move(released));
  REQUIRE(segments.Run(*s).ok());
  REQUIRE(schedule::ReleaseAfterLastUse().Run(*s).ok());
  REQUIRE(schedule::VerifySchedule(*s).ok());
  absl::StatusOr<v1::Plan> plan = schedule::PlanFromSchedule(*s);
  REQUIRE(plan.ok());
  return Built{*plan, segments.program()};
}

std::vector<int> Ints(const google::protobuf::RepeatedField<int32_t>& f) {
  return {f.begin(), f.end()};
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
  return (%5, %2, %6)
})";

TEST_CASE("matmuls, kernels and views between externs become one segment", "[segments]") {
  Built b = Build(kMlp);
  // segment, cumsum, then the view (a run of views only: left as it was).
  REQUIRE(b.plan.steps_size() == 3);
  const v1::Step& seg = b.plan.steps(0);
  REQUIRE(seg.has_segment());
  CHECK(seg.segment().abi() == "tccd-cuda-segment-1");
  CHECK(seg.segment().symbol() == "tccd_seg0");
  // Inputs in first-use order: addmm reads the bias, x, then w (through the transpose).
  CHECK(Ints(seg.segment().inputs()) == std::vector<int>{2, 0, 1, 3});
  // Outputs: relu (returned) and mm (read by cumsum and the view); addmm's result and the
  // transposes stay inside.
  CHECK(seg.outputs_size() == 2);
  CHECK(b.plan.steps(1).extern_call().target() == "aten::cumsum.default");
  CHECK(b.plan.steps(2).extern_call().target() == "aten::view.default");
  CHECK(b.plan.steps(2).extern_call().args(0).ref().node() == seg.outputs(1));
  std::vector<std::string> kinds;
  for (const v1::KernelInfo& k : seg.segment().kernels()) kinds.push_back(k.kind());
  CHECK(kinds == std::vector<std::string>{"cublaslt_gemm", "cuda_pointwise", "cublaslt_gemm"});

  REQUIRE(b.program.segments.size() == 1);
  REQUIRE(b.program.gemms.size() == 2);
  const GemmSpec& addmm = b.program.gemms[0];
  // Z[8,32] = X[8,16] @ W^T: column-major D = Z^T (32 x 8) = op(A) op(B), A = W^T's storage =
  // W row-major [32,16] seen column-major (16 x 32, ld 16) -> op T; B = X^T (16 x 8, ld 16).
  CHECK(addmm.m == 32);
  CHECK(addmm.n == 8);
  CHECK(addmm.k == 16);
  CHECK(addmm.trans_a == 1);
  CHECK(addmm.lda == 16);
  CHECK(addmm.trans_b == 0);
  CHECK(addmm.ldb == 16);
  CHECK(addmm.ldd == 32);
  CHECK(addmm.epilogue == kCublasEpilogueBias);
  const SegmentSpec& s = b.program.segments[0];
  CHECK(s.num_io == 6);
  REQUIRE(s.steps.size() == 3);
  // addmm: A = a1 (io 2), B = a0 (io 1), D = relu's output buffer (io 4: addmm's result dies
  // at relu, a plain pointwise kernel of its layout, so it is computed where relu writes and
  // relu runs in place; it was a workspace buffer), bias = a2 (io 0).
  const SegmentStepSpec& g0 = s.steps[0];
  REQUIRE(g0.operands.size() == 4);
  CHECK(g0.operands[0].io_index == 2);
  CHECK(g0.operands[1].io_index == 1);
  CHECK(g0.operands[2].io_index == 4);
  CHECK(g0.operands[3].io_index == 0);
  // relu reads io 4 and writes it.
  const SegmentStepSpec& relu = s.steps[1];
  CHECK(relu.operands[0].io_index == 4);
  CHECK(relu.operands[0].byte_offset == 0);
  CHECK(relu.operands[1].io_index == 4);
  CHECK(s.gemm_workspace_bytes == kGemmWorkspaceBytes);
  CHECK(s.workspace_bytes == kGemmWorkspaceBytes);
  // Releases were recomputed: nothing is released before its last reader, nothing returned is.
  std::set<int> returned;
  for (const v1::Value& v : b.plan.outputs()) returned.insert(v.ref().node());
  for (const v1::Step& step : b.plan.steps())
    for (int r : step.release()) CHECK(!returned.count(r));
}

TEST_CASE("a relu after a bias matmul stays a kernel, also when the pre-activation is returned",
          "[segments]") {
  Built b =
      Build(R"(graph(%a0: f32[8,16]{16,1}@cuda, %a1: f32[16,32]{32,1}@cuda, %a2: f32[32]{1}@cuda) {
  %0 = aten::addmm.default(%a2, %a0, %a1) -> f32[8,32]{32,1}@cuda
  %1 = aten::relu.default(%0) -> f32[8,32]{32,1}@cuda
  return (%1, %0)
})");
  REQUIRE(b.program.gemms.size() == 1);
  CHECK(b.program.gemms[0].epilogue == kCublasEpilogueBias);
  const SegmentSpec& s = b.program.segments.at(0);
  REQUIRE(s.steps.size() == 2);
  // addmm's result is an output (returned) and relu's input.
  CHECK(s.steps[1].operands[0].io_index == s.steps[0].operands[2].io_index);
  CHECK(s.steps[0].operands[2].io_index >= 0);
}

TEST_CASE("a view of an input read after the segment is re-emitted, a view of a result aliased",
          "[segments]") {
  Built b = Build(R"(graph(%a0: f32[8,8]{8,1}@cuda) {
  %0 = aten::t.default(%a0) -> f32[8,8]{1,8}@cuda
  %1 = aten::mm.default(%a0, %0) -> f32[8,8]{8,1}@cuda
  %2 = aten::view.default(%1, [64]) -> f32[64]{1}@cuda
  %3 = aten::slice.Tensor(%2, 0, 8, 16) -> f32[8]{1}+8@cuda
  return (%0, %3)
})");
  REQUIRE(b.plan.steps_size() == 3);
  CHECK(b.plan.steps(0).has_segment());
  // The chain view -> slice of mm's result is one alias (offset +8 elements from its meta).
  REQUIRE(b.plan.steps(1).has_alias());
  CHECK(b.plan.steps(1).alias().base() == b.plan.steps(0).outputs(0));
  CHECK(b.plan.values(b.plan.steps(1).outputs(0)).storage_offset().value() == 8);
  // t(a0) is returned: a view of an input, re-emitted as the ATen call it was.
  CHECK(b.plan.steps(2).extern_call().target() == "aten::t.default");
}

TEST_CASE("a view made before an extern step moves to its reader's segment", "[segments]") {
  // %1 views the cumsum's result before the second cumsum runs; its reader, the kernel %3, runs
  // after it. Sunk to just before %3, the view joins %3's run instead of staying a lone
  // dispatcher call between the two cumsums.
  Built b = Build(R"(graph(%a0: f32[8,4]{4,1}@cuda, %a1: f32[8,4]{4,1}@cuda) {
  %0 = aten::cumsum.default(%a0, 1) -> f32[8,4]{4,1}@cuda
  %1 = aten::view.default(%0, [32]) -> f32[32]{1}@cuda
  %2 = aten::cumsum.default(%a1, 1) -> f32[8,4]{4,1}@cuda
  %3 = aten::view.default(%2, [32]) -> f32[32]{1}@cuda
  %4 = aten::add.Tensor(%1, %3) -> f32[32]{1}@cuda
  %5 = aten::relu.default(%4) -> f32[32]{1}@cuda
  %6 = aten::cumsum.default(%5, 0) -> f32[32]{1}@cuda
  return (%6)
})");
  std::vector<std::string> kinds;
  for (const v1::Step& s : b.plan.steps()) {
    kinds.push_back(s.has_extern_call() ? s.extern_call().target()
                    : s.has_segment()   ? "segment"
                                        : "native");
  }
  CHECK(kinds == std::vector<std::string>{"aten::cumsum.default", "aten::cumsum.default", "segment",
                                          "aten::cumsum.default"});
  // The segment reads both cumsum results, each released there (its last reader).
  const std::vector<int> inputs = Ints(b.plan.steps(2).segment().inputs());
  CHECK(inputs == std::vector<int>{b.plan.steps(0).outputs(0), b.plan.steps(1).outputs(0)});
  CHECK(Ints(b.plan.steps(2).release()) == inputs);
}

TEST_CASE("intermediates with disjoint lifetimes share workspace", "[segments]") {
  Built b = Build(R"(graph(%a0: f32[64,64]{64,1}@cuda) {
  %0 = aten::mm.default(%a0, %a0) -> f32[64,64]{64,1}@cuda
  %1 = aten::mm.default(%0, %a0) -> f32[64,64]{64,1}@cuda
  %2 = aten::mm.default(%1, %a0) -> f32[64,64]{64,1}@cuda
  %3 = aten::mm.default(%2, %a0) -> f32[64,64]{64,1}@cuda
  return (%3)
})");
  REQUIRE(b.plan.steps_size() == 1);
  const SegmentSpec& s = b.program.segments.at(0);
  // %0 and %2 never live at once; neither do %1 and ... : two 16 KiB blocks suffice.
  CHECK(s.workspace_bytes == 2 * 64 * 64 * 4 + kGemmWorkspaceBytes);
  CHECK(s.steps[0].operands[2].byte_offset == s.steps[2].operands[2].byte_offset);
}

// 16 MiB per value. As one segment the returned %3 would be allocated before the call and %0..%2
// packed in the workspace beside it: 48 MiB, where the steps one by one never hold more than two
// values (32 MiB). The run is cut where a segment would exceed that by more than the slack.
TEST_CASE("a run is cut where one segment would hold more than its steps one by one",
          "[segments]") {
  constexpr char kChain[] =
      R"(graph(%a0: f32[2048,2048]{2048,1}@cuda, %a1: f32[2048,2048]{2048,1}@cuda) {
  %0 = aten::relu.default(%a0) -> f32[2048,2048]{2048,1}@cuda
  %1 = aten::mm.default(%0, %0) -> f32[2048,2048]{2048,1}@cuda
  %2 = aten::exp.default(%1) -> f32[2048,2048]{2048,1}@cuda
  %3 = aten::mm.default(%2, %a1) -> f32[2048,2048]{2048,1}@cuda
  return (%3)
})";
  Built b = Build(kChain);
  std::vector<std::string> kinds;
  for (const v1::Step& step : b.plan.steps())
    kinds.push_back(std::string(step.has_segment()  ? "segment"
                                : step.has_native() ? "native"
                                                    : "other"));
  // relu + mm (%1 its output, %0 in its workspace), exp alone, the last mm alone.
  CHECK(kinds == std::vector<std::string>{"segment", "native", "segment"});
  constexpr int64_t kValue = int64_t{2048} * 2048 * 4;
  REQUIRE(b.program.segments.size() == 2);
  CHECK(b.program.segments[0].workspace_bytes == kValue + kGemmWorkspaceBytes);
  CHECK(b.program.segments[1].workspace_bytes == kGemmWorkspaceBytes);
}

// The same chain at 64 x 64 (16 KiB per value): within the slack, one segment as before.
TEST_CASE("a run within the memory slack stays one segment", "[segments]") {
  Built b = Build(R"(graph(%a0: f32[64,64]{64,1}@cuda, %a1: f32[64,64]{64,1}@cuda) {
  %0 = aten::relu.default(%a0) -> f32[64,64]{64,1}@cuda
  %1 = aten::mm.default(%0, %0) -> f32[64,64]{64,1}@cuda
  %2 = aten::exp.default(%1) -> f32[64,64]{64,1}@cuda
  %3 = aten::mm.default(%2, %a1) -> f32[64,64]{64,1}@cuda
  return (%3)
})");
  REQUIRE(b.plan.steps_size() == 1);
  CHECK(b.plan.steps(0).has_segment());
}

// A backward's shape: each 16 MiB input (a saved activation) is read by one matmul, whose result
// (a gradient) is returned. The caller's inputs are not the plan's to free: one segment holds the
// four results (64 MiB), as many as the steps one by one. Released to the plan, the inputs die at
// their readers: stepwise the plan never holds more than 80 MiB (the inputs not read yet and the
// results so far), where one segment would hold all eight values (128 MiB) to its end; every
// matmul then runs as a segment of its own.
constexpr char kSavedChain[] =
    R"(graph(%a0: f32[2048,2048]{2048,1}@cuda, %a1: f32[2048,2048]{2048,1}@cuda, %a2: f32[2048,2048]{2048,1}@cuda, %a3: f32[2048,2048]{2048,1}@cuda) {
  %0 = aten::mm.default(%a0, %a0) -> f32[2048,2048]{2048,1}@cuda
  %1 = aten::mm.default(%a1, %a1) -> f32[2048,2048]{2048,1}@cuda
  %2 = aten::mm.default(%a2, %a2) -> f32[2048,2048]{2048,1}@cuda
  %3 = aten::mm.default(%a3, %a3) -> f32[2048,2048]{2048,1}@cuda
  return (%0, %1, %2, %3)
})";

TEST_CASE("inputs the caller keeps cost a segment nothing", "[segments]") {
  Built b = Build(kSavedChain);
  REQUIRE(b.plan.steps_size() == 1);
  CHECK(b.plan.steps(0).has_segment());
}

TEST_CASE("a run is cut where a segment would hold released inputs past their last reader",
          "[segments]") {
  Built b = Build(kSavedChain, {0, 1, 2, 3});
  int segments = 0;
  for (const v1::Step& step : b.plan.steps()) segments += step.has_segment() ? 1 : 0;
  CHECK(segments == 4);
  CHECK(b.program.segments.size() == 4);
  // Each input is released right after its own matmul's segment.
  for (int i = 0; i < b.plan.steps_size(); ++i) {
    if (!b.plan.steps(i).has_segment()) continue;
    const std::vector<int> release = Ints(b.plan.steps(i).release());
    CHECK(release.size() == 1);
  }
}

// Released inputs that die at the run's first step already cost nothing more as one segment.
TEST_CASE("released inputs read only at a segment's start leave it whole", "[segments]") {
  Built b = Build(R"(graph(%a0: f32[64,64]{64,1}@cuda, %a1: f32[64,64]{64,1}@cuda) {
  %0 = aten::mm.default(%a0, %a1) -> f32[64,64]{64,1}@cuda
  %1 = aten::relu.default(%0) -> f32[64,64]{64,1}@cuda
  %2 = aten::mm.default(%1, %1) -> f32[64,64]{64,1}@cuda
  return (%2)
})",
                  {0, 1});
  REQUIRE(b.plan.steps_size() == 1);
  CHECK(b.plan.steps(0).has_segment());
}

TEST_CASE("a pointwise kernel writes in place of an operand that dies there", "[segments]") {
  // relu reads mm's result, which dies there, in the same layout: one buffer for both. The
  // broadcast add reads %1 at other strides than it writes (a [64, 1] column): not in place.
  Built b = Build(R"(graph(%a0: f32[64,64]{64,1}@cuda, %a1: f32[64,1]{1,1}@cuda) {
  %0 = aten::mm.default(%a0, %a0) -> f32[64,64]{64,1}@cuda
  %1 = aten::relu.default(%0) -> f32[64,64]{64,1}@cuda
  %2 = aten::mm.default(%1, %a0) -> f32[64,64]{64,1}@cuda
  %3 = aten::add.Tensor(%a1, %2) -> f32[64,64]{64,1}@cuda
  %4 = aten::mm.default(%3, %a0) -> f32[64,64]{64,1}@cuda
  return (%4)
})");
  REQUIRE(b.plan.steps_size() == 1);
  const SegmentSpec& s = b.program.segments.at(0);
  REQUIRE(s.steps.size() == 5);
  const SegmentStepSpec& relu = s.steps[1];
  CHECK(relu.operands[0].io_index == -1);
  CHECK(relu.operands[1].io_index == -1);
  CHECK(relu.operands[0].byte_offset == relu.operands[1].byte_offset);
  // mm's result and relu's share 16 KiB; the add writes in place of %2 too (same layout, dies
  // there): %1 is live beside %2 at the second mm, so two blocks in all.
  CHECK(s.workspace_bytes == 2 * 64 * 64 * 4 + kGemmWorkspaceBytes);
}

TEST_CASE("what cuBLASLt cannot take stays an extern step", "[segments]") {
  // A doubly strided operand (neither dim has stride 1), f64, and addmm with beta != 1.
  Built b = Build(
      R"(graph(%a0: f32[8,8]{16,2}@cuda, %a1: f64[8,8]{8,1}@cuda, %a2: f32[8]{1}@cuda, %a3: f32[8,8]{8,1}@cuda) {
  %0 = aten::mm.default(%a0, %a3) -> f32[8,8]{8,1}@cuda
  %1 = aten::mm.default(%a1, %a1) -> f64[8,8]{8,1}@cuda
  %2 = aten::addmm.default(%a2, %a3, %a3, beta=2) -> f32[8,8]{8,1}@cuda
  return (%0, %1, %2)
})");
  CHECK(b.program.segments.empty());
  REQUIRE(b.plan.steps_size() == 3);
  for (const v1::Step& step : b.plan.steps()) CHECK(step.has_extern_call());
}

TEST_CASE("bmm with transposed operands maps onto strided batches", "[segments]") {
  Built b = Build(R"(graph(%a0: bf16[4,8,16]{128,16,1}@cuda, %a1: bf16[4,8,16]{128,16,1}@cuda) {
  %0 = aten::transpose.int(%a1, 1, 2) -> bf16[4,16,8]{128,1,16}@cuda
  %1 = aten::bmm.default(%a0, %0) -> bf16[4,8,8]{64,8,1}@cuda
  return (%1)
})");
  REQUIRE(b.program.gemms.size() == 1);
  const GemmSpec& g = b.program.gemms[0];
  CHECK(g.dtype == kCudaR16BF);
  CHECK(g.batch == 4);
  CHECK(g.m == 8);
  CHECK(g.n == 8);
  CHECK(g.k == 16);
  CHECK(g.trans_a == 1);  // Y = a1^T: column-major storage -> op T
  CHECK(g.lda == 16);
  CHECK(g.stride_a == 128);
  CHECK(g.stride_b == 128);
  CHECK(g.stride_d == 64);
}

}  // namespace
}  // namespace tccd::codegen
