// ATen pointwise ops -> kernel IR. One table entry per op overload; formulas follow ATen's
// (aten/src/ATen/native/...) so fused results match eager within float rounding.
#include "codegen/passes/pointwise_ops.h"

#include <cmath>
#include <limits>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace tccd::codegen {
namespace {

using ir::DType;

// Rank of dtypes for promotion within a category.
int FloatRank(DType d) {
  switch (d) {
    case DType::kF16:
    case DType::kBF16:
      return 1;
    case DType::kF32:
      return 2;
    case DType::kF64:
      return 3;
    default:
      return 0;
  }
}

// torch.promote_types for the dtypes the IR has.
DType PromoteTypes(DType a, DType b) {
  if (a == b) return a;
  if (ir::IsFloatingPoint(a) || ir::IsFloatingPoint(b)) {
    if (!ir::IsFloatingPoint(a)) return b;
    if (!ir::IsFloatingPoint(b)) return a;
    if (FloatRank(a) == 1 && FloatRank(b) == 1) return DType::kF32;  // f16 + bf16
    return FloatRank(a) > FloatRank(b) ? a : b;
  }
  if (a == DType::kBool) return b;
  if (b == DType::kBool) return a;
  // Both integral. u8 with a signed type needs the next wider signed type.
  auto bits = [](DType d) { return ir::DTypeBytes(d) * 8; };
  if (a == DType::kU8 || b == DType::kU8) {
    DType other = a == DType::kU8 ? b : a;
    return other == DType::kI8 ? DType::kI16 : other;
  }
  return bits(a) >= bits(b) ? a : b;
}

// The lowering context for one node.
class Lowering {
 public:
  Lowering(const ir::Node& node, const std::function<int(const ir::ValueRef&)>& value_of,
           PwBuilder& b)
      : node_(node), value_of_(value_of), b_(b) {}

  PwBuilder& b() { return b_; }
  const ir::Node& node() const { return node_; }
  DType out_dtype() const { return HeldDType(node_.outputs[0].dtype); }

  // Argument `index` (positional) or keyword `name`; nullptr if absent.
  const ir::Arg* arg(size_t index, const char* name = nullptr) const {
    if (index < node_.args.size()) return &node_.args[index];
    return name ? node_.kwarg(name) : nullptr;
  }

  // A tensor or number operand as a held value of `dtype`.
  int Operand(const ir::Arg& a, DType dtype) {
    if (a.is_ref()) return b_.Coerce(value_of_(a.ref()), dtype);
    if (auto* i = std::get_if<int64_t>(&a.v)) return b_.Constant(static_cast<double>(*i), dtype);
    if (auto* d = std::get_if<double>(&a.v)) return b_.Constant(*d, dtype);
    if (auto* bo = std::get_if<bool>(&a.v)) return b_.Constant(*bo ? 1 : 0, dtype);
    return b_.Constant(0, dtype);  // unreachable: IsPointwiseOp checked operand kinds
  }
  int In(size_t index, DType dtype, const char* name = nullptr) {
    return Operand(*arg(index, name), dtype);
  }
  // A tensor operand's held value in its own held dtype (numbers: as f64).
  int Raw(size_t index) {
    const ir::Arg& a = *arg(index);
    return a.is_ref() ? value_of_(a.ref()) : Operand(a, DType::kF64);
  }

  // The logical dtype of an operand for promotion; numbers count as their category's default.
  DType DTypeOf(const ir::Arg& a, const ir::Graph* graph_for_refs) const;

  // A double-valued scalar argument with a default.
  double Scalar(size_t index, const char* name, double def) const {
    const ir::Arg* a = arg(index, name);
    if (!a) return def;
    if (auto* i = std::get_if<int64_t>(&a->v)) return static_cast<double>(*i);
    if (auto* d = std::get_if<double>(&a->v)) return *d;
    if (auto* bo = std::get_if<bool>(&a->v)) return *bo ? 1 : 0;
    return def;
  }
  std::string String(size_t index, const char* name, const std::string& def) const {
    const ir::Arg* a = arg(index, name);
    if (!a) return def;
    if (auto* s = std::get_if<std::string>(&a->v)) return *s;
    return def;
  }

  int Const(double v, DType dtype) { return b_.Constant(v, dtype); }
  int Add(int x, int y) { return b_.Binary(PwOp::kAdd, x, y); }
  int Sub(int x, int y) { return b_.Binary(PwOp::kSub, x, y); }
  int Mul(int x, int y) { return b_.Binary(PwOp::kMul, x, y); }
  int Div(int x, int y) { return b_.Binary(PwOp::kDiv, x, y); }
  int Un(PwOp op, int x) { return b_.Unary(op, x); }

