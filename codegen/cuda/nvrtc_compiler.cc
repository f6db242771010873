// NVRTC through dlopen/dlsym (see nvrtc_compiler.h).
//
// The prototypes below are NVRTC's C API (nvrtc.h, stable since CUDA 11.1), declared here so
// that tccd builds without the toolkit's headers: nvrtcResult is a C enum (int-sized) and
// nvrtcProgram an opaque pointer.
#include "codegen/cuda/nvrtc_compiler.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "spdlog/spdlog.h"

namespace tccd::codegen {
namespace {

using NvrtcResult = int;  // nvrtcResult; NVRTC_SUCCESS = 0, NVRTC_ERROR_COMPILATION = 6
using NvrtcProgram = void*;
constexpr NvrtcResult kNvrtcSuccess = 0;
constexpr NvrtcResult kNvrtcErrorCompilation = 6;

struct NvrtcApi {
  std::string path;  // what dlopen was given
  int major = 0;
  int minor = 0;
  std::vector<int> supported_archs;  // e.g. 75, 80, ..., 120; empty if NVRTC cannot tell

  const char* (*GetErrorString)(NvrtcResult) = nullptr;
  NvrtcResult (*Version)(int*, int*) = nullptr;
  NvrtcResult (*CreateProgram)(NvrtcProgram*, const char*, const char*, int, const char* const*,
                               const char* const*) = nullptr;
  NvrtcResult (*DestroyProgram)(NvrtcProgram*) = nullptr;
  NvrtcResult (*CompileProgram)(NvrtcProgram, int, const char* const*) = nullptr;
  NvrtcResult (*GetProgramLogSize)(NvrtcProgram, size_t*) = nullptr;
  NvrtcResult (*GetProgramLog)(NvrtcProgram, char*) = nullptr;
  NvrtcResult (*GetPTXSize)(NvrtcProgram, size_t*) = nullptr;
  NvrtcResult (*GetPTX)(NvrtcProgram, char*) = nullptr;
  NvrtcResult (*GetCUBINSize)(NvrtcProgram, size_t*) = nullptr;
  NvrtcResult (*GetCUBIN)(NvrtcProgram, char*) = nullptr;
  // Optional (CUDA 11.2+).
  NvrtcResult (*GetNumSupportedArchs)(int*) = nullptr;
  NvrtcResult (*GetSupportedArchs)(int*) = nullptr;

