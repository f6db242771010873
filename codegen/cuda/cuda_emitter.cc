// EmitCudaSource: PointwiseKernels -> one self-contained CUDA C translation unit.
//
// Layout of the source:
//   namespace tccd_rt { Vec<T, N>, f16/bf16 conversions, NaN-propagating max/min }
//   per kernel k:
//     // the kernel IR, as a comment
//     namespace tccd_kernel_<k> { constants, ContigParams, StridedParams, Point() }
//     extern "C" __global__ k_contig(...), k_strided(...)
// Point() is the kernel body for one element: it takes every input in its memory representation
// and writes every output through a reference; both entry points inline it. Per-kernel names
// live in the kernel's namespace, so only the extern "C" entry points share the global scope
// (distinct kernel names give distinct entry names: the suffixes differ).
//
// Value representation in Point(): f32 float, f64 double, f16/bf16 unsigned short bits, i8 signed
// char, i16 short, i32 int, i64 long long, u8 unsigned char, bool `bool` (unsigned char 0/1 in
// memory). Value %i of the kernel IR is the local `v<i>`.
#include "codegen/cuda/cuda_emitter.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <system_error>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "codegen/cuda/cuda_backend.h"
#include "codegen/cuda/cuda_depthwise_emitter.h"
#include "codegen/cuda/cuda_index_emitter.h"
#include "codegen/cuda/cuda_tile_emitter.h"
#include "codegen/cuda/cuda_row_emitter.h"
#include "base/status_macros.h"

