// EmitRowReductionKernel: one row-reduction kernel -> CUDA C (design: cuda_backend.h, "Row
// reductions").
//
// The body is split into phases at its reductions: phase p computes the element-level values
// needed by reduction p (or, for the last phase, by the stores), each in an unrolled loop over
// the thread's chunks of the row; reduction p folds them over the row and makes row-level
// values available to phase p + 1. Element instructions are placed as late as their consumers
// allow (a weight loaded for the epilogue is not held in registers across the reductions);
// element stores as early as their value exists. Every element value is a per-thread array
// v<i>[kChunks * kVec] (fully unrolled loops index it with constants, so it lives in registers);
// row-level values are scalars v<i>.
//
// Looped rows: each phase that has element work is a loop streaming the row from memory (L2
// mostly) and recomputing the element values it needs, so loops are planned to be few
// (PlanLoops): a reduction accumulates in the earliest loop its argument allows, and softmax's
// max and sum of exp(x - max) share a loop as an online pair (running max, sum rescaled once per
// vector). Cross-entropy's forward (logsumexp + the target pick, nll_loss_forward_to_rows.h) is
// one loop; its backward a one-hot sum that reads no memory and one loop reading the logits and
// writing their gradient; softmax two loops (was three). The class index (kIndex along the
// reduced dim) is computed from the element's position rather than read from an [C] tensor.
#include "codegen/cuda/cuda_row_emitter.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/cuda/cuda_backend.h"
#include "codegen/cuda/cuda_emitter.h"
#include "base/status_macros.h"

namespace tccd::codegen {
namespace {

using ir::DType;

// TCCD_ROW_LOOP_UNROLL=n (daemon environment, part of the compiler identity): looped rows'
// streaming loops unrolled n times (more loads in flight per thread, more registers); default 1.
// Measured (row check, H200, same machine, us, unroll 1 -> 2): loss forward BERT 281 -> 271,
// GPT-2 436 -> 416; backward 446 -> 440, 696 -> 670; but the same loss rows reading their class
// index from memory per element 890 -> 1246 (backward GPT-2), and vocabulary log_softmax
// unchanged (139.5 -> 138.9). 1-5% where it helps, so not the default yet.
// At 1 the loops of rows that are not shifted say `#pragma unroll 1`: left to itself, ptxas
// unrolled the backward loss row over Llama's 32000 (8 trips of a 16-byte load and store) to 78
// registers, one 512-thread block per SM that idles at each of its barriers; with the pragma 32
// registers, four blocks per SM, the same bytes in flight (sm_90); H200: 303 us where the
// unrolled form took 539 (deploy/lm_head_bench.py --loss, cuda_row_emitter.h). Shifted loops (their masked
// ends keep ptxas from unrolling: 63 registers for GPT-2's backward) get no pragma, as before.
// 0: no pragma on any loop (the compiler's choice, as before for the unshifted ones too).
// TCCD_ROW_HEAD_STORES=1 (daemon environment, part of the compiler identity): shifted rows
// align their head to a zero-padded output as well (RowEmitter::HeadOperand); default off.
bool HeadFollowsPaddedStores() {
  static const bool on = [] {
    const char* v = std::getenv("TCCD_ROW_HEAD_STORES");
    return v != nullptr && std::string(v) == "1";
  }();
  return on;
}

// TCCD_ROW_SHIFTED_LOADS=0 (daemon environment, part of the compiler identity): shifted rows
// keep their head on the unpadded inputs and read a load whose misalignment differs from the
// head's per element, as before. Default on: the head follows the first element-level store
// (padded or not) and such a load is two aligned vectors and a constant-index pick
// (tccd_rt::load_shifted). BERT's loss backward (session 9, H200: 645 us vs Inductor's 480)
// stored 3 rows in 4 of its padded bf16 [8192, 30528] logits gradient per element, because its
// head followed the [8192, 30522] logits.
bool ShiftedLoads() {
  static const bool on = [] {
    const char* v = std::getenv("TCCD_ROW_SHIFTED_LOADS");
    return v == nullptr || std::string(v) != "0";
  }();
  return on;
}

// TCCD_ROW_EARLY_LOADS (daemon environment, part of the compiler identity): which persistent
// rows issue which element loads at the row's start instead of in the phase that first uses
// them (a phase's loads otherwise start only after the previous reduction's shuffles: one
// dependent memory round trip per phase).
//   0: none.
//   1 (default): every load of one-vector rows (CudaRowGeometry::chunks == 1: short rows
//      sharing a warp, the 64..768-channel LayerNorm2d rows): the tenth session's code.
//   2: as 1, and in multi-chunk rows the loads that feed a reduction and those of
//      streamed operands (not RowReduction::kept_broadcast: the same for every row), within
//      kEarlyLoadBytes per thread; a broadcast operand that only the epilogue reads (a norm's
//      weight and bias) stays in the epilogue.
//   3: as 1, and every load of multi-chunk rows within kEarlyLoadBytes.
// Why 1 stays the default: mode 2 was measured on the H200 (eleventh session) at 1595.5 us
// against mode 1's 1604.2 for ViT's LayerNorm-backward rows (noise: the kernel moves twice
// Inductor's bytes, that is its gap), and the merged build with mode 2 as default ran Llama's
// loss row (a persistent 32000-wide row) at 1146 us against 503 the session before: up to
// kEarlyLoadBytes more registers per thread in a long persistent row. Mode 2's case was:
// ViT's LayerNorm backward row (768 elements: bf16 gradient, f32 x, f32 residual
// gradient; 32 lanes x 3 chunks of 8) loaded x only after the first reduction's shuffles and the
// residual after the second: 79 registers, 71 us a launch on the H200 where Inductor's one-pass
// kernel took 37 (session 10, int1), about 1.9 TB/s for its 14 bytes per element. With x and the
// residual early it compiles to 64 registers (ptxas, sm_90). A forward LayerNorm's weight and
// bias (L2-resident, broadcast over the rows) stay late: held across both reductions they took
// its row kernel from 60 to 100 registers, half the resident warps (mode 3, to measure).
int EarlyLoadMode() {
  static const int mode = [] {
    const char* v = std::getenv("TCCD_ROW_EARLY_LOADS");
    if (v == nullptr) return 1;
    const std::string s(v);
    return s == "0" ? 0 : s == "2" ? 2 : s == "3" ? 3 : 1;
  }();
  return mode;
}

// The most bytes of element operands a thread of a multi-chunk row loads up front (modes 2
// and 3): 96 registers; a LayerNorm backward row of 768 (24 elements per thread of four
// operands: 336 bytes) fits, 32 elements of four f32 operands do not.
constexpr int kEarlyLoadBytes = 384;

// TCCD_RUNTIME_ROW_THREADS=n (daemon environment, part of the compiler identity): threads per
// row of rows whose length is a run-time size (kRuntimeRowThreads: 32, a warp per row, several
// rows per block); 64..1024 (a multiple of 32) gives one row per block of n threads, 128 the
// form before (eleventh session).
int RuntimeRowThreads() {
  static const int n = [] {
    const char* v = std::getenv("TCCD_RUNTIME_ROW_THREADS");
    const int t = v == nullptr ? kRuntimeRowThreads : std::atoi(v);
    return t >= 32 && t <= 1024 && t % 32 == 0 ? t : kRuntimeRowThreads;
  }();
  return n;
}

int LoopUnroll() {
  static const int n = [] {
    const char* v = std::getenv("TCCD_ROW_LOOP_UNROLL");
    const int u = v == nullptr ? 1 : std::atoi(v);
    return u >= 0 && u <= 8 ? u : 1;
  }();
  return n;
}

constexpr int kMaxChunks = 32;
// Fewest lanes per row of a warp-shared row (see RowGeometryWith): 8 x 16 bytes = one 128-byte
// line of the narrowest operand per load instruction.
constexpr int64_t kMinRowLanes = 8;

class RowEmitter {
 public:
  explicit RowEmitter(const PointwiseKernel& k) : RowEmitter(k, RowGeometryOf(k)) {}
  RowEmitter(const PointwiseKernel& k, const CudaRowGeometry& geo)
      : k_(k),
        geo_(geo),
        ns_("tccd_kernel_" + k.name),
        n_in_(static_cast<int>(k.input_dtypes.size())),
        rank_(static_cast<int>(k.shape.size())),
        outer_(rank_ - k.reduction.num_reduced_dims),
        row_(RowLevelValues(k)) {}

  absl::Status Emit(std::string& out);
  // Looped geometries: how many of the planned loops read element-level operands (streams of
  // the row from memory; a loop of index arithmetic only, like nll's one-hot, reads none).
  int ReadingLoops();

