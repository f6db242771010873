// libFuzzer target: bytes -> v1::CompileRequest -> everything the daemon does to a request before
// machine code (CheckRequest, fuzz_targets.h: field checks, Prepare, compile key, Lower, plan
// descriptor). LLVM, LLD and NVRTC are not run: they live in compile workers.
//
// A finding is a crash, a sanitizer report, an uncaught exception, or an INTERNAL status: invalid
// input must be answered with a specific code (INVALID_ARGUMENT, UNIMPLEMENTED, ...).
//
// The custom mutator mutates a parsed request's fields (request_mutator.h) most of the time, and
// the raw bytes otherwise, so that both the graph logic and the proto decoder are exercised.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "codegen/ir/printer.h"
#include "codegen/ir/proto_convert.h"
#include "spdlog/spdlog.h"
#include "tccd/v1/tccd.pb.h"
#include "tests/fuzz/fuzz_targets.h"
#include "tests/fuzz/request_mutator.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // The daemon logs a line per unknown op; at thousands of inputs a second that is only noise.
  spdlog::set_level(spdlog::level::off);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Reproducing a finding: TCCD_FUZZ_PRINT_IR=1 tccd_request_fuzzer FILE shows its graph as IR.
  static const bool print_ir = std::getenv("TCCD_FUZZ_PRINT_IR") != nullptr;
  if (print_ir) {
    tccd::v1::CompileRequest request;
    if (request.ParseFromArray(data, static_cast<int>(size))) {
      absl::StatusOr<tccd::ir::Graph> graph = tccd::ir::GraphFromProto(request.graph());
      std::fprintf(
          stderr, "target %s\n%s\n",
          tccd::v1::DeviceType_Name(request.target().device_type()).c_str(),
          graph.ok() ? tccd::ir::PrintGraph(*graph).c_str() : graph.status().ToString().c_str());
    }
  }
  if (absl::Status s = tccd::fuzz::CheckRequest(data, size); !s.ok()) {
    std::fprintf(stderr, "request fuzzer: %s\n", s.ToString().c_str());
    std::abort();
  }
  return 0;
}

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  std::mt19937_64 rng(seed);
  tccd::v1::CompileRequest request;
  // One in eight: the raw bytes (the proto decoder, and requests the mutator cannot make).
  if (rng() % 8 == 0 || !request.ParseFromArray(data, static_cast<int>(size)))
    return LLVMFuzzerMutate(data, size, max_size);
  tccd::fuzz::MutateRequest(request, rng);
  std::string bytes;
  if (!request.SerializeToString(&bytes) || bytes.size() > max_size)
    return LLVMFuzzerMutate(data, size, max_size);
  std::copy(bytes.begin(), bytes.end(), data);
  return bytes.size();
}