namespace tccd::codegen {
namespace {

using ir::DType;

// TCCD_SOFT_CASTS=1 (daemon environment; keyed in pipeline.cc): f16/bf16 conversions with c10's
// integer sequences instead of the GPU's cvt (the prelude's f32_to_bf16 says why).
bool SoftCasts() {
  static const bool soft = [] {
    const char* v = std::getenv("TCCD_SOFT_CASTS");
    return v != nullptr && std::string(v) == "1";
  }();
  return soft;
}

// TCCD_LIBDEVICE_ERF=1 (keyed in pipeline.cc): f32 erf as libdevice's erff instead of the
// prelude's erf_f32 (which says why).
bool LibdeviceErf() {
  static const bool libdevice = [] {
    const char* v = std::getenv("TCCD_LIBDEVICE_ERF");
    return v != nullptr && std::string(v) == "1";
  }();
  return libdevice;
}

int Bytes(DType d) { return ir::DTypeBytes(d); }

// The C type a value of `d` has in memory.
const char* MemType(DType d) {
  switch (d) {
    case DType::kF32:
      return "float";
    case DType::kF64:
      return "double";
    case DType::kF16:
    case DType::kBF16:
      return "unsigned short";
    case DType::kI8:
      return "signed char";
    case DType::kI16:
      return "short";
    case DType::kI32:
      return "int";
    case DType::kI64:
      return "long long";
    case DType::kU8:
    case DType::kBool:
      return "unsigned char";
  }
  return "?";
}

// The C type a value of `d` has in registers.
const char* RegType(DType d) { return d == DType::kBool ? "bool" : MemType(d); }

// For i32/i64 arithmetic that must wrap: C's signed overflow is undefined, so such ops go through
// the unsigned type of the same width. Narrower integers are promoted to int, where +, -, * and
// negation cannot overflow, and wrap when converted back.
const char* WrapType(DType d) {
  switch (d) {
    case DType::kI32:
      return "unsigned int";
    case DType::kI64:
      return "unsigned long long";
    default:
      return nullptr;
  }
}

std::string V(int i) { return absl::StrCat("v", i); }

// Shortest text that reads back as the same value.
template <typename T>
std::string ShortestText(T value) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  if (ec != std::errc()) return "0";
  std::string s(buf, end);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";  // keep it a floating literal
  return s;
}

// A floating constant of dtype f32 or f64. f32 constants are the double rounded to float, as on
// the CPU (ConstantFP::get); non-finite values are spelled as bit patterns.
std::string FloatLiteral(DType d, double value) {
  if (d == DType::kF32) {
    const float f = static_cast<float>(value);
    if (std::isfinite(f)) return ShortestText(f) + "f";
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    return absl::StrCat("__uint_as_float(0x", absl::Hex(bits, absl::kZeroPad8), "u)");
  }
  if (std::isfinite(value)) return ShortestText(value);
  uint64_t bits;
  std::memcpy(&bits, &value, 8);
  return absl::StrCat("__longlong_as_double(0x", absl::Hex(bits, absl::kZeroPad16), "ll)");
}

// An integral constant wrapped to the dtype's width (a Python -1 added to a u8 tensor is 255).
std::string IntLiteral(DType d, int64_t value) {
  switch (d) {
    case DType::kBool:
      return value != 0 ? "true" : "false";
    case DType::kI8:
      return absl::StrCat("(signed char)", static_cast<int8_t>(value));
    case DType::kI16:
      return absl::StrCat("(short)", static_cast<int16_t>(value));
    case DType::kU8:
      return absl::StrCat("(unsigned char)", static_cast<uint8_t>(value));
    case DType::kI32: {
      const int32_t v = static_cast<int32_t>(value);
      if (v == std::numeric_limits<int32_t>::min()) return "(-2147483647 - 1)";
      return absl::StrCat(v);
    }
    case DType::kI64:
      if (value == std::numeric_limits<int64_t>::min()) return "(-9223372036854775807ll - 1ll)";
      return absl::StrCat(value, "ll");
    default:
      return "0";
  }
}

// The name of a libdevice function for dtype f32 ("expf") or f64 ("exp").
std::string MathFn(const char* f64_name, DType d) {
  return d == DType::kF32 ? absl::StrCat(f64_name, "f") : std::string(f64_name);
}

std::string One(DType d) { return d == DType::kF32 ? "1.0f" : "1.0"; }

// `value` (an expression of dtype `from`) converted to `to`, like the CPU backend's Cast.
std::string Cast(const std::string& value, DType from, DType to) {
  if (from == to) return value;
  if (IsHalf(from)) {
    const std::string f = absl::StrCat(
        from == DType::kBF16 ? "tccd_rt::bf16_to_f32(" : "tccd_rt::f16_to_f32(", value, ")");
    return Cast(f, DType::kF32, to);
  }
  if (IsHalf(to)) {
    return absl::StrCat(to == DType::kBF16 ? "tccd_rt::f32_to_bf16(" : "tccd_rt::f32_to_f16(",
                        Cast(value, from, DType::kF32), ")");
  }
  // bool(x) is x != 0; NaN is true.
  if (to == DType::kBool) return absl::StrCat("(", value, " != 0)");
  // Float to a narrow integer truncates to i32 first and wraps, as on the CPU; a direct C cast
  // to char/short would saturate on the GPU.
  if (IsFloat(from) && !IsFloat(to) && Bytes(to) < 4) {
    return absl::StrCat("(", MemType(to), ")(int)", value);
  }
  // Everything else is C's conversion: float<->float rounds to nearest, float->int truncates
  // toward zero, integers extend by the source's signedness (bool and u8 are unsigned).
  return absl::StrCat("(", RegType(to), ")", value);
}

std::string Binary(PwOp op, DType d, const std::string& a, const std::string& b) {
  if (IsFloat(d)) {
    switch (op) {
      case PwOp::kAdd:
        return absl::StrCat(a, " + ", b);
      case PwOp::kSub:
        return absl::StrCat(a, " - ", b);
      case PwOp::kMul:
        return absl::StrCat(a, " * ", b);
      case PwOp::kDiv:
        return absl::StrCat(a, " / ", b);
      case PwOp::kPow:
        return absl::StrCat(MathFn("pow", d), "(", a, ", ", b, ")");
      case PwOp::kMaximum:
        return absl::StrCat("tccd_rt::maximum(", a, ", ", b, ")");
      case PwOp::kMinimum:
        return absl::StrCat("tccd_rt::minimum(", a, ", ", b, ")");
      default:
        return "";
    }
  }
  const char* c_op = nullptr;
  switch (op) {
    case PwOp::kAdd:
      c_op = " + ";
      break;
    case PwOp::kSub:
      c_op = " - ";
      break;
    case PwOp::kMul:
      c_op = " * ";
      break;
    // Comparisons in the C type: signed or unsigned as the dtype is.
    case PwOp::kMaximum:
      return absl::StrCat(a, " > ", b, " ? ", a, " : ", b);
    case PwOp::kMinimum:
      return absl::StrCat(a, " < ", b, " ? ", a, " : ", b);
    default:
      return "";
  }
  // Integers wrap (like torch): see WrapType.
  const char* u = WrapType(d);
  if (u == nullptr) u = "int";
  return absl::StrCat("(", MemType(d), ")((", u, ")", a, c_op, "(", u, ")", b, ")");
}

std::string Unary(PwOp op, DType d, const std::string& x) {
  const bool fp = IsFloat(d);
  auto call = [&](const char* f64_name) { return absl::StrCat(MathFn(f64_name, d), "(", x, ")"); };
  switch (op) {
    case PwOp::kNeg: {
      if (fp) return absl::StrCat("-", x);
      const char* u = WrapType(d);
      return absl::StrCat("(", MemType(d), ")(", u ? absl::StrCat("0 - (", u, ")") : "-", x, ")");
    }
    case PwOp::kAbs: {
      if (fp) return call("fabs");
      if (d == DType::kU8) return x;
      // abs(INT_MIN) wraps to INT_MIN, like torch.
      const char* u = WrapType(d);
      const std::string neg =
          absl::StrCat("(", MemType(d), ")(", u ? absl::StrCat("0 - (", u, ")") : "-", x, ")");
      return absl::StrCat(x, " < 0 ? ", neg, " : ", x);
    }
    case PwOp::kExp:
      return call("exp");
    case PwOp::kLog:
      return call("log");
    case PwOp::kLog1p:
      return call("log1p");
    case PwOp::kExpm1:
      return call("expm1");
    case PwOp::kSqrt:
      return call("sqrt");
    case PwOp::kTanh:
      return call("tanh");
    case PwOp::kErf:
      if (d == DType::kF32 && !LibdeviceErf()) return absl::StrCat("tccd_rt::erf_f32(", x, ")");
      return call("erf");
    case PwOp::kSin:
      return call("sin");
    case PwOp::kCos:
      return call("cos");
    // 1/sqrt(x) with IEEE division and sqrt, as on the CPU (not the approximate rsqrtf).
    case PwOp::kRsqrt:
      return absl::StrCat(One(d), " / ", call("sqrt"));
    case PwOp::kReciprocal:
      return absl::StrCat(One(d), " / ", x);
    case PwOp::kSigmoid:
      return absl::StrCat(One(d), " / (", One(d), " + ", MathFn("exp", d), "(-", x, "))");
    // Rounding is the identity on integers; round is half to even.
    case PwOp::kFloor:
      return fp ? call("floor") : x;
    case PwOp::kCeil:
      return fp ? call("ceil") : x;
    case PwOp::kRound:
      return fp ? call("rint") : x;
    default:
      return "";
  }
}

// Comparisons in C match the kernel IR: ordered (false on NaN) except !=, which is true on NaN;
// integers compare with their type's signedness, bools as 0/1.
std::string Compare(PwOp op, const std::string& a, const std::string& b) {
  const char* c_op = nullptr;
  switch (op) {
    case PwOp::kEq:
      c_op = " == ";
      break;
    case PwOp::kNe:
      c_op = " != ";
      break;
    case PwOp::kLt:
      c_op = " < ";
      break;
    case PwOp::kLe:
      c_op = " <= ";
      break;
    case PwOp::kGt:
      c_op = " > ";
      break;
    case PwOp::kGe:
      c_op = " >= ";
      break;
    default:
      return "";
  }
  return absl::StrCat(a, c_op, b);
}

// Text for comments: printable ASCII only, no backslash (which would splice the next line into
// a // comment).
std::string CommentSafe(const std::string& text) {
  std::string out = text;
  for (char& c : out) {
    if (c != '\n' && (c < 0x20 || c > 0x7e || c == '\\')) c = '?';
  }
  return out;
}

constexpr char kPrelude[] =
    R"(// Generated by tccd's CUDA backend (codegen/cuda). Self-contained: compile with NVRTC, no
// include path needed. Entry points: extern "C" <kernel>_contig and <kernel>_strided.

namespace tccd_rt {

// Elements one thread loads or stores with 128-bit accesses (several when wider than 16 bytes).
template <typename T, int N>
struct alignas(sizeof(T) * N < 16 ? sizeof(T) * N : 16) Vec {
  T v[N];
};

// f16/bf16 <-> f32: round to nearest even, as c10 and the CPU backend. The narrowing ones are
// one cvt where the GPU has it (sm_80 for bf16; ptxas pairs two into one F2FP.PACK_AB), as
// eager's __float2bfloat16 / __float2half: c10's integer sequence cost 5-6 ALU instructions per
// element, a sixth of a bf16 GELU's (ConvNeXt's GELU-backward column kernels were ALU-bound).
// Same bits for every number; a NaN becomes the canonical 0x7fff / 0x7fff (eager CUDA's) instead
// of c10's 0x7fc0 / 0x7e00. TCCD_SOFT_CASTS (pipeline.cc) defines TCCD_SOFT_CASTS: c10's
// sequences everywhere, to measure one against the other. The _rn intrinsics keep c10's
// scaling steps from being contracted into FMAs.
__device__ __forceinline__ float bf16_to_f32(unsigned short h) {
  return __uint_as_float(static_cast<unsigned int>(h) << 16);
}

__device__ __forceinline__ unsigned short f32_to_bf16(float f) {
#if __CUDA_ARCH__ >= 800 && !defined(TCCD_SOFT_CASTS)
  unsigned short h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#else
  const unsigned int w = __float_as_uint(f);
  const unsigned int rounded = (w + 0x7fffu + ((w >> 16) & 1u)) >> 16;
  return static_cast<unsigned short>(f != f ? 0x7fc0u : rounded);
#endif
}

__device__ __forceinline__ float f16_to_f32(unsigned short h) {
#if !defined(TCCD_SOFT_CASTS)
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
#else
  const unsigned int w = static_cast<unsigned int>(h) << 16;
  const unsigned int sign = w & 0x80000000u;
  const unsigned int two_w = w + w;
  const float normalized = __fmul_rn(__uint_as_float((two_w >> 4) + (0xE0u << 23)), 0x1.0p-112f);
  const float denormalized = __fsub_rn(__uint_as_float((two_w >> 17) | (126u << 23)), 0.5f);
  const unsigned int magnitude =
      two_w < (1u << 27) ? __float_as_uint(denormalized) : __float_as_uint(normalized);
  return __uint_as_float(sign | magnitude);
#endif
}

__device__ __forceinline__ unsigned short f32_to_f16(float f) {
#if !defined(TCCD_SOFT_CASTS)
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#else
  float base = __fmul_rn(__fmul_rn(fabsf(f), 0x1.0p+112f), 0x1.0p-110f);
  const unsigned int w = __float_as_uint(f);
  const unsigned int shl1_w = w + w;
  const unsigned int sign = w & 0x80000000u;
  unsigned int bias = shl1_w & 0xFF000000u;
  if (bias < 0x71000000u) bias = 0x71000000u;
  base = __fadd_rn(__uint_as_float((bias >> 1) + 0x07800000u), base);
  const unsigned int bits = __float_as_uint(base);
  const unsigned int nonsign = ((bits >> 13) & 0x00007C00u) + (bits & 0x00000FFFu);
  return static_cast<unsigned short>((sign >> 16) | (shl1_w > 0xFF000000u ? 0x7E00u : nonsign));
#endif
}

// erf for f32: CUDA 13's erff (libdevice) step for step (its coefficients, operation order and
// ex2; its maximum error, 2 ulp), but with both polynomials evaluated and one select: erff
// selects each coefficient between its two branches (7 FSEL, 9 per erf on the ALU pipe, which
// issues at half the FMA pipe's rate), and bf16 GELU kernels were ALU-bound (ConvNeXt's
// GELU-backward column kernel: 288 of its 1928 sm_90 instructions per 32 elements were those
// FSELs; this form has none, 1840 in all). TCCD_LIBDEVICE_ERF=1 (pipeline.cc) emits erff.
__device__ __forceinline__ float erf_f32(float z) {
  const float t = fabsf(z);
  const float z2 = z * z;
  // |z| < 1.00295997: z + z * p(z^2).
  float s = 8.4834944573231041431e-05f;
  s = fmaf(s, z2, -0.00082130916416645050049f);
  s = fmaf(s, z2, 0.0052134888246655464172f);
  s = fmaf(s, z2, -0.026868773624300956726f);
  s = fmaf(s, z2, 0.11284004896879196167f);
  s = fmaf(s, z2, -0.37612664699554443359f);
  s = fmaf(s, z2, 0.12837915122509002686f);
  s = fmaf(s, z, z);
  // Otherwise sign(z) * (1 - 2^(-|z| * (1 + q(|z|)))).
  float b = __uint_as_float(0x38eb4c3au);
  b = fmaf(b, t, -__uint_as_float(0x3aae005bu));
  b = fmaf(b, t, __uint_as_float(0x3c09919fu));
  b = fmaf(b, t, -__uint_as_float(0x3d24d99au));
  b = fmaf(b, t, __uint_as_float(0x3e235519u));
  b = fmaf(b, t, __uint_as_float(0x3f69b4f9u));
  b = fmaf(b, t, __uint_as_float(0x3f210a14u));
  b = fmaf(b, -t, -t);
  float e;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(b));
  return t >= 1.00295997f ? copysignf(1.0f - e, z) : s;
}

// torch.maximum / torch.minimum: NaN if either operand is NaN.
__device__ __forceinline__ float maximum(float a, float b) {
  return a != a ? a : (b != b ? b : fmaxf(a, b));
}
__device__ __forceinline__ float minimum(float a, float b) {
  return a != a ? a : (b != b ? b : fminf(a, b));
}
__device__ __forceinline__ double maximum(double a, double b) {
  return a != a ? a : (b != b ? b : fmax(a, b));
}
__device__ __forceinline__ double minimum(double a, double b) {
  return a != a ? a : (b != b ? b : fmin(a, b));
}

}  // namespace tccd_rt
)";

