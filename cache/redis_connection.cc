// RedisConnection; see redis_connection.h. With redis_client.cc, the only files that include
// hiredis; the only file of cache/ that includes OpenSSL's TLS headers.
#include "cache/redis_connection.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tccd::cache {
namespace {

// OpenSSL's queued errors as one line (and the queue emptied), or `fallback` without any.
std::string OpenSslErrors(absl::string_view fallback) {
  std::string out;
  while (unsigned long code = ERR_get_error()) {
    char text[256];
    ERR_error_string_n(code, text, sizeof(text));
    absl::StrAppend(&out, out.empty() ? "" : "; ", text);
  }
  return out.empty() ? std::string(fallback) : out;
}

class PlainConnection final : public RedisConnection {
 public:
  explicit PlainConnection(redisContext* context) : context_(context) {}
  ~PlainConnection() override { redisFree(context_); }

  redisReply* Command(int argc, const char** argv, const size_t* lengths) override {
    return static_cast<redisReply*>(redisCommandArgv(context_, argc, argv, lengths));
  }
  std::string error() const override { return context_->errstr; }
  bool broken() const override { return context_->err != 0; }

 private:
  redisContext* const context_;
};

class TlsConnection final : public RedisConnection {
 public:
  TlsConnection(int fd, SSL* ssl, std::shared_ptr<const RedisTlsContext> tls)
      : fd_(fd), ssl_(ssl), tls_(std::move(tls)), reader_(redisReaderCreate()) {}
  ~TlsConnection() override {
    if (!broken_) SSL_shutdown(ssl_);  // close_notify; no wait for the peer's
    SSL_free(ssl_);
    close(fd_);
    if (reader_ != nullptr) redisReaderFree(reader_);
  }

  redisReply* Command(int argc, const char** argv, const size_t* lengths) override {
    if (broken_) return nullptr;
    if (reader_ == nullptr) return Fail("out of memory");
    char* command = nullptr;
    const int size = redisFormatCommandArgv(&command, argc, argv, lengths);
    if (size < 0) return Fail("cannot format the command");
    const bool sent = WriteAll(command, static_cast<size_t>(size));
    redisFreeCommand(command);
    if (!sent) return nullptr;
    // Read until the reader has one whole reply; commands are never pipelined, so there is
    // nothing after it.
    while (true) {
      void* reply = nullptr;
      if (redisReaderGetReply(reader_, &reply) != REDIS_OK) {
        return Fail(absl::StrCat("protocol error: ", reader_->errstr));
      }
      if (reply != nullptr) {
        answered_ = true;
        return static_cast<redisReply*>(reply);
      }
      char buffer[16 << 10];
      const int n = SSL_read(ssl_, buffer, sizeof(buffer));
      if (n <= 0) return FailIo(n, "reading the reply");
      if (redisReaderFeed(reader_, buffer, static_cast<size_t>(n)) != REDIS_OK) {
        return Fail("out of memory");
      }
    }
  }
  std::string error() const override { return error_; }
  bool broken() const override { return broken_; }

 private:
  bool WriteAll(const char* data, size_t size) {
    while (size > 0) {
      const int n = SSL_write(ssl_, data, static_cast<int>(std::min<size_t>(size, 1 << 30)));
      if (n <= 0) {
        FailIo(n, "sending the command");
        return false;
      }
      data += n;
      size -= static_cast<size_t>(n);
    }
    return true;
  }

  // The socket's SO_RCVTIMEO/SO_SNDTIMEO bound every read and write: EAGAIN is a timeout.
  redisReply* FailIo(int result, absl::string_view what) {
    const int ssl_error = SSL_get_error(ssl_, result);
    if (ssl_error == SSL_ERROR_ZERO_RETURN) return Fail(absl::StrCat(what, ": closed by Redis"));
    if (ssl_error == SSL_ERROR_SYSCALL || ssl_error == SSL_ERROR_WANT_READ ||
        ssl_error == SSL_ERROR_WANT_WRITE) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return Fail(absl::StrCat(what, ": timed out"));
      if (errno != 0) return Fail(absl::StrCat(what, ": ", std::strerror(errno)));
      return Fail(absl::StrCat(what, ": connection closed"));
    }
    return Fail(absl::StrCat(what, ": ", OpenSslErrors("TLS error")));
  }

  redisReply* Fail(std::string why) {
    broken_ = true;
    error_ = std::move(why);
    // With TLS 1.3 a server that wants a client certificate rejects it after the handshake,
    // so the refusal shows up as the first command failing.
    if (!answered_) {
      absl::StrAppend(&error_,
                      " (first command after the TLS handshake: does Redis require a "
                      "client certificate? --shared-cache-tls-cert/--shared-cache-tls-key)");
    }
    ERR_clear_error();
    return nullptr;
  }

  const int fd_;
  SSL* const ssl_;
  const std::shared_ptr<const RedisTlsContext> tls_;  // keeps SSL_CTX alive
  redisReader* const reader_;
  bool broken_ = false;
  bool answered_ = false;  // a reply came back on this connection
  std::string error_;
};

