// MatchGemms: text in, text out (the segment tests check the gemms' specs end to end).
#include <catch2/catch.hpp>

#include "codegen/cuda_host/match_gemms.h"
#include "codegen/schedule/parser.h"
#include "codegen/schedule/printer.h"

namespace tccd::codegen {
namespace {

constexpr char kValues[] = R"(schedule(inputs=3) {
  %0: f32[8,16]{16,1}@cuda
  %1: f32[16,4]{4,1}@cuda
  %2: f64[8,8]{8,1}@cuda
  %3: f32[8,4]{4,1}@cuda
  %4: f64[8,8]{8,1}@cuda
  %5: f32[8,4]{4,1}@cuda
)";

TEST_CASE("a cuBLASLt-shaped mm becomes a library call keeping its op; others stay",
          "[match-gemms]") {
  absl::StatusOr<schedule::Schedule> s =
      schedule::ParseSchedule(std::string(kValues) + R"(  %3 = extern aten::mm.default(%0, %1)
  %4 = extern aten::mm.default(%2, %2)
  %5 = extern aten::relu.default(%3)
  return (%4, %5)
}
)");
  REQUIRE(s.ok());
  absl::StatusOr<bool> changed = MatchGemms().Run(*s);
  REQUIRE(changed.ok());
  CHECK(*changed);
  // Z = X @ Y is D = Y^T X^T column-major: A = Y (%1), B = X (%0); f64 has no cuBLASLt path here.
  CHECK(
      schedule::PrintSchedule(*s) ==
      std::string(kValues) +
          R"(  %3 = library cublaslt_gemm(%1, %0, %3) name="mm.default_8x16x4" params={m=4, n=8, k=16, lda=4, ldb=16, ldd=4, batch=1, stride_a=0, stride_b=0, stride_d=0, trans_a=0, trans_b=0, dtype=0, compute=68, epilogue=1, alpha=1} of aten::mm.default(%0, %1)
  %4 = extern aten::mm.default(%2, %2)
  %5 = extern aten::relu.default(%3)
  return (%4, %5)
}
)");
  const schedule::LibraryCall& call = s->steps[0].as<schedule::LibraryCall>();
  absl::StatusOr<GemmSpec> spec = GemmSpecFromParams(call.name, call.params);
  REQUIRE(spec.ok());
  CHECK(spec->m == 4);
  CHECK(spec->k == 16);
  CHECK(spec->compute == kCublasCompute32F);
  CHECK(GemmParams(*spec) == call.params);
  // Nothing left to match.
  absl::StatusOr<bool> again = MatchGemms().Run(*s);
  REQUIRE(again.ok());
  CHECK_FALSE(*again);
}

TEST_CASE("gemm params that are not a GemmSpec's are an internal error", "[match-gemms]") {
  CHECK(GemmSpecFromParams("g", {{"m", 1}}).status().code() == absl::StatusCode::kInternal);
  std::vector<std::pair<std::string, double>> params = GemmParams(GemmSpec{});
  params[0].second = 1.5;  // m
  CHECK(GemmSpecFromParams("g", params).status().code() == absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace tccd::codegen
