// Graphs with symbolic sizes: Prepare keys them by their canonical form and their shape facts
// (never by Dynamo's symbol spellings beyond canonical text, never by the example sizes), and
// Lower/Compile give one plan of extern steps whose metas and arguments keep the expressions.
#include <catch2/catch.hpp>

#include "codegen/pipeline.h"
#include "codegen/symbolic_plan.h"

namespace tccd::codegen {
namespace {

v1::Dim Sym(const char* expr) {
  v1::Dim d;
  d.set_expr(expr);
  return d;
}
v1::Dim Int(int64_t v) {
  v1::Dim d;
  d.set_value(v);
  return d;
}

v1::TensorMeta Meta(std::vector<v1::Dim> sizes, std::vector<v1::Dim> strides) {
  v1::TensorMeta m;
  for (auto& s : sizes) *m.add_sizes() = s;
  for (auto& s : strides) *m.add_strides() = s;
  m.set_dtype(v1::FLOAT32);
  m.mutable_device()->set_type(v1::CPU);
  return m;
}

v1::Value Ref(int node) {
  v1::Value v;
  v.mutable_ref()->set_node(node);
  return v;
}

// x: f32[s0, 8]; w: f32[8, 4]; y = relu(mm(x, w)); z = view(y, [s0*4]); returns (z, s0*4).
v1::Graph SymbolicGraph(const char* numel = "4*s0") {
  v1::Graph g;
  *g.add_inputs() = Meta({Sym("s0"), Int(8)}, {Int(8), Int(1)});
  *g.add_inputs() = Meta({Int(8), Int(4)}, {Int(4), Int(1)});
  v1::Node* mm = g.add_nodes();
  mm->set_target("aten::mm.default");
  *mm->add_args() = Ref(-1);
  *mm->add_args() = Ref(-2);
  *mm->add_outputs() = Meta({Sym("s0"), Int(4)}, {Int(4), Int(1)});
  v1::Node* relu = g.add_nodes();
  relu->set_target("aten::relu.default");
  *relu->add_args() = Ref(0);
  *relu->add_outputs() = Meta({Sym("s0"), Int(4)}, {Int(4), Int(1)});
  v1::Node* view = g.add_nodes();
  view->set_target("aten::view.default");
  *view->add_args() = Ref(1);
  view->add_args()->mutable_list()->add_items()->set_sym_expr(numel);
  *view->add_outputs() = Meta({Sym(numel)}, {Int(1)});
  *g.add_outputs() = Ref(2);
  g.add_outputs()->set_sym_expr(numel);
  return g;
}

v1::Target CpuTarget() {
  v1::Target t;
  t.set_device_type(v1::CPU);
  t.set_cpu_arch("x86_64");
  for (const char* f : {"cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"}) t.add_cpu_features(f);
  return t;
}

absl::StatusOr<Prepared> PrepareWith(const v1::Graph& g, const v1::ShapeEnv& env) {
  static const v1::Target target = CpuTarget();
  return Prepare({.graph = &g, .target = &target, .mode = "default", .shape_env = &env});
}

TEST_CASE("a symbolic graph is prepared, not refused", "[symbolic]") {
  v1::Graph g = SymbolicGraph();
  CHECK(HasSymbols(g));
  v1::Graph static_graph = g;
  static_graph.clear_nodes();
  static_graph.clear_outputs();
  static_graph.mutable_inputs(0)->mutable_sizes(0)->set_value(3);
  CHECK_FALSE(HasSymbols(static_graph));
  absl::StatusOr<Prepared> p = PrepareWith(g, {});
  REQUIRE(p.ok());
  CHECK(p->canonical_ir.rfind("symbolic-graph v1\n", 0) == 0);
  CHECK(p->canonical_ir.find("expr: \"(4*s0)\"") != std::string::npos);
}

TEST_CASE("the key holds the guards and the canonical text, not the hints", "[symbolic]") {
  v1::ShapeEnv facts;
  facts.add_guards("s0 >= 2");
  v1::ShapeEnv facts_other_hint = facts;
  (*facts.mutable_hints())["s0"] = 5;
  (*facts_other_hint.mutable_hints())["s0"] = 300;
  v1::ShapeEnv facts_reordered;
  facts_reordered.add_guards("Eq(Mod(s0, 8), 0)");
  facts_reordered.add_guards("s0 >= 2");
  v1::ShapeEnv facts_more;
  facts_more.add_guards("s0 >= 2");
  facts_more.add_guards("Eq(Mod(s0, 8), 0)");

  const std::string base = PrepareWith(SymbolicGraph(), facts)->canonical_ir;
  CHECK(PrepareWith(SymbolicGraph(), facts_other_hint)->canonical_ir == base);
  CHECK(PrepareWith(SymbolicGraph(), {})->canonical_ir != base);            // facts are in the key
  CHECK(PrepareWith(SymbolicGraph(), facts_more)->canonical_ir != base);
  CHECK(PrepareWith(SymbolicGraph(), facts_more)->canonical_ir ==
        PrepareWith(SymbolicGraph(), facts_reordered)->canonical_ir);       // as a sorted set
  // sympy's spellings of one expression canonicalise to one text.
  CHECK(PrepareWith(SymbolicGraph("4*s0"), facts)->canonical_ir == PrepareWith(SymbolicGraph("(4*s0)"), facts)->canonical_ir);
  CHECK(PrepareWith(SymbolicGraph("4*s1"), facts)->canonical_ir != base);
}

TEST_CASE("the plan runs every op as an extern step and keeps the expressions", "[symbolic]") {
  absl::StatusOr<Prepared> p = PrepareWith(SymbolicGraph(), {});
  REQUIRE(p.ok());
  absl::StatusOr<Lowered> lowered = Lower(*p);
  REQUIRE(lowered.ok());
  const v1::Plan& plan = lowered->plan;
  CHECK(plan.num_inputs() == 2);
  REQUIRE(plan.values_size() == 5);
  CHECK(plan.values(0).sizes(0).expr() == "s0");
  CHECK(plan.values(4).sizes(0).expr() == "(4*s0)");
  REQUIRE(plan.steps_size() == 3);
  for (const v1::Step& s : plan.steps()) CHECK(s.has_extern_call());
  CHECK(plan.steps(0).extern_call().target() == "aten::mm.default");
  CHECK(plan.steps(0).extern_call().args(1).ref().node() == 1);  // input 1 = value 1
  CHECK(plan.steps(1).extern_call().args(0).ref().node() == 2);  // mm's output = value 2
  CHECK(plan.steps(2).extern_call().args(1).list().items(0).sym_expr() == "(4*s0)");
  CHECK(std::vector<int>(plan.steps(0).release().begin(), plan.steps(0).release().end()) == std::vector<int>{0, 1});
  CHECK(std::vector<int>(plan.steps(1).release().begin(), plan.steps(1).release().end()) == std::vector<int>{2});
  CHECK(plan.outputs(0).ref().node() == 4);
  CHECK(plan.outputs(1).sym_expr() == "(4*s0)");
  // Compile gives the same plan and no native artifacts: the client interprets it.
  absl::StatusOr<CompileOutput> out = Compile(*p);
  REQUIRE(out.ok());
  CHECK(out->num_extern_steps == 3);
  CHECK(out->artifacts.empty());
}

TEST_CASE("a CUDA graph with symbolic sizes lowers to the same extern plan", "[symbolic][cuda]") {
  v1::Graph g = SymbolicGraph();
  auto to_cuda = [](v1::TensorMeta& m) { m.mutable_device()->set_type(v1::CUDA); };
  for (v1::TensorMeta& m : *g.mutable_inputs()) to_cuda(m);
  for (v1::Node& n : *g.mutable_nodes())
    for (v1::TensorMeta& m : *n.mutable_outputs()) to_cuda(m);
  v1::Target target;
  target.set_device_type(v1::CUDA);
  target.set_cuda_cc_major(9);
  target.set_cuda_cc_minor(0);
  target.set_cuda_device_name("NVIDIA H100 80GB HBM3");
  v1::ShapeEnv facts;
  absl::StatusOr<Prepared> p = Prepare({.graph = &g, .target = &target, .mode = "default", .shape_env = &facts});
  if (!p.ok()) {
    WARN("no NVRTC here, CUDA target not prepared: " << p.status().message());
    return;
  }
  CHECK(p->target_key.rfind("cuda:", 0) == 0);
  absl::StatusOr<CompileOutput> out = Compile(*p);
  REQUIRE(out.ok());
  CHECK(out->plan.steps_size() == 3);
  CHECK(out->plan.values(4).device().type() == v1::CUDA);
  CHECK(out->artifacts.empty());
}

TEST_CASE("malformed symbolic graphs are INVALID_ARGUMENT naming the place", "[symbolic]") {
  v1::Graph bad_expr = SymbolicGraph("4*s0 +");
  CHECK(absl::IsInvalidArgument(PrepareWith(bad_expr, {}).status()));
  v1::Graph unknown_fn = SymbolicGraph("TruncToInt(s0)");
  CHECK(absl::IsInvalidArgument(PrepareWith(unknown_fn, {}).status()));
  v1::Graph forward_ref = SymbolicGraph();
  forward_ref.mutable_nodes(0)->mutable_args(0)->mutable_ref()->set_node(2);
  absl::Status s = PrepareWith(forward_ref, {}).status();
  CHECK(absl::IsInvalidArgument(s));
  CHECK(s.message().find("node 0") != std::string::npos);
  v1::Graph bad_input = SymbolicGraph();
  bad_input.mutable_nodes(0)->mutable_args(0)->mutable_ref()->set_node(-9);
  CHECK(absl::IsInvalidArgument(PrepareWith(bad_input, {}).status()));
  v1::Graph bad_output = SymbolicGraph();
  bad_output.mutable_nodes(0)->mutable_args(0)->mutable_ref()->set_node(0);
  CHECK(absl::IsInvalidArgument(PrepareWith(bad_output, {}).status()));
  v1::Graph no_dtype = SymbolicGraph();
  no_dtype.mutable_inputs(0)->set_dtype(v1::DTYPE_UNSPECIFIED);
  CHECK(absl::IsInvalidArgument(PrepareWith(no_dtype, {}).status()));
  v1::ShapeEnv long_guard;
  long_guard.add_guards(std::string(5000, 's'));
  CHECK(absl::IsInvalidArgument(PrepareWith(SymbolicGraph(), long_guard).status()));
}

}  // namespace
}  // namespace tccd::codegen
