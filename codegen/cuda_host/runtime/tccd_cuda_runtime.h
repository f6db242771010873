/* The interface between the generated part of a kernels_cuda.so and its fixed C runtime.
 *
 * A kernels_cuda.so is linked from two objects (see codegen/cuda_host/cuda_host.h):
 *  - the per-graph object, generated with LLVM by the daemon: the cubin bytes, one constant
 *    `struct tccd_rt_kernel` per kernel, zero-initialised state arrays, one constant
 *    `struct tccd_rt_module`, and the exported entry points, each a one-line call into the
 *    runtime;
 *  - this runtime (tccd_cuda_runtime.c), compiled once at daemon build time and embedded.
 *
 * The generator builds LLVM struct types field by field after the structs below and checks
 * their layout against offsetof/sizeof from this header (codegen/cuda_host/host_module.cc), so
 * a field added here must be added there too. Only fixed-width integers and pointers: the
 * layout is the x86-64 SysV one on both sides.
 *
 * Plain C on purpose: the runtime may depend on nothing but libc (dlopen, dlsym, pthread mutexes,
 * memcpy, vsnprintf) and TLS; the CUDA driver is resolved with dlopen/dlsym at run time, so no
 * CUDA header is included and the few driver types and codes used are declared here.
 */
#ifndef TCCD_CODEGEN_CUDA_HOST_RUNTIME_TCCD_CUDA_RUNTIME_H_
#define TCCD_CODEGEN_CUDA_HOST_RUNTIME_TCCD_CUDA_RUNTIME_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Contexts (one per device for PyTorch, which uses primary contexts) a module can be loaded
 * into. The state arrays are sized by it: 32 * (24 + 24 * num_kernels) bytes of .bss. */
#define TCCD_RT_MAX_CONTEXTS 32

/* The largest kernel parameter block (codegen::kCudaMaxParamBytes). */
#define TCCD_RT_MAX_PARAM_BYTES 4096

/* Return codes. Driver failures return the driver's CUresult unchanged (for the codes that can
 * occur here it has the value of the cudaError_t of the same meaning); the runtime's own
 * failures use these, chosen to read right as a cudaError_t. */
#define TCCD_RT_SUCCESS 0
#define TCCD_RT_ERROR_INVALID_VALUE 1     /* bad arguments: NULL data, kernel index */
#define TCCD_RT_ERROR_NO_DRIVER 35        /* cudaErrorInsufficientDriver: no usable libcuda */
#define TCCD_RT_ERROR_INVALID_CONTEXT 201 /* no current CUDA context and no stream to ask */
#define TCCD_RT_ERROR_NOT_SUPPORTED 801   /* more than TCCD_RT_MAX_CONTEXTS contexts */
#define TCCD_RT_ERROR_CUBLAS 999          /* cudaErrorUnknown: cuBLASLt failed (see message) */

/* One kernel, constant (generated from codegen::CudaKernelLaunchInfo and the kernel's shape). */
struct tccd_rt_kernel {
  const char* name; /* the exported symbol, for messages */
  /* A kernel of a plan has only the entry its declared layout takes (the other name is "",
   * codegen/cuda_host/entry_points.h); a launch the present entry cannot run fails with
   * TCCD_RT_ERROR_INVALID_VALUE, and one the contig entry could run takes the strided. */
  const char* contig_entry;  /* "<name>_contig": every operand dense row-major, 16-byte aligned */
  const char* strided_entry; /* "<name>_strided": anything else */
  const int64_t* shape;      /* [rank] iteration space; NULL when rank == 0 */
  int64_t numel;             /* product of shape; 0 launches nothing; -1: run-time sizes
                                (tccd_rt_launch_sized; shape is -1 in those dims) */
  int32_t rank;
  int32_t num_operands;        /* inputs then outputs, as in the data array */
  int32_t block_size;          /* threads per block of both entries */
  int32_t elements_per_thread; /* of the contig entry (the strided one handles 1) */
  int32_t contig_param_bytes;  /* 8 * num_operands */
  int32_t strided_param_bytes; /* 8 * num_operands * (1 + rank) <= TCCD_RT_MAX_PARAM_BYTES */
  /* Row reductions (kind TCCD_RT_KIND_ROWS, codegen/cuda/cuda_backend.h): both entries take the
   * strided parameter block, launch `grid` blocks of block_size threads, and the contig entry
   * needs every element operand (bit clear in row_operands) contiguous over the trailing
   * num_reduced_dims dims, its leading-dim strides multiples of elements_per_thread and its
   * pointer 16-byte aligned. Column reductions (kind TCCD_RT_KIND_COLUMNS) launch the same way;
   * their contig entry needs every operand whose bit is clear contiguous over the trailing
   * rank - num_reduced_dims (kept) dims, its leading-dim strides multiples of
   * elements_per_thread and its pointer 16-byte aligned. Pointwise kernels: kind 0, grid and
   * num_reduced_dims 0, row_operands their fixed-layout operands. */
  int32_t kind;
  int32_t num_reduced_dims;
  int64_t grid; /* rows with run-time row counts (numel -1): the rows per block, the grid being
                   ceil(rows / it) at each launch (tccd_rt_launch_sized) */
  uint64_t row_operands; /* rows: bit o: operand o has one value per row; columns: operand o is
                            constant along the kept dims (read per row) or has a fixed layout;
                            pointwise: operand o has a fixed layout (the contig entry was
                            compiled for its declared strides, codegen::PointwiseKernel::
                            fixed_strides). Either way the contig precondition skips it. */
};

