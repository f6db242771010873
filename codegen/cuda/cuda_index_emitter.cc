// Index-aware pointwise kernels (kIndex/kGather; "Index-aware kernels" in
// kernel/pointwise_kernel.h) -> CUDA C.
//
// Same entry points and parameter layout as every pointwise kernel (cuda_backend.h): <name>_contig
// takes the operand pointers, <name>_strided pointers and a [operands x rank] stride table. Both
// walk the points with a grid-stride loop, decompose the flat index into coordinates and run the
// body with them. Loads and stores use each operand's iteration-space offset; a gather computes
// its own address from its coordinates and its stride row. The contig entry runs only when every
// stride row is the row-major strides of the kernel's shape (the runtime checks it), so there the
// stride table is that constant.
//
// When the innermost size is a multiple of the vector (16 bytes of the largest operand), both
// entries first test (on parameters only, so uniformly over the grid) whether every load, store
// and vectorisable gather can take 128-bit accesses, and if so each thread runs kVec consecutive
// points along the innermost dim per index decomposition (PointVec, VectorPlan below): ViT's
// q/k/v stack reads three strided views and writes its [B, N, 3, H, D] output in storage order.
// Otherwise one element per thread and iteration, as before. A gather's lane coordinate may be
// c[L] plus a constant multiple of the vector, and its mask a bound on such a coordinate at a
// multiple of the vector (VectorPlan::UniformComparison): cat's parts (GPT-2's q/k/v gradients
// into [B, S, 3 x 768]) and split's are then 128-bit loads too.
//
// Fixed layouts (PointwiseKernel::fixed_strides, entry_points.h): a kernel whose plan launches
// it with one layout has only the contig entry, its stride table the declared strides (a gather
// operand's own) as constants, so the index math of every window point folds; its vector path
// takes 16 bytes of the narrowest per-lane operand (below, VectorPlan).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/cuda/cuda_backend.h"
#include "codegen/cuda/cuda_emitter.h"
#include "codegen/cuda/cuda_index_emitter.h"
#include "base/status_macros.h"

namespace tccd::codegen {
namespace {

using ir::DType;

std::string V(int i) { return absl::StrCat("v", i); }

// Philox4x32-10 (Salmon et al., Random123), first output word as a uniform float in [0, 1):
// emitted into the namespace of kernels that draw random numbers (kRandom).
constexpr char kPhilox[] =
    R"(__device__ __forceinline__ float PhiloxUniform(unsigned long long seed,
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

// The vector path of an index kernel (see the top of this file): each thread runs kVec
// consecutive points along the innermost dim L. Values that are the same on every lane
// ("uniform": constants, kIndex of other dims, gathers at uniform coordinates, bounds on c[L] at
// multiples of kVec) are computed once; the others per lane. A gather is *vectorised* when its
// mask is uniform and its coordinates are uniform except one that is kIndex(L) plus a multiple
// of kVec: its kVec lanes are then consecutive elements of the operand where that slot's stride
// is 1 (checked at launch), one vector access. Loads and stores are vector accesses (a load with
// stride 0 along L: one scalar broadcast).
// kScatterAdd (scatter kernels, "Scatter kernels" in kernel/pointwise_kernel.h): an atomic add of
// args[1] into the output at coordinates args[2..] through its own stride row (a statement; the
// caller tests the mask). Float atomics: the additions land in a run-dependent order.
template <typename Ref>
std::string ScatterAddStatement(const PwInstr& in, int n_in, const Ref& ref) {
  const int o = n_in + in.operand;
  std::string address;
  for (size_t a = 2; a < in.args.size(); ++a)
    absl::StrAppend(&address, a > 2 ? " + " : "", ref(in.args[a]), " * st[", o, "][", a - 2, "]");
  if (address.empty()) address = "0";
  return absl::StrCat("atomicAdd(reinterpret_cast<float*>(ptr[", o, "]) + (", address, "), ",
                      ref(in.args[1]), ")");
}

class VectorPlan {
 public:
  explicit VectorPlan(const PointwiseKernel& k)
      : k_(k), inner_(static_cast<int>(k.shape.size()) - 1) {
    // Two passes: the vector width depends on which accesses are per lane, and which values
    // are the same on every lane of a vector (a bound at a multiple of kVec) depends on the
    // width. The first pass takes no bound as uniform; the second, with that pass's width, may
    // find fewer per-lane accesses, never more, so the width stays valid (a wider one would be
    // valid too, but keeping it keeps the kernels of the first pass unchanged).
    Analyse(/*vec=*/0);
    const std::vector<int> first_slots = slot_;
    // Lanes: 16 bytes of the largest operand accessed per lane, as the plain pointwise kernels
    // (cuda_emitter.cc, GeometryOf); a gather at uniform coordinates (embedding's token id, i64)
    // reads one element per thread whatever its size.
    // A scatter's atomic adds count as its f32 target: 4 lanes, one 16-byte vector reduction
    // (ScatterRun below); 8 lanes of a bf16 gradient made two half-used 16-byte reductions.
    int largest = 1, narrowest = 16;
    for (size_t i = 0; i < k.body.size(); ++i) {
      const PwInstr& in = k.body[i];
      const bool per_lane =
          in.op == PwOp::kLoad || in.op == PwOp::kStore || (in.op == PwOp::kGather && lane_[i]);
      if (per_lane) largest = std::max(largest, ir::DTypeBytes(in.dtype));
      if (per_lane) narrowest = std::min(narrowest, ir::DTypeBytes(in.dtype));
      if (in.op == PwOp::kScatterAdd) largest = std::max(largest, ir::DTypeBytes(DType::kF32));
    }
    vec_ = 16 / largest;
    // The dense entry of a fixed layout (entry_points.h; never a scatter kernel) takes 16 bytes
    // of the narrowest per-lane operand, at most 8 lanes, where that width divides the innermost
    // size: a max pool's index math (the window's coordinates, masks and addresses, per vector)
    // then serves 8 bf16 channels instead of the 2 that its i64 indices allowed, and its bf16
    // gathers are 16-byte loads; the i64 lanes move as several 16-byte accesses. (8: the width
    // the max pools take, not yet measured on a GPU; a bool beside i64 would otherwise take 16
    // lanes, 128 bytes per thread.)
    const int wide = std::min(8, 16 / narrowest);
    if (!k.fixed_strides.empty() && wide > vec_ && !k.shape.empty() && k.shape.back() % wide == 0)
      vec_ = wide;
    if (vec_ > 1) Analyse(vec_);
    FindScatterRun();
    // A gather only the second pass vectorises tests its own layout at its access and reads lane
    // by lane where the test fails, instead of joining the kernel's test: before, the vector path
    // ran with such a gather read lane by lane whatever its layout, and must still.
    guarded_.assign(k.body.size(), false);
    for (size_t i = 0; i < k.body.size(); ++i) guarded_[i] = slot_[i] >= 0 && first_slots[i] < 0;
    // Lane values read lane by lane (a vectorised gather and the combined scatter read their lane
    // coordinate from c[L]):
    // the others are not emitted (an unused array is a compiler warning).
    per_lane_use_.assign(k.body.size(), false);
    for (size_t i = 0; i < k.body.size(); ++i) {
      const PwInstr& in = k.body[i];
      for (size_t a = 0; a < in.args.size(); ++a) {
        const bool lane_coordinate =
            (in.op == PwOp::kGather && slot_[i] >= 0 && static_cast<int>(a) == slot_[i] + 1) ||
            (static_cast<int>(i) == scatter_ && static_cast<int>(a) == scatter_slot_ + 2);
        if (!lane_coordinate) per_lane_use_[in.args[a]] = true;
      }
    }
    // What the stores (and a scatter kernel's atomic adds) need: a value read only as a
    // vectorised gather's lane coordinate (cat's c[L] - 768) is not emitted, and nor are the
    // constants only it reads.
    live_.assign(k.body.size(), false);
    for (size_t i = k.body.size(); i-- > 0;) {
      const PwInstr& in = k.body[i];
      if (in.op == PwOp::kStore || in.op == PwOp::kScatterAdd) live_[i] = true;
      if (!live_[i]) continue;
      for (size_t a = 0; a < in.args.size(); ++a)
        if (!(in.op == PwOp::kGather && slot_[i] >= 0 && static_cast<int>(a) == slot_[i] + 1))
          live_[in.args[a]] = true;
    }
  }

