// The tccd compiler, from request graph to plan and kernels, on one screen.
//
//   Prepare:  proto -> IR (validated) -> known ops -> target -> canonical text (the key's part)
//   Compile:  passes -> fusion partition -> kernel IR per group -> schedule -> machine code
//             -> schedule passes -> plan (the schedule's serialisation)
//
// Debugging knobs (environment of the daemon, read once):
//   TCCD_DUMP_DIR=dir          dump the IR after every pass that changed it, the partition,
//                              every kernel's IR, the LLVM IR and the schedule (as built and
//                              after every schedule pass that changed it) into dir
//   TCCD_DISABLE_PASSES=a,b    skip graph or schedule passes by name (e.g. dead-code-elimination;
//                              "segments" keeps a CUDA plan at one step per kernel and ATen op;
//                              "memory-order" keeps a segment's steps in the graph's order;
//                              "horizontal-fusion" keeps one kernel per fusion group;
//                              "float-unit-scales" keeps floating x * 1.0 and x / 1.0;
//                              "copy-layout-through-reshapes" keeps a clone of a reshaped
//                              transpose of a pointwise op (T5's dk) a kernel of its own;
//                              "horizontal-near-groups" keeps the hoisting limit for groups
//                              a few nodes apart;
//                              "horizontal-returned-views" counts a value returned only
//                              through views (a saved weight cast's `t`) as hoisted bytes;
//                              "loop-order" keeps CUDA kernels in the output's dim order;
//                              "dying-extern-outputs" / "dying-reordered-kernels": no kernel
//                              writes over a dying convolution's output / reordered kernels
//                              write over nothing (dying_inputs_into_outputs.h);
//                              "dying-cpu-kernels": no CPU kernel writes over a dying input;
//                              "permute-into-index-ops" keeps a permuted cat/stack/pad a kernel
//                              of its own;
//                              "neg-into-index-ops" keeps a negated cat part (rotate_half)
//                              a kernel of its own;
//                              "expand-sinking" keeps pointwise ops reading an expand a
//                              kernel apart from the expanded value's;
//                              "entry-points" gives every CUDA kernel both entry points;
//                              "fixed-layout-entries" keeps kernels with a broadcast or
//                              permuted operand on the strided entry (entry_points.h);
//                              "widening-casts-to-readers" keeps a widening cast of a
//                              value its group writes in that group (an f32 copy written);
//                              "row-gathers" keeps index ops (an embedding feeding a
//                              norm) out of row kernels (reduction_fusion.h);
//                              "embeddings-to-reader-shape" keeps a broadcast embedding
//                              (a position embedding) at its own shape
//                              (index_ops_to_reader_shape.h);
//                              "index-fixed-entries" keeps index kernels with gathers
//                              (max pools) on the strided entry (entry_points.h);
//                              "tile-kernels" keeps transposing copies on the strided
//                              entry instead of tiled kernels (cuda_host/tile_kernels.h;
//                              TCCD_TILE_KERNELS=0 turns them off too);
//                              "symbolic-rows" keeps the row reductions of symbolic CUDA
//                              graphs extern steps (symbolic_kernels.h);
//                              "symbolic-gemms" keeps their matmuls extern ATen steps
//                              (symbolic_gemms.h); "symbolic-columns" their column
//                              reductions (bias and norm weight gradients);
//                              "symbolic-embedding-kernels" their embeddings (gather
//                              kernels with run-time sizes, symbolic_kernels.h) and
//                              embedding gradients, "symbolic-embedding-scatter-kernels"
//                              the gradients only (scatter kernels, symbolic_rewrites.h);
//                              "symbolic-cat-kernels" their cats along a static dim;
//                              "symbolic-view-chains" keeps every view of a symbolic plan
//                              a step of its own (symbolic_views.h);
//                              "symbolic-layer-norm-backward-split" keeps their layer norm
//                              backwards one ATen step, "symbolic-embedding-backward" their
//                              embedding gradients ATen's sort-based op,
//                              "symbolic-split-as-slices" their splits one ATen step,
//                              "symbolic-embedding-sum-fold" the batch sum before a position
//                              embedding's gradient, "symbolic-double-transposes" their
//                              t(t(W)) view pairs (symbolic_rewrites.h);
//                              "symbolic-arange-kernels" their aranges extern steps;
//                              "symbolic-horizontal-fusion" one kernel per fusion group;
//                              "symbolic-row-gathers" their embeddings out of row kernels,
//                              "symbolic-embeddings-to-reader-shape" a broadcast embedding
//                              at its own shape (symbolic_rewrites.h);
//                              "symbolic-gemm-transposes" the t steps their gemms read
//                              (symbolic_gemms.h);
//                              "read-through-zero-pads,absorb-zero-tail-pads" keeps the pad
//                              copies of matmul operands as kernels of their own;
//                              "batch-norm-stats-in-place,mutations-into-producers" keeps the
//                              copy_ steps of kept input mutations;
//                              "embedding-backward-to-scatter" keeps embedding gradients
//                              ATen's sort-based kernel; "max-pool-kernels" keeps max pooling
//                              and its backward ATen extern steps; "max-pool-backward-alone"
//                              lets the backward take its pointwise consumers, fusion.h;
//                              "cpu-max-pool-backward-extern" makes the CPU's max-pool
//                              backward a gather kernel too, as on CUDA; "cpu-512-bit-vectors"
//                              vectorises AVX-512 CPU kernels 256 bits wide, cpu_target.h)
//   TCCD_DISABLE_FUSION=1      every op becomes an extern step (bisects a miscompile)
//   TCCD_KERNEL_THREADS=n      threads compiling one graph's kernels (default: all hardware
//                              threads; 1 gives the serial compile, for benchmarks)
//   TCCD_CUDA_ONE_PROGRAM=1    a graph's CUDA kernels compile as one NVRTC program, as before
//                              per-kernel cubins (bisects a -rdc/nvJitLink problem; no reuse)
//   TCCD_SHIFTED_ROW_LOOPS=0   CUDA rows of 8192..32768 the full vector does not divide stay
//                              persistent (narrow vectors) instead of looped and shifted
//                              (read by the emitter, cuda_row_emitter.h; keyed here)
//   TCCD_ALIGNED_ROW_LOOPS=0   likewise for rows the full vector divides (Llama's 32000):
//                              persistent instead of looped where the loop streams once
//   TCCD_SEGMENT_IO_IN_PLACE=0 a segment's output buffer never holds a workspace value that
//                              dies where the output is written (segment_builder.cc)
//   TCCD_ROW_LOOP_UNROLL=n     CUDA looped rows' streaming loops unrolled n times (default 1;
//                              read by cuda_row_emitter.cc, keyed here)
//   TCCD_RUNTIME_ROW_THREADS=n CUDA rows of run-time length: n threads and one row per block
//                              (64..1024) instead of a warp per row (default 32; 128 is the
//                              form before; read by cuda_row_emitter.cc, keyed here)
//   TCCD_ROW_HEAD_STORES=1     CUDA shifted rows align to a zero-padded output's rows instead
//                              of the unpadded inputs' (read by cuda_row_emitter.cc, keyed here)
//   TCCD_ROW_SHIFTED_LOADS=0   CUDA shifted rows read loads misaligned against the head per
//                              element and align to the unpadded inputs, as before (default:
//                              two aligned vectors and a pick; read by cuda_row_emitter.cc)
//   TCCD_ROW_GATHER_VECTORS=0  CUDA row kernels read gathered elements (row gathers) one at a
//                              time instead of a vector per chunk (read by cuda_row_emitter.cc)
//   TCCD_ROW_EARLY_LOADS=n     CUDA persistent rows: which element loads start at the row's
//                              start: 0 none, 1 (default) one-vector rows' (session 10), 2 also
//                              multi-chunk rows' loads feeding a reduction or streamed (not
//                              kept-broadcast), 3 all of them
//                              (read by cuda_row_emitter.cc, keyed here)
//   TCCD_SPLIT_COLUMNS=n       stage-one columns of split column sums (channels-last batch norm,
//                              layer-norm parameter gradients; default 2048; read by
//                              passes/split_columns.h, keyed here)
//   TCCD_COLUMN_UNROLL=n       CUDA column kernels: rows whose loads a thread issues before
//                              computing any (1..8; default 4, fewer with many operands; read
//                              by cuda_column_emitter.cc, keyed here)
//   TCCD_TILE_KERNELS=0        CUDA: no tiled kernels for transposing copies (cuda_host/
//                              tile_kernels.h; on by default; keyed here)
//   TCCD_SOFT_CASTS=1          CUDA f16/bf16 conversions with c10's integer sequences instead
//                              of the GPU's cvt (read by cuda_emitter.cc, keyed here)
//   TCCD_LIBDEVICE_ERF=1       CUDA f32 erf as libdevice's erff instead of the prelude's
//                              erf_f32 (the same algorithm without per-coefficient selects;
//                              read by cuda_emitter.cc, keyed here)
//   TCCD_COLUMN_VEC_BYTES=n    CUDA column kernels that store in their row loop (a GELU
//                              backward beside its bias gradient): bytes of the widest streamed
//                              operand per thread and row (4, 8 or 16; default 16)
//   TCCD_COLUMN_BLOCK=n        threads per block of those kernels (256, 512 or 1024; default 256)
//   TCCD_COLUMN_MIN_BLOCKS=n   their __launch_bounds__ minimum blocks per SM (1..8; default
//                              none: the compiler picks the registers) (these three: read by
//                              cuda_column_emitter.cc, keyed here)
//   TCCD_COLUMN_STORED_PROLOGUE=0|1  a column reduction takes no pointwise prologue whose
//                              value is also stored (0) or every one (1, as before); default:
//                              none that computes erf/exp/tanh/log/sigmoid (the GELU backward
//                              stays a pointwise kernel, the bias gradient sums what it wrote;
//                              fusion.h has the measurement; keyed here)
//   TCCD_FOLD_CASTS_INTO_ROWS=1  CUDA: run casts-before-views (a row kernel also writes the cast
//                              of its input that a matmul reads through views; off by default)
//   TCCD_DEPTHWISE_KERNELS=1   run depthwise-conv-kernels (depthwise convolutions and their
//                              gradients as generated kernels, depthwise_conv_kernels.h; off by
//                              default: on the H200 they took ConvNeXt's warm first step from
//                              4.14 to 1.98 s but its train-large step from 16.61 to 22.37 ms;
//                              with the CUDA templates 19.12 against 16.94 ms)
//   TCCD_DEPTHWISE_TEMPLATES=0  with TCCD_DEPTHWISE_KERNELS=1: CUDA emits the depthwise
//                              kernels in their index form (session 18's) instead of the
//                              hand-written templates (cuda/cuda_depthwise_emitter.h; read by
//                              the CUDA emitter and the pass's partial rows, keyed here)
//   TCCD_SYMBOLIC_REWRITES_ON_CPU=1  tests only: symbolic CPU graphs take the CUDA target's
//                              graph rewrites too (symbolic_rewrites.h), to check them against
//                              eager on a machine without a GPU (keyed here)
//   TCCD_GEMM_AUTOTUNE=n       CUDA matmuls: cuBLASLt algorithms each one times when its plan
//                              loads, keeping the fastest (runtime/tccd_cuda_tune.h; default
//                              0: the heuristic's first; 8 measured; the choices are shared
//                              through the daemon, first writer wins; never for a
//                              deterministic request; keyed)
//   TCCD_GEMM_AUTOTUNE_SWAP=1  with TCCD_GEMM_AUTOTUNE > 1: CUDA matmuls without an epilogue
//                              (weight gradients) also time the swapped formulation D^T =
//                              op(B)^T op(A)^T with D^T row-ordered and keep it when clearly
//                              faster (not measured yet; keyed here)
//   TCCD_GEMM_WORKSPACE_MB=n   CUDA static matmuls: the cuBLASLt workspace their segment
//                              reserves and their algorithms may use (1..255; default 32,
//                              cuBLAS's recommendation for Hopper; 8 before the thirteenth
//                              session; keyed here)
//   TCCD_MATH_ATTENTION_MIN_SCORES=n  math-attention-to-fused rewrites only attentions of at
//                              least n scores (B x H x Q x K; default 8388608: BERT's and T5's
//                              at the zoo's large batch, not the small batch's, where the call's
//                              host cost may outweigh the GPU time saved; 0: every one; keyed)
//   TCCD_TEST_REJECT_KERNEL_OPS=op,op  tests only: CUDA kernels fusing one of these ops fail to
//                              compile (NVRTC meets an #error), to test that a kernel the target
//                              rejects becomes ATen extern steps (keyed here)
#include "codegen/pipeline.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <thread>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/usable_cpus.h"
#include "codegen/backend.h"
#include "codegen/cpu/cpu_backend.h"
#include "codegen/cpu/cpu_pipeline.h"
#include "codegen/cuda/cuda_backend.h"
#include "codegen/cuda/cuda_emitter.h"
#include "codegen/cuda_host/cuda_host.h"
#include "codegen/cuda_host/cuda_pipeline.h"
#include "codegen/cuda_host/runtime_object.h"
#include "codegen/ir/known_ops.h"
#include "codegen/kernel/kernel_failure.h"
#include "codegen/ir/printer.h"
#include "codegen/ir/proto_convert.h"
#include "codegen/passes/affine_factory_folding.h"
#include "codegen/passes/batch_norm_stats_in_place.h"
#include "codegen/passes/casts_before_views.h"
#include "codegen/passes/collapse_reshape_chains.h"
#include "codegen/passes/column_sum_split.h"
#include "codegen/passes/common_subexpressions.h"
#include "codegen/passes/copy_layout_into_producer.h"
#include "codegen/passes/dead_code_elimination.h"
#include "codegen/passes/detach_elimination.h"
#include "codegen/passes/dropout_to_philox.h"
#include "codegen/passes/embedding_backward_to_scatter.h"
#include "codegen/passes/expand_sinking.h"
#include "codegen/passes/fill_copy_folding.h"
#include "codegen/passes/index_ops_to_reader_shape.h"
#include "codegen/passes/fusion.h"
#include "codegen/passes/horizontal_fusion.h"
#include "codegen/passes/inline_scalar_fills.h"
#include "codegen/passes/float_unit_scales.h"
#include "codegen/passes/integer_identities.h"
#include "codegen/passes/kernel_builder.h"
#include "codegen/passes/partition_verifier.h"
#include "codegen/passes/pass_runner.h"
#include "codegen/passes/plan_builder.h"
#include "codegen/passes/loop_order.h"
#include "codegen/passes/dying_inputs_into_outputs.h"
#include "codegen/passes/depthwise_conv_kernels.h"
#include "codegen/passes/max_pool_kernels.h"
#include "codegen/passes/mutations_into_producers.h"
#include "codegen/passes/outer_product_matmuls.h"
#include "codegen/passes/math_attention_to_fused.h"
#include "codegen/passes/redundant_clones.h"
#include "codegen/passes/zero_attention_masks.h"
#include "codegen/passes/neg_into_index_ops.h"
#include "codegen/passes/permute_into_index_ops.h"
#include "codegen/passes/permutes_before_casts.h"
#include "codegen/passes/padded_row_stores.h"
#include "codegen/passes/reshape_hoisting.h"
#include "codegen/passes/reshape_sinking.h"
#include "codegen/passes/scatter_ops.h"
#include "codegen/passes/slice_of_cat.h"
#include "codegen/passes/split_columns.h"
#include "codegen/passes/widening_casts_to_readers.h"
#include "codegen/schedule/plan_serializer.h"
#include "codegen/schedule/printer.h"
#include "codegen/schedule/release_after_last_use.h"
#include "codegen/schedule/verifier.h"
#include "codegen/symbolic_gemms.h"
#include "codegen/symbolic_kernels.h"
#include "codegen/symbolic_plan.h"
#include "codegen/symbolic_rewrites.h"
#include "codegen/symbolic_views.h"
#include "codegen/plan_runtime/plan_descriptor.h"
#include "codegen/plan_runtime/runtime_object.h"
#include "base/status_macros.h"
#include "spdlog/spdlog.h"
#include "llvm/Config/llvm-config.h"
#include "tccd_version.h"

