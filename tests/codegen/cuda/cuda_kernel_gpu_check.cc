// cuda_kernel_gpu_check: the CUDA backend's kernels on a real GPU (not a CTest test: CI has no
// GPU). For every case it compiles with CompileCudaKernels for the device's compute capability,
// loads the cubin with cuModuleLoadData, launches <name>_contig on contiguous buffers and
// <name>_strided on permuted, padded and broadcast views of random data, and compares every
// output with a host reference interpreter of the kernel IR (below), which also checks that
// padding and memory past the end are never written.
//
//   cuda_kernel_gpu_check            correctness; exit status 0 when everything matches
//   cuda_kernel_gpu_check --bench    also effective bandwidth of large contiguous/strided kernels
//
// Needs a CUDA driver and NVRTC at run time (found like the daemon finds it). Built here with
// `cmake --build build-cuda --target cuda_kernel_gpu_check`; to run it on a GPU machine that
// lacks this tree's libraries, copy the binary with the absl/spdlog/fmt .so files that `ldd`
// lists and point LD_LIBRARY_PATH at them. Last run (H100 80GB HBM3, NVRTC 13.0, 2026-11-22):
// all 17 kernels matched on both entry points; bandwidth 2.7-3.0 TB/s contiguous (cuMemcpyDtoD
// 3.0 TB/s), 2.1-2.9 TB/s through the strided entry on contiguous or broadcast data, 0.4-0.7 TB/s
// with a transposed input.
//
// Tolerances: results of the IR's exact ops (+ - * / sqrt, casts, compares, min/max, rounding)
// must match bit for bit (NaN matches any NaN). Transcendentals may differ from glibc by 8 ulp,
// and that error is propagated through every later op (so catastrophic cancellation, as in
// 1 + erf(x) for x << 0, widens it). a*b+c may be one FMA on the GPU: the reference evaluates
// each point with and without contraction and accepts either. Float->int casts of NaN, inf or
// out-of-range values are undefined (x86 and the GPU differ; so does torch) and not compared.
#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "codegen/cuda/cuda_backend.h"
#include "cuda_test_kernels.h"

