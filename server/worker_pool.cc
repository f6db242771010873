// NewWorkerCompiler; see worker_pool.h.
#include "server/worker_pool.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <chrono>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "server/compile_worker.h"
#include "server/worker_protocol.h"
#include "spdlog/spdlog.h"

extern char** environ;

namespace tccd::server {
namespace {

struct Worker {
  pid_t pid = -1;
  int fd = -1;       // our end of the socketpair
  int compiles = 0;  // compiles it answered
};

// "crashed with signal 11 (Segmentation fault)", "exited with status 3", ...
std::string DescribeExit(int wait_status) {
  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    std::string text = absl::StrCat("crashed with signal ", sig, " (", strsignal(sig), ")");
    if (sig == SIGKILL) {
      text =
          "was killed with SIGKILL (by the kernel's OOM killer or from "
          "outside tccd)";
    }
    return text;
  }
  if (WIFEXITED(wait_status)) {
    return absl::StrCat("exited with status ", WEXITSTATUS(wait_status));
  }
  return "stopped";
}

class WorkerCompiler final : public Compiler {
 public:
  explicit WorkerCompiler(const WorkerPoolOptions& options)
      : options_(options), in_process_(NewCodegenCompiler()) {
    for (int i = 0; i < options_.workers; ++i) {
      absl::StatusOr<Worker> worker = Spawn();
      if (!worker.ok()) {
        spdlog::error("cannot start a compile worker: {}", worker.status().ToString());
        break;
      }
      absl::MutexLock lock(&mu_);
      idle_.push_back(*worker);
    }
  }

  ~WorkerCompiler() override {
    absl::MutexLock lock(&mu_);
    // An idle worker exits by itself once its socket closes; a clean exit lets tools that wrap
    // it (valgrind's memcheck) finish their reports. Whatever has not exited after the grace
    // period (a worker stuck somewhere) is killed.
    for (Worker& worker : idle_) close(worker.fd);
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    for (Worker& worker : idle_) {
      int status = 0;
      pid_t reaped = 0;
      while ((reaped = waitpid(worker.pid, &status, WNOHANG)) == 0 && absl::Now() < deadline) {
        absl::SleepFor(absl::Milliseconds(10));
      }
      if (reaped == 0) {
        ::kill(worker.pid, SIGKILL);
        while (waitpid(worker.pid, &status, 0) < 0 && errno == EINTR) {
        }
      }
    }
    idle_.clear();
  }

  std::string Fingerprint() const override {
    return in_process_->Fingerprint();  // workers run this very binary
  }
  absl::StatusOr<codegen::Prepared> Prepare(const codegen::CompileInput& input) override {
    return in_process_->Prepare(input);
  }
  absl::StatusOr<codegen::CompileOutput> Compile(const codegen::Prepared&) override {
    return absl::InternalError("the worker pool compiles requests, not prepared graphs");
  }
  absl::StatusOr<codegen::CompileOutput> Compile(const codegen::Prepared&,
                                                 const v1::CompileRequest& request,
                                                 codegen::KernelObjectCache* kernels,
                                                 codegen::CompileProgress* progress) override;

  void AddStats(std::map<std::string, int64_t>* counters) const override {
    auto get = [](const std::atomic<int64_t>& c) { return c.load(std::memory_order_relaxed); };
    (*counters)["worker_spawns"] = get(spawns_);
    (*counters)["worker_compiles"] = get(compiles_);
    (*counters)["worker_crashes"] = get(crashes_);
    (*counters)["worker_timeouts"] = get(timeouts_);
    (*counters)["worker_overhead_us_total"] = get(overhead_us_total_);
    (*counters)["worker_overhead_us_last"] = get(overhead_us_last_);
  }

 private:
  absl::StatusOr<Worker> Spawn();
  absl::StatusOr<Worker> Acquire();
  void Release(Worker worker);
  // Closes the socket and reaps the process; SIGKILL first if `kill`. Returns the wait status.
  int Stop(Worker& worker, bool kill = true);
  // Ends a worker that failed a compile and starts its replacement.
  void Replace(Worker& worker);
  // One compile in `worker`; *retry when the worker crashed (see Compile).
  absl::StatusOr<codegen::CompileOutput> CompileIn(Worker worker, const std::string& frame,
                                                   codegen::KernelObjectCache* kernels,
                                                   codegen::CompileProgress* progress, bool* retry);
  // Reads the worker's frames until its result, answering its kernel lookups from `kernels` and
  // passing its progress reports on to `progress` (may be null).
  absl::StatusOr<std::string> ReadResult(const Worker& worker, absl::Time deadline,
                                         codegen::KernelObjectCache* kernels,
                                         codegen::CompileProgress* progress);

  const WorkerPoolOptions options_;
  const std::unique_ptr<Compiler> in_process_;  // Prepare and the fingerprint
  absl::Mutex mu_;
  std::vector<Worker> idle_ ABSL_GUARDED_BY(mu_);