  int vec() const { return vec_; }

  // Whether the vector path combines the kernel's scatter adds (ScatterRun in the entry): its
  // only kScatterAdd has a uniform mask and target row, and kIndex(L) as its lane coordinate.
  bool CombinesScatter() const { return scatter_ >= 0; }

  // Rows (points of the dims before L) that one thread of the combining path walks at one
  // vector of columns, adding into registers while consecutive rows hit the same target: where
  // the values have many more rows than the output (BERT's token-type embedding: 8192 token rows
  // into 2), the atomics to one address are what costs (H200, session 9: 368 us for that
  // [16, 512, 768] -> [2, 768] gradient, serialised in L2); combining R rows cuts them R times.
  // Capped at 32, and so that at least 64 K threads of work remain (a wave of an H100 is about
  // 270 K threads); 1 where the output has as many rows as the values (no repeated targets to
  // expect: the word embedding).
  int64_t RunRows() const {
    const int64_t cols = k_.shape.back();
    const int64_t rows = NumPoints() / cols;
    const int64_t targets = std::max<int64_t>(1, k_.scatter_elements / cols);
    const int64_t work = rows * (cols / vec_);
    const int64_t run = std::clamp<int64_t>(rows / targets, 1, 32);
    return std::max<int64_t>(1, std::min(run, work / 65536));
  }

  // ScatterAcc and Flush (namespace scope, before PointVec): what one thread of the combining
  // path holds, and its atomic adds into the output. sm_90 has vector reductions
  // (red.global.add.v4.f32, PTX 8.1): one 16-byte request per thread where the lanes are
  // consecutive floats at an aligned address, so that a warp's requests are 512 contiguous bytes
  // (four full 128-byte lines); scalar atomics per lane elsewhere.
  std::string ScatterHelpers() const {
    std::string regs, operands;
    for (int j = 0; j < vec_; ++j) {
      absl::StrAppend(&regs, j ? ", " : "", "%", j + 1);
      absl::StrAppend(&operands, ", \"f\"(a.v[", j, "])");
    }
    return absl::StrCat(
        "// A thread's pending adds: v[j] goes to addr[j * step] (addr null: none held); whole:\n",
        "// the lanes are consecutive aligned floats (one vector reduction).\n",
        "struct ScatterAcc {\n  float* addr;\n  long long step;\n  bool whole;\n  float v[", vec_,
        "];\n};\n\n", "__device__ __forceinline__ void Flush(ScatterAcc& a) {\n",
        "  if (a.addr == nullptr) return;\n#if __CUDA_ARCH__ >= 900\n  if (a.whole) {\n",
        "    asm volatile(\"red.global.add.v", vec_, ".f32 [%0], {", regs, "};\" ::\"l\"(a.addr)",
        operands, ");\n  } else\n#endif\n  {\n#pragma unroll\n", "    for (int j = 0; j < ", vec_,
        "; ++j) atomicAdd(a.addr + j * a.step, a.v[j]);\n  }\n", "  a.addr = nullptr;\n}\n\n");
  }

  // The launch-time parts of a ScatterAcc over the stride table `st` and the pointers `ptr`:
  // its step (the output's stride along the lane coordinate) and whether the vector reduction
  // applies (step 1, an aligned base, the other strides multiples of kVec).
  std::string ScatterStep(const std::string& st) const {
    return absl::StrCat(st, "[", ScatterOperand(), "][", scatter_slot_, "]");
  }
  std::string ScatterWhole(const std::string& st, const std::string& ptr) const {
    const int o = ScatterOperand();
    const int slots = static_cast<int>(k_.body[scatter_].args.size()) - 2;
    return absl::StrCat("(", ScatterStep(st), " == 1 && ", Aligned(o, ptr),
                        Multiples(o, scatter_slot_, slots, false, st), ")");
  }