namespace tccd::codegen::cuda_testing {
namespace {

#define CU_CHECK(expr)                                                                 \
  do {                                                                                 \
    const CUresult cu_result_ = (expr);                                                \
    if (cu_result_ != CUDA_SUCCESS) {                                                  \
      const char* cu_message_ = "?";                                                   \
      cuGetErrorString(cu_result_, &cu_message_);                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr, cu_message_); \
      std::exit(2);                                                                    \
    }                                                                                  \
  } while (0)

// The kernel IR's own dtype helpers (kernel/pointwise_kernel.h, graph.h), not copies of them.
int Bytes(DType d) { return ir::DTypeBytes(d); }
const char* Name(DType d) { return ir::DTypeName(d); }

// ---------------------------------------------------------------------------------------------
// The host reference: an interpreter of the kernel IR with the CPU backend's semantics.
// ---------------------------------------------------------------------------------------------

// f16/bf16 conversions, independent of both backends: GCC's _Float16 and integer rounding.
uint16_t RefF32ToBf16(float f) {
  if (std::isnan(f)) return 0x7fc0;
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint32_t upper = u >> 16, lower = u & 0xffff;
  if (lower > 0x8000 || (lower == 0x8000 && (upper & 1))) return static_cast<uint16_t>(upper + 1);
  return static_cast<uint16_t>(upper);
}
float RefBf16ToF32(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint16_t RefF32ToF16(float f) {
  if (std::isnan(f)) return std::signbit(f) ? 0xfe00 : 0x7e00;  // c10's canonical NaN
  const _Float16 h = static_cast<_Float16>(f);
  uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}
float RefF16ToF32(uint16_t bits) {
  _Float16 h;
  std::memcpy(&h, &bits, 2);
  return static_cast<float>(h);
}

struct Val {
  double f = 0;   // f32 (exactly representable) and f64; for f16/bf16 see `i`
  int64_t i = 0;  // integers sign/zero-extended, bool 0/1, f16/bf16 bits
  // Not compared: depends on an undefined float->int cast, or on a comparison that the allowed
  // error could flip.
  bool undefined = false;
  // A bound on |GPU - reference| (in the value's units) from libdevice vs glibc differences,
  // propagated from the transcendentals through every later op. 0: must match exactly.
  double err = 0;
};

int64_t Wrap(int64_t v, DType d) {
  switch (d) {
    case DType::kI8:
      return static_cast<int8_t>(v);
    case DType::kI16:
      return static_cast<int16_t>(v);
    case DType::kI32:
      return static_cast<int32_t>(v);
    case DType::kU8:
      return static_cast<uint8_t>(v);
    case DType::kBool:
      return v != 0;
    default:
      return v;
  }
}

Val Load(const unsigned char* p, DType d) {
  Val v;
  switch (d) {
    case DType::kF32: {
      float x;
      std::memcpy(&x, p, 4);
      v.f = x;
      break;
    }
    case DType::kF64:
      std::memcpy(&v.f, p, 8);
      break;
    case DType::kF16:
    case DType::kBF16: {
      uint16_t x;
      std::memcpy(&x, p, 2);
      v.i = x;
      break;
    }
    case DType::kI8:
      v.i = static_cast<int8_t>(*p);
      break;
    case DType::kI16: {
      int16_t x;
      std::memcpy(&x, p, 2);
      v.i = x;
      break;
    }
    case DType::kI32: {
      int32_t x;
      std::memcpy(&x, p, 4);
      v.i = x;
      break;
    }
    case DType::kI64:
      std::memcpy(&v.i, p, 8);
      break;
    case DType::kU8:
      v.i = *p;
      break;
    case DType::kBool:
      v.i = *p != 0;
      break;
  }
  return v;
}

void Store(const Val& v, DType d, unsigned char* p) {
  switch (d) {
    case DType::kF32: {
      const float x = static_cast<float>(v.f);
      std::memcpy(p, &x, 4);
      break;
    }
    case DType::kF64:
      std::memcpy(p, &v.f, 8);
      break;
    case DType::kF16:
    case DType::kBF16:
    case DType::kI16: {
      const uint16_t x = static_cast<uint16_t>(v.i);
      std::memcpy(p, &x, 2);
      break;
    }
    case DType::kI32: {
      const int32_t x = static_cast<int32_t>(v.i);
      std::memcpy(p, &x, 4);
      break;
    }
    case DType::kI64:
      std::memcpy(p, &v.i, 8);
      break;
    default:
      *p = static_cast<unsigned char>(v.i);
      break;
  }
}

// A float value rounded to dtype d (f32 or f64).
double Round(double x, DType d) { return d == DType::kF32 ? static_cast<float>(x) : x; }

// The spacing of f32/f64 values at |x|.
double Ulp(double x, DType d) {
  x = std::fabs(x);
  if (!std::isfinite(x)) return 0;
  if (d == DType::kF32) {
    const float f = static_cast<float>(x);
    return std::nextafter(f, INFINITY) - f;
  }
  return std::nextafter(x, INFINITY) - x;
}

double HalfValue(int64_t bits, DType d) {
  return d == DType::kBF16 ? RefBf16ToF32(static_cast<uint16_t>(bits))
                           : RefF16ToF32(static_cast<uint16_t>(bits));
}

// The float value of a float-typed Val (f16/bf16 decoded).
double FloatOf(const Val& v, DType d) { return IsHalf(d) ? HalfValue(v.i, d) : v.f; }

Val Cast(Val v, DType from, DType to) {
  if (from == to) return v;
  if (IsHalf(from)) {
    v.f = HalfValue(v.i, from);
    return Cast(v, DType::kF32, to);
  }
  if (IsHalf(to)) {
    v = Cast(v, from, DType::kF32);
    const float f = static_cast<float>(v.f);
    v.i = to == DType::kBF16 ? RefF32ToBf16(f) : RefF32ToF16(f);
    return v;
  }
  if (to == DType::kBool) {
    if (IsFloat(from)) {
      if (v.err > 0 && std::fabs(v.f) <= v.err) v.undefined = true;
      v.i = v.f != 0 || std::isnan(v.f);
    } else {
      v.i = v.i != 0;
    }
    v.err = 0;
    return v;
  }
  if (IsFloat(from) && IsFloat(to)) {
    v.f = Round(v.f, to);
    if (v.err > 0) v.err += Ulp(v.f, to);
    return v;
  }
  if (IsFloat(from)) {
    // Truncate; narrow types go through i32 and wrap. Out of range is undefined.
    const double t = std::trunc(v.f);
    const bool wide = to == DType::kI64;
    const double lo = wide ? -9223372036854775808.0 : -2147483648.0;
    const double hi = wide ? 9223372036854775808.0 : 2147483648.0;
    if (!(t >= lo && t < hi)) {
      v.undefined = true;
      v.i = 0;
      return v;
    }
    v.i = Wrap(static_cast<int64_t>(t), to);
    if (v.err > 0) {
      // An error that may cross an integer, or a wrap, makes the result uncertain.
      v.undefined |= std::trunc(v.f - v.err) != t || std::trunc(v.f + v.err) != t;
      v.err = 0;
    }
    return v;
  }
  if (IsFloat(to)) {
    v.f =
        to == DType::kF32 ? static_cast<double>(static_cast<float>(v.i)) : static_cast<double>(v.i);
    return v;
  }
  v.i = Wrap(v.i, to);
  return v;
}

bool IsTranscendental(PwOp op) {
  switch (op) {
    case PwOp::kExp:
    case PwOp::kLog:
    case PwOp::kLog1p:
    case PwOp::kExpm1:
    case PwOp::kTanh:
    case PwOp::kErf:
    case PwOp::kSin:
    case PwOp::kCos:
    case PwOp::kSigmoid:
    case PwOp::kPow:
      return true;
    default:
      return false;
  }
}

template <typename T>
T FloatUnary(PwOp op, T x) {
  switch (op) {
    case PwOp::kExp:
      return std::exp(x);
    case PwOp::kLog:
      return std::log(x);
    case PwOp::kLog1p:
      return std::log1p(x);
    case PwOp::kExpm1:
      return std::expm1(x);
    case PwOp::kTanh:
      return std::tanh(x);
    case PwOp::kErf:
      return std::erf(x);
    case PwOp::kSin:
      return std::sin(x);
    case PwOp::kCos:
      return std::cos(x);
    case PwOp::kSigmoid:
      return T(1) / (T(1) + std::exp(-x));
    case PwOp::kNeg:
      return -x;
    case PwOp::kAbs:
      return std::fabs(x);
    case PwOp::kSqrt:
      return std::sqrt(x);
    case PwOp::kRsqrt:
      return T(1) / std::sqrt(x);
    case PwOp::kReciprocal:
      return T(1) / x;
    case PwOp::kFloor:
      return std::floor(x);
    case PwOp::kCeil:
      return std::ceil(x);
    case PwOp::kRound:
      return std::nearbyint(x);
    default:
      std::fprintf(stderr, "reference: no float unary %s\n", PwOpName(op));
      std::exit(3);
  }
}

template <typename T>
T FloatBinary(PwOp op, T a, T b) {
  switch (op) {
    case PwOp::kAdd:
      return a + b;
    case PwOp::kSub:
      return a - b;
    case PwOp::kMul:
      return a * b;
    case PwOp::kDiv:
      return a / b;
    case PwOp::kPow:
      return std::pow(a, b);
    case PwOp::kMaximum:
      return std::isnan(a) ? a : std::isnan(b) ? b : std::fmax(a, b);
    case PwOp::kMinimum:
      return std::isnan(a) ? a : std::isnan(b) ? b : std::fmin(a, b);
    default:
      std::fprintf(stderr, "reference: no float binary %s\n", PwOpName(op));
      std::exit(3);
  }
}

// f(args) in precision T, with the error bound: how far f moves when each argument moves by its
// error (evaluated at the corners), plus the op's own error for transcendentals.
template <typename T, typename F>
Val FloatApply(F f, const std::vector<Val>& args, bool transcendental, DType d) {
  Val r;
  std::vector<T> x;
  double in_err = 0;
  for (const Val& a : args) {
    x.push_back(static_cast<T>(a.f));
    in_err += a.err;
  }
  const T center = f(x);
  r.f = center;
  double err = 0;
  if (in_err > 0) {
    for (unsigned corner = 0; corner < (1u << args.size()); ++corner) {
      std::vector<T> y = x;
      for (size_t j = 0; j < args.size(); ++j) {
        y[j] = static_cast<T>(x[j] + ((corner >> j) & 1 ? args[j].err : -args[j].err));
      }
      err = std::max(err, std::fabs(static_cast<double>(f(y)) - center));
    }
    err += Ulp(center, d);
  }
  if (transcendental) err += 8 * Ulp(center, d);
  r.err = err;
  return r;
}

template <typename T>
bool CompareOp(PwOp op, T a, T b) {
  switch (op) {
    case PwOp::kEq:
      return a == b;
    case PwOp::kNe:
      return a != b;
    case PwOp::kLt:
      return a < b;
    case PwOp::kLe:
      return a <= b;
    case PwOp::kGt:
      return a > b;
    case PwOp::kGe:
      return a >= b;
    default:
      return false;
  }
}

// Evaluates the kernel at one point (`in(o)` addresses input o's element) and returns the value
// stored to each output, in the output's dtype, with its error bound. With `contract`, a float
// add/sub of a multiply is one FMA, as NVRTC (--fmad=true) compiles it; without, two roundings,
// as the CPU backend computes it. The GPU must match one of the two.
template <typename In>
std::vector<Val> EvalPoint(const PointwiseKernel& k, In in, bool contract) {
  std::vector<Val> stored(k.output_dtypes.size());
  std::vector<Val> v(k.body.size());
  for (size_t idx = 0; idx < k.body.size(); ++idx) {
    const PwInstr& ins = k.body[idx];
    const DType d = ins.dtype;
    auto arg = [&](int j) -> const Val& { return v[ins.args[j]]; };
    auto arg_dtype = [&](int j) { return k.body[ins.args[j]].dtype; };
    bool undefined = false;
    for (int a : ins.args) undefined |= v[a].undefined;
    Val r;
    switch (ins.op) {
      case PwOp::kLoad:
        r = Load(in(ins.operand), d);
        break;
      case PwOp::kConstant:
        if (IsFloat(d))
          r.f = Round(ins.fvalue, d);
        else
          r.i = Wrap(ins.ivalue, d);
        break;
      case PwOp::kCast:
        r = Cast(arg(0), arg_dtype(0), d);
        break;
      case PwOp::kAdd:
      case PwOp::kSub:
      case PwOp::kMul:
      case PwOp::kDiv:
      case PwOp::kPow:
      case PwOp::kMaximum:
      case PwOp::kMinimum:
        if (IsFloat(d)) {
          const int mul_arg = k.body[ins.args[0]].op == PwOp::kMul   ? 0
                              : k.body[ins.args[1]].op == PwOp::kMul ? 1
                                                                     : -1;
          if (contract && mul_arg >= 0 && (ins.op == PwOp::kAdd || ins.op == PwOp::kSub)) {
            // fma(p, q, other) for p*q + other; fma(p, q, -other) for p*q - other;
            // fma(-p, q, other) for other - p*q.
            const PwInstr& mul = k.body[ins.args[mul_arg]];
            const Val& p = v[mul.args[0]];
            const Val& q = v[mul.args[1]];
            const Val& other = arg(1 - mul_arg);
            const bool sub = ins.op == PwOp::kSub;
            const double ps = sub && mul_arg == 1 ? -1.0 : 1.0;
            const double os = sub && mul_arg == 0 ? -1.0 : 1.0;
            auto fma = [&](const auto& x) {
              using T = std::decay_t<decltype(x[0])>;
              return std::fma(static_cast<T>(ps) * x[0], x[1], static_cast<T>(os) * x[2]);
            };
            r = d == DType::kF32 ? FloatApply<float>(fma, {p, q, other}, false, d)
                                 : FloatApply<double>(fma, {p, q, other}, false, d);
          } else {
            auto f = [op = ins.op](const auto& x) { return FloatBinary(op, x[0], x[1]); };
            r = d == DType::kF32
                    ? FloatApply<float>(f, {arg(0), arg(1)}, IsTranscendental(ins.op), d)
                    : FloatApply<double>(f, {arg(0), arg(1)}, IsTranscendental(ins.op), d);
          }
        } else {
          if (arg(0).err > 0 || arg(1).err > 0) undefined = true;
          const uint64_t a = static_cast<uint64_t>(arg(0).i), b = static_cast<uint64_t>(arg(1).i);
          switch (ins.op) {
            case PwOp::kAdd:
              r.i = Wrap(static_cast<int64_t>(a + b), d);
              break;
            case PwOp::kSub:
              r.i = Wrap(static_cast<int64_t>(a - b), d);
              break;
            case PwOp::kMul:
              r.i = Wrap(static_cast<int64_t>(a * b), d);
              break;
            case PwOp::kMaximum:
              r.i = std::max(arg(0).i, arg(1).i);
              break;
            case PwOp::kMinimum:
              r.i = std::min(arg(0).i, arg(1).i);
              break;
            default:
              std::fprintf(stderr, "reference: no int %s\n", PwOpName(ins.op));
              std::exit(3);
          }
        }
        break;
      case PwOp::kEq:
      case PwOp::kNe:
      case PwOp::kLt:
      case PwOp::kLe:
      case PwOp::kGt:
      case PwOp::kGe:
        if (IsFloat(arg_dtype(0))) {
          const Val &a = arg(0), &b = arg(1);
          r.i = CompareOp(ins.op, a.f, b.f);
          // Could the allowed error flip it?
          for (double da : {-a.err, a.err}) {
            for (double db : {-b.err, b.err}) {
              if ((a.err > 0 || b.err > 0) && CompareOp(ins.op, a.f + da, b.f + db) != (r.i != 0)) {
                undefined = true;
              }
            }
          }
        } else {
          r.i = CompareOp(ins.op, arg(0).i, arg(1).i);
          if (arg(0).err > 0 || arg(1).err > 0) undefined = true;
        }
        break;
      case PwOp::kAnd:
        r.i = arg(0).i && arg(1).i;
        break;
      case PwOp::kOr:
        r.i = arg(0).i || arg(1).i;
        break;
      case PwOp::kNot:
        r.i = !arg(0).i;
        break;
      case PwOp::kWhere:
        r = arg(0).i ? arg(1) : arg(2);
        break;
      case PwOp::kStore: {
        // Through memory, so that the value is exactly what the dtype holds.
        unsigned char bytes[8] = {};
        Store(arg(0), d, bytes);
        stored[ins.operand] = Load(bytes, d);
        stored[ins.operand].err = arg(0).err;
        stored[ins.operand].undefined = undefined;
        break;
      }
      default:  // unary
        if (IsFloat(d)) {
          auto f = [op = ins.op](const auto& x) { return FloatUnary(op, x[0]); };
          r = d == DType::kF32 ? FloatApply<float>(f, {arg(0)}, IsTranscendental(ins.op), d)
                               : FloatApply<double>(f, {arg(0)}, IsTranscendental(ins.op), d);
        } else {
          if (arg(0).err > 0) undefined = true;
          const int64_t x = arg(0).i;
          switch (ins.op) {
            case PwOp::kNeg:
              r.i = Wrap(static_cast<int64_t>(0 - static_cast<uint64_t>(x)), d);
              break;
            case PwOp::kAbs:
              r.i = x < 0 ? Wrap(static_cast<int64_t>(0 - static_cast<uint64_t>(x)), d) : x;
              break;
            default:
              r.i = x;
              break;  // floor/ceil/round are the identity on integers
          }
        }
        break;
    }
    r.undefined |= undefined;
    v[idx] = r;
  }
  return stored;
}

// Whether `got` is acceptable for `want` (a stored value with its error bound).
bool Matches(const Val& got, const Val& want, DType d) {
  if (want.undefined || !std::isfinite(want.err)) return true;
  if (IsFloat(d)) {
    const double g = FloatOf(got, d), w = FloatOf(want, d);
    if (std::isnan(w) || std::isnan(g)) return std::isnan(w) && std::isnan(g);
    if (g == w) return true;
    if (want.err == 0) return false;
    // Plus one ulp of the stored format when it is narrower than the computation.
    const double storage_ulp = d == DType::kBF16  ? std::ldexp(std::max(std::fabs(w), 0x1p-126), -7)
                               : d == DType::kF16 ? std::ldexp(std::max(std::fabs(w), 0x1p-14), -10)
                                                  : 0.0;
    return std::fabs(g - w) <= want.err + storage_ulp;
  }
  return got.i == want.i;
}

// ---------------------------------------------------------------------------------------------
// Layouts and buffers
// ---------------------------------------------------------------------------------------------

struct Layout {
  std::vector<int64_t> strides;  // elements, in the iteration space
  int64_t storage = 0;           // elements of backing storage
};

std::vector<int64_t> RowMajor(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size());
  int64_t run = 1;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    s[d] = run;
    run *= shape[d];
  }
  return s;
}

