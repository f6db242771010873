// Index-aware ops (index_ops.h): partition and kernel text for CUDA graphs; CPU graphs keep them
// extern.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/kernel/pointwise_kernel.h"
#include "codegen/passes/fusion.h"
#include "codegen/passes/kernel_builder.h"
#include "codegen/passes/plan_builder.h"

namespace tccd::codegen {
namespace {

struct Compiled {
  std::string partition;
  std::vector<std::string> kernels;
};

Compiled Compile(const char* text) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  absl::StatusOr<Partition> p = PartitionForFusion(*g, {});
  REQUIRE(p.ok());
  Compiled c{PrintPartition(*g, *p), {}};
  for (size_t i = 0; i < p->groups.size(); ++i) {
    absl::StatusOr<PointwiseKernel> k = BuildPointwiseKernel(*g, p->groups[i], "k");
    INFO(k.status().ToString());
    REQUIRE(k.ok());
    c.kernels.push_back(PrintPointwiseKernel(*k));
  }
  return c;
}

TEST_CASE("rotary cat fuses with its consumers; its inputs are gathered", "[index_ops]") {
  // x1, x2 halves of the last dim (views), cat((-x2, x1)) * sin + x * cos: one kernel for the
  // neg (its own shape) and one for cat+mul+mul+add.
  Compiled c =
      Compile(R"(graph(%a0: f32[2,8]{8,1}@cuda, %a1: f32[2,8]{8,1}@cuda, %a2: f32[8]{1}@cuda) {
  %0 = aten::slice.Tensor(%a0, -1, 0, 4) -> f32[2,4]{8,1}@cuda
  %1 = aten::slice.Tensor(%a0, -1, 4, 8) -> f32[2,4]{8,1}@cuda
  %2 = aten::neg.default(%1) -> f32[2,4]{4,1}@cuda
  %3 = aten::cat.default([%2, %0], -1) -> f32[2,8]{8,1}@cuda
  %4 = aten::mul.Tensor(%3, %a2) -> f32[2,8]{8,1}@cuda
  %5 = aten::mul.Tensor(%a0, %a1) -> f32[2,8]{8,1}@cuda
  %6 = aten::add.Tensor(%5, %4) -> f32[2,8]{8,1}@cuda
  return (%6)
})");
  CHECK(c.partition ==
        "extern %0 aten::slice.Tensor\nextern %1 aten::slice.Tensor\nfused %2 -> %2\nfused %3 %4 "
        "%5 %6 -> %6\n");
  REQUIRE(c.kernels.size() == 2);
  CHECK(c.kernels[1] ==
        R"(pointwise @k[2,8](in0: f32, in1: f32, in2: f32, in3: f32, in4: f32) -> (out0: f32) {
  // fused: aten::cat.default, aten::mul.Tensor, aten::mul.Tensor, aten::add.Tensor
  %0 = load.f32 in2
  %1 = load.f32 in3
  %2 = load.f32 in4
  %3 = index.i64 dim1
  %4 = constant.i64 0
  %5 = ge.b8 %3, %4
  %6 = constant.i64 4
  %7 = lt.b8 %3, %6
  %8 = and.b8 %5, %7
  %9 = index.i64 dim0
  %10 = gather.f32 in0, %8, %9, %3
  %11 = constant.i64 4
  %12 = ge.b8 %3, %11
  %13 = constant.i64 8
  %14 = lt.b8 %3, %13
  %15 = and.b8 %12, %14
  %16 = constant.i64 4
  %17 = sub.i64 %3, %16
  %18 = gather.f32 in1, %15, %9, %17
  %19 = where.f32 %8, %10, %18
  %20 = mul.f32 %19, %0
  %21 = mul.f32 %1, %2
  %22 = add.f32 %21, %20
  store.f32 out0, %22
}
)");
}

TEST_CASE("a value both gathered and loaded is not fused into one kernel", "[index_ops]") {
  // %1 gathers %a0 (cat) and %2 would load it: two kernels.
  Compiled c = Compile(R"(graph(%a0: f32[4,1]{1,1}@cuda) {
  %0 = aten::cat.default([%a0, %a0], 1) -> f32[4,2]{2,1}@cuda
  %1 = aten::add.Tensor(%0, %a0) -> f32[4,2]{2,1}@cuda
  return (%1)
})");
  CHECK(c.partition == "fused %0 -> %0\nfused %1 -> %1\n");
}

