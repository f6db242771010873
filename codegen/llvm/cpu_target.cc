// CpuTargetFromFeatures: a client's architecture and /proc/cpuinfo flags -> an x86-64 ISA level.
//
// Levels follow the x86-64 psABI micro-architecture levels; each level requires the previous
// one. Flag names are the Linux /proc/cpuinfo spellings (LZCNT shows up as "abm" on most
// kernels; "lzcnt" is accepted too).
#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <string>
#include <unordered_set>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "codegen/llvm/cpu_target.h"

namespace tccd::codegen {
namespace {

struct Level {
  const char* cpu;
  // Each entry is a list of alternative spellings; one of them must be present.
  std::vector<std::vector<const char*>> required;
};

// Ordered from lowest to highest; a level counts only if every lower level does.
const std::vector<Level>& Levels() {
  static const auto* levels = new std::vector<Level>{
      {"x86-64-v2", {{"cx16"}, {"lahf_lm"}, {"popcnt"}, {"sse4_1"}, {"sse4_2"}, {"ssse3"}}},
      {"x86-64-v3",
       {{"avx"},
        {"avx2"},
        {"bmi1"},
        {"bmi2"},
        {"f16c"},
        {"fma"},
        {"abm", "lzcnt"},
        {"movbe"},
        {"xsave"}}},
      {"x86-64-v4", {{"avx512f"}, {"avx512bw"}, {"avx512cd"}, {"avx512dq"}, {"avx512vl"}}},
  };
  return *levels;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

absl::StatusOr<CpuTarget> CpuTargetFromFeatures(const std::string& arch,
                                                const std::vector<std::string>& features) {
  const std::string a = Lower(arch);
  if (a != "x86_64" && a != "amd64") {
    return absl::InvalidArgumentError("unsupported CPU architecture '" + arch +
                                      "': tccd's CPU backend supports only x86_64");
  }
  std::unordered_set<std::string> have;
  for (const std::string& f : features) have.insert(Lower(f));

  CpuTarget target;
  target.cpu = "x86-64";
  for (const Level& level : Levels()) {
    const bool all = std::all_of(level.required.begin(), level.required.end(),
                                 [&](const std::vector<const char*>& alternatives) {
                                   return std::any_of(alternatives.begin(), alternatives.end(),
                                                      [&](const char* f) { return have.count(f); });
                                 });
    if (!all) break;
    target.cpu = level.cpu;
  }
  return target;
}

}  // namespace tccd::codegen
