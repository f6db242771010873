// Helpers for the CUDA host library's tests: modules with fake cubins, and a generated .so
// written to a private file and dlopen'ed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "codegen/cuda/cuda_backend.h"
#include "codegen/kernel/pointwise_kernel.h"

namespace tccd::codegen::cuda_host_testing {

// The launch information CompileCudaKernels derives from `kernel`, with the given vector width.
CudaKernelLaunchInfo LaunchInfoFor(const PointwiseKernel& kernel, int elements_per_thread);

// A CudaModule for `kernels` (vector width 4 each) whose cubin is `cubin`: enough for
// everything but a real GPU.
CudaModule FakeModule(
    absl::Span<const PointwiseKernel> kernels,
    std::string cubin = "not really a cubin, but bytes \x7f\x00\x01 all the same");

// relu(a * b + c) on f32 and gelu on bf16 (the CUDA backend's test kernels), named "relu" and
// "gelu", in the given shapes.
std::vector<PointwiseKernel> TwoKernels(std::vector<int64_t> relu_shape = {64, 33},
                                        std::vector<int64_t> gelu_shape = {1000});

// Row-major element strides of `shape`.
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& shape);

// A .so loaded from its own temporary directory (so that every instance is a separate copy
// with its own runtime state); unloaded and deleted on destruction.
class LoadedLibrary {
 public:
  static absl::StatusOr<LoadedLibrary> Load(const std::string& bytes);
  LoadedLibrary(LoadedLibrary&& other) noexcept;
  LoadedLibrary(const LoadedLibrary&) = delete;
  LoadedLibrary& operator=(const LoadedLibrary&) = delete;
  ~LoadedLibrary();

  void* Symbol(const char* name) const;  // nullptr if absent

  using KernelFn = int (*)(void* const* data, const int64_t* strides, void* stream);
  KernelFn Kernel(const char* name) const { return reinterpret_cast<KernelFn>(Symbol(name)); }
  int Init() const;               // tccd_cuda_init()
  std::string LastError() const;  // tccd_cuda_last_error()

 private:
  LoadedLibrary(std::string dir, void* handle) : dir_(std::move(dir)), handle_(handle) {}
  std::string dir_;
  void* handle_ = nullptr;
};

}  // namespace tccd::codegen::cuda_host_testing
