// RunCompileWorker; see compile_worker.h.
#include "server/compile_worker.h"

#include <errno.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "server/compiler.h"
#include "server/worker_protocol.h"
#include "spdlog/spdlog.h"

namespace tccd::server {
namespace {

// Only reached with --enable-test-faults.
void ApplyTestFault(const v1::CompileRequest& request) {
  auto it = request.options().extra().find(kTestFaultOption);
  if (it == request.options().extra().end()) return;
  const std::string& fault = it->second;
  if (fault == "crash") {
    // A real invalid access, not raise(): LLVM installs a SIGSEGV handler after the first
    // compile, which returns from a raised signal but re-faults on a bad access.
    volatile int* null = nullptr;
    *null = 1;
  }
  if (fault == "hang") {
    while (true) pause();
  }
  if (fault == "alloc") {
    std::vector<std::unique_ptr<char[]>> hog;
    while (true) {
      hog.emplace_back(new char[64 << 20]);
      for (size_t i = 0; i < (64u << 20); i += 4096) hog.back()[i] = 1;
    }
  }
}

// The worker socket while one compile runs: kernel lookups and progress reports share it, and
// come from different threads (progress from the kernel compile threads), so one lock keeps a
// report from landing between a lookup and its answer.
class CompileSocket final : public codegen::KernelObjectCache, public codegen::CompileProgress {
 public:
  // The daemon's kernel objects (worker_protocol.h): one round trip per compile.
  absl::StatusOr<absl::flat_hash_map<std::string, std::string>> Lookup(
      absl::Span<const std::string> keys) override {
    absl::MutexLock lock(&mu_);
    if (absl::Status s = WriteFrame(kCompileWorkerFd, EncodeKernelLookup(keys)); !s.ok()) return s;
    absl::StatusOr<std::string> answer = ReadFrame(kCompileWorkerFd);
    if (!answer.ok()) return answer.status();
    return DecodeKernelObjects(*answer);
  }

  // Not answered. A failed write means the daemon is gone; the result write then fails too.
  void KernelsDone(int done, int total) override {
    absl::MutexLock lock(&mu_);
    WriteFrame(kCompileWorkerFd, EncodeProgress(done, total)).IgnoreError();
  }

 private:
  absl::Mutex mu_;
};

// `*exhausted` is set when the compile ran out of memory: the worker then exits after answering,
// since LLVM's global state may be half updated.
WorkerResult CompileOne(Compiler& compiler, const std::string& frame, bool test_faults,
                        int64_t memory_limit_mb, bool* exhausted) {
  WorkerResult result;
  const auto start = std::chrono::steady_clock::now();
  v1::CompileRequest request;
  if (!request.ParseFromString(frame)) {
    result.output =
        absl::InternalError("the compile worker could not parse the request it was sent");
    return result;
  }
  // Names the graph whose "compile stages" line (pipeline.cc) follows from this worker's pid.
  spdlog::debug("compiling graph \"{}\" ({} nodes, {} request bytes)", request.graph_name(),
                request.graph().nodes_size(), frame.size());
  try {
    if (test_faults) ApplyTestFault(request);
    absl::StatusOr<codegen::Prepared> prepared = compiler.Prepare(CompileInputOf(request));
    if (!prepared.ok()) {
      result.output = prepared.status();
    } else {
      CompileSocket socket;
      result.output = compiler.Compile(*prepared, request, &socket, &socket);
    }
  } catch (const std::bad_alloc&) {
    *exhausted = true;
    result.output = absl::ResourceExhaustedError(
        absl::StrCat("the compile ran out of memory (compile worker memory limit ", memory_limit_mb,
                     " MiB, --compile-memory-limit-mb)"));
  } catch (const std::exception& e) {
    result.output =
        absl::InternalError(absl::StrCat("tccd internal error while compiling: ", e.what()));
  }
  result.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace

int RunCompileWorker(int argc, char** argv) {
  int64_t memory_limit_mb = 0;
  int test_faults = 0;
  int64_t parent = 0;
  int nice_increment = 0;
  if (argc != 7 || !absl::SimpleAtoi(argv[2], &memory_limit_mb) ||
      !absl::SimpleAtoi(argv[3], &test_faults) || !absl::SimpleAtoi(argv[4], &parent) ||
      !absl::SimpleAtoi(argv[5], &nice_increment)) {
    fprintf(stderr, "tccd: %s is for tccd's own use\n", kCompileWorkerFlag);
    return 2;
  }
  // The daemon's debug log then has each compile's stage times (pipeline.cc), where a cold
  // first step's compile goes; at other levels the workers stay at warn (main.cc).
  if (const std::string_view level = argv[6]; level == "debug" || level == "trace")
    spdlog::set_level(spdlog::level::from_str(std::string(level)));
  // Die with the daemon; it may have died before the prctl.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != static_cast<pid_t>(parent)) return 0;
  // The terminal's Ctrl-C reaches the whole process group; the daemon decides when workers stop.
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  if (memory_limit_mb > 0) {
    // RLIMIT_DATA (heap and private mappings, not the mapped libraries): allocation beyond it
    // fails, which codegen sees as std::bad_alloc.
    const rlim_t bytes = static_cast<rlim_t>(memory_limit_mb) << 20;
    rlimit limit{.rlim_cur = bytes, .rlim_max = bytes};
    setrlimit(RLIMIT_DATA, &limit);
  }
  if (nice_increment > 0) {
    // Below the client's priority (--compile-nice): the client traces its next graph while we
    // compile this one, and our kernel threads (one per core) would otherwise take its core.
    // Threads made later (the kernel compile pool) inherit it. Deliberately ignored if it
    // fails: a worker at the daemon's priority compiles the same code.
    errno = 0;
    if (nice(nice_increment) == -1 && errno != 0) errno = 0;
  }
  std::unique_ptr<Compiler> compiler = NewCodegenCompiler();
  while (true) {
    absl::StatusOr<std::string> frame = ReadFrame(kCompileWorkerFd);
    if (!frame.ok()) return 0;  // the daemon closed the socket
    bool exhausted = false;
    const WorkerResult result =
        CompileOne(*compiler, *frame, test_faults != 0, memory_limit_mb, &exhausted);
    if (!WriteFrame(kCompileWorkerFd, EncodeWorkerResult(result)).ok()) return 0;
    if (exhausted) return 3;  // the daemon sees end of stream and replaces us
  }
}

}  // namespace tccd::server
