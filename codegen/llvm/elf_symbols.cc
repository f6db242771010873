// ReadDynamicSymbols with llvm::object (see elf_symbols.h).
#include "codegen/llvm/elf_symbols.h"

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

namespace tccd::codegen {
namespace {

// The one place llvm::Error turns into a Status here; consumes the error.
absl::Status FromLlvm(llvm::Error error, std::string_view what) {
  return absl::InvalidArgumentError(std::string(what) + ": " + llvm::toString(std::move(error)));
}

}  // namespace

absl::StatusOr<DynamicSymbols> ReadDynamicSymbols(std::string_view shared_object) {
  llvm::MemoryBufferRef buffer(llvm::StringRef(shared_object.data(), shared_object.size()),
                               "kernels.so");
  llvm::Expected<std::unique_ptr<llvm::object::ObjectFile>> file =
      llvm::object::ObjectFile::createObjectFile(buffer);
  if (!file) return FromLlvm(file.takeError(), "not an object file");
  auto* elf = llvm::dyn_cast<llvm::object::ELF64LEObjectFile>(file->get());
  if (elf == nullptr) return absl::InvalidArgumentError("not a 64-bit little-endian ELF file");

  DynamicSymbols symbols;
  for (const llvm::object::ELFSymbolRef& symbol : elf->getDynamicSymbolIterators()) {
    llvm::Expected<llvm::StringRef> name = symbol.getName();
    if (!name) return FromLlvm(name.takeError(), "bad dynamic symbol name");
    if (name->empty()) continue;  // the null symbol
    llvm::Expected<uint32_t> flags = symbol.getFlags();
    if (!flags) return FromLlvm(flags.takeError(), "bad dynamic symbol flags");
    auto& list =
        (*flags & llvm::object::SymbolRef::SF_Undefined) ? symbols.undefined : symbols.defined;
    list.push_back(name->str());
  }
  auto dynamic = elf->getELFFile().dynamicEntries();
  if (!dynamic) return FromLlvm(dynamic.takeError(), "bad dynamic section");
  for (const auto& entry : *dynamic) {
    if (entry.getTag() == llvm::ELF::DT_NEEDED) ++symbols.num_needed;
  }
  return symbols;
}

}  // namespace tccd::codegen
