// EmitTileKernel (see cuda_tile_emitter.h): a plain pointwise body evaluated over 2-D tiles of
// (read_dim x write_dim) points, its stores staged through shared memory.
//
// One block per tile. Phase 1 walks the tile with adjacent lanes along read_dim, the inputs'
// contiguous dim, so every warp's loads of an input row are one contiguous span; it evaluates the
// body (Point, shared with the pointwise entries, so the numerics are identical) and writes the
// values each output stores into that output's shared tile. Phase 2 walks the tile with adjacent
// lanes along write_dim, the outputs' contiguous dim, and copies the shared tiles to the outputs,
// again one contiguous span per warp row. The dtype cast, and any prologue or epilogue, happen in
// phase 1's Point, so a cast through a transposed view is one pass.
//
// Shared tiles are [write-dim point][read-dim point] of the output's storage type; their rows are
// padded so that phase 2, which reads a column (32 rows, one element each), hits 32 distinct
// banks: a row of 33 words for 4-byte types, 34 halfwords (17 words: odd) for 2-byte ones, 36
// bytes (9 words) for 1-byte ones; 8-byte types take 33 elements (a 2-way conflict, for a dtype
// that transposes rarely).
//
// The layout is compile-time constants (TileTranspose::strides): offsets are sums of coordinate
// times literal stride; the block's coordinates in the untiled dims are decomposed once.
#include "codegen/cuda/cuda_tile_emitter.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "codegen/cuda/cuda_backend.h"
#include "codegen/cuda/cuda_emitter.h"