 private:
  const ir::Node& node_;
  const std::function<int(const ir::ValueRef&)>& value_of_;
  PwBuilder& b_;
};

using LowerFn = int (*)(Lowering&);

// x + alpha * y, the shape of add/sub.
int AddLike(Lowering& l, bool subtract) {
  DType dt = l.out_dtype();
  int x = l.In(0, dt);
  int y = l.In(1, dt);
  double alpha = l.Scalar(2, "alpha", 1.0);
  if (alpha != 1.0) y = l.Mul(y, l.Const(alpha, dt));
  return subtract ? l.Sub(x, y) : l.Add(x, y);
}

int UnaryOp(Lowering& l, PwOp op) { return l.Un(op, l.In(0, l.out_dtype())); }

// Comparisons compute in the promoted dtype of their operands and produce bool.
int CompareOp(Lowering& l, PwOp op, DType compute) {
  return l.b().Compare(op, l.In(0, compute), l.In(1, compute));
}

constexpr double kSqrt1_2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1/sqrt(2*pi)
constexpr double kGeluBeta = 0.79788456080286535588;    // sqrt(2/pi)
constexpr double kGeluKappa = 0.044715;

int GeluForward(Lowering& l, int x, bool tanh_approx) {
  DType dt = l.b().dtype(x);
  if (tanh_approx) {
    // 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
    int cube = l.Mul(l.Mul(x, x), x);
    int inner = l.Mul(l.Const(kGeluBeta, dt), l.Add(x, l.Mul(l.Const(kGeluKappa, dt), cube)));
    return l.Mul(l.Mul(l.Const(0.5, dt), x), l.Add(l.Const(1, dt), l.Un(PwOp::kTanh, inner)));
  }
  // 0.5 * x * (1 + erf(x / sqrt(2)))
  int cdf = l.Add(l.Const(1, dt), l.Un(PwOp::kErf, l.Mul(x, l.Const(kSqrt1_2, dt))));
  return l.Mul(l.Mul(l.Const(0.5, dt), x), cdf);
}

int GeluBackward(Lowering& l, int grad, int x, bool tanh_approx) {
  DType dt = l.b().dtype(x);
  if (tanh_approx) {
    int x_sq = l.Mul(x, x);
    int x_cube = l.Mul(x_sq, x);
    int inner = l.Mul(l.Const(kGeluBeta, dt), l.Add(x, l.Mul(l.Const(kGeluKappa, dt), x_cube)));
    int t = l.Un(PwOp::kTanh, inner);
    int left = l.Mul(l.Const(0.5, dt), x);
    int right = l.Add(l.Const(1, dt), t);
    int left_derivative = l.Mul(l.Const(0.5, dt), right);
    int tanh_derivative = l.Sub(l.Const(1, dt), l.Mul(t, t));
    int inner_derivative = l.Mul(l.Const(kGeluBeta, dt),
                                 l.Add(l.Const(1, dt), l.Mul(l.Const(3 * kGeluKappa, dt), x_sq)));
    int right_derivative = l.Mul(l.Mul(left, tanh_derivative), inner_derivative);
    return l.Mul(grad, l.Add(left_derivative, right_derivative));
  }
  int cdf = l.Mul(l.Const(0.5, dt),
                  l.Add(l.Const(1, dt), l.Un(PwOp::kErf, l.Mul(x, l.Const(kSqrt1_2, dt)))));
  int pdf =
      l.Mul(l.Const(kInvSqrt2Pi, dt), l.Un(PwOp::kExp, l.Mul(l.Const(-0.5, dt), l.Mul(x, x))));
  return l.Mul(grad, l.Add(cdf, l.Mul(x, pdf)));
}

// Clamp with optional bounds; NaN propagates like torch.clamp.
int Clamp(Lowering& l, int x, const ir::Arg* lo, const ir::Arg* hi) {
  DType dt = l.b().dtype(x);
  if (lo && !lo->is_none()) x = l.b().Binary(PwOp::kMaximum, x, l.Operand(*lo, dt));
  if (hi && !hi->is_none()) x = l.b().Binary(PwOp::kMinimum, x, l.Operand(*hi, dt));
  return x;
}

int PowScalarExponent(Lowering& l) {
  DType dt = l.out_dtype();
  int x = l.In(0, dt);
  double e = l.Scalar(1, "exponent", 1.0);
  if (e == 1.0) return x;
  if (e == 2.0) return l.Mul(x, x);
  if (e == 3.0) return l.Mul(l.Mul(x, x), x);
  if (e == 0.5 && ir::IsFloatingPoint(dt)) return l.Un(PwOp::kSqrt, x);
  if (e == -0.5 && ir::IsFloatingPoint(dt)) return l.Un(PwOp::kRsqrt, x);
  if (e == -1.0 && ir::IsFloatingPoint(dt)) return l.Un(PwOp::kReciprocal, x);
  return l.b().Binary(PwOp::kPow, x, l.Const(e, dt));
}

struct OpEntry {
  LowerFn lower;
  // Operand positions that must be tensors or numbers (others are options checked separately).
  int num_operands;
  bool float_only = false;  // output must be floating point
  bool comparison = false;  // computes in the promoted input dtype
  // Defined on bool outputs (torch: bool add is or, mul is and, maximum is or, minimum is and;
  // sub, neg, abs, ... raise on bool, so such nodes are never seen and stay extern if they are).
  bool bool_ok = false;
  bool bool_only = false;  // output must be bool (bitwise ops, which the IR has on bool only)
};

const absl::flat_hash_map<std::string, OpEntry>& OpTable() {
  static const auto* table = new absl::flat_hash_map<std::string, OpEntry>{
      {"aten::add.Tensor", {[](Lowering& l) { return AddLike(l, false); }, 2, false, false, true}},
      {"aten::add.Scalar", {[](Lowering& l) { return AddLike(l, false); }, 2, false, false, true}},
      {"aten::sub.Tensor", {[](Lowering& l) { return AddLike(l, true); }, 2}},
      {"aten::sub.Scalar", {[](Lowering& l) { return AddLike(l, true); }, 2}},
      {"aten::rsub.Scalar",
       {[](Lowering& l) {
          DType dt = l.out_dtype();
          int y = l.In(0, dt);
          double alpha = l.Scalar(2, "alpha", 1.0);
          if (alpha != 1.0) y = l.Mul(y, l.Const(alpha, dt));
          return l.Sub(l.In(1, dt), y);
        },
        2}},
      {"aten::mul.Tensor",
       {[](Lowering& l) { return l.Mul(l.In(0, l.out_dtype()), l.In(1, l.out_dtype())); }, 2, false,
        false, true}},
      {"aten::mul.Scalar",
       {[](Lowering& l) { return l.Mul(l.In(0, l.out_dtype()), l.In(1, l.out_dtype())); }, 2, false,
        false, true}},
      {"aten::div.Tensor",
       {[](Lowering& l) { return l.Div(l.In(0, l.out_dtype()), l.In(1, l.out_dtype())); }, 2,
        true}},
      {"aten::div.Scalar",
       {[](Lowering& l) { return l.Div(l.In(0, l.out_dtype()), l.In(1, l.out_dtype())); }, 2,
        true}},
      {"aten::neg.default", {[](Lowering& l) { return UnaryOp(l, PwOp::kNeg); }, 1}},
      {"aten::abs.default", {[](Lowering& l) { return UnaryOp(l, PwOp::kAbs); }, 1}},
      {"aten::exp.default", {[](Lowering& l) { return UnaryOp(l, PwOp::kExp); }, 1, true}},
      {"aten::log.default", {[](Lowering& l) { return UnaryOp(l, PwOp::kLog); }, 1, true}},
      {"aten::log1p.default", {[](Lowering& l) { return UnaryOp(l, PwOp::kLog1p); }, 1, true}},
      {"aten::expm1.default", {[](Lowering& l) { return UnaryOp(l, PwOp::kExpm1); }, 1, true}},
      {"aten::sqrt.default", {[](Lowering& l) { return UnaryOp(l, PwOp::kSqrt); }, 1, true}},
      {"aten::rsqrt.default", {[](Lowering& l) { return UnaryOp(l, PwOp::kRsqrt); }, 1, true}},
      {"aten::tanh.default", {[](Lowering& l) { return UnaryOp(l, PwOp::kTanh); }, 1, true}},
      {"aten::sigmoid.default", {[](Lowering& l) { return UnaryOp(l, PwOp::kSigmoid); }, 1, true}},
      {"aten::erf.default", {[](Lowering& l) { return UnaryOp(l, PwOp::kErf); }, 1, true}},
      {"aten::sin.default", {[](Lowering& l) { return UnaryOp(l, PwOp::kSin); }, 1, true}},
      {"aten::cos.default", {[](Lowering& l) { return UnaryOp(l, PwOp::kCos); }, 1, true}},
      {"aten::reciprocal.default",
       {[](Lowering& l) { return UnaryOp(l, PwOp::kReciprocal); }, 1, true}},
      {"aten::floor.default", {[](Lowering& l) { return UnaryOp(l, PwOp::kFloor); }, 1, true}},
      {"aten::ceil.default", {[](Lowering& l) { return UnaryOp(l, PwOp::kCeil); }, 1, true}},
      {"aten::round.default", {[](Lowering& l) { return UnaryOp(l, PwOp::kRound); }, 1, true}},
      {"aten::relu.default",
       {[](Lowering& l) {
          int x = l.In(0, l.out_dtype());
          return l.b().Binary(PwOp::kMaximum, x, l.Const(0, l.out_dtype()));
        },
        1}},
      {"aten::silu.default",
       {[](Lowering& l) {
          int x = l.In(0, l.out_dtype());
          return l.Mul(x, l.Un(PwOp::kSigmoid, x));
        },
        1, true}},
      {"aten::gelu.default",
       {[](Lowering& l) {
          return GeluForward(l, l.In(0, l.out_dtype()),
                             l.String(1, "approximate", "none") == "tanh");
        },
        1, true}},
      {"aten::pow.Tensor_Scalar", {PowScalarExponent, 1}},
      {"aten::pow.Tensor_Tensor",
       {[](Lowering& l) {
          return l.b().Binary(PwOp::kPow, l.In(0, l.out_dtype()), l.In(1, l.out_dtype()));
        },
        2, true}},
      {"aten::maximum.default",
       {[](Lowering& l) {
          return l.b().Binary(PwOp::kMaximum, l.In(0, l.out_dtype()), l.In(1, l.out_dtype()));
        },
        2, false, false, true}},
      {"aten::minimum.default",
       {[](Lowering& l) {
          return l.b().Binary(PwOp::kMinimum, l.In(0, l.out_dtype()), l.In(1, l.out_dtype()));
        },
        2, false, false, true}},
      {"aten::clamp.default",
       {[](Lowering& l) {
          return Clamp(l, l.In(0, l.out_dtype()), l.arg(1, "min"), l.arg(2, "max"));
        },
        1}},
      {"aten::clamp.Tensor",
       {[](Lowering& l) {
          return Clamp(l, l.In(0, l.out_dtype()), l.arg(1, "min"), l.arg(2, "max"));
        },
        1}},
      {"aten::clamp_min.default",
       {[](Lowering& l) { return Clamp(l, l.In(0, l.out_dtype()), l.arg(1, "min"), nullptr); }, 2}},
      {"aten::clamp_max.default",
       {[](Lowering& l) { return Clamp(l, l.In(0, l.out_dtype()), nullptr, l.arg(1, "max")); }, 2}},
      {"aten::where.self",
       {[](Lowering& l) {
          int cond = l.In(0, DType::kBool);
          return l.b().Where(cond, l.In(1, l.out_dtype()), l.In(2, l.out_dtype()));
        },
        3, false, false, true}},
      {"aten::eq.Tensor", {nullptr, 2, false, true, true}},
      {"aten::eq.Scalar", {nullptr, 2, false, true, true}},
      {"aten::ne.Tensor", {nullptr, 2, false, true, true}},
      {"aten::ne.Scalar", {nullptr, 2, false, true, true}},
      {"aten::lt.Tensor", {nullptr, 2, false, true, true}},
      {"aten::lt.Scalar", {nullptr, 2, false, true, true}},
      {"aten::le.Tensor", {nullptr, 2, false, true, true}},
      {"aten::le.Scalar", {nullptr, 2, false, true, true}},
      {"aten::gt.Tensor", {nullptr, 2, false, true, true}},
      {"aten::gt.Scalar", {nullptr, 2, false, true, true}},
      {"aten::ge.Tensor", {nullptr, 2, false, true, true}},
      {"aten::ge.Scalar", {nullptr, 2, false, true, true}},
      // masked_fill(self, mask, value) = where(mask, value, self).
      {"aten::masked_fill.Scalar",
       {[](Lowering& l) {
          int self = l.In(0, l.out_dtype());
          int mask = l.In(1, DType::kBool);
          return l.b().Where(mask, l.In(2, l.out_dtype()), self);
        },
        3, false, false, true}},
      {"aten::logical_not.default",
       {[](Lowering& l) { return l.Un(PwOp::kNot, l.In(0, DType::kBool)); }, 1, false, false,
        true}},
      {"aten::logical_and.default",
       {[](Lowering& l) {
          return l.b().Binary(PwOp::kAnd, l.In(0, DType::kBool), l.In(1, DType::kBool));
        },
        2, false, false, true}},
      {"aten::logical_or.default",
       {[](Lowering& l) {
          return l.b().Binary(PwOp::kOr, l.In(0, DType::kBool), l.In(1, DType::kBool));
        },
        2, false, false, true}},
      // Bitwise ops on bool are the logical ones (the kernel IR has no integer bit ops).
      {"aten::bitwise_and.Tensor",
       {[](Lowering& l) {
          return l.b().Binary(PwOp::kAnd, l.In(0, DType::kBool), l.In(1, DType::kBool));
        },
        2, false, false, true, true}},
      {"aten::bitwise_or.Tensor",
       {[](Lowering& l) {
          return l.b().Binary(PwOp::kOr, l.In(0, DType::kBool), l.In(1, DType::kBool));
        },
        2, false, false, true, true}},
      {"aten::bitwise_xor.Tensor",
       {[](Lowering& l) {
          return l.b().Compare(PwOp::kNe, l.In(0, DType::kBool), l.In(1, DType::kBool));
        },
        2, false, false, true, true}},
      {"aten::bitwise_not.default",
       {[](Lowering& l) { return l.Un(PwOp::kNot, l.In(0, DType::kBool)); }, 1, false, false, true,
        true}},
      // Copies and casts: the store converts to the output dtype and layout.
      {"aten::clone.default",
       {[](Lowering& l) { return l.In(0, l.out_dtype()); }, 1, false, false, true}},
      {"aten::_to_copy.default",
       {[](Lowering& l) { return l.In(0, l.out_dtype()); }, 1, false, false, true}},
      {"prims::convert_element_type.default",
       {[](Lowering& l) { return l.In(0, l.out_dtype()); }, 1, false, false, true}},
      // Classification and activations of vision models (ATen's formulas).
      {"aten::isnan.default",
       {[](Lowering& l) {
          int x = l.Raw(0);
          if (!ir::IsFloatingPoint(l.b().dtype(x))) return l.Const(0, DType::kBool);
          return l.b().Compare(PwOp::kNe, x, x);
        },
        1, false, false, true, true}},
      {"aten::isinf.default",
       {[](Lowering& l) {
          int x = l.Raw(0);
          DType dt = l.b().dtype(x);
          if (!ir::IsFloatingPoint(dt)) return l.Const(0, DType::kBool);
          int a = l.Un(PwOp::kAbs, x);
          return l.b().Compare(PwOp::kEq, a, l.Const(std::numeric_limits<double>::infinity(), dt));
        },
        1, false, false, true, true}},
      {"aten::sign.default",
       {[](Lowering& l) {
          DType dt = l.out_dtype();
          int x = l.In(0, dt);
          int zero = l.Const(0, dt);
          int pos = l.b().Compare(PwOp::kGt, x, zero);
          int neg = l.b().Compare(PwOp::kLt, x, zero);
          int minus = l.b().Where(neg, l.Const(-1, dt), zero);
          return l.b().Where(pos, l.Const(1, dt), minus);
        },
        1}},
      {"aten::logical_xor.default",
       {[](Lowering& l) {
          int a = l.In(0, DType::kBool);
          return l.b().Compare(PwOp::kNe, a, l.In(1, DType::kBool));
        },
        2, false, false, true, true}},
      {"aten::leaky_relu.default",
       {[](Lowering& l) {
          DType dt = l.out_dtype();
          int x = l.In(0, dt);
          int pos = l.b().Compare(PwOp::kGt, x, l.Const(0, dt));
          int scaled = l.Mul(x, l.Const(l.Scalar(1, "negative_slope", 0.01), dt));
          return l.b().Where(pos, x, scaled);
        },
        1, true}},
      {"aten::leaky_relu_backward.default",
       {[](Lowering& l) {
          DType dt = l.out_dtype();
          int grad = l.In(0, dt);
          int x = l.In(1, dt);
          int pos = l.b().Compare(PwOp::kGt, x, l.Const(0, dt));
          int scaled = l.Mul(grad, l.Const(l.Scalar(2, "negative_slope", 0.01), dt));
          return l.b().Where(pos, grad, scaled);
        },
        2, true}},
      {"aten::hardtanh.default",
       {[](Lowering& l) {
          DType dt = l.out_dtype();
          int x = l.In(0, dt);
          int lo = l.b().Binary(PwOp::kMaximum, x, l.Const(l.Scalar(1, "min_val", -1), dt));
          return l.b().Binary(PwOp::kMinimum, lo, l.Const(l.Scalar(2, "max_val", 1), dt));
        },
        1}},
      {"aten::hardtanh_backward.default",
       {[](Lowering& l) {
          DType dt = l.out_dtype();
          int grad = l.In(0, dt);
          int x = l.In(1, dt);
          int le = l.b().Compare(PwOp::kLe, x, l.Const(l.Scalar(2, "min_val", -1), dt));
          int ge = l.b().Compare(PwOp::kGe, x, l.Const(l.Scalar(3, "max_val", 1), dt));
          int outside = l.b().Binary(PwOp::kOr, le, ge);
          return l.b().Where(outside, l.Const(0, dt), grad);
        },
        2, true}},
      {"aten::hardsigmoid.default",
       {[](Lowering& l) {
          DType dt = l.out_dtype();
          int x = l.In(0, dt);
          int shifted = l.Add(x, l.Const(3, dt));
          int relu6 =
              l.b().Binary(PwOp::kMinimum, l.b().Binary(PwOp::kMaximum, shifted, l.Const(0, dt)),
                           l.Const(6, dt));
          return l.Div(relu6, l.Const(6, dt));
        },
        1, true}},
      {"aten::hardswish.default",
       {[](Lowering& l) {
          DType dt = l.out_dtype();
          int x = l.In(0, dt);
          int shifted = l.Add(x, l.Const(3, dt));
          int relu6 =
              l.b().Binary(PwOp::kMinimum, l.b().Binary(PwOp::kMaximum, shifted, l.Const(0, dt)),
                           l.Const(6, dt));
          return l.Div(l.Mul(x, relu6), l.Const(6, dt));
        },
        1, true}},
      // addcmul/addcdiv(self, t1, t2, value): self + value * t1 * t2 (or t1 / t2).
      {"aten::addcmul.default",
       {[](Lowering& l) {
          DType dt = l.out_dtype();
          int self = l.In(0, dt);
          int prod = l.Mul(l.In(1, dt), l.In(2, dt));
          return l.Add(self, l.Mul(prod, l.Const(l.Scalar(3, "value", 1), dt)));
        },
        3}},
      {"aten::addcdiv.default",
       {[](Lowering& l) {
          DType dt = l.out_dtype();
          int self = l.In(0, dt);
          int quot = l.Div(l.In(1, dt), l.In(2, dt));
          return l.Add(self, l.Mul(quot, l.Const(l.Scalar(3, "value", 1), dt)));
        },
        3, true}},
      // lerp(self, end, weight) = self + weight * (end - self) (ATen's lerp uses this form for
      // |weight| < 0.5 and end - (end - self) * (1 - weight) otherwise).
      {"aten::lerp.Scalar",
       {[](Lowering& l) {
          DType dt = l.out_dtype();
          int self = l.In(0, dt);
          int end = l.In(1, dt);
          double w = l.Scalar(2, "weight", 0);
          int diff = l.Sub(end, self);
          if (std::abs(w) < 0.5) return l.Add(self, l.Mul(diff, l.Const(w, dt)));
          return l.Sub(end, l.Mul(diff, l.Const(1 - w, dt)));
        },
        2, true}},
      // Fills: a constant at every point (fused, a consumer of the same shape reads no memory).
      // *_like and fill take `self` for its shape only (its load is dead code in the kernel).
      {"aten::full.default",
       {[](Lowering& l) { return l.Const(l.Scalar(1, "fill_value", 0), l.out_dtype()); }, 0, false,
        false, true}},
      {"aten::scalar_tensor.default",
       {[](Lowering& l) { return l.Const(l.Scalar(0, "s", 0), l.out_dtype()); }, 0, false, false,
        true}},
      {"aten::zeros.default",
       {[](Lowering& l) { return l.Const(0, l.out_dtype()); }, 0, false, false, true}},
      {"aten::ones.default",
       {[](Lowering& l) { return l.Const(1, l.out_dtype()); }, 0, false, false, true}},
      {"aten::zeros_like.default",
       {[](Lowering& l) { return l.Const(0, l.out_dtype()); }, 1, false, false, true}},
      {"aten::ones_like.default",
       {[](Lowering& l) { return l.Const(1, l.out_dtype()); }, 1, false, false, true}},
      {"aten::full_like.default",
       {[](Lowering& l) { return l.Const(l.Scalar(1, "fill_value", 0), l.out_dtype()); }, 1, false,
        false, true}},
      {"aten::fill.Scalar",
       {[](Lowering& l) { return l.Const(l.Scalar(1, "value", 0), l.out_dtype()); }, 1, false,
        false, true}},
      // tccd::philox_uniform(seed, offset): the uniform draw of dropout_to_philox.h.
      {"tccd::philox_uniform.default",
       {[](Lowering& l) {
          int seed = l.In(0, DType::kI64);
          int offset = l.Const(l.Scalar(1, nullptr, 0), DType::kI64);
          PwInstr r;
          r.op = PwOp::kRandom;
          r.dtype = DType::kF32;
          r.args = {seed, offset};
          return l.b().Coerce(l.b().Emit(std::move(r)), l.out_dtype());
        },
        1}},
      // copy(self, src): src broadcast into self's shape and dtype (the functional copy_).
      {"aten::copy.default",
       {[](Lowering& l) { return l.In(1, l.out_dtype()); }, 2, false, false, true}},
      // native_dropout_backward(grad, mask, scale) = grad * mask * scale (Dropout.cpp).
      {"aten::native_dropout_backward.default",
       {[](Lowering& l) {
          DType dt = l.out_dtype();
          int grad = l.In(0, dt);
          int mask = l.In(1, dt);
          int masked = l.Mul(grad, mask);
          return l.Mul(masked, l.Const(l.Scalar(2, "scale", 1.0), dt));
        },
        2, true}},
      // Backward formulas (aten/src/ATen/native/cpu/BinaryOpsKernel.cpp, Activation.cpp).
      {"aten::threshold_backward.default",
       {[](Lowering& l) {
          DType dt = l.out_dtype();
          int grad = l.In(0, dt);
          int x = l.In(1, dt);
          int below = l.b().Compare(PwOp::kLe, x, l.Const(l.Scalar(2, "threshold", 0), dt));
          return l.b().Where(below, l.Const(0, dt), grad);
        },
        2}},
      {"aten::sigmoid_backward.default",
       {[](Lowering& l) {
          DType dt = l.out_dtype();
          int grad = l.In(0, dt);
          int y = l.In(1, dt);
          return l.Mul(grad, l.Mul(y, l.Sub(l.Const(1, dt), y)));
        },
        2, true}},
      {"aten::tanh_backward.default",
       {[](Lowering& l) {
          DType dt = l.out_dtype();
          int grad = l.In(0, dt);
          int y = l.In(1, dt);
          return l.Mul(grad, l.Sub(l.Const(1, dt), l.Mul(y, y)));
        },
        2, true}},
      {"aten::gelu_backward.default",
       {[](Lowering& l) {
          DType dt = l.out_dtype();
          return GeluBackward(l, l.In(0, dt), l.In(1, dt),
                              l.String(2, "approximate", "none") == "tanh");
        },
        2, true}},
      {"aten::silu_backward.default",
       {[](Lowering& l) {
          DType dt = l.out_dtype();
          int grad = l.In(0, dt);
          int x = l.In(1, dt);
          int s = l.Un(PwOp::kSigmoid, x);
          int one = l.Const(1, dt);
          return l.Mul(grad, l.Mul(s, l.Add(one, l.Mul(x, l.Sub(one, s)))));
        },
        2, true}},
  };
  return *table;
}

PwOp ComparisonOp(const std::string& target) {
  absl::string_view name = absl::string_view(target).substr(6, 2);  // after "aten::"
  if (name == "eq") return PwOp::kEq;
  if (name == "ne") return PwOp::kNe;
  if (name == "lt") return PwOp::kLt;
  if (name == "le") return PwOp::kLe;
  if (name == "gt") return PwOp::kGt;
  return PwOp::kGe;
}

bool IsNumber(const ir::Arg& a) {
  return std::holds_alternative<int64_t>(a.v) || std::holds_alternative<double>(a.v) ||
         std::holds_alternative<bool>(a.v);
}

// Keyword arguments that would change semantics in ways the table does not model.
bool HasUnsupportedOptions(const ir::Graph& graph, const ir::Node& node) {
  for (const ir::NamedArg& kw : node.kwargs) {
    const std::string& n = kw.name;
    if (n == "alpha" || n == "min" || n == "max" || n == "exponent" || n == "threshold" ||
        n == "approximate" || n == "dtype" || n == "layout" || n == "pin_memory" || n == "scale" ||
        n == "fill_value" || n == "value" || n == "s" || n == "negative_slope" || n == "min_val" ||
        n == "max_val" || n == "weight" || n == "self_is_result")
      continue;
    if (n == "memory_format") continue;  // the output meta already has the resulting strides
    if (n == "device") {
      // A device change is a transfer, not a pointwise op. Factories (no tensor argument) name
      // their output's device.
      auto* d = std::get_if<ir::DeviceType>(&kw.value.v);
      const bool factory = node.args.empty() || !node.args[0].is_ref();
      if (d && factory && node.outputs.size() == 1 && node.outputs[0].device == *d) continue;
      if (d && !factory && graph.type_of(node.args[0].ref()).device == *d) continue;
      return true;
    }
    if (n == "non_blocking" || n == "copy") continue;
    return true;  // rounding_mode and anything unknown
  }
  return false;
}

}  // namespace

