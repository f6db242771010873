// DyingInputsIntoOutputs: schedule text in, schedule text out.
#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "codegen/passes/dying_inputs_into_outputs.h"
#include "codegen/schedule/parser.h"
#include "codegen/schedule/printer.h"
#include "codegen/schedule/verifier.h"

namespace tccd::codegen {
namespace {

using ir::DType;

// A kernel over `shape` f32 (default [512, 1024], 2 MiB): out0 = in0 + in1.
PointwiseKernel Add(const std::string& name, std::vector<int64_t> shape = {512, 1024}) {
  PointwiseKernel k;
  k.name = name;
  k.shape = std::move(shape);
  k.input_dtypes = {DType::kF32, DType::kF32};
  k.output_dtypes = {DType::kF32};
  auto add = [&](PwOp op, std::vector<int> args, int operand = -1) {
    k.body.push_back({.op = op, .dtype = DType::kF32, .args = std::move(args), .operand = operand});
    return static_cast<int>(k.body.size() - 1);
  };
  const int sum = add(PwOp::kAdd, {add(PwOp::kLoad, {}, 0), add(PwOp::kLoad, {}, 1)});
  add(PwOp::kStore, {sum}, 0);
  return k;
}

std::pair<std::string, bool> Run(const std::string& in, const std::vector<PointwiseKernel>& kernels,
                                 DyingInputsIntoOutputs::Options options = {}) {
  absl::StatusOr<schedule::Schedule> s = schedule::ParseSchedule(in);
  INFO(s.status().ToString());
  REQUIRE(s.ok());
  DyingInputsIntoOutputs pass(kernels, options);
  absl::StatusOr<bool> changed = pass.Run(*s);
  REQUIRE(changed.ok());
  INFO(schedule::VerifySchedule(*s).ToString());
  CHECK(schedule::VerifySchedule(*s).ok());
  return {schedule::PrintSchedule(*s), *changed};
}

// %0 %1 inputs; %2 = k0(%0, %1) (an intermediate the plan allocates); %3 = k1(%0, %2).
constexpr char kValues[] = R"(schedule(inputs=2) {
  %0: f32[512,1024]{1024,1}@cuda
  %1: f32[512,1024]{1024,1}@cuda
  %2: f32[512,1024]{1024,1}@cuda
  %3: f32[512,1024]{1024,1}@cuda
  %4: f32[512,1024]{1024,1}@cuda
)";
std::string Launch(const std::string& name, const std::string& args,
                   const std::string& kind = "cuda_pointwise") {
  return absl::StrCat(
      "kernel(", args, R"() artifact="k.so" symbol=")", name,
      R"(" abi="tccd-cuda-1" shape=[512,1024] strides=[1024,1,1024,1,1024,1] kernels=[{name=")",
      name, R"(", kind=")", kind, R"(", ops=["aten::add.Tensor"], shape=[512,1024]}])");
}

TEST_CASE("a pointwise kernel writes its output over an intermediate that dies at it",
          "[schedule][dying-inputs-into-outputs]") {
  const std::string k0 = Launch("tccd_k0", "%0, %1"), k1 = Launch("tccd_k1", "%0, %2");
  auto [out, changed] =
      Run(std::string(kValues) + "  %2 = " + k0 + "\n  %3 = " + k1 + "\n  return (%3)\n}\n",
          {Add("tccd_k0"), Add("tccd_k1")});
  CHECK(changed);
  // %2 (k1's input 1) dies at k1: %3 is written into it. The graph inputs are the caller's.
  CHECK(out ==
        std::string(kValues) + "  %2 = " + k0 + "\n  %3 = " + k1 + " into=[2]\n  return (%3)\n}\n");
}

