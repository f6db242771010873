// Inline IR for exp, expm1, log, log1p, tanh, sigmoid and erf (branch-free), and for f32 sin,
// cos and pow (module functions with vector variants and a libm fallback); see vector_math.h.
//
// Shared building blocks:
//  * RoundToInt: n = round(y) as a float and as an integer, with the 1.5 * 2^(mantissa bits)
//    trick (y + magic leaves n in the low mantissa bits) instead of llvm.rint/roundeven, which
//    are libm calls on x86-64 without SSE4.1.
//  * Exp2i / Ldexp: 2^n built directly in the exponent field; the scaling is split into two
//    factors so that results in the denormal range are rounded once, like libm's.
//  * Clamps are `select(x > hi, hi, x)`: a NaN fails every ordered compare and flows through
//    the arithmetic to the result, so no separate NaN case is needed.
#include "codegen/cpu/vector_math.h"

#include <functional>
#include <initializer_list>
#include <limits>
#include <string>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

namespace tccd::codegen {
namespace {

using llvm::Value;

// Emits one function for one floating type. Methods named after an operation emit it.
class MathEmitter {
 public:
  MathEmitter(llvm::IRBuilderBase& b, llvm::Type* type)
      : b_(b),
        t_(type),
        it_(type->getWithNewType(b.getIntNTy(type->getScalarSizeInBits()))),
        f64_(type->getScalarType()->isDoubleTy()) {}

  // `in_range`: the caller guarantees that x is NaN or that exp(x) is a normal number (f32:
  // x in [-87, 88]), which saves the clamps and the second scale factor.
  Value* Exp(Value* x, bool in_range = false);
  Value* Expm1(Value* x);
  Value* Log(Value* x);
  Value* Log1p(Value* x);
  Value* Tanh(Value* x);
  Value* Sigmoid(Value* x);
  Value* Erf(Value* x);

  // The inline part of f32 sin, cos and pow: the value, and the lanes it does not cover, which
  // take libm's value instead (see EmitWithLibmFallback).
  struct FastPath {
    Value* value;
    Value* rare;  // i1 per lane
  };
  FastPath SinCosFast(Value* x, bool cos);
  FastPath PowFast(Value* x, Value* y);

 private:
  // Format parameters of the working type.
  int MantissaBits() const { return f64_ ? 52 : 23; }
  int ExponentBias() const { return f64_ ? 1023 : 127; }

  Value* F(double v) { return llvm::ConstantFP::get(t_, v); }
  Value* I(int64_t v) { return llvm::ConstantInt::getSigned(it_, v); }
  Value* Mask(uint64_t v) { return llvm::ConstantInt::get(it_, v); }

