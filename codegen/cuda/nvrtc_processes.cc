// CompileWithNvrtcProcesses: fork children that take NVRTC jobs from a shared counter and send
// their results back through one pipe each.
#include "codegen/cuda/nvrtc_processes.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string_view>
#include <thread>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace tccd::codegen {
namespace {

std::atomic<bool> allowed{false};

// TCCD_NVRTC_WARM_UP=0: no warm-up (NVRTC's first compile in each process sets it up then).
bool WarmUpOn() {
  static const bool on = [] {
    const char* env = std::getenv("TCCD_NVRTC_WARM_UP");
    return env == nullptr || std::string_view(env) != "0";
  }();
  return on;
}

// NVRTC's first compile in a process sets NVRTC up: ~0.35 s of a T5 forward's first kernel on
// the GPU host alone, ~1.2 s in each of 16 forked children that all did it at once (session
// 19's r1, children forked from a worker that had not compiled yet). Done once per process, so
// that a fork inherits it set up (the bench's children warmed this way compiled T5's 23
// forward kernels in 61 ms of wall, against 629 ms on 16 threads of one process).
void WarmNvrtc() {
  static std::once_flag once;
  std::call_once(once, [] {
    static const std::string kSource = "extern \"C\" __global__ void tccd_warm_up() {}\n";
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<NvrtcOutput> out =
        CompileWithNvrtc(kSource, "tccd_warm_up.cu", CudaTarget{}, /*relocatable=*/true);
    if (!out.ok()) return;  // no NVRTC, or it failed: the real compiles say why
    spdlog::debug("cuda backend: NVRTC warmed up in {:.1f} ms",
                  std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                      .count());
  });
}

// The warm-up thread a compile worker starts (StartNvrtcWarmUp); joined before any fork.
std::mutex warm_up_mu;
std::thread warm_up_thread;  // guarded by warm_up_mu

// Joins the warm-up thread if one runs, then warms here if it has not been done: afterwards no
// other thread of ours is inside NVRTC, and a forked child inherits NVRTC set up. The child is
// a copy of this thread, not of the warm-up thread: should NVRTC keep some of its set-up per
// thread, one trivial compile on this thread first (a worker compiles each graph on a new
// thread; tens of milliseconds at most, logged) leaves none of it to the children.
void FinishNvrtcWarmUp() {
  {
    std::lock_guard<std::mutex> lock(warm_up_mu);
    if (warm_up_thread.joinable()) warm_up_thread.join();
  }
  if (!WarmUpOn()) return;
  WarmNvrtc();
  thread_local bool this_thread_warm = false;
  if (this_thread_warm) return;
  this_thread_warm = true;
  static const std::string kSource = "extern \"C\" __global__ void tccd_warm_thread() {}\n";
  const auto start = std::chrono::steady_clock::now();
  if (CompileWithNvrtc(kSource, "tccd_warm_thread.cu", CudaTarget{}, /*relocatable=*/true).ok())
    spdlog::debug("cuda backend: NVRTC warmed on the forking thread in {:.1f} ms",
                  std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                      .count());
}

// TCCD_NVRTC_PROCESSES=0: threads, as before.
bool KnobOn() {
  static const bool on = [] {
    const char* env = std::getenv("TCCD_NVRTC_PROCESSES");
    return env == nullptr || std::string_view(env) != "0";
  }();
  return on;
}

// A frame: u64 job index, u8 ok, f64 ms; then ok: ptx, cubin, log; else: u32 status code,
// message. Strings as u64 length + bytes.
void PutU64(std::string& out, uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); }
void PutString(std::string& out, const std::string& s) {
  PutU64(out, s.size());
  out.append(s);
}

std::string EncodeResult(size_t index, const absl::StatusOr<NvrtcOutput>& output, double ms) {
  std::string frame;
  PutU64(frame, index);
  frame.push_back(output.ok() ? 1 : 0);
  frame.append(reinterpret_cast<const char*>(&ms), sizeof(ms));
  if (output.ok()) {
    PutString(frame, output->ptx);
    PutString(frame, output->cubin);
    PutString(frame, output->log);
  } else {
    PutU64(frame, static_cast<uint64_t>(output.status().code()));
    PutString(frame, std::string(output.status().message()));
  }
  std::string sized;
  PutU64(sized, frame.size());
  return sized + frame;
}

// Reads what EncodeResult wrote (without its size prefix). False if malformed.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool U64(uint64_t& v) { return Raw(&v, 8); }
  bool Raw(void* to, size_t n) {
    if (in_.size() < n) return false;
    std::memcpy(to, in_.data(), n);
    in_.remove_prefix(n);
    return true;
  }
  bool String(std::string& s) {
    uint64_t n = 0;
    if (!U64(n) || in_.size() < n) return false;
    s.assign(in_.data(), n);
    in_.remove_prefix(n);
    return true;
  }

 private:
  std::string_view in_;
};

bool DecodeResult(std::string_view frame, size_t jobs, size_t& index, NvrtcProcessResult& out) {
  Reader r(frame);
  uint64_t i = 0;
  char ok = 0;
  if (!r.U64(i) || i >= jobs || !r.Raw(&ok, 1) || !r.Raw(&out.ms, sizeof(out.ms))) return false;
  index = static_cast<size_t>(i);
  if (ok) {
    NvrtcOutput output;
    if (!r.String(output.ptx) || !r.String(output.cubin) || !r.String(output.log)) return false;
    out.output = std::move(output);
  } else {
    uint64_t code = 0;
    std::string message;
    if (!r.U64(code) || !r.String(message)) return false;
    out.output = absl::Status(static_cast<absl::StatusCode>(code), message);
  }
  return true;
}

