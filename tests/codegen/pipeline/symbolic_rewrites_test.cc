// Graph rewrites of symbolic graphs (codegen/symbolic_rewrites.h): graph in, graph out, sizes
// as expressions of the graph's symbols; then what the symbolic lowering makes of the result.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "codegen/kernel/pointwise_kernel.h"
#include "codegen/symbolic_kernels.h"
#include "codegen/symbolic_plan.h"
#include "codegen/symbolic_rewrites.h"
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

v1::TensorMeta Meta(std::vector<v1::Dim> sizes, std::vector<v1::Dim> strides,
                    v1::DType dtype = v1::BFLOAT16) {
  v1::TensorMeta m;
  for (auto& s : sizes) *m.add_sizes() = s;
  for (auto& s : strides) *m.add_strides() = s;
  *m.mutable_storage_offset() = Int(0);
  m.set_dtype(dtype);
  m.mutable_device()->set_type(v1::CUDA);
  return m;
}

v1::Value Ref(int node, int output = 0) {
  v1::Value v;
  v.mutable_ref()->set_node(node);
  v.mutable_ref()->set_output(output);
  return v;
}

std::string Text(const v1::Graph& g) {
  google::protobuf::TextFormat::Printer printer;
  printer.SetSingleLineMode(true);
  std::string text;
  printer.PrintToString(g, &text);
  return text;
}

// g: bf16 [s0, 64], x: bf16 [s0, 64], mean/rstd: f32 [s0, 1], w/b: bf16 [64];
// native_layer_norm_backward(g, x, [64], mean, rstd, w, b, mask) -> (dx, dw, db); then
// y = dx * 2; returns (y, dw, db).
v1::Graph LayerNormBackwardGraph(bool mask0 = true) {
  v1::Graph g;
  *g.add_inputs() = Meta({Sym("s0"), Int(64)}, {Int(64), Int(1)});
  *g.add_inputs() = Meta({Sym("s0"), Int(64)}, {Int(64), Int(1)});
  *g.add_inputs() = Meta({Sym("s0"), Int(1)}, {Int(1), Int(1)}, v1::FLOAT32);
  *g.add_inputs() = Meta({Sym("s0"), Int(1)}, {Int(1), Int(1)}, v1::FLOAT32);
  *g.add_inputs() = Meta({Int(64)}, {Int(1)});
  *g.add_inputs() = Meta({Int(64)}, {Int(1)});
  v1::Node* ln = g.add_nodes();
  ln->set_target("aten::native_layer_norm_backward.default");
  *ln->add_args() = Ref(-1);
  *ln->add_args() = Ref(-2);
  ln->add_args()->mutable_list()->add_items()->set_int_value(64);
  *ln->add_args() = Ref(-3);
  *ln->add_args() = Ref(-4);
  *ln->add_args() = Ref(-5);
  *ln->add_args() = Ref(-6);
  v1::ValueList* mask = ln->add_args()->mutable_list();
  mask->add_items()->set_bool_value(mask0);
  mask->add_items()->set_bool_value(true);
  mask->add_items()->set_bool_value(true);
  *ln->add_outputs() = Meta({Sym("s0"), Int(64)}, {Int(64), Int(1)});
  *ln->add_outputs() = Meta({Int(64)}, {Int(1)});
  *ln->add_outputs() = Meta({Int(64)}, {Int(1)});
  v1::Node* mul = g.add_nodes();
  mul->set_target("aten::mul.Tensor");
  *mul->add_args() = Ref(0, 0);
  mul->add_args()->set_float_value(2.0);
  *mul->add_outputs() = Meta({Sym("s0"), Int(64)}, {Int(64), Int(1)});
  *g.add_outputs() = Ref(1);
  *g.add_outputs() = Ref(0, 1);
  *g.add_outputs() = Ref(0, 2);
  return g;
}

// grad: bf16 [s0, s1, 16] (or `dtype`), ids: i64 [s0, s1];
// embedding_dense_backward(grad, ids, 50, padding_idx, false) -> [50, 16]; returns it.
v1::Graph EmbeddingBackwardGraph(int64_t padding_idx = -1, v1::DType dtype = v1::BFLOAT16) {
  v1::Graph g;
  *g.add_inputs() =
      Meta({Sym("s0"), Sym("s1"), Int(16)}, {Sym("16*s1"), Int(16), Int(1)}, dtype);
  *g.add_inputs() = Meta({Sym("s0"), Sym("s1")}, {Sym("s1"), Int(1)}, v1::INT64);
  v1::Node* bw = g.add_nodes();
  bw->set_target("aten::embedding_dense_backward.default");
  *bw->add_args() = Ref(-1);
  *bw->add_args() = Ref(-2);
  bw->add_args()->set_int_value(50);
  bw->add_args()->set_int_value(padding_idx);
  bw->add_args()->set_bool_value(false);
  *bw->add_outputs() = Meta({Int(50), Int(16)}, {Int(16), Int(1)}, dtype);
  *g.add_outputs() = Ref(0);
  return g;
}

SymbolicGraph Prepared(const v1::Graph& g) {
  absl::StatusOr<SymbolicGraph> sym = PrepareSymbolicGraph(g, {});
  INFO(sym.status().ToString());
  REQUIRE(sym.ok());
  return *std::move(sym);
}

