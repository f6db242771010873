// CompileCpuKernels end to end: loop structure (fast path, strided nest, broadcast, rank 0,
// empty shapes), the artifact's symbols, vectorisation, determinism and concurrent compiles.
#include "codegen/cpu/cpu_backend.h"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "codegen/llvm/elf_symbols.h"
#include "test_util.h"

namespace tccd::codegen::testing {
namespace {

// out = relu(a * b + c)
PointwiseKernel FusedReluKernel(const std::string& name, std::vector<int64_t> shape) {
  KernelBuilder k(name, std::move(shape));
  const int a = k.Input(DType::kF32), b = k.Input(DType::kF32), c = k.Input(DType::kF32);
  const int mul = k.Op(PwOp::kMul, DType::kF32, {a, b});
  const int add = k.Op(PwOp::kAdd, DType::kF32, {mul, c});
  const int zero = k.Const(DType::kF32, 0.0);
  k.Output(k.Op(PwOp::kMaximum, DType::kF32, {add, zero}));
  return k.kernel();
}

std::vector<float> RandomFloats(size_t n, uint32_t seed, float lo = -2.f, float hi = 2.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

float Relu(float x) { return x > 0.f ? x : 0.f; }

TEST_CASE("relu(a*b + c) with c broadcast along dim 0 (strided path)", "[cpu_backend]") {
  const int64_t rows = 4, cols = 37;
  const PointwiseKernel kernel = FusedReluKernel("relu_bcast", {rows, cols});
  LoadedModule so(CompileForHost({kernel}).shared_object);
  KernelFn fn = so.Get("relu_bcast");

  auto a = RandomFloats(rows * cols, 1), b = RandomFloats(rows * cols, 2);
  auto c = RandomFloats(cols, 3);
  std::vector<float> out(rows * cols, -1.f);
  void* data[] = {a.data(), b.data(), c.data(), out.data()};
  const std::vector<int64_t> strides = ConcatStrides({{cols, 1}, {cols, 1}, {0, 1}, {cols, 1}});
  fn(data, strides.data());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < cols; ++j) {
      const int64_t i = r * cols + j;
      REQUIRE(out[i] == Relu(a[i] * b[i] + c[j]));
    }
  }
}

TEST_CASE("a large contiguous kernel takes the flat loop and covers every element",
          "[cpu_backend]") {
  // numel is not a multiple of any vector width, so the remainder loop runs too.
  const int64_t rows = 1021, cols = 1027;
  const PointwiseKernel kernel = FusedReluKernel("relu_big", {rows, cols});
  LoadedModule so(CompileForHost({kernel}).shared_object);
  auto a = RandomFloats(rows * cols, 4), b = RandomFloats(rows * cols, 5);
  auto c = RandomFloats(rows * cols, 6);
  std::vector<float> out(rows * cols + 8, -7.f);  // guard elements after the end
  RunContiguous(so.Get("relu_big"), {rows, cols}, {a.data(), b.data(), c.data(), out.data()});
  for (int64_t i = 0; i < rows * cols; ++i) REQUIRE(out[i] == Relu(a[i] * b[i] + c[i]));
  for (int64_t i = rows * cols; i < rows * cols + 8; ++i) REQUIRE(out[i] == -7.f);
}

TEST_CASE("transposed and strided operands go through the loop nest", "[cpu_backend]") {
  // out[i][j][k] = x[i][j][k] - y[i][j][k] over shape [3,5,7]: x is a permuted view of a
  // [7,3,5] buffer, y a slice with padding, the output is written into a padded buffer too.
  const std::vector<int64_t> shape = {3, 5, 7};
  KernelBuilder k("sub_strided", shape);
  const int x = k.Input(DType::kF64), y = k.Input(DType::kF64);
  k.Output(k.Op(PwOp::kSub, DType::kF64, {x, y}));
  LoadedModule so(CompileForHost({k.kernel()}).shared_object);

  std::vector<double> xbuf(7 * 3 * 5), ybuf(3 * 6 * 9, 0.0), obuf(3 * 5 * 16, -1.0);
  for (size_t i = 0; i < xbuf.size(); ++i) xbuf[i] = 0.5 * static_cast<double>(i);
  for (size_t i = 0; i < ybuf.size(); ++i) ybuf[i] = std::sqrt(static_cast<double>(i));
  // x view: element [i][j][k] at xbuf[k*15 + i*5 + j]; y: [i][j][k] at ybuf[i*54 + j*9 + k];
  // out: [i][j][k] at obuf[i*80 + j*16 + k].
  const std::vector<int64_t> strides = ConcatStrides({{5, 1, 15}, {54, 9, 1}, {80, 16, 1}});
  void* data[] = {xbuf.data(), ybuf.data(), obuf.data()};
  so.Get("sub_strided")(data, strides.data());
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 5; ++j) {
      for (int kk = 0; kk < 16; ++kk) {
        const double got = obuf[i * 80 + j * 16 + kk];
        if (kk >= 7) {
          REQUIRE(got == -1.0);  // padding untouched
          continue;
        }
        REQUIRE(got == xbuf[kk * 15 + i * 5 + j] - ybuf[i * 54 + j * 9 + kk]);
      }
    }
  }
}

