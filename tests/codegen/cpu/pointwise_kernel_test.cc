// The kernel IR's verifier and printer (codegen/kernel/pointwise_kernel.cc).
#include "codegen/kernel/pointwise_kernel.h"

#include <catch2/catch.hpp>
#include <functional>
#include <limits>
#include <string>

#include "test_util.h"

namespace tccd::codegen::testing {
namespace {

// relu(a * b + c) with a bf16 output, the shape of a typical fused kernel.
PointwiseKernel Example() {
  KernelBuilder k("fused_mul_add_relu", {4, 8});
  const int a = k.Input(DType::kF32), b = k.Input(DType::kF32);
  const int c = k.Cast(k.Input(DType::kBF16), DType::kF32);
  const int s = k.Op(PwOp::kAdd, DType::kF32, {k.Op(PwOp::kMul, DType::kF32, {a, b}), c});
  const int r = k.Op(PwOp::kMaximum, DType::kF32, {s, k.Const(DType::kF32, 0.0)});
  k.Output(k.Cast(r, DType::kBF16));
  k.Output(k.Op(PwOp::kGt, DType::kBool, {s, k.Const(DType::kF32, 0.5)}));
  PointwiseKernel kernel = k.kernel();
  kernel.fused_ops = {"aten::mul.Tensor", "aten::add.Tensor", "aten::relu.default"};
  return kernel;
}

TEST_CASE("op kinds and dtype rules: one answer for the verifier, lowerings and emitters",
          "[pointwise_kernel]") {
  // Every op has its kind; the emitters switch on kinds, so a kind per op is all they need.
  for (int i = 0; i <= static_cast<int>(PwOp::kScatterAdd); ++i) {
    const PwOp op = static_cast<PwOp>(i);
    INFO(PwOpName(op));
    const PwOpKind kind = PwOpKindOf(op);
    CHECK(IsReduce(op) ==
          (op == PwOp::kReduceSum || op == PwOp::kReduceMax || op == PwOp::kReduceMin));
    if (IsFloatOnlyOp(op)) CHECK((kind == PwOpKind::kBinary || kind == PwOpKind::kUnary));
  }
  CHECK(PwOpKindOf(PwOp::kPow) == PwOpKind::kBinary);
  CHECK(PwOpKindOf(PwOp::kRound) == PwOpKind::kUnary);
  CHECK(PwOpKindOf(PwOp::kGe) == PwOpKind::kCompare);
  CHECK(PwOpKindOf(PwOp::kNot) == PwOpKind::kLogical);
  CHECK(PwOpKindOf(PwOp::kScatterAdd) == PwOpKind::kScatter);
  CHECK(IsFloatOnlyOp(PwOp::kDiv));
  CHECK(IsFloatOnlyOp(PwOp::kExp));
  CHECK_FALSE(IsFloatOnlyOp(PwOp::kAdd));
  CHECK_FALSE(IsFloatOnlyOp(PwOp::kFloor));  // the identity on integers
  // f16/bf16 are held in f32; index operands are i32/i64.
  CHECK(HeldDType(DType::kBF16) == DType::kF32);
  CHECK(HeldDType(DType::kF16) == DType::kF32);
  CHECK(HeldDType(DType::kI8) == DType::kI8);
  CHECK(HeldDType(DType::kBool) == DType::kBool);
  CHECK(IsF32OrHalf(DType::kBF16));
  CHECK_FALSE(IsF32OrHalf(DType::kF64));
  CHECK(IsIndexDType(DType::kI32));
  CHECK_FALSE(IsIndexDType(DType::kU8));
}

TEST_CASE("printer golden", "[pointwise_kernel]") {
  const std::string want =
      "pointwise @fused_mul_add_relu[4,8](in0: f32, in1: f32, in2: bf16) -> (out0: bf16, "
      "out1: b8) {\n"
      "  // fused: aten::mul.Tensor, aten::add.Tensor, aten::relu.default\n"
      "  %0 = load.f32 in0\n"
      "  %1 = load.f32 in1\n"
      "  %2 = load.bf16 in2\n"
      "  %3 = cast.f32 %2\n"
      "  %4 = mul.f32 %0, %1\n"
      "  %5 = add.f32 %4, %3\n"
      "  %6 = constant.f32 0.0\n"
      "  %7 = maximum.f32 %5, %6\n"
      "  %8 = cast.bf16 %7\n"
      "  store.bf16 out0, %8\n"
      "  %10 = constant.f32 0.5\n"
      "  %11 = gt.b8 %5, %10\n"
      "  store.b8 out1, %11\n"
      "}\n";
  CHECK(PrintPointwiseKernel(Example()) == want);
}

TEST_CASE("printer: constants, rank 0, no fused ops", "[pointwise_kernel]") {
  KernelBuilder k("consts", {});
  k.Output(k.Const(DType::kI64, -3));
  k.Output(k.Const(DType::kBool, 1));
  k.Output(k.Const(DType::kF64, 1e-300));
  k.Output(k.Const(DType::kF32, -std::numeric_limits<double>::infinity()));
  CHECK(PrintPointwiseKernel(k.kernel()) ==
        "pointwise @consts[]() -> (out0: i64, out1: b8, out2: f64, out3: f32) {\n"
        "  %0 = constant.i64 -3\n"
        "  store.i64 out0, %0\n"
        "  %2 = constant.b8 true\n"
        "  store.b8 out1, %2\n"
        "  %4 = constant.f64 1e-300\n"
        "  store.f64 out2, %4\n"
        "  %6 = constant.f32 -inf\n"
        "  store.f32 out3, %6\n"
        "}\n");
}

TEST_CASE("the verifier accepts well-formed kernels", "[pointwise_kernel]") {
  CHECK(VerifyPointwiseKernel(Example()).empty());
}

TEST_CASE("the verifier rejects broken kernels", "[pointwise_kernel]") {
  struct Breakage {
    const char* what;
    std::function<void(PointwiseKernel&)> apply;
    const char* expect;  // a substring of the message
  };
  const std::vector<Breakage> cases = {
      {"forward reference",
       [](PointwiseKernel& k) {
         k.body[4].args = {0, 7};
       },
       "%7"},
      {"self reference",
       [](PointwiseKernel& k) {
         k.body[4].args = {0, 4};
       },
       "%4"},
      {"negative arg",
       [](PointwiseKernel& k) {
         k.body[4].args = {0, -1};
       },
       "%-1"},
      {"arity", [](PointwiseKernel& k) { k.body[4].args = {0}; }, "expects 2 args"},
      {"store as value",
       [](PointwiseKernel& k) {
         k.body[11].args = {9, 10};
       },
       "store"},
      {"load index", [](PointwiseKernel& k) { k.body[1].operand = 3; }, "input index 3"},
      {"load dtype", [](PointwiseKernel& k) { k.body[1].dtype = DType::kF64; }, "differs"},
      {"operand dtype",
       [](PointwiseKernel& k) {
         k.body[4].args = {0, 2};  // f32 * bf16
       },
       "operand dtype"},
      {"arithmetic on bf16", [](PointwiseKernel& k) { k.body[4].dtype = DType::kBF16; }, "bf16"},
      {"div on ints",
       [](PointwiseKernel& k) {
         k.input_dtypes[0] = k.input_dtypes[1] = DType::kI32;
         for (int i : {0, 1}) k.body[i].dtype = DType::kI32;
         k.body[4].op = PwOp::kDiv;
         k.body[4].dtype = DType::kI32;
       },
       "floating only"},
      {"compare result", [](PointwiseKernel& k) { k.body[11].dtype = DType::kF32; }, "b8"},
      {"store index", [](PointwiseKernel& k) { k.body[9].operand = 2; }, "output index 2"},
      {"store dtype", [](PointwiseKernel& k) { k.body[9].args = {7}; }, "stores a f32"},
      {"stored twice",
       [](PointwiseKernel& k) {
         k.body[12].operand = 0;
         k.body[12].dtype = DType::kBF16;
         k.body[12].args = {8};
       },
       "more than once"},
      {"never stored", [](PointwiseKernel& k) { k.body.pop_back(); }, "output 1 is never stored"},
      {"no outputs",
       [](PointwiseKernel& k) {
         k.output_dtypes.clear();
         k.body.resize(8);
       },
       "no outputs"},
      {"bad name", [](PointwiseKernel& k) { k.name = "9lives"; }, "C identifier"},
      {"empty name", [](PointwiseKernel& k) { k.name = ""; }, "C identifier"},
      {"negative dim",
       [](PointwiseKernel& k) {
         k.shape = {4, -2};  // -1 is kRuntimeDim, a size known at run time
       },
       "negative"},
      {"huge shape",
       [](PointwiseKernel& k) {
         k.shape = {int64_t{1} << 40, int64_t{1} << 40};
       },
       "2^63"},
      {"f16 constant", [](PointwiseKernel& k) { k.body[6].dtype = DType::kF16; }, "f16/bf16"},
      {"where condition",
       [](PointwiseKernel& k) {
         k.body[7].op = PwOp::kWhere;
         k.body[7].args = {5, 5, 6};
       },
       "condition must be b8"},
      {"logical on floats", [](PointwiseKernel& k) { k.body[11].op = PwOp::kAnd; },
       "operand must be b8"},
  };
  for (const Breakage& b : cases) {
    INFO(b.what);
    PointwiseKernel kernel = Example();
    b.apply(kernel);
    const std::string error = VerifyPointwiseKernel(kernel);
    INFO(error);
    CHECK_FALSE(error.empty());
    CHECK(error.find(b.expect) != std::string::npos);
  }
}

TEST_CASE("a second store to one output is rejected", "[pointwise_kernel]") {
  KernelBuilder k("twice", {2});
  const int x = k.Input(DType::kF32);
  k.Output(x);
  PointwiseKernel kernel = k.kernel();
  kernel.body.push_back(kernel.body.back());
  CHECK(VerifyPointwiseKernel(kernel).find("more than once") != std::string::npos);
}

TEST_CASE("zero output tails: row kernels over the innermost dim only, printed",
          "[pointwise_kernel]") {
  // A row kernel storing x + 1 per element into a buffer padded by 6 after each row.
  auto rows = [](std::vector<int64_t> shape, int reduced) {
    KernelBuilder k("padded_rows", std::move(shape));
    const int x = k.Input(DType::kF32);
    k.Output(k.Op(PwOp::kAdd, DType::kF32, {x, k.Op(PwOp::kReduceSum, DType::kF32, {x})}));
    PointwiseKernel kernel = k.kernel();
    kernel.reduction.num_reduced_dims = reduced;
    kernel.reduction.row_operand = {false, false};
    kernel.output_zero_tail = {6};
    return kernel;
  };
  CHECK(VerifyPointwiseKernel(rows({4, 30522}, 1)) == "");
  CHECK(
      PrintPointwiseKernel(rows({4, 30522}, 1)).find("rows(reduce 1 dims) zero-tail(out0: 6) {") !=
      std::string::npos);
  CHECK(VerifyPointwiseKernel(rows({4, 1, 30522}, 2)) ==
        "");  // size-1 reduced dims are no part of the row
  CHECK(VerifyPointwiseKernel(rows({4, 3, 30522}, 2)).find("several dims") != std::string::npos);
  PointwiseKernel wrong_count = rows({4, 30522}, 1);
  wrong_count.output_zero_tail = {6, 0};
  CHECK(VerifyPointwiseKernel(wrong_count).find("entries for 1 outputs") != std::string::npos);
  PointwiseKernel negative = rows({4, 30522}, 1);
  negative.output_zero_tail = {-1};
  CHECK(VerifyPointwiseKernel(negative).find("negative") != std::string::npos);
  // A plain pointwise kernel has no rows to pad.
  PointwiseKernel plain = Example();
  plain.output_zero_tail = {6, 0};
  CHECK(VerifyPointwiseKernel(plain).find("without rows") != std::string::npos);
  // No tails: printed as before.
  CHECK(PrintPointwiseKernel(Example()).find("zero-tail") == std::string::npos);
}

TEST_CASE("PwOpName covers every op", "[pointwise_kernel]") {
  for (int op = 0; op <= static_cast<int>(PwOp::kStore); ++op) {
    CHECK(std::string(PwOpName(static_cast<PwOp>(op))) != "?");
  }
}

}  // namespace
}  // namespace tccd::codegen::testing