  std::string VersionString() const { return absl::StrCat(major, ".", minor); }
};

template <typename Fn>
bool Resolve(void* handle, const char* name, Fn& fn, std::string& missing) {
  fn = reinterpret_cast<Fn>(dlsym(handle, name));
  if (fn == nullptr) missing = name;
  return fn != nullptr;
}

// Opens `path` and resolves the API. The handle is never closed: NVRTC stays loaded for the
// life of the process (and a failed candidate is closed right away).
absl::StatusOr<std::unique_ptr<NvrtcApi>> OpenNvrtc(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    return absl::NotFoundError(error ? error : "dlopen failed");
  }
  auto api = std::make_unique<NvrtcApi>();
  api->path = path;
  std::string missing;
  const bool ok = Resolve(handle, "nvrtcGetErrorString", api->GetErrorString, missing) &&
                  Resolve(handle, "nvrtcVersion", api->Version, missing) &&
                  Resolve(handle, "nvrtcCreateProgram", api->CreateProgram, missing) &&
                  Resolve(handle, "nvrtcDestroyProgram", api->DestroyProgram, missing) &&
                  Resolve(handle, "nvrtcCompileProgram", api->CompileProgram, missing) &&
                  Resolve(handle, "nvrtcGetProgramLogSize", api->GetProgramLogSize, missing) &&
                  Resolve(handle, "nvrtcGetProgramLog", api->GetProgramLog, missing) &&
                  Resolve(handle, "nvrtcGetPTXSize", api->GetPTXSize, missing) &&
                  Resolve(handle, "nvrtcGetPTX", api->GetPTX, missing) &&
                  Resolve(handle, "nvrtcGetCUBINSize", api->GetCUBINSize, missing) &&
                  Resolve(handle, "nvrtcGetCUBIN", api->GetCUBIN, missing);
  if (!ok || api->Version(&api->major, &api->minor) != kNvrtcSuccess) {
    dlclose(handle);
    return absl::NotFoundError(ok ? "nvrtcVersion failed"
                                  : absl::StrCat(path, " does not export ", missing));
  }
  api->GetNumSupportedArchs = reinterpret_cast<decltype(api->GetNumSupportedArchs)>(
      dlsym(handle, "nvrtcGetNumSupportedArchs"));
  api->GetSupportedArchs =
      reinterpret_cast<decltype(api->GetSupportedArchs)>(dlsym(handle, "nvrtcGetSupportedArchs"));
  int num_archs = 0;
  if (api->GetNumSupportedArchs && api->GetSupportedArchs &&
      api->GetNumSupportedArchs(&num_archs) == kNvrtcSuccess && num_archs > 0) {
    api->supported_archs.resize(num_archs);
    if (api->GetSupportedArchs(api->supported_archs.data()) != kNvrtcSuccess) {
      api->supported_archs.clear();
    }
  }
  return api;
}

absl::StatusOr<std::unique_ptr<NvrtcApi>> OpenFirst(const std::vector<std::string>& paths) {
  std::vector<std::string> failures;
  for (const std::string& path : paths) {
    absl::StatusOr<std::unique_ptr<NvrtcApi>> api = OpenNvrtc(path);
    if (api.ok()) return api;
    failures.push_back(std::string(api.status().message()));
  }
  return absl::FailedPreconditionError(
      absl::StrCat("CUDA toolkit (NVRTC) not found: tried ", absl::StrJoin(paths, ", "),
                   failures.empty() ? "" : absl::StrCat(" (", failures.back(), ")"),
                   ". Install the CUDA toolkit or set CUDA_HOME / LD_LIBRARY_PATH to it."));
}

// The process-wide NVRTC, or why there is none (decided once).
absl::StatusOr<const NvrtcApi*> Nvrtc() {
  static std::once_flag once;
  static absl::StatusOr<std::unique_ptr<NvrtcApi>>* loaded = nullptr;
  std::call_once(once, [] {
    loaded = new absl::StatusOr<std::unique_ptr<NvrtcApi>>(OpenFirst(NvrtcSearchPaths()));
    if (loaded->ok()) {
      spdlog::info("cuda backend: NVRTC {} from {}", (**loaded)->VersionString(), (**loaded)->path);
    } else {
      spdlog::warn("cuda backend: {}", std::string(loaded->status().message()));
    }
  });
  if (!loaded->ok()) return loaded->status();
  return loaded->value().get();
}

// Destroys the program on every path out of CompileWithNvrtc.
class ProgramGuard {
 public:
  ProgramGuard(const NvrtcApi& api, NvrtcProgram program) : api_(api), program_(program) {}
  ~ProgramGuard() {
    // Nothing useful can be done if destruction fails.
    if (program_ != nullptr) static_cast<void>(api_.DestroyProgram(&program_));
  }
  ProgramGuard(const ProgramGuard&) = delete;
  ProgramGuard& operator=(const ProgramGuard&) = delete;

