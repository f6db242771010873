// Row-reduction fusion (CUDA): IR text in, partition text and kernel IR out.
#include <catch2/catch.hpp>

#include "codegen/ir/parser.h"
#include "codegen/passes/fusion.h"
#include "codegen/passes/kernel_builder.h"
#include "codegen/passes/partition_verifier.h"
#include "codegen/passes/reduction_fusion.h"
#include "codegen/passes/reduction_ops.h"

namespace tccd::codegen {
namespace {

struct Result {
  std::string partition;
  std::vector<std::string> kernels;  // PrintPointwiseKernel of every group, in group order
  bool changed = false;
};

Result Fuse(const char* text, const FusionOptions& options = {}) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  absl::StatusOr<Partition> p = PartitionForFusion(*g, options);
  REQUIRE(p.ok());
  CHECK(VerifyPartition(*g, *p) == "");
  absl::StatusOr<bool> changed = FuseRowReductions(*g, options, *p);
  INFO(changed.status().ToString());
  REQUIRE(changed.ok());
  CHECK(VerifyPartition(*g, *p) == "");
  Result r;
  r.changed = *changed;
  r.partition = PrintPartition(*g, *p);
  for (size_t i = 0; i < p->groups.size(); ++i) {
    absl::StatusOr<PointwiseKernel> k =
        BuildPointwiseKernel(*g, p->groups[i], "k" + std::to_string(i));
    INFO(k.status().ToString());
    REQUIRE(k.ok());
    r.kernels.push_back(PrintPointwiseKernel(*k));
  }
  return r;
}

TEST_CASE("a reduction over size-1 dims (a mean over 1x1 maps) stays ATen's", "[rows]") {
  // A one-element row: the kernel IR would see the reduced input as a per-row value (a tiny
  // ResNet's global average pool over 1x1 feature maps failed to compile before).
  Result r = Fuse(R"(graph(%a0: bf16[4,2048,1,1]{2048,1,1,1}@cuda) {
  %0 = aten::relu.default(%a0) -> bf16[4,2048,1,1]{2048,1,1,1}@cuda
  %1 = aten::mean.dim(%0, [-1, -2], true) -> bf16[4,2048,1,1]{2048,1,1,1}@cuda
  return (%1)
})");
  CHECK(r.partition == "fused %0 -> %0\nextern %1 aten::mean.dim\n");
}

TEST_CASE("safe softmax (0 for fully masked rows) is a row kernel with its mask", "[rows]") {
  Result r =
      Fuse(R"(graph(%a0: bf16[8,64,128]{8192,128,1}@cuda, %a1: bf16[8,64,128]{8192,128,1}@cuda) {
  %0 = aten::add.Tensor(%a0, %a1) -> bf16[8,64,128]{8192,128,1}@cuda
  %1 = aten::_safe_softmax.default(%0, -1) -> bf16[8,64,128]{8192,128,1}@cuda
  return (%1)
})");
  CHECK(r.changed);
  CHECK(r.partition == "fused(rows, reduce 1) %0 %1 -> %1\n");
  REQUIRE(r.kernels.size() == 1);
  CHECK(r.kernels[0].find("reduce_max.f32") != std::string::npos);
  CHECK(r.kernels[0].find("where") != std::string::npos);
  CHECK(r.kernels[0].find("constant.f32 -inf") != std::string::npos);
}

TEST_CASE(
    "logsumexp (a decomposed log_softmax) is one row kernel with the cast and the subtraction",
    "[rows]") {
  // The client's log_softmax(x) = x - logsumexp(x, keepdim): the row kernel reads the bf16
  // logits once and writes the per-row value the backward needs plus the log-probabilities.
  Result r = Fuse(R"(graph(%a0: bf16[64,1000]{1000,1}@cuda) {
  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[64,1000]{1000,1}@cuda
  %1 = aten::logsumexp.default(%0, [1], true) -> f32[64,1]{1,1}@cuda
  %2 = aten::sub.Tensor(%0, %1) -> f32[64,1000]{1000,1}@cuda
  return (%1, %2)
})");
  CHECK(r.changed);
  CHECK(r.partition == "fused(rows, reduce 1) %0 %1 %2 -> %1 %2\n");
  REQUIRE(r.kernels.size() == 1);
  CHECK(r.kernels[0].find("reduce_max.f32") != std::string::npos);
  CHECK(r.kernels[0].find("reduce_sum.f32") != std::string::npos);
  CHECK(r.kernels[0].find("log.f32") != std::string::npos);
  CHECK(r.kernels[0].find("constant.f32 -inf") != std::string::npos);  // ATen's infinite-max rule
}

TEST_CASE("the backward recomputes log-probabilities from the logits and logsumexp in its prologue",
          "[rows]") {
  Result r = Fuse(
      R"(graph(%a0: bf16[64,1000]{1000,1}@cuda, %a1: f32[64,1]{1,1}@cuda, %a2: f32[64,1000]{1000,1}@cuda) {
  %0 = aten::_to_copy.default(%a0, dtype=f32) -> f32[64,1000]{1000,1}@cuda
  %1 = aten::sub.Tensor(%0, %a1) -> f32[64,1000]{1000,1}@cuda
  %2 = aten::_log_softmax_backward_data.default(%a2, %1, 1, f32) -> f32[64,1000]{1000,1}@cuda
  %3 = aten::_to_copy.default(%2, dtype=bf16) -> bf16[64,1000]{1000,1}@cuda
  return (%3)
})");
  CHECK(r.changed);
  CHECK(r.partition == "fused(rows, reduce 1) %0 %1 %2 %3 -> %3\n");
}

