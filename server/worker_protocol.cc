// Frames and the result encoding; see worker_protocol.h.
#include "server/worker_protocol.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"

namespace tccd::server {
namespace {

void PutU64(std::string* out, uint64_t v) {
  char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(v >> (8 * i));
  out->append(bytes, 8);
}
void PutStr(std::string* out, absl::string_view s) {
  PutU64(out, s.size());
  out->append(s.data(), s.size());
}

class Reader {
 public:
  explicit Reader(absl::string_view data) : data_(data) {}
  bool U64(uint64_t* v) {
    if (data_.size() < 8) return false;
    *v = 0;
    for (int i = 0; i < 8; ++i) *v |= uint64_t{static_cast<unsigned char>(data_[i])} << (8 * i);
    data_.remove_prefix(8);
    return true;
  }
  bool Str(std::string* s) {
    uint64_t n = 0;
    if (!U64(&n) || n > data_.size()) return false;
    s->assign(data_.data(), n);
    data_.remove_prefix(n);
    return true;
  }
  bool done() const { return data_.empty(); }

 private:
  absl::string_view data_;
};

absl::Status WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return absl::UnavailableError(
          absl::StrCat("writing to the compile worker: ", strerror(errno)));
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status ReadAll(int fd, char* data, size_t size, absl::Time deadline) {
  while (size > 0) {
    if (deadline != absl::InfiniteFuture()) {
      const int64_t ms = absl::ToInt64Milliseconds(deadline - absl::Now());
      if (ms <= 0) return absl::DeadlineExceededError("time limit");
      pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
      const int ready = poll(&p, 1, static_cast<int>(std::min<int64_t>(ms, 1 << 30)));
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) continue;  // re-checks the deadline
    }
    const ssize_t n = read(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return absl::UnavailableError("end of stream");
    if (n < 0) return absl::UnavailableError(strerror(errno));
    data += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteFrame(int fd, absl::string_view payload) {
  std::string header;
  PutU64(&header, payload.size());
  if (absl::Status s = WriteAll(fd, header.data(), header.size()); !s.ok()) return s;
  return WriteAll(fd, payload.data(), payload.size());
}

absl::StatusOr<std::string> ReadFrame(int fd, absl::Time deadline) {
  char header[8];
  if (absl::Status s = ReadAll(fd, header, 8, deadline); !s.ok()) return s;
  uint64_t size = 0;
  Reader(absl::string_view(header, 8)).U64(&size);
  if (size > kMaxWorkerFrameBytes) {
    return absl::DataLossError(absl::StrCat("frame of ", size, " bytes"));
  }
  std::string payload(size, '\0');
  if (absl::Status s = ReadAll(fd, payload.data(), size, deadline); !s.ok()) return s;
  return payload;
}

std::string EncodeWorkerResult(const WorkerResult& result) {
  std::string out;
  PutU64(&out, kResultTag);
  const absl::Status status = result.output.status();
  PutU64(&out, static_cast<uint64_t>(status.code()));
  PutStr(&out, status.message());
  uint64_t ms_bits = 0;
  static_assert(sizeof(double) == sizeof(uint64_t));
  std::memcpy(&ms_bits, &result.compile_ms, sizeof(ms_bits));
  PutU64(&out, ms_bits);
  if (!status.ok()) return out;
  const codegen::CompileOutput& output = *result.output;
  PutStr(&out, output.plan.SerializeAsString());
  PutU64(&out, static_cast<uint64_t>(output.num_fused_kernels));
  PutU64(&out, static_cast<uint64_t>(output.num_extern_steps));
  PutU64(&out, output.artifacts.size());
  for (const codegen::ArtifactBytes& artifact : output.artifacts) {
    PutStr(&out, artifact.name);
    PutU64(&out, static_cast<uint64_t>(artifact.kind));
    PutStr(&out, artifact.bytes);
  }
  PutU64(&out, static_cast<uint64_t>(output.kernels_compiled));
  PutU64(&out, static_cast<uint64_t>(output.kernels_reused));
  PutU64(&out, output.new_kernel_objects.size());
  for (const codegen::KernelObject& object : output.new_kernel_objects) {
    PutStr(&out, object.key);
    PutStr(&out, object.bytes);
  }
  return out;
}

int64_t WorkerFrameTag(absl::string_view payload) {
  uint64_t tag = 0;
  if (!Reader(payload).U64(&tag) || tag > kProgressTag) return -1;
  return static_cast<int64_t>(tag);
}

std::string EncodeProgress(int done, int total) {
  std::string out;
  PutU64(&out, kProgressTag);
  PutU64(&out, static_cast<uint64_t>(done));
  PutU64(&out, static_cast<uint64_t>(total));
  return out;
}

absl::Status DecodeProgress(absl::string_view payload, int* done, int* total) {
  Reader in(payload);
  uint64_t tag = 0, d = 0, t = 0;
  // Counts of one graph's kernels: anything past int range is garbage, not a big graph.
  if (!in.U64(&tag) || tag != kProgressTag || !in.U64(&d) || !in.U64(&t) || !in.done() || d > t ||
      t > (uint64_t{1} << 30)) {
    return absl::InternalError("the compile worker sent a malformed progress report");
  }
  *done = static_cast<int>(d);
  *total = static_cast<int>(t);
  return absl::OkStatus();
}

std::string EncodeKernelLookup(absl::Span<const std::string> keys) {
  std::string out;
  PutU64(&out, kKernelLookupTag);
  PutU64(&out, keys.size());
  for (const std::string& key : keys) PutStr(&out, key);
  return out;
}

absl::StatusOr<std::vector<std::string>> DecodeKernelLookup(absl::string_view payload) {
  const absl::Status malformed =
      absl::InternalError("the compile worker sent a malformed kernel lookup");
  Reader in(payload);
  uint64_t tag = 0, count = 0;
  if (!in.U64(&tag) || tag != kKernelLookupTag || !in.U64(&count)) return malformed;
  std::vector<std::string> keys;
  for (uint64_t i = 0; i < count; ++i) {
    std::string key;
    if (!in.Str(&key)) return malformed;
    keys.push_back(std::move(key));
  }
  if (!in.done()) return malformed;
  return keys;
}

std::string EncodeKernelObjects(const absl::flat_hash_map<std::string, std::string>& objects) {
  std::string out;
  PutU64(&out, objects.size());
  for (const auto& [key, bytes] : objects) {
    PutStr(&out, key);
    PutStr(&out, bytes);
  }
  return out;
}

absl::StatusOr<absl::flat_hash_map<std::string, std::string>> DecodeKernelObjects(
    absl::string_view payload) {
  const absl::Status malformed =
      absl::InternalError("the daemon sent a malformed kernel lookup answer");
  Reader in(payload);
  uint64_t count = 0;
  if (!in.U64(&count)) return malformed;
  absl::flat_hash_map<std::string, std::string> objects;
  for (uint64_t i = 0; i < count; ++i) {
    std::string key, bytes;
    if (!in.Str(&key) || !in.Str(&bytes)) return malformed;
    objects[std::move(key)] = std::move(bytes);
  }
  if (!in.done()) return malformed;
  return objects;
}

absl::StatusOr<WorkerResult> DecodeWorkerResult(absl::string_view payload) {
  const absl::Status malformed = absl::InternalError("the compile worker sent a malformed result");
  Reader in(payload);
  uint64_t tag = 0, code = 0, ms_bits = 0;
  std::string message;
  if (!in.U64(&tag) || tag != kResultTag || !in.U64(&code) || !in.Str(&message) ||
      !in.U64(&ms_bits))
    return malformed;
  WorkerResult result;
  std::memcpy(&result.compile_ms, &ms_bits, sizeof(ms_bits));
  if (code != 0) {
    if (code > 16) return malformed;
    result.output = absl::Status(static_cast<absl::StatusCode>(code), message);
    return result;
  }
  codegen::CompileOutput output;
  std::string plan;
  uint64_t fused = 0, externs = 0, count = 0;
  if (!in.Str(&plan) || !output.plan.ParseFromString(plan) || !in.U64(&fused) ||
      !in.U64(&externs) || !in.U64(&count)) {
    return malformed;
  }
  output.num_fused_kernels = static_cast<int>(fused);
  output.num_extern_steps = static_cast<int>(externs);
  for (uint64_t i = 0; i < count; ++i) {
    codegen::ArtifactBytes artifact;
    uint64_t kind = 0;
    if (!in.Str(&artifact.name) || !in.U64(&kind) || !in.Str(&artifact.bytes)) return malformed;
    artifact.kind = static_cast<v1::ArtifactKind>(kind);
    output.artifacts.push_back(std::move(artifact));
  }
  uint64_t compiled = 0, reused = 0, objects = 0;
  if (!in.U64(&compiled) || !in.U64(&reused) || !in.U64(&objects)) return malformed;
  output.kernels_compiled = static_cast<int>(compiled);
  output.kernels_reused = static_cast<int>(reused);
  for (uint64_t i = 0; i < objects; ++i) {
    codegen::KernelObject object;
    if (!in.Str(&object.key) || !in.Str(&object.bytes)) return malformed;
    output.new_kernel_objects.push_back(std::move(object));
  }
  if (!in.done()) return malformed;
  result.output = std::move(output);
  return result;
}

}  // namespace tccd::server
