// DepthwiseTemplateOf and EmitDepthwiseKernel (see cuda_depthwise_emitter.h).
//
// Recognition reads the kernel as index_ops.cc lowers the two ops (LowerDepthwiseConv,
// LowerWeightPartials): the one fused op's target, the operands' dtypes and the body's gathers,
// whose constant coordinates give the window (the tap gathers' (i', j'), the gradient gathers'
// column) and whether it is flipped (the first tap gather's (i', j'): (0, 0) or (kh-1, kw-1)).
// Anything that does not read exactly so keeps the index form, which is always correct.
#include "codegen/cuda/cuda_depthwise_emitter.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/cuda/cuda_backend.h"
#include "codegen/cuda/cuda_emitter.h"

namespace tccd::codegen {
namespace {

using ir::DType;

// The ops' targets (passes/depthwise_conv_kernels.h: kDepthwiseConvTarget,
// kDepthwiseWeightPartialsTarget), spelled here since the backend does not link the passes.
constexpr char kDepthwiseConvTarget[] = "tccd::depthwise_conv2d.default";
constexpr char kDepthwiseWeightPartialsTarget[] = "tccd::depthwise_conv2d_weight_partials.default";

// The integer value of body value `v` when it is an integral constant.
std::optional<int64_t> ConstOf(const PointwiseKernel& k, int v) {
  if (v < 0 || static_cast<size_t>(v) >= k.body.size()) return std::nullopt;
  const PwInstr& i = k.body[v];
  if (i.op != PwOp::kConstant || ir::IsFloatingPoint(i.dtype)) return std::nullopt;
  return i.ivalue;
}

// Whether body value `v` is the point's coordinate along dim `d`.
bool IsIndex(const PointwiseKernel& k, int v, int d) {
  return v >= 0 && static_cast<size_t>(v) < k.body.size() && k.body[v].op == PwOp::kIndex &&
         k.body[v].operand == d;
}

// The gathers of input `operand`, in body order.
std::vector<const PwInstr*> GathersOf(const PointwiseKernel& k, int operand) {
  std::vector<const PwInstr*> out;
  for (const PwInstr& i : k.body)
    if (i.op == PwOp::kGather && i.operand == operand) out.push_back(&i);
  return out;
}

// One operand's dense layout: its strides and the sizes of the dims they walk (a gather
// operand's own dims, zero-padded; the iteration space for the output).
struct Layout {
  std::vector<int64_t> strides, sizes;
};

// Whether the declared layouts are the dense ones the template indexes: every launch dense
// (KernelEntries::kDense) and, where fixed layouts are declared, each operand's row as
// `layouts[o]` along every dim of size > 1 (a size-1 dim's stride is never used, and the plan
// may declare any: ConvNeXt-T's stage-4 partials, [N, 1, 7, 7, C]).
bool DenseLayouts(const PointwiseKernel& k, const std::vector<Layout>& layouts) {
  if (k.entries != KernelEntries::kDense) return false;
  if (k.fixed_strides.empty()) return true;
  const size_t rank = k.shape.size();
  if (k.fixed_strides.size() != layouts.size() * rank) return false;
  for (size_t o = 0; o < layouts.size(); ++o)
    for (size_t d = 0; d < rank; ++d)
      if (layouts[o].sizes[d] > 1 && k.fixed_strides[o * rank + d] != layouts[o].strides[d])
        return false;
  return true;
}

std::optional<CudaDepthwiseTemplate> ConvTemplateOf(const PointwiseKernel& k) {
  const int inputs = static_cast<int>(k.input_dtypes.size());
  if (k.shape.size() != 4 || (inputs != 2 && inputs != 3) || k.output_dtypes.size() != 1)
    return std::nullopt;
  const DType x = k.input_dtypes[0];
  if (!IsF32OrHalf(x) || k.input_dtypes[1] != DType::kF32 || k.output_dtypes[0] != x ||
      (inputs == 3 && !IsF32OrHalf(k.input_dtypes[2])))
    return std::nullopt;
  CudaDepthwiseTemplate t;
  t.kind = CudaDepthwiseTemplate::Kind::kConv;
  t.n = k.shape[0], t.h = k.shape[1], t.w = k.shape[2], t.c = k.shape[3];
  t.bias = inputs == 3;
  // Taps: gathers (mask, i', j', c) with constant i', j', row-major over the window.
  const std::vector<const PwInstr*> taps = GathersOf(k, 1);
  const std::vector<const PwInstr*> xs = GathersOf(k, 0);
  if (taps.empty() || taps.size() != xs.size()) return std::nullopt;
  int64_t max_i = -1, max_j = -1;
  std::vector<std::pair<int64_t, int64_t>> order;
  for (const PwInstr* g : taps) {
    if (g->args.size() != 4 || !IsIndex(k, g->args[3], 3)) return std::nullopt;
    const std::optional<int64_t> i = ConstOf(k, g->args[1]), j = ConstOf(k, g->args[2]);
    if (!i || !j) return std::nullopt;
    max_i = std::max(max_i, *i), max_j = std::max(max_j, *j);
    order.push_back({*i, *j});
  }
  t.kh = max_i + 1, t.kw = max_j + 1;
  if (t.kh < 1 || t.kh > 7 || t.kh % 2 == 0 || t.kw < 1 || t.kw > 7 || t.kw % 2 == 0 ||
      static_cast<int64_t>(taps.size()) != t.kh * t.kw)
    return std::nullopt;
  t.flip = order.front() != std::pair<int64_t, int64_t>{0, 0};
  for (size_t q = 0; q < order.size(); ++q) {
    const int64_t i = static_cast<int64_t>(q) / t.kw, j = static_cast<int64_t>(q) % t.kw;
    const std::pair<int64_t, int64_t> want =
        t.flip ? std::pair<int64_t, int64_t>{t.kh - 1 - i, t.kw - 1 - j}
               : std::pair<int64_t, int64_t>{i, j};
    if (order[q] != want) return std::nullopt;
  }
  for (const PwInstr* g : xs)
    if (g->args.size() != 5 || !IsIndex(k, g->args[1], 0) || !IsIndex(k, g->args[4], 3))
      return std::nullopt;
  if (t.bias) {
    const std::vector<const PwInstr*> b = GathersOf(k, 2);
    if (b.size() != 1 || b[0]->args.size() != 2 || !IsIndex(k, b[0]->args[1], 3))
      return std::nullopt;
  }
  const int64_t hwc = t.h * t.w * t.c, wc = t.w * t.c;
  const Layout map{{hwc, wc, t.c, 1}, {t.n, t.h, t.w, t.c}};
  std::vector<Layout> layouts = {map, {{t.kw * t.c, t.c, 1, 0}, {t.kh, t.kw, t.c, 1}}};
  if (t.bias) layouts.push_back({{1, 0, 0, 0}, {t.c, 1, 1, 1}});
  layouts.push_back(map);
  if (!DenseLayouts(k, layouts)) return std::nullopt;
  for (int64_t r = 8; r >= 1; --r)
    if (t.w % r == 0) {
      t.run = r;
      break;
    }
  t.threads = t.n * t.h * (t.w / t.run) * (t.c / 2);
  return t;
}

std::optional<CudaDepthwiseTemplate> PartialsTemplateOf(const PointwiseKernel& k) {
  if (k.shape.size() != 5 || k.input_dtypes.size() != 2 || k.output_dtypes.size() != 1 ||
      k.output_dtypes[0] != DType::kF32)
    return std::nullopt;
  const DType x = k.input_dtypes[0];
  if (!IsF32OrHalf(x) || k.input_dtypes[1] != x) return std::nullopt;
  CudaDepthwiseTemplate t;
  t.kind = CudaDepthwiseTemplate::Kind::kWeightPartials;
  t.n = k.shape[0], t.kh = k.shape[2], t.kw = k.shape[3], t.c = k.shape[4];
  const int64_t blocks = k.shape[1];
  // The gradient's gathers (mask, n, h, w, c), w a constant: R rows of W columns, row-major.
  const std::vector<const PwInstr*> grads = GathersOf(k, 0);
  const std::vector<const PwInstr*> xs = GathersOf(k, 1);
  if (grads.empty() || grads.size() != xs.size()) return std::nullopt;
  int64_t width = 0;
  for (const PwInstr* g : grads) {
    if (g->args.size() != 5 || !IsIndex(k, g->args[1], 0) || !IsIndex(k, g->args[4], 4))
      return std::nullopt;
    const std::optional<int64_t> w = ConstOf(k, g->args[3]);
    if (!w) return std::nullopt;
    width = std::max(width, *w + 1);
  }
  for (size_t q = 0; q < grads.size(); ++q)
    if (*ConstOf(k, grads[q]->args[3]) != static_cast<int64_t>(q) % width) return std::nullopt;
  for (const PwInstr* g : xs)
    if (g->args.size() != 5 || !IsIndex(k, g->args[1], 0) || !IsIndex(k, g->args[4], 4))
      return std::nullopt;
  if (static_cast<int64_t>(grads.size()) % width != 0) return std::nullopt;
  t.w = width;
  t.rows = static_cast<int64_t>(grads.size()) / width;
  t.h = blocks * t.rows;
  if (t.kh < 1 || t.kh > 7 || t.kh % 2 == 0 || t.kw < 1 || t.kw > 7 || t.kw % 2 == 0)
    return std::nullopt;
  const int64_t hwc = t.h * t.w * t.c, wc = t.w * t.c;
  const Layout map{{hwc, wc, t.c, 1, 0}, {t.n, t.h, t.w, t.c, 1}};
  const Layout partials{{blocks * t.kh * t.kw * t.c, t.kh * t.kw * t.c, t.kw * t.c, t.c, 1},
                        k.shape};
  if (!DenseLayouts(k, {map, map, partials})) return std::nullopt;
  t.threads = t.n * blocks * t.kh * (t.c / 2);
  return t;
}

// The dtype's storage pair load / store helpers' suffix.
const char* PairSuffix(DType d) {
  return d == DType::kBF16 ? "bf16" : d == DType::kF16 ? "f16" : "f32";
}

// Two-element loads and stores of each storage type as f32 (one 4- or 8-byte access: the
// channel pair is even and C is even, so the pair is aligned).
constexpr char kPairHelpers[] = R"(
__device__ __forceinline__ void load2_bf16(const void* p, long long e, float& a, float& b) {
  const unsigned int v = *reinterpret_cast<const unsigned int*>(
      static_cast<const unsigned short*>(p) + e);
  a = tccd_rt::bf16_to_f32(static_cast<unsigned short>(v & 0xffffu));
  b = tccd_rt::bf16_to_f32(static_cast<unsigned short>(v >> 16));
}
__device__ __forceinline__ void load2_f16(const void* p, long long e, float& a, float& b) {
  const unsigned int v = *reinterpret_cast<const unsigned int*>(
      static_cast<const unsigned short*>(p) + e);
  a = tccd_rt::f16_to_f32(static_cast<unsigned short>(v & 0xffffu));
  b = tccd_rt::f16_to_f32(static_cast<unsigned short>(v >> 16));
}
__device__ __forceinline__ void load2_f32(const void* p, long long e, float& a, float& b) {
  const float2 v = *reinterpret_cast<const float2*>(static_cast<const float*>(p) + e);
  a = v.x;
  b = v.y;
}
__device__ __forceinline__ void store2_bf16(void* p, long long e, float a, float b) {
  *reinterpret_cast<unsigned int*>(static_cast<unsigned short*>(p) + e) =
      static_cast<unsigned int>(tccd_rt::f32_to_bf16(a)) |
      (static_cast<unsigned int>(tccd_rt::f32_to_bf16(b)) << 16);
}
__device__ __forceinline__ void store2_f16(void* p, long long e, float a, float b) {
  *reinterpret_cast<unsigned int*>(static_cast<unsigned short*>(p) + e) =
      static_cast<unsigned int>(tccd_rt::f32_to_f16(a)) |
      (static_cast<unsigned int>(tccd_rt::f32_to_f16(b)) << 16);
}
__device__ __forceinline__ void store2_f32(void* p, long long e, float a, float b) {
  *reinterpret_cast<float2*>(static_cast<float*>(p) + e) = make_float2(a, b);
}
)";

void EmitParams(const PointwiseKernel& k, std::string& out) {
  const int operands = k.num_operands();
  const int rank = static_cast<int>(k.shape.size());
  absl::StrAppend(&out, "struct StridedParams {\n  char* ptr[", operands, "];\n  long long stride[",
                  operands, "][", rank, "];\n};\n");
  absl::StrAppend(&out, "static_assert(sizeof(StridedParams) == ", 8 * operands * (1 + rank),
                  ", \"parameter layout\");\n");
}

void EmitConv(const PointwiseKernel& k, const CudaDepthwiseTemplate& t, std::string& out) {
  const char* x = PairSuffix(k.input_dtypes[0]);
  const int out_operand = t.bias ? 3 : 2;
  const int64_t pairs = t.c / 2, runs = t.w / t.run, span = t.run + t.kw - 1;
  absl::StrAppend(&out, "extern \"C\" __global__ void __launch_bounds__(", kCudaBlockSize, ")\n",
                  k.name, "_dw(const tccd_kernel_", k.name, "::StridedParams p) {\n");
  absl::StrAppend(&out, "  using namespace tccd_kernel_", k.name, ";\n");
  absl::StrAppend(&out, "  const long long t = static_cast<long long>(blockIdx.x) * ",
                  kCudaBlockSize, " + threadIdx.x;\n  if (t >= ", t.threads, "LL) return;\n");
  absl::StrAppend(&out, "  // Lanes walk channel pairs, then map rows, runs of ", t.run,
                  " outputs along W, images: a block's\n  // threads share most of their "
                  "window rows, which they then read from L1.\n");
  absl::StrAppend(&out, "  const int c = static_cast<int>(t % ", pairs, ") * 2;\n");
  absl::StrAppend(&out, "  long long rest = t / ", pairs, ";\n");
  absl::StrAppend(&out, "  const int h = static_cast<int>(rest % ", t.h, ");\n  rest /= ", t.h,
                  ";\n");
  absl::StrAppend(&out, "  const int w0 = static_cast<int>(rest % ", runs, ") * ", t.run, ";\n");
  absl::StrAppend(&out, "  const long long image = (rest / ", runs, ") * ", t.h * t.w * t.c,
                  "LL;\n");
  absl::StrAppend(&out, "  float a0[", t.run, "], a1[", t.run, "];\n#pragma unroll\n",
                  "  for (int o = 0; o < ", t.run, "; ++o) a0[o] = a1[o] = 0.0f;\n");
  absl::StrAppend(&out, "#pragma unroll\n  for (int i = 0; i < ", t.kh, "; ++i) {\n");
  absl::StrAppend(&out, "    const int hx = h + i - ", t.kh / 2, ";\n");
  absl::StrAppend(&out, "    const bool row_ok = hx >= 0 && hx < ", t.h, ";\n");
  absl::StrAppend(&out, "    const long long row = image + static_cast<long long>(hx) * ",
                  t.w * t.c, "LL + c;\n");
  absl::StrAppend(&out, "    // The row's ", span,
                  " input columns, each loaded once (zero outside the map).\n");
  absl::StrAppend(&out, "    float x0[", span, "], x1[", span, "];\n#pragma unroll\n",
                  "    for (int u = 0; u < ", span, "; ++u) {\n");
  absl::StrAppend(&out, "      const int wx = w0 + u - ", t.kw / 2, ";\n");
  absl::StrAppend(&out, "      x0[u] = x1[u] = 0.0f;\n      if (row_ok && wx >= 0 && wx < ", t.w,
                  ") load2_", x, "(p.ptr[0], row + static_cast<long long>(wx) * ", t.c,
                  ", x0[u], x1[u]);\n    }\n");
  absl::StrAppend(&out, "#pragma unroll\n    for (int j = 0; j < ", t.kw, "; ++j) {\n");
  if (t.flip) {
    absl::StrAppend(&out, "      const int tap = (", t.kh - 1, " - i) * ", t.kw, " + (", t.kw - 1,
                    " - j);  // the flipped window\n");
  } else {
    absl::StrAppend(&out, "      const int tap = i * ", t.kw, " + j;\n");
  }
  absl::StrAppend(&out, "      float w0v, w1v;\n      load2_f32(p.ptr[1], static_cast<long long>(tap) * ",
                  t.c, " + c, w0v, w1v);\n");
  absl::StrAppend(&out, "#pragma unroll\n      for (int o = 0; o < ", t.run, "; ++o) {\n",
                  "        a0[o] = fmaf(x0[o + j], w0v, a0[o]);\n",
                  "        a1[o] = fmaf(x1[o + j], w1v, a1[o]);\n      }\n    }\n  }\n");
  if (t.bias) {
    absl::StrAppend(&out, "  float b0, b1;\n  load2_", PairSuffix(k.input_dtypes[2]),
                    "(p.ptr[2], c, b0, b1);\n");
  }
  absl::StrAppend(&out, "  const long long first = image + static_cast<long long>(h) * ",
                  t.w * t.c, "LL + static_cast<long long>(w0) * ", t.c, " + c;\n");
  absl::StrAppend(&out, "#pragma unroll\n  for (int o = 0; o < ", t.run, "; ++o)\n    store2_",
                  PairSuffix(k.output_dtypes[0]), "(p.ptr[", out_operand, "], first + o * ", t.c,
                  "LL, a0[o]", t.bias ? " + b0" : "", ", a1[o]", t.bias ? " + b1" : "",
                  ");\n}\n\n");
}

void EmitPartials(const PointwiseKernel& k, const CudaDepthwiseTemplate& t, std::string& out) {
  const char* x = PairSuffix(k.input_dtypes[0]);
  const int64_t pairs = t.c / 2, blocks = t.h / t.rows;
  absl::StrAppend(&out, "extern \"C\" __global__ void __launch_bounds__(", kCudaBlockSize, ")\n",
                  k.name, "_dw(const tccd_kernel_", k.name, "::StridedParams p) {\n");
  absl::StrAppend(&out, "  using namespace tccd_kernel_", k.name, ";\n");
  absl::StrAppend(&out, "  const long long t = static_cast<long long>(blockIdx.x) * ",
                  kCudaBlockSize, " + threadIdx.x;\n  if (t >= ", t.threads, "LL) return;\n");
  absl::StrAppend(&out, "  // Lanes walk channel pairs, then window rows i, row blocks, images.\n");
  absl::StrAppend(&out, "  const int c = static_cast<int>(t % ", pairs, ") * 2;\n");
  absl::StrAppend(&out, "  long long rest = t / ", pairs, ";\n");
  absl::StrAppend(&out, "  const int i = static_cast<int>(rest % ", t.kh, ");\n  rest /= ", t.kh,
                  ";\n");
  absl::StrAppend(&out, "  const int b = static_cast<int>(rest % ", blocks, ");\n");
  absl::StrAppend(&out, "  const long long n = rest / ", blocks, ";\n");
  absl::StrAppend(&out, "  const long long image = n * ", t.h * t.w * t.c, "LL;\n");
  absl::StrAppend(&out, "  float a0[", t.kw, "], a1[", t.kw, "];\n#pragma unroll\n",
                  "  for (int j = 0; j < ", t.kw, "; ++j) a0[j] = a1[j] = 0.0f;\n");
  absl::StrAppend(&out, "#pragma unroll 1\n  for (int r = 0; r < ", t.rows, "; ++r) {\n");
  absl::StrAppend(&out, "    const int h = b * ", t.rows, " + r, hx = h + i - ", t.kh / 2, ";\n");
  absl::StrAppend(&out, "    const bool row_ok = hx >= 0 && hx < ", t.h, ";\n");
  absl::StrAppend(&out, "    const long long grow = image + static_cast<long long>(h) * ",
                  t.w * t.c, "LL + c;\n");
  absl::StrAppend(&out, "    const long long xrow = image + static_cast<long long>(hx) * ",
                  t.w * t.c, "LL + c;\n");
  absl::StrAppend(&out,
                  "    // x's columns w - pw .. w + pw of row hx in registers, one new a column.\n");
  absl::StrAppend(&out, "    float x0[", t.kw, "], x1[", t.kw, "];\n#pragma unroll\n",
                  "    for (int u = 0; u < ", t.kw - 1, "; ++u) {\n");
  absl::StrAppend(&out, "      const int wx = u - ", t.kw / 2, ";\n");
  absl::StrAppend(&out, "      x0[u + 1] = x1[u + 1] = 0.0f;\n      if (row_ok && wx >= 0 && wx < ",
                  t.w, ") load2_", x, "(p.ptr[1], xrow + static_cast<long long>(wx) * ", t.c,
                  ", x0[u + 1], x1[u + 1]);\n    }\n");
  absl::StrAppend(&out, "#pragma unroll\n    for (int w = 0; w < ", t.w, "; ++w) {\n");
  absl::StrAppend(&out, "#pragma unroll\n      for (int u = 0; u + 1 < ", t.kw,
                  "; ++u) x0[u] = x0[u + 1], x1[u] = x1[u + 1];\n");
  absl::StrAppend(&out, "      const int wx = w + ", t.kw / 2, ";\n");
  absl::StrAppend(&out, "      x0[", t.kw - 1, "] = x1[", t.kw - 1, "] = 0.0f;\n",
                  "      if (row_ok && wx < ", t.w, ") load2_", x,
                  "(p.ptr[1], xrow + static_cast<long long>(wx) * ", t.c, ", x0[", t.kw - 1,
                  "], x1[", t.kw - 1, "]);\n");
  absl::StrAppend(&out, "      float g0, g1;\n      load2_", x, "(p.ptr[0], grow + w * ", t.c,
                  "LL, g0, g1);\n");
  absl::StrAppend(&out, "#pragma unroll\n      for (int j = 0; j < ", t.kw, "; ++j) {\n",
                  "        a0[j] = fmaf(g0, x0[j], a0[j]);\n",
                  "        a1[j] = fmaf(g1, x1[j], a1[j]);\n      }\n    }\n  }\n");
  absl::StrAppend(&out, "  // Partial (n, b, i, j, c).\n  const long long first = ((n * ", blocks,
                  "LL + b) * ", t.kh, " + i) * ", t.kw * t.c, "LL + c;\n");
  absl::StrAppend(&out, "#pragma unroll\n  for (int j = 0; j < ", t.kw,
                  "; ++j) store2_f32(p.ptr[2], first + j * ", t.c, "LL, a0[j], a1[j]);\n}\n\n");
}

}  // namespace