TEST_CASE("embedding, padding and slice/select backward lower to gathers", "[index_ops]") {
  Compiled c = Compile(
      R"(graph(%a0: bf16[10,4]{4,1}@cuda, %a1: i64[2,3]{3,1}@cuda, %a2: f32[2,3]{3,1}@cuda, %a3: f32[3]{1}@cuda) {
  %0 = aten::embedding.default(%a0, %a1) -> bf16[2,3,4]{12,4,1}@cuda
  %1 = prims::convert_element_type.default(%0, f32) -> f32[2,3,4]{12,4,1}@cuda
  %2 = aten::constant_pad_nd.default(%a2, [1, 2], 0.5) -> f32[2,6]{6,1}@cuda
  %3 = aten::slice_backward.default(%a2, [2, 5], 1, 1, 4, 1) -> f32[2,5]{5,1}@cuda
  %4 = aten::select_backward.default(%a3, [2, 3], 0, -1) -> f32[2,3]{3,1}@cuda
  return (%1, %2, %3, %4)
})");
  CHECK(c.partition == "fused %0 %1 -> %1\nfused %2 -> %2\nfused %3 -> %3\nfused %4 -> %4\n");
  REQUIRE(c.kernels.size() == 4);
  CHECK(c.kernels[0] == R"(pointwise @k[2,3,4](in0: bf16, in1: i64) -> (out0: f32) {
  // fused: aten::embedding.default, prims::convert_element_type.default
  %0 = index.i64 dim0
  %1 = index.i64 dim1
  %2 = constant.b8 true
  %3 = gather.i64 in1, %2, %0, %1
  %4 = constant.i64 0
  %5 = ge.b8 %3, %4
  %6 = constant.i64 10
  %7 = lt.b8 %3, %6
  %8 = and.b8 %5, %7
  %9 = index.i64 dim2
  %10 = gather.bf16 in0, %8, %3, %9
  %11 = cast.f32 %10
  store.f32 out0, %11
}
)");
  INFO(c.kernels[1]);
  CHECK(c.kernels[1].find("%4 = sub.i64 %2, %3") != std::string::npos);  // low pad 1
  CHECK(c.kernels[1].find("where.f32") != std::string::npos);
  CHECK(c.kernels[3].find("%1 = constant.i64 1\n  %2 = eq.b8 %0, %1") !=
        std::string::npos);                                                 // index -1 -> 1
  CHECK(c.kernels[3].find("gather.f32 in0, %2, %3") != std::string::npos);  // grad's one dim
}

TEST_CASE("index ops with unsupported arguments stay extern", "[index_ops]") {
  Compiled c =
      Compile(R"(graph(%a0: f32[2,4]{4,1}@cpu, %a1: f32[2,4]{4,1}@cuda, %a2: f32[2,4]{4,1}@cpu) {
  %0 = aten::cat.default([%a0, %a2], 1) -> f32[2,8]{8,1}@cpu
  %1 = aten::slice_backward.default(%a1, [2, 8], 1, 0, 8, 2) -> f32[2,8]{8,1}@cuda
  %2 = aten::cat.default([%a0, %a2], 1) -> f32[2,8]{0,1}@cpu
  return (%0, %1, %2)
})");
  // CPU cat fuses; slice_backward with step 2 (needs a modulo) and an overlapping output do not.
  CHECK(c.partition ==
        "fused %0 -> %0\nextern %1 aten::slice_backward.default\nextern %2 aten::cat.default\n");
}