#define TCCD_RT_KIND_POINTWISE 0
#define TCCD_RT_KIND_ROWS 1
#define TCCD_RT_KIND_COLUMNS 2
/* Scatter kernels (codegen::CudaKernelKind::kScatter): launched as pointwise kernels after their
 * one output (the last operand, contiguous) is zero-filled: `grid` 4-byte elements. */
#define TCCD_RT_KIND_SCATTER 3
/* Tiled kernels (codegen::CudaKernelKind::kTile): one entry (strided_entry; contig_entry NULL)
 * taking the strided block, launched as row reductions are: `grid` blocks of block_size. */
#define TCCD_RT_KIND_TILE 4

/* One kernel loaded into one context. Zero until its context's entry is published. */
struct tccd_rt_function {
  void* contig;                 /* CUfunction; NULL when the kernel has no such entry */
  void* strided;                /* CUfunction; NULL when the kernel has no such entry */
  int32_t contig_blocks_per_sm; /* cuOccupancyMaxActiveBlocksPerMultiprocessor, >= 1 */
  int32_t strided_blocks_per_sm;
};

/* One context the module is loaded into. Written once, under the runtime's mutex; `ctx` is
 * stored last with release order, so a reader that sees it (acquire) sees the rest, and the
 * functions of this slot. Entries fill from index 0 and are never removed. */
struct tccd_rt_context {
  void* ctx;    /* CUcontext; NULL = free slot */
  void* module; /* CUmodule */
  int32_t num_sms;
  int32_t reserved;
};

/* One cuBLASLt matmul, constant, already in cuBLAS's column-major formulation (the daemon maps
 * PyTorch's row-major mm/addmm/bmm onto it, codegen/cuda_host/match_gemms.h):
 *   D[m x n] = alpha * op(A)[m x k] * op(B)[k x n] (+ bias[m] broadcast along n; relu),
 * `batch` times with the given element strides between batches. Operands in a segment step:
 * A, B, D, then bias when the epilogue has one. */
struct tccd_rt_gemm {
  const char* name; /* for messages */
  int64_t m, n, k;
  int64_t lda, ldb, ldd;
  int64_t batch; /* >= 1 */
  int64_t stride_a, stride_b, stride_d;
  int32_t trans_a, trans_b; /* cublasOperation_t: 0 = N, 1 = T */
  int32_t dtype;            /* cudaDataType_t of A, B, D and bias: 0 f32, 2 f16, 14 bf16 */
  int32_t compute;          /* cublasComputeType_t */
  int32_t epilogue;         /* cublasLtEpilogue_t: 1 none, 4 bias, 6 relu + bias */
  float alpha;
  /* Algorithms to time at load (tccd_cuda_tune.h), in the low byte: 0 or 1 takes the
   * heuristic's first, as before autotuning; more asks the heuristic for that many and keeps
   * the fastest. TCCD_RT_TUNE_SWAP (0x100): also the swapped formulation's. */
  int32_t tune;
};