  // Whether the kernel has a vector path: a vector of several elements that divides the
  // innermost size (each thread's first lane is then at a multiple of kVec along L).
  bool Applies() const {
    return vec_ > 1 && !k_.shape.empty() && !HasRuntimeShape(k_) && k_.shape.back() % vec_ == 0;
  }

  // The launch-time test for the vector path over the stride table `st` and the pointers `ptr`
  // (expressions of the entry point).
  std::string Condition(const std::string& st, const std::string& ptr) const {
    const int n_in = static_cast<int>(k_.input_dtypes.size());
    const int rank = static_cast<int>(k_.shape.size());
    std::vector<std::string> terms;
    auto aligned = [&](int o) { return Aligned(o, ptr); };
    auto multiples = [&](int o, int unit, int slots, bool space) {
      return Multiples(o, unit, slots, space, st);
    };
    for (size_t i = 0; i < k_.body.size(); ++i) {
      const PwInstr& in = k_.body[i];
      if (in.op == PwOp::kGather && slot_[i] >= 0) {
        if (!guarded_[i]) terms.push_back(GatherCondition(i, st, ptr));
      } else if (in.op == PwOp::kLoad) {
        terms.push_back(absl::StrCat("(", st, "[", in.operand, "][", inner_, "] == 0 || (", st, "[",
                                     in.operand, "][", inner_, "] == 1 && ", aligned(in.operand),
                                     multiples(in.operand, inner_, rank, true), "))"));
      } else if (in.op == PwOp::kStore) {
        const int o = n_in + in.operand;
        terms.push_back(absl::StrCat("(", st, "[", o, "][", inner_, "] == 1 && ", aligned(o),
                                     multiples(o, inner_, rank, true), ")"));
      }
    }
    if (terms.empty()) return "true";
    return absl::StrJoin(terms, " &&\n      ");
  }

