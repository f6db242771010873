// Reads the dynamic symbol table and DT_NEEDED entries of an ELF shared object.
//
// The CPU backend checks every .so it produces against the libm rule (cpu/libm_symbols.h), the
// CUDA host library its own against host_imports.h, and tests use it to inspect artifacts.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tccd::codegen {

struct DynamicSymbols {
  std::vector<std::string> defined;    // exported names, in table order
  std::vector<std::string> undefined;  // names resolved at load time, in table order
  int num_needed = 0;                  // DT_NEEDED entries
};

// INVALID_ARGUMENT (with LLVM's message) if `shared_object` is not a 64-bit little-endian ELF.
absl::StatusOr<DynamicSymbols> ReadDynamicSymbols(std::string_view shared_object);

}  // namespace tccd::codegen