int64_t Numel(const std::vector<int64_t>& shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
}

Layout Contiguous(const std::vector<int64_t>& shape) {
  return {RowMajor(shape), std::max<int64_t>(Numel(shape), 1)};
}

// A permuted, padded view; inputs may also broadcast dims (stride 0).
Layout RandomView(const std::vector<int64_t>& shape, bool input, std::mt19937_64& rng) {
  const int rank = static_cast<int>(shape.size());
  std::vector<int> order(rank);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);  // order[0] is the outermost physical dim
  Layout l;
  l.strides.assign(rank, 0);
  int64_t run = 1;
  for (int j = rank - 1; j >= 0; --j) {
    const int d = order[j];
    const bool broadcast = input && shape[d] > 1 && rng() % 3 == 0;
    if (broadcast) continue;  // stride 0, takes no storage
    l.strides[d] = run;
    run *= shape[d] + (j == rank - 1 ? static_cast<int64_t>(rng() % 3) + 1 : 0);  // pad innermost
  }
  l.storage = std::max<int64_t>(run, 1);
  return l;
}

// Random bytes for an operand of dtype d, with special values mixed in for floats.
std::vector<unsigned char> RandomData(DType d, int64_t count, std::mt19937_64& rng) {
  std::vector<unsigned char> bytes(count * Bytes(d));
  std::uniform_real_distribution<double> uniform(-4.0, 4.0);
  const double specials[] = {0.0,     -0.0, 0.5,      -0.5,      1.5,    2.5,
                             -2.5,    NAN,  INFINITY, -INFINITY, 1e-40,  65504.0,
                             70000.0, 3e38, -1e-3,    100.25,    -300.75};
  for (int64_t e = 0; e < count; ++e) {
    unsigned char* p = bytes.data() + e * Bytes(d);
    const bool special = rng() % 8 == 0;
    Val v;
    switch (d) {
      case DType::kF32:
      case DType::kF64:
        v.f = Round(special ? specials[rng() % std::size(specials)] : uniform(rng), d);
        break;
      case DType::kF16:
      case DType::kBF16:
        v.i = rng() & 0xffff;
        break;  // every pattern: NaNs, infs, denormals
      case DType::kBool:
        v.i = rng() % 2;
        break;
      case DType::kI32:
      case DType::kI64:
        // Small values mostly (so float conversions stay in range), sometimes any bits.
        v.i = special ? Wrap(static_cast<int64_t>(rng()), d)
                      : static_cast<int64_t>(rng() % 2001) - 1000;
        break;
      default:
        v.i = Wrap(static_cast<int64_t>(rng()), d);
        break;
    }
    Store(v, d, p);
  }
  return bytes;
}

