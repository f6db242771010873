// PwOpName, the kernel verifier and the kernel printer.
//
// Self-contained on purpose: it depends only on the graph IR *header* (the DType enum), so the
// kernel IR and every backend can be built and tested without the graph IR library.
#include "codegen/kernel/pointwise_kernel.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <system_error>
#include <vector>

namespace tccd::codegen {
namespace {

using ir::DType;

bool IsKnownDType(DType dtype) {
  return static_cast<uint8_t>(dtype) <= static_cast<uint8_t>(DType::kBool);
}
// Types arithmetic may happen on: everything but bool and the 16-bit floats.
bool IsArith(DType d) { return d != DType::kBool && !IsHalf(d); }
bool IsArithFloat(DType d) { return d == DType::kF32 || d == DType::kF64; }

using Kind = PwOpKind;

int ExpectedArgs(PwOp op) {
  switch (PwOpKindOf(op)) {
    case Kind::kLoad:
    case Kind::kIndex:
    case Kind::kConstant:
      return 0;
    case Kind::kGather:
    case Kind::kScatter:
      return -1;  // variable: mask (+ value) + coordinates
    case Kind::kCast:
    case Kind::kUnary:
    case Kind::kReduce:
    case Kind::kStore:
      return 1;
    case Kind::kBinary:
    case Kind::kCompare:
    case Kind::kRandom:
      return 2;
    case Kind::kLogical:
      return op == PwOp::kNot ? 1 : 2;
    case Kind::kWhere:
      return 3;
  }
  return 0;
}

bool IsValidSymbol(const std::string& name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (!alpha && !(digit && i > 0)) return false;
  }
  return true;
}

std::string InstrPrefix(size_t i, const PwInstr& in) {
  return "%" + std::to_string(i) + " (" + PwOpName(in.op) + "): ";
}

// Shortest text that reads back as the same double; "inf", "-inf", "nan" for the rest.
std::string FormatDouble(double v) {
  if (std::isnan(v)) return "nan";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  if (ec != std::errc()) return "?";
  std::string s(buf, end);
  // Keep floating constants visibly floating ("1.0", not "1").
  if (s.find_first_of(".eni") == std::string::npos) s += ".0";
  return s;
}

// The reduction section's rules (see pointwise_kernel.h); "" when they hold.
std::string VerifyReduction(const PointwiseKernel& kernel);
std::string VerifyFixedStrides(const PointwiseKernel& kernel);
std::string VerifyTile(const PointwiseKernel& kernel);

}  // namespace

PwOpKind PwOpKindOf(PwOp op) {
  switch (op) {
    case PwOp::kLoad:
      return PwOpKind::kLoad;
    case PwOp::kConstant:
      return PwOpKind::kConstant;
    case PwOp::kCast:
      return PwOpKind::kCast;
    case PwOp::kAdd:
    case PwOp::kSub:
    case PwOp::kMul:
    case PwOp::kDiv:
    case PwOp::kMaximum:
    case PwOp::kMinimum:
    case PwOp::kPow:
      return PwOpKind::kBinary;
    case PwOp::kEq:
    case PwOp::kNe:
    case PwOp::kLt:
    case PwOp::kLe:
    case PwOp::kGt:
    case PwOp::kGe:
      return PwOpKind::kCompare;
    case PwOp::kAnd:
    case PwOp::kOr:
    case PwOp::kNot:
      return PwOpKind::kLogical;
    case PwOp::kWhere:
      return PwOpKind::kWhere;
    case PwOp::kReduceSum:
    case PwOp::kReduceMax:
    case PwOp::kReduceMin:
      return PwOpKind::kReduce;
    case PwOp::kStore:
      return PwOpKind::kStore;
    case PwOp::kIndex:
      return PwOpKind::kIndex;
    case PwOp::kGather:
      return PwOpKind::kGather;
    case PwOp::kRandom:
      return PwOpKind::kRandom;
    case PwOp::kScatterAdd:
      return PwOpKind::kScatter;
    default:
      return PwOpKind::kUnary;
  }
}

bool IsFloatOnlyOp(PwOp op) {
  switch (op) {
    case PwOp::kDiv:
    case PwOp::kPow:
    case PwOp::kExp:
    case PwOp::kLog:
    case PwOp::kLog1p:
    case PwOp::kExpm1:
    case PwOp::kSqrt:
    case PwOp::kRsqrt:
    case PwOp::kTanh:
    case PwOp::kSigmoid:
    case PwOp::kErf:
    case PwOp::kSin:
    case PwOp::kCos:
    case PwOp::kReciprocal:
      return true;
    default:
      return false;
  }
}

