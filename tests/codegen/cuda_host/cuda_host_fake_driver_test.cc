// A generated kernels_cuda.so, unmodified, against a fake CUDA driver (fake_cuda_driver.c):
// which entry point it picks, its grid, block and parameter bytes, the stream it passes, when
// it loads the module (once per context, never again on the launch path), contexts taken from
// the stream, errors, and concurrent first use.
//
// Hidden ([.fake_driver]): once loaded, the fake stays in the process, so cuda_host_test.cc runs
// these in a child process (`cuda_host_test [fake_driver]`).
#include <dlfcn.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "codegen/cuda/cuda_backend.h"
#include "codegen/cuda/cuda_row_emitter.h"
#include "codegen/cuda_host/cuda_host.h"
#include "codegen/cuda_host/runtime/tccd_cuda_runtime.h"
#include "codegen/cuda_host/runtime/tccd_cuda_tune.h"
#include "cuda_host_test_util.h"
#include "fake_cublaslt.h"
#include "fake_cuda_driver.h"
#include "tests/codegen/cuda/cuda_test_kernels.h"

namespace tccd::codegen {
namespace {

using cuda_host_testing::FakeModule;
using cuda_host_testing::LoadedLibrary;
using cuda_host_testing::RowMajorStrides;
using cuda_host_testing::TwoKernels;

// The fake's control API, resolved from the loaded fake.
struct Fake {
  decltype(&fake_cuda_set_current) set_current;
  decltype(&fake_cuda_set_stream_context) set_stream_context;
  decltype(&fake_cuda_set_num_sms) set_num_sms;
  decltype(&fake_cuda_set_occupancy) set_occupancy;
  decltype(&fake_cuda_add_entry) add_entry;
  decltype(&fake_cuda_fail) fail;
  decltype(&fake_cuda_calls) calls;
  decltype(&fake_cuda_num_launches) num_launches;
  decltype(&fake_cuda_last_launch) last_launch_into;
  decltype(&fake_cuda_last_image) last_image;
  decltype(&fake_cuda_context_depth) context_depth;
  decltype(&fake_cuda_live_objects) live_objects;
  decltype(&fake_cuda_capture_mode) capture_mode;