TEST_CASE("a layer norm backward splits into its row half and its parameter half",
          "[symbolic][rewrites]") {
  SymbolicGraph sym = Prepared(LayerNormBackwardGraph());
  absl::StatusOr<int> n = RewriteSymbolicGraph(sym, {});
  REQUIRE(n.ok());
  CHECK(*n == 1);
  const v1::Graph& g = sym.graph;
  REQUIRE(g.nodes_size() == 3);
  auto mask = [&](int node) {
    std::string bits;
    for (const v1::Value& b : g.nodes(node).args(7).list().items())
      bits += b.bool_value() ? "1" : "0";
    return bits;
  };
  CHECK(g.nodes(0).target() == "aten::native_layer_norm_backward.default");
  CHECK(g.nodes(1).target() == "aten::native_layer_norm_backward.default");
  CHECK(mask(0) == "100");
  CHECK(mask(1) == "011");
  // The halves' masked-off outputs are 0-element placeholders; the others keep their metas.
  CHECK(g.nodes(0).outputs(0).sizes(0).expr() == "s0");
  CHECK(g.nodes(0).outputs(1).sizes_size() == 1);
  CHECK(g.nodes(0).outputs(1).sizes(0).value() == 0);
  CHECK(g.nodes(1).outputs(0).sizes(0).value() == 0);
  CHECK(g.nodes(1).outputs(1).sizes(0).value() == 64);
  // The mul reads the row half; the parameter gradients come from the second half.
  CHECK(g.nodes(2).args(0).ref().node() == 0);
  CHECK(g.outputs(0).ref().node() == 2);
  CHECK(g.outputs(1).ref().node() == 1);
  CHECK(g.outputs(1).ref().output() == 1);
  CHECK(g.outputs(2).ref().node() == 1);
  CHECK(g.outputs(2).ref().output() == 2);

  // On CUDA the halves become a row kernel with run-time rows (the mul its epilogue) and a
  // column kernel over the run-time row count: no extern step left.
  absl::StatusOr<SymbolicLowering> lowering =
      LowerSymbolicKernels(sym, {.fusion = true, .rows = true});
  REQUIRE(lowering.ok());
  INFO((lowering->rejected.empty() ? "" : lowering->rejected[0]));
  CHECK(lowering->rejected.empty());
  REQUIRE(lowering->groups.size() == 2);
  int rows = 0, columns = 0;
  for (const SymbolicKernelGroup& group : lowering->groups) {
    CHECK(HasRuntimeShape(group.kernel));
    rows += group.kernel.is_row_reduction() && !group.kernel.is_column_reduction();
    columns += group.kernel.is_column_reduction();
  }
  CHECK(rows == 1);
  CHECK(columns == 1);
  for (const SymbolicUnit& unit : lowering->schedule) CHECK(unit.group >= 0);
}

TEST_CASE(
    "nothing to split: a layer norm backward without grad_input, one over a symbolic dim, a graph "
    "without one",
    "[symbolic][rewrites]") {
  for (const int variant : {0, 1, 2}) {
    v1::Graph in = LayerNormBackwardGraph(/*mask0=*/variant != 0);
    if (variant == 1) {
      // Normalized over a symbolic dim: [4, s0] rows of run-time length, parameters [s0].
      for (int i : {0, 1}) *in.mutable_inputs(i) = Meta({Int(4), Sym("s0")}, {Sym("s0"), Int(1)});
      for (int i : {2, 3}) *in.mutable_inputs(i) = Meta({Int(4), Int(1)}, {Int(1), Int(1)}, v1::FLOAT32);
      for (int i : {4, 5}) *in.mutable_inputs(i) = Meta({Sym("s0")}, {Int(1)});
      v1::Node& ln = *in.mutable_nodes(0);
      *ln.mutable_outputs(0) = Meta({Int(4), Sym("s0")}, {Sym("s0"), Int(1)});
      *ln.mutable_outputs(1) = Meta({Sym("s0")}, {Int(1)});
      *ln.mutable_outputs(2) = Meta({Sym("s0")}, {Int(1)});
      *in.mutable_nodes(1)->mutable_outputs(0) = Meta({Int(4), Sym("s0")}, {Sym("s0"), Int(1)});
      in.mutable_nodes(0)->mutable_args(2)->mutable_list()->mutable_items(0)->set_sym_expr("s0");
    }
    if (variant == 2) in = EmbeddingBackwardGraph();
    SymbolicGraph sym = Prepared(in);
    const std::string before = Text(sym.graph);
    absl::StatusOr<int> n =
        RewriteSymbolicGraph(sym, {.layer_norm_backward_split = true, .embedding_backward = false});
    REQUIRE(n.ok());
    CHECK(*n == 0);
    CHECK(Text(sym.graph) == before);
  }
}

