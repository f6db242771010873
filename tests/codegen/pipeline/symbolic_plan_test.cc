// Graphs with symbolic sizes: Prepare keys them by their canonical form and their shape facts
// (never by Dynamo's symbol spellings beyond canonical text, never by the example sizes), and
// Lower/Compile give one plan whose metas and arguments keep the expressions: pointwise runs
// as kernels with run-time sizes (CPU), every other op an extern step.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/pipeline.h"
#include "codegen/symbolic_gemms.h"
#include "codegen/symbolic_kernels.h"
#include "codegen/symbolic_plan.h"
#include "codegen/symbolic_views.h"
#include "codegen/plan_runtime/plan_descriptor.h"
#include "codegen/plan_runtime/runtime/tccd_plan_format.h"
#include "google/protobuf/text_format.h"

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
v1::Graph ExampleGraph(const char* numel = "4*s0") {
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
  for (const char* f : {"cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"})
    t.add_cpu_features(f);
  return t;
}

absl::StatusOr<Prepared> PrepareWith(const v1::Graph& g, const v1::ShapeEnv& env) {
  static const v1::Target target = CpuTarget();
  return Prepare({.graph = &g, .target = &target, .mode = "default", .shape_env = &env});
}

TEST_CASE("a symbolic graph is prepared, not refused", "[symbolic]") {
  v1::Graph g = ExampleGraph();
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

  const std::string base = PrepareWith(ExampleGraph(), facts)->canonical_ir;
  CHECK(PrepareWith(ExampleGraph(), facts_other_hint)->canonical_ir == base);
  CHECK(PrepareWith(ExampleGraph(), {})->canonical_ir != base);  // facts are in the key
  CHECK(PrepareWith(ExampleGraph(), facts_more)->canonical_ir != base);
  CHECK(PrepareWith(ExampleGraph(), facts_more)->canonical_ir ==
        PrepareWith(ExampleGraph(), facts_reordered)->canonical_ir);  // as a sorted set
  // sympy's spellings of one expression canonicalise to one text.
  CHECK(PrepareWith(ExampleGraph("4*s0"), facts)->canonical_ir ==
        PrepareWith(ExampleGraph("(4*s0)"), facts)->canonical_ir);
  CHECK(PrepareWith(ExampleGraph("4*s1"), facts)->canonical_ir != base);
}

TEST_CASE(
    "pointwise ops become a kernel with run-time sizes, the rest extern steps with their "
    "expressions",
    "[symbolic]") {
  absl::StatusOr<Prepared> p = PrepareWith(ExampleGraph(), {});
  REQUIRE(p.ok());
  absl::StatusOr<Lowered> lowered = Lower(*p);
  REQUIRE(lowered.ok());
  const v1::Plan& plan = lowered->plan;
  CHECK(plan.num_inputs() == 2);
  REQUIRE(plan.values_size() == 5);
  CHECK(plan.values(0).sizes(0).expr() == "s0");
  CHECK(plan.values(4).sizes(0).expr() == "(4*s0)");
  REQUIRE(plan.steps_size() == 3);
  CHECK(plan.steps(0).extern_call().target() == "aten::mm.default");
  CHECK(plan.steps(0).extern_call().args(1).ref().node() == 1);  // input 1 = value 1
  // relu: one kernel over [s0, 4], reading mm's output (value 2), defining value 3.
  REQUIRE(plan.steps(1).has_native());
  const v1::NativeCall& relu = plan.steps(1).native();
  CHECK(relu.abi() == "tccd-cpu-sym-1");
  CHECK(relu.artifact() == "kernels.so");
  CHECK(std::vector<int64_t>(relu.shape().begin(), relu.shape().end()) ==
        std::vector<int64_t>{kRuntimeDim, 4});
  CHECK(std::vector<int>(relu.inputs().begin(), relu.inputs().end()) == std::vector<int>{2});
  CHECK(std::vector<int>(plan.steps(1).outputs().begin(), plan.steps(1).outputs().end()) ==
        std::vector<int>{3});
  REQUIRE(relu.kernels_size() == 1);
  CHECK(relu.kernels(0).ops(0) == "aten::relu.default");
  CHECK(relu.expected_strides().empty());  // strides come from the tensors at every call
  CHECK(plan.steps(2).extern_call().args(1).list().items(0).sym_expr() == "(4*s0)");
  CHECK(std::vector<int>(plan.steps(0).release().begin(), plan.steps(0).release().end()) ==
        std::vector<int>{0, 1});
  CHECK(std::vector<int>(plan.steps(1).release().begin(), plan.steps(1).release().end()) ==
        std::vector<int>{2});
  CHECK(plan.outputs(0).ref().node() == 4);
  CHECK(plan.outputs(1).sym_expr() == "(4*s0)");
  // Compile gives the same plan, the kernels' .so and the plan descriptor with its
  // expressions (format 2: the native plan runtime runs symbolic plans), and the runtime.
  absl::StatusOr<CompileOutput> out = Compile(*p);
  REQUIRE(out.ok());
  CHECK(out->num_extern_steps == 2);
  CHECK(out->num_fused_kernels == 1);
  REQUIRE(out->artifacts.size() == 3);
  CHECK(out->artifacts[0].name == "kernels.so");
  CHECK(out->artifacts[0].kind == v1::CPU_SHARED_OBJECT);
  CHECK(out->artifacts[1].kind == v1::PLAN_DESCRIPTOR);
  CHECK(out->artifacts[2].kind == v1::PLAN_RUNTIME);
  const std::string& descriptor = out->artifacts[1].bytes;
  std::vector<int64_t> words(descriptor.size() / 8);
  std::memcpy(words.data(), descriptor.data(), descriptor.size());
  REQUIRE(words.size() > 4);
  CHECK(words[1] == TCCD_PLAN_FORMAT_VERSION);
  CHECK(words[2] == 1);  // one symbol: s0
  CHECK(std::find(words.begin(), words.end(), TCCD_ABI_CPU_SYM) != words.end());
}

TEST_CASE("the symbolic kernel's IR: the iteration space's symbolic dims are run-time dims",
          "[symbolic]") {
  absl::StatusOr<Prepared> p = PrepareWith(ExampleGraph(), {});
  REQUIRE(p.ok());
  // The graph as prepared (canonical), through the public pieces.
  v1::ShapeEnv none;
  absl::StatusOr<codegen::SymbolicGraph> sym = PrepareSymbolicGraph(ExampleGraph(), none);
  REQUIRE(sym.ok());
  absl::StatusOr<SymbolicLowering> lowering = LowerSymbolicKernels(*sym, {.fusion = true});
  REQUIRE(lowering.ok());
  CHECK(lowering->rejected.empty());
  REQUIRE(lowering->groups.size() == 1);
  CHECK(PrintPointwiseKernel(lowering->groups[0].kernel) ==
        "pointwise @tccd_sk0[?,4](in0: f32) -> (out0: f32) {\n"
        "  // fused: aten::relu.default\n"
        "  %0 = load.f32 in0\n"
        "  %1 = constant.f32 0.0\n"
        "  %2 = maximum.f32 %0, %1\n"
        "  store.f32 out0, %2\n"
        "}\n");
  // No fusion (TCCD_DISABLE_FUSION): all extern.
  absl::StatusOr<SymbolicLowering> none_fused = LowerSymbolicKernels(*sym, {.fusion = false});
  REQUIRE(none_fused.ok());
  CHECK(none_fused->groups.empty());
  CHECK(none_fused->schedule.size() == 3);
}

TEST_CASE(
    "a pointwise op with a symbolic argument stays extern (the placeholder is never baked in)",
    "[symbolic]") {
  v1::Graph g = ExampleGraph();
  // relu -> add(relu, s0): the add's scalar is a SymInt.
  v1::Node* add = g.add_nodes();
  add->set_target("aten::add.Tensor");
  *add->add_args() = Ref(1);
  add->add_args()->set_sym_expr("s0");
  *add->add_outputs() = g.nodes(1).outputs(0);
  *g.mutable_outputs(0) = Ref(3);
  absl::StatusOr<codegen::SymbolicGraph> sym = PrepareSymbolicGraph(g, {});
  REQUIRE(sym.ok());
  absl::StatusOr<SymbolicLowering> lowering = LowerSymbolicKernels(*sym, {.fusion = true});
  REQUIRE(lowering.ok());
  CHECK(lowering->groups.empty());
  REQUIRE(lowering->rejected.size() == 1);
  CHECK(lowering->rejected[0].find("symbolic argument") != std::string::npos);
  absl::StatusOr<v1::Plan> plan = SymbolicKernelPlan(*sym, *lowering);
  REQUIRE(plan.ok());
  for (const v1::Step& s : plan->steps()) CHECK(s.has_extern_call());
}