 private:
  void Schedule();
  // How an entry addresses element-level operands: _contig adds e to the row base; the strided
  // entry decomposes e over the reduced dims, per vector when every element-level operand is
  // unit-stride innermost and aligned (checked at run time: e.g. a row of a permuted NCHW
  // tensor), else per element.
  enum class Access { kContig, kInnerVector, kStrided };
  absl::Status EmitEntry(bool contig, std::string& out);
  absl::Status EmitBody(Access access, std::string& out);
  // The zero tails of padded outputs (PointwiseKernel::output_zero_tail), after the row's
  // stores; row_ok: "row_ok && " or "".
  void EmitZeroTails(Access access, const std::string& row_ok, std::string& out) const;
  // Whether the strided entry gets an inner-vector branch (compile-time part of the condition).
  bool InnerVectorPossible() const;
  // Whether a thread's last chunk may lie (partly) past the row's end: the row is not a whole
  // number of chunks, or it is shifted (its positions start before the row).
  bool HasTail() const {
    return geo_.shifted ||
           geo_.row_length % (static_cast<int64_t>(geo_.threads_per_row) * geo_.vec) != 0;
  }
  // The largest vector (a power of two, at most geo_.vec elements) that never crosses the end
  // of the innermost dim: the inner-vector branch moves kVec elements as kVec / kInnerVec of
  // these (a bf16 row over [N, 196] takes 4-element pieces of its 8-element vectors).
  int InnerVec() const;
  // Statements moving the kVec elements at vector start e0 of operand o between memory and the
  // register vector `reg`, in vector access modes.
  std::string VectorLoad(const std::string& reg, DType dtype, int o, Access access) const;
  std::string VectorStore(const std::string& reg, DType dtype, int o, Access access) const;
  bool IsRowOperand(int operand) const { return k_.reduction.row_operand[operand]; }
  // Run-time row counts (kRuntimeDim in a leading dim; the reduced dims are static): the sizes
  // come in the parameter block after the strides, and the row count is known at the launch only.
  bool RuntimeRows() const { return HasRuntimeShape(k_); }
  // Leading dim d's size as a C expression: its literal, or the launch's size.
  std::string OuterSize(int d) const {
    return k_.shape[d] == kRuntimeDim ? absl::StrCat("p.size[", d, "]") : absl::StrCat(k_.shape[d]);
  }
  bool MayExceedOne(int d) const { return k_.shape[d] > 1 || k_.shape[d] == kRuntimeDim; }
  // Whether the grid's last block may hold rows past the end (threads that compute a copy of the
  // last row and store nothing).
  bool HasRowTail() const {
    return geo_.rows_per_block > 1 && (RuntimeRows() || geo_.rows % geo_.rows_per_block != 0);
  }
  // Operand of a load/store instruction, in the data array's numbering.
  int OperandOf(const PwInstr& in) const {
    return in.op == PwOp::kLoad ? in.operand : n_in_ + in.operand;
  }
  std::string Name(int v) const {
    return row_[v] || geo_.looped ? absl::StrCat("v", v) : absl::StrCat("v", v, "[j]");
  }
  // The expression of element instruction i (neither a load, a store nor a reduction), over
  // Name() of its arguments; empty if there is no lowering.
  std::string ElementExpr(size_t i) const;
  // Row gathers (row-gathers in reduction_fusion.h). The coordinate of the row along leading
  // dim d (a row-level kIndex): the row's c<d>, or 0 for a dim of size 1.
  std::string RowCoord(int d) const {
    return MayExceedOne(d) ? absl::StrCat("static_cast<long long>(c", d, ")")
                           : std::string("0LL");
  }
  // kGather i as one scalar read at its coordinates (the operand's own strides, dim k in slot
  // k), 0 where its mask is false. An element-level gather reads only elements in the row:
  // `in_row` (empty where every element computed is in it) joins its mask, since its column
  // coordinate comes from the element's position, past the row's end in a tail.
  std::string GatherExpr(size_t i, const std::string& in_row) const;
  // The in-row guard of element values in the current emission (see GatherExpr).
  std::string element_guard_;
  // Whether element-level kGather i reads kVec consecutive elements per vector: one reduced
  // dim, not shifted, its mask and all coordinates but the last row-level, the last the
  // element's own (kIndex of the reduced dim). TCCD_ROW_GATHER_VECTORS=0 reads every element
  // on its own (as the index kernels' scalar path).
  bool VectorGather(size_t i) const;
  // Statements filling the vector g<i> with kGather i's kVec elements at e0 (zeros where its
  // row-level mask is false): one vector load where the operand's last stride is 1 and the
  // address is aligned (checked at run time: an embedding table's rows are), else per element.
  // `guard`: the vector's in-row condition ("" for none).
  std::string VectorGatherLoad(size_t i, const std::string& guard) const;
  // Whether element value i is read only by vector gathers (their column, which the vector
  // load takes from e0): vector entries then neither hold nor compute it.
  bool OnlyVectorGathers(size_t i) const;
  // Looped kernels: the element instructions phase p recomputes (the closure of its element
  // stores and of reduction p's argument over element-level arguments), in body order.
  std::vector<size_t> LoopedPhaseMembers(int phase) const;
  // Looped kernels: the live reductions phase's loop accumulates (loop_of_), in body order.
  std::vector<int> LoopReductions(int phase) const;
  struct Online;
  // The statements folding one vector's values of an online pair's argument into its state.
  std::string OnlineStep(const Online& o) const;
  absl::Status EmitLoopedPhase(int phase, Access access, std::string& out);
  std::string Ptr(int operand, bool is_const) const {
    return absl::StrCat("reinterpret_cast<", is_const ? "const " : "",
                        CudaMemType(k_.operand_dtype(operand)), "*>(p.ptr[", operand, "])");
  }
  // Offset of element `e` (an int expression) of the row in operand o, strided entry.
  std::string StridedOffset(int o, const char* e = "e") const;
  // Shifted rows (CudaRowGeometry::shifted): the operand whose misalignment sets the row's
  // `head` (the first element-level store, else the first element-level load); the statements
  // declaring `head` and, contig entry, each element operand's `al<o>` (moves whole vectors).
  int HeadOperand() const;
  std::string ShiftedRowSetup(Access access) const;
  // Whether element q of the vector at e0 lies in the row (shifted rows only).
  static constexpr char kInRow[] = "(e0 + q >= 0 && e0 + q < kRowLength)";
  // Shifted rows: moving the kVec elements at e0 between operand o and the vector `reg`, whole
  // when the vector lies in the row and the operand is aligned like the row's head, else per
  // element in the row (unrolled: `reg` must stay in registers); `guard` prefixes the
  // condition (row_ok && for stores).
  std::string ShiftedLoad(const std::string& reg, int o) const;
  std::string ShiftedStore(const std::string& reg, int o, const std::string& guard) const;

  const PointwiseKernel& k_;
  const CudaRowGeometry geo_;
  const std::string ns_;
  const int n_in_, rank_, outer_;
  const std::vector<bool> row_;
  // Schedule: per instruction, the phase (element instructions, element stores) or the phase
  // it becomes available in (row-level instructions); the reductions in order.
  std::vector<int> phase_;
  std::vector<int> reductions_;
  std::vector<bool> live_;
  std::vector<int> earliest_;  // per instruction, the first phase its value exists in