namespace tccd::codegen {

struct ParsedRequest {
  ir::Graph graph;
  ir::DeviceType device = ir::DeviceType::kCpu;
  CpuTarget cpu;    // when device is kCpu
  CudaTarget cuda;  // when device is kCuda
  std::string mode;
  bool fallback_random = false;
  bool deterministic = false;            // CompileInput.deterministic
  std::vector<int> free_layout_outputs;  // CompileInput.free_layout_outputs, parsed
  std::vector<int> released_inputs;      // CompileInput.released_inputs, parsed
  // Set for a graph with symbolic sizes (symbolic_plan.h): `graph` is then empty and the graph
  // takes the extern plan instead of the passes below.
  std::optional<SymbolicGraph> symbolic;
};

namespace {

// Matmuls time this many cuBLASLt algorithms at load (TCCD_GEMM_AUTOTUNE), at most the
// runtime's TCCD_RT_TUNE_MAX_CANDIDATES. The choices are shared through the daemon since the
// thirteenth session (client/tccd/gemm_tunes.py: first writer wins, so processes and ranks
// compute the same bits; GPU-tested). Still off by default: with the 32 MiB workspace
// (kGemmWorkspaceBytes) tuning's only same-run gain measured is 29 us on ConvNeXt-T's stage-1
// MLP (786.8 -> 757.8 us), against +0.65 s of plan loading on its cold first step (H200,
// 2026-11-27); a same-run zoo A/B should decide. 8 is the value measured.
constexpr int kDefaultGemmAutotune = 0;
constexpr int kMaxGemmAutotune = 16;
// The cuBLASLt workspace of static matmuls in MiB (TCCD_GEMM_WORKSPACE_MB; kGemmWorkspaceBytes).
constexpr int kDefaultGemmWorkspaceMb = static_cast<int>(kGemmWorkspaceBytes >> 20);
constexpr int64_t kDefaultMathAttentionMinScores = MathAttentionToFused::kDefaultMinScores;

struct DebugOptions {
  std::string dump_dir;
  absl::flat_hash_set<std::string> disabled_passes;
  bool disable_fusion = false;
  bool cuda_one_program = false;
  bool no_shifted_row_loops = false;           // read by RowGeometryOf itself; here for the key
  bool no_aligned_row_loops = false;           // likewise
  bool no_segment_io_in_place = false;         // read by the segment builder; here for the key
  std::string row_loop_unroll;                 // read by the row emitter itself; here for the key
  std::string runtime_row_threads;             // read by the row emitter itself; here for the key
  bool row_head_stores = false;                // read by the row emitter itself; here for the key
  bool no_row_shifted_loads = false;           // read by the row emitter itself; here for the key
  bool no_row_gather_vectors = false;          // read by the row emitter itself; here for the key
  std::string row_early_loads;                 // read by the row emitter itself; here for the key
  std::string split_columns;                   // read by split_columns.h; here for the key
  std::string column_unroll;                   // read by the column emitter; here for the key
  std::string soft_casts, libdevice_erf;       // read by the CUDA emitter; here for the key
  std::string column_vec_bytes, column_block, column_min_blocks;  // the column emitter's
  std::string column_stored_prologue;          // read by reduction_fusion.cc; here for the key
  bool fold_casts_into_rows = false;           // TCCD_FOLD_CASTS_INTO_ROWS=1: casts-before-views
  bool depthwise_kernels = false;              // TCCD_DEPTHWISE_KERNELS=1: depthwise-conv-kernels
  bool depthwise_templates = true;             // TCCD_DEPTHWISE_TEMPLATES=0: their index form
  bool tile_kernels = true;                    // TCCD_TILE_KERNELS=0: no tiled kernels
  bool symbolic_rewrites_on_cpu = false;       // TCCD_SYMBOLIC_REWRITES_ON_CPU=1 (tests)
  int gemm_autotune = kDefaultGemmAutotune;    // TCCD_GEMM_AUTOTUNE=n (0: off)
  bool gemm_autotune_swap = false;             // TCCD_GEMM_AUTOTUNE_SWAP=1
  int gemm_workspace_mb = kDefaultGemmWorkspaceMb;  // TCCD_GEMM_WORKSPACE_MB=n
  int64_t math_attention_min_scores = kDefaultMathAttentionMinScores;  // TCCD_MATH_ATTENTION_MIN_SCORES
  std::vector<std::string> reject_kernel_ops;  // TCCD_TEST_REJECT_KERNEL_OPS (tests)
};

const DebugOptions& Debug() {
  static const DebugOptions* options = [] {
    auto* o = new DebugOptions;
    if (const char* d = std::getenv("TCCD_DUMP_DIR")) o->dump_dir = d;
    if (const char* p = std::getenv("TCCD_DISABLE_PASSES"))
      for (absl::string_view name : absl::StrSplit(p, ',', absl::SkipEmpty()))
        o->disabled_passes.insert(std::string(name));
    if (const char* f = std::getenv("TCCD_DISABLE_FUSION"))
      o->disable_fusion = std::string(f) == "1";
    if (const char* c = std::getenv("TCCD_CUDA_ONE_PROGRAM"))
      o->cuda_one_program = std::string(c) == "1";
    if (const char* r = std::getenv("TCCD_SHIFTED_ROW_LOOPS"))
      o->no_shifted_row_loops = std::string(r) == "0";
    if (const char* r = std::getenv("TCCD_ALIGNED_ROW_LOOPS"))
      o->no_aligned_row_loops = std::string(r) == "0";
    if (const char* r = std::getenv("TCCD_SEGMENT_IO_IN_PLACE"))
      o->no_segment_io_in_place = std::string(r) == "0";
    if (const char* u = std::getenv("TCCD_ROW_LOOP_UNROLL")) o->row_loop_unroll = u;
    if (const char* t = std::getenv("TCCD_RUNTIME_ROW_THREADS")) o->runtime_row_threads = t;
    if (const char* h = std::getenv("TCCD_ROW_HEAD_STORES"))
      o->row_head_stores = std::string(h) == "1";
    if (const char* r = std::getenv("TCCD_ROW_SHIFTED_LOADS"))
      o->no_row_shifted_loads = std::string(r) == "0";
    if (const char* r = std::getenv("TCCD_ROW_GATHER_VECTORS"))
      o->no_row_gather_vectors = std::string(r) == "0";
    if (const char* e = std::getenv("TCCD_ROW_EARLY_LOADS")) o->row_early_loads = e;
    if (const char* c = std::getenv("TCCD_SPLIT_COLUMNS")) o->split_columns = c;
    if (const char* c = std::getenv("TCCD_COLUMN_UNROLL")) o->column_unroll = c;
    if (const char* c = std::getenv("TCCD_SOFT_CASTS")) o->soft_casts = c;
    if (const char* c = std::getenv("TCCD_LIBDEVICE_ERF")) o->libdevice_erf = c;
    if (const char* c = std::getenv("TCCD_COLUMN_VEC_BYTES")) o->column_vec_bytes = c;
    if (const char* c = std::getenv("TCCD_COLUMN_BLOCK")) o->column_block = c;
    if (const char* c = std::getenv("TCCD_COLUMN_MIN_BLOCKS")) o->column_min_blocks = c;
    if (const char* c = std::getenv("TCCD_COLUMN_STORED_PROLOGUE")) o->column_stored_prologue = c;
    if (const char* f = std::getenv("TCCD_FOLD_CASTS_INTO_ROWS"))
      o->fold_casts_into_rows = std::string(f) == "1";
    if (const char* k = std::getenv("TCCD_DEPTHWISE_KERNELS"))
      o->depthwise_kernels = std::string(k) == "1";
    if (const char* t = std::getenv("TCCD_DEPTHWISE_TEMPLATES"))
      o->depthwise_templates = std::string(t) != "0";
    if (const char* t = std::getenv("TCCD_TILE_KERNELS")) o->tile_kernels = std::string(t) != "0";
    if (const char* r = std::getenv("TCCD_SYMBOLIC_REWRITES_ON_CPU"))
      o->symbolic_rewrites_on_cpu = std::string(r) == "1";
    if (const char* g = std::getenv("TCCD_GEMM_AUTOTUNE")) {
      int n = 0;  // an unparsable value is the default
      if (absl::SimpleAtoi(g, &n)) o->gemm_autotune = std::clamp(n, 0, kMaxGemmAutotune);
    }
    if (const char* g = std::getenv("TCCD_GEMM_AUTOTUNE_SWAP"))
      o->gemm_autotune_swap = std::string(g) == "1";
    if (const char* g = std::getenv("TCCD_GEMM_WORKSPACE_MB")) {
      int n = 0;  // an unparsable value is the default
      if (absl::SimpleAtoi(g, &n)) o->gemm_workspace_mb = std::clamp(n, 1, 255);
    }
    if (const char* m = std::getenv("TCCD_MATH_ATTENTION_MIN_SCORES")) {
      int64_t n = 0;  // an unparsable value is the default
      if (absl::SimpleAtoi(m, &n)) o->math_attention_min_scores = std::max<int64_t>(n, 0);
    }
    if (const char* r = std::getenv("TCCD_TEST_REJECT_KERNEL_OPS"))
      o->reject_kernel_ops = absl::StrSplit(r, ',', absl::SkipEmpty());
    return o;
  }();
  return *options;
}

// tccd_rt_gemm.tune for the matmuls of a (non-deterministic) request: the candidates, with
// the swapped formulation's flag when it is on and there is anything to time.
int GemmAutotune() {
  const int n = Debug().gemm_autotune;
  return n > 1 && Debug().gemm_autotune_swap ? n | kGemmTuneSwap : n;
}

// The request's CPU target for the CPU backend's kernels, with the daemon's knobs applied.
CpuTarget KernelCpuTarget(CpuTarget target) {
  target.wide_vectors = !Debug().disabled_passes.contains("cpu-512-bit-vectors");
  return target;
}

// The knobs above that change generated code, as a short string ("" when all are defaults).
std::string DebugOptionsKey() {
  const DebugOptions& d = Debug();
  std::vector<std::string> disabled(d.disabled_passes.begin(), d.disabled_passes.end());
  std::sort(disabled.begin(), disabled.end());
  std::string key;
  if (!disabled.empty()) absl::StrAppend(&key, "disable=", absl::StrJoin(disabled, "+"), ";");
  if (d.disable_fusion) absl::StrAppend(&key, "nofusion;");
  if (d.cuda_one_program) absl::StrAppend(&key, "cuda-one-program;");
  if (d.no_shifted_row_loops) absl::StrAppend(&key, "no-shifted-row-loops;");
  if (d.no_aligned_row_loops) absl::StrAppend(&key, "no-aligned-row-loops;");
  if (d.no_segment_io_in_place) absl::StrAppend(&key, "no-segment-io-in-place;");
  if (!d.row_loop_unroll.empty() && d.row_loop_unroll != "1")
    absl::StrAppend(&key, "row-loop-unroll=", d.row_loop_unroll, ";");
  if (!d.runtime_row_threads.empty() && d.runtime_row_threads != "32")
    absl::StrAppend(&key, "runtime-row-threads=", d.runtime_row_threads, ";");
  if (d.row_head_stores) absl::StrAppend(&key, "row-head-stores;");
  if (d.no_row_shifted_loads) absl::StrAppend(&key, "no-row-shifted-loads;");
  if (d.no_row_gather_vectors) absl::StrAppend(&key, "no-row-gather-vectors;");
  // "0" keyed as in session 10; "1" (that session's default), "3" by value; the default none.
  if (d.row_early_loads == "0") absl::StrAppend(&key, "no-row-early-loads;");
  if (d.row_early_loads == "2" || d.row_early_loads == "3")
    absl::StrAppend(&key, "row-early-loads=", d.row_early_loads, ";");
  // The value the passes use (an invalid or default setting is the default: no key change).
  if (!d.split_columns.empty() && SplitColumnTarget() != kDefaultSplitColumns)
    absl::StrAppend(&key, "split-columns=", SplitColumnTarget(), ";");
  if (!d.column_unroll.empty()) absl::StrAppend(&key, "column-unroll=", d.column_unroll, ";");
  if (!d.soft_casts.empty()) absl::StrAppend(&key, "soft-casts=", d.soft_casts, ";");
  if (!d.libdevice_erf.empty()) absl::StrAppend(&key, "libdevice-erf=", d.libdevice_erf, ";");
  if (!d.column_vec_bytes.empty())
    absl::StrAppend(&key, "column-vec-bytes=", d.column_vec_bytes, ";");
  if (!d.column_block.empty()) absl::StrAppend(&key, "column-block=", d.column_block, ";");
  if (!d.column_min_blocks.empty())
    absl::StrAppend(&key, "column-min-blocks=", d.column_min_blocks, ";");
  if (!d.column_stored_prologue.empty())
    absl::StrAppend(&key, "column-stored-prologue=", d.column_stored_prologue, ";");
  if (d.fold_casts_into_rows) absl::StrAppend(&key, "fold-casts-into-rows;");
  if (d.depthwise_kernels) absl::StrAppend(&key, "depthwise-kernels;");
  if (!d.depthwise_templates) absl::StrAppend(&key, "no-depthwise-templates;");
  if (!d.tile_kernels) absl::StrAppend(&key, "no-tile-kernels;");
  if (d.symbolic_rewrites_on_cpu) absl::StrAppend(&key, "symbolic-rewrites-on-cpu;");
  if (d.gemm_autotune != kDefaultGemmAutotune)
    absl::StrAppend(&key, "gemm-autotune=", d.gemm_autotune, ";");
  if (d.gemm_autotune_swap) absl::StrAppend(&key, "gemm-autotune-swap;");
  if (d.gemm_workspace_mb != kDefaultGemmWorkspaceMb)
    absl::StrAppend(&key, "gemm-workspace-mb=", d.gemm_workspace_mb, ";");
  if (d.math_attention_min_scores != kDefaultMathAttentionMinScores)
    absl::StrAppend(&key, "math-attention-min-scores=", d.math_attention_min_scores, ";");
  if (!d.reject_kernel_ops.empty())
    absl::StrAppend(&key, "reject=", absl::StrJoin(d.reject_kernel_ops, "+"), ";");
  return key;
}

// FNV-1a of the embedded CUDA host runtime: it is linked into every kernels_cuda.so, so a change
// to it must change the key even when nobody bumps the tccd version.
std::string CudaRuntimeFingerprint() {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : CudaRuntimeObject()) h = (h ^ c) * 1099511628211ull;
  return absl::StrCat(absl::Hex(h, absl::kZeroPad16));
}

void Dump(const std::string& name, const std::string& text) {
  if (Debug().dump_dir.empty()) return;
  std::ofstream(Debug().dump_dir + "/" + name) << text;
}

// Every tensor must live on the target's device type; CUDA graphs may also hold CPU tensors
// (0-dim scalars, indices), which only extern steps touch: fusion never mixes devices.
absl::Status CheckDevices(const ir::Graph& graph, ir::DeviceType device) {
  auto check = [&](const ir::TensorType& t, const std::string& where) {
    if (t.device != device &&
        !(device == ir::DeviceType::kCuda && t.device == ir::DeviceType::kCpu))
      return absl::InvalidArgumentError(
          absl::StrCat(where, " is on another device type than the target"));
    return absl::OkStatus();
  };
  for (size_t i = 0; i < graph.inputs.size(); ++i)
    RETURN_IF_ERROR(check(graph.inputs[i], absl::StrCat("input ", i)));
  for (size_t id = 0; id < graph.nodes.size(); ++id)
    for (const ir::TensorType& t : graph.nodes[id].outputs)
      RETURN_IF_ERROR(check(t, absl::StrCat("node ", id)));
  return absl::OkStatus();
}

// Graph.constants: each names a distinct input with contiguous strides and carries exactly its
// bytes (the request size limit, --max-request-mb, bounds their total).
absl::Status CheckConstants(const v1::Graph& proto, const ir::Graph& graph) {
  absl::flat_hash_set<int> seen;
  for (int i = 0; i < proto.constants_size(); ++i) {
    const v1::Constant& c = proto.constants(i);
    if (c.input() < 0 || c.input() >= static_cast<int>(graph.inputs.size()) ||
        !seen.insert(c.input()).second)
      return absl::InvalidArgumentError(absl::StrCat("constant ", i, " names input ", c.input(),
                                                     ", which is not a distinct graph input"));
    const ir::TensorType& t = graph.inputs[c.input()];
    if (t.strides != ir::ContiguousStrides(t.sizes) && t.numel() > 1)
      return absl::InvalidArgumentError(
          absl::StrCat("constant ", i, " (input ", c.input(), ") is not contiguous"));
    const int64_t expected = t.numel() * ir::DTypeBytes(t.dtype);
    if (static_cast<int64_t>(c.data().size()) != expected)
      return absl::InvalidArgumentError(absl::StrCat("constant ", i, " (input ", c.input(),
                                                     ") has ", c.data().size(),
                                                     " bytes; its type needs ", expected));
  }
  return absl::OkStatus();
}

// "a:b,c:d" -> the indices of [a, b) and [c, d), within the graph's `count` outputs or inputs
// (`what`), from CompileOptions.extra[option]; "" -> none.
absl::StatusOr<std::vector<int>> ParseRanges(const std::string& text, size_t count,
                                             absl::string_view option, absl::string_view what) {
  std::vector<int> indices;
  for (absl::string_view range : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    std::vector<absl::string_view> parts = absl::StrSplit(range, ':');
    int start = 0, stop = 0;
    if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &start) ||
        !absl::SimpleAtoi(parts[1], &stop) || start < 0 || stop < start ||
        static_cast<size_t>(stop) > count)
      return absl::InvalidArgumentError(
          absl::StrCat("CompileOptions.extra[\"", option, "\"] has \"", range.substr(0, 32),
                       "\"; expected start:stop ranges within the graph's ", count, " ", what));
    for (int i = start; i < stop; ++i) indices.push_back(i);
  }
  return indices;
}

}  // namespace

