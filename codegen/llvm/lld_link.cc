// LinkSharedObject: LLD's ELF driver, called as a library (see lld_link.h).
#include "codegen/llvm/lld_link.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "lld/Common/CommonLinkerContext.h"
#include "lld/Common/Driver.h"
#include "llvm/Support/raw_ostream.h"
#include "spdlog/spdlog.h"

namespace tccd::codegen {
namespace {

// Guards every use of LLD's driver, which keeps its state in globals.
ABSL_CONST_INIT absl::Mutex lld_mutex(absl::kConstInit);

}  // namespace

// LLD 16 keeps pointers to linker-defined symbols in static members of lld::elf::ElfSym
// (lld/ELF/Symbols.h, which Debian's liblld-16-dev does not install, hence the mangled names).
// elf::link sets some of them only when a link references the symbol (_GLOBAL_OFFSET_TABLE_,
// _TLS_MODULE_BASE_, ...) and never clears them, while the symbols live in the linker context
// that CommonLinkerContext::destroy frees. The next link that does not reference the symbol
// writes through the stale pointer: issue 12's "Invalid write of size 8" in
// Writer::finalizeSections under valgrind, a CUDA host library link (it references
// _GLOBAL_OFFSET_TABLE_) followed by a CPU kernel link in one process. Cleared after every
// link, with the context they point into. (Later LLDs keep them in the context itself.)
#define TCCD_LLD_ELFSYM(field, mangled) extern void* lld_elfsym_##field __asm__(mangled);
#define TCCD_LLD_ELFSYMS(X)                                      \
  X(bss, "_ZN3lld3elf6ElfSym3bssE")                              \
  X(etext1, "_ZN3lld3elf6ElfSym6etext1E")                        \
  X(etext2, "_ZN3lld3elf6ElfSym6etext2E")                        \
  X(edata1, "_ZN3lld3elf6ElfSym6edata1E")                        \
  X(edata2, "_ZN3lld3elf6ElfSym6edata2E")                        \
  X(end1, "_ZN3lld3elf6ElfSym4end1E")                            \
  X(end2, "_ZN3lld3elf6ElfSym4end2E")                            \
  X(globalOffsetTable, "_ZN3lld3elf6ElfSym17globalOffsetTableE") \
  X(mipsGp, "_ZN3lld3elf6ElfSym6mipsGpE")                        \
  X(mipsGpDisp, "_ZN3lld3elf6ElfSym10mipsGpDispE")               \
  X(mipsLocalGp, "_ZN3lld3elf6ElfSym11mipsLocalGpE")             \
  X(relaIpltStart, "_ZN3lld3elf6ElfSym13relaIpltStartE")         \
  X(relaIpltEnd, "_ZN3lld3elf6ElfSym11relaIpltEndE")             \
  X(tlsModuleBase, "_ZN3lld3elf6ElfSym13tlsModuleBaseE")
TCCD_LLD_ELFSYMS(TCCD_LLD_ELFSYM)

int LldSymbolPointersLeftForTesting() {
  absl::MutexLock lock(&lld_mutex);
  int left = 0;
#define TCCD_LLD_COUNT(field, mangled) left += lld_elfsym_##field != nullptr;
  TCCD_LLD_ELFSYMS(TCCD_LLD_COUNT)
#undef TCCD_LLD_COUNT
  return left;
}

namespace {

void ClearLldSymbolPointers() ABSL_EXCLUSIVE_LOCKS_REQUIRED(lld_mutex) {
#define TCCD_LLD_CLEAR(field, mangled) lld_elfsym_##field = nullptr;
  TCCD_LLD_ELFSYMS(TCCD_LLD_CLEAR)
#undef TCCD_LLD_CLEAR
}

// A mkdtemp directory, removed with its contents on destruction.
class TempDir {
 public:
  static absl::StatusOr<TempDir> Create() {
    const char* base = getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/tccd-lld-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      return absl::UnavailableError("mkdtemp(" + pattern + "): " + std::strerror(errno));
    }
    return TempDir(std::move(pattern));
  }
  TempDir(TempDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    if (path_.empty()) return;
    std::error_code ignored;  // best effort: a leftover temp dir is not worth failing for
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

absl::Status WriteFile(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return absl::UnavailableError("cannot write " + path);
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InternalError("LLD produced no output file " + path);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

}  // namespace

absl::StatusOr<std::string> LinkSharedObject(std::string_view object) {
  return LinkSharedObjects({object});
}

absl::StatusOr<std::string> LinkSharedObjects(absl::Span<const std::string_view> objects,
                                              absl::Span<const std::string> aliases) {
  absl::StatusOr<TempDir> dir = TempDir::Create();
  if (!dir.ok()) return dir.status();
  std::vector<std::string> object_paths;
  for (size_t i = 0; i < objects.size(); ++i) {
    object_paths.push_back(
        dir->path() + (i == 0 ? std::string("/kernels.o") : "/kernels" + std::to_string(i) + ".o"));
    if (absl::Status s = WriteFile(object_paths.back(), objects[i]); !s.ok()) return s;
  }
  const std::string so_path = dir->path() + "/kernels.so";

  std::vector<const char*> args = {
      "ld.lld",
      "-shared",
      "--threads=1",  // the daemon parallelises across requests, not inside one link
      "--eh-frame-hdr",
      "-z",
      "noexecstack",
      "-z",
      "relro",
      "-z",
      "now",  // bind the few libm calls at load time, not on first call
      "-o",
      so_path.c_str(),
  };
  std::vector<std::string> defsyms;
  defsyms.reserve(aliases.size());
  for (const std::string& alias : aliases) defsyms.push_back("--defsym=" + alias);
  for (const std::string& defsym : defsyms) args.push_back(defsym.c_str());
  for (const std::string& path : object_paths) args.push_back(path.c_str());
  std::string out_text, err_text;
  bool ok;
  {
    llvm::raw_string_ostream out(out_text), err(err_text);
    absl::MutexLock lock(&lld_mutex);
    ok = lld::elf::link(args, out, err, /*exitEarly=*/false, /*disableOutput=*/false);
    // elf::link allocates a linker context that lldMain would free; free it before the next
    // link so that no state leaks between calls, and the pointers LLD keeps into it.
    lld::CommonLinkerContext::destroy();
    ClearLldSymbolPointers();
  }
  if (!ok) return absl::InternalError("LLD failed to link the kernel module: " + err_text);
  if (!err_text.empty()) spdlog::warn("lld: {}", err_text);
  return ReadFile(so_path);
}

}  // namespace tccd::codegen