// Emits one kernel's namespace and entry points.
class KernelSourceEmitter {
 public:
  explicit KernelSourceEmitter(const PointwiseKernel& kernel)
      : k_(kernel), geo_(GeometryOf(kernel)), ns_("tccd_kernel_" + kernel.name) {}

  absl::Status Emit(std::string& out);

 private:
  absl::Status EmitPoint(std::string& out);
  void EmitContig(std::string& out);
  void EmitStrided(std::string& out);
  // "Point(<in0>, ..., <out0>, ...);" with operand o's argument given by `operand_ref(o)`, one
  // argument per line after the first, indented by `indent`.
  template <typename F>
  std::string PointCall(F operand_ref, const std::string& indent) const {
    std::string call = "Point(";
    for (int o = 0; o < k_.num_operands(); ++o) {
      absl::StrAppend(&call, o ? ",\n" + indent + "      " : "", operand_ref(o));
    }
    return call + ");";
  }
  std::string IndexType() const { return geo_.index64 ? "unsigned long long" : "unsigned int"; }
  std::string IndexLiteral(int64_t v) const { return absl::StrCat(v, geo_.index64 ? "ull" : "u"); }
  // Dim d's size as an Index expression: a literal, or the strided parameter of a run-time dim.
  std::string SizeExpr(int d) const {
    return k_.shape[d] == kRuntimeDim ? absl::StrCat("static_cast<Index>(p.size[", d, "])")
                                      : IndexLiteral(k_.shape[d]);
  }
  // "constexpr Index kNumel = <literal>;" or, with run-time sizes, its value from the parameters.
  std::string NumelDecl(bool strided) const {
    if (!geo_.runtime_shape)
      return absl::StrCat("  constexpr Index kNumel = ", IndexLiteral(geo_.numel), ";\n");
    if (!strided) return "  const Index kNumel = static_cast<Index>(p.numel);\n";
    std::string product;
    for (int d = 0; d < static_cast<int>(k_.shape.size()); ++d) {
      if (k_.shape[d] == 1) continue;
      absl::StrAppend(&product, product.empty() ? "" : " * ", SizeExpr(d));
    }
    return absl::StrCat("  const Index kNumel = ", product.empty() ? IndexLiteral(1) : product,
                        ";\n");
  }
  // The entry's signature. Its compile-time constants (kNumel, ...) are emitted as locals, only
  // where used: NVRTC materialises namespace-scope constexpr variables as (dead) .global
  // variables in the module, and warns about unused locals.
  void EmitInnerVectorPath(const std::vector<int>& dims, std::string& out);
  // A fixed-layout operand's stride along the innermost dim of size > 1 (0 or 1: entry_points.cc).
  int64_t InnerFixedStride(int o) const {
    const int rank = static_cast<int>(k_.shape.size());
    for (int d = rank - 1; d >= 0; --d)
      if (k_.shape[d] > 1) return k_.fixed_strides[static_cast<size_t>(o) * rank + d];
    return 1;
  }
  std::string EntryHead(const char* suffix, const char* params) const {
    std::string head =
        absl::StrCat("extern \"C\" __global__ void __launch_bounds__(", kCudaBlockSize, ")\n",
                     k_.name, suffix, "(const ", ns_, "::", params, " p) {\n");
    if (geo_.numel != 0) absl::StrAppend(&head, "  using namespace ", ns_, ";\n");
    return head;
  }