  std::atomic<int64_t> spawns_{0};
  std::atomic<int64_t> compiles_{0};
  std::atomic<int64_t> crashes_{0};
  std::atomic<int64_t> timeouts_{0};
  std::atomic<int64_t> overhead_us_total_{0};
  std::atomic<int64_t> overhead_us_last_{0};
};

// The binary a worker runs: this very executable (/proc/self/exe, so that an upgrade on disk
// never pairs a daemon with another build's workers), or TCCD_WORKER_EXECUTABLE, a debugging
// knob for tools that interpose on exec: under valgrind /proc/self/exe is valgrind's own tool,
// which cannot run as its client (tests/tools/valgrind_sequence.py sets it to the daemon's path).
const std::string& WorkerExecutable() {
  static const std::string* exe = [] {
    const char* env = std::getenv("TCCD_WORKER_EXECUTABLE");
    return new std::string(env != nullptr && *env != '\0' ? env : "/proc/self/exe");
  }();
  return *exe;
}

absl::StatusOr<Worker> WorkerCompiler::Spawn() {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return absl::InternalError(absl::StrCat("socketpair: ", strerror(errno)));
  }
  // The child's end becomes its fd 3; dup2 clears close-on-exec there. (If it already is 3,
  // dup2 would be a no-op that keeps the flag: move it first.)
  if (fds[1] == kCompileWorkerFd) {
    const int moved = fcntl(fds[1], F_DUPFD_CLOEXEC, kCompileWorkerFd + 1);
    close(fds[1]);
    fds[1] = moved;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], kCompileWorkerFd);
  const std::string memory = std::to_string(options_.memory_limit_mb);
  const std::string faults = options_.enable_test_faults ? "1" : "0";
  const std::string parent = std::to_string(getpid());
  const std::string nice = std::to_string(options_.nice);
  const std::string waited_nice = std::to_string(options_.waited_nice);
  const char* argv[] = {"tccd-compile-worker",
                        kCompileWorkerFlag,
                        memory.c_str(),
                        faults.c_str(),
                        parent.c_str(),
                        nice.c_str(),
                        options_.log_level.c_str(),
                        waited_nice.c_str(),
                        nullptr};
  pid_t pid = -1;
  const std::string& exe = WorkerExecutable();
  const int error =
      posix_spawn(&pid, exe.c_str(), &actions, nullptr, const_cast<char* const*>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (error != 0) {
    close(fds[0]);
    return absl::InternalError(absl::StrCat("spawning ", exe, ": ", strerror(error)));
  }
  spawns_.fetch_add(1, std::memory_order_relaxed);
  return Worker{.pid = pid, .fd = fds[0]};
}

absl::StatusOr<Worker> WorkerCompiler::Acquire() {
  {
    absl::MutexLock lock(&mu_);
    if (!idle_.empty()) {
      Worker worker = idle_.back();
      idle_.pop_back();
      return worker;
    }
  }
  return Spawn();  // more compiles at once than prestarted workers
}

void WorkerCompiler::Release(Worker worker) {
  absl::MutexLock lock(&mu_);
  idle_.push_back(worker);
}

int WorkerCompiler::Stop(Worker& worker, bool kill) {
  if (kill) ::kill(worker.pid, SIGKILL);
  close(worker.fd);
  int status = 0;
  while (waitpid(worker.pid, &status, 0) < 0 && errno == EINTR) {
  }
  worker = Worker{};
  return status;
}

void WorkerCompiler::Replace(Worker& worker) {
  Stop(worker);
  absl::StatusOr<Worker> fresh = Spawn();
  if (fresh.ok()) {
    Release(*fresh);
  } else {
    spdlog::error("cannot start a replacement compile worker: {}", fresh.status().ToString());
  }
}

absl::StatusOr<codegen::CompileOutput> WorkerCompiler::Compile(const codegen::Prepared&,
                                                               const v1::CompileRequest& request,
                                                               codegen::KernelObjectCache* kernels,
                                                               codegen::CompileProgress* progress) {
  std::string frame;
  if (!request.SerializeToString(&frame)) {
    return absl::InternalError("cannot serialize the request for a worker");
  }
  absl::StatusOr<Worker> acquired = Acquire();
  if (!acquired.ok()) {
    return absl::InternalError(
        absl::StrCat("cannot start a compile worker: ", acquired.status().message()));
  }
  bool retry = false;
  absl::StatusOr<codegen::CompileOutput> out =
      CompileIn(*acquired, frame, kernels, progress, &retry);
  if (!retry) return out;
  // A worker crashed: LLVM, LLD and NVRTC keep global state across compiles (issue 12's LLD
  // use-after-free needed an earlier link in the same process), and clean-clone CI runs saw rare
  // crashes (SIGSEGV, SIGABRT) on graphs that compile fine on every other try, so the graph gets
  // one more try in a fresh process, which also replaces the dead one. A graph that crashes
  // twice fails with the second crash.
  spdlog::warn("{}; retrying once in a fresh worker", std::string(out.status().message()));
  acquired = Spawn();
  if (!acquired.ok()) return out;
  return CompileIn(*acquired, frame, kernels, progress, &retry);
}