  Value* Add(Value* a, Value* c) { return b_.CreateFAdd(a, c); }
  Value* Sub(Value* a, Value* c) { return b_.CreateFSub(a, c); }
  Value* Mul(Value* a, Value* c) { return b_.CreateFMul(a, c); }
  Value* Div(Value* a, Value* c) { return b_.CreateFDiv(a, c); }
  // a * c + d, fused where the target has FMA.
  Value* Fma(Value* a, Value* c, Value* d) {
    return b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {t_}, {a, c, d});
  }
  Value* Abs(Value* x) { return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x); }
  Value* CopySign(Value* mag, Value* sign) {
    return b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, mag, sign);
  }
  Value* Select(Value* c, Value* a, Value* d) { return b_.CreateSelect(c, a, d); }
  Value* Lt(Value* a, Value* c) { return b_.CreateFCmpOLT(a, c); }
  Value* Gt(Value* a, Value* c) { return b_.CreateFCmpOGT(a, c); }
  Value* Bits(Value* x) { return b_.CreateBitCast(x, it_); }
  Value* FromBits(Value* i) { return b_.CreateBitCast(i, t_); }
  // min(max(x, lo), hi), keeping NaN.
  Value* Clamp(Value* x, double lo, double hi) {
    x = Select(Lt(x, F(lo)), F(lo), x);
    return Select(Gt(x, F(hi)), F(hi), x);
  }
  // c[0] + c[1] x + c[2] x^2 + ... (Horner).
  Value* Poly(Value* x, std::initializer_list<double> c) {
    const double* hi = c.end() - 1;
    Value* r = F(*hi);
    for (const double* p = hi - 1; p >= c.begin(); --p) r = Fma(r, x, F(*p));
    return r;
  }

  struct Rounded {
    Value* f;  // round(y) as a float
    Value* i;  // the same as an integer
  };
  // Round to nearest of y = x * scale, for |y| < 2^(mantissa bits - 1).
  Rounded RoundToInt(Value* x, double scale);
  // 2^n for n in the normal exponent range.
  Value* Exp2i(Value* n) {
    return FromBits(b_.CreateShl(b_.CreateAdd(n, I(ExponentBias())), MantissaBits()));
  }
  // p * 2^n, n in [2 * min normal exponent, 2 * max exponent]: two exact-range factors, so that
  // only the last multiplication rounds (into the denormals or to infinity).
  Value* Ldexp(Value* p, Value* n) {
    Value* n1 = b_.CreateAShr(n, 1);
    return Mul(Mul(p, Exp2i(n1)), Exp2i(b_.CreateSub(n, n1)));
  }
  // r = x - n * ln2 (Cody-Waite): ln2 = hi + lo where hi has trailing zeros, so that
  // x - n * hi is exact.
  struct ReducedLn2 {
    Value* hi;  // x - n * hi, exact
    Value* lo;  // -n * lo
    Value* r;   // hi + lo, rounded
  };
  ReducedLn2 ReduceLn2(Value* x, Value* n);

  // k * ln2 + ln(1 + f), from SplitLog's parts of a finite u > 0. `lo` (may be null) is added
  // to the low-order part of the result (log1p's correction term).
  Value* LogFinite(Value* k_f, Value* f, Value* lo);
  // The exponent k (as a float) and f = m - 1 with u = 2^k * m, m in [sqrt(1/2), sqrt(2)).
  void SplitLog(Value* u, Value** k_f, Value** f);
  // ln's special cases applied to `r`, the result for finite positive u.
  Value* LogSpecials(Value* u, Value* r);

  llvm::IRBuilderBase& b_;
  llvm::Type* t_;
  llvm::Type* it_;  // the integer type of t_'s width
  bool f64_;
};

MathEmitter::Rounded MathEmitter::RoundToInt(Value* x, double scale) {
  // y + 1.5 * 2^m lands in [2^m, 2^(m+1)), where the ulp is 1: the addition rounds y to an
  // integer, which is left in the low mantissa bits.
  const double magic = f64_ ? 0x1.8p52 : 0x1.8p23;
  Value* t = Fma(x, F(scale), F(magic));
  Rounded r;
  r.f = Sub(t, F(magic));
  r.i = b_.CreateSub(Bits(t), Bits(F(magic)));
  return r;
}

MathEmitter::ReducedLn2 MathEmitter::ReduceLn2(Value* x, Value* n) {
  // f32: hi has 9 significant bits (|n| < 2^8); f64: hi has 32 (|n| < 2^11).
  const double hi = f64_ ? 0x1.62e42feep-1 : 0x1.63p-1;
  const double lo = f64_ ? 0x1.a39ef35793c76p-33 : -0x1.bd0106p-13;
  ReducedLn2 r;
  r.hi = Fma(n, F(-hi), x);  // exact (Sterbenz)
  r.lo = Mul(n, F(-lo));
  r.r = Add(r.hi, r.lo);
  return r;
}

Value* MathEmitter::Exp(Value* x, bool in_range) {
  // exp(x) = 2^n * exp(r), n = round(x / ln2), |r| <= ln2 / 2.
  // Clamped so that n stays in Ldexp's range: below lo the result is 0 (2^-150 rounds to 0),
  // above hi it is +inf.
  if (!in_range) x = f64_ ? Clamp(x, -746.0, 709.8) : Clamp(x, -104.0, 88.8);
  const Rounded n = RoundToInt(x, 0x1.71547652b82fep0);  // log2(e)
  const ReducedLn2 r = ReduceLn2(x, n.f);
  // exp(r) = 1 + r + r^2 * P(r). r_lo joins the small terms before the sum with r_hi, so that
  // the reduction adds no rounding of its own.
  Value* p =
      f64_
          ? Poly(r.r, {0x1.0000000000009p-1, 0x1.5555555555558p-3, 0x1.55555555503f4p-5,
                       0x1.111111110f808p-7, 0x1.6c16c185fded5p-10, 0x1.a01a01b009b94p-13,
                       0x1.a01993bebde07p-16, 0x1.71ddf6badec7dp-19, 0x1.28b40639f7187p-22,
                       0x1.af631dc77317bp-26})
          : Poly(r.r, {0x1.fffffcp-2, 0x1.555492p-3, 0x1.5558f2p-5, 0x1.1239d4p-7, 0x1.6a2444p-10});
  p = Add(Add(r.hi, Fma(Mul(r.r, r.r), p, r.lo)), F(1.0));
  return in_range ? Mul(p, Exp2i(n.i)) : Ldexp(p, n.i);
}

