// MatchGemms (see match_gemms.h).
#include "codegen/cuda_host/match_gemms.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "codegen/cuda_host/static_layout.h"

namespace tccd::codegen {
namespace {

using schedule::ExternOp;
using schedule::Step;

int RefOf(const ir::Arg& a) { return a.is_ref() ? a.ref().node : -1; }

// One matrix operand's column-major description for cuBLAS: the memory seen column-major is
// either the matrix's transpose (row-major storage: op N gives M^T) or the matrix itself.
struct MatrixLayout {
  bool row_major = true;  // storage is row-major with leading dimension ld
  int64_t ld = 0;
};

std::optional<MatrixLayout> LayoutOf(int64_t rows, int64_t cols, int64_t s0, int64_t s1) {
  if ((cols == 1 || s1 == 1)) {
    int64_t ld = rows == 1 ? std::max<int64_t>(cols, 1) : s0;
    if (ld >= std::max<int64_t>(cols, 1)) return MatrixLayout{true, ld};
  }
  if ((rows == 1 || s0 == 1)) {
    int64_t ld = cols == 1 ? std::max<int64_t>(rows, 1) : s1;
    if (ld >= std::max<int64_t>(rows, 1)) return MatrixLayout{false, ld};
  }
  return std::nullopt;
}

std::optional<int> CudaDataType(ir::DType dtype) {
  switch (dtype) {
    case ir::DType::kF32:
      return kCudaR32F;
    case ir::DType::kF16:
      return kCudaR16F;
    case ir::DType::kBF16:
      return kCudaR16BF;
    default:
      return std::nullopt;
  }
}

double NumberOf(const ir::Arg& a, double fallback) {
  if (const auto* i = std::get_if<int64_t>(&a.v)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&a.v)) return *d;
  return fallback;
}

// A matmul extern step as a gemm: operands (value ids) A, B, D[, bias] for the spec.
struct GemmMatch {
  GemmSpec spec;
  std::vector<int> operands;
};

constexpr int64_t kGemmAlign = 16;  // what cuBLASLt's heuristic assumes of every pointer

// Z = X @ Y (+ bias), X [.., M, K], Y [.., K, N], Z [.., M, N] row-major contiguous.
std::optional<GemmMatch> MatchGemm(const Step& step,
                                   const std::vector<std::optional<Meta>>& metas) {
  if (!step.is<ExternOp>() || step.outputs.size() != 1 || step.outputs[0] < 0) return std::nullopt;
  const ExternOp& call = step.as<ExternOp>();
  const std::string& target = call.target;
  int x = -1, y = -1, bias = -1;
  double alpha = 1.0, beta = 1.0;
  if (target == "aten::mm.default" || target == "aten::bmm.default") {
    if (call.args.size() != 2 || !call.kwargs.empty()) return std::nullopt;
    x = RefOf(call.args[0]);
    y = RefOf(call.args[1]);
  } else if (target == "aten::addmm.default") {
    if (call.args.size() < 3) return std::nullopt;
    bias = RefOf(call.args[0]);
    x = RefOf(call.args[1]);
    y = RefOf(call.args[2]);
    if (call.args.size() > 3) beta = NumberOf(call.args[3], 1.0);
    if (call.args.size() > 4) alpha = NumberOf(call.args[4], 1.0);
    for (const ir::NamedArg& kw : call.kwargs) {
      if (kw.name == "beta")
        beta = NumberOf(kw.value, 1.0);
      else if (kw.name == "alpha")
        alpha = NumberOf(kw.value, 1.0);
      else
        return std::nullopt;
    }
    if (beta != 1.0 || bias < 0) return std::nullopt;
  } else {
    return std::nullopt;
  }
  const int z = step.outputs[0];
  if (x < 0 || y < 0) return std::nullopt;
  const std::optional<Meta>&mx = metas[x], &my = metas[y], &mz = metas[z];
  if (!mx || !my || !mz) return std::nullopt;
  const bool batched = target == "aten::bmm.default";
  const int64_t rank = batched ? 3 : 2;
  if (mx->rank() != rank || my->rank() != rank || mz->rank() != rank) return std::nullopt;
  if (mx->dtype != my->dtype || mx->dtype != mz->dtype) return std::nullopt;
  std::optional<int> dtype = CudaDataType(mx->dtype);
  if (!dtype) return std::nullopt;
  const int64_t b = batched ? mx->sizes[0] : 1;
  const int64_t M = mx->sizes[rank - 2], K = mx->sizes[rank - 1], N = my->sizes[rank - 1];
  if (my->sizes[rank - 2] != K || mz->sizes[rank - 2] != M || mz->sizes[rank - 1] != N)
    return std::nullopt;
  if (batched && (my->sizes[0] != b || mz->sizes[0] != b)) return std::nullopt;
  if (M < 1 || N < 1 || K < 1 || b < 1) return std::nullopt;
  // The result: row-major contiguous (D = Z^T column-major, ld N).
  if (N > 1 && mz->strides[rank - 1] != 1) return std::nullopt;
  if (M > 1 && mz->strides[rank - 2] != N) return std::nullopt;
  if (batched && b > 1 && mz->strides[0] != M * N) return std::nullopt;
  std::optional<MatrixLayout> ly = LayoutOf(K, N, my->strides[rank - 2], my->strides[rank - 1]);
  std::optional<MatrixLayout> lx = LayoutOf(M, K, mx->strides[rank - 2], mx->strides[rank - 1]);
  if (!ly || !lx) return std::nullopt;

  GemmMatch match;
  GemmSpec& g = match.spec;
  g.m = N;
  g.n = M;
  g.k = K;
  // A = Y: row-major storage is Y^T column-major (N x K, op N); column-major storage is Y (op T).
  g.trans_a = ly->row_major ? 0 : 1;
  g.lda = ly->ld;
  // B = X: row-major storage is X^T column-major (K x M, op N); column-major is X (op T).
  g.trans_b = lx->row_major ? 0 : 1;
  g.ldb = lx->ld;
  g.ldd = N;
  g.batch = b;
  if (batched) {
    g.stride_a = b > 1 ? my->strides[0] : 0;
    g.stride_b = b > 1 ? mx->strides[0] : 0;
    g.stride_d = M * N;
  }
  g.dtype = *dtype;
  g.alpha = static_cast<float>(alpha);
  match.operands = {y, x, z};
  if (bias >= 0) {
    const std::optional<Meta>& mb = metas[bias];
    if (!mb || mb->dtype != mx->dtype || mb->rank() != 1 || mb->sizes[0] != N ||
        (N > 1 && mb->strides[0] != 1))
      return std::nullopt;
    g.epilogue = kCublasEpilogueBias;
    match.operands.push_back(bias);
  }
  for (int v : match.operands) {
    if ((metas[v]->offset * metas[v]->elem_bytes) % kGemmAlign != 0) return std::nullopt;
  }
  g.name = absl::StrCat(target.substr(6), "_", M, "x", K, "x", N);
  return match;
}

// GemmSpec's fields in GemmParams order; alpha is the one float.
struct IntField {
  const char* name;
  int64_t GemmSpec::*field64;
  int GemmSpec::*field32;
};
constexpr IntField kIntFields[] = {
    {"m", &GemmSpec::m, nullptr},
    {"n", &GemmSpec::n, nullptr},
    {"k", &GemmSpec::k, nullptr},
    {"lda", &GemmSpec::lda, nullptr},
    {"ldb", &GemmSpec::ldb, nullptr},
    {"ldd", &GemmSpec::ldd, nullptr},
    {"batch", &GemmSpec::batch, nullptr},
    {"stride_a", &GemmSpec::stride_a, nullptr},
    {"stride_b", &GemmSpec::stride_b, nullptr},
    {"stride_d", &GemmSpec::stride_d, nullptr},
    {"trans_a", nullptr, &GemmSpec::trans_a},
    {"trans_b", nullptr, &GemmSpec::trans_b},
    {"dtype", nullptr, &GemmSpec::dtype},
    {"compute", nullptr, &GemmSpec::compute},
    {"epilogue", nullptr, &GemmSpec::epilogue},
};

}  // namespace

