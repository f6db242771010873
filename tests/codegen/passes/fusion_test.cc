// Fusion decisions: IR text in, partition text out (see PrintPartition).
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/passes/fusion.h"
#include "codegen/passes/kernel_builder.h"

namespace tccd::codegen {
namespace {

std::string Partitioned(const char* text, FusionOptions options = {}) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  REQUIRE(g.ok());
  absl::StatusOr<Partition> p = PartitionForFusion(*g, options);
  REQUIRE(p.ok());
  // Every group must also lower to a valid kernel.
  for (size_t i = 0; i < p->groups.size(); ++i) {
    absl::StatusOr<PointwiseKernel> k = BuildPointwiseKernel(*g, p->groups[i], "k");
    INFO(k.status().ToString());
    CHECK(k.ok());
  }
  return PrintPartition(*g, *p);
}

TEST_CASE("a pointwise chain with a broadcast operand becomes one kernel", "[fusion]") {
  CHECK(Partitioned(R"(graph(%a0: f32[4,8]{8,1}@cpu, %a1: f32[4,8]{8,1}@cpu, %a2: f32[8]{1}@cpu) {
  %0 = aten::mul.Tensor(%a0, %a1) -> f32[4,8]{8,1}@cpu
  %1 = aten::add.Tensor(%0, %a2, alpha=2) -> f32[4,8]{8,1}@cpu
  %2 = aten::relu.default(%1) -> f32[4,8]{8,1}@cpu
  return (%2)
})") == "fused %0 %1 %2 -> %2\n");
}

TEST_CASE("an extern op splits pointwise chains and intermediates it reads escape", "[fusion]") {
  CHECK(Partitioned(R"(graph(%a0: f32[4,4]{4,1}@cpu, %a1: f32[4,4]{4,1}@cpu) {
  %0 = aten::sigmoid.default(%a0) -> f32[4,4]{4,1}@cpu
  %1 = aten::mul.Tensor(%0, %a0) -> f32[4,4]{4,1}@cpu
  %2 = aten::mm.default(%1, %a1) -> f32[4,4]{4,1}@cpu
  %3 = aten::tanh.default(%2) -> f32[4,4]{4,1}@cpu
  %4 = aten::add.Tensor(%3, %0) -> f32[4,4]{4,1}@cpu
  return (%4)
})") == "fused %0 %1 -> %0 %1\nextern %2 aten::mm.default\nfused %3 %4 -> %4\n");
}

TEST_CASE("a node that would close a cycle through an extern starts a new group", "[fusion]") {
  // %2 reads %0 (group A) and %1, which itself reads group A: fusing %2 into A would need A
  // both before and after %1.
  CHECK(Partitioned(R"(graph(%a0: f32[4,4]{4,1}@cpu) {
  %0 = aten::relu.default(%a0) -> f32[4,4]{4,1}@cpu
  %1 = aten::mm.default(%0, %0) -> f32[4,4]{4,1}@cpu
  %2 = aten::add.Tensor(%0, %1) -> f32[4,4]{4,1}@cpu
  return (%2)
})") == "fused %0 -> %0\nextern %1 aten::mm.default\nfused %2 -> %2\n");
}

TEST_CASE("different iteration shapes are different kernels", "[fusion]") {
  CHECK(Partitioned(R"(graph(%a0: f32[4,8]{8,1}@cpu) {
  %0 = aten::exp.default(%a0) -> f32[4,8]{8,1}@cpu
  %1 = aten::sum.dim_IntList(%0, [1], true) -> f32[4,1]{1,1}@cpu
  %2 = aten::log.default(%1) -> f32[4,1]{1,1}@cpu
  %3 = aten::sub.Tensor(%a0, %2) -> f32[4,8]{8,1}@cpu
  return (%3)
})") == "fused %0 -> %0\nextern %1 aten::sum.dim_IntList\nfused %2 -> %2\nfused %3 -> %3\n");
}

TEST_CASE("backward ops fuse with casts and comparisons", "[fusion]") {
  CHECK(Partitioned(R"(graph(%a0: bf16[16]{1}@cpu, %a1: bf16[16]{1}@cpu) {
  %0 = aten::le.Scalar(%a1, 0) -> b8[16]{1}@cpu
  %1 = aten::threshold_backward.default(%a0, %a1, 0) -> bf16[16]{1}@cpu
  %2 = prims::convert_element_type.default(%1, f32) -> f32[16]{1}@cpu
  %3 = aten::where.self(%0, %2, 1.5) -> f32[16]{1}@cpu
  %4 = aten::gelu_backward.default(%3, %2, approximate="tanh") -> f32[16]{1}@cpu
  return (%4, %1)
})") == "fused %0 %1 %2 %3 %4 -> %1 %4\n");
}

TEST_CASE("nothing to fuse leaves only extern steps", "[fusion]") {
  const char* text = R"(graph(%a0: f32[4,4]{4,1}@cpu) {
  %0 = aten::mm.default(%a0, %a0) -> f32[4,4]{4,1}@cpu
  %1 = aten::div.Tensor_mode(%0, %a0, rounding_mode="floor") -> f32[4,4]{4,1}@cpu
  %2 = aten::div.Tensor(%1, %a0, rounding_mode="floor") -> f32[4,4]{4,1}@cpu
  return (%2)
})";
  CHECK(
      Partitioned(text) ==
      "extern %0 aten::mm.default\nextern %1 aten::div.Tensor_mode\nextern %2 aten::div.Tensor\n");
  CHECK(Partitioned(R"(graph(%a0: f32[2]{1}@cpu) {
  %0 = aten::relu.default(%a0) -> f32[2]{1}@cpu
  return (%0)
})",
                    FusionOptions{.enable = false}) == "extern %0 aten::relu.default\n");
}

