// SystemdNotifier: tccd's side of systemd's Type=notify protocol (sd_notify(3), libsystemd).
//
//   READY=1     once every listener is bound (systemctl start returns then, and units ordered
//               After=tccd.service start only when clients can connect);
//   STOPPING=1  when a shutdown signal arrives, before the in-flight calls drain;
//   WATCHDOG=1  every half WatchdogSec= (sd_watchdog_enabled), but only while `alive` says
//               the daemon still serves: a wedged daemon stops pinging, and systemd restarts it.
//
// Outside systemd (no NOTIFY_SOCKET) every call does nothing. The socket's variables stay in
// the environment on purpose: compile workers never notify, and unsetting variables in a
// process with threads races with getenv.
//
// Thread-safety: Ready and Stopping are called from the daemon's main thread; the watchdog
// pings from its own thread.
#pragma once

#include <functional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace tccd::server {

class SystemdNotifier {
 public:
  // Whether the daemon can still answer a request, checked before each watchdog ping; it may
  // block up to `limit` (then it must say false).
  using AliveCheck = std::function<bool(absl::Duration limit)>;

  SystemdNotifier() = default;
  SystemdNotifier(const SystemdNotifier&) = delete;
  SystemdNotifier& operator=(const SystemdNotifier&) = delete;
  // Stops the watchdog thread.
  ~SystemdNotifier();

  // READY=1 with STATUS=`status`, and starts the watchdog pings when systemd asks for them.
  void Ready(const std::string& status, AliveCheck alive);
  // STOPPING=1 with STATUS=`status`. The watchdog keeps pinging, without the alive check
  // (the pools are being drained), so that a long drain is not mistaken for a hang.
  void Stopping(const std::string& status);

 private:
  void WatchdogLoop(absl::Duration interval);

  absl::Mutex mu_;
  AliveCheck alive_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool exit_ ABSL_GUARDED_BY(mu_) = false;
  std::thread watchdog_;
};

}  // namespace tccd::server
