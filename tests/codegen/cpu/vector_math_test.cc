// The inline transcendentals (codegen/cpu/vector_math.h) in compiled kernels: max ulp error
// against libm's double result over a sweep of every binade, special values and branch points,
// on the baseline ISA (no FMA) and x86-64-v3 (FMA); and that kernels using them vectorise and
// import nothing.
//
// The hidden test "[.exhaustive]" checks every f32 input (a few minutes):
//   cpu_backend_test "[.exhaustive]"
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "codegen/llvm/elf_symbols.h"
#include "test_util.h"

namespace tccd::codegen::testing {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

float FloatFromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

double DoubleFromBits(uint64_t u) {
  double d;
  std::memcpy(&d, &u, 8);
  return d;
}

template <typename T>
T Sigmoid(T x) {
  // exp(x) / (1 + exp(x)) for x < 0 keeps the tiny results that 1 / (1 + exp(-x)) loses.
  if (x < 0) return std::exp(x) / (1 + std::exp(x));
  return 1 / (1 + std::exp(-x));
}

// References: libm's double functions for f32 results, long double ones for f64 results.
struct MathCase {
  PwOp op;
  double (*ref32)(double);
  long double (*ref64)(long double);
  double f32_bound;  // max error in ulps of the f32 result
  double f64_bound;  // same for f64; 0: no inline f64 version (libm)
};

// The bounds vector_math.h promises. f32: the exhaustive maxima (with and without FMA) rounded
// up to a half ulp; f64 (sampled, not exhaustive): a half ulp or more above the sweep's maxima.
const std::vector<MathCase>& Cases() {
  static const std::vector<MathCase> cases = {
      {PwOp::kExp, [](double x) { return std::exp(x); }, [](long double x) { return std::exp(x); },
       1.0, 1.5},
      {PwOp::kExpm1, [](double x) { return std::expm1(x); },
       [](long double x) { return std::expm1(x); }, 1.5, 1.5},
      {PwOp::kLog, [](double x) { return std::log(x); }, [](long double x) { return std::log(x); },
       1.0, 1.5},
      {PwOp::kLog1p, [](double x) { return std::log1p(x); },
       [](long double x) { return std::log1p(x); }, 1.0, 1.5},
      {PwOp::kTanh, [](double x) { return std::tanh(x); },
       [](long double x) { return std::tanh(x); }, 1.5, 3.0},
      {PwOp::kSigmoid, Sigmoid<double>, Sigmoid<long double>, 2.5, 3.0},
      {PwOp::kErf, [](double x) { return std::erf(x); }, [](long double x) { return std::erf(x); },
       1.5, 0},
      {PwOp::kSin, [](double x) { return std::sin(x); }, [](long double x) { return std::sin(x); },
       1.0, 0},
      {PwOp::kCos, [](double x) { return std::cos(x); }, [](long double x) { return std::cos(x); },
       1.0, 0},
  };
  return cases;
}

// |got - want| in units of T's ulp at `want` (the exact value, as far as the wider reference
// type holds it); infinite for a wrong NaN, infinity or sign of zero.
template <typename T, typename Wide>
double UlpError(T got, Wide want) {
  constexpr double kInfD = std::numeric_limits<double>::infinity();
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got) ? 0 : kInfD;
  const T rounded = static_cast<T>(want);
  if (std::isinf(rounded) || std::isinf(got)) return got == rounded ? 0 : kInfD;
  if (got == 0 && want == 0) return std::signbit(got) == std::signbit(want) ? 0 : kInfD;
  constexpr int kDigits = std::numeric_limits<T>::digits;                  // 24 or 53
  constexpr int kMinExp = std::numeric_limits<T>::min_exponent - kDigits;  // -149 or -1074
  int e = kMinExp + kDigits;
  if (want != 0) std::frexp(want, &e);  // |want| in [2^(e-1), 2^e)
  const Wide ulp = std::ldexp(Wide{1}, std::max(e - kDigits, kMinExp));
  return static_cast<double>(std::fabs(static_cast<Wide>(got) - want) / ulp);
}

