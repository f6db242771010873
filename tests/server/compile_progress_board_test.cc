// CompileProgressBoard: a waiting call sees its flight queued, then its kernels, and nothing once
// detached; a compile past the threshold is logged once (checked through `logged` indirectly: the
// board keeps answering after it).
#include "server/compile_progress_board.h"

#include <catch2/catch.hpp>

namespace tccd::server {
namespace {

TEST_CASE("progress: unknown, queued, compiling with kernels, gone after detach", "[progress]") {
  CompileProgressBoard board(absl::ZeroDuration());
  CHECK(!board.Get("call-1").known());

  board.Attach("call-1", "key-a", CompileProgressBoard::Clock::now());
  board.Attach("call-2", "key-a", CompileProgressBoard::Clock::now());  // a dedup follower
  v1::CompileProgress p = board.Get("call-1");
  CHECK(p.known());
  CHECK(p.phase() == "queued");
  CHECK(p.key() == "key-a");

  board.Started("key-a", "backward");
  CompileProgressBoard::Sink sink(&board, "key-a");
  sink.KernelsDone(3, 40);
  for (const char* id : {"call-1", "call-2"}) {
    p = board.Get(id);
    CHECK(p.phase() == "compiling");
    CHECK(p.graph_name() == "backward");
    CHECK(p.kernels_done() == 3);
    CHECK(p.kernels_total() == 40);
    CHECK(p.elapsed_ms() >= 0);
  }
  board.KernelsDone("key-other", 1, 1);  // no such compile: ignored
  board.Ended("key-a");
  CHECK(board.Get("call-1").phase() == "queued");  // attached until answered
  board.Detach("call-1");
  board.Detach("call-2");
  CHECK(!board.Get("call-1").known());
  CHECK(!board.Get("call-2").known());
}

TEST_CASE("codegen's KernelProgress reports the start and every kernel", "[progress]") {
  struct Recorder : codegen::CompileProgress {
    std::vector<std::pair<int, int>> seen;
    void KernelsDone(int done, int total) override { seen.emplace_back(done, total); }
  } recorder;
  codegen::KernelProgress progress(&recorder, 2, 5);
  progress.KernelDone();
  progress.KernelDone();
  CHECK(recorder.seen == std::vector<std::pair<int, int>>{{2, 5}, {3, 5}, {4, 5}});
  codegen::KernelProgress silent(nullptr, 0, 1);  // no sink: counting only
  silent.KernelDone();
}

}  // namespace
}  // namespace tccd::server
