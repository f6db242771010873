// The per-call arena's packing (codegen/plan_runtime/runtime/tccd_plan_arena.h): buffers whose
// live intervals of plan steps are disjoint share bytes, others never overlap, offsets aligned.
#include "codegen/plan_runtime/runtime/tccd_plan_arena.h"

#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

namespace {

struct Packed {
  int64_t total;
  std::vector<int64_t> offsets;
};

Packed Pack(const std::vector<int64_t>& bytes, const std::vector<int64_t>& start,
            const std::vector<int64_t>& end, int64_t align = 256) {
  Packed p{0, std::vector<int64_t>(bytes.size(), -1)};
  p.total = tccd_arena_pack(static_cast<int64_t>(bytes.size()), bytes.data(), start.data(),
                            end.data(), align, p.offsets.data());
  return p;
}

TEST_CASE("Buffers live at different steps share the arena's bytes", "[arena]") {
  const Packed p = Pack({1000, 600}, {0, 2}, {1, 3});
  CHECK(p.offsets == std::vector<int64_t>{0, 0});
  CHECK(p.total == 1024);
}

TEST_CASE("Buffers live at once are placed apart, at aligned offsets", "[arena]") {
  const Packed p = Pack({1000, 600, 8}, {0, 0, 1}, {2, 1, 2});
  CHECK(p.offsets == std::vector<int64_t>{0, 1024, 1792});
  CHECK(p.total == 2048);
}

TEST_CASE("A step that reads one buffer and defines another keeps them apart", "[arena]") {
  // [0, 1] is released after step 1, which defines [1, 2]: both are live at step 1.
  const Packed p = Pack({512, 512}, {0, 1}, {1, 2});
  CHECK(p.offsets == std::vector<int64_t>{0, 512});
}

TEST_CASE("First fit takes the lowest gap that holds the buffer", "[arena]") {
  // A long-lived buffer below, two short ones above it in turn, then one that fits the gap the
  // second short one left only if it is small enough.
  const Packed p = Pack({256, 256, 256, 512, 256}, {0, 0, 2, 2, 2}, {9, 1, 3, 3, 3});
  CHECK(p.offsets[0] == 0);
  CHECK(p.offsets[1] == 256);
  CHECK(p.offsets[2] == 256);   // B's bytes, free again at step 2
  CHECK(p.offsets[3] == 512);   // above C
  CHECK(p.offsets[4] == 1024);  // above D
  CHECK(p.total == 1280);
}

TEST_CASE("Empty buffers take no space; no buffers, no arena", "[arena]") {
  const Packed p = Pack({0, 100}, {0, 0}, {5, 5});
  CHECK(p.offsets == std::vector<int64_t>{0, 0});
  CHECK(p.total == 256);
  CHECK(Pack({}, {}, {}).total == 0);
}

}  // namespace
