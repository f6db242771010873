// The CPUs this process may run on: its affinity mask (taskset, systemd's CPUAffinity=, a
// container's cpuset), not the machine's thread count. "One thread per core" defaults size
// from this, so a daemon pinned to 16 of 64 cores runs 16 compile threads, not 64 threads
// fighting over 16 cores (and over the cores of whatever else the operator pinned beside it).
#pragma once

#include <sched.h>

#include <algorithm>
#include <thread>

namespace tccd {

inline int UsableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    if (int n = CPU_COUNT(&set); n > 0) return n;
  }
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

}  // namespace tccd
