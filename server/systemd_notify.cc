// SystemdNotifier; see systemd_notify.h.
#include "server/systemd_notify.h"

#include <systemd/sd-daemon.h>

#include <cstdint>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace tccd::server {
namespace {

// sd_notify returns > 0 when sent, 0 without NOTIFY_SOCKET, < 0 (-errno) on failure.
void Notify(const std::string& state) {
  const int sent = sd_notify(/*unset_environment=*/0, state.c_str());
  if (sent < 0) {
    spdlog::warn("sd_notify({}) failed: {}", state.substr(0, state.find('\n')),
                 std::strerror(-sent));
  }
}

}  // namespace

SystemdNotifier::~SystemdNotifier() {
  {
    absl::MutexLock lock(&mu_);
    exit_ = true;
  }
  if (watchdog_.joinable()) watchdog_.join();
}

void SystemdNotifier::Ready(const std::string& status, AliveCheck alive) {
  Notify(absl::StrCat("READY=1\nSTATUS=", status));
  uint64_t watchdog_usec = 0;
  // > 0: WATCHDOG_USEC is set (and WATCHDOG_PID, if set, is ours).
  if (sd_watchdog_enabled(/*unset_environment=*/0, &watchdog_usec) <= 0 || watchdog_usec == 0) {
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    alive_ = std::move(alive);
  }
  // Half the interval, as sd_watchdog_enabled(3) recommends: one late ping is not a restart.
  const absl::Duration interval = absl::Microseconds(static_cast<int64_t>(watchdog_usec)) / 2;
  spdlog::info("systemd watchdog: pinging every {}", absl::FormatDuration(interval));
  watchdog_ = std::thread([this, interval] { WatchdogLoop(interval); });
}

void SystemdNotifier::Stopping(const std::string& status) {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  Notify(absl::StrCat("STOPPING=1\nSTATUS=", status));
}

void SystemdNotifier::WatchdogLoop(absl::Duration interval) {
  bool was_alive = true;  // log a hang once per episode, not once per interval
  while (true) {
    AliveCheck alive;
    bool stopping = false;
    {
      absl::MutexLock lock(&mu_);
      if (mu_.AwaitWithTimeout(absl::Condition(&exit_), interval)) return;
      alive = alive_;
      stopping = stopping_;
    }
    // The check gets half an interval, so a ping still arrives before systemd's deadline.
    const bool ok = stopping || !alive || alive(interval / 2);
    if (ok) {
      Notify("WATCHDOG=1");
      if (!was_alive) spdlog::info("systemd watchdog: the daemon answers again; pinging");
    } else if (was_alive) {
      spdlog::error(
          "systemd watchdog: the request pool ran nothing for {}; not pinging (systemd "
          "restarts tccd if this lasts WatchdogSec)",
          absl::FormatDuration(interval / 2));
    }
    was_alive = ok;
  }
}

}  // namespace tccd::server