bool WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// The child: takes jobs until none is left, answers each, and exits without running the
// parent's atexit handlers or destructors (they belong to the parent).
[[noreturn]] void ChildLoop(const std::vector<NvrtcJob>& jobs, const std::vector<size_t>& order,
                            std::atomic<size_t>* next, const CudaTarget& target, bool relocatable,
                            int fd) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // the worker died: nobody reads our results
  for (size_t k = next->fetch_add(1); k < order.size(); k = next->fetch_add(1)) {
    const size_t i = order[k];
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<NvrtcOutput> output =
        CompileWithNvrtc(*jobs[i].source, jobs[i].program_name, target, relocatable);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count();
    if (!WriteAll(fd, EncodeResult(i, output, ms))) _exit(1);
  }
  _exit(0);
}

struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::string buffer;
};

}  // namespace

void AllowNvrtcProcesses() { allowed.store(true); }

void StartNvrtcWarmUp() {
  if (!WarmUpOn() || !LoadedNvrtcVersion().ok()) return;
  std::lock_guard<std::mutex> lock(warm_up_mu);
  if (!warm_up_thread.joinable()) warm_up_thread = std::thread(WarmNvrtc);
}

void AllowNvrtcChildProcesses() {
  AllowNvrtcProcesses();
  // In the background: the worker answers its first request meanwhile; the first graph's
  // NVRTC stage waits for it (its children must inherit NVRTC set up), by then long done in a
  // daemon started before its clients' first compile.
  StartNvrtcWarmUp();
}

bool UseNvrtcProcesses() { return allowed.load() && KnobOn(); }

absl::StatusOr<NvrtcProcessesResult> CompileWithNvrtcProcesses(
    const std::vector<NvrtcJob>& jobs, const std::vector<size_t>& order, const CudaTarget& target,
    bool relocatable, int processes, const std::function<void(size_t)>& on_done) {
  // NVRTC loaded (dlopen, symbol lookup) and set up (its first compile) once here, not once per
  // child; and no other thread of ours inside it at the fork.
  if (absl::StatusOr<std::string> version = LoadedNvrtcVersion(); !version.ok())
    return version.status();
  FinishNvrtcWarmUp();
  // The counter the children take jobs from, in memory they share.
  void* shared = mmap(nullptr, sizeof(std::atomic<size_t>), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) return absl::UnavailableError("mmap of the job counter failed");
  auto* next = new (shared) std::atomic<size_t>(0);
  static_assert(std::atomic<size_t>::is_always_lock_free);

  std::vector<Child> children;
  const int wanted = std::max(1, std::min<int>(processes, static_cast<int>(order.size())));
  for (int c = 0; c < wanted; ++c) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) break;
    const pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      ChildLoop(jobs, order, next, target, relocatable, fds[1]);
    }
    close(fds[1]);
    if (pid < 0) {
      close(fds[0]);
      break;  // fewer children: those forked take every job
    }
    children.push_back(Child{.pid = pid, .fd = fds[0]});
  }
  if (children.empty()) {
    munmap(shared, sizeof(std::atomic<size_t>));
    return absl::UnavailableError("could not fork an NVRTC child process");
  }

  NvrtcProcessesResult result;
  result.results.resize(jobs.size());
  result.answered.assign(jobs.size(), false);
  result.children = static_cast<int>(children.size());
  size_t open = children.size();
  std::vector<pollfd> polls;
  while (open > 0) {
    polls.clear();
    for (const Child& child : children)
      if (child.fd >= 0) polls.push_back(pollfd{.fd = child.fd, .events = POLLIN, .revents = 0});
    if (poll(polls.data(), polls.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;  // the children are reaped below; unanswered jobs go back to the caller
    }
    for (Child& child : children) {
      if (child.fd < 0) continue;
      const auto it = std::find_if(polls.begin(), polls.end(),
                                   [&](const pollfd& p) { return p.fd == child.fd; });
      if (it == polls.end() || it->revents == 0) continue;
      char chunk[1 << 16];
      const ssize_t n = read(child.fd, chunk, sizeof(chunk));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        close(child.fd);
        child.fd = -1;
        --open;
        continue;
      }
      child.buffer.append(chunk, static_cast<size_t>(n));
      // Every complete frame in the buffer.
      while (child.buffer.size() >= 8) {
        uint64_t size = 0;
        std::memcpy(&size, child.buffer.data(), 8);
        if (child.buffer.size() < 8 + size) break;
        size_t index = 0;
        NvrtcProcessResult one;
        if (DecodeResult(std::string_view(child.buffer).substr(8, size), jobs.size(), index,
                         one) &&
            !result.answered[index]) {
          result.results[index] = std::move(one);
          result.answered[index] = true;
          on_done(index);
        }
        child.buffer.erase(0, 8 + size);
      }
    }
  }
  for (Child& child : children) {
    if (child.fd >= 0) close(child.fd);
    int status = 0;
    while (waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  munmap(shared, sizeof(std::atomic<size_t>));
  return result;
}

}  // namespace tccd::codegen
