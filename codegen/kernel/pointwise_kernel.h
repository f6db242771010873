// The kernel IR for one fused loop: a straight-line SSA body evaluated once per point of an
// iteration space. It is backend-neutral: the CPU backend lowers it to an LLVM loop nest, the
// CUDA backend to one thread per point.
//
// Row reductions (softmax, norms, sum/amax over trailing dims) are the same IR plus a reduction
// section (RowReduction below): the trailing `num_reduced_dims` dims of `shape` form a row, the
// leading ones index rows. Every value of the body is then either *element-level* (varies along
// the row: it depends on a load of an element operand) or *row-level* (uniform along the row:
// constants, loads of row operands, kReduce* results and what is computed from them only). A
// kReduce* instruction folds an element-level value over the row into a row-level one; it is the
// only way from element level to row level. So a softmax is
//   %0 = load x; %1 = reduce_max %0; %2 = sub %0, %1; %3 = exp %2; %4 = reduce_sum %3; ...
// Why one IR and not a separate reduction kernel struct: a persistent row reduction is exactly a
// pointwise body whose values live at two levels, and its prologue and epilogue *are* pointwise
// bodies (lowered by the same op library, pointwise_ops.h). One struct keeps one kernel list per
// graph, one plan mapping (kernel g of group g), one launch-descriptor table in the host .so and
// one printer/verifier; the backends dispatch on `reduction.num_reduced_dims`. Only the CUDA
// backend emits reductions; the CPU backend rejects such kernels (its target never forms them).
//
// Column reductions (RowReduction::axis == kLeading; bias gradients, layer norm's weight
// gradient) reduce the *leading* dims instead: every "row" above is then a column, one point of
// the trailing (kept) dims, and row operands hold one value per column. A column kernel streams
// over the reduced dims once and holds nothing, so no element-level value may depend on a
// reduction (reductions have one phase; what follows them is per column only).
//
// Conventions every producer and backend follows:
//  * body[i]'s value is referenced by index i; args only reference earlier instructions.
//  * kLoad yields the input's storage dtype; kStore takes a value already in the output's dtype.
//  * Arithmetic never happens on f16/bf16: producers cast to f32 after a load and back before a
//    store. Backends may hold f16/bf16 values as raw 16-bit patterns.
//  * Binary/ternary ops take operands of the instruction's dtype (producers insert kCast).
//  * Comparisons take operands of one dtype and produce kBool.
//
// Index-aware kernels (view materialisations: cat, constant_pad_nd, slice/select backward;
// gathers: embedding, index_select). kIndex yields a coordinate of the current point and kGather
// reads an input at computed coordinates under a mask, so an output point can select which input
// and which element it reads. An input read by kGather is a *gather operand*: it is never kLoad'ed
// (its shape need not broadcast to the iteration space) and its stride row in the launch ABI holds
// its own strides, dim k of the tensor in slot k (padded with zeros to the kernel's rank), not
// iteration-space strides. Both backends implement them. The CPU always takes its strided loop
// nest; CUDA vectorises along the innermost dim where a gather's mask is uniform along it and its
// innermost coordinate is the point's own (cuda_index_emitter.cc), else one element per thread.
//
// Scatter kernels (embedding's backward: scatter_ops.h). kScatterAdd adds a value into an output
// at computed coordinates, with atomics. An output written by kScatterAdd is a *scatter output*:
// it is never kStore'd, its stride row in the launch ABI holds its own strides (as a gather
// operand's), it must be f32 and contiguous, and it is the kernel's only output. Its shape is
// not the iteration space (which is the scattered values'), and it starts at zero: the
// launcher zero-fills it before the kernel runs (CUDA: kind "scatter" in cuda_backend.h). So a
// scatter kernel is a sink: nothing may read its output in the same kernel. CUDA only; the CPU
// backend never gets one (its graphs keep the ATen op).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/ir/graph.h"

