// cuda_host_gpu_gen OUT_DIR [CC_MAJOR CC_MINOR]: compiles the GPU check's kernels
// (cuda_host_gpu_cases.h) with CompileCudaKernels for sm_<major><minor> (default sm_90: H100,
// H200) and writes OUT_DIR/kernels_cuda.so with BuildCudaHostLibrary. Runs here (LLVM, NVRTC);
// cuda_host_gpu_check then runs the .so on the GPU machine, which has neither.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "codegen/cuda/cuda_backend.h"
#include "codegen/cuda_host/cuda_host.h"
#include "cuda_host_gpu_cases.h"
#include "tests/codegen/cuda/cuda_test_kernels.h"

namespace {

using tccd::codegen::PointwiseKernel;
using tccd::codegen::PwOp;
using tccd::codegen::cuda_testing::FusedReluKernel;
using tccd::codegen::cuda_testing::KernelBuilder;
using tccd::ir::DType;
namespace cases = tccd::cuda_host_gpu;

std::vector<PointwiseKernel> Kernels() {
  std::vector<PointwiseKernel> kernels;
  kernels.push_back(FusedReluKernel(cases::kRelu, {cases::kReluRows, cases::kReluCols}));
  kernels.push_back(FusedReluKernel(cases::kReluBig, {cases::kReluBigRows, cases::kReluBigCols}));
  {
    KernelBuilder k(cases::kCastBf16, {cases::kCastRows, cases::kCastCols});
    k.Output(k.Cast(k.Input(DType::kF32), DType::kBF16));
    kernels.push_back(k.kernel());
  }
  {
    KernelBuilder k(cases::kAddT, {cases::kAddRows, cases::kAddCols});
    const int a = k.Input(DType::kF32), b = k.Input(DType::kF32);
    k.Output(k.Op(PwOp::kAdd, DType::kF32, {a, b}));
    kernels.push_back(k.kernel());
  }
  return kernels;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 4) {
    std::fprintf(stderr, "usage: %s OUT_DIR [CC_MAJOR CC_MINOR]\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  tccd::codegen::CudaTarget target;
  if (argc == 4) target = {.cc_major = std::atoi(argv[2]), .cc_minor = std::atoi(argv[3])};
  const std::vector<PointwiseKernel> kernels = Kernels();
  auto module = tccd::codegen::CompileCudaKernels(kernels, target);
  if (!module.ok()) {
    std::fprintf(stderr, "CompileCudaKernels: %s\n", module.status().ToString().c_str());
    return 1;
  }
  auto so = tccd::codegen::BuildCudaHostLibrary(*module);
  if (!so.ok()) {
    std::fprintf(stderr, "BuildCudaHostLibrary: %s\n", so.status().ToString().c_str());
    return 1;
  }
  const std::string path = dir + "/" + cases::kLibraryFile;
  std::ofstream out(path, std::ios::binary);
  out.write(so->data(), static_cast<std::streamsize>(so->size()));
  out.close();
  if (!out) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    return 1;
  }
  std::printf("wrote %s: %zu bytes, %zu kernels, %zu-byte cubin for %s\n", path.c_str(), so->size(),
              kernels.size(), module->cubin.size(), target.KeyString().c_str());
  for (const tccd::codegen::CudaKernel& kernel : module->kernels) {
    const tccd::codegen::CudaKernelLaunchInfo& info = kernel.launch;
    std::printf("  %s: numel %lld, %d operands, elements_per_thread %d\n", info.name.c_str(),
                static_cast<long long>(info.numel), info.num_operands, info.elements_per_thread);
  }
  return 0;
}