TEST_CASE("softmax fuses its pointwise prologue and epilogue into one row kernel", "[rows]") {
  Result r = Fuse(R"(graph(%a0: f32[64,128]{128,1}@cuda, %a1: f32[128]{1}@cuda) {
  %0 = aten::mul.Tensor(%a0, 0.125) -> f32[64,128]{128,1}@cuda
  %1 = aten::_softmax.default(%0, -1, false) -> f32[64,128]{128,1}@cuda
  %2 = aten::mul.Tensor(%1, %a1) -> f32[64,128]{128,1}@cuda
  return (%2)
})");
  CHECK(r.changed);
  CHECK(r.partition == "fused(rows, reduce 1) %0 %1 %2 -> %2\n");
  REQUIRE(r.kernels.size() == 1);
  CHECK(
      r.kernels[0] ==
      R"(pointwise @k0[64,128](in0: f32, in1: f32) -> (out0: f32) rows(reduce 1 dims; kept-broadcast: in1) {
  // fused: aten::mul.Tensor, aten::_softmax.default, aten::mul.Tensor
  %0 = load.f32 in0
  %1 = load.f32 in1
  %2 = constant.f32 0.125
  %3 = mul.f32 %0, %2
  %4 = reduce_max.f32 %3
  %5 = sub.f32 %3, %4
  %6 = exp.f32 %5
  %7 = reduce_sum.f32 %6
  %8 = div.f32 %6, %7
  %9 = mul.f32 %8, %1
  store.f32 out0, %9
}
)");
}

TEST_CASE("a residual add feeds a layer norm; the sum and every used output escape", "[rows]") {
  Result r = Fuse(
      R"(graph(%a0: bf16[4,16,256]{4096,256,1}@cuda, %a1: bf16[4,16,256]{4096,256,1}@cuda, %a2: bf16[256]{1}@cuda, %a3: bf16[256]{1}@cuda) {
  %0 = aten::add.Tensor(%a0, %a1) -> bf16[4,16,256]{4096,256,1}@cuda
  %1 = aten::native_layer_norm.default(%0, [256], %a2, %a3, 1e-05) -> (bf16[4,16,256]{4096,256,1}@cuda, f32[4,16,1]{16,1,1}@cuda, f32[4,16,1]{16,1,1}@cuda)
  return (%0, %1#0, %1#2)
})");
  CHECK(r.partition == "fused(rows, reduce 1) %0 %1 -> %0 %1 %1#2\n");
  REQUIRE(r.kernels.size() == 1);
  // The weight and bias are the same for every row (kept-broadcast: the CUDA row emitter loads
  // them in the epilogue, the streamed operands at the row's start).
  CHECK(r.kernels[0].find("rows(reduce 1 dims; row operands: out2; kept-broadcast: in2 in3)") !=
        std::string::npos);
  CHECK(r.kernels[0].find("rsqrt.f32") != std::string::npos);
}

TEST_CASE("the decomposed RMS norm pattern is one row kernel", "[rows]") {
  Result r = Fuse(R"(graph(%a0: bf16[8,512]{512,1}@cuda, %a1: bf16[512]{1}@cuda) {
  %0 = prims::convert_element_type.default(%a0, f32) -> f32[8,512]{512,1}@cuda
  %1 = aten::pow.Tensor_Scalar(%0, 2) -> f32[8,512]{512,1}@cuda
  %2 = aten::mean.dim(%1, [-1], true) -> f32[8,1]{1,1}@cuda
  %3 = aten::add.Tensor(%2, 1e-06) -> f32[8,1]{1,1}@cuda
  %4 = aten::rsqrt.default(%3) -> f32[8,1]{1,1}@cuda
  %5 = aten::mul.Tensor(%0, %4) -> f32[8,512]{512,1}@cuda
  %6 = prims::convert_element_type.default(%5, bf16) -> bf16[8,512]{512,1}@cuda
  %7 = aten::mul.Tensor(%6, %a1) -> bf16[8,512]{512,1}@cuda
  return (%7, %4)
})");
  CHECK(r.partition == "fused(rows, reduce 1) %0 %1 %2 %3 %4 %5 %6 %7 -> %4 %7\n");
  REQUIRE(r.kernels.size() == 1);
  CHECK(r.kernels[0].find("row operands: out0") != std::string::npos);
}

