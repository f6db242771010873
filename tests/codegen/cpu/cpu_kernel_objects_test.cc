// CompileCpuKernelObjects: kernel keys, per-kernel objects, reuse from a cache, parallel compiles,
// and a cached object that is not what its key promises is never linked into a graph.
#include "codegen/cpu/cpu_kernel_objects.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "test_util.h"

namespace tccd::codegen::testing {
namespace {

// out = a * b + <c>, a kernel per constant
PointwiseKernel AffineKernel(const std::string& name, double c,
                             std::vector<int64_t> shape = {5, 7}) {
  KernelBuilder k(name, std::move(shape));
  const int a = k.Input(DType::kF32), b = k.Input(DType::kF32);
  const int mul = k.Op(PwOp::kMul, DType::kF32, {a, b});
  k.Output(k.Op(PwOp::kAdd, DType::kF32, {mul, k.Const(DType::kF32, c)}));
  return k.kernel();
}

// A KernelObjectCache over a map, counting lookups.
class MapCache final : public KernelObjectCache {
 public:
  absl::StatusOr<absl::flat_hash_map<std::string, std::string>> Lookup(
      absl::Span<const std::string> keys) override {
    ++lookups;
    absl::flat_hash_map<std::string, std::string> found;
    for (const std::string& key : keys)
      if (auto it = objects.find(key); it != objects.end()) found.emplace(key, it->second);
    return found;
  }
  void Store(const std::vector<KernelObject>& fresh) {
    for (const KernelObject& o : fresh) objects[o.key] = o.bytes;
  }
  std::map<std::string, std::string> objects;
  int lookups = 0;
};

const char kFingerprint[] = "test-fingerprint";

// Runs kernel `name` of `so` on 35 elements: out = a * b + c.
void ExpectAffine(const CpuModule& module, const std::string& name, float c) {
  LoadedModule so(module.shared_object);
  KernelFn fn = so.Get(name);
  std::vector<float> a(35), b(35), out(35, -1.f);
  for (int i = 0; i < 35; ++i) a[i] = 0.5f * i, b[i] = 1.f - 0.25f * i;
  RunContiguous(fn, {5, 7}, {a.data(), b.data(), out.data()});
  for (int i = 0; i < 35; ++i) REQUIRE(out[i] == a[i] * b[i] + c);
}

TEST_CASE("kernel keys ignore the kernel's name and see everything else", "[kernel_cache]") {
  const std::string base = KernelKey(AffineKernel("k0", 1.0), "cpu-object", "t", kFingerprint);
  CHECK(base.size() == 64);
  CHECK(KernelKey(AffineKernel("other_name", 1.0), "cpu-object", "t", kFingerprint) == base);
  CHECK(KernelKey(AffineKernel("k0", 1.0000001), "cpu-object", "t", kFingerprint) != base);
  CHECK(KernelKey(AffineKernel("k0", 1.0, {5, 8}), "cpu-object", "t", kFingerprint) != base);
  CHECK(KernelKey(AffineKernel("k0", 1.0), "cpu-object", "t2", kFingerprint) != base);
  CHECK(KernelKey(AffineKernel("k0", 1.0), "cpu-object", "t", "other build") != base);
  CHECK(KernelKey(AffineKernel("k0", 1.0), "cuda-cubin", "t", kFingerprint) != base);
  // Which entry points a CUDA kernel emits changes its object.
  PointwiseKernel dense_only = AffineKernel("k0", 1.0);
  dense_only.entries = KernelEntries::kDense;
  CHECK(KernelKey(dense_only, "cpu-object", "t", kFingerprint) != base);
}

TEST_CASE("identical kernels of one graph compile once; a second graph reuses them",
          "[kernel_cache]") {
  MapCache cache;
  const CpuKernelObjectsOptions options{.fingerprint = kFingerprint, .cache = &cache, .threads = 4};
  const std::vector<PointwiseKernel> first = {
      AffineKernel("g1_k0", 1.0), AffineKernel("g1_k1", 2.0), AffineKernel("g1_k2", 1.0)};
  absl::StatusOr<CpuKernelObjectsResult> one =
      CompileCpuKernelObjects(first, HostTarget(), options);
  REQUIRE(one.ok());
  CHECK(one->kernels_compiled == 2);
  CHECK(one->kernels_reused == 0);
  REQUIRE(one->new_objects.size() == 2);
  ExpectAffine(one->module, "g1_k0", 1.f);
  ExpectAffine(one->module, "g1_k1", 2.f);
  ExpectAffine(one->module, "g1_k2", 1.f);
  cache.Store(one->new_objects);

  // Another graph: the kernel with constant 2 again (under another name) and a new one.
  const std::vector<PointwiseKernel> second = {AffineKernel("g2_k0", 3.0),
                                               AffineKernel("g2_k1", 2.0)};
  absl::StatusOr<CpuKernelObjectsResult> two =
      CompileCpuKernelObjects(second, HostTarget(), options);
  REQUIRE(two.ok());
  CHECK(two->kernels_compiled == 1);
  CHECK(two->kernels_reused == 1);
  REQUIRE(two->new_objects.size() == 1);
  ExpectAffine(two->module, "g2_k0", 3.f);
  ExpectAffine(two->module, "g2_k1", 2.f);
}

TEST_CASE("a cached object that does not link is recompiled, never served", "[kernel_cache]") {
  MapCache cache;
  const CpuKernelObjectsOptions options{.fingerprint = kFingerprint, .cache = &cache, .threads = 2};
  const std::vector<PointwiseKernel> kernels = {AffineKernel("k0", 1.5), AffineKernel("k1", 4.0)};
  absl::StatusOr<CpuKernelObjectsResult> clean =
      CompileCpuKernelObjects(kernels, HostTarget(), options);
  REQUIRE(clean.ok());
  cache.Store(clean->new_objects);
  // What an older build may have stored under a key that should have changed: not an object.
  cache.objects.begin()->second = "not an ELF object";
  absl::StatusOr<CpuKernelObjectsResult> again =
      CompileCpuKernelObjects(kernels, HostTarget(), options);
  REQUIRE(again.ok());
  CHECK(again->kernels_compiled == 2);
  CHECK(again->kernels_reused == 0);
  CHECK(again->new_objects.size() == 2);
  ExpectAffine(again->module, "k0", 1.5f);
  ExpectAffine(again->module, "k1", 4.0f);
}

TEST_CASE("without a cache every distinct kernel compiles, serially or in parallel alike",
          "[kernel_cache]") {
  std::vector<PointwiseKernel> kernels;
  for (int i = 0; i < 6; ++i) kernels.push_back(AffineKernel("k" + std::to_string(i), i));
  absl::StatusOr<CpuKernelObjectsResult> serial =
      CompileCpuKernelObjects(kernels, HostTarget(), {.fingerprint = kFingerprint, .threads = 1});
  absl::StatusOr<CpuKernelObjectsResult> parallel =
      CompileCpuKernelObjects(kernels, HostTarget(), {.fingerprint = kFingerprint, .threads = 6});
  REQUIRE(serial.ok());
  REQUIRE(parallel.ok());
  CHECK(serial->kernels_compiled == 6);
  REQUIRE(parallel->new_objects.size() == 6);
  // Objects do not depend on the thread that compiled them.
  for (size_t i = 0; i < 6; ++i)
    CHECK(serial->new_objects[i].bytes == parallel->new_objects[i].bytes);
  for (int i = 0; i < 6; ++i) ExpectAffine(parallel->module, "k" + std::to_string(i), i);
}

}  // namespace
}  // namespace tccd::codegen::testing
