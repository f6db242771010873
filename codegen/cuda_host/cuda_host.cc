// BuildCudaHostLibrary: validate, generate the per-graph object with LLVM, link it with the
// embedded runtime object, check the result (see cuda_host.h).
#include "codegen/cuda_host/cuda_host.h"

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "codegen/cuda_host/host_imports.h"
#include "codegen/cuda_host/host_module.h"
#include "codegen/cuda_host/runtime/tccd_cuda_runtime.h"
#include "codegen/cuda_host/runtime_object.h"
#include "codegen/llvm/lld_link.h"
#include "codegen/llvm/llvm_compile.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "base/status_macros.h"
#include "spdlog/spdlog.h"

namespace tccd::codegen {
namespace {

bool IsCIdentifier(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char ch : name) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '_';
    if (!ok) return false;
  }
  return true;
}

// The kernel's name becomes an exported symbol of a library that also imports libc names and
// defines the runtime's: it must be a plain identifier that collides with none of them.
absl::Status CheckName(const std::string& name) {
  if (!IsCIdentifier(name)) {
    return absl::InvalidArgumentError("CUDA kernel name '" + name + "' is not a C identifier");
  }
  if (IsReservedCudaHostName(name) || IsCudaHostImport(name)) {
    return absl::InvalidArgumentError("CUDA kernel name '" + name +
                                      "' is reserved by the CUDA host library");
  }
  return absl::OkStatus();
}

// The launch information must be what CompileCudaKernels derives from `kernel`, and within
// what the runtime handles; the runtime trusts these numbers.
absl::Status CheckKernel(const CudaKernelLaunchInfo& info, const PointwiseKernel& kernel) {
  auto mismatch = [&](const char* what) {
    return absl::InvalidArgumentError(absl::StrCat("CUDA kernel '", info.name, "': ", what,
                                                   " does not match its PointwiseKernel '",
                                                   kernel.name, "'"));
  };
  if (info.name != kernel.name) return mismatch("name");
  const int operands = kernel.num_operands();
  const auto rank = static_cast<int>(kernel.shape.size());
  if (info.num_operands != operands || operands < 1) return mismatch("num_operands");
  if (info.rank != rank) return mismatch("rank");
  // Run-time sizes (kRuntimeDim): numel -1, the launch takes the sizes (tccd_rt_launch_sized).
  const bool sized = HasRuntimeShape(kernel);
  int64_t numel = 1;
  for (int64_t dim : kernel.shape) {
    if (dim == kRuntimeDim) continue;
    if (dim < 0) return absl::InvalidArgumentError("negative dimension in " + kernel.name);
    numel *= dim;  // shapes were verified by CompileCudaKernels; no overflow for real tensors
  }
  if (sized && numel != 0) numel = -1;
  if (info.numel != numel) return mismatch("numel");
  auto bad = [&](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat("CUDA kernel '", info.name, "': ", what));
  };
  // One entry may be absent (empty name, KernelEntries); the runtime then launches the other.
  if ((info.contig_entry.empty() && info.strided_entry.empty()) ||
      info.contig_entry == info.strided_entry) {
    return bad("needs an entry point, and two distinct names when it has two");
  }
  if (info.block_size < 1 || info.block_size > 1024) {
    return bad(absl::StrCat("block size ", info.block_size, " is outside 1..1024"));
  }
  if (info.elements_per_thread < 1 || info.elements_per_thread > 16) {
    return bad(absl::StrCat("elements_per_thread ", info.elements_per_thread, " is outside 1..16"));
  }
  // Row reductions pass the strided block to both entries (codegen/cuda/cuda_backend.h).
  // Column reductions launch like row reductions (a fixed grid, the strided block).
  // Scatter kernels launch as pointwise ones after zero-filling their one output, `grid` f32
  // elements (cuda_backend.h).
  if ((info.kind == CudaKernelKind::kScatter) != HasScatter(kernel) ||
      (info.kind == CudaKernelKind::kScatter &&
       (info.grid != kernel.scatter_elements || info.grid < 1 || kernel.output_dtypes.size() != 1)))
    return mismatch("scatter launch geometry");
  // Tiled kernels launch like row reductions too, with one entry (the strided slot).
  const bool tile = info.kind == CudaKernelKind::kTile;
  if (tile != (kernel.is_tile() || IsDepthwiseTemplateKernel(kernel)) ||
      (tile && (info.grid < 0 || info.grid > 0x7fffffff || !info.contig_entry.empty())))
    return mismatch("tile launch geometry");
  const bool rows =
      info.kind != CudaKernelKind::kPointwise && info.kind != CudaKernelKind::kScatter && !tile;
  if (rows != kernel.is_row_reduction() ||
      (info.kind == CudaKernelKind::kColumnReduction) != kernel.is_column_reduction() ||
      (rows && (info.grid < 1 || info.grid > 0x7fffffff ||
                info.num_reduced_dims != kernel.reduction.num_reduced_dims))) {
    return mismatch("row-reduction launch geometry");
  }
  // Run-time sizes in a reduction: row counts (the verifier checked the kernel); a row
  // reduction's `grid` holds the rows per block (CudaKernelLaunchInfo::grid), a column
  // reduction's is its fixed grid.
  if (sized && rows && info.kind == CudaKernelKind::kRowReduction && info.grid > 1024)
    return mismatch("run-time sizes in a reduction");
  const int sizes_bytes = sized ? 8 * rank : 0;  // the strided block's sizes; contig: numel
  if (info.contig_param_bytes != (rows || tile ? 8 * operands * (1 + rank) + sizes_bytes
                                               : 8 * operands + (sized ? 8 : 0)) ||
      info.strided_param_bytes != 8 * operands * (1 + rank) + sizes_bytes) {
    return bad("parameter sizes do not follow the layout of codegen/cuda/cuda_backend.h");
  }
  if (info.strided_param_bytes > kCudaMaxParamBytes) {
    return bad(
        absl::StrCat(info.strided_param_bytes, " bytes of parameters exceed ", kCudaMaxParamBytes));
  }
  return absl::OkStatus();
}

