// Op semantics of compiled kernels against C++ references: transcendentals, NaN handling,
// rounding, f16/bf16 conversions, integer wrap-around, u8 and bool.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "test_util.h"

namespace tccd::codegen::testing {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

bool Close(double got, double want, double rel) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= rel * std::max(1.0, std::fabs(want));
}

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

TEST_CASE("f32 and f64 transcendentals match libm", "[cpu_backend][numerics]") {
  struct Case {
    PwOp op;
    double (*ref)(double);
  };
  const std::vector<Case> cases = {
      {PwOp::kExp, [](double x) { return std::exp(x); }},
      {PwOp::kLog, [](double x) { return std::log(x); }},
      {PwOp::kLog1p, [](double x) { return std::log1p(x); }},
      {PwOp::kExpm1, [](double x) { return std::expm1(x); }},
      {PwOp::kSqrt, [](double x) { return std::sqrt(x); }},
      {PwOp::kRsqrt, [](double x) { return 1.0 / std::sqrt(x); }},
      {PwOp::kTanh, [](double x) { return std::tanh(x); }},
      {PwOp::kSigmoid, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }},
      {PwOp::kErf, [](double x) { return std::erf(x); }},
      {PwOp::kSin, [](double x) { return std::sin(x); }},
      {PwOp::kCos, [](double x) { return std::cos(x); }},
      {PwOp::kReciprocal, [](double x) { return 1.0 / x; }},
      {PwOp::kAbs, [](double x) { return std::fabs(x); }},
      {PwOp::kNeg, [](double x) { return -x; }},
  };
  const int64_t n = 67;
  KernelBuilder k("unary", {n});
  const int x32 = k.Input(DType::kF32), x64 = k.Input(DType::kF64);
  for (const Case& c : cases) {
    k.Output(k.Op(c.op, DType::kF32, {x32}));
    k.Output(k.Op(c.op, DType::kF64, {x64}));
  }
  LoadedModule so(CompileForHost({k.kernel()}).shared_object);

  std::vector<float> in32(n);
  std::vector<double> in64(n);
  for (int64_t i = 0; i < n; ++i) {
    in64[i] = -4.0 + 8.0 * static_cast<double>(i) / (n - 1) + 0.013;
    in32[i] = static_cast<float>(in64[i]);
  }
  in32[0] = kNaN, in64[0] = std::nan("");
  std::vector<std::vector<float>> out32(cases.size(), std::vector<float>(n));
  std::vector<std::vector<double>> out64(cases.size(), std::vector<double>(n));
  std::vector<void*> data = {in32.data(), in64.data()};
  for (size_t c = 0; c < cases.size(); ++c) {
    data.push_back(out32[c].data());
    data.push_back(out64[c].data());
  }
  RunContiguous(so.Get("unary"), {n}, data);
  for (size_t c = 0; c < cases.size(); ++c) {
    for (int64_t i = 0; i < n; ++i) {
      INFO(PwOpName(cases[c].op) << "(" << in64[i] << ")");
      CHECK(Close(out32[c][i], cases[c].ref(in32[i]), 2e-6));
      CHECK(Close(out64[c][i], cases[c].ref(in64[i]), 1e-14));
    }
  }
}