  // PointVec(): the body for kVec points from coordinates c (the first lane's), the operands'
  // offsets off (the first lane's) and the first lane's flat index.
  absl::Status EmitPointVec(std::string& out) const {
    const int n_in = static_cast<int>(k_.input_dtypes.size());
    const int rank = static_cast<int>(k_.shape.size());
    absl::StrAppend(
        &out, "__device__ __forceinline__ void PointVec(char* const* ptr, const long long (*st)[",
        rank, "], const long long* c, const long long* off, unsigned long long flat",
        CombinesScatter() ? ", ScatterAcc& acc" : "", ") {\n", "  constexpr int kVec = ", vec_,
        ";\n");
    auto ref = [&](int v) { return lane_[v] ? absl::StrCat("v", v, "[j]") : absl::StrCat("v", v); };
    // "for each lane j" at `indent`; the pragma at column 0, as everywhere in the generated code.
    auto lanes_at = [](const std::string& indent) {
      return absl::StrCat("#pragma unroll\n", indent, "for (int j = 0; j < kVec; ++j) ");
    };
    const std::string lanes = lanes_at("  ");
    for (size_t i = 0; i < k_.body.size(); ++i) {
      const PwInstr& in = k_.body[i];
      const DType d = in.dtype;
      const std::string v = absl::StrCat("v", i);
      const std::string mem = CudaMemType(d);
      // A memory element as a register value.
      auto reg = [&](const std::string& e) {
        return d == DType::kBool ? absl::StrCat("(", e, " != 0)") : e;
      };
      if (in.op == PwOp::kScatterAdd && static_cast<int>(i) == scatter_) {
        // Into the thread's pending adds while the target is the same (consecutive rows of the
        // combining path), else those go out first (Flush).
        std::string address;
        for (size_t a = 2; a < in.args.size(); ++a) {
          const std::string coord = static_cast<int>(a) - 2 == scatter_slot_
                                        ? absl::StrCat("c[", inner_, "]")
                                        : ref(in.args[a]);
          absl::StrAppend(&address, a > 2 ? " + " : "", coord, " * st[", n_in + in.operand, "][",
                          a - 2, "]");
        }
        absl::StrAppend(&out, "  if (", ref(in.args[0]),
                        ") {\n    float* const a = ", "reinterpret_cast<float*>(ptr[",
                        n_in + in.operand, "]) + (", address, ");\n    if (a == acc.addr) {\n",
                        lanes_at("      "), "acc.v[j] += ", ref(in.args[1]),
                        ";\n    } else {\n      Flush(acc);\n", "      acc.addr = a;\n",
                        lanes_at("      "), "acc.v[j] = ", ref(in.args[1]), ";\n    }\n  }\n");
        continue;
      }
      if (in.op == PwOp::kScatterAdd) {
        // One atomic per lane (a scatter whose lanes' targets need not be consecutive).
        absl::StrAppend(&out, lanes, "{\n    if (", ref(in.args[0]), ") ",
                        ScatterAddStatement(in, n_in, ref), ";\n  }\n");
        continue;
      }
      if (in.op == PwOp::kStore) {
        const int o = n_in + in.operand;
        const std::string val =
            d == DType::kBool ? absl::StrCat("(unsigned char)", ref(in.args[0])) : ref(in.args[0]);
        // One store instruction for the whole vector (as the row emitter's store_whole): a Vec
        // assembled lane by lane was stored in 2-byte pieces by NVRTC 13 (ViT's stack: 8 x
        // st.global.u16 per thread), even when copied out as one uint4.
        const int bytes = vec_ * ir::DTypeBytes(d);
        const std::string address =
            absl::StrCat("reinterpret_cast<", mem, "*>(ptr[", o, "]) + off[", o, "]");
        absl::StrAppend(&out, "  {\n    tccd_rt::Vec<", mem, ", kVec> s;\n", lanes_at("    "),
                        "s.v[j] = ", val, ";\n");
        if (bytes > 16 && bytes % 16 == 0) {
          // Wide lanes (the fixed-layout dense entry's vector of i64 indices): 16-byte pieces.
          absl::StrAppend(
              &out, "    const uint4* w = reinterpret_cast<const uint4*>(&s);\n",
              "    char* const a = reinterpret_cast<char*>(", address, ");\n",
              "#pragma unroll\n    for (int q = 0; q < ", bytes / 16, "; ++q)\n",
              "      asm volatile(\"st.global.v4.b32 [%0], {%1, %2, %3, %4};\" ::\"l\"(",
              "a + 16 * q), \"r\"(w[q].x), \"r\"(w[q].y), \"r\"(w[q].z), ",
              "\"r\"(w[q].w) : \"memory\");\n");
        } else if (bytes == 16) {
          absl::StrAppend(&out, "    const uint4 w = *reinterpret_cast<const uint4*>(&s);\n",
                          "    asm volatile(\"st.global.v4.b32 [%0], {%1, %2, %3, %4};\" ::\"l\"(",
                          address,
                          "), \"r\"(w.x), \"r\"(w.y), \"r\"(w.z), \"r\"(w.w) : \"memory\");\n");
        } else if (bytes == 8) {
          absl::StrAppend(&out, "    const uint2 w = *reinterpret_cast<const uint2*>(&s);\n",
                          "    asm volatile(\"st.global.v2.b32 [%0], {%1, %2};\" ::\"l\"(", address,
                          "), \"r\"(w.x), \"r\"(w.y) : \"memory\");\n");
        } else {
          absl::StrAppend(&out, "    *reinterpret_cast<tccd_rt::Vec<", mem, ", kVec>*>(", address,
                          ") = s;\n");
        }
        absl::StrAppend(&out, "  }\n");
        continue;
      }
      if (!live_[i]) continue;
      if (!lane_[i]) {
        // A uniform comparison reads its per-lane operand at lane 0 (every lane agrees).
        auto ref0 = [&](int v) {
          return lane_[v] ? absl::StrCat("v", v, "[0]") : absl::StrCat("v", v);
        };
        std::string expr;
        if (in.op == PwOp::kIndex) {
          expr = absl::StrCat("c[", in.operand, "]");
        } else if (in.op == PwOp::kGather) {
          expr = ScalarGather(in, ref);
        } else {
          expr = CudaInstrExpr(k_, i, ref0);
        }
        if (expr.empty()) return NoLowering(i);
        absl::StrAppend(&out, "  const ", CudaRegType(d), " ", v, " = ", expr, ";\n");
        continue;
      }
      if (!per_lane_use_[i]) continue;
      absl::StrAppend(&out, "  ", CudaRegType(d), " ", v, "[kVec];\n");
      if (in.op == PwOp::kLoad) {
        const int o = in.operand;
        absl::StrAppend(&out, "  if (st[", o, "][", inner_, "] == 0) {\n    const ", mem,
                        " s = reinterpret_cast<const ", mem, "*>(ptr[", o, "])[off[", o, "]];\n",
                        lanes_at("    "), v, "[j] = ", reg("s"), ";\n  } else {\n",
                        "    const tccd_rt::Vec<", mem,
                        ", kVec> a = *reinterpret_cast<const tccd_rt::Vec<", mem,
                        ", kVec>*>(reinterpret_cast<const ", mem, "*>(ptr[", o, "]) + off[", o,
                        "]);\n", lanes_at("    "), v, "[j] = ", reg("a.v[j]"), ";\n  }\n");
      } else if (in.op == PwOp::kIndex) {
        absl::StrAppend(&out, lanes, v, "[j] = c[", in.operand, "] + j;\n");
      } else if (in.op == PwOp::kRandom) {
        absl::StrAppend(&out, lanes, v, "[j] = PhiloxUniform(static_cast<unsigned long long>(",
                        ref(in.args[0]), "), static_cast<unsigned long long>(", ref(in.args[1]),
                        "), flat + j);\n");
      } else if (in.op == PwOp::kGather && slot_[i] >= 0) {
        // The first lane's address: the lane coordinate is c[L] there.
        std::string address;
        for (size_t a = 1; a < in.args.size(); ++a) {
          const std::string coord =
              !lane_[in.args[a]]     ? ref(in.args[a])
              : lane_offset_[i] == 0 ? absl::StrCat("c[", inner_, "]")
                                     : absl::StrCat("(c[", inner_, "] + ", lane_offset_[i], "ll)");
          absl::StrAppend(&address, a > 1 ? " + " : "", coord, " * st[", in.operand, "][", a - 1,
                          "]");
        }
        if (!guarded_[i]) {
          absl::StrAppend(&out, "  {\n    tccd_rt::Vec<", mem, ", kVec> g;\n    if (",
                          ref(in.args[0]), ") {\n      g = *reinterpret_cast<const tccd_rt::Vec<",
                          mem, ", kVec>*>(reinterpret_cast<const ", mem, "*>(ptr[", in.operand,
                          "]) + ", address, ");\n    } else {\n", lanes_at("      "),
                          "g.v[j] = 0;\n    }\n", lanes_at("    "), v, "[j] = ", reg("g.v[j]"),
                          ";\n  }\n");
        } else {
          // Its own test (uniform: parameters only); lane by lane from the first lane's address
          // where it fails.
          absl::StrAppend(
              &out, "  {\n    tccd_rt::Vec<", mem, ", kVec> g;\n    if (", ref(in.args[0]),
              ") {\n      const ", mem, "* a = reinterpret_cast<const ", mem, "*>(ptr[", in.operand,
              "]) + ", address, ";\n      if (", GatherCondition(i, "st", "ptr"),
              ") {\n        g = *reinterpret_cast<const tccd_rt::Vec<", mem,
              ", kVec>*>(a);\n      } else {\n", lanes_at("        "), "g.v[j] = a[j * st[",
              in.operand, "][", slot_[i], "]];\n      }\n    } else {\n", lanes_at("      "),
              "g.v[j] = 0;\n    }\n", lanes_at("    "), v, "[j] = ", reg("g.v[j]"), ";\n  }\n");
        }
      } else {
        const std::string expr =
            in.op == PwOp::kGather ? ScalarGather(in, ref) : CudaInstrExpr(k_, i, ref);
        if (expr.empty()) return NoLowering(i);
        absl::StrAppend(&out, lanes, v, "[j] = ", expr, ";\n");
      }
    }
    absl::StrAppend(&out, "}\n\n");
    return absl::OkStatus();
  }

