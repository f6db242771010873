// BuildCudaHostLibrary without a GPU or a driver: the .so's symbol tables (exports exactly the
// stubs and the two C entry points, libc-only imports, no DT_NEEDED), input errors,
// determinism, and loading it here, where calls must fail cleanly for want of a driver. The
// launch logic itself runs against a fake driver in a child process
// (cuda_host_fake_driver_test.cc).
#include "codegen/cuda_host/cuda_host.h"

#include <dlfcn.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "codegen/cuda/cuda_backend.h"
#include "codegen/cuda_host/host_imports.h"
#include "codegen/llvm/elf_symbols.h"
#include "codegen/llvm/lld_link.h"
#include "cuda_host_test_util.h"
#include "tests/codegen/cuda/cuda_test_kernels.h"

extern char** environ;

namespace tccd::codegen {
namespace {

using cuda_host_testing::FakeModule;
using cuda_host_testing::LoadedLibrary;
using cuda_host_testing::RowMajorStrides;
using cuda_host_testing::TwoKernels;

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

void CheckSymbols(const std::string& so, std::vector<std::string> kernel_names) {
  absl::StatusOr<DynamicSymbols> symbols = ReadDynamicSymbols(so);
  REQUIRE(symbols.ok());
  kernel_names.push_back("tccd_cuda_init");
  kernel_names.push_back("tccd_cuda_last_error");
  CHECK(Sorted(symbols->defined) == Sorted(kernel_names));
  CHECK(symbols->num_needed == 0);
  for (const std::string& name : symbols->undefined) {
    INFO(name);
    CHECK(IsCudaHostImport(name));
  }
  // The driver is reached only through these.
  CHECK(std::count(symbols->undefined.begin(), symbols->undefined.end(), "dlopen") == 1);
  CHECK(std::count(symbols->undefined.begin(), symbols->undefined.end(), "dlsym") == 1);
}

TEST_CASE("a host library link leaves no LLD pointer into the freed linker context",
          "[cuda_host]") {
  // Issue 12: the host library references _GLOBAL_OFFSET_TABLE_, so LLD 16 kept a pointer to
  // that symbol after the link freed it, and the next in-process link (a CPU kernel .so) wrote
  // through it (valgrind: Invalid write in Writer::finalizeSections). lld_link.cc clears them.
  const std::vector<PointwiseKernel> kernels = TwoKernels();
  REQUIRE(BuildCudaHostLibrary(FakeModule(kernels)).ok());
  CHECK(LldSymbolPointersLeftForTesting() == 0);
}

TEST_CASE("the library exports exactly the kernels and the two C entry points", "[cuda_host]") {
  const std::vector<PointwiseKernel> kernels = TwoKernels();
  absl::StatusOr<std::string> so = BuildCudaHostLibrary(FakeModule(kernels));
  REQUIRE(so.ok());
  CHECK(so->substr(0, 4) ==
        "\x7f"
        "ELF");
  CheckSymbols(*so, {"relu", "gelu"});
  // The cubin travels inside, byte for byte.
  CHECK(so->find(FakeModule(kernels).cubin) != std::string::npos);
}

TEST_CASE("a real NVRTC module becomes a library with its cubin inside", "[cuda_host]") {
  const std::vector<PointwiseKernel> kernels = TwoKernels();
  absl::StatusOr<CudaModule> module = CompileCudaKernels(kernels, CudaTarget{});
  if (!module.ok() && absl::IsFailedPrecondition(module.status())) {
    WARN("skipped, no NVRTC: " << module.status());
    return;
  }
  REQUIRE(module.ok());
  absl::StatusOr<std::string> so = BuildCudaHostLibrary(*module);
  REQUIRE(so.ok());
  CheckSymbols(*so, {"relu", "gelu"});
  CHECK(so->find(module->cubin) != std::string::npos);
}

TEST_CASE("the same module gives the same bytes, also from concurrent builds", "[cuda_host]") {
  const std::vector<PointwiseKernel> kernels = TwoKernels();
  const CudaModule module = FakeModule(kernels);
  absl::StatusOr<std::string> first = BuildCudaHostLibrary(module);
  REQUIRE(first.ok());
  std::vector<absl::StatusOr<std::string>> results(4);
  std::vector<std::thread> threads;
  for (auto& result : results) {
    threads.emplace_back([&] { result = BuildCudaHostLibrary(module); });
  }
  for (std::thread& t : threads) t.join();
  for (const auto& result : results) {
    REQUIRE(result.ok());
    CHECK(*result == *first);
  }
  // And different kernels give different bytes.
  const std::vector<PointwiseKernel> other = TwoKernels({64, 34});
  absl::StatusOr<std::string> changed = BuildCudaHostLibrary(FakeModule(other));
  REQUIRE(changed.ok());
  CHECK(*changed != *first);
}

TEST_CASE("bad modules are INVALID_ARGUMENT", "[cuda_host]") {
  const std::vector<PointwiseKernel> kernels = TwoKernels();
  auto build = [&](const CudaModule& module) { return BuildCudaHostLibrary(module).status(); };
  auto expect_invalid = [](const absl::Status& status, const std::string& fragment) {
    INFO(status);
    CHECK(absl::IsInvalidArgument(status));
    CHECK(std::string(status.message()).find(fragment) != std::string::npos);
  };
  expect_invalid(build(CudaModule{.cubin = "x"}), "no CUDA kernels");
  expect_invalid(build(FakeModule(kernels, "")), "no cubin");
  {
    // A kernel's launch information is checked against the IR it travels with.
    CudaModule module = FakeModule(kernels);
    module.kernels[1].ir.name = "other";
    expect_invalid(build(module), "name");
  }

  for (const char* name : {"tccd_cuda_init", "tccd_cuda_last_error", "tccd_rt_launch", "dlopen",
                           "memcpy", "__tls_get_addr"}) {
    std::vector<PointwiseKernel> renamed = kernels;
    renamed[0].name = name;
    expect_invalid(build(FakeModule(renamed)), "reserved");
  }
  for (const char* name : {"", "9lives", "has space", "dash-ed", "dot.ted"}) {
    std::vector<PointwiseKernel> renamed = kernels;
    renamed[0].name = name;
    expect_invalid(build(FakeModule(renamed)), "not a C identifier");
  }
  {
    std::vector<PointwiseKernel> twins = kernels;
    twins[1].name = twins[0].name;
    expect_invalid(build(FakeModule(twins)), "duplicate");
  }
  {
    CudaModule module = FakeModule(kernels);
    module.kernels[0].launch.numel += 1;
    expect_invalid(build(module), "numel");
  }
  {
    CudaModule module = FakeModule(kernels);
    module.kernels[0].ir = TwoKernels({64, 34})[0];
    expect_invalid(build(module), "numel");
  }
  {
    CudaModule module = FakeModule(kernels);
    module.kernels[1].launch.rank = 2;
    expect_invalid(build(module), "rank");
  }
  {
    CudaModule module = FakeModule(kernels);
    module.kernels[0].launch.strided_param_bytes += 8;
    expect_invalid(build(module), "parameter sizes");
  }
  {
    CudaModule module = FakeModule(kernels);
    module.kernels[0].launch.strided_entry = module.kernels[0].launch.contig_entry;
    expect_invalid(build(module), "entry point");
  }
  {
    CudaModule module = FakeModule(kernels);
    module.kernels[0].launch.block_size = 0;
    expect_invalid(build(module), "block size");
  }
  {
    // 17 operands * 8 bytes * (1 + 30 dims) > 4096.
    cuda_testing::KernelBuilder b("wide", std::vector<int64_t>(30, 1));
    int sum = b.Input(ir::DType::kF32);
    for (int i = 0; i < 15; ++i)
      sum = b.Op(PwOp::kAdd, ir::DType::kF32, {sum, b.Input(ir::DType::kF32)});
    b.Output(sum);
    const std::vector<PointwiseKernel> wide = {b.kernel()};
    expect_invalid(build(FakeModule(wide)), "exceed");
  }
}

// Without a driver (CI): the library loads, and every call fails with a message instead of
// crashing.
TEST_CASE("without a CUDA driver the library loads and its calls fail cleanly", "[cuda_host]") {
  if (void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL)) {
    dlclose(driver);
    WARN("skipped: this machine has a CUDA driver (libcuda.so.1)");
    return;
  }
  std::vector<PointwiseKernel> kernels = TwoKernels();
  kernels.push_back(cuda_testing::FusedReluKernel("empty", {0, 7}));
  absl::StatusOr<std::string> so = BuildCudaHostLibrary(FakeModule(kernels));
  REQUIRE(so.ok());
  absl::StatusOr<LoadedLibrary> lib = LoadedLibrary::Load(*so);
  REQUIRE(lib.ok());