  fake_cuda_launch LastLaunch() const {
    fake_cuda_launch launch{};
    REQUIRE(last_launch_into(&launch) == 1);
    return launch;
  }
};

// Loads the fake driver (once per process, RTLD_GLOBAL like the real one) and resolves its
// control API.
const Fake& LoadFake() {
  static const Fake fake = [] {
    void* lib = dlopen(TCCD_FAKE_CUDA_DRIVER, RTLD_NOW | RTLD_GLOBAL);
    INFO(dlerror());
    REQUIRE(lib != nullptr);
    // The runtime's lookup must find it by its SONAME.
    REQUIRE(dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD) == lib);
    Fake f;
    auto get = [&](auto& field, const char* name) {
      field = reinterpret_cast<std::remove_reference_t<decltype(field)>>(dlsym(lib, name));
      REQUIRE(field != nullptr);
    };
    get(f.set_current, "fake_cuda_set_current");
    get(f.set_stream_context, "fake_cuda_set_stream_context");
    get(f.set_num_sms, "fake_cuda_set_num_sms");
    get(f.set_occupancy, "fake_cuda_set_occupancy");
    get(f.add_entry, "fake_cuda_add_entry");
    get(f.fail, "fake_cuda_fail");
    get(f.calls, "fake_cuda_calls");
    get(f.num_launches, "fake_cuda_num_launches");
    get(f.last_launch_into, "fake_cuda_last_launch");
    get(f.last_image, "fake_cuda_last_image");
    get(f.context_depth, "fake_cuda_context_depth");
    get(f.live_objects, "fake_cuda_live_objects");
    get(f.capture_mode, "fake_cuda_capture_mode");
    return f;
  }();
  return fake;
}

void* Ctx(int device) { return reinterpret_cast<void*>(static_cast<uintptr_t>(device) << 12); }
void* Ptr(uintptr_t address) { return reinterpret_cast<void*>(address); }

// A library of `kernels` with a fake cubin, loaded, its entries declared to the fake.
struct Setup {
  std::vector<PointwiseKernel> kernels;
  CudaModule module;
  LoadedLibrary lib;
};

Setup MakeSetup(const Fake& fake, std::vector<PointwiseKernel> kernels) {
  CudaModule module = FakeModule(kernels);
  for (const CudaKernel& kernel : module.kernels) {
    const CudaKernelLaunchInfo& info = kernel.launch;
    if (!info.contig_entry.empty())
      fake.add_entry(info.contig_entry.c_str(), info.contig_param_bytes);
    if (!info.strided_entry.empty())
      fake.add_entry(info.strided_entry.c_str(), info.strided_param_bytes);
  }
  absl::StatusOr<std::string> so = BuildCudaHostLibrary(module);
  INFO(so.status().ToString());
  REQUIRE(so.ok());
  absl::StatusOr<LoadedLibrary> lib = LoadedLibrary::Load(*so);
  REQUIRE(lib.ok());
  return Setup{std::move(kernels), std::move(module), std::move(*lib)};
}

// Operand-major strides of `num_operands` operands, each row-major in `shape`.
std::vector<int64_t> DenseStrides(const std::vector<int64_t>& shape, int num_operands) {
  std::vector<int64_t> strides;
  for (int o = 0; o < num_operands; ++o) {
    for (int64_t s : RowMajorStrides(shape)) strides.push_back(s);
  }
  return strides;
}

std::vector<uint8_t> Bytes(const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  return std::vector<uint8_t>(b, b + n);
}

TEST_CASE("init loads the cubin once per context and resolves every entry point",
          "[.fake_driver]") {
  const Fake& fake = LoadFake();
  Setup s = MakeSetup(fake, TwoKernels());
  fake.set_current(Ctx(1));
  const int loads = fake.calls("cuModuleLoadData");
  const int functions = fake.calls("cuModuleGetFunction");
  REQUIRE(s.lib.Init() == 0);
  CHECK(fake.calls("cuModuleLoadData") == loads + 1);
  CHECK(std::memcmp(fake.last_image(), s.module.cubin.data(), s.module.cubin.size()) == 0);
  CHECK(fake.calls("cuModuleGetFunction") == functions + 4);  // 2 kernels x 2 entries

  REQUIRE(s.lib.Init() == 0);  // already loaded here
  CHECK(fake.calls("cuModuleLoadData") == loads + 1);
  fake.set_current(Ctx(2));
  REQUIRE(s.lib.Init() == 0);  // a second context
  CHECK(fake.calls("cuModuleLoadData") == loads + 2);
  fake.set_current(Ctx(1));
  REQUIRE(s.lib.Init() == 0);
  CHECK(fake.calls("cuModuleLoadData") == loads + 2);
}

TEST_CASE("launches pick the entry point by contiguity and alignment, with GridSize's grid",
          "[.fake_driver]") {
  const Fake& fake = LoadFake();
  fake.set_num_sms(3, 100);
  fake.set_occupancy(3);
  const std::vector<int64_t> shape = {64, 33};
  Setup s = MakeSetup(fake, TwoKernels(shape));
  fake.set_current(Ctx(3));
  REQUIRE(s.lib.Init() == 0);
  const int loads = fake.calls("cuModuleLoadData");
  auto relu = s.lib.Kernel("relu");
  const CudaKernelLaunchInfo& info = s.module.kernels[0].launch;
  const int64_t numel = 64 * 33;
  void* const stream = Ptr(0xabc000);
  void* data[4] = {Ptr(0x10000), Ptr(0x20000), Ptr(0x30000), Ptr(0x40000)};

  auto expect_launch = [&](const char* entry, const std::vector<int64_t>& strides) {
    const fake_cuda_launch l = fake.LastLaunch();
    CHECK(std::string(l.entry) == entry);
    const bool contig = std::string(entry).ends_with("_contig");
    CHECK(l.grid[0] ==
          GridSize(numel, contig ? info.elements_per_thread : 1, kCudaBlockSize, 100, 3));
    CHECK((l.grid[1] == 1 && l.grid[2] == 1));
    CHECK((l.block[0] == kCudaBlockSize && l.block[1] == 1 && l.block[2] == 1));
    CHECK(l.shared_bytes == 0);
    CHECK(l.stream == stream);
    CHECK(l.ctx == Ctx(3));
    // The by-value parameter: data[], then strides[] for the strided entry.
    std::vector<uint8_t> expected = Bytes(data, sizeof(data));
    if (!contig) {
      const std::vector<uint8_t> s_bytes = Bytes(strides.data(), strides.size() * 8);
      expected.insert(expected.end(), s_bytes.begin(), s_bytes.end());
    }
    REQUIRE(l.param_bytes == static_cast<int>(expected.size()));
    CHECK(Bytes(l.params, expected.size()) == expected);
  };

  SECTION("dense, aligned operands -> contig") {
    const std::vector<int64_t> strides = DenseStrides(shape, 4);
    REQUIRE(relu(data, strides.data(), stream) == 0);
    expect_launch("relu_contig", strides);
  }
  SECTION("a broadcast input -> strided") {
    std::vector<int64_t> strides = DenseStrides(shape, 4);
    strides[2 * 2 + 0] = 0;  // c broadcasts along dim 0
    REQUIRE(relu(data, strides.data(), stream) == 0);
    expect_launch("relu_strided", strides);
  }
  SECTION("a transposed input -> strided") {
    std::vector<int64_t> strides = DenseStrides(shape, 4);
    strides[0] = 1;
    strides[1] = 64;
    REQUIRE(relu(data, strides.data(), stream) == 0);
    expect_launch("relu_strided", strides);
  }
  SECTION("a pointer aligned to 4 but not 16 bytes -> strided") {
    const std::vector<int64_t> strides = DenseStrides(shape, 4);
    data[3] = Ptr(0x40004);
    REQUIRE(relu(data, strides.data(), stream) == 0);
    expect_launch("relu_strided", strides);
  }
  SECTION("the legacy default stream is passed through as NULL") {
    const std::vector<int64_t> strides = DenseStrides(shape, 4);
    REQUIRE(relu(data, strides.data(), nullptr) == 0);
    CHECK(fake.LastLaunch().stream == nullptr);
  }
  // The launch path never loads anything once init ran.
  CHECK(fake.calls("cuModuleLoadData") == loads);
}

TEST_CASE("a kernel with run-time sizes takes them at each launch (tccd-cuda-sym-1)",
          "[.fake_driver]") {
  const Fake& fake = LoadFake();
  fake.set_num_sms(4, 100);
  fake.set_occupancy(3);
  Setup s = MakeSetup(fake, TwoKernels({kRuntimeDim, 33}));
  fake.set_current(Ctx(4));
  REQUIRE(s.lib.Init() == 0);
  using SizedFn =
      int (*)(void* const* data, const int64_t* strides, const int64_t* shape, void* stream);
  auto relu = reinterpret_cast<SizedFn>(s.lib.Symbol("relu"));
  REQUIRE(relu != nullptr);
  const CudaKernelLaunchInfo& info = s.module.kernels[0].launch;
  CHECK(info.numel == -1);
  CHECK(info.contig_param_bytes == 4 * 8 + 8);
  CHECK(info.strided_param_bytes == 4 * 8 * 3 + 2 * 8);
  void* const stream = Ptr(0xabc000);
  void* data[4] = {Ptr(0x10000), Ptr(0x20000), Ptr(0x30000), Ptr(0x40000)};
  for (int64_t rows : {1, 7, 64, 100000}) {
    INFO("rows " << rows);
    const std::vector<int64_t> shape = {rows, 33};
    const int64_t numel = rows * 33;
    {  // dense -> contig with numel
      const std::vector<int64_t> strides = DenseStrides(shape, 4);
      REQUIRE(relu(data, strides.data(), shape.data(), stream) == 0);
      const fake_cuda_launch l = fake.LastLaunch();
      CHECK(std::string(l.entry) == "relu_contig");
      CHECK(l.grid[0] == GridSize(numel, info.elements_per_thread, kCudaBlockSize, 100, 3));
      std::vector<uint8_t> expected = Bytes(data, sizeof(data));
      const std::vector<uint8_t> n = Bytes(&numel, 8);
      expected.insert(expected.end(), n.begin(), n.end());
      REQUIRE(l.param_bytes == static_cast<int>(expected.size()));
      CHECK(Bytes(l.params, expected.size()) == expected);
    }
    {  // broadcast -> strided with strides and sizes
      std::vector<int64_t> strides = DenseStrides(shape, 4);
      strides[2 * 2 + 0] = 0;
      REQUIRE(relu(data, strides.data(), shape.data(), stream) == 0);
      const fake_cuda_launch l = fake.LastLaunch();
      if (rows == 1) {  // a dim of size 1 may have any stride: still contiguous
        CHECK(std::string(l.entry) == "relu_contig");
        continue;
      }
      CHECK(std::string(l.entry) == "relu_strided");
      CHECK(l.grid[0] == GridSize(numel, 1, kCudaBlockSize, 100, 3));
      std::vector<uint8_t> expected = Bytes(data, sizeof(data));
      const std::vector<uint8_t> st = Bytes(strides.data(), strides.size() * 8),
                                 sz = Bytes(shape.data(), 16);
      expected.insert(expected.end(), st.begin(), st.end());
      expected.insert(expected.end(), sz.begin(), sz.end());
      REQUIRE(l.param_bytes == static_cast<int>(expected.size()));
      CHECK(Bytes(l.params, expected.size()) == expected);
    }
  }
  {  // an empty call launches nothing; a wrong static size is refused
    const int launches = fake.num_launches();
    const std::vector<int64_t> strides = DenseStrides({0, 33}, 4);
    const int64_t empty[] = {0, 33};
    REQUIRE(relu(data, strides.data(), empty, stream) == 0);
    CHECK(fake.num_launches() == launches);
    const int64_t wrong[] = {5, 34};
    CHECK(relu(data, strides.data(), wrong, stream) == 1);
    CHECK(s.lib.LastError().find("size 34 in dim 1") != std::string::npos);
  }
}

TEST_CASE(
    "a row reduction with run-time rows launches ceil(rows / rows per block) blocks, sizes after "
    "strides",
    "[.fake_driver]") {
  // Symbolic graphs' norms and softmax (symbolic_kernels.h): the row is static (1000 f32: 32
  // threads of 8 vectors, 8 rows per 256-thread block), the row count comes at each launch.
  const Fake& fake = LoadFake();
  const PointwiseKernel k = cuda_testing::SoftmaxRowsKernel("softmax", {kRuntimeDim, 1000});
  CudaModule module = FakeModule({});
  module.kernels.push_back({k, LaunchInfoOf(k, 9)});
  const CudaKernelLaunchInfo& info = module.kernels[0].launch;
  CHECK(info.numel == -1);
  CHECK(info.grid == 8);  // rows per block
  CHECK(info.block_size == 256);
  CHECK(info.contig_param_bytes == 2 * 8 * 3 + 2 * 8);
  CHECK(info.strided_param_bytes == info.contig_param_bytes);
  fake.add_entry(info.contig_entry.c_str(), info.contig_param_bytes);
  fake.add_entry(info.strided_entry.c_str(), info.strided_param_bytes);
  absl::StatusOr<std::string> so = BuildCudaHostLibrary(module);
  INFO(so.status().ToString());
  REQUIRE(so.ok());
  absl::StatusOr<LoadedLibrary> lib = LoadedLibrary::Load(*so);
  REQUIRE(lib.ok());
  fake.set_current(Ctx(5));
  REQUIRE(lib->Init() == 0);
  using SizedFn =
      int (*)(void* const* data, const int64_t* strides, const int64_t* shape, void* stream);
  auto softmax = reinterpret_cast<SizedFn>(lib->Symbol("softmax"));
  REQUIRE(softmax != nullptr);
  void* const stream = Ptr(0xabc000);
  void* data[2] = {Ptr(0x10000), Ptr(0x20000)};
  for (int64_t rows : {1, 7, 8, 9, 100000}) {
    INFO("rows " << rows);
    const std::vector<int64_t> shape = {rows, 1000};
    for (bool dense : {true, false}) {
      std::vector<int64_t> strides = DenseStrides(shape, 2);
      if (!dense) strides[0] = 1001;  // a padded row pitch that the vector does not divide
      REQUIRE(softmax(data, strides.data(), shape.data(), stream) == 0);
      const fake_cuda_launch l = fake.LastLaunch();
      CHECK(std::string(l.entry) == (dense ? "softmax_contig" : "softmax_strided"));
      CHECK(l.grid[0] == (rows + 7) / 8);
      CHECK(l.block[0] == 256);
      std::vector<uint8_t> expected = Bytes(data, sizeof(data));
      const std::vector<uint8_t> st = Bytes(strides.data(), strides.size() * 8),
                                 sz = Bytes(shape.data(), 16);
      expected.insert(expected.end(), st.begin(), st.end());
      expected.insert(expected.end(), sz.begin(), sz.end());
      REQUIRE(l.param_bytes == static_cast<int>(expected.size()));
      CHECK(Bytes(l.params, expected.size()) == expected);
    }
  }
  {  // no rows launch nothing; a row of another length is refused
    const int launches = fake.num_launches();
    const std::vector<int64_t> strides = DenseStrides({0, 1000}, 2);
    const int64_t empty[] = {0, 1000};
    REQUIRE(softmax(data, strides.data(), empty, stream) == 0);
    CHECK(fake.num_launches() == launches);
    const int64_t wrong[] = {5, 999};
    CHECK(softmax(data, strides.data(), wrong, stream) == 1);
    CHECK(lib->LastError().find("size 999 in dim 1") != std::string::npos);
  }
}

TEST_CASE(
    "a column reduction with run-time rows launches its fixed grid, sizes after strides, also "
    "with no rows",
    "[.fake_driver]") {
  // Symbolic graphs' bias gradients (symbolic_kernels.h): the columns are static (256 bf16: 8
  // per thread, 4 threads per tile, 8 tiles, clusters of 8 on sm_90), the row count comes at
  // each launch and changes nothing but the kernel's loop bounds.
  const Fake& fake = LoadFake();
  const PointwiseKernel k = cuda_testing::ColumnSumKernel("bias_grad", {kRuntimeDim, 256});
  CudaModule module = FakeModule({});
  module.kernels.push_back({k, LaunchInfoOf(k, 9)});
  const CudaKernelLaunchInfo& info = module.kernels[0].launch;
  CHECK(info.kind == CudaKernelKind::kColumnReduction);
  CHECK(info.numel == -1);
  CHECK(info.grid == 64);
  CHECK(info.contig_param_bytes == 3 * 8 * 3 + 2 * 8);
  fake.add_entry(info.contig_entry.c_str(), info.contig_param_bytes);
  fake.add_entry(info.strided_entry.c_str(), info.strided_param_bytes);
  absl::StatusOr<std::string> so = BuildCudaHostLibrary(module);
  INFO(so.status().ToString());
  REQUIRE(so.ok());
  absl::StatusOr<LoadedLibrary> lib = LoadedLibrary::Load(*so);
  REQUIRE(lib.ok());
  fake.set_current(Ctx(5));
  REQUIRE(lib->Init() == 0);
  using SizedFn =
      int (*)(void* const* data, const int64_t* strides, const int64_t* shape, void* stream);
  auto bias_grad = reinterpret_cast<SizedFn>(lib->Symbol("bias_grad"));
  REQUIRE(bias_grad != nullptr);
  void* data[3] = {Ptr(0x10000), Ptr(0x20000), Ptr(0x30000)};
  for (int64_t rows : {0, 1, 7, 8192, 100000}) {
    INFO("rows " << rows);
    const std::vector<int64_t> shape = {rows, 256};
    // The output [256] right-aligned to the space: stride 0 along the rows.
    std::vector<int64_t> strides = {256, 1, 256, 1, 0, 1};
    for (bool dense : {true, false}) {
      if (!dense) strides[0] = 257;  // a row pitch the vector does not divide
      REQUIRE(bias_grad(data, strides.data(), shape.data(), nullptr) == 0);
      const fake_cuda_launch l = fake.LastLaunch();
      CHECK(std::string(l.entry) == (dense ? "bias_grad_contig" : "bias_grad_strided"));
      CHECK(l.grid[0] == 64);
      CHECK(l.block[0] == 256);
      std::vector<uint8_t> expected = Bytes(data, sizeof(data));
      const std::vector<uint8_t> st = Bytes(strides.data(), strides.size() * 8),
                                 sz = Bytes(shape.data(), 16);
      expected.insert(expected.end(), st.begin(), st.end());
      expected.insert(expected.end(), sz.begin(), sz.end());
      REQUIRE(l.param_bytes == static_cast<int>(expected.size()));
      CHECK(Bytes(l.params, expected.size()) == expected);
    }
  }
  const int64_t wrong[] = {5, 255};
  const std::vector<int64_t> strides = {256, 1, 256, 1, 0, 1};
  CHECK(bias_grad(data, strides.data(), wrong, nullptr) == 1);
  CHECK(lib->LastError().find("size 255 in dim 1") != std::string::npos);
}

TEST_CASE("a row reduction of run-time length launches a warp per row, 8 rows per block",
          "[.fake_driver]") {
  const Fake& fake = LoadFake();
  const PointwiseKernel k =
      cuda_testing::SoftmaxRowsKernel("softmax_len", {kRuntimeDim, kRuntimeDim});
  CudaModule module = FakeModule({});
  module.kernels.push_back({k, LaunchInfoOf(k, 9)});
  const CudaKernelLaunchInfo& info = module.kernels[0].launch;
  CHECK(info.numel == -1);
  CHECK(kRuntimeRowThreads == 32);
  CHECK(info.grid == kRuntimeRowBlock / 32);  // rows per block
  CHECK(info.block_size == kRuntimeRowBlock);
  CHECK(info.elements_per_thread == 1);  // shifted rows: the contig entry takes any row pitch
  fake.add_entry(info.contig_entry.c_str(), info.contig_param_bytes);
  fake.add_entry(info.strided_entry.c_str(), info.strided_param_bytes);
  absl::StatusOr<std::string> so = BuildCudaHostLibrary(module);
  REQUIRE(so.ok());
  absl::StatusOr<LoadedLibrary> lib = LoadedLibrary::Load(*so);
  REQUIRE(lib.ok());
  fake.set_current(Ctx(5));
  REQUIRE(lib->Init() == 0);
  using SizedFn =
      int (*)(void* const* data, const int64_t* strides, const int64_t* shape, void* stream);
  auto softmax = reinterpret_cast<SizedFn>(lib->Symbol("softmax_len"));
  REQUIRE(softmax != nullptr);
  void* data[2] = {Ptr(0x10000), Ptr(0x20000)};
  for (int64_t length : {1, 37, 128, 5000}) {
    // 9 rows: two blocks of 8 rows (the second's warps past row 9 leave at once).
    const std::vector<int64_t> shape = {9, length};
    std::vector<int64_t> strides = DenseStrides(shape, 2);
    REQUIRE(softmax(data, strides.data(), shape.data(), nullptr) == 0);
    const fake_cuda_launch l = fake.LastLaunch();
    CHECK(std::string(l.entry) == "softmax_len_contig");
    CHECK(l.grid[0] == 2);
    CHECK(l.block[0] == kRuntimeRowBlock);
    CHECK(l.param_bytes == 2 * 8 * 3 + 2 * 8);
  }
}

TEST_CASE("dims of size 1 may have any stride; big tensors get one wave of blocks",
          "[.fake_driver]") {
  const Fake& fake = LoadFake();
  fake.set_num_sms(4, 132);
  fake.set_occupancy(8);
  std::vector<PointwiseKernel> kernels = {
      cuda_testing::FusedReluKernel("row", {1, 64, 1}),
      cuda_testing::FusedReluKernel("big", {1 << 26}),
      cuda_testing::FusedReluKernel("scalar", {}),
  };
  Setup s = MakeSetup(fake, std::move(kernels));
  fake.set_current(Ctx(4));
  REQUIRE(s.lib.Init() == 0);
  void* data[4] = {Ptr(0x10000), Ptr(0x20000), Ptr(0x30000), Ptr(0x40000)};

  const std::vector<int64_t> row_strides = {7, 1, 3, 0, 1, 99, 1234, 1, 5, 64, 1, 64};
  REQUIRE(s.lib.Kernel("row")(data, row_strides.data(), nullptr) == 0);
  CHECK(std::string(fake.LastLaunch().entry) == "row_contig");

  const std::vector<int64_t> big_strides = {1, 1, 1, 1};
  REQUIRE(s.lib.Kernel("big")(data, big_strides.data(), nullptr) == 0);
  CHECK(std::string(fake.LastLaunch().entry) == "big_contig");
  CHECK(fake.LastLaunch().grid[0] == 132 * 8);

  // Rank 0: no strides at all.
  REQUIRE(s.lib.Kernel("scalar")(data, nullptr, nullptr) == 0);
  CHECK(std::string(fake.LastLaunch().entry) == "scalar_contig");
  CHECK(fake.LastLaunch().grid[0] == 1);
  data[0] = Ptr(0x10008);
  REQUIRE(s.lib.Kernel("scalar")(data, nullptr, nullptr) == 0);
  CHECK(std::string(fake.LastLaunch().entry) == "scalar_strided");
  CHECK(fake.LastLaunch().param_bytes == 32);
}

TEST_CASE("a kernel with one entry point launches it, and refuses layouts it cannot run",
          "[.fake_driver]") {
  // Kernels of a plan have only the entry their declared layout takes (entry_points.h).
  const Fake& fake = LoadFake();
  std::vector<PointwiseKernel> kernels = TwoKernels({64, 32});
  kernels[0].entries = KernelEntries::kDense;
  kernels[1].entries = KernelEntries::kStrided;
  Setup s = MakeSetup(fake, std::move(kernels));
  fake.set_current(Ctx(6));
  const int functions = fake.calls("cuModuleGetFunction");
  REQUIRE(s.lib.Init() == 0);
  CHECK(fake.calls("cuModuleGetFunction") == functions + 2);  // one entry each

  void* data[4] = {Ptr(0x10000), Ptr(0x20000), Ptr(0x30000), Ptr(0x40000)};
  const std::vector<int64_t> dense = DenseStrides({64, 32}, 4);
  REQUIRE(s.lib.Kernel("relu")(data, dense.data(), nullptr) == 0);
  CHECK(std::string(fake.LastLaunch().entry) == "relu_contig");
  const int launches = fake.num_launches();
  data[3] = Ptr(0x40004);  // misaligned: only the strided entry could run it, and it is absent
  CHECK(s.lib.Kernel("relu")(data, dense.data(), nullptr) == 1);
  CHECK(fake.num_launches() == launches);
  CHECK_THAT(s.lib.LastError(),
             Catch::Contains("relu was compiled for dense 16-byte aligned operands only"));

  // The strided entry runs dense operands too.
  void* gelu_data[2] = {Ptr(0x10000), Ptr(0x20000)};
  const std::vector<int64_t> gelu_strides = {1, 1};
  REQUIRE(s.lib.Kernel("gelu")(gelu_data, gelu_strides.data(), nullptr) == 0);
  CHECK(std::string(fake.LastLaunch().entry) == "gelu_strided");
}

TEST_CASE("a scatter kernel's output is zero-filled on the stream before its launch",
          "[.fake_driver]") {
  // Scatter kernels only add into their output (cuda_backend.h, kind kScatter).
  const Fake& fake = LoadFake();
  Setup s = MakeSetup(fake, {cuda_testing::EmbeddingBackwardKernel("scatter", {4, 8, 16})});
  CHECK(s.module.kernels[0].launch.kind == CudaKernelKind::kScatter);
  CHECK(s.module.kernels[0].launch.grid == 100 * 16);
  fake.set_current(Ctx(7));
  REQUIRE(s.lib.Init() == 0);
  // grad [4, 8, 16], ids [4, 8] (gathered: own strides), out [100, 16] (scattered: own strides).
  void* data[3] = {Ptr(0x10000), Ptr(0x20000), Ptr(0x30000)};
  const std::vector<int64_t> strides = {128, 16, 1, 8, 1, 0, 16, 1, 0};
  const int memsets = fake.calls("cuMemsetD32Async");
  const int launches = fake.num_launches();
  REQUIRE(s.lib.Kernel("scatter")(data, strides.data(), Ptr(0x5000)) == 0);
  CHECK(fake.calls("cuMemsetD32Async") == memsets + 1);
  CHECK(fake.num_launches() == launches + 1);
  CHECK(std::string(fake.LastLaunch().entry) == "scatter_strided");
  CHECK(fake.LastLaunch().stream == Ptr(0x5000));
  // A failed fill launches nothing and says so.
  fake.fail("cuMemsetD32Async", 700);
  CHECK(s.lib.Kernel("scatter")(data, strides.data(), Ptr(0x5000)) == 700);
  fake.fail("cuMemsetD32Async", 0);
  CHECK(fake.num_launches() == launches + 1);
  CHECK_THAT(s.lib.LastError(), Catch::Contains("cuMemsetD32Async(scatter output, 1600)"));
}

TEST_CASE(
    "a scatter kernel with run-time sizes: its output zero-filled, also without rows; a gather "
    "kernel with only a strided entry takes it for dense operands",
    "[.fake_driver]") {
  // Symbolic plans' embedding gradients and embeddings (codegen/symbolic_kernels.h): the
  // strided entry only, the sizes after the strides.
  const Fake& fake = LoadFake();
  PointwiseKernel scatter =
      cuda_testing::EmbeddingBackwardKernel("scatter", {kRuntimeDim, kRuntimeDim, 16});
  scatter.entries = KernelEntries::kStrided;
  PointwiseKernel gather = cuda_testing::EmbeddingKernel("gather", {kRuntimeDim, kRuntimeDim, 16});
  gather.entries = KernelEntries::kStrided;
  Setup s = MakeSetup(fake, {scatter, gather});
  CHECK(s.module.kernels[0].launch.kind == CudaKernelKind::kScatter);
  CHECK(s.module.kernels[0].launch.grid == 100 * 16);
  fake.set_current(Ctx(7));
  REQUIRE(s.lib.Init() == 0);
  using SizedFn =
      int (*)(void* const* data, const int64_t* strides, const int64_t* shape, void* stream);
  auto sized_scatter = reinterpret_cast<SizedFn>(s.lib.Symbol("scatter"));
  auto sized_gather = reinterpret_cast<SizedFn>(s.lib.Symbol("gather"));
  REQUIRE((sized_scatter != nullptr && sized_gather != nullptr));
  // grad [4, 8, 16], ids [4, 8] (gathered: own strides), out [100, 16] (scattered: own strides).
  void* data[3] = {Ptr(0x10000), Ptr(0x20000), Ptr(0x30000)};
  const std::vector<int64_t> strides = {128, 16, 1, 8, 1, 0, 16, 1, 0};
  const int memsets = fake.calls("cuMemsetD32Async");
  const int launches = fake.num_launches();
  std::vector<int64_t> shape = {4, 8, 16};
  REQUIRE(sized_scatter(data, strides.data(), shape.data(), Ptr(0x5000)) == 0);
  CHECK(fake.calls("cuMemsetD32Async") == memsets + 1);
  CHECK(fake.num_launches() == launches + 1);
  CHECK(std::string(fake.LastLaunch().entry) == "scatter_strided");
  // Parameters: pointers, strides, then the sizes.
  std::vector<uint8_t> expected = Bytes(data, sizeof(data));
  const std::vector<uint8_t> rows = Bytes(strides.data(), strides.size() * 8);
  const std::vector<uint8_t> sizes = Bytes(shape.data(), shape.size() * 8);
  expected.insert(expected.end(), rows.begin(), rows.end());
  expected.insert(expected.end(), sizes.begin(), sizes.end());
  REQUIRE(fake.LastLaunch().param_bytes == static_cast<int>(expected.size()));
  CHECK(Bytes(fake.LastLaunch().params, expected.size()) == expected);
  // No rows: the output is still all zeros (the fill), and nothing is launched.
  shape = {0, 8, 16};
  REQUIRE(sized_scatter(data, strides.data(), shape.data(), Ptr(0x5000)) == 0);
  CHECK(fake.calls("cuMemsetD32Async") == memsets + 2);
  CHECK(fake.num_launches() == launches + 1);

  // The gather kernel: row-major stride rows would take a contig entry; it has none.
  void* gdata[3] = {Ptr(0x10000), Ptr(0x20000), Ptr(0x30000)};
  const std::vector<int64_t> gshape = {5, 3, 16};
  const std::vector<int64_t> gstrides = {48, 16, 1, 48, 16, 1, 48, 16, 1};
  REQUIRE(sized_gather(gdata, gstrides.data(), gshape.data(), Ptr(0x5000)) == 0);
  CHECK(std::string(fake.LastLaunch().entry) == "gather_strided");
}

TEST_CASE("a launch in a context without the module loads it first", "[.fake_driver]") {
  const Fake& fake = LoadFake();
  Setup s = MakeSetup(fake, TwoKernels());
  fake.set_current(Ctx(5));
  const int loads = fake.calls("cuModuleLoadData");
  const std::vector<int64_t> strides = DenseStrides({1000}, 2);
  void* data[2] = {Ptr(0x10000), Ptr(0x20000)};
  REQUIRE(s.lib.Kernel("gelu")(data, strides.data(), nullptr) == 0);
  CHECK(fake.calls("cuModuleLoadData") == loads + 1);
  CHECK(std::string(fake.LastLaunch().entry) == "gelu_contig");
  REQUIRE(s.lib.Kernel("gelu")(data, strides.data(), nullptr) == 0);
  CHECK(fake.calls("cuModuleLoadData") == loads + 1);
}

TEST_CASE("without a current context the stream's is pushed for the call", "[.fake_driver]") {
  const Fake& fake = LoadFake();
  Setup s = MakeSetup(fake, TwoKernels());
  void* const stream = Ptr(0x5000123);
  fake.set_stream_context(stream, Ctx(6));
  fake.set_current(nullptr);

  CHECK(s.lib.Init() == 201);
  CHECK_THAT(s.lib.LastError(), Catch::Contains("no current CUDA context"));
  const std::vector<int64_t> strides = DenseStrides({1000}, 2);
  void* data[2] = {Ptr(0x10000), Ptr(0x20000)};
  CHECK(s.lib.Kernel("gelu")(data, strides.data(), nullptr) == 201);

  REQUIRE(s.lib.Kernel("gelu")(data, strides.data(), stream) == 0);
  CHECK(fake.LastLaunch().ctx == Ctx(6));
  CHECK(fake.LastLaunch().stream == stream);
  CHECK(fake.context_depth() == 0);  // popped again
}

TEST_CASE("driver failures come back as their codes with a message", "[.fake_driver]") {
  const Fake& fake = LoadFake();
  Setup s = MakeSetup(fake, TwoKernels());
  const std::vector<int64_t> strides = DenseStrides({64, 33}, 4);
  void* data[4] = {Ptr(0x10000), Ptr(0x20000), Ptr(0x30000), Ptr(0x40000)};

  SECTION("cuModuleLoadData, then success once the driver recovers") {
    fake.set_current(Ctx(7));
    fake.fail("cuModuleLoadData", 209);
    CHECK(s.lib.Init() == 209);
    CHECK_THAT(s.lib.LastError(), Catch::Contains("cuModuleLoadData") &&
                                      Catch::Contains("CUDA_ERROR_NO_BINARY_FOR_GPU"));
    CHECK(s.lib.Kernel("relu")(data, strides.data(), nullptr) == 209);
    fake.fail("cuModuleLoadData", 0);
    CHECK(s.lib.Init() == 0);
    CHECK(s.lib.Kernel("relu")(data, strides.data(), nullptr) == 0);
  }
  SECTION("a missing entry point unloads the module again") {
    fake.set_current(Ctx(8));
    fake.fail("cuModuleGetFunction", 500);
    const int unloads = fake.calls("cuModuleUnload");
    CHECK(s.lib.Init() == 500);
    CHECK_THAT(s.lib.LastError(), Catch::Contains("cuModuleGetFunction(relu_contig)"));
    CHECK(fake.calls("cuModuleUnload") == unloads + 1);
    fake.fail("cuModuleGetFunction", 0);
  }
  SECTION("cuLaunchKernel") {
    fake.set_current(Ctx(9));
    REQUIRE(s.lib.Init() == 0);
    fake.fail("cuLaunchKernel", 701);
    CHECK(s.lib.Kernel("relu")(data, strides.data(), nullptr) == 701);
    CHECK_THAT(s.lib.LastError(), Catch::Contains("cuLaunchKernel(relu_contig") &&
                                      Catch::Contains("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"));
    fake.fail("cuLaunchKernel", 0);
  }
  SECTION("NULL arguments") {
    fake.set_current(Ctx(9));
    CHECK(s.lib.Kernel("relu")(nullptr, strides.data(), nullptr) == 1);
    CHECK_THAT(s.lib.LastError(), Catch::Contains("relu called with NULL data"));
    CHECK(s.lib.Kernel("relu")(data, nullptr, nullptr) == 1);
  }
}

TEST_CASE("cuInit failures are reported and retried", "[.fake_driver]") {
  const Fake& fake = LoadFake();
  Setup s = MakeSetup(fake, TwoKernels());  // a fresh copy: its runtime has no driver yet
  fake.set_current(Ctx(10));
  fake.fail("cuInit", 100);
  CHECK(s.lib.Init() == 100);
  CHECK_THAT(s.lib.LastError(), Catch::Contains("cuInit failed: CUDA_ERROR_NO_DEVICE"));
  fake.fail("cuInit", 0);
  CHECK(s.lib.Init() == 0);
}

TEST_CASE("at most 32 contexts", "[.fake_driver]") {
  const Fake& fake = LoadFake();
  Setup s = MakeSetup(fake, TwoKernels());
  for (int i = 0; i < 32; ++i) {
    fake.set_current(Ctx(100 + i));
    REQUIRE(s.lib.Init() == 0);
  }
  fake.set_current(Ctx(200));
  CHECK(s.lib.Init() == 801);
  CHECK_THAT(s.lib.LastError(), Catch::Contains("32 CUDA contexts"));
  fake.set_current(Ctx(131));  // the loaded ones still work
  CHECK(s.lib.Init() == 0);
}

TEST_CASE("concurrent first launches load each context exactly once", "[.fake_driver]") {
  const Fake& fake = LoadFake();
  Setup s = MakeSetup(fake, TwoKernels());
  const int loads = fake.calls("cuModuleLoadData");
  const int launches = fake.num_launches();
  const std::vector<int64_t> strides = DenseStrides({1000}, 2);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      fake.set_current(Ctx(300 + t % 4));
      void* data[2] = {Ptr(0x10000), Ptr(0x20000)};
      for (int i = 0; i < 200; ++i) {
        if (s.lib.Kernel("gelu")(data, strides.data(), nullptr) != 0) ++failures;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(failures == 0);
  CHECK(fake.calls("cuModuleLoadData") == loads + 4);
  CHECK(fake.num_launches() == launches + 8 * 200);
}

}  // namespace
}  // namespace tccd::codegen