TEST_CASE("distinct symbols never share a kernel", "[symbolic]") {
  // x: [s0, 4] and y: [s1, 4] added into [s0, 4] (a graph whose guards said s0 == s1 would
  // name one symbol; this one must not become a kernel that assumes it).
  v1::Graph g;
  *g.add_inputs() = Meta({Sym("s0"), Int(4)}, {Int(4), Int(1)});
  *g.add_inputs() = Meta({Sym("s1"), Int(4)}, {Int(4), Int(1)});
  v1::Node* neg = g.add_nodes();
  neg->set_target("aten::neg.default");
  *neg->add_args() = Ref(-1);
  *neg->add_outputs() = Meta({Sym("s0"), Int(4)}, {Int(4), Int(1)});
  v1::Node* neg1 = g.add_nodes();
  neg1->set_target("aten::neg.default");
  *neg1->add_args() = Ref(-2);
  *neg1->add_outputs() = Meta({Sym("s1"), Int(4)}, {Int(4), Int(1)});
  *g.add_outputs() = Ref(0);
  *g.add_outputs() = Ref(1);
  absl::StatusOr<codegen::SymbolicGraph> sym = PrepareSymbolicGraph(g, {});
  REQUIRE(sym.ok());
  absl::StatusOr<SymbolicLowering> lowering = LowerSymbolicKernels(*sym, {.fusion = true});
  REQUIRE(lowering.ok());
  // Two kernels, one per symbol (s0 and s1 have distinct placeholders: never one group).
  REQUIRE(lowering->groups.size() == 2);
  CHECK(lowering->groups[0].kernel.shape == std::vector<int64_t>{kRuntimeDim, 4});
}

TEST_CASE("sibling groups of one symbolic shape are one kernel (horizontal fusion)", "[symbolic]") {
  // x, y: [s0, 4]; neg(x) and exp(y), both returned: independent groups of one shape.
  v1::Graph g;
  *g.add_inputs() = Meta({Sym("s0"), Int(4)}, {Int(4), Int(1)});
  *g.add_inputs() = Meta({Sym("s0"), Int(4)}, {Int(4), Int(1)});
  v1::Node* neg = g.add_nodes();
  neg->set_target("aten::neg.default");
  *neg->add_args() = Ref(-1);
  *neg->add_outputs() = Meta({Sym("s0"), Int(4)}, {Int(4), Int(1)});
  v1::Node* exp = g.add_nodes();
  exp->set_target("aten::exp.default");
  *exp->add_args() = Ref(-2);
  *exp->add_outputs() = Meta({Sym("s0"), Int(4)}, {Int(4), Int(1)});
  *g.add_outputs() = Ref(0);
  *g.add_outputs() = Ref(1);
  absl::StatusOr<codegen::SymbolicGraph> sym = PrepareSymbolicGraph(g, {});
  REQUIRE(sym.ok());
  absl::StatusOr<SymbolicLowering> merged = LowerSymbolicKernels(*sym, {.fusion = true});
  REQUIRE(merged.ok());
  CHECK(merged->rejected.empty());
  REQUIRE(merged->groups.size() == 1);
  CHECK(merged->groups[0].nodes == std::vector<int>{0, 1});
  CHECK(merged->groups[0].kernel.shape == std::vector<int64_t>{kRuntimeDim, 4});
  CHECK(merged->groups[0].outputs.size() == 2);
  // TCCD_DISABLE_PASSES=symbolic-horizontal-fusion: one kernel per group, as before.
  absl::StatusOr<SymbolicLowering> apart =
      LowerSymbolicKernels(*sym, {.fusion = true, .horizontal = false});
  REQUIRE(apart.ok());
  CHECK(apart->groups.size() == 2);
}

TEST_CASE("a CUDA graph with symbolic sizes: the pointwise op a CUDA kernel with run-time sizes",
          "[symbolic][cuda]") {
  v1::Graph g = ExampleGraph();
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
  absl::StatusOr<Prepared> p =
      Prepare({.graph = &g, .target = &target, .mode = "default", .shape_env = &facts});
  if (!p.ok()) {
    WARN("no NVRTC here, CUDA target not prepared: " << p.status().message());
    return;
  }
  CHECK(p->target_key.rfind("cuda:", 0) == 0);
  absl::StatusOr<CompileOutput> out = Compile(*p);
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  REQUIRE(out->plan.steps_size() == 3);
  CHECK(out->plan.values(4).device().type() == v1::CUDA);
  // The mm: a cuBLASLt gemm with run-time sizes (symbolic_gemms.h), in the same host library.
  REQUIRE(out->plan.steps(0).has_native());
  CHECK(out->plan.steps(0).native().abi() == "tccd-cuda-sym-gemm-1");
  CHECK(out->plan.steps(0).native().symbol() == "tccd_sg0");
  REQUIRE(out->plan.steps(1).has_native());
  CHECK(out->plan.steps(1).native().abi() == "tccd-cuda-sym-1");
  CHECK(out->plan.steps(1).native().artifact() == "kernels_cuda.so");
  CHECK(out->plan.steps(1).native().kernels(0).kind() == "cuda_pointwise");
  std::string ptx;
  bool host = false;
  for (const ArtifactBytes& a : out->artifacts) {
    if (a.kind == v1::TEXT) ptx = a.bytes;
    host = host || a.kind == v1::CUDA_HOST_OBJECT;
  }
  CHECK(host);
  // The PTX entries take the sizes as parameters: the contig one 8 bytes of pointer + numel, the
  // strided one pointers, 2 strides and 2 sizes (both operands of rank 2): 8 + 8 * 2 * 2 + 8 * 2.
  // (The linked PTX names each kernel by its content: tccd_pw_relu_<digest>_contig.)
  CHECK(ptx.find("_contig_param_0[24]") != std::string::npos);
  CHECK(ptx.find("_strided_param_0[64]") != std::string::npos);
}

// Every tensor of `g` on the GPU (row groups form on CUDA tensors only, as in static graphs).
v1::Graph OnCuda(v1::Graph g) {
  auto to_cuda = [](v1::TensorMeta& m) { m.mutable_device()->set_type(v1::CUDA); };
  for (v1::TensorMeta& m : *g.mutable_inputs()) to_cuda(m);
  for (v1::Node& n : *g.mutable_nodes())
    for (v1::TensorMeta& m : *n.mutable_outputs()) to_cuda(m);
  return g;
}

// x: f32[sizes] (row-major strides, or `dtype`); y = softmax(x, -1) * 2; returns y (on the GPU).
v1::Graph SoftmaxGraph(std::vector<v1::Dim> sizes, std::vector<v1::Dim> strides,
                       v1::DType dtype = v1::FLOAT32) {
  v1::Graph g;
  *g.add_inputs() = Meta(sizes, strides);
  v1::Node* softmax = g.add_nodes();
  softmax->set_target("aten::_softmax.default");
  *softmax->add_args() = Ref(-1);
  softmax->add_args()->set_int_value(-1);
  softmax->add_args()->set_bool_value(false);
  *softmax->add_outputs() = Meta(sizes, strides);
  v1::Node* mul = g.add_nodes();
  mul->set_target("aten::mul.Tensor");
  *mul->add_args() = Ref(0);
  mul->add_args()->set_float_value(2.0);
  *mul->add_outputs() = Meta(sizes, strides);
  *g.add_outputs() = Ref(1);
  g.mutable_inputs(0)->set_dtype(dtype);
  for (v1::Node& n : *g.mutable_nodes()) n.mutable_outputs(0)->set_dtype(dtype);
  return OnCuda(g);
}

TEST_CASE(
    "CUDA rows: a softmax over static rows of a symbolic count is a row kernel with run-time rows",
    "[symbolic][rows]") {
  absl::StatusOr<codegen::SymbolicGraph> sym =
      PrepareSymbolicGraph(SoftmaxGraph({Sym("s0"), Int(64)}, {Int(64), Int(1)}), {});
  REQUIRE(sym.ok());
  absl::StatusOr<SymbolicLowering> lowering =
      LowerSymbolicKernels(*sym, {.fusion = true, .rows = true});
  REQUIRE(lowering.ok());
  CHECK(lowering->rejected.empty());
  REQUIRE(lowering->groups.size() == 1);
  CHECK(lowering->schedule.size() == 1);
  const PointwiseKernel& k = lowering->groups[0].kernel;
  CHECK(k.shape == std::vector<int64_t>{kRuntimeDim, 64});
  CHECK(k.reduction.num_reduced_dims == 1);
  CHECK(k.fused_ops == std::vector<std::string>{"aten::_softmax.default", "aten::mul.Tensor"});
  CHECK(PrintPointwiseKernel(k) ==
        "pointwise @tccd_sk0[?,64](in0: f32) -> (out0: f32) rows(reduce 1 dims) {\n"
        "  // fused: aten::_softmax.default, aten::mul.Tensor\n"
        "  %0 = load.f32 in0\n"
        "  %1 = reduce_max.f32 %0\n"
        "  %2 = sub.f32 %0, %1\n"
        "  %3 = exp.f32 %2\n"
        "  %4 = reduce_sum.f32 %3\n"
        "  %5 = div.f32 %3, %4\n"
        "  %6 = constant.f32 2.0\n"
        "  %7 = mul.f32 %5, %6\n"
        "  store.f32 out0, %7\n"
        "}\n");
  absl::StatusOr<v1::Plan> plan = SymbolicKernelPlan(*sym, *lowering);
  REQUIRE(plan.ok());
  REQUIRE(plan->steps_size() == 1);
  CHECK(plan->steps(0).native().abi() == "tccd-cpu-sym-1");  // the default (CPU) target's names
  CHECK(plan->steps(0).native().kernels(0).kind() == "cuda_row_reduction");
  // Without `rows` (the CPU target): the softmax stays extern, the mul a pointwise kernel.
  absl::StatusOr<SymbolicLowering> cpu = LowerSymbolicKernels(*sym, {.fusion = true});
  REQUIRE(cpu.ok());
  REQUIRE(cpu->groups.size() == 1);
  CHECK(!cpu->groups[0].kernel.is_row_reduction());
  CHECK(cpu->schedule.size() == 2);
}

