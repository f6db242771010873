// The CUDA backend without a GPU: the generated source (shape of both entry points, vector
// widths, index widths, literals), NVRTC compiles to cubin/PTX for sm_80 and sm_90, errors as
// Status, determinism and concurrent compiles.
//
// Tests that need NVRTC skip with a warning where it is not installed; everything else runs
// everywhere.
#include "codegen/cuda/cuda_backend.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <cstdlib>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_join.h"
#include "codegen/cuda/cuda_depthwise_emitter.h"
#include "codegen/cuda/cuda_row_emitter.h"
#include "codegen/cuda/nvrtc_compiler.h"
#include "cuda_test_kernels.h"

namespace tccd::codegen::cuda_testing {
namespace {

// True when NVRTC loads; otherwise warns (once per test) so the skip is visible.
bool HaveNvrtc() {
  absl::StatusOr<std::string> version = CudaCompilerVersion();
  if (!version.ok()) WARN("skipped, no NVRTC: " << version.status().ToString());
  return version.ok();
}

std::string EmitOrDie(const std::vector<PointwiseKernel>& kernels) {
  absl::StatusOr<std::string> source = EmitCudaSource(kernels);
  INFO(source.status().ToString());
  REQUIRE(source.ok());
  return *source;
}

CudaModule CompileOrDie(const std::vector<PointwiseKernel>& kernels, CudaTarget target = {}) {
  absl::StatusOr<CudaModule> module = CompileCudaKernels(kernels, target);
  INFO(module.status().ToString());
  REQUIRE(module.ok());
  return *std::move(module);
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// How often `needle` occurs in `haystack`.
int Count(const std::string& haystack, const std::string& needle) {
  int n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + 1))
    ++n;
  return n;
}

// The text of one entry point's PTX body, from ".entry name(" to the next ".entry" or the end.
std::string PtxEntry(const std::string& ptx, const std::string& entry) {
  const size_t start = ptx.find(".visible .entry " + entry + "(");
  if (start == std::string::npos) return "";
  const size_t end = ptx.find(".visible .entry ", start + 1);
  return ptx.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// ELF header fields of a cubin (little-endian ELF64).
struct CubinHeader {
  bool elf64 = false;
  uint16_t machine = 0;
  uint32_t flags = 0;
};
CubinHeader ReadCubinHeader(const std::string& cubin) {
  CubinHeader h;
  if (cubin.size() < 64 || cubin.compare(0, 4,
                                         "\x7f"
                                         "ELF") != 0)
    return h;
  h.elf64 = cubin[4] == 2;
  std::memcpy(&h.machine, cubin.data() + 18, 2);
  std::memcpy(&h.flags, cubin.data() + 48, 4);
  return h;
}
constexpr uint16_t kEmCuda = 190;

// ---------------------------------------------------------------------------------------------
// Targets and launch geometry
// ---------------------------------------------------------------------------------------------

TEST_CASE("CudaTargetFromProto accepts compute capabilities 7.0 to 12.x", "[cuda_backend]") {
  for (auto [major, minor, key] :
       std::vector<std::tuple<int, int, std::string>>{{7, 0, "sm_70"},
                                                      {7, 5, "sm_75"},
                                                      {8, 0, "sm_80"},
                                                      {8, 6, "sm_86"},
                                                      {9, 0, "sm_90"},
                                                      {10, 0, "sm_100"},
                                                      {12, 1, "sm_121"}}) {
    absl::StatusOr<CudaTarget> target = CudaTargetFromProto(major, minor);
    REQUIRE(target.ok());
    CHECK(target->KeyString() == key);
  }
  for (auto [major, minor] :
       std::vector<std::pair<int, int>>{{6, 1}, {13, 0}, {0, 0}, {9, -1}, {9, 10}}) {
    absl::StatusOr<CudaTarget> target = CudaTargetFromProto(major, minor);
    INFO(major << "." << minor);
    REQUIRE(target.status().code() == absl::StatusCode::kInvalidArgument);
  }
  CHECK(CudaTarget{}.KeyString() == "sm_90");
}

TEST_CASE("GridSize gives every thread one vector, capped at one wave", "[cuda_backend]") {
  // 132 SMs (H100 SXM) with 8 resident blocks of 256 each.
  CHECK(GridSize(0, 4, 256, 132, 8) == 0);
  CHECK(GridSize(1, 4, 256, 132, 8) == 1);
  CHECK(GridSize(1024, 4, 256, 132, 8) == 1);
  CHECK(GridSize(1025, 4, 256, 132, 8) == 2);
  CHECK(GridSize(int64_t{1} << 20, 4, 256, 132, 8) == 1024);
  CHECK(GridSize(int64_t{1} << 28, 4, 256, 132, 8) == 132 * 8);
  CHECK(GridSize(int64_t{3} << 30, 1, 256, 132, 8) == 132 * 8);
  // Nonsense arguments do not divide by zero.
  CHECK(GridSize(100, 0, 0, 0, 0) == 1);
}

// ---------------------------------------------------------------------------------------------
// The generated source (no NVRTC needed)
// ---------------------------------------------------------------------------------------------

TEST_CASE("the source has both entry points, baked constants and the parameter layout",
          "[cuda_backend][source]") {
  const std::string src = EmitOrDie({FusedReluKernel("relu", {4, 37})});
  CHECK(
      Contains(src, "__launch_bounds__(256)\nrelu_contig(const tccd_kernel_relu::ContigParams p)"));
  CHECK(Contains(src,
                 "__launch_bounds__(256)\nrelu_strided(const tccd_kernel_relu::StridedParams p)"));
  CHECK(Contains(src, "struct ContigParams {\n  char* ptr[4];\n};"));
  CHECK(Contains(src, "struct StridedParams {\n  char* ptr[4];\n  long long stride[4][2];\n};"));
  CHECK(Contains(src, "static_assert(sizeof(ContigParams) == 32,"));
  CHECK(Contains(src, "static_assert(sizeof(StridedParams) == 96,"));
  CHECK(Contains(src, "static_assert(sizeof(StridedParams) <= 4096,"));
  CHECK(Contains(src, "typedef unsigned int Index;"));
  CHECK(Contains(src, "  constexpr Index kNumel = 148u;"));
  CHECK(Contains(src, "  constexpr int kVec = 4;"));
  CHECK(Contains(src, "  constexpr Index kNumVecs = 37u;"));
  // 148 is a multiple of 4: no tail.
  CHECK_FALSE(Contains(src, "kNumel % kVec elements"));
  // The strided decomposition uses the baked shape and the stride parameters.
  CHECK(Contains(src, "const Index c1 = rest % 37u;"));
  CHECK(Contains(src, "const Index c0 = rest;"));
  CHECK(Contains(src,
                 "static_cast<long long>(c0) * p.stride[2][0] + "
                 "static_cast<long long>(c1) * p.stride[2][1]"));
  // The body: NaN-propagating maximum with the constant 0.
  CHECK(Contains(src, "const float v4 = v3 + v2;"));
  CHECK(Contains(src, "tccd_rt::maximum(v4, v5)"));
  CHECK(Contains(src, "const float v5 = 0.0f;"));
  // Self-contained.
  CHECK_FALSE(Contains(src, "#include"));
}

TEST_CASE("the vector width is 16 bytes of the largest operand", "[cuda_backend][source]") {
  auto vec_of = [](const PointwiseKernel& k) {
    const std::string src = EmitOrDie({k});
    const size_t at = src.find("constexpr int kVec = ");
    REQUIRE(at != std::string::npos);
    return std::stoi(src.substr(at + 21));
  };
  CHECK(vec_of(FusedReluKernel("f32", {100})) == 4);
  CHECK(vec_of(Bf16GeluKernel("bf16", {100})) == 8);
  CHECK(vec_of(WhereCompareKernel("f32_and_bool", {100})) == 4);
  CHECK(vec_of(I64AddKernel("i64", {100})) == 2);
  CHECK(vec_of(MultiOutputKernel("f16_f32_i32", {100})) == 4);
  CHECK(vec_of(LogicAndHalfCastsKernel("everything", {100})) == 2);
  KernelBuilder bytes("bytes", {100});
  bytes.Output(bytes.Op(PwOp::kNot, DType::kBool, {bytes.Input(DType::kBool)}));
  CHECK(vec_of(bytes.kernel()) == 16);
}

TEST_CASE("a numel that is not a multiple of the vector width gets a tail",
          "[cuda_backend][source]") {
  const std::string src = EmitOrDie({FusedReluKernel("odd", {7, 3})});
  CHECK(Contains(src, "constexpr Index kNumVecs = 5u;"));
  CHECK(Contains(src, "if (tid < kNumel - kNumVecs * kVec) {"));
}

TEST_CASE("more than 2^31 elements use 64-bit indices", "[cuda_backend][source]") {
  const std::string big = EmitOrDie({I64AddKernel("big", {3, int64_t{1} << 30})});
  CHECK(Contains(big, "typedef unsigned long long Index;"));
  CHECK(Contains(big, "  constexpr Index kNumel = 3221225472ull;"));
  const std::string edge = EmitOrDie({I64AddKernel("edge", {std::numeric_limits<int32_t>::max()})});
  CHECK(Contains(edge, "typedef unsigned int Index;"));
}

TEST_CASE(
    "a column kernel's strided entry decomposes its row index over several leading dims, static "
    "or run-time, with the divisors parenthesised",
    "[cuda_backend][source][columns]") {
  // Three reduced dims, the middle one run-time in the second kernel (a symbolic graph's).
  // Static: main's text, (r / 1024) for the outermost dim. Run-time: every divisor that holds a
  // run-time size is one parenthesised product ((r / 32LL * p.size[1]) divided by 32 only and
  // multiplied after: an out-of-bounds row on the GPU, 2026-11-27).
  auto kernel = [](const std::string& name, std::vector<int64_t> shape) {
    PointwiseKernel k = ColumnSumKernel(name, std::move(shape));
    k.reduction.num_reduced_dims = 3;
    return k;
  };
  const std::string fixed = EmitOrDie({kernel("cols3", {4, 32, 32, 64})});
  CHECK(Contains(fixed, "static_cast<long long>((r % 32)) * p.stride[0][2]"));
  CHECK(Contains(fixed, "static_cast<long long>(((r / 32) % 32)) * p.stride[0][1]"));
  CHECK(Contains(fixed, "static_cast<long long>((r / 1024)) * p.stride[0][0]"));
  const std::string sized = EmitOrDie({kernel("cols3_sized", {4, kRuntimeDim, 32, 64})});
  CHECK(Contains(sized, "const long long kRows = 4LL * p.size[1] * 32LL;"));
  CHECK(Contains(sized, "static_cast<long long>((r % 32)) * p.stride[0][2]"));
  CHECK(Contains(sized, "static_cast<long long>(((r / 32) % p.size[1])) * p.stride[0][1]"));
  CHECK(Contains(sized, "static_cast<long long>((r / (32 * p.size[1]))) * p.stride[0][0]"));
  CHECK_FALSE(Contains(sized, "LL * p.size[1]))"));
}

TEST_CASE("size-1 dims, rank 0 and empty shapes", "[cuda_backend][source]") {
  // Size-1 dims take no part in the decomposition (their stride is never read).
  const std::string ones = EmitOrDie({FusedReluKernel("ones", {6, 1, 10})});
  CHECK(Contains(ones, "long long stride[4][3];"));
  CHECK_FALSE(Contains(ones, "Index c1 "));
  CHECK(Contains(ones,
                 "static_cast<long long>(c0) * p.stride[0][0] + "
                 "static_cast<long long>(c2) * p.stride[0][2]"));
  // Rank 0: no stride member, one element, handled by the tail.
  const std::string scalar = EmitOrDie({FusedReluKernel("scalar", {})});
  CHECK(Contains(scalar, "struct StridedParams {\n  char* ptr[4];\n};"));
  CHECK(Contains(scalar, "const long long off0 = 0;"));
  // numel 0: empty entry points.
  const std::string empty = EmitOrDie({FusedReluKernel("empty", {3, 0})});
  CHECK(Contains(empty,
                 "empty_contig(const tccd_kernel_empty::ContigParams p) {\n"
                 "  // numel is 0: nothing to do"));
}

TEST_CASE("casts, wrapping integers, literals and bool memory", "[cuda_backend][source]") {
  KernelBuilder k("casts", {16});
  const int f = k.Input(DType::kF32);
  const int i = k.Input(DType::kI32);
  const int b = k.Input(DType::kBool);
  k.Output(k.Cast(f, DType::kI8));                                         // via i32, wraps
  k.Output(k.Op(PwOp::kAdd, DType::kI32, {i, k.Const(DType::kI32, -1)}));  // wraps, no UB
  k.Output(k.Op(PwOp::kNeg, DType::kI32, {i}));
  k.Output(k.Cast(f, DType::kBF16));
  k.Output(k.Op(PwOp::kNot, DType::kBool, {b}));
  const int u = k.Cast(i, DType::kU8);
  k.Output(k.Op(PwOp::kAdd, DType::kU8, {u, k.Const(DType::kU8, -1)}));  // 255
  k.Output(k.Op(
      PwOp::kMul, DType::kF64,
      {k.Cast(f, DType::kF64), k.Const(DType::kF64, std::numeric_limits<double>::infinity())}));
  k.Output(k.Op(PwOp::kMul, DType::kF32, {f, k.Const(DType::kF32, 0.1)}));
  k.Output(k.Op(PwOp::kAdd, DType::kI64,
                {k.Cast(i, DType::kI64), k.Const(DType::kI64, -9.2233720368547758e18)}));
  const std::string src = EmitOrDie({k.kernel()});
  CHECK(Contains(src, "(signed char)(int)v0"));
  CHECK(Contains(src, "(int)((unsigned int)v1 + (unsigned int)v5)"));
  CHECK(Contains(src, "const int v5 = -1;"));
  CHECK(Contains(src, "(int)(0 - (unsigned int)v1)"));
  CHECK(Contains(src, "tccd_rt::f32_to_bf16(v0)"));
  CHECK(Contains(src, "const bool v2 = in2 != 0;"));
  CHECK(Contains(src, "out4 = (unsigned char)v12;"));
  CHECK(Contains(src, "(unsigned char)255"));
  CHECK(Contains(src, "__longlong_as_double(0x7ff0000000000000ll)"));
  CHECK(Contains(src, "0.1f"));
  CHECK(Contains(src, "(-9223372036854775807ll - 1ll)"));
}

TEST_CASE("emitting is deterministic", "[cuda_backend][source]") {
  std::vector<PointwiseKernel> kernels;
  for (const GoldenCase& c : GoldenCorpus()) kernels.push_back(c.kernel);
  CHECK(EmitOrDie(kernels) == EmitOrDie(kernels));
}

TEST_CASE("invalid kernels, duplicate names and oversized parameters are rejected",
          "[cuda_backend][errors]") {
  PointwiseKernel bad = FusedReluKernel("bad", {4});
  bad.body[3].args = {7};  // not an earlier instruction
  absl::StatusOr<std::string> source = EmitCudaSource({bad});
  CHECK(source.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(Contains(std::string(source.status().message()), "invalid pointwise kernel 'bad'"));

  PointwiseKernel no_symbol = FusedReluKernel("not a symbol", {4});
  CHECK(EmitCudaSource({no_symbol}).status().code() == absl::StatusCode::kInvalidArgument);

  const PointwiseKernel twice = FusedReluKernel("twice", {4});
  source = EmitCudaSource({twice, twice});
  CHECK(source.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(Contains(std::string(source.status().message()), "used twice"));

  // 64 inputs of rank 8: 8 * 65 * 9 = 4680 bytes of parameters.
  KernelBuilder wide("wide", {2, 2, 2, 2, 2, 2, 2, 2});
  int sum = wide.Input(DType::kF32);
  for (int i = 1; i < 64; ++i)
    sum = wide.Op(PwOp::kAdd, DType::kF32, {sum, wide.Input(DType::kF32)});
  wide.Output(sum);
  source = EmitCudaSource({wide.kernel()});
  CHECK(source.status().code() == absl::StatusCode::kUnimplemented);
  CHECK(Contains(std::string(source.status().message()), "4680 bytes"));

  absl::StatusOr<CudaModule> none = CompileCudaKernels({}, CudaTarget{});
  CHECK(none.status().code() == absl::StatusCode::kInvalidArgument);
  absl::StatusOr<CudaModule> bad_target =
      CompileCudaKernels({FusedReluKernel("k", {4})}, CudaTarget{.cc_major = 5, .cc_minor = 2});
  CHECK(bad_target.status().code() == absl::StatusCode::kInvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// NVRTC
// ---------------------------------------------------------------------------------------------

TEST_CASE("a missing NVRTC is FAILED_PRECONDITION naming what was tried", "[cuda_backend][nvrtc]") {
  absl::StatusOr<std::string> version =
      ProbeNvrtc({"/nonexistent/libnvrtc.so.13", "libnvrtc-not-there.so.12"});
  REQUIRE(version.status().code() == absl::StatusCode::kFailedPrecondition);
  const std::string message(version.status().message());
  CHECK(Contains(message,
                 "CUDA toolkit (NVRTC) not found: tried /nonexistent/libnvrtc.so.13, "
                 "libnvrtc-not-there.so.12"));
  // The search order of the brief: sonames first, then the toolkit directories.
  const std::vector<std::string> paths = NvrtcSearchPaths();
  REQUIRE(paths.size() >= 6);
  CHECK(paths[0] == "libnvrtc.so.13");
  CHECK(paths[1] == "libnvrtc.so.12");
  CHECK(Contains(absl::StrJoin(paths, " "), "/usr/local/cuda/lib64/libnvrtc.so.13"));
  CHECK(Contains(absl::StrJoin(paths, " "),
                 "/usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.12"));
}

TEST_CASE("kernels compile to cubins for sm_80 and sm_90 with their entry points in the PTX",
          "[cuda_backend][nvrtc]") {
  if (!HaveNvrtc()) return;
  std::vector<PointwiseKernel> kernels;
  for (const GoldenCase& c : GoldenCorpus()) kernels.push_back(c.kernel);
  for (int cc_major : {8, 9}) {
    const CudaTarget target{.cc_major = cc_major, .cc_minor = 0};
    const CudaModule module = CompileOrDie(kernels, target);
    INFO(target.KeyString());
    const CubinHeader header = ReadCubinHeader(module.cubin);
    CHECK(header.elf64);
    CHECK(header.machine == kEmCuda);
    // CUDA 12.8+/13 cubins (ELF ABI version 8) keep the SM in bits 8..15 of e_flags; older ones
    // in bits 0..7.
    const int abi_version = static_cast<unsigned char>(module.cubin[8]);
    const uint32_t sm = abi_version >= 8 ? (header.flags >> 8) & 0xff : header.flags & 0xff;
    CHECK(sm == static_cast<uint32_t>(cc_major * 10));
    CHECK(Contains(module.ptx, ".target " + target.KeyString() + "\n"));
    // Entry points only: no module-scope variables.
    CHECK_FALSE(Contains(module.ptx, ".global .align"));
    REQUIRE(module.kernels.size() == kernels.size());
    for (const CudaKernel& kernel : module.kernels) {
      const CudaKernelLaunchInfo& info = kernel.launch;
      // Tiled kernels have one entry, <name>_tile, in the strided slot.
      // Depthwise templates likewise, <name>_dw (cuda_depthwise_emitter.h).
      const bool depthwise = IsDepthwiseTemplateKernel(kernel.ir);
      if (kernel.ir.is_tile() || depthwise) {
        CHECK(info.contig_entry.empty());
        CHECK(info.strided_entry == kernel.ir.name + (depthwise ? "_dw" : "_tile"));
        CHECK(info.kind == CudaKernelKind::kTile);
        CHECK(Contains(module.ptx, ".visible .entry " + info.strided_entry + "("));
        continue;
      } else if (kernel.ir.has_dense_entry()) {
        CHECK(Contains(module.ptx, ".visible .entry " + info.contig_entry + "("));
      } else {
        CHECK(info.contig_entry.empty());  // the strided entry only (run-time-size index kernels)
      }
      // The fixed-layout cases have only their dense entry (PointwiseKernel::fixed_strides).
      if (kernel.ir.fixed_strides.empty()) {
        CHECK(Contains(module.ptx, ".visible .entry " + info.strided_entry + "("));
      } else {
        CHECK(info.strided_entry.empty());
      }
      // The name lands in the cubin's symbol table too.
      CHECK(Contains(module.cubin,
                     (info.contig_entry.empty() ? info.strided_entry : info.contig_entry) + '\0'));
    }
  }
}

TEST_CASE("launch information matches the source", "[cuda_backend][nvrtc]") {
  if (!HaveNvrtc()) return;
  const CudaModule module =
      CompileOrDie({FusedReluKernel("relu", {4, 37}), Bf16GeluKernel("gelu", {9}),
                    I64AddKernel("huge", {3, int64_t{1} << 30})});
  REQUIRE(module.kernels.size() == 3);
  const CudaKernelLaunchInfo& relu = module.kernels[0].launch;
  CHECK(relu.name == "relu");
  CHECK(relu.contig_entry == "relu_contig");
  CHECK(relu.strided_entry == "relu_strided");
  CHECK(relu.block_size == 256);
  CHECK(relu.elements_per_thread == 4);
  CHECK(relu.numel == 148);
  CHECK(relu.num_operands == 4);
  CHECK(relu.rank == 2);
  CHECK(relu.contig_param_bytes == 32);
  CHECK(relu.strided_param_bytes == 96);
  CHECK(module.kernels[1].launch.elements_per_thread == 8);
  CHECK(module.kernels[1].launch.strided_param_bytes == 2 * 8 * 2);
  CHECK(module.kernels[2].launch.numel == int64_t{3} << 30);
  // The PTX declares the by-value parameter blocks with those sizes.
  CHECK(Contains(module.ptx, ".param .align 8 .b8 relu_contig_param_0[32]"));
  CHECK(Contains(module.ptx, ".param .align 8 .b8 relu_strided_param_0[96]"));
}

TEST_CASE("the contig entry uses 128-bit loads and stores", "[cuda_backend][nvrtc]") {
  if (!HaveNvrtc()) return;
  const CudaModule module =
      CompileOrDie({FusedReluKernel("relu", {1 << 20}), Bf16GeluKernel("gelu", {1 << 20}),
                    WhereCompareKernel("where", {1 << 20})});
  const std::string relu = PtxEntry(module.ptx, "relu_contig");
  CHECK(Contains(relu, "ld.global.v4.f32"));
  CHECK(Contains(relu, "st.global.v4.f32"));
  const std::string gelu = PtxEntry(module.ptx, "gelu_contig");
  CHECK(Contains(gelu, "ld.global.v4"));
  CHECK(Contains(gelu, "st.global.v4"));
  // f32 operands move 128 bits per thread, the bool output 32 bits (4 elements).
  const std::string where = PtxEntry(module.ptx, "where_contig");
  CHECK(Contains(where, "ld.global.v4.f32"));
  CHECK(Contains(where, "st.global.v4.f32"));
  CHECK(Contains(where, "st.global.v4.u8"));
  // The strided entry has both: 128-bit accesses for inner-contiguous or broadcast layouts
  // (a bias over rows), and the per-element loop for anything else (transposes).
  const std::string strided = PtxEntry(module.ptx, "relu_strided");
  CHECK(Contains(strided, "ld.global.v4.f32"));
  CHECK(Contains(strided, "st.global.v4.f32"));
  CHECK(Contains(strided, "ld.global.f32"));
  CHECK(Contains(strided, "st.global.f32"));
}

TEST_CASE("row kernels size the vector by the narrowest operand, each operand at its own width",
          "[cuda_backend][rows]") {
  // bf16 rows beside f32 weight and bias (a layer norm under autocast): 8 elements per vector,
  // one 16-byte load of the row and two of each parameter, where the f32 parameters used to
  // set the vector to 4 (8-byte loads of the row).
  const CudaRowGeometry vit =
      RowGeometryOf(LayerNormRowsKernel("ln_vit", {8, 197, 768}, DType::kF32));
  CHECK(vit.vec == 8);
  CHECK(vit.threads_per_row == 32);
  CHECK(vit.chunks == 3);
  // A 64-channel LayerNorm2d row: 8 lanes of one vector each (a warp's load reads four whole
  // rows, 128 bytes each) rather than 2 lanes of 8 vectors of 4 (16 rows' lines per load).
  const CudaRowGeometry ln2d =
      RowGeometryOf(LayerNormRowsKernel("ln2d", {8, 56, 56, 64}, DType::kF32));
  CHECK(ln2d.vec == 8);
  CHECK(ln2d.threads_per_row == 8);
  CHECK(ln2d.chunks == 1);
  CHECK(ln2d.rows_per_block == 32);
  // Unchanged where every operand has one width: f32 softmax rows of 1000 (vec 4, 250 vectors:
  // 32 lanes of 8 chunks), bf16 layer norm rows of 768.
  const CudaRowGeometry softmax = RowGeometryOf(SoftmaxRowsKernel("sm", {37, 1000}));
  CHECK(softmax.vec == 4);
  CHECK(softmax.threads_per_row == 32);
  CHECK(softmax.chunks == 8);
  CHECK(RowGeometryOf(LayerNormRowsKernel("ln", {8, 16, 768})).vec == 8);
  // The widest operand moves at most 32 bytes per vector: f64 beside bf16 keeps vectors of 4.
  KernelBuilder k("wide", {16, 256});
  const int x = k.Cast(k.Input(DType::kBF16), DType::kF64);
  const int y = k.Input(DType::kF64);
  k.Output(k.Op(PwOp::kReduceSum, DType::kF64, {k.Op(PwOp::kMul, DType::kF64, {x, y})}));
  k.Rows(1, {false, false, true});
  CHECK(RowGeometryOf(k.kernel()).vec == 4);
}

TEST_CASE("vocabulary rows that stream once are looped whether or not the vector divides them",
          "[cuda_backend][rows][loss-rows]") {
  // Cross-entropy's rows over Llama's 32000 and T5's 32128 (16-byte vectors divide both): looped
  // 512-thread blocks, not shifted, where they used to be persistent 1024-thread blocks of 32
  // elements per thread (one block per SM). TCCD_ALIGNED_ROW_LOOPS=0 keeps them persistent
  // (ctest's cuda_backend_test_aligned_row_loops_0 runs this case so).
  const char* env = std::getenv("TCCD_ALIGNED_ROW_LOOPS");
  const bool persistent = env != nullptr && std::string(env) == "0";
  for (const PointwiseKernel& k :
       {CrossEntropyBackwardRowsKernel("llama_bwd", {8192, 32000}),
        CrossEntropyForwardRowsKernel("t5_fwd", {4096, 32128})}) {
    INFO(k.name);
    const CudaRowGeometry g = RowGeometryOf(k);
    CHECK(g.vec == 8);
    CHECK_FALSE(g.shifted);
    CHECK(g.looped == !persistent);
    CHECK(g.block == (persistent ? 1024 : kLoopedRowThreads));
  }
  // BERT's 30522 (looped and shifted since the sixth session) is unchanged by the knob.
  const CudaRowGeometry bert = RowGeometryOf(CrossEntropyBackwardRowsKernel("bert", {8192, 30522}));
  CHECK(bert.looped);
  CHECK(bert.shifted);
  // Nothing to do: a softmax over 32000 streams twice (max and sum, then the stores) and stays
  // persistent, as do rows shorter than kMinShiftedLoopedRowLength.
  CHECK_FALSE(RowGeometryOf(SoftmaxRowsKernel("sm", {64, 32000})).looped);
  CHECK_FALSE(RowGeometryOf(CrossEntropyBackwardRowsKernel("short", {64, 4096})).looped);
}

TEST_CASE("a multi-chunk row loads what feeds its reductions at the row's start",
          "[cuda_backend][rows][early-loads]") {
  // ViT's layer-norm backward row (3 chunks of 8 per lane): x feeds the second reduction and is
  // loaded before the first one's shuffles, and so is the residual gradient (streamed, read by
  // the epilogue), with TCCD_ROW_EARLY_LOADS=2 (ctest's cuda_backend_test_early_loads_2 runs
  // this case so). Without the kept-broadcast flags (not known which operands are streamed) the
  // residual waits for the epilogue. Under the default (1: the tenth session's code) both wait
  // for the reduction that first reads them.
  const char* env = std::getenv("TCCD_ROW_EARLY_LOADS");
  const bool mode2 = env != nullptr && std::string(env) == "2";
  const PointwiseKernel k = LayerNormBackwardRowsKernel("lnb", {8, 197, 768});
  REQUIRE(RowGeometryOf(k).chunks == 3);
  absl::StatusOr<std::string> source = EmitCudaSource({k});
  REQUIRE(source.ok());
  const std::string& s = *source;
  const size_t entry = s.find("lnb_contig(");
  REQUIRE(entry != std::string::npos);
  const size_t first_reduce = s.find("row_reduce", entry);
  const size_t second_reduce = s.find("row_reduce", first_reduce + 1);
  const size_t x_load = s.find("p.ptr[1]) + b1 + e0", entry);
  const size_t res_load = s.find("p.ptr[5]) + b5 + e0", entry);
  REQUIRE(second_reduce != std::string::npos);
  REQUIRE(x_load != std::string::npos);
  REQUIRE(res_load != std::string::npos);
  if (!mode2) {
    CHECK(x_load > first_reduce);
    CHECK(res_load > second_reduce);
    return;
  }
  CHECK(x_load < first_reduce);
  CHECK(res_load < first_reduce);

  PointwiseKernel unknown = LayerNormBackwardRowsKernel("lnu", {8, 197, 768});
  unknown.reduction.kept_broadcast.clear();
  source = EmitCudaSource({unknown});
  REQUIRE(source.ok());
  const size_t u = source->find("lnu_contig(");
  const size_t u_first = source->find("row_reduce", u);
  const size_t u_second = source->find("row_reduce", u_first + 1);
  CHECK(source->find("p.ptr[1]) + b1 + e0", u) < u_first);
  const size_t u_res = source->find("p.ptr[5]) + b5 + e0", u);
  CHECK(u_res > u_second);
  CHECK(u_res != std::string::npos);
}

TEST_CASE("a LayerNorm2d row moves 16-byte vectors of bf16 and two of each f32 parameter",
          "[cuda_backend][nvrtc][rows]") {
  if (!HaveNvrtc()) return;
  const CudaModule module =
      CompileOrDie({LayerNormRowsKernel("ln2d", {8, 56, 56, 64}, DType::kF32)});
  const std::string contig = PtxEntry(module.ptx, "ln2d_contig");
  // The bf16 row: one 128-bit load and one 128-bit store per thread (store_whole).
  CHECK(Count(contig, "ld.global.v4.u32") == 1);
  CHECK(Count(contig, "st.global.v4.b32") == 1);
  // The f32 weight and bias: two 128-bit loads each.
  CHECK(Count(contig, "ld.global.v4.f32") == 4);
  // Nothing narrower moves a row element (the mean and rstd are one scalar store each).
  CHECK_FALSE(Contains(contig, "ld.global.v2"));
  CHECK_FALSE(Contains(contig, "st.global.u16"));
  CHECK_FALSE(Contains(contig, "st.global.v2"));
}

TEST_CASE("the strided entry's vector path needs a vector-divisible inner dim",
          "[cuda_backend][nvrtc]") {
  if (!HaveNvrtc()) return;
  // 77 columns of f32: a vector of 4 would straddle rows, so there is no vector path.
  const CudaModule module = CompileOrDie({FusedReluKernel("relu_odd", {64, 77})});
  CHECK_FALSE(Contains(PtxEntry(module.ptx, "relu_odd_strided"), ".v4"));
}

TEST_CASE("every op and dtype compiles", "[cuda_backend][nvrtc]") {
  if (!HaveNvrtc()) return;
  std::vector<PointwiseKernel> kernels;
  for (DType dt :
       {DType::kF32, DType::kF64, DType::kI8, DType::kI16, DType::kI32, DType::kI64, DType::kU8}) {
    kernels.push_back(AllOpsKernel("ops_" + std::to_string(static_cast<int>(dt)), dt, {3, 5}));
  }
  kernels.push_back(LogicAndHalfCastsKernel("logic", {7}));
  const CudaModule module = CompileOrDie(kernels);
  CHECK(module.kernels.size() == kernels.size());
}

TEST_CASE("the generated source compiles without NVRTC warnings", "[cuda_backend][nvrtc]") {
  if (!HaveNvrtc()) return;
  std::vector<PointwiseKernel> kernels;
  for (const GoldenCase& c : GoldenCorpus()) kernels.push_back(c.kernel);
  kernels.push_back(FusedReluKernel("scalar", {}));
  kernels.push_back(FusedReluKernel("empty", {0, 3}));
  kernels.push_back(FusedReluKernel("no_tail", {64}));
  kernels.push_back(AllOpsKernel("ops_u8", DType::kU8, {3}));
  absl::StatusOr<std::string> source = EmitCudaSource(kernels);
  REQUIRE(source.ok());
  absl::StatusOr<NvrtcOutput> out = CompileWithNvrtc(*source, "tccd_kernels.cu", CudaTarget{});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(out->log == "");
}

// Row gathers beyond the embedding goldens: element-level masks (a cat along the row feeding a
// softmax: the per-element gather path), and a gathered row summed over a long row (looped; a
// bf16 row of 30522, which the vector does not divide, also shifted).
PointwiseKernel CatSoftmaxRowsKernel(const std::string& name, int64_t rows, int64_t cols) {
  KernelBuilder b(name, {rows, cols});
  const int left = b.GatherInput(DType::kF32);
  const int right = b.GatherInput(DType::kF32);
  const int row = b.Index(0);
  const int c = b.Index(1);
  const int half = b.Const(DType::kI64, static_cast<double>(cols / 2));
  const int in_left = b.Op(PwOp::kLt, DType::kBool, {c, half});
  const int in_right = b.Op(PwOp::kNot, DType::kBool, {in_left});
  const int l = b.Gather(left, in_left, {row, c});
  const int r = b.Gather(right, in_right, {row, b.Op(PwOp::kSub, DType::kI64, {c, half})});
  const int x = b.Op(PwOp::kWhere, DType::kF32, {in_left, l, r});
  const int e = b.Op(PwOp::kExp, DType::kF32,
                     {b.Op(PwOp::kSub, DType::kF32, {x, b.Op(PwOp::kReduceMax, DType::kF32, {x})})});
  b.Output(b.Op(PwOp::kDiv, DType::kF32, {e, b.Op(PwOp::kReduceSum, DType::kF32, {e})}));
  b.Rows(1, {true, true, false});
  return b.kernel();
}

PointwiseKernel GatheredRowSumKernel(const std::string& name, int64_t rows, int64_t cols,
                                     DType dtype) {
  KernelBuilder b(name, {rows, cols});
  const int table = b.GatherInput(dtype);
  const int ids = b.GatherInput(DType::kI64);
  const int id = b.Gather(ids, b.Const(DType::kBool, 1), {b.Index(0)});
  const int ok = b.Op(PwOp::kAnd, DType::kBool,
                      {b.Op(PwOp::kGe, DType::kBool, {id, b.Const(DType::kI64, 0)}),
                       b.Op(PwOp::kLt, DType::kBool, {id, b.Const(DType::kI64, 64)})});
  const int gathered = b.Gather(table, ok, {id, b.Index(1)});
  const int x = dtype != DType::kF32 ? b.Cast(gathered, DType::kF32) : gathered;
  b.Output(gathered);  // the gathered rows, as the embedding's residual: an element operand
  b.Output(b.Op(PwOp::kReduceSum, DType::kF32, {x}));
  b.Rows(1, {true, true, false, true});
  return b.kernel();
}

TEST_CASE("row kernels that gather compile without NVRTC warnings, persistent and looped",
          "[cuda_backend][nvrtc][row-gathers]") {
  std::vector<PointwiseKernel> kernels = {
      CatSoftmaxRowsKernel("cat_softmax_rows", 64, 1024),
      GatheredRowSumKernel("gathered_row_sum", 16, 32000, DType::kF32),
      GatheredRowSumKernel("gathered_row_sum_shifted", 16, 30522, DType::kBF16)};
  for (const PointwiseKernel& k : kernels) {
    INFO(k.name);
    REQUIRE(VerifyPointwiseKernel(k) == "");
  }
  absl::StatusOr<std::string> source = EmitCudaSource(kernels);
  INFO(source.status().ToString());
  REQUIRE(source.ok());
  // The cat's gathers have element-level masks: read per element. The long rows are looped,
  // the bf16 one shifted (its element gather then per element, in the row only).
  CHECK(Contains(*source, "cat_softmax_rows_contig"));
  CHECK(Contains(*source, "for (int e0 = lane * kVec; e0 < kRowLength; e0 += kThreads * kVec)"));
  CHECK(Contains(*source, "for (int p0 = lane * kVec; p0 < kRowLength + head;"));
  if (!HaveNvrtc()) return;
  absl::StatusOr<NvrtcOutput> out = CompileWithNvrtc(*source, "tccd_kernels.cu", CudaTarget{});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(out->log == "");
}

TEST_CASE("an NVRTC compile error is an INTERNAL status carrying the log",
          "[cuda_backend][nvrtc][errors]") {
  if (!HaveNvrtc()) return;
  absl::StatusOr<NvrtcOutput> out = CompileWithNvrtc(
      "extern \"C\" __global__ void k() { undeclared_thing(); }", "broken.cu", CudaTarget{});
  REQUIRE(out.status().code() == absl::StatusCode::kInternal);
  const std::string message(out.status().message());
  CHECK(Contains(message, "rejected the generated CUDA source for sm_90"));
  CHECK(Contains(message, "undeclared_thing"));
}

TEST_CASE("a compute capability this NVRTC cannot target is FAILED_PRECONDITION",
          "[cuda_backend][nvrtc][errors]") {
  if (!HaveNvrtc()) return;
  // 12.9 passes CudaTargetFromProto's range check, but no NVRTC knows sm_129.
  absl::StatusOr<CudaModule> module =
      CompileCudaKernels({FusedReluKernel("k", {4})}, CudaTarget{.cc_major = 12, .cc_minor = 9});
  REQUIRE(module.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(Contains(std::string(module.status().message()), "cannot generate code for sm_129"));
}

TEST_CASE("compiling is deterministic", "[cuda_backend][nvrtc]") {
  if (!HaveNvrtc()) return;
  std::vector<PointwiseKernel> kernels;
  for (const GoldenCase& c : GoldenCorpus()) kernels.push_back(c.kernel);
  const CudaModule a = CompileOrDie(kernels), b = CompileOrDie(kernels);
  CHECK(a.cuda_source == b.cuda_source);
  CHECK(a.ptx == b.ptx);
  CHECK(a.cubin == b.cubin);
}

TEST_CASE("concurrent compiles from 4 threads", "[cuda_backend][nvrtc]") {
  if (!HaveNvrtc()) return;
  const std::vector<GoldenCase> corpus = GoldenCorpus();
  // Reference results, compiled one at a time.
  std::vector<CudaModule> expected;
  for (const GoldenCase& c : corpus) expected.push_back(CompileOrDie({c.kernel}));

  constexpr int kThreads = 4, kRounds = 3;
  std::atomic<int> failures{0}, mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        const size_t i = (t + r) % corpus.size();
        absl::StatusOr<CudaModule> m = CompileCudaKernels({corpus[i].kernel}, CudaTarget{});
        if (!m.ok()) {
          ++failures;
        } else if (m->ptx != expected[i].ptx || m->cubin != expected[i].cubin) {
          ++mismatches;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(failures == 0);
  CHECK(mismatches == 0);
}

// Not run by default: cuda_backend_test "[.timing]" prints NVRTC compile times and sizes.
TEST_CASE("NVRTC compile times and output sizes", "[.timing]") {
  if (!HaveNvrtc()) return;
  auto time_ms = [](const std::vector<PointwiseKernel>& kernels, CudaModule& module) {
    double best = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
      const auto start = std::chrono::steady_clock::now();
      module = CompileOrDie(kernels);
      best = std::min(
          best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count());
    }
    return best;
  };
  std::vector<PointwiseKernel> all;
  for (const GoldenCase& c : GoldenCorpus()) {
    CudaModule module;
    const double ms = time_ms({c.kernel}, module);
    WARN(c.name << ": " << ms << " ms, source " << module.cuda_source.size() << " B, PTX "
                << module.ptx.size() << " B, cubin " << module.cubin.size() << " B");
    all.push_back(c.kernel);
  }
  CudaModule module;
  const double ms = time_ms(all, module);
  WARN("all 5 in one program: " << ms << " ms, PTX " << module.ptx.size() << " B, cubin "
                                << module.cubin.size() << " B");
  const PointwiseKernel ops = AllOpsKernel("ops_f32", DType::kF32, {1024});
  const double ops_ms = time_ms({ops}, module);
  WARN("every f32 op (" << ops.output_dtypes.size() << " outputs): " << ops_ms << " ms, PTX "
                        << module.ptx.size() << " B, cubin " << module.cubin.size() << " B");
}

TEST_CASE("a cat's parts bounded at multiples of the vector are read with 128-bit gathers",
          "[cuda_backend][nvrtc]") {
  if (!HaveNvrtc()) return;
  // [4, 32, 3 x 64] bf16: bounds 64 and 128 are multiples of the 8-lane vector, so each part's
  // mask is the same on every lane and its lanes are consecutive elements: one ld.global.v4 per
  // part (behind its own layout test), where before every lane was a 16-bit load.
  const CudaModule aligned = CompileOrDie({CatPartsKernel("cat_parts", {4, 32, 192}, 3)});
  const std::string strided = PtxEntry(aligned.ptx, "cat_parts_strided");
  CHECK(Contains(strided, "ld.global.v4.u32"));
  CHECK(Contains(strided, "st.global.v4.b32"));
  // Parts of 60 columns: the bounds 60 and 120 fall inside vectors, so the parts stay lane by
  // lane (the stores are still vectors).
  const CudaModule straddling = CompileOrDie({CatPartsKernel("cat_straddle", {4, 32, 180}, 3)});
  const std::string inside = PtxEntry(straddling.ptx, "cat_straddle_strided");
  CHECK_FALSE(Contains(inside, "ld.global.v4"));
  CHECK(Contains(inside, "ld.global.u16"));
}

// The golden corpus's kernel `name`.
PointwiseKernel CorpusKernel(const std::string& name) {
  for (const GoldenCase& c : GoldenCorpus())
    if (c.name == name) return c.kernel;
  FAIL("no golden case " << name);
  return {};
}

TEST_CASE("the depthwise templates take exactly the pass's ops, dense, and read their window",
          "[cuda_backend][depthwise]") {
  const PointwiseKernel forward = CorpusKernel("depthwise_conv7_bf16_template");
  std::optional<CudaDepthwiseTemplate> t = DepthwiseTemplateOf(forward);
  REQUIRE(t.has_value());
  CHECK(t->kind == CudaDepthwiseTemplate::Kind::kConv);
  CHECK_FALSE(t->flip);
  CHECK((t->kh == 7 && t->kw == 7 && t->run == 7 && !t->bias));
  CHECK(t->threads == 64 * 28 * 4 * 96);
  CHECK(t->grid == (t->threads + 255) / 256);
  CHECK(IsDepthwiseTemplateKernel(forward));
  const CudaKernelLaunchInfo info = LaunchInfoOf(forward, 9);
  CHECK(info.kind == CudaKernelKind::kTile);
  CHECK(info.strided_entry == forward.name + "_dw");
  CHECK(info.contig_entry.empty());
  CHECK(info.grid == t->grid);

  t = DepthwiseTemplateOf(CorpusKernel("depthwise_conv7_dgrad_bf16_template"));
  REQUIRE(t.has_value());
  CHECK(t->flip);
  t = DepthwiseTemplateOf(CorpusKernel("depthwise_weight_partials7_bf16_template"));
  REQUIRE(t.has_value());
  CHECK(t->kind == CudaDepthwiseTemplate::Kind::kWeightPartials);
  CHECK((t->h == 28 && t->w == 28 && t->rows == 7 && t->c == 192));

  // Nothing else: kernels without the op's name (the index-form goldens), with another op fused
  // in, with launches that may be strided, with another declared layout.
  CHECK_FALSE(DepthwiseTemplateOf(CorpusKernel("depthwise_conv7_bf16_fixed")).has_value());
  PointwiseKernel fused = forward;
  fused.fused_ops.push_back("aten::add.Tensor");
  CHECK_FALSE(DepthwiseTemplateOf(fused).has_value());
  PointwiseKernel both = forward;
  both.entries = KernelEntries::kBoth;
  CHECK_FALSE(DepthwiseTemplateOf(both).has_value());
  PointwiseKernel strided_map = forward;
  strided_map.fixed_strides[2] = 1;  // x's W stride
  CHECK_FALSE(DepthwiseTemplateOf(strided_map).has_value());
  CHECK_FALSE(IsDepthwiseTemplateKernel(strided_map));
}

}  // namespace
}  // namespace tccd::codegen::cuda_testing