namespace tccd::codegen {
namespace {

TEST_CASE("a segment launches its kernels in order with io and workspace pointers",
          "[.fake_driver]") {
  const Fake& fake = LoadFake();
  fake.set_num_sms(5, 132);
  fake.set_occupancy(4);
  const std::vector<int64_t> relu_shape = {64, 33}, gelu_shape = {1024};
  std::vector<PointwiseKernel> kernels = TwoKernels(relu_shape, gelu_shape);
  CudaModule module = FakeModule(kernels);
  for (const CudaKernel& kernel : module.kernels) {
    const CudaKernelLaunchInfo& info = kernel.launch;
    if (!info.contig_entry.empty())
      fake.add_entry(info.contig_entry.c_str(), info.contig_param_bytes);
    if (!info.strided_entry.empty())
      fake.add_entry(info.strided_entry.c_str(), info.strided_param_bytes);
  }
  const int relu_operands = kernels[0].num_operands();
  REQUIRE(kernels[1].num_operands() == 2);
  // relu: inputs io[0..], output in the workspace at 256; gelu: reads the workspace at 256 + 16
  // (a view), writes the last io pointer.
  HostProgram program;
  SegmentSpec seg{.name = "tccd_seg0", .num_io = relu_operands, .workspace_bytes = 4096};
  SegmentStepSpec relu{.kind = SegmentStepSpec::Kind::kKernel, .index = 0};
  for (int o = 0; o + 1 < relu_operands; ++o) relu.operands.push_back({o, 0});
  relu.operands.push_back({-1, 256});
  relu.strides = DenseStrides(relu_shape, relu_operands);
  SegmentStepSpec gelu{.kind = SegmentStepSpec::Kind::kKernel, .index = 1};
  gelu.operands = {{-1, 256 + 16}, {relu_operands - 1, 0}};
  gelu.strides = DenseStrides(gelu_shape, 2);
  seg.steps = {relu, gelu};
  program.segments.push_back(seg);
  absl::StatusOr<std::string> so = BuildCudaHostLibrary(module, program);
  REQUIRE(so.ok());
  absl::StatusOr<LoadedLibrary> lib = LoadedLibrary::Load(*so);
  REQUIRE(lib.ok());
  fake.set_current(Ctx(5));
  REQUIRE(lib->Init() == 0);
  using SegmentFn = int (*)(void* const* io, void* workspace, void* stream);
  auto run = reinterpret_cast<SegmentFn>(lib->Symbol("tccd_seg0"));
  REQUIRE(run != nullptr);
  std::vector<void*> io;
  for (int o = 0; o < relu_operands; ++o) io.push_back(Ptr(0x100000 * (o + 1)));
  void* const stream = Ptr(0xabc000);

  const int before = fake.num_launches();
  REQUIRE(run(io.data(), Ptr(0x900000), stream) == 0);
  CHECK(fake.num_launches() == before + 2);
  const fake_cuda_launch last = fake.LastLaunch();
  CHECK(std::string(last.entry) == "gelu_contig");
  CHECK(last.stream == stream);
  void* expected[2] = {Ptr(0x900000 + 256 + 16), io.back()};
  REQUIRE(last.param_bytes == static_cast<int>(sizeof(expected)));
  CHECK(Bytes(last.params, sizeof(expected)) == Bytes(expected, sizeof(expected)));

  // A NULL workspace for a segment that needs one is an error, not a launch.
  REQUIRE(run(io.data(), nullptr, stream) == 1);
  CHECK(fake.num_launches() == before + 2);
  CHECK(std::string(lib->LastError()).find("NULL workspace") != std::string::npos);
  CHECK(fake.context_depth() == 1);
}

// The fake cuBLASLt (fake_cublaslt.c), loaded once per process like the fake driver, so the
// runtime finds it by its SONAME as it finds PyTorch's copy.
struct FakeLt {
  decltype(&fake_lt_calls) calls;
  decltype(&fake_lt_last_matmul) last_into;
  decltype(&fake_lt_last_alignment) alignment_into;
  decltype(&fake_lt_set_algos) set_algos;
  decltype(&fake_lt_last_requested) last_requested;
  decltype(&fake_lt_set_check_fails) set_check_fails;
  decltype(&fake_lt_set_row_factor) set_row_factor;
  decltype(&fake_lt_set_algo_launches) set_algo_launches;
  decltype(&fake_lt_set_algo_workspace) set_algo_workspace;
  std::vector<uint32_t> LastAlignment() const {
    uint32_t a[4] = {};
    alignment_into(a);
    return {a[0], a[1], a[2], a[3]};
  }
  fake_lt_matmul Last() const {
    fake_lt_matmul m{};
    last_into(&m);
    return m;
  }
};

const FakeLt& LoadFakeLt() {
  static const FakeLt lt = [] {
    void* lib = dlopen(TCCD_FAKE_CUBLASLT, RTLD_NOW | RTLD_GLOBAL);
    INFO(dlerror());
    REQUIRE(lib != nullptr);
    REQUIRE(dlopen("libcublasLt.so.13", RTLD_NOW | RTLD_NOLOAD) == lib);
    FakeLt f;
    f.calls = reinterpret_cast<decltype(f.calls)>(dlsym(lib, "fake_lt_calls"));
    f.last_into = reinterpret_cast<decltype(f.last_into)>(dlsym(lib, "fake_lt_last_matmul"));
    f.alignment_into =
        reinterpret_cast<decltype(f.alignment_into)>(dlsym(lib, "fake_lt_last_alignment"));
    f.set_algos = reinterpret_cast<decltype(f.set_algos)>(dlsym(lib, "fake_lt_set_algos"));
    f.last_requested =
        reinterpret_cast<decltype(f.last_requested)>(dlsym(lib, "fake_lt_last_requested"));
    f.set_check_fails =
        reinterpret_cast<decltype(f.set_check_fails)>(dlsym(lib, "fake_lt_set_check_fails"));
    f.set_row_factor =
        reinterpret_cast<decltype(f.set_row_factor)>(dlsym(lib, "fake_lt_set_row_factor"));
    f.set_algo_launches =
        reinterpret_cast<decltype(f.set_algo_launches)>(dlsym(lib, "fake_lt_set_algo_launches"));
    f.set_algo_workspace = reinterpret_cast<decltype(f.set_algo_workspace)>(
        dlsym(lib, "fake_lt_set_algo_workspace"));
    REQUIRE((f.calls != nullptr && f.last_into != nullptr && f.alignment_into != nullptr &&
             f.set_algos != nullptr && f.last_requested != nullptr &&
             f.set_check_fails != nullptr && f.set_row_factor != nullptr &&
             f.set_algo_launches != nullptr && f.set_algo_workspace != nullptr));
    return f;
  }();
  return lt;
}

// A library with two gemms of run-time sizes (symbolic_gemms.h) and no kernels: tccd_sg0 with a
// bias epilogue (A transposed, bf16, alpha 0.5), tccd_sg1 plain f32 (batched at run time).
HostProgram SizedGemms() {
  HostProgram program;
  GemmSpec bias;
  bias.name = "tccd_sg0";
  bias.sized = true;
  bias.trans_a = 1;
  bias.dtype = kCudaR16BF;
  bias.epilogue = kCublasEpilogueBias;
  bias.alpha = 0.5f;
  GemmSpec plain;
  plain.name = "tccd_sg1";
  plain.sized = true;
  program.gemms = {bias, plain};
  return program;
}

using SizedGemmFn = int (*)(void* const* data, const int64_t* dims, void* workspace,
                            uint64_t workspace_bytes, void* stream);
using GemmStatsFn = int (*)(uint64_t* out, int n);

// The sized gemm cache's counters (tccd_cuda_gemm_stats, TCCD_RT_GEMM_STAT_*).
std::vector<uint64_t> GemmStats(GemmStatsFn stats) {
  std::vector<uint64_t> out(TCCD_RT_GEMM_STATS, 0);
  REQUIRE(stats(out.data(), static_cast<int>(out.size())) == TCCD_RT_GEMM_STATS);
  return out;
}

TEST_CASE("a gemm with run-time sizes makes its cuBLASLt objects once per distinct sizes",
          "[.fake_driver]") {
  const Fake& fake = LoadFake();
  const FakeLt& lt = LoadFakeLt();
  absl::StatusOr<std::string> so = BuildCudaHostLibrary(CudaModule{}, SizedGemms());
  INFO(so.status().ToString());
  REQUIRE(so.ok());
  absl::StatusOr<LoadedLibrary> lib = LoadedLibrary::Load(*so);
  REQUIRE(lib.ok());
  fake.set_current(Ctx(6));
  // Loading makes no object for a sized gemm: its sizes are not known yet.
  const int descs = lt.calls("desc_create");
  REQUIRE(lib->Init() == 0);
  CHECK(lt.calls("desc_create") == descs);
  auto sg0 = reinterpret_cast<SizedGemmFn>(lib->Symbol("tccd_sg0"));
  auto sg1 = reinterpret_cast<SizedGemmFn>(lib->Symbol("tccd_sg1"));
  REQUIRE((sg0 != nullptr && sg1 != nullptr));
  auto stats = reinterpret_cast<GemmStatsFn>(lib->Symbol("tccd_cuda_gemm_stats"));
  REQUIRE(stats != nullptr);
  CHECK(GemmStats(stats) == std::vector<uint64_t>(TCCD_RT_GEMM_STATS, 0));
  void* const stream = Ptr(0xabc000);
  void* const workspace = Ptr(0x800000);
  void* data[4] = {Ptr(0x1000), Ptr(0x2000), Ptr(0x3000), Ptr(0x4000)};  // A, B, bias, D

  // m 8, n 5, k 16; A is k x m (transposed), B k x n, D m x n.
  const int64_t first[10] = {8, 5, 16, 16, 16, 8, 1, 0, 0, 0};
  const int heuristics = lt.calls("heuristic"), matmuls = lt.calls("matmul");
  REQUIRE(sg0(data, first, workspace, 8u << 20, stream) == 0);
  CHECK(lt.calls("heuristic") == heuristics + 1);
  CHECK(lt.calls("matmul") == matmuls + 1);
  fake_lt_matmul m = lt.Last();
  CHECK((m.trans_a == 1 && m.trans_b == 0 && m.epilogue == 4u));
  CHECK(m.alpha == 0.5f);
  CHECK(m.beta == 0.0f);
  CHECK((m.A == data[0] && m.B == data[1] && m.bias == data[2] && m.D == data[3] && m.C == m.D));
  CHECK((m.a.type == kCudaR16BF && m.a.rows == 16 && m.a.cols == 8 && m.a.ld == 16));
  CHECK((m.b.rows == 16 && m.b.cols == 5 && m.b.ld == 16));
  CHECK((m.d.rows == 8 && m.d.cols == 5 && m.d.ld == 8 && m.d.batch == 1));
  CHECK((m.workspace == workspace && m.workspace_size == 4096 && m.stream == stream));

  // The heuristic was told the pointers' alignment (256: cuBLASLt's default, the most it asks).
  CHECK(lt.LastAlignment() == std::vector<uint32_t>{256, 256, 256, 256});

  // The same sizes again: the cached objects, no heuristic query.
  REQUIRE(sg0(data, first, workspace, 8u << 20, stream) == 0);
  CHECK(lt.calls("heuristic") == heuristics + 1);
  CHECK(lt.calls("matmul") == matmuls + 2);
  // Counted: two calls, one hit, one miss (its heuristic query), the set-up and matmul timed.
  std::vector<uint64_t> counted = GemmStats(stats);
  CHECK(counted[TCCD_RT_GEMM_STAT_CALLS] == 2);
  CHECK(counted[TCCD_RT_GEMM_STAT_HITS] == 1);
  CHECK(counted[TCCD_RT_GEMM_STAT_MISSES] == 1);
  CHECK(counted[TCCD_RT_GEMM_STAT_KEY_CHURN] == 0);
  CHECK(counted[TCCD_RT_GEMM_STAT_HEURISTICS] == 1);
  CHECK(counted[TCCD_RT_GEMM_STAT_EVICTIONS] == 0);
  CHECK(counted[TCCD_RT_GEMM_STAT_SETUP_NS] > 0);
  CHECK(counted[TCCD_RT_GEMM_STAT_MATMUL_NS] > counted[TCCD_RT_GEMM_STAT_MISS_MATMUL_NS]);
  CHECK(counted[TCCD_RT_GEMM_STAT_MISS_MATMUL_NS] > 0);

  // Another n: objects of their own; the first sizes stay cached.
  const int64_t second[10] = {8, 9, 16, 16, 16, 8, 1, 0, 0, 0};
  REQUIRE(sg0(data, second, workspace, 8u << 20, stream) == 0);
  CHECK(lt.calls("heuristic") == heuristics + 2);
  m = lt.Last();
  CHECK((m.b.cols == 9 && m.d.cols == 9 && m.d.ld == 8));
  REQUIRE(sg0(data, first, workspace, 8u << 20, stream) == 0);
  REQUIRE(sg0(data, second, workspace, 8u << 20, stream) == 0);
  CHECK(lt.calls("heuristic") == heuristics + 2);
  CHECK(lt.Last().d.cols == 9);

  // A only 16-byte aligned: an algorithm chosen for that (its own cache entry).
  void* shifted[4] = {Ptr(0x1010), data[1], data[2], data[3]};
  REQUIRE(sg0(shifted, first, workspace, 8u << 20, stream) == 0);
  CHECK(lt.calls("heuristic") == heuristics + 3);
  CHECK(lt.LastAlignment() == std::vector<uint32_t>{16, 256, 256, 256});
  REQUIRE(sg0(shifted, first, workspace, 8u << 20, stream) == 0);
  CHECK(lt.calls("heuristic") == heuristics + 3);

  // No workspace: an algorithm chosen for none (its own cache entry).
  REQUIRE(sg0(data, first, nullptr, 0, stream) == 0);
  CHECK(lt.calls("heuristic") == heuristics + 4);
  CHECK((lt.Last().workspace == nullptr && lt.Last().workspace_size == 0));
  // Those two misses found the same gemm and sizes cached under another key: churn, which a
  // new size (the `second` miss) is not.
  counted = GemmStats(stats);
  CHECK(counted[TCCD_RT_GEMM_STAT_CALLS] == 8);
  CHECK(counted[TCCD_RT_GEMM_STAT_MISSES] == 4);
  CHECK(counted[TCCD_RT_GEMM_STAT_HITS] == 4);
  CHECK(counted[TCCD_RT_GEMM_STAT_KEY_CHURN] == 2);
  CHECK(counted[TCCD_RT_GEMM_STAT_HEURISTICS] == 4);

  // Batched, no bias: data is A, B, D; batch count and strides on every layout.
  const int64_t batched[10] = {4, 6, 3, 4, 3, 4, 7, 12, 18, 24};
  void* plain[3] = {Ptr(0x5000), Ptr(0x6000), Ptr(0x7000)};
  REQUIRE(sg1(plain, batched, workspace, 8u << 20, stream) == 0);
  m = lt.Last();
  CHECK((m.trans_a == 0 && m.epilogue == 1u && m.D == plain[2] && m.bias == nullptr));
  CHECK((m.a.type == kCudaR32F && m.a.rows == 4 && m.a.cols == 3 && m.a.batch == 7 &&
         m.a.batch_stride == 12));
  CHECK((m.b.rows == 3 && m.b.cols == 6 && m.b.batch == 7 && m.b.batch_stride == 18));
  CHECK((m.d.rows == 4 && m.d.cols == 6 && m.d.batch == 7 && m.d.batch_stride == 24));

  // Empty: nothing enqueued. A leading dimension below the rows: an error, not a call.
  const int before = lt.calls("matmul");
  const int64_t empty[10] = {0, 6, 3, 4, 3, 4, 1, 0, 0, 0};
  REQUIRE(sg1(plain, empty, workspace, 8u << 20, stream) == 0);
  const int64_t bad_ld[10] = {4, 6, 3, 2, 3, 4, 1, 0, 0, 0};
  REQUIRE(sg1(plain, bad_ld, workspace, 8u << 20, stream) == TCCD_RT_ERROR_INVALID_VALUE);
  CHECK(std::string(lib->LastError()).find("does not take") != std::string::npos);
  CHECK(lt.calls("matmul") == before);

  // Many distinct sizes: the cache evicts (destroying what it made), so the objects alive stay
  // bounded by its capacity (64 sets x 8 ways).
  const int created = lt.calls("desc_create"), destroyed = lt.calls("desc_destroy");
  for (int64_t n = 1; n <= 600; ++n) {
    const int64_t dims[10] = {4, n, 3, 4, 3, 4, 1, 0, 0, 0};
    REQUIRE(sg1(plain, dims, workspace, 8u << 20, stream) == 0);
    CHECK(lt.Last().d.cols == static_cast<uint64_t>(n));
  }
  CHECK(lt.calls("desc_create") - created == 600);
  CHECK(lt.calls("desc_destroy") - destroyed >= 600 - 64 * 8);
  CHECK(GemmStats(stats)[TCCD_RT_GEMM_STAT_EVICTIONS] ==
        static_cast<uint64_t>(lt.calls("desc_destroy") - destroyed));
  CHECK(lt.calls("desc_create") - lt.calls("desc_destroy") <= 64 * 8);
  CHECK(lt.calls("layout_create") - lt.calls("layout_destroy") <= 3 * 64 * 8);
  CHECK(fake.context_depth() == 1);
}

// A static gemm (bf16 D[m x 32] = A[m x 16] B[16 x 32], `epilogue`, `tune` candidates), twice
// (two gemms of the same sizes, as two layers of one model), in a two-step segment
// "tccd_seg0": io A, B, D[, bias], cuBLASLt's scratch in the workspace (as much as the tune
// word's workspace bits say: 8 MiB without them).
HostProgram StaticGemm(int tune, int m, int epilogue = kCublasEpilogueDefault) {
  HostProgram program;
  const bool bias = epilogue == kCublasEpilogueBias;
  const int64_t workspace = static_cast<int64_t>(tccd_rt_tune_workspace_bytes(tune));
  SegmentSpec seg{.name = "tccd_seg0",
                  .num_io = bias ? 4 : 3,
                  .workspace_bytes = workspace,
                  .gemm_workspace_offset = 0,
                  .gemm_workspace_bytes = workspace};
  for (int copy = 0; copy < 2; ++copy) {
    GemmSpec g;
    g.name = "mm.default_" + std::to_string(m) + "_" + std::to_string(copy);
    g.m = m, g.n = 32, g.k = 16;
    g.lda = m, g.ldb = 16, g.ldd = m;
    g.dtype = kCudaR16BF;
    g.epilogue = epilogue;
    g.tune = tune;
    program.gemms.push_back(g);
    SegmentStepSpec step{.kind = SegmentStepSpec::Kind::kGemm, .index = copy};
    step.operands = {{0, 0}, {1, 0}, {2, 0}};
    if (bias) step.operands.push_back({3, 0});
    seg.steps.push_back(step);
  }
  program.segments = {seg};
  return program;
}

using SegmentFn = int (*)(void* const* io, void* workspace, void* stream);

using SetTuneTableFn = int (*)(void* table);

// Builds, loads and runs StaticGemm(...) once in context `ctx` (given `table` first, when not
// NULL); the algorithm its matmul used.
uint64_t RunStaticGemm(const Fake& fake, const FakeLt& lt, void* ctx, int tune, int m,
                       int epilogue = kCublasEpilogueDefault, tccd_rt_tune_table* table = nullptr) {
  absl::StatusOr<std::string> so = BuildCudaHostLibrary(CudaModule{}, StaticGemm(tune, m, epilogue));
  INFO(so.status().ToString());
  REQUIRE(so.ok());
  absl::StatusOr<LoadedLibrary> lib = LoadedLibrary::Load(*so);
  REQUIRE(lib.ok());
  auto set_table = reinterpret_cast<SetTuneTableFn>(lib->Symbol("tccd_cuda_set_tune_table"));
  // Only a library with tuned gemms has the entry point, only one with sized gemms the stats.
  CHECK((set_table != nullptr) == ((tune & 0xff) > 1));
  CHECK(lib->Symbol("tccd_cuda_gemm_stats") == nullptr);
  if (table != nullptr) REQUIRE(set_table(table) == 0);
  fake.set_current(ctx);
  REQUIRE(lib->Init() == 0);
  auto run = reinterpret_cast<SegmentFn>(lib->Symbol("tccd_seg0"));
  REQUIRE(run != nullptr);
  void* io[4] = {Ptr(0x1000), Ptr(0x2000), Ptr(0x3000), Ptr(0x4000)};
  REQUIRE(run(io, Ptr(0x800000), Ptr(0xabc000)) == 0);
  const fake_lt_matmul last = lt.Last();
  // A first, or B first in the swapped formulation (row-ordered D).
  CHECK((last.A == io[last.d.order == 1 ? 1 : 0] && last.D == io[2] &&
         last.stream == Ptr(0xabc000)));
  return last.algo;
}

TEST_CASE("a static gemm with tune > 1 times the heuristic's candidates at load and keeps the "
          "fastest, once per library and device",
          "[.fake_driver]") {
  const Fake& fake = LoadFake();
  const FakeLt& lt = LoadFakeLt();
  // Four candidates; the second (0xa2) is twice as fast as the heuristic's first.
  const double ms[4] = {1.0, 0.5, 0.9, 0.6};
  lt.set_algos(4, ms);

  // tune 0: one algorithm asked for, nothing timed, nothing allocated (as before autotuning).
  const int allocations = fake.calls("cuMemAlloc_v2");
  CHECK(RunStaticGemm(fake, lt, Ctx(7), 0, 64) == 0xa1);
  CHECK(lt.last_requested() == 1);
  CHECK(fake.calls("cuMemAlloc_v2") == allocations);

  // tune 8: eight asked for, four offered, all timed in a private stream; the fastest kept.
  // The library's second gemm of the same sizes takes the first's choice: no heuristic query,
  // nothing timed.
  const int heuristics = lt.calls("heuristic");
  const int matmuls = lt.calls("matmul");
  const int exchanges = fake.calls("cuThreadExchangeStreamCaptureMode");
  CHECK(RunStaticGemm(fake, lt, Ctx(7), 8, 128) == 0xa2);
  CHECK(lt.last_requested() == 8);
  CHECK(lt.calls("heuristic") == heuristics + 1);
  // A warm-up run each, one captured run each (its launches counted), a first round of all
  // four; then only 0.5 and 0.6 (within 1.5x of the fastest) run again, as many rounds as
  // their 1.1 ms fit the 10 ms budget (capped at 5 in all); then the segment's two matmuls.
  CHECK(lt.calls("matmul") == matmuls + 4 + 4 + 4 + 2 * 4 + 2);
  CHECK(fake.calls("cuStreamBeginCapture_v2") >= 4);
  CHECK(fake.calls("cuMemAlloc_v2") == allocations + 1);
  CHECK(fake.live_objects() == 0);  // scratch, stream and events released
  // Relaxed capture mode for the tuning, then the thread's mode back.
  CHECK(fake.calls("cuThreadExchangeStreamCaptureMode") == exchanges + 2);
  CHECK(fake.capture_mode() == 0);

  // Another library (another plan): its runtime is its own, so it times again.
  CHECK(RunStaticGemm(fake, lt, Ctx(7), 8, 128) == 0xa2);
  CHECK(lt.calls("heuristic") == heuristics + 2);

  // Within the margin (0.98 of the first): the heuristic's first stays.
  const double close[2] = {1.0, 0.98};
  lt.set_algos(2, close);
  CHECK(RunStaticGemm(fake, lt, Ctx(7), 8, 192) == 0xa1);

  // A bias epilogue: timed with a scratch bias; the segment's call then sets the real one.
  lt.set_algos(4, ms);
  CHECK(RunStaticGemm(fake, lt, Ctx(7), 8, 256, kCublasEpilogueBias) == 0xa2);
  CHECK(lt.Last().bias == Ptr(0x4000));

  // No scratch memory: the heuristic's first, and the load still succeeds.
  fake.fail("cuMemAlloc_v2", 2 /* CUDA_ERROR_OUT_OF_MEMORY */);
  CHECK(RunStaticGemm(fake, lt, Ctx(7), 8, 320) == 0xa1);
  fake.fail("cuMemAlloc_v2", 0);
  CHECK(fake.live_objects() == 0);
  CHECK(fake.capture_mode() == 0);
  lt.set_algos(1, nullptr);
  fake.set_current(nullptr);
}

TEST_CASE("a candidate's extra launches (split-K memset and reduction) count against it",
          "[.fake_driver]") {
  const Fake& fake = LoadFake();
  const FakeLt& lt = LoadFakeLt();
  // 5% faster on the GPU but three launches a run (a memset, the gemm, a reduction): 95 us +
  // 2 x 4 us is no win over 100 us in one launch.
  const double ms[2] = {0.100, 0.095};
  const int three[2] = {1, 3};
  lt.set_algos(2, ms);
  lt.set_algo_launches(2, three);
  CHECK(RunStaticGemm(fake, lt, Ctx(12), 8, 64) == 0xa1);
  // Counted the same way, one launch each: the faster one.
  const int one[2] = {1, 1};
  lt.set_algo_launches(2, one);
  CHECK(RunStaticGemm(fake, lt, Ctx(12), 8, 128) == 0xa2);
  // Far faster with its extra launches: it wins anyway.
  const double split_wins[2] = {0.100, 0.050};
  lt.set_algos(2, split_wins);
  lt.set_algo_launches(2, three);
  CHECK(RunStaticGemm(fake, lt, Ctx(12), 8, 192) == 0xa2);
  CHECK(fake.live_objects() == 0);  // every captured graph destroyed
  lt.set_algo_launches(0, nullptr);
  lt.set_algos(1, nullptr);
  fake.set_current(nullptr);
}

TEST_CASE("with the swap flag a gemm without epilogue also times D^T = B^T A^T, row-ordered, "
          "and keeps it when faster",
          "[.fake_driver]") {
  const Fake& fake = LoadFake();
  const FakeLt& lt = LoadFakeLt();
  const double ms[2] = {1.0, 0.8};
  lt.set_algos(2, ms);
  const int swap_tune = 8 | kGemmTuneSwap;

  // The swapped form at half the time: chosen. The call passes B's matrix first, both
  // transpositions flipped, D as the row-ordered n x m with D's leading dimension.
  lt.set_row_factor(0.5);
  auto table = std::make_unique<tccd_rt_tune_table>();
  table->magic = TCCD_RT_TUNE_TABLE_MAGIC;
  table->entry_bytes = sizeof(tccd_rt_tune_entry);
  table->slots = TCCD_RT_TUNE_TABLE_SLOTS;
  CHECK(RunStaticGemm(fake, lt, Ctx(11), swap_tune, 64, kCublasEpilogueDefault, table.get()) ==
        0xa2);
  fake_lt_matmul m = lt.Last();
  CHECK((m.A == Ptr(0x2000) && m.B == Ptr(0x1000) && m.D == Ptr(0x3000)));
  CHECK((m.trans_a == 1 && m.trans_b == 1));
  // A's layout is B's matrix (16 x 32, ld 16), B's is A's (64 x 16, ld 64).
  CHECK((m.a.rows == 16 && m.a.cols == 32 && m.a.ld == 16));
  CHECK((m.b.rows == 64 && m.b.cols == 16 && m.b.ld == 64));
  CHECK((m.d.rows == 32 && m.d.cols == 64 && m.d.ld == 64 && m.d.order == 1));
  CHECK(fake.live_objects() == 0);
  // The table remembers the form: the next library takes it without timing.
  const int heuristics = lt.calls("heuristic");
  CHECK(RunStaticGemm(fake, lt, Ctx(11), swap_tune, 64, kCublasEpilogueDefault, table.get()) ==
        0xa2);
  CHECK(lt.calls("heuristic") == heuristics);
  CHECK(lt.Last().d.order == 1);
  CHECK(lt.Last().A == Ptr(0x2000));

  // No faster: the given form.
  lt.set_row_factor(1.0);
  CHECK(RunStaticGemm(fake, lt, Ctx(11), swap_tune, 128) == 0xa2);
  m = lt.Last();
  CHECK((m.A == Ptr(0x1000) && m.trans_a == 0 && m.d.order == 0 && m.d.rows == 128));
  // A bias epilogue is never swapped (cuBLASLt's bias runs along D's rows).
  lt.set_row_factor(0.1);
  CHECK(RunStaticGemm(fake, lt, Ctx(11), swap_tune, 192, kCublasEpilogueBias) == 0xa2);
  CHECK((lt.Last().d.order == 0 && lt.Last().A == Ptr(0x1000)));
  // Without the flag: never timed.
  CHECK(RunStaticGemm(fake, lt, Ctx(11), 8, 256) == 0xa2);
  CHECK(lt.Last().d.order == 0);
  lt.set_row_factor(1.0);
  lt.set_algos(1, nullptr);
  fake.set_current(nullptr);
}

TEST_CASE("libraries given one tuning table share their choices, checked before use",
          "[.fake_driver]") {
  const Fake& fake = LoadFake();
  const FakeLt& lt = LoadFakeLt();
  const double ms[3] = {1.0, 0.8, 0.4};
  lt.set_algos(3, ms);
  auto table = std::make_unique<tccd_rt_tune_table>();
  table->magic = TCCD_RT_TUNE_TABLE_MAGIC;
  table->entry_bytes = sizeof(tccd_rt_tune_entry);
  table->slots = TCCD_RT_TUNE_TABLE_SLOTS;

  // The first library times and fills the table (one entry: its two gemms are the same).
  const int heuristics = lt.calls("heuristic");
  CHECK(RunStaticGemm(fake, lt, Ctx(9), 8, 64, kCublasEpilogueDefault, table.get()) == 0xa3);
  CHECK(lt.calls("heuristic") == heuristics + 1);
  CHECK(table->filled == 1);
  CHECK(table->lock == 0);
  // Another library (another plan, or the next process with the table read back): the
  // table's choice, checked with cublasLtMatmulAlgoCheck, nothing timed.
  const int checks = lt.calls("check");
  const int allocations = fake.calls("cuMemAlloc_v2");
  CHECK(RunStaticGemm(fake, lt, Ctx(9), 8, 64, kCublasEpilogueDefault, table.get()) == 0xa3);
  CHECK(lt.calls("heuristic") == heuristics + 1);
  CHECK(lt.calls("check") > checks);
  CHECK(fake.calls("cuMemAlloc_v2") == allocations);
  // Another device: its own entry.
  CHECK(RunStaticGemm(fake, lt, Ctx(10), 8, 64, kCublasEpilogueDefault, table.get()) == 0xa3);
  CHECK(lt.calls("heuristic") == heuristics + 2);
  CHECK(table->filled == 2);

  // A choice this cuBLASLt rejects (a table from another version): chosen again and the entry
  // replaced, so the library's second gemm of those sizes takes the new one (one query).
  lt.set_check_fails(0xa3);
  const double other[3] = {1.0, 0.3, 0.4};
  lt.set_algos(3, other);
  CHECK(RunStaticGemm(fake, lt, Ctx(9), 8, 64, kCublasEpilogueDefault, table.get()) == 0xa2);
  CHECK(lt.calls("heuristic") == heuristics + 3);
  CHECK(table->filled == 2);
  lt.set_check_fails(0);
  CHECK(RunStaticGemm(fake, lt, Ctx(9), 8, 64, kCublasEpilogueDefault, table.get()) == 0xa2);
  CHECK(lt.calls("heuristic") == heuristics + 3);

  // A table of another layout is refused.
  absl::StatusOr<std::string> so = BuildCudaHostLibrary(CudaModule{}, StaticGemm(8, 64));
  REQUIRE(so.ok());
  absl::StatusOr<LoadedLibrary> lib = LoadedLibrary::Load(*so);
  REQUIRE(lib.ok());
  auto set_table = reinterpret_cast<SetTuneTableFn>(lib->Symbol("tccd_cuda_set_tune_table"));
  REQUIRE(set_table != nullptr);
  table->entry_bytes += 8;
  CHECK(set_table(table.get()) == TCCD_RT_ERROR_INVALID_VALUE);
  CHECK(std::string(lib->LastError()).find("tuning table") != std::string::npos);
  CHECK(set_table(nullptr) == TCCD_RT_ERROR_INVALID_VALUE);
  lt.set_algos(1, nullptr);
  fake.set_current(nullptr);
}

TEST_CASE("a static gemm's algorithm may use the workspace its tune word names (8 MiB without)",
          "[.fake_driver]") {
  const Fake& fake = LoadFake();
  const FakeLt& lt = LoadFakeLt();
  // The heuristic's algorithm wants 16 MiB of scratch: beyond the 8 MiB of a plan without the
  // workspace bits it offers one needing none; within 32 MiB it is taken.
  lt.set_algo_workspace(16u << 20);
  RunStaticGemm(fake, lt, Ctx(13), 0, 64);
  CHECK(lt.Last().workspace_size == 0);
  RunStaticGemm(fake, lt, Ctx(13), 32 << kGemmTuneWorkspaceShift, 64);
  CHECK(lt.Last().workspace_size == (16u << 20));
  CHECK(GemmTuneWord(0, kGemmWorkspaceBytes) == (32 << kGemmTuneWorkspaceShift));
  CHECK(GemmTuneWord(8, kLegacyGemmWorkspaceBytes) == 8);
  lt.set_algo_workspace(4096);
  fake.set_current(nullptr);
}

TEST_CASE("a loaded library re-reads the table for its gemms when it is given the table again "
          "(another process's choice from the daemon)",
          "[.fake_driver]") {
  const Fake& fake = LoadFake();
  const FakeLt& lt = LoadFakeLt();
  const double ms[3] = {1.0, 0.8, 0.4};
  lt.set_algos(3, ms);
  auto table = std::make_unique<tccd_rt_tune_table>();
  table->magic = TCCD_RT_TUNE_TABLE_MAGIC;
  table->entry_bytes = sizeof(tccd_rt_tune_entry);
  table->slots = TCCD_RT_TUNE_TABLE_SLOTS;
  absl::StatusOr<std::string> so = BuildCudaHostLibrary(CudaModule{}, StaticGemm(8, 64));
  REQUIRE(so.ok());
  absl::StatusOr<LoadedLibrary> lib = LoadedLibrary::Load(*so);
  REQUIRE(lib.ok());
  auto set_table = reinterpret_cast<SetTuneTableFn>(lib->Symbol("tccd_cuda_set_tune_table"));
  REQUIRE(set_table != nullptr);
  REQUIRE(set_table(table.get()) == 0);
  fake.set_current(Ctx(14));
  REQUIRE(lib->Init() == 0);
  auto run = reinterpret_cast<SegmentFn>(lib->Symbol("tccd_seg0"));
  void* io[4] = {Ptr(0x1000), Ptr(0x2000), Ptr(0x3000), Ptr(0x4000)};
  REQUIRE(run(io, Ptr(0x800000), Ptr(0xabc000)) == 0);
  CHECK(lt.Last().algo == 0xa3);  // its own timing's choice
  REQUIRE(table->filled == 1);
  tccd_rt_tune_entry* entry = nullptr;
  for (tccd_rt_tune_entry& e : table->entries)
    if (e.used) entry = &e;
  REQUIRE(entry != nullptr);
  CHECK(entry->chosen_ms > 0.0f);
  CHECK(entry->first_ms >= entry->chosen_ms);

  // The client writes the daemon's choice (another process stored 0xa2 first) and gives the
  // table again: both gemms of the segment run it, made anew; nothing is timed.
  const int heuristics = lt.calls("heuristic");
  entry->algo[0] = 0xa2;
  REQUIRE(set_table(table.get()) == 0);
  REQUIRE(run(io, Ptr(0x800000), Ptr(0xabc000)) == 0);
  CHECK(lt.Last().algo == 0xa2);
  CHECK(lt.calls("heuristic") == heuristics);
  // A choice this cuBLASLt rejects leaves the loaded one.
  lt.set_check_fails(0xa1);
  entry->algo[0] = 0xa1;
  REQUIRE(set_table(table.get()) == 0);
  REQUIRE(run(io, Ptr(0x800000), Ptr(0xabc000)) == 0);
  CHECK(lt.Last().algo == 0xa2);
  lt.set_check_fails(0);
  lt.set_algos(1, nullptr);
  fake.set_current(nullptr);
}

// The host cost of one launch, static sizes against run-time sizes, for callgrind (hidden, not
// in the [fake_driver] child run): each loop's launches are timed by instructions with
//   valgrind --tool=callgrind --toggle-collect='*LaunchStatic*' --toggle-collect='*LaunchSized*' \
//     build/tests/cuda_host_test "[.launch_cost]"
// then callgrind_annotate's inclusive counts of the two functions divided by kLaunchCostIters.
constexpr int kLaunchCostIters = 1000;

[[gnu::noinline]] void LaunchStaticLoop(LoadedLibrary::KernelFn relu, void* const* data,
                                        const int64_t* strides, void* stream) {
  for (int i = 0; i < kLaunchCostIters; ++i) REQUIRE(relu(data, strides, stream) == 0);
}

using SizedKernelFn = int (*)(void* const* data, const int64_t* strides, const int64_t* shape,
                              void* stream);

[[gnu::noinline]] void LaunchSizedLoop(SizedKernelFn relu, void* const* data,
                                       const int64_t* strides, const int64_t* shape, void* stream) {
  for (int i = 0; i < kLaunchCostIters; ++i) REQUIRE(relu(data, strides, shape, stream) == 0);
}

TEST_CASE("launch cost: static and run-time sizes (callgrind)", "[.launch_cost]") {
  const Fake& fake = LoadFake();
  fake.set_num_sms(5, 132);
  fake.set_occupancy(4);
  Setup fixed = MakeSetup(fake, TwoKernels({64, 33}));
  Setup sized = MakeSetup(fake, TwoKernels({kRuntimeDim, 33}));
  fake.set_current(Ctx(5));
  REQUIRE(fixed.lib.Init() == 0);
  REQUIRE(sized.lib.Init() == 0);
  void* const stream = Ptr(0xabc000);
  void* data[4] = {Ptr(0x10000), Ptr(0x20000), Ptr(0x30000), Ptr(0x40000)};
  const std::vector<int64_t> shape = {64, 33};
  const std::vector<int64_t> strides = DenseStrides(shape, 4);
  LaunchStaticLoop(fixed.lib.Kernel("relu"), data, strides.data(), stream);
  LaunchSizedLoop(reinterpret_cast<SizedKernelFn>(sized.lib.Symbol("relu")), data, strides.data(),
                  shape.data(), stream);
  CHECK(fake.num_launches() >= 2 * kLaunchCostIters);
}

// The same for a gemm: a static one in a segment (StaticGemm: two gemm steps) against a sized
// gemm whose sizes are cached (a hit every call), with the fake cuBLASLt:
//   valgrind --tool=callgrind --toggle-collect='*GemmStaticLoop*' \
//     --toggle-collect='*GemmSizedLoop*' build/tests/cuda_host_test "[.gemm_cost]"
// What the runtime adds per sized call on top of cublasLtMatmul (context, alignment, the cache
// lookup under its mutex, the stats' two clock reads), cuBLASLt's own work being the fake's.
[[gnu::noinline]] void GemmStaticLoop(SegmentFn run, void* const* io, void* workspace,
                                      void* stream) {
  for (int i = 0; i < kLaunchCostIters; ++i) REQUIRE(run(io, workspace, stream) == 0);
}

[[gnu::noinline]] void GemmSizedLoop(SizedGemmFn gemm, void* const* data, const int64_t* dims,
                                     void* workspace, void* stream) {
  for (int i = 0; i < 2 * kLaunchCostIters; ++i)
    REQUIRE(gemm(data, dims, workspace, 8u << 20, stream) == 0);
}

TEST_CASE("gemm cost: static in a segment and run-time sizes (callgrind)", "[.gemm_cost]") {
  const Fake& fake = LoadFake();
  const FakeLt& lt = LoadFakeLt();
  fake.set_current(Ctx(5));
  absl::StatusOr<std::string> fixed_so = BuildCudaHostLibrary(CudaModule{}, StaticGemm(1, 64));
  absl::StatusOr<std::string> sized_so = BuildCudaHostLibrary(CudaModule{}, SizedGemms());
  REQUIRE((fixed_so.ok() && sized_so.ok()));
  absl::StatusOr<LoadedLibrary> fixed = LoadedLibrary::Load(*fixed_so);
  absl::StatusOr<LoadedLibrary> sized = LoadedLibrary::Load(*sized_so);
  REQUIRE((fixed.ok() && sized.ok()));
  REQUIRE((fixed->Init() == 0 && sized->Init() == 0));
  void* const stream = Ptr(0xabc000);
  void* const workspace = Ptr(0x800000);
  void* io[3] = {Ptr(0x1000), Ptr(0x2000), Ptr(0x3000)};
  // StaticGemm's sizes (m 64, n 32, k 16, bf16) for the sized gemm without epilogue (tccd_sg1,
  // f32: the dtype is the fake's business only).
  const int64_t dims[10] = {64, 32, 16, 64, 16, 64, 1, 0, 0, 0};
  auto sg1 = reinterpret_cast<SizedGemmFn>(sized->Symbol("tccd_sg1"));
  REQUIRE(sg1(io, dims, workspace, 8u << 20, stream) == 0);  // the miss, outside the loop
  const int matmuls = lt.calls("matmul");
  // Two gemms per segment call: kLaunchCostIters calls, as many matmuls as the sized loop's.
  GemmStaticLoop(reinterpret_cast<SegmentFn>(fixed->Symbol("tccd_seg0")), io, workspace, stream);
  GemmSizedLoop(sg1, io, dims, workspace, stream);
  CHECK(lt.calls("matmul") == matmuls + 4 * kLaunchCostIters);
  fake.set_current(nullptr);
}

}  // namespace
}  // namespace tccd::codegen
