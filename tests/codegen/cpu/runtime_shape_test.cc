// Kernels with run-time sizes (kRuntimeDim, ABI "tccd-cpu-sym-1"): one compiled kernel serves
// every size (flat fast path, strided nest, broadcast rows, size 1 and empty dims), the LLVM IR
// takes the sizes from its third argument (golden lines), and static dims stay constants.
#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "codegen/cpu/cpu_backend.h"
#include "test_util.h"

namespace tccd::codegen::testing {
namespace {

using SymKernelFn = void (*)(void* const* data, const int64_t* strides, const int64_t* shape);

// out = relu(a * b + c), iteration space [?, 8] (dim 0 symbolic), c one row broadcast.
PointwiseKernel RuntimeRowsKernel() {
  KernelBuilder k("relu_rows", {kRuntimeDim, 8});
  const int a = k.Input(DType::kF32), b = k.Input(DType::kF32), c = k.Input(DType::kF32);
  const int add = k.Op(PwOp::kAdd, DType::kF32, {k.Op(PwOp::kMul, DType::kF32, {a, b}), c});
  k.Output(k.Op(PwOp::kMaximum, DType::kF32, {add, k.Const(DType::kF32, 0.0)}));
  return k.kernel();
}

std::vector<float> Floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.f, 2.f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

SymKernelFn GetSym(const LoadedModule& so, const char* name) {
  return reinterpret_cast<SymKernelFn>(so.Get(name));
}

TEST_CASE("a kernel with a run-time dim serves every size, contiguous or broadcast",
          "[cpu_backend][symbolic]") {
  LoadedModule so(CompileForHost({RuntimeRowsKernel()}).shared_object);
  SymKernelFn fn = GetSym(so, "relu_rows");
  for (int64_t rows : {1, 2, 3, 7, 64, 1001}) {
    INFO("rows " << rows);
    auto a = Floats(rows * 8, 1), b = Floats(rows * 8, 2), c_full = Floats(rows * 8, 3),
         c_row = Floats(8, 4);
    for (bool broadcast : {false, true}) {
      std::vector<float> out(rows * 8 + 4, -9.f);  // guard elements after the end
      const std::vector<float>& c = broadcast ? c_row : c_full;
      void* data[] = {a.data(), b.data(), const_cast<float*>(c.data()), out.data()};
      const std::vector<int64_t> c_strides =
          broadcast ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{8, 1};
      const std::vector<int64_t> strides = ConcatStrides({{8, 1}, {8, 1}, c_strides, {8, 1}});
      const int64_t shape[] = {rows, 8};
      fn(data, strides.data(), shape);
      for (int64_t i = 0; i < rows * 8; ++i) {
        const float expected = std::max(a[i] * b[i] + c[broadcast ? i % 8 : i], 0.f);
        REQUIRE(out[i] == expected);
      }
      for (int64_t i = rows * 8; i < rows * 8 + 4; ++i) REQUIRE(out[i] == -9.f);
    }
  }
}

TEST_CASE("a run-time dim of size 0 touches no memory", "[cpu_backend][symbolic]") {
  LoadedModule so(CompileForHost({RuntimeRowsKernel()}).shared_object);
  void* data[] = {nullptr, nullptr, nullptr, nullptr};
  const std::vector<int64_t> strides(4 * 2, 1);
  const int64_t shape[] = {0, 8};
  GetSym(so, "relu_rows")(data, strides.data(), shape);  // would crash on a dereference
}

TEST_CASE("transposed operands with run-time sizes take the strided nest",
          "[cpu_backend][symbolic]") {
  // out[i, j] = x[j, i] + y[i, j] over [?, ?]: x is read transposed.
  KernelBuilder k("add_t", {kRuntimeDim, kRuntimeDim});
  const int x = k.Input(DType::kF32), y = k.Input(DType::kF32);
  k.Output(k.Op(PwOp::kAdd, DType::kF32, {x, y}));
  LoadedModule so(CompileForHost({k.kernel()}).shared_object);
  for (auto [m, n] : {std::pair<int64_t, int64_t>{3, 5}, {17, 2}, {1, 9}, {9, 1}}) {
    INFO(m << "x" << n);
    auto xs = Floats(m * n, 5), ys = Floats(m * n, 6);
    std::vector<float> out(m * n, 0.f);
    void* data[] = {xs.data(), ys.data(), out.data()};
    const std::vector<int64_t> strides = ConcatStrides({{1, m}, {n, 1}, {n, 1}});
    const int64_t shape[] = {m, n};
    GetSym(so, "add_t")(data, strides.data(), shape);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) REQUIRE(out[i * n + j] == xs[j * m + i] + ys[i * n + j]);
  }
}

TEST_CASE("run-time sizes are loaded from the third argument; static dims stay constants",
          "[cpu_backend][symbolic]") {
  CpuTarget target;
  target.cpu = "x86-64";
  absl::StatusOr<CpuModule> module = CompileCpuKernels({RuntimeRowsKernel()}, target);
  REQUIRE(module.ok());
  const std::string& ir = module->llvm_ir;
  INFO(ir);
  // The ABI: three pointer arguments, dim 0's size read from %shape (no dim 1 load: it is 8).
  CHECK(ir.find("define void @relu_rows(ptr nocapture noundef readonly %data, ptr nocapture "
                "noundef readonly "
                "%strides, ptr nocapture noundef readonly %shape)") != std::string::npos);
  CHECK(ir.find("%size0 = load i64, ptr %shape") != std::string::npos);
  CHECK(ir.find("size1") == std::string::npos);
  // An empty iteration space returns before anything else.
  CHECK(ir.find("icmp slt i64 %size0, 1") != std::string::npos);
  CHECK(ir.find("fadd <4 x float>") != std::string::npos);  // the flat loop is still vectorised
}

TEST_CASE("the printer and the verifier know run-time dims", "[cpu_backend][symbolic]") {
  const PointwiseKernel k = RuntimeRowsKernel();
  CHECK(HasRuntimeShape(k));
  CHECK(VerifyPointwiseKernel(k).empty());
  CHECK(PrintPointwiseKernel(k).rfind("pointwise @relu_rows[?,8](", 0) == 0);
  // Row reductions may have run-time row counts and a run-time row length when the row is one
  // dim (CUDA row kernels of symbolic graphs); not a run-time dim among several reduced ones.
  // Column reductions may have run-time row counts (the reduced, leading dims), not run-time
  // columns.
  PointwiseKernel reduction = k;
  reduction.reduction.num_reduced_dims = 1;
  reduction.reduction.row_operand.assign(4, false);
  CHECK(VerifyPointwiseKernel(reduction).empty());
  reduction.reduction.num_reduced_dims = 2;
  CHECK(VerifyPointwiseKernel(reduction).find("run-time size in reduced dim 0 of several") !=
        std::string::npos);
  reduction.reduction.num_reduced_dims = 1;
  reduction.reduction.axis = RowReduction::Axis::kLeading;
  reduction.reduction.kept_broadcast.assign(4, false);
  CHECK(VerifyPointwiseKernel(reduction).empty());
  std::swap(reduction.shape[0], reduction.shape[1]);
  CHECK(VerifyPointwiseKernel(reduction).find(
            "a column reduction with a run-time size in kept dim 1") != std::string::npos);
}

}  // namespace
}  // namespace tccd::codegen::testing