  // Looped kernels stream the row once per loop, so the loops are planned to be few (PlanLoops):
  // a reduction whose argument needs no later reduction is accumulated in the earliest loop
  // that can (cross-entropy's target pick beside its logsumexp), and softmax's max and sum of
  // exponentials share one loop as an online pair (Online below). loop_of_[q]: the phase whose
  // loop accumulates reduction q (reductions_[q]); q itself unless moved earlier.
  void PlanLoops();
  // The online pair of a max reduction p and the sum reduction p + 1 over exp(a - m), where a
  // is the max's argument and m the max or a guard of it (logsumexp's where(isinf(max), 0,
  // max)): one loop keeps per thread a running max mt and st = sum exp(a - g(mt)) over the
  // elements it has seen (g(v) = v, or 0 where v is infinite), rescaling st by exp(mt - g(mn))
  // when the max grows to mn (once per vector); the sum over the row is then
  // row_reduce(st * exp(mt - m)) with m the row's max (or its guard), as three passes would give
  // it, -inf/+inf/NaN rows included (the reasoning is at OnlineStep).
  struct Online {
    int max = -1, sum = -1;  // instructions (reductions)
    int a = -1;              // the max's argument
    int shift = -1;          // m: the max or its guard (row-level)
  };
  std::vector<int> loop_of_;
  std::vector<Online> online_;  // at most one per max reduction
  const Online* OnlineWithSum(int instr) const {
    for (const Online& o : online_)
      if (o.sum == instr) return &o;
    return nullptr;
  }
  const Online* OnlineWithMax(int instr) const {
    for (const Online& o : online_)
      if (o.max == instr) return &o;
    return nullptr;
  }
  // Whether row-level value v is r (a max) or where(r == +-inf, 0, <guard of r>).
  bool IsMaxOrGuard(int v, int r) const;
};

void RowEmitter::Schedule() {
  const auto& body = k_.body;
  const size_t n = body.size();
  phase_.assign(n, 0);
  live_.assign(n, false);
  std::vector<int> reduction_index(n, -1);
  for (size_t i = 0; i < n; ++i) {
    if (IsReduce(body[i].op)) {
      reduction_index[i] = static_cast<int>(reductions_.size());
      reductions_.push_back(static_cast<int>(i));
    }
  }
  // Earliest phase each value exists in.
  std::vector<int> earliest(n, 0);
  for (size_t i = 0; i < n; ++i) {
    int e = 0;
    for (int a : body[i].args) e = std::max(e, earliest[a]);
    earliest[i] = IsReduce(body[i].op) ? reduction_index[i] + 1 : e;
  }
  earliest_ = earliest;
  // Liveness and latest phases, backwards from the stores.
  const int last = static_cast<int>(reductions_.size());
  std::vector<int> latest(n, last);
  for (size_t ii = n; ii-- > 0;) {
    const PwInstr& in = body[ii];
    if (in.op == PwOp::kStore) live_[ii] = true;
    if (!live_[ii]) continue;
    int at = in.op == PwOp::kStore ? earliest[ii] : (row_[ii] ? earliest[ii] : latest[ii]);
    if (IsReduce(in.op)) at = reduction_index[ii];  // its argument is needed by phase p
    phase_[ii] = in.op == PwOp::kStore || row_[ii] ? earliest[ii] : latest[ii];
    for (int a : in.args) {
      live_[a] = true;
      if (!row_[a]) latest[a] = std::min(latest[a], at);
    }
  }
  // Persistent rows issue loads up front (EarlyLoadMode): loads depend on nothing. A load
  // feeds a reduction when its latest phase (the first that uses it) is a reduction's.
  const int mode = EarlyLoadMode();
  if (!geo_.looped && mode > 0) {
    const std::vector<bool>& broadcast = k_.reduction.kept_broadcast;
    auto streamed = [&](int operand) {
      return !broadcast.empty() && !broadcast[static_cast<size_t>(operand)];
    };
    auto early = [&](size_t i) {
      if (!live_[i] || body[i].op != PwOp::kLoad || row_[i]) return false;
      return geo_.chunks == 1 || mode == 3 ||
             (mode == 2 && (phase_[i] < last || streamed(body[i].operand)));
    };
    int64_t bytes = 0;
    for (size_t i = 0; i < n; ++i)
      if (early(i) || (live_[i] && body[i].op == PwOp::kLoad && !row_[i] && phase_[i] == 0))
        bytes += int64_t{geo_.chunks} * geo_.vec * ir::DTypeBytes(body[i].dtype);
    if (geo_.chunks == 1 || (mode >= 2 && bytes <= kEarlyLoadBytes)) {
      for (size_t i = 0; i < n; ++i)
        if (early(i)) phase_[i] = 0;
    }
  }
}

bool RowEmitter::IsMaxOrGuard(int v, int r) const {
  if (v == r) return true;
  const auto& body = k_.body;
  auto constant = [&](int c, double value) {
    return body[c].op == PwOp::kConstant && body[c].dtype == DType::kF32 && body[c].fvalue == value;
  };
  const PwInstr& w = body[v];
  if (w.op != PwOp::kWhere || w.dtype != DType::kF32 || !constant(w.args[1], 0)) return false;
  const PwInstr& eq = body[w.args[0]];
  if (eq.op != PwOp::kEq || eq.args[0] != r) return false;
  const double inf = std::numeric_limits<double>::infinity();
  if (!constant(eq.args[1], inf) && !constant(eq.args[1], -inf)) return false;
  return IsMaxOrGuard(w.args[2], r);
}

void RowEmitter::PlanLoops() {
  const auto& body = k_.body;
  const int n = static_cast<int>(reductions_.size());
  loop_of_.assign(n, 0);
  for (int q = 0; q < n; ++q) loop_of_[q] = std::min(q, earliest_[body[reductions_[q]].args[0]]);
  for (int q = 0; q + 1 < n; ++q) {
    const int max = reductions_[q], sum = reductions_[q + 1];
    if (!live_[max] || !live_[sum] || body[max].op != PwOp::kReduceMax ||
        body[sum].op != PwOp::kReduceSum)
      continue;
    const PwInstr& e = body[body[sum].args[0]];
    if (e.op != PwOp::kExp || e.dtype != DType::kF32) continue;
    const PwInstr& d = body[e.args[0]];
    if (d.op != PwOp::kSub || d.dtype != DType::kF32 || d.args[0] != body[max].args[0]) continue;
    if (!row_[d.args[1]] || !IsMaxOrGuard(d.args[1], max)) continue;
    online_.push_back(Online{max, sum, body[max].args[0], d.args[1]});
    loop_of_[q + 1] = loop_of_[q];
  }
}

std::string RowEmitter::GatherExpr(size_t i, const std::string& in_row) const {
  const PwInstr& in = k_.body[i];
  std::string address;
  for (size_t a = 1; a < in.args.size(); ++a)
    absl::StrAppend(&address, a > 1 ? " + " : "", Name(in.args[a]), " * p.stride[", in.operand,
                    "][", a - 1, "]");
  if (address.empty()) address = "0";
  std::string expr = absl::StrCat(Ptr(in.operand, true), "[", address, "]");
  if (in.dtype == DType::kBool) expr = absl::StrCat("(", expr, " != 0)");
  const std::string mask =
      in_row.empty() ? Name(in.args[0]) : absl::StrCat("(", in_row, " && ", Name(in.args[0]), ")");
  return absl::StrCat(mask, " ? ", expr, " : ",
                      in.dtype == DType::kBool
                          ? "false"
                          : absl::StrCat("static_cast<", CudaRegType(in.dtype), ">(0)"));
}

bool RowEmitter::VectorGather(size_t i) const {
  static const bool enabled = [] {
    const char* v = std::getenv("TCCD_ROW_GATHER_VECTORS");
    return v == nullptr || std::string(v) != "0";
  }();
  const PwInstr& in = k_.body[i];
  if (!enabled || in.op != PwOp::kGather || row_[i] || geo_.shifted || geo_.vec < 2 ||
      in.dtype == DType::kBool || k_.reduction.num_reduced_dims != 1 || in.args.size() < 2)
    return false;
  for (size_t a = 0; a + 1 < in.args.size(); ++a)
    if (!row_[in.args[a]]) return false;
  const PwInstr& last = k_.body[in.args.back()];
  return last.op == PwOp::kIndex && last.operand == rank_ - 1;
}

bool RowEmitter::OnlyVectorGathers(size_t i) const {
  if (k_.body[i].op != PwOp::kIndex || row_[i]) return false;
  bool read = false;
  for (size_t u = i + 1; u < k_.body.size(); ++u) {
    const PwInstr& in = k_.body[u];
    for (size_t a = 0; a < in.args.size(); ++a) {
      if (in.args[a] != static_cast<int>(i)) continue;
      if (!live_[u]) continue;
      if (!VectorGather(u) || a + 1 != in.args.size()) return false;
      read = true;
    }
  }
  return read;
}

std::string RowEmitter::VectorGatherLoad(size_t i, const std::string& guard) const {
  const PwInstr& in = k_.body[i];
  const int o = in.operand;
  const int slot = static_cast<int>(in.args.size()) - 2;  // the last coordinate's stride slot
  const char* t = CudaMemType(in.dtype);
  std::string base;
  for (int a = 1; a <= slot; ++a)
    absl::StrAppend(&base, " + v", in.args[a], " * p.stride[", o, "][", a - 1, "]");
  const std::string cond =
      guard.empty() ? absl::StrCat("v", in.args[0]) : absl::StrCat(guard, " && v", in.args[0]);
  return absl::StrCat(
      "    tccd_rt::Vec<", t, ", kVec> g", i, " = {};\n", "    if (", cond, ") {\n",
      "      const ", t, "* gp = reinterpret_cast<const ", t, "*>(p.ptr[", o, "])", base, ";\n",
      "      if (p.stride[", o, "][", slot,
      "] == 1 && reinterpret_cast<unsigned long long>(gp + e0) % alignof(tccd_rt::Vec<", t,
      ", kVec>) == 0) {\n", "        g", i, " = *reinterpret_cast<const tccd_rt::Vec<", t,
      ", kVec>*>(gp + e0);\n", "      } else {\n#pragma unroll\n",
      "        for (int q = 0; q < kVec; ++q) g", i,
      ".v[q] = gp[static_cast<long long>(e0 + q) * p.stride[", o, "][", slot, "]];\n",
      "      }\n    }\n");
}

std::string RowEmitter::ElementExpr(size_t i) const {
  const PwInstr& in = k_.body[i];
  if (in.op == PwOp::kGather) return GatherExpr(i, element_guard_);
  if (in.op == PwOp::kIndex) {
    // The coordinate along reduced dim d of element e0 + q of the row (the verifier allows no
    // other dim in row kernels).
    if (in.operand < outer_) return "";
    int64_t inner = 1;
    for (int d = rank_ - 1; d > in.operand; --d) inner *= k_.shape[d];
    std::string coord = inner == 1 ? "(e0 + q)" : absl::StrCat("((e0 + q) / ", inner, ")");
    if (in.operand > outer_) coord = absl::StrCat("(", coord, " % ", k_.shape[in.operand], ")");
    return absl::StrCat("static_cast<long long>", coord);
  }
  if (in.op == PwOp::kDiv && in.dtype == DType::kF32 && row_[in.args[1]]) {
    // Element / row value (softmax's e / sum): one reciprocal per row (the compiler hoists the
    // loop-invariant 1.0f / v out of the loop) and a multiply per element instead of an IEEE
    // division each; within 1.5 ulp of the quotient.
    return absl::StrCat(Name(in.args[0]), " * (1.0f / v", in.args[1], ")");
  }
  if (in.op == PwOp::kExp && in.dtype == DType::kF32) {
    // exp2 of a pre-scaled argument (ex2.approx, what ATen's and Triton's softmax use) instead
    // of the full-range expf: a multiply and one MUFU op per element, within 2 + 1.2|x| ulp
    // (softmax's shifted arguments are <= 0). Row kernels only: pointwise kernels keep expf.
    return absl::StrCat("exp2f(", Name(in.args[0]), " * 1.4426950408889634f)");
  }
  return CudaInstrExpr(k_, i, [&](int v) { return Name(v); });
}

std::vector<int> RowEmitter::LoopReductions(int phase) const {
  std::vector<int> out;
  for (size_t q = 0; q < reductions_.size(); ++q)
    if (live_[reductions_[q]] && loop_of_[q] == phase) out.push_back(reductions_[q]);
  return out;
}

std::vector<size_t> RowEmitter::LoopedPhaseMembers(int phase) const {
  const auto& body = k_.body;
  std::vector<bool> in_phase(body.size(), false);
  std::vector<size_t> stack;
  auto want = [&](int v) {
    if (!row_[v] && !in_phase[v]) {
      in_phase[v] = true;
      stack.push_back(static_cast<size_t>(v));
    }
  };
  for (size_t i = 0; i < body.size(); ++i) {
    if (live_[i] && body[i].op == PwOp::kStore && phase_[i] == phase &&
        !IsRowOperand(OperandOf(body[i]))) {
      in_phase[i] = true;
      stack.push_back(i);
    }
  }
  // An online sum's exp(a - m) is computed per vector against the running max (OnlineStep);
  // its a is the max's argument, in the loop already.
  for (int r : LoopReductions(phase))
    if (OnlineWithSum(r) == nullptr) want(body[r].args[0]);
  while (!stack.empty()) {
    const size_t i = stack.back();
    stack.pop_back();
    for (int a : body[i].args) want(a);
  }
  std::vector<size_t> members;
  for (size_t i = 0; i < body.size(); ++i)
    if (in_phase[i]) members.push_back(i);
  return members;
}

std::string RowEmitter::OnlineStep(const Online& o) const {
  // Per vector, after its kVec values of a are in on<max> (-inf outside the row): the new
  // running max mn, the shift ms = g(mn) (0 where mn is infinite, so that a thread whose
  // elements so far are all -inf holds st = 0 rather than exp(-inf - -inf) = NaN, and one
  // holding +inf holds st = +inf rather than NaN; a NaN propagates through mn and ms), the
  // old sum rescaled (exp(mt - ms): 0 from mt = -inf, whatever st was), then this vector's terms.
  // The final combination (EmitLoopedPhase) scales each thread's st by exp(mt - m) with m the
  // row's max or its guard: 0 for threads that saw only -inf, NaN for a row whose max is -inf
  // with m = max (three passes: exp(-inf - -inf)), +inf for +inf rows under the guard (m = 0).
  const std::string mt = absl::StrCat("acc", o.max), st = absl::StrCat("acc", o.sum),
                    on = absl::StrCat("on", o.max);
  return absl::StrCat(
      "    {\n      float vmax = ", on,
      "[0];\n#pragma unroll\n      for (int q = 1; q < kVec; ++q) vmax = "
      "tccd_rt::MaxOp::apply(vmax, ",
      on, "[q]);\n      const float mn = tccd_rt::MaxOp::apply(", mt, ", vmax);\n",
      "      const float ms = fabsf(mn) == __int_as_float(0x7f800000) ? 0.0f : mn;\n", "      ", st,
      " *= exp2f((", mt, " - ms) * 1.4426950408889634f);\n",
      "#pragma unroll\n      for (int q = 0; q < kVec; ++q) ", st, " += exp2f((", on,
      "[q] - ms) * 1.4426950408889634f);\n", "      ", mt, " = mn;\n    }\n");
}

absl::Status RowEmitter::EmitLoopedPhase(int phase, Access access, std::string& out) {
  const bool vectors = access != Access::kStrided;
  const auto& body = k_.body;
  const char* smem = geo_.threads_per_row > 32 ? "smem" : "nullptr";
  // The row sum of an online pair whose loop ran earlier: its m (a row-level value of this
  // phase) exists now.
  if (phase < static_cast<int>(reductions_.size())) {
    if (const Online* o = OnlineWithSum(reductions_[phase]); o != nullptr && live_[o->sum]) {
      absl::StrAppend(&out, "  const float v", o->sum,
                      " = tccd_rt::row_reduce<tccd_rt::SumOp, kThreads>(acc", o->sum,
                      " * exp2f((acc", o->max, " - v", o->shift, ") * 1.4426950408889634f), ", smem,
                      ");\n");
    }
  }
  const std::vector<size_t> members = LoopedPhaseMembers(phase);
  const std::vector<int> reductions = LoopReductions(phase);
  if (members.empty() && reductions.empty()) return absl::OkStatus();
  auto op_of = [&](int r) {
    return body[r].op == PwOp::kReduceSum ? "Sum" : body[r].op == PwOp::kReduceMax ? "Max" : "Min";
  };
  for (int r : reductions)
    absl::StrAppend(&out, "  float acc", r, " = tccd_rt::", op_of(r), "Op::identity();\n");
  const bool shifted = geo_.shifted;
  if (LoopUnroll() > 1 || (LoopUnroll() == 1 && !shifted))
    absl::StrAppend(&out, "#pragma unroll ", LoopUnroll(), "\n");
  if (shifted) {
    // Positions p0 from the vector-aligned element at or before the row's start.
    absl::StrAppend(
        &out, "  for (int p0 = lane * kVec; p0 < kRowLength + head; p0 += kThreads * kVec) {\n",
        "    const int e0 = p0 - head;\n");
  } else {
    // kVec divides kRowLength (RowGeometryOf), so a vector that starts in the row ends in it.
    absl::StrAppend(&out,
                    "  for (int e0 = lane * kVec; e0 < kRowLength; e0 += kThreads * kVec) {\n");
  }
  if (vectors) {
    for (size_t i : members) {
      const PwInstr& in = body[i];
      if (in.op == PwOp::kLoad) {
        const char* t = CudaMemType(in.dtype);
        if (shifted) {
          absl::StrAppend(&out, "    tccd_rt::Vec<", t, ", kVec> a", i, " = {};\n    ",
                          ShiftedLoad(absl::StrCat("a", i), in.operand), "\n");
        } else {
          absl::StrAppend(&out, "    tccd_rt::Vec<", t, ", kVec> a", i, ";\n    ",
                          VectorLoad(absl::StrCat("a", i), in.dtype, in.operand, access), "\n");
        }
      } else if (in.op == PwOp::kStore) {
        absl::StrAppend(&out, "    tccd_rt::Vec<", CudaMemType(in.dtype), ", kVec> s", i, ";\n");
      } else if (VectorGather(i)) {
        absl::StrAppend(&out, VectorGatherLoad(i, ""));  // whole vectors in the row
      }
    }
  }
  for (int r : reductions)
    if (OnlineWithMax(r) != nullptr) absl::StrAppend(&out, "    float on", r, "[kVec];\n");
  // Whole vectors lie in the row unless it is shifted (kVec divides kRowLength).
  element_guard_ = shifted ? kInRow : "";
  bool has_memory = false;
  for (size_t i : members) has_memory |= body[i].op == PwOp::kLoad || body[i].op == PwOp::kStore;
  absl::StrAppend(&out, "#pragma unroll\n    for (int q = 0; q < kVec; ++q) {\n");
  if (!vectors && has_memory) absl::StrAppend(&out, "      const int e = e0 + q;\n");
  for (size_t i : members) {
    const PwInstr& in = body[i];
    const DType d = in.dtype;
    if (vectors && OnlyVectorGathers(i)) continue;
    if (in.op == PwOp::kLoad) {
      std::string value = vectors ? absl::StrCat("a", i, ".v[q]")
                                  : absl::StrCat(Ptr(in.operand, true), "[b", in.operand, " + ",
                                                 StridedOffset(in.operand), "]");
      if (!vectors && shifted) {
        value = absl::StrCat("(", kInRow, " ? ", value, " : static_cast<", CudaMemType(d), ">(0))");
      }
      if (d == DType::kBool) value = absl::StrCat("(", value, " != 0)");
      absl::StrAppend(&out, "      const ", CudaRegType(d), " v", i, " = ", value, ";\n");
    } else if (in.op == PwOp::kStore) {
      const int o = OperandOf(in);
      std::string value = Name(in.args[0]);
      if (d == DType::kBool) value = absl::StrCat("(unsigned char)", value);
      if (vectors) {
        absl::StrAppend(&out, "      s", i, ".v[q] = ", value, ";\n");
      } else {
        absl::StrAppend(&out, "      ", shifted ? absl::StrCat("if ", kInRow, " ") : "",
                        Ptr(o, false), "[b", o, " + ", StridedOffset(o), "] = ", value, ";\n");
      }
    } else {
      const std::string expr =
          vectors && VectorGather(i) ? absl::StrCat("g", i, ".v[q]") : ElementExpr(i);
      if (expr.empty()) {
        return absl::InternalError(absl::StrCat("no CUDA lowering for ", PwOpName(in.op), " at %",
                                                i, " in kernel '", k_.name, "'"));
      }
      absl::StrAppend(&out, "      const ", CudaRegType(d), " v", i, " = ", expr, ";\n");
    }
  }
  for (int r : reductions) {
    if (OnlineWithSum(r) != nullptr) continue;
    if (OnlineWithMax(r) != nullptr) {
      absl::StrAppend(&out, "      on", r, "[q] = ",
                      shifted ? absl::StrCat(kInRow, " ? ", Name(body[r].args[0]),
                                             " : tccd_rt::MaxOp::identity()")
                              : Name(body[r].args[0]),
                      ";\n");
      continue;
    }
    absl::StrAppend(&out, "      ", shifted ? absl::StrCat("if ", kInRow, " ") : "", "acc", r,
                    " = tccd_rt::", op_of(r), "Op::apply(acc", r, ", ", Name(body[r].args[0]),
                    ");\n");
  }
  absl::StrAppend(&out, "    }\n");
  for (int r : reductions)
    if (const Online* o = OnlineWithMax(r); o != nullptr) absl::StrAppend(&out, OnlineStep(*o));
  if (vectors) {
    for (size_t i : members) {
      const PwInstr& in = body[i];
      if (in.op != PwOp::kStore) continue;
      const int o = OperandOf(in);
      absl::StrAppend(&out, "    ",
                      shifted ? ShiftedStore(absl::StrCat("s", i), o, "")
                              : VectorStore(absl::StrCat("s", i), in.dtype, o, access),
                      "\n");
    }
  }
  absl::StrAppend(&out, "  }\n");
  for (int r : reductions) {
    if (OnlineWithSum(r) != nullptr) continue;  // at its own phase, when its m exists
    absl::StrAppend(&out, "  const float v", r, " = tccd_rt::row_reduce<tccd_rt::", op_of(r),
                    "Op, kThreads>(acc", r, ", ", smem, ");\n");
  }
  return absl::OkStatus();
}

std::string RowEmitter::StridedOffset(int o, const char* e) const {
  // Decompose e over the reduced dims (innermost fastest); dims of size 1 take no part.
  std::string out;
  int64_t inner = 1;
  std::vector<int> dims;
  for (int d = outer_; d < rank_; ++d)
    if (MayExceedOne(d)) dims.push_back(d);
  for (size_t idx = dims.size(); idx-- > 0;) {
    const int d = dims[idx];
    std::string coord = inner == 1 ? std::string(e) : absl::StrCat("(", e, " / ", inner, ")");
    if (idx > 0) coord = absl::StrCat("(", coord, " % ", k_.shape[d], ")");
    absl::StrAppend(&out, out.empty() ? "" : " + ", "static_cast<long long>",
                    coord == e ? absl::StrCat("(", e, ")") : coord, " * p.stride[", o, "][", d,
                    "]");
    inner *= k_.shape[d];
  }
  return out.empty() ? "0" : out;
}

int RowEmitter::HeadOperand() const {
  // A padded output (zero tail) has aligned rows whatever the inputs' misalignment: the row's
  // head follows the unpadded operands, which it cannot help otherwise. TCCD_ROW_HEAD_STORES=1
  // makes it follow the padded output too (its stores whole vectors, the inputs' loads per
  // element where they are misaligned: loads of one line hit L1, stores do not merge), to
  // measure one against the other on the loss backward (BERT: 3 rows in 4 of its padded logits
  // gradient were stored per element). With shifted loads (ShiftedLoads, the default) the head
  // follows the first store, padded or not: a misaligned load then costs a second vector from
  // L1, where a misaligned store cost per-element stores.
  for (const PwInstr& in : k_.body)
    if (in.op == PwOp::kStore && !IsRowOperand(OperandOf(in)) &&
        (k_.zero_tail(in.operand) == 0 || HeadFollowsPaddedStores() || ShiftedLoads()))
      return OperandOf(in);
  for (const PwInstr& in : k_.body)
    if (in.op == PwOp::kLoad && !IsRowOperand(in.operand)) return in.operand;
  return 0;
}

std::string RowEmitter::ShiftedRowSetup(Access access) const {
  if (access != Access::kContig)
    return "  constexpr int head = 0;  // the strided entry reads per element\n";
  // An operand's misalignment at its row start, in elements (its pointer is element-aligned).
  auto misalignment = [&](int o) {
    return absl::StrCat("static_cast<int>((reinterpret_cast<unsigned long long>(p.ptr[", o,
                        "]) / sizeof(", CudaMemType(k_.operand_dtype(o)),
                        ") + static_cast<unsigned long long>(b", o, ")) % kVec)");
  };
  std::string out = absl::StrCat("  const int head = ", misalignment(HeadOperand()), ";\n");
  for (int o = 0; o < k_.num_operands(); ++o) {
    if (IsRowOperand(o)) continue;
    absl::StrAppend(&out, "  const bool al", o, " = ", misalignment(o), " == head;\n");
  }
  return out;
}

std::string RowEmitter::ShiftedLoad(const std::string& reg, int o) const {
  const std::string ptr = Ptr(o, true);
  const std::string mem = CudaMemType(k_.operand_dtype(o));
  // Misaligned against the head, inside the row: the two aligned vectors around it (both hold
  // an element of the row, so neither reads past the allocation).
  const std::string shifted =
      ShiftedLoads()
          ? absl::StrCat(" else if (e0 >= 0 && e0 + kVec <= kRowLength) { ", reg,
                         " = tccd_rt::load_shifted<", mem, ", kVec>(", ptr, " + b", o, " + e0); }")
          : "";
  return absl::StrCat("if (e0 >= 0 && e0 + kVec <= kRowLength && al", o, ") { ", reg,
                      " = *reinterpret_cast<const tccd_rt::Vec<", mem, ", kVec>*>(", ptr, " + b", o,
                      " + e0); }", shifted,
                      " else {\n#pragma unroll\n      for (int q = 0; q < kVec; ++q) if ", kInRow,
                      " ", reg, ".v[q] = ", ptr, "[b", o, " + e0 + q];\n    }");
}

std::string RowEmitter::ShiftedStore(const std::string& reg, int o,
                                     const std::string& guard) const {
  const std::string ptr = Ptr(o, false);
  return absl::StrCat(
      "if (", guard, "e0 >= 0 && e0 + kVec <= kRowLength && al", o, ") { tccd_rt::store_whole(",
      ptr, " + b", o, " + e0, ", reg, "); } else if (", guard,
      "e0 < kRowLength) {\n#pragma unroll\n      for (int q = 0; q < kVec; ++q) if ", kInRow, " ",
      ptr, "[b", o, " + e0 + q] = ", reg, ".v[q];\n    }");
}

int RowEmitter::InnerVec() const {
  int v = geo_.vec;
  while (v > 1 && k_.shape[rank_ - 1] % v != 0) v /= 2;
  return v;
}

std::string RowEmitter::VectorLoad(const std::string& reg, DType dtype, int o,
                                   Access access) const {
  const char* t = CudaMemType(dtype);
  if (access == Access::kContig || InnerVec() == geo_.vec) {
    return absl::StrCat(reg, " = *reinterpret_cast<const tccd_rt::Vec<", t, ", kVec>*>(",
                        Ptr(o, true), " + b", o, " + ",
                        access == Access::kContig ? "e0" : StridedOffset(o, "e0"), ");");
  }
  return absl::StrCat("for (int m = 0; m < kVec; m += kInnerVec) *reinterpret_cast<tccd_rt::Vec<",
                      t, ", kInnerVec>*>(&", reg, ".v[m]) = *reinterpret_cast<const tccd_rt::Vec<",
                      t, ", kInnerVec>*>(", Ptr(o, true), " + b", o, " + ",
                      StridedOffset(o, "(e0 + m)"), ");");
}

std::string RowEmitter::VectorStore(const std::string& reg, DType dtype, int o,
                                    Access access) const {
  const char* t = CudaMemType(dtype);
  if (access == Access::kContig || InnerVec() == geo_.vec) {
    // store_whole: one st.global per 16 bytes (see the prelude).
    return absl::StrCat("tccd_rt::store_whole(", Ptr(o, false), " + b", o, " + ",
                        access == Access::kContig ? "e0" : StridedOffset(o, "e0"), ", ", reg, ");");
  }
  return absl::StrCat("for (int m = 0; m < kVec; m += kInnerVec) *reinterpret_cast<tccd_rt::Vec<",
                      t, ", kInnerVec>*>(", Ptr(o, false), " + b", o, " + ",
                      StridedOffset(o, "(e0 + m)"), ") = *reinterpret_cast<const tccd_rt::Vec<", t,
                      ", kInnerVec>*>(&", reg, ".v[m]);");
}

absl::Status RowEmitter::EmitEntry(bool contig, std::string& out) {
  const bool tail = HasTail();
  const bool row_tail = HasRowTail();
  absl::StrAppend(&out, "extern \"C\" __global__ void __launch_bounds__(", geo_.block, ")\n",
                  k_.name, contig ? "_contig" : "_strided", "(const ", ns_, "::Params p) {\n");
  if (row_tail && RuntimeRows()) {
    // The launch's grid is ceil(rows / rows per block) of this call (tccd_rt_launch_sized).
    std::string rows;
    for (int d = 0; d < outer_; ++d)
      absl::StrAppend(&rows, rows.empty() ? "" : " * ", OuterSize(d));
    absl::StrAppend(&out, "  const int kRows = static_cast<int>(", rows.empty() ? "1" : rows,
                    ");\n");
  } else if (row_tail) {
    absl::StrAppend(&out, "  constexpr int kRows = ", geo_.rows, ";\n");
  }
  if (geo_.row_length < 0) {
    // A run-time row length (one reduced dim; looped, shifted rows: any length works).
    absl::StrAppend(&out, "  const int kRowLength = static_cast<int>(p.size[", rank_ - 1, "]);\n");
  } else {
    absl::StrAppend(&out, "  constexpr int kRowLength = ", geo_.row_length, ";\n");
  }
  absl::StrAppend(&out, "  constexpr int kThreads = ", geo_.threads_per_row, ";  // per row\n",
                  "  constexpr int kVec = ", geo_.vec, ";\n");
  if (geo_.looped) {
    if (!geo_.shifted && geo_.row_length >= 0)
      absl::StrAppend(&out, "  static_assert(kRowLength % kVec == 0, \"whole vectors\");\n");
  } else {
    absl::StrAppend(&out, "  constexpr int kChunks = ", geo_.chunks, ";\n");
    if (!tail)
      absl::StrAppend(&out,
                      "  static_assert(kRowLength == kChunks * kThreads * kVec, \"no tail\");\n");
  }
  if (contig || !InnerVectorPossible()) {
    RETURN_IF_ERROR(EmitBody(contig ? Access::kContig : Access::kStrided, out));
    absl::StrAppend(&out, "}\n\n");
    return absl::OkStatus();
  }
  // Run-time half of the inner-vector condition; uniform over the grid.
  absl::StrAppend(&out, "  constexpr int kInnerVec = ", InnerVec(), ";\n  bool vectors = true;\n");
  for (int o = 0; o < k_.num_operands(); ++o) {
    if (IsRowOperand(o)) continue;
    std::string cond = absl::StrCat(
        "p.stride[", o, "][", rank_ - 1, "] == 1 && reinterpret_cast<unsigned long long>(p.ptr[", o,
        "]) % (kInnerVec * sizeof(", CudaMemType(k_.operand_dtype(o)), ")) == 0");
    for (int d = 0; d < rank_ - 1; ++d)
      if (MayExceedOne(d))
        absl::StrAppend(&cond, " && p.stride[", o, "][", d, "] % kInnerVec == 0");
    absl::StrAppend(&out, "  vectors = vectors && ", cond, ";\n");
  }
  absl::StrAppend(&out, "  if (vectors) {\n");
  RETURN_IF_ERROR(EmitBody(Access::kInnerVector, out));
  absl::StrAppend(&out, "  } else {\n");
  RETURN_IF_ERROR(EmitBody(Access::kStrided, out));
  absl::StrAppend(&out, "  }\n}\n\n");
  return absl::OkStatus();
}

bool RowEmitter::InnerVectorPossible() const {
  return !geo_.shifted && rank_ > outer_ && InnerVec() > 1 && !HasIndexOps(k_);
}

// The entry's body after its constants: the caller closes the entry (or the branch) after it.
absl::Status RowEmitter::EmitBody(Access access, std::string& out) {
  const auto& body = k_.body;
  const int num_operands = k_.num_operands();
  const bool vectors = access != Access::kStrided;
  const bool shifted = geo_.shifted;
  const bool tail = HasTail();
  const bool row_tail = HasRowTail();
  if (geo_.threads_per_row > 32) absl::StrAppend(&out, "  __shared__ float smem[32];\n");
  if (geo_.rows_per_block == 1) {
    absl::StrAppend(&out, "  const int lane = threadIdx.x;\n  const int row = blockIdx.x;\n");
  } else {
    absl::StrAppend(&out, "  const int lane = threadIdx.x % kThreads;\n",
                    "  const int row_in_grid = blockIdx.x * ", geo_.rows_per_block,
                    " + threadIdx.x / kThreads;\n");
    if (row_tail && geo_.looped) {
      // Looped rows that share a block take a whole warp each and no block-wide barrier
      // (RowGeometryWith): a warp past the last row leaves, its shuffles with it.
      absl::StrAppend(&out, "  if (row_in_grid >= kRows) return;\n",
                      "  const int row = row_in_grid;\n");
    } else if (row_tail) {
      // Threads past the last row compute a copy of it (every lane must take part in the
      // shuffles) and store nothing.
      absl::StrAppend(&out, "  const bool row_ok = row_in_grid < kRows;\n",
                      "  const int row = row_ok ? row_in_grid : kRows - 1;\n");
    } else {
      absl::StrAppend(&out, "  const int row = row_in_grid;\n");
    }
  }
  const std::string row_ok = row_tail && !geo_.looped ? "row_ok && " : "";
  // Row offsets of every operand, from the row's coordinates in the leading dims.
  {
    std::vector<int> dims;
    for (int d = 0; d < outer_; ++d)
      if (MayExceedOne(d)) dims.push_back(d);
    if (!dims.empty()) absl::StrAppend(&out, "  int rest = row;\n");
    for (size_t idx = dims.size(); idx-- > 0;) {
      const int d = dims[idx];
      if (idx == 0) {
        absl::StrAppend(&out, "  const int c", d, " = rest;\n");
      } else {
        // Run-time sizes in 32-bit arithmetic like the row index (a 64-bit division is a
        // software routine on the GPU).
        const std::string size = k_.shape[d] == kRuntimeDim
                                     ? absl::StrCat("static_cast<int>(", OuterSize(d), ")")
                                     : OuterSize(d);
        absl::StrAppend(&out, "  const int c", d, " = rest % ", size, ";\n  rest /= ", size, ";\n");
      }
    }
    for (int o = 0; o < num_operands; ++o) {
      // Gather operands are addressed from their own coordinates (GatherExpr).
      if (o < n_in_ && IsGatherOperand(k_, o)) continue;
      absl::StrAppend(&out, "  const long long b", o, " = ");
      if (dims.empty()) absl::StrAppend(&out, "0");
      for (size_t idx = 0; idx < dims.size(); ++idx) {
        absl::StrAppend(&out, idx ? " + " : "", "static_cast<long long>(c", dims[idx],
                        ") * p.stride[", o, "][", dims[idx], "]");
      }
      absl::StrAppend(&out, ";\n");
    }
  }
  if (shifted) absl::StrAppend(&out, ShiftedRowSetup(access));
  // Element arrays (persistent kernels; looped ones recompute scalars in every phase).
  for (size_t i = 0; i < body.size() && !geo_.looped; ++i) {
    if (live_[i] && !row_[i] && body[i].op != PwOp::kStore && !(vectors && OnlyVectorGathers(i))) {
      absl::StrAppend(&out, "  ", CudaRegType(body[i].dtype), " v", i, "[kChunks * kVec];\n");
    }
  }
  auto emit_row_instr = [&](size_t i) -> absl::Status {
    const PwInstr& in = body[i];
    const DType d = in.dtype;
    if (in.op == PwOp::kStore) {
      const int o = OperandOf(in);
      const std::string value = d == DType::kBool ? absl::StrCat("(unsigned char)v", in.args[0])
                                                  : absl::StrCat("v", in.args[0]);
      absl::StrAppend(&out, "  if (", row_ok, "lane == 0) ", Ptr(o, false), "[b", o, "] = ", value,
                      ";\n");
      return absl::OkStatus();
    }
    std::string expr;
    if (in.op == PwOp::kLoad) {
      expr = absl::StrCat(Ptr(in.operand, true), "[b", in.operand, "]");
      if (d == DType::kBool) expr += " != 0";
    } else if (IsReduce(in.op)) {
      const char* op = in.op == PwOp::kReduceSum   ? "Sum"
                       : in.op == PwOp::kReduceMax ? "Max"
                                                   : "Min";
      absl::StrAppend(&out, "  float acc", i, " = tccd_rt::", op, "Op::identity();\n",
                      "#pragma unroll\n  for (int c = 0; c < kChunks; ++c) {\n");
      if (shifted) {
        absl::StrAppend(&out, "    const int e0 = (c * kThreads + lane) * kVec - head;\n",
                        "    if (e0 >= kRowLength) break;\n");
      } else if (tail) {
        absl::StrAppend(&out, "    if ((c * kThreads + lane) * kVec >= kRowLength) break;\n");
      }
      absl::StrAppend(&out, "#pragma unroll\n    for (int q = 0; q < kVec; ++q) ",
                      shifted ? absl::StrCat("if ", kInRow, " ") : "", "acc", i, " = tccd_rt::", op,
                      "Op::apply(acc", i, ", v", in.args[0], "[c * kVec + q]);\n  }\n");
      expr = absl::StrCat("tccd_rt::row_reduce<tccd_rt::", op, "Op, kThreads>(acc", i, ", ",
                          geo_.threads_per_row > 32 ? "smem" : "nullptr", ")");
    } else if (in.op == PwOp::kIndex && in.operand < outer_) {
      expr = RowCoord(in.operand);
    } else if (in.op == PwOp::kGather) {
      expr = GatherExpr(i, "");  // row-level: the (clamped) row's own coordinates
    } else {
      expr = CudaInstrExpr(k_, i, [&](int v) { return Name(v); });
    }
    if (expr.empty()) {
      return absl::InternalError(absl::StrCat("no CUDA lowering for ", PwOpName(in.op), " at %", i,
                                              " in kernel '", k_.name, "'"));
    }
    absl::StrAppend(&out, "  const ", CudaRegType(d), " v", i, " = ", expr, ";\n");
    return absl::OkStatus();
  };
  auto emit_phase_loop = [&](int phase) -> absl::Status {
    std::vector<size_t> members;
    for (size_t i = 0; i < body.size(); ++i) {
      if (!live_[i] || phase_[i] != phase) continue;
      if (body[i].op == PwOp::kStore ? !IsRowOperand(OperandOf(body[i])) : !row_[i]) {
        members.push_back(i);
      }
    }
    if (members.empty()) return absl::OkStatus();
    bool memory = false, gathers = false, has_memory = false;
    for (size_t i : members) {
      memory |= body[i].op == PwOp::kLoad || body[i].op == PwOp::kStore;
      gathers |= body[i].op == PwOp::kGather;
      has_memory |= body[i].op == PwOp::kLoad || body[i].op == PwOp::kStore ||
                    body[i].op == PwOp::kIndex || body[i].op == PwOp::kGather;
    }
    // A gather's column may lie past the row's end in the last chunk (see GatherExpr).
    element_guard_ = shifted ? kInRow : tail ? "ok" : "";
    // Gathers alone read e0, and `ok` only as their tail guard.
    const bool needs_ok = !gathers || memory || (tail && !shifted);
    absl::StrAppend(&out, "#pragma unroll\n  for (int c = 0; c < kChunks; ++c) {\n");
    if (has_memory && needs_ok) {
      // Elements past the row's end (only in the last chunk) are neither loaded nor stored;
      // what is computed from them is never reduced or stored.
      absl::StrAppend(&out, "    const int e0 = (c * kThreads + lane) * kVec",
                      shifted ? " - head" : "", ";\n",
                      "    const bool ok = ", tail ? "e0 < kRowLength" : "true", ";\n");
    } else if (has_memory) {
      absl::StrAppend(&out, "    const int e0 = (c * kThreads + lane) * kVec",
                      shifted ? " - head" : "", ";\n");
    }
    if (vectors) {
      for (size_t i : members) {
        const PwInstr& in = body[i];
        if (in.op == PwOp::kLoad) {
          const char* t = CudaMemType(in.dtype);
          absl::StrAppend(&out, "    tccd_rt::Vec<", t, ", kVec> a", i, " = {};\n",
                          "    if (ok) { ",
                          shifted ? ShiftedLoad(absl::StrCat("a", i), in.operand)
                                  : VectorLoad(absl::StrCat("a", i), in.dtype, in.operand, access),
                          " }\n");
        } else if (in.op == PwOp::kStore) {
          absl::StrAppend(&out, "    tccd_rt::Vec<", CudaMemType(in.dtype), ", kVec> s", i, ";\n");
        } else if (VectorGather(i)) {
          absl::StrAppend(&out, VectorGatherLoad(i, tail ? "ok" : ""));
        }
      }
    }
    absl::StrAppend(&out, "#pragma unroll\n    for (int q = 0; q < kVec; ++q) {\n",
                    "      const int j = c * kVec + q;\n");
    // `e` addresses loads and stores (StridedOffset); gathers address themselves.
    if (!vectors && (memory || (has_memory && !gathers)))
      absl::StrAppend(&out, "      const int e = e0 + q;\n");
    for (size_t i : members) {
      const PwInstr& in = body[i];
      const DType d = in.dtype;
      if (vectors && OnlyVectorGathers(i)) continue;
      if (in.op == PwOp::kLoad) {
        std::string value =
            vectors ? absl::StrCat("a", i, ".v[q]")
                    : absl::StrCat("(", shifted ? kInRow : "ok", " ? ", Ptr(in.operand, true), "[b",
                                   in.operand, " + ", StridedOffset(in.operand), "] : static_cast<",
                                   CudaMemType(d), ">(0))");
        if (d == DType::kBool) value = absl::StrCat("(", value, " != 0)");
        absl::StrAppend(&out, "      v", i, "[j] = ", value, ";\n");
      } else if (in.op == PwOp::kStore) {
        const int o = OperandOf(in);
        std::string value = Name(in.args[0]);
        if (d == DType::kBool) value = absl::StrCat("(unsigned char)", value);
        if (vectors) {
          absl::StrAppend(&out, "      s", i, ".v[q] = ", value, ";\n");
        } else {
          absl::StrAppend(&out, "      if (", row_ok, shifted ? kInRow : "ok", ") ", Ptr(o, false),
                          "[b", o, " + ", StridedOffset(o), "] = ", value, ";\n");
        }
      } else {
        const std::string expr =
            vectors && VectorGather(i) ? absl::StrCat("g", i, ".v[q]") : ElementExpr(i);
        if (expr.empty()) {
          return absl::InternalError(absl::StrCat("no CUDA lowering for ", PwOpName(in.op), " at %",
                                                  i, " in kernel '", k_.name, "'"));
        }
        absl::StrAppend(&out, "      v", i, "[j] = ", expr, ";\n");
      }
    }
    absl::StrAppend(&out, "    }\n");
    if (vectors) {
      for (size_t i : members) {
        const PwInstr& in = body[i];
        if (in.op != PwOp::kStore) continue;
        const int o = OperandOf(in);
        if (shifted) {
          absl::StrAppend(&out, "    ", ShiftedStore(absl::StrCat("s", i), o, row_ok), "\n");
        } else {
          absl::StrAppend(&out, "    if (", row_ok, "ok) { ",
                          VectorStore(absl::StrCat("s", i), in.dtype, o, access), " }\n");
        }
      }
    }
    absl::StrAppend(&out, "  }\n");
    return absl::OkStatus();
  };
  const int num_phases = static_cast<int>(reductions_.size()) + 1;
  for (int phase = 0; phase < num_phases; ++phase) {
    // Row-level instructions available in this phase (reduction phase-1's result and what is
    // computed from it; constants and row loads in phase 0), in body order.
    for (size_t i = 0; i < body.size(); ++i) {
      if (!live_[i] || phase_[i] != phase || IsReduce(body[i].op)) continue;
      const bool row_store = body[i].op == PwOp::kStore && IsRowOperand(OperandOf(body[i]));
      if ((body[i].op != PwOp::kStore && row_[i]) || row_store) RETURN_IF_ERROR(emit_row_instr(i));
    }
    if (geo_.looped) {
      RETURN_IF_ERROR(EmitLoopedPhase(phase, access, out));
      continue;
    }
    RETURN_IF_ERROR(emit_phase_loop(phase));
    if (phase < num_phases - 1 && live_[reductions_[phase]]) {
      RETURN_IF_ERROR(emit_row_instr(reductions_[phase]));
    }
  }
  EmitZeroTails(access, row_ok, out);
  return absl::OkStatus();
}

int RowEmitter::ReadingLoops() {
  Schedule();
  PlanLoops();
  int loops = 0;
  for (int phase = 0; phase <= static_cast<int>(reductions_.size()); ++phase) {
    bool reads = false;
    for (size_t i : LoopedPhaseMembers(phase))
      reads |= k_.body[i].op == PwOp::kLoad || k_.body[i].op == PwOp::kGather;
    loops += reads ? 1 : 0;
  }
  return loops;
}

void RowEmitter::EmitZeroTails(Access access, const std::string& row_ok, std::string& out) const {
  for (int o = 0; o < static_cast<int>(k_.output_dtypes.size()); ++o) {
    const int64_t tail = k_.zero_tail(o);
    if (tail == 0) continue;
    const int operand = n_in_ + o;
    // The row is the innermost dim alone (the verifier's rule), so element kRowLength + t of
    // the row lies at that dim's stride; the contig entry's rows are unit-stride.
    const std::string offset =
        access == Access::kContig
            ? "kRowLength + t"
            : absl::StrCat("static_cast<long long>(kRowLength + t) * p.stride[", operand, "][",
                           rank_ - 1, "]");
    absl::StrAppend(
        &out, "  // out", o, "'s padding after the row (a zero-padded matmul operand)\n",
        "  for (int t = lane; t < ", tail, "; t += kThreads) ",
        row_ok.empty() ? "" : absl::StrCat("if (", row_ok.substr(0, row_ok.size() - 4), ") "),
        Ptr(operand, false), "[b", operand, " + ", offset, "] = static_cast<",
        CudaMemType(k_.operand_dtype(operand)), ">(0);\n");
  }
}

absl::Status RowEmitter::Emit(std::string& out) {
  if (!geo_.looped && geo_.chunks > kMaxChunks) {
    return absl::UnimplementedError(absl::StrCat("row-reduction kernel '", k_.name, "': rows of ",
                                                 geo_.row_length,
                                                 " elements exceed the register budget"));
  }
  Schedule();
  PlanLoops();
  absl::StrAppend(&out, "\n// ", std::string(76, '-'), "\n", CudaIrComment(k_));
  absl::StrAppend(&out, "namespace ", ns_, " {\n\n");
  absl::StrAppend(&out, "struct Params {\n  char* ptr[", k_.num_operands(),
                  "];\n  long long stride[", k_.num_operands(), "][", rank_, "];\n");
  if (RuntimeRows())
    absl::StrAppend(&out, "  long long size[", rank_,
                    "];  // this launch's sizes (run-time rows)\n");
  absl::StrAppend(&out, "};\n");
  absl::StrAppend(&out, "static_assert(sizeof(Params) == ", geo_.param_bytes,
                  ", \"parameter layout\");\n\n}  // namespace ", ns_, "\n\n");
  if (k_.has_dense_entry()) RETURN_IF_ERROR(EmitEntry(/*contig=*/true, out));
  if (k_.has_strided_entry()) RETURN_IF_ERROR(EmitEntry(/*contig=*/false, out));
  return absl::OkStatus();
}

}  // namespace

const char kCudaRowPrelude[] = R"(
// Row reductions: one value per thread folded over the kThreads threads of a row (a sub-warp or
// a warp: shuffles only; a whole block: warps through shared memory); every thread gets the
// result. Max and min propagate NaN (torch.amax).
namespace tccd_rt {

// A whole vector stored by one instruction (two for 32 bytes): as plain C++ the compiler merged
// the vector store and its per-element alternative into eight predicated 2-byte stores per vector
// in shifted rows (ncu: 7x the store requests, 2.5x the kernel time of a bf16 softmax over
// 30522), and split a persistent row's bf16 vector of converted values into 2-byte stores too
// (ptxas, sm_90: a LayerNorm2d row's 16-byte output vector as six st.global.u16 and a v2).
template <typename T, int N>
__device__ __forceinline__ void store_whole(T* p, const Vec<T, N>& v) {
  constexpr int kBytes = sizeof(T) * N;
  if constexpr (kBytes == 32) {
    const uint4* w = reinterpret_cast<const uint4*>(&v);
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(w[0].x), "r"(w[0].y), "r"(w[0].z), "r"(w[0].w)
                 : "memory");
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(reinterpret_cast<char*>(p) + 16), "r"(w[1].x), "r"(w[1].y), "r"(w[1].z), "r"(w[1].w)
                 : "memory");
  } else if constexpr (kBytes == 16) {
    const uint4 w = *reinterpret_cast<const uint4*>(&v);
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(w.x), "r"(w.y), "r"(w.z), "r"(w.w)
                 : "memory");
  } else if constexpr (kBytes == 8) {
    const uint2 w = *reinterpret_cast<const uint2*>(&v);
    asm volatile("st.global.v2.b32 [%0], {%1, %2};" ::"l"(p), "r"(w.x), "r"(w.y) : "memory");
  } else {
    *reinterpret_cast<Vec<T, N>*>(p) = v;
  }
}