/* A gemm whose sizes come with each call (the matmuls of graphs with symbolic sizes, ABI
 * "tccd-cuda-sym-gemm-1"): m is TCCD_RT_GEMM_SIZED and m, n, k, lda, ldb, ldd, batch and the
 * three batch strides are ignored; the call passes them, in that order, as
 * TCCD_RT_GEMM_DIMS words (tccd_rt_gemm_sized). Its cuBLASLt objects are made per distinct
 * sizes and kept in a small cache (tccd_cuda_gemm.c), not at load time. */
#define TCCD_RT_GEMM_SIZED (-1)
#define TCCD_RT_GEMM_DIMS 10

/* One gemm's cuBLASLt objects in one context (the chosen algorithm depends on the device). Zero
 * until its context's entry is published, like tccd_rt_function. */
struct tccd_rt_gemm_state {
  void* desc;     /* cublasLtMatmulDesc_t */
  void* layout_a; /* cublasLtMatrixLayout_t */
  void* layout_b;
  void* layout_d;
  uint64_t algo[8];        /* cublasLtMatmulAlgo_t */
  uint64_t workspace_size; /* what the algorithm needs, <= the segment's gemm workspace */
  int32_t swapped;         /* 1: the objects compute D^T = op(B)^T op(A)^T (B's matrix first) */
  int32_t device;          /* the device ordinal its tune key names (tuned static gemms) */
};

/* Where a segment operand lives: io[index] + byte_offset (index < num_io), or, with index -1,
 * workspace + byte_offset. A view is just another offset into the same buffer. */
struct tccd_rt_operand {
  int64_t byte_offset;
  int32_t index;
  int32_t reserved;
};

/* One operation of a segment: kernel `index` (strides: [num_operands x rank] as in
 * "tccd-cuda-1") or gemm `index` (strides NULL). */
struct tccd_rt_step {
  const int64_t* strides;
  int32_t kind; /* 0 kernel, 1 gemm */
  int32_t index;
  int32_t first_operand; /* into the segment's operands */
  int32_t num_operands;
};

#define TCCD_RT_STEP_KERNEL 0
#define TCCD_RT_STEP_GEMM 1
#define TCCD_RT_MAX_STEP_OPERANDS 64

/* A straight-line sequence of steps run by one call (ABI "tccd-cuda-segment-1"). */
struct tccd_rt_segment {
  const char* name;
  const struct tccd_rt_step* steps;
  const struct tccd_rt_operand* operands;
  int32_t num_steps;
  int32_t num_io;
  int64_t workspace_bytes;       /* the caller's buffer size, for the NULL check */
  int64_t gemm_workspace_offset; /* cuBLASLt's scratch inside the workspace */
  int64_t gemm_workspace_bytes;
};

/* Everything the runtime needs to know about one kernels_cuda.so; one constant per .so. */
struct tccd_rt_module {
  const uint8_t* image;                 /* the cubin, for cuModuleLoadData; NULL: no kernels */
  uint64_t image_size;                  /* for messages */
  const struct tccd_rt_kernel* kernels; /* [num_kernels] */
  struct tccd_rt_context* contexts;     /* [TCCD_RT_MAX_CONTEXTS], zero-initialised */
  struct tccd_rt_function* functions;   /* [TCCD_RT_MAX_CONTEXTS * num_kernels], context-major */
  int32_t num_kernels;
  int32_t num_gemms;
  const struct tccd_rt_gemm* gemms;       /* [num_gemms] */
  struct tccd_rt_gemm_state* gemm_states; /* [TCCD_RT_MAX_CONTEXTS * num_gemms], zeroed */
};

/* Loads the CUDA driver (once per process) and `module` into the calling thread's current
 * context (once per context). Not for use during stream capture (cuModuleLoadData). */
int tccd_rt_init(const struct tccd_rt_module* module);

/* Launches kernel `kernel_index` of `module` on `stream` (a CUstream; NULL = the legacy default
 * stream) in the current context, the contig entry when every operand is contiguous and
 * 16-byte aligned, else the strided one. data/strides as in ABI "tccd-cuda-1". Asynchronous;
 * capture-safe once the module is loaded into the current context. */
int tccd_rt_launch(const struct tccd_rt_module* module, int32_t kernel_index, void* const* data,
                   const int64_t* strides, void* stream);