TEST_CASE("an embedding gradient becomes scatter_add over f32 with sizes of the graph's symbols",
          "[symbolic][rewrites]") {
  SymbolicGraph sym = Prepared(EmbeddingBackwardGraph());
  absl::StatusOr<int> n = RewriteSymbolicGraph(sym, {});
  REQUIRE(n.ok());
  CHECK(*n == 1);
  const v1::Graph& g = sym.graph;
  INFO(Text(g));
  std::vector<std::string> targets;
  for (const v1::Node& node : g.nodes()) targets.push_back(node.target());
  CHECK(targets == std::vector<std::string>{"aten::_to_copy.default", "aten::view.default",
                                            "aten::reshape.default", "aten::expand.default",
                                            "aten::new_zeros.default", "aten::scatter_add.default",
                                            "aten::_to_copy.default"});
  // f32(grad) keeps grad's sizes, contiguous; the flat views have the product of the index dims.
  const v1::TensorMeta& cast = g.nodes(0).outputs(0);
  CHECK(cast.dtype() == v1::FLOAT32);
  CHECK(cast.sizes(1).expr() == "s1");
  CHECK(cast.strides(0).kind_case() == v1::Dim::kExpr);
  CHECK(cast.strides(2).value() == 1);
  const v1::TensorMeta& flat = g.nodes(1).outputs(0);
  REQUIRE(flat.sizes_size() == 2);
  REQUIRE(flat.sizes(0).kind_case() == v1::Dim::kExpr);
  CHECK(flat.sizes(0).expr() == "(s0*s1)");
  CHECK(flat.sizes(1).value() == 16);
  CHECK(flat.strides(0).value() == 16);
  // The indices as a column [N, 1], expanded along E with stride 0.
  CHECK(g.nodes(2).outputs(0).sizes(0).expr() == flat.sizes(0).expr());
  CHECK(g.nodes(2).outputs(0).dtype() == v1::INT64);
  const v1::TensorMeta& index = g.nodes(3).outputs(0);
  CHECK(index.sizes(1).value() == 16);
  CHECK(index.strides(1).value() == 0);
  // scatter_add(zeros, 0, index, src) into f32 [50, 16], then the result's dtype.
  const v1::Node& add = g.nodes(5);
  CHECK(add.args(0).ref().node() == 4);
  CHECK(add.args(1).int_value() == 0);
  CHECK(add.args(2).ref().node() == 3);
  CHECK(add.args(3).ref().node() == 1);
  CHECK(add.outputs(0).dtype() == v1::FLOAT32);
  CHECK(g.nodes(6).outputs(0).dtype() == v1::BFLOAT16);
  CHECK(g.outputs(0).ref().node() == 6);

  // The casts are kernels (the first one with run-time sizes), the rest extern steps.
  absl::StatusOr<SymbolicLowering> lowering =
      LowerSymbolicKernels(sym, {.fusion = true, .rows = true});
  REQUIRE(lowering.ok());
  CHECK(lowering->groups.size() == 2);
}

TEST_CASE("an f32 embedding gradient needs no final cast; 1-D indices are unsqueezed",
          "[symbolic][rewrites]") {
  v1::Graph in = EmbeddingBackwardGraph(-1, v1::FLOAT32);
  // 1-D indices of stride 2: grad [s0, 16], ids [s0].
  *in.mutable_inputs(0) = Meta({Sym("s0"), Int(16)}, {Int(16), Int(1)}, v1::FLOAT32);
  *in.mutable_inputs(1) = Meta({Sym("s0")}, {Int(2)}, v1::INT64);
  SymbolicGraph sym = Prepared(in);
  absl::StatusOr<int> n = RewriteSymbolicGraph(sym, {});
  REQUIRE(n.ok());
  CHECK(*n == 1);
  std::vector<std::string> targets;
  for (const v1::Node& node : sym.graph.nodes()) targets.push_back(node.target());
  CHECK(targets == std::vector<std::string>{"aten::_to_copy.default", "aten::view.default",
                                            "aten::unsqueeze.default", "aten::expand.default",
                                            "aten::new_zeros.default",
                                            "aten::scatter_add.default"});
  CHECK(sym.graph.nodes(1).outputs(0).sizes(0).expr() == "s0");
  CHECK(sym.graph.nodes(2).args(0).ref().node() == -2);
  // torch's strides: the unsqueezed column keeps the input's stride, the new dim 1; the expand 0.
  CHECK(sym.graph.nodes(2).outputs(0).strides(0).value() == 2);
  CHECK(sym.graph.nodes(2).outputs(0).strides(1).value() == 1);
  CHECK(sym.graph.nodes(3).outputs(0).strides(0).value() == 2);
  CHECK(sym.graph.nodes(3).outputs(0).strides(1).value() == 0);
  CHECK(sym.graph.outputs(0).ref().node() == 5);
}

TEST_CASE(
    "embedding gradients stay ATen's with a padding_idx, int32 indices, under deterministic "
    "algorithms or when turned off",
    "[symbolic][rewrites]") {
  struct Case {
    int64_t padding_idx;
    SymbolicRewriteOptions options;
  };
  for (const Case& c : {Case{3, {}}, Case{-1, {.deterministic = true}},
                        Case{-1, {.embedding_backward = false}}, Case{-2, {}}}) {
    v1::Graph in = EmbeddingBackwardGraph(c.padding_idx == -2 ? -1 : c.padding_idx);
    // -2: int32 indices (scatter_add takes int64 only).
    if (c.padding_idx == -2) in.mutable_inputs(1)->set_dtype(v1::INT32);
    SymbolicGraph sym = Prepared(in);
    const std::string before = Text(sym.graph);
    absl::StatusOr<int> n = RewriteSymbolicGraph(sym, c.options);
    REQUIRE(n.ok());
    CHECK(*n == 0);
    CHECK(Text(sym.graph) == before);
  }
}

}  // namespace
}  // namespace tccd::codegen

