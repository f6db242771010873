// ChooseTileKernels (see tile_kernels.h).
#include "codegen/cuda_host/tile_kernels.h"

#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace tccd::codegen {
namespace {

// The dim of size > 1 along which operand o is contiguous (stride 1), or -1.
int ContiguousDim(const PointwiseKernel& k, const std::vector<int64_t>& strides, int o) {
  const int rank = static_cast<int>(k.shape.size());
  for (int d = rank - 1; d >= 0; --d)
    if (k.shape[d] > 1 && strides[static_cast<size_t>(o) * rank + d] == 1) return d;
  return -1;
}

// Elements operand o moves: the product of the sizes of the dims it does not broadcast along.
int64_t Elements(const PointwiseKernel& k, const std::vector<int64_t>& strides, int o) {
  const int rank = static_cast<int>(k.shape.size());
  int64_t n = 1;
  for (int d = 0; d < rank; ++d)
    if (strides[static_cast<size_t>(o) * rank + d] != 0) n *= k.shape[d];
  return n;
}

// DRAM sectors operand o costs when adjacent threads walk dim `walk` (tile_kernels.h).
int64_t Sectors(const PointwiseKernel& k, const std::vector<int64_t>& strides, int o, int walk) {
  const int rank = static_cast<int>(k.shape.size());
  const int64_t elements = Elements(k, strides, o);
  const int64_t bytes = elements * ir::DTypeBytes(k.operand_dtype(o));
  const int64_t s = strides[static_cast<size_t>(o) * rank + walk];
  return s == 0 || s == 1 ? (bytes + 31) / 32 : elements;
}

}  // namespace

std::optional<TileTranspose> TileFor(const PointwiseKernel& k,
                                     const std::vector<int64_t>& strides) {
  const int rank = static_cast<int>(k.shape.size());
  const int operands = k.num_operands();
  const int num_inputs = static_cast<int>(k.input_dtypes.size());
  if (k.is_row_reduction() || HasIndexOps(k) || HasRuntimeShape(k) || k.is_tile() ||
      k.entries != KernelEntries::kStrided || !k.fixed_strides.empty() ||
      static_cast<int64_t>(strides.size()) != static_cast<int64_t>(operands) * rank)
    return std::nullopt;
  for (int64_t s : strides)
    if (s < 0) return std::nullopt;
  // Every output contiguous along one same dim W.
  int write = -1;
  for (int o = num_inputs; o < operands; ++o) {
    const int d = ContiguousDim(k, strides, o);
    if (d < 0 || (write >= 0 && d != write)) return std::nullopt;
    write = d;
  }
  // R: the dim != W the most input bytes are contiguous along.
  std::vector<int64_t> bytes_along(rank, 0);
  for (int o = 0; o < num_inputs; ++o) {
    const int d = ContiguousDim(k, strides, o);
    if (d >= 0 && d != write)
      bytes_along[d] += Elements(k, strides, o) * ir::DTypeBytes(k.operand_dtype(o));
  }
  int read = -1;
  for (int d = 0; d < rank; ++d)
    if (bytes_along[d] > 0 && (read < 0 || bytes_along[d] > bytes_along[read])) read = d;
  if (read < 0 || k.shape[read] < kMinTiledDim || k.shape[write] < kMinTiledDim)
    return std::nullopt;
  // The cost rule.
  int inner = -1;
  for (int d = rank - 1; d >= 0 && inner < 0; --d)
    if (k.shape[d] > 1) inner = d;
  int64_t strided = 0, tiled = 0;
  for (int o = 0; o < operands; ++o) {
    strided += Sectors(k, strides, o, inner);
    tiled += Sectors(k, strides, o, o < num_inputs ? read : write);
  }
  if (tiled * 4 > strided * 3) return std::nullopt;
  return TileTranspose{.read_dim = read, .write_dim = write, .strides = strides};
}

absl::StatusOr<int> ChooseTileKernels(const schedule::Schedule& schedule,
                                      std::vector<PointwiseKernel>& kernels) {
  absl::flat_hash_map<std::string, size_t> index;
  for (size_t k = 0; k < kernels.size(); ++k) index[kernels[k].name] = k;
  // Per kernel: the layouts of its launches (a kernel launched with two stays as it is).
  std::vector<std::vector<std::vector<int64_t>>> layouts(kernels.size());
  for (const schedule::Step& step : schedule.steps) {
    if (!step.is<schedule::KernelLaunch>()) continue;
    const schedule::KernelLaunch& launch = step.as<schedule::KernelLaunch>();
    auto it = index.find(launch.entry.symbol);
    if (it == index.end())
      return absl::InternalError(
          absl::StrCat("kernel step calls ", launch.entry.symbol, ", not a kernel of the graph"));
    const PointwiseKernel& kernel = kernels[it->second];
    if (static_cast<int>(launch.inputs.size() + step.outputs.size()) != kernel.num_operands())
      return absl::InternalError(absl::StrCat("kernel step ", kernel.name, " has ",
                                              launch.inputs.size() + step.outputs.size(),
                                              " operands, its kernel ", kernel.num_operands()));
    layouts[it->second].push_back(launch.expected_strides);
  }
  int tiled = 0;
  for (size_t k = 0; k < kernels.size(); ++k) {
    if (layouts[k].empty()) continue;
    bool same = true;
    for (const auto& layout : layouts[k]) same = same && layout == layouts[k].front();
    if (!same) continue;
    if (std::optional<TileTranspose> tile = TileFor(kernels[k], layouts[k].front())) {
      kernels[k].tile = *std::move(tile);
      ++tiled;
    }
  }
  return tiled;
}

}  // namespace tccd::codegen
