// See auth_grpc.h.
#include "server/auth_grpc.h"

#include <grpcpp/security/server_credentials.h>

#include <atomic>

#include "absl/time/clock.h"
#include "spdlog/spdlog.h"

namespace tccd::server {
namespace {

// A stream refused before its first message; deletes itself when gRPC is done with it.
class RefusedStream final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  explicit RefusedStream(const grpc::Status& status) { Finish(status); }
  void OnDone() override { delete this; }
};

}  // namespace

std::shared_ptr<grpc::ServerCredentials> TcpServerCredentials(const TlsConfig& tls) {
  if (tls.cert_pem.empty()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options(
      tls.client_ca_pem.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                                : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = tls.client_ca_pem;
  options.pem_key_cert_pairs.push_back({tls.key_pem, tls.cert_pem});
  return grpc::SslServerCredentials(options);
}

absl::StatusOr<std::optional<Identity>> AuthenticateCall(const TokenAuthorizer* tokens,
                                                         const grpc::CallbackServerContext& call,
                                                         absl::string_view method) {
  if (tokens == nullptr) return std::nullopt;
  const auto& metadata = call.client_metadata();
  auto it = metadata.find("authorization");
  const std::string header =
      it == metadata.end() ? std::string() : std::string(it->second.data(), it->second.size());
  absl::StatusOr<Identity> who = tokens->Authenticate(header);
  if (!who.ok()) {
    // At most one line per second: a peer sending junk must not be able to fill the log.
    static std::atomic<int64_t> last_logged_s{0};
    const int64_t now_s = absl::ToUnixSeconds(absl::Now());
    int64_t last = last_logged_s.load(std::memory_order_relaxed);
    if (now_s != last && last_logged_s.compare_exchange_strong(last, now_s)) {
      spdlog::warn("{} from {} refused: {} (refusals logged at most once a second)",
                   std::string(method), call.peer(), who.status().ToString());
    }
    return who.status();
  }
  return std::optional<Identity>(*std::move(who));
}

grpc::ServerUnaryReactor* RefuseUnary(grpc::CallbackServerContext* context,
                                      const grpc::Status& status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(status);
  return reactor;
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* RefuseStream(const grpc::Status& status) {
  return new RefusedStream(status);
}

}  // namespace tccd::server
