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

#include <grpcpp/alarm.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/resource_quota.h>
#include <grpcpp/support/server_interceptor.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
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
  const grpc::StatusCode grpc_code = code > 0 && code <= grpc::StatusCode::UNAUTHENTICATED
                                         ? static_cast<grpc::StatusCode>(code)
                                         : grpc::StatusCode::UNKNOWN;
  return grpc::Status(grpc_code, std::string(status.message()));
}

absl::Status InternalFromException(absl::string_view method, absl::string_view what) {
  spdlog::error("{}: uncaught exception: {}", std::string(method), std::string(what));
  return absl::InternalError(absl::StrCat("tccd internal error in ", method, ": ", what));
}

// Finishes a unary call exactly once, whichever path (the handler's callback,
// an exception, a cancellation check, the server-side deadline) gets there
// first.
//
// Why a mutex and not just an atomic flag: the handler's path serializes the
// response into gRPC's response buffer, which gRPC may free as soon as the call
// is finished. Serializing under the same lock that decides "not finished yet"
// keeps the deadline path from finishing the call in the middle of that write.
class UnaryFinisher {
 public:
  explicit UnaryFinisher(grpc::ServerUnaryReactor* reactor) : reactor_(reactor) {}

  // Finishes with `status`; when it is OK, `serialize` (if any) runs first and
  // its error, if any, replaces it.
  void Finish(absl::Status status, const std::function<absl::Status()>& serialize = nullptr) {
    {
      absl::MutexLock lock(&mu_);
      if (finished_) return;
      finished_ = true;
      if (status.ok() && serialize) status = serialize();
    }
    reactor_->Finish(ToGrpcStatus(status));
  }

  // Whether the call is over for us: finished (e.g. by the deadline) or
  // cancelled by the client. Asks the context only while the call is
  // unfinished, because gRPC frees the context once it is.
  bool FinishedOrCancelled(grpc::CallbackServerContext* context) {
    absl::MutexLock lock(&mu_);
    return finished_ || context->IsCancelled();
  }

  // Answers DEADLINE_EXCEEDED after `limit` unless the call is finished first.
  // The alarm holds only a weak reference, so a finished call is not kept
  // alive by its alarm.
  static void ArmDeadline(const std::shared_ptr<UnaryFinisher>& finisher, absl::string_view method,
                          absl::Duration limit) {
    std::weak_ptr<UnaryFinisher> weak = finisher;
    finisher->deadline_.Set(absl::ToChronoTime(absl::Now() + limit),
                            [weak, method = std::string(method), limit](bool fired) {
                              if (!fired) return;  // cancelled: the finisher is going away
                              if (std::shared_ptr<UnaryFinisher> alive = weak.lock()) {
                                alive->Finish(absl::DeadlineExceededError(absl::StrCat(
                                    method, " exceeded the daemon's request deadline of ",
                                    absl::FormatDuration(limit), " (--request-deadline-s)")));
                              }
                            });
  }

 private:
  grpc::ServerUnaryReactor* const reactor_;
  absl::Mutex mu_;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Alarm deadline_;  // destroyed (and so cancelled) with the finisher
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
    return absl::InvalidArgumentError(absl::StrCat("the request is not a valid ",
                                                   Message::descriptor()->full_name(), " message"));
  }
  return absl::OkStatus();
}

