/* The decisions of cuBLASLt algorithm autotuning (tccd_cuda_gemm.c), as pure functions so that
 * tests can feed them fake timings (tests/codegen/cuda_host/gemm_tune_test.cc) without a GPU.
 *
 * At load, a gemm whose tccd_rt_gemm.tune is above 1 asks cuBLASLt's heuristic for that many
 * algorithms, times each on scratch operands (a warm-up run, then rounds of one run each,
 * interleaved, keeping each algorithm's fastest run: the minimum is what the GPU can do, where
 * a mean would take in other streams' work; the plans load on background threads while the
 * step runs) and keeps the heuristic's first unless another is clearly faster.
 *
 * Header-only, static inline: included by the runtime (plain C, libc only) and by C++ tests.
 */
#ifndef TCCD_CODEGEN_CUDA_HOST_RUNTIME_TCCD_CUDA_TUNE_H_
#define TCCD_CODEGEN_CUDA_HOST_RUNTIME_TCCD_CUDA_TUNE_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most algorithms one gemm times (the heuristic is asked for min(candidates, this)). */
#define TCCD_RT_TUNE_MAX_CANDIDATES 16

/* tccd_rt_gemm.tune: the candidates in its low byte; TCCD_RT_TUNE_SWAP also times the swapped
 * formulation D^T = op(B)^T op(A)^T with D^T row-ordered (gemms without an epilogue: the
 * weight gradients; tccd_cuda_gemm.c's make_objects) and keeps it when clearly faster. */
#define TCCD_RT_TUNE_CANDIDATES(tune) ((tune) & 0xff)
#define TCCD_RT_TUNE_SWAP 0x100
/* tccd_rt_gemm.tune's bits 16..23: the cuBLASLt workspace in MiB a static gemm's algorithm may
 * use (its segment reserves that much: codegen::kGemmWorkspaceBytes, TCCD_GEMM_WORKSPACE_MB);
 * 0 is the 8 MiB of plans made before the bits existed. Part of the table key (tune is). */
#define TCCD_RT_TUNE_WORKSPACE_MIB(tune) (((uint32_t)(tune) >> 16) & 0xffu)
static inline uint64_t tccd_rt_tune_workspace_bytes(int32_t tune) {
  const uint32_t mib = TCCD_RT_TUNE_WORKSPACE_MIB(tune);
  return (uint64_t)(mib != 0u ? mib : 8u) << 20;
}
/* A table entry's `used` word: bit 0 filled, this bit: the choice is the swapped formulation's. */
#define TCCD_RT_TUNE_USED_SWAPPED 0x100u

/* Another algorithm replaces the heuristic's first only when its best run takes at most this
 * fraction of the first's: below that the difference is within what one GPU's clocks and
 * another stream's work move a minimum by, and the heuristic's choice is the stable one. */
#define TCCD_RT_TUNE_MARGIN 0.97f

/* Scratch operands above this many bytes (A, B, D, bias and cuBLASLt's workspace together) are
 * not allocated: such a gemm keeps the heuristic's algorithm. The scratch comes from the driver,
 * beside PyTorch's caching allocator, while a step may run on other threads: 512 MiB bounds
 * what a load can take from it. ConvNeXt-T stage 1 at batch 64 needs ~200 MB, a BERT MLP at
 * 8192 tokens ~70 MB; GPT-2's LM head at 8192 tokens (823 MB of logits) is not timed. */
#define TCCD_RT_TUNE_MAX_BYTES (512ull << 20)

/* The time the timed rounds of one gemm may take, in milliseconds: the rounds after the first
 * are as many as fit (at most TCCD_RT_TUNE_MAX_ROUNDS in all, at least 2). */
#define TCCD_RT_TUNE_BUDGET_MS 10.0f
#define TCCD_RT_TUNE_MAX_ROUNDS 5

