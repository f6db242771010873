// MutationsIntoProducers: schedule text in, schedule text out.
#include <catch2/catch.hpp>

#include "codegen/passes/mutations_into_producers.h"
#include "codegen/schedule/parser.h"
#include "codegen/schedule/printer.h"
#include "codegen/schedule/verifier.h"

namespace tccd::codegen {
namespace {

using ir::DType;

// out0 = in0 * 0.9 + in1 * 0.1 (a running statistic's update); with `leak`, out1 = in0 * 2
// (another store depending on the old value).
PointwiseKernel Lerp(const std::string& name, bool leak = false, std::vector<int64_t> shape = {4}) {
  PointwiseKernel k;
  k.name = name;
  k.shape = std::move(shape);
  k.input_dtypes = {DType::kF32, DType::kF32};
  k.output_dtypes = {DType::kF32};
  auto add = [&](PwOp op, std::vector<int> args, int operand = -1, double f = 0) {
    k.body.push_back(
        {.op = op, .dtype = DType::kF32, .args = std::move(args), .operand = operand, .fvalue = f});
    return static_cast<int>(k.body.size() - 1);
  };
  const int old = add(PwOp::kLoad, {}, 0);
  const int batch = add(PwOp::kLoad, {}, 1);
  const int a = add(PwOp::kMul, {old, add(PwOp::kConstant, {}, -1, 0.9)});
  const int b = add(PwOp::kMul, {batch, add(PwOp::kConstant, {}, -1, 0.1)});
  add(PwOp::kStore, {add(PwOp::kAdd, {a, b})}, 0);
  if (leak) {
    k.output_dtypes.push_back(DType::kF32);
    add(PwOp::kStore, {add(PwOp::kAdd, {old, old})}, 1);
  }
  return k;
}

std::pair<std::string, bool> Run(const std::string& in,
                                 const std::vector<PointwiseKernel>& kernels) {
  absl::StatusOr<schedule::Schedule> s = schedule::ParseSchedule(in);
  INFO(s.status().ToString());
  REQUIRE(s.ok());
  MutationsIntoProducers pass(kernels);
  absl::StatusOr<bool> changed = pass.Run(*s);
  REQUIRE(changed.ok());
  INFO(schedule::VerifySchedule(*s).ToString());
  CHECK(schedule::VerifySchedule(*s).ok());
  return {schedule::PrintSchedule(*s), *changed};
}

// %0 running_mean (input), %1 the batch's mean (input), %2 the new running mean.
constexpr char kValues[] = R"(schedule(inputs=2) {
  %0: f32[4]{1}@cpu
  %1: f32[4]{1}@cpu
  %2: f32[4]{1}@cpu
  %3: f32[4]{1}@cpu
  %4: f32[4]{1}@cpu
)";
constexpr char kLerp[] =
    R"(kernel(%0, %1) artifact="k.so" symbol="tccd_k0" abi="tccd-cpu-1" shape=[4] strides=[1,1,1] kernels=[{name="tccd_k0", kind="cpu_pointwise_loop", ops=["aten::add.Tensor"], shape=[4]}])";

TEST_CASE("the kernel computing a kept input mutation writes it into the input's buffer",
          "[schedule][mutations-into-producers]") {
  auto [out, changed] = Run(std::string(kValues) + "  %2 = " + kLerp + R"(
  %3 = extern aten::neg.default(%2)
  _ = extern aten::copy_.default(%0, %2)
  %4 = extern aten::neg.default(%0)
  return (%3, %4, %0)
}
)",
                            {Lerp("tccd_k0")});
  CHECK(changed);
  // Readers of %2 read the new value in %0's buffer; so does the reader after the copy.
  CHECK(out == std::string(kValues) + "  %2 = " + kLerp + R"( into=[0]
  %3 = extern aten::neg.default(%2)
  %4 = extern aten::neg.default(%0)
  return (%3, %4, %0)
}
)");
}

TEST_CASE("the kernel may read the input through a view at the same offset",
          "[schedule][mutations-into-producers]") {
  // Batch norm's update reads running_mean viewed as [C, 1, 1]; here a [4] view of it.
  const std::string kernel =
      R"(kernel(%3, %1) artifact="k.so" symbol="tccd_k0" abi="tccd-cpu-1" shape=[4] strides=[1,1,1] kernels=[{name="tccd_k0", kind="cpu_pointwise_loop", ops=["aten::add.Tensor"], shape=[4]}])";
  auto [out, changed] = Run(std::string(kValues) + "  %3 = extern aten::view.default(%0, [4])\n" +
                                "  %2 = " + kernel + R"(
  _ = extern aten::copy_.default(%0, %2)
  return (%2)
}
)",
                            {Lerp("tccd_k0")});
  CHECK(changed);
  CHECK(out == std::string(kValues) + "  %3 = extern aten::view.default(%0, [4])\n" +
                   "  %2 = " + kernel + R"( into=[0]
  return (%2)
}
)");
}

