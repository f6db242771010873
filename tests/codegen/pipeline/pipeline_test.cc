// The whole compiler: a request graph in, a plan and a loadable .so out, and the kernel computes
// what ATen would.
#include <dlfcn.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>

#include "codegen/pipeline.h"
#include "codegen/plan_runtime/runtime/tccd_plan_format.h"

namespace tccd::codegen {
namespace {

v1::TensorMeta Meta(std::vector<int64_t> sizes) {
  v1::TensorMeta m;
  int64_t stride = 1;
  std::vector<int64_t> strides(sizes.size());
  for (int i = static_cast<int>(sizes.size()) - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= sizes[i];
  }
  for (int64_t s : sizes) m.add_sizes()->set_value(s);
  for (int64_t s : strides) m.add_strides()->set_value(s);
  m.set_dtype(v1::FLOAT32);
  m.mutable_device()->set_type(v1::CPU);
  return m;
}

v1::Value Ref(int node) {
  v1::Value v;
  v.mutable_ref()->set_node(node);
  return v;
}

// relu(a * b + c) with c broadcast, then mm(result, a).
v1::Graph TestGraph() {
  v1::Graph g;
  *g.add_inputs() = Meta({4, 4});
  *g.add_inputs() = Meta({4, 4});
  *g.add_inputs() = Meta({4});
  auto node = [&](const char* target, std::vector<v1::Value> args) {
    v1::Node* n = g.add_nodes();
    n->set_target(target);
    for (auto& a : args) *n->add_args() = a;
    *n->add_outputs() = Meta({4, 4});
    return g.nodes_size() - 1;
  };
  int mul = node("aten::mul.Tensor", {Ref(-1), Ref(-2)});
  int add = node("aten::add.Tensor", {Ref(mul), Ref(-3)});
  int relu = node("aten::relu.default", {Ref(add)});
  int mm = node("aten::mm.default", {Ref(relu), Ref(-1)});
  *g.add_outputs() = Ref(mm);
  *g.add_outputs() = Ref(relu);
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

TEST_CASE("a graph compiles to a plan with a fused kernel that computes relu(a*b+c)",
          "[pipeline]") {
  v1::Graph graph = TestGraph();
  v1::Target target = CpuTarget();
  absl::StatusOr<Prepared> prepared = Prepare({&graph, &target, "default"});
  REQUIRE(prepared.ok());
  CHECK(prepared->target_key == "cpu:x86_64-unknown-linux-gnu/x86-64-v2");
  absl::StatusOr<CompileOutput> out = Compile(*prepared);
  REQUIRE(out.ok());
  CHECK(out->num_fused_kernels == 1);
  CHECK(out->num_extern_steps == 1);
  REQUIRE(out->plan.steps_size() == 2);
  const v1::NativeCall& call = out->plan.steps(0).native();
  CHECK(call.kernels(0).ops_size() == 3);
  CHECK(out->plan.steps(1).extern_call().target() == "aten::mm.default");
  // The kernels, then the plan as data and the native plan runtime (plan_descriptor.h).
  REQUIRE(out->artifacts.size() == 3);
  CHECK(out->artifacts[0].name == "kernels.so");
  CHECK(out->artifacts[1].name == "plan.tccdplan");
  CHECK(out->artifacts[1].kind == v1::PLAN_DESCRIPTOR);
  CHECK(out->artifacts[2].name == "tccd_plan_runtime.so");
  CHECK(out->artifacts[2].kind == v1::PLAN_RUNTIME);
  CHECK(out->artifacts[2].bytes.substr(0, 4) ==
        "\x7f"
        "ELF");

  char path[] = "/tmp/tccd_pipeline_test_XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, out->artifacts[0].bytes.data(), out->artifacts[0].bytes.size()) ==
          static_cast<ssize_t>(out->artifacts[0].bytes.size()));
  close(fd);
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  unlink(path);
  REQUIRE(lib != nullptr);
  using Fn = void (*)(void* const*, const int64_t*);
  auto fn = reinterpret_cast<Fn>(dlsym(lib, call.symbol().c_str()));
  REQUIRE(fn != nullptr);
  std::vector<float> a(16), b(16), c(4), out_buf(16, -1);
  for (int i = 0; i < 16; ++i) {
    a[i] = static_cast<float>(i) - 7.5f;
    b[i] = 0.25f * static_cast<float>(i % 5);
  }
  for (int i = 0; i < 4; ++i) c[i] = static_cast<float>(i) - 1.0f;
  void* data[] = {a.data(), b.data(), c.data(), out_buf.data()};
  std::vector<int64_t> strides(call.expected_strides().begin(), call.expected_strides().end());
  fn(data, strides.data());
  for (int i = 0; i < 16; ++i) CHECK(out_buf[i] == std::max(0.0f, a[i] * b[i] + c[i % 4]));
  dlclose(lib);
}

TEST_CASE("the canonical IR ignores device indices, and the key's graph part is stable",
          "[pipeline]") {
  v1::Graph g1 = TestGraph();
  v1::Graph g2 = TestGraph();
  g2.mutable_inputs(0)->mutable_device()->set_index(5);
  v1::Target target = CpuTarget();
  CHECK(Prepare({&g1, &target, ""})->canonical_ir == Prepare({&g2, &target, ""})->canonical_ir);
}

TEST_CASE("unsupported and malformed requests fail with a precise status", "[pipeline]") {
  v1::Graph graph = TestGraph();
  v1::Target old_gpu;
  old_gpu.set_device_type(v1::CUDA);
  old_gpu.set_cuda_cc_major(5);
  CHECK(Prepare({&graph, &old_gpu, ""}).status().code() == absl::StatusCode::kInvalidArgument);
  v1::Target riscv = CpuTarget();
  riscv.set_cpu_arch("riscv64");
  CHECK(Prepare({&graph, &riscv, ""}).status().code() == absl::StatusCode::kInvalidArgument);
  v1::Target none;
  CHECK(Prepare({&graph, &none, ""}).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(Prepare({nullptr, &none, ""}).status().code() == absl::StatusCode::kInvalidArgument);
  v1::Graph wrong_device = TestGraph();
  wrong_device.mutable_nodes(0)->mutable_outputs(0)->mutable_device()->set_type(v1::CUDA);
  v1::Target target = CpuTarget();
  CHECK(Prepare({&wrong_device, &target, ""}).status().code() ==
        absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tccd::codegen

namespace tccd::codegen {
namespace {

// Everything on CUDA: the same graph compiles to a cubin plus a host .so, and its fused kernel and
// matmul become one segment (one call; no GPU needed). Skipped where NVRTC is absent.
TEST_CASE("a CUDA graph compiles to a host library, a cubin and a one-segment plan",
          "[pipeline][cuda]") {
  v1::Graph graph = TestGraph();
  for (auto& m : *graph.mutable_inputs()) m.mutable_device()->set_type(v1::CUDA);
  for (auto& n : *graph.mutable_nodes())
    for (auto& m : *n.mutable_outputs()) m.mutable_device()->set_type(v1::CUDA);
  v1::Target target;
  target.set_device_type(v1::CUDA);
  target.set_cuda_cc_major(9);
  target.set_cuda_device_name("NVIDIA H100 80GB HBM3");
  absl::StatusOr<Prepared> prepared = Prepare({&graph, &target, "default"});
  if (prepared.status().code() == absl::StatusCode::kFailedPrecondition) {
    WARN("skipped: " << prepared.status().ToString());
    return;
  }
  REQUIRE(prepared.ok());
  CHECK(prepared->target_key.rfind("cuda:sm_90/nvrtc-", 0) == 0);
  CHECK(prepared->target_key.find("H100") != std::string::npos);
  absl::StatusOr<CompileOutput> out = Compile(*prepared);
  REQUIRE(out.ok());
  CHECK(out->num_fused_kernels == 2);
  REQUIRE(out->plan.steps_size() == 1);
  REQUIRE(out->plan.steps(0).has_segment());
  const v1::NativeSegment& segment = out->plan.steps(0).segment();
  CHECK(segment.abi() == "tccd-cuda-segment-1");
  CHECK(segment.artifact() == "kernels_cuda.so");
  REQUIRE(segment.kernels_size() == 2);
  CHECK(segment.kernels(0).kind() == "cuda_pointwise");
  CHECK(segment.kernels(1).kind() == "cublaslt_gemm");
  CHECK(out->plan.steps(0).outputs_size() == 2);  // mm's result and relu's, both returned
  std::vector<std::string> names;
  for (const ArtifactBytes& a : out->artifacts) names.push_back(a.name);
  CHECK(names == std::vector<std::string>{"kernels_cuda.so", "kernels.cubin", "kernels.ptx",
                                          "plan.tccdplan", "tccd_plan_runtime.so"});
  CHECK(out->artifacts[0].bytes.substr(0, 4) ==
        "\x7f"
        "ELF");
  // The descriptor describes the segment for the native runtime (codes: tccd_plan_format.h).
  const std::string& descriptor = out->artifacts[3].bytes;
  REQUIRE(descriptor.size() % 8 == 0);
  std::vector<int64_t> words(descriptor.size() / 8);
  std::memcpy(words.data(), descriptor.data(), descriptor.size());
  CHECK(words[0] == TCCD_PLAN_MAGIC);
  CHECK(words[1] == TCCD_PLAN_FORMAT_VERSION);
  CHECK(std::vector<int64_t>(words.begin() + 2, words.begin() + 6) ==
        std::vector<int64_t>{0, 0, 0, 3});  // no symbols, bindings or expressions; 3 inputs
  CHECK(std::find(words.begin(), words.end(), TCCD_ABI_CUDA_SEGMENT) != words.end());
}

TEST_CASE("a CUDA sum over a middle dim compiles to one row kernel over a permuted view",
          "[pipeline][cuda]") {
  // relu(sum(x, [1])) for x: f32[4,8,16]: ReductionDimsToRows makes the sum a row reduction of
  // permute(x, [0, 2, 1]); the relu is its epilogue.
  v1::Graph g;
  auto cuda = [](v1::TensorMeta m) {
    m.mutable_device()->set_type(v1::CUDA);
    return m;
  };
  *g.add_inputs() = cuda(Meta({4, 8, 16}));
  v1::Node* sum = g.add_nodes();
  sum->set_target("aten::sum.dim_IntList");
  *sum->add_args() = Ref(-1);
  sum->add_args()->mutable_list()->add_items()->set_int_value(1);
  *sum->add_outputs() = cuda(Meta({4, 16}));
  v1::Node* relu = g.add_nodes();
  relu->set_target("aten::relu.default");
  *relu->add_args() = Ref(0);
  *relu->add_outputs() = cuda(Meta({4, 16}));
  *g.add_outputs() = Ref(1);
  v1::Target target;
  target.set_device_type(v1::CUDA);
  target.set_cuda_cc_major(9);
  target.set_cuda_device_name("NVIDIA H100 80GB HBM3");
  absl::StatusOr<Prepared> prepared = Prepare({&g, &target, "default"});
  if (prepared.status().code() == absl::StatusCode::kFailedPrecondition) {
    WARN("skipped: " << prepared.status().ToString());
    return;
  }
  REQUIRE(prepared.ok());
  absl::StatusOr<CompileOutput> out = Compile(*prepared);
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(out->num_fused_kernels == 1);
  // The permute is metadata inside the segment: the kernel reads the input through its strides.
  REQUIRE(out->plan.steps_size() == 1);
  REQUIRE(out->plan.steps(0).has_segment());
  const v1::NativeSegment& segment = out->plan.steps(0).segment();
  REQUIRE(segment.kernels_size() == 1);
  CHECK(segment.kernels(0).kind() == "cuda_row_reduction");
  CHECK(
      std::vector<std::string>(segment.kernels(0).ops().begin(), segment.kernels(0).ops().end()) ==
      std::vector<std::string>{"aten::sum.dim_IntList", "aten::relu.default"});
  bool has_cubin = false;
  for (const ArtifactBytes& a : out->artifacts)
    has_cubin |= a.name == "kernels.cubin" && !a.bytes.empty();
  CHECK(has_cubin);
}

TEST_CASE(
    "a narrow CUDA bias gradient is two column kernels after the GELU backward's pointwise "
    "kernel",
    "[pipeline][cuda]") {
  // sum(gelu_backward(dy, x), [0], keepdim) over 16384 x 384 bf16 (an MLP's first bias gradient,
  // the GELU backward also returned): column-sum-split views the rows as [2048, 8, 384]; the
  // GELU backward, stored anyway and computing erf and exp, stays a pointwise kernel
  // (FusionOptions::column_stored_prologues), stage one (its f32 cast, the sum over 2048 rows of
  // 3072 columns) sums the bf16 it wrote into [8, 384] partials, stage two sums those.
  v1::Graph g;
  auto bf16 = [](std::vector<int64_t> sizes) {
    v1::TensorMeta m = Meta(std::move(sizes));
    m.set_dtype(v1::BFLOAT16);
    m.mutable_device()->set_type(v1::CUDA);
    return m;
  };
  *g.add_inputs() = bf16({16384, 384});
  *g.add_inputs() = bf16({16384, 384});
  v1::Node* gelu = g.add_nodes();
  gelu->set_target("aten::gelu_backward.default");
  *gelu->add_args() = Ref(-1);
  *gelu->add_args() = Ref(-2);
  *gelu->add_outputs() = bf16({16384, 384});
  v1::Node* sum = g.add_nodes();
  sum->set_target("aten::sum.dim_IntList");
  *sum->add_args() = Ref(0);
  sum->add_args()->mutable_list()->add_items()->set_int_value(0);
  sum->add_args()->set_bool_value(true);
  *sum->add_outputs() = bf16({1, 384});
  *g.add_outputs() = Ref(0);
  *g.add_outputs() = Ref(1);
  v1::Target target;
  target.set_device_type(v1::CUDA);
  target.set_cuda_cc_major(9);
  target.set_cuda_device_name("NVIDIA H100 80GB HBM3");
  absl::StatusOr<Prepared> prepared = Prepare({&g, &target, "default"});
  if (prepared.status().code() == absl::StatusCode::kFailedPrecondition) {
    WARN("skipped: " << prepared.status().ToString());
    return;
  }
  REQUIRE(prepared.ok());
  absl::StatusOr<CompileOutput> out = Compile(*prepared);
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(out->num_fused_kernels == 3);
  std::vector<std::vector<std::string>> ops;
  std::vector<std::string> kinds;
  for (const v1::Step& step : out->plan.steps()) {
    if (!step.has_segment()) continue;
    for (const auto& k : step.segment().kernels()) {
      kinds.push_back(k.kind());
      ops.emplace_back(k.ops().begin(), k.ops().end());
    }
  }
  CHECK(kinds ==
        std::vector<std::string>{"cuda_pointwise", "cuda_row_reduction", "cuda_row_reduction"});
  CHECK(ops ==
        std::vector<std::vector<std::string>>{{"aten::gelu_backward.default"},
                                              {"aten::_to_copy.default", "aten::sum.dim_IntList"},
                                              {"aten::sum.dim_IntList", "aten::_to_copy.default"}});
}

TEST_CASE("a CUDA pointwise kernel over transposed operands walks them in storage order",
          "[pipeline][cuda]") {
  // relu(x) for x: f32[6,8,16] stored as [6,16,8] (a transposed view, as attention's P^T): the
  // kernel iterates [6,16,8] so adjacent threads touch adjacent elements (loop_order.h).
  auto transposed = [] {
    v1::TensorMeta m = Meta({6, 8, 16});
    m.mutable_strides(1)->set_value(1);
    m.mutable_strides(2)->set_value(8);
    m.mutable_device()->set_type(v1::CUDA);
    return m;
  };
  v1::Graph g;
  *g.add_inputs() = transposed();
  v1::Node* relu = g.add_nodes();
  relu->set_target("aten::relu.default");
  *relu->add_args() = Ref(-1);
  *relu->add_outputs() = transposed();
  *g.add_outputs() = Ref(0);
  v1::Target target;
  target.set_device_type(v1::CUDA);
  target.set_cuda_cc_major(9);
  target.set_cuda_device_name("NVIDIA H100 80GB HBM3");
  absl::StatusOr<Prepared> prepared = Prepare({&g, &target, "default"});
  if (prepared.status().code() == absl::StatusCode::kFailedPrecondition) {
    WARN("skipped: " << prepared.status().ToString());
    return;
  }
  REQUIRE(prepared.ok());
  absl::StatusOr<CompileOutput> out = Compile(*prepared);
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  REQUIRE(out->plan.steps_size() == 1);
  REQUIRE(out->plan.steps(0).has_native());  // one kernel: a plain native call
  const v1::NativeCall& call = out->plan.steps(0).native();
  REQUIRE(call.kernels_size() == 1);
  CHECK(call.kernels(0).kind() == "cuda_pointwise_reordered");
  CHECK(std::vector<int64_t>(call.kernels(0).shape().begin(), call.kernels(0).shape().end()) ==
        std::vector<int64_t>{6, 16, 8});
  CHECK(std::vector<int64_t>(call.shape().begin(), call.shape().end()) ==
        std::vector<int64_t>{6, 16, 8});
  // Input and output, both contiguous in kernel order.
  CHECK(std::vector<int64_t>(call.expected_strides().begin(), call.expected_strides().end()) ==
        std::vector<int64_t>{128, 8, 1, 128, 8, 1});
}

}  // namespace
}  // namespace tccd::codegen