Value* MathEmitter::Expm1(Value* x) {
  // expm1(x) = 2^n * expm1(r) + (2^n - 1), written as 2 * (s * expm1(r) + (s - 1/2)) with
  // s = 2^(n-1) so that n = 128 (the largest finite results) needs no second scale factor.
  // expm1(r) = r + r^2 / 2 + r^3 * Q(r) needs no cancellation.
  // |x| < 1/2 takes n = 0 (r = x, so Q covers |r| <= 1/2): with n = 1 and r near -ln2/2 the
  // result 1 + 2 expm1(r) would double expm1(r)'s error in ulps.
  Value* xc = f64_ ? Clamp(x, -40.0, 709.8) : Clamp(x, -18.0, 88.8);
  Rounded n = RoundToInt(xc, 0x1.71547652b82fep0);
  Value* near_zero = Lt(Abs(xc), F(0.5));
  n.f = Select(near_zero, F(0.0), n.f);
  n.i = Select(near_zero, I(0), n.i);
  const ReducedLn2 r = ReduceLn2(xc, n.f);
  Value* q = f64_ ? Poly(r.r, {0x1.5555555555569p-3, 0x1.555555555557dp-5, 0x1.111111110ca67p-7,
                               0x1.6c16c16c05254p-10, 0x1.a01a01b475c5bp-13, 0x1.a01a01f146f0bp-16,
                               0x1.71de1172b20e0p-19, 0x1.27e4583f8bd82p-22, 0x1.aeaea7a0d34ccp-26,
                               0x1.201755414f494p-29, 0x1.2f6eca0af0f34p-33})
                  : Poly(r.r, {0x1.555556p-3, 0x1.555556p-5, 0x1.110f58p-7, 0x1.6c156p-10,
                               0x1.a3001cp-13, 0x1.a26b5ep-16});
  Value* p = Add(r.hi, Fma(Mul(r.r, r.r), Fma(r.r, q, F(0.5)), r.lo));
  Value* s = Exp2i(b_.CreateSub(n.i, I(1)));
  Value* result = Mul(F(2.0), Fma(s, p, Sub(s, F(0.5))));
  // For tiny |x| the result is x itself; this also keeps -0 and exact denormals.
  return Select(Lt(Abs(x), F(f64_ ? 0x1p-54 : 0x1p-25)), x, result);
}

void MathEmitter::SplitLog(Value* u, Value** k_f, Value** f) {
  // Denormals are scaled into the normal range first.
  const int scale_bits = f64_ ? 54 : 25;
  Value* is_denormal = Lt(u, F(f64_ ? 0x1p-1022 : 0x1p-126));
  Value* us = Select(is_denormal, Mul(u, F(f64_ ? 0x1p54 : 0x1p25)), u);
  Value* k_adjust = Select(is_denormal, I(-scale_bits), I(0));
  // Subtracting sqrt(1/2)'s bits moves the exponent boundary to sqrt(1/2), so that the
  // exponent field of the difference is k and the remaining mantissa is m in [sqrt(1/2), 2).
  Value* ix = Bits(us);
  Value* tmp = b_.CreateSub(ix, Bits(F(f64_ ? 0x1.6a09e667f3bcdp-1 : 0x1.6a09e6p-1)));
  Value* k = b_.CreateAdd(b_.CreateAShr(tmp, MantissaBits()), k_adjust);
  Value* exponent_mask = Mask(f64_ ? 0xfff0000000000000ull : 0xff800000u);
  Value* m = FromBits(b_.CreateSub(ix, b_.CreateAnd(tmp, exponent_mask)));
  *f = Sub(m, F(1.0));  // exact (Sterbenz)
  *k_f = b_.CreateSIToFP(k, t_);
}