const std::string& CompilerFingerprint() {
  static const std::string* fingerprint = [] {
    // FNV-1a over the executable's bytes: an identity, not an integrity check.
    uint64_t h = 1469598103934665603ull;
    std::ifstream exe("/proc/self/exe", std::ios::binary);
    char buffer[1 << 16];
    while (exe.read(buffer, sizeof buffer) || exe.gcount() > 0) {
      for (std::streamsize i = 0; i < exe.gcount(); ++i)
        h = (h ^ static_cast<unsigned char>(buffer[i])) * 1099511628211ull;
    }
    if (!exe.eof()) spdlog::warn("cannot read /proc/self/exe; compile keys use the version only");
    std::string id = absl::StrCat(TCCD_VERSION, "/llvm-", LLVM_VERSION_STRING, "/exe-",
                                  absl::Hex(h, absl::kZeroPad16));
    // Debugging knobs change what a compile produces, so they are part of the identity: a daemon
    // started with them never serves (or stores) entries of one started without.
    if (std::string knobs = DebugOptionsKey(); !knobs.empty())
      absl::StrAppend(&id, "/debug-", knobs);
    return new std::string(std::move(id));
  }();
  return *fingerprint;
}

absl::StatusOr<Prepared> Prepare(const CompileInput& input) {
  if (input.graph == nullptr || input.target == nullptr)
    return absl::InvalidArgumentError("request has no graph or no target");
  auto parsed = std::make_shared<ParsedRequest>();
  if (HasSymbols(*input.graph)) {
    // Symbolic sizes: validated and keyed in their own form; the static IR stays empty.
    static const v1::ShapeEnv kNoFacts;
    ASSIGN_OR_RETURN(
        parsed->symbolic,
        PrepareSymbolicGraph(*input.graph, input.shape_env ? *input.shape_env : kNoFacts));
  } else {
    ASSIGN_OR_RETURN(parsed->graph, ir::GraphFromProto(*input.graph));
    // Ops this daemon's torch did not know (custom ops, a newer torch's) are extern steps.
    if (std::vector<std::string> unknown = ir::UnknownOps(parsed->graph); !unknown.empty())
      spdlog::info("graph uses {} op(s) unknown to this daemon, run as extern steps: {}",
                   unknown.size(),
                   absl::StrJoin(unknown.begin(),
                                 unknown.begin() + std::min<size_t>(unknown.size(), 5), ", "));
    RETURN_IF_ERROR(CheckConstants(*input.graph, parsed->graph));
  }
  parsed->mode = input.mode;
  parsed->fallback_random = input.fallback_random;
  parsed->deterministic = input.deterministic;
  // A graph with symbolic sizes takes the extern plan: no layout choices to make.
  if (!parsed->symbolic) {
    ASSIGN_OR_RETURN(parsed->free_layout_outputs,
                     ParseRanges(input.free_layout_outputs, parsed->graph.outputs.size(),
                                 "tccd_free_layout_outputs", "outputs"));
    ASSIGN_OR_RETURN(parsed->released_inputs,
                     ParseRanges(input.released_inputs, parsed->graph.inputs.size(),
                                 "tccd_released_inputs", "inputs"));
  }

  Prepared prepared;
  switch (input.target->device_type()) {
    case v1::CPU: {
      parsed->device = ir::DeviceType::kCpu;
      std::vector<std::string> features(input.target->cpu_features().begin(),
                                        input.target->cpu_features().end());
      ASSIGN_OR_RETURN(parsed->cpu, CpuTargetFromFeatures(input.target->cpu_arch(), features));
      RETURN_IF_ERROR(CheckDevices(parsed->graph, ir::DeviceType::kCpu));
      prepared.target_key = "cpu:" + parsed->cpu.KeyString();
      break;
    }
    case v1::CUDA: {
      parsed->device = ir::DeviceType::kCuda;
      ASSIGN_OR_RETURN(parsed->cuda, CudaTargetFromProto(input.target->cuda_cc_major(),
                                                         input.target->cuda_cc_minor()));
      RETURN_IF_ERROR(CheckDevices(parsed->graph, ir::DeviceType::kCuda));
      // The NVRTC version changes the code; the device model is in the key so that an artifact
      // tuned on one model is never served to another of the same compute capability.
      ASSIGN_OR_RETURN(std::string nvrtc, CudaCompilerVersion());
      prepared.target_key = absl::StrCat("cuda:", parsed->cuda.KeyString(), "/", nvrtc, "/rt-",
                                         CudaRuntimeFingerprint(), "/",
                                         input.target->cuda_device_name().substr(0, 128));
      break;
    }
    default:
      return absl::InvalidArgumentError("target has no device type");
  }
  prepared.canonical_ir =
      parsed->symbolic ? parsed->symbolic->canonical_text : ir::PrintGraph(parsed->graph);
  prepared.parsed = std::move(parsed);
  return prepared;
}

