// CompileCpuKernels: emit every kernel into one LLVM module, optimise, generate an object,
// link it into a .so, and check the .so against the libm-only rule.
//
// Each call owns its LLVMContext and TargetMachine, so calls run in parallel; only the LLD step
// is serialised (inside LinkSharedObject).
#include "codegen/cpu/cpu_backend.h"

#include <chrono>
#include <memory>
#include <string>
#include <unordered_set>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "codegen/cpu/libm_symbols.h"
#include "codegen/cpu/llvm_emitter.h"
#include "codegen/llvm/elf_symbols.h"
#include "codegen/llvm/lld_link.h"
#include "codegen/llvm/llvm_compile.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"
#include "base/status_macros.h"
#include "spdlog/spdlog.h"

namespace tccd::codegen {

// The artifact must export every kernel and import nothing but libm: the client loads it with
// dlopen into a process that is only guaranteed to have libm.
absl::Status CheckKernelSharedObject(const std::string& shared_object,
                                     absl::Span<const PointwiseKernel> kernels) {
  ASSIGN_OR_RETURN(DynamicSymbols symbols, ReadDynamicSymbols(shared_object));
  if (symbols.num_needed != 0) {
    return absl::InternalError("kernel .so has " + std::to_string(symbols.num_needed) +
                               " DT_NEEDED entries, expected none");
  }
  for (const std::string& name : symbols.undefined) {
    if (!IsLibmSymbol(name)) {
      return absl::InternalError("kernel .so imports '" + name + "', which is not a libm function");
    }
  }
  const std::unordered_set<std::string> defined(symbols.defined.begin(), symbols.defined.end());
  for (const PointwiseKernel& kernel : kernels) {
    if (!defined.count(kernel.name)) {
      return absl::InternalError("kernel .so does not export '" + kernel.name + "'");
    }
  }
  return absl::OkStatus();
}

namespace {

double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

absl::StatusOr<CpuModule> CompileCpuKernels(absl::Span<const PointwiseKernel> kernels,
                                            const CpuTarget& target) {
  if (kernels.empty()) return absl::InvalidArgumentError("no kernels to compile");
  const auto start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> machine, CreateTargetMachine(target));

  std::string llvm_errors;  // filled by LLVM's diagnostic handler
  auto check_diagnostics = [&](const char* stage) {
    return llvm_errors.empty() ? absl::OkStatus()
                               : absl::InternalError(std::string("LLVM reported errors during ") +
                                                     stage + ": " + llvm_errors);
  };
  llvm::LLVMContext context;
  CaptureDiagnostics(context, &llvm_errors);
  auto module = std::make_unique<llvm::Module>("tccd_kernels", context);
  for (const PointwiseKernel& kernel : kernels) {
    RETURN_IF_ERROR(EmitPointwiseKernel(kernel, *module));
  }
  SetKernelVectorWidth(target, *module);
  SetModuleTarget(*module, *machine);
  RETURN_IF_ERROR(OptimizeModule(*module, *machine));
  RETURN_IF_ERROR(check_diagnostics("optimisation"));
  const double optimized_ms = MsSince(start);

  CpuModule result;
  result.llvm_ir = PrintModule(*module);
  ASSIGN_OR_RETURN(std::string object, EmitObjectFile(*module, *machine));
  RETURN_IF_ERROR(check_diagnostics("code generation"));
  const double object_ms = MsSince(start);
  ASSIGN_OR_RETURN(result.shared_object, LinkSharedObject(object));
  RETURN_IF_ERROR(CheckKernelSharedObject(result.shared_object, kernels));
  spdlog::debug(
      "cpu backend: {} kernel(s) for {}: optimised {:.1f} ms, object {:.1f} ms, "
      ".so {} bytes at {:.1f} ms",
      kernels.size(), target.KeyString(), optimized_ms, object_ms, result.shared_object.size(),
      MsSince(start));
  return result;
}

}  // namespace tccd::codegen