TEST_CASE("erf-GELU and pow", "[cpu_backend][numerics]") {
  const int64_t n = 101;
  KernelBuilder k("gelu_pow", {n});
  const int x = k.Input(DType::kF32), y = k.Input(DType::kF32);
  const int scaled = k.Op(PwOp::kMul, DType::kF32, {x, k.Const(DType::kF32, M_SQRT1_2)});
  const int erf1 = k.Op(PwOp::kAdd, DType::kF32,
                        {k.Op(PwOp::kErf, DType::kF32, {scaled}), k.Const(DType::kF32, 1.0)});
  const int half_x = k.Op(PwOp::kMul, DType::kF32, {x, k.Const(DType::kF32, 0.5)});
  k.Output(k.Op(PwOp::kMul, DType::kF32, {half_x, erf1}));
  k.Output(k.Op(PwOp::kPow, DType::kF32, {k.Op(PwOp::kAbs, DType::kF32, {x}), y}));
  LoadedModule so(CompileForHost({k.kernel()}).shared_object);
  std::vector<float> xs(n), ys(n), gelu(n), pw(n);
  for (int64_t i = 0; i < n; ++i) {
    xs[i] = -5.f + 0.1f * static_cast<float>(i);
    ys[i] = -1.5f + 0.03f * static_cast<float>(i);
  }
  RunContiguous(so.Get("gelu_pow"), {n}, {xs.data(), ys.data(), gelu.data(), pw.data()});
  for (int64_t i = 0; i < n; ++i) {
    const double xd = xs[i];
    CHECK(Close(gelu[i], 0.5 * xd * (1.0 + std::erf(xd * M_SQRT1_2)), 2e-6));
    CHECK(Close(pw[i], std::pow(std::fabs(xd), static_cast<double>(ys[i])), 2e-6));
  }
}

TEST_CASE("maximum/minimum propagate NaN; comparisons follow IEEE", "[cpu_backend][numerics]") {
  const std::vector<float> a = {1.f, kNaN, 2.f, kNaN, -0.5f, 3.f, kInf, -kInf};
  const std::vector<float> b = {2.f, 1.f, kNaN, kNaN, -0.5f, -3.f, 1.f, 1.f};
  const int64_t n = static_cast<int64_t>(a.size());
  KernelBuilder k("nan_ops", {n});
  const int x = k.Input(DType::kF32), y = k.Input(DType::kF32);
  k.Output(k.Op(PwOp::kMaximum, DType::kF32, {x, y}));
  k.Output(k.Op(PwOp::kMinimum, DType::kF32, {x, y}));
  const PwOp cmps[] = {PwOp::kEq, PwOp::kNe, PwOp::kLt, PwOp::kLe, PwOp::kGt, PwOp::kGe};
  for (PwOp op : cmps) k.Output(k.Op(op, DType::kBool, {x, y}));
  // where(x > y, x, y * 2)
  const int gt = k.Op(PwOp::kGt, DType::kBool, {x, y});
  k.Output(k.Op(PwOp::kWhere, DType::kF32,
                {gt, x, k.Op(PwOp::kMul, DType::kF32, {y, k.Const(DType::kF32, 2.0)})}));
  LoadedModule so(CompileForHost({k.kernel()}).shared_object);

  std::vector<float> mx(n), mn(n), sel(n);
  std::vector<std::vector<uint8_t>> cmp(6, std::vector<uint8_t>(n, 9));
  std::vector<void*> data = {const_cast<float*>(a.data()), const_cast<float*>(b.data()), mx.data(),
                             mn.data()};
  for (auto& c : cmp) data.push_back(c.data());
  data.push_back(sel.data());
  RunContiguous(so.Get("nan_ops"), {n}, data);
  for (int64_t i = 0; i < n; ++i) {
    INFO(a[i] << " vs " << b[i]);
    const bool any_nan = std::isnan(a[i]) || std::isnan(b[i]);
    if (any_nan) {
      CHECK(std::isnan(mx[i]));
      CHECK(std::isnan(mn[i]));
    } else {
      CHECK(mx[i] == std::max(a[i], b[i]));
      CHECK(mn[i] == std::min(a[i], b[i]));
    }
    CHECK(cmp[0][i] == (a[i] == b[i]));
    CHECK(cmp[1][i] == (a[i] != b[i]));
    CHECK(cmp[2][i] == (a[i] < b[i]));
    CHECK(cmp[3][i] == (a[i] <= b[i]));
    CHECK(cmp[4][i] == (a[i] > b[i]));
    CHECK(cmp[5][i] == (a[i] >= b[i]));
    const float want = a[i] > b[i] ? a[i] : b[i] * 2.f;
    CHECK((sel[i] == want || (std::isnan(sel[i]) && std::isnan(want))));
  }
}

