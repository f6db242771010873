// libFuzzer target: the textual graph IR (codegen/ir/parser.h) and the verifier. The checks are
// CheckIrText (fuzz_targets.h); a failed one aborts, so libFuzzer keeps the input.
#include <cstdio>
#include <cstdlib>

#include "tests/fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (absl::Status s = tccd::fuzz::CheckIrText(data, size); !s.ok()) {
    std::fprintf(stderr, "ir text fuzzer: %s\n", s.ToString().c_str());
    std::abort();
  }
  return 0;
}