TEST_CASE("a decomposed layer norm (two means over one row) is one kernel", "[rows]") {
  Result r = Fuse(R"(graph(%a0: f32[32,64]{64,1}@cuda) {
  %0 = aten::mean.dim(%a0, [1], true) -> f32[32,1]{1,1}@cuda
  %1 = aten::sub.Tensor(%a0, %0) -> f32[32,64]{64,1}@cuda
  %2 = aten::mul.Tensor(%1, %1) -> f32[32,64]{64,1}@cuda
  %3 = aten::mean.dim(%2, [1], true) -> f32[32,1]{1,1}@cuda
  %4 = aten::add.Tensor(%3, 1e-05) -> f32[32,1]{1,1}@cuda
  %5 = aten::rsqrt.default(%4) -> f32[32,1]{1,1}@cuda
  %6 = aten::mul.Tensor(%1, %5) -> f32[32,64]{64,1}@cuda
  return (%6)
})");
  CHECK(r.partition == "fused(rows, reduce 1) %0 %1 %2 %3 %4 %5 %6 -> %6\n");
}

TEST_CASE("sum over trailing dims without keepdim maps its output to the leading dims", "[rows]") {
  const char* text = R"(graph(%a0: f16[6,10,12]{120,12,1}@cuda) {
  %0 = aten::abs.default(%a0) -> f16[6,10,12]{120,12,1}@cuda
  %1 = aten::sum.dim_IntList(%0, [1, 2]) -> f16[6]{1}@cuda
  %2 = aten::mul.Tensor(%1, 2) -> f16[6]{1}@cuda
  return (%2)
})";
  Result r = Fuse(text);
  CHECK(r.partition == "fused(rows, reduce 2) %0 %1 %2 -> %2\n");
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
  REQUIRE(g.ok());
  absl::StatusOr<Partition> p = PartitionForFusion(*g, {});
  REQUIRE(p.ok());
  REQUIRE(FuseRowReductions(*g, {}, *p).ok());
  CHECK(GroupOperandStrides(*g, p->groups[0], {2, 0}, true) == std::vector<int64_t>{1, 0, 0});
  CHECK(GroupOperandStrides(*g, p->groups[0], {ir::ValueRef::kInput, 0}, false) ==
        std::vector<int64_t>{120, 12, 1});
}

TEST_CASE("a per-row value without keepdim is not broadcast against the rows", "[rows]") {
  // %2 broadcasts %1 (f32[4]) along the *last* dim in torch, not per row: it stays outside.
  Result r = Fuse(R"(graph(%a0: f32[4,4]{4,1}@cuda) {
  %0 = aten::exp.default(%a0) -> f32[4,4]{4,1}@cuda
  %1 = aten::sum.dim_IntList(%0, [1]) -> f32[4]{1}@cuda
  %2 = aten::div.Tensor(%0, %1) -> f32[4,4]{4,1}@cuda
  return (%2)
})");
  CHECK(r.partition == "fused(rows, reduce 1) %0 %1 -> %0 %1\nfused %2 -> %2\n");
}

TEST_CASE("amax over leading dims, middle dims, f64 and CPU tensors stay extern", "[rows]") {
  Result r = Fuse(
      R"(graph(%a0: f32[64,32]{32,1}@cuda, %a1: f64[8,8]{8,1}@cuda, %a2: f32[8,8]{8,1}@cpu, %a3: f32[4,8,16]{128,16,1}@cuda) {
  %0 = aten::amax.default(%a0, [0], true) -> f32[1,32]{32,1}@cuda
  %1 = aten::_softmax.default(%a1, -1, false) -> f64[8,8]{8,1}@cuda
  %2 = aten::_softmax.default(%a2, -1, false) -> f32[8,8]{8,1}@cpu
  %3 = aten::sum.dim_IntList(%a3, [1]) -> f32[4,16]{16,1}@cuda
  return (%0, %1, %2, %3)
})");
  CHECK_FALSE(r.changed);
  CHECK(r.partition ==
        "extern %0 aten::amax.default\nextern %1 aten::_softmax.default\n"
        "extern %2 aten::_softmax.default\nextern %3 aten::sum.dim_IntList\n");
}

TEST_CASE("a bias gradient with its pointwise prologue is one column kernel", "[columns]") {
  Result r = Fuse(R"(graph(%a0: bf16[64,32]{32,1}@cuda, %a1: bf16[64,32]{32,1}@cuda) {
  %0 = aten::mul.Tensor(%a0, %a1) -> bf16[64,32]{32,1}@cuda
  %1 = aten::sum.dim_IntList(%0, [0], true) -> bf16[1,32]{32,1}@cuda
  return (%1)
})");
  CHECK(r.changed);
  CHECK(r.partition == "fused(columns, reduce 1) %0 %1 -> %1\n");
  REQUIRE(r.kernels.size() == 1);
  CHECK(
      r.kernels[0] ==
      R"(pointwise @k0[64,32](in0: bf16, in1: bf16) -> (out0: bf16) columns(reduce 1 leading dims; column operands: out0) {
  // fused: aten::mul.Tensor, aten::sum.dim_IntList
  %0 = load.bf16 in0
  %1 = cast.f32 %0
  %2 = load.bf16 in1
  %3 = cast.f32 %2
  %4 = mul.f32 %1, %3
  %5 = reduce_sum.f32 %4
  %6 = cast.bf16 %5
  store.bf16 out0, %6
}
)");
}