TEST_CASE("floor, ceil and round (half to even)", "[cpu_backend][numerics]") {
  const std::vector<double> in = {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, -2.6, 1e300, 3.0};
  const int64_t n = static_cast<int64_t>(in.size());
  KernelBuilder k("rounding", {n});
  const int x = k.Input(DType::kF64);
  k.Output(k.Op(PwOp::kFloor, DType::kF64, {x}));
  k.Output(k.Op(PwOp::kCeil, DType::kF64, {x}));
  k.Output(k.Op(PwOp::kRound, DType::kF64, {x}));
  const int xf = k.Cast(x, DType::kF32);
  k.Output(k.Op(PwOp::kRound, DType::kF32, {xf}));
  LoadedModule so(CompileForHost({k.kernel()}).shared_object);
  std::vector<double> fl(n), ce(n), ro(n);
  std::vector<float> rof(n);
  RunContiguous(so.Get("rounding"), {n},
                {const_cast<double*>(in.data()), fl.data(), ce.data(), ro.data(), rof.data()});
  for (int64_t i = 0; i < n; ++i) {
    CHECK(fl[i] == std::floor(in[i]));
    CHECK(ce[i] == std::ceil(in[i]));
    CHECK(ro[i] == std::nearbyint(in[i]));  // default rounding mode: to nearest even
    CHECK(rof[i] == std::nearbyint(static_cast<float>(in[i])));
  }
  CHECK(ro[0] == 0.0);
  CHECK(ro[2] == 2.0);
  CHECK(std::signbit(ro[3]));  // round(-0.5) is -0.0
}

TEST_CASE("bf16 load -> f32 compute -> bf16 store rounds to nearest even",
          "[cpu_backend][numerics]") {
  std::vector<float> values = {1.f,         -1.f,    0.f,    -0.f, kInf, -kInf, kNaN, 3.4028235e38f,
                               1.00390625f,  // exactly halfway, even below: stays 1.0
                               1.01171875f,  // exactly halfway, odd below: rounds up
                               1.0039063f,   // just above halfway
                               1e-40f,      -1e-39f, 65504.f};
  std::mt19937 rng(42);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 2000; ++i) {
    const uint32_t u = bits(rng);
    float f;
    std::memcpy(&f, &u, 4);
    values.push_back(f);
  }
  const int64_t n = static_cast<int64_t>(values.size());
  KernelBuilder k("bf16_ops", {n});
  const int f = k.Input(DType::kF32);
  const int h = k.Input(DType::kBF16);
  k.Output(k.Cast(f, DType::kBF16));  // f32 -> bf16
  const int hf = k.Cast(h, DType::kF32);
  k.Output(hf);  // bf16 -> f32
  const int y = k.Op(
      PwOp::kAdd, DType::kF32,
      {k.Op(PwOp::kMul, DType::kF32, {hf, k.Const(DType::kF32, 3.0)}), k.Const(DType::kF32, 0.25)});
  k.Output(k.Cast(y, DType::kBF16));
  LoadedModule so(CompileForHost({k.kernel()}).shared_object);

  std::vector<uint16_t> in_bf16(n), out_bf16(n), out_y(n);
  std::vector<float> out_f32(n);
  for (int64_t i = 0; i < n; ++i) in_bf16[i] = RefF32ToBf16(values[i]);
  RunContiguous(so.Get("bf16_ops"), {n},
                {values.data(), in_bf16.data(), out_bf16.data(), out_f32.data(), out_y.data()});
  for (int64_t i = 0; i < n; ++i) {
    INFO(values[i] << " bits " << std::hex << Bits(values[i]));
    REQUIRE(out_bf16[i] == RefF32ToBf16(values[i]));
    const float back = RefBf16ToF32(in_bf16[i]);
    REQUIRE(Bits(out_f32[i]) == Bits(back));
    REQUIRE(out_y[i] == RefF32ToBf16(back * 3.f + 0.25f));
  }
  CHECK(out_bf16[8] == 0x3f80);
  CHECK(out_bf16[9] == 0x3f82);
  CHECK(out_bf16[6] == 0x7fc0);
}

