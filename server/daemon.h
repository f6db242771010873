// RunDaemon: tccd's composition root and lifecycle, from opening the cache to a
// clean exit.
//
//   int main(int argc, char** argv) {
//     BlockShutdownSignals();                 // first, before any thread
//     exists
//     ... parse flags into ServerOptions ...
//     return RunDaemon(options);
//   }
//
// Startup: open the cache, claim the unix sockets, start the pools and the gRPC
// server, log one line. Then wait for SIGTERM or SIGINT, received with
// sigwait() on the main thread (no work happens in a signal handler). Shutdown:
// stop accepting, let in-flight calls finish for up to 30 s (then cancel them),
// drain the pools, close the cache (flushing it), remove the socket files. A
// second SIGTERM/SIGINT during shutdown exits at once (status 1), for a compile
// that will not end.
#pragma once

#include "server/options.h"

namespace tccd::server {

// Blocks SIGTERM and SIGINT in the calling thread and so in every thread it
// creates later, so that only RunDaemon's sigwait() receives them; ignores
// SIGPIPE (a closed stderr or socket must not kill the daemon). Call at the top
// of main().
void BlockShutdownSignals();

// Runs the daemon until a shutdown signal. Returns the process exit status: 0
// after a clean shutdown, 1 if startup failed (the reason is logged) or the
// cache did not close cleanly.
int RunDaemon(const ServerOptions& options);

}  // namespace tccd::server
