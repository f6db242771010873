// CompileCudaKernels and the small pure helpers of cuda_backend.h: targets, launch geometry.
#include "codegen/cuda/cuda_backend.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "codegen/cuda/cuda_depthwise_emitter.h"
#include "codegen/cuda/cuda_emitter.h"
#include "codegen/cuda/cuda_row_emitter.h"
#include "codegen/cuda/cuda_tile_emitter.h"
#include "codegen/cuda/nvrtc_compiler.h"
#include "base/status_macros.h"
#include "spdlog/spdlog.h"

namespace tccd::codegen {
namespace {

double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// Every entry point must be in the PTX: a cheap check that the source and the launch
// information agree.
absl::Status CheckEntryPoints(const std::string& ptx, const CudaModule& module) {
  for (const CudaKernel& kernel : module.kernels) {
    const CudaKernelLaunchInfo& info = kernel.launch;
    for (const std::string* entry : {&info.contig_entry, &info.strided_entry}) {
      if (entry->empty()) continue;  // not emitted (KernelEntries)
      if (ptx.find(absl::StrCat(".visible .entry ", *entry, "(")) == std::string::npos) {
        return absl::InternalError(absl::StrCat("the PTX lacks entry point ", *entry));
      }
    }
  }
  return absl::OkStatus();
}

// Bit o: operand o is a fixed-layout operand (PointwiseKernel::fixed_strides), which the
// launcher's dense test skips. Kernels with more than 64 operands never get fixed layouts
// (entry_points.cc).
uint64_t FixedLayoutBits(const PointwiseKernel& kernel) {
  uint64_t bits = 0;
  for (int o = 0; o < kernel.num_operands() && o < 64; ++o)
    if (IsFixedLayoutOperand(kernel, o)) bits |= uint64_t{1} << o;
  return bits;
}

// Row reductions: fixed grid and block from the kernel's geometry; both entries take the
// pointers and the strides.
CudaKernelLaunchInfo RowReductionLaunchInfo(const PointwiseKernel& kernel) {
  const CudaRowGeometry geo = RowGeometryOf(kernel);
  CudaKernelLaunchInfo info;
  info.name = kernel.name;
  info.contig_entry = kernel.name + "_contig";
  info.strided_entry = kernel.name + "_strided";
  info.kind = CudaKernelKind::kRowReduction;
  info.block_size = geo.block;
  // Shifted rows: the contig entry takes any row stride (it checks each operand's alignment).
  info.elements_per_thread = geo.shifted ? 1 : geo.vec;
  // Run-time rows (symbolic graphs): numel -1 and `grid` holds the rows per block; the launch
  // (tccd_rt_launch_sized) makes the grid from this call's row count.
  info.numel = HasRuntimeShape(kernel) ? -1 : geo.rows * geo.row_length;
  info.num_operands = kernel.num_operands();
  info.rank = static_cast<int>(kernel.shape.size());
  info.contig_param_bytes = geo.param_bytes;
  info.strided_param_bytes = geo.param_bytes;
  info.grid = HasRuntimeShape(kernel) ? geo.rows_per_block : geo.grid;
  info.num_reduced_dims = kernel.reduction.num_reduced_dims;
  for (int o = 0; o < kernel.num_operands(); ++o) {
    if (kernel.reduction.row_operand[o]) info.row_operands |= uint64_t{1} << o;
  }
  return info;
}

// Column reductions: the same, from the column geometry; the contig precondition skips the
// kept-broadcast operands.
CudaKernelLaunchInfo ColumnReductionLaunchInfo(const PointwiseKernel& kernel, int cc_major) {
  const CudaColumnGeometry geo = ColumnGeometryOf(kernel, cc_major);
  CudaKernelLaunchInfo info;
  info.name = kernel.name;
  info.contig_entry = kernel.name + "_contig";
  info.strided_entry = kernel.name + "_strided";
  info.kind = CudaKernelKind::kColumnReduction;
  info.block_size = geo.block;
  info.elements_per_thread = geo.vec;
  // Run-time rows (symbolic graphs): numel -1; the grid (column tiles x cluster split) does not
  // depend on the row count, the launch (tccd_rt_launch_sized) passes the sizes.
  info.numel = HasRuntimeShape(kernel) ? -1 : geo.rows * geo.cols;
  info.num_operands = kernel.num_operands();
  info.rank = static_cast<int>(kernel.shape.size());
  info.contig_param_bytes = geo.param_bytes;
  info.strided_param_bytes = geo.param_bytes;
  info.grid = geo.grid;
  info.num_reduced_dims = kernel.reduction.num_reduced_dims;
  for (int o = 0; o < static_cast<int>(kernel.reduction.kept_broadcast.size()); ++o) {
    if (kernel.reduction.kept_broadcast[o]) info.row_operands |= uint64_t{1} << o;
  }
  // Fixed-layout operands too: the dense entry reads them at their declared strides.
  info.row_operands |= FixedLayoutBits(kernel);
  return info;
}

// Kernels with one entry, `entry`, in the strided slot (the launcher takes it whatever the
// layout, since there is no contig entry), launched as tiled kernels are: `grid` blocks of
// kCudaBlockSize threads, taking the strided block (8 * operands * (1 + rank) bytes).
CudaKernelLaunchInfo OneEntryLaunchInfo(const PointwiseKernel& kernel, std::string entry,
                                        int64_t grid) {
  CudaKernelLaunchInfo info;
  info.name = kernel.name;
  info.strided_entry = std::move(entry);
  info.kind = CudaKernelKind::kTile;
  info.block_size = kCudaBlockSize;
  info.numel = GeometryOf(kernel).numel;
  info.num_operands = kernel.num_operands();
  info.rank = static_cast<int>(kernel.shape.size());
  info.contig_param_bytes = 8 * kernel.num_operands() * (1 + info.rank);
  info.strided_param_bytes = info.contig_param_bytes;
  info.grid = grid;
  return info;
}

// Tiled kernels: one block per tile, entry <name>_tile.
CudaKernelLaunchInfo TileLaunchInfo(const PointwiseKernel& kernel) {
  return OneEntryLaunchInfo(kernel, kernel.name + "_tile", TileGeometryOf(kernel).grid);
}

// Depthwise templates (cuda_depthwise_emitter.h): entry <name>_dw (the layout is compiled in).
CudaKernelLaunchInfo DepthwiseLaunchInfo(const PointwiseKernel& kernel,
                                         const CudaDepthwiseTemplate& t) {
  return OneEntryLaunchInfo(kernel, kernel.name + "_dw", t.grid);
}

// Plain pointwise kernels: the grid comes from GridSize at launch time.
CudaKernelLaunchInfo PointwiseLaunchInfo(const PointwiseKernel& kernel) {
  const CudaKernelGeometry geo = GeometryOf(kernel);
  CudaKernelLaunchInfo info;
  info.name = kernel.name;
  info.contig_entry = kernel.name + "_contig";
  info.strided_entry = kernel.name + "_strided";
  info.block_size = kCudaBlockSize;
  info.elements_per_thread = geo.vec;
  info.numel = geo.numel;
  info.num_operands = kernel.num_operands();
  info.rank = static_cast<int>(kernel.shape.size());
  info.contig_param_bytes = geo.contig_param_bytes;
  info.strided_param_bytes = geo.strided_param_bytes;
  info.row_operands = FixedLayoutBits(kernel);
  if (HasScatter(kernel)) {
    info.kind = CudaKernelKind::kScatter;
    info.grid = kernel.scatter_elements;
  }
  return info;
}

}  // namespace

std::string CudaTarget::KeyString() const { return absl::StrCat("sm_", cc_major, cc_minor); }

absl::StatusOr<CudaTarget> CudaTargetFromProto(int cc_major, int cc_minor) {
  if (cc_major < 7 || cc_major > 12 || cc_minor < 0 || cc_minor > 9) {
    return absl::InvalidArgumentError(absl::StrCat("unsupported CUDA compute capability ", cc_major,
                                                   ".", cc_minor,
                                                   ": tccd's CUDA backend supports 7.0 to 12.x"));
  }
  return CudaTarget{.cc_major = cc_major, .cc_minor = cc_minor};
}

absl::StatusOr<std::string> CudaCompilerVersion() {
  ASSIGN_OR_RETURN(std::string version, LoadedNvrtcVersion());
  return "nvrtc-" + version;
}

int64_t GridSize(int64_t numel, int elements_per_thread, int block_size, int num_sms,
                 int blocks_per_sm) {
  if (numel <= 0) return 0;
  const int64_t per_block =
      static_cast<int64_t>(std::max(elements_per_thread, 1)) * std::max(block_size, 1);
  const int64_t needed = (numel + per_block - 1) / per_block;
  const int64_t wave = static_cast<int64_t>(std::max(num_sms, 1)) * std::max(blocks_per_sm, 1);
  return std::min(needed, wave);
}

bool IsDepthwiseTemplateKernel(const PointwiseKernel& kernel) {
  return !kernel.is_column_reduction() && !kernel.is_row_reduction() && !kernel.is_tile() &&
         DepthwiseTemplateOf(kernel).has_value();
}

CudaKernelLaunchInfo LaunchInfoOf(const PointwiseKernel& kernel, int cc_major) {
  // Before the entry clearing below: the template's one entry is in the strided slot.
  if (!kernel.is_row_reduction() && !kernel.is_tile())
    if (const auto t = DepthwiseTemplateOf(kernel)) return DepthwiseLaunchInfo(kernel, *t);
  CudaKernelLaunchInfo info = kernel.is_column_reduction()
                                  ? ColumnReductionLaunchInfo(kernel, cc_major)
                              : kernel.is_row_reduction() ? RowReductionLaunchInfo(kernel)
                              : kernel.is_tile()          ? TileLaunchInfo(kernel)
                                                          : PointwiseLaunchInfo(kernel);
  // An entry the kernel does not emit has no name (KernelEntries).
  if (!kernel.has_dense_entry()) info.contig_entry.clear();
  if (!kernel.has_strided_entry()) info.strided_entry.clear();
  return info;
}

absl::StatusOr<CudaModule> CompileCudaKernels(absl::Span<const PointwiseKernel> kernels,
                                              const CudaTarget& target) {
  if (kernels.empty()) return absl::InvalidArgumentError("no kernels to compile");
  ASSIGN_OR_RETURN(CudaTarget checked, CudaTargetFromProto(target.cc_major, target.cc_minor));
  const auto start = std::chrono::steady_clock::now();

  CudaModule module;
  ASSIGN_OR_RETURN(module.cuda_source, EmitCudaSource(kernels, checked.cc_major));
  for (const PointwiseKernel& kernel : kernels)
    module.kernels.push_back({kernel, LaunchInfoOf(kernel, checked.cc_major)});
  const double emitted_ms = MsSince(start);

  // One fixed program name: it appears in NVRTC's messages, never in the output.
  ASSIGN_OR_RETURN(NvrtcOutput out,
                   CompileWithNvrtc(module.cuda_source, "tccd_kernels.cu", checked));
  if (!out.log.empty()) spdlog::debug("cuda backend: NVRTC log: {}", out.log);
  module.ptx = std::move(out.ptx);
  module.cubin = std::move(out.cubin);
  RETURN_IF_ERROR(CheckEntryPoints(module.ptx, module));
  spdlog::debug(
      "cuda backend: {} kernel(s) for {}: source {} bytes at {:.1f} ms, PTX {} bytes, cubin {} "
      "bytes at {:.1f} ms",
      kernels.size(), checked.KeyString(), module.cuda_source.size(), emitted_ms, module.ptx.size(),
      module.cubin.size(), MsSince(start));
  return module;
}

}  // namespace tccd::codegen