namespace tccd::codegen {

enum class PwOp : uint8_t {
  kLoad,      // operand = input index
  kConstant,  // fvalue (floating dtypes) or ivalue (integral/bool dtypes)
  kCast,      // args[0] converted to dtype (float->int truncates toward zero, like torch)
  // Binary, same dtype in and out.
  kAdd,
  kSub,
  kMul,
  kDiv,      // floating only
  kMaximum,  // propagates NaN (torch.maximum)
  kMinimum,  // propagates NaN (torch.minimum)
  kPow,      // floating only
  // Unary, same dtype in and out. Transcendentals are floating only.
  kNeg,
  kAbs,
  kExp,
  kLog,
  kLog1p,
  kExpm1,
  kSqrt,
  kRsqrt,
  kTanh,
  kSigmoid,
  kErf,
  kSin,
  kCos,
  kReciprocal,
  kFloor,
  kCeil,
  kRound,  // half to even, like torch.round
  // Comparisons: operands of one dtype, result kBool. Any NaN compares false except kNe.
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  // Logical on kBool.
  kAnd,
  kOr,
  kNot,
  kWhere,  // args: cond (kBool), a, b (dtype)
  // Row reductions (only in kernels with a reduction section): args[0] an element-level f32
  // value; the result (f32, row-level) is its sum / NaN-propagating max / min over the row.
  kReduceSum,
  kReduceMax,
  kReduceMin,
  kStore,  // operand = output index; args[0]; produces no value
  // Index-aware ops (pointwise kernels only; see "Index-aware kernels" above). Appended after
  // kStore so that the existing ops keep their numbers.
  kIndex,       // operand = iteration dim d; the point's coordinate along d (dtype i64, no args)
  kGather,      // operand = input index; args: mask (b8), then n <= rank coordinates (i64); dtype
                // the input's storage dtype. mask ? input[sum_k coord_k * stride[operand][k]] : 0,
                // reading no memory where mask is false.
  kRandom,      // args: seed (i64), offset (i64); dtype f32: a uniform draw in [0, 1), the first
                // word w of Philox4x32-10 (key = seed's two 32-bit halves, low first; counter = the
                // point's row-major flat index's halves, then offset's) as (w >> 8) * 2^-24. Needs
                // the point's coordinates like kIndex, so it makes a kernel index-aware.
  kScatterAdd,  // operand = output index; args: mask (b8), value (f32), then n <= rank
                // coordinates (i64); dtype f32; produces no value. mask ? output[sum_k coord_k *
                // stride[out][k]] += value, atomically (float atomics: the order of the additions,
                // hence the rounding of a sum, varies from run to run). See "Scatter kernels".
};

const char* PwOpName(PwOp op);

// What a kernel-IR op is, in one place for the verifier, the lowerings and every emitter (the
// graph-level counterpart, what an ATen op is, is codegen/ops/op_properties.h). An emitter that
// switches on PwOpKindOf handles a whole kind at once, so a new binary or comparison op needs
// no edit of the emitters' category lists, only of their per-op spellings.
enum class PwOpKind : uint8_t {
  kLoad,
  kConstant,
  kCast,
  kBinary,   // kAdd .. kPow: two operands of the instruction's dtype
  kUnary,    // kNeg .. kRound: one operand of the instruction's dtype
  kCompare,  // kEq .. kGe: two operands of one dtype, result kBool
  kLogical,  // kAnd, kOr, kNot on kBool
  kWhere,
  kReduce,  // kReduceSum, kReduceMax, kReduceMin (kernels with a reduction section only)
  kStore,
  kIndex,
  kGather,
  kRandom,
  kScatter,  // kScatterAdd
};
PwOpKind PwOpKindOf(PwOp op);
inline bool IsReduce(PwOp op) { return PwOpKindOf(op) == PwOpKind::kReduce; }
// Binary/unary ops defined on floating dtypes only (div, pow, transcendentals, reciprocal); the
// others also take integers.
bool IsFloatOnlyOp(PwOp op);

// Kernel-IR dtype rules, shared by the verifier, the lowerings (passes/) and every backend.
inline bool IsHalf(ir::DType d) { return d == ir::DType::kF16 || d == ir::DType::kBF16; }
inline bool IsFloat(ir::DType d) {
  return d == ir::DType::kF32 || d == ir::DType::kF64 || IsHalf(d);
}
// The dtypes generated float kernels accept: f32 and the 16-bit floats (computed in f32). f64
// graphs keep ATen's kernels.
inline bool IsF32OrHalf(ir::DType d) { return d == ir::DType::kF32 || IsHalf(d); }
// Index operands (token ids, gather indices, class targets): i64 or i32.
inline bool IsIndexDType(ir::DType d) { return d == ir::DType::kI64 || d == ir::DType::kI32; }
// The dtype a value of storage dtype `dtype` has inside a kernel: f16/bf16 are held as f32
// ("arithmetic never happens on f16/bf16" below), every other dtype as itself.
ir::DType HeldDType(ir::DType dtype);

struct PwInstr {
  PwOp op = PwOp::kConstant;
  ir::DType dtype = ir::DType::kF32;  // result dtype (for kStore: the stored dtype)
  std::vector<int> args;
  int operand = -1;  // kLoad: input index; kStore: output index
  double fvalue = 0;
  int64_t ivalue = 0;
};

// The reduction section of a kernel (see the top of this file). Default: none (pointwise).
struct RowReduction {
  // Trailing dims of `shape` reduced per row; 0 = a plain pointwise kernel. Default: 0.
  int num_reduced_dims = 0;
  // Per operand (inputs then outputs), when num_reduced_dims > 0: true for a *row operand*, one
  // value per row (its strides in the iteration space are 0 along the reduced dims: a keepdim
  // view broadcast back, like a reduction's output). Loads of row operands are row-level; only
  // row-level values may be stored to them. Element operands vary along the row.
  std::vector<bool> row_operand;
  // Which dims are reduced: the trailing num_reduced_dims (rows) or the leading ones (columns,
  // see the top of this file). Default: kTrailing.
  enum class Axis : uint8_t { kTrailing, kLeading };
  Axis axis = Axis::kTrailing;
  // Per operand: true for an element input that is constant along the kept dims. Columns
  // (kLeading): one value per point of the reduced dims, e.g. layer norm's per-row mean and
  // rstd in its weight gradient; backends read it once per reduced index rather than as element
  // vectors. Rows (kTrailing): the same values for every row, e.g. a norm's weight and bias;
  // the CUDA row emitter leaves such loads in the epilogue (cached, broadcast) while it issues
  // the streamed ones at the row's start. Columns: one entry per operand. Rows: one per
  // operand, or empty (not known: every element operand is taken as streamed only where it
  // feeds a reduction).
  std::vector<bool> kept_broadcast;
};

// Tiled kernels (issue 7: layout copies, permutes, stacks). A plain pointwise kernel whose
// inputs are contiguous along one dim of the iteration space and whose outputs along another (a
// permute's clone, NCHW <-> NHWC, a cast through a transposed view) moves one of its operand
// groups with a stride of a whole row between adjacent threads, whichever dim the threads walk,
// so the one-element-per-thread strided entry runs far below bandwidth. A tiled kernel walks the
// iteration space in 2-D tiles over (read_dim, write_dim): a block evaluates the body for its
// tile with adjacent threads along read_dim (the inputs' contiguous dim: coalesced loads), keeps
// the values it stores in shared memory, and writes them out with adjacent threads along
// write_dim (the outputs' contiguous dim: coalesced stores). Its own kind, not a flag on the
// loop kernel: the CUDA backend gives it its own emitter (cuda_tile_emitter.cc), launch kind
// and single entry point. Its layout is fixed at compile time (`strides`): the plan's declared
// one, from which codegen/cuda_host/tile_kernels.h chose it. CUDA only; plain pointwise
// kernels with static shapes only (no reduction section, no index ops).
struct TileTranspose {
  int read_dim = -1;   // the inputs' contiguous dim; -1 (the default): not a tiled kernel
  int write_dim = -1;  // the outputs' contiguous dim, != read_dim
  // [operands x rank] iteration-space element strides, operand-major (as fixed_strides and
  // tccd.v1.NativeCall.expected_strides): the one layout every launch has. Empty by default.
  std::vector<int64_t> strides;
};

// Which entry points a backend with two of them (CUDA: <name>_contig, vectorised for dense
// 16-byte aligned operands, and <name>_strided, taking run-time strides) emits. Each kernel runs
// at exactly one place of its plan, with its operands' declared layouts, and the runtimes copy an
// input that arrives in another layout or misaligned into the declared one (runtime.py), so the
// plan knows at compile time which one entry every launch takes: emitting the other doubled
// NVRTC's work for nothing (README, "Cold first step"). Backends with one entry (CPU) ignore it.
enum class KernelEntries : uint8_t {
  kBoth,     // both (a kernel compiled on its own, outside a plan; the golden corpus). Default.
  kDense,    // only the dense entry: every launch's operands are contiguous and aligned
  kStrided,  // only the strided entry: some operand is declared strided or misaligned
};

// A dim of `shape` whose size is known only at run time (graphs with symbolic sizes,
// codegen/symbolic_plan.h). A kernel with one takes the sizes as an argument (ABI
// "tccd-cpu-sym-1" below); its code specialises on the static dims only.
inline constexpr int64_t kRuntimeDim = -1;

// One fused loop. Entry point ABI (see tccd.v1.NativeCall, abi "tccd-cpu-1"):
//   extern "C" void <name>(void* const* data, const int64_t* strides)
// data: input pointers then output pointers; strides: [(inputs + outputs) x shape.size()]
// element strides of every operand in the iteration space (0 where an input broadcasts).
// With a kRuntimeDim in `shape` (ABI "tccd-cpu-sym-1"):
//   extern "C" void <name>(void* const* data, const int64_t* strides, const int64_t* shape)
// shape: every dim's size at this call (static dims included, equal to `shape`).
// Row reductions may have run-time dims among the leading (row-indexing) dims, and as their one
// reduced dim (CUDA row kernels of symbolic graphs: the sizes come after the strides, see
// cuda_backend.h); column reductions and zero tails may not.
struct PointwiseKernel {
  std::string name;
  std::vector<int64_t> shape;  // sizes, or kRuntimeDim
  std::vector<ir::DType> input_dtypes;
  std::vector<ir::DType> output_dtypes;
  std::vector<PwInstr> body;
  std::vector<std::string> fused_ops;  // ATen targets fused in, for KernelInfo and logs
  RowReduction reduction;              // none unless reduction.num_reduced_dims > 0
  // Per output, or empty (the default): how many elements after the end of each row the kernel
  // sets to zero, along the innermost dim at that dim's stride (a row kernel writing into a
  // zero-padded buffer for an aligned matmul: padded_row_stores.h). Row kernels only (trailing
  // axis), whose reduced dims other than the innermost have size 1; element-level outputs only.
  std::vector<int64_t> output_zero_tail;
  KernelEntries entries = KernelEntries::kBoth;  // changes the object: part of the kernel key
  // The dense entry's declared operand layouts, where some operand is not in the dense entry's
  // own layout ("fixed-layout operands", IsFixedLayoutOperand below): [operands x rank]
  // iteration-space strides, operand-major, as tccd.v1.NativeCall.expected_strides. Empty (the
  // default): every operand of the dense entry is dense row-major (column kernels: over the
  // kept dims). Set only with entries == kDense, by ChooseCudaEntries (entry_points.h) from the
  // plan's declared layout: a per-channel vector broadcast over a channels-last activation
  // (strides [0, 0, 0, 1] in [N, H, W, C]), the [C] statistic of a batch norm over the [B, C]
  // columns of its split. The dense entry computes such an operand's offsets from the flat
  // index with these strides as compile-time constants and moves it with the same vectors as
  // the others (innermost stride 1), or one scalar per vector (innermost stride 0); the
  // launcher's dense test skips it (the plan runtimes copy any input that arrives in another
  // layout into the declared one first). Plain pointwise, index (a gather
  // operand's row: its own strides, as declared; no scatter) and column kernels with static
  // shapes only.
  std::vector<int64_t> fixed_strides;
  // Tiled kernels only ("Tiled kernels" above); read_dim -1 (the default) for all others.
  TileTranspose tile;
  // Scatter kernels only ("Scatter kernels" above): the element count of the scatter output,
  // which the launcher zero-fills before the kernel runs. 0 (the default) for other kernels.
  int64_t scatter_elements = 0;