absl::StatusOr<std::string> WorkerCompiler::ReadResult(const Worker& worker, absl::Time deadline,
                                                       codegen::KernelObjectCache* kernels,
                                                       codegen::CompileProgress* progress) {
  while (true) {
    absl::StatusOr<std::string> frame = ReadFrame(worker.fd, deadline);
    if (frame.ok() && WorkerFrameTag(*frame) == static_cast<int64_t>(kProgressTag)) {
      int done = 0, total = 0;
      if (absl::Status decoded = DecodeProgress(*frame, &done, &total); !decoded.ok()) {
        spdlog::warn("{}", decoded.ToString());  // progress is informational: keep compiling
      } else if (progress != nullptr) {
        progress->KernelsDone(done, total);
      }
      continue;
    }
    if (!frame.ok() || WorkerFrameTag(*frame) != static_cast<int64_t>(kKernelLookupTag))
      return frame;
    absl::StatusOr<std::vector<std::string>> keys = DecodeKernelLookup(*frame);
    absl::flat_hash_map<std::string, std::string> found;
    if (keys.ok() && kernels != nullptr) {
      absl::StatusOr<absl::flat_hash_map<std::string, std::string>> looked_up =
          kernels->Lookup(*keys);
      if (looked_up.ok()) {
        found = *std::move(looked_up);
      } else {
        // A store read error makes every kernel a miss: the compile still succeeds.
        spdlog::warn("kernel lookup for a compile worker failed: {}",
                     looked_up.status().ToString());
      }
    } else if (!keys.ok()) {
      spdlog::warn("{}", keys.status().ToString());
    }
    if (absl::Status sent = WriteFrame(worker.fd, EncodeKernelObjects(found)); !sent.ok())
      return sent;
  }
}

absl::StatusOr<codegen::CompileOutput> WorkerCompiler::CompileIn(
    Worker worker, const std::string& frame, codegen::KernelObjectCache* kernels,
    codegen::CompileProgress* progress, bool* retry) {
  *retry = false;
  const pid_t pid = worker.pid;
  const auto start = std::chrono::steady_clock::now();
  const absl::Time deadline = absl::Now() + options_.time_limit;
  const absl::Status sent = WriteFrame(worker.fd, frame);
  absl::StatusOr<std::string> reply = sent.ok() ? ReadResult(worker, deadline, kernels, progress)
                                                : absl::StatusOr<std::string>(sent);
  if (!reply.ok()) {
    if (absl::IsDeadlineExceeded(reply.status())) {
      timeouts_.fetch_add(1, std::memory_order_relaxed);
      Replace(worker);
      const std::string message = absl::StrCat(
          "the compile worker (pid ", pid, ") exceeded the compile time limit of ",
          absl::FormatDuration(options_.time_limit), " (--compile-time-limit-s) and was killed");
      spdlog::error("{}; started a new worker", message);
      return absl::InternalError(message);
    }
    // The worker is gone (end of stream, a write to a closed socket): see how it ended.
    crashes_.fetch_add(1, std::memory_order_relaxed);
    close(worker.fd);
    int status = 0;
    while (waitpid(worker.pid, &status, 0) < 0 && errno == EINTR) {
    }
    worker = Worker{};
    const std::string message = absl::StrCat("the compile worker (pid ", pid, ") ",
                                             DescribeExit(status), " while compiling this graph");
    *retry = true;
    worker = Worker{};
    if (*retry) return absl::InternalError(message);  // the retry's worker replaces it
    spdlog::error("{}; started a new worker", message);
    absl::StatusOr<Worker> fresh = Spawn();
    if (fresh.ok()) Release(*fresh);
    return absl::InternalError(message);
  }
  absl::StatusOr<WorkerResult> result = DecodeWorkerResult(*reply);
  if (!result.ok()) {
    Replace(worker);
    return result.status();
  }
  if (absl::IsResourceExhausted(result->output.status())) {
    Replace(worker);  // it ran out of memory and exits after answering
  } else {
    ++worker.compiles;
    Release(worker);
  }
  const double round_trip_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const int64_t overhead_us =
      static_cast<int64_t>(std::max(0.0, round_trip_ms - result->compile_ms) * 1000);
  compiles_.fetch_add(1, std::memory_order_relaxed);
  overhead_us_total_.fetch_add(overhead_us, std::memory_order_relaxed);
  overhead_us_last_.store(overhead_us, std::memory_order_relaxed);
  spdlog::debug(
      "compile worker pid {}: {:.2f} ms round trip, {:.2f} ms compiling, "
      "{:.3f} ms overhead ({} request bytes)",
      pid, round_trip_ms, result->compile_ms, overhead_us / 1000.0, frame.size());
  return std::move(result->output);
}

}  // namespace

std::unique_ptr<Compiler> NewWorkerCompiler(const WorkerPoolOptions& options) {
  return std::make_unique<WorkerCompiler>(options);
}

}  // namespace tccd::server