DType HeldDType(DType dtype) { return IsHalf(dtype) ? DType::kF32 : dtype; }

const char* PwOpName(PwOp op) {
  switch (op) {
    case PwOp::kLoad:
      return "load";
    case PwOp::kConstant:
      return "constant";
    case PwOp::kCast:
      return "cast";
    case PwOp::kAdd:
      return "add";
    case PwOp::kSub:
      return "sub";
    case PwOp::kMul:
      return "mul";
    case PwOp::kDiv:
      return "div";
    case PwOp::kMaximum:
      return "maximum";
    case PwOp::kMinimum:
      return "minimum";
    case PwOp::kPow:
      return "pow";
    case PwOp::kNeg:
      return "neg";
    case PwOp::kAbs:
      return "abs";
    case PwOp::kExp:
      return "exp";
    case PwOp::kLog:
      return "log";
    case PwOp::kLog1p:
      return "log1p";
    case PwOp::kExpm1:
      return "expm1";
    case PwOp::kSqrt:
      return "sqrt";
    case PwOp::kRsqrt:
      return "rsqrt";
    case PwOp::kTanh:
      return "tanh";
    case PwOp::kSigmoid:
      return "sigmoid";
    case PwOp::kErf:
      return "erf";
    case PwOp::kSin:
      return "sin";
    case PwOp::kCos:
      return "cos";
    case PwOp::kReciprocal:
      return "reciprocal";
    case PwOp::kFloor:
      return "floor";
    case PwOp::kCeil:
      return "ceil";
    case PwOp::kRound:
      return "round";
    case PwOp::kEq:
      return "eq";
    case PwOp::kNe:
      return "ne";
    case PwOp::kLt:
      return "lt";
    case PwOp::kLe:
      return "le";
    case PwOp::kGt:
      return "gt";
    case PwOp::kGe:
      return "ge";
    case PwOp::kAnd:
      return "and";
    case PwOp::kOr:
      return "or";
    case PwOp::kNot:
      return "not";
    case PwOp::kWhere:
      return "where";
    case PwOp::kReduceSum:
      return "reduce_sum";
    case PwOp::kReduceMax:
      return "reduce_max";
    case PwOp::kReduceMin:
      return "reduce_min";
    case PwOp::kStore:
      return "store";
    case PwOp::kIndex:
      return "index";
    case PwOp::kGather:
      return "gather";
    case PwOp::kRandom:
      return "random";
    case PwOp::kScatterAdd:
      return "scatter_add";
  }
  return "?";
}