TEST_CASE(
    "CUDA rows: a row of run-time length is one dim, and the kernel's first output has its sizes",
    "[symbolic][rows]") {
  absl::StatusOr<codegen::SymbolicGraph> sym =
      PrepareSymbolicGraph(SoftmaxGraph({Int(4), Sym("s0")}, {Sym("s0"), Int(1)}), {});
  REQUIRE(sym.ok());
  absl::StatusOr<SymbolicLowering> lowering =
      LowerSymbolicKernels(*sym, {.fusion = true, .rows = true});
  REQUIRE(lowering.ok());
  CHECK(lowering->rejected.empty());
  REQUIRE(lowering->groups.size() == 1);
  CHECK(lowering->groups[0].kernel.shape == std::vector<int64_t>{4, kRuntimeDim});
  // Over two dims [s0, s1] of a [4, s0, s1] tensor (a sum keeping both as 1s): extern.
  v1::Graph g;
  *g.add_inputs() = Meta({Int(4), Sym("s0"), Sym("s1")}, {Sym("s0*s1"), Sym("s1"), Int(1)});
  v1::Node* sum = g.add_nodes();
  sum->set_target("aten::sum.dim_IntList");
  *sum->add_args() = Ref(-1);
  v1::Value* dims = sum->add_args();
  dims->mutable_list()->add_items()->set_int_value(-2);
  dims->mutable_list()->add_items()->set_int_value(-1);
  sum->add_args()->set_bool_value(true);
  *sum->add_outputs() = Meta({Int(4), Int(1), Int(1)}, {Int(1), Int(1), Int(1)});
  *g.add_outputs() = Ref(0);
  absl::StatusOr<codegen::SymbolicGraph> sym2 = PrepareSymbolicGraph(OnCuda(g), {});
  REQUIRE(sym2.ok());
  absl::StatusOr<SymbolicLowering> two =
      LowerSymbolicKernels(*sym2, {.fusion = true, .rows = true});
  REQUIRE(two.ok());
  CHECK(two->groups.empty());
  REQUIRE(two->rejected.size() == 1);
  INFO(two->rejected[0]);
  CHECK(two->rejected[0].find("run-time length over several dims") != std::string::npos);
}

TEST_CASE(
    "CUDA rows: layer norm's mean and rstd are row values of the kernel; a sum without keepdim "
    "returned is not",
    "[symbolic][rows]") {
  // x: [s0, s1, 32]; (y, mean, rstd) = native_layer_norm(x, [32], w, b, 1e-5); returns all three.
  const std::vector<v1::Dim> xs = {Sym("s0"), Sym("s1"), Int(32)},
                             xst = {Sym("32*s1"), Int(32), Int(1)};
  const std::vector<v1::Dim> rs = {Sym("s0"), Sym("s1"), Int(1)}, rst = {Sym("s1"), Int(1), Int(1)};
  v1::Graph g;
  *g.add_inputs() = Meta(xs, xst);
  *g.add_inputs() = Meta({Int(32)}, {Int(1)});
  *g.add_inputs() = Meta({Int(32)}, {Int(1)});
  v1::Node* ln = g.add_nodes();
  ln->set_target("aten::native_layer_norm.default");
  *ln->add_args() = Ref(-1);
  ln->add_args()->mutable_list()->add_items()->set_int_value(32);
  *ln->add_args() = Ref(-2);
  *ln->add_args() = Ref(-3);
  ln->add_args()->set_float_value(1e-5);
  *ln->add_outputs() = Meta(xs, xst);
  *ln->add_outputs() = Meta(rs, rst);
  *ln->add_outputs() = Meta(rs, rst);
  for (int o = 0; o < 3; ++o) {
    v1::Value* out = g.add_outputs();
    out->mutable_ref()->set_node(0);
    out->mutable_ref()->set_output(o);
  }
  absl::StatusOr<codegen::SymbolicGraph> sym = PrepareSymbolicGraph(OnCuda(g), {});
  REQUIRE(sym.ok());
  absl::StatusOr<SymbolicLowering> lowering =
      LowerSymbolicKernels(*sym, {.fusion = true, .rows = true});
  REQUIRE(lowering.ok());
  INFO((lowering->rejected.empty() ? "" : lowering->rejected[0]));
  REQUIRE(lowering->groups.size() == 1);
  CHECK(lowering->groups[0].kernel.shape == std::vector<int64_t>{kRuntimeDim, kRuntimeDim, 32});
  CHECK(lowering->groups[0].outputs.size() == 3);

  // sum(x, [-1]) without keepdim, returned: the runtimes give a kernel's outputs its rank.
  v1::Graph s;
  *s.add_inputs() = Meta(xs, xst);
  v1::Node* sum = s.add_nodes();
  sum->set_target("aten::sum.dim_IntList");
  *sum->add_args() = Ref(-1);
  sum->add_args()->mutable_list()->add_items()->set_int_value(-1);
  *sum->add_outputs() = Meta({Sym("s0"), Sym("s1")}, {Sym("s1"), Int(1)});
  *s.add_outputs() = Ref(0);
  absl::StatusOr<codegen::SymbolicGraph> sym_sum = PrepareSymbolicGraph(OnCuda(s), {});
  REQUIRE(sym_sum.ok());
  absl::StatusOr<SymbolicLowering> sum_lowering =
      LowerSymbolicKernels(*sym_sum, {.fusion = true, .rows = true});
  REQUIRE(sum_lowering.ok());
  CHECK(sum_lowering->groups.empty());
  REQUIRE(sum_lowering->rejected.size() == 1);
  INFO(sum_lowering->rejected[0]);
  CHECK(sum_lowering->rejected[0].find("an output without the reduced dims") != std::string::npos);
}

TEST_CASE("a CUDA graph with symbolic sizes: the softmax a row kernel with run-time rows",
          "[symbolic][cuda][rows]") {
  v1::Graph g = SoftmaxGraph({Sym("s0"), Int(64)}, {Int(64), Int(1)});
  v1::Target target;
  target.set_device_type(v1::CUDA);
  target.set_cuda_cc_major(9);
  target.set_cuda_cc_minor(0);
  target.set_cuda_device_name("NVIDIA H100 80GB HBM3");
  v1::ShapeEnv facts;
  absl::StatusOr<Prepared> p =
      Prepare({.graph = &g, .target = &target, .mode = "default", .shape_env = &facts});
  if (!p.ok()) {
    WARN("no NVRTC here, CUDA target not prepared: " << p.status().message());
    return;
  }
  absl::StatusOr<CompileOutput> out = Compile(*p);
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  REQUIRE(out->plan.steps_size() == 1);
  REQUIRE(out->plan.steps(0).has_native());
  CHECK(out->plan.steps(0).native().abi() == "tccd-cuda-sym-1");
  CHECK(out->plan.steps(0).native().kernels(0).kind() == "cuda_row_reduction");
  std::string ptx;
  for (const ArtifactBytes& a : out->artifacts)
    if (a.kind == v1::TEXT) ptx = a.bytes;
  // Both entries take pointers, strides and sizes: 8 * 2 + 8 * 2 * 2 + 8 * 2.
  CHECK(ptx.find("_contig_param_0[64]") != std::string::npos);
  CHECK(ptx.find("_strided_param_0[64]") != std::string::npos);
}

