// The gRPC transport: tccd.v1.Tccd on the callback API, adapting each RPC to
// CompileService.
//
// Why the callback API rather than the sync one: at job start hundreds of ranks
// send the same Compile at once, and all but one wait for the single compile.
// With the sync API each waiting RPC holds a server thread, and when the thread
// quota runs out gRPC answers new calls with RESOURCE_EXHAUSTED. Here a waiting
// RPC is a queued callback (see single_flight.h): no thread is held, so the
// number of waiting clients is bounded by memory, not threads. Blocking work
// (Prepare, RocksDB reads) never runs on gRPC's own threads: it goes to the
// request pool, and compiles to the compile pool, whose size bounds concurrent
// compiles.
//
// Why raw (ByteBuffer) methods: gRPC 1.51's generated callback handlers answer
// a request that fails to parse with UNIMPLEMENTED and no message, which a
// client would read as "this method does not exist". We parse ourselves (on the
// request pool: a 256 MiB request takes a while) and answer INVALID_ARGUMENT
// naming the message type.
//
// Every handler ends its call exactly once (UnaryFinisher), including when an
// exception escapes the domain code: that becomes INTERNAL for that call, never
// a crash.
#include "server/grpc_server.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "spdlog/spdlog.h"
#include "tccd/v1/tccd.grpc.pb.h"

namespace tccd::server {
namespace {

// FetchArtifact chunk size: well under every client's default 4 MiB receive
// limit.
constexpr size_t kChunkBytes = 1 << 20;

// The one absl::Status -> grpc::Status conversion. Both use the canonical codes
// 0..16.
grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  const int code = static_cast<int>(status.code());
  const grpc::StatusCode grpc_code =
      code > 0 && code <= grpc::StatusCode::UNAUTHENTICATED
          ? static_cast<grpc::StatusCode>(code)
          : grpc::StatusCode::UNKNOWN;
  return grpc::Status(grpc_code, std::string(status.message()));
}

absl::Status InternalFromException(absl::string_view method,
                                   absl::string_view what) {
  spdlog::error("{}: uncaught exception: {}", std::string(method),
                std::string(what));
  return absl::InternalError(
      absl::StrCat("tccd internal error in ", method, ": ", what));
}

// Finishes a unary call exactly once, whichever path (the handler's callback,
// an exception, a cancellation check) gets there first.
class UnaryFinisher {
 public:
  explicit UnaryFinisher(grpc::ServerUnaryReactor* reactor)
      : reactor_(reactor) {}
  void Finish(const absl::Status& status) {
    if (!finished_.exchange(true)) reactor_->Finish(ToGrpcStatus(status));
  }

 private:
  grpc::ServerUnaryReactor* const reactor_;
  std::atomic<bool> finished_{false};
};

// Runs `body` on `pool`; an exception escaping it answers the call with
// INTERNAL.
template <typename Body>
void RunOnPool(ThreadPool* pool, absl::string_view method,
               const std::shared_ptr<UnaryFinisher>& finisher, Body body) {
  auto task = [method, finisher, body = std::move(body)]() mutable {
    try {
      body();
    } catch (const std::exception& e) {
      finisher->Finish(InternalFromException(method, e.what()));
    } catch (...) {
      finisher->Finish(InternalFromException(method, "non-std exception"));
    }
  };
  try {
    pool->Schedule(std::move(task));
  } catch (const std::exception& e) {
    finisher->Finish(InternalFromException(method, e.what()));
  }
}

// Parses `buffer` as a `Message`; INVALID_ARGUMENT if it is not one.
template <typename Message>
absl::Status ParseRequest(grpc::ByteBuffer& buffer, Message* message) {
  if (!grpc::SerializationTraits<Message>::Deserialize(&buffer, message).ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the request is not a valid ",
                     Message::descriptor()->full_name(), " message"));
  }
  return absl::OkStatus();
}

template <typename Message>
absl::Status SerializeResponse(const Message& message,
                               grpc::ByteBuffer* buffer) {
  bool own_buffer = false;
  grpc::ByteBuffer serialized;
  if (!grpc::SerializationTraits<Message>::Serialize(message, &serialized,
                                                     &own_buffer)
           .ok()) {
    return absl::InternalError(
        absl::StrCat("tccd internal error: cannot serialize a ",
                     Message::descriptor()->full_name()));
  }
  buffer->Swap(&serialized);
  return absl::OkStatus();
}