TEST_CASE("f16 <-> f32 conversions are exact IEEE binary16", "[cpu_backend][numerics]") {
  // Every f16 bit pattern to f32, and f32 values around every f16 rounding boundary to f16.
  const int64_t n = 65536;
  std::vector<uint16_t> all(n);
  for (int64_t i = 0; i < n; ++i) all[i] = static_cast<uint16_t>(i);
  std::vector<float> probes;
  for (int64_t i = 0; i < n; ++i) {
    const float v = RefF16ToF32(static_cast<uint16_t>(i));
    if (std::isnan(v)) continue;
    probes.push_back(v);
    probes.push_back(std::nextafter(v, kInf));
    probes.push_back(std::nextafter(v, -kInf));
    const float next = RefF16ToF32(static_cast<uint16_t>(i + 1));
    if (!std::isnan(next) && std::isfinite(v) && std::isfinite(next)) {
      probes.push_back(v + (next - v) / 2);  // the halfway point (exact in f32)
    }
  }
  for (float v : {kNaN, -kNaN, 65519.f, 65520.f, 1e-8f, 2.98e-8f, 1e30f, -1e30f}) {
    probes.push_back(v);
  }
  const int64_t m = static_cast<int64_t>(probes.size());

  KernelBuilder widen("f16_widen", {n});
  widen.Output(widen.Cast(widen.Input(DType::kF16), DType::kF32));
  KernelBuilder narrow("f16_narrow", {m});
  narrow.Output(narrow.Cast(narrow.Input(DType::kF32), DType::kF16));
  // Round trip through f64 and back, as a producer might for f64 math.
  KernelBuilder trip("f16_trip", {n});
  trip.Output(trip.Cast(trip.Cast(trip.Input(DType::kF16), DType::kF64), DType::kF16));
  LoadedModule so(CompileForHost({widen.kernel(), narrow.kernel(), trip.kernel()}).shared_object);

  std::vector<float> widened(n);
  RunContiguous(so.Get("f16_widen"), {n}, {all.data(), widened.data()});
  std::vector<uint16_t> narrowed(m);
  RunContiguous(so.Get("f16_narrow"), {m}, {probes.data(), narrowed.data()});
  std::vector<uint16_t> tripped(n);
  RunContiguous(so.Get("f16_trip"), {n}, {all.data(), tripped.data()});

  for (int64_t i = 0; i < n; ++i) {
    INFO("f16 bits " << std::hex << i);
    const float want = RefF16ToF32(static_cast<uint16_t>(i));
    if (std::isnan(want)) {
      REQUIRE(std::isnan(widened[i]));
      REQUIRE(((tripped[i] & 0x7c00) == 0x7c00 && (tripped[i] & 0x3ff) != 0));
      REQUIRE((tripped[i] & 0x8000) == (i & 0x8000));
    } else {
      REQUIRE(Bits(widened[i]) == Bits(want));
      REQUIRE(tripped[i] == i);
    }
  }
  for (int64_t i = 0; i < m; ++i) {
    INFO(probes[i] << " bits " << std::hex << Bits(probes[i]));
    const uint16_t want = RefF32ToF16(probes[i]);
    if (std::isnan(probes[i])) {
      REQUIRE(std::isnan(RefF16ToF32(narrowed[i])));
    } else {
      REQUIRE(narrowed[i] == want);
    }
  }
}