TEST_CASE(
    "CUDA rows: bf16 softmax rows of a symbolic count or a run-time length are row kernels that "
    "load bf16, compute in f32 and store bf16",
    "[symbolic][rows][cuda]") {
  for (const bool runtime_length : {false, true}) {
    INFO((runtime_length ? "run-time length" : "symbolic row count"));
    const v1::Graph g = runtime_length
                            ? SoftmaxGraph({Int(4), Sym("s0")}, {Sym("s0"), Int(1)}, v1::BFLOAT16)
                            : SoftmaxGraph({Sym("s0"), Int(40)}, {Int(40), Int(1)}, v1::BFLOAT16);
    absl::StatusOr<codegen::SymbolicGraph> sym = PrepareSymbolicGraph(g, {});
    REQUIRE(sym.ok());
    absl::StatusOr<SymbolicLowering> lowering =
        LowerSymbolicKernels(*sym, {.fusion = true, .rows = true});
    REQUIRE(lowering.ok());
    INFO((lowering->rejected.empty() ? "" : lowering->rejected[0]));
    CHECK(lowering->rejected.empty());
    REQUIRE(lowering->groups.size() == 1);
    CHECK(lowering->schedule.size() == 1);
    const std::string ir = PrintPointwiseKernel(lowering->groups[0].kernel);
    INFO(ir);
    CHECK(ir.find("(in0: bf16) -> (out0: bf16) rows(reduce 1 dims)") != std::string::npos);
    CHECK(ir.find("reduce_max.f32") != std::string::npos);
    CHECK(ir.find("reduce_sum.f32") != std::string::npos);

    // The CUDA emitter compiles it (NVRTC, no driver needed).
    v1::Target target;
    target.set_device_type(v1::CUDA);
    target.set_cuda_cc_major(9);
    target.set_cuda_cc_minor(0);
    target.set_cuda_device_name("NVIDIA H100 80GB HBM3");
    v1::ShapeEnv facts;
    absl::StatusOr<Prepared> p =
        Prepare({.graph = &g, .target = &target, .mode = "default", .shape_env = &facts});
    if (!p.ok()) {
      WARN("no NVRTC here, CUDA target not prepared: " << p.status().message());
      continue;
    }
    absl::StatusOr<CompileOutput> out = Compile(*p);
    INFO(out.status().ToString());
    REQUIRE(out.ok());
    REQUIRE(out->plan.steps_size() == 1);
    REQUIRE(out->plan.steps(0).has_native());
    CHECK(out->plan.steps(0).native().abi() == "tccd-cuda-sym-1");
    CHECK(out->plan.steps(0).native().kernels(0).kind() == "cuda_row_reduction");
  }
}

// x: [sizes] of `dtype`, row-major `strides`; g = sum(x * 2, [0]) (a bias gradient's column sum
// with a pointwise prologue); returns g, [sizes[1:]] (on the GPU).
v1::Graph ColumnSumGraph(std::vector<v1::Dim> sizes, std::vector<v1::Dim> strides,
                         v1::DType dtype = v1::FLOAT32, int reduced = 1) {
  v1::Graph g;
  *g.add_inputs() = Meta(sizes, strides);
  v1::Node* mul = g.add_nodes();
  mul->set_target("aten::mul.Tensor");
  *mul->add_args() = Ref(-1);
  mul->add_args()->set_float_value(2.0);
  *mul->add_outputs() = Meta(sizes, strides);
  v1::Node* sum = g.add_nodes();
  sum->set_target("aten::sum.dim_IntList");
  *sum->add_args() = Ref(0);
  for (int d = 0; d < reduced; ++d) sum->add_args()->mutable_list()->add_items()->set_int_value(d);
  std::vector<v1::Dim> kept(sizes.begin() + reduced, sizes.end()), kept_strides;
  for (size_t d = reduced; d < sizes.size(); ++d) kept_strides.push_back(strides[d]);
  *sum->add_outputs() = Meta(kept, kept_strides);
  *g.add_outputs() = Ref(1);
  g.mutable_inputs(0)->set_dtype(dtype);
  for (v1::Node& n : *g.mutable_nodes()) n.mutable_outputs(0)->set_dtype(dtype);
  return OnCuda(g);
}

TEST_CASE(
    "CUDA columns: a column sum over a symbolic row count is a column kernel with run-time rows "
    "whose per-column output drops the rows; a symbolic column count stays extern",
    "[symbolic][rows][columns]") {
  for (const v1::DType dtype : {v1::FLOAT32, v1::BFLOAT16}) {
    const v1::Graph g = ColumnSumGraph({Sym("s0*s1"), Int(64)}, {Int(64), Int(1)}, dtype);
    absl::StatusOr<codegen::SymbolicGraph> sym = PrepareSymbolicGraph(g, {});
    REQUIRE(sym.ok());
    absl::StatusOr<SymbolicLowering> lowering =
        LowerSymbolicKernels(*sym, {.fusion = true, .rows = true});
    REQUIRE(lowering.ok());
    INFO((lowering->rejected.empty() ? "" : lowering->rejected[0]));
    CHECK(lowering->rejected.empty());
    REQUIRE(lowering->groups.size() == 1);
    CHECK(lowering->schedule.size() == 1);
    const SymbolicKernelGroup& group = lowering->groups[0];
    CHECK(group.kernel.is_column_reduction());
    CHECK(group.kernel.shape == std::vector<int64_t>{kRuntimeDim, 64});
    CHECK(group.nodes == std::vector<int>{0, 1});
    const std::string ir = PrintPointwiseKernel(group.kernel);
    INFO(ir);
    CHECK(ir.find("@tccd_sk0[?,64]") != std::string::npos);
    CHECK(ir.find("reduce_sum.f32") != std::string::npos);

    // The plan: one native step whose run-time dim is named by its input (the output is [64]).
    absl::StatusOr<v1::Plan> plan = SymbolicKernelPlan(
        *sym, *lowering, {"kernels_cuda.so", "tccd-cuda-1", "tccd-cuda-sym-1", "cuda_pointwise"});
    REQUIRE(plan.ok());
    REQUIRE(plan->steps_size() == 1);
    CHECK(plan->steps(0).native().abi() == "tccd-cuda-sym-1");
    CHECK(plan->values(plan->steps(0).outputs(0)).sizes_size() == 1);
    absl::StatusOr<std::string> descriptor = WritePlanDescriptor(*plan);
    INFO(descriptor.status().ToString());
    CHECK(descriptor.ok());

    // The CUDA emitter compiles it (NVRTC, no driver needed).
    v1::Target target;
    target.set_device_type(v1::CUDA);
    target.set_cuda_cc_major(9);
    target.set_cuda_cc_minor(0);
    target.set_cuda_device_name("NVIDIA H100 80GB HBM3");
    v1::ShapeEnv facts;
    absl::StatusOr<Prepared> p =
        Prepare({.graph = &g, .target = &target, .mode = "default", .shape_env = &facts});
    if (!p.ok()) {
      WARN("no NVRTC here, CUDA target not prepared: " << p.status().message());
      continue;
    }
    absl::StatusOr<CompileOutput> out = Compile(*p);
    INFO(out.status().ToString());
    REQUIRE(out.ok());
    REQUIRE(out->plan.steps_size() == 1);
    REQUIRE(out->plan.steps(0).has_native());
    CHECK(out->plan.steps(0).native().abi() == "tccd-cuda-sym-1");
    std::string source;
    for (const ArtifactBytes& a : out->artifacts)
      if (a.kind == v1::TEXT) source += a.bytes;
    // Pointers, strides and the sizes (rank 2, two operands): 8 * 2 + 8 * 2 * 2 + 8 * 2.
    CHECK(source.find("_contig_param_0[64]") != std::string::npos);
  }

  {  // Two symbolic reduced dims ([s0, s1, 64] summed over both) are no column group of the
     // static partition: the sum stays an extern step, the mul before it a kernel of its own.
    const v1::Graph g = ColumnSumGraph({Sym("s0"), Sym("s1"), Int(64)},
                                       {Sym("64*s1"), Int(64), Int(1)}, v1::BFLOAT16, 2);
    absl::StatusOr<codegen::SymbolicGraph> sym = PrepareSymbolicGraph(g, {});
    REQUIRE(sym.ok());
    absl::StatusOr<SymbolicLowering> lowering =
        LowerSymbolicKernels(*sym, {.fusion = true, .rows = true});
    REQUIRE(lowering.ok());
    REQUIRE(lowering->groups.size() == 1);
    CHECK(lowering->groups[0].nodes == std::vector<int>{0});
    REQUIRE(lowering->schedule.size() == 2);
    CHECK(lowering->schedule[1].node == 1);
  }

  // Columns of run-time length: the column tiling is a compile-time choice, so extern.
  const v1::Graph cols = ColumnSumGraph({Int(8), Sym("s0")}, {Sym("s0"), Int(1)});
  absl::StatusOr<codegen::SymbolicGraph> sym = PrepareSymbolicGraph(cols, {});
  REQUIRE(sym.ok());
  absl::StatusOr<SymbolicLowering> lowering =
      LowerSymbolicKernels(*sym, {.fusion = true, .rows = true});
  REQUIRE(lowering.ok());
  bool refused = false;
  for (const std::string& why : lowering->rejected)
    refused |= why.find("a column of run-time length") != std::string::npos;
  CHECK(refused);
}

