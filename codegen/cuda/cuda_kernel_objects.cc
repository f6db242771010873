// CompileCudaKernelObjects: key every kernel, ask the cache for known relocatable cubins,
// compile the missing ones (one NVRTC program each, in parallel), link all with nvJitLink.
#include "codegen/cuda/cuda_kernel_objects.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string_view>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "codegen/cuda/nvjitlink.h"
#include "codegen/cuda/nvrtc_compiler.h"
#include "codegen/cuda/nvrtc_processes.h"
#include "codegen/kernel/kernel_failure.h"
#include "base/status_macros.h"
#include "spdlog/spdlog.h"

namespace tccd::codegen {
namespace {

// A kernel's symbol: "tccd_<kind>_<fused ops>_<key prefix>", e.g.
// tccd_red_eq_mul_div_neg_log_softmax_backward_data_to_copy_1f3a... Derived from content only (the
// ops are part of the keyed IR), so identical kernels still share one name across graphs, and a
// profiler's kernel table says what each kernel does, as Inductor's triton_* names do.
std::string ContentName(const PointwiseKernel& kernel, const std::string& key) {
  const char* kind = kernel.is_column_reduction() ? "col"
                     : kernel.is_row_reduction()  ? "red"
                     : HasIndexOps(kernel)        ? "idx"
                     : kernel.is_tile()           ? "tile"
                                                  : "pw";
  std::string ops;
  std::vector<std::string> seen;
  for (const std::string& target : kernel.fused_ops) {
    std::string op = target;
    if (absl::StartsWith(op, "aten::")) op = op.substr(6);
    op = op.substr(0, op.find('.'));  // drop the overload
    if (std::find(seen.begin(), seen.end(), op) != seen.end()) continue;
    seen.push_back(op);
    for (char c : op) {
      const bool word = absl::ascii_isalnum(static_cast<unsigned char>(c));
      // One underscore between words: identifiers with "__" are reserved in C++.
      if (word)
        ops.push_back(c);
      else if (!ops.empty() && ops.back() != '_')
        ops.push_back('_');
    }
    if (!ops.empty() && ops.back() != '_') ops.push_back('_');
    if (ops.size() > 60) break;  // long enough to recognise; the key prefix makes it unique
  }
  return absl::StrCat("tccd_", kind, "_", ops, key.substr(0, 32));
}

struct Compiled {
  std::string source;
  std::string ptx;
  std::string cubin;  // relocatable
};

absl::StatusOr<std::string> SourceOf(const PointwiseKernel& kernel, const CudaTarget& target,
                                     const std::vector<std::string>& reject_ops) {
  ASSIGN_OR_RETURN(std::string source, EmitCudaSource({kernel}, target.cc_major));
  for (const std::string& op : reject_ops)
    if (std::find(kernel.fused_ops.begin(), kernel.fused_ops.end(), op) != kernel.fused_ops.end())
      absl::StrAppend(&source, "\n#error \"TCCD_TEST_REJECT_KERNEL_OPS names ", op, "\"\n");
  return source;
}

// A kernel's NVRTC result as a Compiled (compiled on a thread or in a child process).
absl::StatusOr<Compiled> CompiledFrom(const PointwiseKernel& kernel, std::string source,
                                      absl::StatusOr<NvrtcOutput> nvrtc) {
  if (!nvrtc.ok()) return nvrtc.status();
  if (!nvrtc->log.empty())
    spdlog::debug("cuda backend: NVRTC log for {}: {}", kernel.name, nvrtc->log);
  Compiled out;
  out.source = std::move(source);
  out.ptx = std::move(nvrtc->ptx);
  out.cubin = std::move(nvrtc->cubin);
  return out;
}

absl::StatusOr<Compiled> CompileOne(const PointwiseKernel& kernel, std::string source,
                                    const CudaTarget& target) {
  absl::StatusOr<NvrtcOutput> nvrtc =
      CompileWithNvrtc(source, kernel.name + ".cu", target, /*relocatable=*/true);
  return CompiledFrom(kernel, std::move(source), std::move(nvrtc));
}

// TCCD_LONGEST_KERNELS_FIRST=0: the kernels start compiling in first-use order, as before.
bool LongestKernelsFirst() {
  static const bool on = [] {
    const char* env = std::getenv("TCCD_LONGEST_KERNELS_FIRST");
    return env == nullptr || std::string_view(env) != "0";
  }();
  return on;
}

std::vector<size_t> CompileOrder(const std::vector<absl::StatusOr<std::string>>& sources) {
  std::vector<size_t> lengths;
  for (const absl::StatusOr<std::string>& s : sources) lengths.push_back(s.ok() ? s->size() : 0);
  return KernelCompileOrder(lengths, LongestKernelsFirst());
}

// One debug line per compile: NVRTC's milliseconds per kernel, the longest first, with the
// sources' lengths (what orders the compiles) and when each ended: the graph's critical path
// on the compile threads (issue 11: a forward's compile is what its first call waits for).
void LogKernelTimes(const std::vector<PointwiseKernel>& kernels, const std::vector<size_t>& lengths,
                    const std::vector<double>& ms, const std::vector<double>& done_at,
                    int threads, int children) {
  if (!spdlog::should_log(spdlog::level::debug) || kernels.empty()) return;
  std::vector<size_t> order(kernels.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ms[a] > ms[b]; });
  double sum = 0, last = 0;
  for (size_t i = 0; i < ms.size(); ++i) {
    sum += ms[i];
    last = std::max(last, done_at[i]);
  }
  std::string top;
  for (size_t k = 0; k < order.size(); ++k) {
    const size_t i = order[k];
    absl::StrAppend(&top, k ? ", " : "", kernels[i].name, " ", absl::StrFormat("%.1f", ms[i]),
                    " ms (", lengths[i], " chars, done at ", absl::StrFormat("%.1f", done_at[i]),
                    ")");
  }
  spdlog::debug("cuda backend: NVRTC {} kernel(s) on {} {}: {:.1f} ms in all, {:.1f} ms "
                "wall; per kernel: {}",
                kernels.size(), children > 0 ? children : threads,
                children > 0 ? "process(es)" : "thread(s)", sum, last, top);
}

// Runs `job(i)` for i in [0, count) on up to `threads` threads (this one included), taking i in
// the order given.
template <typename Job>
void RunOnThreads(const std::vector<size_t>& order, int threads, const Job& job) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t k = next.fetch_add(1); k < order.size(); k = next.fetch_add(1)) job(order[k]);
  };
  const int n = std::max(1, std::min<int>(threads, static_cast<int>(order.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
}

// Every kernel compiled, or the first error with `failed` set to the indices of all that failed.
absl::StatusOr<std::vector<Compiled>> CompileInParallel(const std::vector<PointwiseKernel>& kernels,
                                                        const CudaTarget& target, int threads,
                                                        const std::vector<std::string>& reject_ops,
                                                        KernelProgress& progress,
                                                        std::vector<size_t>& failed) {
  // The sources first (milliseconds, against NVRTC's tens to hundreds per kernel): their lengths
  // order the compiles.
  std::vector<size_t> first_use(kernels.size());
  for (size_t i = 0; i < first_use.size(); ++i) first_use[i] = i;
  std::vector<absl::StatusOr<std::string>> sources(kernels.size(),
                                                   absl::InternalError("not emitted"));
  RunOnThreads(first_use, threads,
               [&](size_t i) { sources[i] = SourceOf(kernels[i], target, reject_ops); });
  std::vector<absl::StatusOr<Compiled>> results(kernels.size(),
                                                absl::InternalError("not compiled"));
  std::vector<size_t> lengths(kernels.size(), 0);
  for (size_t i = 0; i < kernels.size(); ++i) lengths[i] = sources[i].ok() ? sources[i]->size() : 0;
  std::vector<double> ms(kernels.size(), 0);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<double> done_at(kernels.size(), 0);
  auto ended = [&](size_t i) {
    done_at[i] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                     .count();
    progress.KernelDone();
  };
  const std::vector<size_t> order = CompileOrder(sources);
  std::vector<size_t> left = order;  // what the threads below compile
  int children = 0;
  if (UseNvrtcProcesses() && threads > 1 && kernels.size() > 1) {
    // On forked processes (nvrtc_processes.h); a kernel whose child died compiles below.
    std::vector<NvrtcJob> jobs(kernels.size());
    std::vector<size_t> emitted;
    for (size_t i : order) {
      if (!sources[i].ok()) continue;
      jobs[i] = NvrtcJob{.source = &*sources[i], .program_name = kernels[i].name + ".cu"};
      emitted.push_back(i);
    }
    absl::StatusOr<NvrtcProcessesResult> forked =
        emitted.size() > 1
            ? CompileWithNvrtcProcesses(jobs, emitted, target, /*relocatable=*/true, threads, ended)
            : absl::UnavailableError("one kernel or none to compile");
    if (!forked.ok() && emitted.size() > 1) {
      spdlog::warn("cuda backend: {}; compiling the kernels on threads", forked.status().ToString());
    }
    if (forked.ok()) {
      children = forked->children;
      left.clear();
      for (size_t i : order) {
        if (sources[i].ok() && !forked->answered[i]) {
          left.push_back(i);
          continue;
        }
        if (!sources[i].ok()) {
          results[i] = sources[i].status();
          ended(i);
          continue;
        }
        ms[i] = forked->results[i].ms;
        results[i] = CompiledFrom(kernels[i], *std::move(sources[i]),
                                  std::move(forked->results[i].output));
      }
    }
  }
  RunOnThreads(left, threads, [&](size_t i) {
    const auto start = std::chrono::steady_clock::now();
    results[i] = sources[i].ok() ? CompileOne(kernels[i], *std::move(sources[i]), target)
                                 : absl::StatusOr<Compiled>(sources[i].status());
    ms[i] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
    ended(i);
  });
  LogKernelTimes(kernels, lengths, ms, done_at, threads, children);
  absl::Status first;
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i].ok()) continue;
    if (first.ok()) first = results[i].status();
    failed.push_back(i);
  }
  if (!first.ok()) return first;
  std::vector<Compiled> out;
  for (absl::StatusOr<Compiled>& r : results) out.push_back(*std::move(r));
  return out;
}

