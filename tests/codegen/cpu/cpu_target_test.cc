// CpuTargetFromFeatures: /proc/cpuinfo flags -> x86-64 ISA level.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "codegen/cpu/cpu_backend.h"

namespace tccd::codegen {
namespace {

const std::vector<std::string> kV2 = {"fpu",    "sse",    "sse2",   "cx16", "lahf_lm",
                                      "popcnt", "sse4_1", "sse4_2", "ssse3"};
const std::vector<std::string> kV3Extra = {"avx", "avx2", "bmi1",  "bmi2", "f16c",
                                           "fma", "abm",  "movbe", "xsave"};
const std::vector<std::string> kV4Extra = {"avx512f", "avx512bw", "avx512cd", "avx512dq",
                                           "avx512vl"};

std::vector<std::string> Join(std::vector<std::vector<std::string>> lists) {
  std::vector<std::string> all;
  for (auto& l : lists) all.insert(all.end(), l.begin(), l.end());
  return all;
}

std::string Level(const std::vector<std::string>& flags, const std::string& arch = "x86_64") {
  absl::StatusOr<CpuTarget> target = CpuTargetFromFeatures(arch, flags);
  REQUIRE(target.ok());
  CHECK(target->triple == "x86_64-unknown-linux-gnu");
  return target->cpu;
}

std::vector<std::string> Without(std::vector<std::string> flags, const std::string& drop) {
  std::erase(flags, drop);
  return flags;
}

TEST_CASE("ISA levels from cpuinfo flags", "[cpu_target]") {
  CHECK(Level({}) == "x86-64");
  CHECK(Level({"fpu", "sse", "sse2"}) == "x86-64");
  CHECK(Level(kV2) == "x86-64-v2");
  CHECK(Level(Join({kV2, kV3Extra})) == "x86-64-v3");
  CHECK(Level(Join({kV2, kV3Extra, kV4Extra})) == "x86-64-v4");
  CHECK(Level(Join({kV2, kV3Extra, kV4Extra}), "amd64") == "x86-64-v4");
}

TEST_CASE("a missing feature drops to the level below", "[cpu_target]") {
  CHECK(Level(Without(kV2, "sse4_2")) == "x86-64");
  CHECK(Level(Without(Join({kV2, kV3Extra}), "f16c")) == "x86-64-v2");
  CHECK(Level(Without(Join({kV2, kV3Extra}), "abm")) == "x86-64-v2");
  CHECK(Level(Without(Join({kV2, kV3Extra, kV4Extra}), "avx512vl")) == "x86-64-v3");
  // Higher-level flags without the lower level count for nothing.
  CHECK(Level(Join({kV3Extra, kV4Extra})) == "x86-64");
  CHECK(Level(Join({Without(kV2, "popcnt"), kV3Extra, kV4Extra})) == "x86-64");
}

TEST_CASE("lzcnt may be spelled lzcnt instead of abm", "[cpu_target]") {
  std::vector<std::string> flags = Without(Join({kV2, kV3Extra}), "abm");
  flags.push_back("lzcnt");
  CHECK(Level(flags) == "x86-64-v3");
}

TEST_CASE("unsupported architectures are INVALID_ARGUMENT", "[cpu_target]") {
  for (const char* arch : {"riscv64", "aarch64", "", "i686"}) {
    absl::StatusOr<CpuTarget> target = CpuTargetFromFeatures(arch, kV2);
    CHECK(target.status().code() == absl::StatusCode::kInvalidArgument);
  }
}

TEST_CASE("KeyString names triple and level", "[cpu_target]") {
  CpuTarget target;
  target.cpu = "x86-64-v3";
  CHECK(target.KeyString() == "x86_64-unknown-linux-gnu/x86-64-v3");
  // 256-bit kernels of an AVX-512 level never share an object with the default 512-bit ones.
  target.wide_vectors = false;
  CHECK(target.KeyString() == "x86_64-unknown-linux-gnu/x86-64-v3/256-bit");
}

}  // namespace
}  // namespace tccd::codegen