std::string VerifyPointwiseKernel(const PointwiseKernel& kernel) {
  if (!IsValidSymbol(kernel.name)) {
    return "kernel name '" + kernel.name + "' is not a C identifier (it becomes a symbol)";
  }
  if (kernel.output_dtypes.empty()) return "kernel has no outputs";
  for (DType d : kernel.input_dtypes) {
    if (!IsKnownDType(d)) return "input dtype out of range";
  }
  for (DType d : kernel.output_dtypes) {
    if (!IsKnownDType(d)) return "output dtype out of range";
  }
  // numel must fit in int64 so that flat indices and offsets cannot overflow.
  int64_t numel = 1;
  for (size_t d = 0; d < kernel.shape.size(); ++d) {
    const int64_t s = kernel.shape[d];
    if (s == kRuntimeDim) continue;  // checked by the caller of the kernel, at every call
    if (s < 0) return "shape[" + std::to_string(d) + "] is negative";
    if (s != 0 && numel > std::numeric_limits<int64_t>::max() / s) {
      return "shape has more than 2^63 elements";
    }
    numel *= s;
  }

  const int num_inputs = static_cast<int>(kernel.input_dtypes.size());
  const int num_outputs = static_cast<int>(kernel.output_dtypes.size());
  std::vector<int> stores(num_outputs, 0), scatters(num_outputs, 0);
  const auto& body = kernel.body;
  for (size_t i = 0; i < body.size(); ++i) {
    const PwInstr& in = body[i];
    const std::string where = InstrPrefix(i, in);
    if (static_cast<uint8_t>(in.op) > static_cast<uint8_t>(PwOp::kScatterAdd)) {
      return "%" + std::to_string(i) + ": op out of range";
    }
    if (!IsKnownDType(in.dtype)) return where + "dtype out of range";
    const int want = ExpectedArgs(in.op);
    if (want >= 0 && static_cast<int>(in.args.size()) != want) {
      return where + "expects " + std::to_string(want) + " args, has " +
             std::to_string(in.args.size());
    }
    std::vector<DType> arg_dtypes;
    for (int a : in.args) {
      if (a < 0 || static_cast<size_t>(a) >= i) {
        return where + "arg %" + std::to_string(a) + " is not an earlier instruction";
      }
      if (body[a].op == PwOp::kStore || body[a].op == PwOp::kScatterAdd) {
        return where + "arg %" + std::to_string(a) + " is a store, which has no value";
      }
      arg_dtypes.push_back(body[a].dtype);
    }
    const DType dt = in.dtype;
    const char* dn = ir::DTypeName(dt);
    switch (PwOpKindOf(in.op)) {
      case Kind::kLoad:
        if (in.operand < 0 || in.operand >= num_inputs) {
          return where + "input index " + std::to_string(in.operand) + " out of range";
        }
        if (kernel.input_dtypes[in.operand] != dt) {
          return where + "dtype " + dn + " differs from input " + std::to_string(in.operand) +
                 "'s " + ir::DTypeName(kernel.input_dtypes[in.operand]);
        }
        break;
      case Kind::kConstant:
        // Integral constants wrap to the dtype's width (a Python scalar -1 added to a u8
        // tensor is 255, as in torch); a bool constant is ivalue != 0.
        if (IsHalf(dt)) return where + "constants cannot be f16/bf16 (cast an f32 constant)";
        break;
      case Kind::kCast:
        break;  // any dtype to any dtype
      case Kind::kBinary:
      case Kind::kUnary:
        if (!IsArith(dt)) return where + "no arithmetic on " + dn;
        if (IsFloatOnlyOp(in.op) && !IsArithFloat(dt)) return where + "floating only, got " + dn;
        for (DType a : arg_dtypes) {
          if (a != dt) return where + "operand dtype " + ir::DTypeName(a) + " differs from " + dn;
        }
        break;
      case Kind::kCompare:
        if (dt != DType::kBool) return where + "result must be b8, got " + dn;
        if (arg_dtypes[0] != arg_dtypes[1]) {
          return where + "operands differ: " + ir::DTypeName(arg_dtypes[0]) + " vs " +
                 ir::DTypeName(arg_dtypes[1]);
        }
        if (IsHalf(arg_dtypes[0])) return where + "no comparisons on f16/bf16";
        break;
      case Kind::kLogical:
        if (dt != DType::kBool) return where + "result must be b8, got " + dn;
        for (DType a : arg_dtypes) {
          if (a != DType::kBool) return where + "operand must be b8, got " + ir::DTypeName(a);
        }
        break;
      case Kind::kWhere:
        // A select only moves bits, so f16/bf16 are fine here.
        if (arg_dtypes[0] != DType::kBool) {
          return where + "condition must be b8, got " + ir::DTypeName(arg_dtypes[0]);
        }
        if (arg_dtypes[1] != dt || arg_dtypes[2] != dt) {
          return where + "branches must be " + dn + ", got " + ir::DTypeName(arg_dtypes[1]) +
                 " and " + ir::DTypeName(arg_dtypes[2]);
        }
        break;
      case Kind::kReduce:
        if (!kernel.is_row_reduction()) return where + "a reduction in a kernel without rows";
        if (dt != DType::kF32 || arg_dtypes[0] != DType::kF32) {
          return where + "reductions are on f32 (accumulate 16-bit floats in f32)";
        }
        break;
      case Kind::kIndex:
        // Row kernels take the coordinate along a reduced (trailing) dim (a class index, an
        // embedding's column: element-level) or along a leading dim (the row's own coordinate:
        // row-level, for a gather of one value per row). Column kernels take none.
        if (kernel.is_column_reduction()) return where + "column kernels take no coordinates";
        if (in.operand < 0 || in.operand >= static_cast<int>(kernel.shape.size())) {
          return where + "dim " + std::to_string(in.operand) + " out of range";
        }
        if (dt != DType::kI64) return where + "result must be i64, got " + dn;
        break;
      case Kind::kGather:
        // Row kernels gather too (row-gathers in reduction_fusion.h: an embedding feeding a
        // norm); column kernels do not.
        if (kernel.is_column_reduction()) return where + "column kernels gather nothing";
        if (in.operand < 0 || in.operand >= num_inputs) {
          return where + "input index " + std::to_string(in.operand) + " out of range";
        }
        if (kernel.input_dtypes[in.operand] != dt) {
          return where + "dtype " + dn + " differs from input " + std::to_string(in.operand) +
                 "'s " + ir::DTypeName(kernel.input_dtypes[in.operand]);
        }
        if (in.args.empty() || in.args.size() > kernel.shape.size() + 1) {
          return where + "expects a mask and 0.." + std::to_string(kernel.shape.size()) +
                 " coordinates, has " + std::to_string(in.args.size()) + " args";
        }
        if (arg_dtypes[0] != DType::kBool)
          return where + "mask must be b8, got " + ir::DTypeName(arg_dtypes[0]);
        for (size_t a = 1; a < arg_dtypes.size(); ++a) {
          if (arg_dtypes[a] != DType::kI64)
            return where + "coordinates must be i64, got " + ir::DTypeName(arg_dtypes[a]);
        }
        break;
      case Kind::kRandom:
        if (kernel.is_row_reduction()) return where + "index ops are for pointwise kernels only";
        if (dt != DType::kF32) return where + "result must be f32, got " + dn;
        if (arg_dtypes[0] != DType::kI64 || arg_dtypes[1] != DType::kI64)
          return where + "seed and offset must be i64";
        break;
      case Kind::kScatter:
        if (kernel.is_row_reduction()) return where + "index ops are for pointwise kernels only";
        if (in.operand < 0 || in.operand >= num_outputs) {
          return where + "output index " + std::to_string(in.operand) + " out of range";
        }
        if (num_outputs != 1) return where + "a scatter output must be the kernel's only output";
        if (dt != DType::kF32 || kernel.output_dtypes[in.operand] != DType::kF32)
          return where + "scatter outputs are f32 (accumulate 16-bit floats in f32)";
        if (in.args.size() < 2 || in.args.size() > kernel.shape.size() + 2) {
          return where + "expects a mask, a value and 0.." + std::to_string(kernel.shape.size()) +
                 " coordinates, has " + std::to_string(in.args.size()) + " args";
        }
        if (arg_dtypes[0] != DType::kBool)
          return where + "mask must be b8, got " + ir::DTypeName(arg_dtypes[0]);
        if (arg_dtypes[1] != DType::kF32)
          return where + "adds an " + ir::DTypeName(arg_dtypes[1]) + " value into f32";
        for (size_t a = 2; a < arg_dtypes.size(); ++a) {
          if (arg_dtypes[a] != DType::kI64)
            return where + "coordinates must be i64, got " + ir::DTypeName(arg_dtypes[a]);
        }
        ++scatters[in.operand];
        break;
      case Kind::kStore:
        if (in.operand < 0 || in.operand >= num_outputs) {
          return where + "output index " + std::to_string(in.operand) + " out of range";
        }
        if (kernel.output_dtypes[in.operand] != dt) {
          return where + "dtype " + dn + " differs from output " + std::to_string(in.operand) +
                 "'s " + ir::DTypeName(kernel.output_dtypes[in.operand]);
        }
        if (arg_dtypes[0] != dt) {
          return where + "stores a " + ir::DTypeName(arg_dtypes[0]) + " value as " + dn;
        }
        if (++stores[in.operand] > 1) {
          return where + "output " + std::to_string(in.operand) + " is stored more than once";
        }
        break;
    }
  }
  for (int o = 0; o < num_outputs; ++o) {
    if (scatters[o] > 0 && stores[o] > 0)
      return "output " + std::to_string(o) + " is both stored and scattered into";
    if (stores[o] == 0 && scatters[o] == 0)
      return "output " + std::to_string(o) + " is never stored";
  }
  for (const PwInstr& in : body) {
    if (in.op == PwOp::kLoad && IsGatherOperand(kernel, in.operand)) {
      return "input " + std::to_string(in.operand) + " is both loaded and gathered";
    }
  }
  if (HasScatter(kernel) ? kernel.scatter_elements <= 0 : kernel.scatter_elements != 0)
    return "scatter_elements is " + std::to_string(kernel.scatter_elements) +
           (HasScatter(kernel) ? " in a scatter kernel" : " in a kernel that does not scatter");
  if (std::string fixed = VerifyFixedStrides(kernel); !fixed.empty()) return fixed;
  if (std::string tile = VerifyTile(kernel); !tile.empty()) return tile;
  return VerifyReduction(kernel);
}