 private:
  // Operand o's address `ptr`[o] a multiple of the vector's bytes, or of 16 where the vector is
  // wider (the wide lanes of a fixed layout move in 16-byte pieces: tccd_rt::Vec's alignment).
  std::string Aligned(int o, const std::string& ptr) const {
    const ir::DType d = k_.operand_dtype(o);
    if (vec_ * ir::DTypeBytes(d) > 16)
      return absl::StrCat("reinterpret_cast<unsigned long long>(", ptr, "[", o, "]) % 16 == 0");
    return absl::StrCat("reinterpret_cast<unsigned long long>(", ptr, "[", o,
                        "]) % (kVec * sizeof(", CudaMemType(d), ")) == 0");
  }

  // " && " the strides of operand o but slot `unit`'s, over `slots` slots, multiples of kVec
  // (for iteration-space rows, dims of size 1 are skipped: their coordinate is always 0).
  std::string Multiples(int o, int unit, int slots, bool space, const std::string& st) const {
    std::string c;
    for (int d = 0; d < slots; ++d)
      if (d != unit && !(space && k_.shape[d] == 1))
        absl::StrAppend(&c, " && ", st, "[", o, "][", d, "] % kVec == 0");
    return c;
  }

  // Vectorised gather i reads its kVec lanes as one aligned vector: stride 1 in its lane slot,
  // an aligned base and its other strides multiples of kVec.
  std::string GatherCondition(size_t i, const std::string& st, const std::string& ptr) const {
    const PwInstr& in = k_.body[i];
    return absl::StrCat(
        "(", st, "[", in.operand, "][", slot_[i], "] == 1 && ", Aligned(in.operand, ptr),
        Multiples(in.operand, slot_[i], static_cast<int>(in.args.size()) - 1, false, st), ")");
  }

  // lane_, slot_ and lane_offset_ for vectors of `vec` lanes (0: before the width is known).
  // A value is per lane when it may differ between the lanes of one vector: kIndex(L), loads,
  // draws and what reads them, except a comparison of an affine coordinate c[L] + j + k with a
  // constant that, the first lane being at a multiple of vec, no vector straddles (cat's and
  // split's part bounds: `c[L] < 768`, or `c[L] - 768 >= 0`): that one is uniform.
  void Analyse(int vec) {
    const size_t n = k_.body.size();
    lane_.assign(n, false);
    slot_.assign(n, -1);
    lane_offset_.assign(n, 0);
    affine_.assign(n, std::nullopt);
    for (size_t i = 0; i < n; ++i) {
      const PwInstr& in = k_.body[i];
      affine_[i] = AffineOffset(in);
      bool lane = (in.op == PwOp::kIndex && in.operand == inner_) || in.op == PwOp::kLoad ||
                  in.op == PwOp::kRandom;
      for (int a : in.args) lane = lane || lane_[a];
      if (lane && vec > 1 && UniformComparison(in, vec)) lane = false;
      lane_[i] = lane && in.op != PwOp::kStore && in.op != PwOp::kScatterAdd;
      if (in.op != PwOp::kGather || !lane_[i] || lane_[in.args[0]]) continue;
      // Vectorised: one lane coordinate, c[L] + k with the first lane's address aligned as
      // c[L]'s (k a multiple of the width; 0 while the width is unknown).
      int slot = -1;
      bool ok = true;
      for (size_t a = 1; a < in.args.size(); ++a) {
        if (!lane_[in.args[a]]) continue;
        const std::optional<int64_t>& k = affine_[in.args[a]];
        ok = ok && slot < 0 && k.has_value() && (vec > 1 ? *k % vec == 0 : *k == 0);
        slot = static_cast<int>(a) - 1;
        if (ok) lane_offset_[i] = *k;
      }
      if (ok && slot >= 0) slot_[i] = slot;
    }
  }

  // The integer constant `v` holds, if it is one.
  std::optional<int64_t> IntConstant(int v) const {
    const PwInstr& c = k_.body[v];
    if (c.op != PwOp::kConstant || !ir::IsIntegral(c.dtype)) return std::nullopt;
    return c.ivalue;
  }

  // k where `in` is c[L] + j + k on lane j: kIndex(L) (k = 0), and such a value plus or minus an
  // integer constant. Uses affine_ of earlier values.
  std::optional<int64_t> AffineOffset(const PwInstr& in) const {
    if (in.op == PwOp::kIndex)
      return in.operand == inner_ ? std::optional<int64_t>(0) : std::nullopt;
    if ((in.op != PwOp::kAdd && in.op != PwOp::kSub) || in.args.size() != 2 ||
        !ir::IsIntegral(in.dtype))
      return std::nullopt;
    const std::optional<int64_t> a = affine_[in.args[0]], b = affine_[in.args[1]];
    const std::optional<int64_t> ca = IntConstant(in.args[0]), cb = IntConstant(in.args[1]);
    if (a && cb) return in.op == PwOp::kAdd ? *a + *cb : *a - *cb;
    if (ca && b && in.op == PwOp::kAdd) return *b + *ca;
    return std::nullopt;
  }

