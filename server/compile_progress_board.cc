// CompileProgressBoard; see compile_progress_board.h.
#include "server/compile_progress_board.h"

#include "spdlog/spdlog.h"

namespace tccd::server {
namespace {

constexpr size_t kLogKeyChars = 12;

double SecondsSince(CompileProgressBoard::Clock::time_point start) {
  return std::chrono::duration<double>(CompileProgressBoard::Clock::now() - start).count();
}

// The client-chosen graph name, safe for one log line (no control bytes, bounded).
std::string GraphForLog(const std::string& name) {
  std::string out;
  for (char c : name.substr(0, 64))
    out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  return out.empty() ? "-" : out;
}

}  // namespace

void CompileProgressBoard::Started(const std::string& key, const std::string& graph_name) {
  absl::MutexLock lock(&mu_);
  running_[key] = Running{.graph_name = graph_name, .started = Clock::now()};
}

void CompileProgressBoard::KernelsDone(const std::string& key, int done, int total) {
  absl::MutexLock lock(&mu_);
  auto it = running_.find(key);
  if (it == running_.end()) return;
  it->second.done = done;
  it->second.total = total;
  MaybeLog(key, it->second);
}

void CompileProgressBoard::Ended(const std::string& key) {
  absl::MutexLock lock(&mu_);
  running_.erase(key);
}

void CompileProgressBoard::Attach(const std::string& progress_id, const std::string& key,
                                  Clock::time_point received) {
  absl::MutexLock lock(&mu_);
  waiters_[progress_id] = Waiter{.key = key, .received = received};
}

void CompileProgressBoard::Detach(const std::string& progress_id) {
  absl::MutexLock lock(&mu_);
  waiters_.erase(progress_id);
}

v1::CompileProgress CompileProgressBoard::Get(const std::string& progress_id) {
  v1::CompileProgress out;
  absl::MutexLock lock(&mu_);
  auto waiter = waiters_.find(progress_id);
  if (waiter == waiters_.end()) return out;
  out.set_known(true);
  out.set_key(waiter->second.key);
  out.set_elapsed_ms(SecondsSince(waiter->second.received) * 1000);
  auto it = running_.find(waiter->second.key);
  if (it == running_.end()) {
    out.set_phase("queued");
    return out;
  }
  out.set_phase("compiling");
  out.set_graph_name(it->second.graph_name);
  out.set_kernels_done(it->second.done);
  out.set_kernels_total(it->second.total);
  // A compile whose kernels report nothing for a while (a long lowering) still gets its line.
  MaybeLog(waiter->second.key, it->second);
  return out;
}

void CompileProgressBoard::MaybeLog(const std::string& key, Running& running) {
  if (running.logged || log_after_ <= absl::ZeroDuration()) return;
  const double elapsed_s = SecondsSince(running.started);
  if (elapsed_s < absl::ToDoubleSeconds(log_after_)) return;
  running.logged = true;
  spdlog::info("compiling graph \"{}\" key={}: {}/{} kernels, {:.1f} s",
               GraphForLog(running.graph_name), key.substr(0, kLogKeyChars), running.done,
               running.total, elapsed_s);
}

}  // namespace tccd::server