// A GELU backward that a matmul reads (the first Linear's input gradient) and whose column sum
// is that Linear's bias gradient.
constexpr char kGeluBackwardBiasGrad[] =
    R"(graph(%a0: bf16[64,32]{32,1}@cuda, %a1: bf16[64,32]{32,1}@cuda, %a2: bf16[32,16]{16,1}@cuda) {
  %0 = aten::gelu_backward.default(%a0, %a1) -> bf16[64,32]{32,1}@cuda
  %1 = aten::sum.dim_IntList(%0, [0], true) -> bf16[1,32]{32,1}@cuda
  %2 = aten::mm.default(%0, %a2) -> bf16[64,16]{16,1}@cuda
  return (%1, %2)
})";

TEST_CASE("with every stored column prologue taken, a GELU backward joins its bias gradient",
          "[columns]") {
  FusionOptions options;
  options.column_stored_prologues = FusionOptions::StoredPrologues::kAlways;
  Result r = Fuse(kGeluBackwardBiasGrad, options);
  CHECK(r.partition == "fused(columns, reduce 1) %0 %1 -> %0 %1\nextern %2 aten::mm.default\n");
  REQUIRE(r.kernels.size() == 1);
  CHECK(r.kernels[0].find("-> (out0: bf16, out1: bf16) columns(reduce 1 leading dims") !=
        std::string::npos);
}

TEST_CASE(
    "without stored column prologues the GELU backward stays pointwise and the bias gradient "
    "sums what it wrote",
    "[columns]") {
  FusionOptions options;
  options.column_stored_prologues = FusionOptions::StoredPrologues::kNever;
  Result r = Fuse(kGeluBackwardBiasGrad, options);
  // The default (kTranscendental) splits it too: the GELU backward computes erf and exp.
  CHECK(Fuse(kGeluBackwardBiasGrad).partition == r.partition);
  CHECK(r.partition ==
        "fused %0 -> %0\nfused(columns, reduce 1) %1 -> %1\nextern %2 aten::mm.default\n");
  // The f32 cast only the sum reads moves into the column kernel, which then reads the stored
  // bf16 (column-sum-split's stage one sums such a cast).
  Result cast = Fuse(
      R"(graph(%a0: bf16[64,32]{32,1}@cuda, %a1: bf16[64,32]{32,1}@cuda, %a2: bf16[32,16]{16,1}@cuda) {
  %0 = aten::gelu_backward.default(%a0, %a1) -> bf16[64,32]{32,1}@cuda
  %1 = aten::_to_copy.default(%0, dtype=f32) -> f32[64,32]{32,1}@cuda
  %2 = aten::sum.dim_IntList(%1, [0], true) -> f32[1,32]{32,1}@cuda
  %3 = aten::mm.default(%0, %a2) -> bf16[64,16]{16,1}@cuda
  return (%2, %3)
})",
      options);
  CHECK(cast.partition ==
        "fused %0 -> %0\nfused(columns, reduce 1) %1 %2 -> %2\nextern %3 aten::mm.default\n");
  // Nothing to do: a prologue nothing else reads still joins the column kernel.
  Result only = Fuse(R"(graph(%a0: bf16[64,32]{32,1}@cuda, %a1: bf16[64,32]{32,1}@cuda) {
  %0 = aten::gelu_backward.default(%a0, %a1) -> bf16[64,32]{32,1}@cuda
  %1 = aten::sum.dim_IntList(%0, [0], true) -> bf16[1,32]{32,1}@cuda
  return (%1)
})",
                     options);
  CHECK(only.partition == "fused(columns, reduce 1) %0 %1 -> %1\n");
}

TEST_CASE("by default a stored prologue without transcendentals stays in the column kernel",
          "[columns]") {
  // A product the matmul reads and the bias gradient sums: cheap per element, one pass.
  Result r = Fuse(
      R"(graph(%a0: bf16[64,32]{32,1}@cuda, %a1: bf16[64,32]{32,1}@cuda, %a2: bf16[32,16]{16,1}@cuda) {
  %0 = aten::mul.Tensor(%a0, %a1) -> bf16[64,32]{32,1}@cuda
  %1 = aten::sum.dim_IntList(%0, [0], true) -> bf16[1,32]{32,1}@cuda
  %2 = aten::mm.default(%0, %a2) -> bf16[64,16]{16,1}@cuda
  return (%1, %2)
})");
  CHECK(r.partition == "fused(columns, reduce 1) %0 %1 -> %0 %1\nextern %2 aten::mm.default\n");
}

TEST_CASE(
    "a mean over the two leading dims without keepdim; an iteration-shaped consumer of it "
    "stays outside",
    "[columns]") {
  Result r = Fuse(R"(graph(%a0: f32[4,8,16]{128,16,1}@cuda) {
  %0 = aten::mean.dim(%a0, [0, 1]) -> f32[16]{1}@cuda
  %1 = aten::sub.Tensor(%a0, %0) -> f32[4,8,16]{128,16,1}@cuda
  return (%1)
})");
  CHECK(r.partition == "fused(columns, reduce 2) %0 -> %0\nfused %1 -> %1\n");
}