TEST_CASE("malformed symbolic graphs are INVALID_ARGUMENT naming the place", "[symbolic]") {
  v1::Graph bad_expr = ExampleGraph("4*s0 +");
  CHECK(absl::IsInvalidArgument(PrepareWith(bad_expr, {}).status()));
  v1::Graph unknown_fn = ExampleGraph("TruncToInt(s0)");
  CHECK(absl::IsInvalidArgument(PrepareWith(unknown_fn, {}).status()));
  v1::Graph forward_ref = ExampleGraph();
  forward_ref.mutable_nodes(0)->mutable_args(0)->mutable_ref()->set_node(2);
  absl::Status s = PrepareWith(forward_ref, {}).status();
  CHECK(absl::IsInvalidArgument(s));
  CHECK(s.message().find("node 0") != std::string::npos);
  v1::Graph bad_input = ExampleGraph();
  bad_input.mutable_nodes(0)->mutable_args(0)->mutable_ref()->set_node(-9);
  CHECK(absl::IsInvalidArgument(PrepareWith(bad_input, {}).status()));
  v1::Graph bad_output = ExampleGraph();
  bad_output.mutable_nodes(0)->mutable_args(0)->mutable_ref()->set_node(0);
  CHECK(absl::IsInvalidArgument(PrepareWith(bad_output, {}).status()));
  v1::Graph no_dtype = ExampleGraph();
  no_dtype.mutable_inputs(0)->set_dtype(v1::DTYPE_UNSPECIFIED);
  CHECK(absl::IsInvalidArgument(PrepareWith(no_dtype, {}).status()));
  v1::ShapeEnv long_guard;
  long_guard.add_guards(std::string(5000, 's'));
  CHECK(absl::IsInvalidArgument(PrepareWith(ExampleGraph(), long_guard).status()));
  // Static sizes, strides and offsets the static verifier would refuse (the request fuzzer's
  // storage offset of INT64_MAX overflowed the gemm matcher's alignment check), also as an
  // expression that folds to a constant.
  v1::Graph huge_offset = ExampleGraph();
  huge_offset.mutable_inputs(1)->mutable_storage_offset()->set_value(INT64_MAX);
  CHECK(absl::IsInvalidArgument(PrepareWith(huge_offset, {}).status()));
  v1::Graph negative_size = ExampleGraph();
  negative_size.mutable_inputs(1)->mutable_sizes(0)->set_value(-8);
  CHECK(absl::IsInvalidArgument(PrepareWith(negative_size, {}).status()));
  v1::Graph folded_stride = ExampleGraph();
  folded_stride.mutable_inputs(0)->mutable_strides(0)->set_expr("2 - 3");
  CHECK(absl::IsInvalidArgument(PrepareWith(folded_stride, {}).status()));
}

// Matmuls of a symbolic CUDA graph (symbolic_gemms.h). Inputs: x f32[s0, 8], w f32[4, 8],
// b f32[4], q f32[s1, s0, 16], k f32[s1, s0, 16], y f32[8, s0] with a row stride 2*s0 (not dense).
// Nodes: t(w) (6), addmm(b, x, t(w)) (7), transpose(k, 1, 2) (8), bmm(q, k^T) (9), mm(x, y) (10).
v1::Graph MatmulGraph() {
  v1::Graph g;
  *g.add_inputs() = Meta({Sym("s0"), Int(8)}, {Int(8), Int(1)});
  *g.add_inputs() = Meta({Int(4), Int(8)}, {Int(8), Int(1)});
  *g.add_inputs() = Meta({Int(4)}, {Int(1)});
  *g.add_inputs() = Meta({Sym("s1"), Sym("s0"), Int(16)}, {Sym("16*s0"), Int(16), Int(1)});
  *g.add_inputs() = Meta({Sym("s1"), Sym("s0"), Int(16)}, {Sym("16*s0"), Int(16), Int(1)});
  *g.add_inputs() = Meta({Int(8), Sym("s0")}, {Sym("2*s0"), Int(1)});
  auto node = [&](const char* target, std::vector<v1::Value> args, v1::TensorMeta out) {
    v1::Node* n = g.add_nodes();
    n->set_target(target);
    for (v1::Value& a : args) *n->add_args() = a;
    *n->add_outputs() = out;
  };
  auto integer = [](int64_t v) {
    v1::Value value;
    value.set_int_value(v);
    return value;
  };
  node("aten::t.default", {Ref(-2)}, Meta({Int(8), Int(4)}, {Int(1), Int(8)}));
  node("aten::addmm.default", {Ref(-3), Ref(-1), Ref(0)},
       Meta({Sym("s0"), Int(4)}, {Int(4), Int(1)}));
  node("aten::transpose.int", {Ref(-5), integer(1), integer(2)},
       Meta({Sym("s1"), Int(16), Sym("s0")}, {Sym("16*s0"), Int(1), Int(16)}));
  node("aten::bmm.default", {Ref(-4), Ref(2)},
       Meta({Sym("s1"), Sym("s0"), Sym("s0")}, {Sym("s0*s0"), Sym("s0"), Int(1)}));
  node("aten::mm.default", {Ref(-1), Ref(-6)}, Meta({Sym("s0"), Sym("s0")}, {Sym("s0"), Int(1)}));
  *g.add_outputs() = Ref(1);
  *g.add_outputs() = Ref(3);
  *g.add_outputs() = Ref(4);
  return OnCuda(g);
}

std::string Text(const google::protobuf::Message& m) {
  google::protobuf::TextFormat::Printer printer;
  printer.SetSingleLineMode(true);
  std::string text;
  printer.PrintToString(m, &text);
  return text;
}

TEST_CASE("CUDA matmuls with symbolic sizes become cuBLASLt gemms with run-time sizes",
          "[symbolic][gemm]") {
  absl::StatusOr<codegen::SymbolicGraph> sym = PrepareSymbolicGraph(MatmulGraph(), {});
  REQUIRE(sym.ok());
  absl::StatusOr<SymbolicLowering> lowering = LowerSymbolicKernels(*sym, {.fusion = true});
  REQUIRE(lowering.ok());
  // The weight's t kept a step of its own here (its absorption: the next test).
  CHECK(MatchSymbolicGemms(*sym, *lowering, {.transposes = false}) == 2);
  CHECK(lowering->elided.empty());
  REQUIRE(lowering->gemms.size() == 2);
  // addmm(b, x, w^T): D = Z^T [4 x s0] = (w^T)^T-as-stored [op T] x^T; bias epilogue.
  const SymbolicGemm& linear = lowering->gemms[0];
  CHECK(linear.spec.name == "tccd_sg0");
  CHECK(linear.spec.sized);
  CHECK((linear.spec.trans_a == 1 && linear.spec.trans_b == 0));
  CHECK(linear.spec.epilogue == kCublasEpilogueBias);
  CHECK(linear.node == 1);
  // m = N 4, n = M (x's size 0: operand B = 1, part 0, dim 0), k 8, lda 8, ldb 8, ldd 4.
  CHECK(linear.shape == std::vector<int64_t>{4, GemmDimRef(1, 0, 0), 8, 8, 8, 4, 1, 0, 0, 0});
  // bmm(q, k^T): k^T is column-major (op T, ld 16); batch and batch strides from the operands.
  const SymbolicGemm& scores = lowering->gemms[1];
  CHECK((scores.spec.trans_a == 1 && scores.spec.trans_b == 0));
  CHECK(scores.spec.epilogue == kCublasEpilogueDefault);
  CHECK(scores.shape == std::vector<int64_t>{GemmDimRef(0, 0, 2), GemmDimRef(1, 0, 1), 16, 16, 16,
                                             GemmDimRef(0, 0, 2), GemmDimRef(1, 0, 0),
                                             GemmDimRef(0, 1, 0), GemmDimRef(1, 1, 0),
                                             GemmDimRef(2, 1, 0)});
  // mm(x, y): y's row stride 2*s0 is not its row length s0 for every size: extern, with why.
  REQUIRE(lowering->rejected.size() == 1);
  CHECK(lowering->rejected[0] ==
        "matmul node 4 (aten::mm.default): an operand that is not a dense matrix for every size");

  absl::StatusOr<v1::Plan> plan = SymbolicKernelPlan(
      *sym, *lowering, {"kernels_cuda.so", "tccd-cuda-1", "tccd-cuda-sym-1", "cuda_pointwise"});
  REQUIRE(plan.ok());
  REQUIRE(plan->steps_size() == 5);
  CHECK(plan->steps(0).extern_call().target() == "aten::t.default");
  CHECK(Text(plan->steps(1)) ==
        "native { artifact: \"kernels_cuda.so\" symbol: \"tccd_sg0\" abi: "
        "\"tccd-cuda-sym-gemm-1\" shape: 4 shape: -33 shape: 8 shape: 8 shape: 8 shape: 4 "
        "shape: 1 shape: 0 shape: 0 shape: 0 inputs: 6 inputs: 0 inputs: 2 kernels { name: "
        "\"tccd_sg0\" kind: \"cublaslt_gemm\" ops: \"aten::addmm.default\" } } outputs: 7 "
        "release: 2 release: 6 ");
  CHECK(plan->steps(2).extern_call().target() == "aten::transpose.int");
  CHECK(Text(plan->steps(3)) ==
        "native { artifact: \"kernels_cuda.so\" symbol: \"tccd_sg1\" abi: "
        "\"tccd-cuda-sym-gemm-1\" shape: -3 shape: -34 shape: 16 shape: 16 shape: 16 shape: -3 "
        "shape: -33 shape: -17 shape: -49 shape: -81 inputs: 8 inputs: 3 kernels { name: "
        "\"tccd_sg1\" kind: \"cublaslt_gemm\" ops: \"aten::bmm.default\" } } outputs: 9 "
        "release: 3 release: 8 ");
  CHECK(plan->steps(4).extern_call().target() == "aten::mm.default");

  // The descriptor: each gemm a KERNEL step of rank 10 whose words are dim words (sizes, or
  // expressions of this call), layout OWN.
  absl::StatusOr<std::string> descriptor = WritePlanDescriptor(*plan);
  INFO(descriptor.status().ToString());
  REQUIRE(descriptor.ok());
  std::vector<int64_t> words(descriptor->size() / 8);
  std::memcpy(words.data(), descriptor->data(), descriptor->size());
  int gemms = 0;
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i] != TCCD_STEP_KERNEL || words[i + 1] != TCCD_ABI_CUDA_SYM_GEMM ||
        words[i + 2] != 15)  // strlen("kernels_cuda.so")
      continue;
    ++gemms;
    size_t at = i + 2;
    for (int str = 0; str < 2; ++str) at += 1 + (words[at] + 1 + 7) / 8;  // artifact, symbol
    REQUIRE(words[at] == TCCD_GEMM_DIMS);
    if (gemms == 1) {
      CHECK(words[at + 1] == 4);
      CHECK(words[at + 2] < 0);  // s0
      CHECK(std::vector<int64_t>(words.begin() + at + 3, words.begin() + at + 11) ==
            std::vector<int64_t>{8, 8, 8, 4, 1, 0, 0, 0});
    } else {
      CHECK(words[at + 1] < 0);
      CHECK(words[at + 1] == words[at + 6]);  // m and ldd: both s0, one expression
      CHECK(words[at + 3] == 16);
    }
  }
  CHECK(gemms == 2);
}