std::vector<std::pair<std::string, double>> GemmParams(const GemmSpec& spec) {
  std::vector<std::pair<std::string, double>> params;
  for (const IntField& f : kIntFields)
    params.push_back({f.name, f.field64 != nullptr ? static_cast<double>(spec.*f.field64)
                                                   : static_cast<double>(spec.*f.field32)});
  params.push_back({"alpha", static_cast<double>(spec.alpha)});
  return params;
}

absl::StatusOr<GemmSpec> GemmSpecFromParams(
    const std::string& name, const std::vector<std::pair<std::string, double>>& params) {
  GemmSpec spec;
  spec.name = name;
  if (params.size() != std::size(kIntFields) + 1)
    return absl::InternalError(absl::StrCat("gemm ", name, ": ", params.size(),
                                            " params, expected ", std::size(kIntFields) + 1));
  for (size_t i = 0; i < std::size(kIntFields); ++i) {
    const IntField& f = kIntFields[i];
    const auto& [key, value] = params[i];
    if (key != f.name || value != std::trunc(value))
      return absl::InternalError(absl::StrCat("gemm ", name, ": param ", i, " is ", key, "=", value,
                                              ", expected an integer ", f.name));
    if (f.field64 != nullptr) {
      spec.*f.field64 = static_cast<int64_t>(value);
    } else {
      spec.*f.field32 = static_cast<int>(value);
    }
  }
  if (params.back().first != "alpha")
    return absl::InternalError(absl::StrCat("gemm ", name, ": last param is not alpha"));
  spec.alpha = static_cast<float>(params.back().second);
  return spec;
}

absl::StatusOr<bool> MatchGemms::Run(schedule::Schedule& schedule) {
  std::vector<std::optional<Meta>> metas;
  for (const ir::TensorType& t : schedule.values) metas.push_back(StaticMeta(t));
  bool changed = false;
  for (Step& step : schedule.steps) {
    std::optional<GemmMatch> match = MatchGemm(step, metas);
    if (!match) continue;
    schedule::LibraryCall call{.function = kCublasLtGemm,
                               .name = match->spec.name,
                               .operands = match->operands,
                               .params = GemmParams(match->spec),
                               .op = std::move(step.as<ExternOp>())};
    step.op = std::move(call);
    changed = true;
  }
  return changed;
}

}  // namespace tccd::codegen