// ---------------------------------------------------------------------------------------------
// Running one case
// ---------------------------------------------------------------------------------------------

struct Device {
  CUdevice device;
  CUcontext context;
  int cc_major = 0, cc_minor = 0, num_sms = 0;
};

struct LoadedKernel {
  CUfunction contig = nullptr, strided = nullptr;
  int contig_blocks_per_sm = 0, strided_blocks_per_sm = 0;
};

class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) : bytes_(std::max<size_t>(bytes, 1)) {
    CU_CHECK(cuMemAlloc(&ptr_, bytes_));
  }
  ~DeviceBuffer() { cuMemFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  CUdeviceptr ptr() const { return ptr_; }
  void Upload(const std::vector<unsigned char>& host) {
    CU_CHECK(cuMemcpyHtoD(ptr_, host.data(), host.size()));
  }
  void Download(std::vector<unsigned char>& host) {
    CU_CHECK(cuMemcpyDtoH(host.data(), ptr_, host.size()));
  }

 private:
  size_t bytes_;
  CUdeviceptr ptr_ = 0;
};

// Launches an entry point with its by-value parameter block: pointers, then (strided) strides.
void Launch(CUfunction fn, const std::vector<CUdeviceptr>& ptrs,
            const std::vector<std::vector<int64_t>>* strides, int64_t grid, CUstream stream) {
  std::vector<unsigned char> params(ptrs.size() * 8);
  std::memcpy(params.data(), ptrs.data(), ptrs.size() * 8);
  if (strides) {
    for (const auto& s : *strides) {
      const size_t at = params.size();
      params.resize(at + s.size() * 8);
      std::memcpy(params.data() + at, s.data(), s.size() * 8);
    }
  }
  void* args[] = {params.data()};
  CU_CHECK(cuLaunchKernel(fn, static_cast<unsigned>(grid), 1, 1, kCudaBlockSize, 1, 1, 0, stream,
                          args, nullptr));
}

