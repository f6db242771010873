// The CUDA backend: fused pointwise kernels -> CUDA C source -> PTX and cubin (NVRTC).
//
// Why CUDA C through NVRTC rather than LLVM IR through the NVPTX backend and ptxas:
//  * the kernels that come next (reductions, softmax, norms) are far clearer as CUDA C templates
//    (warp shuffles, shared memory) than as IR-builder code;
//  * NVRTC produces a cubin for any compute capability on a machine without a GPU (CI has none)
//    and PTX text for golden tests, in-process, without spawning ptxas;
//  * precise libdevice math (expf, erff, tanhf, ...) comes for free.
// NVRTC is loaded with dlopen at first use (libnvrtc.so.13, then .so.12; the loader's default
// path, then $CUDA_HOME/lib64, /usr/local/cuda/lib64, /usr/local/cuda/targets/x86_64-linux/lib),
// so the daemon binary does not depend on the CUDA toolkit. Without it, compiling returns
// FAILED_PRECONDITION "CUDA toolkit (NVRTC) not found: ...". No NVRTC type appears in this header.
//
// Thread-safety: every function here may be called concurrently. NVRTC is loaded once
// (std::call_once); each compile uses its own NVRTC program.
//
// Generated code, per PointwiseKernel `k` (static shapes: k.shape, numel and the vector width
// are compile-time constants in the source):
//
//   extern "C" __global__ void k_contig(const <params> p)   // every operand contiguous
//   extern "C" __global__ void k_strided(const <params> p)  // anything else
//
// Both are launched with blockDim = (kCudaBlockSize, 1, 1), gridDim = (GridSize(...), 1, 1), no
// dynamic shared memory. The single parameter is a struct passed BY VALUE (cuLaunchKernel's
// kernelParams = {&buffer}); its bytes are, for O = k.num_operands(), R = k.shape.size():
//
//   offset 0:      uint64 ptr[O]      device pointers: inputs, then outputs (already offset by
//                                     storage_offset), i.e. tccd-cpu-1's `data` array
//   offset 8*O:    int64  stride[O][R] only in k_strided: element strides of every operand in
//                                     the iteration space, operand-major, 0 where an input
//                                     broadcasts, i.e. tccd-cpu-1's `strides` array
//
// so k_contig takes 8*O bytes and k_strided 8*O*(1+R) bytes (CudaKernelLaunchInfo has both;
// the source static_asserts them). The launcher uses k_contig when, for every operand, the
// strides equal the row-major strides of k.shape (dims of size 1 may have any stride) and the
// pointer is 16-byte aligned; otherwise k_strided (which needs only element alignment).
// k.entries (KernelEntries) may leave one of them out: a kernel of a plan has only the one its
// declared layout takes (codegen/cuda_host/entry_points.h); the absent entry's name in
// CudaKernelLaunchInfo is empty.
//
//  * k_contig: thread t handles vectors t, t + T, t + 2T, ... (grid-stride, T = grid * block) of
//    `elements_per_thread` = 16 bytes / (largest operand dtype size) consecutive elements: one
//    128-bit load or store per thread for the widest operands, proportionally narrower ones for
//    the others (32-bit for a bool next to f32), so that every warp access is one contiguous
//    span; the numel % elements_per_thread tail elements go to threads 0.. of the grid, one
//    each. Measured on H100: 2.7-3.0 TB/s for large tensors (cuMemcpyDtoD: 3.0 TB/s).
//  * k_strided: one element per thread per iteration, grid-stride; the flat index is decomposed
//    over the baked shape and dotted with the stride parameters.
// Indices are 32-bit when numel < 2^31 and 64-bit otherwise; offsets are always 64-bit. The grid
// must satisfy grid * block <= 2^31 (GridSize's results always do).
//
// Memory contract (as on CPU): outputs must not partially overlap inputs or each other; an output
// may be exactly an input (in-place), since every point reads its inputs before it writes.
//
// Numerics follow the CPU backend (codegen/cpu/llvm_emitter.cc): IEEE f32/f64 arithmetic without
// fast-math (precise libdevice functions, IEEE division and sqrt, denormals kept); FMA
// contraction is on (NVRTC's default, like nvcc's for ATen's kernels), so a*b+c may differ from
// the CPU by one rounding, and where a*b overflows also in kind (3e38 * 7e4 + -inf is -inf as an
// FMA, NaN on the CPU). f16/bf16 are raw 16-bit patterns converted with c10's algorithms
// (round to nearest even, NaN -> 0x7e00 / 0x7fc0); maximum/minimum propagate NaN;
// round is half-to-even (rint); float->int truncates (narrow ints through i32, which wraps).
// Only out-of-range float->int casts differ from x86 (the GPU saturates): undefined in torch too.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "codegen/kernel/pointwise_kernel.h"

