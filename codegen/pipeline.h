// The compiler's front door: one request graph in, a Plan plus artifact bytes out.
//
// codegen/pipeline.cc holds the whole lowering pipeline as one readable list of passes.
// This layer knows nothing of gRPC or of the cache; the server wraps it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/compile_output.h"
#include "codegen/ir/graph.h"
#include "codegen/kernel/compile_progress.h"
#include "codegen/kernel/kernel_cache.h"
#include "tccd/v1/tccd.pb.h"

namespace tccd::codegen {

struct CompileInput {
  const v1::Graph* graph = nullptr;
  const v1::Target* target = nullptr;
  std::string mode;
  // CompileOptions.extra["fallback_random"] is true: random ops stay ATen's (their streams as in
  // eager) instead of tccd's counter-based draws (dropout_to_philox.h).
  bool fallback_random = false;
  // CompileOptions.extra["deterministic_algorithms"] is true (the client's
  // torch.are_deterministic_algorithms_enabled()): no lowering whose result depends on the order
  // of float atomics (embedding_backward_to_scatter.h); those ops stay ATen's.
  bool deterministic = false;
  // CompileOptions.extra["tccd_free_layout_outputs"]: "a:b,c:d", the graph outputs in [a, b)
  // and [c, d) whose strides the compiler may choose (channels_last_layout.h); "" for none. The
  // client sends a training forward's saved tensors here (client/tccd/saved_layouts.py).
  std::string free_layout_outputs;
  // CompileOptions.extra["tccd_released_inputs"]: "a:b,c:d", the graph inputs the caller gives
  // up to the plan (freed at their last reader): a training backward's saved activations, sent by
  // client/tccd/released_inputs.py. The segment builder counts their bytes (segment_builder.h).
  // "" for none.
  std::string released_inputs;
  // The shape facts of a graph with symbolic sizes (their guards enter its key); may be null.
  const v1::ShapeEnv* shape_env = nullptr;
};

// Parsing and validation, kept separate from codegen so that the server can compute the compile
// key (from canonical_ir and target_key) and consult the cache before compiling anything.
struct ParsedRequest;  // opaque: holds the IR graph
struct Prepared {
  std::string canonical_ir;  // the canonical graph text: the graph part of the compile key
  std::string target_key;    // e.g. "cpu:x86_64-unknown-linux-gnu/x86-64-v3"
  std::shared_ptr<const ParsedRequest> parsed;
};

// INVALID_ARGUMENT for malformed or inconsistent graphs (dangling refs, bad metadata, absurd
// sizes), UNIMPLEMENTED for what tccd does not support yet (symbolic shapes, unknown targets).
absl::StatusOr<Prepared> Prepare(const CompileInput& input);

// Identifies the compiler that produces artifacts: the tccd version, the LLVM version and a
// fingerprint of the running executable, so that any rebuilt daemon (a codegen fix without a
// version bump included) never serves artifacts an older build made. Part of every compile key.
// Computed once (reads /proc/self/exe); thread-safe.
const std::string& CompilerFingerprint();

// Everything Compile decides before machine code: graph passes, partition, kernel IR, the
// schedule and its passes (CUDA: segments) and the plan, with the backends told not to generate
// code. Pure: no LLVM, no NVRTC, no files (except TCCD_DUMP_DIR dumps), so the request fuzzer
// runs it whole.
struct Lowered {
  v1::Plan plan;
};
absl::StatusOr<Lowered> Lower(const Prepared& prepared);

// Lowers, fuses and generates code. May take seconds; safe to call from many threads at once.
// CPU kernels whose objects `kernels` has are linked, not compiled; nullptr compiles them all.
// The missing ones compile on up to KernelCompileThreads() threads, telling `progress` (if any)
// the distinct kernels done as they finish.
absl::StatusOr<CompileOutput> Compile(const Prepared& prepared,
                                      KernelObjectCache* kernels = nullptr,
                                      CompileProgress* progress = nullptr);

// Threads one graph's compile uses for its kernels: TCCD_KERNEL_THREADS if set (>= 1), else the
// machine's hardware threads. Read once.
int KernelCompileThreads();

}  // namespace tccd::codegen