int64_t UlpDistance(double a, double b, DType d) {
  if (d == DType::kF32) {
    int32_t ia, ib;
    const float fa = static_cast<float>(a), fb = static_cast<float>(b);
    std::memcpy(&ia, &fa, 4);
    std::memcpy(&ib, &fb, 4);
    if (ia < 0) ia = std::numeric_limits<int32_t>::min() - ia;
    if (ib < 0) ib = std::numeric_limits<int32_t>::min() - ib;
    return std::llabs(static_cast<int64_t>(ia) - ib);
  }
  int64_t ia, ib;
  std::memcpy(&ia, &a, 8);
  std::memcpy(&ib, &b, 8);
  if (ia < 0) ia = std::numeric_limits<int64_t>::min() - ia;
  if (ib < 0) ib = std::numeric_limits<int64_t>::min() - ib;
  const __int128 diff = static_cast<__int128>(ia) - ib;
  return diff < 0 ? static_cast<int64_t>(-diff) : static_cast<int64_t>(diff);
}

// Runs one kernel through both entry points; returns the number of mismatching elements.
int RunKernel(const PointwiseKernel& k, const CudaKernelLaunchInfo& info, const LoadedKernel& fns,
              const Device& dev, std::mt19937_64& rng) {
  const int n_in = static_cast<int>(k.input_dtypes.size());
  const int num_operands = k.num_operands();
  const int64_t numel = Numel(k.shape);
  int failures = 0;
  for (const bool strided : {false, true}) {
    std::vector<Layout> layouts;
    for (int o = 0; o < num_operands; ++o) {
      layouts.push_back(strided ? RandomView(k.shape, o < n_in, rng) : Contiguous(k.shape));
    }
    // Outputs get guard elements past the end and a sentinel fill, to catch stray writes.
    constexpr int kGuard = 64;
    constexpr unsigned char kSentinel = 0xA5;
    std::vector<std::vector<unsigned char>> host(num_operands);
    std::vector<std::unique_ptr<DeviceBuffer>> bufs;
    std::vector<CUdeviceptr> ptrs;
    for (int o = 0; o < num_operands; ++o) {
      const DType d = k.operand_dtype(o);
      if (o < n_in) {
        host[o] = RandomData(d, layouts[o].storage, rng);
      } else {
        host[o].assign((layouts[o].storage + kGuard) * Bytes(d), kSentinel);
      }
      bufs.push_back(std::make_unique<DeviceBuffer>(host[o].size()));
      bufs.back()->Upload(host[o]);
      ptrs.push_back(bufs.back()->ptr());
    }
    std::vector<std::vector<int64_t>> strides;
    for (const Layout& l : layouts) strides.push_back(l.strides);

    const int64_t grid =
        strided ? GridSize(numel, 1, kCudaBlockSize, dev.num_sms, fns.strided_blocks_per_sm)
                : GridSize(numel, info.elements_per_thread, kCudaBlockSize, dev.num_sms,
                           fns.contig_blocks_per_sm);
    if (grid > 0) {
      Launch(strided ? fns.strided : fns.contig, ptrs, strided ? &strides : nullptr, grid, nullptr);
      CU_CHECK(cuCtxSynchronize());
    }
    std::vector<std::vector<unsigned char>> got(num_operands);
    std::vector<std::vector<bool>> written(num_operands);
    for (int o = n_in; o < num_operands; ++o) {
      got[o].resize(host[o].size());
      bufs[o]->Download(got[o]);
      written[o].assign(host[o].size() / Bytes(k.operand_dtype(o)), false);
    }

    const char* variant = strided ? "strided" : "contig";
    int reported = 0;
    auto report = [&](const std::string& what) {
      ++failures;
      if (++reported <= 5)
        std::printf("  MISMATCH %s %s: %s\n", k.name.c_str(), variant, what.c_str());
    };
    std::vector<int64_t> coord(k.shape.size(), 0);
    for (int64_t e = 0; e < numel; ++e) {
      std::vector<int64_t> off(num_operands, 0);
      for (int o = 0; o < num_operands; ++o) {
        for (size_t d = 0; d < coord.size(); ++d) off[o] += coord[d] * layouts[o].strides[d];
      }
      auto in = [&](int o) { return host[o].data() + off[o] * Bytes(k.operand_dtype(o)); };
      const std::vector<Val> want = EvalPoint(k, in, /*contract=*/false);
      const std::vector<Val> want_fma = EvalPoint(k, in, /*contract=*/true);
      for (int o = n_in; o < num_operands; ++o) {
        const DType d = k.operand_dtype(o);
        written[o][off[o]] = true;
        const Val g = Load(got[o].data() + off[o] * Bytes(d), d);
        const Val& w = want[o - n_in];
        if (!Matches(g, w, d) && !Matches(g, want_fma[o - n_in], d)) {
          char what[256];
          std::snprintf(
              what, sizeof(what), "element %lld, out%d (%s): got %.9g / %lld, want %.9g / %lld%s",
              static_cast<long long>(e), o - n_in, Name(d), IsFloat(d) ? FloatOf(g, d) : 0.0,
              static_cast<long long>(g.i), FloatOf(w, d), static_cast<long long>(w.i),
              w.err > 0 ? " (with error bound)" : "");
          report(what);
        }
      }
      for (int d = static_cast<int>(coord.size()) - 1; d >= 0; --d) {
        if (++coord[d] < k.shape[d]) break;
        coord[d] = 0;
      }
    }
    // Nothing but the view's elements may change: padding and the guard keep the sentinel.
    for (int o = n_in; o < num_operands; ++o) {
      const int b = Bytes(k.operand_dtype(o));
      for (size_t idx = 0; idx < written[o].size(); ++idx) {
        if (written[o][idx]) continue;
        for (int j = 0; j < b; ++j) {
          if (got[o][idx * b + j] != kSentinel) {
            report("out" + std::to_string(o - n_in) + " element storage " + std::to_string(idx) +
                   " outside the view was written");
            break;
          }
        }
      }
    }
  }
  return failures;
}

