// Replays the fuzzers' seed corpora and every past finding (tests/fuzz/regressions/) through the
// fuzz checks (fuzz_targets.h) in the normal build: CI re-checks each of them on every run, with
// or without clang and libFuzzer. A finding's input goes to regressions/<target>/<bug>.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "spdlog/spdlog.h"
#include "tests/fuzz/fuzz_targets.h"

namespace tccd::fuzz {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> Inputs(const std::string& target) {
  std::vector<fs::path> files;
  for (const char* dir : {"tests/fuzz/corpus/", "tests/fuzz/regressions/"}) {
    const fs::path root = fs::path(dir) / target;
    if (!fs::exists(root)) continue;
    for (const auto& entry : fs::directory_iterator(root))
      if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string Read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

void Replay(const std::string& target, absl::Status (*check)(const uint8_t*, size_t)) {
  spdlog::set_level(spdlog::level::warn);
  const std::vector<fs::path> files = Inputs(target);
  REQUIRE(files.size() > 0);  // run from the repository root (ctest does)
  for (const fs::path& file : files) {
    const std::string bytes = Read(file);
    const absl::Status status = check(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    INFO(file.string());
    CHECK(status.ToString() == "OK");
  }
}

TEST_CASE("request seeds and past request findings are handled (no INTERNAL, no crash)", "[fuzz]") {
  Replay("request", CheckRequest);
}

TEST_CASE("IR text seeds and past IR findings round-trip and verify cleanly", "[fuzz]") {
  Replay("ir_text", CheckIrText);
}

}  // namespace
}  // namespace tccd::fuzz