// Special values with the ulps around them: overflow/underflow thresholds, branch points of
// the implementations (f32 and f64 ones both, in T), zeros, infinities, NaN, denormals.
template <typename T>
void AddSpecials(std::vector<T>& v) {
  constexpr T inf = std::numeric_limits<T>::infinity();
  const T specials[] = {
      0, -T{0}, inf, -inf, std::numeric_limits<T>::quiet_NaN(),
      std::numeric_limits<T>::denorm_min(), -std::numeric_limits<T>::denorm_min(),
      std::numeric_limits<T>::min(), -std::numeric_limits<T>::min(), std::numeric_limits<T>::max(),
      -std::numeric_limits<T>::max(), 1, -1, 2, T(0.5), T(-0.5), T(0.34657359027997264),
      T(-0.34657359027997264), T(0.625), T(-0.625), T(0.921875), T(-0.921875), T(3.9192059), 4, -4,
      T(0.7071067811865476), T(1.4142135623730951), T(0x1p-24), T(0x1p-25), T(0x1p-54), -17, -18,
      -40, 9, T(9.1), -9, 20, -20, T(1e-20), T(-1e-20), T(44.36142), T(-44.36142),
      // exp's overflow and underflow thresholds (f32, f64) and clamps.
      T(88.72283935546875), T(-87.33654475), T(-88.72283935546875), T(-103.97208), -104, T(88.8),
      T(709.782712893384), T(-708.3964185322641), T(-745.1332191019411), T(709.8), -746, -150,
      T(-0.99999994), T(-0.9999999999999999)};
  for (T s : specials) {
    v.push_back(s);
    T up = s, down = s;
    for (int i = 0; i < 16; ++i) {
      up = std::nextafter(up, inf);
      down = std::nextafter(down, -inf);
      v.push_back(up);
      v.push_back(down);
    }
  }
}

// Every binade of both signs (2^20 bit patterns with varied low bits, so denormals, infinities
// and NaNs included), a dense linear sweep of [-20, 20], and the special values.
template <typename T>
std::vector<T> SweepInputs() {
  std::vector<T> v;
  for (uint32_t i = 0; i < (1u << 20); ++i) {
    const uint32_t low = (i * 2654435761u) >> 20;  // 12 varied bits
    if constexpr (sizeof(T) == 4) {
      v.push_back(FloatFromBits(i << 12 | low));
    } else {
      v.push_back(DoubleFromBits(uint64_t{i} << 44 | uint64_t{low} << 32 | i * 2654435761u));
    }
  }
  for (int i = 0; i <= (1 << 18); ++i) v.push_back(T(-20) + T(40) * T(i) / (1 << 18));
  AddSpecials(v);
  return v;
}

// One kernel evaluating every case (that has an inline version in T) on one input of T.
template <typename T>
PointwiseKernel MathKernel(const std::string& name, int64_t n) {
  constexpr DType dtype = sizeof(T) == 4 ? DType::kF32 : DType::kF64;
  KernelBuilder k(name, {n});
  const int x = k.Input(dtype);
  for (const MathCase& c : Cases()) k.Output(k.Op(c.op, dtype, {x}));
  return k.kernel();
}

template <typename T>
struct MaxError {
  double ulps = 0;
  T input = 0;  // the first input with that error
  T got = 0;
};

// Runs the kernel over `inputs` and returns the max error of each case.
template <typename T>
std::vector<MaxError<T>> Measure(KernelFn fn, const std::vector<T>& inputs) {
  const int64_t n = static_cast<int64_t>(inputs.size());
  const size_t num_cases = Cases().size();
  std::vector<std::vector<T>> out(num_cases, std::vector<T>(n));
  std::vector<void*> data = {const_cast<T*>(inputs.data())};
  for (auto& o : out) data.push_back(o.data());
  RunContiguous(fn, {n}, data);
  std::vector<MaxError<T>> errors(num_cases);
  for (size_t c = 0; c < num_cases; ++c) {
    for (int64_t i = 0; i < n; ++i) {
      double e;
      if constexpr (sizeof(T) == 4) {
        e = UlpError(out[c][i], Cases()[c].ref32(inputs[i]));
      } else {
        e = UlpError(out[c][i], Cases()[c].ref64(inputs[i]));
      }
      if (e > errors[c].ulps) errors[c] = {e, inputs[i], out[c][i]};
    }
  }
  return errors;
}