TEST_CASE("a gemm reads a matrix's t as the matrix itself; the t runs as no step",
          "[symbolic][gemm]") {
  absl::StatusOr<codegen::SymbolicGraph> sym = PrepareSymbolicGraph(MatmulGraph(), {});
  REQUIRE(sym.ok());
  absl::StatusOr<SymbolicLowering> lowering = LowerSymbolicKernels(*sym, {.fusion = true});
  REQUIRE(lowering.ok());
  CHECK(MatchSymbolicGemms(*sym, *lowering) == 2);
  // addmm(b, x, t(w)): A is w (graph input 1) with the same flags and numbers as for t(w).
  const SymbolicGemm& linear = lowering->gemms[0];
  CHECK(linear.inputs[0].node() == -2);
  CHECK((linear.spec.trans_a == 1 && linear.spec.trans_b == 0));
  CHECK(linear.shape == std::vector<int64_t>{4, GemmDimRef(1, 0, 0), 8, 8, 8, 4, 1, 0, 0, 0});
  // The transpose of k (a bmm operand, transpose.int of a 3-D tensor) is no t: still a view.
  CHECK(lowering->gemms[1].inputs[0].node() == 2);
  CHECK(lowering->elided == std::vector<int>{0});
  absl::StatusOr<v1::Plan> plan = SymbolicKernelPlan(
      *sym, *lowering, {"kernels_cuda.so", "tccd-cuda-1", "tccd-cuda-sym-1", "cuda_pointwise"});
  REQUIRE(plan.ok());
  INFO(Text(*plan));
  REQUIRE(plan->steps_size() == 4);
  CHECK(plan->steps(0).native().symbol() == "tccd_sg0");
  // Inputs: w (value 1), x (0), b (2); w released after its last reader like any input.
  CHECK(std::vector<int64_t>(plan->steps(0).native().inputs().begin(),
                             plan->steps(0).native().inputs().end()) ==
        std::vector<int64_t>{1, 0, 2});
  for (const v1::Step& step : plan->steps())
    CHECK((!step.has_extern_call() || step.extern_call().target() != "aten::t.default"));
  REQUIRE(WritePlanDescriptor(*plan).ok());

  // A t that something else reads (a graph output here) keeps its step; the gemm reads w all
  // the same.
  v1::Graph returned = MatmulGraph();
  *returned.add_outputs() = Ref(0);
  absl::StatusOr<codegen::SymbolicGraph> sym2 = PrepareSymbolicGraph(returned, {});
  REQUIRE(sym2.ok());
  absl::StatusOr<SymbolicLowering> kept = LowerSymbolicKernels(*sym2, {.fusion = true});
  REQUIRE(kept.ok());
  CHECK(MatchSymbolicGemms(*sym2, *kept) == 2);
  CHECK(kept->elided.empty());
  CHECK(kept->gemms[0].inputs[0].node() == -2);
  absl::StatusOr<v1::Plan> kept_plan = SymbolicKernelPlan(
      *sym2, *kept, {"kernels_cuda.so", "tccd-cuda-1", "tccd-cuda-sym-1", "cuda_pointwise"});
  REQUIRE(kept_plan.ok());
  CHECK(kept_plan->steps(0).extern_call().target() == "aten::t.default");
}

TEST_CASE("a gemm reads an activation's t with the words naming it renamed to the swapped dims",
          "[symbolic][gemm]") {
  // v f32[s0, 8], x f32[s0, 4]; mm(t(v), x) -> [8, 4] (a weight gradient's form).
  v1::Graph g;
  *g.add_inputs() = Meta({Sym("s0"), Int(8)}, {Int(8), Int(1)});
  *g.add_inputs() = Meta({Sym("s0"), Int(4)}, {Int(4), Int(1)});
  v1::Node* t = g.add_nodes();
  t->set_target("aten::t.default");
  *t->add_args() = Ref(-1);
  *t->add_outputs() = Meta({Int(8), Sym("s0")}, {Int(1), Int(8)});
  v1::Node* mm = g.add_nodes();
  mm->set_target("aten::mm.default");
  *mm->add_args() = Ref(0);
  *mm->add_args() = Ref(-2);
  *mm->add_outputs() = Meta({Int(8), Int(4)}, {Int(4), Int(1)});
  *g.add_outputs() = Ref(1);
  absl::StatusOr<codegen::SymbolicGraph> sym = PrepareSymbolicGraph(OnCuda(g), {});
  REQUIRE(sym.ok());
  for (const bool absorb : {false, true}) {
    INFO((absorb ? "absorbed" : "kept"));
    absl::StatusOr<SymbolicLowering> lowering = LowerSymbolicKernels(*sym, {.fusion = true});
    REQUIRE(lowering.ok());
    REQUIRE(MatchSymbolicGemms(*sym, *lowering, {.transposes = absorb}) == 1);
    const SymbolicGemm& gemm = lowering->gemms[0];
    // A = Y = x (row-major, ld 4), B = X = t(v) (column-major, ld 8: op T); k = s0 is t(v)'s
    // dim 1, or v's dim 0 once B is v.
    CHECK((gemm.spec.trans_a == 0 && gemm.spec.trans_b == 1));
    CHECK(gemm.inputs[1].node() == (absorb ? -1 : 0));
    CHECK(gemm.shape ==
          std::vector<int64_t>{4, 8, GemmDimRef(1, 0, absorb ? 0 : 1), 4, 8, 4, 1, 0, 0, 0});
    CHECK(lowering->schedule.size() == (absorb ? 1u : 2u));
    absl::StatusOr<v1::Plan> plan = SymbolicKernelPlan(
        *sym, *lowering, {"kernels_cuda.so", "tccd-cuda-1", "tccd-cuda-sym-1", "cuda_pointwise"});
    REQUIRE(plan.ok());
    CHECK(plan->steps_size() == (absorb ? 1 : 2));
    REQUIRE(WritePlanDescriptor(*plan).ok());
  }
}