TEST_CASE("independent column sums over the same rows are one kernel; a dependent one is not",
          "[columns]") {
  // A channels-last batch norm backward: sum(g) and sum(g * xhat) in one pass over the rows; the
  // variance pass after a mean depends on it and keeps its own kernel.
  Result r = Fuse(R"(graph(%a0: f32[64,32]{32,1}@cuda, %a1: f32[64,32]{32,1}@cuda) {
  %0 = aten::sum.dim_IntList(%a0, [0], true) -> f32[1,32]{32,1}@cuda
  %1 = aten::mul.Tensor(%a0, %a1) -> f32[64,32]{32,1}@cuda
  %2 = aten::sum.dim_IntList(%1, [0], true) -> f32[1,32]{32,1}@cuda
  %3 = aten::sub.Tensor(%a1, %2) -> f32[64,32]{32,1}@cuda
  %4 = aten::sum.dim_IntList(%3, [0], true) -> f32[1,32]{32,1}@cuda
  return (%0, %2, %4)
})");
  CHECK(r.partition ==
        "fused(columns, reduce 1) %0 %1 %2 -> %0 %2\nfused(columns, reduce 1) %3 %4 -> %4\n");
  REQUIRE(r.kernels.size() == 2);
  INFO(r.kernels[0]);
  CHECK(r.kernels[0].find("-> (out0: f32, out1: f32) columns(reduce 1 leading dims") !=
        std::string::npos);
}

// `n` independent sums over [64, cols] of `dtype` (ViT's equal-shaped bias gradients).
std::string SiblingSums(int n, const std::string& dtype, int cols) {
  const std::string t =
      dtype + "[64," + std::to_string(cols) + "]{" + std::to_string(cols) + ",1}@cuda";
  const std::string o =
      dtype + "[1," + std::to_string(cols) + "]{" + std::to_string(cols) + ",1}@cuda";
  std::string text = "graph(", ret;
  for (int i = 0; i < n; ++i) text += (i ? ", %a" : "%a") + std::to_string(i) + ": " + t;
  text += ") {\n";
  for (int i = 0; i < n; ++i) {
    text += "  %" + std::to_string(i) + " = aten::sum.dim_IntList(%a" + std::to_string(i) +
            ", [0], true) -> " + o + "\n";
    ret += (i ? ", %" : "%") + std::to_string(i);
  }
  return text + "  return (" + ret + ")\n}";
}

// The partition line of a column group of nodes [first, last].
std::string ColumnGroup(int first, int last) {
  std::string members;
  for (int i = first; i <= last; ++i) members += " %" + std::to_string(i);
  return "fused(columns, reduce 1)" + members + " ->" + members + "\n";
}

TEST_CASE("independent column sums share a pass while their shared-memory tiles fit 48 KiB",
          "[columns]") {
  // f32: 4-wide vectors, a 4 KiB tile per sum (256 threads x 4 floats): twelve fit, not fourteen.
  Result f32 = Fuse(SiblingSums(14, "f32", 768).c_str());
  CHECK(f32.partition == ColumnGroup(0, 11) + ColumnGroup(12, 13));
  // bf16: 8-wide vectors, 8 KiB a tile: six a kernel (ViT's twelve in one needed 88 KiB).
  Result bf16 = Fuse(SiblingSums(8, "bf16", 768).c_str());
  CHECK(bf16.partition == ColumnGroup(0, 5) + ColumnGroup(6, 7));
  // Columns the vector does not divide take narrower tiles: 6 columns, 2-wide, 2 KiB a tile.
  Result narrow = Fuse(SiblingSums(8, "bf16", 6).c_str());
  CHECK(narrow.partition == ColumnGroup(0, 7));
  for (const std::string& k : bf16.kernels)
    CHECK(k.find("columns(reduce 1 leading dims") != std::string::npos);
}

TEST_CASE("a smaller per-target budget merges fewer column sums", "[columns]") {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(SiblingSums(4, "f32", 768));
  REQUIRE(g.ok());
  FusionOptions options;
  options.column_shared_memory_bytes = 8 * 1024;
  absl::StatusOr<Partition> p = PartitionForFusion(*g, options);
  REQUIRE(p.ok());
  REQUIRE(FuseRowReductions(*g, options, *p).ok());
  CHECK(PrintPartition(*g, *p) == ColumnGroup(0, 1) + ColumnGroup(2, 3));
}

TEST_CASE(
    "layer norm backward: grad_input is a row kernel, the parameter gradients a column "
    "kernel reading mean and rstd per row",
    "[columns]") {
  Result r = Fuse(
      R"(graph(%a0: f32[64,32]{32,1}@cuda, %a1: f32[64,32]{32,1}@cuda, %a2: f32[64,1]{1,1}@cuda, %a3: f32[64,1]{1,1}@cuda, %a4: f32[32]{1}@cuda, %a5: f32[32]{1}@cuda) {
  %0 = aten::native_layer_norm_backward.default(%a0, %a1, [32], %a2, %a3, %a4, %a5, [true, false, false]) -> (f32[64,32]{32,1}@cuda, f32[0]{1}@cuda, f32[0]{1}@cuda)
  %1 = aten::native_layer_norm_backward.default(%a0, %a1, [32], %a2, %a3, %a4, %a5, [false, true, true]) -> (f32[0]{1}@cuda, f32[32]{1}@cuda, f32[32]{1}@cuda)
  return (%0#0, %1#1, %1#2)
})");
  CHECK(r.partition ==
        "fused(rows, reduce 1) %0 -> %0\nfused(columns, reduce 1) %1 -> %1#1 %1#2\n");
  REQUIRE(r.kernels.size() == 2);
  INFO(r.kernels[0] << r.kernels[1]);
  CHECK(r.kernels[0].find("rows(reduce 1 dims; row operands: in2 in3; kept-broadcast: in4 in5)") !=
        std::string::npos);
  CHECK(r.kernels[1].find("columns(reduce 1 leading dims; column operands: in4 in5 out0 out1; "
                          "kept-broadcast: in2 in3)") != std::string::npos);
}

