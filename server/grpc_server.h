// RpcServer: the gRPC transport of tccd.v1.Tccd (plus grpc.health.v1) over a
// CompileService.
//
// This header is transport-neutral on purpose; grpc_server.cc is the only file
// in tccd that includes grpcpp, and the only place an absl::Status becomes a
// grpc::Status.
//
// Thread-safety: Shutdown() may be called from any thread, once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/auth_grpc.h"
#include "server/auth_tokens.h"
#include "server/compile_service.h"
#include "server/metrics.h"
#include "server/options.h"
#include "server/thread_pool.h"

namespace tccd::server {

struct RpcServerOptions {
  // Addresses to bind; all must succeed. Required.
  std::vector<ListenAddress> listen;
  // Largest request message accepted, in bytes. Default: 256 MiB.
  int max_request_bytes = 256 << 20;
  // Memory gRPC may hold for all in-flight requests together (its resource
  // quota). gRPC 1.51 treats it as a pressure target, not a hard cap: near it,
  // it shrinks read buffers and flow-control windows, slowing peers instead of
  // growing the daemon. Must be at least max_request_bytes. Default: 1 GiB.
  int64_t max_inflight_request_bytes = 1ll << 30;
  // Concurrent calls (HTTP/2 streams) one connection may have open; further
  // streams wait for one to end. Default: 256.
  int max_concurrent_streams = 256;
  // How long the daemon works on any one call, whatever deadline the client
  // sent (or none): past it, a unary call is answered DEADLINE_EXCEEDED and an
  // artifact stream is cancelled. Covers single-flight followers waiting on a
  // leader. Default: 30 minutes (a compile's own limit is 10 minutes, tried at
  // most twice).
  absl::Duration request_deadline = absl::Minutes(30);
  // TLS (and mTLS) for TCP listeners; unix sockets stay plaintext. Default: plaintext.
  TlsConfig tls;
  // Tokens every tccd.v1 call must carry (auth_tokens.h); the health service stays open.
  // Must outlive the server. Default: null, no token needed.
  const TokenAuthorizer* tokens = nullptr;
  // Where every finished call is counted by method and code (metrics.h). Must outlive the
  // server. Default: null, not counted.
  Metrics* metrics = nullptr;
};

class RpcServer {
 public:
  // Binds every address and starts serving `service`, running blocking handler
  // work on `request_pool`. Both must outlive the server. FAILED_PRECONDITION
  // naming the address when one cannot be bound.
  static absl::StatusOr<std::unique_ptr<RpcServer>> Start(const RpcServerOptions& options,
                                                          CompileService* service,
                                                          ThreadPool* request_pool);
  ~RpcServer();  // Shutdown(absl::ZeroDuration()) if not shut down yet

  // The addresses actually bound, with TCP port 0 replaced by the chosen port.
  const std::vector<std::string>& bound_addresses() const { return bound_addresses_; }

  // Marks health NOT_SERVING, stops accepting calls, and waits for in-flight
  // calls to finish; calls still running after `deadline` are cancelled (and
  // still answered). Returns once every call has been answered.
  void Shutdown(absl::Duration deadline);

 private:
  struct Impl;
  explicit RpcServer(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
  std::vector<std::string> bound_addresses_;
};

}  // namespace tccd::server
