// BatchNormStatsInPlace: IR text in, IR text out.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/batch_norm_stats_in_place.h"

namespace tccd::codegen {
namespace {

std::string Run(const std::string& text, bool* changed) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  absl::StatusOr<bool> c = BatchNormStatsInPlace().Run(*g);
  REQUIRE(c.ok());
  *changed = *c;
  return ir::PrintGraph(*g);
}

std::string Canonical(const std::string& text) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  return ir::PrintGraph(*g);
}

// x, weight, bias, running_mean, running_var, num_batches_tracked (a CPU training step).
constexpr char kInputs[] =
    "graph(%a0: f32[8,4,6,6]{144,36,6,1}@cpu, %a1: f32[4]{1}@cpu, %a2: f32[4]{1}@cpu, "
    "%a3: f32[4]{1}@cpu, %a4: f32[4]{1}@cpu) {\n";
constexpr char kNorm[] =
    "  %0 = aten::_native_batch_norm_legit_functional.default(%a0, %a1, %a2, %a3, %a4, true, "
    "0.1, 1e-05) -> (f32[8,4,6,6]{144,36,6,1}@cpu, f32[4]{1}@cpu, f32[4]{1}@cpu, "
    "f32[4]{1}@cpu, f32[4]{1}@cpu)\n";

TEST_CASE("the norm updates its running statistics in place and the copies go",
          "[batch_norm_stats_in_place]") {
  bool changed = false;
  const std::string out = Run(std::string(kInputs) + kNorm +
                                  R"(  %1 = aten::relu.default(%0) -> f32[8,4,6,6]{144,36,6,1}@cpu
  %2 = aten::copy_.default(%a3, %0#3) -> f32[4]{1}@cpu
  %3 = aten::copy_.default(%a4, %0#4) -> f32[4]{1}@cpu
  return (%1, %0#1, %0#2)
})",
                              &changed);
  CHECK(changed);
  CHECK(
      out ==
      Canonical(
          std::string(kInputs) +
          R"(  %0 = aten::_native_batch_norm_legit.default(%a0, %a1, %a2, %a3, %a4, true, 0.1, 1e-05) -> (f32[8,4,6,6]{144,36,6,1}@cpu, f32[4]{1}@cpu, f32[4]{1}@cpu)
  %1 = aten::relu.default(%0) -> f32[8,4,6,6]{144,36,6,1}@cpu
  return (%1, %0#1, %0#2)
})"));
}

TEST_CASE("readers of the new statistics read the updated buffers", "[batch_norm_stats_in_place]") {
  bool changed = false;
  const std::string out =
      Run(std::string(kInputs) + kNorm + R"(  %1 = aten::copy_.default(%a3, %0#3) -> f32[4]{1}@cpu
  %2 = aten::copy_.default(%a4, %0#4) -> f32[4]{1}@cpu
  %3 = aten::mul.Tensor(%0#3, %2) -> f32[4]{1}@cpu
  return (%0, %3)
})",
          &changed);
  CHECK(changed);
  CHECK(
      out ==
      Canonical(
          std::string(kInputs) +
          R"(  %0 = aten::_native_batch_norm_legit.default(%a0, %a1, %a2, %a3, %a4, true, 0.1, 1e-05) -> (f32[8,4,6,6]{144,36,6,1}@cpu, f32[4]{1}@cpu, f32[4]{1}@cpu)
  %1 = aten::mul.Tensor(%a3, %a4) -> f32[4]{1}@cpu
  return (%0, %1)
})"));
}

TEST_CASE("nothing to do: no copies, an old-value reader between, eval mode, two copies",
          "[batch_norm_stats_in_place]") {
  const std::string cases[] = {
      // The mutation is not kept in the graph (no copy_).
      std::string(kInputs) + kNorm + "  return (%0, %0#3, %0#4)\n}",
      // The old running mean is read between the norm and its copy.
      std::string(kInputs) + kNorm + R"(  %1 = aten::mul.Tensor(%a3, %a3) -> f32[4]{1}@cpu
  %2 = aten::copy_.default(%a3, %0#3) -> f32[4]{1}@cpu
  %3 = aten::copy_.default(%a4, %0#4) -> f32[4]{1}@cpu
  return (%0, %1)
})",
      // A view of the old running variance is read between the norm and its copy.
      std::string(kInputs) + kNorm + R"(  %1 = aten::copy_.default(%a3, %0#3) -> f32[4]{1}@cpu
  %2 = aten::view.default(%a4, [2, 2]) -> f32[2,2]{2,1}@cpu
  %3 = aten::relu.default(%2) -> f32[2,2]{2,1}@cpu
  %4 = aten::copy_.default(%a4, %0#4) -> f32[4]{1}@cpu
  return (%0, %3)
})",
      // Copied into twice.
      std::string(kInputs) + kNorm + R"(  %1 = aten::copy_.default(%a3, %0#3) -> f32[4]{1}@cpu
  %2 = aten::copy_.default(%a4, %0#4) -> f32[4]{1}@cpu
  %3 = aten::copy_.default(%a3, %0#1) -> f32[4]{1}@cpu
  return (%0)
})",
  };
  for (const std::string& in : cases) {
    bool changed = true;
    const std::string out = Run(in, &changed);
    INFO(in);
    CHECK_FALSE(changed);
    CHECK(out == Canonical(in));
  }
}

}  // namespace
}  // namespace tccd::codegen
