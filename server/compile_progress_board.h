// CompileProgressBoard: what each running compile has done so far, for GetCompileProgress and
// for the daemon's own "still compiling" log line (issue 11 item 5).
//
// A compile flight (one per compile key) reports its kernels done while it runs (Started,
// KernelsDone, Ended); a Compile call that carries a progress_id is attached to its flight's key
// while it waits (Attach ... Detach), so that the leader and every deduplicated follower can ask
// about it by that id. A compile running longer than `log_after` gets one log line:
//
//   compiling graph "backward" key=1a2b3c4d5e6f: 12/40 kernels, 6.1 s
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "codegen/kernel/compile_progress.h"
#include "tccd/v1/tccd.pb.h"

namespace tccd::server {

class CompileProgressBoard {
 public:
  using Clock = std::chrono::steady_clock;

  // `log_after`: a compile running this long is logged once; zero or less: never.
  explicit CompileProgressBoard(absl::Duration log_after) : log_after_(log_after) {}

  // The compile of `key` starts now (on a compile thread).
  void Started(const std::string& key, const std::string& graph_name);
  // It has `done` of `total` distinct kernels.
  void KernelsDone(const std::string& key, int done, int total);
  // It is over (whatever the outcome).
  void Ended(const std::string& key);

  // A Compile call with `progress_id`, received at `received`, waits for `key`'s compile.
  // A second Attach of the same id replaces the first (the id is the client's business).
  void Attach(const std::string& progress_id, const std::string& key, Clock::time_point received);
  void Detach(const std::string& progress_id);

  // What the call `progress_id` waits for; known = false if no such call is attached.
  v1::CompileProgress Get(const std::string& progress_id);

  // A CompileProgress that reports to `board` under `key`.
  class Sink final : public codegen::CompileProgress {
   public:
    Sink(CompileProgressBoard* board, std::string key) : board_(board), key_(std::move(key)) {}
    void KernelsDone(int done, int total) override { board_->KernelsDone(key_, done, total); }

   private:
    CompileProgressBoard* const board_;
    const std::string key_;
  };

 private:
  struct Running {
    std::string graph_name;
    Clock::time_point started;
    int done = 0;
    int total = 0;
    bool logged = false;
  };
  struct Waiter {
    std::string key;
    Clock::time_point received;
  };

  // Logs `running` once it has run for log_after_.
  void MaybeLog(const std::string& key, Running& running) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const absl::Duration log_after_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, Running> running_ ABSL_GUARDED_BY(mu_);  // by key
  absl::flat_hash_map<std::string, Waiter> waiters_ ABSL_GUARDED_BY(mu_);   // by progress_id
};

}  // namespace tccd::server
