// MoveWideningCastsToReaders (widening_casts_to_readers.h): partition text in, partition out.
#include "codegen/passes/widening_casts_to_readers.h"

#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/passes/kernel_builder.h"
#include "codegen/passes/partition_verifier.h"

namespace tccd::codegen {
namespace {

// The partition of `text` before and after the pass (and whether it changed anything); every
// group still builds a kernel.
std::pair<std::string, std::string> Moved(const std::string& text, bool* changed) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  absl::StatusOr<Partition> p = PartitionForFusion(*g, {});
  REQUIRE(p.ok());
  const std::string before = PrintPartition(*g, *p);
  absl::StatusOr<bool> c = MoveWideningCastsToReaders(*g, *p);
  REQUIRE(c.ok());
  *changed = *c;
  CHECK(VerifyPartition(*g, *p) == "");
  for (const FusionGroup& group : p->groups) {
    absl::StatusOr<PointwiseKernel> k = BuildPointwiseKernel(*g, group, "k");
    INFO(k.status().ToString());
    CHECK(k.ok());
  }
  return {before, PrintPartition(*g, *p)};
}

// A batch norm backward's shape of the problem: %0 (bf16) is read by an extern step (standing
// for the norm's column sums) and, widened, by a kernel that also reads that step's result, so
// the cast cannot join its reader's group by fusion alone.
constexpr char kBackward[] =
    R"(graph(%a0: bf16[4,8]{8,1}@cuda, %a1: bf16[4,8]{8,1}@cuda, %a2: bf16[8,8]{8,1}@cuda) {
  %0 = aten::add.Tensor(%a0, %a1) -> bf16[4,8]{8,1}@cuda
  %1 = aten::_to_copy.default(%0, dtype=f32) -> f32[4,8]{8,1}@cuda
  %2 = aten::mm.default(%0, %a2) -> bf16[4,8]{8,1}@cuda
  %3 = aten::_to_copy.default(%2, dtype=f32) -> f32[4,8]{8,1}@cuda
  %4 = aten::mul.Tensor(%1, %3) -> f32[4,8]{8,1}@cuda
  return (%4)
})";

TEST_CASE("a widening cast of a written value moves to its reader's group", "[widening_casts]") {
  bool changed = false;
  auto [before, after] = Moved(kBackward, &changed);
  // Before: the add's kernel writes %0 (bf16) and %1 (f32).
  CHECK(before == "fused %0 %1 -> %0 %1\nextern %2 aten::mm.default\nfused %3 %4 -> %4\n");
  CHECK(changed);
  // After: it writes %0 only; the reader loads it and widens it.
  CHECK(after == "fused %0 -> %0\nextern %2 aten::mm.default\nfused %1 %3 %4 -> %4\n");
}

TEST_CASE("widening casts that stay with their producer", "[widening_casts]") {
  bool changed = false;
  // Nothing else reads %0: the producer's kernel would write it only for the reader; the f32
  // copy is then the only write (no saving), so the cast stays.
  Moved(R"(graph(%a0: bf16[4,8]{8,1}@cuda, %a1: bf16[4,8]{8,1}@cuda, %a2: f32[8,8]{8,1}@cuda) {
  %0 = aten::add.Tensor(%a0, %a1) -> bf16[4,8]{8,1}@cuda
  %1 = aten::_to_copy.default(%0, dtype=f32) -> f32[4,8]{8,1}@cuda
  %2 = aten::mm.default(%1, %a2) -> f32[4,8]{8,1}@cuda
  %3 = aten::mul.Tensor(%1, %2) -> f32[4,8]{8,1}@cuda
  return (%3)
})",
        &changed);
  CHECK_FALSE(changed);
  // A narrowing cast (f32 -> bf16) is not moved: its reader would load the wider value.
  Moved(R"(graph(%a0: f32[4,8]{8,1}@cuda, %a1: f32[4,8]{8,1}@cuda, %a2: f32[8,8]{8,1}@cuda) {
  %0 = aten::add.Tensor(%a0, %a1) -> f32[4,8]{8,1}@cuda
  %1 = aten::_to_copy.default(%0, dtype=bf16) -> bf16[4,8]{8,1}@cuda
  %2 = aten::mm.default(%0, %a2) -> f32[4,8]{8,1}@cuda
  %3 = aten::_to_copy.default(%2, dtype=bf16) -> bf16[4,8]{8,1}@cuda
  %4 = aten::mul.Tensor(%1, %3) -> bf16[4,8]{8,1}@cuda
  return (%4)
})",
        &changed);
  CHECK_FALSE(changed);
  // The cast returned: its group writes it anyway.
  Moved(R"(graph(%a0: bf16[4,8]{8,1}@cuda, %a1: bf16[4,8]{8,1}@cuda, %a2: bf16[8,8]{8,1}@cuda) {
  %0 = aten::add.Tensor(%a0, %a1) -> bf16[4,8]{8,1}@cuda
  %1 = aten::_to_copy.default(%0, dtype=f32) -> f32[4,8]{8,1}@cuda
  %2 = aten::mm.default(%0, %a2) -> bf16[4,8]{8,1}@cuda
  %3 = aten::_to_copy.default(%2, dtype=f32) -> f32[4,8]{8,1}@cuda
  %4 = aten::mul.Tensor(%1, %3) -> f32[4,8]{8,1}@cuda
  return (%1, %4)
})",
        &changed);
  CHECK_FALSE(changed);
}

}  // namespace
}  // namespace tccd::codegen
