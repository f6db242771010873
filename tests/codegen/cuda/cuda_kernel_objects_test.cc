// CompileCudaKernelObjects without a GPU: one relocatable NVRTC program per distinct kernel,
// reuse from a cache, one linked cubin that holds every entry the launch infos name, and a
// cached cubin that does not link is recompiled, never used.
#include "codegen/cuda/cuda_kernel_objects.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "cuda_test_kernels.h"

namespace tccd::codegen::cuda_testing {
namespace {

class MapCache final : public KernelObjectCache {
 public:
  absl::StatusOr<absl::flat_hash_map<std::string, std::string>> Lookup(
      absl::Span<const std::string> keys) override {
    absl::flat_hash_map<std::string, std::string> found;
    for (const std::string& key : keys)
      if (auto it = objects.find(key); it != objects.end()) found.emplace(key, it->second);
    return found;
  }
  void Store(const std::vector<KernelObject>& fresh) {
    for (const KernelObject& o : fresh) objects[o.key] = o.bytes;
  }
  std::map<std::string, std::string> objects;
};

bool HasEntry(const std::string& cubin, const std::string& entry) {
  return cubin.find(entry + '\0') != std::string::npos;
}

// Every launch info names its graph kernel and content-named entries present in the cubin.
void CheckModule(const CudaModule& module, const std::vector<PointwiseKernel>& kernels) {
  REQUIRE(module.kernels.size() == kernels.size());
  for (size_t k = 0; k < kernels.size(); ++k) {
    CHECK(module.kernels[k].launch.name == kernels[k].name);
    // The content name says the kind of kernel, as a profiler's table shows it.
    const char* prefix = kernels[k].is_row_reduction() ? "tccd_red_" : "tccd_pw_";
    CHECK(module.kernels[k].launch.contig_entry.rfind(prefix, 0) == 0);
    CHECK(HasEntry(module.cubin, module.kernels[k].launch.contig_entry));
    CHECK(HasEntry(module.cubin, module.kernels[k].launch.strided_entry));
  }
}

TEST_CASE("CUDA kernels compile one program each, link into one cubin, and are reused",
          "[cuda_backend][kernel_cache]") {
  MapCache cache;
  const CudaKernelObjectsOptions options{.fingerprint = "test", .cache = &cache, .threads = 2};
  const std::vector<PointwiseKernel> first = {FusedReluKernel("g1_k0", {64, 32}),
                                              SoftmaxRowsKernel("g1_k1", {16, 128}),
                                              FusedReluKernel("g1_k2", {64, 32})};
  absl::StatusOr<CudaKernelObjectsResult> one =
      CompileCudaKernelObjects(first, CudaTarget{}, options);
  if (absl::IsFailedPrecondition(one.status())) {
    WARN("skipped, no NVRTC: " << one.status().ToString());
    return;
  }
  REQUIRE(one.ok());
  if (one->kernels_compiled == 0) {
    WARN("skipped, no nvJitLink: the graph compiled as one program");
    return;
  }
  CHECK(one->kernels_compiled == 2);  // g1_k0 and g1_k2 are the same kernel
  CHECK(one->kernels_reused == 0);
  CHECK(one->module.kernels[0].launch.contig_entry == one->module.kernels[2].launch.contig_entry);
  CheckModule(one->module, first);
  cache.Store(one->new_objects);

  const std::vector<PointwiseKernel> second = {SoftmaxRowsKernel("g2_k0", {16, 128}),
                                               Bf16GeluKernel("g2_k1", {1000})};
  absl::StatusOr<CudaKernelObjectsResult> two =
      CompileCudaKernelObjects(second, CudaTarget{}, options);
  REQUIRE(two.ok());
  CHECK(two->kernels_compiled == 1);
  CHECK(two->kernels_reused == 1);
  CheckModule(two->module, second);

  // A cached cubin that is not one: the link fails, every kernel is compiled afresh.
  cache.Store(two->new_objects);
  for (auto& [key, bytes] : cache.objects) bytes = "not a cubin";
  absl::StatusOr<CudaKernelObjectsResult> again =
      CompileCudaKernelObjects(second, CudaTarget{}, options);
  REQUIRE(again.ok());
  CHECK(again->kernels_compiled == 2);
  CHECK(again->kernels_reused == 0);
  CheckModule(again->module, second);
}

}  // namespace
TEST_CASE("the longest kernel sources start compiling first, ties in first-use order",
          "[cuda_kernel_objects]") {
  // Kernel 2 (a long row reduction) would otherwise start last on a busy pool.
  CHECK(KernelCompileOrder({900, 4000, 12000, 4000, 800}, true) ==
        std::vector<size_t>{2, 1, 3, 0, 4});
  // TCCD_LONGEST_KERNELS_FIRST=0: first-use order, as before.
  CHECK(KernelCompileOrder({900, 4000, 12000, 4000, 800}, false) ==
        std::vector<size_t>{0, 1, 2, 3, 4});
  CHECK(KernelCompileOrder({}, true).empty());
}

}  // namespace tccd::codegen::cuda_testing