Value* MathEmitter::LogFinite(Value* k_f, Value* f, Value* lo) {
  // ln(u) = k * ln2 + ln(1 + f); the small terms are summed first and the exact k * ln2_hi
  // last. `lo` (may be null) joins the small terms.
  if (!f64_) {
    // ln(1 + f) = f - f^2 / 2 + f^3 * P(f).
    Value* z = Mul(f, f);
    Value* p = Poly(
        f, {3.333331347e-01, -2.499998361e-01, 2.000218779e-01, -1.666948348e-01, 1.421711445e-01,
            -1.237749606e-01, 1.188882887e-01, -1.184669361e-01, 6.937177479e-02});
    Value* y = Mul(Mul(f, z), p);
    y = Fma(k_f, F(-0x1.bd0106p-13), lo == nullptr ? y : Add(y, lo));  // ln2 - 0x1.63p-1
    y = Fma(z, F(-0.5), y);
    return Fma(k_f, F(0x1.63p-1), Add(f, y));
  }
  // f64 (fdlibm's log): with s = f / (2 + f), ln(1 + f) = 2 atanh(s) = 2s + s * R(s^2), and
  // 2s = f - hfsq + s * hfsq with hfsq = f^2 / 2, so
  // ln(1 + f) = f - (hfsq - s * (hfsq + R)), which keeps the rounding errors in small terms.
  Value* s = Div(f, Add(F(2.0), f));
  Value* z = Mul(s, s);
  Value* r = Mul(z, Poly(z, {0x1.5555555555555p-1, 0x1.99999999991ecp-2, 0x1.249249270235cp-2,
                             0x1.c71c6b4802e81p-3, 0x1.74608028f8d24p-3, 0x1.3a413a3632519p-3,
                             0x1.286b1368f98d0p-3}));
  Value* hfsq = Mul(F(0.5), Mul(f, f));
  Value* low = Mul(k_f, F(0x1.a39ef35793c76p-33));  // ln2 - 0x1.62e42feep-1
  if (lo != nullptr) low = Add(low, lo);
  Value* small = Sub(Sub(hfsq, Fma(s, Add(hfsq, r), low)), f);
  return Fma(k_f, F(0x1.62e42feep-1), b_.CreateFNeg(small));
}

Value* MathEmitter::LogSpecials(Value* u, Value* r) {
  const double inf = std::numeric_limits<double>::infinity();
  r = Select(b_.CreateFCmpOEQ(u, F(inf)), F(inf), r);
  r = Select(b_.CreateFCmpOEQ(u, F(0.0)), F(-inf), r);
  // Negative or NaN: NaN.
  return Select(b_.CreateFCmpULT(u, F(0.0)), F(std::numeric_limits<double>::quiet_NaN()), r);
}

Value* MathEmitter::Log(Value* x) {
  Value *k_f, *f;
  SplitLog(x, &k_f, &f);
  return LogSpecials(x, LogFinite(k_f, f, nullptr));
}

Value* MathEmitter::Log1p(Value* x) {
  // u = 1 + x rounds; c = (1 + x) - u exactly, and ln(1 + x) = ln(u) + c / u to first order.
  // When u's exponent is 0, f = x exactly and no correction is needed.
  Value* u = Add(F(1.0), x);
  Value *k_f, *f;
  SplitLog(u, &k_f, &f);
  Value* c = Select(b_.CreateFCmpOGE(u, F(2.0)), Sub(F(1.0), Sub(u, x)), Sub(x, Sub(u, F(1.0))));
  Value* k_zero = b_.CreateFCmpOEQ(k_f, F(0.0));
  f = Select(k_zero, x, f);
  Value* lo = Select(k_zero, F(0.0), Div(c, u));
  Value* r = LogSpecials(u, LogFinite(k_f, f, lo));
  // Tiny |x| (with +-0 and denormals): the result is x.
  return Select(Lt(Abs(x), F(f64_ ? 0x1p-54 : 0x1p-24)), x, r);
}

Value* MathEmitter::Tanh(Value* x) {
  // Odd: work on a = |x| and copy the sign back (which also gives tanh(-0) = -0).
  // f32: a + a^3 * P(a^2) for small a, else 1 - 2 / (exp(2a) + 1).
  Value* a = Abs(x);
  if (f64_) {
    // tanh(a) = e / (e + 2) with e = expm1(2a); a is clamped where tanh rounds to 1 so that e
    // stays finite.
    Value* e = Expm1(Mul(F(2.0), Select(Gt(a, F(20.0)), F(20.0), a)));
    return CopySign(Div(e, Add(e, F(2.0))), x);
  }
  Value* z = Mul(a, a);
  Value* p = Poly(z, {-3.333333433e-01, 1.333332658e-01, -5.396399274e-02, 2.180209942e-02,
                      -8.436492644e-03, 2.382033039e-03});
  Value* small = Fma(Mul(a, z), p, a);
  // exp(88) is finite, and 2 / (exp(88) + 1) already rounds 1 - it to 1.
  Value* e = Exp(Select(Gt(a, F(44.0)), F(88.0), Add(a, a)), /*in_range=*/true);
  Value* large = Sub(F(1.0), Div(F(2.0), Add(e, F(1.0))));
  return CopySign(Select(Lt(a, F(0.625)), small, large), x);
}