TEST_CASE("i64 and i32 arithmetic wraps; float->int truncates", "[cpu_backend][numerics]") {
  const std::vector<int64_t> a = {std::numeric_limits<int64_t>::max(),
                                  -5,
                                  7,
                                  0,
                                  std::numeric_limits<int64_t>::min(),
                                  123456789012345};
  const std::vector<int64_t> b = {1, 3, -7, 0, -1, -2};
  const std::vector<float> f = {-2.7f, 2.7f, -0.5f, 1e9f, 100.f, -1e3f};
  const int64_t n = static_cast<int64_t>(a.size());
  KernelBuilder k("ints", {n});
  const int x = k.Input(DType::kI64), y = k.Input(DType::kI64), z = k.Input(DType::kF32);
  k.Output(k.Op(PwOp::kAdd, DType::kI64, {x, y}));
  k.Output(k.Op(PwOp::kSub, DType::kI64, {x, y}));
  k.Output(k.Op(PwOp::kMul, DType::kI64, {x, y}));
  k.Output(k.Op(PwOp::kMaximum, DType::kI64, {x, y}));
  k.Output(k.Op(PwOp::kMinimum, DType::kI64, {x, y}));
  k.Output(k.Op(PwOp::kAbs, DType::kI64, {x}));
  k.Output(k.Op(PwOp::kNeg, DType::kI64, {x}));
  k.Output(k.Op(PwOp::kLt, DType::kBool, {x, y}));
  k.Output(k.Cast(z, DType::kI64));
  k.Output(k.Cast(z, DType::kI32));
  k.Output(k.Cast(x, DType::kF64));
  k.Output(k.Cast(x, DType::kI32));  // truncation keeps the low bits
  LoadedModule so(CompileForHost({k.kernel()}).shared_object);

  std::vector<int64_t> add(n), sub(n), mul(n), mx(n), mn(n), ab(n), ng(n), fi64(n);
  std::vector<uint8_t> lt(n);
  std::vector<int32_t> fi32(n), low(n);
  std::vector<double> fd(n);
  RunContiguous(
      so.Get("ints"), {n},
      {const_cast<int64_t*>(a.data()), const_cast<int64_t*>(b.data()), const_cast<float*>(f.data()),
       add.data(), sub.data(), mul.data(), mx.data(), mn.data(), ab.data(), ng.data(), lt.data(),
       fi64.data(), fi32.data(), fd.data(), low.data()});
  auto wrap = [](auto op, int64_t p, int64_t q) {
    return static_cast<int64_t>(op(static_cast<uint64_t>(p), static_cast<uint64_t>(q)));
  };
  for (int64_t i = 0; i < n; ++i) {
    INFO(a[i] << ", " << b[i]);
    CHECK(add[i] == wrap(std::plus<uint64_t>(), a[i], b[i]));
    CHECK(sub[i] == wrap(std::minus<uint64_t>(), a[i], b[i]));
    CHECK(mul[i] == wrap(std::multiplies<uint64_t>(), a[i], b[i]));
    CHECK(mx[i] == std::max(a[i], b[i]));
    CHECK(mn[i] == std::min(a[i], b[i]));
    CHECK(ab[i] == (a[i] < 0 ? wrap(std::minus<uint64_t>(), 0, a[i]) : a[i]));
    CHECK(ng[i] == wrap(std::minus<uint64_t>(), 0, a[i]));
    CHECK(lt[i] == (a[i] < b[i] ? 1 : 0));
    CHECK(fi64[i] == static_cast<int64_t>(f[i]));
    CHECK(fi32[i] == static_cast<int32_t>(f[i]));
    CHECK(fd[i] == static_cast<double>(a[i]));
    CHECK(low[i] == static_cast<int32_t>(static_cast<uint32_t>(a[i])));
  }
  CHECK(add[0] == std::numeric_limits<int64_t>::min());  // max + 1 wraps
  CHECK(ab[4] == std::numeric_limits<int64_t>::min());   // abs(min) wraps, like torch
  CHECK(fi64[0] == -2);
}