namespace tccd::codegen {
namespace {

// x: bf16 [s0, 12] (or [12, s0] split along its symbolic dim 1); split(x, 4, dim) -> 3 parts;
// returns the parts in reverse order.
v1::Graph SplitGraph(bool symbolic_dim = false) {
  v1::Graph g;
  const int dim = symbolic_dim ? 1 : -1;
  *g.add_inputs() = symbolic_dim ? Meta({Int(12), Sym("s0")}, {Sym("s0"), Int(1)})
                                 : Meta({Sym("s0"), Int(12)}, {Int(12), Int(1)});
  v1::Node* split = g.add_nodes();
  split->set_target("aten::split.Tensor");
  *split->add_args() = Ref(-1);
  split->add_args()->set_int_value(4);
  split->add_args()->set_int_value(dim);
  for (int k = 0; k < 3; ++k) {
    v1::TensorMeta part = symbolic_dim ? Meta({Int(12), Int(4)}, {Sym("s0"), Int(1)})
                                       : Meta({Sym("s0"), Int(4)}, {Int(12), Int(1)});
    *part.mutable_storage_offset() = Int(4 * k);
    *split->add_outputs() = part;
  }
  for (int k = 2; k >= 0; --k) *g.add_outputs() = Ref(0, k);
  return g;
}

TEST_CASE("a split along a static dim becomes slice views with the parts' metas",
          "[symbolic][rewrites]") {
  SymbolicGraph sym = Prepared(SplitGraph());
  absl::StatusOr<int> n = RewriteSymbolicGraph(sym, {});
  REQUIRE(n.ok());
  CHECK(*n == 1);
  const v1::Graph& g = sym.graph;
  INFO(Text(g));
  REQUIRE(g.nodes_size() == 3);
  for (int k = 0; k < 3; ++k) {
    const v1::Node& slice = g.nodes(k);
    CHECK(slice.target() == "aten::slice.Tensor");
    CHECK(slice.args(0).ref().node() == -1);
    CHECK(slice.args(1).int_value() == 1);
    CHECK(slice.args(2).int_value() == 4 * k);
    CHECK(slice.args(3).int_value() == 4 * k + 4);
    CHECK(slice.args(4).int_value() == 1);
    CHECK(slice.outputs(0).storage_offset().value() == 4 * k);
    CHECK(slice.outputs(0).sizes(0).expr() == "s0");
    // The graph's outputs, in their order (parts 2, 1, 0), each its slice's output 0.
    CHECK(g.outputs(2 - k).ref().node() == k);
    CHECK(g.outputs(2 - k).ref().output() == 0);
  }
}

TEST_CASE("nothing to slice: a split along a symbolic dim, or turned off", "[symbolic][rewrites]") {
  for (const bool symbolic_dim : {true, false}) {
    SymbolicGraph sym = Prepared(SplitGraph(symbolic_dim));
    const std::string before = Text(sym.graph);
    absl::StatusOr<int> n = RewriteSymbolicGraph(sym, {.split_as_slices = symbolic_dim});
    REQUIRE(n.ok());
    CHECK(*n == 0);
    CHECK(Text(sym.graph) == before);
  }
}

}  // namespace
}  // namespace tccd::codegen