namespace {
// fixed_strides (see pointwise_kernel.h): the shape of the table, the kernels that may have one,
// and what the dense entry needs of a fixed-layout operand: no stride-0 output dim (two points
// would write one element). The vector conditions are the entry chooser's (entry_points.cc).
std::string VerifyFixedStrides(const PointwiseKernel& kernel) {
  if (kernel.fixed_strides.empty()) return "";
  const int rank = static_cast<int>(kernel.shape.size());
  if (static_cast<int64_t>(kernel.fixed_strides.size()) !=
      static_cast<int64_t>(kernel.num_operands()) * rank)
    return "fixed_strides has " + std::to_string(kernel.fixed_strides.size()) + " entries for " +
           std::to_string(kernel.num_operands()) + " operands of rank " + std::to_string(rank);
  if (kernel.entries != KernelEntries::kDense)
    return "fixed_strides on a kernel without only its dense entry";
  if (HasRuntimeShape(kernel) || HasScatter(kernel) ||
      (HasIndexOps(kernel) && kernel.is_row_reduction()) ||
      (kernel.is_row_reduction() && !kernel.is_column_reduction()))
    return "fixed_strides on a kernel that is not a static pointwise, index or column kernel";
  const int num_inputs = static_cast<int>(kernel.input_dtypes.size());
  for (int o = num_inputs; o < kernel.num_operands(); ++o)
    for (int d = kernel.reduction.num_reduced_dims; d < rank; ++d)
      if (kernel.shape[d] > 1 && kernel.fixed_strides[o * rank + d] == 0)
        return "out" + std::to_string(o - num_inputs) + " has a fixed stride of 0 along dim " +
               std::to_string(d);
  return "";
}

// A tiled kernel (TileTranspose in pointwise_kernel.h): a static plain pointwise kernel with
// one entry, two distinct tiled dims of size > 1, a full stride table, and no output point that
// shares an element with another (stride 0 along a dim of size > 1: the tile's shared-memory
// staging would make the race worse than the strided entry's).
std::string VerifyTile(const PointwiseKernel& kernel) {
  const TileTranspose& t = kernel.tile;
  if (t.read_dim < 0) {
    if (t.write_dim != -1 || !t.strides.empty())
      return "tile dims or strides on a kernel without tiles";
    return "";
  }
  const int rank = static_cast<int>(kernel.shape.size());
  if (t.read_dim >= rank || t.write_dim < 0 || t.write_dim >= rank || t.read_dim == t.write_dim)
    return "tile dims " + std::to_string(t.read_dim) + ", " + std::to_string(t.write_dim) +
           " are not two distinct dims of rank " + std::to_string(rank);
  if (kernel.is_row_reduction() || HasIndexOps(kernel) || HasRuntimeShape(kernel))
    return "tiles on a kernel that is not a static plain pointwise kernel";
  if (kernel.shape[t.read_dim] < 2 || kernel.shape[t.write_dim] < 2)
    return "a tiled dim of size < 2";
  if (!kernel.fixed_strides.empty() || kernel.entries != KernelEntries::kStrided)
    return "a tiled kernel has one entry (entries(strided)) and no fixed_strides";
  if (static_cast<int64_t>(t.strides.size()) != static_cast<int64_t>(kernel.num_operands()) * rank)
    return "tile strides have " + std::to_string(t.strides.size()) + " entries for " +
           std::to_string(kernel.num_operands()) + " operands of rank " + std::to_string(rank);
  const int num_inputs = static_cast<int>(kernel.input_dtypes.size());
  for (int o = 0; o < kernel.num_operands(); ++o)
    for (int d = 0; d < rank; ++d) {
      const int64_t s = t.strides[static_cast<size_t>(o) * rank + d];
      if (s < 0) return "a negative tile stride";
      if (o >= num_inputs && kernel.shape[d] > 1 && s == 0)
        return "out" + std::to_string(o - num_inputs) + " has a tile stride of 0 along dim " +
               std::to_string(d);
    }
  return "";
}

std::string VerifyReduction(const PointwiseKernel& kernel) {
  const RowReduction& r = kernel.reduction;
  if (r.num_reduced_dims == 0) {
    for (int64_t t : kernel.output_zero_tail)
      if (t != 0) return "a zero output tail in a kernel without rows";
    return r.row_operand.empty() ? "" : "row operands without rows";
  }
  if (r.num_reduced_dims < 0 || static_cast<size_t>(r.num_reduced_dims) > kernel.shape.size()) {
    return "num_reduced_dims " + std::to_string(r.num_reduced_dims) + " out of range for rank " +
           std::to_string(kernel.shape.size());
  }
  if (HasRuntimeShape(kernel)) {
    // Run-time row counts, and a run-time row length only where the row is one dim (the
    // emitters then loop over it; several reduced dims would need run-time decompositions).
    // Column reductions: run-time sizes in the reduced (leading) dims only; the kept ones fix
    // the column tiling and vector width.
    if (r.axis == RowReduction::Axis::kLeading) {
      for (size_t d = static_cast<size_t>(r.num_reduced_dims); d < kernel.shape.size(); ++d)
        if (kernel.shape[d] == kRuntimeDim)
          return "a column reduction with a run-time size in kept dim " + std::to_string(d);
    }
    const size_t outer = r.axis == RowReduction::Axis::kLeading
                             ? kernel.shape.size()
                             : kernel.shape.size() - static_cast<size_t>(r.num_reduced_dims);
    for (size_t d = outer; d < kernel.shape.size(); ++d)
      if (kernel.shape[d] == kRuntimeDim && r.num_reduced_dims != 1)
        return "a row reduction with a run-time size in reduced dim " + std::to_string(d) +
               " of several";
    for (int64_t t : kernel.output_zero_tail)
      if (t != 0) return "a zero output tail in a row reduction with run-time sizes";
  }
  if (static_cast<int>(r.row_operand.size()) != kernel.num_operands()) {
    return "row_operand has " + std::to_string(r.row_operand.size()) + " entries for " +
           std::to_string(kernel.num_operands()) + " operands";
  }
  const int num_inputs = static_cast<int>(kernel.input_dtypes.size());
  const bool columns = r.axis == RowReduction::Axis::kLeading;
  if (columns ? r.kept_broadcast.size() != r.row_operand.size()
              : !r.kept_broadcast.empty() && r.kept_broadcast.size() != r.row_operand.size()) {
    return "kept_broadcast must have one entry per operand (column kernels), or none (rows)";
  }
  for (int o = 0; o < static_cast<int>(r.kept_broadcast.size()); ++o) {
    if (r.kept_broadcast[o] && (o >= num_inputs || r.row_operand[o])) {
      return "operand " + std::to_string(o) + " is kept-broadcast but not an element input";
    }
  }
  if (!kernel.output_zero_tail.empty()) {
    if (static_cast<int>(kernel.output_zero_tail.size()) !=
        static_cast<int>(kernel.output_dtypes.size()))
      return "output_zero_tail has " + std::to_string(kernel.output_zero_tail.size()) +
             " entries for " + std::to_string(kernel.output_dtypes.size()) + " outputs";
    for (size_t o = 0; o < kernel.output_zero_tail.size(); ++o) {
      if (kernel.output_zero_tail[o] == 0) continue;
      if (kernel.output_zero_tail[o] < 0)
        return "out" + std::to_string(o) + " has a negative zero tail";
      if (columns) return "out" + std::to_string(o) + " has a zero tail in a column kernel";
      if (r.row_operand[num_inputs + o])
        return "out" + std::to_string(o) + " has a zero tail but is a row operand";
      // The tail runs along the innermost dim: the row must be that dim alone.
      for (size_t d = kernel.shape.size() - r.num_reduced_dims; d + 1 < kernel.shape.size(); ++d)
        if (kernel.shape[d] != 1)
          return "out" + std::to_string(o) + " has a zero tail over a row of several dims";
    }
  }
  const std::vector<bool> row = RowLevelValues(kernel);
  // Column kernels: whether a value depends on a reduction (must then be row-level).
  std::vector<bool> after_reduce(kernel.body.size(), false);
  for (size_t i = 0; i < kernel.body.size(); ++i) {
    const PwInstr& in = kernel.body[i];
    for (int a : in.args) after_reduce[i] = after_reduce[i] || after_reduce[a];
    if (columns && after_reduce[i] && !row[i] && in.op != PwOp::kStore) {
      return InstrPrefix(i, in) + "an element-level value after a reduction in a column kernel";
    }
    if (PwOpKindOf(in.op) == Kind::kReduce) {
      if (columns && after_reduce[i])
        return InstrPrefix(i, in) + "a second reduction phase in a column kernel";
      after_reduce[i] = true;
    }
    if (PwOpKindOf(in.op) == Kind::kReduce && row[in.args[0]]) {
      return InstrPrefix(i, in) + "reduces a row-level value";
    }
    if (in.op == PwOp::kStore && r.row_operand[num_inputs + in.operand] && !row[in.args[0]]) {
      return InstrPrefix(i, in) + "stores an element-level value to row operand out" +
             std::to_string(in.operand);
    }
  }
  return "";
}
}  // namespace

