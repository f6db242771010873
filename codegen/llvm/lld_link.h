// Relocatable object -> ELF shared object, linked in-process with LLD.
//
// Shared by the CPU backend and the CUDA host library. Thread-safe: LLD's driver keeps global state
// and is not reentrant, so calls are serialised on one process-wide mutex (linking a kernel module
// takes milliseconds; code generation, which runs in parallel, dominates).
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace tccd::codegen {

// Links `object` (an x86-64 ELF .o) into a shared object with no DT_NEEDED entries; undefined
// references stay undefined and resolve when the client loads it. LLD needs real files, so
// this uses a private temporary directory that it always removes. INTERNAL with LLD's
// diagnostics if the link fails; UNAVAILABLE if the temporary files cannot be written.
absl::StatusOr<std::string> LinkSharedObject(std::string_view object);

// The same for several objects, linked in this order (the CUDA host library links its
// generated object with the embedded runtime's). Each `aliases` entry "name=symbol" defines an
// exported `name` at `symbol` (LLD's --defsym): per-kernel objects name their kernel by content,
// and the graph's .so exports the names its plan calls.
absl::StatusOr<std::string> LinkSharedObjects(absl::Span<const std::string_view> objects,
                                              absl::Span<const std::string> aliases = {});

// How many of LLD's static pointers to linker-defined symbols are set (0 between links; see
// lld_link.cc). For the test that a link leaves nothing pointing into freed memory.
int LldSymbolPointersLeftForTesting();

}  // namespace tccd::codegen