// The functions called from `ir`, except LLVM intrinsics and the module's own tccd.* helpers
// (vector_math.h's sin/cos/pow functions).
std::set<std::string> CalledFunctions(const std::string& ir) {
  std::set<std::string> called;
  for (size_t at = ir.find(" @"); at != std::string::npos; at = ir.find(" @", at + 2)) {
    const size_t line = ir.rfind('\n', at) + 1;
    if (ir.find("call ", line) > at) continue;  // not a call on this line
    const std::string callee = ir.substr(at + 2, ir.find('(', at) - at - 2);
    if (callee.rfind("llvm.", 0) != 0 && callee.rfind("tccd.", 0) != 0) called.insert(callee);
  }
  return called;
}

// x86-64 ISA levels the host can run, lowest first.
std::vector<std::string> RunnableLevels() {
  const std::vector<std::string> levels = {"x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"};
  const std::string host = HostTarget().cpu;
  std::vector<std::string> runnable;
  for (const std::string& level : levels) {
    runnable.push_back(level);
    if (level == host) break;
  }
  return runnable;
}

// Checks every case's max error over `inputs` on each runnable ISA level without FMA
// (x86-64) and with it (x86-64-v3 and up).
template <typename T>
void CheckBounds(const std::vector<T>& inputs) {
  const bool f32 = sizeof(T) == 4;
  for (const std::string& cpu : RunnableLevels()) {
    if (cpu == "x86-64-v2") continue;  // same arithmetic as x86-64 (no FMA)
    CpuTarget target = HostTarget();
    target.cpu = cpu;
    absl::StatusOr<CpuModule> module =
        CompileCpuKernels({MathKernel<T>("math", static_cast<int64_t>(inputs.size()))}, target);
    INFO(cpu << ": " << module.status().ToString());
    REQUIRE(module.ok());
    LoadedModule so(module->shared_object);
    const std::vector<MaxError<T>> errors = Measure(so.Get("math"), inputs);
    for (size_t c = 0; c < Cases().size(); ++c) {
      const double bound = f32 ? Cases()[c].f32_bound : Cases()[c].f64_bound;
      INFO(cpu << " " << (f32 ? "f32 " : "f64 ") << PwOpName(Cases()[c].op) << ": "
               << errors[c].ulps << " ulp at x = " << std::hexfloat << errors[c].input << " (got "
               << errors[c].got << ")");
      // f64 erf is libm's (bound 0 means: not inline); it is still checked to 1 ulp.
      CHECK(errors[c].ulps <= (bound == 0 ? 1.0 : bound));
    }
  }
}

TEST_CASE("inline f32 transcendentals stay within their ulp bounds with and without FMA",
          "[cpu_backend][vector_math]") {
  CheckBounds(SweepInputs<float>());
}

TEST_CASE("inline f64 transcendentals stay within their ulp bounds with and without FMA",
          "[cpu_backend][vector_math]") {
  CheckBounds(SweepInputs<double>());
}

TEST_CASE("inline f32 transcendentals over every f32 input", "[.exhaustive]") {
  const int64_t chunk = int64_t{1} << 24;
  for (const std::string& cpu : {std::string("x86-64"), HostTarget().cpu}) {
    CpuTarget target = HostTarget();
    target.cpu = cpu;
    absl::StatusOr<CpuModule> module =
        CompileCpuKernels({MathKernel<float>("math", chunk)}, target);
    REQUIRE(module.ok());
    LoadedModule so(module->shared_object);
    std::vector<MaxError<float>> total(Cases().size());
    std::vector<float> inputs(chunk);
    for (uint64_t base = 0; base < (uint64_t{1} << 32); base += chunk) {
      for (int64_t i = 0; i < chunk; ++i) {
        inputs[i] = FloatFromBits(static_cast<uint32_t>(base + i));
      }
      const std::vector<MaxError<float>> errors = Measure(so.Get("math"), inputs);
      for (size_t c = 0; c < total.size(); ++c) {
        if (errors[c].ulps > total[c].ulps) total[c] = errors[c];
      }
    }
    for (size_t c = 0; c < Cases().size(); ++c) {
      std::printf("%-10s %-8s max %.3f ulp at %a (got %a)\n", cpu.c_str(), PwOpName(Cases()[c].op),
                  total[c].ulps, total[c].input, total[c].got);
      std::fflush(stdout);
      CHECK(total[c].ulps <= Cases()[c].f32_bound);
    }
  }
}

