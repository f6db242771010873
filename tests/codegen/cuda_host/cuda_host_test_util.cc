// The CUDA host library's test helpers (see cuda_host_test_util.h).
#include "cuda_host_test_util.h"

#include <dlfcn.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <utility>

#include "absl/status/status.h"
#include "tests/codegen/cuda/cuda_test_kernels.h"

namespace tccd::codegen::cuda_host_testing {

CudaKernelLaunchInfo LaunchInfoFor(const PointwiseKernel& kernel, int elements_per_thread) {
  CudaKernelLaunchInfo info;
  info.name = kernel.name;
  // As LaunchInfoOf: an entry the kernel does not emit has no name.
  if (kernel.has_dense_entry()) info.contig_entry = kernel.name + "_contig";
  if (kernel.has_strided_entry()) info.strided_entry = kernel.name + "_strided";
  info.block_size = kCudaBlockSize;
  info.elements_per_thread = elements_per_thread;
  info.numel = 1;
  for (int64_t d : kernel.shape) info.numel *= d == kRuntimeDim ? 1 : d;
  info.num_operands = kernel.num_operands();
  info.rank = static_cast<int>(kernel.shape.size());
  info.contig_param_bytes = 8 * info.num_operands;
  info.strided_param_bytes = 8 * info.num_operands * (1 + info.rank);
  if (HasRuntimeShape(kernel)) {  // run-time sizes: numel -1, the sizes in the parameters
    if (info.numel != 0) info.numel = -1;
    info.contig_param_bytes += 8;
    info.strided_param_bytes += 8 * info.rank;
  }
  if (HasScatter(kernel)) {  // as LaunchInfoOf: the output's elements to zero-fill in `grid`
    info.kind = CudaKernelKind::kScatter;
    info.grid = kernel.scatter_elements;
  }
  return info;
}

CudaModule FakeModule(absl::Span<const PointwiseKernel> kernels, std::string cubin) {
  CudaModule module;
  module.cubin = std::move(cubin);
  for (const PointwiseKernel& k : kernels) module.kernels.push_back({k, LaunchInfoFor(k, 4)});
  return module;
}

std::vector<PointwiseKernel> TwoKernels(std::vector<int64_t> relu_shape,
                                        std::vector<int64_t> gelu_shape) {
  return {cuda_testing::FusedReluKernel("relu", std::move(relu_shape)),
          cuda_testing::Bf16GeluKernel("gelu", std::move(gelu_shape))};
}

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t s = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = s;
    s *= shape[d];
  }
  return strides;
}

absl::StatusOr<LoadedLibrary> LoadedLibrary::Load(const std::string& bytes) {
  const char* base = getenv("TMPDIR");
  std::string dir = std::string(base && *base ? base : "/tmp") + "/tccd-cuda-host-test-XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) return absl::UnavailableError("mkdtemp failed");
  const std::string path = dir + "/kernels_cuda.so";
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const std::string error = dlerror();
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
    return absl::InternalError("dlopen: " + error);
  }
  return LoadedLibrary(std::move(dir), handle);
}

LoadedLibrary::LoadedLibrary(LoadedLibrary&& other) noexcept
    : dir_(std::move(other.dir_)), handle_(std::exchange(other.handle_, nullptr)) {
  other.dir_.clear();
}

LoadedLibrary::~LoadedLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
  if (!dir_.empty()) {
    std::error_code ignored;  // best effort
    std::filesystem::remove_all(dir_, ignored);
  }
}

void* LoadedLibrary::Symbol(const char* name) const { return dlsym(handle_, name); }

int LoadedLibrary::Init() const { return reinterpret_cast<int (*)()>(Symbol("tccd_cuda_init"))(); }

std::string LoadedLibrary::LastError() const {
  return reinterpret_cast<const char* (*)()>(Symbol("tccd_cuda_last_error"))();
}

}  // namespace tccd::codegen::cuda_host_testing