namespace tccd::codegen {
namespace {

TEST_CASE("with scatter kernels an embedding gradient is one scatter kernel with run-time sizes",
          "[symbolic][rewrites][index]") {
  SymbolicGraph sym = Prepared(EmbeddingBackwardGraph(/*padding_idx=*/0));
  absl::StatusOr<int> n = RewriteSymbolicGraph(sym, {.embedding_backward_kernel = true});
  REQUIRE(n.ok());
  CHECK(*n == 1);
  const v1::Graph& g = sym.graph;
  INFO(Text(g));
  REQUIRE(g.nodes_size() == 2);
  CHECK(g.nodes(0).target() == "tccd::embedding_scatter_add.default");
  CHECK(g.nodes(0).args(0).ref().node() == -1);
  CHECK(g.nodes(0).args(1).ref().node() == -2);
  CHECK(g.nodes(0).args(2).int_value() == 50);
  CHECK(g.nodes(0).args(3).int_value() == 0);  // padding_idx, masked by the kernel
  CHECK(g.nodes(0).outputs(0).dtype() == v1::FLOAT32);
  CHECK(g.nodes(1).target() == "aten::_to_copy.default");
  CHECK(g.nodes(1).outputs(0).dtype() == v1::BFLOAT16);

  // A scatter kernel over grad's sizes (run-time dims), then the cast (static sizes).
  absl::StatusOr<SymbolicLowering> lowering =
      LowerSymbolicKernels(sym, {.fusion = true, .rows = true});
  REQUIRE(lowering.ok());
  INFO((lowering->rejected.empty() ? "" : lowering->rejected[0]));
  REQUIRE(lowering->groups.size() == 2);
  REQUIRE(lowering->schedule.size() == 2);
  const PointwiseKernel& scatter = lowering->groups[lowering->schedule[0].group].kernel;
  CHECK(HasScatter(scatter));
  CHECK(scatter.shape == std::vector<int64_t>{kRuntimeDim, kRuntimeDim, 16});
  CHECK(scatter.scatter_elements == 50 * 16);
  CHECK(scatter.entries == KernelEntries::kStrided);
  absl::StatusOr<v1::Plan> plan = SymbolicKernelPlan(
      sym, *lowering, {"kernels_cuda.so", "tccd-cuda-1", "tccd-cuda-sym-1", "cuda_pointwise"});
  REQUIRE(plan.ok());
  const v1::NativeCall& call = plan->steps(0).native();
  CHECK(call.abi() == "tccd-cuda-sym-1");
  REQUIRE(call.scatter_outputs_size() == 1);
  CHECK(call.scatter_outputs(0));
  // grad is loaded (aligned to the space), the indices gathered.
  REQUIRE(call.gather_inputs_size() == 2);
  for (int i = 0; i < 2; ++i)
    CHECK(call.gather_inputs(i) == (plan->values(call.inputs(i)).dtype() == v1::INT64));

  // Off (the default, and the CPU): the scatter_add form.
  SymbolicGraph off = Prepared(EmbeddingBackwardGraph());
  REQUIRE(RewriteSymbolicGraph(off, {}).ok());
  for (const v1::Node& node : off.graph.nodes())
    CHECK(node.target() != "tccd::embedding_scatter_add.default");
}

// The position embedding's gradient: g: bf16 [s0, s1, 16], pos: i64 [s1];
// s = sum(g, [0], keepdim) [1, s1, 16]; v = view(s, [s1, 16]);
// embedding_dense_backward(v, pos, 50, -1, false) -> [50, 16]; returns it (and s when
// `sum_read_elsewhere`).
v1::Graph PositionEmbeddingBackwardGraph(bool sum_read_elsewhere = false) {
  v1::Graph g;
  *g.add_inputs() = Meta({Sym("s0"), Sym("s1"), Int(16)}, {Sym("16*s1"), Int(16), Int(1)});
  *g.add_inputs() = Meta({Sym("s1")}, {Int(1)}, v1::INT64);
  v1::Node* sum = g.add_nodes();
  sum->set_target("aten::sum.dim_IntList");
  *sum->add_args() = Ref(-1);
  sum->add_args()->mutable_list()->add_items()->set_int_value(0);
  sum->add_args()->set_bool_value(true);
  *sum->add_outputs() = Meta({Int(1), Sym("s1"), Int(16)}, {Sym("16*s1"), Int(16), Int(1)});
  v1::Node* view = g.add_nodes();
  view->set_target("aten::view.default");
  *view->add_args() = Ref(0);
  v1::ValueList* sizes = view->add_args()->mutable_list();
  sizes->add_items()->set_sym_expr("s1");
  sizes->add_items()->set_int_value(16);
  *view->add_outputs() = Meta({Sym("s1"), Int(16)}, {Int(16), Int(1)});
  v1::Node* bw = g.add_nodes();
  bw->set_target("aten::embedding_dense_backward.default");
  *bw->add_args() = Ref(1);
  *bw->add_args() = Ref(-2);
  bw->add_args()->set_int_value(50);
  bw->add_args()->set_int_value(-1);
  bw->add_args()->set_bool_value(false);
  *bw->add_outputs() = Meta({Int(50), Int(16)}, {Int(16), Int(1)});
  *g.add_outputs() = Ref(2);
  if (sum_read_elsewhere) *g.add_outputs() = Ref(0);
  return g;
}

TEST_CASE("a batch-summed embedding gradient scatters the unsummed gradient, the sum dropped",
          "[symbolic][rewrites][index]") {
  SymbolicGraph sym = Prepared(PositionEmbeddingBackwardGraph());
  absl::StatusOr<int> n = RewriteSymbolicGraph(sym, {.embedding_backward_kernel = true});
  REQUIRE(n.ok());
  CHECK(*n == 1);
  const v1::Graph& g = sym.graph;
  INFO(Text(g));
  // expand(pos, [s0, -1]), the scatter of the input gradient itself, the cast; no sum, no view.
  REQUIRE(g.nodes_size() == 3);
  const v1::Node& expand = g.nodes(0);
  CHECK(expand.target() == "aten::expand.default");
  CHECK(expand.args(0).ref().node() == -2);
  REQUIRE(expand.args(1).list().items_size() == 2);
  CHECK(expand.args(1).list().items(0).sym_expr() == "s0");
  CHECK(expand.args(1).list().items(1).int_value() == -1);
  const v1::TensorMeta& idx = expand.outputs(0);
  REQUIRE(idx.sizes_size() == 2);
  CHECK(idx.sizes(0).expr() == "s0");
  CHECK(idx.sizes(1).expr() == "s1");
  CHECK(idx.strides(0).value() == 0);
  CHECK(idx.strides(1).value() == 1);
  CHECK(g.nodes(1).target() == "tccd::embedding_scatter_add.default");
  CHECK(g.nodes(1).args(0).ref().node() == -1);
  CHECK(g.nodes(1).args(1).ref().node() == 0);
  CHECK(g.nodes(2).target() == "aten::_to_copy.default");
  REQUIRE(g.outputs_size() == 1);
  CHECK(g.outputs(0).ref().node() == 2);

  // The lowering: the scatter kernel over the [s0, s1, 16] gradient, the expand a view step.
  absl::StatusOr<SymbolicLowering> lowering =
      LowerSymbolicKernels(sym, {.fusion = true, .rows = true});
  REQUIRE(lowering.ok());
  INFO((lowering->rejected.empty() ? "" : lowering->rejected[0]));
  int scatters = 0;
  for (const SymbolicKernelGroup& group : lowering->groups)
    if (HasScatter(group.kernel)) {
      ++scatters;
      CHECK(group.kernel.shape == std::vector<int64_t>{kRuntimeDim, kRuntimeDim, 16});
    }
  CHECK(scatters == 1);

  // The index_add form (no scatter kernels) takes the expanded indices too: reshaped to a column.
  SymbolicGraph extern_form = Prepared(PositionEmbeddingBackwardGraph());
  REQUIRE(RewriteSymbolicGraph(extern_form, {}).ok());
  bool sum_left = false, scatter_add = false;
  for (const v1::Node& node : extern_form.graph.nodes()) {
    sum_left |= node.target() == "aten::sum.dim_IntList";
    scatter_add |= node.target() == "aten::scatter_add.default";
  }
  CHECK(scatter_add);
  CHECK_FALSE(sum_left);
  CHECK(extern_form.graph.nodes(0).target() == "aten::expand.default");
  CHECK(extern_form.graph.nodes(1).target() == "aten::_to_copy.default");
  CHECK(extern_form.graph.nodes(1).args(0).ref().node() == -1);
}

TEST_CASE("nothing to fold: the sum read elsewhere stays, or the fold turned off",
          "[symbolic][rewrites][index]") {
  // Read elsewhere: folded, but the sum (and only it: the view is unread) stays for its reader.
  SymbolicGraph shared = Prepared(PositionEmbeddingBackwardGraph(/*sum_read_elsewhere=*/true));
  REQUIRE(RewriteSymbolicGraph(shared, {.embedding_backward_kernel = true}).ok());
  INFO(Text(shared.graph));
  REQUIRE(shared.graph.nodes_size() == 4);
  CHECK(shared.graph.nodes(0).target() == "aten::sum.dim_IntList");
  CHECK(shared.graph.nodes(1).target() == "aten::expand.default");
  CHECK(shared.graph.nodes(2).args(0).ref().node() == -1);
  REQUIRE(shared.graph.outputs_size() == 2);
  CHECK(shared.graph.outputs(1).ref().node() == 0);

  // Off: the scatter reads the view of the sum, as before.
  SymbolicGraph off = Prepared(PositionEmbeddingBackwardGraph());
  REQUIRE(RewriteSymbolicGraph(
              off, {.embedding_backward_kernel = true, .fold_embedding_grad_sum = false})
              .ok());
  INFO(Text(off.graph));
  REQUIRE(off.graph.nodes_size() == 4);
  CHECK(off.graph.nodes(0).target() == "aten::sum.dim_IntList");
  CHECK(off.graph.nodes(1).target() == "aten::view.default");
  CHECK(off.graph.nodes(2).target() == "tccd::embedding_scatter_add.default");
  CHECK(off.graph.nodes(2).args(0).ref().node() == 1);

  // A gradient that is no sum (the token embedding's): unchanged by the fold.
  SymbolicGraph plain = Prepared(EmbeddingBackwardGraph());
  REQUIRE(RewriteSymbolicGraph(plain, {.embedding_backward_kernel = true}).ok());
  REQUIRE(plain.graph.nodes_size() == 2);
  CHECK(plain.graph.nodes(0).args(0).ref().node() == -1);
  CHECK(plain.graph.nodes(0).args(1).ref().node() == -2);
}

// w: bf16 [16, 32] (a graph input); a = t(w) [32, 16]; b = t(a) [16, 32];
// y = mm(g, b) with g: bf16 [s0, 16]; returns y
// (and b when `return_b`, a when `read_a`).
v1::Graph DoubleTransposeGraph(bool return_b = false, bool read_a = false) {
  v1::Graph g;
  *g.add_inputs() = Meta({Int(16), Int(32)}, {Int(32), Int(1)});
  *g.add_inputs() = Meta({Sym("s0"), Int(16)}, {Int(16), Int(1)});
  v1::Node* a = g.add_nodes();
  a->set_target("aten::t.default");
  *a->add_args() = Ref(-1);
  *a->add_outputs() = Meta({Int(32), Int(16)}, {Int(1), Int(32)});
  v1::Node* t2 = g.add_nodes();
  t2->set_target("aten::t.default");
  *t2->add_args() = Ref(0);
  *t2->add_outputs() = Meta({Int(16), Int(32)}, {Int(32), Int(1)});
  v1::Node* mm = g.add_nodes();
  mm->set_target("aten::mm.default");
  *mm->add_args() = Ref(-2);
  *mm->add_args() = Ref(1);
  *mm->add_outputs() = Meta({Sym("s0"), Int(32)}, {Int(32), Int(1)});
  *g.add_outputs() = Ref(2);
  if (return_b) *g.add_outputs() = Ref(1);
  if (read_a) *g.add_outputs() = Ref(0);
  return g;
}

TEST_CASE("t(t(w)) is read as w, the inner t dropped", "[symbolic][rewrites]") {
  SymbolicGraph sym = Prepared(DoubleTransposeGraph());
  absl::StatusOr<int> n = RewriteSymbolicGraph(sym, {});
  REQUIRE(n.ok());
  CHECK(*n == 1);
  INFO(Text(sym.graph));
  REQUIRE(sym.graph.nodes_size() == 1);
  CHECK(sym.graph.nodes(0).target() == "aten::mm.default");
  CHECK(sym.graph.nodes(0).args(1).ref().node() == -1);
  CHECK(sym.graph.outputs(0).ref().node() == 0);

  // The inner t read elsewhere: kept for that reader; the mm still reads w.
  SymbolicGraph shared = Prepared(DoubleTransposeGraph(false, /*read_a=*/true));
  REQUIRE(RewriteSymbolicGraph(shared, {}).ok());
  INFO(Text(shared.graph));
  REQUIRE(shared.graph.nodes_size() == 2);
  CHECK(shared.graph.nodes(0).target() == "aten::t.default");
  CHECK(shared.graph.nodes(1).args(1).ref().node() == -1);
  CHECK(shared.graph.outputs(1).ref().node() == 0);
}

TEST_CASE("nothing to fold: a double transpose returned by the graph, or the knob off",
          "[symbolic][rewrites]") {
  SymbolicGraph returned = Prepared(DoubleTransposeGraph(/*return_b=*/true));
  absl::StatusOr<int> n = RewriteSymbolicGraph(returned, {});
  REQUIRE(n.ok());
  CHECK(*n == 0);
  CHECK(returned.graph.nodes_size() == 3);
  SymbolicGraph off = Prepared(DoubleTransposeGraph());
  n = RewriteSymbolicGraph(off, {.double_transposes = false});
  REQUIRE(n.ok());
  CHECK(*n == 0);
  CHECK(off.graph.nodes_size() == 3);
}

// The bench's first norm: tok: bf16 [50, 8] (or `table_rows`), ids: i64 [s0, s1], pos: bf16
// [64, 8], pids: i64 [s1], w/b: bf16 [8]; x = embedding(tok, ids) + embedding(pos, pids);
// (y, mean, rstd) = native_layer_norm(x, [8], w, b, 1e-5); returns (x, y, mean, rstd), or with
// `return_pos` the position embedding too (a second reader).
v1::Graph EmbeddingNormGraph(v1::Dim table_rows = Int(50), bool return_pos = false) {
  const std::vector<v1::Dim> xs = {Sym("s0"), Sym("s1"), Int(8)},
                             xst = {Sym("8*s1"), Int(8), Int(1)};
  const std::vector<v1::Dim> rs = {Sym("s0"), Sym("s1"), Int(1)}, rst = {Sym("s1"), Int(1), Int(1)};
  v1::Graph g;
  *g.add_inputs() = Meta({table_rows, Int(8)}, {Int(8), Int(1)});
  *g.add_inputs() = Meta({Sym("s0"), Sym("s1")}, {Sym("s1"), Int(1)}, v1::INT64);
  *g.add_inputs() = Meta({Int(64), Int(8)}, {Int(8), Int(1)});
  *g.add_inputs() = Meta({Sym("s1")}, {Int(1)}, v1::INT64);
  *g.add_inputs() = Meta({Int(8)}, {Int(1)});
  *g.add_inputs() = Meta({Int(8)}, {Int(1)});
  v1::Node* tok = g.add_nodes();
  tok->set_target("aten::embedding.default");
  *tok->add_args() = Ref(-1);
  *tok->add_args() = Ref(-2);
  *tok->add_outputs() = Meta(xs, xst);
  v1::Node* pos = g.add_nodes();
  pos->set_target("aten::embedding.default");
  *pos->add_args() = Ref(-3);
  *pos->add_args() = Ref(-4);
  *pos->add_outputs() = Meta({Sym("s1"), Int(8)}, {Int(8), Int(1)});
  v1::Node* add = g.add_nodes();
  add->set_target("aten::add.Tensor");
  *add->add_args() = Ref(0);
  *add->add_args() = Ref(1);
  *add->add_outputs() = Meta(xs, xst);
  v1::Node* ln = g.add_nodes();
  ln->set_target("aten::native_layer_norm.default");
  *ln->add_args() = Ref(2);
  ln->add_args()->mutable_list()->add_items()->set_int_value(8);
  *ln->add_args() = Ref(-5);
  *ln->add_args() = Ref(-6);
  ln->add_args()->set_float_value(1e-5);
  *ln->add_outputs() = Meta(xs, xst);
  *ln->add_outputs() = Meta(rs, rst, v1::FLOAT32);
  *ln->add_outputs() = Meta(rs, rst, v1::FLOAT32);
  *g.add_outputs() = Ref(2);
  for (int o = 0; o < 3; ++o) *g.add_outputs() = Ref(3, o);
  if (return_pos) *g.add_outputs() = Ref(1);
  return g;
}

TEST_CASE("a broadcast embedding is gathered at its reader's shape from expanded ids",
          "[symbolic][rewrites]") {
  SymbolicGraph sym = Prepared(EmbeddingNormGraph());
  absl::StatusOr<int> n = RewriteSymbolicGraph(sym, {.embeddings_to_reader_shape = true});
  REQUIRE(n.ok());
  CHECK(*n == 1);
  INFO(Text(sym.graph));
  REQUIRE(sym.graph.nodes_size() == 5);
  // expand(pids, [s0, -1]): [s0, s1], stride 0 along the new dim, pids' own along s1.
  const v1::Node& expand = sym.graph.nodes(1);
  CHECK(expand.target() == "aten::expand.default");
  CHECK(expand.args(0).ref().node() == -4);
  REQUIRE(expand.args(1).list().items_size() == 2);
  CHECK(expand.args(1).list().items(0).sym_expr() == "s0");
  CHECK(expand.args(1).list().items(1).int_value() == -1);
  CHECK(expand.outputs(0).sizes(0).expr() == "s0");
  CHECK(expand.outputs(0).sizes(1).expr() == "s1");
  CHECK(expand.outputs(0).strides(0).value() == 0);
  CHECK(expand.outputs(0).strides(1).value() == 1);
  // The gather at the add's [s0, s1, 8], dense, from the expanded ids; the add reads it.
  const v1::Node& pos = sym.graph.nodes(2);
  CHECK(pos.target() == "aten::embedding.default");
  CHECK(pos.args(1).ref().node() == 1);
  REQUIRE(pos.outputs(0).sizes_size() == 3);
  CHECK(pos.outputs(0).sizes(0).expr() == "s0");
  CHECK(pos.outputs(0).strides(0).expr() == "(s1*8)");
  CHECK(pos.outputs(0).strides(1).value() == 8);
  CHECK(sym.graph.nodes(3).args(1).ref().node() == 2);

  // Off by default (the pipeline sets it with row gathers), and not for an embedding something
  // else reads too (a returned one keeps its shape).
  SymbolicGraph off = Prepared(EmbeddingNormGraph());
  n = RewriteSymbolicGraph(off, {});
  REQUIRE(n.ok());
  CHECK(*n == 0);
  SymbolicGraph returned = Prepared(EmbeddingNormGraph(Int(50), /*return_pos=*/true));
  n = RewriteSymbolicGraph(returned, {.embeddings_to_reader_shape = true});
  REQUIRE(n.ok());
  CHECK(*n == 0);
  // No layer norm reads the sum (GPT-2's dropout between them): no row kernel to join.
  v1::Graph unnormalised = EmbeddingNormGraph();
  unnormalised.mutable_nodes(3)->set_target("aten::gelu.default");
  unnormalised.mutable_nodes(3)->mutable_args()->DeleteSubrange(1, 4);
  unnormalised.mutable_nodes(3)->mutable_outputs()->DeleteSubrange(1, 2);
  unnormalised.mutable_outputs()->DeleteSubrange(2, 2);
  SymbolicGraph gelu = Prepared(unnormalised);
  n = RewriteSymbolicGraph(gelu, {.embeddings_to_reader_shape = true});
  REQUIRE(n.ok());
  CHECK(*n == 0);
}

// The fused ops of every kernel group, in schedule order.
std::vector<std::vector<std::string>> KernelOps(const SymbolicLowering& lowering) {
  std::vector<std::vector<std::string>> out;
  for (const SymbolicKernelGroup& k : lowering.groups) out.push_back(k.kernel.fused_ops);
  return out;
}

TEST_CASE("row gathers: both embeddings are gathered inside the layer norm's row kernel",
          "[symbolic][rows][index]") {
  SymbolicGraph sym = Prepared(EmbeddingNormGraph());
  REQUIRE(RewriteSymbolicGraph(sym, {.embeddings_to_reader_shape = true}).ok());
  absl::StatusOr<SymbolicLowering> lowering =
      LowerSymbolicKernels(sym, {.fusion = true, .rows = true, .row_gathers = true});
  REQUIRE(lowering.ok());
  INFO(absl::StrJoin(lowering->rejected, "\n"));
  REQUIRE(lowering->groups.size() == 1);
  const PointwiseKernel& k = lowering->groups[0].kernel;
  const std::string ir = PrintPointwiseKernel(k);
  INFO(ir);
  CHECK(k.fused_ops == std::vector<std::string>{"aten::embedding.default",
                                                "aten::embedding.default", "aten::add.Tensor",
                                                "aten::native_layer_norm.default"});
  CHECK(k.is_row_reduction());
  CHECK(k.shape == std::vector<int64_t>{kRuntimeDim, kRuntimeDim, 8});
  // The ids read once per row at the row's coordinates, the tables per element; bounds are the
  // tables' static row counts.
  CHECK(ir.find("gather.i64 in1") != std::string::npos);
  CHECK(ir.find("gather.i64 in3") != std::string::npos);
  CHECK(ir.find("constant.i64 50") != std::string::npos);
  CHECK(ir.find("constant.i64 64") != std::string::npos);
  // Both entries (the row launcher passes own strides to either).
  CHECK(k.entries == KernelEntries::kBoth);
  // The plan: the tables and ids gather operands (own strides), the norm's weights not; the
  // expand a view step before the kernel.
  absl::StatusOr<v1::Plan> plan = SymbolicKernelPlan(sym, *lowering);
  REQUIRE(plan.ok());
  REQUIRE(plan->steps_size() == 2);
  CHECK(plan->steps(0).extern_call().target() == "aten::expand.default");
  const v1::NativeCall& call = plan->steps(1).native();
  REQUIRE(call.gather_inputs_size() == 6);
  int gathers = 0;
  for (bool g : call.gather_inputs()) gathers += g ? 1 : 0;
  CHECK(gathers == 4);
}

TEST_CASE(
    "row gathers off, or an embedding no row kernel takes: the embeddings kernels of their own",
    "[symbolic][rows][index]") {
  // The knob off (TCCD_DISABLE_PASSES=symbolic-row-gathers): two embedding kernels and the
  // norm's row kernel (add + layer norm), as before.
  SymbolicGraph off = Prepared(EmbeddingNormGraph());
  absl::StatusOr<SymbolicLowering> lowering =
      LowerSymbolicKernels(off, {.fusion = true, .rows = true, .row_gathers = false});
  REQUIRE(lowering.ok());
  CHECK(KernelOps(*lowering) == std::vector<std::vector<std::string>>{
                                    {"aten::embedding.default"},
                                    {"aten::embedding.default"},
                                    {"aten::add.Tensor", "aten::native_layer_norm.default"}});
  // Without the reader-shape rewrite: the token embedding joins, the [s1, 8] position
  // embedding (below the kernel's rank) stays a kernel of its own.
  SymbolicGraph unshaped = Prepared(EmbeddingNormGraph());
  lowering = LowerSymbolicKernels(unshaped, {.fusion = true, .rows = true, .row_gathers = true});
  REQUIRE(lowering.ok());
  CHECK(KernelOps(*lowering) ==
        std::vector<std::vector<std::string>>{
            {"aten::embedding.default"},
            {"aten::embedding.default", "aten::add.Tensor", "aten::native_layer_norm.default"}});
  // A token table of symbolic rows (no static bounds check): its embedding stays ATen's, the
  // position embedding joins the norm.
  SymbolicGraph symbolic_table = Prepared(EmbeddingNormGraph(Sym("s2")));
  REQUIRE(RewriteSymbolicGraph(symbolic_table, {.embeddings_to_reader_shape = true}).ok());
  lowering =
      LowerSymbolicKernels(symbolic_table, {.fusion = true, .rows = true, .row_gathers = true});
  REQUIRE(lowering.ok());
  INFO(absl::StrJoin(lowering->rejected, "\n"));
  CHECK(KernelOps(*lowering) ==
        std::vector<std::vector<std::string>>{
            {"aten::embedding.default", "aten::add.Tensor", "aten::native_layer_norm.default"}});
  bool tok_extern = false;
  for (const SymbolicUnit& u : lowering->schedule)
    tok_extern |= u.group < 0 && u.gemm < 0 && u.node == 0;
  CHECK(tok_extern);
}

}  // namespace
}  // namespace tccd::codegen