template <typename Message>
absl::Status SerializeResponse(const Message& message, grpc::ByteBuffer* buffer) {
  bool own_buffer = false;
  grpc::ByteBuffer serialized;
  if (!grpc::SerializationTraits<Message>::Serialize(message, &serialized, &own_buffer).ok()) {
    return absl::InternalError(absl::StrCat("tccd internal error: cannot serialize a ",
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
                                     grpc::ByteBuffer* raw_response, CompileService* service,
                                     ThreadPool* pool, absl::Duration deadline,
                                     absl::string_view method, Handler handler) {
  struct Call {
    Request request;
    Response response;
  };
  // DefaultReactor() constructs the reactor anew on each call: call it exactly
  // once.
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  auto finisher = std::make_shared<UnaryFinisher>(reactor);
  UnaryFinisher::ArmDeadline(finisher, method, deadline);
  // Shares the slices; the caller's buffer stays gRPC's.
  auto buffer = std::make_shared<grpc::ByteBuffer>(*raw_request);
  RunOnPool(pool, method, finisher,
            [context, buffer, raw_response, service, method, finisher,
             handler = std::move(handler)]() mutable {
              if (finisher->FinishedOrCancelled(context)) {
                finisher->Finish(absl::CancelledError("cancelled by the client"));
                return;
              }
              auto call = std::make_shared<Call>();
              absl::Status parsed = ParseRequest(*buffer, &call->request);
              buffer.reset();
              if (!parsed.ok()) {
                service->RecordUnparsableRequest();
                spdlog::warn("{} rejected: {}", std::string(method), std::string(parsed.message()));
                finisher->Finish(parsed);
                return;
              }
              handler(call->request, &call->response,
                      [call, raw_response, finisher](absl::Status status) {
                        finisher->Finish(status, [&] {
                          return SerializeResponse(call->response, raw_response);
                        });
                      });
            });
  return reactor;
}

// Streams one artifact: the blob is read on the request pool, then written
// chunk by chunk, each write started when the previous one completes (so gRPC
// flow control paces us).
class FetchReactor final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  FetchReactor(grpc::CallbackServerContext* context, CompileService* service, ThreadPool* pool,
               absl::Duration deadline, const grpc::ByteBuffer& raw_request)
      : cancel_(std::make_shared<Canceller>(context)) {
    // A reader that stops reading would otherwise pin the blob in memory for
    // as long as it keeps the connection open. Cancelling (rather than
    // finishing) is what is allowed while a write is in flight: OnWriteDone
    // then finishes the call.
    deadline_.Set(absl::ToChronoTime(absl::Now() + deadline), [cancel = cancel_](bool fired) {
      if (fired) cancel->Cancel();
    });
    // `this` stays valid until OnDone, which cannot come before Finish.
    auto read = [this, service, buffer = grpc::ByteBuffer(raw_request)]() mutable {
      absl::StatusOr<std::string> blob;
      try {
        v1::FetchArtifactRequest request;
        absl::Status parsed = ParseRequest(buffer, &request);
        if (parsed.ok()) {
          blob = service->ReadArtifact(request.digest());
        } else {
          service->RecordUnparsableRequest();
          spdlog::warn("FetchArtifact rejected: {}", std::string(parsed.message()));
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
      Finish(grpc::Status(grpc::StatusCode::CANCELLED, "artifact stream interrupted"));
      return;
    }
    WriteNext();
  }

  void OnDone() override {
    cancel_->Forget();
    delete this;
  }

 private:
  // Cancels the call from the deadline alarm's thread, unless the call is
  // already done (its context is gone by then).
  class Canceller {
   public:
    explicit Canceller(grpc::CallbackServerContext* context) : context_(context) {}
    void Cancel() {
      absl::MutexLock lock(&mu_);
      if (context_ != nullptr) context_->TryCancel();
    }
    void Forget() {
      absl::MutexLock lock(&mu_);
      context_ = nullptr;
    }

   private:
    absl::Mutex mu_;
    grpc::CallbackServerContext* context_ ABSL_GUARDED_BY(mu_);
  };

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
    if (absl::Status serialized = SerializeResponse(chunk, &chunk_); !serialized.ok()) {
      Finish(ToGrpcStatus(serialized));
      return;
    }
    StartWrite(&chunk_);
  }

  std::string blob_;
  size_t offset_ = 0;
  bool sent_any_ = false;
  grpc::ByteBuffer chunk_;  // must stay alive until its write completes
  std::shared_ptr<Canceller> cancel_;
  grpc::Alarm deadline_;  // cancelled when the reactor is deleted
};

// Counts every finished call by method and status code (Metrics::RecordRequest). An
// interceptor sees the status each path sends, the handlers', the auth refusals' and the
// deadline's alike, so no handler has to remember to count.
class RequestMetricsInterceptor final : public grpc::experimental::Interceptor {
 public:
  RequestMetricsInterceptor(Metrics* metrics, const char* method)
      : metrics_(metrics), method_(method != nullptr ? method : "") {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_STATUS)) {
      metrics_->RecordRequest(method_,
                              static_cast<absl::StatusCode>(methods->GetSendStatus().error_code()));
    }
    methods->Proceed();
  }

 private:
  Metrics* const metrics_;
  const std::string method_;
};

class RequestMetricsInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit RequestMetricsInterceptorFactory(Metrics* metrics) : metrics_(metrics) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new RequestMetricsInterceptor(metrics_, info->method());
  }

 private:
  Metrics* const metrics_;
};

