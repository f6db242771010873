// The kernels of the CUDA host library's GPU check, shared by the generator
// (cuda_host_gpu_gen.cc, which needs LLVM and NVRTC and runs anywhere) and the check
// (cuda_host_gpu_check.cc, which needs only the CUDA driver and runs on the GPU machine).
// Every kernel is in one kernels_cuda.so, in this order.
#pragma once

#include <cstdint>

namespace tccd::cuda_host_gpu {

// relu(a * b + c) on f32; the check launches it on dense operands (contig entry), with c
// broadcast along dim 0 and with a misaligned output (strided entry), on the legacy default
// stream, from a thread without a current context, and inside a CUDA graph capture.
inline constexpr const char* kRelu = "relu";
inline constexpr int64_t kReluRows = 257, kReluCols = 129;

// The same at 4096 x 4096: more blocks than one wave, so the grid-stride loop is exercised.
inline constexpr const char* kReluBig = "relu_big";
inline constexpr int64_t kReluBigRows = 4096, kReluBigCols = 4096;

// f32 -> bf16 (round to nearest even), contiguous.
inline constexpr const char* kCastBf16 = "cast_bf16";
inline constexpr int64_t kCastRows = 1000, kCastCols = 37;

// a + b on f32 where a is a transposed view (strided entry).
inline constexpr const char* kAddT = "add_t";
inline constexpr int64_t kAddRows = 300, kAddCols = 200;

// The generator's output, in the folder it is given.
inline constexpr const char* kLibraryFile = "kernels_cuda.so";

}  // namespace tccd::cuda_host_gpu
