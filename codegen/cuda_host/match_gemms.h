// Matmuls as cuBLASLt gemms: every extern aten::mm / addmm (1-D bias, beta 1: cuBLASLt's bias
// epilogue; its RELU_BIAS epilogue measured slower than bias + a relu kernel on the H100) / bmm
// whose operands are f32/f16/bf16 matrices with a unit stride in one dim, 16-byte aligned, and
// whose result is row-major contiguous becomes a library call "cublaslt_gemm" (the GemmSpec as
// its params, operands A, B, D[, bias]), keeping the op. SegmentBuilder runs such calls inside
// segments; one no segment takes is serialised as its op again.
//
//   %4 = extern aten::mm.default(%0, %1)  ->
//   %4 = library cublaslt_gemm(%1, %0, %4) name="mm.default_8x16x4" params={m=4, n=8, ...} of
//        aten::mm.default(%0, %1)
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/cuda_host/host_program.h"
#include "codegen/schedule/schedule_pass.h"

namespace tccd::codegen {

inline constexpr char kCublasLtGemm[] = "cublaslt_gemm";

class MatchGemms : public schedule::SchedulePass {
 public:
  std::string_view name() const override { return "match-gemms"; }
  absl::StatusOr<bool> Run(schedule::Schedule& schedule) override;
};

// A gemm's parameters as a library call holds them (every GemmSpec field but the name), and
// back. INTERNAL when a parameter is missing, unknown or not what the field holds.
std::vector<std::pair<std::string, double>> GemmParams(const GemmSpec& spec);
absl::StatusOr<GemmSpec> GemmSpecFromParams(
    const std::string& name, const std::vector<std::pair<std::string, double>>& params);

}  // namespace tccd::codegen
