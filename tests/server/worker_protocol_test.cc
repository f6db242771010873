// The daemon <-> compile worker wire: frames over a socketpair, the result encoding round trip,
// and the failures the pool relies on (end of stream, a deadline, a bad length, garbage).
#include "server/worker_protocol.h"

#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

namespace tccd::server {
namespace {

struct SocketPair {
  SocketPair() { REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0); }
  ~SocketPair() {
    for (int fd : fds)
      if (fd >= 0) close(fd);
  }
  int fds[2] = {-1, -1};
};

TEST_CASE("worker frames: what is written is read back, empty included") {
  SocketPair p;
  REQUIRE(WriteFrame(p.fds[0], "hello").ok());
  REQUIRE(WriteFrame(p.fds[0], "").ok());
  CHECK(*ReadFrame(p.fds[1]) == "hello");
  CHECK(ReadFrame(p.fds[1])->empty());
}

TEST_CASE(
    "worker frames: a closed peer is UNAVAILABLE, silence past the deadline DEADLINE_EXCEEDED") {
  SocketPair p;
  absl::StatusOr<std::string> silent = ReadFrame(p.fds[1], absl::Now() + absl::Milliseconds(50));
  CHECK(absl::IsDeadlineExceeded(silent.status()));
  close(p.fds[0]);
  p.fds[0] = -1;
  CHECK(absl::IsUnavailable(ReadFrame(p.fds[1]).status()));
  CHECK(absl::IsUnavailable(WriteFrame(p.fds[1], "x")));
}

TEST_CASE("worker frames: an absurd length is DATA_LOSS, not an allocation") {
  SocketPair p;
  const std::string header(8, '\xff');
  REQUIRE(write(p.fds[0], header.data(), header.size()) == 8);
  CHECK(absl::IsDataLoss(ReadFrame(p.fds[1]).status()));
}

TEST_CASE("worker results: output and errors survive the encoding") {
  codegen::CompileOutput output;
  output.plan.set_num_inputs(3);
  output.num_fused_kernels = 2;
  output.num_extern_steps = 1;
  output.artifacts.push_back(
      {.name = "kernels.so", .kind = v1::CPU_SHARED_OBJECT, .bytes = std::string("\0ELF", 4)});
  output.artifacts.push_back({.name = "graph.txt", .kind = v1::TEXT, .bytes = ""});
  WorkerResult result{.output = output, .compile_ms = 12.5};
  absl::StatusOr<WorkerResult> decoded = DecodeWorkerResult(EncodeWorkerResult(result));
  REQUIRE(decoded.ok());
  REQUIRE(decoded->output.ok());
  CHECK(decoded->compile_ms == 12.5);
  CHECK(decoded->output->plan.num_inputs() == 3);
  CHECK(decoded->output->num_fused_kernels == 2);
  CHECK(decoded->output->num_extern_steps == 1);
  REQUIRE(decoded->output->artifacts.size() == 2);
  CHECK(decoded->output->artifacts[0].bytes == std::string("\0ELF", 4));
  CHECK(decoded->output->artifacts[0].kind == v1::CPU_SHARED_OBJECT);
  CHECK(decoded->output->artifacts[1].name == "graph.txt");
  CHECK(decoded->output->kernels_compiled == 0);
  CHECK(decoded->output->new_kernel_objects.empty());

  WorkerResult failed{.output = absl::InvalidArgumentError("node 3: bad dtype")};
  decoded = DecodeWorkerResult(EncodeWorkerResult(failed));
  REQUIRE(decoded.ok());
  CHECK(absl::IsInvalidArgument(decoded->output.status()));
  CHECK(decoded->output.status().message() == "node 3: bad dtype");
}

TEST_CASE("worker results: truncated or trailing bytes are INTERNAL") {
  WorkerResult result{.output = codegen::CompileOutput{}};
  const std::string good = EncodeWorkerResult(result);
  CHECK(absl::IsInternal(DecodeWorkerResult(good.substr(0, good.size() - 1)).status()));
  CHECK(absl::IsInternal(DecodeWorkerResult(good + "x").status()));
  CHECK(absl::IsInternal(DecodeWorkerResult("").status()));
}

TEST_CASE("worker results carry the kernel counts and the new kernel objects") {
  codegen::CompileOutput output;
  output.kernels_compiled = 2;
  output.kernels_reused = 5;
  output.new_kernel_objects = {{std::string(64, 'a'), std::string("\0obj1", 5)},
                               {std::string(64, 'b'), ""}};
  const std::string frame = EncodeWorkerResult({.output = output});
  CHECK(WorkerFrameTag(frame) == static_cast<int64_t>(kResultTag));
  absl::StatusOr<WorkerResult> decoded = DecodeWorkerResult(frame);
  REQUIRE(decoded.ok());
  REQUIRE(decoded->output.ok());
  CHECK(decoded->output->kernels_compiled == 2);
  CHECK(decoded->output->kernels_reused == 5);
  REQUIRE(decoded->output->new_kernel_objects.size() == 2);
  CHECK(decoded->output->new_kernel_objects[0].key == std::string(64, 'a'));
  CHECK(decoded->output->new_kernel_objects[0].bytes == std::string("\0obj1", 5));
  CHECK(decoded->output->new_kernel_objects[1].bytes.empty());
}

TEST_CASE("kernel lookups and their answers round trip; malformed ones are INTERNAL") {
  const std::vector<std::string> keys = {std::string(64, 'a'), std::string(64, 'c')};
  const std::string lookup = EncodeKernelLookup(keys);
  CHECK(WorkerFrameTag(lookup) == static_cast<int64_t>(kKernelLookupTag));
  absl::StatusOr<std::vector<std::string>> decoded_keys = DecodeKernelLookup(lookup);
  REQUIRE(decoded_keys.ok());
  CHECK(*decoded_keys == keys);
  CHECK(absl::IsInternal(DecodeKernelLookup(lookup + "x").status()));
  CHECK(absl::IsInternal(
      DecodeKernelLookup(EncodeWorkerResult({.output = codegen::CompileOutput{}})).status()));
  CHECK(WorkerFrameTag("") == -1);

  absl::flat_hash_map<std::string, std::string> objects = {{keys[0], "bytes of a"}};
  const std::string answer = EncodeKernelObjects(objects);
  absl::StatusOr<absl::flat_hash_map<std::string, std::string>> decoded =
      DecodeKernelObjects(answer);
  REQUIRE(decoded.ok());
  CHECK(*decoded == objects);
  CHECK(absl::IsInternal(DecodeKernelObjects(answer.substr(0, answer.size() - 1)).status()));
  CHECK(DecodeKernelObjects(EncodeKernelObjects({}))->empty());
}

TEST_CASE("progress reports round trip; malformed or impossible ones are INTERNAL") {
  const std::string report = EncodeProgress(3, 40);
  CHECK(WorkerFrameTag(report) == static_cast<int64_t>(kProgressTag));
  int done = -1, total = -1;
  REQUIRE(DecodeProgress(report, &done, &total).ok());
  CHECK(done == 3);
  CHECK(total == 40);
  CHECK(absl::IsInternal(DecodeProgress(report + "x", &done, &total)));
  CHECK(absl::IsInternal(DecodeProgress(report.substr(0, 20), &done, &total)));
  CHECK(absl::IsInternal(DecodeProgress(EncodeProgress(41, 40), &done, &total)));  // done > total
  CHECK(absl::IsInternal(DecodeProgress(EncodeKernelLookup({}), &done, &total)));
}

}  // namespace
}  // namespace tccd::server
