// The textual IR: print/parse round trips, and parse errors that point at the problem.
#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"

#include "codegen/ir/parser.h"
#include "codegen/ir/printer.h"

namespace tccd::ir {
namespace {

const char* kMlpForward =
    R"(graph(%a0: f32[4,8]{8,1}@cpu, %a1: f32[16,8]{8,1}@cpu, %a2: f32[16]{1}@cpu) {
  %0 = aten::t.default(%a1) -> f32[8,16]{1,8}@cpu
  %1 = aten::addmm.default(%a2, %a0, %0) -> f32[4,16]{16,1}@cpu
  %2 = aten::relu.default(%1) -> f32[4,16]{16,1}@cpu
  %3 = aten::native_batch_norm.default(%2, None, None, None, None, true, 0.10000000000000001, 1.0000000000000001e-05) -> (f32[4,16]{16,1}@cpu, f32[16]{1}@cpu, f32[16]{1}@cpu)
  %4 = aten::sum.dim_IntList(%3, [0, -1], true, dtype=bf16) -> bf16[1,1]{1,1}@cpu
  %5 = aten::_to_copy.default(%4, dtype=f64, layout=layout(0), device=device(cpu), memory_format=memory_format(1)) -> f64[1,1]{1,1}+2@cuda
  %6 = aten::fill.Scalar(%5, -inf) -> f64[1,1]{1,1}@cpu
  %7 = aten::foo.bar("a \"quoted\"\n string", nan, inf, false, []) -> ()
  return (%2, %3#2, None, %a0, 3, 2.5)
}
)";

TEST_CASE("printing a parsed graph reproduces the text exactly", "[ir]") {
  absl::StatusOr<Graph> graph = ParseGraph(kMlpForward);
  REQUIRE(graph.ok());
  CHECK(PrintGraph(*graph) == kMlpForward);
}

TEST_CASE("parse(print(g)) == g", "[ir]") {
  Graph g = *ParseGraph(kMlpForward);
  Graph again = *ParseGraph(PrintGraph(g));
  CHECK(PrintGraph(again) == PrintGraph(g));  // (== would fail on the NaN argument)
  again.nodes.pop_back();
  g.nodes.pop_back();
  CHECK(again == g);
  g = *ParseGraph(kMlpForward);
  REQUIRE(g.nodes.size() == 8);
  CHECK(g.nodes[3].outputs.size() == 3);
  CHECK(g.nodes[4].kwargs.size() == 1);
  CHECK(std::get<DType>(g.nodes[4].kwargs[0].value.v) == DType::kBF16);
  CHECK(g.nodes[5].outputs[0].storage_offset == 2);
  CHECK(g.nodes[5].outputs[0].device == DeviceType::kCuda);
  CHECK(std::get<std::string>(g.nodes[7].args[0].v) == "a \"quoted\"\n string");
  CHECK(g.outputs[1].ref() == ValueRef{3, 2});
  CHECK(g.outputs[3].ref().is_input());
}

TEST_CASE("floats keep their exact bits and never read back as ints", "[ir]") {
  Graph g;
  Node n;
  n.target = "aten::mul.Scalar";
  for (double v : {1.0, 0.1, -2.5e-300, 1e300, 123456789.0}) n.args.push_back(Arg{v});
  n.args.push_back(Arg{int64_t{1}});
  g.nodes.push_back(n);
  Graph back = *ParseGraph(PrintGraph(g));
  CHECK(back == g);
  CHECK(std::holds_alternative<double>(back.nodes[0].args[0].v));
  CHECK(std::holds_alternative<int64_t>(back.nodes[0].args.back().v));
}

TEST_CASE("extern-only dtypes (complex, wide unsigned) round-trip", "[ir]") {
  const char* text = R"(graph(%a0: c64[4]{1}@cpu, %a1: c128[2]{1}@cpu, %a2: c32[2]{1}@cpu) {
  %0 = aten::hash_tensor.default(%a0) -> u64[]{}@cpu
  %1 = aten::_to_copy.default(%a1, dtype=u32) -> u32[2]{1}@cpu
  %2 = aten::_to_copy.default(%a2, dtype=u16) -> u16[2]{1}@cpu
  return (%0, %1, %2)
}
)";
  absl::StatusOr<Graph> g = ParseGraph(text);
  REQUIRE(g.ok());
  CHECK(PrintGraph(*g) == text);
  CHECK(g->inputs[0].dtype == DType::kC64);
  CHECK(DTypeBytes(DType::kC128) == 16);
  CHECK(DTypeBytes(DType::kC32) == 4);
  for (DType d : {DType::kC64, DType::kC128, DType::kC32, DType::kU16, DType::kU32, DType::kU64})
    CHECK(IsExternOnly(d));
  for (DType d : {DType::kF32, DType::kBF16, DType::kI64, DType::kU8, DType::kBool})
    CHECK(!IsExternOnly(d));
}

TEST_CASE("an empty graph round-trips", "[ir]") {
  Graph g;
  CHECK(PrintGraph(g) == "graph() {\n  return ()\n}\n");
  CHECK(*ParseGraph(PrintGraph(g)) == g);
}

TEST_CASE("parse errors say where and what", "[ir]") {
  auto bad = ParseGraph("graph(%a0: f33[1]{1}@cpu) {\n  return ()\n}\n");
  REQUIRE(!bad.ok());
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(bad.status().message()).find("1:") != std::string::npos);
  CHECK(std::string(bad.status().message()).find("unknown dtype 'f33'") != std::string::npos);

  auto misnumbered = ParseGraph("graph() {\n  %1 = aten::relu.default() -> ()\n  return ()\n}\n");
  REQUIRE(!misnumbered.ok());
  CHECK(std::string(misnumbered.status().message()).find("2:") != std::string::npos);

  CHECK(!ParseGraph("graph() { return () } trailing").ok());
  CHECK(!ParseGraph("").ok());
  CHECK(!ParseGraph("graph(").ok());
  CHECK(!ParseGraph("graph() {\n  %0 = aten::x.y(\"unterminated) -> ()\n return ()\n}").ok());
}

TEST_CASE("lists nested deeper than a request's are a parse error, not a stack overflow", "[ir]") {
  auto nested = [](int depth) {
    return absl::StrCat("graph() {\n  %0 = aten::x.y(", std::string(depth, '['),
                        std::string(depth, ']'), ") -> ()\n  return ()\n}\n");
  };
  CHECK(ParseGraph(nested(9)).ok());  // as deep as ArgFromProto allows
  auto deep = ParseGraph(nested(10));
  REQUIRE(!deep.ok());
  CHECK(std::string(deep.status().message()).find("nested more than 9 deep") != std::string::npos);
  // The IR text fuzzer's input nested 2,611 lists (ASan's stack overflow in ParseArg).
  CHECK(!ParseGraph(nested(100000)).ok());
}

}  // namespace
}  // namespace tccd::ir