/* ---- The table of choices ------------------------------------------------------------------
 * What autotuning chose, keyed by a gemm's descriptor content (tccd_cuda_gemm.c's tune_key: its
 * sizes, layouts, types, epilogue, alpha and tune) and the device ordinal. Each library has one
 * of its own; a library that has tuned gemms also exports
 *   int tccd_cuda_set_tune_table(struct tccd_rt_tune_table* table)
 * through which the client hands every library of a device one table of the process
 * (client/tccd/runtime.py), which it saves in its local cache and reads back in the next
 * process: a warm start then times nothing it timed before. Libraries and threads share it
 * through `lock`, a spin lock taken with atomics (the runtime may call no libc but its list).
 * The layout is fixed-width and versioned by `magic`; the client checks magic, entry_bytes and
 * slots before it reads a saved table and only rewrites each used entry's device word. An
 * entry's slot depends on the key without the device (so that rewrite keeps it findable). An
 * algorithm read from a table is checked with cublasLtMatmulAlgoCheck before it is used.
 *
 * The client also shares the table through the daemon (client/tccd/gemm_tunes.py,
 * server/gemm_tune_store.h): entries the daemon holds are written into it before a library
 * loads, what a load timed is sent after it (the first writer wins), and where the daemon
 * holds another choice the client rewrites the entry and calls tccd_cuda_set_tune_table
 * again, which re-reads the table for the gemms already loaded (tccd_rt_gemm_apply_table). */
#define TCCD_RT_TUNE_TABLE_MAGIC 0x326e757464636374ull /* "tccdtun2": entries with timings */
#define TCCD_RT_TUNE_TABLE_SLOTS 1024
#define TCCD_RT_TUNE_KEY_WORDS 14 /* the last one is the device ordinal */

struct tccd_rt_tune_entry {
  uint64_t key[TCCD_RT_TUNE_KEY_WORDS];
  uint64_t algo[8]; /* cublasLtMatmulAlgo_t */
  uint64_t workspace_size;
  uint64_t used;   /* 1: filled (entries are never removed) */
  float chosen_ms; /* the choice's fastest run, launches charged (0: not timed here) */
  float first_ms;  /* the heuristic's first's (0: not timed) */
};

struct tccd_rt_tune_table {
  uint64_t magic;
  uint32_t entry_bytes; /* sizeof(struct tccd_rt_tune_entry) */
  uint32_t slots;       /* TCCD_RT_TUNE_TABLE_SLOTS */
  uint32_t lock;        /* 0 free, 1 held */
  uint32_t filled;      /* used entries: the client saves the table when it grew */
  struct tccd_rt_tune_entry entries[TCCD_RT_TUNE_TABLE_SLOTS];
};

/* The slot to probe first for `key` (FNV-1a over every word but the device). */
static inline uint32_t tccd_rt_tune_slot(const uint64_t* key) {
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i + 1 < TCCD_RT_TUNE_KEY_WORDS; ++i) {
    h ^= key[i];
    h *= 1099511628211ull;
  }
  return (uint32_t)((h ^ (h >> 29)) % TCCD_RT_TUNE_TABLE_SLOTS);
}

/* The entry holding `key`, or the free entry where it goes (used == 0), or NULL when the table
 * is full. The caller holds the table's lock. */
static inline struct tccd_rt_tune_entry* tccd_rt_tune_find(struct tccd_rt_tune_table* table,
                                                          const uint64_t* key) {
  const uint32_t first = tccd_rt_tune_slot(key);
  for (uint32_t probe = 0; probe < TCCD_RT_TUNE_TABLE_SLOTS; ++probe) {
    struct tccd_rt_tune_entry* e = &table->entries[(first + probe) % TCCD_RT_TUNE_TABLE_SLOTS];
    if (!e->used) return e;
    int same = 1;
    for (int i = 0; i < TCCD_RT_TUNE_KEY_WORDS && same; ++i) same = e->key[i] == key[i];
    if (same) return e;
  }
  return NULL;
}

static inline void tccd_rt_tune_lock(struct tccd_rt_tune_table* table) {
  while (__atomic_exchange_n(&table->lock, 1u, __ATOMIC_ACQUIRE) != 0u) {
  }
}

static inline void tccd_rt_tune_unlock(struct tccd_rt_tune_table* table) {
  __atomic_store_n(&table->lock, 0u, __ATOMIC_RELEASE);
}

/* 1 when `table` has this header's layout (a table the client made, or one it read). */
static inline int tccd_rt_tune_table_valid(const struct tccd_rt_tune_table* table) {
  return table != 0 && table->magic == TCCD_RT_TUNE_TABLE_MAGIC &&
         table->entry_bytes == sizeof(struct tccd_rt_tune_entry) &&
         table->slots == TCCD_RT_TUNE_TABLE_SLOTS;
}

/* The index of the algorithm to use among `n` candidates in the heuristic's order, given each
 * one's fastest run in milliseconds (`best_ms[i]` <= 0 or not finite: the candidate failed or
 * was not timed). 0 (the heuristic's first) unless a valid candidate takes at most `margin`
 * times the first's time, or the first failed and another did not. */
