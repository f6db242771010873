// Index-aware pointwise kernels (kIndex/kGather; "Index-aware kernels" in
// kernel/pointwise_kernel.h) -> CUDA C.
//
// Same entry points and parameter layout as every pointwise kernel (cuda_backend.h): <name>_contig
// takes the operand pointers, <name>_strided pointers and a [operands x rank] stride table. Both
// walk the points with a grid-stride loop, one element per thread and iteration (no vectors: a
// gather reads wherever its coordinates point), decompose the flat index into coordinates and run
// the body with them. Loads and stores use each operand's iteration-space offset; a gather
// computes its own address from its coordinates and its stride row. The contig entry runs only
// when every stride row is the row-major strides of the kernel's shape (the runtime checks it),
// so there the stride table is that constant.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/cuda/cuda_backend.h"
#include "codegen/cuda/cuda_emitter.h"
#include "codegen/cuda/cuda_index_emitter.h"

namespace tccd::codegen {
namespace {

using ir::DType;

std::string V(int i) { return absl::StrCat("v", i); }

// Philox4x32-10 (Salmon et al., Random123), first output word as a uniform float in [0, 1):
// emitted into the namespace of kernels that draw random numbers (kRandom).
constexpr char kPhilox[] = R"(__device__ __forceinline__ float PhiloxUniform(unsigned long long seed,
                                                unsigned long long offset,
                                                unsigned long long flat) {
  unsigned int c0 = static_cast<unsigned int>(flat), c1 = static_cast<unsigned int>(flat >> 32);
  unsigned int c2 = static_cast<unsigned int>(offset), c3 = static_cast<unsigned int>(offset >> 32);
  unsigned int k0 = static_cast<unsigned int>(seed), k1 = static_cast<unsigned int>(seed >> 32);
#pragma unroll
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    const unsigned int hi0 = __umulhi(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
    const unsigned int hi1 = __umulhi(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
    const unsigned int n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
  }
  return static_cast<float>(c0 >> 8) * 0x1.0p-24f;
}

)";

}  // namespace

