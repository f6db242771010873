// Workspace packing (workspace_packing.h), text in and text out: one buffer per line,
// "<name> <bytes> <first>..<last>", becomes "<name> @<offset>" lines and the workspace's size.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "codegen/cuda_host/workspace_packing.h"

namespace tccd::codegen {
namespace {

struct Parsed {
  std::vector<std::string> names;
  std::vector<WorkspaceBuffer> buffers;
};

Parsed Parse(const std::string& text) {
  Parsed p;
  std::istringstream in(text);
  std::string name, span;
  int64_t bytes = 0;
  while (in >> name >> bytes >> span) {
    const size_t dots = span.find("..");
    REQUIRE(dots != std::string::npos);
    p.names.push_back(name);
    p.buffers.push_back({.bytes = bytes,
                         .first = std::stoi(span.substr(0, dots)),
                         .last = std::stoi(span.substr(dots + 2))});
  }
  return p;
}

std::string Pack(const std::string& text) {
  const Parsed p = Parse(text);
  const WorkspaceLayout layout = PackWorkspace(p.buffers);
  REQUIRE(layout.offsets.size() == p.buffers.size());
  // Whatever the heuristic, buffers with meeting lifetimes never share a byte.
  for (size_t a = 0; a < p.buffers.size(); ++a)
    for (size_t b = a + 1; b < p.buffers.size(); ++b) {
      const bool live_together =
          !(p.buffers[a].last < p.buffers[b].first || p.buffers[b].last < p.buffers[a].first);
      const bool share = layout.offsets[a] < layout.offsets[b] + p.buffers[b].bytes &&
                         layout.offsets[b] < layout.offsets[a] + p.buffers[a].bytes;
      INFO(p.names[a] << " and " << p.names[b]);
      CHECK(!(live_together && share));
    }
  CHECK(layout.bytes >= WorkspaceLowerBound(p.buffers));
  std::ostringstream out;
  for (size_t i = 0; i < p.names.size(); ++i)
    out << p.names[i] << " @" << layout.offsets[i] << "\n";
  out << "bytes " << layout.bytes << "\n";
  return out.str();
}

TEST_CASE("an empty segment needs no workspace", "[workspace]") {
  CHECK(Pack("") == "bytes 0\n");
  CHECK(WorkspaceLowerBound({}) == 0);
}

TEST_CASE("buffers whose lifetimes are disjoint share bytes", "[workspace]") {
  CHECK(Pack("a 1024 0..1\n"
             "b 1024 2..3\n"
             "c 512 4..4\n") ==
        "a @0\n"
        "b @0\n"
        "c @0\n"
        "bytes 1024\n");
}

TEST_CASE("a buffer read last by a step and one that step writes do not share bytes",
          "[workspace]") {
  CHECK(Pack("a 256 0..1\n"
             "b 256 1..2\n") ==
        "a @0\n"
        "b @256\n"
        "bytes 512\n");
}

TEST_CASE("a large buffer placed first leaves its gap to the small ones", "[workspace]") {
  // In definition order c lands above a and b (4 KiB); placed first, it takes offset 0 and a
  // fits under it before c's lifetime starts: the lower bound, b + c at step 1.
  const char* in =
      "a 1024 0..0\n"
      "b 1024 0..1\n"
      "c 2048 1..2\n";
  CHECK(Pack(in) ==
        "a @0\n"
        "b @2048\n"
        "c @0\n"
        "bytes 3072\n");
  CHECK(WorkspaceLowerBound(Parse(in).buffers) == 3072);
}

TEST_CASE("on a tie the definition-order layout is kept", "[workspace]") {
  // Both orders need 3 KiB; definition order puts a at 0, size order would put b there.
  CHECK(Pack("a 1024 0..2\n"
             "b 2048 1..3\n") ==
        "a @0\n"
        "b @1024\n"
        "bytes 3072\n");
}

}  // namespace
}  // namespace tccd::codegen
