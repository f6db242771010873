// ChooseCudaEntries: a CUDA kernel of a plan keeps only the entry point its declared layout
// takes (no GPU, no NVRTC: the schedule and the emitted source are checked).
#include "codegen/cuda_host/entry_points.h"

#include <catch2/catch.hpp>

#include "codegen/cuda/cuda_backend.h"
#include "codegen/cuda/cuda_emitter.h"
#include "codegen/ir/parser.h"
#include "codegen/passes/fusion.h"
#include "codegen/passes/kernel_builder.h"
#include "codegen/passes/loop_order.h"
#include "codegen/passes/plan_builder.h"
#include "codegen/passes/reduction_fusion.h"

namespace tccd::codegen {
namespace {

// The kernels of `text` (one fusion group each) with the entries the plan chose (with fixed
// layouts unless `fixed_layouts` is false).
std::vector<PointwiseKernel> Chosen(const std::string& text, bool fixed_layouts = true,
                                    bool index_fixed_layouts = true) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  // As the CUDA pipeline does (pipeline.cc): reductions absorb their neighbours, plain
  // pointwise kernels walk their operands' memory order.
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
  REQUIRE(ChooseCudaEntries(*s, 9, kernels, fixed_layouts, index_fixed_layouts).ok());
  return kernels;
}

// relu(x) + y over one input whose type is `x_type`.
std::string AddRelu(const std::string& x_type) {
  return "graph(%a0: " + x_type +
         ", %a1: f32[8,16]{16,1}@cuda) {\n"
         "  %0 = aten::relu.default(%a0) -> f32[8,16]{16,1}@cuda\n"
         "  %1 = aten::add.Tensor(%0, %a1) -> f32[8,16]{16,1}@cuda\n"
         "  return (%1)\n}";
}

TEST_CASE("dense aligned operands: only the contig entry", "[entry-points]") {
  std::vector<PointwiseKernel> k = Chosen(AddRelu("f32[8,16]{16,1}@cuda"));
  REQUIRE(k.size() == 1);
  CHECK(k[0].entries == KernelEntries::kDense);
  // An offset of 4 f32 is 16 bytes: still aligned.
  CHECK(Chosen(AddRelu("f32[8,16]{16,1}+4@cuda"))[0].entries == KernelEntries::kDense);
}

// A bias broadcast over rows: stride 0 in the iteration space.
constexpr char kBiasAdd[] =
    "graph(%a0: f32[16]{1}@cuda, %a1: f32[8,16]{16,1}@cuda) {\n"
    "  %0 = aten::add.Tensor(%a1, %a0) -> f32[8,16]{16,1}@cuda\n"
    "  return (%0)\n}";

TEST_CASE("a transposed or misaligned operand: only the strided entry", "[entry-points]") {
  CHECK(Chosen(AddRelu("f32[8,16]{1,8}@cuda"))[0].entries == KernelEntries::kStrided);
  CHECK(Chosen(AddRelu("f32[8,16]{16,1}+1@cuda"))[0].entries == KernelEntries::kStrided);
  // Without fixed layouts, a broadcast operand too (as before).
  CHECK(Chosen(kBiasAdd, /*fixed_layouts=*/false)[0].entries == KernelEntries::kStrided);
  CHECK(Chosen(kBiasAdd, /*fixed_layouts=*/false)[0].fixed_strides.empty());
}

TEST_CASE("a broadcast operand: the dense entry with a fixed layout", "[entry-points]") {
  std::vector<PointwiseKernel> k = Chosen(kBiasAdd);
  REQUIRE(k.size() == 1);
  CHECK(k[0].entries == KernelEntries::kDense);
  CHECK(k[0].fixed_strides == std::vector<int64_t>{16, 1, 0, 1, 16, 1});
  // Kernel input 0 is x, input 1 the bias.
  CHECK_FALSE(IsFixedLayoutOperand(k[0], 0));
  CHECK(IsFixedLayoutOperand(k[0], 1));
  CHECK_FALSE(IsFixedLayoutOperand(k[0], 2));
  // The launcher skips it (bit 1), and the chooser's own test holds for the declared layout only.
  CHECK(LaunchInfoOf(k[0], 9).row_operands == 2u);
  CHECK(DenseEntryApplies(k[0], 9, {16, 1, 0, 1, 16, 1}, {true, true, true}));
  CHECK_FALSE(DenseEntryApplies(k[0], 9, {16, 1, 16, 1, 16, 1}, {true, true, true}));
  CHECK(PrintPointwiseKernel(k[0]).find(" entries(dense) fixed(in1: [0,1]) {") !=
        std::string::npos);
}

TEST_CASE("a per-channel vector over a channels-last map: the dense entry", "[entry-points]") {
  // (x - mean) * w over x [2, 32, 4, 4] channels-last, as a batch norm's normalisation: the
  // kernel walks [N, H, W, C] (loop_order.h) and the [C, 1, 1] vectors are [0, 0, 0, 1] there.
  std::vector<PointwiseKernel> k = Chosen(
      "graph(%a0: bf16[2,32,4,4]{512,1,128,32}@cuda, %a1: f32[32,1,1]{1,1,1}@cuda) {\n"
      "  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[2,32,4,4]{512,1,128,32}@cuda\n"
      "  %1 = aten::mul.Tensor(%0, %a1) -> f32[2,32,4,4]{512,1,128,32}@cuda\n"
      "  %2 = aten::_to_copy.default(%1, dtype=bf16) -> bf16[2,32,4,4]{512,1,128,32}@cuda\n"
      "  return (%2)\n}");
  REQUIRE(k.size() == 1);
  CHECK(k[0].shape == std::vector<int64_t>{2, 4, 4, 32});
  CHECK(k[0].entries == KernelEntries::kDense);
  CHECK(PrintPointwiseKernel(k[0]).find(" fixed(in1: [0,0,0,1]) {") != std::string::npos);
  absl::StatusOr<std::string> source = EmitCudaSource(k);
  REQUIRE(source.ok());
  CHECK(source->find("reinterpret_cast<const float*>(p.ptr[1]) + static_cast<long long>(((i * "
                     "kVec) % 32u))") != std::string::npos);
}

TEST_CASE("a [C] statistic over a batch norm's [B, C] column split: the dense entry",
          "[entry-points]") {
  // colsum(f32(x3) * v) over x3 [64, 2, 16] (a [A, B, C] split, batch_norm_channels_last.h):
  // v [16] is [0, 0, 1] in the iteration space, not row-major over the kept [B, C].
  std::vector<PointwiseKernel> k = Chosen(
      "graph(%a0: bf16[64,2,16]{32,16,1}@cuda, %a1: f32[16]{1}@cuda) {\n"
      "  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[64,2,16]{32,16,1}@cuda\n"
      "  %1 = aten::mul.Tensor(%0, %a1) -> f32[64,2,16]{32,16,1}@cuda\n"
      "  %2 = aten::sum.dim_IntList(%1, [0]) -> f32[2,16]{16,1}@cuda\n"
      "  return (%2)\n}");
  REQUIRE(k.size() == 1);
  REQUIRE(k[0].is_column_reduction());
  CHECK(k[0].entries == KernelEntries::kDense);
  CHECK(IsFixedLayoutOperand(k[0], 1));
  CHECK_FALSE(IsFixedLayoutOperand(k[0], 0));
  CHECK(LaunchInfoOf(k[0], 9).row_operands == 2u);
  absl::StatusOr<std::string> source = EmitCudaSource(k);
  REQUIRE(source.ok());
  CHECK(source->find("k0_strided(") == std::string::npos);
  // Its column offset once per thread, then vectors like x's.
  CHECK(source->find(
            "const long long co1 = static_cast<long long>((static_cast<unsigned>(c0) % 16u));") !=
        std::string::npos);
  // A column operand: no row offset.
  CHECK(source->find("reinterpret_cast<const float*>(p.ptr[1]) + co1);") != std::string::npos);
  // Without fixed layouts: the strided entry, as before.
  CHECK(Chosen("graph(%a0: bf16[64,2,16]{32,16,1}@cuda, %a1: f32[16]{1}@cuda) {\n"
               "  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[64,2,16]{32,16,1}@cuda\n"
               "  %1 = aten::mul.Tensor(%0, %a1) -> f32[64,2,16]{32,16,1}@cuda\n"
               "  %2 = aten::sum.dim_IntList(%1, [0]) -> f32[2,16]{16,1}@cuda\n"
               "  return (%2)\n}",
               false)[0]
            .entries == KernelEntries::kStrided);
}

TEST_CASE("fixed layouts: what the dense entry cannot take", "[entry-points]") {
  std::vector<PointwiseKernel> k = Chosen(kBiasAdd, /*fixed_layouts=*/false);
  const std::vector<bool> aligned = {true, true, true};
  // The innermost dim (16) is a multiple of the vector (4 f32): yes.
  CHECK(FixedLayoutsFor(k[0], 9, {16, 1, 0, 1, 16, 1}, aligned).has_value());
  // A transposed input (innermost stride 8): a real transpose, not a fixed layout.
  CHECK_FALSE(FixedLayoutsFor(k[0], 9, {16, 1, 1, 8, 16, 1}, aligned).has_value());
  // A broadcast along the innermost dim, one value per vector: yes.
  CHECK(FixedLayoutsFor(k[0], 9, {16, 1, 1, 0, 16, 1}, aligned).has_value());
  // ... whatever its other strides and alignment (scalar loads).
  CHECK(FixedLayoutsFor(k[0], 9, {16, 1, 3, 0, 16, 1}, {true, false, true}).has_value());
  // Vectors whose starts another stride misaligns (overlapping rows).
  CHECK_FALSE(FixedLayoutsFor(k[0], 9, {16, 1, 3, 1, 16, 1}, aligned).has_value());
  // A misaligned fixed operand.
  CHECK_FALSE(FixedLayoutsFor(k[0], 9, {16, 1, 0, 1, 16, 1}, {true, false, true}).has_value());
  // An output that broadcasts.
  CHECK_FALSE(FixedLayoutsFor(k[0], 9, {16, 1, 0, 1, 0, 1}, aligned).has_value());
  // Nothing fixed: the plain dense test decides.
  CHECK_FALSE(FixedLayoutsFor(k[0], 9, {16, 1, 16, 1, 16, 1}, aligned).has_value());
  // An innermost dim that is not a multiple of the vector.
  std::vector<PointwiseKernel> odd = Chosen(
      "graph(%a0: f32[6]{1}@cuda, %a1: f32[8,6]{6,1}@cuda) {\n"
      "  %0 = aten::add.Tensor(%a1, %a0) -> f32[8,6]{6,1}@cuda\n"
      "  return (%0)\n}");
  CHECK(odd[0].entries == KernelEntries::kStrided);
  CHECK(odd[0].fixed_strides.empty());
}

TEST_CASE("the dense entry of a fixed layout computes the operand's offsets", "[entry-points]") {
  std::vector<PointwiseKernel> k = Chosen(kBiasAdd);
  absl::StatusOr<std::string> source = EmitCudaSource(k);
  REQUIRE(source.ok());
  CHECK(source->find("k0_strided(") == std::string::npos);
  // The bias: a vector at (i * kVec) % 16; x and the output as plain vectors.
  CHECK(source->find(
            "const V1 a1 = *reinterpret_cast<const V1*>(reinterpret_cast<const float*>(p.ptr[1]) + "
            "static_cast<long long>(((i * kVec) % 16u)));") != std::string::npos);
  CHECK(source->find("const V0 a0 = reinterpret_cast<const V0*>(p.ptr[0])[i];") !=
        std::string::npos);
  CHECK(source->find("reinterpret_cast<V2*>(p.ptr[2])[i] = a2;") != std::string::npos);
}

// A channels-last ResNet stem's max pool as MaxPoolKernels leaves it (max_pool_kernels.h): the
// forward's index kernels gather the [N, H, W, C] map, of another shape than their output.
constexpr char kStemPool[] =
    "graph(%a0: bf16[2,16,16,8]{2048,128,8,1}@cuda) {\n"
    "  %0 = tccd::max_pool2d_offsets.default(%a0, [3, 3], [2, 2], [1, 1], [1], false, true) "
    "-> i64[2,8,8,8]{512,64,8,1}@cuda\n"
    "  return (%0)\n}";

TEST_CASE("an index kernel's gather operand: the dense entry with its strides fixed",
          "[entry-points]") {
  std::vector<PointwiseKernel> k = Chosen(kStemPool);
  REQUIRE(k.size() == 1);
  REQUIRE(HasIndexOps(k[0]));
  CHECK(k[0].entries == KernelEntries::kDense);
  CHECK(k[0].fixed_strides == std::vector<int64_t>{2048, 128, 8, 1, 512, 64, 8, 1});
  CHECK(IsFixedLayoutOperand(k[0], 0));
  CHECK_FALSE(IsFixedLayoutOperand(k[0], 1));
  CHECK(LaunchInfoOf(k[0], 9).row_operands == 1u);  // the launcher's dense test skips the map
  absl::StatusOr<std::string> source = EmitCudaSource(k);
  REQUIRE(source.ok());
  CHECK(source->find("_strided(") == std::string::npos);
  // The gathered map's strides are constants of the entry's table; 8 bf16 lanes per vector
  // (16 bytes of the gathered map, the narrowest per-lane operand; the i64 output 4 x 16 B).
  CHECK(source->find("const long long st[2][4] = {{2048ll, 128ll, 8ll, 1ll}, "
                     "{512ll, 64ll, 8ll, 1ll}};") != std::string::npos);
  CHECK(source->find("constexpr int kVec = 8;") != std::string::npos);
  // TCCD_DISABLE_PASSES=index-fixed-entries: the strided entry, as before (2 lanes: the i64
  // output's 16 bytes).
  std::vector<PointwiseKernel> off = Chosen(kStemPool, true, /*index_fixed_layouts=*/false);
  CHECK(off[0].entries == KernelEntries::kStrided);
  CHECK(off[0].fixed_strides.empty());
  absl::StatusOr<std::string> strided = EmitCudaSource(off);
  REQUIRE(strided.ok());
  CHECK(strided->find("constexpr int kVec = 2;") != std::string::npos);
}

TEST_CASE("index kernels: what the fixed dense entry cannot take", "[entry-points]") {
  std::vector<PointwiseKernel> k = Chosen(kStemPool, true, false);
  const std::vector<bool> aligned = {true, true};
  CHECK(FixedLayoutsFor(k[0], 9, {2048, 128, 8, 1, 512, 64, 8, 1}, aligned).has_value());
  // A gathered map in any layout (the kernel tests its vectors itself): still yes.
  CHECK(FixedLayoutsFor(k[0], 9, {2048, 8, 128, 1, 512, 64, 8, 1}, {false, true}).has_value());
  // A permuted output: fixed too (the entry computes its offsets from the coordinates).
  CHECK(FixedLayoutsFor(k[0], 9, {2048, 128, 8, 1, 512, 8, 64, 1}, aligned).has_value());
  // A dense but misaligned output (the launcher's dense test fails), or one that broadcasts
  // (two points, one element): no.
  CHECK_FALSE(
      FixedLayoutsFor(k[0], 9, {2048, 128, 8, 1, 512, 64, 8, 1}, {true, false}).has_value());
  CHECK_FALSE(FixedLayoutsFor(k[0], 9, {2048, 128, 8, 1, 512, 0, 8, 1}, aligned).has_value());
  // Nothing fixed (a gather of the iteration space's own shape and strides): no.
  PointwiseKernel same = k[0];
  CHECK_FALSE(FixedLayoutsFor(same, 9, {512, 64, 8, 1, 512, 64, 8, 1}, aligned).has_value());
}

TEST_CASE("CudaFixedOffset merges dims adjacent in memory", "[entry-points]") {
  PointwiseKernel k;
  k.shape = {2, 3, 4, 8};
  k.input_dtypes = {ir::DType::kF32};
  k.output_dtypes = {ir::DType::kF32};
  // Channels-last per-channel vector: only the innermost dim.
  k.fixed_strides = {0, 0, 0, 1, 96, 32, 8, 1};
  CHECK(CudaFixedOffset(k, 0, "e", 0) == "static_cast<long long>((e % 8u))");
  // Dense operand: all dims merge into one coordinate, e itself.
  CHECK(CudaFixedOffset(k, 1, "e", 0) == "static_cast<long long>(e)");
  // NCHW per-channel ([N, C, H*W] with C = dim 1): (e / 32) % 3.
  k.fixed_strides = {0, 1, 0, 0, 96, 32, 8, 1};
  CHECK(CudaFixedOffset(k, 0, "e", 0) == "static_cast<long long>(((e / 32u) % 3u))");
  // A transpose of the last two dims: two coordinates.
  k.fixed_strides = {96, 32, 1, 4, 96, 32, 8, 1};
  CHECK(CudaFixedOffset(k, 0, "e", 0) ==
        "static_cast<long long>((e % 8u)) * 4LL + static_cast<long long>(((e / 8u) % 4u)) + "
        "static_cast<long long>((e / 32u)) * 32LL");
}

TEST_CASE("the emitted source has only the chosen entry", "[entry-points]") {
  std::vector<PointwiseKernel> k = Chosen(AddRelu("f32[8,16]{16,1}@cuda"));
  absl::StatusOr<std::string> dense = EmitCudaSource(k);
  REQUIRE(dense.ok());
  CHECK(dense->find("k0_contig(") != std::string::npos);
  CHECK(dense->find("k0_strided(") == std::string::npos);
  const CudaKernelLaunchInfo info = LaunchInfoOf(k[0], 9);
  CHECK(info.contig_entry == "k0_contig");
  CHECK(info.strided_entry.empty());

  k[0].entries = KernelEntries::kStrided;
  absl::StatusOr<std::string> strided = EmitCudaSource(k);
  REQUIRE(strided.ok());
  CHECK(strided->find("k0_contig(") == std::string::npos);
  CHECK(strided->find("k0_strided(") != std::string::npos);
  // Nothing to choose from: both, as for kernels compiled outside a plan.
  k[0].entries = KernelEntries::kBoth;
  absl::StatusOr<std::string> both = EmitCudaSource(k);
  REQUIRE(both.ok());
  CHECK((both->find("k0_contig(") != std::string::npos &&
         both->find("k0_strided(") != std::string::npos));
}

TEST_CASE("DenseEntryApplies mirrors the launcher's test", "[entry-points]") {
  std::vector<PointwiseKernel> k = Chosen(AddRelu("f32[8,16]{16,1}@cuda"));
  const std::vector<int64_t> dense = {16, 1, 16, 1, 16, 1};
  CHECK(DenseEntryApplies(k[0], 9, dense, {true, true, true}));
  CHECK_FALSE(DenseEntryApplies(k[0], 9, dense, {true, false, true}));
  // Dims of size 1 may have any stride; here none has size 1, so a different row stride fails.
  CHECK_FALSE(DenseEntryApplies(k[0], 9, {32, 1, 16, 1, 16, 1}, {true, true, true}));
}

}  // namespace
}  // namespace tccd::codegen