namespace tccd::codegen {
namespace {

using ir::DType;

// Elements of a shared tile's row (see the top of this file).
int PaddedRow(DType d) {
  const int bytes = ir::DTypeBytes(d);
  return bytes >= 4 ? kCudaTileDim + 1 : kCudaTileDim + 4 / bytes;
}

// "c<d> * <stride>" terms for dims `dims` of operand o, or "" when all strides are 0.
std::string OffsetTerms(const PointwiseKernel& k, int o, const std::vector<int>& dims,
                        const std::vector<std::string>& coord) {
  const int rank = static_cast<int>(k.shape.size());
  std::string out;
  for (size_t j = 0; j < dims.size(); ++j) {
    const int64_t s = k.tile.strides[static_cast<size_t>(o) * rank + dims[j]];
    if (s == 0) continue;
    absl::StrAppend(&out, out.empty() ? "" : " + ", "static_cast<long long>(", coord[j], ")",
                    s == 1 ? "" : absl::StrCat(" * ", s, "LL"));
  }
  return out;
}

}  // namespace

CudaTileGeometry TileGeometryOf(const PointwiseKernel& kernel) {
  CudaTileGeometry geo;
  const int rank = static_cast<int>(kernel.shape.size());
  geo.tiles_read = (kernel.shape[kernel.tile.read_dim] + kCudaTileDim - 1) / kCudaTileDim;
  geo.tiles_write = (kernel.shape[kernel.tile.write_dim] + kCudaTileDim - 1) / kCudaTileDim;
  geo.outer = 1;
  for (int d = 0; d < rank; ++d)
    if (d != kernel.tile.read_dim && d != kernel.tile.write_dim) geo.outer *= kernel.shape[d];
  geo.grid = geo.tiles_read * geo.tiles_write * geo.outer;
  geo.param_bytes = 8 * kernel.num_operands() * (1 + rank);
  return geo;
}

absl::Status EmitTileKernel(const PointwiseKernel& k, std::string& out) {
  const int n_in = static_cast<int>(k.input_dtypes.size());
  const int num_operands = k.num_operands();
  const int rank = static_cast<int>(k.shape.size());
  const int a_dim = k.tile.read_dim, b_dim = k.tile.write_dim;
  const int64_t size_a = k.shape[a_dim], size_b = k.shape[b_dim];
  const CudaTileGeometry geo = TileGeometryOf(k);
  const std::string ns = "tccd_kernel_" + k.name;
  constexpr int kRows = kCudaBlockSize / kCudaTileDim;
  constexpr int kPointsPerThread = kCudaTileDim / kRows;

  absl::StrAppend(&out, "\n// ", std::string(76, '-'), "\n", CudaIrComment(k));
  absl::StrAppend(&out, "namespace ", ns, " {\n\n");
  // The strided parameter block (cuda_backend.h), so that the launchers need nothing new; the
  // strides in it are the declared ones, which the code has as constants.
  absl::StrAppend(&out, "struct StridedParams {\n  char* ptr[", num_operands, "];\n");
  if (rank > 0) absl::StrAppend(&out, "  long long stride[", num_operands, "][", rank, "];\n");
  absl::StrAppend(&out, "};\n");
  absl::StrAppend(&out, "static_assert(sizeof(StridedParams) == ", geo.param_bytes,
                  ", \"parameter layout\");\n");
  absl::StrAppend(&out, "static_assert(sizeof(StridedParams) <= ", kCudaMaxParamBytes,
                  ", \"kernel parameters exceed 4 KiB\");\n\n");
  RETURN_IF_ERROR(CudaEmitPoint(k, out));
  absl::StrAppend(&out, "}  // namespace ", ns, "\n\n");

  absl::StrAppend(&out, "extern \"C\" __global__ void __launch_bounds__(", kCudaBlockSize, ")\n",
                  k.name, "_tile(const ", ns, "::StridedParams p) {\n");
  if (geo.grid == 0) {
    absl::StrAppend(&out, "  // numel is 0: nothing to do (the grid has 0 blocks).\n}\n\n");
    return absl::OkStatus();
  }
  absl::StrAppend(&out, "  using namespace ", ns, ";\n");
  absl::StrAppend(&out,
                  "  // The values each output stores, [write-dim point][read-dim point], rows "
                  "padded against bank conflicts.\n");
  for (int o = n_in; o < num_operands; ++o) {
    const DType d = k.operand_dtype(o);
    absl::StrAppend(&out, "  __shared__ ", CudaMemType(d), " tile", o - n_in, "[", kCudaTileDim,
                    "][", PaddedRow(d), "];\n");
  }
  // The block's tile: read-dim tile fastest, then write-dim tile, then the other dims, innermost
  // first (neighbouring blocks share the rows of both sides in L2).
  absl::StrAppend(&out, "  unsigned int block = blockIdx.x;\n");
  std::vector<int> outer_dims;
  std::vector<std::string> outer_coords;
  for (int d = 0; d < rank; ++d)
    if (d != a_dim && d != b_dim && k.shape[d] > 1) outer_dims.push_back(d);
  // One tile coordinate: "const unsigned int t = block % n; block /= n;" (0 when n is 1; no
  // division after the last coordinate).
  auto coordinate = [&](const std::string& name, int64_t n, bool last) {
    if (n == 1) {
      absl::StrAppend(&out, "  const unsigned int ", name, " = 0u;\n");
    } else if (last) {
      absl::StrAppend(&out, "  const unsigned int ", name, " = block;\n");
    } else {
      absl::StrAppend(&out, "  const unsigned int ", name, " = block % ", n, "u;\n  block /= ", n,
                      "u;\n");
    }
  };
  coordinate("ta", geo.tiles_read, false);
  coordinate("tb", geo.tiles_write, outer_dims.empty());
  for (int j = static_cast<int>(outer_dims.size()) - 1; j >= 0; --j)
    coordinate(absl::StrCat("c", outer_dims[j]), k.shape[outer_dims[j]], j == 0);
  for (int d : outer_dims) outer_coords.push_back(absl::StrCat("c", d));
  for (int o = 0; o < num_operands; ++o) {
    const std::string terms = OffsetTerms(k, o, outer_dims, outer_coords);
    absl::StrAppend(&out, "  const long long base", o, " = ", terms.empty() ? "0LL" : terms, ";\n");
  }
  absl::StrAppend(&out, "  const unsigned int lane = threadIdx.x % ", kCudaTileDim,
                  "u, row = threadIdx.x / ", kCudaTileDim, "u;\n");
  // Bounds tests only where a tiled dim is not a multiple of the tile.
  auto in_bounds = [&](const std::string& a, const std::string& b) {
    std::string test;
    if (size_a % kCudaTileDim != 0) test = absl::StrCat(a, " < ", size_a, "u");
    if (size_b % kCudaTileDim != 0)
      absl::StrAppend(&test, test.empty() ? "" : " && ", b, " < ", size_b, "u");
    return test;
  };
  auto offset = [&](int o, const std::string& a, const std::string& b) {
    const std::string terms = OffsetTerms(k, o, {a_dim, b_dim}, {a, b});
    return absl::StrCat("base", o, terms.empty() ? "" : " + " + terms);
  };

  absl::StrAppend(&out, "  // Phase 1: lanes along the read dim (", a_dim,
                  "): coalesced loads; the body's stores go to the shared tiles.\n");
  absl::StrAppend(&out, "#pragma unroll\n  for (unsigned int j = 0; j < ", kPointsPerThread,
                  "u; ++j) {\n");
  absl::StrAppend(&out, "    const unsigned int la = lane, lb = row + ", kRows, "u * j;\n");
  absl::StrAppend(&out, "    const unsigned int a = ta * ", kCudaTileDim, "u + la, b = tb * ",
                  kCudaTileDim, "u + lb;\n");
  std::string test = in_bounds("a", "b");
  std::string indent = "    ";
  if (!test.empty()) {
    absl::StrAppend(&out, "    if (", test, ") {\n");
    indent = "      ";
  }
  absl::StrAppend(&out, indent, "Point(");
  for (int o = 0; o < num_operands; ++o) {
    absl::StrAppend(&out, o ? absl::StrCat(",\n", indent, "      ") : "");
    if (o < n_in) {
      absl::StrAppend(&out, "reinterpret_cast<const ", CudaMemType(k.operand_dtype(o)), "*>(p.ptr[",
                      o, "])[", offset(o, "a", "b"), "]");
    } else {
      absl::StrAppend(&out, "tile", o - n_in, "[lb][la]");
    }
  }
  absl::StrAppend(&out, ");\n");
  if (!test.empty()) absl::StrAppend(&out, "    }\n");
  absl::StrAppend(&out, "  }\n  __syncthreads();\n");

  absl::StrAppend(&out, "  // Phase 2: lanes along the write dim (", b_dim,
                  "): coalesced stores from the shared tiles.\n");
  absl::StrAppend(&out, "#pragma unroll\n  for (unsigned int j = 0; j < ", kPointsPerThread,
                  "u; ++j) {\n");
  absl::StrAppend(&out, "    const unsigned int lb = lane, la = row + ", kRows, "u * j;\n");
  absl::StrAppend(&out, "    const unsigned int a = ta * ", kCudaTileDim, "u + la, b = tb * ",
                  kCudaTileDim, "u + lb;\n");
  if (!test.empty()) absl::StrAppend(&out, "    if (", test, ") {\n");
  for (int o = n_in; o < num_operands; ++o) {
    absl::StrAppend(&out, indent, "reinterpret_cast<", CudaMemType(k.operand_dtype(o)), "*>(p.ptr[",
                    o, "])[", offset(o, "a", "b"), "] = tile", o - n_in, "[lb][la];\n");
  }
  if (!test.empty()) absl::StrAppend(&out, "    }\n");
  absl::StrAppend(&out, "  }\n}\n\n");
  return absl::OkStatus();
}

}  // namespace tccd::codegen