Value* MathEmitter::Sigmoid(Value* x) {
  // With e = exp(-|x|) <= 1: 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0, so that large
  // negative x keeps its tiny (denormal) result instead of 1 / (1 + inf) = 0.
  Value* e = Exp(b_.CreateFNeg(Abs(x)));
  return Div(Select(Lt(x, F(0.0)), e, F(1.0)), Add(F(1.0), e));
}

Value* MathEmitter::Erf(Value* x) {
  // |x| < 0.921875: x + x * S(x^2) (the correction is small, so its rounding errors are
  // too). Otherwise erf(|x|) = 1 - exp(P(|x|)) with P ~ ln(erfc), |x|
  // clamped to 4 (erf rounds to 1 from about 3.92 on).
  Value* a = Abs(x);
  Value* s = Poly(Mul(x, x), {1.283791661e-01, -3.761263788e-01, 1.128376722e-01, -2.686323784e-02,
                              5.209956784e-03, -8.236303693e-04, 8.733466530e-05});
  Value* small = Fma(x, s, x);
  Value* t = Select(Gt(a, F(4.0)), F(4.0), a);
  Value* q =
      Poly(t, {-1.11686129897e-04, -1.12826527823e+00, -6.35601385054e-01, -1.06102598833e-01,
               2.39035956577e-02, -3.77835619811e-03, 3.66444557345e-04, -1.6214669002e-05});
  Value* large = CopySign(Sub(F(1.0), Exp(q, /*in_range=*/true)), x);  // q in [-18.2, -0.9]
  return Select(Lt(a, F(0.921875)), small, large);
}

MathEmitter::FastPath MathEmitter::SinCosFast(Value* x, bool cos) {
  // In double: n = round(x * 2/pi), r = x - n * pi/2 with pi/2 in two parts (hi has 33 bits,
  // so n * hi is exact for |n| < 2^20, and x - n * hi is exact), |r| <= pi/4; then sin(r) or
  // cos(r) by quadrant, rounded once to float. |x| >= 2^20 and infinities are left to libm
  // (a full-range reduction needs Payne-Hanek); NaN stays here (it propagates).
  MathEmitter d(b_, t_->getWithNewType(b_.getDoubleTy()));
  Value* xd = b_.CreateFPExt(x, d.t_);
  const Rounded n = d.RoundToInt(xd, 0x1.45f306dc9c883p-1);  // 2/pi
  Value* r = d.Fma(n.f, d.F(-0x1.921fb544p+0), xd);
  r = d.Fma(n.f, d.F(-0x1.0b4611a626331p-34), r);
  Value* z = d.Mul(r, r);
  Value* sin_r = d.Fma(d.Mul(r, z),
                       d.Poly(z, {-0x1.55555554d9aa6p-3, 0x1.11110e79019d2p-7,
                                  -0x1.a013e4b2bbec3p-13, 0x1.6dbe1f794cc0bp-19}),
                       r);
  Value* cos_r = d.Fma(z,
                       d.Poly(z, {-0x1.fffffffd58ce1p-2, 0x1.55554e35c4796p-5,
                                  -0x1.6c0e5c79249cep-10, 0x1.9a6f51d97a936p-16}),
                       d.F(1.0));
  // Quadrant q = n mod 4: sin(x) = sin r, cos r, -sin r, -cos r; cos(x) = sin(x + pi/2).
  Value* q = cos ? b_.CreateAdd(n.i, d.I(1)) : n.i;
  Value* odd = b_.CreateICmpNE(b_.CreateAnd(q, d.I(1)), d.I(0));
  Value* v = d.Select(odd, cos_r, sin_r);
  Value* sign = b_.CreateShl(b_.CreateAnd(q, d.I(2)), 62);  // bit 1 of q -> the sign bit
  v = d.FromBits(b_.CreateXor(d.Bits(v), sign));
  Value* result = b_.CreateFPTrunc(v, t_);
  // sin(x) = x for tiny |x|, which also keeps -0 and denormals exact.
  if (!cos) result = Select(Lt(Abs(x), F(0x1p-12)), x, result);
  return {result, b_.CreateFCmpOGE(Abs(x), F(0x1p20))};
}