using RawService = v1::Tccd::WithRawCallbackMethod_Compile<
    v1::Tccd::WithRawCallbackMethod_FetchArtifact<v1::Tccd::WithRawCallbackMethod_GetStats<
        v1::Tccd::WithRawCallbackMethod_GetJob<v1::Tccd::WithRawCallbackMethod_GetInfo<
            v1::Tccd::WithRawCallbackMethod_GetCompileProgress<
                v1::Tccd::WithRawCallbackMethod_GetManifest<
                    v1::Tccd::WithRawCallbackMethod_PutAotRecipe<
                        v1::Tccd::WithRawCallbackMethod_GetAotRecipe<
                            v1::Tccd::WithRawCallbackMethod_PutDynamicProfile<
                                v1::Tccd::WithRawCallbackMethod_GetDynamicProfile<
                                    v1::Tccd::WithRawCallbackMethod_PutGemmTunes<
                                        v1::Tccd::WithRawCallbackMethod_GetGemmTunes<
                                            v1::Tccd::Service>>>>>>>>>>>>>;

class TccdService final : public RawService {
 public:
  TccdService(CompileService* service, ThreadPool* pool, absl::Duration request_deadline,
              const TokenAuthorizer* tokens)
      : service_(service), pool_(pool), request_deadline_(request_deadline), tokens_(tokens) {}

  // Every method first authenticates the call (auth_grpc.h); the per-request rules
  // (auth_tokens.h) run once the request is parsed.
  grpc::ServerUnaryReactor* Compile(grpc::CallbackServerContext* context,
                                    const grpc::ByteBuffer* request,
                                    grpc::ByteBuffer* response) override {
    const CompileService::Clock::time_point received = CompileService::Clock::now();
    auto who = AuthenticateCall(tokens_, *context, "Compile");
    if (!who.ok()) return RefuseUnary(context, ToGrpcStatus(who.status()));
    return ServeUnary<v1::CompileRequest, v1::CompileResponse>(
        context, request, response, service_, pool_, request_deadline_, "Compile",
        [this, received, who = *who](const v1::CompileRequest& request,
                                     v1::CompileResponse* response, CompileService::Done done) {
          if (who.has_value()) {
            if (absl::Status allowed = AllowCompile(*who, request.job_id()); !allowed.ok()) {
              return done(allowed);
            }
          }
          service_->Compile(request, response, std::move(done), received,
                            /*hits_only=*/who.has_value() && who->role == Role::kRead);
        });
  }

  grpc::ServerWriteReactor<grpc::ByteBuffer>* FetchArtifact(
      grpc::CallbackServerContext* context, const grpc::ByteBuffer* request) override {
    auto who = AuthenticateCall(tokens_, *context, "FetchArtifact");
    if (!who.ok()) return RefuseStream(ToGrpcStatus(who.status()));
    return new FetchReactor(context, service_, pool_, request_deadline_, *request);
  }

  grpc::ServerUnaryReactor* GetStats(grpc::CallbackServerContext* context,
                                     const grpc::ByteBuffer* request,
                                     grpc::ByteBuffer* response) override {
    auto who = AuthenticateCall(tokens_, *context, "GetStats");
    if (!who.ok()) return RefuseUnary(context, ToGrpcStatus(who.status()));
    if (who->has_value()) {
      if (absl::Status allowed = AllowStats(**who); !allowed.ok()) {
        return RefuseUnary(context, ToGrpcStatus(allowed));
      }
    }
    return ServeUnary<v1::StatsRequest, v1::StatsResponse>(
        context, request, response, service_, pool_, request_deadline_, "GetStats",
        [this](const v1::StatsRequest&, v1::StatsResponse* response, CompileService::Done done) {
          *response = service_->GetStats();
          done(absl::OkStatus());
        });
  }

  grpc::ServerUnaryReactor* GetJob(grpc::CallbackServerContext* context,
                                   const grpc::ByteBuffer* request,
                                   grpc::ByteBuffer* response) override {
    auto who = AuthenticateCall(tokens_, *context, "GetJob");
    if (!who.ok()) return RefuseUnary(context, ToGrpcStatus(who.status()));
    return ServeUnary<v1::JobRequest, v1::JobResponse>(
        context, request, response, service_, pool_, request_deadline_, "GetJob",
        [this, who = *who](const v1::JobRequest& request, v1::JobResponse* response,
                           CompileService::Done done) {
          if (who.has_value()) {
            if (absl::Status allowed = AllowJob(*who, request.job_id()); !allowed.ok()) {
              return done(allowed);
            }
          }
          absl::StatusOr<v1::JobResponse> job = service_->GetJob(request);
          if (job.ok()) *response = *std::move(job);
          done(job.status());
        });
  }