// A connected TCP socket, blocking, with every read and write bounded by `timeout`.
absl::StatusOr<int> ConnectTcp(const std::string& host, int port, absl::Duration timeout) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* addresses = nullptr;
  const std::string service = std::to_string(port);
  if (int failed = getaddrinfo(host.c_str(), service.c_str(), &hints, &addresses); failed != 0) {
    return absl::UnavailableError(absl::StrCat("resolving ", host, ": ", gai_strerror(failed)));
  }
  std::string last_error = "no address";
  const int timeout_ms = static_cast<int>(absl::ToInt64Milliseconds(timeout));
  for (addrinfo* a = addresses; a != nullptr; a = a->ai_next) {
    const int fd =
        socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) {
      last_error = std::strerror(errno);
      continue;
    }
    int result = connect(fd, a->ai_addr, a->ai_addrlen);
    if (result != 0 && errno == EINPROGRESS) {
      pollfd p{.fd = fd, .events = POLLOUT, .revents = 0};
      result = poll(&p, 1, timeout_ms);
      if (result == 0) {
        last_error = "connect timed out";
        close(fd);
        continue;
      }
      int error = 0;
      socklen_t length = sizeof(error);
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
      if (result < 0 || error != 0) {
        last_error = std::strerror(result < 0 ? errno : error);
        close(fd);
        continue;
      }
    } else if (result != 0) {
      last_error = std::strerror(errno);
      close(fd);
      continue;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    const timeval tv = absl::ToTimeval(timeout);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    freeaddrinfo(addresses);
    return fd;
  }
  freeaddrinfo(addresses);
  return absl::UnavailableError(last_error);
}

bool IsIpAddress(const std::string& host) {
  in6_addr v6;
  in_addr v4;
  return inet_pton(AF_INET, host.c_str(), &v4) == 1 || inet_pton(AF_INET6, host.c_str(), &v6) == 1;
}

}  // namespace

absl::StatusOr<std::shared_ptr<const RedisTlsContext>> RedisTlsContext::Make(
    const RedisTlsFiles& files) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) return absl::InternalError(OpenSslErrors("SSL_CTX_new failed"));
  std::shared_ptr<const RedisTlsContext> made(new RedisTlsContext(ctx));
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  const bool loaded = files.ca.empty()
                          ? SSL_CTX_set_default_verify_paths(ctx) == 1
                          : SSL_CTX_load_verify_locations(ctx, files.ca.c_str(), nullptr) == 1;
  if (!loaded) {
    return absl::InvalidArgumentError(
        absl::StrCat("--shared-cache-tls-ca ", files.ca.empty() ? "(system default)" : files.ca,
                     ": cannot load CA certificates: ", OpenSslErrors("no certificate")));
  }
  if (files.cert.empty() != files.key.empty()) {
    return absl::InvalidArgumentError(
        "--shared-cache-tls-cert and --shared-cache-tls-key go together: give both or neither");
  }
  if (!files.cert.empty()) {
    if (SSL_CTX_use_certificate_chain_file(ctx, files.cert.c_str()) != 1) {
      return absl::InvalidArgumentError(absl::StrCat("--shared-cache-tls-cert ", files.cert, ": ",
                                                     OpenSslErrors("unusable certificate")));
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, files.key.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(ctx) != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--shared-cache-tls-key ", files.key, ": ", OpenSslErrors("unusable key")));
    }
  }
  return made;
}

RedisTlsContext::~RedisTlsContext() { SSL_CTX_free(ctx_); }

absl::StatusOr<std::unique_ptr<RedisConnection>> ConnectPlain(const std::string& host, int port,
                                                              absl::Duration timeout) {
  redisContext* context = redisConnectWithTimeout(host.c_str(), port, absl::ToTimeval(timeout));
  if (context == nullptr) return absl::UnavailableError("out of memory");
  if (context->err != 0) {
    absl::Status status = absl::UnavailableError(context->errstr);
    redisFree(context);
    return status;
  }
  redisSetTimeout(context, absl::ToTimeval(timeout));
  return std::make_unique<PlainConnection>(context);
}

absl::StatusOr<std::unique_ptr<RedisConnection>> ConnectTls(
    const std::string& host, int port, absl::Duration timeout,
    std::shared_ptr<const RedisTlsContext> tls) {
  absl::StatusOr<int> fd = ConnectTcp(host, port, timeout);
  if (!fd.ok()) return fd.status();
  SSL* ssl = SSL_new(tls->ctx());
  if (ssl == nullptr) {
    close(*fd);
    return absl::UnavailableError(OpenSslErrors("SSL_new failed"));
  }
  // The certificate must name what the URL names: a DNS name (also sent as SNI) or an IP.
  bool named = false;
  if (IsIpAddress(host)) {
    named = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str()) == 1;
  } else {
    named =
        SSL_set_tlsext_host_name(ssl, host.c_str()) == 1 && SSL_set1_host(ssl, host.c_str()) == 1;
  }
  if (!named || SSL_set_fd(ssl, *fd) != 1) {
    SSL_free(ssl);
    close(*fd);
    return absl::UnavailableError(OpenSslErrors("cannot set up the TLS session"));
  }
  if (SSL_connect(ssl) != 1) {
    const long verify = SSL_get_verify_result(ssl);
    std::string why =
        verify != X509_V_OK
            ? absl::StrCat("certificate verify failed: ", X509_verify_cert_error_string(verify),
                           " (is --shared-cache-tls-ca the CA that signed Redis' "
                           "certificate, and does it name ",
                           host, "?)")
            : OpenSslErrors(errno == EAGAIN ? "timed out" : "handshake failed");
    ERR_clear_error();
    SSL_free(ssl);
    close(*fd);
    return absl::UnavailableError(absl::StrCat("TLS handshake: ", why));
  }
  return std::make_unique<TlsConnection>(*fd, ssl, std::move(tls));
}

}  // namespace tccd::cache