static inline int tccd_rt_tune_pick(const float* best_ms, int n, float margin) {
  int best = -1;
  for (int i = 0; i < n; ++i) {
    const float t = best_ms[i];
    if (!(t > 0.0f) || t > 3.0e38f) continue; /* failed, NaN or infinite */
    if (best < 0 || t < best_ms[best]) best = i;
  }
  if (best <= 0) return 0;
  const float first = best_ms[0];
  if (!(first > 0.0f) || first > 3.0e38f) return best;
  return best_ms[best] <= margin * first ? best : 0;
}

/* Candidates whose first timed run took more than this many times the fastest's are not run
 * again: noise does not make up that difference, and their runs are the longest (the H200 run
 * of 2026-11-27 measured 143 ms of plan loading for ConvNeXt-T stage 1's six MLP matmuls with
 * every candidate in every round, 2.3 ms untuned; how much of it slow candidates took was not
 * measured). */
#define TCCD_RT_TUNE_DROP_FACTOR 1.5f

/* Whether a candidate whose first run took `ms` is timed again, the fastest first run having
 * taken `fastest`. */
static inline int tccd_rt_tune_keep(float ms, float fastest) {
  return ms <= TCCD_RT_TUNE_DROP_FACTOR * fastest;
}

/* What one launch more than one costs a candidate, in milliseconds: split-K algorithms run a
 * memset and a reduction kernel beside their gemm (cublasLt::splitKreduce_kernel), which the
 * timing counts on the GPU but not on the host, where each launch takes a few microseconds
 * and a host-bound step pays them (the H200 run of 2026-11-27 with autotuning: T5 582 -> 649
 * kernels per step, Llama 243 -> 263, above Inductor's). A candidate's time for the choice is
 * its fastest run plus this for each extra launch. */
#define TCCD_RT_TUNE_LAUNCH_MS 0.004f

/* The candidate to use given each one's fastest run (`best_ms`, as tccd_rt_tune_pick) and its
 * launches per run (`launches[i]`, 0 when not counted: taken as 1): tccd_rt_tune_pick on the
 * times with TCCD_RT_TUNE_LAUNCH_MS per launch beyond the first. */
static inline int tccd_rt_tune_pick_launches(const float* best_ms, const int32_t* launches,
                                             int n, float margin) {
  float charged[TCCD_RT_TUNE_MAX_CANDIDATES];
  if (n > TCCD_RT_TUNE_MAX_CANDIDATES) n = TCCD_RT_TUNE_MAX_CANDIDATES;
  for (int i = 0; i < n; ++i) {
    const int32_t extra = launches != 0 && launches[i] > 1 ? launches[i] - 1 : 0;
    charged[i] = best_ms[i] > 0.0f ? best_ms[i] + (float)extra * TCCD_RT_TUNE_LAUNCH_MS
                                   : best_ms[i];
  }
  return tccd_rt_tune_pick(charged, n, margin);
}

/* How many timed rounds to run in all, given the first round's sum over the candidates kept
 * (`round_ms`): as many as fit TCCD_RT_TUNE_BUDGET_MS, between 2 and TCCD_RT_TUNE_MAX_ROUNDS. */
static inline int tccd_rt_tune_rounds(float round_ms) {
  if (!(round_ms > 0.0f)) return TCCD_RT_TUNE_MAX_ROUNDS;
  const float fit = TCCD_RT_TUNE_BUDGET_MS / round_ms;
  if (fit >= (float)TCCD_RT_TUNE_MAX_ROUNDS) return TCCD_RT_TUNE_MAX_ROUNDS;
  return fit >= 2.0f ? (int)fit : 2;
}

/* The 32-bit word cuMemsetD32 fills the scratch A and B with: small values of the gemm's type
 * (1/128 in each element), so that no run computes with NaNs, infinities or denormals, whose
 * speed may differ. dtype as struct tccd_rt_gemm's: 0 f32, 2 f16, 14 bf16. */
static inline uint32_t tccd_rt_tune_fill_word(int32_t dtype) {
  if (dtype == 2) return 0x20002000u;  /* f16 2^-7, twice */
  if (dtype == 14) return 0x3c003c00u; /* bf16 2^-7, twice */
  return 0x3c000000u;                  /* f32 2^-7 */
}

#ifdef __cplusplus
}
#endif

#endif /* TCCD_CODEGEN_CUDA_HOST_RUNTIME_TCCD_CUDA_TUNE_H_ */
