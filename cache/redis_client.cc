// RedisClient; see redis_client.h. hiredis is confined to this file and redis_connection.cc.
#include "cache/redis_client.h"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"

namespace tccd::cache {
namespace {

RedisReply Convert(const redisReply* reply) {
  RedisReply out;
  switch (reply->type) {
    case REDIS_REPLY_STRING:
      out.type = RedisReply::Type::kString;
      out.str.assign(reply->str, reply->len);
      break;
    case REDIS_REPLY_STATUS:
      out.type = RedisReply::Type::kStatus;
      out.str.assign(reply->str, reply->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.type = RedisReply::Type::kInteger;
      out.integer = reply->integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = RedisReply::Type::kArray;
      for (size_t i = 0; i < reply->elements; ++i)
        out.elements.push_back(Convert(reply->element[i]));
      break;
    default:
      out.type = RedisReply::Type::kNil;
  }
  return out;
}

}  // namespace

std::string RedisEndpoint::ToString() const {
  const bool v6 = host.find(':') != std::string::npos;
  return absl::StrCat(tls ? "rediss://" : "redis://",
                      password.empty() ? "" : absl::StrCat(user, ":***@"), v6 ? "[" : "", host,
                      v6 ? "]" : "", ":", port, "/", db);
}

absl::StatusOr<RedisEndpoint> ParseRedisUrl(absl::string_view url) {
  const std::string hint =
      " (expected redis://HOST:PORT[/DB] or rediss://HOST:PORT[/DB] for TLS, e.g. "
      "redis://10.0.0.5:6379/0)";
  absl::string_view rest = url;
  RedisEndpoint endpoint;
  if (absl::ConsumePrefix(&rest, "rediss://")) {
    endpoint.tls = true;
  } else if (!absl::ConsumePrefix(&rest, "redis://")) {
    return absl::InvalidArgumentError(absl::StrCat("--shared-cache ", url, hint));
  }
  if (size_t at = rest.rfind('@'); at != absl::string_view::npos) {
    absl::string_view userinfo = rest.substr(0, at);
    rest = rest.substr(at + 1);
    const size_t colon = userinfo.find(':');
    if (colon == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--shared-cache: expected [USER]:PASSWORD@ before the host (the password is not "
          "shown here)"));
    }
    endpoint.user = std::string(userinfo.substr(0, colon));
    endpoint.password = std::string(userinfo.substr(colon + 1));
  }
  absl::string_view hostport = rest;
  if (size_t slash = rest.find('/'); slash != absl::string_view::npos) {
    hostport = rest.substr(0, slash);
    absl::string_view db = rest.substr(slash + 1);
    if (!db.empty() && (!absl::SimpleAtoi(db, &endpoint.db) || endpoint.db < 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--shared-cache ", url, ": bad database number \"", db, "\"", hint));
    }
  }
  absl::string_view port_text;
  if (absl::ConsumePrefix(&hostport, "[")) {
    const size_t close = hostport.find(']');
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("--shared-cache ", url, hint));
    }
    endpoint.host = std::string(hostport.substr(0, close));
    absl::string_view after = hostport.substr(close + 1);
    if (absl::ConsumePrefix(&after, ":"))
      port_text = after;
    else if (!after.empty())
      return absl::InvalidArgumentError(absl::StrCat("--shared-cache ", url, hint));
  } else if (size_t colon = hostport.rfind(':'); colon != absl::string_view::npos) {
    endpoint.host = std::string(hostport.substr(0, colon));
    port_text = hostport.substr(colon + 1);
  } else {
    endpoint.host = std::string(hostport);
  }
  if (endpoint.host.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--shared-cache ", url, ": no host", hint));
  }
  if (!port_text.empty() && (!absl::SimpleAtoi(port_text, &endpoint.port) || endpoint.port < 1 ||
                             endpoint.port > 65535)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--shared-cache ", url, ": bad port \"", port_text, "\"", hint));
  }
  return endpoint;
}

RedisClient::RedisClient(RedisEndpoint endpoint, absl::Duration timeout)
    : endpoint_(std::move(endpoint)),
      timeout_(timeout),
      tls_(endpoint_.tls ? RedisTlsContext::Make(endpoint_.tls_files)
                         : absl::StatusOr<std::shared_ptr<const RedisTlsContext>>(nullptr)) {}

RedisClient::~RedisClient() = default;