  grpc::ServerUnaryReactor* GetInfo(grpc::CallbackServerContext* context,
                                    const grpc::ByteBuffer* request,
                                    grpc::ByteBuffer* response) override {
    auto who = AuthenticateCall(tokens_, *context, "GetInfo");
    if (!who.ok()) return RefuseUnary(context, ToGrpcStatus(who.status()));
    return ServeUnary<v1::InfoRequest, v1::InfoResponse>(
        context, request, response, service_, pool_, request_deadline_, "GetInfo",
        [this](const v1::InfoRequest&, v1::InfoResponse* response, CompileService::Done done) {
          *response = service_->GetInfo();
          done(absl::OkStatus());
        });
  }

  grpc::ServerUnaryReactor* GetCompileProgress(grpc::CallbackServerContext* context,
                                               const grpc::ByteBuffer* request,
                                               grpc::ByteBuffer* response) override {
    auto who = AuthenticateCall(tokens_, *context, "GetCompileProgress");
    if (!who.ok()) return RefuseUnary(context, ToGrpcStatus(who.status()));
    return ServeUnary<v1::CompileProgressRequest, v1::CompileProgress>(
        context, request, response, service_, pool_, request_deadline_, "GetCompileProgress",
        [this](const v1::CompileProgressRequest& request, v1::CompileProgress* response,
               CompileService::Done done) {
          *response = service_->GetCompileProgress(request);
          done(absl::OkStatus());
        });
  }

  grpc::ServerUnaryReactor* GetManifest(grpc::CallbackServerContext* context,
                                        const grpc::ByteBuffer* request,
                                        grpc::ByteBuffer* response) override {
    auto who = AuthenticateCall(tokens_, *context, "GetManifest");
    if (!who.ok()) return RefuseUnary(context, ToGrpcStatus(who.status()));
    return ServeUnary<v1::ManifestRequest, v1::Manifest>(
        context, request, response, service_, pool_, request_deadline_, "GetManifest",
        [this](const v1::ManifestRequest& request, v1::Manifest* response,
               CompileService::Done done) {
          absl::StatusOr<v1::Manifest> manifest = service_->GetManifest(request);
          if (manifest.ok()) *response = *std::move(manifest);
          done(manifest.status());
        });
  }

  grpc::ServerUnaryReactor* PutAotRecipe(grpc::CallbackServerContext* context,
                                         const grpc::ByteBuffer* request,
                                         grpc::ByteBuffer* response) override {
    auto who = AuthenticateCall(tokens_, *context, "PutAotRecipe");
    if (!who.ok()) return RefuseUnary(context, ToGrpcStatus(who.status()));
    if (who->has_value()) {
      if (absl::Status allowed = AllowWrite(**who); !allowed.ok())
        return RefuseUnary(context, ToGrpcStatus(allowed));
    }
    return ServeUnary<v1::AotRecipe, v1::PutAotRecipeResponse>(
        context, request, response, service_, pool_, request_deadline_, "PutAotRecipe",
        [this](const v1::AotRecipe& request, v1::PutAotRecipeResponse*, CompileService::Done done) {
          done(service_->PutAotRecipe(request));
        });
  }

  grpc::ServerUnaryReactor* GetAotRecipe(grpc::CallbackServerContext* context,
                                         const grpc::ByteBuffer* request,
                                         grpc::ByteBuffer* response) override {
    auto who = AuthenticateCall(tokens_, *context, "GetAotRecipe");
    if (!who.ok()) return RefuseUnary(context, ToGrpcStatus(who.status()));
    return ServeUnary<v1::AotRecipeRequest, v1::AotRecipe>(
        context, request, response, service_, pool_, request_deadline_, "GetAotRecipe",
        [this](const v1::AotRecipeRequest& request, v1::AotRecipe* response,
               CompileService::Done done) {
          absl::StatusOr<v1::AotRecipe> recipe = service_->GetAotRecipe(request);
          if (recipe.ok()) *response = *std::move(recipe);
          done(recipe.status());
        });
  }