TEST_CASE("bool arithmetic lowers to logic (torch.isclose, torch.isfinite)", "[fusion]") {
  // AOTAutograd's decompositions of isclose/isfinite: bool mul is and, bool add is or, bitwise
  // ops on bool are logical. These once produced `mul` on b8, an invalid kernel.
  const char* text = R"(graph(%a0: f32[8]{1}@cpu, %a1: f32[8]{1}@cpu) {
  %0 = aten::eq.Tensor(%a0, %a1) -> b8[8]{1}@cpu
  %1 = aten::sub.Tensor(%a0, %a1) -> f32[8]{1}@cpu
  %2 = aten::abs.default(%1) -> f32[8]{1}@cpu
  %3 = aten::ne.Scalar(%2, inf) -> b8[8]{1}@cpu
  %4 = aten::eq.Tensor(%2, %2) -> b8[8]{1}@cpu
  %5 = aten::mul.Tensor(%4, %3) -> b8[8]{1}@cpu
  %6 = aten::le.Scalar(%2, 0.001) -> b8[8]{1}@cpu
  %7 = aten::bitwise_and.Tensor(%5, %6) -> b8[8]{1}@cpu
  %8 = aten::bitwise_or.Tensor(%0, %7) -> b8[8]{1}@cpu
  %9 = aten::add.Tensor(%5, %6) -> b8[8]{1}@cpu
  %10 = aten::maximum.default(%5, %6) -> b8[8]{1}@cpu
  %11 = aten::minimum.default(%5, %6) -> b8[8]{1}@cpu
  return (%8, %9, %10, %11)
})";
  CHECK(Partitioned(text) == "fused %0 %1 %2 %3 %4 %5 %6 %7 %8 %9 %10 %11 -> %8 %9 %10 %11\n");
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  REQUIRE(g.ok());
  absl::StatusOr<Partition> p = PartitionForFusion(*g, {});
  REQUIRE(p.ok());
  absl::StatusOr<PointwiseKernel> k = BuildPointwiseKernel(*g, p->groups[0], "k");
  REQUIRE(k.ok());
  std::string text_out = PrintPointwiseKernel(*k);
  INFO(text_out);
  CHECK(text_out.find("= mul.") == std::string::npos);
  CHECK(text_out.find("= add.") == std::string::npos);
  CHECK(text_out.find("%8 = and.b8 %7, %6") != std::string::npos);    // mul
  CHECK(text_out.find("%13 = or.b8 %8, %10") != std::string::npos);   // add
  CHECK(text_out.find("%15 = and.b8 %8, %10") != std::string::npos);  // minimum
}

