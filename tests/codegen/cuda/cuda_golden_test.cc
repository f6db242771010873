// Golden generated code: for the fixed corpus of cuda_test_kernels.h, the CUDA source and the
// sm_90 PTX must stay byte-identical to tests/codegen/cuda/golden/<case>.{cu,ptx} unless a change
// means it. When it does, regenerate and commit the diff:
//   tests/codegen/cuda/update_golden.sh      (or TCCD_UPDATE_GOLDEN=1 cuda_backend_test "[golden]")
//
// The PTX depends on the NVRTC version too: golden/NVRTC_VERSION records the one that wrote the
// files, and with any other NVRTC the PTX comparison is skipped with a warning (the source
// comparison always runs).
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "codegen/cuda/cuda_backend.h"
#include "cuda_test_kernels.h"

#ifndef TCCD_CUDA_GOLDEN_DIR
#error "TCCD_CUDA_GOLDEN_DIR must name tests/codegen/cuda/golden (set by CMake)"
#endif

namespace tccd::codegen::cuda_testing {
namespace {

constexpr char kHowToUpdate[] =
    "If the change is intended, regenerate the golden files with "
    "tests/codegen/cuda/update_golden.sh (or run cuda_backend_test \"[golden]\" with "
    "TCCD_UPDATE_GOLDEN=1) and commit the diff.";

bool Updating() {
  const char* v = std::getenv("TCCD_UPDATE_GOLDEN");
  return v != nullptr && std::string(v) == "1";
}

std::string GoldenPath(const std::string& file) {
  return std::string(TCCD_CUDA_GOLDEN_DIR) + "/" + file;
}

bool ReadFile(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  out = s.str();
  return true;
}

// Temp file + rename, so an interrupted update never leaves a half-written golden file.
void WriteFile(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    REQUIRE(out.good());
    out << bytes;
    REQUIRE(out.good());
  }
  REQUIRE(std::rename(tmp.c_str(), path.c_str()) == 0);
}

// The first line where `actual` and `expected` differ, for the failure message.
std::string FirstDifference(const std::string& actual, const std::string& expected) {
  std::istringstream a(actual), e(expected);
  std::string la, le;
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(a, la));
    const bool more_e = static_cast<bool>(std::getline(e, le));
    if (!more_a && !more_e) return "(they differ only in line endings)";
    if (la != le || more_a != more_e) {
      return "line " + std::to_string(line) + ":\n  golden:    " + (more_e ? le : "<end>") +
             "\n  generated: " + (more_a ? la : "<end>");
    }
  }
}

void CheckGolden(const std::string& file, const std::string& actual) {
  const std::string path = GoldenPath(file);
  if (Updating()) {
    WriteFile(path, actual);
    WARN("updated " << path);
    return;
  }
  std::string expected;
  if (!ReadFile(path, expected)) FAIL("missing golden file " << path << ". " << kHowToUpdate);
  if (actual != expected) {
    FAIL("generated " << file << " differs from " << path << " at "
                      << FirstDifference(actual, expected) << "\n"
                      << kHowToUpdate);
  }
}

TEST_CASE("golden CUDA source of the corpus", "[cuda_backend][golden]") {
  for (const GoldenCase& c : GoldenCorpus()) {
    absl::StatusOr<std::string> source = EmitCudaSource({c.kernel});
    INFO(c.name << ": " << source.status().ToString());
    REQUIRE(source.ok());
    CheckGolden(c.name + ".cu", *source);
  }
}

TEST_CASE("golden sm_90 PTX of the corpus", "[cuda_backend][golden][nvrtc]") {
  absl::StatusOr<std::string> version = CudaCompilerVersion();
  if (!version.ok()) {
    WARN("skipped, no NVRTC: " << version.status().ToString());
    return;
  }
  const std::string version_file = "NVRTC_VERSION";
  if (Updating()) {
    WriteFile(GoldenPath(version_file), *version + "\n");
  } else {
    std::string golden_version;
    if (ReadFile(GoldenPath(version_file), golden_version) &&
        golden_version != *version + "\n") {
      WARN("skipped: the golden PTX was written by " << golden_version.substr(0, golden_version.find('\n'))
                                                     << ", this is " << *version << ". "
                                                     << kHowToUpdate);
      return;
    }
  }
  for (const GoldenCase& c : GoldenCorpus()) {
    absl::StatusOr<CudaModule> module =
        CompileCudaKernels({c.kernel}, CudaTarget{.cc_major = 9, .cc_minor = 0});
    INFO(c.name << ": " << module.status().ToString());
    REQUIRE(module.ok());
    CheckGolden(c.name + ".ptx", module->ptx);
  }
}

}  // namespace
}  // namespace tccd::codegen::cuda_testing