/* A pointwise kernel with run-time sizes (numel -1, its shape -1 where the size comes at run
 * time): `shape` holds every dim's size for this call (static dims as built); the contig entry
 * gets data[] then numel, the strided one data[], strides[] then shape[]. A row reduction with
 * run-time row counts: both entries get data[], strides[] then shape[]. */
int tccd_rt_launch_sized(const struct tccd_rt_module* module, int32_t kernel_index,
                         void* const* data, const int64_t* strides, const int64_t* shape,
                         void* stream);

/* Enqueues gemm `index` (m == TCCD_RT_GEMM_SIZED) on `stream` with this call's sizes: `dims`
 * m, n, k, lda, ldb, ldd, batch, stride_a, stride_b, stride_d (column-major, as struct
 * tccd_rt_gemm); `data` A, B[, bias], D (inputs then the output, as a plan's kernel step);
 * `workspace` cuBLASLt's scratch of `workspace_bytes` (the algorithm is chosen for at most
 * that much; NULL and 0 allowed). The descriptor, layouts and heuristic result are looked up
 * in a cache keyed by the sizes, made on a miss (not capture-safe then: symbolic plans are
 * never captured). Sizes m, n or batch 0 enqueue nothing. */
int tccd_rt_gemm_sized(const struct tccd_rt_module* module, int32_t index, void* const* data,
                       const int64_t* dims, void* workspace, uint64_t workspace_bytes,
                       void* stream);

/* The sized gemm cache's counters since this library was loaded (tccd_rt_gemm_sized), to see
 * where a sized gemm call's host time goes (exported as tccd_cuda_gemm_stats by a library with
 * sized gemms; the plan profile prints them): TCCD_RT_GEMM_STATS words, in this order. */
enum {
  TCCD_RT_GEMM_STAT_CALLS,        /* sized gemm calls that ran a matmul (not the empty ones) */
  TCCD_RT_GEMM_STAT_HITS,         /* calls that found their objects in the cache */
  TCCD_RT_GEMM_STAT_MISSES,       /* calls that made them: descriptor, layouts, heuristic */
  TCCD_RT_GEMM_STAT_KEY_CHURN,    /* misses where the cache held the same gemm and sizes under
                                   * another pointer alignment or workspace (a key that changes
                                   * between calls, not a new size) */
  TCCD_RT_GEMM_STAT_EVICTIONS,    /* entries destroyed to make room */
  TCCD_RT_GEMM_STAT_HEURISTICS,   /* cublasLtMatmulAlgoGetHeuristic calls */
  TCCD_RT_GEMM_STAT_SETUP_NS,     /* wall time of the misses' object making and heuristic */
  TCCD_RT_GEMM_STAT_MATMUL_NS,    /* wall time in cublasLtMatmul (and the bias attribute) */
  TCCD_RT_GEMM_STAT_MISS_MATMUL_NS, /* the part of it in calls that missed: a new algorithm's
                                     * first launch loads its kernel (CUDA's lazy loading) */
  TCCD_RT_GEMM_STATS
};

/* Copies min(n, TCCD_RT_GEMM_STATS) counters into out; returns TCCD_RT_GEMM_STATS. */
int tccd_rt_gemm_sized_stats(uint64_t* out, int n);

/* Runs `segment` on `stream`: every step in order, asynchronously. io/workspace as in ABI
 * "tccd-cuda-segment-1". Capture-safe once the module is loaded into the current context. */
int tccd_rt_run_segment(const struct tccd_rt_module* module, const struct tccd_rt_segment* segment,
                        void* const* io, void* workspace, void* stream);

/* Makes `table` (a struct tccd_rt_tune_table, tccd_cuda_tune.h) the table of autotuning's
 * choices of this module's later loads, shared with the other modules the caller gives it to
 * (exported as tccd_cuda_set_tune_table(table) by a library with tuned gemms), and re-reads it
 * for the gemms `module` already loaded (tccd_rt_gemm_apply_table: the client calls it again
 * after the daemon answered with another process's choice). The table must outlive the
 * module. TCCD_RT_ERROR_INVALID_VALUE, nothing changed, when its header is not this layout's. */
int tccd_rt_set_tune_table(const struct tccd_rt_module* module, void* table);

/* The calling thread's last failure message ("" if none). Successes do not clear it. */
const char* tccd_rt_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* TCCD_CODEGEN_CUDA_HOST_RUNTIME_TCCD_CUDA_RUNTIME_H_ */