namespace tccd::codegen {

// Threads per block of every generated entry point (also in each kernel's __launch_bounds__).
inline constexpr int kCudaBlockSize = 256;

// The largest parameter block a generated kernel may take. CUDA allows 4 KiB on every device
// and driver (32 KiB only from CUDA 12.1 on Volta+); kernels whose k_strided parameters would
// exceed it are rejected with UNIMPLEMENTED.
inline constexpr int kCudaMaxParamBytes = 4096;

struct CudaTarget {
  int cc_major = 9;  // compute capability, e.g. 9.0 for H100
  int cc_minor = 0;

  // The NVRTC architecture and the target's part of compile keys: "sm_90", "sm_120".
  std::string KeyString() const;
};

// A client's compute capability (tccd.v1.Target.cuda_cc_major/minor) -> CudaTarget.
// INVALID_ARGUMENT outside 7.0 .. 12.9. Whether this daemon's NVRTC can generate code for it is
// checked at compile time (NVRTC 13 dropped sm_70/sm_72; see CompileCudaKernels).
absl::StatusOr<CudaTarget> CudaTargetFromProto(int cc_major, int cc_minor);

// For a process that runs one compile at a time (a compile worker): a graph's NVRTC compiles
// may run on forked child processes instead of threads (TCCD_NVRTC_PROCESSES, default on;
// nvrtc_processes.h says why). Not called: threads, as in the daemon's own process. Also
// starts NVRTC's set-up (its first compile) in the background (TCCD_NVRTC_WARM_UP, default on),
// off the first graph's path.
void AllowNvrtcChildProcesses();

// The NVRTC that compiles, as "nvrtc-13.0": part of the compile key, since it changes the code.
// FAILED_PRECONDITION when NVRTC cannot be loaded.
absl::StatusOr<std::string> CudaCompilerVersion();

// Row reductions (PointwiseKernel::is_row_reduction(); cuda_row_emitter.cc):
//   extern "C" __global__ void k_contig(const Params p)    // rows contiguous, 16-byte aligned
//   extern "C" __global__ void k_strided(const Params p)   // anything else
// Both take the strided layout above (8*O pointers, then O x R strides) and a fixed launch
// geometry computed at compile time (CudaKernelLaunchInfo::grid and block_size): the trailing
// num_reduced_dims dims form rows of N elements, M rows. T threads work on one row (T <= 32:
// 256/T rows per block, shuffles only; T >= 64: one row per block, warps combined through
// shared memory); each thread holds its C chunks of V consecutive elements of every element
// value in registers ("persistent" reduction: the row is read from memory once, however many
// reductions the body has: two-pass mean/variance, max then sum for softmax). Row operands
// (RowReduction::row_operand) are read and written once per row at their row offset; element
// operands at row offset + element offset. The contig entry needs, for every element operand,
// row-major contiguous strides over the reduced dims (size-1 dims ignored), leading-dim
// strides that are multiples of V and a 16-byte aligned pointer: then it moves V elements with
// one vector access. The strided entry decomposes every element index over the reduced dims.
// Outputs must not overlap inputs (the client allocates them fresh). Measured on H100: see
// tests/codegen/cuda/cuda_kernel_gpu_check.cc. Run-time sizes (symbolic graphs: kRuntimeDim in
// leading dims, or as the one reduced dim): both entries take every dim's size after the
// strides (8 * R more bytes), the row count and decomposition (and a run-time row length) come
// from them, and the launch computes the grid (tccd_rt_launch_sized).
//
// Column reductions (PointwiseKernel::is_column_reduction(); cuda_column_emitter.cc) take the
// same two entries and parameter block: the leading num_reduced_dims dims are R rows, the
// trailing ones C columns; a block owns a tile of columns and streams over its rows (split over
// the blocks of a thread-block cluster on sm_90), combining in shared memory. The contig entry's
// precondition is the same over the trailing (kept) dims, for every operand but the kept-
// broadcast ones (RowReduction::kept_broadcast, read per row through the strides; they are the
// bits of CudaKernelLaunchInfo::row_operands for this kind).
//
// Scatter kernels (HasScatter: embedding's backward, "Scatter kernels" in
// kernel/pointwise_kernel.h) are index kernels, launched as pointwise ones, of kind kScatter: the
// launch first zero-fills their one output, `grid` f32 elements (cuMemsetD32Async on the same
// stream), since the kernel only adds into it.
//
// Tiled kernels (PointwiseKernel::is_tile(); cuda_tile_emitter.cc), kind kTile, have one entry,
//   extern "C" __global__ void k_tile(const Params p)
// named in the strided_entry slot (contig_entry is empty), taking the strided block; the
// layout is compiled in (the strides passed are the declared ones, unused). Launched like a
// row reduction: `grid` blocks (one per 32 x 32 tile) of block_size threads.
// Depthwise templates (IsDepthwiseTemplateKernel; cuda_depthwise_emitter.h) launch as tiled
// kernels do, kind kTile, their one entry <name>_dw in the strided slot; `grid` blocks of
// block_size threads (one thread a run of outputs and a channel pair, or a window row and a
// channel pair). Their kernels have dense launches only (KernelEntries::kDense).
enum class CudaKernelKind : int {
  kPointwise = 0,
  kRowReduction = 1,
  kColumnReduction = 2,
  kScatter = 3,
  kTile = 4
};

// How to launch one kernel of a CudaModule.
struct CudaKernelLaunchInfo {
  std::string name;           // the PointwiseKernel's name
  std::string contig_entry;   // "<name>_contig"; empty when not emitted (KernelEntries)
  std::string strided_entry;  // "<name>_strided"; empty when not emitted
  int block_size = kCudaBlockSize;
  int elements_per_thread = 1;  // of contig_entry: 16 bytes / the largest operand dtype's size
                                // (4 with any f32/i32, 8 for bf16-only, 2 with any f64/i64);
                                // 1 for strided_entry
  int64_t numel = 0;            // product of the shape; 0: launch nothing
  int num_operands = 0;
  int rank = 0;
  int contig_param_bytes = 0;   // 8 * num_operands (row reductions: as strided)
  int strided_param_bytes = 0;  // 8 * num_operands * (1 + rank)
  // Row reductions (kind kRowReduction), columns and tiles; pointwise kernels keep the defaults.
  CudaKernelKind kind = CudaKernelKind::kPointwise;
  int64_t grid = 0;  // blocks of both entries (fixed: ceil(rows / rows per block));
                     // with run-time rows (numel -1): the rows per block instead;
                     // kScatter: the f32 elements of the output to zero-fill
  int num_reduced_dims = 0;
  uint64_t row_operands = 0;  // bit o: operand o is a row operand (rows), kept-broadcast
                              // (columns) or a fixed-layout operand (pointwise and columns,
                              // PointwiseKernel::fixed_strides); the dense test skips it
};

// One compiled kernel: its IR and how to launch it, together (the host library needs both: the
// IR's shape and operands, the launch geometry), so that nothing pairs them up by index.
struct CudaKernel {
  PointwiseKernel ir;
  CudaKernelLaunchInfo launch;  // launch.name == ir.name
};

// One NVRTC program for all kernels of a graph (one compile instead of many, and one
// cuModuleLoadData on the client): both entry points of every kernel live in the same PTX/cubin.
struct CudaModule {
  std::string cuda_source;  // what NVRTC compiled (EmitCudaSource), for dumps
  std::string ptx;          // PTX text for the target (inspection, golden tests)
  std::string cubin;        // ELF cubin for exactly target.KeyString(); load with cuModuleLoadData
  std::vector<CudaKernel> kernels;  // in the order of the input kernels
};

// How CompileCudaKernels launches `kernel` (entry names from kernel.name) on compute capability
// cc_major. For a kernel that passes VerifyPointwiseKernel.
CudaKernelLaunchInfo LaunchInfoOf(const PointwiseKernel& kernel, int cc_major);

// Whether the backend emits `kernel` as a depthwise template (cuda_depthwise_emitter.h; kind
// kTile, one entry <name>_dw) instead of its index form.
bool IsDepthwiseTemplateKernel(const PointwiseKernel& kernel);

// Compiles all kernels into one module for `target`. Deterministic: the same kernels and target
// give byte-identical source, PTX and cubin.
//
// Errors: INVALID_ARGUMENT for no kernels, a kernel that fails VerifyPointwiseKernel or
// duplicate kernel names; UNIMPLEMENTED for a kernel whose parameters exceed kCudaMaxParamBytes;
// FAILED_PRECONDITION when NVRTC is not found or cannot generate code for the target;
// INTERNAL when NVRTC rejects the generated source (a tccd bug; the message carries NVRTC's log).
// A failure affects only this call.
absl::StatusOr<CudaModule> CompileCudaKernels(absl::Span<const PointwiseKernel> kernels,
                                              const CudaTarget& target);

// The CUDA C source CompileCudaKernels compiles: self-contained (no #include, so NVRTC needs no
// include path), deterministic, one namespace and two entry points per kernel. Pure: needs no
// NVRTC. Same errors as CompileCudaKernels for the kernels themselves.
// cc_major: the target's compute capability; column reductions use thread-block clusters from
// 9 on. Default: 9 (the golden corpus's sm_90).
absl::StatusOr<std::string> EmitCudaSource(absl::Span<const PointwiseKernel> kernels,
                                           int cc_major = 9);

// Blocks to launch for `numel` elements when each thread handles `elements_per_thread` of them
// per iteration (CudaKernelLaunchInfo::elements_per_thread for the contig entry, 1 for strided):
// enough blocks to give every thread one vector, capped at one full wave of resident blocks,
// num_sms * blocks_per_sm, beyond which the kernels' grid-stride loops take over (so no block
// waits for a second wave). blocks_per_sm should come from
// cuOccupancyMaxActiveBlocksPerMultiprocessor(entry, block_size, 0), computed once per loaded
// kernel: register use, hence occupancy, differs per kernel. Returns 0 when numel is 0
// (launch nothing).
int64_t GridSize(int64_t numel, int elements_per_thread, int block_size, int num_sms,
                 int blocks_per_sm);

}  // namespace tccd::codegen
