// PwBuilder and the declared-output checks of the pointwise op library (pointwise_ops.h).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "codegen/ir/parser.h"
#include "codegen/passes/pointwise_ops.h"

namespace tccd::codegen {
namespace {

TEST_CASE("integer constants from out-of-range floats saturate instead of overflowing",
          "[pointwise]") {
  // Found by tests/fuzz/request_fuzzer (UBSan): an i64 add of the scalar 1e308.
  std::vector<PwInstr> body;
  PwBuilder b(&body);
  CHECK(body[b.Constant(1e308, ir::DType::kI64)].ivalue == std::numeric_limits<int64_t>::max());
  CHECK(body[b.Constant(-1e308, ir::DType::kI64)].ivalue == std::numeric_limits<int64_t>::min());
  CHECK(body[b.Constant(std::nan(""), ir::DType::kI32)].ivalue == 0);
  CHECK(body[b.Constant(-2.75, ir::DType::kI64)].ivalue == -2);
  CHECK(body[b.Constant(0.5, ir::DType::kBool)].ivalue == 1);
}

TEST_CASE("a node whose declared outputs contradict its op is INVALID_ARGUMENT", "[pointwise]") {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(R"(graph(%a0: f32[4]{1}@cpu) {
  %0 = aten::_softmax.default(%a0, -1, false) -> (f32[4]{1}@cpu, f32[4]{1}@cpu)
  return (%0)
})");
  REQUIRE(g.ok());
  absl::Status count = CheckDeclaredOutputCount(g->nodes[0], 0, 1);
  CHECK(absl::IsInvalidArgument(count));
  CHECK(count.message() == "node %0 (aten::_softmax.default) declares 2 outputs; the op returns 1");
  absl::Status dtype = CheckDeclaredDType(g->nodes[0], 0, ir::DType::kF64);
  CHECK(absl::IsInvalidArgument(dtype));
  CHECK(dtype.message() ==
        "node %0 (aten::_softmax.default) declares a f32 result; the op computes f64 from its "
        "inputs");
  CHECK(CheckDeclaredDType(g->nodes[0], 0, ir::DType::kF32).ok());
}

}  // namespace
}  // namespace tccd::codegen