// The vector of N elements at p, which is element-aligned but not vector-aligned (a row operand
// misaligned against its row's head): the two aligned vectors around it, the elements picked
// with constant indices under a branch on the shift (uniform over a row: every vector of the row
// has the same shift). Indexing the registers by a run-time shift would put them in local memory.
template <typename T, int N, int S = 1>
__device__ __forceinline__ void pick_shifted(int shift, const Vec<T, N>& lo, const Vec<T, N>& hi,
                                             Vec<T, N>& r) {
  if constexpr (S < N) {
    if (shift == S) {
#pragma unroll
      for (int q = 0; q < N; ++q) r.v[q] = q + S < N ? lo.v[(q + S) % N] : hi.v[(q + S) % N];
      return;
    }
    pick_shifted<T, N, S + 1>(shift, lo, hi, r);
  }
}

template <typename T, int N>
__device__ __forceinline__ Vec<T, N> load_shifted(const T* p) {
  const int shift = static_cast<int>((reinterpret_cast<unsigned long long>(p) / sizeof(T)) % N);
  const Vec<T, N>* a = reinterpret_cast<const Vec<T, N>*>(p - shift);
  const Vec<T, N> lo = a[0], hi = a[1];
  Vec<T, N> r = lo;
  pick_shifted<T, N>(shift, lo, hi, r);
  return r;
}