TEST_CASE("the same kernel gives the same result on the fast and the strided path",
          "[cpu_backend]") {
  const std::vector<int64_t> shape = {6, 1, 10};
  const PointwiseKernel kernel = FusedReluKernel("relu_paths", shape);
  LoadedModule so(CompileForHost({kernel}).shared_object);
  KernelFn fn = so.Get("relu_paths");
  auto a = RandomFloats(60, 7), b = RandomFloats(60, 8), c = RandomFloats(60, 9);
  std::vector<float> fast(60), strided(120, 0.f);
  // Size-1 dims may carry any stride and still count as contiguous.
  const std::vector<int64_t> contiguous =
      ConcatStrides({{10, 999, 1}, {10, 0, 1}, {10, 1, 1}, {10, 5, 1}});
  void* fast_data[] = {a.data(), b.data(), c.data(), fast.data()};
  fn(fast_data, contiguous.data());
  // The output at stride 2 in the last dim forces the nest.
  const std::vector<int64_t> spread =
      ConcatStrides({{10, 0, 1}, {10, 0, 1}, {10, 0, 1}, {20, 0, 2}});
  void* strided_data[] = {a.data(), b.data(), c.data(), strided.data()};
  fn(strided_data, spread.data());
  for (int i = 0; i < 60; ++i) {
    REQUIRE(fast[i] == Relu(a[i] * b[i] + c[i]));
    REQUIRE(strided[2 * i] == fast[i]);
    REQUIRE(strided[2 * i + 1] == 0.f);
  }
}

TEST_CASE("rank 0 evaluates the body once", "[cpu_backend]") {
  KernelBuilder k("scalar", {});
  const int x = k.Input(DType::kF32);
  const int y = k.Input(DType::kI64);
  k.Output(k.Op(PwOp::kMul, DType::kF32, {x, k.Const(DType::kF32, 3.0)}));
  k.Output(k.Op(PwOp::kAdd, DType::kI64, {y, k.Const(DType::kI64, 1)}));
  LoadedModule so(CompileForHost({k.kernel()}).shared_object);
  float xv = 1.5f, out0 = 0.f;
  int64_t yv = 41, out1 = 0;
  void* data[] = {&xv, &yv, &out0, &out1};
  so.Get("scalar")(data, nullptr);  // rank 0: the strides array is empty
  REQUIRE(out0 == 4.5f);
  REQUIRE(out1 == 42);
}

TEST_CASE("a zero-size dim touches no memory", "[cpu_backend]") {
  const PointwiseKernel kernel = FusedReluKernel("empty", {3, 0, 4});
  LoadedModule so(CompileForHost({kernel}).shared_object);
  void* data[] = {nullptr, nullptr, nullptr, nullptr};
  so.Get("empty")(data, nullptr);  // would crash on any access
  SUCCEED();
}