TEST_CASE("kernels using transcendentals vectorise and import nothing",
          "[cpu_backend][vector_math]") {
  // Each unary op alone, gelu_backward (the fused shape that motivated inline math), a bf16
  // kernel (f32 math between the conversions) and the f64 versions.
  std::vector<PointwiseKernel> kernels;
  for (const MathCase& c : Cases()) {
    KernelBuilder k(std::string("k_") + PwOpName(c.op), {4096});
    k.Output(k.Op(c.op, DType::kF32, {k.Input(DType::kF32)}));
    kernels.push_back(k.kernel());
  }
  {
    // gelu_backward: dy * (cdf + x * pdf), cdf = 0.5 * (1 + erf(x / sqrt2)),
    // pdf = exp(-x^2 / 2) / sqrt(2 pi).
    KernelBuilder k("k_gelu_backward", {4096});
    const int dy = k.Input(DType::kF32), x = k.Input(DType::kF32);
    auto c = [&](double v) { return k.Const(DType::kF32, v); };
    auto op = [&](PwOp o, std::vector<int> args) { return k.Op(o, DType::kF32, std::move(args)); };
    const int erf = op(PwOp::kErf, {op(PwOp::kMul, {x, c(M_SQRT1_2)})});
    const int cdf = op(PwOp::kMul, {c(0.5), op(PwOp::kAdd, {erf, c(1.0)})});
    const int x2 = op(PwOp::kMul, {x, x});
    const int pdf =
        op(PwOp::kMul, {op(PwOp::kExp, {op(PwOp::kMul, {x2, c(-0.5)})}), c(0.3989422804014327)});
    k.Output(op(PwOp::kMul, {dy, op(PwOp::kAdd, {cdf, op(PwOp::kMul, {x, pdf})})}));
    kernels.push_back(k.kernel());
  }
  {
    KernelBuilder k("k_bf16_tanh", {4096});
    const int x = k.Cast(k.Input(DType::kBF16), DType::kF32);
    k.Output(k.Cast(k.Op(PwOp::kTanh, DType::kF32, {x}), DType::kBF16));
    kernels.push_back(k.kernel());
  }
  for (const MathCase& c : Cases()) {
    if (c.f64_bound == 0) continue;  // libm for f64
    KernelBuilder k(std::string("k64_") + PwOpName(c.op), {4096});
    k.Output(k.Op(c.op, DType::kF64, {k.Input(DType::kF64)}));
    kernels.push_back(k.kernel());
  }
  CpuTarget target = HostTarget();
  target.cpu = "x86-64-v3";
  for (const PointwiseKernel& kernel : kernels) {
    INFO(kernel.name);
    absl::StatusOr<CpuModule> module = CompileCpuKernels({kernel}, target);
    INFO(module.status().ToString());
    REQUIRE(module.ok());
    const bool f64 = kernel.input_dtypes[0] == DType::kF64;
    CHECK(module->llvm_ir.find(f64 ? "<4 x double>" : "<8 x float>") != std::string::npos);
    // sin and cos call libm only from their vector functions' rare-lane blocks.
    std::set<std::string> allowed;
    if (kernel.name == "k_sin") allowed = {"sinf"};
    if (kernel.name == "k_cos") allowed = {"cosf"};
    if (!allowed.empty()) {
      CHECK(module->llvm_ir.find("call <8 x float> @tccd." + *allowed.begin() + ".v8(") !=
            std::string::npos);
    }
    CHECK(CalledFunctions(module->llvm_ir) == allowed);
    absl::StatusOr<DynamicSymbols> symbols = ReadDynamicSymbols(module->shared_object);
    REQUIRE(symbols.ok());
    CHECK(std::set<std::string>(symbols->undefined.begin(), symbols->undefined.end()) == allowed);
  }
}

