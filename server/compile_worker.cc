// RunCompileWorker; see compile_worker.h.
#include "server/compile_worker.h"

#include <errno.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <thread>
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

// Nice increments of a compile (worker_pool.h): a prefetched one's (the request says
// `background`) and a waited one's.
struct Priorities {
  int background = 0;
  int waited = 0;
};

// Lowers the calling thread's priority by `increment` (capped at 19). Linux keeps the nice value
// per thread, and threads made later by this one (the kernel compile pool) inherit it, so one
// compile's threads run at its priority and the next compile, on a new thread, starts from the
// worker's own. Returns the thread's nice value after the change. Deliberately ignored if it
// fails: the compile is the same at any priority.
int LowerThisThreadsPriority(int increment) {
  const id_t tid = static_cast<id_t>(syscall(SYS_gettid));
  errno = 0;
  const int base = getpriority(PRIO_PROCESS, tid);
  if (increment > 0 && errno == 0)
    setpriority(PRIO_PROCESS, tid, std::min(19, base + increment));  // may fail: ignored
  errno = 0;
  const int now = getpriority(PRIO_PROCESS, tid);
  return errno == 0 ? now : base;
}

// `*exhausted` is set when the compile ran out of memory: the worker then exits after answering,
// since LLVM's global state may be half updated. Runs on a thread of its own (RunCompileWorker).
WorkerResult CompileOne(Compiler& compiler, const std::string& frame, bool test_faults,
                        int64_t memory_limit_mb, Priorities priorities, bool* exhausted) {
  WorkerResult result;
  const auto start = std::chrono::steady_clock::now();
  v1::CompileRequest request;
  if (!request.ParseFromString(frame)) {
    result.output =
        absl::InternalError("the compile worker could not parse the request it was sent");
    return result;
  }
  // A prefetched compile runs while its client works (traces its next graph, runs the forward),
  // below the compiles that clients wait for: those then get the cores first, from our own
  // prefetched kernel threads too (--compile-nice, --waited-compile-nice).
  const int nice =
      LowerThisThreadsPriority(request.background() ? priorities.background : priorities.waited);
  // Names the graph whose "compile stages" line (pipeline.cc) follows from this worker's pid.
  spdlog::debug("compiling graph \"{}\" ({} nodes, {} request bytes, {}, nice {})",
                request.graph_name(), request.graph().nodes_size(), frame.size(),
                request.background() ? "prefetched" : "waited for", nice);
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
  Priorities priorities;
  if (argc != 8 || !absl::SimpleAtoi(argv[2], &memory_limit_mb) ||
      !absl::SimpleAtoi(argv[3], &test_faults) || !absl::SimpleAtoi(argv[4], &parent) ||
      !absl::SimpleAtoi(argv[5], &priorities.background) ||
      !absl::SimpleAtoi(argv[7], &priorities.waited)) {
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
  // The worker itself keeps the daemon's priority; each compile lowers its own thread's
  // (CompileOne): an unprivileged process cannot raise a priority it lowered, and a waited
  // compile may follow a prefetched one in this worker.
  std::unique_ptr<Compiler> compiler = NewCodegenCompiler();
  // One compile at a time, on one thread while its kernels compile: forking is safe here.
  AllowForkedCodegen();
  while (true) {
    absl::StatusOr<std::string> frame = ReadFrame(kCompileWorkerFd);
    if (!frame.ok()) return 0;  // the daemon closed the socket
    bool exhausted = false;
    WorkerResult result;
    std::thread compile([&] {
      result =
          CompileOne(*compiler, *frame, test_faults != 0, memory_limit_mb, priorities, &exhausted);
    });
    compile.join();
    if (!WriteFrame(kCompileWorkerFd, EncodeWorkerResult(result)).ok()) return 0;
    if (exhausted) return 3;  // the daemon sees end of stream and replaces us
  }
}

}  // namespace tccd::server