TEST_CASE("a kernel output the copy reads through a view over the same bytes is written in place",
          "[schedule][mutations-into-producers]") {
  // Batch norm's decomposition: the running statistic is computed as [C, 1] and viewed as [C].
  const std::string values = R"(schedule(inputs=2) {
  %0: f32[4]{1}@cpu
  %1: f32[4]{1}@cpu
  %2: f32[4,1]{1,1}@cpu
  %3: f32[4]{1}@cpu
)";
  const std::string kernel =
      R"(kernel(%0, %1) artifact="k.so" symbol="tccd_k0" abi="tccd-cpu-1" shape=[4,1] strides=[1,0,1,0,1,0] kernels=[{name="tccd_k0", kind="cpu_pointwise_loop", ops=["aten::lerp.Scalar"], shape=[4,1]}])";
  auto [out, changed] = Run(values + "  %2 = " + kernel + R"(
  %3 = extern aten::view.default(%2, [4])
  _ = extern aten::copy_.default(%0, %3)
  return ()
}
)",
                            {Lerp("tccd_k0", false, {4, 1})});
  CHECK(changed);
  CHECK(out == values + "  %2 = " + kernel + R"( into=[0]
  return ()
}
)");
}

TEST_CASE("the into list round-trips through the printer and parser", "[schedule]") {
  const std::string text =
      std::string(kValues) + "  %2, %3 = " +
      R"(kernel(%0, %1) artifact="k.so" symbol="tccd_k0" abi="tccd-cpu-1" shape=[4] strides=[1,1,1,1] kernels=[] into=[-1,1]
  return (%2)
}
)";
  absl::StatusOr<schedule::Schedule> s = schedule::ParseSchedule(text);
  REQUIRE(s.ok());
  CHECK(s->steps[0].as<schedule::KernelLaunch>().write_into ==
        std::vector<schedule::ValueId>{-1, 1});
  CHECK(schedule::PrintSchedule(*s) == text);
  CHECK(schedule::VerifySchedule(*s).ok());
  // Into a value that is no graph input: the verifier refuses.
  s->steps[0].as<schedule::KernelLaunch>().write_into = {-1, 2};
  CHECK_FALSE(schedule::VerifySchedule(*s).ok());
}

TEST_CASE("nothing to do where the old value is still read or the kernel cannot write in place",
          "[schedule][mutations-into-producers]") {
  struct Case {
    const char* why;
    std::string text;
    std::vector<PointwiseKernel> kernels;
  };
  const std::string copy = "  _ = extern aten::copy_.default(%0, %2)\n  return (%0)\n}\n";
  const Case cases[] = {
      {"the old value is read between the kernel and the copy",
       std::string(kValues) + "  %2 = " + kLerp + "\n  %3 = extern aten::neg.default(%0)\n" + copy,
       {Lerp("tccd_k0")}},
      {"a view of the old value is read between",
       std::string(kValues) + "  %3 = extern aten::view.default(%0, [4])\n  %2 = " + kLerp +
           "\n  %4 = extern aten::neg.default(%3)\n" + copy,
       {Lerp("tccd_k0")}},
      {"another store of the kernel depends on the old value",
       std::string(kValues) + "  %2, %3 = " +
           R"(kernel(%0, %1) artifact="k.so" symbol="tccd_k0" abi="tccd-cpu-1" shape=[4] strides=[1,1,1,1] kernels=[{name="tccd_k0", kind="cpu_pointwise_loop", ops=[], shape=[4]}])" +
           "\n" + copy,
       {Lerp("tccd_k0", /*leak=*/true)}},
      {"the kernel reads the input where it does not write the output",
       std::string(kValues) + "  %2 = " +
           R"(kernel(%0, %1) artifact="k.so" symbol="tccd_k0" abi="tccd-cpu-1" shape=[4] strides=[0,1,1] kernels=[{name="tccd_k0", kind="cpu_pointwise_loop", ops=[], shape=[4]}])" +
           "\n" + copy,
       {Lerp("tccd_k0")}},
      {"the value comes from an extern op",
       std::string(kValues) + "  %2 = extern aten::neg.default(%1)\n" + copy,
       {}},
      {"an unknown kernel", std::string(kValues) + "  %2 = " + kLerp + "\n" + copy, {}},
      {"copied into twice",
       std::string(kValues) + "  %2 = " + kLerp + "\n  _ = extern aten::copy_.default(%0, %1)\n" +
           copy,
       {Lerp("tccd_k0")}},
  };
  for (const Case& c : cases) {
    INFO(c.why);
    auto [out, changed] = Run(c.text, c.kernels);
    CHECK_FALSE(changed);
    CHECK(out == c.text);
  }
}

}  // namespace
}  // namespace tccd::codegen
