// The schedule IR's text form: golden strings in, the same strings out, and errors that name
// the line.
#include <catch2/catch.hpp>

#include "codegen/schedule/parser.h"
#include "codegen/schedule/printer.h"

namespace tccd::schedule {
namespace {

constexpr char kEveryStep[] = R"(schedule(inputs=2) {
  %0: f32[8,16]{16,1}@cuda
  %1: f32[16,8]{8,1}@cuda
  %2: f32[8,8]{8,1}@cuda
  %3: f32[8,8]{8,1}@cuda
  %4: f32[64]{1}@cuda
  %5: f32[8,8]{8,1}@cuda
  %6: i64[]{}@cpu
  %2 = extern aten::mm.default(%0, %1)
  release(%0, %1)
  %3 = kernel(%2) artifact="kernels_cuda.so" symbol="k0" abi="tccd-cuda-1" shape=[8,8] strides=[8,1,8,1] kernels=[{name="k0", kind="cuda_pointwise", ops=["aten::relu.default"], shape=[8,8]}]
  %5 = segment(%3) artifact="kernels_cuda.so" symbol="tccd_seg0" abi="tccd-cuda-segment-1" workspace=8388864 kernels=[{name="tccd_seg0_mm_8x8x8", kind="cublaslt_gemm", ops=["aten::mm.default"], shape=[]}, {name="k1", kind="cuda_row_reduction", ops=[], grid=[8,1,1], block=[128,1,1], shared_mem=512, shape=[8,8]}]
  %4 = alias(%5)
  %2 = library cublaslt_gemm(%1, %0, %2) name="mm.default_8x16x8" params={m=8, n=8, k=16, alpha=0.5, beta=-0.125} of aten::mm.default(%0, %1)
  %6, _ = extern aten::max.dim(%3, -1, keepdim=true, names=["a\"b", None], scale=0.5, dtype=f32, device=device(cuda))
  release(%3)
  return (%4, %5, None, 2)
}
)";

TEST_CASE("every step kind prints back as it was parsed", "[schedule]") {
  absl::StatusOr<Schedule> s = ParseSchedule(kEveryStep);
  REQUIRE(s.ok());
  CHECK(PrintSchedule(*s) == kEveryStep);
  CHECK(s->num_inputs == 2);
  REQUIRE(s->steps.size() == 8);
  CHECK(s->steps[0].is<ExternOp>());
  CHECK(s->steps[1].as<Release>().values == std::vector<ValueId>{0, 1});
  const KernelLaunch& k = s->steps[2].as<KernelLaunch>();
  CHECK(k.entry.symbol == "k0");
  CHECK(k.expected_strides == std::vector<int64_t>{8, 1, 8, 1});
  const Segment& seg = s->steps[3].as<Segment>();
  CHECK(seg.workspace_bytes == 8388864);
  REQUIRE(seg.kernels.size() == 2);
  CHECK(seg.kernels[1].grid == std::vector<int64_t>{8, 1, 1});
  CHECK(seg.kernels[1].shared_mem_bytes == 512);
  CHECK(s->steps[4].as<Alias>().base == 5);
  const LibraryCall& gemm = s->steps[5].as<LibraryCall>();
  CHECK(gemm.function == "cublaslt_gemm");
  CHECK(gemm.operands == std::vector<ValueId>{1, 0, 2});
  CHECK(gemm.params == std::vector<std::pair<std::string, double>>{
                           {"m", 8}, {"n", 8}, {"k", 16}, {"alpha", 0.5}, {"beta", -0.125}});
  CHECK(gemm.op.target == "aten::mm.default");
  CHECK(ReadsOf(s->steps[5]) == std::vector<ValueId>{0, 1});  // what the op reads
  CHECK(s->steps[6].outputs == std::vector<ValueId>{6, kUnused});
  CHECK(ReadsOf(s->steps[6]) == std::vector<ValueId>{3});
  CHECK(ReadsOf(s->steps[1]).empty());
}

TEST_CASE("an empty schedule round-trips", "[schedule]") {
  constexpr char kEmpty[] = "schedule(inputs=0) {\n  return ()\n}\n";
  absl::StatusOr<Schedule> s = ParseSchedule(kEmpty);
  REQUIRE(s.ok());
  CHECK(s->steps.empty());
  CHECK(PrintSchedule(*s) == kEmpty);
}

TEST_CASE("parse errors name the line and the problem", "[schedule]") {
  auto error = [](const std::string& text) {
    absl::StatusOr<Schedule> s = ParseSchedule(text);
    REQUIRE_FALSE(s.ok());
    CHECK(s.status().code() == absl::StatusCode::kInvalidArgument);
    return std::string(s.status().message());
  };
  CHECK(error("graph() {\n}") ==
        "schedule IR parse error at line 1: expected 'schedule(inputs=N) {'");
  CHECK(error("schedule(inputs=1) {\n  %1: f32[]{}@cpu\n  return ()\n}") ==
        "schedule IR parse error at line 2: expected declaration of %0");
  CHECK(error("schedule(inputs=0) {\n  %0: f32[]{}@cpu\n  %0 = frobnicate(%0)\n  return ()\n}") ==
        "schedule IR parse error at line 3: unknown step 'frobnicate'");
  CHECK(error("schedule(inputs=0) {\n  %0: f32[]{}@cpu\n  %0 = alias(%0) extra\n  return ()\n}") ==
        "schedule IR parse error at line 3: trailing text");
  CHECK(error("schedule(inputs=0) {\n  %0: f32[]{}@cpu\n  %0 = kernel() artifact=\"a\" "
              "symbol=\"k\" abi=\"x\" "
              "shape=[] strides=[] kernels=[] colour=1\n  return ()\n}") ==
        "schedule IR parse error at line 3: unknown attribute 'colour'");
  CHECK(error("schedule(inputs=0) {\n  %0: f32[]{}@cpu\n  %0 = segment() artifact=\"a\" "
              "symbol=\"k\" abi=\"x\" "
              "kernels=[]\n  return ()\n}") ==
        "schedule IR parse error at line 3: missing attribute 'workspace'");
  CHECK(error("schedule(inputs=0) {\n  %0: f32[]{}@cpu\n  %0 = library f(%0) name=\"g\" "
              "params={m=\"x\"} of aten::mm.default(%0, %0)\n  return ()\n}") ==
        "schedule IR parse error at line 3: 'params.m' is not a number");
  CHECK(error("schedule(inputs=0) {\n  %0: f32[]{}@cpu\n  %0 = library f(%0) name=\"g\" "
              "params={}\n  return ()\n}") ==
        "schedule IR parse error at line 3: expected 'of' and the op");
  CHECK(error("schedule(inputs=0) {\n  %0 = alias(%0)\n  %0: f32[]{}@cpu\n  return ()\n}") ==
        "schedule IR parse error at line 3: declaration after the first step");
  CHECK(error("schedule(inputs=0) {\n  release(%0)\n") ==
        "schedule IR parse error at line 3: missing 'return'");
  CHECK(error("schedule(inputs=3) {\n  return ()\n}\n") ==
        "schedule declares fewer values than inputs");
}

}  // namespace
}  // namespace tccd::schedule