struct SumOp {
  static __device__ __forceinline__ float identity() { return 0.0f; }
  static __device__ __forceinline__ float apply(float a, float b) { return a + b; }
};
struct MaxOp {
  static __device__ __forceinline__ float identity() { return __int_as_float(0xff800000); }
  static __device__ __forceinline__ float apply(float a, float b) { return maximum(a, b); }
};
struct MinOp {
  static __device__ __forceinline__ float identity() { return __int_as_float(0x7f800000); }
  static __device__ __forceinline__ float apply(float a, float b) { return minimum(a, b); }
};

template <class Op, int kWidth>
__device__ __forceinline__ float warp_reduce(float v) {
#pragma unroll
  for (int offset = kWidth / 2; offset > 0; offset /= 2) {
    v = Op::apply(v, __shfl_xor_sync(0xffffffffu, v, offset));
  }
  return v;
}

template <class Op, int kThreads>
__device__ __forceinline__ float row_reduce(float v, float* smem) {
  // if constexpr: the block-wide half is not instantiated for sub-warp rows (NVRTC warns about
  // its `lane < kThreads / 32` being always false there).
  if constexpr (kThreads <= 32) {
    return warp_reduce<Op, (kThreads < 32 ? kThreads : 32)>(v);
  } else {
    v = warp_reduce<Op, 32>(v);
    __syncthreads();  // the previous reduction may still read smem
    if ((threadIdx.x & 31) == 0) smem[threadIdx.x >> 5] = v;
    __syncthreads();
    v = (threadIdx.x & 31) < kThreads / 32 ? smem[threadIdx.x & 31] : Op::identity();
    return warp_reduce<Op, 32>(v);
  }
}

}  // namespace tccd_rt
)";