TEST_CASE("nothing to match: a graph without matmuls keeps its schedule", "[symbolic][gemm]") {
  absl::StatusOr<codegen::SymbolicGraph> sym =
      PrepareSymbolicGraph(SoftmaxGraph({Sym("s0"), Int(64)}, {Int(64), Int(1)}), {});
  REQUIRE(sym.ok());
  absl::StatusOr<SymbolicLowering> lowering = LowerSymbolicKernels(*sym, {.fusion = false});
  REQUIRE(lowering.ok());
  const size_t units = lowering->schedule.size();
  CHECK(MatchSymbolicGemms(*sym, *lowering) == 0);
  CHECK(lowering->gemms.empty());
  CHECK(lowering->rejected.empty());
  CHECK(lowering->schedule.size() == units);
}

TEST_CASE(
    "an index op fused with pointwise ops in the static partition is peeled off: the pointwise "
    "ops still become a kernel",
    "[symbolic]") {
  // w: f32[50, 8]; ids: i64[s0]; y = embedding(w, ids) * 2 -> [s0, 8].
  v1::Graph g;
  *g.add_inputs() = Meta({Int(50), Int(8)}, {Int(8), Int(1)});
  *g.add_inputs() = Meta({Sym("s0")}, {Int(1)});
  g.mutable_inputs(1)->set_dtype(v1::INT64);
  v1::Node* embedding = g.add_nodes();
  embedding->set_target("aten::embedding.default");
  *embedding->add_args() = Ref(-1);
  *embedding->add_args() = Ref(-2);
  *embedding->add_outputs() = Meta({Sym("s0"), Int(8)}, {Int(8), Int(1)});
  v1::Node* mul = g.add_nodes();
  mul->set_target("aten::mul.Tensor");
  *mul->add_args() = Ref(0);
  mul->add_args()->set_float_value(2.0);
  *mul->add_outputs() = Meta({Sym("s0"), Int(8)}, {Int(8), Int(1)});
  *g.add_outputs() = Ref(1);
  for (const bool cuda : {false, true}) {
    INFO((cuda ? "CUDA" : "CPU"));
    absl::StatusOr<codegen::SymbolicGraph> sym = PrepareSymbolicGraph(cuda ? OnCuda(g) : g, {});
    REQUIRE(sym.ok());
    absl::StatusOr<SymbolicLowering> lowering =
        LowerSymbolicKernels(*sym, {.fusion = true, .rows = cuda, .embeddings = false});
    REQUIRE(lowering.ok());
    INFO((lowering->rejected.empty() ? "" : lowering->rejected[0]));
    CHECK(lowering->rejected.empty());
    REQUIRE(lowering->groups.size() == 1);
    CHECK(lowering->groups[0].nodes == std::vector<int>{1});
    REQUIRE(lowering->schedule.size() == 2);
    CHECK(lowering->schedule[0].node == 0);  // the embedding, an extern step first
    CHECK(lowering->schedule[1].group == 0);
    // With embedding kernels (the default) the peeled embedding is a gather kernel of its own.
    absl::StatusOr<SymbolicLowering> gathered =
        LowerSymbolicKernels(*sym, {.fusion = true, .rows = cuda});
    REQUIRE(gathered.ok());
    REQUIRE(gathered->groups.size() == 2);
    REQUIRE(gathered->schedule.size() == 2);
    CHECK(gathered->groups[gathered->schedule[0].group].nodes == std::vector<int>{0});
    CHECK(gathered->groups[gathered->schedule[1].group].nodes == std::vector<int>{1});
  }
}

TEST_CASE("an arange of a symbolic length is a kernel of its own storing its coordinate",
          "[symbolic][index]") {
  // w: f32[50, 8]; ids: i64[s0]; pos = arange(s0) -> i64[s0]; y = embedding(w, pos) -> [s0, 8];
  // returns (y, pos).
  v1::Graph g;
  *g.add_inputs() = Meta({Int(50), Int(8)}, {Int(8), Int(1)});
  *g.add_inputs() = Meta({Sym("s0")}, {Int(1)});
  g.mutable_inputs(1)->set_dtype(v1::INT64);
  v1::Node* arange = g.add_nodes();
  arange->set_target("aten::arange.default");
  arange->add_args()->set_sym_expr("s0");
  v1::NamedValue* dtype = arange->add_kwargs();
  dtype->set_name("dtype");
  dtype->mutable_value()->set_dtype(v1::INT64);
  *arange->add_outputs() = Meta({Sym("s0")}, {Int(1)});
  arange->mutable_outputs(0)->set_dtype(v1::INT64);
  v1::Node* embedding = g.add_nodes();
  embedding->set_target("aten::embedding.default");
  *embedding->add_args() = Ref(-1);
  *embedding->add_args() = Ref(0);
  *embedding->add_outputs() = Meta({Sym("s0"), Int(8)}, {Int(8), Int(1)});
  *g.add_outputs() = Ref(1);
  *g.add_outputs() = Ref(0);
  for (const bool cuda : {false, true}) {
    INFO((cuda ? "CUDA" : "CPU"));
    absl::StatusOr<codegen::SymbolicGraph> sym = PrepareSymbolicGraph(cuda ? OnCuda(g) : g, {});
    INFO(sym.status().ToString());
    REQUIRE(sym.ok());
    absl::StatusOr<SymbolicLowering> lowering =
        LowerSymbolicKernels(*sym, {.fusion = true, .rows = cuda});
    REQUIRE(lowering.ok());
    INFO((lowering->rejected.empty() ? "" : lowering->rejected[0]));
    CHECK(lowering->rejected.empty());
    REQUIRE(lowering->groups.size() == 2);
    REQUIRE(lowering->schedule.size() == 2);
    const SymbolicKernelGroup& k = lowering->groups[lowering->schedule[0].group];
    CHECK(k.nodes == std::vector<int>{0});
    CHECK(k.inputs.empty());
    CHECK(k.kernel.shape == std::vector<int64_t>{kRuntimeDim});
    CHECK(k.kernel.output_dtypes == std::vector<ir::DType>{ir::DType::kI64});
    CHECK(k.kernel.entries == KernelEntries::kStrided);
    CHECK(PrintPointwiseKernel(k.kernel).find("index") != std::string::npos);
    absl::StatusOr<v1::Plan> plan = SymbolicKernelPlan(*sym, *lowering);
    REQUIRE(plan.ok());
    REQUIRE(plan->steps(0).has_native());
    CHECK(plan->steps(0).native().abi() == "tccd-cpu-sym-1");
    CHECK(plan->steps(0).native().inputs_size() == 0);
    // Off: the arange an extern step, the embedding still a kernel.
    absl::StatusOr<SymbolicLowering> off =
        LowerSymbolicKernels(*sym, {.fusion = true, .rows = cuda, .aranges = false});
    REQUIRE(off.ok());
    REQUIRE(off->schedule.size() == 2);
    CHECK(off->schedule[0].group < 0);
    CHECK(off->schedule[0].node == 0);
    CHECK(off->groups.size() == 1);
  }
}

// A symbolic plan in text: value 0 the input x [s0, 8]; 1 = relu(x) by a kernel when
// `native`, else an extern relu; 2 = view(1, [s0, 2, 4]); 3 = transpose(2, 0, 1); returns 3
// (and 2 when `return_view`).
v1::Plan ViewChainPlan(bool native, bool return_view = false) {
  const std::string meta_x =
      "sizes { expr: \"s0\" } sizes { value: 8 } strides { value: 8 } strides { value: 1 } dtype: "
      "FLOAT32 device { type: CPU } ";
  const std::string meta_v =
      "sizes { expr: \"s0\" } sizes { value: 2 } sizes { value: 4 } strides { value: 8 } "
      "strides { value: 4 } strides { value: 1 } dtype: FLOAT32 device { type: CPU } ";
  const std::string meta_t =
      "sizes { value: 2 } sizes { expr: \"s0\" } sizes { value: 4 } strides { value: 4 } "
      "strides { value: 8 } strides { value: 1 } dtype: FLOAT32 device { type: CPU } ";
  const std::string relu =
      native ? "steps { native { artifact: \"kernels.so\" symbol: \"tccd_sk0\" abi: "
               "\"tccd-cpu-sym-1\" shape: -1 shape: 8 inputs: 0 } outputs: 1 release: 0 } "
             : "steps { extern_call { target: \"aten::relu.default\" args { ref { node: 0 } } } "
               "outputs: 1 release: 0 } ";
  const std::string text =
      "num_inputs: 1 values { " + meta_x + "} values { " + meta_x + "} values { " + meta_v +
      "} values { " + meta_t + "} " + relu +
      "steps { extern_call { target: \"aten::view.default\" args { ref { node: 1 } } args { list "
      "{ items { sym_expr: \"s0\" } items { int_value: 2 } items { int_value: 4 } } } } outputs: "
      "2 release: 1 } "
      "steps { extern_call { target: \"aten::transpose.int\" args { ref { node: 2 } } args { "
      "int_value: 0 } args { int_value: 1 } } outputs: 3 release: 2 } "
      "outputs { ref { node: 3 } }" +
      (return_view ? " outputs { ref { node: 2 } }" : "");
  v1::Plan plan;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(text, &plan));
  return plan;
}