TEST_CASE("inline transcendentals agree on the fast and the strided path",
          "[cpu_backend][vector_math]") {
  // The strided nest evaluates the same IR without vectorising; results must be bitwise equal.
  const int64_t n = 1000;
  const PointwiseKernel kernel = MathKernel<float>("math_paths", n);
  LoadedModule so(CompileForHost({kernel}).shared_object);
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = -30.f + 60.f * static_cast<float>(i) / n;
  const size_t m = Cases().size();
  std::vector<std::vector<float>> fast(m, std::vector<float>(n)),
      strided(m, std::vector<float>(2 * n));
  std::vector<void*> fast_data = {x.data()}, strided_data = {x.data()};
  std::vector<std::vector<int64_t>> strides = {{1}};
  for (size_t c = 0; c < m; ++c) {
    fast_data.push_back(fast[c].data());
    strided_data.push_back(strided[c].data());
    strides.push_back({2});
  }
  RunContiguous(so.Get("math_paths"), {n}, fast_data);
  const std::vector<int64_t> all_strides = ConcatStrides(strides);
  so.Get("math_paths")(strided_data.data(), all_strides.data());
  for (size_t c = 0; c < m; ++c) {
    for (int64_t i = 0; i < n; ++i) {
      INFO(PwOpName(Cases()[c].op) << "(" << x[i] << ")");
      REQUIRE(std::memcmp(&fast[c][i], &strided[c][2 * i], 4) == 0);
    }
  }
}

TEST_CASE("pow with the exponents ATen special-cases is plain arithmetic",
          "[cpu_backend][vector_math]") {
  // x^2, x^3, x^-2, x^0.5, x^-0.5 and x^-1 as ATen computes them (bitwise), vectorised; any
  // other exponent stays a libm pow.
  const int64_t n = 4096;
  const double exponents[] = {2.0, 3.0, -2.0, 0.5, -0.5, -1.0};
  KernelBuilder k("pow_consts", {n});
  const int x = k.Input(DType::kF32);
  for (double e : exponents) k.Output(k.Op(PwOp::kPow, DType::kF32, {x, k.Const(DType::kF32, e)}));
  CpuTarget target = HostTarget();
  target.cpu = "x86-64-v3";
  absl::StatusOr<CpuModule> module = CompileCpuKernels({k.kernel()}, target);
  REQUIRE(module.ok());
  CHECK(CalledFunctions(module->llvm_ir).empty());
  CHECK(module->llvm_ir.find("<8 x float>") != std::string::npos);
  LoadedModule so(CompileForHost({k.kernel()}).shared_object);  // the host may lack AVX2
  std::vector<float> in(n);
  for (int64_t i = 0; i < n; ++i) in[i] = -8.f + 16.f * static_cast<float>(i) / n;
  in[0] = -0.f;
  in[1] = -kInf;
  std::vector<std::vector<float>> out(std::size(exponents), std::vector<float>(n));
  std::vector<void*> data = {in.data()};
  for (auto& o : out) data.push_back(o.data());
  RunContiguous(so.Get("pow_consts"), {n}, data);
  for (int64_t i = 0; i < n; ++i) {
    const float v = in[i];
    const float want[] = {v * v,        v * v * v,          1.f / (v * v),
                          std::sqrt(v), 1.f / std::sqrt(v), 1.f / v};
    for (size_t e = 0; e < std::size(exponents); ++e) {
      INFO("pow(" << v << ", " << exponents[e] << ") = " << out[e][i] << ", want " << want[e]);
      CHECK((std::memcmp(&out[e][i], &want[e], 4) == 0 ||
             (std::isnan(out[e][i]) && std::isnan(want[e]))));
    }
  }
}

TEST_CASE("sin and cos take libm's value where the inline reduction does not reach",
          "[cpu_backend][vector_math]") {
  // |x| >= 2^20 and infinities, interleaved with ordinary arguments in the same vectors: the
  // rare lanes are libm's sinf/cosf bit for bit, the others the inline path's.
  std::vector<float> x;
  for (int i = 0; i < 4000; ++i) {
    x.push_back(0.37f * static_cast<float>(i));
    x.push_back((i % 3 == 0 ? -1.f : 1.f) *
                std::ldexp(1.f + static_cast<float>(i) / 4096, 20 + i % 100));
  }
  x.push_back(kInf);
  x.push_back(-kInf);
  const int64_t n = static_cast<int64_t>(x.size());
  KernelBuilder k("sin_cos", {n});
  const int in = k.Input(DType::kF32);
  k.Output(k.Op(PwOp::kSin, DType::kF32, {in}));
  k.Output(k.Op(PwOp::kCos, DType::kF32, {in}));
  LoadedModule so(CompileForHost({k.kernel()}).shared_object);
  std::vector<float> s(n), c(n);
  RunContiguous(so.Get("sin_cos"), {n}, {x.data(), s.data(), c.data()});
  for (int64_t i = 0; i < n; ++i) {
    INFO("x = " << std::hexfloat << x[i]);
    if (std::fabs(x[i]) >= 0x1p20f) {
      const float want_s = ::sinf(x[i]), want_c = ::cosf(x[i]);
      CHECK((std::memcmp(&s[i], &want_s, 4) == 0 || (std::isnan(s[i]) && std::isnan(want_s))));
      CHECK((std::memcmp(&c[i], &want_c, 4) == 0 || (std::isnan(c[i]) && std::isnan(want_c))));
    } else {
      CHECK(UlpError(s[i], std::sin(static_cast<double>(x[i]))) <= 1.0);
      CHECK(UlpError(c[i], std::cos(static_cast<double>(x[i]))) <= 1.0);
    }
  }
}

