// WritePlanDescriptor: every step kind in the words the runtime reads (tccd_plan_format.h), a
// symbolic plan's symbols, bindings and expressions, and plans the runtime cannot run refused
// with UNIMPLEMENTED (the client then interprets them).
#include "codegen/plan_runtime/plan_descriptor.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "codegen/plan_runtime/runtime/tccd_plan_format.h"

namespace tccd::codegen {
namespace {

v1::TensorMeta Meta(std::vector<int64_t> sizes, std::vector<int64_t> strides, int64_t offset = 0,
                    v1::DeviceType device = v1::CUDA) {
  v1::TensorMeta m;
  for (int64_t s : sizes) m.add_sizes()->set_value(s);
  for (int64_t s : strides) m.add_strides()->set_value(s);
  m.mutable_storage_offset()->set_value(offset);
  m.set_dtype(v1::BFLOAT16);
  m.mutable_device()->set_type(device);
  m.mutable_device()->set_index(0);
  return m;
}

std::vector<int64_t> Words(const std::string& bytes) {
  std::vector<int64_t> words(bytes.size() / 8);
  std::memcpy(words.data(), bytes.data(), bytes.size());
  return words;
}

// A CUDA plan: segment(0) -> 1, alias 2 of 1 at offset 4, extern sum(2, dim=[0]) -> 3,
// kernel(3) -> 4; outputs 4 and None.
v1::Plan CudaPlan() {
  v1::Plan plan;
  plan.set_num_inputs(1);
  *plan.add_values() = Meta({4, 4}, {4, 1});
  *plan.add_values() = Meta({4, 4}, {4, 1});
  *plan.add_values() = Meta({3, 4}, {4, 1}, 4);
  *plan.add_values() = Meta({4}, {1});
  *plan.add_values() = Meta({4}, {1});
  v1::Step* seg = plan.add_steps();
  seg->mutable_segment()->set_artifact("kernels_cuda.so");
  seg->mutable_segment()->set_symbol("tccd_seg0");
  seg->mutable_segment()->set_abi("tccd-cuda-segment-1");
  seg->mutable_segment()->add_inputs(0);
  seg->mutable_segment()->set_workspace_bytes(4096);
  seg->add_outputs(1);
  seg->add_release(0);
  v1::Step* alias = plan.add_steps();
  alias->mutable_alias()->set_base(1);
  alias->add_outputs(2);
  v1::Step* ext = plan.add_steps();
  ext->mutable_extern_call()->set_target("aten::sum.dim_IntList");
  ext->mutable_extern_call()->add_args()->mutable_ref()->set_node(2);
  ext->mutable_extern_call()->add_args()->mutable_list()->add_items()->set_int_value(0);
  v1::NamedValue* kw = ext->mutable_extern_call()->add_kwargs();
  kw->set_name("dtype");
  kw->mutable_value()->set_dtype(v1::FLOAT32);
  ext->add_outputs(3);
  ext->add_release(1);
  ext->add_release(2);
  v1::Step* k = plan.add_steps();
  k->mutable_native()->set_artifact("kernels_cuda.so");
  k->mutable_native()->set_symbol("tccd_k1");
  k->mutable_native()->set_abi("tccd-cuda-1");
  k->mutable_native()->add_shape(4);
  k->mutable_native()->add_inputs(3);
  k->mutable_native()->add_expected_strides(1);
  k->mutable_native()->add_expected_strides(1);
  k->add_outputs(4);
  plan.add_outputs()->mutable_ref()->set_node(4);
  plan.add_outputs()->set_none(true);
  return plan;
}

TEST_CASE("a CUDA plan becomes descriptor words with every step kind", "[plan_runtime]") {
  absl::StatusOr<std::string> bytes = WritePlanDescriptor(CudaPlan());
  REQUIRE(bytes.ok());
  REQUIRE(bytes->size() % 8 == 0);
  std::vector<int64_t> w = Words(*bytes);
  size_t at = 0;
  auto next = [&] {
    REQUIRE(at < w.size());
    return w[at++];
  };
  auto str = [&] {
    int64_t len = next();
    std::string s(reinterpret_cast<const char*>(w.data() + at), len);
    at += (len + 1 + 7) / 8;
    return s;
  };
  CHECK(next() == TCCD_PLAN_MAGIC);
  CHECK(next() == TCCD_PLAN_FORMAT_VERSION);
  CHECK(std::vector<int64_t>(w.begin() + at, w.begin() + at + 3) ==
        std::vector<int64_t>{0, 0, 0});  // a static plan: no symbols, bindings or expressions
  at += 3;
  CHECK(next() == 1);  // inputs
  CHECK(next() == 5);  // values
  // Value 0: bf16 on cuda:0, [4, 4] strides [4, 1], offset 0.
  CHECK(std::vector<int64_t>(w.begin() + at, w.begin() + at + 9) ==
        std::vector<int64_t>{TCCD_C10_BFLOAT16, TCCD_C10_DEVICE_CUDA, 0, 2, 4, 4, 4, 1, 0});
  at += 9 * 2;         // values 0 and 1
  at += 9;             // value 2 (offset 4)
  at += 7 * 2;         // values 3 and 4 (rank 1)
  CHECK(next() == 4);  // steps
  CHECK(next() == TCCD_STEP_SEGMENT);
  CHECK(next() == TCCD_ABI_CUDA_SEGMENT);
  CHECK(str() == "kernels_cuda.so");
  CHECK(str() == "tccd_seg0");
  CHECK(std::vector<int64_t>(w.begin() + at, w.begin() + at + 8) ==
        std::vector<int64_t>{1, 0, 1, 1, -1, 4096, 1, 0});
  at += 8;  // in, out, into (none), workspace, release
  CHECK(std::vector<int64_t>(w.begin() + at, w.begin() + at + 5) ==
        std::vector<int64_t>{TCCD_STEP_ALIAS, 1, 2, 4, 0});  // base, out, offset delta, no release
  at += 5;
  CHECK(next() == TCCD_STEP_EXTERN);
  CHECK(str() == "aten::sum.dim_IntList");
  CHECK(std::vector<int64_t>(w.begin() + at, w.begin() + at + 7) ==
        std::vector<int64_t>{2, TCCD_VAL_REF, 2, TCCD_VAL_LIST, 1, TCCD_VAL_INT, 0});
  at += 7;
  CHECK(next() == 1);  // kwargs
  CHECK(str() == "dtype");
  CHECK(std::vector<int64_t>(w.begin() + at, w.begin() + at + 7) ==
        std::vector<int64_t>{TCCD_VAL_DTYPE, TCCD_C10_FLOAT32, 1, 3, 2, 1, 2});  // outputs, release
  at += 7;
  CHECK(next() == TCCD_STEP_KERNEL);
  CHECK(next() == TCCD_ABI_CUDA);
  CHECK(str() == "kernels_cuda.so");
  CHECK(str() == "tccd_k1");
  CHECK(std::vector<int64_t>(w.begin() + at, w.begin() + at + 11) ==
        std::vector<int64_t>{1, 4, 1, 3, 1, 4, -1, 1, 1, 1,
                             0});  // rank, shape, in, out, into, copy, strides, release
  // copy = 1: a CUDA kernel has only its declared layout's entry point (entry_points.h), so an
  // input in another layout is copied into the declared one.
  at += 11;
  CHECK(std::vector<int64_t>(w.begin() + at, w.end()) ==
        std::vector<int64_t>{2, TCCD_VAL_REF, 4, TCCD_VAL_NONE});
}

// A CPU plan with symbolic sizes: input 0 is [s0, 8] (strides [8, 1]); a view to [s0*8] with a
// SymInt argument, a kernel with a run-time size over it -> value 2, and the output s0*8 too.
v1::Plan SymbolicPlan() {
  v1::Plan plan;
  plan.set_num_inputs(1);
  v1::TensorMeta in = Meta({0, 8}, {8, 1}, 0, v1::CPU);
  in.mutable_sizes(0)->set_expr("s0");
  *plan.add_values() = in;
  v1::TensorMeta flat = Meta({0}, {1}, 0, v1::CPU);
  flat.mutable_sizes(0)->set_expr("(s0*8)");
  *plan.add_values() = flat;
  *plan.add_values() = flat;
  v1::Step* view = plan.add_steps();
  view->mutable_extern_call()->set_target("aten::view.default");
  view->mutable_extern_call()->add_args()->mutable_ref()->set_node(0);
  v1::Value* shape = view->mutable_extern_call()->add_args();
  shape->mutable_list()->add_items()->set_sym_expr("(s0*8)");
  view->add_outputs(1);
  view->add_release(0);
  v1::Step* k = plan.add_steps();
  k->mutable_native()->set_artifact("kernels.so");
  k->mutable_native()->set_symbol("tccd_sk0");
  k->mutable_native()->set_abi("tccd-cpu-sym-1");
  k->mutable_native()->add_shape(-1);  // kRuntimeDim
  k->mutable_native()->add_inputs(1);
  k->add_outputs(2);
  k->add_release(1);
  plan.add_outputs()->mutable_ref()->set_node(2);
  plan.add_outputs()->set_sym_expr("(s0*8)");
  return plan;
}

TEST_CASE("a symbolic plan carries its symbols, bindings and expressions", "[plan_runtime]") {
  absl::StatusOr<std::string> bytes = WritePlanDescriptor(SymbolicPlan());
  REQUIRE(bytes.ok());
  std::vector<int64_t> w = Words(*bytes);
  size_t at = 2;  // magic, version
  auto next = [&] {
    REQUIRE(at < w.size());
    return w[at++];
  };
  auto str = [&] {
    int64_t len = next();
    std::string s(reinterpret_cast<const char*>(w.data() + at), len);
    at += (len + 1 + 7) / 8;
    return s;
  };
  CHECK(next() == 1);  // symbols
  CHECK(std::vector<int64_t>(w.begin() + at, w.begin() + at + 5) ==
        std::vector<int64_t>{1, 0, 0, 0, 0});  // one binding: s0 is input 0's size 0
  at += 5;
  // One distinct expression (s0 itself is a binding, not an expression until something reads
  // it as one: the input's dim word names it too).
  CHECK(next() == 2);
  CHECK(str() == "s0");
  CHECK(std::vector<int64_t>(w.begin() + at, w.begin() + at + 3) ==
        std::vector<int64_t>{2, TCCD_EXPR_SYM, 0});
  at += 3;
  CHECK(str() == "(s0*8)");
  CHECK(std::vector<int64_t>(w.begin() + at, w.begin() + at + 6) ==
        std::vector<int64_t>{5, TCCD_EXPR_SYM, 0, TCCD_EXPR_CONST, 8, TCCD_EXPR_MUL});
  at += 6;
  CHECK(next() == 1);  // inputs
  CHECK(next() == 3);  // values
  // Value 0: [s0, 8] strides [8, 1]: the dim word -1 is expression 0.
  CHECK(std::vector<int64_t>(w.begin() + at, w.begin() + at + 9) ==
        std::vector<int64_t>{TCCD_C10_BFLOAT16, TCCD_C10_DEVICE_CPU, 0, 2, -1, 8, 8, 1, 0});
  at += 9;
  CHECK(std::vector<int64_t>(w.begin() + at, w.begin() + at + 7) ==
        std::vector<int64_t>{TCCD_C10_BFLOAT16, TCCD_C10_DEVICE_CPU, 0, 1, -2, 1, 0});
  at += 7 * 2;
  CHECK(next() == 2);  // steps
  CHECK(next() == TCCD_STEP_EXTERN);
  CHECK(str() == "aten::view.default");
  CHECK(std::vector<int64_t>(w.begin() + at, w.begin() + at + 12) ==
        std::vector<int64_t>{2, TCCD_VAL_REF, 0, TCCD_VAL_LIST, 1, TCCD_VAL_SYM, 1, 0, 1, 1, 1, 0});
  at += 12;  // args, no kwargs, outputs, release
  CHECK(next() == TCCD_STEP_KERNEL);
  CHECK(next() == TCCD_ABI_CPU_SYM);
  CHECK(str() == "kernels.so");
  CHECK(str() == "tccd_sk0");
  // rank 1, shape: the output's size expression; in, out, into (none), the layout (own
  // strides: none follow), release.
  CHECK(std::vector<int64_t>(w.begin() + at, w.begin() + at + 10) ==
        std::vector<int64_t>{1, -2, 1, 1, 1, 2, -1, TCCD_LAYOUT_OWN, 1, 1});
  at += 10;
  CHECK(std::vector<int64_t>(w.begin() + at, w.end()) ==
        std::vector<int64_t>{2, TCCD_VAL_REF, 2, TCCD_VAL_SYM, 1});
}

TEST_CASE("a constant expression is a plain size or int", "[plan_runtime]") {
  v1::Plan plan = SymbolicPlan();
  plan.add_outputs()->set_sym_expr("(2*3)");
  absl::StatusOr<std::string> bytes = WritePlanDescriptor(plan);
  REQUIRE(bytes.ok());
  std::vector<int64_t> w = Words(*bytes);
  CHECK(std::vector<int64_t>(w.end() - 2, w.end()) == std::vector<int64_t>{TCCD_VAL_INT, 6});
}

TEST_CASE("plans the runtime cannot run are UNIMPLEMENTED", "[plan_runtime]") {
  // Expressions in a plan with segments or aliases (the symbolic plan builder makes neither).
  v1::Plan symbolic = CudaPlan();
  symbolic.mutable_values(0)->mutable_sizes(0)->set_expr("s0");
  CHECK(WritePlanDescriptor(symbolic).status().code() == absl::StatusCode::kUnimplemented);
  // Static metas, a SymInt output (the request fuzzer's finding: the kernel steps of such a
  // plan carry no expected strides): a symbolic plan, its kernels take their own strides; the
  // segment makes it UNIMPLEMENTED, never INTERNAL.
  v1::Plan sym_output = CudaPlan();
  sym_output.add_outputs()->set_sym_expr("s0");
  sym_output.mutable_steps(3)->mutable_native()->clear_expected_strides();
  CHECK(WritePlanDescriptor(sym_output).status().code() == absl::StatusCode::kUnimplemented);
  v1::Plan abi = CudaPlan();
  abi.mutable_steps(0)->mutable_segment()->set_abi("tccd-cuda-segment-2");
  CHECK(WritePlanDescriptor(abi).status().code() == absl::StatusCode::kUnimplemented);
  v1::Plan strides = CudaPlan();
  strides.mutable_steps(3)->mutable_native()->add_expected_strides(1);
  CHECK(WritePlanDescriptor(strides).status().code() == absl::StatusCode::kInternal);
  v1::Plan bad_expr = SymbolicPlan();
  bad_expr.mutable_outputs(1)->set_sym_expr("s0 +");
  CHECK(WritePlanDescriptor(bad_expr).status().code() == absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace tccd::codegen