TEST_CASE("nll_loss_backward is one index kernel; self is not gathered", "[index_ops]") {
  Compiled c = Compile(
      R"(graph(%a0: f32[]{}@cuda, %a1: f32[4,10]{10,1}@cuda, %a2: i64[4]{1}@cuda, %a3: f32[]{}@cuda) {
  %0 = aten::nll_loss_backward.default(%a0, %a1, %a2, None, 1, -100, %a3) -> f32[4,10]{10,1}@cuda
  return (%0)
})");
  CHECK(c.partition == "fused %0 -> %0\n");
  REQUIRE(c.kernels.size() == 1);
  CHECK(c.kernels[0] ==
        R"(pointwise @k[4,10](in0: f32, in1: f32, in2: i64, in3: f32) -> (out0: f32) {
  // fused: aten::nll_loss_backward.default
  %0 = load.f32 in1
  %1 = constant.b8 true
  %2 = index.i64 dim0
  %3 = index.i64 dim1
  %4 = gather.i64 in2, %1, %2
  %5 = eq.b8 %3, %4
  %6 = constant.i64 -100
  %7 = ne.b8 %4, %6
  %8 = and.b8 %5, %7
  %9 = gather.f32 in0, %1
  %10 = gather.f32 in3, %1
  %11 = div.f32 %9, %10
  %12 = neg.f32 %11
  %13 = constant.f32 0.0
  %14 = where.f32 %8, %12, %13
  store.f32 out0, %14
}
)");
}

TEST_CASE("scatters, stack and gather fuse with their consumers", "[index_ops]") {
  Compiled c = Compile(
      R"(graph(%a0: f32[4,6]{6,1}@cuda, %a1: f32[4,2]{2,1}@cuda, %a2: f32[4]{1}@cuda, %a3: i64[4,6]{6,1}@cuda) {
  %0 = aten::slice_scatter.default(%a0, %a1, 1, 2, 4) -> f32[4,6]{6,1}@cuda
  %1 = aten::select_scatter.default(%0, %a2, 1, 0) -> f32[4,6]{6,1}@cuda
  %2 = aten::relu.default(%1) -> f32[4,6]{6,1}@cuda
  %3 = aten::stack.default([%a2, %a2], 1) -> f32[4,2]{2,1}@cuda
  %4 = aten::gather.default(%a0, 1, %a3) -> f32[4,6]{6,1}@cuda
  %5 = aten::add.Tensor(%4, %a0) -> f32[4,6]{6,1}@cuda
  return (%2, %3, %5)
})");
  // %1 gathers %0, which is computed in %0's group: a second kernel. %5 loads %a0, which %4
  // gathers: a third.
  CHECK(c.partition ==
        "fused %0 -> %0\nfused %1 %2 -> %2\nfused %3 -> %3\nfused %4 -> %4\nfused %5 -> %5\n");
  CHECK(c.kernels[0].find("gather.f32 in1") != std::string::npos);
}

TEST_CASE("scatters of a number (an inlined fill) hold it as a constant", "[index_ops]") {
  // FillCopyFolding's output: self of the slice_scatter and src of the select_scatter are
  // numbers; each kernel gathers only its tensor operand.
  Compiled c = Compile(R"(graph(%a0: i64[2,7]{8,1}@cuda, %a1: i64[2,8]{8,1}@cuda) {
  %0 = aten::slice_scatter.default(0, %a0, 1, 1, 9223372036854775807) -> i64[2,8]{8,1}@cuda
  %1 = aten::select_scatter.default(%a1, 5, 1, 0) -> i64[2,8]{8,1}@cuda
  return (%0, %1)
})");
  CHECK(c.partition == "fused %0 -> %0\nfused %1 -> %1\n");
  REQUIRE(c.kernels.size() == 2);
  CHECK(c.kernels[0] ==
        R"(pointwise @k[2,8](in0: i64) -> (out0: i64) {
  // fused: aten::slice_scatter.default
  %0 = index.i64 dim1
  %1 = constant.i64 1
  %2 = ge.b8 %0, %1
  %3 = constant.i64 8
  %4 = lt.b8 %0, %3
  %5 = and.b8 %2, %4
  %6 = constant.i64 1
  %7 = sub.i64 %0, %6
  %8 = index.i64 dim0
  %9 = gather.i64 in0, %5, %8, %7
  %10 = constant.i64 0
  %11 = where.i64 %5, %9, %10
  store.i64 out0, %11
}
)");
  CHECK(c.kernels[1] ==
        R"(pointwise @k[2,8](in0: i64) -> (out0: i64) {
  // fused: aten::select_scatter.default
  %0 = index.i64 dim1
  %1 = constant.i64 0
  %2 = eq.b8 %0, %1
  %3 = index.i64 dim0
  %4 = constant.i64 5
  %5 = not.b8 %2
  %6 = gather.i64 in0, %5, %3, %0
  %7 = where.i64 %2, %4, %6
  store.i64 out0, %7
}
)");
}