TEST_CASE("several kernels and outputs in one module", "[cpu_backend]") {
  KernelBuilder k1("two_outputs", {16});
  const int x = k1.Input(DType::kF32);
  k1.Output(k1.Op(PwOp::kNeg, DType::kF32, {x}));
  k1.Output(k1.Op(PwOp::kGt, DType::kBool, {x, k1.Const(DType::kF32, 0.0)}));
  k1.Output(k1.Cast(x, DType::kF64));
  const PointwiseKernel relu = FusedReluKernel("relu_small", {16});
  const CpuModule module = CompileForHost({k1.kernel(), relu});
  LoadedModule so(module.shared_object);
  auto in = RandomFloats(16, 10);
  std::vector<float> neg(16);
  std::vector<uint8_t> pos(16, 7);
  std::vector<double> wide(16);
  RunContiguous(so.Get("two_outputs"), {16}, {in.data(), neg.data(), pos.data(), wide.data()});
  for (int i = 0; i < 16; ++i) {
    REQUIRE(neg[i] == -in[i]);
    REQUIRE(pos[i] == (in[i] > 0 ? 1 : 0));
    REQUIRE(wide[i] == static_cast<double>(in[i]));
  }
  so.Get("relu_small");  // exported too
}

TEST_CASE("the .so imports only libm and needs no libraries", "[cpu_backend]") {
  // Every op that may become a call, for the host and for the baseline ISA (where floor, ceil
  // and roundeven become libm calls as well), plus a constant fill, which LLVM would like to
  // turn into memset.
  KernelBuilder k("everything", {1000});
  const int x = k.Input(DType::kF32), d = k.Input(DType::kF64);
  for (PwOp op : {PwOp::kExp, PwOp::kLog, PwOp::kLog1p, PwOp::kExpm1, PwOp::kSqrt, PwOp::kRsqrt,
                  PwOp::kTanh, PwOp::kSigmoid, PwOp::kErf, PwOp::kSin, PwOp::kCos, PwOp::kFloor,
                  PwOp::kCeil, PwOp::kRound}) {
    k.Output(k.Op(op, DType::kF32, {x}));
    k.Output(k.Op(op, DType::kF64, {d}));
  }
  k.Output(k.Op(PwOp::kPow, DType::kF32, {x, x}));
  k.Output(k.Op(PwOp::kPow, DType::kF64, {d, k.Const(DType::kF64, 2.5)}));
  k.Output(k.Cast(k.Cast(x, DType::kF16), DType::kF32));
  k.Output(k.Cast(x, DType::kBF16));
  KernelBuilder fill("fill", {4096});
  fill.Output(fill.Const(DType::kI32, 0));

  const std::set<std::string> allowed = {
      "expf",  "exp",   "logf",    "log",        "log1pf",    "log1p", "expm1f",
      "expm1", "tanhf", "tanh",    "erff",       "erf",       "sinf",  "sin",
      "cosf",  "cos",   "sincosf", "sincos",     "powf",      "pow",   "floorf",
      "floor", "ceilf", "ceil",    "roundevenf", "roundeven", "exp2f", "exp2"};
  for (const char* cpu : {"host", "x86-64", "x86-64-v3"}) {
    CpuTarget target = HostTarget();
    if (std::string(cpu) != "host") target.cpu = cpu;
    INFO(target.KeyString());
    absl::StatusOr<CpuModule> module = CompileCpuKernels({k.kernel(), fill.kernel()}, target);
    INFO(module.status().ToString());
    REQUIRE(module.ok());
    absl::StatusOr<DynamicSymbols> symbols = ReadDynamicSymbols(module->shared_object);
    REQUIRE(symbols.ok());
    CHECK(symbols->num_needed == 0);
    for (const std::string& name : symbols->undefined) {
      INFO(name);
      CHECK(allowed.count(name));
    }
    CHECK(std::count(symbols->defined.begin(), symbols->defined.end(), "everything") == 1);
    CHECK(std::count(symbols->defined.begin(), symbols->defined.end(), "fill") == 1);
    CHECK(module->llvm_ir.find("memset") == std::string::npos);
  }
  LoadedModule so(CompileForHost({fill.kernel()}).shared_object);
  std::vector<int32_t> buf(4096, 5);
  RunContiguous(so.Get("fill"), {4096}, {buf.data()});
  REQUIRE(std::all_of(buf.begin(), buf.end(), [](int32_t v) { return v == 0; }));
}