bool DepthwiseTemplatesEnabled() {
  static const bool on = [] {
    const char* v = std::getenv("TCCD_DEPTHWISE_TEMPLATES");
    return v == nullptr || std::string(v) != "0";
  }();
  return on;
}

std::optional<CudaDepthwiseTemplate> DepthwiseTemplateOf(const PointwiseKernel& k) {
  if (!DepthwiseTemplatesEnabled() || k.fused_ops.size() != 1 || k.is_row_reduction() ||
      k.is_tile() || HasRuntimeShape(k) || HasScatter(k))
    return std::nullopt;
  std::optional<CudaDepthwiseTemplate> t;
  if (k.fused_ops[0] == kDepthwiseConvTarget) t = ConvTemplateOf(k);
  if (k.fused_ops[0] == kDepthwiseWeightPartialsTarget) t = PartialsTemplateOf(k);
  if (!t || t->c < 2 || t->c % 2 != 0 || t->n < 1 || t->h < 1 || t->w < 1) return std::nullopt;
  t->grid = (t->threads + kCudaBlockSize - 1) / kCudaBlockSize;
  if (t->grid > 0x7fffffff) return std::nullopt;
  return t;
}

absl::Status EmitDepthwiseKernel(const PointwiseKernel& k, const CudaDepthwiseTemplate& t,
                                 std::string& out) {
  absl::StrAppend(&out, "\n// ", std::string(76, '-'), "\n", CudaIrComment(k));
  absl::StrAppend(
      &out, "// Depthwise template (cuda_depthwise_emitter.h): ",
      t.kind == CudaDepthwiseTemplate::Kind::kConv
          ? absl::StrCat(t.flip ? "input gradient" : "convolution", ", ", t.run,
                         " outputs along W x 2 channels a thread")
          : absl::StrCat("weight partials, ", t.rows, " rows a partial, one window row x ",
                         t.kw, " taps x 2 channels a thread"),
      "; map [", t.n, ", ", t.h, ", ", t.w, ", ", t.c, "], window ", t.kh, "x", t.kw, ".\n");
  absl::StrAppend(&out, "namespace tccd_kernel_", k.name, " {\n\n");
  EmitParams(k, out);
  out += kPairHelpers;
  absl::StrAppend(&out, "\n}  // namespace tccd_kernel_", k.name, "\n\n");
  if (t.kind == CudaDepthwiseTemplate::Kind::kConv) {
    EmitConv(k, t, out);
  } else {
    EmitPartials(k, t, out);
  }
  return absl::OkStatus();
}

}  // namespace tccd::codegen
