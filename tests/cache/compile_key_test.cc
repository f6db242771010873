// ComputeCompileKey: stable, sensitive to every part, blind to map insertion
// order, and free of concatenation collisions.
#include "cache/compile_key.h"

#include <catch2/catch.hpp>
#include <string>

#include "cache/digest.h"

namespace tccd::cache {
namespace {

CompileKeyParts BaseParts() {
  CompileKeyParts parts;
  parts.canonical_graph = "graph(%0: f32[4, 8]) {\n  %1 = aten::relu(%0)\n  return %1\n}\n";
  parts.target = "cpu:x86_64-unknown-linux-gnu/x86-64-v3";
  parts.mode = "default";
  parts.options = {{"fuse", "1"}, {"unroll", "4"}};
  parts.tccd_version = "0.1.0";
  return parts;
}

TEST_CASE("compile key is a stable digest of equal parts", "[cache][compile_key]") {
  const std::string key = ComputeCompileKey(BaseParts());
  CHECK(IsDigestHex(key));
  CHECK(ComputeCompileKey(BaseParts()) == key);
  // Pinned: the encoding must not change without bumping kCompileKeyVersion
  // (and then this).
  STATIC_REQUIRE(kCompileKeyVersion == 1);
  CHECK(key == "478721929320d1451e6611def004d3477adf7d459a0dd06e3f9dac8e3f7fce5a");
}

TEST_CASE("compile key changes when any part changes", "[cache][compile_key]") {
  const std::string base = ComputeCompileKey(BaseParts());
  CompileKeyParts parts = BaseParts();

  SECTION("graph") { parts.canonical_graph += " "; }
  SECTION("target") { parts.target = "cpu:aarch64-unknown-linux-gnu/generic"; }
  SECTION("mode") { parts.mode = "max-autotune"; }
  SECTION("an option value") { parts.options["unroll"] = "8"; }
  SECTION("an option name") {
    parts.options.erase("unroll");
    parts.options["unrol"] = "4";
  }
  SECTION("an added option") { parts.options["extra"] = ""; }
  SECTION("a removed option") { parts.options.erase("fuse"); }
  SECTION("tccd version") { parts.tccd_version = "0.1.1"; }

  CHECK(ComputeCompileKey(parts) != base);
}

TEST_CASE("compile key ignores option insertion order", "[cache][compile_key]") {
  CompileKeyParts a = BaseParts();
  CompileKeyParts b = BaseParts();
  a.options.clear();
  b.options.clear();
  a.options.emplace("z", "1");
  a.options.emplace("a", "2");
  a.options.emplace("m", "3");
  b.options.emplace("m", "3");
  b.options.emplace("z", "1");
  b.options.emplace("a", "2");
  CHECK(ComputeCompileKey(a) == ComputeCompileKey(b));
}

TEST_CASE("compile key has no concatenation collisions", "[cache][compile_key]") {
  CompileKeyParts a = BaseParts();
  CompileKeyParts b = BaseParts();
  SECTION("between fields") {
    a.canonical_graph = "ab";
    a.target = "c";
    b.canonical_graph = "a";
    b.target = "bc";
  }
  SECTION("between an option's name and value") {
    a.options = {{"ab", "c"}};
    b.options = {{"a", "bc"}};
  }
  SECTION("between options and the next field") {
    a.options = {{"k", "v"}};
    a.tccd_version = "1";
    b.options = {{"k", "v1"}};
    b.tccd_version = "";
  }
  SECTION("empty option versus no option") {
    a.options = {};
    b.options = {{"", ""}};
  }
  CHECK(ComputeCompileKey(a) != ComputeCompileKey(b));
}

}  // namespace
}  // namespace tccd::cache
