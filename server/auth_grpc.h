// The gRPC side of authentication: TLS credentials for TCP listeners, reading a call's bearer
// token, and refusing a call before any work. The rules themselves are in auth_tokens.h.
//
// With grpc_server.cc, the only files that include grpcpp.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/auth_tokens.h"

namespace tccd::server {

// PEM contents (not paths). Empty cert_pem: plaintext TCP.
struct TlsConfig {
  std::string cert_pem;       // --tls-cert: the server's certificate chain
  std::string key_pem;        // --tls-key
  std::string client_ca_pem;  // --tls-client-ca: when set, clients must present a certificate
                              // signed by it (mTLS); others fail the TLS handshake
};

// Credentials for a TCP listener: TLS (mTLS with a client CA) when `tls.cert_pem` is set,
// else plaintext. Unix sockets always use plaintext (the file's permissions guard them).
std::shared_ptr<grpc::ServerCredentials> TcpServerCredentials(const TlsConfig& tls);

// Who sent the call: nullopt when `tokens` is null (no --tokens: everyone may do everything),
// else the token's identity, or UNAUTHENTICATED.
absl::StatusOr<std::optional<Identity>> AuthenticateCall(const TokenAuthorizer* tokens,
                                                         const grpc::CallbackServerContext& call,
                                                         absl::string_view method);

// Ends a call at once with `status`.
grpc::ServerUnaryReactor* RefuseUnary(grpc::CallbackServerContext* context,
                                      const grpc::Status& status);
grpc::ServerWriteReactor<grpc::ByteBuffer>* RefuseStream(const grpc::Status& status);

}  // namespace tccd::server