TEST_CASE("nothing to do: a graph without reductions keeps its partition", "[rows]") {
  Result r = Fuse(R"(graph(%a0: f32[4,8]{8,1}@cuda) {
  %0 = aten::relu.default(%a0) -> f32[4,8]{8,1}@cuda
  return (%0)
})");
  CHECK_FALSE(r.changed);
  CHECK(r.partition == "fused %0 -> %0\n");
}

TEST_CASE("softmax and log_softmax backward are row kernels", "[rows]") {
  Result r = Fuse(
      R"(graph(%a0: bf16[16,1000]{1000,1}@cuda, %a1: bf16[16,1000]{1000,1}@cuda, %a2: f32[16,1000]{1000,1}@cuda, %a3: f32[16,1000]{1000,1}@cuda) {
  %0 = aten::_softmax_backward_data.default(%a0, %a1, -1, bf16) -> bf16[16,1000]{1000,1}@cuda
  %1 = aten::_log_softmax_backward_data.default(%a2, %a3, 1, f32) -> f32[16,1000]{1000,1}@cuda
  return (%0, %1)
})");
  CHECK(r.partition == "fused(rows, reduce 1) %0 -> %0\nfused(rows, reduce 1) %1 -> %1\n");
}

TEST_CASE("rows longer than the register budget stay extern", "[rows]") {
  Result r = Fuse(R"(graph(%a0: f32[2,65536]{65536,1}@cuda) {
  %0 = aten::amax.default(%a0, [1]) -> f32[2]{1}@cuda
  return (%0)
})");
  CHECK(r.partition == "extern %0 aten::amax.default\n");
}

TEST_CASE("a reduction of a constant (fill, *_like) keeps the constant in its own kernel",
          "[rows]") {
  // Found by tests/fuzz/request_fuzzer: the kernel IR cannot reduce a row-level value, and a
  // fill.Scalar member is one; fused, the kernel failed verification (INTERNAL).
  for (const char* dim : {"[0]", "[-1]"}) {
    const std::string text = std::string(R"(graph(%a0: f32[64,32]{32,1}@cuda) {
  %0 = aten::fill.Scalar(%a0, 2.0) -> f32[64,32]{32,1}@cuda
  %1 = aten::sum.dim_IntList(%0, )") +
                             dim + R"() -> )" + (dim[1] == '0' ? "f32[32]{1}" : "f32[64]{1}") +
                             R"(@cuda
  return (%1)
})";
    INFO(text);
    Result r = Fuse(text.c_str());
    CHECK(r.partition == std::string("fused %0 -> %0\nfused(") +
                             (dim[1] == '0' ? "columns" : "rows") + ", reduce 1) %1 -> %1\n");
  }
}

}  // namespace
}  // namespace tccd::codegen

namespace tccd::codegen {
namespace {

TEST_CASE("a prologue of broadcast operands that vary along the row joins the row kernel",
          "[rows]") {
  // Cross-entropy's backward after NllLossBackwardToPointwise: eq(arange [C], target [N,1]) reads
  // no full-size tensor, yet varies along each row (the class index), so the log_softmax
  // backward may reduce it in the same kernel (the request fuzzer's "reduces a constant" rule
  // must not keep it out); a fill, constant along the row, still stays out.
  Result r = Fuse(
      R"(graph(%a0: i64[50]{1}@cuda, %a1: i64[8,1]{1,1}@cuda, %a2: f32[]{}@cuda, %a3: f32[8,50]{50,1}@cuda) {
  %0 = aten::eq.Tensor(%a0, %a1) -> b8[8,50]{50,1}@cuda
  %1 = aten::mul.Tensor(%0, %a2) -> f32[8,50]{50,1}@cuda
  %2 = aten::neg.default(%1) -> f32[8,50]{50,1}@cuda
  %3 = aten::_log_softmax_backward_data.default(%2, %a3, 1, f32) -> f32[8,50]{50,1}@cuda
  return (%3)
})");
  CHECK(r.changed);
  CHECK(r.partition == "fused(rows, reduce 1) %0 %1 %2 %3 -> %3\n");
}

}  // namespace
}  // namespace tccd::codegen

