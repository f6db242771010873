// Target machine creation, the O3 pipeline and object emission (see llvm_compile.h).
#include "codegen/llvm/llvm_compile.h"

#include <mutex>
#include <optional>
#include <string>

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Triple.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/DiagnosticHandler.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/OptimizationLevel.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "spdlog/spdlog.h"

namespace tccd::codegen {
namespace {

class CapturingDiagnosticHandler : public llvm::DiagnosticHandler {
 public:
  explicit CapturingDiagnosticHandler(std::string* errors) : errors_(errors) {}

  bool handleDiagnostics(const llvm::DiagnosticInfo& info) override {
    std::string text;
    llvm::raw_string_ostream os(text);
    llvm::DiagnosticPrinterRawOStream printer(os);
    info.print(printer);
    os.flush();
    if (info.getSeverity() == llvm::DS_Error) {
      if (!errors_->empty()) *errors_ += "; ";
      *errors_ += text;
    } else {
      spdlog::trace("llvm: {}", text);
    }
    return true;  // handled: LLVM prints nothing
  }

 private:
  std::string* errors_;
};

void InitializeLlvmOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Only the X86 backend: the daemon never targets anything else yet.
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
  });
}

// The library functions the optimiser may assume exist. Loop idiom recognition would otherwise
// turn constant-fill or copy loops into memset/memcpy calls, which libm does not provide.
llvm::TargetLibraryInfoImpl MakeLibraryInfo(const llvm::Module& module) {
  llvm::TargetLibraryInfoImpl tlii{llvm::Triple(module.getTargetTriple())};
  for (llvm::LibFunc f : {llvm::LibFunc_memset, llvm::LibFunc_memcpy, llvm::LibFunc_memmove,
                          llvm::LibFunc_memset_pattern4, llvm::LibFunc_memset_pattern8,
                          llvm::LibFunc_memset_pattern16, llvm::LibFunc_bcmp, llvm::LibFunc_memcmp,
                          llvm::LibFunc_bzero}) {
    tlii.setUnavailable(f);
  }
  return tlii;
}

}  // namespace

void CaptureDiagnostics(llvm::LLVMContext& context, std::string* errors) {
  context.setDiagnosticHandler(std::make_unique<CapturingDiagnosticHandler>(errors));
}

absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> CreateTargetMachine(const CpuTarget& target) {
  InitializeLlvmOnce();
  std::string error;
  const llvm::Target* llvm_target = llvm::TargetRegistry::lookupTarget(target.triple, error);
  if (llvm_target == nullptr) {
    return absl::InvalidArgumentError("no LLVM target for triple '" + target.triple +
                                      "': " + error);
  }
  const llvm::Triple triple(target.triple);
  if (triple.getArch() != llvm::Triple::x86_64) {
    return absl::InvalidArgumentError("CPU backend supports only x86_64, got '" + target.triple +
                                      "'");
  }
  // Checked up front: LLVM only warns on stderr about an unknown CPU and compiles generically.
  std::unique_ptr<llvm::MCSubtargetInfo> generic(
      llvm_target->createMCSubtargetInfo(target.triple, "", ""));
  if (generic == nullptr || !generic->isCPUStringValid(target.cpu)) {
    return absl::InvalidArgumentError("LLVM does not know CPU '" + target.cpu + "'");
  }
  std::unique_ptr<llvm::TargetMachine> machine(llvm_target->createTargetMachine(
      target.triple, target.cpu, /*Features=*/"", llvm::TargetOptions(), llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOpt::Aggressive));
  if (machine == nullptr) {
    return absl::InternalError("LLVM could not create a target machine for " + target.KeyString());
  }
  return machine;
}

void SetModuleTarget(llvm::Module& module, llvm::TargetMachine& machine) {
  module.setTargetTriple(machine.getTargetTriple().str());
  module.setDataLayout(machine.createDataLayout());
  for (llvm::Function& f : module) {
    if (f.isDeclaration()) continue;
    f.addFnAttr("target-cpu", machine.getTargetCPU());
  }
}

absl::Status OptimizeModule(llvm::Module& module, llvm::TargetMachine& machine) {
  {
    std::string message;
    llvm::raw_string_ostream os(message);
    if (llvm::verifyModule(module, &os)) {
      os.flush();
      return absl::InternalError("LLVM verifier rejected the module before optimisation: " +
                                 message);
    }
  }
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  tuning.LoopUnrolling = true;
  llvm::PassBuilder builder(&machine, tuning);

  // Registered before the defaults: the first registration of an analysis wins.
  llvm::TargetLibraryInfoImpl tlii = MakeLibraryInfo(module);
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(tlii); });
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);

  llvm::ModulePassManager passes =
      builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  passes.run(module, mam);
  return absl::OkStatus();
}

absl::StatusOr<std::string> EmitObjectFile(llvm::Module& module, llvm::TargetMachine& machine) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager passes;
  llvm::TargetLibraryInfoImpl tlii = MakeLibraryInfo(module);
  passes.add(new llvm::TargetLibraryInfoWrapperPass(tlii));
  if (machine.addPassesToEmitFile(passes, os, nullptr, llvm::CGFT_ObjectFile)) {
    return absl::InternalError("LLVM target " + machine.getTargetTriple().str() +
                               " cannot emit object files");
  }
  passes.run(module);
  return std::string(buffer.data(), buffer.size());
}

std::string PrintModule(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, nullptr);
  os.flush();
  return text;
}

}  // namespace tccd::codegen