TEST_CASE("u8 is unsigned; i8 is signed; casts extend by the source's sign",
          "[cpu_backend][numerics]") {
  const std::vector<uint8_t> a = {200, 5, 255, 0, 128};
  const std::vector<uint8_t> b = {100, 10, 1, 0, 127};
  const std::vector<float> f = {250.7f, 3.2f, 0.f, 255.f, 128.5f};
  const int64_t n = static_cast<int64_t>(a.size());
  KernelBuilder k("bytes", {n});
  const int x = k.Input(DType::kU8), y = k.Input(DType::kU8), z = k.Input(DType::kF32);
  k.Output(k.Op(PwOp::kAdd, DType::kU8, {x, y}));      // wraps mod 256
  k.Output(k.Op(PwOp::kMaximum, DType::kU8, {x, y}));  // unsigned max
  k.Output(k.Op(PwOp::kGt, DType::kBool, {x, y}));     // unsigned compare
  k.Output(k.Cast(x, DType::kF32));                    // uitofp
  k.Output(k.Cast(x, DType::kI32));                    // zext
  const int xi8 = k.Cast(x, DType::kI8);               // same bits, now signed
  k.Output(k.Cast(xi8, DType::kI32));                  // sext
  k.Output(k.Op(PwOp::kMaximum, DType::kI8, {xi8, k.Cast(y, DType::kI8)}));
  k.Output(k.Cast(z, DType::kU8));                                       // truncation toward zero
  k.Output(k.Op(PwOp::kAdd, DType::kU8, {x, k.Const(DType::kU8, -1)}));  // -1 wraps to 255
  LoadedModule so(CompileForHost({k.kernel()}).shared_object);

  std::vector<uint8_t> add(n), mx(n), gt(n), fu8(n), dec(n);
  std::vector<float> af(n);
  std::vector<int32_t> zx(n), sx(n);
  std::vector<int8_t> smx(n);
  RunContiguous(so.Get("bytes"), {n},
                {const_cast<uint8_t*>(a.data()), const_cast<uint8_t*>(b.data()),
                 const_cast<float*>(f.data()), add.data(), mx.data(), gt.data(), af.data(),
                 zx.data(), sx.data(), smx.data(), fu8.data(), dec.data()});
  for (int64_t i = 0; i < n; ++i) {
    INFO(int(a[i]) << ", " << int(b[i]));
    CHECK(add[i] == static_cast<uint8_t>(a[i] + b[i]));
    CHECK(mx[i] == std::max(a[i], b[i]));
    CHECK(gt[i] == (a[i] > b[i] ? 1 : 0));
    CHECK(af[i] == static_cast<float>(a[i]));
    CHECK(zx[i] == a[i]);
    CHECK(sx[i] == static_cast<int8_t>(a[i]));
    CHECK(smx[i] == std::max(static_cast<int8_t>(a[i]), static_cast<int8_t>(b[i])));
    CHECK(fu8[i] == static_cast<uint8_t>(f[i]));
    CHECK(dec[i] == static_cast<uint8_t>(a[i] - 1));
  }
  CHECK(add[0] == 44);
  CHECK(mx[0] == 200);
  CHECK(af[0] == 200.f);
  CHECK(sx[0] == -56);
}