  const PointwiseKernel& k_;
  const CudaKernelGeometry geo_;
  const std::string ns_;
};

absl::Status KernelSourceEmitter::Emit(std::string& out) {
  const int num_operands = k_.num_operands();
  const int rank = static_cast<int>(k_.shape.size());
  absl::StrAppend(&out, "\n// ", std::string(76, '-'), "\n");
  std::string ir = CommentSafe(PrintPointwiseKernel(k_));
  if (!ir.empty() && ir.back() == '\n') ir.pop_back();
  for (size_t start = 0; start <= ir.size();) {
    size_t end = ir.find('\n', start);
    if (end == std::string::npos) end = ir.size();
    absl::StrAppend(&out, "// ", ir.substr(start, end - start), "\n");
    start = end + 1;
  }
  absl::StrAppend(&out, "namespace ", ns_, " {\n\n");
  absl::StrAppend(&out, "typedef ", IndexType(), " Index;\n\n");
  absl::StrAppend(&out, "struct ContigParams {\n  char* ptr[", num_operands, "];\n");
  if (geo_.runtime_shape)
    absl::StrAppend(&out, "  long long numel;  // run-time sizes: their product\n");
  absl::StrAppend(&out, "};\n");
  absl::StrAppend(&out, "struct StridedParams {\n  char* ptr[", num_operands, "];\n");
  if (rank > 0) absl::StrAppend(&out, "  long long stride[", num_operands, "][", rank, "];\n");
  if (geo_.runtime_shape)
    absl::StrAppend(&out, "  long long size[", rank, "];  // run-time sizes, every dim\n");
  absl::StrAppend(&out, "};\n");
  absl::StrAppend(&out, "static_assert(sizeof(ContigParams) == ", geo_.contig_param_bytes,
                  ", \"parameter layout\");\n");
  absl::StrAppend(&out, "static_assert(sizeof(StridedParams) == ", geo_.strided_param_bytes,
                  ", \"parameter layout\");\n");
  absl::StrAppend(&out, "static_assert(sizeof(StridedParams) <= ", kCudaMaxParamBytes,
                  ", \"kernel parameters exceed 4 KiB\");\n\n");
  RETURN_IF_ERROR(EmitPoint(out));
  absl::StrAppend(&out, "}  // namespace ", ns_, "\n\n");
  if (k_.has_dense_entry()) EmitContig(out);
  if (k_.has_strided_entry()) EmitStrided(out);
  return absl::OkStatus();
}