// One unary call: parses the request on `pool`, runs `handler(request,
// &response, done)`, and once `done(status)` is called serializes the response
// and finishes the call. The request and response live until `done` runs.
template <typename Request, typename Response, typename Handler>
grpc::ServerUnaryReactor* ServeUnary(grpc::CallbackServerContext* context,
                                     const grpc::ByteBuffer* raw_request,
                                     grpc::ByteBuffer* raw_response,
                                     CompileService* service, ThreadPool* pool,
                                     absl::string_view method,
                                     Handler handler) {
  struct Call {
    Request request;
    Response response;
  };
  // DefaultReactor() constructs the reactor anew on each call: call it exactly
  // once.
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  auto finisher = std::make_shared<UnaryFinisher>(reactor);
  // Shares the slices; the caller's buffer stays gRPC's.
  auto buffer = std::make_shared<grpc::ByteBuffer>(*raw_request);
  RunOnPool(
      pool, method, finisher,
      [context, buffer, raw_response, service, method, finisher,
       handler = std::move(handler)]() mutable {
        if (context->IsCancelled()) {
          finisher->Finish(absl::CancelledError("cancelled by the client"));
          return;
        }
        auto call = std::make_shared<Call>();
        absl::Status parsed = ParseRequest(*buffer, &call->request);
        buffer.reset();
        if (!parsed.ok()) {
          service->RecordUnparsableRequest();
          spdlog::warn("{} rejected: {}", std::string(method),
                       std::string(parsed.message()));
          finisher->Finish(parsed);
          return;
        }
        handler(call->request, &call->response,
                [call, raw_response, finisher](absl::Status status) {
                  if (status.ok())
                    status = SerializeResponse(call->response, raw_response);
                  finisher->Finish(status);
                });
      });
  return reactor;
}

// Streams one artifact: the blob is read on the request pool, then written
// chunk by chunk, each write started when the previous one completes (so gRPC
// flow control paces us).
class FetchReactor final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  FetchReactor(CompileService* service, ThreadPool* pool,
               const grpc::ByteBuffer& raw_request) {
    // `this` stays valid until OnDone, which cannot come before Finish.
    auto read = [this, service,
                 buffer = grpc::ByteBuffer(raw_request)]() mutable {
      absl::StatusOr<std::string> blob;
      try {
        v1::FetchArtifactRequest request;
        absl::Status parsed = ParseRequest(buffer, &request);
        if (parsed.ok()) {
          blob = service->ReadArtifact(request.digest());
        } else {
          service->RecordUnparsableRequest();
          spdlog::warn("FetchArtifact rejected: {}",
                       std::string(parsed.message()));
          blob = parsed;
        }
      } catch (const std::exception& e) {
        blob = InternalFromException("FetchArtifact", e.what());
      }
      if (!blob.ok()) {
        Finish(ToGrpcStatus(blob.status()));
        return;
      }
      blob_ = *std::move(blob);
      WriteNext();
    };
    try {
      pool->Schedule(std::move(read));
    } catch (const std::exception& e) {
      Finish(ToGrpcStatus(InternalFromException("FetchArtifact", e.what())));
    }
  }

  void OnWriteDone(bool ok) override {
    if (!ok) {
      // The client went away mid-stream; the call still has to be finished.
      Finish(grpc::Status(grpc::StatusCode::CANCELLED,
                          "artifact stream interrupted"));
      return;
    }
    WriteNext();
  }

  void OnDone() override { delete this; }

 private:
  void WriteNext() {
    // An empty artifact is sent as one empty chunk, so total_size always
    // arrives.
    if (sent_any_ && offset_ >= blob_.size()) {
      Finish(grpc::Status::OK);
      return;
    }
    const size_t n = std::min(kChunkBytes, blob_.size() - offset_);
    v1::ArtifactChunk chunk;
    chunk.set_data(blob_.data() + offset_, n);
    chunk.set_offset(static_cast<int64_t>(offset_));
    chunk.set_total_size(static_cast<int64_t>(blob_.size()));
    offset_ += n;
    sent_any_ = true;
    if (absl::Status serialized = SerializeResponse(chunk, &chunk_);
        !serialized.ok()) {
      Finish(ToGrpcStatus(serialized));
      return;
    }
    StartWrite(&chunk_);
  }

  std::string blob_;
  size_t offset_ = 0;
  bool sent_any_ = false;
  grpc::ByteBuffer chunk_;  // must stay alive until its write completes
};

using RawService = v1::Tccd::WithRawCallbackMethod_Compile<
    v1::Tccd::WithRawCallbackMethod_FetchArtifact<
        v1::Tccd::WithRawCallbackMethod_GetStats<
            v1::Tccd::WithRawCallbackMethod_GetJob<v1::Tccd::Service>>>>;

class TccdService final : public RawService {
 public:
  TccdService(CompileService* service, ThreadPool* pool)
      : service_(service), pool_(pool) {}

  grpc::ServerUnaryReactor* Compile(grpc::CallbackServerContext* context,
                                    const grpc::ByteBuffer* request,
                                    grpc::ByteBuffer* response) override {
    const CompileService::Clock::time_point received =
        CompileService::Clock::now();
    return ServeUnary<v1::CompileRequest, v1::CompileResponse>(
        context, request, response, service_, pool_, "Compile",
        [this, received](const v1::CompileRequest& request,
                         v1::CompileResponse* response,
                         CompileService::Done done) {
          service_->Compile(request, response, std::move(done), received);
        });
  }