TEST_CASE(
    "nothing to do where the intermediate lives on, is an input, or the kernel is not "
    "plain pointwise",
    "[schedule][dying-inputs-into-outputs]") {
  const std::string k0 = Launch("tccd_k0", "%0, %1"), k1 = Launch("tccd_k1", "%0, %2");
  const std::vector<PointwiseKernel> kernels = {Add("tccd_k0"), Add("tccd_k1")};
  // %2 read after k1.
  {
    const std::string in = std::string(kValues) + "  %2 = " + k0 + "\n  %3 = " + k1 +
                           "\n  %4 = extern aten::neg.default(%2)\n  return (%3, %4)\n}\n";
    auto [out, changed] = Run(in, kernels);
    CHECK_FALSE(changed);
    CHECK(out == in);
  }
  // %2 a plan output.
  {
    const std::string in =
        std::string(kValues) + "  %2 = " + k0 + "\n  %3 = " + k1 + "\n  return (%3, %2)\n}\n";
    auto [out, changed] = Run(in, kernels);
    CHECK_FALSE(changed);
  }
  // A view of %2 read after k1.
  {
    const std::string in = std::string(kValues) + "  %2 = " + k0 +
                           "\n  %4 = extern aten::view.default(%2, [512, 1024])\n  %3 = " + k1 +
                           "\n  return (%3, %4)\n}\n";
    auto [out, changed] = Run(in, kernels);
    CHECK_FALSE(changed);
  }
  // Only graph inputs read: the caller's buffers are never written.
  {
    const std::string in =
        std::string(kValues) + "  %3 = " + Launch("tccd_k1", "%0, %1") + "\n  return (%3)\n}\n";
    auto [out, changed] = Run(in, kernels);
    CHECK_FALSE(changed);
  }
  // An index kernel (it may read elements other than the one it writes).
  {
    const std::string in = std::string(kValues) + "  %2 = " + k0 +
                           "\n  %3 = " + Launch("tccd_k1", "%0, %2", "cuda_pointwise_index") +
                           "\n  return (%3)\n}\n";
    auto [out, changed] = Run(in, kernels);
    CHECK_FALSE(changed);
  }
}

TEST_CASE("a pointwise kernel writes over a convolution's output that dies at it",
          "[schedule][dying-inputs-into-outputs]") {
  // ResNet-50's conv -> batch norm (+ ReLU): the convolution's output is an extern op's fresh
  // tensor, and the kernel (channels-last: reordered) writes its output over it.
  const std::string conv =
      "extern aten::convolution.default(%0, %1, None, [1, 1], [0, 0], "
      "[1, 1], false, [0, 0], 1)";
  const std::string k1 = Launch("tccd_k1", "%0, %2", "cuda_pointwise_reordered");
  const std::string in =
      std::string(kValues) + "  %2 = " + conv + "\n  %3 = " + k1 + "\n  return (%3)\n}\n";
  const std::vector<PointwiseKernel> kernels = {Add("tccd_k1")};
  auto [out, changed] = Run(in, kernels);
  CHECK(changed);
  CHECK(out == std::string(kValues) + "  %2 = " + conv + "\n  %3 = " + k1 +
                   " into=[2]\n  return (%3)\n}\n");
  // Either knob off: as before (the kernel is reordered and its input an extern output).
  for (DyingInputsIntoOutputs::Options off :
       {DyingInputsIntoOutputs::Options{.extern_outputs = false},
        DyingInputsIntoOutputs::Options{.reordered_kernels = false}}) {
    auto [same, unchanged] = Run(in, kernels, off);
    CHECK_FALSE(unchanged);
    CHECK(same == in);
  }
}

TEST_CASE("nothing to do over an extern output that is a view, a reshape or a factory's",
          "[schedule][dying-inputs-into-outputs]") {
  const std::string k1 = Launch("tccd_k1", "%0, %2");
  const std::vector<PointwiseKernel> kernels = {Add("tccd_k1")};
  for (const std::string& def :
       {std::string("extern aten::view.default(%1, [512, 1024])"),
        std::string("extern aten::reshape.default(%1, [512, 1024])"),
        std::string("extern aten::new_zeros.default(%0, [512, 1024])"),
        // A factory without a tensor argument: the client may have made it once, at load.
        std::string("extern aten::arange.default(524288)")}) {
    const std::string in =
        std::string(kValues) + "  %2 = " + def + "\n  %3 = " + k1 + "\n  return (%3)\n}\n";
    auto [out, changed] = Run(in, kernels);
    INFO(def);
    // new_zeros reads %0 (its tensor argument) and returns a fresh tensor: written over.
    CHECK(changed == (def.find("new_zeros") != std::string::npos));
  }
}