namespace {

bool ShiftedLoopsEnabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("TCCD_SHIFTED_ROW_LOOPS");
    return v == nullptr || std::string(v) != "0";
  }();
  return enabled;
}

// TCCD_ALIGNED_ROW_LOOPS=0 (daemon environment, part of the compiler identity): rows of
// kMinShiftedLoopedRowLength..kMaxPersistentRowLength that the full vector divides stay
// persistent, as before, even where their looped form streams the row once (RowGeometryOf).
bool AlignedLoopsEnabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("TCCD_ALIGNED_ROW_LOOPS");
    return v == nullptr || std::string(v) != "0";
  }();
  return enabled;
}

// Elements per thread and chunk: 16 bytes of the narrowest element operand (a bf16 row moves
// 16-byte vectors beside its f32 weight, which takes two 16-byte accesses per vector), but no
// operand more than two 16-byte accesses (32 bytes of the widest). Sizing the vector by the
// widest operand halved a bf16 row's loads to 8 bytes wherever an f32 weight, bias or output
// was beside it (every layer norm under autocast).
int RowVectorWidth(int narrowest, int largest) {
  return std::max(1, std::min(16 / std::max(narrowest, 1), 32 / std::max(largest, 1)));
}

// The geometry of `kernel`'s rows: looped when they are longer than kMaxPersistentRowLength or
// `looped` says so.
CudaRowGeometry RowGeometryWith(const PointwiseKernel& kernel, bool looped) {
  CudaRowGeometry g;
  const int rank = static_cast<int>(kernel.shape.size());
  const int outer = rank - kernel.reduction.num_reduced_dims;
  g.rows = 1;
  g.row_length = 1;
  // Run-time sizes (kRuntimeDim): rows -1 and grid 0 when a leading dim is one (both come at
  // the launch), row_length -1 when the (single) reduced dim is.
  const bool runtime_rows = HasRuntimeShape(kernel);
  bool runtime_length = false;
  for (int d = 0; d < rank; ++d) {
    if (kernel.shape[d] == kRuntimeDim) {
      (d < outer ? g.rows : g.row_length) = -1;
      runtime_length |= d >= outer;
    } else if ((d < outer ? g.rows : g.row_length) >= 0) {
      (d < outer ? g.rows : g.row_length) *= kernel.shape[d];
    }
  }
  // Operands the body never loads (a class index computed in place: reduction_kernel_builder)
  // take no part in the vector width.
  std::vector<bool> accessed(kernel.num_operands(), false);
  for (const PwInstr& in : kernel.body) {
    if (in.op == PwOp::kLoad) accessed[in.operand] = true;
    if (in.op == PwOp::kStore) accessed[kernel.input_dtypes.size() + in.operand] = true;
  }
  int largest = 1;
  int narrowest = 16;
  for (int o = 0; o < kernel.num_operands(); ++o) {
    if (o < static_cast<int>(kernel.reduction.row_operand.size()) &&
        kernel.reduction.row_operand[o])
      continue;
    if (!accessed[o]) continue;
    largest = std::max(largest, ir::DTypeBytes(kernel.operand_dtype(o)));
    narrowest = std::min(narrowest, ir::DTypeBytes(kernel.operand_dtype(o)));
  }
  g.vec = RowVectorWidth(narrowest, largest);
  if (runtime_length) {
    // Rows of run-time length: looped (any length), shifted when the vector is wider than one
    // element (no guard says the length is a multiple of it), RuntimeRowThreads() per row: a
    // warp, kRuntimeRowBlock / 32 rows per block, or one row per block of more threads.
    g.looped = true;
    g.shifted = g.vec > 1;
    g.threads_per_row = RuntimeRowThreads();
    g.block = g.threads_per_row == 32 ? kRuntimeRowBlock : g.threads_per_row;
    g.rows_per_block = g.block / g.threads_per_row;
    g.chunks = 0;
    g.grid = 0;
    g.param_bytes = 8 * kernel.num_operands() * (1 + rank) + 8 * rank;
    return g;
  }
  looped = looped || g.row_length > kMaxPersistentRowLength;
  if (g.vec > 1 && g.row_length % g.vec != 0 && looped) {
    g.shifted = true;
  } else {
    while (g.vec > 1 && g.row_length % g.vec != 0) g.vec /= 2;
  }
  // Shifted rows cover up to vec - 1 positions before the row's first element.
  const int64_t vectors = (g.row_length + (g.shifted ? g.vec - 1 : 0) + g.vec - 1) / g.vec;
  if (looped) {
    g.looped = true;
    g.threads_per_row = g.block = kLoopedRowThreads;
    g.rows_per_block = 1;
    g.chunks = 0;
    g.grid = runtime_rows ? 0 : g.rows;
    g.param_bytes = 8 * kernel.num_operands() * (1 + rank) + (runtime_rows ? 8 * rank : 0);
    return g;
  }
  // About 32 elements per thread (8 vectors of f32, 4 of bf16): enough independent 16-byte
  // loads in flight per thread to cover memory latency, few enough registers for several
  // resident warps per SM. Rows that fit one warp that way take one warp and no block-wide
  // synchronisation (a softmax over 1024 f32: warp per row, 2.3 -> see the GPU check).
  const int64_t per_thread = std::max(1, 32 / g.vec);
  const int64_t want = (vectors + per_thread - 1) / per_thread;
  if (want <= 32) {
    // At least kMinRowLanes lanes per row where the row has that many vectors: one load
    // instruction of a warp then reads whole 128-byte lines of each row. With fewer lanes and
    // more chunks (a LayerNorm2d row of 64 bf16 took 2 lanes x 8 chunks of 4) every instruction
    // touched 16 rows' lines for 16 bytes each: 8x the L1 wavefronts for the same bytes, and
    // 64-80 registers per thread (H200: 110 us forward where Inductor took 48).
    int t = 1;
    const int64_t lanes = std::max<int64_t>(want, std::min<int64_t>(vectors, kMinRowLanes));
    while (t < lanes && t < 32) t *= 2;
    g.threads_per_row = t;
    g.block = 256;
    g.rows_per_block = g.block / t;
  } else {
    g.threads_per_row = static_cast<int>(std::min<int64_t>(1024, (want + 31) / 32 * 32));
    g.rows_per_block = 1;
    g.block = g.threads_per_row;
  }
  g.chunks = static_cast<int>((vectors + g.threads_per_row - 1) / g.threads_per_row);
  g.grid = runtime_rows ? 0 : (g.rows + g.rows_per_block - 1) / g.rows_per_block;
  g.param_bytes = 8 * kernel.num_operands() * (1 + rank) + (runtime_rows ? 8 * rank : 0);
  return g;
}

}  // namespace