  grpc::ServerWriteReactor<grpc::ByteBuffer>* FetchArtifact(
      grpc::CallbackServerContext* /*context*/,
      const grpc::ByteBuffer* request) override {
    return new FetchReactor(service_, pool_, *request);
  }

  grpc::ServerUnaryReactor* GetStats(grpc::CallbackServerContext* context,
                                     const grpc::ByteBuffer* request,
                                     grpc::ByteBuffer* response) override {
    return ServeUnary<v1::StatsRequest, v1::StatsResponse>(
        context, request, response, service_, pool_, "GetStats",
        [this](const v1::StatsRequest&, v1::StatsResponse* response,
               CompileService::Done done) {
          *response = service_->GetStats();
          done(absl::OkStatus());
        });
  }

  grpc::ServerUnaryReactor* GetJob(grpc::CallbackServerContext* context,
                                   const grpc::ByteBuffer* request,
                                   grpc::ByteBuffer* response) override {
    return ServeUnary<v1::JobRequest, v1::JobResponse>(
        context, request, response, service_, pool_, "GetJob",
        [this](const v1::JobRequest& request, v1::JobResponse* response,
               CompileService::Done done) {
          absl::StatusOr<v1::JobResponse> job = service_->GetJob(request);
          if (job.ok()) *response = *std::move(job);
          done(job.status());
        });
  }

 private:
  CompileService* const service_;
  ThreadPool* const pool_;
};

bool IsTcp(const ListenAddress& address) {
  return address.unix_path.empty() &&
         !absl::StartsWith(address.uri, "unix-abstract:");
}

// "host:0" with the port gRPC picked.
std::string WithPort(const std::string& uri, int port) {
  return absl::StrCat(uri.substr(0, uri.rfind(':')), ":", port);
}

}  // namespace

struct RpcServer::Impl {
  std::unique_ptr<TccdService> service;
  std::unique_ptr<grpc::Server> server;
  bool shut_down = false;
};

RpcServer::RpcServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

RpcServer::~RpcServer() {
  if (impl_ != nullptr) Shutdown(absl::ZeroDuration());
}

absl::StatusOr<std::unique_ptr<RpcServer>> RpcServer::Start(
    const RpcServerOptions& options, CompileService* service,
    ThreadPool* request_pool) {
  if (options.listen.empty())
    return absl::InvalidArgumentError("no address to listen on");
  grpc::EnableDefaultHealthCheckService(
      true);  // grpc.health.v1, SERVING until Shutdown

  auto impl = std::make_unique<Impl>();
  impl->service = std::make_unique<TccdService>(service, request_pool);

  grpc::ServerBuilder builder;
  builder.SetMaxReceiveMessageSize(options.max_request_bytes);
  // gRPC enables SO_REUSEPORT by default, which would let a second tccd bind
  // the same TCP port and silently split the traffic; a port in use must be an
  // error instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  std::vector<int> ports(options.listen.size(), 0);
  for (size_t i = 0; i < options.listen.size(); ++i) {
    builder.AddListeningPort(options.listen[i].uri,
                             grpc::InsecureServerCredentials(), &ports[i]);
  }
  builder.RegisterService(impl->service.get());
  impl->server = builder.BuildAndStart();
  if (impl->server == nullptr) {
    std::vector<std::string> failed;
    for (size_t i = 0; i < options.listen.size(); ++i) {
      if (ports[i] == 0) failed.push_back(options.listen[i].uri);
    }
    if (failed.empty()) {
      for (const ListenAddress& address : options.listen)
        failed.push_back(address.uri);
    }
    return absl::FailedPreconditionError(
        absl::StrCat("cannot listen on ", absl::StrJoin(failed, ", "),
                     " (address in use, not permitted, or not resolvable)"));
  }

  std::vector<std::string> bound;
  for (size_t i = 0; i < options.listen.size(); ++i) {
    const ListenAddress& address = options.listen[i];
    bound.push_back(IsTcp(address) && absl::EndsWith(address.uri, ":0")
                        ? WithPort(address.uri, ports[i])
                        : address.uri);
  }
  std::unique_ptr<RpcServer> server(new RpcServer(std::move(impl)));
  server->bound_addresses_ = std::move(bound);
  return server;
}

void RpcServer::Shutdown(absl::Duration deadline) {
  if (impl_->shut_down) return;
  impl_->shut_down = true;
  if (grpc::HealthCheckServiceInterface* health =
          impl_->server->GetHealthCheckService()) {
    health->Shutdown();  // NOT_SERVING for everyone still watching
  }
  // Stops accepting at once; waits for in-flight calls until the deadline, then
  // cancels them. Either way it returns only once every call has been finished
  // by its handler.
  impl_->server->Shutdown(absl::ToChronoTime(absl::Now() + deadline));
  impl_->server->Wait();
}

}  // namespace tccd::server
