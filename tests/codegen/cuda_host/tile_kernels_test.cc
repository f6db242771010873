// ChooseTileKernels: copies whose inputs and outputs are contiguous along different dims become
// tiled kernels (graph text in, kernel IR and CUDA source out; no GPU, no NVRTC).
#include "codegen/cuda_host/tile_kernels.h"

#include <catch2/catch.hpp>

#include "codegen/cuda/cuda_backend.h"
#include "codegen/cuda_host/entry_points.h"
#include "codegen/ir/parser.h"
#include "codegen/passes/fusion.h"
#include "codegen/passes/kernel_builder.h"
#include "codegen/passes/loop_order.h"
#include "codegen/passes/plan_builder.h"
#include "codegen/passes/reduction_fusion.h"

namespace tccd::codegen {
namespace {

// The kernels of `text` as the CUDA pipeline leaves them after SpecializeKernels: entries
// chosen (entry_points.h), then tiles (tile_kernels.h) unless `tiles` is false.
std::vector<PointwiseKernel> Tiled(const std::string& text, bool tiles = true) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  Partition p = *PartitionForFusion(*g, {});
  REQUIRE(FuseRowReductions(*g, {}, p).ok());
  std::vector<PointwiseKernel> kernels;
  for (size_t i = 0; i < p.groups.size(); ++i) {
    kernels.push_back(*BuildPointwiseKernel(*g, p.groups[i], "k" + std::to_string(i)));
    p.groups[i].loop_order = ChooseLoopOrder(*g, p.groups[i], kernels.back());
    kernels.back().shape = InLoopOrder(kernels.back().shape, p.groups[i].loop_order);
  }
  absl::StatusOr<schedule::Schedule> s =
      BuildSchedule(*g, p, kernels, {"kernels_cuda.so", "tccd-cuda-1", "cuda_pointwise"});
  REQUIRE(s.ok());
  REQUIRE(ChooseCudaEntries(*s, 9, kernels).ok());
  if (tiles) REQUIRE(ChooseTileKernels(*s, kernels).ok());
  for (const PointwiseKernel& k : kernels) {
    INFO(PrintPointwiseKernel(k));
    REQUIRE(VerifyPointwiseKernel(k).empty());
  }
  return kernels;
}

// The first line of the kernel's IR (its signature and sections).
std::string Head(const PointwiseKernel& k) {
  const std::string ir = PrintPointwiseKernel(k);
  return ir.substr(0, ir.find('\n'));
}

// BERT's scaled K^T cast: f32 [192, 512, 64] read through its transpose, bf16 out.
constexpr char kTransposeCast[] =
    "graph(%a0: f32[192,512,64]{32768,64,1}@cuda) {\n"
    "  %0 = aten::transpose.int(%a0, 1, 2) -> f32[192,64,512]{32768,1,64}@cuda\n"
    "  %1 = aten::mul.Tensor(%0, 0.125) -> f32[192,64,512]{32768,1,64}@cuda\n"
    "  %2 = aten::_to_copy.default(%1, dtype=bf16) -> bf16[192,64,512]{32768,1,64}@cuda\n"
    "  %3 = aten::clone.default(%2) -> "
    "bf16[192,64,512]{32768,512,1}@cuda\n"
    "  return (%3)\n}";

TEST_CASE("a cast through a transposed view becomes a tiled kernel", "[tile-kernels]") {
  std::vector<PointwiseKernel> k = Tiled(kTransposeCast);
  REQUIRE(k.size() == 1);
  CHECK(Head(k[0]) ==
        "pointwise @k0[192,64,512](in0: f32) -> (out0: bf16) entries(strided) tile(read dim 1, "
        "write dim 2; in0: [32768,1,64], out0: [32768,512,1]) {");
  const CudaKernelLaunchInfo info = LaunchInfoOf(k[0], 9);
  CHECK(info.kind == CudaKernelKind::kTile);
  CHECK(info.contig_entry.empty());
  CHECK(info.strided_entry == "k0_tile");
  CHECK(info.grid == 192 * 2 * 16);  // 64 / 32 read tiles, 512 / 32 write tiles
  absl::StatusOr<std::string> source = EmitCudaSource(k);
  REQUIRE(source.ok());
  CHECK(source->find("k0_strided(") == std::string::npos);
  CHECK(source->find("__shared__ unsigned short tile0[32][34];") != std::string::npos);
  // Phase 1 reads the input along dim 1 (stride 1), phase 2 writes along dim 2 (stride 1).
  CHECK(source->find("reinterpret_cast<const float*>(p.ptr[0])[base0 + static_cast<long long>(a) "
                     "+ static_cast<long long>(b) * 64LL]") != std::string::npos);
  CHECK(source->find("reinterpret_cast<unsigned short*>(p.ptr[1])[base1 + static_cast<long "
                     "long>(a) * 512LL + static_cast<long long>(b)] = tile0[lb][la];") !=
        std::string::npos);
  // Sizes the tile divides: no bounds tests.
  CHECK(source->find("if (a < ") == std::string::npos);
}

TEST_CASE("without the pass, or when nothing is transposed: no tiles", "[tile-kernels]") {
  // TCCD_DISABLE_PASSES=tile-kernels: the strided entry, as before.
  std::vector<PointwiseKernel> off = Tiled(kTransposeCast, /*tiles=*/false);
  CHECK_FALSE(off[0].is_tile());
  CHECK(off[0].entries == KernelEntries::kStrided);
  // Dense operands: the contig entry, nothing to tile.
  std::vector<PointwiseKernel> dense = Tiled(
      "graph(%a0: f32[64,64]{64,1}@cuda) {\n"
      "  %0 = aten::relu.default(%a0) -> f32[64,64]{64,1}@cuda\n"
      "  return (%0)\n}");
  CHECK_FALSE(dense[0].is_tile());
  // Every operand transposed alike: the loop order makes it dense (loop_order.h).
  std::vector<PointwiseKernel> reordered = Tiled(
      "graph(%a0: f32[64,64]{1,64}@cuda) {\n"
      "  %0 = aten::relu.default(%a0) -> f32[64,64]{1,64}@cuda\n"
      "  return (%0)\n}");
  CHECK_FALSE(reordered[0].is_tile());
  // A misaligned but row-major input: the strided entry, both sides contiguous along one dim.
  std::vector<PointwiseKernel> misaligned = Tiled(
      "graph(%a0: f32[64,64]{64,1}+1@cuda) {\n"
      "  %0 = aten::relu.default(%a0) -> f32[64,64]{64,1}@cuda\n"
      "  return (%0)\n}");
  CHECK(misaligned[0].entries == KernelEntries::kStrided);
  CHECK_FALSE(misaligned[0].is_tile());
}

TEST_CASE("a transpose with a tiled dim under 16 points stays strided", "[tile-kernels]") {
  std::vector<PointwiseKernel> k = Tiled(
      "graph(%a0: f32[4096,8]{8,1}@cuda) {\n"
      "  %0 = aten::t.default(%a0) -> f32[8,4096]{1,8}@cuda\n"
      "  %1 = aten::clone.default(%0) -> f32[8,4096]{4096,1}@cuda\n"
      "  return (%1)\n}");
  REQUIRE(k.size() == 1);
  CHECK(k[0].entries == KernelEntries::kStrided);
  CHECK_FALSE(k[0].is_tile());
}

TEST_CASE("NCHW to NHWC with sizes no tile divides: bounds tests", "[tile-kernels]") {
  std::vector<PointwiseKernel> k = Tiled(
      "graph(%a0: bf16[8,96,28,28]{75264,784,28,1}@cuda) {\n"
      "  %0 = aten::clone.default(%a0) -> "
      "bf16[8,96,28,28]{75264,1,2688,96}@cuda\n"
      "  return (%0)\n}");
  REQUIRE(k.size() == 1);
  REQUIRE(k[0].is_tile());
  CHECK(k[0].tile.read_dim == 3);
  CHECK(k[0].tile.write_dim == 1);
  CHECK(LaunchInfoOf(k[0], 9).grid == 8 * 28 * 3 * 1);  // 96 / 32 write tiles, 28 -> 1 read tile
  absl::StatusOr<std::string> source = EmitCudaSource(k);
  REQUIRE(source.ok());
  CHECK(source->find("if (a < 28u) {") != std::string::npos);
}

TEST_CASE("TileFor: the cost rule", "[tile-kernels]") {
  std::vector<PointwiseKernel> k = Tiled(kTransposeCast, /*tiles=*/false);
  // As declared: strided walks dim 2, where the input moves a sector per element.
  CHECK(TileFor(k[0], {32768, 1, 64, 32768, 512, 1}).has_value());
  // Both contiguous along dim 2: nothing to gain.
  CHECK_FALSE(TileFor(k[0], {32768, 512, 1, 32768, 512, 1}).has_value());
  // An output with no stride-1 dim: no write dim.
  CHECK_FALSE(TileFor(k[0], {32768, 1, 64, 65536, 1024, 2}).has_value());
  // A negative stride.
  CHECK_FALSE(TileFor(k[0], {32768, 1, -64, 32768, 512, 1}).has_value());
}

TEST_CASE("the verifier's tile lines", "[tile-kernels]") {
  PointwiseKernel k = Tiled(kTransposeCast)[0];
  PointwiseKernel bad = k;
  bad.tile.write_dim = 1;
  CHECK(VerifyPointwiseKernel(bad) == "tile dims 1, 1 are not two distinct dims of rank 3");
  bad = k;
  bad.entries = KernelEntries::kBoth;
  CHECK(VerifyPointwiseKernel(bad) ==
        "a tiled kernel has one entry (entries(strided)) and no fixed_strides");
  bad = k;
  bad.tile.strides.pop_back();
  CHECK(VerifyPointwiseKernel(bad) == "tile strides have 5 entries for 2 operands of rank 3");
  bad = k;
  bad.tile.strides[4] = 0;
  CHECK(VerifyPointwiseKernel(bad) == "out0 has a tile stride of 0 along dim 1");
  bad = k;
  bad.tile.read_dim = -1;
  CHECK(VerifyPointwiseKernel(bad) == "tile dims or strides on a kernel without tiles");
}

}  // namespace
}  // namespace tccd::codegen