absl::Status KernelSourceEmitter::EmitPoint(std::string& out) { return CudaEmitPoint(k_, out); }

void KernelSourceEmitter::EmitContig(std::string& out) {
  const int n_in = static_cast<int>(k_.input_dtypes.size());
  const int num_operands = k_.num_operands();
  absl::StrAppend(&out, EntryHead("_contig", "ContigParams"));
  if (geo_.numel == 0) {
    absl::StrAppend(&out, "  // numel is 0: nothing to do (GridSize gives 0 blocks).\n}\n\n");
    return;
  }
  // Run-time sizes: both loops, bounded by the numel parameter.
  const bool has_vectors = geo_.runtime_shape || geo_.numel / geo_.vec > 0;
  const bool has_tail = geo_.runtime_shape || geo_.numel % geo_.vec != 0;
  if (has_tail) absl::StrAppend(&out, NumelDecl(/*strided=*/false));
  absl::StrAppend(&out, "  constexpr int kVec = ", geo_.vec, ";  // elements per thread\n");
  if (geo_.runtime_shape) {
    absl::StrAppend(&out, "  const Index kNumVecs = kNumel / kVec;\n");
  } else {
    absl::StrAppend(&out, "  constexpr Index kNumVecs = ", IndexLiteral(geo_.numel / geo_.vec),
                    ";\n");
  }
  absl::StrAppend(
      &out, "  const Index tid = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;\n");
  if (has_vectors) {
    for (int o = 0; o < num_operands; ++o) {
      absl::StrAppend(&out, "  typedef tccd_rt::Vec<", MemType(k_.operand_dtype(o)), ", kVec> V", o,
                      ";\n");
    }
    absl::StrAppend(&out,
                    "  const Index num_threads = static_cast<Index>(gridDim.x) * blockDim.x;\n"
                    "  for (Index i = tid; i < kNumVecs; i += num_threads) {\n");
    // Fixed-layout operands (PointwiseKernel::fixed_strides) at their declared offsets: a
    // vector where the innermost stride is 1, one value for the vector where it is 0.
    auto fixed_ptr = [&](int o) {
      return absl::StrCat("reinterpret_cast<", o < n_in ? "const " : "",
                          MemType(k_.operand_dtype(o)), "*>(p.ptr[", o, "]) + ",
                          CudaFixedOffset(k_, o, "(i * kVec)", 0));
    };
    for (int o = 0; o < n_in; ++o) {
      if (!IsFixedLayoutOperand(k_, o)) {
        absl::StrAppend(&out, "    const V", o, " a", o, " = reinterpret_cast<const V", o,
                        "*>(p.ptr[", o, "])[i];\n");
      } else if (InnerFixedStride(o) == 0) {
        absl::StrAppend(&out, "    V", o, " a", o, ";\n    {\n      const ",
                        MemType(k_.operand_dtype(o)), " s = *(", fixed_ptr(o),
                        ");\n#pragma unroll\n      for (int j = 0; j < kVec; ++j) a", o,
                        ".v[j] = s;\n    }\n");
      } else {
        absl::StrAppend(&out, "    const V", o, " a", o, " = *reinterpret_cast<const V", o, "*>(",
                        fixed_ptr(o), ");\n");
      }
    }
    for (int o = n_in; o < num_operands; ++o) absl::StrAppend(&out, "    V", o, " a", o, ";\n");
    absl::StrAppend(&out, "#pragma unroll\n    for (int j = 0; j < kVec; ++j) {\n      ",
                    PointCall([](int o) { return absl::StrCat("a", o, ".v[j]"); }, "      "),
                    "\n    }\n");
    for (int o = n_in; o < num_operands; ++o) {
      if (IsFixedLayoutOperand(k_, o)) {
        absl::StrAppend(&out, "    *reinterpret_cast<V", o, "*>(", fixed_ptr(o), ") = a", o, ";\n");
      } else {
        absl::StrAppend(&out, "    reinterpret_cast<V", o, "*>(p.ptr[", o, "])[i] = a", o, ";\n");
      }
    }
    absl::StrAppend(&out, "  }\n");
  }
  if (has_tail) {
    absl::StrAppend(&out, "  // The last kNumel % kVec elements, one per thread.\n",
                    "  if (tid < kNumel - kNumVecs * kVec) {\n",
                    "    const Index e = kNumVecs * kVec + tid;\n    ",
                    PointCall(
                        [&](int o) {
                          return absl::StrCat(
                              "reinterpret_cast<", o < n_in ? "const " : "",
                              MemType(k_.operand_dtype(o)), "*>(p.ptr[", o, "])[",
                              IsFixedLayoutOperand(k_, o) ? CudaFixedOffset(k_, o, "e", 0) : "e",
                              "]");
                        },
                        "    "),
                    "\n  }\n");
  }
  absl::StrAppend(&out, "}\n\n");
}