// CPU plans: the MLP's ReLU over its addmm output, [64, 512] f32 (128 KiB), and a smaller
// [64, 64] (16 KiB, under kCpuMinBytes).
std::string CpuValues(int rows, int cols) {
  std::string v = "schedule(inputs=2) {\n";
  for (int i = 0; i < 6; ++i)
    absl::StrAppend(&v, "  %", i, ": f32[", rows, ",", cols, "]{", cols, ",1}@cpu\n");
  return v;
}
std::string CpuLaunch(const std::string& name, const std::string& args, int rows, int cols) {
  return absl::StrCat("kernel(", args, R"() artifact="kernels.so" symbol=")", name,
                      R"(" abi="tccd-cpu-1" shape=[)", rows, ",", cols, "] strides=[", cols, ",1,",
                      cols, ",1,", cols, R"(,1] kernels=[{name=")", name,
                      R"(", kind="cpu_pointwise_loop", ops=["aten::add.Tensor"], shape=[)", rows,
                      ",", cols, "]}]");
}

TEST_CASE("a CPU pointwise loop writes over a GEMM output that dies at it",
          "[schedule][dying-inputs-into-outputs]") {
  const std::string values = CpuValues(64, 512);
  const std::string mm = "extern aten::mm.default(%0, %1)";
  const std::string k1 = CpuLaunch("tccd_k1", "%0, %2", 64, 512);
  const std::vector<PointwiseKernel> kernels = {Add("tccd_k1", {64, 512})};
  const std::string in = values + "  %2 = " + mm + "\n  %3 = " + k1 + "\n  return (%3)\n}\n";
  auto [out, changed] = Run(in, kernels);
  CHECK(changed);
  CHECK(out == values + "  %2 = " + mm + "\n  %3 = " + k1 + " into=[2]\n  return (%3)\n}\n");
  // TCCD_DISABLE_PASSES=dying-cpu-kernels: as before.
  auto [same, unchanged] = Run(in, kernels, {.cpu_kernels = false});
  CHECK_FALSE(unchanged);
  CHECK(same == in);
}

TEST_CASE("nothing to do on CPU where the GEMM output is saved, viewed, an input, or small",
          "[schedule][dying-inputs-into-outputs]") {
  const std::string values = CpuValues(64, 512);
  const std::string mm = "extern aten::mm.default(%0, %1)";
  const std::string k1 = CpuLaunch("tccd_k1", "%0, %2", 64, 512);
  const std::vector<PointwiseKernel> kernels = {Add("tccd_k1", {64, 512})};
  for (const std::string& in :
       {// Saved for backward: a plan output.
        values + "  %2 = " + mm + "\n  %3 = " + k1 + "\n  return (%3, %2)\n}\n",
        // A view of it returned (a saved view).
        values + "  %2 = " + mm + "\n  %4 = extern aten::view.default(%2, [64, 512])\n  %3 = " +
            k1 + "\n  return (%3, %4)\n}\n",
        // A view of it read after the kernel.
        values + "  %2 = " + mm + "\n  %4 = extern aten::view.default(%2, [64, 512])\n  %3 = " +
            k1 + "\n  %5 = extern aten::neg.default(%4)\n  return (%3, %5)\n}\n",
        // The kernel's input is a graph input (the caller's buffer).
        values + "  %3 = " + CpuLaunch("tccd_k1", "%0, %1", 64, 512) + "\n  return (%3)\n}\n"}) {
    INFO(in);
    auto [out, changed] = Run(in, kernels);
    CHECK_FALSE(changed);
    CHECK(out == in);
  }
  // Under kCpuMinBytes ([64, 64] f32, 16 KiB).
  const std::string small = CpuValues(64, 64) + "  %2 = " + mm +
                            "\n  %3 = " + CpuLaunch("tccd_k1", "%0, %2", 64, 64) +
                            "\n  return (%3)\n}\n";
  auto [out, changed] = Run(small, {Add("tccd_k1", {64, 64})});
  CHECK_FALSE(changed);
  CHECK(out == small);
}

}  // namespace
}  // namespace tccd::codegen