MathEmitter::FastPath MathEmitter::PowFast(Value* x, Value* y) {
  // For finite x > 0 and finite y: exp(y * ln x) in double, rounded once to float. ln and exp
  // are accurate to about an ulp of double, so for every result in float's range the error
  // before that rounding is below 2^-40 relative. Everything else (x <= 0 with its integer-y
  // rules, infinities, NaN: C99's special-case table) is left to libm.
  MathEmitter d(b_, t_->getWithNewType(b_.getDoubleTy()));
  Value *k_f, *f;
  d.SplitLog(b_.CreateFPExt(x, d.t_), &k_f, &f);
  Value* t = d.Mul(b_.CreateFPExt(y, d.t_), d.LogFinite(k_f, f, nullptr));
  Value* result = b_.CreateFPTrunc(d.Exp(t), t_);
  const double inf = std::numeric_limits<double>::infinity();
  Value* common = b_.CreateAnd(b_.CreateAnd(Gt(x, F(0.0)), Lt(x, F(inf))), Lt(Abs(y), F(inf)));
  return {result, b_.CreateNot(common)};
}

using FastPathFn = std::function<MathEmitter::FastPath(MathEmitter&, llvm::ArrayRef<Value*>)>;

// Defines `name`: fast(args) where no lane is rare, libm where one is (lane by lane).
llvm::Function* DefineWithLibmFallback(llvm::Module& module, const std::string& name,
                                       llvm::Type* type, int arity, llvm::FunctionCallee libm,
                                       const FastPathFn& fast) {
  llvm::LLVMContext& ctx = module.getContext();
  const llvm::SmallVector<llvm::Type*, 2> params(arity, type);
  llvm::Function* fn = llvm::Function::Create(llvm::FunctionType::get(type, params, false),
                                              llvm::GlobalValue::InternalLinkage, name, module);
  fn->setDoesNotAccessMemory();
  fn->setDoesNotThrow();
  fn->setWillReturn();
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
  llvm::SmallVector<Value*, 2> args;
  for (llvm::Argument& arg : fn->args()) args.push_back(&arg);
  MathEmitter m(b, type);
  const MathEmitter::FastPath fp = fast(m, args);
  auto* vector_type = llvm::dyn_cast<llvm::FixedVectorType>(type);
  llvm::BasicBlock* common = b.GetInsertBlock();
  llvm::BasicBlock* rare = llvm::BasicBlock::Create(ctx, "libm", fn);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx, "done", fn);
  b.CreateCondBr(vector_type ? b.CreateOrReduce(fp.rare) : fp.rare, rare, done,
                 llvm::MDBuilder(ctx).createBranchWeights(1, 1 << 20));
  b.SetInsertPoint(rare);
  Value* from_libm;
  if (vector_type == nullptr) {
    from_libm = b.CreateCall(libm, args);
  } else {
    // Every lane is recomputed (this block is rare); the rare ones are kept.
    from_libm = llvm::PoisonValue::get(type);
    for (unsigned i = 0; i < vector_type->getNumElements(); ++i) {
      llvm::SmallVector<Value*, 2> lane;
      for (Value* arg : args) lane.push_back(b.CreateExtractElement(arg, i));
      from_libm = b.CreateInsertElement(from_libm, b.CreateCall(libm, lane), i);
    }
    from_libm = b.CreateSelect(fp.rare, from_libm, fp.value);
  }
  b.CreateBr(done);
  b.SetInsertPoint(done);
  llvm::PHINode* phi = b.CreatePHI(type, 2);
  phi->addIncoming(fp.value, common);
  phi->addIncoming(from_libm, rare);
  b.CreateRet(phi);
  return fn;
}

