// The CUDA backend's test kernels (see cuda_test_kernels.h).
#include "cuda_test_kernels.h"

#include <limits>
#include <utility>

namespace tccd::codegen::cuda_testing {

KernelBuilder::KernelBuilder(std::string name, std::vector<int64_t> shape) {
  kernel_.name = std::move(name);
  kernel_.shape = std::move(shape);
}

int KernelBuilder::Input(DType dtype) {
  PwInstr in;
  in.op = PwOp::kLoad;
  in.dtype = dtype;
  in.operand = static_cast<int>(kernel_.input_dtypes.size());
  kernel_.input_dtypes.push_back(dtype);
  kernel_.body.push_back(in);
  return static_cast<int>(kernel_.body.size()) - 1;
}

int KernelBuilder::GatherInput(DType dtype) {
  kernel_.input_dtypes.push_back(dtype);
  return static_cast<int>(kernel_.input_dtypes.size()) - 1;
}

int KernelBuilder::Index(int dim) {
  PwInstr in;
  in.op = PwOp::kIndex;
  in.dtype = DType::kI64;
  in.operand = dim;
  kernel_.body.push_back(in);
  return static_cast<int>(kernel_.body.size()) - 1;
}

int KernelBuilder::Gather(int input, int mask, std::vector<int> coords) {
  PwInstr in;
  in.op = PwOp::kGather;
  in.dtype = kernel_.input_dtypes[input];
  in.operand = input;
  in.args = {mask};
  in.args.insert(in.args.end(), coords.begin(), coords.end());
  kernel_.body.push_back(in);
  return static_cast<int>(kernel_.body.size()) - 1;
}

int KernelBuilder::Const(DType dtype, double value) {
  PwInstr in;
  in.op = PwOp::kConstant;
  in.dtype = dtype;
  in.fvalue = value;
  in.ivalue = static_cast<int64_t>(value);
  kernel_.body.push_back(in);
  return static_cast<int>(kernel_.body.size()) - 1;
}

int KernelBuilder::Op(PwOp op, DType dtype, std::vector<int> args) {
  PwInstr in;
  in.op = op;
  in.dtype = dtype;
  in.args = std::move(args);
  kernel_.body.push_back(in);
  return static_cast<int>(kernel_.body.size()) - 1;
}

void KernelBuilder::Output(int value) {
  PwInstr in;
  in.op = PwOp::kStore;
  in.dtype = dtype_of(value);
  in.args = {value};
  in.operand = static_cast<int>(kernel_.output_dtypes.size());
  kernel_.output_dtypes.push_back(in.dtype);
  kernel_.body.push_back(in);
}

PointwiseKernel FusedReluKernel(const std::string& name, std::vector<int64_t> shape) {
  KernelBuilder k(name, std::move(shape));
  const int a = k.Input(DType::kF32), b = k.Input(DType::kF32), c = k.Input(DType::kF32);
  const int mul = k.Op(PwOp::kMul, DType::kF32, {a, b});
  const int add = k.Op(PwOp::kAdd, DType::kF32, {mul, c});
  k.Output(k.Op(PwOp::kMaximum, DType::kF32, {add, k.Const(DType::kF32, 0.0)}));
  return k.kernel();
}

PointwiseKernel Bf16GeluKernel(const std::string& name, std::vector<int64_t> shape) {
  KernelBuilder k(name, std::move(shape));
  const int x = k.Cast(k.Input(DType::kBF16), DType::kF32);
  const int scaled =
      k.Op(PwOp::kMul, DType::kF32, {x, k.Const(DType::kF32, 0.70710678118654752440)});
  const int cdf = k.Op(PwOp::kAdd, DType::kF32,
                       {k.Const(DType::kF32, 1.0), k.Op(PwOp::kErf, DType::kF32, {scaled})});
  const int half_x = k.Op(PwOp::kMul, DType::kF32, {k.Const(DType::kF32, 0.5), x});
  k.Output(k.Cast(k.Op(PwOp::kMul, DType::kF32, {half_x, cdf}), DType::kBF16));
  return k.kernel();
}

PointwiseKernel WhereCompareKernel(const std::string& name, std::vector<int64_t> shape) {
  KernelBuilder k(name, std::move(shape));
  const int x = k.Input(DType::kF32), y = k.Input(DType::kF32);
  const int lt = k.Op(PwOp::kLt, DType::kBool, {x, y});
  k.Output(lt);
  const int twice = k.Op(PwOp::kMul, DType::kF32, {y, k.Const(DType::kF32, 2.0)});
  k.Output(k.Op(PwOp::kWhere, DType::kF32, {lt, x, twice}));
  return k.kernel();
}

PointwiseKernel I64AddKernel(const std::string& name, std::vector<int64_t> shape) {
  KernelBuilder k(name, std::move(shape));
  const int a = k.Input(DType::kI64), b = k.Input(DType::kI64);
  const int sum = k.Op(PwOp::kAdd, DType::kI64, {a, b});
  k.Output(k.Op(PwOp::kAdd, DType::kI64, {sum, k.Const(DType::kI64, 7)}));
  return k.kernel();
}

PointwiseKernel MultiOutputKernel(const std::string& name, std::vector<int64_t> shape) {
  KernelBuilder k(name, std::move(shape));
  const int x = k.Cast(k.Input(DType::kF16), DType::kF32);
  k.Output(k.Op(PwOp::kExp, DType::kF32, {x}));
  k.Output(k.Cast(k.Op(PwOp::kMul, DType::kF32, {x, x}), DType::kF16));
  const int scaled = k.Op(PwOp::kMul, DType::kF32, {x, k.Const(DType::kF32, 100.0)});
  k.Output(k.Cast(scaled, DType::kI32));
  return k.kernel();
}

std::vector<DType> AllDTypes() {
  return {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI8,
          DType::kI16, DType::kI32, DType::kI64, DType::kU8,   DType::kBool};
}

PointwiseKernel AllOpsKernel(const std::string& name, DType dtype, std::vector<int64_t> shape) {
  const bool fp = dtype == DType::kF32 || dtype == DType::kF64;
  KernelBuilder k(name, std::move(shape));
  const int a = k.Input(dtype), b = k.Input(dtype);
  std::vector<PwOp> binary = {PwOp::kAdd, PwOp::kSub, PwOp::kMul, PwOp::kMaximum, PwOp::kMinimum};
  std::vector<PwOp> unary = {PwOp::kNeg, PwOp::kAbs, PwOp::kFloor, PwOp::kCeil, PwOp::kRound};
  if (fp) {
    binary.insert(binary.end(), {PwOp::kDiv, PwOp::kPow});
    unary.insert(unary.end(), {PwOp::kExp, PwOp::kLog, PwOp::kLog1p, PwOp::kExpm1, PwOp::kSqrt,
                               PwOp::kRsqrt, PwOp::kTanh, PwOp::kSigmoid, PwOp::kErf, PwOp::kSin,
                               PwOp::kCos, PwOp::kReciprocal});
  }
  for (PwOp op : binary) k.Output(k.Op(op, dtype, {a, b}));
  for (PwOp op : unary) k.Output(k.Op(op, dtype, {a}));
  for (PwOp op : {PwOp::kEq, PwOp::kNe, PwOp::kLt, PwOp::kLe, PwOp::kGt, PwOp::kGe}) {
    const int c = k.Op(op, DType::kBool, {a, b});
    k.Output(k.Op(PwOp::kWhere, dtype, {k.Op(PwOp::kNot, DType::kBool, {c}), a, b}));
  }
  for (DType to : AllDTypes()) {
    if (to != dtype) k.Output(k.Cast(a, to));
  }
  // A constant of the dtype (wrapped for integers: -1 in u8 is 255).
  k.Output(k.Op(PwOp::kAdd, dtype, {a, k.Const(dtype, fp ? 0.25 : -1.0)}));
  return k.kernel();
}

PointwiseKernel LogicAndHalfCastsKernel(const std::string& name, std::vector<int64_t> shape) {
  KernelBuilder k(name, std::move(shape));
  const int p = k.Input(DType::kBool), q = k.Input(DType::kBool);
  k.Output(k.Op(PwOp::kAnd, DType::kBool, {p, q}));
  k.Output(k.Op(PwOp::kOr, DType::kBool, {p, q}));
  k.Output(k.Op(PwOp::kLt, DType::kBool, {p, q}));
  k.Output(k.Op(PwOp::kEq, DType::kBool, {p, q}));
  for (DType from : {DType::kF16, DType::kBF16}) {
    const int x = k.Input(from);
    for (DType to : AllDTypes()) k.Output(to == from ? x : k.Cast(x, to));
  }
  for (DType to : AllDTypes()) {
    if (to != DType::kBool) k.Output(k.Cast(p, to));
  }
  return k.kernel();
}

PointwiseKernel SoftmaxRowsKernel(const std::string& name, std::vector<int64_t> shape) {
  KernelBuilder k(name, std::move(shape));
  const int x = k.Input(DType::kF32);
  const int shifted = k.Op(PwOp::kSub, DType::kF32, {x, k.Op(PwOp::kReduceMax, DType::kF32, {x})});
  const int e = k.Op(PwOp::kExp, DType::kF32, {shifted});
  k.Output(k.Op(PwOp::kDiv, DType::kF32, {e, k.Op(PwOp::kReduceSum, DType::kF32, {e})}));
  k.Rows(1, {false, false});
  return k.kernel();
}

PointwiseKernel SoftmaxRowsBf16Kernel(const std::string& name, std::vector<int64_t> shape) {
  KernelBuilder k(name, std::move(shape));
  const int x = k.Cast(k.Input(DType::kBF16), DType::kF32);
  const int shifted = k.Op(PwOp::kSub, DType::kF32, {x, k.Op(PwOp::kReduceMax, DType::kF32, {x})});
  const int e = k.Op(PwOp::kExp, DType::kF32, {shifted});
  const int y = k.Op(PwOp::kDiv, DType::kF32, {e, k.Op(PwOp::kReduceSum, DType::kF32, {e})});
  k.Output(k.Cast(y, DType::kBF16));
  k.Rows(1, {false, false});
  return k.kernel();
}

PointwiseKernel CrossEntropyForwardRowsKernel(const std::string& name, std::vector<int64_t> shape) {
  KernelBuilder k(name, std::move(shape));
  const int x = k.Cast(k.Input(DType::kBF16), DType::kF32);
  const int target = k.Input(DType::kI64);
  const double inf = std::numeric_limits<double>::infinity();
  const int max = k.Op(PwOp::kReduceMax, DType::kF32, {x});
  auto guard = [&](int m, double value) {
    return k.Op(PwOp::kWhere, DType::kF32,
                {k.Op(PwOp::kEq, DType::kBool, {max, k.Const(DType::kF32, value)}),
                 k.Const(DType::kF32, 0), m});
  };
  const int m = guard(guard(max, -inf), inf);
  const int sum = k.Op(PwOp::kReduceSum, DType::kF32,
                       {k.Op(PwOp::kExp, DType::kF32, {k.Op(PwOp::kSub, DType::kF32, {x, m})})});
  const int lse = k.Op(PwOp::kAdd, DType::kF32, {k.Op(PwOp::kLog, DType::kF32, {sum}), m});
  const int other = k.Op(PwOp::kNe, DType::kBool, {k.Index(1), target});
  const int picked = k.Op(PwOp::kReduceSum, DType::kF32,
                          {k.Op(PwOp::kWhere, DType::kF32, {other, k.Const(DType::kF32, 0), x})});
  k.Output(lse);
  k.Output(k.Op(PwOp::kSub, DType::kF32, {picked, lse}));
  k.Rows(1, {false, true, true, true});
  return k.kernel();
}

PointwiseKernel CrossEntropyBackwardRowsKernel(const std::string& name,
                                               std::vector<int64_t> shape) {
  KernelBuilder k(name, std::move(shape));
  const int x = k.Cast(k.Input(DType::kBF16), DType::kF32);
  const int lse = k.Input(DType::kF32);
  const int target = k.Input(DType::kI64);
  const int grad = k.Input(DType::kF32);
  const int hit = k.Cast(k.Op(PwOp::kEq, DType::kBool, {k.Index(1), target}), DType::kF32);
  const int g = k.Op(PwOp::kMul, DType::kF32, {hit, k.Op(PwOp::kNeg, DType::kF32, {grad})});
  const int sum = k.Op(PwOp::kReduceSum, DType::kF32, {g});
  const int p = k.Op(PwOp::kExp, DType::kF32, {k.Op(PwOp::kSub, DType::kF32, {x, lse})});
  k.Output(k.Cast(k.Op(PwOp::kSub, DType::kF32, {g, k.Op(PwOp::kMul, DType::kF32, {p, sum})}),
                  DType::kBF16));
  k.Rows(1, {false, true, true, true, false});
  return k.kernel();
}

// A bf16 log_softmax backward (g - exp(logp) * sum(g)) whose output is stored into a zero-padded
// layout: `tail` zeros after each row (the logits gradient a K-padded matmul reads,
// padded_row_stores.h).
PointwiseKernel PaddedLogSoftmaxBackwardKernel(const std::string& name, std::vector<int64_t> shape,
                                               int64_t tail) {
  KernelBuilder k(name, std::move(shape));
  const int g = k.Cast(k.Input(DType::kBF16), DType::kF32);
  const int logp = k.Cast(k.Input(DType::kBF16), DType::kF32);
  const int sum = k.Op(PwOp::kReduceSum, DType::kF32, {g});
  const int p = k.Op(PwOp::kExp, DType::kF32, {logp});
  k.Output(k.Cast(k.Op(PwOp::kSub, DType::kF32, {g, k.Op(PwOp::kMul, DType::kF32, {p, sum})}),
                  DType::kBF16));
  k.Rows(1, {false, false, false});
  PointwiseKernel kernel = k.kernel();
  kernel.output_zero_tail = {tail};
  return kernel;
}

// Attention's softmax backward under bf16 autocast (p * (g - sum(g * p)), f32 probabilities p,
// bf16 score gradient g) that also stores p cast to bf16 for the dV matmul: an output that needs
// no reduction, stored in the first pass (casts_before_views.h, row fusion's siblings).
PointwiseKernel SoftmaxBackwardProbsCastKernel(const std::string& name,
                                               std::vector<int64_t> shape) {
  KernelBuilder k(name, std::move(shape));
  const int p = k.Input(DType::kF32);
  const int g = k.Cast(k.Input(DType::kBF16), DType::kF32);
  const int sum = k.Op(PwOp::kReduceSum, DType::kF32, {k.Op(PwOp::kMul, DType::kF32, {g, p})});
  k.Output(k.Cast(p, DType::kBF16));
  k.Output(k.Cast(k.Op(PwOp::kMul, DType::kF32, {p, k.Op(PwOp::kSub, DType::kF32, {g, sum})}),
                  DType::kBF16));
  k.Rows(1, {false, false, false, false});
  return k.kernel();
}

PointwiseKernel LayerNormRowsKernel(const std::string& name, std::vector<int64_t> shape,
                                    DType params) {
  const double n = static_cast<double>(shape.back());
  KernelBuilder k(name, std::move(shape));
  const int x = k.Cast(k.Input(DType::kBF16), DType::kF32);
  const int w = k.Cast(k.Input(params), DType::kF32);
  const int b = k.Cast(k.Input(params), DType::kF32);
  const int mean = k.Op(PwOp::kDiv, DType::kF32,
                        {k.Op(PwOp::kReduceSum, DType::kF32, {x}), k.Const(DType::kF32, n)});
  const int d = k.Op(PwOp::kSub, DType::kF32, {x, mean});
  const int var =
      k.Op(PwOp::kDiv, DType::kF32,
           {k.Op(PwOp::kReduceSum, DType::kF32, {k.Op(PwOp::kMul, DType::kF32, {d, d})}),
            k.Const(DType::kF32, n)});
  const int rstd = k.Op(PwOp::kRsqrt, DType::kF32,
                        {k.Op(PwOp::kAdd, DType::kF32, {var, k.Const(DType::kF32, 1e-5)})});
  const int out =
      k.Op(PwOp::kAdd, DType::kF32,
           {k.Op(PwOp::kMul, DType::kF32, {k.Op(PwOp::kMul, DType::kF32, {d, rstd}), w}), b});
  k.Output(k.Cast(out, DType::kBF16));
  k.Output(mean);
  k.Output(rstd);
  k.Rows(1, {false, false, false, false, true, true});
  return k.kernel();
}

// Batch-norm-like centring per channel of a [C, N, H*W] bf16 view (rows over the trailing two
// dims): with H*W = 196 the strided entry's inner-vector branch moves 8-element vectors as
// 4-element pieces (kInnerVec), since a vector may not cross the end of the innermost dim.
PointwiseKernel ChannelCentreRowsKernel(const std::string& name, std::vector<int64_t> shape) {
  const double n = static_cast<double>(shape[1] * shape[2]);
  KernelBuilder k(name, std::move(shape));
  const int x = k.Cast(k.Input(DType::kBF16), DType::kF32);
  const int mean = k.Op(PwOp::kDiv, DType::kF32,
                        {k.Op(PwOp::kReduceSum, DType::kF32, {x}), k.Const(DType::kF32, n)});
  k.Output(k.Cast(k.Op(PwOp::kSub, DType::kF32, {x, mean}), DType::kBF16));
  k.Output(mean);
  k.Rows(2, {false, false, true});
  return k.kernel();
}

// A bias gradient of a product, over the leading dim of [M, N] bf16 (column reduction).
PointwiseKernel ColumnSumKernel(const std::string& name, std::vector<int64_t> shape) {
  KernelBuilder k(name, std::move(shape));
  const int a = k.Cast(k.Input(DType::kBF16), DType::kF32);
  const int b = k.Cast(k.Input(DType::kBF16), DType::kF32);
  const int sum = k.Op(PwOp::kReduceSum, DType::kF32, {k.Op(PwOp::kMul, DType::kF32, {a, b})});
  k.Output(k.Cast(sum, DType::kBF16));
  k.Columns(1, {false, false, true}, {false, false, false});
  return k.kernel();
}

// A Linear's GELU backward and its bias gradient in one column kernel (exact GELU, as fusion
// builds it for ViT/BERT/ConvNeXt MLPs): dx = g * (cdf(x) + x * pdf(x)) stored in bf16 for the
// matmuls, and its column sum over the tokens.
PointwiseKernel GeluBackwardBiasGradKernel(const std::string& name, std::vector<int64_t> shape) {
  KernelBuilder k(name, std::move(shape));
  const auto f32 = [&](double v) { return k.Const(DType::kF32, v); };
  const auto op = [&](PwOp o, std::vector<int> args) { return k.Op(o, DType::kF32, args); };
  const int g = k.Cast(k.Input(DType::kBF16), DType::kF32);
  const int x = k.Cast(k.Input(DType::kBF16), DType::kF32);
  const int erf = op(PwOp::kErf, {op(PwOp::kMul, {x, f32(0.7071067811865476)})});
  const int cdf = op(PwOp::kMul, {f32(0.5), op(PwOp::kAdd, {f32(1.0), erf})});
  const int pdf =
      op(PwOp::kMul, {f32(0.3989422804014327),
                      op(PwOp::kExp, {op(PwOp::kMul, {f32(-0.5), op(PwOp::kMul, {x, x})})})});
  const int dx = op(PwOp::kMul, {g, op(PwOp::kAdd, {cdf, op(PwOp::kMul, {x, pdf})})});
  const int sum = k.Op(PwOp::kReduceSum, DType::kF32, {dx});
  k.Output(k.Cast(dx, DType::kBF16));
  k.Output(sum);
  k.Columns(1, {false, false, false, true}, {false, false, false, false});
  return k.kernel();
}

// Layer norm backward's parameter gradients (bf16 g, x; f32 per-row mean, rstd):
// grad_weight = sum(g * (x - mean) * rstd), grad_bias = sum(g) over the rows.
PointwiseKernel LayerNormBackwardParamsKernel(const std::string& name, std::vector<int64_t> shape) {
  KernelBuilder k(name, std::move(shape));
  const int g = k.Cast(k.Input(DType::kBF16), DType::kF32);
  const int x = k.Cast(k.Input(DType::kBF16), DType::kF32);
  const int mean = k.Input(DType::kF32), rstd = k.Input(DType::kF32);
  const int x_hat = k.Op(PwOp::kMul, DType::kF32, {k.Op(PwOp::kSub, DType::kF32, {x, mean}), rstd});
  k.Output(k.Cast(k.Op(PwOp::kReduceSum, DType::kF32, {k.Op(PwOp::kMul, DType::kF32, {g, x_hat})}),
                  DType::kBF16));
  k.Output(k.Cast(k.Op(PwOp::kReduceSum, DType::kF32, {g}), DType::kBF16));
  k.Columns(1, {false, false, false, false, true, true}, {false, false, true, true, false, false});
  return k.kernel();
}

// A transformer's layer-norm parameter gradients as layer-norm-param-grad-split builds them
// since layer-norm-grad-narrow-reads (layer_norm_param_grad_split.h): stage one of the
// two-stage column sums over the [A, B, N] view of the rows (ViT-B/16 train large: 12608 rows
// of 768 as [3152, 4, 768]), reading f32 x, the per-row f32 mean and rstd and the bf16 matmul
// gradient g (one operand, cast in the kernel) and summing g * xhat and g into [B, N].
PointwiseKernel LayerNormBackwardParamSumsSplitKernel(const std::string& name,
                                                      std::vector<int64_t> shape) {
  KernelBuilder k(name, shape);
  const int x = k.Input(DType::kF32), mean = k.Input(DType::kF32), rstd = k.Input(DType::kF32);
  const int g = k.Cast(k.Input(DType::kBF16), DType::kF32);
  const int xhat = k.Op(PwOp::kMul, DType::kF32, {k.Op(PwOp::kSub, DType::kF32, {x, mean}), rstd});
  k.Output(k.Op(PwOp::kReduceSum, DType::kF32, {k.Op(PwOp::kMul, DType::kF32, {g, xhat})}));
  k.Output(k.Op(PwOp::kReduceSum, DType::kF32, {g}));
  k.Columns(1, {false, false, false, false, true, true}, {false, true, true, false, false, false});
  PointwiseKernel kernel = k.kernel();
  // As the plan declares them (fixed-layout entry): mean and rstd [A, B, 1] views, the sums
  // [B, N].
  const int64_t b = shape[1], n = shape[2];
  kernel.fixed_strides = {b * n, n, 1, b, 1, 0, b, 1, 0, b * n, n, 1, 0, n, 1, 0, n, 1};
  kernel.entries = KernelEntries::kDense;
  return kernel;
}

// Llama's RMSNorm backward column kernel (as fusion builds it): grad_weight = sum(g * x * rs)
// over the rows, with the per-element products g * w * x and g * w * rs (f32) stored for the
// row sum and the input gradient beside it. bf16 g, f32 x, per-column f32 w, per-row f32 rs.
PointwiseKernel RmsNormBackwardColumnKernel(const std::string& name, std::vector<int64_t> shape) {
  KernelBuilder k(name, std::move(shape));
  const int g = k.Cast(k.Input(DType::kBF16), DType::kF32);
  const int w = k.Input(DType::kF32), x = k.Input(DType::kF32), rs = k.Input(DType::kF32);
  const int gw = k.Op(PwOp::kMul, DType::kF32, {g, w});
  const int xhat = k.Op(PwOp::kMul, DType::kF32, {x, rs});
  k.Output(k.Op(PwOp::kReduceSum, DType::kF32, {k.Op(PwOp::kMul, DType::kF32, {g, xhat})}));
  k.Output(k.Op(PwOp::kMul, DType::kF32, {gw, x}));
  k.Output(k.Op(PwOp::kMul, DType::kF32, {gw, rs}));
  k.Columns(1, {false, true, false, false, true, false, false},
            {false, false, false, true, false, false, false});
  return k.kernel();
}

// The same norm's row kernel since column-prologue-recompute (column_prologue_recompute.h): the
// input gradient from the two bf16 upstream gradients (a norm read by two matmuls), w, x and the
// per-row rs: g = g1 + g2, gw = g * w, dx = gw * rs - x * rs^3 * sum(gw * x) / N. The column
// kernel beside it only sums g * x * rs; nothing here is written for it.
PointwiseKernel RmsNormBackwardRowsKernel(const std::string& name, std::vector<int64_t> shape) {
  const double n = static_cast<double>(shape.back());
  KernelBuilder k(name, std::move(shape));
  const int g1 = k.Cast(k.Input(DType::kBF16), DType::kF32);
  const int g2 = k.Cast(k.Input(DType::kBF16), DType::kF32);
  const int w = k.Input(DType::kF32), x = k.Input(DType::kF32), rs = k.Input(DType::kF32);
  const int gw = k.Op(PwOp::kMul, DType::kF32, {k.Op(PwOp::kAdd, DType::kF32, {g1, g2}), w});
  const int s = k.Op(PwOp::kReduceSum, DType::kF32, {k.Op(PwOp::kMul, DType::kF32, {gw, x})});
  const int rs3 = k.Op(PwOp::kMul, DType::kF32, {k.Op(PwOp::kMul, DType::kF32, {rs, rs}), rs});
  const int coef = k.Op(PwOp::kDiv, DType::kF32,
                        {k.Op(PwOp::kMul, DType::kF32, {s, rs3}), k.Const(DType::kF32, -n)});
  k.Output(
      k.Op(PwOp::kAdd, DType::kF32,
           {k.Op(PwOp::kMul, DType::kF32, {gw, rs}), k.Op(PwOp::kMul, DType::kF32, {x, coef})}));
  k.Rows(1, {false, false, false, false, true, false});
  return k.kernel();
}

// ViT's layer-norm backward row under bf16 autocast (the residual stream is f32): the bf16
// gradient of the following matmul cast to f32, x, the per-row mean and rstd, the f32 weight and
// the residual gradient added on: gw = g * w, xh = (x - mean) * rstd,
// dx = res + rstd * (gw - (sum(gw) + xh * sum(gw * xh)) / N). The weight is the same for every
// row (kept-broadcast); x and the residual are streamed, so both are loaded at the row's start
// (TCCD_ROW_EARLY_LOADS=2).
PointwiseKernel LayerNormBackwardRowsKernel(const std::string& name, std::vector<int64_t> shape) {
  const double n = static_cast<double>(shape.back());
  KernelBuilder k(name, std::move(shape));
  const int g = k.Cast(k.Input(DType::kBF16), DType::kF32);
  const int x = k.Input(DType::kF32), mean = k.Input(DType::kF32), rstd = k.Input(DType::kF32);
  const int w = k.Input(DType::kF32), res = k.Input(DType::kF32);
  const int xh = k.Op(PwOp::kMul, DType::kF32, {k.Op(PwOp::kSub, DType::kF32, {x, mean}), rstd});
  const int gw = k.Op(PwOp::kMul, DType::kF32, {g, w});
  const int s1 = k.Op(PwOp::kReduceSum, DType::kF32, {gw});
  const int s2 = k.Op(PwOp::kReduceSum, DType::kF32, {k.Op(PwOp::kMul, DType::kF32, {gw, xh})});
  const int mix =
      k.Op(PwOp::kMul, DType::kF32,
           {k.Op(PwOp::kAdd, DType::kF32, {s1, k.Op(PwOp::kMul, DType::kF32, {xh, s2})}),
            k.Const(DType::kF32, 1.0 / n)});
  const int dx = k.Op(PwOp::kMul, DType::kF32, {rstd, k.Op(PwOp::kSub, DType::kF32, {gw, mix})});
  k.Output(k.Op(PwOp::kAdd, DType::kF32, {res, dx}));
  k.Rows(1, {false, false, true, true, false, false, false});
  PointwiseKernel kernel = k.kernel();
  kernel.reduction.kept_broadcast = {false, false, false, false, true, false, false};
  return kernel;
}

PointwiseKernel ChannelsLastNormKernel(const std::string& name, std::vector<int64_t> shape) {
  KernelBuilder k(name, shape);
  const int x = k.Cast(k.Input(DType::kBF16), DType::kF32);
  const int mean = k.Input(DType::kF32), rstd = k.Input(DType::kF32);
  const int w = k.Input(DType::kF32), b = k.Input(DType::kF32);
  const int y = k.Op(
      PwOp::kAdd, DType::kF32,
      {k.Op(PwOp::kMul, DType::kF32,
            {k.Op(PwOp::kMul, DType::kF32, {k.Op(PwOp::kSub, DType::kF32, {x, mean}), rstd}), w}),
       b});
  k.Output(k.Cast(k.Op(PwOp::kMaximum, DType::kF32, {y, k.Const(DType::kF32, 0.0)}), DType::kBF16));
  PointwiseKernel kernel = k.kernel();
  const int rank = static_cast<int>(shape.size());
  std::vector<int64_t> dense(rank, 1), channel(rank, 0);
  for (int d = rank - 2; d >= 0; --d) dense[d] = dense[d + 1] * shape[d + 1];
  channel[rank - 1] = 1;
  for (const auto* strides : {&dense, &channel, &channel, &channel, &channel, &dense})
    kernel.fixed_strides.insert(kernel.fixed_strides.end(), strides->begin(), strides->end());
  kernel.entries = KernelEntries::kDense;
  return kernel;
}

PointwiseKernel ChannelsLastNormBackwardSumsKernel(const std::string& name,
                                                   std::vector<int64_t> shape) {
  KernelBuilder k(name, shape);
  const int g = k.Cast(k.Input(DType::kBF16), DType::kF32);
  const int x = k.Cast(k.Input(DType::kBF16), DType::kF32);
  const int mean = k.Input(DType::kF32), invstd = k.Input(DType::kF32);
  const int xhat =
      k.Op(PwOp::kMul, DType::kF32, {k.Op(PwOp::kSub, DType::kF32, {x, mean}), invstd});
  k.Output(k.Op(PwOp::kReduceSum, DType::kF32, {g}));
  k.Output(k.Op(PwOp::kReduceSum, DType::kF32, {k.Op(PwOp::kMul, DType::kF32, {g, xhat})}));
  // [A, B, C]: mean and invstd are [C] (column operands, stride 0 along A and B); the sums [B, C].
  k.Columns(1, {false, false, true, true, true, true}, {false, false, false, false, false, false});
  PointwiseKernel kernel = k.kernel();
  const int64_t b = shape[1], c = shape[2];
  kernel.fixed_strides = {b * c, c, 1, b * c, c, 1, 0, 0, 1, 0, 0, 1, 0, c, 1, 0, c, 1};
  kernel.entries = KernelEntries::kDense;
  return kernel;
}

PointwiseKernel CatKernel(const std::string& name, std::vector<int64_t> shape) {
  KernelBuilder b(name, shape);
  const int64_t half = shape[1] / 2;
  const int a = b.GatherInput(DType::kF32);
  const int bb = b.GatherInput(DType::kF32);
  const int scale = b.Input(DType::kF32);
  const int i = b.Index(0);
  const int j = b.Index(1);
  const int first =
      b.Op(PwOp::kLt, DType::kBool, {j, b.Const(DType::kI64, static_cast<double>(half))});
  const int second = b.Op(PwOp::kNot, DType::kBool, {first});
  const int va = b.Gather(a, first, {i, j});
  const int jb =
      b.Op(PwOp::kSub, DType::kI64, {j, b.Const(DType::kI64, static_cast<double>(half))});
  const int vb = b.Gather(bb, second, {i, jb});
  const int v = b.Op(PwOp::kWhere, DType::kF32, {first, va, vb});
  b.Output(b.Op(PwOp::kMul, DType::kF32, {v, scale}));
  return b.kernel();
}

PointwiseKernel CatPartsKernel(const std::string& name, std::vector<int64_t> shape, int parts) {
  // As the daemon lowers aten::cat along the last dim (index_ops.cc): part p's mask is
  // lo <= c < hi on the innermost coordinate c, its gather reads c - lo; the parts are selected
  // with a where chain. GPT-2's backward concatenates the q/k/v gradients this way.
  KernelBuilder b(name, shape);
  const int rank = static_cast<int>(shape.size());
  const int64_t width = shape.back() / parts;
  std::vector<int> in(parts);
  for (int& x : in) x = b.GatherInput(DType::kBF16);
  const int c = b.Index(rank - 1);
  std::vector<int> outer;
  for (int d = 0; d < rank - 1; ++d) outer.push_back(b.Index(d));
  std::vector<int> masks, values;
  for (int p = 0; p < parts; ++p) {
    const double lo = static_cast<double>(p * width), hi = static_cast<double>((p + 1) * width);
    const int ge = b.Op(PwOp::kGe, DType::kBool, {c, b.Const(DType::kI64, lo)});
    const int lt = b.Op(PwOp::kLt, DType::kBool, {c, b.Const(DType::kI64, hi)});
    const int mask = b.Op(PwOp::kAnd, DType::kBool, {ge, lt});
    const int at = p == 0 ? c : b.Op(PwOp::kSub, DType::kI64, {c, b.Const(DType::kI64, lo)});
    std::vector<int> coords = outer;
    coords.push_back(at);
    masks.push_back(mask);
    values.push_back(b.Cast(b.Gather(in[p], mask, coords), DType::kF32));
  }
  int result = values.back();
  for (int p = parts - 2; p >= 0; --p)
    result = b.Op(PwOp::kWhere, DType::kF32, {masks[p], values[p], result});
  b.Output(b.Cast(result, DType::kBF16));
  return b.kernel();
}

PointwiseKernel EmbeddingKernel(const std::string& name, std::vector<int64_t> shape) {
  KernelBuilder b(name, shape);
  const int weight = b.GatherInput(DType::kBF16);
  const int ids = b.GatherInput(DType::kI64);
  const int row = b.Gather(ids, b.Const(DType::kBool, 1), {b.Index(0), b.Index(1)});
  const int ge = b.Op(PwOp::kGe, DType::kBool, {row, b.Const(DType::kI64, 0)});
  const int lt = b.Op(PwOp::kLt, DType::kBool, {row, b.Const(DType::kI64, 100)});
  const int mask = b.Op(PwOp::kAnd, DType::kBool, {ge, lt});
  b.Output(b.Gather(weight, mask, {row, b.Index(2)}));
  return b.kernel();
}

// A symbolic graph's arange(T) (symbolic_kernels.h, SymbolicKernelOptions::aranges): each
// point's coordinate stored as i64, no inputs, its length a run-time size.
PointwiseKernel ArangeKernel(const std::string& name, std::vector<int64_t> shape) {
  KernelBuilder b(name, shape);
  b.Output(b.Index(0));
  return b.kernel();
}

// Row gathers (reduction_fusion.h): the LMs' token embedding gathered inside the first RMS
// norm, as the row kernel builder lowers it: the token id read once per row (its coordinates
// the row's), the weight's row per element (its column the element's); both gather operands
// are row operands. Outputs: the embedding (the residual, f32) and the normed bf16 value.
PointwiseKernel EmbeddingRmsNormRowsKernel(const std::string& name, std::vector<int64_t> shape) {
  const double n = static_cast<double>(shape.back());
  KernelBuilder b(name, shape);
  const int weight = b.GatherInput(DType::kF32);
  const int ids = b.GatherInput(DType::kI64);
  const int w = b.Input(DType::kF32);
  const int row = b.Gather(ids, b.Const(DType::kBool, 1), {b.Index(0), b.Index(1)});
  const int ge = b.Op(PwOp::kGe, DType::kBool, {row, b.Const(DType::kI64, 0)});
  const int lt = b.Op(PwOp::kLt, DType::kBool, {row, b.Const(DType::kI64, 32000)});
  const int mask = b.Op(PwOp::kAnd, DType::kBool, {ge, lt});
  const int x = b.Gather(weight, mask, {row, b.Index(2)});
  const int sq = b.Op(PwOp::kMul, DType::kF32, {x, x});
  const int mean = b.Op(PwOp::kDiv, DType::kF32,
                        {b.Op(PwOp::kReduceSum, DType::kF32, {sq}), b.Const(DType::kF32, n)});
  const int rstd = b.Op(PwOp::kRsqrt, DType::kF32,
                        {b.Op(PwOp::kAdd, DType::kF32, {mean, b.Const(DType::kF32, 1e-6)})});
  const int y = b.Op(PwOp::kMul, DType::kF32, {w, b.Op(PwOp::kMul, DType::kF32, {x, rstd})});
  b.Output(x);
  b.Output(b.Cast(y, DType::kBF16));
  b.Rows(1, {true, true, false, false, false});
  return b.kernel();
}

// A symbolic graph's first layer norm with both embeddings gathered in it (symbolic row
// gathers, symbolic_kernels.h), as the dynamic bench's forward lowers it: bf16 tables tok
// [1000, E] and pos [1024, E], the token ids i64 [B, S] and the position ids expanded to
// [B, S] (own strides: 0 along B), all four gather operands (row operands); x = tok[ids] +
// pos[pids] in f32, stored bf16 (the residual), and layer_norm(x) * w + b in bf16 with its
// mean and rstd (row values, bf16 as the bf16 graph's). Rows over run-time [B, S] (kRuntimeDim),
// both entries (the row launcher passes own strides to either).
PointwiseKernel EmbeddingPairLayerNormRowsKernel(const std::string& name,
                                                 std::vector<int64_t> shape) {
  const double n = static_cast<double>(shape.back());
  KernelBuilder b(name, shape);
  const int tok = b.GatherInput(DType::kBF16);
  const int ids = b.GatherInput(DType::kI64);
  const int pos = b.GatherInput(DType::kBF16);
  const int pids = b.GatherInput(DType::kI64);
  const int w = b.Cast(b.Input(DType::kBF16), DType::kF32);
  const int bias = b.Cast(b.Input(DType::kBF16), DType::kF32);
  auto gathered = [&](int table, int index, int64_t rows) {
    const int row = b.Gather(index, b.Const(DType::kBool, 1), {b.Index(0), b.Index(1)});
    const int ge = b.Op(PwOp::kGe, DType::kBool, {row, b.Const(DType::kI64, 0)});
    const int lt =
        b.Op(PwOp::kLt, DType::kBool, {row, b.Const(DType::kI64, static_cast<double>(rows))});
    const int mask = b.Op(PwOp::kAnd, DType::kBool, {ge, lt});
    return b.Cast(b.Gather(table, mask, {row, b.Index(2)}), DType::kF32);
  };
  const int x =
      b.Op(PwOp::kAdd, DType::kF32, {gathered(tok, ids, 1000), gathered(pos, pids, 1024)});
  const int mean = b.Op(PwOp::kDiv, DType::kF32,
                        {b.Op(PwOp::kReduceSum, DType::kF32, {x}), b.Const(DType::kF32, n)});
  const int d = b.Op(PwOp::kSub, DType::kF32, {x, mean});
  const int var =
      b.Op(PwOp::kDiv, DType::kF32,
           {b.Op(PwOp::kReduceSum, DType::kF32, {b.Op(PwOp::kMul, DType::kF32, {d, d})}),
            b.Const(DType::kF32, n)});
  const int rstd = b.Op(PwOp::kRsqrt, DType::kF32,
                        {b.Op(PwOp::kAdd, DType::kF32, {var, b.Const(DType::kF32, 1e-5)})});
  const int y =
      b.Op(PwOp::kAdd, DType::kF32,
           {b.Op(PwOp::kMul, DType::kF32, {b.Op(PwOp::kMul, DType::kF32, {d, rstd}), w}), bias});
  b.Output(b.Cast(x, DType::kBF16));
  b.Output(b.Cast(y, DType::kBF16));
  b.Output(b.Cast(mean, DType::kBF16));
  b.Output(b.Cast(rstd, DType::kBF16));
  b.Rows(1, {true, true, true, true, false, false, false, false, true, true});
  return b.kernel();
}

// embedding_dense_backward as scatter_ops.h lowers it: the bf16 gradient [B, S, E] added in f32
// into row ids[b, s] of a [num_weights, E] output (padding_idx 0 masked), with atomics.
PointwiseKernel EmbeddingBackwardKernel(const std::string& name, std::vector<int64_t> shape,
                                        int64_t num_weights) {
  KernelBuilder b(name, shape);
  const int grad = b.Cast(b.Input(DType::kBF16), DType::kF32);
  const int ids = b.GatherInput(DType::kI64);
  const int row = b.Gather(ids, b.Const(DType::kBool, 1), {b.Index(0), b.Index(1)});
  const int ge = b.Op(PwOp::kGe, DType::kBool, {row, b.Const(DType::kI64, 0)});
  const int lt = b.Op(PwOp::kLt, DType::kBool, {row, b.Const(DType::kI64, num_weights)});
  const int in_range = b.Op(PwOp::kAnd, DType::kBool, {ge, lt});
  const int kept = b.Op(PwOp::kNe, DType::kBool, {row, b.Const(DType::kI64, 0)});
  const int mask = b.Op(PwOp::kAnd, DType::kBool, {in_range, kept});
  b.ScatterAddOutput(num_weights * shape.back(), mask, grad, {row, b.Index(2)});
  return b.kernel();
}

PointwiseKernel StackKernel(const std::string& name, std::vector<int64_t> shape) {
  KernelBuilder b(name, shape);
  int in[3];
  for (int& x : in) x = b.GatherInput(DType::kBF16);
  const std::vector<int> coords = {b.Index(0), b.Index(1), b.Index(3), b.Index(4)};
  const int s = b.Index(2);
  int result = -1;
  for (int j = 2; j >= 0; --j) {
    const int mask = b.Op(PwOp::kEq, DType::kBool, {s, b.Const(DType::kI64, j)});
    const int v = b.Cast(b.Gather(in[j], mask, coords), DType::kF32);
    result = result < 0 ? v : b.Op(PwOp::kWhere, DType::kF32, {mask, v, result});
  }
  b.Output(b.Cast(result, DType::kBF16));
  return b.kernel();
}

// A tiled kernel (TileTranspose): out = cast(in * scale) with the layouts `in_strides` and
// `out_strides` (iteration-space strides) and the tile over (read_dim, write_dim).
PointwiseKernel TileCopyKernel(const std::string& name, std::vector<int64_t> shape, DType in,
                               DType out, std::vector<int64_t> in_strides,
                               std::vector<int64_t> out_strides, int read_dim, int write_dim) {
  KernelBuilder k(name, std::move(shape));
  int x = k.Input(in);
  if (in != DType::kF32) x = k.Cast(x, DType::kF32);
  int y = k.Op(PwOp::kMul, DType::kF32, {x, k.Const(DType::kF32, 0.125)});
  if (out != DType::kF32) y = k.Cast(y, out);
  k.Output(y);
  PointwiseKernel kernel = k.kernel();
  kernel.entries = KernelEntries::kStrided;
  kernel.tile.read_dim = read_dim;
  kernel.tile.write_dim = write_dim;
  kernel.tile.strides = std::move(in_strides);
  kernel.tile.strides.insert(kernel.tile.strides.end(), out_strides.begin(), out_strides.end());
  return kernel;
}

PointwiseKernel DropoutKernel(const std::string& name, std::vector<int64_t> shape) {
  KernelBuilder b(name, shape);
  const int seed = b.Input(DType::kI64);
  const int x = b.Cast(b.Input(DType::kBF16), DType::kF32);
  const int u = b.Op(PwOp::kRandom, DType::kF32, {seed, b.Const(DType::kI64, 3)});
  const int keep = b.Op(PwOp::kLt, DType::kBool, {u, b.Const(DType::kF32, 0.9)});
  b.Output(keep);
  const int kept = b.Op(PwOp::kMul, DType::kF32, {x, b.Cast(keep, DType::kF32)});
  b.Output(
      b.Cast(b.Op(PwOp::kMul, DType::kF32, {kept, b.Const(DType::kF32, 1 / 0.9)}), DType::kBF16));
  return b.kernel();
}

// Max pooling as index_ops.cc lowers tccd::max_pool2d_offsets and
// tccd::max_pool2d_gather_backward (max_pool_kernels.h), for the ResNet stem's 3x3 window,
// stride 2, padding 1 over a channels-last map as the pass hands it over, [N, H, W, C] = `in`
// (the output [N, (H + 1) / 2, (W + 1) / 2, C]; C innermost).
// The forward: the running (max, index) pair over the nine window points, a NaN taking over.
PointwiseKernel MaxPoolOffsetsKernel(const std::string& name, std::vector<int64_t> in) {
  std::vector<int64_t> out = {in[0], (in[1] - 1) / 2 + 1, (in[2] - 1) / 2 + 1, in[3]};
  KernelBuilder b(name, out);
  const int x = b.GatherInput(DType::kBF16);
  auto i64 = [&](int64_t v) { return b.Const(DType::kI64, static_cast<double>(v)); };
  auto in_range = [&](int v, int64_t hi) {
    const int ge = b.Op(PwOp::kGe, DType::kBool, {v, i64(0)});
    const int lt = b.Op(PwOp::kLt, DType::kBool, {v, i64(hi)});
    return b.Op(PwOp::kAnd, DType::kBool, {ge, lt});
  };
  int start[2], first[2];
  for (int k = 0; k < 2; ++k) {
    const int scaled = b.Op(PwOp::kMul, DType::kI64, {b.Index(1 + k), i64(2)});
    start[k] = b.Op(PwOp::kSub, DType::kI64, {scaled, i64(1)});
    const int negative = b.Op(PwOp::kLt, DType::kBool, {start[k], i64(0)});
    first[k] = b.Op(PwOp::kWhere, DType::kI64, {negative, i64(0), start[k]});
  }
  int index = b.Op(PwOp::kAdd, DType::kI64,
                   {b.Op(PwOp::kMul, DType::kI64, {first[0], i64(in[2])}), first[1]});
  int value = b.Const(DType::kF32, -std::numeric_limits<double>::infinity());
  for (int64_t i = 0; i < 3; ++i) {
    const int h = i == 0 ? start[0] : b.Op(PwOp::kAdd, DType::kI64, {start[0], i64(i)});
    const int h_ok = in_range(h, in[1]);
    for (int64_t j = 0; j < 3; ++j) {
      const int w = j == 0 ? start[1] : b.Op(PwOp::kAdd, DType::kI64, {start[1], i64(j)});
      const int valid = b.Op(PwOp::kAnd, DType::kBool, {h_ok, in_range(w, in[2])});
      const int v = b.Cast(b.Gather(x, valid, {b.Index(0), h, w, b.Index(3)}), DType::kF32);
      const int greater = b.Op(PwOp::kGt, DType::kBool, {v, value});
      const int nan = b.Op(PwOp::kNe, DType::kBool, {v, v});
      const int take = b.Op(PwOp::kAnd, DType::kBool,
                            {valid, b.Op(PwOp::kOr, DType::kBool, {greater, nan})});
      if (i < 2 || j < 2) value = b.Op(PwOp::kWhere, DType::kF32, {take, v, value});
      const int flat = b.Op(PwOp::kAdd, DType::kI64,
                            {b.Op(PwOp::kMul, DType::kI64, {h, i64(in[2])}), w});
      index = b.Op(PwOp::kWhere, DType::kI64, {take, flat, index});
    }
  }
  b.Output(index);
  return b.kernel();
}

// The backward, gather form: each input point sums, in f32, the gradients of the (at most 2 x 2)
// windows whose saved index is its own; the window division in f32.
PointwiseKernel MaxPoolBackwardKernel(const std::string& name, std::vector<int64_t> in) {
  const int64_t out[2] = {(in[1] - 1) / 2 + 1, (in[2] - 1) / 2 + 1};
  KernelBuilder b(name, in);
  const int grad = b.GatherInput(DType::kBF16);
  const int indices = b.GatherInput(DType::kI64);
  auto i64 = [&](int64_t v) { return b.Const(DType::kI64, static_cast<double>(v)); };
  struct Candidate {
    int index, ok;
  };
  std::vector<Candidate> candidates[2];
  for (int k = 0; k < 2; ++k) {
    const int padded = b.Op(PwOp::kAdd, DType::kI64, {b.Index(1 + k), i64(1)});
    const int half = b.Op(PwOp::kAdd, DType::kF32,
                          {b.Cast(padded, DType::kF32), b.Const(DType::kF32, 0.5)});
    const int q = b.Op(PwOp::kDiv, DType::kF32, {half, b.Const(DType::kF32, 2)});
    const int last = b.Cast(b.Op(PwOp::kFloor, DType::kF32, {q}), DType::kI64);
    for (int64_t c = 1; c >= 0; --c) {
      const int p = c == 0 ? last : b.Op(PwOp::kSub, DType::kI64, {last, i64(c)});
      const int ge = b.Op(PwOp::kGe, DType::kBool, {p, i64(0)});
      const int lt = b.Op(PwOp::kLt, DType::kBool, {p, i64(out[k])});
      const int end =
          b.Op(PwOp::kAdd, DType::kI64, {b.Op(PwOp::kMul, DType::kI64, {p, i64(2)}), i64(3)});
      const int holds = b.Op(PwOp::kLt, DType::kBool, {padded, end});
      const int ok = b.Op(PwOp::kAnd, DType::kBool,
                          {b.Op(PwOp::kAnd, DType::kBool, {ge, lt}), holds});
      candidates[k].push_back({p, ok});
    }
  }
  const int self = b.Op(PwOp::kAdd, DType::kI64,
                        {b.Op(PwOp::kMul, DType::kI64, {b.Index(1), i64(in[2])}), b.Index(2)});
  const int zero = b.Const(DType::kF32, 0);
  int sum = -1;
  for (const Candidate& ph : candidates[0]) {
    for (const Candidate& pw : candidates[1]) {
      const int ok = b.Op(PwOp::kAnd, DType::kBool, {ph.ok, pw.ok});
      const std::vector<int> coords = {b.Index(0), ph.index, pw.index, b.Index(3)};
      const int saved = b.Gather(indices, ok, coords);
      const int hit = b.Op(PwOp::kAnd, DType::kBool,
                           {ok, b.Op(PwOp::kEq, DType::kBool, {saved, self})});
      const int g = b.Cast(b.Gather(grad, hit, coords), DType::kF32);
      const int term = b.Op(PwOp::kWhere, DType::kF32, {hit, g, zero});
      sum = sum < 0 ? term : b.Op(PwOp::kAdd, DType::kF32, {sum, term});
    }
  }
  b.Output(b.Cast(sum, DType::kBF16));
  return b.kernel();
}

// A depthwise convolution as index_ops.cc lowers tccd::depthwise_conv2d
// (depthwise_conv_kernels.h) over a channels-last map, [N, H, W, C] = `in`, with a k x k window
// and the "same" padding: each tap an x gather (zero outside the map) times the weight's [C]
// vector of that tap ([k, k, C], C innermost), summed in f32. `flip`: the input gradient's
// window (the weight read at k - 1 - i, k - 1 - j).
PointwiseKernel DepthwiseConvKernel(const std::string& name, std::vector<int64_t> in, int64_t k,
                                    bool flip) {
  KernelBuilder b(name, in);
  const int x = b.GatherInput(DType::kBF16);
  const int weight = b.GatherInput(DType::kF32);  // the f32 copy of the taps
  auto i64 = [&](int64_t v) { return b.Const(DType::kI64, static_cast<double>(v)); };
  auto in_range = [&](int v, int64_t hi) {
    const int ge = b.Op(PwOp::kGe, DType::kBool, {v, i64(0)});
    const int lt = b.Op(PwOp::kLt, DType::kBool, {v, i64(hi)});
    return b.Op(PwOp::kAnd, DType::kBool, {ge, lt});
  };
  auto shift = [&](int v, int64_t by) {
    return by == 0 ? v : b.Op(PwOp::kSub, DType::kI64, {v, i64(by)});
  };
  const int c = b.Index(3);
  int sum = -1;
  for (int64_t i = 0; i < k; ++i) {
    const int h = shift(b.Index(1), k / 2 - i);
    const int h_ok = in_range(h, in[1]);
    for (int64_t j = 0; j < k; ++j) {
      const int w = shift(b.Index(2), k / 2 - j);
      const int valid = b.Op(PwOp::kAnd, DType::kBool, {h_ok, in_range(w, in[2])});
      const int v = b.Cast(b.Gather(x, valid, {b.Index(0), h, w, c}), DType::kF32);
      const int wi = i64(flip ? k - 1 - i : i), wj = i64(flip ? k - 1 - j : j);
      const int tap = b.Gather(weight, b.Const(DType::kBool, 1), {wi, wj, c});
      const int term = b.Op(PwOp::kMul, DType::kF32, {v, tap});
      sum = sum < 0 ? term : b.Op(PwOp::kAdd, DType::kF32, {sum, term});
    }
  }
  b.Output(b.Cast(sum, DType::kBF16));
  return b.kernel();
}

// The weight gradient's partial sums as index_ops.cc lowers
// tccd::depthwise_conv2d_weight_partials: f32 [N, H / rows, k, k, C], point (n, b, i, j, c)
// summing grad[n, h, w, c] * x[n, h + i - k / 2, w + j - k / 2, c] over the block's rows and
// every column (x zero outside the map); [N, H, W, C] = `in`.
PointwiseKernel DepthwiseWeightPartialsKernel(const std::string& name, std::vector<int64_t> in,
                                              int64_t k, int64_t rows) {
  KernelBuilder b(name, {in[0], in[1] / rows, k, k, in[3]});
  const int grad = b.GatherInput(DType::kBF16);
  const int x = b.GatherInput(DType::kBF16);
  auto i64 = [&](int64_t v) { return b.Const(DType::kI64, static_cast<double>(v)); };
  auto in_range = [&](int v, int64_t hi) {
    const int ge = b.Op(PwOp::kGe, DType::kBool, {v, i64(0)});
    const int lt = b.Op(PwOp::kLt, DType::kBool, {v, i64(hi)});
    return b.Op(PwOp::kAnd, DType::kBool, {ge, lt});
  };
  const int n = b.Index(0), c = b.Index(4);
  const int first = b.Op(PwOp::kMul, DType::kI64, {b.Index(1), i64(rows)});
  const int di = b.Op(PwOp::kSub, DType::kI64, {b.Index(2), i64(k / 2)});
  const int dj = b.Op(PwOp::kSub, DType::kI64, {b.Index(3), i64(k / 2)});
  int sum = -1;
  for (int64_t r = 0; r < rows; ++r) {
    const int h = r == 0 ? first : b.Op(PwOp::kAdd, DType::kI64, {first, i64(r)});
    const int hx = b.Op(PwOp::kAdd, DType::kI64, {h, di});
    const int h_ok = in_range(hx, in[1]);
    for (int64_t w = 0; w < in[2]; ++w) {
      const int wx = w == 0 ? dj : b.Op(PwOp::kAdd, DType::kI64, {dj, i64(w)});
      const int valid = b.Op(PwOp::kAnd, DType::kBool, {h_ok, in_range(wx, in[2])});
      const int g =
          b.Cast(b.Gather(grad, b.Const(DType::kBool, 1), {n, h, i64(w), c}), DType::kF32);
      const int v = b.Cast(b.Gather(x, valid, {n, hx, wx, c}), DType::kF32);
      const int term = b.Op(PwOp::kMul, DType::kF32, {g, v});
      sum = sum < 0 ? term : b.Op(PwOp::kAdd, DType::kF32, {sum, term});
    }
  }
  b.Output(sum);
  return b.kernel();
}

// `kernel` as made from the one op `target` (its fused_ops).
PointwiseKernel AsOp(PointwiseKernel kernel, const std::string& target) {
  kernel.fused_ops = {target};
  return kernel;
}

// `kernel` as a plan launching it with one layout gets it (entry_points.h): only the dense
// entry, `strides` ([operands x rank]; a gather operand's own) its compile-time stride table.
PointwiseKernel WithFixedLayout(PointwiseKernel kernel, std::vector<int64_t> strides) {
  kernel.entries = KernelEntries::kDense;
  kernel.fixed_strides = std::move(strides);
  return kernel;
}

std::vector<GoldenCase> GoldenCorpus() {
  return {
      {"relu_fma_bcast", FusedReluKernel("relu_fma_bcast", {64, 1000})},
      {"gelu_bf16", Bf16GeluKernel("gelu_bf16", {8, 1024, 3})},
      {"where_compare", WhereCompareKernel("where_compare", {17, 33})},
      {"add_i64_huge", I64AddKernel("add_i64_huge", {3, int64_t{1} << 30})},
      {"multi_output_f16", MultiOutputKernel("multi_output_f16", {5, 1, 77})},
      {"softmax_rows_f32", SoftmaxRowsKernel("softmax_rows_f32", {37, 1000})},
      // Vocabulary-sized rows (GPT-2's 50257, odd: one element per access) take the looped form.
      {"softmax_long_rows_f32", SoftmaxRowsKernel("softmax_long_rows_f32", {1024, 50257})},
      // Cross-entropy's loss rows as the LMs run them (the class index computed in place): the
      // forward's logsumexp (an online max and sum) and target pick in one looped pass over
      // BERT's 30522 (shifted: persistent, a bf16 row of 30522 moved 4-byte vectors); the
      // backward's one-hot sum (no memory) then one pass reading the logits and writing.
      {"cross_entropy_forward_rows_bf16",
       CrossEntropyForwardRowsKernel("cross_entropy_forward_rows_bf16", {64, 30522})},
      {"cross_entropy_backward_rows_bf16",
       CrossEntropyBackwardRowsKernel("cross_entropy_backward_rows_bf16", {64, 50257})},
      // The same over vocabularies the 16-byte vector divides (Llama's 32000, T5's 32128): looped,
      // not shifted (persistent, a 1000-thread block of 32 elements per thread; TCCD_ALIGNED_ROW_
      // LOOPS=0 keeps that form).
      {"cross_entropy_forward_rows_bf16_aligned",
       CrossEntropyForwardRowsKernel("cross_entropy_forward_rows_bf16_aligned", {64, 32128})},
      {"cross_entropy_backward_rows_bf16_aligned",
       CrossEntropyBackwardRowsKernel("cross_entropy_backward_rows_bf16_aligned", {64, 32000})},
      {"layer_norm_rows_bf16", LayerNormRowsKernel("layer_norm_rows_bf16", {8, 16, 768})},
      // Attention's backward rows: the probabilities' bf16 cast is a second output. Rows of 1024
      // (BERT's are 512): a whole warp per row, since the prelude's row_reduce draws an NVRTC
      // warning for sub-warp rows that the no-warnings test above would count.
      {"softmax_backward_probs_cast_bf16",
       SoftmaxBackwardProbsCastKernel("softmax_backward_probs_cast_bf16", {4, 3, 64, 1024})},
      // Layer norms as autocast runs them: bf16 rows, f32 weight and bias. Each operand moves
      // 16-byte vectors (the bf16 row one, the f32 parameters two per vector of 8); a ViT row of
      // 768, and a ConvNeXt LayerNorm2d row of 64 channels over a channels-last map (8 lanes of
      // one vector each: every load instruction of a warp reads whole 128-byte lines).
      {"layer_norm_rows_bf16_f32_params",
       LayerNormRowsKernel("layer_norm_rows_bf16_f32_params", {8, 197, 768}, DType::kF32)},
      {"layer_norm_2d_rows_bf16_f32_params",
       LayerNormRowsKernel("layer_norm_2d_rows_bf16_f32_params", {8, 56, 56, 64}, DType::kF32)},
      // Rows stored at a zero-padded stride, the tail zeroed by the kernel: BERT's vocabulary
      // (persistent rows) and GPT-2's (looped, shifted rows).
      {"log_softmax_backward_padded_bf16",
       PaddedLogSoftmaxBackwardKernel("log_softmax_backward_padded_bf16", {64, 30522}, 6)},
      {"log_softmax_backward_padded_long_bf16",
       PaddedLogSoftmaxBackwardKernel("log_softmax_backward_padded_long_bf16", {64, 50257}, 7)},
      {"channel_centre_rows_bf16",
       ChannelCentreRowsKernel("channel_centre_rows_bf16", {64, 8, 196})},
      {"column_sum_bf16", ColumnSumKernel("column_sum_bf16", {8192, 768})},
      // BERT's / GPT-2's MLP at batch 16 x 512 tokens (the f32 erf is tccd_rt::erf_f32).
      {"gelu_backward_bias_grad_column_bf16",
       GeluBackwardBiasGradKernel("gelu_backward_bias_grad_column_bf16", {8192, 3072})},
      {"rms_norm_backward_column_bf16",
       RmsNormBackwardColumnKernel("rms_norm_backward_column_bf16", {8192, 1024})},
      {"rms_norm_backward_rows_bf16",
       RmsNormBackwardRowsKernel("rms_norm_backward_rows_bf16", {8192, 1024})},
      {"layer_norm_backward_rows_bf16_f32_residual",
       LayerNormBackwardRowsKernel("layer_norm_backward_rows_bf16_f32_residual", {8, 197, 768})},
      {"layer_norm_backward_params_bf16",
       LayerNormBackwardParamsKernel("layer_norm_backward_params_bf16", {16384, 1024})},
      {"layer_norm_backward_param_sums_split_bf16_f32",
       LayerNormBackwardParamSumsSplitKernel("layer_norm_backward_param_sums_split_bf16_f32",
                                             {3152, 4, 768})},
      // Fixed-layout operands on the dense entry (entry_points.h): ResNet-50's stage-1 batch
      // norm, channels-last, forward normalisation and the backward's column sums over the
      // [A, B, C] split of a 64-channel norm (B = 8).
      {"channels_last_norm_bf16",
       ChannelsLastNormKernel("channels_last_norm_bf16", {8, 56, 56, 256})},
      {"channels_last_norm_backward_sums_bf16",
       ChannelsLastNormBackwardSumsKernel("channels_last_norm_backward_sums_bf16", {3136, 8, 64})},
      {"cat_f32", CatKernel("cat_f32", {64, 128})},
      // GPT-2's q/k/v gradients concatenated (at 64 wide parts): part bounds at multiples of
      // the vector, so each part is read with 128-bit loads (cuda_index_emitter.cc).
      {"cat3_bf16", CatPartsKernel("cat3_bf16", {4, 32, 192}, 3)},
      {"embedding_bf16", EmbeddingKernel("embedding_bf16", {4, 512, 768})},
      {"embedding_rms_norm_rows_f32",
       EmbeddingRmsNormRowsKernel("embedding_rms_norm_rows_f32", {2, 512, 1024})},
      {"embedding_rms_norm_rows_tail_f32",
       EmbeddingRmsNormRowsKernel("embedding_rms_norm_rows_tail_f32", {2, 100, 1000})},
      // The dynamic bench's first norm gathering both embeddings over run-time rows (symbolic
      // row gathers), at its width 256 and at 40 (the GPU test's: a row with a tail).
      {"embedding_pair_layer_norm_rows_bf16_sym",
       EmbeddingPairLayerNormRowsKernel("embedding_pair_layer_norm_rows_bf16_sym",
                                        {kRuntimeDim, kRuntimeDim, 256})},
      {"embedding_pair_layer_norm_rows_tail_bf16_sym",
       EmbeddingPairLayerNormRowsKernel("embedding_pair_layer_norm_rows_tail_bf16_sym",
                                        {kRuntimeDim, kRuntimeDim, 40})},
      {"embedding_backward_scatter_bf16",
       EmbeddingBackwardKernel("embedding_backward_scatter_bf16", {4, 512, 768})},
      // BERT's token-type embedding gradient: 8192 token rows into 2, each thread adding 24
      // rows in registers before its atomics (RunRows in cuda_index_emitter.cc).
      {"embedding_backward_scatter_two_rows_bf16",
       EmbeddingBackwardKernel("embedding_backward_scatter_two_rows_bf16", {16, 512, 768}, 2)},
      {"dropout_bf16", DropoutKernel("dropout_bf16", {16, 128, 768})},
      // ResNet-50's stem max pool (passes/max_pool_kernels.h) at batch 64: the forward's index
      // kernel and the backward in gather form.
      {"max_pool_offsets_bf16", MaxPoolOffsetsKernel("max_pool_offsets_bf16", {64, 112, 112, 64})},
      {"max_pool_backward_bf16",
       MaxPoolBackwardKernel("max_pool_backward_bf16", {64, 112, 112, 64})},
      // The same two as the plan launches them (dense channels-last maps): the dense entry with
      // the gathered maps' strides as constants and 8 bf16 lanes (the i64 indices as 4 x 16 B).
      {"max_pool_offsets_bf16_fixed",
       WithFixedLayout(MaxPoolOffsetsKernel("max_pool_offsets_bf16_fixed", {64, 112, 112, 64}),
                       {802816, 7168, 64, 1, 200704, 3584, 64, 1})},
      {"max_pool_backward_bf16_fixed",
       WithFixedLayout(MaxPoolBackwardKernel("max_pool_backward_bf16_fixed", {64, 112, 112, 64}),
                       {200704, 3584, 64, 1, 200704, 3584, 64, 1, 802816, 7168, 64, 1})},
      // ConvNeXt-T's stage-2 depthwise 7x7 at batch 64 (passes/depthwise_conv_kernels.h) as
      // the plan launches it: the forward and the input gradient (flipped window), the dense
      // entry with the map's and the taps' strides as constants, 8 bf16 lanes along C.
      {"depthwise_conv7_bf16_fixed",
       WithFixedLayout(DepthwiseConvKernel("depthwise_conv7_bf16_fixed", {64, 28, 28, 192}, 7,
                                           /*flip=*/false),
                       {150528, 5376, 192, 1, 1344, 192, 1, 0, 150528, 5376, 192, 1})},
      {"depthwise_conv7_dgrad_bf16_fixed",
       WithFixedLayout(DepthwiseConvKernel("depthwise_conv7_dgrad_bf16_fixed", {64, 28, 28, 192}, 7,
                                           /*flip=*/true),
                       {150528, 5376, 192, 1, 1344, 192, 1, 0, 150528, 5376, 192, 1})},
      // Its weight gradient's partials (two map rows a partial), operands padded to rank 5.
      {"depthwise_weight_partials7_bf16_fixed",
       WithFixedLayout(
           DepthwiseWeightPartialsKernel("depthwise_weight_partials7_bf16_fixed", {64, 28, 28, 192},
                                         7, 2),
           {150528, 5376, 192, 1, 0, 150528, 5376, 192, 1, 0, 131712, 9408, 1344, 192, 1})},
      // The same ops as the pass makes them (the op's target in fused_ops): the backend's
      // depthwise templates (cuda_depthwise_emitter.h) instead of the index form; the partials
      // with the templates' rows (seven a partial at W = 28).
      {"depthwise_conv7_bf16_template",
       AsOp(WithFixedLayout(DepthwiseConvKernel("depthwise_conv7_bf16_template", {64, 28, 28, 192},
                                                7, /*flip=*/false),
                            {150528, 5376, 192, 1, 1344, 192, 1, 0, 150528, 5376, 192, 1}),
            "tccd::depthwise_conv2d.default")},
      {"depthwise_conv7_dgrad_bf16_template",
       AsOp(WithFixedLayout(DepthwiseConvKernel("depthwise_conv7_dgrad_bf16_template",
                                                {64, 28, 28, 192}, 7, /*flip=*/true),
                            {150528, 5376, 192, 1, 1344, 192, 1, 0, 150528, 5376, 192, 1}),
            "tccd::depthwise_conv2d.default")},
      {"depthwise_weight_partials7_bf16_template",
       AsOp(WithFixedLayout(DepthwiseWeightPartialsKernel("depthwise_weight_partials7_bf16_template",
                                                          {64, 28, 28, 192}, 7, 7),
                            {150528, 5376, 192, 1, 0, 150528, 5376, 192, 1, 0, 37632, 9408, 1344,
                             192, 1}),
            "tccd::depthwise_conv2d_weight_partials.default")},
      {"stack_bf16", StackKernel("stack_bf16", {64, 197, 3, 12, 64})},
      // Tiled kernels (cuda_tile_emitter.cc): BERT's scaled K^T cast (f32 [192, 512, 64]
      // read through its transpose, bf16 out) and an NCHW -> NHWC copy whose tiled dims (28
      // wide, 96 channels) no tile divides (bounds tests in both phases).
      {"tile_transpose_cast_bf16",
       TileCopyKernel("tile_transpose_cast_bf16", {192, 64, 512}, DType::kF32, DType::kBF16,
                      {32768, 1, 64}, {32768, 512, 1}, 1, 2)},
      {"tile_nchw_to_nhwc_bf16",
       TileCopyKernel("tile_nchw_to_nhwc_bf16", {8, 96, 28, 28}, DType::kBF16, DType::kBF16,
                      {75264, 784, 28, 1}, {75264, 1, 2688, 96}, 3, 1)},
      // Run-time sizes (graphs with symbolic sizes): rows only known at the launch, and a
      // bf16 kernel whose innermost size is symbolic too (no inner vector path: no guard makes
      // it a multiple of the vector).
      {"relu_fma_bcast_sym_rows", FusedReluKernel("relu_fma_bcast_sym_rows", {kRuntimeDim, 1000})},
      {"gelu_bf16_sym", Bf16GeluKernel("gelu_bf16_sym", {kRuntimeDim, kRuntimeDim, 3})},
      // Row reductions of symbolic graphs: static rows, run-time row counts (the sizes after the
      // strides; rows past the end of the last block masked): a warp-per-row softmax, a layer
      // norm over two symbolic leading dims, and the looped, shifted loss row.
      {"softmax_rows_f32_sym_rows",
       SoftmaxRowsKernel("softmax_rows_f32_sym_rows", {kRuntimeDim, 1000})},
      {"layer_norm_rows_bf16_sym_rows",
       LayerNormRowsKernel("layer_norm_rows_bf16_sym_rows", {kRuntimeDim, kRuntimeDim, 768})},
      {"cross_entropy_forward_rows_bf16_sym_rows",
       CrossEntropyForwardRowsKernel("cross_entropy_forward_rows_bf16_sym_rows",
                                     {kRuntimeDim, 30522})},
      // Attention's softmax over a symbolic sequence: rows of run-time length, looped and
      // shifted (kRuntimeRowThreads per row), the length read from the sizes.
      {"softmax_rows_f32_sym_length",
       SoftmaxRowsKernel("softmax_rows_f32_sym_length", {kRuntimeDim, 4, kRuntimeDim})},
      // The same in bf16 (16-bit rows with run-time sizes, allowed since the ninth session):
      // 16-byte vectors of 8 where the row's length and alignment allow, f32 math.
      {"softmax_rows_bf16_sym_length",
       SoftmaxRowsBf16Kernel("softmax_rows_bf16_sym_length", {kRuntimeDim, 4, kRuntimeDim})},
      // A symbolic graph's embedding (symbolic_kernels.h): a gather over run-time batch and
      // sequence dims, the strided entry only, its sizes after the strides.
      {"embedding_bf16_sym",
       [] {
         PointwiseKernel k = EmbeddingKernel("embedding_bf16_sym", {kRuntimeDim, kRuntimeDim, 256});
         k.entries = KernelEntries::kStrided;
         return k;
       }()},
      // A symbolic graph's position ids, arange(T): the coordinate stored, the strided entry
      // only (an index kernel), its length a run-time size.
      {"arange_i64_sym",
       [] {
         PointwiseKernel k = ArangeKernel("arange_i64_sym", {kRuntimeDim});
         k.entries = KernelEntries::kStrided;
         return k;
       }()},
      // Its gradient (a symbolic graph's embedding_scatter_add): atomics over run-time rows into
      // a static table, the strided entry only (no vector path: no guard makes the rows a
      // multiple of anything).
      {"embedding_backward_scatter_bf16_sym",
       [] {
         PointwiseKernel k = EmbeddingBackwardKernel("embedding_backward_scatter_bf16_sym",
                                                     {kRuntimeDim, kRuntimeDim, 256});
         k.entries = KernelEntries::kStrided;
         return k;
       }()},
  };
}

}  // namespace tccd::codegen::cuda_testing