absl::Status CheckProgram(const HostProgram& program, const std::vector<CudaKernel>& kernels,
                          std::set<std::string>& names) {
  for (const GemmSpec& g : program.gemms) {
    if (g.sized) {  // an entry point of its own; sizes come with each call
      RETURN_IF_ERROR(CheckName(g.name));
      if (!names.insert(g.name).second)
        return absl::InvalidArgumentError("duplicate entry point name '" + g.name + "'");
      continue;
    }
    if (g.m < 1 || g.n < 1 || g.k < 1 || g.batch < 1 || g.lda < 1 || g.ldb < 1 || g.ldd < g.m)
      return absl::InvalidArgumentError("gemm '" + g.name + "' has invalid dimensions");
  }
  for (const SegmentSpec& s : program.segments)
    for (const SegmentStepSpec& step : s.steps)
      if (step.kind == SegmentStepSpec::Kind::kGemm && step.index >= 0 &&
          static_cast<size_t>(step.index) < program.gemms.size() && program.gemms[step.index].sized)
        return absl::InvalidArgumentError("segment '" + s.name +
                                          "' runs a gemm with run-time sizes");
  for (const SegmentSpec& s : program.segments) {
    RETURN_IF_ERROR(CheckName(s.name));
    if (!names.insert(s.name).second)
      return absl::InvalidArgumentError("duplicate entry point name '" + s.name + "'");
    if (s.steps.empty()) return absl::InvalidArgumentError("segment '" + s.name + "' has no steps");
    for (const SegmentStepSpec& step : s.steps) {
      const bool gemm = step.kind == SegmentStepSpec::Kind::kGemm;
      const size_t count = gemm ? program.gemms.size() : kernels.size();
      if (step.index < 0 || static_cast<size_t>(step.index) >= count)
        return absl::InvalidArgumentError("segment '" + s.name + "' names a missing step target");
      const size_t operands =
          gemm ? (program.gemms[step.index].epilogue == kCublasEpilogueDefault ? 3 : 4)
               : static_cast<size_t>(kernels[step.index].ir.num_operands());
      if (step.operands.size() != operands || operands > TCCD_RT_MAX_STEP_OPERANDS)
        return absl::InvalidArgumentError("segment '" + s.name +
                                          "' has a step with the wrong operand count");
      if (!gemm && step.strides.size() != operands * kernels[step.index].ir.shape.size())
        return absl::InvalidArgumentError("segment '" + s.name +
                                          "' has a kernel step with the wrong stride count");
      for (const SegmentOperandSpec& o : step.operands) {
        const bool in_io = o.io_index >= 0 && o.io_index < s.num_io;
        const bool in_workspace =
            o.io_index == -1 && o.byte_offset >= 0 && o.byte_offset < s.workspace_bytes;
        if (!in_io && !in_workspace)
          return absl::InvalidArgumentError("segment '" + s.name +
                                            "' has an operand outside its io and workspace");
      }
    }
  }
  return absl::OkStatus();
}

