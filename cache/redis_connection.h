// RedisConnection: one connection to Redis, plaintext (hiredis' own) or TLS (OpenSSL, with
// hiredis only formatting commands and parsing replies). Internal to cache/: RedisClient
// (redis_client.h) pools them; nothing else uses it.
//
// Why our own TLS: hiredis gained TLS in 1.0, Debian 12 ships 0.14. The TLS connection does
// what hiredis' plaintext one does (connect with a timeout, one command and one reply at a
// time, every socket operation bounded by the timeout) over an OpenSSL session that verifies
// the server's certificate against a CA and its name against the host.
//
// Thread-safety: a connection is used by one thread at a time. A RedisTlsContext is immutable
// once made and shared by every connection of a client.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

typedef struct ssl_ctx_st SSL_CTX;  // NOLINT: OpenSSL's own spelling
struct redisReply;

namespace tccd::cache {

// The client side of rediss://: which CA verifies the server, and the client certificate for a
// Redis with tls-auth-clients (mutual TLS). Empty files: the system's CAs, no client
// certificate.
struct RedisTlsFiles {
  std::string ca;    // PEM CA certificate(s)
  std::string cert;  // PEM client certificate chain (with key)
  std::string key;   // PEM private key of cert
};

class RedisTlsContext {
 public:
  // Loads the files. INVALID_ARGUMENT naming the file that cannot be read or used.
  static absl::StatusOr<std::shared_ptr<const RedisTlsContext>> Make(const RedisTlsFiles& files);
  ~RedisTlsContext();
  RedisTlsContext(const RedisTlsContext&) = delete;
  RedisTlsContext& operator=(const RedisTlsContext&) = delete;

  SSL_CTX* ctx() const { return ctx_; }

 private:
  explicit RedisTlsContext(SSL_CTX* ctx) : ctx_(ctx) {}
  SSL_CTX* const ctx_;
};

class RedisConnection {
 public:
  virtual ~RedisConnection() = default;
  // Sends one command and returns its reply (free it with freeReplyObject), or null when the
  // connection failed (timeout, closed, TLS error); then error() says why and the connection
  // must not be used again.
  virtual redisReply* Command(int argc, const char** argv, const size_t* lengths) = 0;
  virtual std::string error() const = 0;
  // Whether an error made the connection unusable.
  virtual bool broken() const = 0;
};

// hiredis' plaintext connection. UNAVAILABLE when Redis cannot be reached in `timeout`.
absl::StatusOr<std::unique_ptr<RedisConnection>> ConnectPlain(const std::string& host, int port,
                                                              absl::Duration timeout);

// A TLS connection: TCP connect, then a handshake that verifies the server's certificate
// (`tls`'s CA) and that it names `host` (a DNS name or an IP address). UNAVAILABLE when Redis
// cannot be reached or the handshake fails, with OpenSSL's reason ("certificate verify
// failed").
absl::StatusOr<std::unique_ptr<RedisConnection>> ConnectTls(
    const std::string& host, int port, absl::Duration timeout,
    std::shared_ptr<const RedisTlsContext> tls);

}  // namespace tccd::cache
