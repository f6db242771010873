// Hand-built PointwiseKernels for the CUDA backend's tests: a builder, and the fixed corpus the
// golden PTX files and the GPU check program use. Catch2-free, so that the GPU check (a plain
// executable) can share it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/kernel/pointwise_kernel.h"

namespace tccd::codegen::cuda_testing {

using ir::DType;

// Builds a PointwiseKernel one instruction at a time; every method returns the value index.
class KernelBuilder {
 public:
  KernelBuilder(std::string name, std::vector<int64_t> shape);

  int Input(DType dtype);        // a new input and its kLoad
  int GatherInput(DType dtype);  // a new gather operand (no kLoad); returns its input index
  int Index(int dim);            // kIndex: the point's coordinate along dim
  // kGather of input `input` (from GatherInput) under mask at coordinates.
  int Gather(int input, int mask, std::vector<int> coords);
  int Const(DType dtype, double value);
  int Op(PwOp op, DType dtype, std::vector<int> args);
  int Cast(int value, DType to) { return Op(PwOp::kCast, to, {value}); }
  void Output(int value);  // a new output of the value's dtype and its kStore
  // A new f32 scatter output of `elements` elements and the kScatterAdd of the f32 `value` into
  // it at coordinates under mask (scatter kernels: call once, as the last instruction).
  void ScatterAddOutput(int64_t elements, int mask, int value, std::vector<int> coords) {
    PwInstr in;
    in.op = PwOp::kScatterAdd;
    in.dtype = DType::kF32;
    in.operand = static_cast<int>(kernel_.output_dtypes.size());
    in.args = {mask, value};
    in.args.insert(in.args.end(), coords.begin(), coords.end());
    kernel_.output_dtypes.push_back(DType::kF32);
    kernel_.body.push_back(std::move(in));
    kernel_.scatter_elements = elements;
  }
  DType dtype_of(int value) const { return kernel_.body[value].dtype; }
  // Makes it a row reduction over the trailing `num_reduced_dims` dims (call after the last
  // Input/Output); row_operand per operand, inputs then outputs.
  void Rows(int num_reduced_dims, std::vector<bool> row_operand) {
    kernel_.reduction.num_reduced_dims = num_reduced_dims;
    kernel_.reduction.row_operand = std::move(row_operand);
  }

  // A column reduction over the leading num_reduced_dims dims.
  void Columns(int num_reduced_dims, std::vector<bool> column_operand,
               std::vector<bool> kept_broadcast) {
    Rows(num_reduced_dims, std::move(column_operand));
    kernel_.reduction.axis = RowReduction::Axis::kLeading;
    kernel_.reduction.kept_broadcast = std::move(kept_broadcast);
  }

  const PointwiseKernel& kernel() const { return kernel_; }

