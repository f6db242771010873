// CPU backend test helpers (see test_util.h).
#include "test_util.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tccd::codegen::testing {

KernelBuilder::KernelBuilder(std::string name, std::vector<int64_t> shape) {
  kernel_.name = std::move(name);
  kernel_.shape = std::move(shape);
}

int KernelBuilder::GatherInput(DType dtype) {
  kernel_.input_dtypes.push_back(dtype);
  return static_cast<int>(kernel_.input_dtypes.size()) - 1;
}

int KernelBuilder::Index(int dim) {
  PwInstr in;
  in.op = PwOp::kIndex;
  in.dtype = DType::kI64;
  in.operand = dim;
  kernel_.body.push_back(in);
  return static_cast<int>(kernel_.body.size()) - 1;
}

int KernelBuilder::Gather(int input, int mask, std::vector<int> coords) {
  PwInstr in;
  in.op = PwOp::kGather;
  in.dtype = kernel_.input_dtypes[input];
  in.operand = input;
  in.args = {mask};
  in.args.insert(in.args.end(), coords.begin(), coords.end());
  kernel_.body.push_back(in);
  return static_cast<int>(kernel_.body.size()) - 1;
}

int KernelBuilder::Input(DType dtype) {
  PwInstr in;
  in.op = PwOp::kLoad;
  in.dtype = dtype;
  in.operand = static_cast<int>(kernel_.input_dtypes.size());
  kernel_.input_dtypes.push_back(dtype);
  kernel_.body.push_back(in);
  return static_cast<int>(kernel_.body.size()) - 1;
}

int KernelBuilder::Const(DType dtype, double value) {
  PwInstr in;
  in.op = PwOp::kConstant;
  in.dtype = dtype;
  in.fvalue = value;
  in.ivalue = static_cast<int64_t>(value);
  kernel_.body.push_back(in);
  return static_cast<int>(kernel_.body.size()) - 1;
}

int KernelBuilder::Op(PwOp op, DType dtype, std::vector<int> args) {
  PwInstr in;
  in.op = op;
  in.dtype = dtype;
  in.args = std::move(args);
  kernel_.body.push_back(in);
  return static_cast<int>(kernel_.body.size()) - 1;
}

void KernelBuilder::Output(int value) {
  PwInstr in;
  in.op = PwOp::kStore;
  in.dtype = dtype_of(value);
  in.args = {value};
  in.operand = static_cast<int>(kernel_.output_dtypes.size());
  kernel_.output_dtypes.push_back(in.dtype);
  kernel_.body.push_back(in);
}

CpuTarget HostTarget() {
  struct utsname names;
  REQUIRE(uname(&names) == 0);
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  std::vector<std::string> flags;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    for (std::string w; words >> w;) flags.push_back(w);
    break;
  }
  absl::StatusOr<CpuTarget> target = CpuTargetFromFeatures(names.machine, flags);
  REQUIRE(target.ok());
  return *target;
}

CpuModule CompileForHost(const std::vector<PointwiseKernel>& kernels) {
  static const CpuTarget host = HostTarget();
  absl::StatusOr<CpuModule> module = CompileCpuKernels(kernels, host);
  INFO(module.status().ToString());
  REQUIRE(module.ok());
  return *std::move(module);
}

LoadedModule::LoadedModule(const std::string& shared_object) {
  const char* tmp = getenv("TMPDIR");
  std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/tccd-test-XXXXXX.so";
  const int fd = mkstemps(path.data(), 3);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, shared_object.data(), shared_object.size()) ==
          static_cast<ssize_t>(shared_object.size()));
  close(fd);
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  const char* error = handle_ ? nullptr : dlerror();
  unlink(path.c_str());
  INFO((error ? error : ""));
  REQUIRE(handle_ != nullptr);
}

LoadedModule::~LoadedModule() {
  if (handle_) dlclose(handle_);
}

KernelFn LoadedModule::Get(const std::string& symbol) const {
  void* fn = dlsym(handle_, symbol.c_str());
  INFO(symbol);
  REQUIRE(fn != nullptr);
  return reinterpret_cast<KernelFn>(fn);
}

std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t run = 1;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    strides[d] = run;
    run *= shape[d];
  }
  return strides;
}

std::vector<int64_t> ConcatStrides(const std::vector<std::vector<int64_t>>& per_operand) {
  std::vector<int64_t> all;
  for (const auto& s : per_operand) all.insert(all.end(), s.begin(), s.end());
  return all;
}

void RunContiguous(KernelFn fn, const std::vector<int64_t>& shape, std::vector<void*> data) {
  std::vector<std::vector<int64_t>> per(data.size(), ContiguousStrides(shape));
  std::vector<int64_t> strides = ConcatStrides(per);
  fn(data.data(), strides.data());
}

uint16_t RefF32ToBf16(float f) {
  if (std::isnan(f)) return 0x7fc0;
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint32_t upper = u >> 16, lower = u & 0xffff;
  // Round to nearest, ties to even.
  if (lower > 0x8000 || (lower == 0x8000 && (upper & 1))) return static_cast<uint16_t>(upper + 1);
  return static_cast<uint16_t>(upper);
}

float RefBf16ToF32(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// GCC's _Float16 (libgcc's conversions) is the reference for IEEE binary16.
uint16_t RefF32ToF16(float f) {
  const _Float16 h = static_cast<_Float16>(f);
  uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}

float RefF16ToF32(uint16_t bits) {
  _Float16 h;
  std::memcpy(&h, &bits, 2);
  return static_cast<float>(h);
}

}  // namespace tccd::codegen::testing