bool IsFixedLayoutOperand(const PointwiseKernel& kernel, int o) {
  const int rank = static_cast<int>(kernel.shape.size());
  if (kernel.fixed_strides.empty() || o < 0 || o >= kernel.num_operands()) return false;
  const bool columns = kernel.is_column_reduction();
  if (columns && o < static_cast<int>(kernel.reduction.kept_broadcast.size()) &&
      kernel.reduction.kept_broadcast[o])
    return false;
  const int first = columns ? kernel.reduction.num_reduced_dims : 0;
  int64_t expected = 1;
  for (int d = rank - 1; d >= first; --d) {
    if (kernel.shape[d] != 1 && kernel.fixed_strides[o * rank + d] != expected) return true;
    expected *= kernel.shape[d];
  }
  return false;
}

bool IsGatherOperand(const PointwiseKernel& kernel, int input) {
  for (const PwInstr& in : kernel.body)
    if (in.op == PwOp::kGather && in.operand == input) return true;
  return false;
}

bool IsScatterOutput(const PointwiseKernel& kernel, int output) {
  for (const PwInstr& in : kernel.body)
    if (in.op == PwOp::kScatterAdd && in.operand == output) return true;
  return false;
}

bool HasScatter(const PointwiseKernel& kernel) {
  for (const PwInstr& in : kernel.body)
    if (in.op == PwOp::kScatterAdd) return true;
  return false;
}

