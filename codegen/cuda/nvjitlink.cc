// LinkCubins over a dlopen'ed libnvJitLink (searched where NVRTC is: nvrtc_compiler.h).
#include "codegen/cuda/nvjitlink.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "spdlog/spdlog.h"

namespace tccd::codegen {
namespace {

using Handle = void*;
constexpr int kSuccess = 0;
constexpr int kInputCubin = 1;  // NVJITLINK_INPUT_CUBIN

struct NvJitLinkApi {
  std::string path;
  int (*Create)(Handle*, uint32_t, const char**) = nullptr;
  int (*Destroy)(Handle*) = nullptr;
  int (*AddData)(Handle, int, const void*, size_t, const char*) = nullptr;
  int (*Complete)(Handle) = nullptr;
  int (*GetLinkedCubinSize)(Handle, size_t*) = nullptr;
  int (*GetLinkedCubin)(Handle, void*) = nullptr;
  int (*GetErrorLogSize)(Handle, size_t*) = nullptr;
  int (*GetErrorLog)(Handle, char*) = nullptr;
};

template <typename Fn>
bool Bind(void* lib, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  return fn != nullptr;
}

std::vector<std::string> SearchPaths() {
  static constexpr const char* kSonames[] = {"libnvJitLink.so.13", "libnvJitLink.so.12"};
  std::vector<std::string> dirs;
  if (const char* home = std::getenv("CUDA_HOME"); home != nullptr && *home != '\0')
    dirs.push_back(absl::StrCat(home, "/lib64"));
  dirs.push_back("/usr/local/cuda/lib64");
  dirs.push_back("/usr/local/cuda/targets/x86_64-linux/lib");
  std::vector<std::string> paths(std::begin(kSonames), std::end(kSonames));
  for (const std::string& dir : dirs)
    for (const char* soname : kSonames) paths.push_back(absl::StrCat(dir, "/", soname));
  return paths;
}

absl::StatusOr<const NvJitLinkApi*> Load() {
  static absl::StatusOr<const NvJitLinkApi*>* loaded = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    const std::vector<std::string> paths = SearchPaths();
    for (const std::string& path : paths) {
      void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (lib == nullptr) continue;
      auto* api = new NvJitLinkApi{.path = path};
      if (Bind(lib, "nvJitLinkCreate", api->Create) &&
          Bind(lib, "nvJitLinkDestroy", api->Destroy) &&
          Bind(lib, "nvJitLinkAddData", api->AddData) &&
          Bind(lib, "nvJitLinkComplete", api->Complete) &&
          Bind(lib, "nvJitLinkGetLinkedCubinSize", api->GetLinkedCubinSize) &&
          Bind(lib, "nvJitLinkGetLinkedCubin", api->GetLinkedCubin) &&
          Bind(lib, "nvJitLinkGetErrorLogSize", api->GetErrorLogSize) &&
          Bind(lib, "nvJitLinkGetErrorLog", api->GetErrorLog)) {
        spdlog::info("cuda backend: nvJitLink from {}", path);
        loaded = new absl::StatusOr<const NvJitLinkApi*>(api);
        return;
      }
      delete api;
      dlclose(lib);
    }
    loaded = new absl::StatusOr<const NvJitLinkApi*>(absl::FailedPreconditionError(
        absl::StrCat("nvJitLink not found (tried ", absl::StrJoin(paths, ", "), ")")));
  });
  return *loaded;
}

}  // namespace

absl::StatusOr<std::string> LinkCubins(const std::vector<std::string>& cubins,
                                       const CudaTarget& target) {
  absl::StatusOr<const NvJitLinkApi*> loaded = Load();
  if (!loaded.ok()) return loaded.status();
  const NvJitLinkApi& api = **loaded;
  const std::string arch = "-arch=" + target.KeyString();
  const char* options[] = {arch.c_str()};
  Handle handle = nullptr;
  if (int r = api.Create(&handle, 1, options); r != kSuccess)
    return absl::InternalError(absl::StrCat("nvJitLinkCreate failed with ", r));
  auto error = [&](const char* what, int r) {
    size_t size = 0;
    std::string log;
    if (api.GetErrorLogSize(handle, &size) == kSuccess && size > 0) {
      log.resize(size);
      if (api.GetErrorLog(handle, log.data()) != kSuccess) log.clear();
      while (!log.empty() && log.back() == '\0') log.pop_back();
    }
    return absl::InternalError(absl::StrCat(what, " failed with ", r, ": ", log));
  };
  absl::StatusOr<std::string> result = absl::InternalError("not linked");
  int r = kSuccess;
  for (size_t i = 0; i < cubins.size() && r == kSuccess; ++i) {
    const std::string name = absl::StrCat("kernel", i, ".cubin");
    r = api.AddData(handle, kInputCubin, cubins[i].data(), cubins[i].size(), name.c_str());
    if (r != kSuccess) result = error("nvJitLinkAddData", r);
  }
  if (r == kSuccess) {
    r = api.Complete(handle);
    if (r != kSuccess) result = error("nvJitLinkComplete", r);
  }
  size_t size = 0;
  if (r == kSuccess) {
    r = api.GetLinkedCubinSize(handle, &size);
    if (r != kSuccess) result = error("nvJitLinkGetLinkedCubinSize", r);
  }
  if (r == kSuccess) {
    std::string cubin(size, '\0');
    r = api.GetLinkedCubin(handle, cubin.data());
    result = r == kSuccess ? absl::StatusOr<std::string>(std::move(cubin))
                           : error("nvJitLinkGetLinkedCubin", r);
  }
  static_cast<void>(api.Destroy(&handle));  // nothing useful to do if it fails
  return result;
}

}  // namespace tccd::codegen