TEST_CASE("pow with tensor exponents stays within 1 ulp, special cases included",
          "[cpu_backend][vector_math]") {
  // x: both signs over every binade (denormals, zeros, infinities, NaN) and around 1; y: small
  // integers (odd and even), halves, large and tiny values, infinities and NaN. Every pair, so
  // the vectors mix the inline path with C99's special cases (left to libm).
  std::vector<float> xs = {0.f,  -0.f,  kInf, -kInf,      kNaN,        1.f,    -1.f,
                           0.5f, -0.5f, 2.f,  1.0000001f, 0.99999994f, 1e-45f, -1e-45f};
  for (uint32_t i = 0; i < 4096; ++i) {
    xs.push_back(FloatFromBits(i << 20 | (i * 2654435761u) >> 12));
  }
  std::vector<float> ys = {0.f,    -0.f,    1.f,  -1.f,  2.f,   3.f,        -3.f,      0.5f,
                           -0.5f,  1.5f,    7.f,  -8.f,  100.f, -100.f,     1e10f,     -1e10f,
                           1e-10f, 0.3333f, kInf, -kInf, kNaN,  16777216.f, 16777217.f};
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> wide(-200.f, 200.f);
  for (int i = 0; i < 24; ++i) ys.push_back(wide(rng));
  std::vector<float> x, y;
  for (float a : xs) {
    for (float b : ys) {
      x.push_back(a);
      y.push_back(b);
    }
  }
  const int64_t n = static_cast<int64_t>(x.size());
  KernelBuilder k("pow_tensor", {n});
  const int a = k.Input(DType::kF32), b = k.Input(DType::kF32);
  k.Output(k.Op(PwOp::kPow, DType::kF32, {a, b}));
  for (const std::string& cpu : RunnableLevels()) {
    if (cpu == "x86-64-v2" || cpu == "x86-64-v4") continue;  // without FMA, and with AVX2
    CpuTarget target = HostTarget();
    target.cpu = cpu;
    absl::StatusOr<CpuModule> module = CompileCpuKernels({k.kernel()}, target);
    REQUIRE(module.ok());
    CHECK(module->llvm_ir.find(std::string("@tccd.powf.v") + (cpu == "x86-64" ? "4(" : "8(")) !=
          std::string::npos);
    LoadedModule so(module->shared_object);
    std::vector<float> out(n);
    RunContiguous(so.Get("pow_tensor"), {n}, {x.data(), y.data(), out.data()});
    double worst = 0;
    for (int64_t i = 0; i < n; ++i) {
      // libm's float pow decides NaN cases (pow(sNaN, 0) is NaN, pow(qNaN, 0) is 1; widening
      // to double would quiet a signaling NaN).
      const double want = std::isnan(x[i]) || std::isnan(y[i])
                              ? ::powf(x[i], y[i])
                              : std::pow(static_cast<double>(x[i]), static_cast<double>(y[i]));
      const double e = UlpError(out[i], want);
      INFO(cpu << ": pow(" << std::hexfloat << x[i] << ", " << y[i] << ") = " << out[i] << ", want "
               << want);
      if (e > 1.0) CHECK(e <= 1.0);
      worst = std::max(worst, e);
    }
    INFO(cpu << " max error " << worst << " ulp");
    CHECK(worst <= 1.0);
  }
}

}  // namespace
}  // namespace tccd::codegen::testing
