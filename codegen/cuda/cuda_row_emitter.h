// Row-reduction kernels (PointwiseKernel with a reduction section) -> CUDA C. Internal to the
// CUDA backend; the design is in cuda_backend.h ("Row reductions").
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "codegen/kernel/pointwise_kernel.h"

namespace tccd::codegen {

// Compile-time launch geometry of one row-reduction kernel (both entries share it).
struct CudaRowGeometry {
  int64_t rows = 0;         // M: product of the leading, unreduced dims; -1 when one of them
                            // is a run-time dim (kRuntimeDim: the reduced dims never are)
  int64_t row_length = 0;   // N: product of the reduced dims; -1 when it is a run-time size
  int vec = 1;              // elements per thread and chunk: 16 bytes / the narrowest element
                            // operand, at most 32 bytes / the widest (each operand its own
                            // width: one or two 16-byte accesses), halved until it divides N
  int threads_per_row = 1;  // T: 1..32 (power of two; rows share a warp; at least 8 when the
                            // row has 8 vectors) or 64..1024 (multiple of 32; one row per block)
  int rows_per_block = 1;
  int block = 1;         // threads per block = T * rows_per_block
  int chunks = 1;        // C: vectors of `vec` elements each thread holds per row value
                         // (persistent kernels; 0 when looped)
  bool looped = false;   // rows longer than kMaxPersistentRowLength: each phase streams the
                         // row from memory again instead of holding it in registers
  bool shifted = false;  // looped rows that vec does not divide (a vocabulary of 50257):
                         // see the comment above RowGeometryOf
  int64_t grid = 0;      // blocks: ceil(M / rows_per_block); 0 with run-time rows (the
                         // launch computes it from this call's sizes)
  int param_bytes = 0;   // 8 * operands * (1 + rank): pointers, then strides; run-time
                         // rows add 8 * rank: every dim's size at this launch
};

// The longest row a persistent row kernel holds in registers (1024 threads x at most 32
// elements). Longer rows loop: one block of kLoopedRowThreads threads per row, every loop reads
// the row again (from L2 mostly) and recomputes the element values it needs; the loops are
// planned to be few ("Looped rows" in cuda_row_emitter.cc: online softmax, early reductions).
// Measured on H100 (tests/codegen/cuda/cuda_row_gpu_check.py): a bf16 softmax over 4096x32000 ran
// at 2200 GB/s persistent and 1658 GB/s looped, so rows that fit stay persistent; the looped form
// is for what did not fit before (GPT-2's 50257-wide log_softmax: 280 us forward with the f32 cast
// fused, ATen 270 us without it; backward 389 us vs ATen 298 us).
inline constexpr int64_t kMaxPersistentRowLength = 32768;
inline constexpr int kLoopedRowThreads = 512;
// Rows whose length is a run-time size (symbolic graphs: attention's softmax over a symbolic
// sequence) take the looped, shifted form with this many threads per row, a warp, and
// kRuntimeRowBlock / 32 rows per block: warp shuffles only, no block barrier, and the short rows
// such graphs mostly have keep most lanes busy (a bf16 row of 512 is 64 vectors: two per lane
// and loop). The form before, 128 threads and one row per block, left half of a block idle on
// such a row and paid two block-wide reductions: the bench's attention softmax forward and
// backward took 73 us each on an H200 where the static rows (16 lanes per row, persistent)
// took 17 and 25 (dynamic_shapes_bench.py, twelfth session). TCCD_RUNTIME_ROW_THREADS=n
// (cuda_row_emitter.cc) gives one row per block of n threads instead (128: the form before).
inline constexpr int kRuntimeRowThreads = 32;
inline constexpr int kRuntimeRowBlock = 256;

// Looped rows whose length the full vector (16 bytes of the widest element operand) does not
// divide are "shifted" rather than read in narrower vectors: the contig entry walks each row from
// the vector-aligned element at or before its start (its first `head` positions, and those past
// its end, are masked), so every operand whose row start has that same misalignment moves whole
// 16-byte vectors except at the row's two ends; an operand misaligned differently (a broadcast
// vector read by every row) is read per element; the strided entry reads per element. Measured
// on the H100 (tests/codegen/cuda/cuda_row_gpu_check.py --bench, before -> after): bf16
// log_softmax over 1024x50257 250 -> 146 us, its f32-output form 283 -> 207 us, f32 log_softmax
// backward 390 -> 295 us (GPT-2's vocabulary was one element per access). Persistent rows stay
// as they were: shifted, a bf16 softmax over 2048x30522 went 135 -> 175 us (the per-element
// masks of its unrolled chunks cost more than the wider vectors gain).
//
// Shorter rows that the full vector does not divide (BERT's vocabulary of 30522) take the looped,
// shifted form too when it streams the row from memory at most once (loops are planned with
// online softmax and early reductions: see "Looped rows" in cuda_row_emitter.cc), from
// kMinShiftedLoopedRowLength elements: cross-entropy's forward and backward rows. Persistent,
// they moved 4-byte vectors. TCCD_SHIFTED_ROW_LOOPS=0 (daemon environment) keeps them
// persistent, to measure one form against the other. Why persistent lost there: a row of 30522
// takes a 960-thread block (32 elements per thread), and at 49-63 registers (ptxas, sm_90) only
// one such block fits an SM: 47% occupancy and nothing to overlap a block's reductions and
// barriers with; 16-byte shifted vectors kept that geometry and added per-element masks to every
// unrolled chunk. The looped form runs 512-thread blocks at 26 (forward) / 64 (backward)
// registers: 4 / 2 blocks per SM. Row check on an H200 (memcpy 4200 GB/s), 8192 rows, us:
//   BERT 30522  forward 284 (persistent 411; main's form, class index read: 529)
//               backward 451 (persistent 719; main's form 899)
//   GPT-2 50257 forward 441 (class index read: 633), backward 703 (891)
// (eager cross-entropy: 1417 / 1788 and 2658 / 2835.)
//
// Rows the full vector divides (Llama's 32000, T5's 32128) take the looped form by the same
// rule (TCCD_ALIGNED_ROW_LOOPS=0 keeps them persistent): persistent, such a bf16 row is a
// 1024-thread block of 4 chunks of 8 per thread, 63 registers for the loss backward (ptxas,
// sm_90), one block per SM; looped, 28 (forward) and 32 (backward, its loop `#pragma unroll 1`:
// TCCD_ROW_LOOP_UNROLL in cuda_row_emitter.cc) registers, four 512-thread blocks per SM. The
// eleventh session's H200 run measured
// the persistent backward at 1146 us for Llama's 8192 rows (T5's 4096: 588) against Inductor's
// 433 (212), under TCCD_ROW_EARLY_LOADS=2; 503 us the session before. Measured (H200, twelfth
// session, deploy/lm_head_bench.py --loss, us backward / forward row): Llama 8192 x 32000
// looped 303.1 / 268.3, persistent 435.1 / 373.8, looped without the pragma 539.3 / 267.7
// (Inductor 326.4 / 365.8); T5 4096 x 32128 155.7 / 138.9, 217.4 / 192.1, 276.1 / 138.7
// (Inductor 169.9 / 189.1).
inline constexpr int64_t kMinShiftedLoopedRowLength = 8192;
CudaRowGeometry RowGeometryOf(const PointwiseKernel& kernel);

// The reduction helpers (tccd_rt::row_reduce and friends); emitted once per module that has a
// row-reduction kernel, after the common prelude.
extern const char kCudaRowPrelude[];

// Appends `kernel`'s namespace and its two entry points (<name>_contig, <name>_strided).
// Rows longer than kMaxPersistentRowLength take the looped form.
absl::Status EmitRowReductionKernel(const PointwiseKernel& kernel, std::string& out);

// Column reductions (PointwiseKernel::is_column_reduction(); cuda_column_emitter.cc).
struct CudaColumnGeometry {
  int64_t rows = 0;  // R: product of the reduced, leading dims; -1 when known at run time only
  int64_t cols = 0;  // C: product of the kept, trailing dims
  int vec = 1;       // adjacent columns per thread: 16 bytes / the widest vector operand,
                     // halved until it divides C
  int tx = 1;        // threads of a block along the columns (power of two)
  int ty = 1;        // row stripes of a block: block / tx
  int block = 256;
  int split = 1;               // blocks of one cluster sharing a tile's rows (1 below sm_90)
  int64_t rows_per_split = 0;  // -1 with run-time rows (computed per call)
  int unroll = 1;       // rows whose loads a thread issues before computing any of them (dense
                        // entry): 4, fewer with many vector operands (registers)
  int min_blocks = 0;   // __launch_bounds__ minimum blocks per SM (0: none)
  int64_t grid = 0;     // ceil(C / vec / tx) * split
  int param_bytes = 0;  // 8 * operands * (1 + rank), + 8 * rank (the sizes) with run-time rows
};

CudaColumnGeometry ColumnGeometryOf(const PointwiseKernel& kernel, int cc_major);

// Cluster helpers, emitted once per module that has a column-reduction kernel (after the row
// prelude, whose Sum/Max/Min operators it uses).
extern const char kCudaColumnPrelude[];

// Appends `kernel`'s namespace and its two entry points (<name>_contig, <name>_strided).
absl::Status EmitColumnReductionKernel(const PointwiseKernel& kernel, int cc_major,
                                       std::string& out);

}  // namespace tccd::codegen