TEST_CASE("the contiguous fast path is vectorised", "[cpu_backend]") {
  KernelBuilder k("vec", {4096});
  const int a = k.Input(DType::kF32), b = k.Input(DType::kF32);
  const int s = k.Op(PwOp::kAdd, DType::kF32, {a, b});
  k.Output(k.Op(PwOp::kMaximum, DType::kF32, {s, k.Const(DType::kF32, 0.0)}));
  KernelBuilder h("vec_bf16", {4096});
  const int x = h.Cast(h.Input(DType::kBF16), DType::kF32);
  h.Output(h.Cast(h.Op(PwOp::kMul, DType::kF32, {x, x}), DType::kBF16));
  struct Expect {
    const char* cpu;
    bool wide_vectors;
    const char* vector_type;
  };
  // x86-64-v4 tunes like Skylake-AVX512, which prefers 256-bit vectors; wide_vectors (the
  // default) asks for 512 there and changes nothing on the levels without AVX-512.
  for (Expect e : {Expect{"x86-64", true, "<4 x float>"}, Expect{"x86-64-v3", true, "<8 x float>"},
                   Expect{"x86-64-v4", true, "<16 x float>"},
                   Expect{"x86-64-v4", false, "<8 x float>"}}) {
    CpuTarget target;
    target.cpu = e.cpu;
    target.wide_vectors = e.wide_vectors;
    INFO(target.KeyString());
    absl::StatusOr<CpuModule> module = CompileCpuKernels({k.kernel(), h.kernel()}, target);
    REQUIRE(module.ok());
    CHECK(module->llvm_ir.find(std::string("fadd ") + e.vector_type) != std::string::npos);
    CHECK(module->llvm_ir.find("x i16>") != std::string::npos);  // the bf16 kernel too
  }
}

TEST_CASE("compiling the same kernels twice gives identical bytes", "[cpu_backend]") {
  const PointwiseKernel kernel = FusedReluKernel("det", {8, 8});
  const CpuModule first = CompileForHost({kernel});
  const CpuModule second = CompileForHost({kernel});
  REQUIRE(first.llvm_ir == second.llvm_ir);
  REQUIRE(first.shared_object == second.shared_object);
}

TEST_CASE("20 compiles from 4 threads at once all succeed", "[cpu_backend]") {
  const CpuTarget host = HostTarget();
  std::vector<std::string> artifacts(20);
  std::vector<std::string> errors(20);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = t; i < 20; i += 4) {
        const PointwiseKernel kernel =
            FusedReluKernel("par" + std::to_string(i), {static_cast<int64_t>(i) + 1, 33});
        absl::StatusOr<CpuModule> module = CompileCpuKernels({kernel}, host);
        if (module.ok()) {
          artifacts[i] = std::move(module->shared_object);
        } else {
          errors[i] = module.status().ToString();
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int i = 0; i < 20; ++i) {
    INFO(i << ": " << errors[i]);
    REQUIRE(errors[i].empty());
    LoadedModule so(artifacts[i]);
    const int64_t rows = i + 1;
    auto a = RandomFloats(rows * 33, 11), b = RandomFloats(rows * 33, 12);
    auto c = RandomFloats(rows * 33, 13);
    std::vector<float> out(rows * 33);
    RunContiguous(so.Get("par" + std::to_string(i)), {rows, 33},
                  {a.data(), b.data(), c.data(), out.data()});
    for (int64_t j = 0; j < rows * 33; ++j) REQUIRE(out[j] == Relu(a[j] * b[j] + c[j]));
  }
}

}  // namespace
}  // namespace tccd::codegen::testing