TEST_CASE(
    "view chains over a kernel's output fold into one as_strided step; over an input or with a "
    "returned intermediate they stay",
    "[symbolic][views]") {
  v1::Plan plan = ViewChainPlan(/*native=*/true);
  CHECK(FoldSymbolicViewChains(plan) == 1);
  REQUIRE(plan.steps_size() == 2);
  CHECK(Text(plan.steps(0)).find("release: 0") != std::string::npos);
  CHECK(Text(plan.steps(1)) ==
        "extern_call { target: \"aten::as_strided.default\" args { ref { node: 1 } } args { list { "
        "items { int_value: 2 } items { sym_expr: \"s0\" } items { int_value: 4 } } } args { list "
        "{ items { int_value: 4 } items { int_value: 8 } items { int_value: 1 } } } args { "
        "int_value: 0 } } outputs: 3 release: 1 ");
  // The descriptor takes it (the expressions become dim words of the call).
  CHECK(WritePlanDescriptor(plan).ok());

  // Nothing to do: the root is a graph input (any layout may arrive) or an extern op's output
  // (its layout is ATen's), or the intermediate view is returned.
  for (const bool native : {false, true}) {
    v1::Plan unchanged = ViewChainPlan(native, /*return_view=*/native);
    const std::string before = Text(unchanged);
    CHECK(FoldSymbolicViewChains(unchanged) == 0);
    CHECK(Text(unchanged) == before);
  }
}

}  // namespace
}  // namespace tccd::codegen

namespace tccd::codegen {
namespace {

// table: f32[50, table_rows? 8]; ids: i64[s0, s1]; y = embedding(table, ids) f32[s0, s1, 8].
v1::Graph EmbeddingGraph(v1::Dim table_rows) {
  v1::Graph g;
  *g.add_inputs() = Meta({table_rows, Int(8)}, {Int(8), Int(1)});
  *g.add_inputs() = Meta({Sym("s0"), Sym("s1")}, {Sym("s1"), Int(1)});
  g.mutable_inputs(1)->set_dtype(v1::INT64);
  v1::Node* emb = g.add_nodes();
  emb->set_target("aten::embedding.default");
  *emb->add_args() = Ref(-1);
  *emb->add_args() = Ref(-2);
  *emb->add_outputs() = Meta({Sym("s0"), Sym("s1"), Int(8)}, {Sym("8*s1"), Int(8), Int(1)});
  *g.add_outputs() = Ref(0);
  return g;
}

TEST_CASE("an embedding with a static table is a gather kernel with run-time sizes",
          "[symbolic][index]") {
  absl::StatusOr<SymbolicGraph> sym = PrepareSymbolicGraph(EmbeddingGraph(Int(50)), {});
  REQUIRE(sym.ok());
  absl::StatusOr<SymbolicLowering> lowering = LowerSymbolicKernels(*sym, {.fusion = true});
  REQUIRE(lowering.ok());
  INFO(absl::StrJoin(lowering->rejected, "\n"));
  REQUIRE(lowering->groups.size() == 1);
  const PointwiseKernel& k = lowering->groups[0].kernel;
  const std::string ir = PrintPointwiseKernel(k);
  INFO(ir);
  CHECK(ir.find("@tccd_sk0[?,?,8]") != std::string::npos);
  CHECK(ir.find("gather") != std::string::npos);
  // The bounds check is the table's static row count.
  CHECK(ir.find("constant.i64 50") != std::string::npos);
  CHECK(k.entries == KernelEntries::kStrided);
  // The plan marks both inputs gather operands; the descriptor says so in the layout word.
  absl::StatusOr<v1::Plan> plan = SymbolicKernelPlan(*sym, *lowering);
  REQUIRE(plan.ok());
  REQUIRE(plan->steps_size() == 1);
  const v1::NativeCall& call = plan->steps(0).native();
  CHECK(call.abi() == "tccd-cpu-sym-1");
  REQUIRE(call.gather_inputs_size() == 2);
  CHECK(call.gather_inputs(0));
  CHECK(call.gather_inputs(1));
  absl::StatusOr<std::string> descriptor = WritePlanDescriptor(*plan);
  INFO(descriptor.status().ToString());
  REQUIRE(descriptor.ok());
  std::vector<int64_t> words(descriptor->size() / 8);
  std::memcpy(words.data(), descriptor->data(), words.size() * 8);
  const std::vector<int64_t> tail = {TCCD_LAYOUT_OWN_GATHER, 1, 1};
  CHECK(std::search(words.begin(), words.end(), tail.begin(), tail.end()) != words.end());

  // The knob (TCCD_DISABLE_PASSES=symbolic-embedding-kernels): ATen's embedding.
  absl::StatusOr<SymbolicLowering> off =
      LowerSymbolicKernels(*sym, {.fusion = true, .embeddings = false});
  REQUIRE(off.ok());
  CHECK(off->groups.empty());
  REQUIRE(off->schedule.size() == 1);
  CHECK(off->schedule[0].node == 0);
}

TEST_CASE("an embedding whose table has a symbolic size stays extern", "[symbolic][index]") {
  absl::StatusOr<SymbolicGraph> sym = PrepareSymbolicGraph(EmbeddingGraph(Sym("s2")), {});
  REQUIRE(sym.ok());
  absl::StatusOr<SymbolicLowering> lowering = LowerSymbolicKernels(*sym, {.fusion = true});
  REQUIRE(lowering.ok());
  CHECK(lowering->groups.empty());
  absl::StatusOr<v1::Plan> plan = SymbolicKernelPlan(*sym, *lowering);
  REQUIRE(plan.ok());
  for (const v1::Step& s : plan->steps()) CHECK(s.has_extern_call());
}

}  // namespace
}  // namespace tccd::codegen

namespace tccd::codegen {
namespace {

// a: f32[s0, 4], b: f32[s0, 6]; y = cat([a, b], dim) -> [s0, 10] (dim 1) or, with dim 0 and
// b [s1, 4], [s0 + s1, 4].
v1::Graph CatGraph(bool along_symbolic) {
  v1::Graph g;
  *g.add_inputs() = Meta({Sym("s0"), Int(4)}, {Int(4), Int(1)});
  *g.add_inputs() = along_symbolic ? Meta({Sym("s1"), Int(4)}, {Int(4), Int(1)})
                                   : Meta({Sym("s0"), Int(6)}, {Int(6), Int(1)});
  v1::Node* cat = g.add_nodes();
  cat->set_target("aten::cat.default");
  v1::ValueList* parts = cat->add_args()->mutable_list();
  parts->add_items()->mutable_ref()->set_node(-1);
  parts->add_items()->mutable_ref()->set_node(-2);
  cat->add_args()->set_int_value(along_symbolic ? 0 : -1);
  *cat->add_outputs() = along_symbolic ? Meta({Sym("s0 + s1"), Int(4)}, {Int(4), Int(1)})
                                       : Meta({Sym("s0"), Int(10)}, {Int(10), Int(1)});
  *g.add_outputs() = Ref(0);
  return g;
}

TEST_CASE(
    "a cat along a static dim is an index kernel with run-time sizes; along a symbolic "
    "dim, or turned off, it stays extern",
    "[symbolic][index]") {
  absl::StatusOr<SymbolicGraph> sym = PrepareSymbolicGraph(CatGraph(false), {});
  REQUIRE(sym.ok());
  absl::StatusOr<SymbolicLowering> lowering = LowerSymbolicKernels(*sym, {.fusion = true});
  REQUIRE(lowering.ok());
  INFO(absl::StrJoin(lowering->rejected, "\n"));
  REQUIRE(lowering->groups.size() == 1);
  const std::string ir = PrintPointwiseKernel(lowering->groups[0].kernel);
  INFO(ir);
  CHECK(ir.find("@tccd_sk0[?,10]") != std::string::npos);
  absl::StatusOr<v1::Plan> plan = SymbolicKernelPlan(*sym, *lowering);
  REQUIRE(plan.ok());
  REQUIRE(plan->steps_size() == 1);
  REQUIRE(plan->steps(0).native().gather_inputs_size() == 2);
  CHECK(plan->steps(0).native().gather_inputs(0));
  CHECK(plan->steps(0).native().gather_inputs(1));
  CHECK(WritePlanDescriptor(*plan).ok());

  absl::StatusOr<SymbolicLowering> off =
      LowerSymbolicKernels(*sym, {.fusion = true, .cats = false});
  REQUIRE(off.ok());
  CHECK(off->groups.empty());

  absl::StatusOr<SymbolicGraph> along = PrepareSymbolicGraph(CatGraph(true), {});
  REQUIRE(along.ok());
  absl::StatusOr<SymbolicLowering> extern_cat = LowerSymbolicKernels(*along, {.fusion = true});
  REQUIRE(extern_cat.ok());
  CHECK(extern_cat->groups.empty());
}

}  // namespace
}  // namespace tccd::codegen