absl::StatusOr<std::unique_ptr<RedisConnection>> RedisClient::Checkout(bool* reused) {
  if (reused != nullptr) {
    absl::MutexLock lock(&mu_);
    if (!idle_.empty()) {
      *reused = true;
      std::unique_ptr<RedisConnection> connection = std::move(idle_.back());
      idle_.pop_back();
      return connection;
    }
  }
  absl::StatusOr<std::unique_ptr<RedisConnection>> connection = Connect();
  if (!connection.ok()) {
    return absl::Status(
        connection.status().code(),
        absl::StrCat("connecting to ", endpoint_.ToString(), ": ", connection.status().message()));
  }
  return connection;
}

absl::StatusOr<std::unique_ptr<RedisConnection>> RedisClient::Connect() {
  if (!tls_.ok()) return tls_.status();
  std::unique_ptr<RedisConnection> connection;
  if (*tls_ != nullptr) {
    ASSIGN_OR_RETURN(connection, ConnectTls(endpoint_.host, endpoint_.port, timeout_, *tls_));
  } else {
    ASSIGN_OR_RETURN(connection, ConnectPlain(endpoint_.host, endpoint_.port, timeout_));
  }
  // AUTH, then SELECT: each must answer +OK.
  auto setup = [&](std::vector<std::string> args, absl::string_view what) -> absl::Status {
    std::vector<const char*> argv;
    std::vector<size_t> lengths;
    for (const std::string& arg : args) {
      argv.push_back(arg.data());
      lengths.push_back(arg.size());
    }
    auto* reply = connection->Command(static_cast<int>(argv.size()), argv.data(), lengths.data());
    const bool ok = reply != nullptr && reply->type == REDIS_REPLY_STATUS;
    std::string error = reply == nullptr ? connection->error()
                        : ok             ? ""
                                         : std::string(reply->str != nullptr ? reply->str : "");
    if (reply != nullptr) freeReplyObject(reply);
    if (!ok) return absl::UnavailableError(absl::StrCat(what, ": ", error));
    return absl::OkStatus();
  };
  if (!endpoint_.password.empty()) {
    std::vector<std::string> auth = {"AUTH"};
    if (!endpoint_.user.empty()) auth.push_back(endpoint_.user);
    auth.push_back(endpoint_.password);
    RETURN_IF_ERROR(setup(std::move(auth), "authenticating"));
  }
  if (endpoint_.db != 0) {
    const std::string db = std::to_string(endpoint_.db);
    RETURN_IF_ERROR(setup({"SELECT", db}, absl::StrCat("selecting database ", db)));
  }
  return connection;
}

void RedisClient::Return(std::unique_ptr<RedisConnection> connection, bool healthy) {
  if (!healthy || connection->broken()) return;  // closed here
  absl::MutexLock lock(&mu_);
  idle_.push_back(std::move(connection));
}

absl::StatusOr<RedisReply> RedisClient::Command(std::initializer_list<absl::string_view> args) {
  std::vector<const char*> argv;
  std::vector<size_t> lengths;
  for (absl::string_view arg : args) {
    argv.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  // A pooled connection may have died with the server it was opened to (a Redis restart): a
  // failure on a reused connection is retried once on a fresh one.
  for (int attempt = 0;; ++attempt) {
    bool reused = false;
    absl::StatusOr<std::unique_ptr<RedisConnection>> connection =
        Checkout(attempt == 0 ? &reused : nullptr);
    if (!connection.ok()) return connection.status();
    auto* reply =
        (*connection)->Command(static_cast<int>(argv.size()), argv.data(), lengths.data());
    if (reply == nullptr) {
      absl::Status status = absl::UnavailableError(
          absl::StrCat(endpoint_.ToString(), " ", *args.begin(), ": ", (*connection)->error()));
      Return(*std::move(connection), /*healthy=*/false);
      if (reused) continue;
      return status;
    }
    if (reply->type == REDIS_REPLY_ERROR) {
      absl::Status status = absl::FailedPreconditionError(absl::StrCat(
          endpoint_.ToString(), " ", *args.begin(), ": ", std::string(reply->str, reply->len)));
      freeReplyObject(reply);
      Return(*std::move(connection), /*healthy=*/true);
      return status;
    }
    RedisReply converted = Convert(reply);
    freeReplyObject(reply);
    Return(*std::move(connection), /*healthy=*/true);
    return converted;
  }
}

}  // namespace tccd::cache