bool IsDenseNonOverlapping(const ir::TensorType& type) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size)
  for (size_t d = 0; d < type.sizes.size(); ++d)
    if (type.sizes[d] != 1) dims.push_back({type.strides[d], type.sizes[d]});
  std::sort(dims.begin(), dims.end());
  int64_t expected = 1;
  for (auto [stride, size] : dims) {
    if (size == 0) return true;
    if (stride != expected) return false;
    expected *= size;
  }
  return true;
}

absl::Status CheckDeclaredOutputCount(const ir::Node& node, int node_id, size_t produced) {
  if (node.outputs.size() == produced) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("node %", node_id, " (", node.target,
                                                 ") declares ", node.outputs.size(),
                                                 " outputs; the op returns ", produced));
}

absl::Status CheckDeclaredDType(const ir::Node& node, int node_id, DType produced_held) {
  if (!node.outputs.empty() && HeldDType(node.outputs[0].dtype) == produced_held)
    return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("node %", node_id, " (", node.target, ") declares a ",
                   node.outputs.empty() ? "missing" : ir::DTypeName(node.outputs[0].dtype),
                   " result; the op computes ", ir::DTypeName(produced_held), " from its inputs"));
}

int PwBuilder::Emit(PwInstr instr) {
  body_->push_back(std::move(instr));
  return static_cast<int>(body_->size()) - 1;
}

