// LLVM module -> optimised module -> relocatable object bytes, for one CpuTarget.
//
// Shared by the CPU backend (kernels) and the CUDA host library (its per-graph object); LLVM
// types are only forward-declared. Every LLVM failure comes
// back as an absl::Status carrying LLVM's message; nothing here aborts the process.
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "codegen/llvm/cpu_target.h"

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
}  // namespace llvm

namespace tccd::codegen {

// Routes `context`'s diagnostics away from stderr: errors are appended to *errors (the caller
// turns a non-empty string into a Status after each stage); warnings and remarks, such as the
// expected "loop not vectorized" for loops that call libm, go to spdlog at trace level.
// `errors` must outlive the context's use.
void CaptureDiagnostics(llvm::LLVMContext& context, std::string* errors);

// A TargetMachine for `target` (PIC, optimisation level aggressive). Initialises LLVM's X86
// target on first use. INVALID_ARGUMENT for a triple or CPU LLVM does not know. Each call
// returns a fresh machine: a TargetMachine is not shared between threads.
absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> CreateTargetMachine(const CpuTarget& target);

// Sets the module's triple and data layout and tags every defined function with the target's
// CPU, so that the optimiser's cost model sees the right ISA. Call before OptimizeModule.
void SetModuleTarget(llvm::Module& module, llvm::TargetMachine& machine);

// Runs LLVM's O3 pipeline (new pass manager). The optimiser may not introduce calls to
// memset/memcpy/memmove: the linked .so may only call libm.
absl::Status OptimizeModule(llvm::Module& module, llvm::TargetMachine& machine);

// Code generation to an ELF relocatable object.
absl::StatusOr<std::string> EmitObjectFile(llvm::Module& module, llvm::TargetMachine& machine);

// The module as LLVM IR text.
std::string PrintModule(const llvm::Module& module);

}  // namespace tccd::codegen