 private:
  PointwiseKernel kernel_;
};

// out = relu(a * b + c): three f32 inputs (c is broadcast along dim 0 by the strided tests).
PointwiseKernel FusedReluKernel(const std::string& name, std::vector<int64_t> shape);

// out = gelu(x) in bf16 (erf form, computed in f32 like ATen).
PointwiseKernel Bf16GeluKernel(const std::string& name, std::vector<int64_t> shape);

// (x < y) as bool, and where(x < y, x, 2 * y) as f32: compare, select, two outputs.
PointwiseKernel WhereCompareKernel(const std::string& name, std::vector<int64_t> shape);

// a + b + 7 on i64.
PointwiseKernel I64AddKernel(const std::string& name, std::vector<int64_t> shape);

// From one f16 input: exp(x) as f32, x * x as f16, and trunc(x * 100) as i32.
PointwiseKernel MultiOutputKernel(const std::string& name, std::vector<int64_t> shape);

// Every op valid on `dtype` (an arithmetic dtype: f32, f64 or an integer) applied to two inputs a
// and b, each result stored directly (compares go through not + where); then casts of a to every
// dtype. One output per op, so a wrong op shows up as one wrong output.
PointwiseKernel AllOpsKernel(const std::string& name, DType dtype, std::vector<int64_t> shape);

// And/or/compare on two bool inputs, then casts from f16, bf16 and bool to every dtype.
PointwiseKernel LogicAndHalfCastsKernel(const std::string& name, std::vector<int64_t> shape);

// Row reductions. softmax(x) over the last dim, f32.
PointwiseKernel SoftmaxRowsKernel(const std::string& name, std::vector<int64_t> shape);
// A bias gradient of a product, sum(a * b) over the leading dim of [M, N] bf16 (column kernel).
PointwiseKernel ColumnSumKernel(const std::string& name, std::vector<int64_t> shape);
// bf16 in and out, f32 math.
PointwiseKernel SoftmaxRowsBf16Kernel(const std::string& name, std::vector<int64_t> shape);
PointwiseKernel PaddedLogSoftmaxBackwardKernel(const std::string& name, std::vector<int64_t> shape,
                                               int64_t tail);
// Softmax backward rows that also store the f32 probabilities cast to bf16 (attention's dV
// operand).
PointwiseKernel SoftmaxBackwardProbsCastKernel(const std::string& name, std::vector<int64_t> shape);
// Layer norm over the last dim of bf16 x with `params` (bf16 or f32) weight and bias: (out bf16,
// mean f32 and rstd f32 per row), eps 1e-5.
PointwiseKernel LayerNormRowsKernel(const std::string& name, std::vector<int64_t> shape,
                                    DType params = DType::kBF16);
// ViT's layer-norm backward row under autocast: bf16 gradient, f32 x, mean, rstd (row
// operands), f32 weight and residual gradient; f32 out = residual + the input gradient.
PointwiseKernel LayerNormBackwardRowsKernel(const std::string& name, std::vector<int64_t> shape);
// Cross-entropy's forward rows over [N, C]: bf16 logits, an i64 target per row (row operand);
// outputs logsumexp (ATen's guards for infinite maxima) and the target's log-probability.
PointwiseKernel CrossEntropyForwardRowsKernel(const std::string& name, std::vector<int64_t> shape);
// Its backward rows: bf16 logits, f32 logsumexp, i64 target, f32 loss gradient (row operands);
// bf16 (softmax - one-hot) * gradient through log_softmax's backward.
PointwiseKernel CrossEntropyBackwardRowsKernel(const std::string& name, std::vector<int64_t> shape);

// Every dtype, for loops over them.
// Index-aware kernels (kIndex/kGather): out[i, j] = j < half ? a[i, j] : b[i, j - half], times a
// loaded f32 tensor (the rotary-embedding cat); shape [rows, 2 * half].
PointwiseKernel CatKernel(const std::string& name, std::vector<int64_t> shape);
// bf16 cat of `parts` equal parts along the last dim, lowered as the daemon lowers aten::cat.
PointwiseKernel CatPartsKernel(const std::string& name, std::vector<int64_t> shape, int parts);
// Embedding: out[b, s, e] = weight[ids[b, s], e] (bf16 weight, i64 ids, rows outside the
// weight read 0); shape [batch, seq, dim], weight [vocab, dim] with vocab = 100.
PointwiseKernel EmbeddingKernel(const std::string& name, std::vector<int64_t> shape);
// A row kernel gathering its input (row gathers): an f32 embedding [32000, E] read through
// i64 ids [B, S] inside an RMS norm over E; outputs the gathered rows and the bf16 norm.
PointwiseKernel EmbeddingRmsNormRowsKernel(const std::string& name, std::vector<int64_t> shape);
// A symbolic first layer norm gathering a token and a position embedding (bf16) over run-time
// rows [?, ?, E] (symbolic row gathers).
PointwiseKernel EmbeddingPairLayerNormRowsKernel(const std::string& name,
                                                 std::vector<int64_t> shape);
PointwiseKernel EmbeddingBackwardKernel(const std::string& name, std::vector<int64_t> shape,
                                        int64_t num_weights = 100);

// Dropout as dropout_to_philox.h lowers it: mask = philox_uniform(seed, 3) < 0.9 (a b8 output),
// out = x * mask / 0.9; the seed is a broadcast 0-dim i64 input.
PointwiseKernel DropoutKernel(const std::string& name, std::vector<int64_t> shape);

// ViT's q/k/v gradient stack as the pointwise clone of its permute: out[b, n, s, h, d] =
// (s == 0 ? q : s == 1 ? k : v)[b, n, h, d], three bf16 gather operands (strided views at
// launch), shape [B, N, 3, H, D]; what index_ops.cc lowers stack(dim=2) to.
PointwiseKernel StackKernel(const std::string& name, std::vector<int64_t> shape);
// A tiled kernel (TileTranspose): out = cast(in * 0.125), in and out in the given iteration-space
// layouts, tiled over (read_dim, write_dim).
PointwiseKernel TileCopyKernel(const std::string& name, std::vector<int64_t> shape, ir::DType in,
                               ir::DType out, std::vector<int64_t> in_strides,
                               std::vector<int64_t> out_strides, int read_dim, int write_dim);

// Fixed-layout operands (PointwiseKernel::fixed_strides, dense entry only). A channels-last
// batch norm's normalisation over [N, H, W, C] (the kernel's memory order): bf16 x, f32 mean,
// rstd, weight, bias broadcast per channel ([0, 0, 0, 1]); out = relu((x - mean) * rstd * w + b)
// in bf16.
PointwiseKernel ChannelsLastNormKernel(const std::string& name, std::vector<int64_t> shape);
// Its backward's column sums over the [A, B, C] split: bf16 g, x, f32 mean and invstd per channel
// (column operands... of [C], fixed [0, 0, 1] over the kept [B, C]); outputs the f32 partial sums
// of g and of g * (x - mean) * invstd per [B, C] column.
PointwiseKernel ChannelsLastNormBackwardSumsKernel(const std::string& name,
                                                   std::vector<int64_t> shape);

std::vector<DType> AllDTypes();

struct GoldenCase {
  std::string name;  // the golden files are golden/<name>.cu and golden/<name>.ptx
  PointwiseKernel kernel;
};

// The golden corpus: the five pointwise kernels above at fixed shapes (the i64 one with more
// than 2^31 elements, so that 64-bit indexing is covered) and the two row reductions (a row
// with a tail, and a block-per-row layer norm).
std::vector<GoldenCase> GoldenCorpus();

}  // namespace tccd::codegen::cuda_testing