absl::Status EmitIndexKernel(const PointwiseKernel& k, std::string& out) {
  const int n_in = static_cast<int>(k.input_dtypes.size());
  const int num_operands = k.num_operands();
  const int rank = static_cast<int>(k.shape.size());
  if (rank == 0) return absl::UnimplementedError("index-aware kernel '" + k.name + "' has rank 0");
  const CudaKernelGeometry geo = GeometryOf(k);
  const std::string ns = "tccd_kernel_" + k.name;
  const char* index_type = geo.index64 ? "unsigned long long" : "unsigned int";
  const std::string numel = absl::StrCat(geo.numel, geo.index64 ? "ull" : "u");

  absl::StrAppend(&out, "\n// ", std::string(76, '-'), "\n", CudaIrComment(k));
  absl::StrAppend(&out, "namespace ", ns, " {\n\n", "typedef ", index_type, " Index;\n\n");
  absl::StrAppend(&out, "struct ContigParams {\n  char* ptr[", num_operands, "];\n};\n");
  absl::StrAppend(&out, "struct StridedParams {\n  char* ptr[", num_operands, "];\n  long long stride[",
                  num_operands, "][", rank, "];\n};\n");
  absl::StrAppend(&out, "static_assert(sizeof(ContigParams) == ", geo.contig_param_bytes,
                  ", \"parameter layout\");\n");
  absl::StrAppend(&out, "static_assert(sizeof(StridedParams) == ", geo.strided_param_bytes,
                  ", \"parameter layout\");\n\n");

  bool random = false;
  for (const PwInstr& in : k.body) random |= in.op == PwOp::kRandom;
  if (random) absl::StrAppend(&out, kPhilox);
  // Point(): the body at coordinates c (flat: their row-major index), with element offsets off
  // (loads and stores) and the stride table st (gathers).
  absl::StrAppend(&out, "__device__ __forceinline__ void Point(char* const* ptr, const long long (*st)[", rank,
                  "], const long long* c, const long long* off, unsigned long long flat) {\n");
  for (size_t i = 0; i < k.body.size(); ++i) {
    const PwInstr& in = k.body[i];
    const DType d = in.dtype;
    std::string expr;
    if (in.op == PwOp::kLoad || in.op == PwOp::kGather) {
      std::string address;
      if (in.op == PwOp::kLoad) {
        address = absl::StrCat("off[", in.operand, "]");
      } else {
        for (size_t a = 1; a < in.args.size(); ++a)
          absl::StrAppend(&address, a > 1 ? " + " : "", V(in.args[a]), " * st[", in.operand, "][", a - 1, "]");
        if (address.empty()) address = "0";
      }
      expr = absl::StrCat("reinterpret_cast<const ", CudaMemType(d), "*>(ptr[", in.operand, "])[", address, "]");
      if (d == DType::kBool) expr = absl::StrCat("(", expr, " != 0)");
      if (in.op == PwOp::kGather) {
        expr = absl::StrCat(V(in.args[0]), " ? ", expr, " : ",
                            d == DType::kBool ? "false" : absl::StrCat("static_cast<", CudaRegType(d), ">(0)"));
      }
    } else if (in.op == PwOp::kIndex) {
      expr = absl::StrCat("c[", in.operand, "]");
    } else if (in.op == PwOp::kRandom) {
      expr = absl::StrCat("PhiloxUniform(static_cast<unsigned long long>(", V(in.args[0]),
                          "), static_cast<unsigned long long>(", V(in.args[1]), "), flat)");
    } else if (in.op == PwOp::kStore) {
      const int o = n_in + in.operand;
      absl::StrAppend(&out, "  reinterpret_cast<", CudaMemType(d), "*>(ptr[", o, "])[off[", o, "]] = ",
                      d == DType::kBool ? absl::StrCat("(unsigned char)", V(in.args[0])) : V(in.args[0]), ";\n");
      continue;
    } else {
      expr = CudaInstrExpr(k, i, [](int v) { return V(v); });
    }
    if (expr.empty()) {
      return absl::InternalError(absl::StrCat("no CUDA lowering for ", PwOpName(in.op), " at %", i,
                                              " in kernel '", k.name, "'"));
    }
    absl::StrAppend(&out, "  const ", CudaRegType(d), " ", V(static_cast<int>(i)), " = ", expr, ";\n");
  }
  absl::StrAppend(&out, "}\n\n");

  // Coordinates of flat index i (row-major), into c[].
  auto decompose = [&](std::string& s) {
    absl::StrAppend(&s, "    long long c[", rank, "];\n    Index rest = i;\n");
    for (int d = rank - 1; d >= 0; --d) {
      if (d == 0) {
        absl::StrAppend(&s, "    c[0] = static_cast<long long>(rest);\n");
      } else {
        const std::string size = absl::StrCat(k.shape[d], geo.index64 ? "ull" : "u");
        absl::StrAppend(&s, "    c[", d, "] = static_cast<long long>(rest % ", size, ");\n    rest /= ", size, ";\n");
      }
    }
  };
  // Row-major strides of the shape: the contig entry's stride table.
  std::string row_major = "{";
  {
    std::vector<int64_t> s(rank);
    int64_t acc = 1;
    for (int d = rank - 1; d >= 0; --d) {
      s[d] = k.shape[d] == 1 ? 0 : acc;
      acc *= k.shape[d];
    }
    std::string row = "{";
    for (int d = 0; d < rank; ++d) absl::StrAppend(&row, d ? ", " : "", s[d], "ll");
    row += "}";
    for (int o = 0; o < num_operands; ++o) absl::StrAppend(&row_major, o ? ", " : "", row);
    row_major += "}";
  }
  absl::StrAppend(&out, "}  // namespace ", ns, "\n\n");
  for (const bool strided : {false, true}) {
    if (strided ? !k.has_strided_entry() : !k.has_dense_entry()) continue;
    absl::StrAppend(&out, "extern \"C\" __global__ void __launch_bounds__(", kCudaBlockSize, ")\n", k.name,
                    strided ? "_strided" : "_contig", "(const ", ns, "::", strided ? "StridedParams" : "ContigParams",
                    " p) {\n");
    if (geo.numel == 0) {
      absl::StrAppend(&out, "  // numel is 0: nothing to do (GridSize gives 0 blocks).\n}\n\n");
      continue;
    }
    absl::StrAppend(&out, "  using namespace ", ns, ";\n");
    if (!strided) absl::StrAppend(&out, "  const long long st[", num_operands, "][", rank, "] = ", row_major, ";\n");
    absl::StrAppend(&out, "  const Index num_threads = static_cast<Index>(gridDim.x) * blockDim.x;\n",
                    "  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < ", numel,
                    "; i += num_threads) {\n");
    decompose(out);
    absl::StrAppend(&out, "    long long off[", num_operands, "];\n");
    if (strided) {
      absl::StrAppend(&out, "#pragma unroll\n    for (int o = 0; o < ", num_operands, "; ++o) {\n      off[o] = 0;\n",
                      "#pragma unroll\n      for (int d = 0; d < ", rank, "; ++d) off[o] += c[d] * p.stride[o][d];\n    }\n",
                      "    Point(p.ptr, p.stride, c, off, static_cast<unsigned long long>(i));\n");
    } else {
      absl::StrAppend(&out, "#pragma unroll\n    for (int o = 0; o < ", num_operands,
                      "; ++o) off[o] = static_cast<long long>(i);\n",
                      "    Point(p.ptr, st, c, off, static_cast<unsigned long long>(i));\n");
    }
    absl::StrAppend(&out, "  }\n}\n\n");
  }
  return absl::OkStatus();
}

}  // namespace tccd::codegen