TEST_CASE("bool logic, bool casts and where on every dtype", "[cpu_backend][numerics]") {
  const std::vector<uint8_t> p = {0, 1, 0, 1};
  const std::vector<uint8_t> q = {0, 0, 1, 1};
  const std::vector<float> f = {0.f, -0.f, kNaN, 2.5f};
  const std::vector<uint16_t> h1 = {0x3c00, 0x4000, 0x7c00, 0x8001};
  const std::vector<uint16_t> h2 = {0xbc00, 0xc000, 0xfc00, 0x0001};
  const int64_t n = 4;
  KernelBuilder k("logic", {n});
  const int x = k.Input(DType::kBool), y = k.Input(DType::kBool), z = k.Input(DType::kF32);
  const int u = k.Input(DType::kF16), v = k.Input(DType::kF16);
  k.Output(k.Op(PwOp::kAnd, DType::kBool, {x, y}));
  k.Output(k.Op(PwOp::kOr, DType::kBool, {x, y}));
  k.Output(k.Op(PwOp::kNot, DType::kBool, {x}));
  k.Output(k.Cast(z, DType::kBool));  // x != 0, NaN is true
  k.Output(k.Cast(x, DType::kF32));
  k.Output(k.Cast(x, DType::kI64));
  k.Output(k.Op(PwOp::kEq, DType::kBool, {x, y}));
  k.Output(k.Op(PwOp::kWhere, DType::kF16, {y, u, v}));  // a select of raw f16 bits
  k.Output(k.Op(PwOp::kWhere, DType::kBool, {y, x, k.Const(DType::kBool, 2)}));  // 2 is true
  LoadedModule so(CompileForHost({k.kernel()}).shared_object);

  std::vector<uint8_t> land(n), lor(n), lnot(n), fb(n), eq(n), wb(n);
  std::vector<float> bf(n);
  std::vector<int64_t> bi(n);
  std::vector<uint16_t> wh(n);
  RunContiguous(
      so.Get("logic"), {n},
      {const_cast<uint8_t*>(p.data()), const_cast<uint8_t*>(q.data()), const_cast<float*>(f.data()),
       const_cast<uint16_t*>(h1.data()), const_cast<uint16_t*>(h2.data()), land.data(), lor.data(),
       lnot.data(), fb.data(), bf.data(), bi.data(), eq.data(), wh.data(), wb.data()});
  for (int64_t i = 0; i < n; ++i) {
    CHECK(land[i] == (p[i] & q[i]));
    CHECK(lor[i] == (p[i] | q[i]));
    CHECK(lnot[i] == 1 - p[i]);
    CHECK(fb[i] == (f[i] != 0.f ? 1 : 0));
    CHECK(bf[i] == static_cast<float>(p[i]));
    CHECK(bi[i] == p[i]);
    CHECK(eq[i] == (p[i] == q[i] ? 1 : 0));
    CHECK(wh[i] == (q[i] ? h1[i] : h2[i]));
    CHECK(wb[i] == (q[i] ? p[i] : 1));
  }
}

}  // namespace
}  // namespace tccd::codegen::testing