// The strided entry's fast path, for the layouts that broadcasting produces (a bias over rows, a
// mask over heads, a residual): when every operand's innermost dim (the last of `dims`) has
// stride 1 (vector accesses: its pointer aligned to a vector and its other strides multiples of
// kVec) or 0 (one scalar load, broadcast over the vector), each thread moves kVec elements per
// index decomposition with vector accesses, as the contig entry does. The test is on the
// parameters, uniform over the grid; anything else takes the per-element loop after it.
void KernelSourceEmitter::EmitInnerVectorPath(const std::vector<int>& dims, std::string& out) {
  if (dims.empty() || geo_.vec <= 1 || HasIndexOps(k_)) return;
  const int inner = dims.back();
  // A run-time innermost size is not known to be a multiple of the vector (no guard says so).
  if (k_.shape[inner] == kRuntimeDim || k_.shape[inner] % geo_.vec != 0) return;
  const int n_in = static_cast<int>(k_.input_dtypes.size());
  const int num_operands = k_.num_operands();
  absl::StrAppend(&out, "  constexpr int kVec = ", geo_.vec, ";\n", "  bool vectors = true;\n");
  for (int o = 0; o < num_operands; ++o) {
    const std::string stride = absl::StrCat("p.stride[", o, "][", inner, "]");
    std::string cond =
        absl::StrCat("(reinterpret_cast<unsigned long long>(p.ptr[", o, "]) % (kVec * sizeof(",
                     MemType(k_.operand_dtype(o)), "))) == 0");
    for (int d : dims)
      if (d != inner) absl::StrAppend(&cond, " && p.stride[", o, "][", d, "] % kVec == 0");
    // Outputs never broadcast: they need the vector layout.
    absl::StrAppend(&out, "  vectors = vectors && (",
                    o < n_in ? absl::StrCat(stride, " == 0 || ") : "", "(", stride, " == 1 && ",
                    cond, "));\n");
  }
  absl::StrAppend(&out, "  if (vectors) {\n");
  for (int o = 0; o < num_operands; ++o) {
    absl::StrAppend(&out, "    typedef tccd_rt::Vec<", MemType(k_.operand_dtype(o)), ", kVec> V", o,
                    ";\n");
  }
  absl::StrAppend(&out,
                  "    for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;"
                  " i < kNumel / kVec;\n         i += num_threads) {\n",
                  "      Index rest = i * kVec;\n");
  for (int j = static_cast<int>(dims.size()) - 1; j >= 0; --j) {
    const int d = dims[j];
    if (j == 0) {
      absl::StrAppend(&out, "      const Index c", d, " = rest;\n");
    } else {
      const std::string size = SizeExpr(d);
      absl::StrAppend(&out, "      const Index c", d, " = rest % ", size, ";\n      rest /= ", size,
                      ";\n");
    }
  }
  for (int o = 0; o < num_operands; ++o) {
    absl::StrAppend(&out, "      const long long off", o, " = ");
    for (size_t j = 0; j < dims.size(); ++j) {
      absl::StrAppend(&out, j ? " + " : "", "static_cast<long long>(c", dims[j], ") * p.stride[", o,
                      "][", dims[j], "]");
    }
    absl::StrAppend(&out, ";\n");
    const std::string type = MemType(k_.operand_dtype(o));
    if (o < n_in) {
      absl::StrAppend(
          &out, "      V", o, " a", o, ";\n      if (p.stride[", o, "][", inner, "] == 0) {\n",
          "        const ", type, " s = reinterpret_cast<const ", type, "*>(p.ptr[", o, "])[off", o,
          "];\n#pragma unroll\n        for (int j = 0; j < kVec; ++j) a", o, ".v[j] = s;\n",
          "      } else {\n        a", o, " = *reinterpret_cast<const V", o,
          "*>(reinterpret_cast<const ", type, "*>(p.ptr[", o, "]) + off", o, ");\n      }\n");
    } else {
      absl::StrAppend(&out, "      V", o, " a", o, ";\n");
    }
  }
  absl::StrAppend(&out, "#pragma unroll\n      for (int j = 0; j < kVec; ++j) {\n        ",
                  PointCall([](int o) { return absl::StrCat("a", o, ".v[j]"); }, "        "),
                  "\n      }\n");
  for (int o = n_in; o < num_operands; ++o) {
    absl::StrAppend(&out, "      *reinterpret_cast<V", o, "*>(reinterpret_cast<",
                    MemType(k_.operand_dtype(o)), "*>(p.ptr[", o, "]) + off", o, ") = a", o, ";\n");
  }
  absl::StrAppend(&out, "    }\n    return;\n  }\n");
}

void KernelSourceEmitter::EmitStrided(std::string& out) {
  const int n_in = static_cast<int>(k_.input_dtypes.size());
  const int num_operands = k_.num_operands();
  const int rank = static_cast<int>(k_.shape.size());
  absl::StrAppend(&out, EntryHead("_strided", "StridedParams"));
  if (geo_.numel == 0) {
    absl::StrAppend(&out, "  // numel is 0: nothing to do (GridSize gives 0 blocks).\n}\n\n");
    return;
  }
  // Dims of size 1 always have coordinate 0: they take no part in the decomposition.
  std::vector<int> dims;
  for (int d = 0; d < rank; ++d) {
    if (k_.shape[d] > 1 || k_.shape[d] == kRuntimeDim) dims.push_back(d);
  }
  absl::StrAppend(&out, NumelDecl(/*strided=*/true),
                  "  const Index num_threads = static_cast<Index>(gridDim.x) * blockDim.x;\n");
  EmitInnerVectorPath(dims, out);
  absl::StrAppend(&out,
                  "  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;"
                  " i < kNumel;\n       i += num_threads) {\n");
  if (!dims.empty()) absl::StrAppend(&out, "    Index rest = i;\n");
  for (int j = static_cast<int>(dims.size()) - 1; j >= 0; --j) {
    const int d = dims[j];
    if (j == 0) {
      absl::StrAppend(&out, "    const Index c", d, " = rest;\n");
    } else {
      const std::string size = SizeExpr(d);
      absl::StrAppend(&out, "    const Index c", d, " = rest % ", size, ";\n    rest /= ", size,
                      ";\n");
    }
  }
  for (int o = 0; o < num_operands; ++o) {
    absl::StrAppend(&out, "    const long long off", o, " = ");
    if (dims.empty()) absl::StrAppend(&out, "0");
    for (size_t j = 0; j < dims.size(); ++j) {
      absl::StrAppend(&out, j ? " + " : "", "static_cast<long long>(c", dims[j], ") * p.stride[", o,
                      "][", dims[j], "]");
    }
    absl::StrAppend(&out, ";\n");
  }
  absl::StrAppend(&out, "    ",
                  PointCall(
                      [&](int o) {
                        return absl::StrCat("reinterpret_cast<", o < n_in ? "const " : "",
                                            MemType(k_.operand_dtype(o)), "*>(p.ptr[", o, "])[off",
                                            o, "]");
                      },
                      "    "),
                  "\n  }\n}\n");
}

}  // namespace