  // Whether `in` compares an affine value c[L] + j + k with an integer constant C so that all
  // `vec` lanes of a vector (c[L] a multiple of vec) get the same result: x < C and x >= C when
  // C - k is a multiple of vec, x <= C and x > C when C + 1 - k is.
  bool UniformComparison(const PwInstr& in, int vec) const {
    if (in.args.size() != 2) return false;
    PwOp op = in.op;
    std::optional<int64_t> k = affine_[in.args[0]], c = IntConstant(in.args[1]);
    if (!(k && c)) {
      k = affine_[in.args[1]];
      c = IntConstant(in.args[0]);
      if (!(k && c)) return false;
      // C op x -> x op' C.
      switch (op) {
        case PwOp::kLt:
          op = PwOp::kGt;
          break;
        case PwOp::kLe:
          op = PwOp::kGe;
          break;
        case PwOp::kGt:
          op = PwOp::kLt;
          break;
        case PwOp::kGe:
          op = PwOp::kLe;
          break;
        default:
          return false;
      }
    }
    switch (op) {
      case PwOp::kLt:
      case PwOp::kGe:
        return (*c - *k) % vec == 0;
      case PwOp::kLe:
      case PwOp::kGt:
        return (*c + 1 - *k) % vec == 0;
      default:
        return false;
    }
  }

  // mask ? operand[coordinates . strides] : 0, with values spelled by `ref`.
  template <typename Ref>
  std::string ScalarGather(const PwInstr& in, const Ref& ref) const {
    std::string address;
    for (size_t a = 1; a < in.args.size(); ++a)
      absl::StrAppend(&address, a > 1 ? " + " : "", ref(in.args[a]), " * st[", in.operand, "][",
                      a - 1, "]");
    if (address.empty()) address = "0";
    std::string expr = absl::StrCat("reinterpret_cast<const ", CudaMemType(in.dtype), "*>(ptr[",
                                    in.operand, "])[", address, "]");
    if (in.dtype == DType::kBool) expr = absl::StrCat("(", expr, " != 0)");
    return absl::StrCat(ref(in.args[0]), " ? ", expr, " : ",
                        in.dtype == DType::kBool
                            ? "false"
                            : absl::StrCat("static_cast<", CudaRegType(in.dtype), ">(0)"));
  }

  // The scatter the combining path runs, if any: see CombinesScatter().
  void FindScatterRun() {
    if (!Applies()) return;
    int found = -1;
    for (size_t i = 0; i < k_.body.size(); ++i) {
      if (k_.body[i].op != PwOp::kScatterAdd) continue;
      if (found >= 0) return;  // two scatters: each keeps its per-lane atomics
      found = static_cast<int>(i);
    }
    if (found < 0) return;
    const PwInstr& in = k_.body[found];
    if (lane_[in.args[0]]) return;
    int slot = -1;
    for (size_t a = 2; a < in.args.size(); ++a) {
      if (!lane_[in.args[a]]) continue;
      const std::optional<int64_t>& k = affine_[in.args[a]];
      if (slot >= 0 || !k.has_value() || *k != 0) return;
      slot = static_cast<int>(a) - 2;
    }
    if (slot < 0) return;
    scatter_ = found;
    scatter_slot_ = slot;
  }

  int ScatterOperand() const {
    return static_cast<int>(k_.input_dtypes.size()) + k_.body[scatter_].operand;
  }

  int64_t NumPoints() const {
    int64_t n = 1;
    for (int64_t d : k_.shape) n *= d;
    return n;
  }

  absl::Status NoLowering(size_t i) const {
    return absl::InternalError(absl::StrCat("no CUDA lowering for ", PwOpName(k_.body[i].op),
                                            " at %", i, " in kernel '", k_.name, "'"));
  }