namespace tccd::codegen::testing {
namespace {

TEST_CASE("index and gather: cat of strided halves, embedding rows, masked reads",
          "[cpu_backend][numerics]") {
  // out[i, j] = j < 3 ? a[i, j] : b[i, j - 3] (b read through a transposed view), and
  // emb[i, j] = w[ids[i], j] with ids out of range reading 0.
  const int64_t rows = 2;
  KernelBuilder k("cat_gather", {rows, 6});
  const int ga = k.GatherInput(DType::kF32), gb = k.GatherInput(DType::kF32);
  const int gw = k.GatherInput(DType::kF32), gids = k.GatherInput(DType::kI64);
  const int i = k.Index(0), j = k.Index(1);
  const int three = k.Const(DType::kI64, 3);
  const int first = k.Op(PwOp::kLt, DType::kBool, {j, three});
  const int second = k.Op(PwOp::kNot, DType::kBool, {first});
  const int va = k.Gather(ga, first, {i, j});
  const int vb = k.Gather(gb, second, {i, k.Op(PwOp::kSub, DType::kI64, {j, three})});
  k.Output(k.Op(PwOp::kWhere, DType::kF32, {first, va, vb}));
  const int row = k.Gather(gids, k.Const(DType::kBool, 1), {i});
  const int ge = k.Op(PwOp::kGe, DType::kBool, {row, k.Const(DType::kI64, 0)});
  const int lt = k.Op(PwOp::kLt, DType::kBool, {row, k.Const(DType::kI64, 4)});
  k.Output(k.Gather(gw, k.Op(PwOp::kAnd, DType::kBool, {ge, lt}), {row, j}));
  const PointwiseKernel& kernel = k.kernel();
  REQUIRE(VerifyPointwiseKernel(kernel) == "");
  LoadedModule so(CompileForHost({kernel}).shared_object);

  const std::vector<float> a = {1, 2, 3, 4, 5, 6};         // [2, 3] row-major
  const std::vector<float> bt = {10, 40, 20, 50, 30, 60};  // b [2, 3] stored transposed
  std::vector<float> w(4 * 6);                             // [4, 6]
  for (size_t e = 0; e < w.size(); ++e) w[e] = 100.f + static_cast<float>(e);
  const std::vector<int64_t> ids = {2, 7};  // 7 is out of range
  std::vector<float> out(12, -1), emb(12, -1);
  const std::vector<int64_t> strides =
      ConcatStrides({{3, 1}, {1, 2}, {6, 1}, {1, 0}, {6, 1}, {6, 1}});
  void* data[] = {const_cast<float*>(a.data()),
                  const_cast<float*>(bt.data()),
                  w.data(),
                  const_cast<int64_t*>(ids.data()),
                  out.data(),
                  emb.data()};
  so.Get("cat_gather")(data, strides.data());
  CHECK(out == std::vector<float>{1, 2, 3, 10, 20, 30, 4, 5, 6, 40, 50, 60});
  CHECK(emb == std::vector<float>{112, 113, 114, 115, 116, 117, 0, 0, 0, 0, 0, 0});
}

}  // namespace
}  // namespace tccd::codegen::testing

namespace tccd::codegen::testing {
namespace {

// Philox4x32-10 (Random123), first output word.
uint32_t PhiloxWord0(uint64_t seed, uint64_t offset, uint64_t flat) {
  uint32_t c[4] = {static_cast<uint32_t>(flat), static_cast<uint32_t>(flat >> 32),
                   static_cast<uint32_t>(offset), static_cast<uint32_t>(offset >> 32)};
  uint32_t k[2] = {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
  for (int r = 0; r < 10; ++r) {
    if (r > 0) k[0] += 0x9E3779B9u, k[1] += 0xBB67AE85u;
    const uint64_t p0 = uint64_t{0xD2511F53u} * c[0], p1 = uint64_t{0xCD9E8D57u} * c[2];
    const uint32_t n[4] = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<uint32_t>(p1),
                           static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1],
                           static_cast<uint32_t>(p0)};
    std::copy(n, n + 4, c);
  }
  return c[0];
}

TEST_CASE("random: Philox4x32-10 uniforms by flat index, seed and offset",
          "[cpu_backend][numerics]") {
  CHECK(PhiloxWord0(0, 0, 0) == 0x6627e8d5u);  // Random123's known answer (ctr 0, key 0)
  KernelBuilder k("philox", {3, 5});
  const int seed = k.Input(DType::kI64);  // broadcast 0-dim seed
  const int offset = k.Const(DType::kI64, 7);
  k.Output(k.Op(PwOp::kRandom, DType::kF32, {seed, offset}));
  LoadedModule so(CompileForHost({k.kernel()}).shared_object);
  const int64_t seed_value = 0x123456789abcdefLL;
  std::vector<float> out(15);
  const std::vector<int64_t> strides = ConcatStrides({{0, 0}, {5, 1}});
  void* data[] = {const_cast<int64_t*>(&seed_value), out.data()};
  so.Get("philox")(data, strides.data());
  for (uint64_t flat = 0; flat < 15; ++flat) {
    INFO(flat);
    CHECK(out[flat] == static_cast<float>(PhiloxWord0(seed_value, 7, flat) >> 8) * 0x1.0p-24f);
    CHECK(out[flat] >= 0.f);
    CHECK(out[flat] < 1.f);
  }
}

}  // namespace
}  // namespace tccd::codegen::testing
