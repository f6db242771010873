// CompileCpuKernelObjects: key every kernel, ask the cache for the known objects, compile the
// missing ones in parallel (one LLVM module each), link all into the graph's .so.
#include "codegen/cpu/cpu_kernel_objects.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "codegen/cpu/llvm_emitter.h"
#include "codegen/llvm/lld_link.h"
#include "codegen/llvm/llvm_compile.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"
#include "base/status_macros.h"
#include "spdlog/spdlog.h"

namespace tccd::codegen {
namespace {

// The symbol a kernel object defines: derived from its key, so the object's bytes do not depend
// on which graph (and kernel index) first compiled it. 128 bits of the key keep it short.
std::string ContentSymbol(const std::string& key) { return "tccd_kernel_" + key.substr(0, 32); }

struct CompiledObject {
  std::string object;
  std::string llvm_ir;
};

// One kernel, alone in its own module and context (so that threads never share LLVM state).
absl::StatusOr<CompiledObject> CompileOneKernel(PointwiseKernel kernel, const CpuTarget& target) {
  ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> machine, CreateTargetMachine(target));
  std::string llvm_errors;
  llvm::LLVMContext context;
  CaptureDiagnostics(context, &llvm_errors);
  auto module = std::make_unique<llvm::Module>(kernel.name, context);
  RETURN_IF_ERROR(EmitPointwiseKernel(kernel, *module));
  SetKernelVectorWidth(target, *module);
  SetModuleTarget(*module, *machine);
  RETURN_IF_ERROR(OptimizeModule(*module, *machine));
  CompiledObject out;
  ASSIGN_OR_RETURN(out.object, EmitObjectFile(*module, *machine));
  if (!llvm_errors.empty())
    return absl::InternalError(
        absl::StrCat("LLVM reported errors compiling ", kernel.name, ": ", llvm_errors));
  out.llvm_ir = PrintModule(*module);
  return out;
}

// Runs CompileOneKernel for every listed kernel on up to `threads` threads; the first error wins.
absl::StatusOr<std::vector<CompiledObject>> CompileInParallel(std::vector<PointwiseKernel> kernels,
                                                              const CpuTarget& target, int threads,
                                                              KernelProgress& progress) {
  std::vector<absl::StatusOr<CompiledObject>> results(kernels.size(),
                                                      absl::InternalError("not compiled"));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next.fetch_add(1); i < kernels.size(); i = next.fetch_add(1)) {
      results[i] = CompileOneKernel(std::move(kernels[i]), target);
      progress.KernelDone();
    }
  };
  const int n = std::max(1, std::min<int>(threads, static_cast<int>(kernels.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  std::vector<CompiledObject> out;
  out.reserve(results.size());
  for (absl::StatusOr<CompiledObject>& r : results) {
    RETURN_IF_ERROR(r.status());
    out.push_back(*std::move(r));
  }
  return out;
}

}  // namespace

absl::StatusOr<CpuKernelObjectsResult> CompileCpuKernelObjects(
    absl::Span<const PointwiseKernel> kernels, const CpuTarget& target,
    const CpuKernelObjectsOptions& options) {
  if (kernels.empty()) return absl::InvalidArgumentError("no kernels to compile");
  RET_CHECK(!options.fingerprint.empty());
  const auto start = std::chrono::steady_clock::now();

  // Distinct kernels in first-use order; every kernel's graph-local name aliases its object's.
  std::vector<std::string> keys;               // distinct, in order
  std::vector<const PointwiseKernel*> firsts;  // the first kernel of each key
  std::vector<std::string> aliases;
  absl::flat_hash_map<std::string, size_t> index;
  for (const PointwiseKernel& kernel : kernels) {
    std::string key = KernelKey(kernel, "cpu-object", target.KeyString(), options.fingerprint);
    aliases.push_back(absl::StrCat(kernel.name, "=", ContentSymbol(key)));
    if (index.emplace(key, keys.size()).second) {
      keys.push_back(std::move(key));
      firsts.push_back(&kernel);
    }
  }

  absl::flat_hash_map<std::string, std::string> known;
  if (options.cache != nullptr) {
    absl::StatusOr<absl::flat_hash_map<std::string, std::string>> found =
        options.cache->Lookup(keys);
    if (found.ok()) {
      known = *std::move(found);
    } else {
      spdlog::warn("kernel cache lookup failed, compiling every kernel: {}",
                   found.status().ToString());
    }
  }

  CpuKernelObjectsResult result;
  std::vector<std::string> objects(keys.size());
  auto compile_missing = [&](bool trust_cache) -> absl::Status {
    std::vector<PointwiseKernel> missing;
    std::vector<size_t> slots;
    result.new_objects.clear();
    result.module.llvm_ir.clear();
    result.kernels_reused = 0;
    for (size_t i = 0; i < keys.size(); ++i) {
      auto it = trust_cache ? known.find(keys[i]) : known.end();
      if (it != known.end()) {
        objects[i] = it->second;
        ++result.kernels_reused;
        continue;
      }
      PointwiseKernel kernel = *firsts[i];
      kernel.name = ContentSymbol(keys[i]);
      missing.push_back(std::move(kernel));
      slots.push_back(i);
    }
    result.kernels_compiled = static_cast<int>(missing.size());
    KernelProgress progress(options.progress, result.kernels_reused, static_cast<int>(keys.size()));
    ASSIGN_OR_RETURN(std::vector<CompiledObject> compiled,
                     CompileInParallel(std::move(missing), target, options.threads, progress));
    for (size_t j = 0; j < compiled.size(); ++j) {
      objects[slots[j]] = compiled[j].object;
      result.module.llvm_ir += compiled[j].llvm_ir;
      result.new_objects.push_back({keys[slots[j]], std::move(compiled[j].object)});
    }
    return absl::OkStatus();
  };
  auto link = [&]() -> absl::StatusOr<std::string> {
    std::vector<std::string_view> views(objects.begin(), objects.end());
    ASSIGN_OR_RETURN(std::string so, LinkSharedObjects(views, aliases));
    RETURN_IF_ERROR(CheckKernelSharedObject(so, kernels));
    return so;
  };

  RETURN_IF_ERROR(compile_missing(/*trust_cache=*/true));
  absl::StatusOr<std::string> so = link();
  if (!so.ok() && result.kernels_reused > 0) {
    // The store verified the bytes' digest, so this is an object an older, buggy build stored
    // under a key that should have changed: do not trust it, compile everything here.
    spdlog::warn("linking cached kernel objects failed, recompiling all {} kernel(s): {}",
                 keys.size(), so.status().ToString());
    RETURN_IF_ERROR(compile_missing(/*trust_cache=*/false));
    so = link();
  }
  RETURN_IF_ERROR(so.status());
  result.module.shared_object = *std::move(so);
  spdlog::debug(
      "cpu backend: {} kernel(s), {} distinct, {} compiled on {} thread(s), {} reused; .so in "
      "{:.1f} ms",
      kernels.size(), keys.size(), result.kernels_compiled, options.threads, result.kernels_reused,
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  return result;
}

}  // namespace tccd::codegen
