// Inline LLVM IR for the transcendental functions of pointwise kernels.
//
// A call to libm (expf, erff, ...) keeps a loop scalar: kernels link no vector math library, so
// the loop vectoriser has no vector variant to call. These emitters build each function instead
// from straight-line, branch-free IR (range reduction, polynomials, integer exponent arithmetic,
// `select` for special cases), which the vectoriser widens like any other arithmetic.
//
// f32 sin, cos and pow have an inline fast path (computed in double) that leaves some arguments
// to libm: |x| >= 2^20 and infinities for sin/cos (their reduction needs Payne-Hanek), and for
// pow everything but finite x > 0 with finite y (C99's special-case table). They are emitted as
// calls of module functions that have vector variants; see vector_math.cc for why and how.
//
// Internal to the CPU backend. LLVM types are only forward-declared here.
//
// Accuracy: max error in ulps against the exact result, over the whole range including
// denormal inputs and results, with and without FMA (tests/codegen/cpu/vector_math_test.cc
// checks these bounds; for f32 it also has an exhaustive test over every input):
//   f32: exp 1, expm1 1.5, log 1, log1p 1, tanh 1.5, sigmoid 2.5, erf 1.5, sin 1, cos 1,
//        pow 1 (sin, cos and pow about 0.5 on their fast paths, libm's elsewhere)
//   f64: exp 1.5, expm1 1.5, log 1.5, log1p 1.5, tanh 3, sigmoid 3; erf, sin, cos and pow keep
//        the libm call (the emitters return nullptr).
// Special values follow C99 Annex F (NaN in -> NaN out, exp(-inf) = 0, log(0) = -inf,
// log(x < 0) = NaN, tanh/erf/expm1/log1p/sin keep the sign of zero), except that the NaN
// returned for an invalid operation may have another payload than libm's.
// f16/bf16 kernels compute in f32 (pointwise_kernel.h), so they get the f32 versions.
//
// Polynomial coefficients are minimax fits (Remez exchange, weighted for relative error in the
// result) rounded to the working precision. Products that may be fused are emitted as
// llvm.fmuladd, so targets with FMA use it and others get a multiply and an add; the bounds
// hold for both.
#pragma once

#include <cstdint>

namespace llvm {
class IRBuilderBase;
class Value;
}  // namespace llvm

namespace tccd::codegen {

enum class MathFn : uint8_t {
  kExp,
  kExpm1,
  kLog,
  kLog1p,
  kTanh,
  kSigmoid,  // 1 / (1 + exp(-x))
  kErf,
  kSin,  // f32 only
  kCos,  // f32 only
};

// Emits fn(x) at the builder's insertion point and returns it. `x` is a float or double value
// (or a vector of them). Returns nullptr when there is no inline version for x's type, in which
// case the caller falls back to libm. The code is straight-line (no blocks); sin and cos (for a
// scalar float only) are a call of a function this adds to the builder's module.
llvm::Value* EmitInlineMath(llvm::IRBuilderBase& builder, MathFn fn, llvm::Value* x);

// pow(x, y) for scalar float x and y; nullptr for other types (libm's). A call of a function
// this adds to the builder's module.
llvm::Value* EmitInlinePow(llvm::IRBuilderBase& builder, llvm::Value* x, llvm::Value* y);

}  // namespace tccd::codegen
