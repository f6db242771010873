// The kernel IR for one fused pointwise loop: a straight-line SSA body evaluated once per point
// of an iteration space. It is backend-neutral: the CPU backend lowers it to an LLVM loop nest,
// the CUDA backend (later) to one thread per point.
//
// Conventions every producer and backend follows:
//  * body[i]'s value is referenced by index i; args only reference earlier instructions.
//  * kLoad yields the input's storage dtype; kStore takes a value already in the output's dtype.
//  * Arithmetic never happens on f16/bf16: producers cast to f32 after a load and back before a
//    store. Backends may hold f16/bf16 values as raw 16-bit patterns.
//  * Binary/ternary ops take operands of the instruction's dtype (producers insert kCast).
//  * Comparisons take operands of one dtype and produce kBool.
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
  kStore,  // operand = output index; args[0]; produces no value
};

const char* PwOpName(PwOp op);

struct PwInstr {
  PwOp op = PwOp::kConstant;
  ir::DType dtype = ir::DType::kF32;  // result dtype (for kStore: the stored dtype)
  std::vector<int> args;
  int operand = -1;  // kLoad: input index; kStore: output index
  double fvalue = 0;
  int64_t ivalue = 0;
};

// One fused loop. Entry point ABI (see tccd.v1.NativeCall, abi "tccd-cpu-1"):
//   extern "C" void <name>(void* const* data, const int64_t* strides)
// data: input pointers then output pointers; strides: [(inputs + outputs) x shape.size()]
// element strides of every operand in the iteration space (0 where an input broadcasts).
struct PointwiseKernel {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<ir::DType> input_dtypes;
  std::vector<ir::DType> output_dtypes;
  std::vector<PwInstr> body;
  std::vector<std::string> fused_ops;  // ATen targets fused in, for KernelInfo and logs

  int num_operands() const {
    return static_cast<int>(input_dtypes.size() + output_dtypes.size());
  }
};

// Checks the conventions above; returns a description of the first violation, or "".
std::string VerifyPointwiseKernel(const PointwiseKernel& kernel);

// Human-readable form, for IR dumps and golden tests.
std::string PrintPointwiseKernel(const PointwiseKernel& kernel);

}  // namespace tccd::codegen
