// cpu_math_bench: times fused f32 kernels built on the inline transcendentals
// (codegen/cpu/vector_math.h) over 4M elements (by default), single-threaded, and prints the best
// time of several runs and the effective bandwidth (bytes read + written / time).
//
// Not a test (no assertions beyond "it ran"); run by hand:
//   build/bin/cpu_math_bench [reps=30] [cpu=x86-64-v3] [numel=4194304]
// (cpu "x86-64-v4/256-bit": AVX-512 with 256-bit vectors, CpuTarget::wide_vectors off)
// The kernels are compiled for x86-64-v3 when the host supports it, else for the host's level.
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/cpu/cpu_backend.h"
#include "codegen/kernel/pointwise_kernel.h"

namespace tccd::codegen {
namespace {

using ir::DType;
using KernelFn = void (*)(void* const* data, const int64_t* strides);

// Elements per kernel: 4M by default (the third argument overrides it).
int64_t numel = int64_t{1} << 22;

// A one-dimensional f32 kernel under construction.
class Builder {
 public:
  explicit Builder(std::string name) {
    k_.name = std::move(name);
    k_.shape = {numel};
  }
  int Input() {
    k_.input_dtypes.push_back(DType::kF32);
    return Push({PwOp::kLoad, DType::kF32, {}, static_cast<int>(k_.input_dtypes.size()) - 1});
  }
  int C(double v) {
    PwInstr in{PwOp::kConstant, DType::kF32};
    in.fvalue = v;
    return Push(in);
  }
  int Op(PwOp op, std::vector<int> args) { return Push({op, DType::kF32, std::move(args)}); }
  PointwiseKernel Finish(int value) {
    k_.output_dtypes.push_back(DType::kF32);
    Push({PwOp::kStore, DType::kF32, {value}, 0});
    return k_;
  }

 private:
  int Push(PwInstr in) {
    k_.body.push_back(std::move(in));
    return static_cast<int>(k_.body.size()) - 1;
  }
  PointwiseKernel k_;
};

PointwiseKernel Unary(const char* name, PwOp op) {
  Builder b(name);
  return b.Finish(b.Op(op, {b.Input()}));
}

// 0.5 * x * (1 + erf(x / sqrt(2)))
PointwiseKernel Gelu() {
  Builder b("gelu");
  const int x = b.Input();
  const int erf = b.Op(PwOp::kErf, {b.Op(PwOp::kMul, {x, b.C(M_SQRT1_2)})});
  return b.Finish(
      b.Op(PwOp::kMul, {b.Op(PwOp::kMul, {x, b.C(0.5)}), b.Op(PwOp::kAdd, {erf, b.C(1.0)})}));
}

// dy * (cdf(x) + x * pdf(x)), as ATen's GeluBackward (approximate='none').
PointwiseKernel GeluBackward() {
  Builder b("gelu_backward");
  const int dy = b.Input(), x = b.Input();
  const int erf = b.Op(PwOp::kErf, {b.Op(PwOp::kMul, {x, b.C(M_SQRT1_2)})});
  const int cdf = b.Op(PwOp::kMul, {b.C(0.5), b.Op(PwOp::kAdd, {erf, b.C(1.0)})});
  const int x2 = b.Op(PwOp::kMul, {x, x});
  const int pdf = b.Op(
      PwOp::kMul, {b.Op(PwOp::kExp, {b.Op(PwOp::kMul, {x2, b.C(-0.5)})}), b.C(0.3989422804014327)});
  return b.Finish(b.Op(PwOp::kMul, {dy, b.Op(PwOp::kAdd, {cdf, b.Op(PwOp::kMul, {x, pdf})})}));
}

// pow(x, y) with a tensor exponent (x > 0 in the benchmark).
PointwiseKernel Pow() {
  Builder b("k_pow");
  const int y = b.Input(), x = b.Input();
  return b.Finish(b.Op(PwOp::kPow, {x, y}));
}

// relu(x): no transcendental, for a memory-bound reference point.
PointwiseKernel Relu() {
  Builder b("relu");
  return b.Finish(b.Op(PwOp::kMaximum, {b.Input(), b.C(0.0)}));
}

// `wanted` is an ISA level, "/256-bit" after it keeps an AVX-512 level's vectors 256 bits wide
// (CpuTarget::wide_vectors off), e.g. "x86-64-v4/256-bit".
CpuTarget PickTarget(std::string wanted) {
  const std::string narrow = "/256-bit";
  const bool wide_vectors = !wanted.ends_with(narrow);
  if (!wide_vectors) wanted.resize(wanted.size() - narrow.size());
  struct utsname names;
  uname(&names);
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::vector<std::string> flags;
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    for (std::string w; words >> w;) flags.push_back(w);
    break;
  }
  absl::StatusOr<CpuTarget> host = CpuTargetFromFeatures(names.machine, flags);
  if (!host.ok()) {
    std::fprintf(stderr, "%s\n", host.status().ToString().c_str());
    exit(1);
  }
  const std::vector<std::string> levels = {"x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"};
  const auto rank = [&](const std::string& cpu) {
    return std::find(levels.begin(), levels.end(), cpu) - levels.begin();
  };
  CpuTarget target = *host;
  if (rank(wanted) <= rank(host->cpu)) target.cpu = wanted;
  target.wide_vectors = wide_vectors;
  return target;
}

void* Load(const std::string& so) {
  char path[] = "/tmp/cpu_math_bench-XXXXXX.so";
  const int fd = mkstemps(path, 3);
  if (fd < 0 || write(fd, so.data(), so.size()) != static_cast<ssize_t>(so.size())) exit(1);
  close(fd);
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  unlink(path);
  if (handle == nullptr) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    exit(1);
  }
  return handle;
}