  CHECK(lib->LastError().empty());
  CHECK(lib->Init() == 35);  // cudaErrorInsufficientDriver
  CHECK_THAT(lib->LastError(), Catch::Contains("the CUDA driver could not be loaded") &&
                                   Catch::Contains("libcuda.so.1"));

  // A launch fails the same way (and tries to load the driver again).
  const std::vector<int64_t> shape = {64, 33};
  std::vector<int64_t> strides;
  for (int o = 0; o < 4; ++o) {
    for (int64_t s : RowMajorStrides(shape)) strides.push_back(s);
  }
  void* data[4] = {reinterpret_cast<void*>(0x1000), reinterpret_cast<void*>(0x2000),
                   reinterpret_cast<void*>(0x3000), reinterpret_cast<void*>(0x4000)};
  CHECK(lib->Kernel("relu")(data, strides.data(), nullptr) == 35);
  // Nothing to launch needs no driver.
  CHECK(lib->Kernel("empty")(data, strides.data(), nullptr) == 0);

  // The message is per thread.
  std::string other_thread_error = "unset";
  std::thread([&] { other_thread_error = lib->LastError(); }).join();
  CHECK(other_thread_error.empty());
}

// Runs the hidden [fake_driver] tests in a child process: they load a fake libcuda.so.1, which
// would otherwise stay in this process and defeat the no-driver test above.
TEST_CASE("the library runs end to end against a fake driver (child process)", "[cuda_host]") {
  char self[] = "/proc/self/exe";
  char spec[] = "[fake_driver]";
  char warn[] = "--warn";
  char no_tests[] = "NoTests";  // exit 2 if the filter matched nothing
  char* argv[] = {self, spec, warn, no_tests, nullptr};
  pid_t pid = 0;
  REQUIRE(posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv, environ) == 0);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace tccd::codegen