std::string CudaInstrExpr(const PointwiseKernel& k, size_t i,
                          const std::function<std::string(int)>& arg_name) {
  const PwInstr& in = k.body[i];
  const DType d = in.dtype;
  auto arg = [&](int j) { return arg_name(in.args[j]); };
  auto arg_dtype = [&](int j) { return k.body[in.args[j]].dtype; };
  std::string expr;
  switch (PwOpKindOf(in.op)) {
    case PwOpKind::kConstant:
      expr = IsFloat(d) ? FloatLiteral(d, in.fvalue) : IntLiteral(d, in.ivalue);
      break;
    case PwOpKind::kCast:
      expr = Cast(arg(0), arg_dtype(0), d);
      break;
    case PwOpKind::kBinary:
      expr = Binary(in.op, d, arg(0), arg(1));
      break;
    case PwOpKind::kCompare:
      expr = Compare(in.op, arg(0), arg(1));
      break;
    case PwOpKind::kLogical:
      expr = in.op == PwOp::kAnd  ? absl::StrCat(arg(0), " && ", arg(1))
             : in.op == PwOp::kOr ? absl::StrCat(arg(0), " || ", arg(1))
                                  : absl::StrCat("!", arg(0));
      break;
    case PwOpKind::kWhere:
      expr = absl::StrCat(arg(0), " ? ", arg(1), " : ", arg(2));
      break;
    case PwOpKind::kUnary:
      expr = Unary(in.op, d, arg(0));
      break;
    // Memory and reductions are the callers' statements; the index ops are spelled by the index
    // emitter (cuda_index_emitter.cc).
    case PwOpKind::kLoad:
    case PwOpKind::kStore:
    case PwOpKind::kScatter:
    case PwOpKind::kReduce:
    case PwOpKind::kIndex:
    case PwOpKind::kGather:
    case PwOpKind::kRandom:
      return "";
  }
  return expr;
}

absl::Status CudaEmitPoint(const PointwiseKernel& k, std::string& out) {
  const int n_in = static_cast<int>(k.input_dtypes.size());
  absl::StrAppend(&out, "// The body for one element: inputs as stored, outputs by reference.\n");
  absl::StrAppend(&out, "__device__ __forceinline__ void Point(");
  for (int o = 0; o < k.num_operands(); ++o) {
    const DType d = k.operand_dtype(o);
    absl::StrAppend(&out, o ? ", " : "", MemType(d));
    if (o < n_in) {
      absl::StrAppend(&out, " in", o);
    } else {
      absl::StrAppend(&out, "& out", o - n_in);
    }
  }
  absl::StrAppend(&out, ") {\n");
  for (size_t i = 0; i < k.body.size(); ++i) {
    const PwInstr& in = k.body[i];
    const DType d = in.dtype;
    auto arg = [&](int j) { return V(in.args[j]); };
    std::string expr;
    if (in.op == PwOp::kLoad) {
      expr = absl::StrCat("in", in.operand);
      if (d == DType::kBool) expr += " != 0";  // any nonzero byte is true
    } else if (in.op == PwOp::kStore) {
      absl::StrAppend(&out, "  out", in.operand, " = ",
                      d == DType::kBool ? absl::StrCat("(unsigned char)", arg(0)) : arg(0), ";\n");
      continue;
    } else {
      expr = CudaInstrExpr(k, i, [](int v) { return V(v); });
    }
    if (expr.empty()) {
      return absl::InternalError(absl::StrCat("no CUDA lowering for ", PwOpName(in.op), " on ",
                                              RegType(d), " at %", i, " in kernel '", k.name, "'"));
    }
    absl::StrAppend(&out, "  const ", RegType(d), " ", V(static_cast<int>(i)), " = ", expr, ";\n");
  }
  absl::StrAppend(&out, "}\n\n");
  return absl::OkStatus();
}

std::string CudaFixedOffset(const PointwiseKernel& k, int o, const std::string& var, int first) {
  const int rank = static_cast<int>(k.shape.size());
  struct Run {
    int64_t inner, size, stride;  // coordinate (var / inner) % size, times stride
  };
  std::vector<Run> runs;
  int64_t inner = 1;
  for (int d = rank - 1; d >= first; --d) {
    const int64_t n = k.shape[d];
    if (n == 1) continue;
    const int64_t s = k.fixed_strides[static_cast<size_t>(o) * rank + d];
    if (!runs.empty() && s == runs.back().stride * runs.back().size) {
      runs.back().size *= n;  // adjacent in memory (or both broadcast): one coordinate
    } else {
      runs.push_back({inner, n, s});
    }
    inner *= n;
  }
  std::string out;
  for (const Run& r : runs) {
    if (r.stride == 0) continue;
    std::string coord = r.inner == 1 ? var : absl::StrCat("(", var, " / ", r.inner, "u)");
    if (r.inner * r.size < inner) coord = absl::StrCat("(", coord, " % ", r.size, "u)");
    absl::StrAppend(&out, out.empty() ? "" : " + ", "static_cast<long long>(", coord, ")",
                    r.stride == 1 ? "" : absl::StrCat(" * ", r.stride, "LL"));
  }
  return out.empty() ? "0LL" : out;
}