  // Profiles: writing needs a compile or admin token for the job; reading is open to every
  // token whose prefix allows the job (read tokens included), as GetJob.
  grpc::ServerUnaryReactor* PutDynamicProfile(grpc::CallbackServerContext* context,
                                              const grpc::ByteBuffer* request,
                                              grpc::ByteBuffer* response) override {
    auto who = AuthenticateCall(tokens_, *context, "PutDynamicProfile");
    if (!who.ok()) return RefuseUnary(context, ToGrpcStatus(who.status()));
    return ServeUnary<v1::DynamicProfile, v1::DynamicProfile>(
        context, request, response, service_, pool_, request_deadline_, "PutDynamicProfile",
        [this, who = *who](const v1::DynamicProfile& request, v1::DynamicProfile* response,
                           CompileService::Done done) {
          if (who.has_value()) {
            if (absl::Status allowed = AllowJobWrite(*who, request.job_id()); !allowed.ok()) {
              return done(allowed);
            }
          }
          absl::StatusOr<v1::DynamicProfile> merged = service_->PutDynamicProfile(request);
          if (merged.ok()) *response = *std::move(merged);
          done(merged.status());
        });
  }

  grpc::ServerUnaryReactor* GetDynamicProfile(grpc::CallbackServerContext* context,
                                              const grpc::ByteBuffer* request,
                                              grpc::ByteBuffer* response) override {
    auto who = AuthenticateCall(tokens_, *context, "GetDynamicProfile");
    if (!who.ok()) return RefuseUnary(context, ToGrpcStatus(who.status()));
    return ServeUnary<v1::DynamicProfileRequest, v1::DynamicProfile>(
        context, request, response, service_, pool_, request_deadline_, "GetDynamicProfile",
        [this, who = *who](const v1::DynamicProfileRequest& request, v1::DynamicProfile* response,
                           CompileService::Done done) {
          if (who.has_value()) {
            if (absl::Status allowed = AllowJob(*who, request.job_id()); !allowed.ok()) {
              return done(allowed);
            }
          }
          absl::StatusOr<v1::DynamicProfile> profile = service_->GetDynamicProfile(request);
          if (profile.ok()) *response = *std::move(profile);
          done(profile.status());
        });
  }

  // Gemm tunes belong to no job: writing needs a compile or admin token (as AOT recipes),
  // reading any token.
  grpc::ServerUnaryReactor* PutGemmTunes(grpc::CallbackServerContext* context,
                                         const grpc::ByteBuffer* request,
                                         grpc::ByteBuffer* response) override {
    auto who = AuthenticateCall(tokens_, *context, "PutGemmTunes");
    if (!who.ok()) return RefuseUnary(context, ToGrpcStatus(who.status()));
    if (who->has_value()) {
      if (absl::Status allowed = AllowWrite(**who); !allowed.ok())
        return RefuseUnary(context, ToGrpcStatus(allowed));
    }
    return ServeUnary<v1::GemmTuneTable, v1::GemmTuneTable>(
        context, request, response, service_, pool_, request_deadline_, "PutGemmTunes",
        [this](const v1::GemmTuneTable& request, v1::GemmTuneTable* response,
               CompileService::Done done) {
          absl::StatusOr<v1::GemmTuneTable> table = service_->PutGemmTunes(request);
          if (table.ok()) *response = *std::move(table);
          done(table.status());
        });
  }

  grpc::ServerUnaryReactor* GetGemmTunes(grpc::CallbackServerContext* context,
                                         const grpc::ByteBuffer* request,
                                         grpc::ByteBuffer* response) override {
    auto who = AuthenticateCall(tokens_, *context, "GetGemmTunes");
    if (!who.ok()) return RefuseUnary(context, ToGrpcStatus(who.status()));
    return ServeUnary<v1::GemmTuneRequest, v1::GemmTuneTable>(
        context, request, response, service_, pool_, request_deadline_, "GetGemmTunes",
        [this](const v1::GemmTuneRequest& request, v1::GemmTuneTable* response,
               CompileService::Done done) {
          absl::StatusOr<v1::GemmTuneTable> table = service_->GetGemmTunes(request);
          if (table.ok()) *response = *std::move(table);
          done(table.status());
        });
  }

 private:
  CompileService* const service_;
  ThreadPool* const pool_;
  const absl::Duration request_deadline_;
  const TokenAuthorizer* const tokens_;  // null: no tokens required
};