namespace {

// double -> int64 without undefined behaviour: truncates like a C++ cast where that is defined,
// saturates beyond int64's range, NaN is 0. (A float scalar past int64 reaches here only when a
// graph declares an integer result of it, which ATen would not; found by the request fuzzer.)
int64_t SaturatingToInt64(double value) {
  if (std::isnan(value)) return 0;
  if (value >= 9223372036854775807.0) return std::numeric_limits<int64_t>::max();
  if (value <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(value);
}

}  // namespace

int PwBuilder::Constant(double value, DType dtype) {
  PwInstr i;
  i.op = PwOp::kConstant;
  i.dtype = dtype;
  if (ir::IsFloatingPoint(dtype)) {
    i.fvalue = value;
  } else {
    i.ivalue = dtype == DType::kBool ? (value != 0) : SaturatingToInt64(value);
  }
  return Emit(std::move(i));
}

int PwBuilder::Coerce(int value, DType dtype) {
  if (this->dtype(value) == dtype) return value;
  PwInstr i;
  i.op = PwOp::kCast;
  i.dtype = dtype;
  i.args = {value};
  return Emit(std::move(i));
}

int PwBuilder::Unary(PwOp op, int a) {
  PwInstr i;
  i.op = op;
  i.dtype = dtype(a);
  i.args = {a};
  return Emit(std::move(i));
}

int PwBuilder::Binary(PwOp op, int a, int b) {
  PwInstr i;
  // torch on bool: add and maximum are or, mul and minimum are and (ATen computes them on bool).
  if (dtype(a) == DType::kBool) {
    if (op == PwOp::kAdd || op == PwOp::kMaximum) op = PwOp::kOr;
    if (op == PwOp::kMul || op == PwOp::kMinimum) op = PwOp::kAnd;
  }
  i.op = op;
  i.dtype = dtype(a);
  i.args = {a, Coerce(b, dtype(a))};
  return Emit(std::move(i));
}

int PwBuilder::Compare(PwOp op, int a, int b) {
  PwInstr i;
  i.op = op;
  i.dtype = DType::kBool;
  i.args = {a, Coerce(b, dtype(a))};
  return Emit(std::move(i));
}

int PwBuilder::Where(int cond, int a, int b) {
  PwInstr i;
  i.op = PwOp::kWhere;
  i.dtype = dtype(a);
  i.args = {Coerce(cond, DType::kBool), a, Coerce(b, dtype(a))};
  return Emit(std::move(i));
}

bool IsPointwiseOp(const ir::Graph& graph, const ir::Node& node) {
  auto it = OpTable().find(node.target);
  if (it == OpTable().end()) return false;
  const OpEntry& entry = it->second;
  if (node.outputs.size() != 1 || ir::TouchesExternOnlyDType(graph, node)) return false;
  const ir::TensorType& out = node.outputs[0];
  if (entry.float_only && !ir::IsFloatingPoint(out.dtype)) return false;
  if (out.dtype == DType::kBool ? !entry.bool_ok : entry.bool_only) return false;
  if (!IsDenseNonOverlapping(out)) return false;
  if (HasUnsupportedOptions(graph, node)) return false;
  // Every operand is a tensor on the output's device broadcastable to the output shape, or a
  // number.
  for (int i = 0; i < entry.num_operands; ++i) {
    if (static_cast<size_t>(i) >= node.args.size()) return false;
    const ir::Arg& a = node.args[i];
    if (IsNumber(a)) continue;
    if (!a.is_ref()) return false;
    const ir::TensorType& t = graph.type_of(a.ref());
    if (t.device != out.device || t.rank() > out.rank()) return false;
    for (int64_t d = 0; d < t.rank(); ++d) {
      int64_t size = t.sizes[t.rank() - 1 - d];
      if (size != 1 && size != out.sizes[out.rank() - 1 - d]) return false;
    }
  }
  // Tensor-valued clamp bounds and where's operands are handled by the same check above only
  // for positional operands; clamp.Tensor's bounds must be refs of the right shape too.
  if (node.target == "aten::clamp.Tensor") return false;
  // Positional args beyond the operands must be options (numbers, strings, None, dtypes).
  for (size_t i = entry.num_operands; i < node.args.size(); ++i)
    if (node.args[i].is_ref()) return false;
  for (const ir::NamedArg& kw : node.kwargs)
    if (kw.value.is_ref()) return false;
  return true;
}

bool PointwiseValueIgnoresOperands(const ir::Node& node) {
  static const auto* kConstants = new absl::flat_hash_set<std::string>{
      "aten::full.default",       "aten::scalar_tensor.default",
      "aten::zeros.default",      "aten::ones.default",
      "aten::zeros_like.default", "aten::ones_like.default",
      "aten::full_like.default",  "aten::fill.Scalar"};
  return kConstants->contains(node.target);
}

int PointwiseOperandCount(const ir::Node& node) {
  auto it = OpTable().find(node.target);
  return it == OpTable().end() ? 0 : it->second.num_operands;
}

std::vector<std::string> PointwiseOpTargets() {
  std::vector<std::string> targets;
  for (const auto& [target, entry] : OpTable()) targets.push_back(target);
  return targets;
}

absl::StatusOr<int> LowerPointwiseOp(const ir::Node& node,
                                     const std::function<int(const ir::ValueRef&)>& value_of,
                                     PwBuilder& builder) {
  auto it = OpTable().find(node.target);
  RET_CHECK(it != OpTable().end());
  Lowering l(node, value_of, builder);
  if (it->second.comparison) {
    // Compute in the promoted dtype of the operands (numbers do not widen a tensor's category
    // beyond the default float, as in torch.result_type).
    auto dtype_of = [&](const ir::Arg& a, bool* is_tensor) -> DType {
      *is_tensor = a.is_ref();
      if (a.is_ref()) return builder.dtype(value_of(a.ref()));
      if (std::holds_alternative<double>(a.v)) return DType::kF32;
      if (std::holds_alternative<bool>(a.v)) return DType::kBool;
      return DType::kI64;
    };
    bool t0, t1;
    DType d0 = dtype_of(node.args[0], &t0);
    DType d1 = dtype_of(node.args[1], &t1);
    DType compute;
    if (t0 && !t1) {
      compute = (ir::IsFloatingPoint(d1) && !ir::IsFloatingPoint(d0)) ? DType::kF32 : d0;
    } else if (t1 && !t0) {
      compute = (ir::IsFloatingPoint(d0) && !ir::IsFloatingPoint(d1)) ? DType::kF32 : d1;
    } else {
      compute = PromoteTypes(d0, d1);
    }
    return CompareOp(l, ComparisonOp(node.target), HeldDType(compute));
  }
  return it->second.lower(l);
}

}  // namespace tccd::codegen