const char* CudaMemType(DType d) { return MemType(d); }
const char* CudaRegType(DType d) { return RegType(d); }

std::string CudaIrComment(const PointwiseKernel& k) {
  std::string out;
  std::string ir = CommentSafe(PrintPointwiseKernel(k));
  if (!ir.empty() && ir.back() == '\n') ir.pop_back();
  for (size_t start = 0; start <= ir.size();) {
    size_t end = ir.find('\n', start);
    if (end == std::string::npos) end = ir.size();
    absl::StrAppend(&out, "// ", ir.substr(start, end - start), "\n");
    start = end + 1;
  }
  return out;
}

CudaKernelGeometry GeometryOf(const PointwiseKernel& kernel) {
  CudaKernelGeometry geo;
  geo.numel = 1;
  geo.runtime_shape = HasRuntimeShape(kernel);
  for (int64_t s : kernel.shape) geo.numel *= s == kRuntimeDim ? 1 : s;
  // Run-time sizes: numel is unknown here (-1), and 0 only when a static dim is 0.
  if (geo.runtime_shape && geo.numel != 0) geo.numel = -1;
  // 16 bytes of the *largest* operand per thread: the widest operands move with one 128-bit
  // access per thread and narrower ones with proportionally narrower accesses (a bool next to
  // f32: 32 bits), so every warp-wide access covers one contiguous span. Measured on H100
  // (2^28 elements) against 16 bytes of the smallest operand, which makes the wide operands take
  // several 128-bit accesses at a larger per-thread stride and more registers: bf16->f32 2757
  // vs 2247 GB/s, where(bool mask, f32) 2719 vs 2141, equal for kernels of one element size;
  // 32 bytes per thread was slower for every kernel.
  // Fixed-layout operands that broadcast (a per-channel f32 vector beside bf16 maps) are not
  // streamed: their few values stay in L1, so they do not set the width; the bf16 maps then move
  // 16 bytes per thread rather than 8 (and the f32 vector two 16-byte L1 loads per vector).
  int largest = 1;
  const int rank = static_cast<int>(kernel.shape.size());
  for (int o = 0; o < kernel.num_operands(); ++o) {
    bool broadcast = false;
    if (IsFixedLayoutOperand(kernel, o))
      for (int d = 0; d < rank; ++d)
        broadcast = broadcast || (kernel.shape[d] > 1 &&
                                  kernel.fixed_strides[static_cast<size_t>(o) * rank + d] == 0);
    if (!broadcast) largest = std::max(largest, Bytes(kernel.operand_dtype(o)));
  }
  geo.vec = HasIndexOps(kernel) ? 1 : 16 / largest;  // index kernels: one element per thread
  geo.index64 = geo.runtime_shape || geo.numel > std::numeric_limits<int32_t>::max();
  const int num_operands = kernel.num_operands();
  geo.contig_param_bytes = 8 * num_operands;
  geo.strided_param_bytes = 8 * num_operands * (1 + rank);
  if (geo.runtime_shape) {  // the contig entry takes numel, the strided one every dim's size
    geo.contig_param_bytes += 8;
    geo.strided_param_bytes += 8 * rank;
  }
  return geo;
}

absl::Status CheckCudaKernel(const PointwiseKernel& kernel) {
  if (std::string error = VerifyPointwiseKernel(kernel); !error.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid pointwise kernel '", kernel.name, "': ", error));
  }
  // In 64-bit arithmetic: a verified kernel's operand count and rank are small, but not bounded.
  const int64_t param_bytes =
      8 * static_cast<int64_t>(kernel.num_operands()) *
          (1 + static_cast<int64_t>(kernel.shape.size())) +
      (HasRuntimeShape(kernel) ? 8 * static_cast<int64_t>(kernel.shape.size()) : 0);
  if (param_bytes > kCudaMaxParamBytes) {
    return absl::UnimplementedError(
        absl::StrCat("kernel '", kernel.name, "' has ", kernel.num_operands(), " operands of rank ",
                     kernel.shape.size(), ": its CUDA parameters would take ", param_bytes,
                     " bytes, more than the ", kCudaMaxParamBytes, " a launch can pass"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> EmitCudaSource(absl::Span<const PointwiseKernel> kernels,
                                           int cc_major) {
  std::set<std::string> names;
  for (const PointwiseKernel& kernel : kernels) {
    RETURN_IF_ERROR(CheckCudaKernel(kernel));
    if (!names.insert(kernel.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("kernel name '", kernel.name, "' is used twice in one module"));
    }
  }
  std::string out = kPrelude;
  if (SoftCasts()) out.insert(0, "#define TCCD_SOFT_CASTS 1\n");
  // The reduction helpers only where needed: modules without row reductions keep their source.
  for (const PointwiseKernel& kernel : kernels) {
    if (kernel.is_row_reduction()) {
      out += kCudaRowPrelude;
      break;
    }
  }
  for (const PointwiseKernel& kernel : kernels) {
    if (kernel.is_column_reduction()) {
      out += kCudaColumnPrelude;
      break;
    }
  }
  for (const PointwiseKernel& kernel : kernels) {
    if (kernel.is_column_reduction()) {
      RETURN_IF_ERROR(EmitColumnReductionKernel(kernel, cc_major, out));
    } else if (kernel.is_row_reduction()) {
      RETURN_IF_ERROR(EmitRowReductionKernel(kernel, out));
    } else if (kernel.is_tile()) {
      RETURN_IF_ERROR(EmitTileKernel(kernel, out));
    } else if (const auto t = DepthwiseTemplateOf(kernel)) {
      RETURN_IF_ERROR(EmitDepthwiseKernel(kernel, *t, out));
    } else if (HasIndexOps(kernel)) {
      RETURN_IF_ERROR(EmitIndexKernel(kernel, out));
    } else {
      RETURN_IF_ERROR(KernelSourceEmitter(kernel).Emit(out));
    }
  }
  return out;
}

}  // namespace tccd::codegen