TEST_CASE("index.Tensor with broadcast index tensors gathers each and masks all", "[index_ops]") {
  // transformers' mask: positions[batch[B,1,1,1], q[1,1,S,1]] -> [B,1,S,1]; %1 indexes two of
  // three dims (the last is left over); extern: %2 has a None (an unindexed leading dim), %3's
  // output has fewer dims than the tensor it gathers from (a gather's coordinates are the
  // kernel's dims at most).
  Compiled c = Compile(
      R"(graph(%a0: i64[2,5]{5,1}@cuda, %a1: i64[2,1,1,1]{1,1,1,1}@cuda, %a2: i64[1,1,5,1]{5,5,1,1}@cuda, %a3: f32[3,4,6]{24,6,1}@cuda, %a4: i64[2]{1}@cuda, %a5: i64[2,1]{1,1}@cuda) {
  %0 = aten::index.Tensor(%a0, [%a1, %a2]) -> i64[2,1,5,1]{5,5,1,1}@cuda
  %1 = aten::index.Tensor(%a3, [%a5, %a4]) -> f32[2,2,6]{12,6,1}@cuda
  %2 = aten::index.Tensor(%a3, [None, %a4]) -> f32[3,2,6]{12,6,1}@cuda
  %3 = aten::index.Tensor(%a3, [%a4, %a4]) -> f32[2,6]{6,1}@cuda
  return (%0, %1, %2, %3)
})");
  CHECK(c.partition ==
        "fused %0 -> %0\nfused %1 -> %1\nextern %2 aten::index.Tensor\nextern %3 "
        "aten::index.Tensor\n");
  REQUIRE(c.kernels.size() == 2);
  CHECK(c.kernels[0] ==
        R"(pointwise @k[2,1,5,1](in0: i64, in1: i64, in2: i64) -> (out0: i64) {
  // fused: aten::index.Tensor
  %0 = constant.b8 true
  %1 = index.i64 dim0
  %2 = constant.i64 0
  %3 = constant.i64 0
  %4 = constant.i64 0
  %5 = gather.i64 in1, %0, %1, %2, %3, %4
  %6 = constant.i64 0
  %7 = lt.b8 %5, %6
  %8 = constant.i64 2
  %9 = add.i64 %5, %8
  %10 = where.i64 %7, %9, %5
  %11 = constant.i64 0
  %12 = ge.b8 %10, %11
  %13 = constant.i64 2
  %14 = lt.b8 %10, %13
  %15 = and.b8 %12, %14
  %16 = constant.i64 0
  %17 = constant.i64 0
  %18 = index.i64 dim2
  %19 = constant.i64 0
  %20 = gather.i64 in2, %0, %16, %17, %18, %19
  %21 = constant.i64 0
  %22 = lt.b8 %20, %21
  %23 = constant.i64 5
  %24 = add.i64 %20, %23
  %25 = where.i64 %22, %24, %20
  %26 = constant.i64 0
  %27 = ge.b8 %25, %26
  %28 = constant.i64 5
  %29 = lt.b8 %25, %28
  %30 = and.b8 %27, %29
  %31 = and.b8 %15, %30
  %32 = gather.i64 in0, %31, %10, %25
  store.i64 out0, %32
}
)");
}

TEST_CASE("gather operands get their own strides in the plan", "[index_ops]") {
  ir::TensorType w{ir::DType::kBF16, {10, 4}, {4, 1}};
  CHECK(GatherOperandStrides(w, {2, 3, 4}) == std::vector<int64_t>{4, 1, 0});
}

}  // namespace
}  // namespace tccd::codegen