bool IsTcp(const ListenAddress& address) {
  return address.unix_path.empty() && !absl::StartsWith(address.uri, "unix-abstract:");
}

// "host:0" with the port gRPC picked.
std::string WithPort(const std::string& uri, int port) {
  return absl::StrCat(uri.substr(0, uri.rfind(':')), ":", port);
}

// Bounds what one peer, or all peers together, can make the daemon hold; see
// README "Hostile peers". A misbehaving peer gets its connection closed, the
// daemon keeps serving everyone else.
void ApplyPeerLimits(const RpcServerOptions& options, grpc::ServerBuilder* builder) {
  // All request bytes gRPC buffers, over every connection. Without it, junk
  // traffic (many connections each announcing large messages) grew the daemon
  // from ~100 MB to ~570 MB.
  grpc::ResourceQuota quota("tccd-requests");
  quota.Resize(static_cast<size_t>(options.max_inflight_request_bytes));
  builder->SetResourceQuota(quota);
  builder->AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, options.max_concurrent_streams);
  // Request headers are a few hundred bytes; 16 KiB leaves room for proxies'
  // additions and refuses header floods.
  builder->AddChannelArgument(GRPC_ARG_MAX_METADATA_SIZE, 16 << 10);
  // A connection must finish its HTTP/2 handshake promptly; one that opens a
  // socket and sends nothing (slowloris) is closed after this.
  builder->AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, 20'000);
  // Keepalive enforcement: a peer pinging more often than every 10 s without
  // data gets strikes, and after 2 its connection is closed (GOAWAY
  // too_many_pings). Our client does not ping at all.
  builder->AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 10'000);
  builder->AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 2);
  // The server pings idle connections every 2 minutes and drops those whose
  // peer does not answer in 20 s: a vanished host (no FIN) frees its memory.
  builder->AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 120'000);
  builder->AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 20'000);
  // A connection with no call for 30 minutes is closed with GOAWAY; a real
  // client reconnects transparently on its next call.
  builder->AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS, 30 * 60 * 1000);
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

absl::StatusOr<std::unique_ptr<RpcServer>> RpcServer::Start(const RpcServerOptions& options,
                                                            CompileService* service,
                                                            ThreadPool* request_pool) {
  if (options.listen.empty()) return absl::InvalidArgumentError("no address to listen on");
  grpc::EnableDefaultHealthCheckService(true);  // grpc.health.v1, SERVING until Shutdown

  auto impl = std::make_unique<Impl>();
  impl->service = std::make_unique<TccdService>(service, request_pool, options.request_deadline,
                                                options.tokens);

  grpc::ServerBuilder builder;
  builder.SetMaxReceiveMessageSize(options.max_request_bytes);
  // gRPC enables SO_REUSEPORT by default, which would let a second tccd bind
  // the same TCP port and silently split the traffic; a port in use must be an
  // error instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  ApplyPeerLimits(options, &builder);
  std::vector<int> ports(options.listen.size(), 0);
  for (size_t i = 0; i < options.listen.size(); ++i) {
    builder.AddListeningPort(options.listen[i].uri,
                             IsTcp(options.listen[i]) ? TcpServerCredentials(options.tls)
                                                      : grpc::InsecureServerCredentials(),
                             &ports[i]);
  }
  builder.RegisterService(impl->service.get());
  if (options.metrics != nullptr) {
    std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
        interceptors;
    interceptors.push_back(std::make_unique<RequestMetricsInterceptorFactory>(options.metrics));
    builder.experimental().SetInterceptorCreators(std::move(interceptors));
  }
  impl->server = builder.BuildAndStart();
  if (impl->server == nullptr) {
    std::vector<std::string> failed;
    for (size_t i = 0; i < options.listen.size(); ++i) {
      if (ports[i] == 0) failed.push_back(options.listen[i].uri);
    }
    if (failed.empty()) {
      for (const ListenAddress& address : options.listen) failed.push_back(address.uri);
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
  if (grpc::HealthCheckServiceInterface* health = impl_->server->GetHealthCheckService()) {
    health->Shutdown();  // NOT_SERVING for everyone still watching
  }
  // Stops accepting at once; waits for in-flight calls until the deadline, then
  // cancels them. Either way it returns only once every call has been finished
  // by its handler.
  impl_->server->Shutdown(absl::ToChronoTime(absl::Now() + deadline));
  impl_->server->Wait();
}

}  // namespace tccd::server