  const PointwiseKernel& k_;
  int inner_;
  int vec_ = 1;
  std::vector<bool> lane_;  // per value: may differ between the lanes of a vector
  std::vector<int> slot_;   // per vectorised gather: its coordinate slot that is c[L] + k; else -1
  std::vector<int64_t> lane_offset_;  // per vectorised gather: that k (a multiple of vec_)
  std::vector<bool> guarded_;  // per vectorised gather: tests its own layout (see the constructor)
  std::vector<std::optional<int64_t>> affine_;  // per value: k where it is c[L] + j + k
  std::vector<bool> per_lane_use_;              // per value: some instruction reads it lane by lane
  std::vector<bool> live_;  // per value: the stores need it (see the constructor)
  int scatter_ = -1;        // the scatter the combining path runs (FindScatterRun), or -1
  int scatter_slot_ = -1;   // its coordinate slot that is kIndex(L)
};

}  // namespace

absl::Status EmitIndexKernel(const PointwiseKernel& k, std::string& out) {
  const int n_in = static_cast<int>(k.input_dtypes.size());
  const int num_operands = k.num_operands();
  const int rank = static_cast<int>(k.shape.size());
  if (rank == 0) return absl::UnimplementedError("index-aware kernel '" + k.name + "' has rank 0");
  const CudaKernelGeometry geo = GeometryOf(k);
  const std::string ns = "tccd_kernel_" + k.name;
  const char* index_type = geo.index64 ? "unsigned long long" : "unsigned int";
  // Run-time sizes (symbolic plans' embeddings, symbolic_kernels.h): the strided entry only,
  // every dim's size after the strides (as pointwise kernels take them, cuda_backend.h).
  if (geo.runtime_shape && k.has_dense_entry())
    return absl::UnimplementedError("index-aware kernel '" + k.name +
                                    "' has run-time sizes and a contig entry");
  const std::string numel =
      geo.runtime_shape ? "kNumel" : absl::StrCat(geo.numel, geo.index64 ? "ull" : "u");
  // The launch geometry stays one element per thread (geo.vec is 1 for index kernels: the grid
  // and the entry choice do not change); the vector path's grid-stride loop covers the rest.
  const VectorPlan plan(k);
  const bool vector_path = plan.Applies();
  const int vec = plan.vec();

  absl::StrAppend(&out, "\n// ", std::string(76, '-'), "\n", CudaIrComment(k));
  absl::StrAppend(&out, "namespace ", ns, " {\n\n", "typedef ", index_type, " Index;\n\n");
  absl::StrAppend(&out, "struct ContigParams {\n  char* ptr[", num_operands, "];\n",
                  geo.runtime_shape ? "  long long numel;\n" : "", "};\n");
  absl::StrAppend(&out, "struct StridedParams {\n  char* ptr[", num_operands,
                  "];\n  long long stride[", num_operands, "][", rank, "];\n",
                  geo.runtime_shape ? absl::StrCat("  long long size[", rank,
                                                   "];  // run-time sizes, every dim\n")
                                    : "",
                  "};\n");
  absl::StrAppend(&out, "static_assert(sizeof(ContigParams) == ", geo.contig_param_bytes,
                  ", \"parameter layout\");\n");
  absl::StrAppend(&out, "static_assert(sizeof(StridedParams) == ", geo.strided_param_bytes,
                  ", \"parameter layout\");\n\n");

  bool random = false;
  for (const PwInstr& in : k.body) random |= in.op == PwOp::kRandom;
  if (random) absl::StrAppend(&out, kPhilox);
  // Point(): the body at coordinates c (flat: their row-major index), with element offsets off
  // (loads and stores) and the stride table st (gathers).
  absl::StrAppend(
      &out, "__device__ __forceinline__ void Point(char* const* ptr, const long long (*st)[", rank,
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
          absl::StrAppend(&address, a > 1 ? " + " : "", V(in.args[a]), " * st[", in.operand, "][",
                          a - 1, "]");
        if (address.empty()) address = "0";
      }
      expr = absl::StrCat("reinterpret_cast<const ", CudaMemType(d), "*>(ptr[", in.operand, "])[",
                          address, "]");
      if (d == DType::kBool) expr = absl::StrCat("(", expr, " != 0)");
      if (in.op == PwOp::kGather) {
        expr = absl::StrCat(
            V(in.args[0]), " ? ", expr, " : ",
            d == DType::kBool ? "false" : absl::StrCat("static_cast<", CudaRegType(d), ">(0)"));
      }
    } else if (in.op == PwOp::kIndex) {
      expr = absl::StrCat("c[", in.operand, "]");
    } else if (in.op == PwOp::kRandom) {
      expr = absl::StrCat("PhiloxUniform(static_cast<unsigned long long>(", V(in.args[0]),
                          "), static_cast<unsigned long long>(", V(in.args[1]), "), flat)");
    } else if (in.op == PwOp::kScatterAdd) {
      absl::StrAppend(&out, "  if (", V(in.args[0]), ") ",
                      ScatterAddStatement(in, n_in, [](int v) { return V(v); }), ";\n");
      continue;
    } else if (in.op == PwOp::kStore) {
      const int o = n_in + in.operand;
      absl::StrAppend(
          &out, "  reinterpret_cast<", CudaMemType(d), "*>(ptr[", o, "])[off[", o, "]] = ",
          d == DType::kBool ? absl::StrCat("(unsigned char)", V(in.args[0])) : V(in.args[0]),
          ";\n");
      continue;
    } else {
      expr = CudaInstrExpr(k, i, [](int v) { return V(v); });
    }
    if (expr.empty()) {
      return absl::InternalError(absl::StrCat("no CUDA lowering for ", PwOpName(in.op), " at %", i,
                                              " in kernel '", k.name, "'"));
    }
    absl::StrAppend(&out, "  const ", CudaRegType(d), " ", V(static_cast<int>(i)), " = ", expr,
                    ";\n");
  }
  absl::StrAppend(&out, "}\n\n");
  if (vector_path && plan.CombinesScatter()) absl::StrAppend(&out, plan.ScatterHelpers());
  if (vector_path) RETURN_IF_ERROR(plan.EmitPointVec(out));

  // Coordinates of flat index `flat` (row-major), into c[].
  auto decompose = [&](std::string& s, const std::string& indent, const std::string& flat) {
    absl::StrAppend(&s, indent, "long long c[", rank, "];\n", indent, "Index rest = ", flat, ";\n");
    for (int d = rank - 1; d >= 0; --d) {
      if (d == 0) {
        absl::StrAppend(&s, indent, "c[0] = static_cast<long long>(rest);\n");
      } else {
        const std::string size = k.shape[d] == kRuntimeDim
                                     ? absl::StrCat("static_cast<Index>(p.size[", d, "])")
                                     : absl::StrCat(k.shape[d], geo.index64 ? "ull" : "u");
        absl::StrAppend(&s, indent, "c[", d, "] = static_cast<long long>(rest % ", size, ");\n",
                        indent, "rest /= ", size, ";\n");
      }
    }
  };
  // The contig entry's stride table: row-major strides of the shape, or a fixed-layout
  // operand's declared ones (PointwiseKernel::fixed_strides; a gather operand's own strides).
  std::string row_major = "{";
  {
    std::vector<int64_t> s(rank);
    int64_t acc = 1;
    for (int d = rank - 1; d >= 0; --d) {
      s[d] = k.shape[d] == 1 ? 0 : acc;
      acc *= k.shape[d];
    }
    for (int o = 0; o < num_operands; ++o) {
      // A gather operand's row verbatim even where only dims of size 1 (which
      // IsFixedLayoutOperand skips) differ: its coordinate there need not be 0.
      const bool declared = IsFixedLayoutOperand(k, o) ||
                            (!k.fixed_strides.empty() && o < n_in && IsGatherOperand(k, o));
      std::string row = "{";
      for (int d = 0; d < rank; ++d)
        absl::StrAppend(&row, d ? ", " : "", declared ? k.fixed_strides[o * rank + d] : s[d], "ll");
      absl::StrAppend(&row_major, o ? ", " : "", row, "}");
    }
    row_major += "}";
  }
  absl::StrAppend(&out, "}  // namespace ", ns, "\n\n");
  for (const bool strided : {false, true}) {
    if (strided ? !k.has_strided_entry() : !k.has_dense_entry()) continue;
    absl::StrAppend(&out, "extern \"C\" __global__ void __launch_bounds__(", kCudaBlockSize, ")\n",
                    k.name, strided ? "_strided" : "_contig", "(const ", ns,
                    "::", strided ? "StridedParams" : "ContigParams", " p) {\n");
    if (geo.numel == 0) {
      absl::StrAppend(&out, "  // numel is 0: nothing to do (GridSize gives 0 blocks).\n}\n\n");
      continue;
    }
    absl::StrAppend(&out, "  using namespace ", ns, ";\n");
    if (!strided)
      absl::StrAppend(&out, "  const long long st[", num_operands, "][", rank, "] = ", row_major,
                      ";\n");
    absl::StrAppend(&out,
                    "  const Index num_threads = static_cast<Index>(gridDim.x) * blockDim.x;\n");
    if (geo.runtime_shape) {
      std::string product;
      for (int d = 0; d < rank; ++d)
        absl::StrAppend(&product, d ? " * " : "",
                        k.shape[d] == kRuntimeDim
                            ? absl::StrCat("static_cast<Index>(p.size[", d, "])")
                            : absl::StrCat(k.shape[d], "ull"));
      absl::StrAppend(&out, "  const Index kNumel = ", product, ";\n");
    }
    // Offsets of every operand at coordinates c (flat index `flat` in the contig entry).
    auto offsets = [&](const std::string& indent, const std::string& flat) {
      std::string s = absl::StrCat(indent, "long long off[", num_operands, "];\n");
      if (strided) {
        absl::StrAppend(&s, "#pragma unroll\n", indent, "for (int o = 0; o < ", num_operands,
                        "; ++o) {\n", indent, "  off[o] = 0;\n#pragma unroll\n", indent,
                        "  for (int d = 0; d < ", rank, "; ++d) off[o] += c[d] * p.stride[o][d];\n",
                        indent, "}\n");
      } else if (k.fixed_strides.empty()) {
        absl::StrAppend(&s, "#pragma unroll\n", indent, "for (int o = 0; o < ", num_operands,
                        "; ++o) off[o] = static_cast<long long>(", flat, ");\n");
      } else {
        // Fixed-layout operands at their declared strides (constants), the others at `flat`.
        for (int o = 0; o < num_operands; ++o) {
          if (!IsFixedLayoutOperand(k, o)) {
            absl::StrAppend(&s, indent, "off[", o, "] = static_cast<long long>(", flat, ");\n");
            continue;
          }
          absl::StrAppend(&s, indent, "off[", o, "] = 0");
          for (int d = 0; d < rank; ++d)
            if (k.shape[d] != 1 && k.fixed_strides[o * rank + d] != 0)
              absl::StrAppend(&s, " + c[", d, "] * ", k.fixed_strides[o * rank + d], "ll");
          absl::StrAppend(&s, ";\n");
        }
      }
      return s;
    };
    const std::string table = strided ? "p.stride" : "st";
    if (vector_path && plan.CombinesScatter()) {
      // ScatterRun: each thread walks kRun consecutive rows at one vector of columns (a warp:
      // 32 consecutive vectors of one row), holding its adds while the target stays the same.
      const int64_t cols = k.shape.back();
      const int64_t rows = geo.numel / cols;
      const std::string u = geo.index64 ? "ull" : "u";
      absl::StrAppend(
          &out, "  constexpr int kVec = ", vec, ";\n  const bool vectors =\n      ",
          plan.Condition(table, "p.ptr"), ";\n  if (vectors) {\n",
          "    ScatterAcc acc;\n    acc.addr = nullptr;\n    acc.step = ", plan.ScatterStep(table),
          ";\n    acc.whole =\n        ", plan.ScatterWhole(table, "p.ptr"), ";\n",
          "    constexpr Index kChunks = ", cols / vec, u, ", kRows = ", rows, u,
          ", kRun = ", plan.RunRows(), u, ";\n",
          "    for (Index w = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; ",
          "w < (kRows + kRun - 1) / kRun * kChunks; w += num_threads) {\n",
          "      const Index first = w / kChunks * kRun;\n",
          "      for (Index r = first; r < first + kRun && r < kRows; ++r) {\n",
          "        const Index flat = r * ", cols, u, " + w % kChunks * kVec;\n");
      decompose(out, "        ", "flat");
      absl::StrAppend(&out, offsets("        ", "flat"), "        PointVec(p.ptr, ", table,
                      ", c, off, static_cast<unsigned long long>(flat), acc);\n",
                      "      }\n    }\n    Flush(acc);\n    return;\n  }\n");
    } else if (vector_path) {
      // The test reads only parameters: uniform over the grid (constant in the contig entry).
      absl::StrAppend(
          &out, "  constexpr int kVec = ", vec, ";\n  const bool vectors =\n      ",
          plan.Condition(table, "p.ptr"), ";\n  if (vectors) {\n",
          "    for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < ",
          numel, " / kVec; i += num_threads) {\n      const Index flat = i * kVec;\n");
      decompose(out, "      ", "flat");
      absl::StrAppend(&out, offsets("      ", "flat"), "      PointVec(p.ptr, ", table,
                      ", c, off, static_cast<unsigned long long>(flat));\n",
                      "    }\n    return;\n  }\n");
    }
    absl::StrAppend(
        &out, "  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < ",
        numel, "; i += num_threads) {\n");
    decompose(out, "    ", "i");
    absl::StrAppend(&out, offsets("    ", "i"), "    Point(p.ptr, ", table,
                    ", c, off, static_cast<unsigned long long>(i));\n");
    absl::StrAppend(&out, "  }\n}\n\n");
  }
  return absl::OkStatus();
}

}  // namespace tccd::codegen