// Calls `name(args)` (f32 scalars), defining it and its vector variants on first use.
//
// Branch-free IR cannot call libm for some lanes only, and LLVM 16's loop vectoriser widens a
// pure call in a conditional block as if it were unconditional (a libm call per lane, on every
// element). So these functions live in the module: the kernel calls the scalar one, whose
// call site names vector variants of 4, 8 and 16 lanes in the "vector-function-abi-variant"
// attribute (the mechanism LLVM uses for vector math libraries). The vectoriser then calls the
// variant of its width, which runs the fast path on all lanes and calls libm only when some
// lane needs it. The scalar function is noinline so that the call survives until the
// vectoriser; the variants are in llvm.compiler.used because nothing calls them before it.
Value* EmitWithLibmFallback(llvm::IRBuilderBase& b, const std::string& name, const char* libm_name,
                            llvm::ArrayRef<Value*> args, const FastPathFn& fast) {
  llvm::Module& module = *b.GetInsertBlock()->getModule();
  llvm::Type* type = args[0]->getType();
  const int arity = static_cast<int>(args.size());
  std::string mappings;
  for (int lanes : {4, 8, 16}) {
    if (!mappings.empty()) mappings += ",";
    mappings += "_ZGV_LLVM_N" + std::to_string(lanes) + std::string(arity, 'v') + "_" + name + "(" +
                name + ".v" + std::to_string(lanes) + ")";
  }
  llvm::Function* scalar = module.getFunction(name);
  if (scalar == nullptr) {
    const llvm::SmallVector<llvm::Type*, 2> params(arity, type);
    llvm::FunctionCallee libm =
        module.getOrInsertFunction(libm_name, llvm::FunctionType::get(type, params, false));
    if (auto* f = llvm::dyn_cast<llvm::Function>(libm.getCallee())) {
      f->setDoesNotAccessMemory();  // as with -fno-math-errno
      f->setDoesNotThrow();
      f->setWillReturn();
    }
    scalar = DefineWithLibmFallback(module, name, type, arity, libm, fast);
    scalar->addFnAttr(llvm::Attribute::NoInline);
    llvm::SmallVector<llvm::GlobalValue*, 3> variants;
    for (unsigned lanes : {4u, 8u, 16u}) {
      variants.push_back(DefineWithLibmFallback(module, name + ".v" + std::to_string(lanes),
                                                llvm::FixedVectorType::get(type, lanes), arity,
                                                libm, fast));
    }
    llvm::appendToCompilerUsed(module, variants);
  }
  llvm::CallInst* call = b.CreateCall(scalar, args);
  call->addFnAttr(llvm::Attribute::get(b.getContext(), "vector-function-abi-variant", mappings));
  call->setDoesNotAccessMemory();
  call->setDoesNotThrow();
  return call;
}

}  // namespace

Value* EmitInlineMath(llvm::IRBuilderBase& builder, MathFn fn, Value* x) {
  llvm::Type* type = x->getType();
  const bool f32 = type->getScalarType()->isFloatTy();
  if (!f32 && !type->getScalarType()->isDoubleTy()) return nullptr;
  MathEmitter m(builder, type);
  switch (fn) {
    case MathFn::kExp:
      return m.Exp(x);
    case MathFn::kExpm1:
      return m.Expm1(x);
    case MathFn::kLog:
      return m.Log(x);
    case MathFn::kLog1p:
      return m.Log1p(x);
    case MathFn::kTanh:
      return m.Tanh(x);
    case MathFn::kSigmoid:
      return m.Sigmoid(x);
    // f64 erf needs several ranges of rational approximations to be accurate: libm's.
    case MathFn::kErf:
      return f32 ? m.Erf(x) : nullptr;
    // f64 sin/cos would need a double-double reduction: libm's.
    case MathFn::kSin:
    case MathFn::kCos: {
      if (!type->isFloatTy()) return nullptr;  // scalar f32 only (the call gets vector variants)
      const bool cos = fn == MathFn::kCos;
      return EmitWithLibmFallback(builder, cos ? "tccd.cosf" : "tccd.sinf", cos ? "cosf" : "sinf",
                                  {x}, [cos](MathEmitter& e, llvm::ArrayRef<Value*> args) {
                                    return e.SinCosFast(args[0], cos);
                                  });
    }
  }
  return nullptr;
}

Value* EmitInlinePow(llvm::IRBuilderBase& builder, Value* x, Value* y) {
  if (!x->getType()->isFloatTy()) return nullptr;  // f64: libm's
  return EmitWithLibmFallback(
      builder, "tccd.powf", "powf", {x, y},
      [](MathEmitter& e, llvm::ArrayRef<Value*> args) { return e.PowFast(args[0], args[1]); });
}

}  // namespace tccd::codegen