  int num_operands() const { return static_cast<int>(input_dtypes.size() + output_dtypes.size()); }
  // Storage dtype of operand `operand` (inputs, then outputs).
  ir::DType operand_dtype(int operand) const {
    const int n_in = static_cast<int>(input_dtypes.size());
    return operand < n_in ? input_dtypes[operand] : output_dtypes[operand - n_in];
  }
  // Any reduction section, rows or columns.
  bool is_row_reduction() const { return reduction.num_reduced_dims > 0; }
  bool is_column_reduction() const {
    return is_row_reduction() && reduction.axis == RowReduction::Axis::kLeading;
  }
  bool is_tile() const { return tile.read_dim >= 0; }
  bool has_dense_entry() const { return entries != KernelEntries::kStrided; }
  bool has_strided_entry() const { return entries != KernelEntries::kDense; }
  // Output `o`'s zero tail (output_zero_tail above); 0 when none.
  int64_t zero_tail(int o) const {
    return static_cast<size_t>(o) < output_zero_tail.size() ? output_zero_tail[o] : 0;
  }
};

// True when `kernel.fixed_strides` is set and operand o's strides there are not the dense
// entry's own layout: row-major over every dim (plain pointwise kernels) or over the kept dims
// (column kernels, whose kept-broadcast operands are never fixed). Dims of size 1 are ignored.
bool IsFixedLayoutOperand(const PointwiseKernel& kernel, int o);

// For kernels with a reduction section: per body value, true when it is row-level (see above).
// Stores are row-level. Assumes a kernel that passes VerifyPointwiseKernel.
std::vector<bool> RowLevelValues(const PointwiseKernel& kernel);

// True when input `input` is read by kGather (see "Index-aware kernels" above).
bool IsGatherOperand(const PointwiseKernel& kernel, int input);
// True when output `output` is written by kScatterAdd (see "Scatter kernels" above).
bool IsScatterOutput(const PointwiseKernel& kernel, int output);
// True when the body has kScatterAdd.
bool HasScatter(const PointwiseKernel& kernel);
// True when the body has kIndex, kGather, kRandom or kScatterAdd.
bool HasIndexOps(const PointwiseKernel& kernel);
// True when some dim of `shape` is kRuntimeDim.
bool HasRuntimeShape(const PointwiseKernel& kernel);

// Checks the conventions above; returns a description of the first violation, or "".
std::string VerifyPointwiseKernel(const PointwiseKernel& kernel);

// Human-readable form, for IR dumps and golden tests.
std::string PrintPointwiseKernel(const PointwiseKernel& kernel);

}  // namespace tccd::codegen
