// RedisClient; see redis_client.h. hiredis is confined to this file.
#include "cache/redis_client.h"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

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
      for (size_t i = 0; i < reply->elements; ++i) out.elements.push_back(Convert(reply->element[i]));
      break;
    default:
      out.type = RedisReply::Type::kNil;
  }
  return out;
}

}  // namespace

std::string RedisEndpoint::ToString() const {
  const bool v6 = host.find(':') != std::string::npos;
  return absl::StrCat("redis://", password.empty() ? "" : absl::StrCat(user, ":***@"),
                      v6 ? "[" : "", host, v6 ? "]" : "", ":", port, "/", db);
}

absl::StatusOr<RedisEndpoint> ParseRedisUrl(absl::string_view url) {
  const std::string hint = " (expected redis://HOST:PORT[/DB], e.g. redis://10.0.0.5:6379/0)";
  if (absl::StartsWith(url, "rediss://")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--shared-cache ", url,
        ": rediss:// (TLS) is not supported: this tccd is built on hiredis 0.14 (Debian 12), "
        "which has no TLS. Reach Redis over a trusted network or through a TLS tunnel (stunnel, "
        "spiped) on localhost"));
  }
  absl::string_view rest = url;
  if (!absl::ConsumePrefix(&rest, "redis://")) {
    return absl::InvalidArgumentError(absl::StrCat("--shared-cache ", url, hint));
  }
  RedisEndpoint endpoint;
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
    if (absl::ConsumePrefix(&after, ":")) port_text = after;
    else if (!after.empty()) return absl::InvalidArgumentError(absl::StrCat("--shared-cache ", url, hint));
  } else if (size_t colon = hostport.rfind(':'); colon != absl::string_view::npos) {
    endpoint.host = std::string(hostport.substr(0, colon));
    port_text = hostport.substr(colon + 1);
  } else {
    endpoint.host = std::string(hostport);
  }
  if (endpoint.host.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--shared-cache ", url, ": no host", hint));
  }
  if (!port_text.empty() &&
      (!absl::SimpleAtoi(port_text, &endpoint.port) || endpoint.port < 1 || endpoint.port > 65535)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--shared-cache ", url, ": bad port \"", port_text, "\"", hint));
  }
  return endpoint;
}

RedisClient::RedisClient(RedisEndpoint endpoint, absl::Duration timeout)
    : endpoint_(std::move(endpoint)), timeout_(timeout) {}

RedisClient::~RedisClient() {
  absl::MutexLock lock(&mu_);
  for (redisContext* context : idle_) redisFree(context);
  idle_.clear();
}

absl::StatusOr<redisContext*> RedisClient::Checkout(bool* reused) {
  if (reused != nullptr) {
    absl::MutexLock lock(&mu_);
    if (!idle_.empty()) {
      *reused = true;
      redisContext* context = idle_.back();
      idle_.pop_back();
      return context;
    }
  }
  redisContext* context =
      redisConnectWithTimeout(endpoint_.host.c_str(), endpoint_.port, absl::ToTimeval(timeout_));
  if (context == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("connecting to ", endpoint_.ToString(), ": out of memory"));
  }
  if (context->err != 0) {
    absl::Status status = absl::UnavailableError(
        absl::StrCat("connecting to ", endpoint_.ToString(), ": ", context->errstr));
    redisFree(context);
    return status;
  }
  redisSetTimeout(context, absl::ToTimeval(timeout_));
  if (!endpoint_.password.empty()) {
    auto* reply = static_cast<redisReply*>(
        endpoint_.user.empty()
            ? redisCommand(context, "AUTH %b", endpoint_.password.data(), endpoint_.password.size())
            : redisCommand(context, "AUTH %b %b", endpoint_.user.data(), endpoint_.user.size(),
                           endpoint_.password.data(), endpoint_.password.size()));
    const bool ok = reply != nullptr && reply->type == REDIS_REPLY_STATUS;
    std::string error = reply == nullptr ? context->errstr
                        : ok             ? ""
                                         : std::string(reply->str != nullptr ? reply->str : "");
    if (reply != nullptr) freeReplyObject(reply);
    if (!ok) {
      redisFree(context);
      return absl::UnavailableError(
          absl::StrCat("authenticating to ", endpoint_.ToString(), ": ", error));
    }
  }
  if (endpoint_.db != 0) {
    const std::string db = std::to_string(endpoint_.db);
    auto* reply = static_cast<redisReply*>(redisCommand(context, "SELECT %s", db.c_str()));
    const bool ok = reply != nullptr && reply->type == REDIS_REPLY_STATUS;
    std::string error = reply == nullptr ? context->errstr
                        : ok             ? ""
                                         : std::string(reply->str != nullptr ? reply->str : "");
    if (reply != nullptr) freeReplyObject(reply);
    if (!ok) {
      redisFree(context);
      return absl::UnavailableError(
          absl::StrCat("selecting database ", db, " of ", endpoint_.ToString(), ": ", error));
    }
  }
  return context;
}

void RedisClient::Return(redisContext* context, bool healthy) {
  if (!healthy || context->err != 0) {
    redisFree(context);
    return;
  }
  absl::MutexLock lock(&mu_);
  idle_.push_back(context);
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
    absl::StatusOr<redisContext*> context = Checkout(attempt == 0 ? &reused : nullptr);
    if (!context.ok()) return context.status();
    auto* reply = static_cast<redisReply*>(redisCommandArgv(
        *context, static_cast<int>(argv.size()), argv.data(), lengths.data()));
    if (reply == nullptr) {
      absl::Status status = absl::UnavailableError(absl::StrCat(
          endpoint_.ToString(), " ", *args.begin(), ": ", (*context)->errstr));
      Return(*context, /*healthy=*/false);
      if (reused) continue;
      return status;
    }
    if (reply->type == REDIS_REPLY_ERROR) {
      absl::Status status = absl::FailedPreconditionError(absl::StrCat(
          endpoint_.ToString(), " ", *args.begin(), ": ", std::string(reply->str, reply->len)));
      freeReplyObject(reply);
      Return(*context, /*healthy=*/true);
      return status;
    }
    RedisReply converted = Convert(reply);
    freeReplyObject(reply);
    Return(*context, /*healthy=*/true);
    return converted;
  }
}

}  // namespace tccd::cache
