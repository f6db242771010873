// ChooseCudaEntries (see entry_points.h).
#include "codegen/cuda_host/entry_points.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "codegen/cuda/cuda_backend.h"

namespace tccd::codegen {

bool DenseEntryApplies(const PointwiseKernel& kernel, int cc_major, const std::vector<int64_t>& strides,
                       const std::vector<bool>& aligned) {
  const CudaKernelLaunchInfo info = LaunchInfoOf(kernel, cc_major);
  const int rank = static_cast<int>(kernel.shape.size());
  const int operands = kernel.num_operands();
  if (static_cast<int>(strides.size()) != operands * rank || static_cast<int>(aligned.size()) != operands)
    return false;
  // The same tests as tccd_cuda_runtime.c, so the entry kept is the one the launcher picks.
  if (info.kind == CudaKernelKind::kPointwise) {
    for (int o = 0; o < operands; ++o) {
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
  const int outer = info.kind == CudaKernelKind::kColumnReduction ? info.num_reduced_dims : rank - info.num_reduced_dims;
  for (int o = 0; o < operands; ++o) {
    if (o < 64 && ((info.row_operands >> o) & 1u)) continue;
    if (!aligned[o]) return false;
    int64_t expected = 1;
    for (int d = rank - 1; d >= outer; --d) {
      if (kernel.shape[d] != 1 && strides[o * rank + d] != expected) return false;
      expected *= kernel.shape[d];
    }
    for (int d = 0; d < outer; ++d)
      if (kernel.shape[d] != 1 && strides[o * rank + d] % info.elements_per_thread != 0) return false;
  }
  return true;
}

absl::Status ChooseCudaEntries(const schedule::Schedule& schedule, int cc_major,
                               std::vector<PointwiseKernel>& kernels) {
  absl::flat_hash_map<std::string, size_t> index;
  for (size_t k = 0; k < kernels.size(); ++k) index[kernels[k].name] = k;
  // Per kernel: whether some launch takes the dense entry, whether some takes the strided one.
  std::vector<bool> dense(kernels.size(), false), strided(kernels.size(), false);
  for (const schedule::Step& step : schedule.steps) {
    if (!step.is<schedule::KernelLaunch>()) continue;
    const schedule::KernelLaunch& launch = step.as<schedule::KernelLaunch>();
    auto it = index.find(launch.entry.symbol);
    if (it == index.end())
      return absl::InternalError(absl::StrCat("kernel step calls ", launch.entry.symbol, ", not a kernel of the graph"));
    const PointwiseKernel& kernel = kernels[it->second];
    std::vector<schedule::ValueId> operands = launch.inputs;
    operands.insert(operands.end(), step.outputs.begin(), step.outputs.end());
    if (static_cast<int>(operands.size()) != kernel.num_operands())
      return absl::InternalError(absl::StrCat("kernel step ", kernel.name, " has ", operands.size(),
                                              " operands, its kernel ", kernel.num_operands()));
    std::vector<bool> aligned;
    for (schedule::ValueId id : operands) {
      if (id < 0 || id >= static_cast<int>(schedule.values.size()))
        return absl::InternalError(absl::StrCat("kernel step ", kernel.name, " reads undefined value ", id));
      const ir::TensorType& type = schedule.values[id];
      aligned.push_back(type.storage_offset * ir::DTypeBytes(type.dtype) % 16 == 0);
    }
    if (DenseEntryApplies(kernel, cc_major, launch.expected_strides, aligned)) {
      dense[it->second] = true;
    } else {
      strided[it->second] = true;
    }
  }
  for (size_t k = 0; k < kernels.size(); ++k) {
    kernels[k].entries = dense[k] && !strided[k]   ? KernelEntries::kDense
                         : strided[k] && !dense[k] ? KernelEntries::kStrided
                                                   : KernelEntries::kBoth;
  }
  return absl::OkStatus();
}

}  // namespace tccd::codegen