CudaRowGeometry RowGeometryOf(const PointwiseKernel& kernel) {
  const CudaRowGeometry g = RowGeometryWith(kernel, /*looped=*/false);
  if (g.looped || g.row_length < kMinShiftedLoopedRowLength) return g;
  // A row the full vector does not divide: persistent, it moves narrower vectors (4 bytes for
  // bf16 rows of 30522); looped, it is shifted and moves 16 bytes. A row it divides (Llama's
  // 32000, T5's 32128): persistent, it takes a 1000-thread block, 32 elements per thread, and
  // __launch_bounds__(1024) caps it at 64 registers (see kMinShiftedLoopedRowLength in the
  // header). Either way looped wins where its loops stream the row from memory once
  // (cross-entropy's forward: logsumexp and the target pick; its backward: the one-hot sum
  // reads nothing, one loop reads the logits and writes); a softmax (two streams) stays.
  const CudaRowGeometry looped = RowGeometryWith(kernel, /*looped=*/true);
  if (!(looped.shifted ? ShiftedLoopsEnabled() : AlignedLoopsEnabled())) return g;
  if (RowEmitter(kernel, looped).ReadingLoops() <= 1) return looped;
  return g;
}

absl::Status EmitRowReductionKernel(const PointwiseKernel& kernel, std::string& out) {
  return RowEmitter(kernel).Emit(out);
}

}  // namespace tccd::codegen