bool HasIndexOps(const PointwiseKernel& kernel) {
  for (const PwInstr& in : kernel.body)
    if (in.op == PwOp::kIndex || in.op == PwOp::kGather || in.op == PwOp::kRandom ||
        in.op == PwOp::kScatterAdd)
      return true;
  return false;
}

bool HasRuntimeShape(const PointwiseKernel& kernel) {
  for (int64_t s : kernel.shape)
    if (s == kRuntimeDim) return true;
  return false;
}

std::vector<bool> RowLevelValues(const PointwiseKernel& kernel) {
  const int num_inputs = static_cast<int>(kernel.input_dtypes.size());
  std::vector<bool> row(kernel.body.size(), true);
  for (size_t i = 0; i < kernel.body.size(); ++i) {
    const PwInstr& in = kernel.body[i];
    switch (PwOpKindOf(in.op)) {
      case Kind::kLoad:
        row[i] = in.operand < num_inputs &&
                 static_cast<size_t>(in.operand) < kernel.reduction.row_operand.size() &&
                 kernel.reduction.row_operand[in.operand];
        break;
      case Kind::kReduce:
      case Kind::kStore:
        row[i] = true;
        break;
      case Kind::kIndex:  // row-level along a leading dim, element-level along a reduced one
        row[i] = !kernel.is_row_reduction() ||
                 in.operand < static_cast<int>(kernel.shape.size()) -
                                  kernel.reduction.num_reduced_dims;
        break;
      default:
        for (int a : in.args) row[i] = row[i] && row[a];
    }
  }
  return row;
}