// Every entry the module's launch infos name must be in the linked cubin's symbol names.
absl::Status CheckEntries(const CudaModule& module) {
  for (const CudaKernel& kernel : module.kernels)
    for (const std::string* entry : {&kernel.launch.contig_entry, &kernel.launch.strided_entry})
      if (!entry->empty() && module.cubin.find(*entry + '\0') == std::string::npos)
        return absl::InternalError(absl::StrCat("the linked cubin lacks entry point ", *entry));
  return absl::OkStatus();
}

}  // namespace

std::vector<size_t> KernelCompileOrder(const std::vector<size_t>& source_lengths,
                                       bool longest_first) {
  std::vector<size_t> order(source_lengths.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (!longest_first) return order;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return source_lengths[a] > source_lengths[b]; });
  return order;
}

absl::StatusOr<CudaKernelObjectsResult> CompileCudaKernelObjects(
    absl::Span<const PointwiseKernel> kernels, const CudaTarget& target,
    const CudaKernelObjectsOptions& options) {
  if (kernels.empty()) return absl::InvalidArgumentError("no kernels to compile");
  RET_CHECK(!options.fingerprint.empty());
  ASSIGN_OR_RETURN(CudaTarget checked, CudaTargetFromProto(target.cc_major, target.cc_minor));
  const auto start = std::chrono::steady_clock::now();

  CudaKernelObjectsResult result;
  std::vector<std::string> keys;        // distinct, in first-use order
  std::vector<PointwiseKernel> firsts;  // each key's kernel, under its content name
  absl::flat_hash_map<std::string, size_t> index;
  std::vector<size_t> key_of;  // per kernel: its distinct key's index
  for (const PointwiseKernel& kernel : kernels) {
    std::string key = KernelKey(kernel, "cuda-rdc-cubin", checked.KeyString(), options.fingerprint);
    PointwiseKernel named = kernel;
    named.name = ContentName(kernel, key);
    CudaKernelLaunchInfo info = LaunchInfoOf(named, checked.cc_major);
    info.name = kernel.name;  // the host library exports the graph's name
    result.module.kernels.push_back({kernel, std::move(info)});
    key_of.push_back(index.emplace(key, keys.size()).first->second);
    if (key_of.back() == keys.size()) {
      keys.push_back(std::move(key));
      firsts.push_back(std::move(named));
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

  // `status` naming every graph kernel whose content is one of the distinct `failed_keys`.
  auto blame = [&](absl::Status status, const std::vector<size_t>& failed_keys) {
    std::vector<std::string> names;
    for (size_t k = 0; k < kernels.size(); ++k)
      if (std::find(failed_keys.begin(), failed_keys.end(), key_of[k]) != failed_keys.end())
        names.push_back(kernels[k].name);
    return WithFailedKernels(std::move(status), names);
  };
  std::vector<std::string> cubins(keys.size());
  auto compile_missing = [&](bool trust_cache) -> absl::Status {
    std::vector<PointwiseKernel> missing;
    std::vector<size_t> slots;
    result.new_objects.clear();
    result.module.cuda_source.clear();
    result.module.ptx.clear();
    result.kernels_reused = 0;
    for (size_t i = 0; i < keys.size(); ++i) {
      auto it = trust_cache ? known.find(keys[i]) : known.end();
      if (it != known.end()) {
        cubins[i] = it->second;
        ++result.kernels_reused;
        continue;
      }
      missing.push_back(firsts[i]);
      slots.push_back(i);
    }
    result.kernels_compiled = static_cast<int>(missing.size());
    KernelProgress progress(options.progress, result.kernels_reused, static_cast<int>(keys.size()));
    std::vector<size_t> failed;
    absl::StatusOr<std::vector<Compiled>> done = CompileInParallel(
        missing, checked, options.threads, options.test_reject_ops, progress, failed);
    if (!done.ok()) {
      std::vector<size_t> failed_keys;
      for (size_t j : failed) failed_keys.push_back(slots[j]);
      return blame(done.status(), failed_keys);
    }
    std::vector<Compiled>& compiled = *done;
    for (size_t j = 0; j < compiled.size(); ++j) {
      cubins[slots[j]] = compiled[j].cubin;
      result.module.cuda_source += compiled[j].source;
      result.module.ptx += compiled[j].ptx;
      result.new_objects.push_back({keys[slots[j]], std::move(compiled[j].cubin)});
    }
    return absl::OkStatus();
  };
  auto link = [&]() -> absl::Status {
    ASSIGN_OR_RETURN(result.module.cubin, LinkCubins(cubins, checked));
    return CheckEntries(result.module);
  };

  RETURN_IF_ERROR(compile_missing(/*trust_cache=*/true));
  absl::Status linked = link();
  if (absl::IsFailedPrecondition(linked)) {
    // No nvJitLink here: the whole graph as one program, as before per-kernel objects.
    spdlog::warn("cuda backend: {}; compiling the graph's kernels as one program",
                 linked.ToString());
    result = CudaKernelObjectsResult{};
    ASSIGN_OR_RETURN(result.module, CompileCudaKernels(kernels, checked));
    return result;
  }
  if (!linked.ok() && result.kernels_reused > 0) {
    spdlog::warn("linking cached kernel cubins failed, recompiling all {} kernel(s): {}",
                 keys.size(), linked.ToString());
    RETURN_IF_ERROR(compile_missing(/*trust_cache=*/false));
    linked = link();
  }
  if (!linked.ok()) {
    // Which kernels cannot link on this target even alone (a static shared-memory or register
    // limit): only those are blamed; a failure no single cubin shows is the graph's.
    std::vector<size_t> failed_keys;
    for (size_t i = 0; i < cubins.size(); ++i)
      if (!LinkCubins({cubins[i]}, checked).ok()) failed_keys.push_back(i);
    if (!failed_keys.empty()) return blame(linked, failed_keys);
    return linked;
  }
  spdlog::debug(
      "cuda backend: {} kernel(s), {} distinct, {} compiled on {} thread(s), {} reused; cubin {} "
      "bytes in {:.1f} ms",
      kernels.size(), keys.size(), result.kernels_compiled, options.threads, result.kernels_reused,
      result.module.cubin.size(),
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  return result;
}

}  // namespace tccd::codegen
