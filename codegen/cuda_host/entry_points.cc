// ChooseCudaEntries (see entry_points.h).
#include "codegen/cuda_host/entry_points.h"

#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "codegen/cuda/cuda_backend.h"

namespace tccd::codegen {

bool DenseEntryApplies(const PointwiseKernel& kernel, int cc_major,
                       const std::vector<int64_t>& strides, const std::vector<bool>& aligned) {
  const CudaKernelLaunchInfo info = LaunchInfoOf(kernel, cc_major);
  const int rank = static_cast<int>(kernel.shape.size());
  const int operands = kernel.num_operands();
  if (static_cast<int>(strides.size()) != operands * rank ||
      static_cast<int>(aligned.size()) != operands)
    return false;
  // A fixed-layout operand (which the launcher skips) must be in the layout the entry was
  // compiled for (its alignment, where its vectors need it, FixedLayoutsFor checked).
  for (int o = 0; o < operands; ++o) {
    if (!IsFixedLayoutOperand(kernel, o)) continue;
    for (int d = 0; d < rank; ++d)
      if (kernel.shape[d] != 1 && strides[o * rank + d] != kernel.fixed_strides[o * rank + d])
        return false;
  }
  // The same tests as tccd_cuda_runtime.c, so the entry kept is the one the launcher picks.
  if (info.kind == CudaKernelKind::kPointwise || info.kind == CudaKernelKind::kScatter) {
    for (int o = 0; o < operands; ++o) {
      if (o < 64 && ((info.row_operands >> o) & 1u)) continue;
      if (!aligned[o]) return false;
      int64_t expected = 1;
      for (int d = rank - 1; d >= 0; --d) {
        if (kernel.shape[d] != 1 && strides[o * rank + d] != expected) return false;
        expected *= kernel.shape[d];
      }
    }
    return true;
  }
  // Reductions: the vectorised dims are the trailing ones (reduced dims of rows, kept dims of
  // columns); operands flagged in row_operands are skipped.
  const int outer = info.kind == CudaKernelKind::kColumnReduction ? info.num_reduced_dims
                                                                  : rank - info.num_reduced_dims;
  for (int o = 0; o < operands; ++o) {
    if (o < 64 && ((info.row_operands >> o) & 1u)) continue;
    if (!aligned[o]) return false;
    int64_t expected = 1;
    for (int d = rank - 1; d >= outer; --d) {
      if (kernel.shape[d] != 1 && strides[o * rank + d] != expected) return false;
      expected *= kernel.shape[d];
    }
    for (int d = 0; d < outer; ++d)
      if (kernel.shape[d] != 1 && strides[o * rank + d] % info.elements_per_thread != 0)
        return false;
  }
  return true;
}

namespace {

// FixedLayoutsFor of an index kernel (no reduction, static shape): its dense entry tests every
// vector condition itself, on the compile-time strides (cuda_index_emitter.cc), so any layout
// whose outputs write each element once will do; scatter kernels (whose launcher zero-fills the
// target through its own stride row) keep their entries.
std::optional<std::vector<int64_t>> IndexFixedLayouts(const PointwiseKernel& kernel, int cc_major,
                                                      const std::vector<int64_t>& strides,
                                                      const std::vector<bool>& aligned) {
  if (kernel.is_row_reduction() || HasScatter(kernel)) return std::nullopt;
  const int rank = static_cast<int>(kernel.shape.size());
  const int num_inputs = static_cast<int>(kernel.input_dtypes.size());
  PointwiseKernel fixed = kernel;
  fixed.fixed_strides = strides;
  fixed.entries = KernelEntries::kDense;
  bool any = false;
  for (int o = 0; o < kernel.num_operands(); ++o) {
    if (!IsFixedLayoutOperand(fixed, o)) continue;
    any = true;
    for (int d = 0; d < rank && o >= num_inputs; ++d)
      if (kernel.shape[d] > 1 && strides[o * rank + d] == 0) return std::nullopt;
  }
  if (!any || !DenseEntryApplies(fixed, cc_major, strides, aligned)) return std::nullopt;
  return strides;
}

}  // namespace

std::optional<std::vector<int64_t>> FixedLayoutsFor(const PointwiseKernel& kernel, int cc_major,
                                                    const std::vector<int64_t>& strides,
                                                    const std::vector<bool>& aligned) {
  const int rank = static_cast<int>(kernel.shape.size());
  const int operands = kernel.num_operands();
  const bool columns = kernel.is_column_reduction();
  if ((kernel.is_row_reduction() && !columns) || HasRuntimeShape(kernel)) return std::nullopt;
  if (operands > 64 || static_cast<int>(strides.size()) != operands * rank ||
      static_cast<int>(aligned.size()) != operands)
    return std::nullopt;
  if (HasIndexOps(kernel)) return IndexFixedLayouts(kernel, cc_major, strides, aligned);
  // The dims the dense entry vectorises: all (pointwise) or the kept ones (columns).
  const int first = columns ? kernel.reduction.num_reduced_dims : 0;
  int inner = -1;
  for (int d = rank - 1; d >= first && inner < 0; --d)
    if (kernel.shape[d] > 1) inner = d;
  PointwiseKernel fixed = kernel;
  fixed.fixed_strides = strides;
  fixed.entries = KernelEntries::kDense;
  const int vec = LaunchInfoOf(fixed, cc_major).elements_per_thread;
  // A vector of the dense entry is `vec` consecutive points along the innermost dim: each
  // fixed-layout operand must hold them contiguously (stride 1: one vector access, which the
  // other strides and the pointer keep aligned) or as one value (stride 0, inputs only).
  if (inner < 0 || kernel.shape[inner] % vec != 0) return std::nullopt;
  const int num_inputs = static_cast<int>(kernel.input_dtypes.size());
  bool any = false;
  for (int o = 0; o < operands; ++o) {
    if (!IsFixedLayoutOperand(fixed, o)) continue;
    any = true;
    const int64_t s = strides[o * rank + inner];
    if (!(s == 1 || (s == 0 && o < num_inputs))) return std::nullopt;
    for (int d = 0; d < rank; ++d) {
      const int64_t sd = strides[o * rank + d];
      if (d == inner || kernel.shape[d] == 1) continue;
      if (sd < 0) return std::nullopt;
      // Vector accesses need aligned starts; one scalar per vector (s == 0) does not.
      if (s == 1 && (sd % vec != 0 || !aligned[o])) return std::nullopt;
      if (o >= num_inputs && d >= first && sd == 0) return std::nullopt;  // two points, one element
    }
  }
  if (!any || !DenseEntryApplies(fixed, cc_major, strides, aligned)) return std::nullopt;
  return strides;
}

absl::Status ChooseCudaEntries(const schedule::Schedule& schedule, int cc_major,
                               std::vector<PointwiseKernel>& kernels, bool fixed_layouts,
                               bool index_fixed_layouts) {
  absl::flat_hash_map<std::string, size_t> index;
  for (size_t k = 0; k < kernels.size(); ++k) index[kernels[k].name] = k;
  // Per kernel: whether some launch takes the dense entry, whether some takes the strided one.
  std::vector<bool> dense(kernels.size(), false), strided(kernels.size(), false);
  // Per kernel: its strided launches' layouts (strides, alignment), for fixed layouts.
  std::vector<std::vector<std::pair<std::vector<int64_t>, std::vector<bool>>>> layouts(
      kernels.size());
  for (const schedule::Step& step : schedule.steps) {
    if (!step.is<schedule::KernelLaunch>()) continue;
    const schedule::KernelLaunch& launch = step.as<schedule::KernelLaunch>();
    auto it = index.find(launch.entry.symbol);
    if (it == index.end())
      return absl::InternalError(
          absl::StrCat("kernel step calls ", launch.entry.symbol, ", not a kernel of the graph"));
    const PointwiseKernel& kernel = kernels[it->second];
    std::vector<schedule::ValueId> operands = launch.inputs;
    operands.insert(operands.end(), step.outputs.begin(), step.outputs.end());
    if (static_cast<int>(operands.size()) != kernel.num_operands())
      return absl::InternalError(absl::StrCat("kernel step ", kernel.name, " has ", operands.size(),
                                              " operands, its kernel ", kernel.num_operands()));
    std::vector<bool> aligned;
    for (schedule::ValueId id : operands) {
      if (id < 0 || id >= static_cast<int>(schedule.values.size()))
        return absl::InternalError(
            absl::StrCat("kernel step ", kernel.name, " reads undefined value ", id));
      const ir::TensorType& type = schedule.values[id];
      aligned.push_back(type.storage_offset * ir::DTypeBytes(type.dtype) % 16 == 0);
    }
    if (DenseEntryApplies(kernel, cc_major, launch.expected_strides, aligned)) {
      dense[it->second] = true;
    } else {
      strided[it->second] = true;
      layouts[it->second].emplace_back(launch.expected_strides, std::move(aligned));
    }
  }
  // A kernel whose every launch has the same layout, which the dense entry can take with fixed-
  // layout operands, gets only that entry (PointwiseKernel::fixed_strides).
  for (size_t k = 0; k < kernels.size() && fixed_layouts; ++k) {
    if (dense[k] || layouts[k].empty()) continue;
    if (HasIndexOps(kernels[k]) && !index_fixed_layouts) continue;
    bool same = true;
    for (const auto& layout : layouts[k]) same = same && layout == layouts[k].front();
    if (!same) continue;
    if (std::optional<std::vector<int64_t>> fixed = FixedLayoutsFor(
            kernels[k], cc_major, layouts[k].front().first, layouts[k].front().second)) {
      kernels[k].fixed_strides = *std::move(fixed);
      kernels[k].entries = KernelEntries::kDense;
      strided[k] = false;
      dense[k] = true;
    }
  }
  for (size_t k = 0; k < kernels.size(); ++k) {
    if (!kernels[k].fixed_strides.empty()) continue;
    kernels[k].entries = dense[k] && !strided[k]   ? KernelEntries::kDense
                         : strided[k] && !dense[k] ? KernelEntries::kStrided
                                                   : KernelEntries::kBoth;
  }
  return absl::OkStatus();
}

}  // namespace tccd::codegen