// Form (one instruction per line, stable for golden tests):
//   pointwise @name[4,8](in0: f32, in1: f32) -> (out0: f32) {
//     // fused: aten::mul.Tensor, aten::relu.default
//     %0 = load.f32 in0
//     %2 = mul.f32 %0, %1
//     %3 = constant.f32 0.0
//     store.f32 out0, %4
//   }
std::string PrintPointwiseKernel(const PointwiseKernel& kernel) {
  std::string out = "pointwise @" + kernel.name + "[";
  for (size_t d = 0; d < kernel.shape.size(); ++d) {
    if (d) out += ",";
    out += kernel.shape[d] == kRuntimeDim ? "?" : std::to_string(kernel.shape[d]);
  }
  out += "](";
  for (size_t i = 0; i < kernel.input_dtypes.size(); ++i) {
    if (i) out += ", ";
    out += "in" + std::to_string(i) + ": " + ir::DTypeName(kernel.input_dtypes[i]);
  }
  out += ") -> (";
  for (size_t i = 0; i < kernel.output_dtypes.size(); ++i) {
    if (i) out += ", ";
    out += "out" + std::to_string(i) + ": " + ir::DTypeName(kernel.output_dtypes[i]);
  }
  out += ")";
  if (kernel.scatter_elements != 0)
    out += " scatter(zero-fills " + std::to_string(kernel.scatter_elements) + " elements)";
  if (kernel.is_row_reduction()) {
    // e.g. " rows(reduce 1 dims; row operands: in1 out1)", " columns(reduce 1 leading dims;
    // column operands: out0; kept-broadcast: in2)"
    const bool columns = kernel.is_column_reduction();
    out += (columns ? " columns(reduce " : " rows(reduce ") +
           std::to_string(kernel.reduction.num_reduced_dims) +
           (columns ? " leading dims" : " dims");
    std::string rows;
    const int num_inputs = static_cast<int>(kernel.input_dtypes.size());
    for (int o = 0; o < kernel.num_operands(); ++o) {
      if (static_cast<size_t>(o) >= kernel.reduction.row_operand.size() ||
          !kernel.reduction.row_operand[o])
        continue;
      rows += o < num_inputs ? " in" + std::to_string(o) : " out" + std::to_string(o - num_inputs);
    }
    if (!rows.empty()) out += (columns ? "; column operands:" : "; row operands:") + rows;
    std::string kept;
    for (int o = 0; o < static_cast<int>(kernel.reduction.kept_broadcast.size()); ++o)
      if (kernel.reduction.kept_broadcast[o]) kept += " in" + std::to_string(o);
    if (!kept.empty()) out += "; kept-broadcast:" + kept;
    out += ")";
  }
  // e.g. " zero-tail(out0: 6)": the elements after each row of out0 are set to zero.
  std::string tails;
  for (size_t o = 0; o < kernel.output_zero_tail.size(); ++o)
    if (kernel.output_zero_tail[o] != 0)
      tails += (tails.empty() ? "out" : ", out") + std::to_string(o) + ": " +
               std::to_string(kernel.output_zero_tail[o]);
  if (!tails.empty()) out += " zero-tail(" + tails + ")";
  // Printed only when narrowed, so kernels outside a plan print as before.
  if (kernel.entries == KernelEntries::kDense) out += " entries(dense)";
  if (kernel.entries == KernelEntries::kStrided) out += " entries(strided)";
  // e.g. " fixed(in1: [0,0,0,1])": the dense entry's layouts of its fixed-layout operands.
  std::string fixed;
  const int rank = static_cast<int>(kernel.shape.size());
  const int num_inputs = static_cast<int>(kernel.input_dtypes.size());
  for (int o = 0; o < kernel.num_operands(); ++o) {
    if (!IsFixedLayoutOperand(kernel, o)) continue;
    fixed += fixed.empty() ? "" : ", ";
    fixed += o < num_inputs ? "in" + std::to_string(o) : "out" + std::to_string(o - num_inputs);
    fixed += ": [";
    for (int d = 0; d < rank; ++d)
      fixed += (d ? "," : "") + std::to_string(kernel.fixed_strides[o * rank + d]);
    fixed += "]";
  }
  if (!fixed.empty()) out += " fixed(" + fixed + ")";
  // e.g. " tile(read dim 2, write dim 1; in0: [4096,1,64], out0: [4096,64,1])".
  if (kernel.is_tile()) {
    out += " tile(read dim " + std::to_string(kernel.tile.read_dim) + ", write dim " +
           std::to_string(kernel.tile.write_dim) + ";";
    for (int o = 0; o < kernel.num_operands(); ++o) {
      out += o ? ", " : " ";
      out += o < num_inputs ? "in" + std::to_string(o) : "out" + std::to_string(o - num_inputs);
      out += ": [";
      for (int d = 0; d < rank; ++d) {
        const size_t at = static_cast<size_t>(o) * rank + d;
        out += (d ? "," : "") +
               (at < kernel.tile.strides.size() ? std::to_string(kernel.tile.strides[at]) : "?");
      }
      out += "]";
    }
    out += ")";
  }
  out += " {\n";
  if (!kernel.fused_ops.empty()) {
    out += "  // fused:";
    for (size_t i = 0; i < kernel.fused_ops.size(); ++i) {
      out += (i ? ", " : " ") + kernel.fused_ops[i];
    }
    out += "\n";
  }
  for (size_t i = 0; i < kernel.body.size(); ++i) {
    const PwInstr& in = kernel.body[i];
    out += "  ";
    if (in.op != PwOp::kStore && in.op != PwOp::kScatterAdd) out += "%" + std::to_string(i) + " = ";
    out += std::string(PwOpName(in.op)) + "." + ir::DTypeName(in.dtype);
    bool first = true;
    auto sep = [&] {
      out += first ? " " : ", ";
      first = false;
    };
    if (in.op == PwOp::kLoad || in.op == PwOp::kGather)
      sep(), out += "in" + std::to_string(in.operand);
    if (in.op == PwOp::kIndex) sep(), out += "dim" + std::to_string(in.operand);
    if (in.op == PwOp::kStore || in.op == PwOp::kScatterAdd)
      sep(), out += "out" + std::to_string(in.operand);
    if (in.op == PwOp::kConstant) {
      sep();
      if (IsFloat(in.dtype)) {
        out += FormatDouble(in.fvalue);
      } else if (in.dtype == DType::kBool) {
        out += in.ivalue ? "true" : "false";
      } else {
        out += std::to_string(in.ivalue);
      }
    }
    for (int a : in.args) sep(), out += "%" + std::to_string(a);
    out += "\n";
  }
  out += "}\n";
  return out;
}

}  // namespace tccd::codegen