TEST_CASE("functional copy and dropout backward fuse as pointwise ops", "[fusion]") {
  const char* text =
      R"(graph(%a0: bf16[4,8]{8,1}@cpu, %a1: b8[4,8]{8,1}@cpu, %a2: f32[4,8]{8,1}@cpu, %a3: f32[8]{1}@cpu) {
  %0 = aten::native_dropout_backward.default(%a0, %a1, 1.25) -> bf16[4,8]{8,1}@cpu
  %1 = aten::copy.default(%a2, %a3) -> f32[4,8]{8,1}@cpu
  %2 = aten::add.Tensor(%0, %1) -> f32[4,8]{8,1}@cpu
  return (%2)
})";
  CHECK(Partitioned(text) == "fused %0 %1 %2 -> %2\n");
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  REQUIRE(g.ok());
  absl::StatusOr<Partition> p = PartitionForFusion(*g, {});
  REQUIRE(p.ok());
  absl::StatusOr<PointwiseKernel> k = BuildPointwiseKernel(*g, p->groups[0], "k");
  REQUIRE(k.ok());
  CHECK(PrintPointwiseKernel(*k) ==
        R"(pointwise @k[4,8](in0: bf16, in1: b8, in2: f32, in3: f32) -> (out0: f32) {
  // fused: aten::native_dropout_backward.default, aten::copy.default, aten::add.Tensor
  %0 = load.bf16 in0
  %1 = cast.f32 %0
  %2 = load.b8 in1
  %3 = load.f32 in2
  %4 = load.f32 in3
  %5 = cast.f32 %2
  %6 = mul.f32 %1, %5
  %7 = constant.f32 1.25
  %8 = mul.f32 %6, %7
  %9 = add.f32 %8, %4
  store.f32 out0, %9
}
)");
}

TEST_CASE("vision activations, classification and optimizer-style ops fuse", "[fusion]") {
  const char* text = R"(graph(%a0: f32[8]{1}@cpu, %a1: f32[8]{1}@cpu, %a2: i64[8]{1}@cpu) {
  %0 = aten::isnan.default(%a0) -> b8[8]{1}@cpu
  %1 = aten::isinf.default(%a2) -> b8[8]{1}@cpu
  %2 = aten::hardswish.default(%a0) -> f32[8]{1}@cpu
  %3 = aten::leaky_relu_backward.default(%2, %a1, 0.2, false) -> f32[8]{1}@cpu
  %4 = aten::lerp.Scalar(%3, %a1, 0.75) -> f32[8]{1}@cpu
  %5 = aten::addcmul.default(%4, %a0, %a1, value=0.5) -> f32[8]{1}@cpu
  %6 = aten::logical_xor.default(%0, %1) -> b8[8]{1}@cpu
  %7 = aten::sign.default(%a2) -> i64[8]{1}@cpu
  return (%5, %6, %7)
})";
  // Three independent chains (horizontal_fusion.h would put them into one kernel).
  CHECK(Partitioned(text) == "fused %0 %1 %6 -> %6\nfused %2 %3 %4 %5 -> %5\nfused %7 -> %7\n");
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  REQUIRE(g.ok());
  absl::StatusOr<Partition> p = PartitionForFusion(*g, {});
  REQUIRE(p.ok());
  absl::StatusOr<PointwiseKernel> k = BuildPointwiseKernel(*g, p->groups[0], "k");
  REQUIRE(k.ok());
  const std::string kernel = PrintPointwiseKernel(*k);
  INFO(kernel);
  CHECK(kernel.find("ne.b8 %0, %0") != std::string::npos);       // isnan: x != x
  CHECK(kernel.find("constant.b8 false") != std::string::npos);  // isinf of an integer
}

TEST_CASE("ops torch rejects on bool, and bitwise ops on integers, stay extern", "[fusion]") {
  CHECK(Partitioned(R"(graph(%a0: b8[4]{1}@cpu, %a1: i32[4]{1}@cpu) {
  %0 = aten::sub.Tensor(%a0, %a0) -> b8[4]{1}@cpu
  %1 = aten::abs.default(%a0) -> b8[4]{1}@cpu
  %2 = aten::bitwise_and.Tensor(%a1, %a1) -> i32[4]{1}@cpu
  return (%0, %1, %2)
})") == "extern %0 aten::sub.Tensor\nextern %1 aten::abs.default\nextern %2 "
        "aten::bitwise_and.Tensor\n");
}