namespace tccd::codegen {
namespace {

// Attention's backward after CastsBeforeViews: the cast of the saved probabilities %a0 for the dV
// matmul reads only what the softmax backward reads.
constexpr char kSiblingInputs[] =
    "graph(%a0: f32[2,3,4,4]{48,16,4,1}@cuda, %a1: bf16[2,3,4,4]{48,16,4,1}@cuda, "
    "%a2: bf16[6,4,2]{8,2,1}@cuda) {\n"
    "  %0 = aten::_to_copy.default(%a0, dtype=bf16) -> bf16[2,3,4,4]{48,16,4,1}@cuda\n";

TEST_CASE("a cast of the row kernel's input for a matmul is one more output of the row kernel",
          "[rows]") {
  Result r = Fuse((std::string(kSiblingInputs) +
                   R"(  %1 = aten::view.default(%0, [6, 4, 4]) -> bf16[6,4,4]{16,4,1}@cuda
  %2 = aten::transpose.int(%1, 1, 2) -> bf16[6,4,4]{16,1,4}@cuda
  %3 = aten::bmm.default(%2, %a2) -> bf16[6,4,2]{8,2,1}@cuda
  %4 = aten::_to_copy.default(%a1, dtype=f32) -> f32[2,3,4,4]{48,16,4,1}@cuda
  %5 = aten::_softmax_backward_data.default(%4, %a0, -1, f32) -> f32[2,3,4,4]{48,16,4,1}@cuda
  %6 = aten::_to_copy.default(%5, dtype=bf16) -> bf16[2,3,4,4]{48,16,4,1}@cuda
  return (%3, %6)
})")
                      .c_str());
  CHECK(r.changed);
  CHECK(r.partition ==
        "fused(rows, reduce 1) %0 %4 %5 %6 -> %0 %6\nextern %1 aten::view.default\n"
        "extern %2 aten::transpose.int\nextern %3 aten::bmm.default\n");
}

TEST_CASE("a sibling whose value feeds another kernel stays a kernel of its own", "[rows]") {
  // %0 feeds the pointwise %5 (another shape): it may be that kernel's prologue, so the row
  // kernel leaves it.
  std::string inputs = kSiblingInputs;
  inputs.replace(inputs.find(") {"), 3, ", %a3: bf16[5,1,1,1,1]{1,1,1,1,1}@cuda) {");
  Result r = Fuse(
      (inputs +
       R"(  %1 = aten::_softmax_backward_data.default(%a1, %a0, -1, bf16) -> bf16[2,3,4,4]{48,16,4,1}@cuda
  %2 = aten::view.default(%0, [6, 4, 4]) -> bf16[6,4,4]{16,4,1}@cuda
  %3 = aten::bmm.default(%2, %a2) -> bf16[6,4,2]{8,2,1}@cuda
  %4 = aten::view.default(%3, [2, 3, 4, 2]) -> bf16[2,3,4,2]{24,8,2,1}@cuda
  %5 = aten::mul.Tensor(%0, %a3) -> bf16[5,2,3,4,4]{96,48,16,4,1}@cuda
  return (%1, %4, %5)
})")
          .c_str());
  CHECK(r.changed);
  CHECK(r.partition.find("fused(rows, reduce 1) %1 -> %1\n") != std::string::npos);
}

}  // namespace
}  // namespace tccd::codegen

namespace tccd::codegen {
namespace {

// A mean cross-entropy's tail as nll-loss-forward-to-rows leaves it: the per-row losses and the
// targets' mask come from the loss rows (here graph inputs); their two sums and the quotient.
constexpr const char* kLossTail = R"(graph(%a0: f32[1024]{1}@cuda, %a1: i64[1024]{1}@cuda) {
  %0 = aten::sum.dim_IntList(%a0, [0]) -> f32[]{}@cuda
  %1 = aten::ne.Scalar(%a1, -100) -> b8[1024]{1}@cuda
  %2 = aten::_to_copy.default(%1, dtype=f32) -> f32[1024]{1}@cuda
  %3 = aten::sum.dim_IntList(%2, [0]) -> f32[]{}@cuda
  %4 = aten::neg.default(%0) -> f32[]{}@cuda
  %5 = aten::div.Tensor(%4, %3) -> f32[]{}@cuda
  return (%5)
})";

TEST_CASE("a loss's two full sums and their quotient are one row kernel", "[rows]") {
  Result r = Fuse(kLossTail);
  CHECK(r.partition == "fused(rows, reduce 1) %0 %1 %2 %3 %4 %5 -> %5\n");
  REQUIRE(r.kernels.size() == 1);
  CHECK(r.kernels[0] == R"(pointwise @k0[1024](in0: f32, in1: i64) -> (out0: f32) rows(reduce 1 dims; row operands: out0; kept-broadcast: in0 in1) {
  // fused: aten::sum.dim_IntList, aten::ne.Scalar, aten::_to_copy.default, aten::sum.dim_IntList, aten::neg.default, aten::div.Tensor
  %0 = load.f32 in0
  %1 = load.i64 in1
  %2 = reduce_sum.f32 %0
  %3 = constant.i64 -100
  %4 = ne.b8 %1, %3
  %5 = cast.f32 %4
  %6 = reduce_sum.f32 %5
  %7 = neg.f32 %2
  %8 = div.f32 %7, %6
  store.f32 out0, %8
}
)");
}

TEST_CASE("full-reduction siblings off: one kernel per sum, one for the quotient", "[rows]") {
  FusionOptions options;
  options.merge_full_reduction_siblings = false;
  Result r = Fuse(kLossTail, options);
  CHECK(r.partition ==
        "fused(rows, reduce 1) %0 -> %0\nfused(rows, reduce 1) %1 %2 %3 -> %3\nfused %4 %5 -> %5\n");
}

