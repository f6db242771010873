// Client protos enter the IR through GraphFromProto: valid input converts, invalid input gets a
// precise INVALID_ARGUMENT, unsupported input UNIMPLEMENTED; the known-op check refuses unknown
// ops.
#include <catch2/catch.hpp>

#include "codegen/ir/known_ops.h"
#include "codegen/ir/printer.h"
#include "codegen/ir/proto_convert.h"

namespace tccd::ir {
namespace {

v1::TensorMeta Meta(std::vector<int64_t> sizes, std::vector<int64_t> strides) {
  v1::TensorMeta m;
  for (int64_t s : sizes) m.add_sizes()->set_value(s);
  for (int64_t s : strides) m.add_strides()->set_value(s);
  m.set_dtype(v1::FLOAT32);
  m.mutable_device()->set_type(v1::CPU);
  m.mutable_device()->set_index(3);
  return m;
}

v1::Graph ReluGraph() {
  v1::Graph g;
  *g.add_inputs() = Meta({2, 3}, {3, 1});
  v1::Node* n = g.add_nodes();
  n->set_target("aten::relu.default");
  n->add_args()->mutable_ref()->set_node(-1);  // input 0
  *n->add_outputs() = Meta({2, 3}, {3, 1});
  g.add_outputs()->mutable_ref()->set_node(0);
  return g;
}

TEST_CASE("a valid proto converts; device indices do not reach the IR text", "[proto]") {
  absl::StatusOr<Graph> g = GraphFromProto(ReluGraph());
  REQUIRE(g.ok());
  CHECK(PrintGraph(*g) ==
        "graph(%a0: f32[2,3]{3,1}@cpu) {\n  %0 = aten::relu.default(%a0) -> f32[2,3]{3,1}@cpu\n  "
        "return (%0)\n}\n");
  v1::Graph other_device = ReluGraph();
  other_device.mutable_inputs(0)->mutable_device()->set_index(7);
  CHECK(PrintGraph(*GraphFromProto(other_device)) == PrintGraph(*g));
  CHECK(UnknownOps(*g).empty());
}

TEST_CASE("complex and wide unsigned tensors convert both ways", "[proto]") {
  for (v1::DType dtype :
       {v1::COMPLEX64, v1::COMPLEX128, v1::COMPLEX32, v1::UINT16, v1::UINT32, v1::UINT64}) {
    v1::Graph g = ReluGraph();
    g.mutable_inputs(0)->set_dtype(dtype);
    g.mutable_nodes(0)->mutable_outputs(0)->set_dtype(dtype);
    absl::StatusOr<Graph> ir = GraphFromProto(g);
    REQUIRE(ir.ok());
    CHECK(IsExternOnly(ir->inputs[0].dtype));
    CHECK(TensorTypeToProto(ir->inputs[0]).dtype() == dtype);
  }
}

TEST_CASE("malformed protos are INVALID_ARGUMENT", "[proto]") {
  v1::Graph dangling = ReluGraph();
  dangling.mutable_nodes(0)->mutable_args(0)->mutable_ref()->set_node(5);
  CHECK(GraphFromProto(dangling).status().code() == absl::StatusCode::kInvalidArgument);

  v1::Graph no_dtype = ReluGraph();
  no_dtype.mutable_inputs(0)->set_dtype(v1::DTYPE_UNSPECIFIED);
  CHECK(GraphFromProto(no_dtype).status().code() == absl::StatusCode::kInvalidArgument);

  v1::Graph empty_value = ReluGraph();
  empty_value.mutable_nodes(0)->add_args();  // a Value with nothing set
  CHECK(GraphFromProto(empty_value).status().code() == absl::StatusCode::kInvalidArgument);

  v1::Graph huge = ReluGraph();
  huge.mutable_inputs(0)->mutable_sizes(0)->set_value(int64_t{1} << 62);
  CHECK(GraphFromProto(huge).status().code() == absl::StatusCode::kInvalidArgument);

  v1::Graph nested = ReluGraph();
  v1::Value* v = nested.mutable_nodes(0)->add_args();
  for (int i = 0; i < 20; ++i) v = v->mutable_list()->add_items();
  v->set_int_value(1);
  CHECK(GraphFromProto(nested).status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("unsupported input is UNIMPLEMENTED with a reason", "[proto]") {
  v1::Graph symbolic = ReluGraph();
  symbolic.mutable_inputs(0)->mutable_sizes(0)->set_expr("s0");
  absl::Status s = GraphFromProto(symbolic).status();
  CHECK(s.code() == absl::StatusCode::kUnimplemented);
  CHECK(std::string(s.message()).find("dynamic") != std::string::npos);

  v1::Graph unknown_op = ReluGraph();
  unknown_op.mutable_nodes(0)->set_target("aten::does_not_exist.default");
  absl::StatusOr<Graph> g = GraphFromProto(unknown_op);
  REQUIRE(g.ok());
  // Not an error (it becomes an extern step), only reported.
  CHECK(UnknownOps(*g) == std::vector<std::string>{"aten::does_not_exist.default"});
  CHECK(UnknownOps(*GraphFromProto(ReluGraph())).empty());
}

}  // namespace
}  // namespace tccd::ir