LoadedKernel LoadKernel(CUmodule module, const CudaKernelLaunchInfo& info) {
  LoadedKernel l;
  CU_CHECK(cuModuleGetFunction(&l.contig, module, info.contig_entry.c_str()));
  CU_CHECK(cuModuleGetFunction(&l.strided, module, info.strided_entry.c_str()));
  CU_CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&l.contig_blocks_per_sm, l.contig,
                                                       info.block_size, 0));
  CU_CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&l.strided_blocks_per_sm, l.strided,
                                                       info.block_size, 0));
  return l;
}

CudaModule CompileOrExit(const std::vector<PointwiseKernel>& kernels, const Device& dev) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<CudaModule> module =
      CompileCudaKernels(kernels, CudaTarget{.cc_major = dev.cc_major, .cc_minor = dev.cc_minor});
  if (!module.ok()) {
    std::fprintf(stderr, "compile failed: %s\n", module.status().ToString().c_str());
    std::exit(2);
  }
  std::printf(
      "compiled %zu kernel(s) for sm_%d%d in %.0f ms (PTX %zu B, cubin %zu B)\n", kernels.size(),
      dev.cc_major, dev.cc_minor,
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(),
      module->ptx.size(), module->cubin.size());
  return *std::move(module);
}

std::vector<PointwiseKernel> CorrectnessKernels() {
  std::vector<PointwiseKernel> kernels = {
      FusedReluKernel("relu_tail", {37, 129}),      // numel % 4 != 0: the tail
      FusedReluKernel("relu_waves", {3001, 1001}),  // more vectors than one wave of threads
      FusedReluKernel("relu_scalar", {}),           // rank 0
      FusedReluKernel("relu_empty", {4, 0}),        // nothing to launch
      FusedReluKernel("relu_ones", {6, 1, 10, 1}),  // size-1 dims
      Bf16GeluKernel("gelu_bf16", {16, 1000, 3}),
      WhereCompareKernel("where_compare", {33, 65}),
      I64AddKernel("add_i64", {1000, 1001}),
      MultiOutputKernel("multi_output_f16", {5, 1, 77}),
      LogicAndHalfCastsKernel("logic_half_casts", {257, 3}),
  };
  for (DType dt :
       {DType::kF32, DType::kF64, DType::kI8, DType::kI16, DType::kI32, DType::kI64, DType::kU8}) {
    kernels.push_back(AllOpsKernel(std::string("ops_") + Name(dt), dt, {9, 130}));
  }
  return kernels;
}