namespace {

// Adds the plan's descriptor and the native plan runtime (the same bytes for every graph) to
// the artifacts. A plan the runtime cannot run (UNIMPLEMENTED: a rank above 16, an unknown ABI)
// ships without them and the client interprets it.
absl::Status AddPlanDescriptor(CompileOutput& out) {
  absl::StatusOr<std::string> descriptor = WritePlanDescriptor(out.plan);
  if (absl::IsUnimplemented(descriptor.status())) {
    spdlog::info("no plan descriptor, the client interprets this plan: {}",
                 std::string(descriptor.status().message()));
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(descriptor.status());
  out.artifacts.push_back({kPlanDescriptorName, v1::PLAN_DESCRIPTOR, *std::move(descriptor)});
  out.artifacts.push_back({kPlanRuntimeName, v1::PLAN_RUNTIME, std::string(PlanRuntimeObject())});
  return absl::OkStatus();
}

// The partition invariants (partition_verifier.h) after `stage` built or regrouped it.
absl::Status CheckPartition(const ir::Graph& graph, const Partition& partition, const char* stage) {
  if (std::string problem = VerifyPartition(graph, partition); !problem.empty())
    return absl::InternalError(
        absl::StrCat("the fusion partition after ", stage, " is invalid: ", problem));
  return absl::OkStatus();
}

}  // namespace

int KernelCompileThreads() {
  static const int threads = [] {
    int n = UsableCpus();  // the affinity mask's CPUs, not the machine's
    if (const char* env = std::getenv("TCCD_KERNEL_THREADS")) {
      if (int v = std::atoi(env); v >= 1) n = v;
    }
    return std::max(1, n);
  }();
  return threads;
}

namespace {

// A graph with symbolic sizes (symbolic_plan.h): runs of pointwise ops become kernels with
// run-time sizes (symbolic_kernels.h), the rest extern steps. The log says how many of each, so
// that nobody mistakes extern steps for fused code.
absl::StatusOr<CompileOutput> CompileSymbolic(const ParsedRequest& request,
                                              KernelObjectCache* kernel_cache,
                                              CompileProgress* progress, bool machine_code) {
  const bool cuda = request.device == ir::DeviceType::kCuda;
  // The graph rewrites that decide which ATen ops a CUDA plan keeps (symbolic_rewrites.h): layer
  // norm backwards split into row and column kernels, embedding gradients by index_add.
  // Lowered once with the embedding scatter kernels, and again without them (ATen's index_add
  // form) if one is refused: the scatter op has no ATen fallback, so a graph the kernel builder
  // refuses (e.g. a dead embedding gradient, found by the request fuzzer) takes the extern form.
  SymbolicGraph graph;
  SymbolicLowering lowering;
  auto lower = [&](bool scatter_kernels) -> absl::StatusOr<bool> {
    graph = *request.symbolic;
    if ((cuda || Debug().symbolic_rewrites_on_cpu) && !Debug().disable_fusion) {
      const SymbolicRewriteOptions rewrite_options{
          .layer_norm_backward_split =
              !Debug().disabled_passes.contains("symbolic-layer-norm-backward-split"),
          .embedding_backward = !Debug().disabled_passes.contains("symbolic-embedding-backward"),
          .embedding_backward_kernel = scatter_kernels,
          .fold_embedding_grad_sum =
              !Debug().disabled_passes.contains("symbolic-embedding-sum-fold"),
          .double_transposes = !Debug().disabled_passes.contains("symbolic-double-transposes"),
          .split_as_slices = !Debug().disabled_passes.contains("symbolic-split-as-slices"),
          // On CUDA only where the gather can join a row kernel (symbolic row gathers); the
          // CPU rewrites only for tests (TCCD_SYMBOLIC_REWRITES_ON_CPU: the rewritten graph
          // against eager, its gather an index kernel at the reader's shape).
          .embeddings_to_reader_shape =
              (!cuda || (!Debug().disabled_passes.contains("symbolic-rows") &&
                         !Debug().disabled_passes.contains("symbolic-row-gathers"))) &&
              !Debug().disabled_passes.contains("symbolic-embeddings-to-reader-shape"),
          .deterministic = request.deterministic};
      ASSIGN_OR_RETURN(const int rewritten, RewriteSymbolicGraph(graph, rewrite_options));
      if (rewritten > 0) spdlog::debug("symbolic graph: {} node(s) rewritten", rewritten);
    }
    SymbolicKernelOptions kernel_options{.fusion = !Debug().disable_fusion};
    // CUDA kernels pass sizes in a parameter block of bounded size.
    if (cuda) kernel_options.check = CheckCudaKernel;
    // CUDA: norms, softmax and reductions become row kernels with run-time sizes (static rows or
    // one symbolic row dim). TCCD_DISABLE_PASSES=symbolic-rows keeps them extern (to measure).
    kernel_options.rows = cuda && !Debug().disabled_passes.contains("symbolic-rows");
    // Column reductions over a symbolic row count (bias and norm weight gradients) with them;
    // TCCD_DISABLE_PASSES=symbolic-columns keeps those extern (to measure).
    kernel_options.columns = !Debug().disabled_passes.contains("symbolic-columns");
    // Embeddings with a static table as gather kernels with run-time sizes;
    // TCCD_DISABLE_PASSES=symbolic-embedding-kernels keeps them extern (to measure).
    kernel_options.embeddings = !Debug().disabled_passes.contains("symbolic-embedding-kernels");
    // Cats along a static dim as index kernels; TCCD_DISABLE_PASSES=symbolic-cat-kernels.
    kernel_options.cats = !Debug().disabled_passes.contains("symbolic-cat-kernels");
    // Integral aranges (position ids) as kernels; TCCD_DISABLE_PASSES=symbolic-arange-kernels.
    kernel_options.aranges = !Debug().disabled_passes.contains("symbolic-arange-kernels");
    // Sibling groups of one shape as one kernel; TCCD_DISABLE_PASSES=symbolic-horizontal-fusion.
    kernel_options.horizontal = !Debug().disabled_passes.contains("symbolic-horizontal-fusion");
    // Embeddings gathered inside row kernels; TCCD_DISABLE_PASSES=symbolic-row-gathers.
    kernel_options.row_gathers = cuda && !Debug().disabled_passes.contains("symbolic-row-gathers");
    ASSIGN_OR_RETURN(lowering, LowerSymbolicKernels(graph, kernel_options));
    // CUDA: matmuls become cuBLASLt gemms with run-time sizes (symbolic_gemms.h).
    // TCCD_DISABLE_PASSES=symbolic-gemms keeps them extern ATen steps (to measure).
    if (cuda && !Debug().disabled_passes.contains("symbolic-gemms")) {
      // A gemm operand's t read as the matrix itself;
      // TCCD_DISABLE_PASSES=symbolic-gemm-transposes keeps the t steps.
      const SymbolicGemmOptions gemm_options{
          .transposes = !Debug().disabled_passes.contains("symbolic-gemm-transposes")};
      MatchSymbolicGemms(graph, lowering, gemm_options);
    }
    for (const std::string& why : lowering.rejected)
      spdlog::debug("symbolic graph: extern steps for {}", why);
    for (const SymbolicUnit& unit : lowering.schedule)
      if (unit.group < 0 && unit.gemm < 0 &&
          graph.graph.nodes(unit.node).target() == kEmbeddingScatterAddTarget)
        return true;
    return false;
  };
  // CUDA only: the scatter op has no CPU kernel.
  bool scatter_kernels = cuda &&
                         !Debug().disabled_passes.contains("symbolic-embedding-scatter-kernels") &&
                         !Debug().disabled_passes.contains("symbolic-embedding-kernels");
  ASSIGN_OR_RETURN(bool refused, lower(scatter_kernels));
  if (refused) {
    spdlog::warn(
        "symbolic graph: an embedding gradient's scatter kernel was refused ({}); lowering it "
        "again in ATen's index_add form",
        absl::StrJoin(lowering.rejected, "; "));
    ASSIGN_OR_RETURN(refused, lower(false));
    if (refused) return absl::InternalError("symbolic graph: a scatter op without scatter kernels");
  }
  CompileOutput out;
  std::vector<PointwiseKernel> kernels;
  for (size_t g = 0; g < lowering.groups.size(); ++g) {
    kernels.push_back(lowering.groups[g].kernel);
    Dump(absl::StrCat("symbolic_kernel_", g, ".txt"), PrintPointwiseKernel(kernels.back()));
  }
  HostProgram gemms = SymbolicGemmProgram(lowering);
  if (!kernels.empty() || !gemms.empty()) {
    BackendOptions options{.fusion = true,
                           .kernel_cache = kernel_cache,
                           .fingerprint = CompilerFingerprint(),
                           .threads = KernelCompileThreads(),
                           .progress = progress,
                           .machine_code = machine_code,
                           .dump = Dump};
    std::unique_ptr<Backend> backend =
        cuda ? MakeCudaBackend(request.cuda, std::move(options), std::move(gemms))
             : MakeCpuBackend(KernelCpuTarget(request.cpu), std::move(options));
    RETURN_IF_ERROR(backend->CompileKernels(kernels, out));
    // CUDA: the host library that launches them and runs the gemms (no segments: every kernel
    // and gemm its own step).
    RETURN_IF_ERROR(backend->Finish(kernels, out));
  }
  static const SymbolicNativeTarget kCudaTarget{kCudaHostLibraryName, "tccd-cuda-1",
                                                "tccd-cuda-sym-1", "cuda_pointwise"};
  ASSIGN_OR_RETURN(out.plan,
                   SymbolicKernelPlan(graph, lowering, cuda ? kCudaTarget : kCpuSymbolicTarget));
  out.num_fused_kernels = static_cast<int>(lowering.groups.size() + lowering.gemms.size());
  // Chains of views over the plan's own outputs: one as_strided step each (symbolic_views.h).
  // TCCD_DISABLE_PASSES=symbolic-view-chains keeps every view a step.
  // A fold may take the plan's last expression (views whose sizes were the only symbolic part):
  // the plan stays symbolic by its flag (Plan.symbolic), its kernels have no expected strides.
  int folded_views = 0;
  if (!Debug().disabled_passes.contains("symbolic-view-chains")) {
    v1::Plan folded = out.plan;
    const int n = FoldSymbolicViewChains(folded);
    if (n > 0) {
      out.plan = std::move(folded);
      folded_views = n;
    }
  }
  absl::flat_hash_set<std::string> seen;
  std::vector<std::string> ops;
  for (const v1::Step& step : out.plan.steps()) {
    if (!step.has_extern_call()) continue;
    ++out.num_extern_steps;
    if (seen.insert(step.extern_call().target()).second) ops.push_back(step.extern_call().target());
  }
  spdlog::info(
      "symbolic graph ({} symbols, {} shape facts): {} kernels with run-time sizes ({} ops), {} "
      "cuBLASLt gemms with run-time sizes, {} extern ATen steps ({} distinct: {}{}), {} views "
      "folded into their chains' last{}",
      graph.num_symbols, graph.facts.size(), lowering.groups.size(),
      graph.graph.nodes_size() - out.num_extern_steps - folded_views -
          static_cast<int>(lowering.gemms.size()),
      lowering.gemms.size(), out.num_extern_steps, ops.size(),
      absl::StrJoin(ops.begin(), ops.begin() + std::min<size_t>(ops.size(), 8), ", "),
      ops.size() > 8 ? ", ..." : "", folded_views,
      lowering.rejected.empty()
          ? ""
          : absl::StrCat("; ", lowering.rejected.size(), " group(s) kept extern"));
  // The descriptor carries the plan's size expressions (format 2), so the native plan runtime
  // runs symbolic plans too; the client's interpreter stays the fallback.
  if (machine_code) RETURN_IF_ERROR(AddPlanDescriptor(out));
  return out;
}

// After CompileKernels failed with `status`: when it blames kernels (kernel_failure.h) whose
// groups hold only ops ATen can run, adds their nodes to `extern_nodes`, logs one line per kernel
// and returns true (compile again); false when the failure is the graph's (return it).
absl::StatusOr<bool> ExternRejectedKernels(const ir::Graph& graph, const Partition& partition,
                                           const absl::Status& status,
                                           std::vector<int>& extern_nodes) {
  std::vector<std::string> failed = FailedKernels(status);
  if (failed.empty()) return false;
  std::vector<int> nodes;
  for (const std::string& name : failed) {
    int g = -1;
    if (!absl::StartsWith(name, "tccd_k") || !absl::SimpleAtoi(name.substr(6), &g) || g < 0 ||
        g >= static_cast<int>(partition.groups.size()))
      return false;
    std::vector<std::string> ops;
    for (int m : partition.groups[g].nodes) {
      // Compiler-internal ops (tccd::philox_uniform) have no ATen kernel to fall back on.
      if (!absl::StartsWith(graph.nodes[m].target, "aten::") &&
          !absl::StartsWith(graph.nodes[m].target, "prims::"))
        return false;
      nodes.push_back(m);
      ops.push_back(graph.nodes[m].target);
    }
    spdlog::warn(
        "kernel {} ({} ops: {}) was rejected by the target's compiler; its ops run as ATen extern "
        "steps: {}",
        name, ops.size(),
        absl::StrJoin(ops.begin(), ops.begin() + std::min<size_t>(ops.size(), 6), ", "),
        std::string(status.message()).substr(0, status.message().find('\n')).substr(0, 300));
  }
  if (nodes.empty()) return false;
  extern_nodes.insert(extern_nodes.end(), nodes.begin(), nodes.end());
  return true;
}

// Compile, or with `machine_code` false only Lower (the backends name kernels but compile none).
absl::StatusOr<CompileOutput> CompileStages(const Prepared& prepared,
                                            KernelObjectCache* kernel_cache,
                                            CompileProgress* progress, bool machine_code) {
  RET_CHECK(prepared.parsed != nullptr);
  const ParsedRequest& request = *prepared.parsed;
  if (request.symbolic) return CompileSymbolic(request, kernel_cache, progress, machine_code);
  ir::Graph graph = request.graph;
  // A backend serves one attempt at the machine code (below: a kernel the target rejects makes
  // another attempt with its ops as extern steps); the graph passes are the first one's.
  auto make_backend = [&]() -> std::unique_ptr<Backend> {
    BackendOptions options{
        .fusion = !Debug().disable_fusion,
        .cuda_one_program = Debug().cuda_one_program,
        .kernel_cache = kernel_cache,
        .fingerprint = CompilerFingerprint(),
        .threads = KernelCompileThreads(),
        .progress = progress,
        .machine_code = machine_code,
        .free_layout_outputs = request.free_layout_outputs,
        .released_inputs = request.released_inputs,
        .test_reject_kernel_ops = Debug().reject_kernel_ops,
        .fixed_layout_entries = !Debug().disabled_passes.contains("fixed-layout-entries"),
        .index_fixed_entries = !Debug().disabled_passes.contains("index-fixed-entries"),
        .tile_kernels = Debug().tile_kernels && !Debug().disabled_passes.contains("tile-kernels"),
        .gemm_autotune = request.deterministic ? 0 : GemmAutotune(),
        .gemm_workspace_bytes = int64_t{Debug().gemm_workspace_mb} << 20,
        .dump = Dump};
    return request.device == ir::DeviceType::kCpu
               ? MakeCpuBackend(KernelCpuTarget(request.cpu), std::move(options))
               : MakeCudaBackend(request.cuda, std::move(options));
  };
  std::unique_ptr<Backend> backend = make_backend();

  // 1. Graph passes: clean the graph before partitioning.
  PassRunner passes({.dump_dir = Debug().dump_dir, .disabled = Debug().disabled_passes});
  passes.BeginStage("graph-passes");
  // With fusion on: integer values computed from factories alone that are constants become fills
  // (first: the 0-dim ones it makes are inlined next), 0-dim fills become constants of their
  // readers, sized fills and functional copies plain pointwise values, integer x + 0 is x,
  // floating x * 1.0 is x, training dropout becomes in-kernel Philox draws (unless the client
  // asked for ATen's random numbers).
  if (!Debug().disable_fusion) {
    passes.Add(std::make_unique<AffineFactoryFolding>());
    passes.Add(std::make_unique<InlineScalarFills>());
    passes.Add(std::make_unique<FillCopyFolding>());
    passes.Add(std::make_unique<IntegerIdentities>());
    passes.Add(std::make_unique<FloatUnitScales>());  // x * 1.0: math attention's sqrt(scale)
    if (!request.fallback_random) passes.Add(std::make_unique<DropoutToPhilox>());
  }
  // detach is the identity in a graph without autograd, alias reads the same storage; as alias
  // steps they would split kernels.
  passes.Add(std::make_unique<DetachElimination>());
  passes.Add(std::make_unique<AliasElimination>());
  // A matmul over a length-1 dim is a multiply (the rotary angles' outer product), before the
  // backend pads matmul operands.
  if (!Debug().disable_fusion) passes.Add(std::make_unique<OuterProductMatmuls>());
  // Half-precision math attention, upcast to f32 (BERT's, T5's), as one attention call in half
  // precision that picks a fused kernel at run time; the f32 chain is then dead.
  if (!Debug().disable_fusion) passes.Add(std::make_unique<MathAttentionToFused>(Debug().math_attention_min_scores));
  // Attention without its all-zeros mask (T5's cross-attention); the fill is then dead.
  passes.Add(std::make_unique<ZeroAttentionMasks>());
  // Per-layer recomputations of one value (T5's masks and bias casts) become one node.
  if (!Debug().disable_fusion) passes.Add(std::make_unique<CommonSubexpressions>());
  passes.Add(std::make_unique<DeadCodeElimination>());
  // A clone of a fresh value nothing else reads, in its layout, is that value (ConvNeXt's copy
  // of each block's second linear); after dead-code elimination, whose dead readers would count.
  if (!Debug().disable_fusion) passes.Add(std::make_unique<RedundantClones>());
  // CUDA: embedding gradients as an f32 scatter-add kernel (atomics: not bitwise reproducible,
  // so not under torch.use_deterministic_algorithms, as Inductor).
  if (request.device == ir::DeviceType::kCuda && !Debug().disable_fusion && !request.deterministic)
    passes.Add(std::make_unique<EmbeddingBackwardToScatter>());
  // The backend's own rewrites (CUDA: matmul padding, norms and reductions as row kernels).
  backend->AddGraphPasses(passes);
  // A training batch norm left an ATen op (every one on the CPU) updates the running statistics
  // in place instead of through copy_ steps (after the backend's passes, which take the CUDA
  // norms they rewrite in their functional form).
  passes.Add(std::make_unique<BatchNormStatsInPlace>());
  // Max pooling and its backward as index kernels (after the backend's passes: the CUDA
  // channels-last pass treats the ATen ops as layout followers, and the new ones keep the
  // strides it chose). The CPU keeps the backward ATen's scatter (max_pool_kernels.h says why).
  if (!Debug().disable_fusion)
    passes.Add(std::make_unique<MaxPoolKernels>(
        request.device == ir::DeviceType::kCuda ||
        Debug().disabled_passes.contains("cpu-max-pool-backward-extern")));
  // With TCCD_DEPTHWISE_KERNELS=1: depthwise convolutions and their gradients as index kernels,
  // for the same reasons of order (and after the CUDA bias passes, which leave them without a
  // bias). Off by default: slower than cuDNN's in the steady step (DebugOptions says how much).
  if (!Debug().disable_fusion && Debug().depthwise_kernels)
    passes.Add(std::make_unique<DepthwiseConvKernels>(DepthwiseConvKernels::Options{
        .weight_grad = !passes.disabled("depthwise-conv-weight-grad"),
        .templates = request.device == ir::DeviceType::kCuda && Debug().depthwise_templates}));
  // Pointwise ops read through a reshape move onto the reshaped kernel output (its epilogue).
  if (!Debug().disable_fusion) {
    // A layout copy (clone) of a pointwise op's private output: the op writes that layout itself
    // (attention's bmm operands; first, before the reshape passes move pointwise ops around).
    passes.Add(std::make_unique<CopyLayoutIntoProducer>(
        !passes.disabled("copy-layout-through-reshapes")));
    // A permute of a cat/stack/pad moves onto its inputs: the op fuses with the permute's reader.
    passes.Add(std::make_unique<PermuteIntoIndexOps>());
    // CUDA, with TCCD_FOLD_CASTS_INTO_ROWS=1 only: a cast read through views of a row
    // reduction's input casts the input itself, so the row kernel writes it (attention's f32
    // probabilities cast to bf16 for the dV matmul). Off by default: measured (H200, BERT train
    // large, int1 build) the fused softmax backward took 4 x 174 us where the two kernels took
    // 4 x (96 + 73) us: its bf16 accesses are 8-byte vectors in that build.
    if (request.device == ir::DeviceType::kCuda && Debug().fold_casts_into_rows)
      passes.Add(std::make_unique<CastsBeforeViews>());
    // A pointwise op reads a broadcast value itself, not through an expand view (a row
    // reduction's backward: the ops after the expand join the row kernel's epilogue).
    passes.Add(std::make_unique<ExpandSinking>());
    // An index.Tensor a pointwise op broadcasts is computed at that op's shape, so it joins the
    // op's kernel (transformers' causal masks; after expand sinking, whose expands it reads).
    // Embeddings too (GPT-2's and BERT's position embeddings: embeddings-to-reader-shape).
    passes.Add(std::make_unique<IndexOpsToReaderShape>(
        !passes.disabled("embeddings-to-reader-shape")));
    // A negated cat part or slice_backward operand (rotary embeddings' rotate_half) is negated
    // inside the index op's kernel, not by a kernel of its own over the half-width slice (after the
    // permute pass, which moves permutes onto a cat's parts: a rewritten cat is no cat any more).
    passes.Add(std::make_unique<NegIntoIndexOps>());
    // A slice of a cat along its dim reads the parts (the mask code's shifted position ids), a
    // slice of a pad the padded tensor (the loss's shifted labels).
    passes.Add(std::make_unique<SliceOfCat>());
    passes.Add(std::make_unique<SliceOfPad>());
    // CUDA: and a transpose of a cast that pointwise ops read moves onto the cast's input, so the
    // cast joins their kernel (attention's scaled key: k^T * scale read bf16 k once).
    if (request.device == ir::DeviceType::kCuda)
      passes.Add(std::make_unique<PermutesBeforeCasts>());
    passes.Add(std::make_unique<ReshapeSinking>(request.device));
    // A reshape of a reshape (AOTAutograd's [tokens, width] <-> [batch, seq, width] pairs, and
    // those sinking made) is one reshape or none, so the ops on both sides share a kernel.
    passes.Add(std::make_unique<CollapseReshapeChains>());
    // CUDA: and a pointwise op before a reshape that a row reduction reads becomes its prologue.
    if (request.device == ir::DeviceType::kCuda) passes.Add(std::make_unique<ReshapeHoisting>());
    // CUDA: column sums of few columns over many rows (bias gradients of narrow layers) in two
    // stages that fill the GPU, their pointwise producer recomputed over the split view (after
    // the reshape passes, which settle which node makes the summed value).
    if (request.device == ir::DeviceType::kCuda) passes.Add(std::make_unique<ColumnSumSplit>());
    passes.Add(std::make_unique<DeadCodeElimination>());
    // CUDA: a value that is also zero-padded for a matmul is read through the padded copy, so
    // that its row kernel can write the padded layout directly (after the reshape passes: they
    // settle which node makes the value).
    if (request.device == ir::DeviceType::kCuda)
      passes.Add(std::make_unique<ReadThroughZeroPads>());
  }
  RETURN_IF_ERROR(passes.Run(graph));

  // Stages 2-5 run again when the target rejects generated kernels (NVRTC errors, a cubin that
  // cannot link: too much shared memory): the groups of the kernels it blames become extern
  // steps (their ops as ATen calls, one log line each) and the rest compiles as before, so one
  // bad kernel never sends the whole graph to eager. Each attempt removes at least one group.
  std::vector<int> extern_nodes;  // nodes of rejected kernels, over all attempts
  Partition partition;
  std::vector<PointwiseKernel> kernels;
  schedule::Schedule sched;
  CompileOutput out;
  for (;;) {
    // 2. Partition into fused pointwise groups and extern steps, in schedule order; the backend
    //    regroups (CUDA: reductions absorb their pointwise neighbours); independent pointwise
    //    groups of one shape share a kernel (one launch).
    passes.BeginStage("partition");
    FusionOptions fusion;
    fusion.enable = !Debug().disable_fusion;
    fusion.merge_row_siblings = !passes.disabled("row-siblings");
    fusion.merge_full_reduction_siblings = !passes.disabled("full-reduction-siblings");
    if (passes.disabled("horizontal-index-groups")) fusion.max_index_merge_numel = 0;
    fusion.merge_index_reader_siblings = !passes.disabled("index-reader-siblings");
    fusion.returned_views_held = !passes.disabled("horizontal-returned-views");
    if (passes.disabled("horizontal-near-groups")) fusion.near_merge_nodes = 0;
    fusion.max_pool_backward_alone = !passes.disabled("max-pool-backward-alone");
    fusion.row_gathers = !passes.disabled("row-gathers");
    if (Debug().column_stored_prologue == "0" || Debug().column_stored_prologue == "1")
      fusion.column_stored_prologues = Debug().column_stored_prologue == "1"
                                           ? FusionOptions::StoredPrologues::kAlways
                                           : FusionOptions::StoredPrologues::kNever;
    ASSIGN_OR_RETURN(partition, PartitionForFusion(graph, fusion));
    RETURN_IF_ERROR(CheckPartition(graph, partition, "partitioning"));
    RETURN_IF_ERROR(backend->RegroupPartition(graph, fusion, partition));
    RETURN_IF_ERROR(CheckPartition(graph, partition, "the backend's regrouping"));
    // CUDA: a row kernel writes the zero-padded copy of its output that an aligned matmul reads
    // (padded_row_stores.h; the pads exist only where ReadThroughZeroPads made them the value's
    // only reader, or where they were).
    if (request.device == ir::DeviceType::kCuda && !passes.disabled("absorb-zero-tail-pads")) {
      ASSIGN_OR_RETURN(bool absorbed, AbsorbZeroTailPads(graph, partition));
      if (absorbed) RETURN_IF_ERROR(CheckPartition(graph, partition, "absorb-zero-tail-pads"));
    }
    // CUDA: a widening cast of a value its group writes anyway goes to the group reading it
    // (widening_casts_to_readers.h: a batch norm backward's f32 copy of its bf16 gradient).
    if (request.device == ir::DeviceType::kCuda && !passes.disabled("widening-casts-to-readers")) {
      ASSIGN_OR_RETURN(bool moved, MoveWideningCastsToReaders(graph, partition));
      if (moved) RETURN_IF_ERROR(CheckPartition(graph, partition, "widening-casts-to-readers"));
    }
    // Only a saving of launches, so it may be skipped by name ("horizontal-fusion") and is timed
    // apart; the partition is dumped before it and, when it merged groups, after it.
    passes.BeginStage("horizontal-fusion");
    Dump("partition.txt", PrintPartition(graph, partition));
    if (!passes.disabled("horizontal-fusion")) {
      ASSIGN_OR_RETURN(bool merged, FuseHorizontally(graph, fusion, partition));
      if (merged) {
        RETURN_IF_ERROR(CheckPartition(graph, partition, "horizontal-fusion"));
        Dump("partition-horizontal-fusion.txt", PrintPartition(graph, partition));
      }
    }
    // Kernels an earlier attempt's target rejected: their groups' ops are extern steps now.
    if (!extern_nodes.empty()) {
      ASSIGN_OR_RETURN(bool dissolved, DissolveGroups(graph, extern_nodes, partition));
      if (dissolved)
        RETURN_IF_ERROR(CheckPartition(graph, partition, "rejected kernels as extern steps"));
    }

    // 3. One kernel per group, in the backend-neutral kernel IR.
    passes.BeginStage("kernel-ir");
    kernels.clear();
    for (size_t g = 0; g < partition.groups.size(); ++g) {
      ASSIGN_OR_RETURN(PointwiseKernel k,
                       BuildPointwiseKernel(graph, partition.groups[g], absl::StrCat("tccd_k", g)));
      // CUDA: a plain pointwise kernel walks its operands in their storage order (loop_order.h).
      if (request.device == ir::DeviceType::kCuda &&
          !Debug().disabled_passes.contains("loop-order")) {
        partition.groups[g].loop_order = ChooseLoopOrder(graph, partition.groups[g], k);
        k.shape = InLoopOrder(k.shape, partition.groups[g].loop_order);
      }
      Dump(absl::StrCat("kernel_", g, ".txt"), PrintPointwiseKernel(k));
      kernels.push_back(std::move(k));
    }

    // 4. The schedule the client runs, as built: one step per kernel and extern op. Built before
    //    the machine code because it fixes every kernel's operand layouts (CUDA: which entry
    //    points a kernel needs, entry_points.h).
    passes.BeginStage("schedule");
    ASSIGN_OR_RETURN(sched, BuildSchedule(graph, partition, kernels, backend->native()));
    // Verified as built, as every schedule pass's result is (the runner checks those).
    if (absl::Status built = schedule::VerifySchedule(sched); !built.ok())
      return absl::InternalError(absl::StrCat("schedule invalid as built: ", built.message()));
    if (!Debug().dump_dir.empty()) Dump("schedule.sched", schedule::PrintSchedule(sched));
    if (!Debug().disabled_passes.contains("entry-points"))
      RETURN_IF_ERROR(backend->SpecializeKernels(sched, kernels));

    // 5. Machine code for the kernels.
    passes.BeginStage("machine-code");
    out = CompileOutput{};
    absl::Status compiled = backend->CompileKernels(kernels, out);
    if (compiled.ok()) break;
    ASSIGN_OR_RETURN(bool retry, ExternRejectedKernels(graph, partition, compiled, extern_nodes));
    if (!retry) return compiled;
    backend = make_backend();
  }

  // 6. The backend's schedule passes (CUDA: runs of native work become one call each), then
  //    every value is released after its last use. The plan is the schedule's serialisation.
  passes.BeginStage("schedule-passes");
  // Kept input mutations (copy_ into a graph input) are written by the kernel that computes
  // the value, into the input's buffer (first: the backend's passes then keep that step where
  // it is and the written value a segment output).
  MutationsIntoProducers mutations(kernels);
  RETURN_IF_ERROR(passes.Run(mutations, sched));
  // A pointwise kernel writes over a large input that dies at it (BERT's tied-embedding
  // gradient sum), before the backend's passes for the same reason.
  DyingInputsIntoOutputs dying_inputs(
      kernels, {.extern_outputs = !Debug().disabled_passes.contains("dying-extern-outputs"),
                .reordered_kernels = !Debug().disabled_passes.contains("dying-reordered-kernels"),
                .cpu_kernels = !Debug().disabled_passes.contains("dying-cpu-kernels")});
  RETURN_IF_ERROR(passes.Run(dying_inputs, sched));
  RETURN_IF_ERROR(backend->RunSchedulePasses(passes, sched));
  schedule::ReleaseAfterLastUse releases;
  RETURN_IF_ERROR(passes.Run(releases, sched));
  ASSIGN_OR_RETURN(out.plan, schedule::PlanFromSchedule(sched));

  // 7. What depends on the final schedule (CUDA: the host library that runs its segments).
  passes.BeginStage("backend-artifacts");
  RETURN_IF_ERROR(backend->Finish(kernels, out));
  out.num_fused_kernels = static_cast<int>(kernels.size()) + backend->NumLibraryCalls();
  out.num_extern_steps = 0;
  for (const v1::Step& step : out.plan.steps()) out.num_extern_steps += step.has_extern_call();

  // 8. The same plan as data for the native plan runtime (one client call per graph).
  if (machine_code) {
    passes.BeginStage("plan-descriptor");
    RETURN_IF_ERROR(AddPlanDescriptor(out));
  }
  passes.EndStage();
  spdlog::debug("compile stages: {}", passes.Summary());
  return out;
}

}  // namespace

absl::StatusOr<Lowered> Lower(const Prepared& prepared) {
  ASSIGN_OR_RETURN(CompileOutput out,
                   CompileStages(prepared, nullptr, nullptr, /*machine_code=*/false));
  return Lowered{.plan = std::move(out.plan)};
}

absl::StatusOr<CompileOutput> Compile(const Prepared& prepared, KernelObjectCache* kernel_cache,
                                      CompileProgress* progress) {
  return CompileStages(prepared, kernel_cache, progress, /*machine_code=*/true);
}

}  // namespace tccd::codegen
