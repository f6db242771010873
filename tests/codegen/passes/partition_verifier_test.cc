// VerifyPartition: partitions the fusion stages make pass; each broken invariant is named.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/passes/fusion.h"
#include "codegen/passes/partition_verifier.h"

namespace tccd::codegen {
namespace {

constexpr char kGraph[] = R"(graph(%a0: f32[4,4]{4,1}@cpu, %a1: f32[4,4]{4,1}@cpu) {
  %0 = aten::add.Tensor(%a0, %a1) -> f32[4,4]{4,1}@cpu
  %1 = aten::relu.default(%0) -> f32[4,4]{4,1}@cpu
  %2 = aten::mm.default(%1, %a1) -> f32[4,4]{4,1}@cpu
  %3 = aten::mul.Tensor(%2, %2) -> f32[4,4]{4,1}@cpu
  return (%3, %1)
})";

struct Fixture {
  ir::Graph graph;
  Partition partition;
};

Fixture Make() {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(kGraph);
  REQUIRE(g.ok());
  absl::StatusOr<Partition> p = PartitionForFusion(*g, {});
  REQUIRE(p.ok());
  // fused %0 %1, extern %2, fused %3.
  REQUIRE(PrintPartition(*g, *p) ==
          "fused %0 %1 -> %1\nextern %2 aten::mm.default\nfused %3 -> %3\n");
  return {*std::move(g), *std::move(p)};
}

TEST_CASE("the partition fusion makes is valid", "[partition]") {
  Fixture f = Make();
  CHECK(VerifyPartition(f.graph, f.partition) == "");
}

TEST_CASE("an entry that runs before what it reads is reported", "[partition]") {
  Fixture f = Make();
  std::swap(f.partition.schedule[0], f.partition.schedule[1]);
  CHECK(VerifyPartition(f.graph, f.partition) == "node %2 reads %1:0 before it is made");
}

TEST_CASE("a node in no group and in no schedule entry is reported", "[partition]") {
  Fixture f = Make();
  f.partition.schedule.pop_back();
  CHECK(VerifyPartition(f.graph, f.partition) == "group 1 is never scheduled");
}

TEST_CASE("a group and group_of that disagree are reported", "[partition]") {
  Fixture f = Make();
  f.partition.groups[0].nodes = {0};
  CHECK(VerifyPartition(f.graph, f.partition) == "node %1 names group 0, which does not list it");
  Fixture g = Make();
  g.partition.group_of[3] = -1;
  CHECK(VerifyPartition(g.graph, g.partition) == "group 1 lists node %3, which is not its member");
}

TEST_CASE("an entry scheduled twice is reported", "[partition]") {
  Fixture f = Make();
  f.partition.schedule.push_back(f.partition.schedule[1]);
  CHECK(VerifyPartition(f.graph, f.partition) == "node %2 is scheduled twice");
}

TEST_CASE("a group reading its own member is reported", "[partition]") {
  Fixture f = Make();
  f.partition.groups[0].inputs.push_back({0, 0});
  CHECK(VerifyPartition(f.graph, f.partition) == "group 0 lists its own member %0 as an input");
}

}  // namespace
}  // namespace tccd::codegen