 private:
  const NvrtcApi& api_;
  NvrtcProgram program_;
};

// Reads a size-then-bytes result (log, PTX, cubin).
absl::StatusOr<std::string> ReadOut(const NvrtcApi& api, NvrtcProgram program,
                                    NvrtcResult (*size_fn)(NvrtcProgram, size_t*),
                                    NvrtcResult (*get_fn)(NvrtcProgram, char*), const char* what) {
  size_t size = 0;
  NvrtcResult r = size_fn(program, &size);
  std::string out(size, '\0');
  if (r == kNvrtcSuccess && size > 0) r = get_fn(program, out.data());
  if (r != kNvrtcSuccess) {
    return absl::InternalError(
        absl::StrCat("NVRTC could not return the ", what, ": ", api.GetErrorString(r)));
  }
  return out;
}

std::string StripTrailingNuls(std::string s) {
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

}  // namespace

std::vector<std::string> NvrtcSearchPaths() {
  static constexpr const char* kSonames[] = {"libnvrtc.so.13", "libnvrtc.so.12"};
  std::vector<std::string> dirs;
  if (const char* home = std::getenv("CUDA_HOME"); home != nullptr && *home != '\0') {
    dirs.push_back(absl::StrCat(home, "/lib64"));
  }
  for (const char* dir : {"/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib"}) {
    if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(dir);
  }
  std::vector<std::string> paths(std::begin(kSonames), std::end(kSonames));
  for (const std::string& dir : dirs) {
    for (const char* soname : kSonames) paths.push_back(absl::StrCat(dir, "/", soname));
  }
  return paths;
}

absl::StatusOr<std::string> ProbeNvrtc(const std::vector<std::string>& paths) {
  absl::StatusOr<std::unique_ptr<NvrtcApi>> api = OpenFirst(paths);
  if (!api.ok()) return api.status();
  return (*api)->VersionString();
}

absl::StatusOr<std::string> LoadedNvrtcVersion() {
  absl::StatusOr<const NvrtcApi*> api = Nvrtc();
  if (!api.ok()) return api.status();
  return (*api)->VersionString();
}

absl::StatusOr<NvrtcOutput> CompileWithNvrtc(const std::string& source,
                                             const std::string& program_name,
                                             const CudaTarget& target, bool relocatable) {
  absl::StatusOr<const NvrtcApi*> loaded = Nvrtc();
  if (!loaded.ok()) return loaded.status();
  const NvrtcApi& api = **loaded;

  const int arch = target.cc_major * 10 + target.cc_minor;
  const std::vector<int>& archs = api.supported_archs;
  if (!archs.empty() && std::find(archs.begin(), archs.end(), arch) == archs.end()) {
    return absl::FailedPreconditionError(
        absl::StrCat("this tccd's NVRTC ", api.VersionString(), " cannot generate code for ",
                     target.KeyString(), " (it supports sm_", absl::StrJoin(archs, ", sm_"),
                     "); run the daemon with a CUDA toolkit that supports the GPU"));
  }

  NvrtcProgram program = nullptr;
  NvrtcResult r =
      api.CreateProgram(&program, source.c_str(), program_name.c_str(), 0, nullptr, nullptr);
  if (r != kNvrtcSuccess) {
    return absl::InternalError(absl::StrCat("nvrtcCreateProgram failed: ", api.GetErrorString(r)));
  }
  ProgramGuard guard(api, program);

  // sm_XY (a real architecture) makes NVRTC produce the cubin; the PTX it went through is
  // available too. No -use_fast_math, no -lineinfo: results must match eager, and the output
  // must not depend on file paths. No -default-device either: the generated source annotates
  // every function, and with it the namespace-scope constexpr constants would become __device__
  // variables (a .global each in the module) instead of compile-time constants.
  const std::string arch_option = "--gpu-architecture=" + target.KeyString();
  // -rdc=true: a relocatable cubin, for nvJitLink to combine with other kernels' (nvjitlink.h).
  const char* options[] = {arch_option.c_str(), "-std=c++17", "--fmad=true", "-rdc=true"};
  r = api.CompileProgram(program, static_cast<int>(std::size(options)) - (relocatable ? 0 : 1),
                         options);
  absl::StatusOr<std::string> log =
      ReadOut(api, program, api.GetProgramLogSize, api.GetProgramLog, "log");
  if (!log.ok()) return log.status();
  NvrtcOutput out;
  out.log = StripTrailingNuls(*std::move(log));
  if (r != kNvrtcSuccess) {
    return absl::InternalError(
        absl::StrCat("NVRTC ", api.VersionString(),
                     r == kNvrtcErrorCompilation ? " rejected the generated CUDA source"
                                                 : " failed to compile the generated CUDA source",
                     " for ", target.KeyString(), " (", api.GetErrorString(r), "): ", out.log));
  }
  absl::StatusOr<std::string> ptx = ReadOut(api, program, api.GetPTXSize, api.GetPTX, "PTX");
  if (!ptx.ok()) return ptx.status();
  out.ptx = StripTrailingNuls(*std::move(ptx));
  absl::StatusOr<std::string> cubin =
      ReadOut(api, program, api.GetCUBINSize, api.GetCUBIN, "cubin");
  if (!cubin.ok()) return cubin.status();
  out.cubin = *std::move(cubin);
  if (out.cubin.empty()) {
    return absl::InternalError(absl::StrCat("NVRTC produced no cubin for ", target.KeyString()));
  }
  return out;
}

}  // namespace tccd::codegen