TEST_CASE("row reductions over a batch of rows are not merged as siblings", "[rows]") {
  Result r = Fuse(R"(graph(%a0: f32[8,64]{64,1}@cuda, %a1: f32[8,64]{64,1}@cuda) {
  %0 = aten::sum.dim_IntList(%a0, [1]) -> f32[8]{1}@cuda
  %1 = aten::sum.dim_IntList(%a1, [1]) -> f32[8]{1}@cuda
  %2 = aten::div.Tensor(%0, %1) -> f32[8]{1}@cuda
  return (%2)
})");
  // (Nor does their quotient join either: it reads both.)
  CHECK(r.partition ==
        "fused(rows, reduce 1) %0 -> %0\nfused(rows, reduce 1) %1 -> %1\nfused %2 -> %2\n");
}

// Row gathers (FusionOptions::row_gathers): the LMs' token embedding feeding the first RMS norm.
constexpr char kEmbeddingRmsNorm[] =
    R"(graph(%a0: i64[2,8]{8,1}@cuda, %a1: f32[100,64]{64,1}@cuda, %a2: f32[64]{1}@cuda) {
  %0 = aten::embedding.default(%a1, %a0) -> f32[2,8,64]{512,64,1}@cuda
  %1 = aten::pow.Tensor_Scalar(%0, 2) -> f32[2,8,64]{512,64,1}@cuda
  %2 = aten::mean.dim(%1, [-1], true) -> f32[2,8,1]{8,1,1}@cuda
  %3 = aten::add.Tensor(%2, 1e-06) -> f32[2,8,1]{8,1,1}@cuda
  %4 = aten::rsqrt.default(%3) -> f32[2,8,1]{8,1,1}@cuda
  %5 = aten::mul.Tensor(%0, %4) -> f32[2,8,64]{512,64,1}@cuda
  %6 = aten::mul.Tensor(%a2, %5) -> f32[2,8,64]{512,64,1}@cuda
  return (%6, %0)
})";

TEST_CASE("an embedding feeding an RMS norm is gathered inside the norm's row kernel",
          "[rows][row-gathers]") {
  FusionOptions options;
  options.row_gathers = true;
  Result r = Fuse(kEmbeddingRmsNorm, options);
  CHECK(r.partition == "fused(rows, reduce 1) %0 %1 %2 %3 %4 %5 %6 -> %0 %6\n");
  REQUIRE(r.kernels.size() == 1);
  const std::string& k = r.kernels[0];
  INFO(k);
  // The token id is gathered at the row's coordinates (dims 0 and 1: row-level), the weight's
  // row at the element's column (dim 2); both are gather operands (row operands: not streamed).
  CHECK(k.find("index.i64 dim0") != std::string::npos);
  CHECK(k.find("index.i64 dim2") != std::string::npos);
  CHECK(k.find("gather.i64 in1, %3, %1, %2") != std::string::npos);
  CHECK(k.find("gather.f32 in0, %9, %4, %10") != std::string::npos);
  CHECK(k.find("row operands: in0 in1") != std::string::npos);
  CHECK(k.find("reduce_sum.f32") != std::string::npos);
}

TEST_CASE("without row gathers the embedding stays a kernel of its own", "[rows][row-gathers]") {
  Result r = Fuse(kEmbeddingRmsNorm);  // FusionOptions' default: off (pipeline.cc turns it on)
  // The embedding's kernel also writes the square the norm sums (as before this option).
  CHECK(r.partition ==
        "fused %0 %1 -> %0 %1\n"
        "fused(rows, reduce 1) %2 %3 %4 %5 %6 -> %6\n");
}

TEST_CASE("an embedding whose ids a member computes stays out of the row kernel",
          "[rows][row-gathers]") {
  FusionOptions options;
  options.row_gathers = true;
  // The ids are computed (%0): a gather operand must be a kernel input, so %0 stays in a
  // kernel of its own and the row kernel gathers what it wrote.
  Result r = Fuse(
      R"(graph(%a0: i64[2,8]{8,1}@cuda, %a1: f32[100,64]{64,1}@cuda) {
  %0 = aten::add.Tensor(%a0, 1) -> i64[2,8]{8,1}@cuda
  %1 = aten::embedding.default(%a1, %0) -> f32[2,8,64]{512,64,1}@cuda
  %2 = aten::amax.default(%1, [-1], true) -> f32[2,8,1]{8,1,1}@cuda
  return (%2)
})",
      options);
  CHECK(r.partition == "fused %0 -> %0\nfused(rows, reduce 1) %1 %2 -> %2\n");
}

TEST_CASE("a gather into a column reduction stays in its pointwise kernel", "[columns][row-gathers]") {
  FusionOptions options;
  options.row_gathers = true;
  Result r = Fuse(
      R"(graph(%a0: i64[2,8]{8,1}@cuda, %a1: f32[100,64]{64,1}@cuda) {
  %0 = aten::embedding.default(%a1, %a0) -> f32[2,8,64]{512,64,1}@cuda
  %1 = aten::sum.dim_IntList(%0, [0, 1], false) -> f32[64]{1}@cuda
  return (%1)
})",
      options);
  CHECK(r.partition.find("fused %0 -> %0\n") != std::string::npos);
}

}  // namespace
}  // namespace tccd::codegen