int Main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, atoi(argv[1])) : 30;
  const CpuTarget target = PickTarget(argc > 2 ? argv[2] : "x86-64-v3");
  if (argc > 3) numel = std::max<int64_t>(1, atoll(argv[3]));
  const std::vector<PointwiseKernel> kernels = {
      Gelu(),
      GeluBackward(),
      Unary("k_sigmoid", PwOp::kSigmoid),
      Unary("k_tanh", PwOp::kTanh),
      Unary("k_exp", PwOp::kExp),
      Unary("k_log", PwOp::kLog),
      Unary("k_erf", PwOp::kErf),
      Unary("k_sin", PwOp::kSin),
      Unary("k_cos", PwOp::kCos),
      Pow(),
      Relu(),
  };
  const auto compile_start = std::chrono::steady_clock::now();
  absl::StatusOr<CpuModule> module = CompileCpuKernels(kernels, target);
  if (!module.ok()) {
    std::fprintf(stderr, "%s\n", module.status().ToString().c_str());
    return 1;
  }
  const double compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - compile_start)
          .count();
  void* so = Load(module->shared_object);
  if (const char* dump = getenv("CPU_MATH_BENCH_IR")) std::ofstream(dump) << module->llvm_ir;

  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.f, 2.f);
  std::vector<float> x(numel), dy(numel), out(numel);
  for (float& v : x) v = normal(rng);
  for (float& v : dy) v = normal(rng);
  std::vector<float> positive(numel);  // log's input
  for (int64_t i = 0; i < numel; ++i) positive[i] = std::fabs(x[i]) + 1e-3f;

  std::printf(
      "%lld f32 elements, %s, best of %d runs (single thread); %zu kernels compiled in "
      "%.0f ms\n",
      static_cast<long long>(numel), target.KeyString().c_str(), reps, kernels.size(), compile_ms);
  std::printf("%-14s %9s %9s\n", "kernel", "ms", "GB/s");
  for (const PointwiseKernel& kernel : kernels) {
    auto fn = reinterpret_cast<KernelFn>(dlsym(so, kernel.name.c_str()));
    std::vector<void*> data;
    const bool positive_x = kernel.name == "k_log" || kernel.name == "k_pow";
    if (kernel.input_dtypes.size() == 2) data.push_back(dy.data());
    data.push_back(positive_x ? positive.data() : x.data());
    data.push_back(out.data());
    std::vector<int64_t> strides(data.size(), 1);
    double best = 1e30;
    for (int r = 0; r < reps + 2; ++r) {  // the first two runs warm caches and page tables
      const auto start = std::chrono::steady_clock::now();
      fn(data.data(), strides.data());
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      if (r >= 2) best = std::min(best, ms);
    }
    const double bytes = static_cast<double>(numel) * 4 * data.size();
    std::printf("%-14s %9.3f %9.2f\n", kernel.name.c_str(), best, bytes / best / 1e6);
  }
  dlclose(so);
  return 0;
}

}  // namespace
}  // namespace tccd::codegen

int main(int argc, char** argv) { return tccd::codegen::Main(argc, argv); }