absl::Status Validate(const CudaModule& module, const HostProgram& program) {
  if (module.kernels.empty() && program.empty())
    return absl::InvalidArgumentError("no CUDA kernels");
  if (module.cubin.empty() && !module.kernels.empty())
    return absl::InvalidArgumentError("the CUDA module has no cubin");
  std::set<std::string> names;
  for (const CudaKernel& kernel : module.kernels) {
    RETURN_IF_ERROR(CheckName(kernel.launch.name));
    if (!names.insert(kernel.launch.name).second) {
      return absl::InvalidArgumentError("duplicate CUDA kernel name '" + kernel.launch.name + "'");
    }
    RETURN_IF_ERROR(CheckKernel(kernel.launch, kernel.ir));
  }
  return CheckProgram(program, module.kernels, names);
}

double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

absl::StatusOr<std::string> BuildCudaHostLibrary(const CudaModule& module,
                                                 const HostProgram& program) {
  RETURN_IF_ERROR(Validate(module, program));
  const auto start = std::chrono::steady_clock::now();
  // Baseline x86-64: the stubs are a few instructions and must run on every client.
  const CpuTarget target{.cpu = "x86-64"};
  ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> machine, CreateTargetMachine(target));

  std::string llvm_errors;  // filled by LLVM's diagnostic handler
  llvm::LLVMContext context;
  CaptureDiagnostics(context, &llvm_errors);
  auto ir = std::make_unique<llvm::Module>("tccd_cuda_host", context);
  ir->setDataLayout(machine->createDataLayout());
  RETURN_IF_ERROR(EmitHostModule(module, program, *ir));
  SetModuleTarget(*ir, *machine);
  {
    std::string message;
    llvm::raw_string_ostream os(message);
    if (llvm::verifyModule(*ir, &os)) {
      os.flush();
      return absl::InternalError("LLVM verifier rejected the CUDA host module: " + message);
    }
  }
  // No optimisation pipeline: the stubs are single tail calls and the rest is data.
  ASSIGN_OR_RETURN(std::string object, EmitObjectFile(*ir, *machine));
  if (!llvm_errors.empty()) {
    return absl::InternalError("LLVM reported errors while generating the CUDA host object: " +
                               llvm_errors);
  }
  ASSIGN_OR_RETURN(std::string shared_object,
                   LinkSharedObjects({std::string_view(object), CudaRuntimeObject()}));

  std::vector<std::string> exports = {"tccd_cuda_init", "tccd_cuda_last_error"};
  for (const CudaKernel& kernel : module.kernels) exports.push_back(kernel.launch.name);
  for (const SegmentSpec& segment : program.segments) exports.push_back(segment.name);
  bool sized = false;
  for (const GemmSpec& gemm : program.gemms)
    if (gemm.sized) exports.push_back(gemm.name), sized = true;
  if (sized) exports.push_back(kCudaGemmStatsEntry);
  if (HasTunedGemm(program)) exports.push_back(kCudaSetTuneTableEntry);
  RETURN_IF_ERROR(CheckCudaHostLibrary(shared_object, exports));
  spdlog::debug("cuda host: {} kernel(s), {}-byte cubin -> {}-byte {} in {:.1f} ms",
                module.kernels.size(), module.cubin.size(), shared_object.size(),
                kCudaHostLibraryName, MsSince(start));
  return shared_object;
}

}  // namespace tccd::codegen
