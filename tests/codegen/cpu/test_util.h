// Helpers for CPU backend tests: a kernel builder, the host's CpuTarget, and a loader that
// dlopens compiled .so bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "codegen/cpu/cpu_backend.h"
#include "codegen/kernel/pointwise_kernel.h"

namespace tccd::codegen::testing {

using ir::DType;
using KernelFn = void (*)(void* const* data, const int64_t* strides);

// Builds a PointwiseKernel one instruction at a time; every method returns the value index.
class KernelBuilder {
 public:
  KernelBuilder(std::string name, std::vector<int64_t> shape);

  int Input(DType dtype);        // a new input and its kLoad
  int GatherInput(DType dtype);  // a new gather operand (no kLoad); returns its input index
  int Index(int dim);            // kIndex: the point's coordinate along dim
  int Gather(int input, int mask, std::vector<int> coords);  // kGather of a GatherInput
  int Const(DType dtype, double value);
  int Op(PwOp op, DType dtype, std::vector<int> args);
  int Cast(int value, DType to) { return Op(PwOp::kCast, to, {value}); }
  void Output(int value);  // a new output of the value's dtype and its kStore
  DType dtype_of(int value) const { return kernel_.body[value].dtype; }

  const PointwiseKernel& kernel() const { return kernel_; }

 private:
  PointwiseKernel kernel_;
};

// The CpuTarget of the machine running the test (from uname and /proc/cpuinfo).
CpuTarget HostTarget();

// Compiles for the host, failing the test on error.
CpuModule CompileForHost(const std::vector<PointwiseKernel>& kernels);

// A compiled module loaded with dlopen (from a temp file that is unlinked right away).
class LoadedModule {
 public:
  explicit LoadedModule(const std::string& shared_object);
  ~LoadedModule();
  LoadedModule(const LoadedModule&) = delete;
  LoadedModule& operator=(const LoadedModule&) = delete;

  KernelFn Get(const std::string& symbol) const;

 private:
  void* handle_ = nullptr;
};

// Row-major element strides of `shape`.
std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& shape);

// The operand-major strides argument: the concatenation of per-operand stride lists.
std::vector<int64_t> ConcatStrides(const std::vector<std::vector<int64_t>>& per_operand);

// Calls `fn` with every operand contiguous in `shape`.
void RunContiguous(KernelFn fn, const std::vector<int64_t>& shape, std::vector<void*> data);

// f16/bf16 reference conversions (independent of the backend's code).
uint16_t RefF32ToBf16(float f);
float RefBf16ToF32(uint16_t bits);
uint16_t RefF32ToF16(float f);
float RefF16ToF32(uint16_t bits);

}  // namespace tccd::codegen::testing