TEST_CASE("float-only ops on integer tensors and overlapping outputs are not fused", "[fusion]") {
  CHECK(Partitioned(R"(graph(%a0: i64[4]{1}@cpu, %a1: f32[4]{1}@cpu) {
  %0 = aten::exp.default(%a0) -> i64[4]{1}@cpu
  %1 = aten::add.Tensor(%a0, %a0) -> i64[4]{1}@cpu
  %2 = aten::relu.default(%a1) -> f32[4,4]{0,1}@cpu
  return (%0, %1, %2)
})") == "extern %0 aten::exp.default\nfused %1 -> %1\nextern %2 aten::relu.default\n");
}

TEST_CASE("ops that read or produce complex tensors stay extern; their real neighbours fuse",
          "[fusion]") {
  // torch.fft.rfft then abs: no kernel computes on complex values (the kernel IR has no complex
  // types), so every op touching c64 is an extern step, even a pointwise one like abs or mul.
  CHECK(Partitioned(R"(graph(%a0: f32[8]{1}@cpu) {
  %0 = aten::mul.Tensor(%a0, 2) -> f32[8]{1}@cpu
  %1 = aten::_fft_r2c.default(%0, [0], 0, true) -> c64[5]{1}@cpu
  %2 = aten::mul.Tensor(%1, %1) -> c64[5]{1}@cpu
  %3 = aten::abs.default(%2) -> f32[5]{1}@cpu
  %4 = aten::full.default([5], 1.5, dtype=c64, device=device(cpu)) -> c64[5]{1}@cpu
  %5 = aten::relu.default(%3) -> f32[5]{1}@cpu
  %6 = aten::add.Tensor(%5, 1) -> f32[5]{1}@cpu
  return (%6, %4)
})") == "fused %0 -> %0\nextern %1 aten::_fft_r2c.default\nextern %2 aten::mul.Tensor\n"
        "extern %3 aten::abs.default\nextern %4 aten::full.default\nfused %5 %6 -> %6\n");
}

TEST_CASE("the group size limit splits long chains", "[fusion]") {
  CHECK(Partitioned(R"(graph(%a0: f32[4]{1}@cpu) {
  %0 = aten::neg.default(%a0) -> f32[4]{1}@cpu
  %1 = aten::neg.default(%0) -> f32[4]{1}@cpu
  %2 = aten::neg.default(%1) -> f32[4]{1}@cpu
  return (%2)
})",
                    FusionOptions{.max_nodes_per_group = 2}) ==
        "fused %0 %1 -> %1\nfused %2 -> %2\n");
}

TEST_CASE("a group that came to depend on another through a later member is not joined to it",
          "[fusion]") {
  // Found by tests/fuzz/request_fuzzer: %4 puts a dependency on group {%1} into group {%0}
  // after %2 was visited, so %2's own dependencies ({%0}) did not show that {%1} now depends on
  // {%0}; %5 joined {%1} and made a cycle ({%0} -> %2 -> {%1} -> %3 -> {%0}).
  CHECK(Partitioned(R"(graph(%a0: f32[4,4]{4,1}@cpu, %a1: f32[4,4]{4,1}@cpu) {
  %0 = aten::relu.default(%a0) -> f32[4,4]{4,1}@cpu
  %1 = aten::neg.default(%a1) -> f32[4,4]{4,1}@cpu
  %2 = aten::mm.default(%0, %0) -> f32[4,4]{4,1}@cpu
  %3 = aten::mm.default(%1, %1) -> f32[4,4]{4,1}@cpu
  %4 = aten::add.Tensor(%0, %3) -> f32[4,4]{4,1}@cpu
  %5 = aten::add.Tensor(%1, %2) -> f32[4,4]{4,1}@cpu
  return (%4, %5)
})") == "fused %1 -> %1\nextern %3 aten::mm.default\nfused %0 %4 -> %0 %4\nextern %2 "
        "aten::mm.default\nfused %5 -> %5\n");
}

}  // namespace
}  // namespace tccd::codegen