// Average time of `reps` back-to-back launches, in ms.
template <typename F>
double TimeMs(F launch, int reps = 20) {
  CUevent start, stop;
  CU_CHECK(cuEventCreate(&start, CU_EVENT_DEFAULT));
  CU_CHECK(cuEventCreate(&stop, CU_EVENT_DEFAULT));
  for (int i = 0; i < 3; ++i) launch();  // warm up
  CU_CHECK(cuEventRecord(start, nullptr));
  for (int i = 0; i < reps; ++i) launch();
  CU_CHECK(cuEventRecord(stop, nullptr));
  CU_CHECK(cuEventSynchronize(stop));
  float ms = 0;
  CU_CHECK(cuEventElapsedTime(&ms, start, stop));
  cuEventDestroy(start);
  cuEventDestroy(stop);
  return ms / reps;
}

// Effective bandwidth (bytes read + written per launch / time) of large kernels.
void Bench(const Device& dev) {
  constexpr int64_t kRows = 16384, kCols = 16384;  // 2^28 elements
  const std::vector<int64_t> shape = {kRows, kCols};
  KernelBuilder add("bench_add_f32", shape);
  add.Output(add.Op(PwOp::kAdd, DType::kF32, {add.Input(DType::kF32), add.Input(DType::kF32)}));
  KernelBuilder copy_bf16("bench_copy_bf16", shape);
  copy_bf16.Output(copy_bf16.Input(DType::kBF16));
  KernelBuilder relu("bench_relu_f32", shape);
  const int x = relu.Input(DType::kF32);
  relu.Output(relu.Op(PwOp::kMaximum, DType::kF32, {x, relu.Const(DType::kF32, 0.0)}));
  KernelBuilder upcast("bench_bf16_to_f32", shape);
  upcast.Output(upcast.Cast(upcast.Input(DType::kBF16), DType::kF32));
  // Dropout's shape: where(mask, x * 2, 0) with a bool mask.
  KernelBuilder dropout("bench_mask_f32_bool", shape);
  const int dx = dropout.Input(DType::kF32), mask = dropout.Input(DType::kBool);
  dropout.Output(
      dropout.Op(PwOp::kWhere, DType::kF32,
                 {mask, dropout.Op(PwOp::kMul, DType::kF32, {dx, dropout.Const(DType::kF32, 2.0)}),
                  dropout.Const(DType::kF32, 0.0)}));
  const std::vector<PointwiseKernel> kernels = {add.kernel(),
                                                FusedReluKernel("bench_relu_fma", shape),
                                                relu.kernel(),
                                                Bf16GeluKernel("bench_gelu_bf16", shape),
                                                copy_bf16.kernel(),
                                                upcast.kernel(),
                                                WhereCompareKernel("bench_where_bool", shape),
                                                dropout.kernel()};
  const CudaModule module = CompileOrExit(kernels, dev);
  CUmodule cu_module;
  CU_CHECK(cuModuleLoadData(&cu_module, module.cubin.data()));
  const int64_t numel = kRows * kCols;

  // Baseline: a device-to-device copy of 1 GiB.
  {
    DeviceBuffer a(numel * 4), b(numel * 4);
    const double ms =
        TimeMs([&] { CU_CHECK(cuMemcpyDtoDAsync(b.ptr(), a.ptr(), numel * 4, nullptr)); });
    std::printf("bench %-22s %8.3f ms %7.0f GB/s\n", "cuMemcpyDtoD 1 GiB", ms,
                2.0 * numel * 4 / ms / 1e6);
  }
  for (size_t i = 0; i < kernels.size(); ++i) {
    const PointwiseKernel& k = kernels[i];
    const CudaKernelLaunchInfo& info = module.kernels[i].launch;
    const LoadedKernel fns = LoadKernel(cu_module, info);
    int64_t bytes = 0;
    std::vector<std::unique_ptr<DeviceBuffer>> bufs;
    std::vector<CUdeviceptr> ptrs;
    for (int o = 0; o < k.num_operands(); ++o) {
      const int b = Bytes(k.operand_dtype(o));
      bytes += numel * b;
      bufs.push_back(std::make_unique<DeviceBuffer>(numel * b));
      CU_CHECK(cuMemsetD8(bufs.back()->ptr(), 0x3c, numel * b));
      ptrs.push_back(bufs.back()->ptr());
    }
    const int64_t grid = GridSize(numel, info.elements_per_thread, info.block_size, dev.num_sms,
                                  fns.contig_blocks_per_sm);
    const double ms = TimeMs([&] { Launch(fns.contig, ptrs, nullptr, grid, nullptr); });
    std::printf("bench %-22s %8.3f ms %7.0f GB/s  (contig, vec %d, grid %lld, %d blocks/SM)\n",
                k.name.c_str(), ms, bytes / ms / 1e6, info.elements_per_thread,
                static_cast<long long>(grid), fns.contig_blocks_per_sm);
    // The strided entry on the same contiguous data, then with the last input broadcast along
    // dim 0 (a bias) and with the first input transposed.
    std::vector<std::vector<int64_t>> strides(k.num_operands(), std::vector<int64_t>{kCols, 1});
    const int64_t sgrid =
        GridSize(numel, 1, info.block_size, dev.num_sms, fns.strided_blocks_per_sm);
    const double sms = TimeMs([&] { Launch(fns.strided, ptrs, &strides, sgrid, nullptr); });
    std::printf("bench %-22s %8.3f ms %7.0f GB/s  (strided entry, contiguous data)\n", "", sms,
                bytes / sms / 1e6);
    if (k.input_dtypes.size() >= 2) {
      auto bcast = strides;
      bcast[k.input_dtypes.size() - 1] = {0, 1};
      const double bms = TimeMs([&] { Launch(fns.strided, ptrs, &bcast, sgrid, nullptr); });
      std::printf("bench %-22s %8.3f ms %7.0f GB/s  (strided, last input broadcast over rows)\n",
                  "", bms, (bytes - numel * Bytes(k.input_dtypes.back())) / bms / 1e6);
      auto transposed = strides;
      transposed[0] = {1, kRows};
      const double tms = TimeMs([&] { Launch(fns.strided, ptrs, &transposed, sgrid, nullptr); });
      std::printf("bench %-22s %8.3f ms %7.0f GB/s  (strided, first input transposed)\n", "", tms,
                  bytes / tms / 1e6);
    }
  }
  CU_CHECK(cuModuleUnload(cu_module));
}

}  // namespace
}  // namespace tccd::codegen::cuda_testing

