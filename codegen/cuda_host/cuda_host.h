// The CUDA host library: a CudaModule (one cubin, N kernels) -> the bytes of "kernels_cuda.so",
// an x86-64 ELF shared object that the Python client dlopens and calls once per NativeCall step
// (ABI "tccd-cuda-1", tccd.v1.NativeCall). It exports exactly:
//
//   extern "C" int <kernel name>(void* const* data, const int64_t* strides, void* stream);
//       Launches the kernel on `stream` (a CUstream / cudaStream_t; NULL = the legacy default
//       stream) in the calling thread's current CUDA context and returns at once: 0, or a
//       CUresult / cudaError_t-valued code with the message in tccd_cuda_last_error(). data and
//       strides as in tccd-cpu-1 (inputs then outputs; operand-major [num_operands x rank]
//       element strides in the iteration space, 0 where an input broadcasts); only read, and
//       only during the call. Picks <name>_contig when every operand's strides are the
//       row-major strides of the shape (dims of size 1 ignored) and every pointer is 16-byte
//       aligned, else <name>_strided; grid = GridSize(numel, elements_per_thread (1 for the
//       strided entry), block, the device's SM count, the entry's occupancy), block =
//       CudaKernelLaunchInfo::block_size, no dynamic shared memory (codegen/cuda/cuda_backend.h).
//       A kernel with numel 0 returns 0 without touching the driver.
//   extern "C" int tccd_cuda_init(void);
//       Loads the CUDA driver (once per process) and the cubin into the current context (once
//       per context): cuModuleLoadData, cuModuleGetFunction and the occupancy of every entry.
//       Call it when the library is loaded, with the device current, outside stream capture.
//       A launch in a context the module is not loaded into yet loads it first (not
//       capture-safe), so calling it on each device used keeps every launch capture-safe.
//   extern "C" const char* tccd_cuda_last_error(void);
//       The calling thread's last failure message ("" if none; successes do not clear it);
//       valid until that thread's next failing call.
//
// Launch path: no lock, no allocation, no host-device synchronisation: a lock-free lookup of
// the current context in a small table (TCCD_RT_MAX_CONTEXTS = 32 contexts; modules stay loaded
// until the process exits), the contiguity test, one cuLaunchKernel. Safe under CUDA graph
// capture once the module is loaded in the capturing context, and from any number of threads.
// If the thread has no current context, the stream's (cuStreamGetCtx) is pushed for the call.
//
// The .so loads anywhere: it has no DT_NEEDED entries, and its imports are only libc's dlopen,
// dlsym, dlerror, pthread_mutex_lock/unlock, memcpy, memmove, memset, snprintf, vsnprintf and
// ld.so's __tls_get_addr (host_imports.h). The driver is dlopen'ed at first use
// (libcuda.so.1, RTLD_NOLOAD first, since PyTorch has loaded it; then a normal load) and
// resolved with dlsym; without one, every entry point returns 35 (cudaErrorInsufficientDriver)
// and the message says "the CUDA driver could not be loaded: ...".
//
// How it is built (decided; see CMakeLists.txt):
//  * runtime/tccd_cuda_runtime.c, plain C compiled once at daemon build time with fixed flags
//    (-O2 -fPIC -fvisibility=hidden -fno-stack-protector -fno-asynchronous-unwind-tables) and
//    embedded in the daemon (runtime_object.h), holds everything fixed: driver loading, the
//    context table, the contiguity test, grid size, launch, errors. Written in C so that it is
//    readable and testable as code rather than IR-builder calls, and references only libc.
//  * host_module.cc generates, per graph, with LLVM's IRBuilder: the cubin as a constant, one
//    descriptor per kernel (entry names, shape, numel, operands, vector width, parameter
//    sizes), zero-initialised per-context state, the module descriptor, and the exported stubs
//    above, each a tail call into the runtime (`<name>` = tccd_rt_launch(&module, index, ...)).
//    Compiled for the baseline "x86-64" CPU (host code is not hot; any x86-64 client runs it).
//  * LLD links the two objects in-process (codegen/llvm/lld_link.h); the result is checked
//    (exports exactly as above, imports on the allow-list, no DT_NEEDED) before it is returned.
//
// Thread-safety: BuildCudaHostLibrary may be called concurrently (own LLVMContext and target
// machine per call; LLD is serialised inside LinkSharedObjects). Deterministic: the same inputs
// give byte-identical .so files.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "codegen/cuda/cuda_backend.h"
#include "codegen/cuda_host/host_program.h"
#include "codegen/kernel/pointwise_kernel.h"

namespace tccd::codegen {

// The artifact's conventional name (tccd.v1.Artifact.name, kind CUDA_HOST_OBJECT).
inline constexpr char kCudaHostLibraryName[] = "kernels_cuda.so";

// Builds the .so for `module` (CompileCudaKernels or CompileCudaKernelObjects made it; each of
// its kernels carries its IR, for the shape and operands, and its launch information). Returns
// the .so's bytes.
//
// Errors, affecting only this call: INVALID_ARGUMENT for no kernels, an empty cubin, a kernel
// whose launch information does not match its IR (name, operands, rank, numel, parameter
// sizes), parameters over kCudaMaxParamBytes, or a kernel name that is not a C identifier, is
// duplicated, or is reserved (tccd_cuda_*, tccd_rt_*, or an imported libc name: it would
// become an exported symbol); INTERNAL for LLVM/LLD failures or an artifact that fails the
// import/export check (tccd bugs); UNAVAILABLE when LLD's temporary files cannot be written.
//
// `program` adds cuBLASLt matmuls and segments (host_program.h): one more export per segment,
//   extern "C" int <segment name>(void* const* io, void* workspace, void* stream);
// (ABI "tccd-cuda-segment-1", tccd.v1.NativeSegment), and one per gemm with run-time sizes
// (GemmSpec::sized, the matmuls of symbolic plans: ABI "tccd-cuda-sym-gemm-1", host_program.h),
//   extern "C" int <gemm name>(void* const* data, const int64_t* dims, void* workspace,
//                              uint64_t workspace_bytes, void* stream);
// whose cuBLASLt objects are made per distinct sizes at call time (tccd_rt_gemm_sized). A
// segment runs its kernels and matmuls in order on `stream` (tccd_rt_run_segment). cuBLASLt is dlopen'ed like the driver
// (RTLD_NOLOAD first: PyTorch's copy) when the module is loaded into a context, where each
// matmul's descriptor, layouts and heuristic algorithm are made once. A module may have
// matmuls and no kernels (then there is no cubin). A matmul with a bias epilogue stores the
// bias pointer in its descriptor at launch: one segment must not run concurrently from two
// threads on the same device (PyTorch never does that with one compiled graph).
absl::StatusOr<std::string> BuildCudaHostLibrary(const CudaModule& module,
                                                 const HostProgram& program = {});

}  // namespace tccd::codegen
