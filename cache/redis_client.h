// RedisClient: a small synchronous Redis client on hiredis 0.14 (Debian 12's), for the shared
// cache tier (shared_tier.h). Binary-safe commands in, a simplified reply out, every failure an
// absl::Status:
//
//   ASSIGN_OR_RETURN(RedisEndpoint endpoint, ParseRedisUrl("redis://10.0.0.5:6379/2"));
//   RedisClient redis(endpoint, absl::Milliseconds(500));
//   ASSIGN_OR_RETURN(RedisReply reply, redis.Command({"GET", key}));
//   if (reply.is_nil()) ...
//
// Errors: UNAVAILABLE when Redis cannot be reached, times out or closes the connection;
// FAILED_PRECONDITION for an error reply (e.g. OOM, READONLY replica), with Redis' message.
//
// TLS: rediss:// connects over TLS (redis_connection.h: OpenSSL, since Debian 12's hiredis 0.14
// has none), verifying Redis' certificate against RedisEndpoint.tls.ca and its name against
// the host; with tls.cert/tls.key it presents a client certificate (tls-auth-clients).
//
// Thread-safety: a RedisClient is safe to use from many threads at once. It keeps a pool of
// connections (one per concurrent caller, reused); a connection that saw any error is closed
// rather than reused.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cache/redis_connection.h"

namespace tccd::cache {

struct RedisEndpoint {
  std::string host;
  int port = 6379;
  int db = 0;
  // Sent with AUTH after connecting when set (user: Redis 6 ACLs; empty means "default").
  std::string user;
  std::string password;
  // rediss://: TLS, with these files (not part of the URL: --shared-cache-tls-*).
  bool tls = false;
  RedisTlsFiles tls_files;
  // The URL without the password.
  std::string ToString() const;
};

// Parses "redis[s]://[[USER]:PASSWORD@]HOST[:PORT][/DB]" (HOST may be a name, an IPv4 address
// or a bracketed IPv6 address; rediss:// is TLS). INVALID_ARGUMENT with a hint otherwise.
absl::StatusOr<RedisEndpoint> ParseRedisUrl(absl::string_view url);

struct RedisReply {
  enum class Type { kNil, kString, kInteger, kStatus, kArray };
  Type type = Type::kNil;
  std::string str;                   // kString, kStatus
  int64_t integer = 0;               // kInteger
  std::vector<RedisReply> elements;  // kArray
  bool is_nil() const { return type == Type::kNil; }
};

class RedisClient {
 public:
  // Connects lazily. `timeout` bounds connecting (and a TLS handshake) and each command. A
  // TLS endpoint whose files cannot be loaded fails every command with that reason; check
  // them first with RedisTlsContext::Make.
  RedisClient(RedisEndpoint endpoint, absl::Duration timeout);
  ~RedisClient();
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  absl::StatusOr<RedisReply> Command(std::initializer_list<absl::string_view> args);

  const RedisEndpoint& endpoint() const { return endpoint_; }

 private:
  // A pooled connection if `reused` is not null and one is idle (then *reused is set), else a
  // new one.
  absl::StatusOr<std::unique_ptr<RedisConnection>> Checkout(bool* reused);
  absl::StatusOr<std::unique_ptr<RedisConnection>> Connect();
  void Return(std::unique_ptr<RedisConnection> connection, bool healthy);

  const RedisEndpoint endpoint_;
  const absl::Duration timeout_;
  // For rediss://: the loaded CA and client certificate, or why they could not be loaded.
  absl::StatusOr<std::shared_ptr<const RedisTlsContext>> tls_;
  absl::Mutex mu_;
  std::vector<std::unique_ptr<RedisConnection>> idle_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tccd::cache