int main(int argc, char** argv) {
  using namespace tccd::codegen;
  using namespace tccd::codegen::cuda_testing;
  const bool bench = argc > 1 && std::string(argv[1]) == "--bench";

  Device dev;
  CU_CHECK(cuInit(0));
  CU_CHECK(cuDeviceGet(&dev.device, 0));
  CU_CHECK(cuDeviceGetAttribute(&dev.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                dev.device));
  CU_CHECK(cuDeviceGetAttribute(&dev.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                dev.device));
  CU_CHECK(
      cuDeviceGetAttribute(&dev.num_sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev.device));
  char name[256] = {};
  CU_CHECK(cuDeviceGetName(name, sizeof(name), dev.device));
  CU_CHECK(cuDevicePrimaryCtxRetain(&dev.context, dev.device));
  CU_CHECK(cuCtxSetCurrent(dev.context));
  std::printf("device: %s, sm_%d%d, %d SMs\n", name, dev.cc_major, dev.cc_minor, dev.num_sms);

  const std::vector<PointwiseKernel> kernels = CorrectnessKernels();
  const CudaModule module = CompileOrExit(kernels, dev);
  CUmodule cu_module;
  CU_CHECK(cuModuleLoadData(&cu_module, module.cubin.data()));
  std::mt19937_64 rng(20261122);
  int total_failures = 0;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const LoadedKernel fns = LoadKernel(cu_module, module.kernels[i].launch);
    const int failures = RunKernel(kernels[i], module.kernels[i].launch, fns, dev, rng);
    std::printf("%-5s %-18s numel %-8lld vec %-2d outputs %-3zu (%d/%d blocks/SM contig/strided)\n",
                failures ? "FAIL" : "ok", kernels[i].name.c_str(),
                static_cast<long long>(module.kernels[i].launch.numel),
                module.kernels[i].launch.elements_per_thread, kernels[i].output_dtypes.size(),
                fns.contig_blocks_per_sm, fns.strided_blocks_per_sm);
    total_failures += failures;
  }
  CU_CHECK(cuModuleUnload(cu_module));
  if (bench) Bench(dev);
  std::printf("%s: %d mismatching element(s)\n", total_failures ? "FAILED" : "PASSED",
              total_failures);
  return total_failures ? 1 : 0;
}
