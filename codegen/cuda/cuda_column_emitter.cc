// EmitColumnReductionKernel: one column-reduction kernel (RowReduction::Axis::kLeading) -> CUDA
// C. Design (cuda_backend.h, "Column reductions"):
//
// The kept (trailing) dims are C columns, the reduced (leading) ones R rows. A block owns a
// tile of kTX * kVec adjacent columns (each thread kVec of them, read as one 16-byte vector per
// row) and kTY row stripes (thread row ty reads rows ty, ty + kTY, ...), so every warp reads
// whole 32-byte sectors of several rows at once. On sm_90 the rows are split further over the
// kSplit blocks of a thread-block cluster. Each thread folds its rows into registers (f32); the
// block combines its stripes in shared memory, the cluster's leader block the blocks' partials
// through distributed shared memory, and runs the epilogue (per-column values only) and the
// stores. One launch, no scratch memory, no atomics; results are deterministic.
//
// Every instruction that depends on no reduction is computed per row inside the streaming loop
// (per-column loads too: they hit L1); the epilogue recomputes the per-column ones it needs.
#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/cuda/cuda_backend.h"
#include "codegen/cuda/cuda_emitter.h"
#include "codegen/cuda/cuda_row_emitter.h"
#include "base/status_macros.h"

namespace tccd::codegen {
namespace {

using ir::DType;

// TCCD_COLUMN_UNROLL=n (daemon environment, 1..8; keyed in pipeline.cc): rows whose loads a
// thread of a column kernel issues before computing any (CudaColumnGeometry::unroll) instead of
// the operand-count rule; 1 is the old one-row-at-a-time loop, to measure one against the other.
int ColumnUnrollOverride() {
  static const int n = [] {
    const char* v = std::getenv("TCCD_COLUMN_UNROLL");
    const int u = v == nullptr ? 0 : std::atoi(v);
    return u >= 1 && u <= 8 ? u : 0;
  }();
  return n;
}

// Knobs for column kernels that store in their row loop (ColumnGeometryOf; daemon environment,
// keyed in pipeline.cc), to measure geometries against each other on a GPU:
// TCCD_COLUMN_VEC_BYTES (4, 8, 16), TCCD_COLUMN_BLOCK (256, 512, 1024), TCCD_COLUMN_MIN_BLOCKS
// (1..8). 0 where unset or invalid: the defaults.
int EnvChoice(const char* name, std::initializer_list<int> allowed) {
  const char* v = std::getenv(name);
  const int n = v == nullptr ? 0 : std::atoi(v);
  for (int a : allowed)
    if (n == a) return n;
  return 0;
}
int ColumnVecBytes() {
  static const int n = EnvChoice("TCCD_COLUMN_VEC_BYTES", {4, 8, 16});
  return n;
}
int ColumnBlock() {
  static const int n = EnvChoice("TCCD_COLUMN_BLOCK", {256, 512, 1024});
  return n;
}
int ColumnMinBlocks() {
  static const int n = EnvChoice("TCCD_COLUMN_MIN_BLOCKS", {1, 2, 3, 4, 5, 6, 7, 8});
  return n;
}

const char* ReduceOpName(PwOp op) {
  return op == PwOp::kReduceSum ? "Sum" : op == PwOp::kReduceMax ? "Max" : "Min";
}

class ColumnEmitter {
 public:
  ColumnEmitter(const PointwiseKernel& k, int cc_major)
      : k_(k),
        geo_(ColumnGeometryOf(k, cc_major)),
        ns_("tccd_kernel_" + k.name),
        n_in_(static_cast<int>(k.input_dtypes.size())),
        rank_(static_cast<int>(k.shape.size())),
        lead_(k.reduction.num_reduced_dims),
        row_(RowLevelValues(k)) {}

  absl::Status Emit(std::string& out);

 private:
  void Liveness();
  absl::Status EmitEntry(bool contig, std::string& out);
  int OperandOf(const PwInstr& in) const {
    return in.op == PwOp::kLoad ? in.operand : n_in_ + in.operand;
  }
  bool PerColumn(int o) const { return k_.reduction.row_operand[o]; }
  bool KeptBroadcast(int o) const {
    return o < static_cast<int>(k_.reduction.kept_broadcast.size()) &&
           k_.reduction.kept_broadcast[o];
  }
  // Fixed-layout operands (PointwiseKernel::fixed_strides; dense entry only): their column
  // offset co<o> is computed once per thread from c0, and their values are vectors (innermost
  // kept stride 1) or one value per thread (stride 0).
  bool Fixed(int o, bool contig) const { return contig && IsFixedLayoutOperand(k_, o); }
  bool FixedScalar(int o) const {
    for (int d = rank_ - 1; d >= lead_; --d)
      if (k_.shape[d] > 1) return k_.fixed_strides[static_cast<size_t>(o) * rank_ + d] == 0;
    return false;
  }
  // Operand o's offset of column c0 + q in the dense entry.
  std::string ColumnOffset(int o, const char* q) const {
    if (!IsFixedLayoutOperand(k_, o)) return absl::StrCat("c0 + ", q);
    return FixedScalar(o) ? absl::StrCat("co", o) : absl::StrCat("co", o, " + ", q);
  }
  std::string Ptr(int o, bool is_const) const {
    return absl::StrCat("reinterpret_cast<", is_const ? "const " : "",
                        CudaMemType(k_.operand_dtype(o)), "*>(p.ptr[", o, "])");
  }
  // Offset of flat index `var` over dims [first, last) of operand o (innermost fastest).
  std::string Offset(int o, const std::string& var, int first, int last) const;
  // Run-time row counts (kRuntimeDim in a reduced dim; the kept dims are static): the sizes
  // come after the strides in the parameter block, rows are counted in 64 bits.
  bool RuntimeRows() const { return HasRuntimeShape(k_); }
  std::string Size(int d) const {
    return k_.shape[d] == kRuntimeDim ? absl::StrCat("p.size[", d, "]")
                                      : absl::StrCat(k_.shape[d], "LL");
  }

  const PointwiseKernel& k_;
  const CudaColumnGeometry geo_;
  const std::string ns_;
  const int n_in_, rank_, lead_;
  const std::vector<bool> row_;
  std::vector<bool> after_;    // depends on a reduction
  std::vector<bool> in_loop_;  // computed per row in the streaming loop
  std::vector<bool> in_epi_;   // computed in the epilogue
  std::vector<int> reductions_;
};

void ColumnEmitter::Liveness() {
  const auto& body = k_.body;
  const size_t n = body.size();
  after_.assign(n, false);
  in_loop_.assign(n, false);
  in_epi_.assign(n, false);
  for (size_t i = 0; i < n; ++i) {
    for (int a : body[i].args) after_[i] = after_[i] || after_[a] || IsReduce(body[a].op);
    if (IsReduce(body[i].op)) reductions_.push_back(static_cast<int>(i));
  }
  for (size_t i = n; i-- > 0;) {
    const PwInstr& in = body[i];
    if (in.op == PwOp::kStore) {
      (PerColumn(OperandOf(in)) ? in_epi_ : in_loop_)[i] = true;
    }
    if (IsReduce(in.op) && in_epi_[i]) in_loop_[i] = true;  // its value comes from the loop
    if (in_loop_[i]) {
      for (int a : in.args) in_loop_[a] = true;
    }
    if (in_epi_[i] && !IsReduce(in.op)) {
      for (int a : in.args) in_epi_[a] = true;
    }
  }
  // Reductions nothing stores are dropped with their arguments (nothing element-level follows
  // a reduction: the verifier checks it).
  std::erase_if(reductions_, [&](int r) { return !in_epi_[r]; });
}

std::string ColumnEmitter::Offset(int o, const std::string& var, int first, int last) const {
  std::string out;
  // The product of the sizes inside dim d: static ones folded into one number (the static
  // kernels' code stays as it was), run-time ones as p.size factors after it.
  int64_t inner = 1;
  std::string runtime_inner;
  auto inner_text = [&] {
    return runtime_inner.empty()
               ? absl::StrCat(inner)
               : absl::StrCat(inner == 1 ? "" : absl::StrCat(inner, " * "), runtime_inner);
  };
  std::vector<int> dims;
  for (int d = first; d < last; ++d)
    if (k_.shape[d] > 1 || k_.shape[d] == kRuntimeDim) dims.push_back(d);
  for (size_t idx = dims.size(); idx-- > 0;) {
    const int d = dims[idx];
    std::string coord =
        inner == 1 && runtime_inner.empty()
            ? var
            : absl::StrCat(
                  "(", var, " / ",
                  runtime_inner.empty() ? inner_text() : absl::StrCat("(", inner_text(), ")"), ")");
    if (!runtime_inner.empty() || k_.shape[d] == kRuntimeDim) {
      if (idx > 0) coord = absl::StrCat("(", coord, " % ", Size(d), ")");
    } else if (idx > 0) {
      coord = absl::StrCat("(", coord, " % ", k_.shape[d], ")");
    }
    absl::StrAppend(&out, out.empty() ? "" : " + ", "static_cast<long long>(", coord,
                    ") * p.stride[", o, "][", d, "]");
    if (k_.shape[d] == kRuntimeDim)
      runtime_inner = runtime_inner.empty() ? Size(d) : absl::StrCat(runtime_inner, " * ", Size(d));
    else
      inner *= k_.shape[d];
  }
  return out.empty() ? "0LL" : out;
}

absl::Status ColumnEmitter::EmitEntry(bool contig, std::string& out) {
  const auto& body = k_.body;
  const int nred = static_cast<int>(reductions_.size());
  // Static row counts are constants of the code; run-time ones (symbolic graphs) the product
  // of this call's reduced sizes, the split of a cluster's blocks over them made per call.
  const char* row_t = RuntimeRows() ? "long long" : "int";
  std::string rows_decl, rows_per_split_decl;
  if (RuntimeRows()) {
    std::string rows;
    for (int d = 0; d < lead_; ++d) absl::StrAppend(&rows, d ? " * " : "", Size(d));
    rows_decl = absl::StrCat("  const long long kRows = ", rows.empty() ? "1LL" : rows, ";\n");
    rows_per_split_decl = "  const long long kRowsPerSplit = (kRows + kSplit - 1) / kSplit;\n";
  } else {
    rows_decl = absl::StrCat("  constexpr int kRows = ", geo_.rows, ";\n");
    rows_per_split_decl =
        absl::StrCat("  constexpr int kRowsPerSplit = ", geo_.rows_per_split, ";\n");
  }
  absl::StrAppend(&out, "extern \"C\" __global__ void __launch_bounds__(", geo_.block);
  if (geo_.min_blocks > 0) absl::StrAppend(&out, ", ", geo_.min_blocks);
  absl::StrAppend(&out, ")");
  if (geo_.split > 1) absl::StrAppend(&out, " __cluster_dims__(", geo_.split, ", 1, 1)");
  absl::StrAppend(&out, "\n", k_.name, contig ? "_contig" : "_strided", "(const ", ns_,
                  "::Params p) {\n", rows_decl, "  constexpr int kCols = ", geo_.cols, ";\n",
                  "  constexpr int kVec = ", geo_.vec, ";\n", "  constexpr int kTX = ", geo_.tx,
                  ";  // threads along the columns\n", "  constexpr int kTY = ", geo_.ty,
                  ";  // row stripes\n", "  constexpr int kSplit = ", geo_.split,
                  ";  // blocks (of one cluster) along the rows\n", rows_per_split_decl,
                  "  const int tx = threadIdx.x % kTX, ty = threadIdx.x / kTX;\n",
                  "  const int split = blockIdx.x % kSplit;\n",
                  "  const int c0 = ((blockIdx.x / kSplit) * kTX + tx) * kVec;  // first column\n",
                  "  const ", row_t, " r_begin = split * kRowsPerSplit;\n", "  const ", row_t,
                  " r_end = r_begin + kRowsPerSplit < kRows ? r_begin + kRowsPerSplit : kRows;\n");
  if (nred > 0) absl::StrAppend(&out, "  __shared__ float part[", nred, "][kTY][kTX * kVec];\n");
  for (int o = 0; o < k_.num_operands(); ++o)
    if (Fixed(o, contig))
      absl::StrAppend(&out, "  const long long co", o, " = ",
                      CudaFixedOffset(k_, o, "static_cast<unsigned>(c0)", lead_),
                      ";  // fixed layout\n");
  for (int r : reductions_) {
    absl::StrAppend(&out, "  float acc", r,
                    "[kVec];\n#pragma unroll\n  for (int q = 0; q < kVec; ++q) acc", r,
                    "[q] = tccd_rt::", ReduceOpName(body[r].op), "Op::identity();\n");
  }
  // The streaming loop. The dense entry issues the loads of kUnroll rows (kTY apart) before
  // it computes and stores any of them: its outputs may alias its inputs as far as the compiler
  // knows, so loads after a store were never moved above it, and each thread had one row's
  // loads in flight at a time (ConvNeXt's GELU-backward bias-gradient kernels ran at a quarter
  // of the H200's bandwidth). Outputs never overlap inputs (cuda_backend.h), so the order is
  // free. Only kernels that store in the loop take this form: with no store there, `#pragma
  // unroll 4` already let the compiler issue four rows' loads together (the channels-last batch
  // norm sums ran at 2.3-2.8 TB/s on the H200), and holding kUnroll rows of every operand in
  // registers took them from 66 to 128 registers and ResNet-50's norm sums 15-20% slower.
  bool loop_stores = false;
  for (size_t i = 0; i < body.size(); ++i)
    loop_stores = loop_stores || (in_loop_[i] && body[i].op == PwOp::kStore);
  const bool pipelined = contig && loop_stores;
  if (pipelined) {
    absl::StrAppend(&out, "  constexpr int kUnroll = ", geo_.unroll, ";\n",
                    "  if (c0 < kCols) {\n    for (", row_t,
                    " r0 = r_begin + ty; r0 < r_end; r0 += kTY * "
                    "kUnroll) {\n");
  } else {
    absl::StrAppend(&out, "  if (c0 < kCols) {\n#pragma unroll 4\n    for (", row_t,
                    " r = r_begin + ty; r < "
                    "r_end; r += kTY) {\n");
  }
  // Row offsets of the operands `wanted` selects, at row r.
  auto row_offsets = [&](auto wanted, const char* indent) {
    std::vector<bool> done(k_.num_operands(), false);
    for (size_t i = 0; i < body.size(); ++i) {
      if (!in_loop_[i] || !wanted(body[i])) continue;
      const int o = OperandOf(body[i]);
      if (!PerColumn(o) && !done[o]) {
        done[o] = true;
        absl::StrAppend(&out, indent, "const long long ro", o, " = ", Offset(o, "r", 0, lead_),
                        ";\n");
      }
    }
  };
  auto is_load = [](const PwInstr& in) { return in.op == PwOp::kLoad; };
  auto is_memory = [](const PwInstr& in) { return in.op == PwOp::kLoad || in.op == PwOp::kStore; };
  // A dense-entry load's value: a vector of kVec columns, or one value per thread and row.
  auto scalar_load = [&](int o) {
    return KeptBroadcast(o) || (Fixed(o, contig) && FixedScalar(o));
  };
  auto load_type = [&](size_t i) {
    const char* t = CudaMemType(body[i].dtype);
    return scalar_load(body[i].operand) ? std::string(t)
                                        : absl::StrCat("tccd_rt::Vec<", t, ", kVec>");
  };
  auto load_expr = [&](size_t i) {
    const int o = body[i].operand;
    const std::string row = PerColumn(o) ? "" : absl::StrCat("ro", o, " + ");
    if (KeptBroadcast(o)) return absl::StrCat(Ptr(o, true), "[ro", o, "]");
    if (Fixed(o, contig) && FixedScalar(o))
      return absl::StrCat(Ptr(o, true), "[", row, "co", o, "]");
    return absl::StrCat("*reinterpret_cast<const ", load_type(i), "*>(", Ptr(o, true), " + ", row,
                        Fixed(o, contig) ? absl::StrCat("co", o) : "c0", ")");
  };
  // Per-column operands (the same for every row; L1 hits) are loaded in phase 2, per row as
  // before: held for kUnroll rows they only cost registers.
  auto streamed = [&](size_t i) {
    return in_loop_[i] && body[i].op == PwOp::kLoad && !PerColumn(body[i].operand);
  };
  if (pipelined) {
    // Phase 1: the loads of kUnroll rows into registers.
    for (size_t i = 0; i < body.size(); ++i)
      if (streamed(i)) absl::StrAppend(&out, "      ", load_type(i), " a", i, "[kUnroll];\n");
    absl::StrAppend(&out,
                    "#pragma unroll\n      for (int u = 0; u < kUnroll; ++u) {\n"
                    "        const ",
                    row_t, " r = r0 + u * kTY;\n        if (r >= r_end) break;\n");
    row_offsets(is_load, "        ");
    for (size_t i = 0; i < body.size(); ++i)
      if (streamed(i)) absl::StrAppend(&out, "        a", i, "[u] = ", load_expr(i), ";\n");
    // Phase 2: compute, fold and store row by row.
    absl::StrAppend(&out, "      }\n#pragma unroll\n      for (int u = 0; u < kUnroll; ++u) {\n",
                    "        const ", row_t,
                    " r = r0 + u * kTY;\n        if (r >= r_end) break;\n");
    row_offsets([](const PwInstr& in) { return in.op == PwOp::kStore; }, "        ");
    for (size_t i = 0; i < body.size(); ++i)
      if (in_loop_[i] && body[i].op == PwOp::kLoad && !streamed(i))
        absl::StrAppend(&out, "        const ", load_type(i), " a", i, " = ", load_expr(i), ";\n");
  } else {
    row_offsets(is_memory, "      ");
    if (contig)
      for (size_t i = 0; i < body.size(); ++i)
        if (in_loop_[i] && body[i].op == PwOp::kLoad)
          absl::StrAppend(&out, "      const ", load_type(i), " a", i, " = ", load_expr(i), ";\n");
  }
  // Element stores of the dense entry are gathered into one vector per row and stored after
  // the column loop: per-element stores left a warp's store instruction 4 bytes per 16 of each
  // row (kTX threads, kVec columns apart), a quarter of every sector it touched; Llama's RMSNorm
  // backward column kernel (two f32 [tokens, 1024] products stored beside the weight gradient)
  // ran at about a quarter of the bandwidth its loads alone reached.
  const char* ind = pipelined ? "        " : "      ";
  std::vector<int> vector_stores;
  if (contig) {
    for (size_t i = 0; i < body.size(); ++i) {
      if (!in_loop_[i] || body[i].op != PwOp::kStore) continue;
      const int o = OperandOf(body[i]);
      if (Fixed(o, contig) && FixedScalar(o)) continue;
      vector_stores.push_back(static_cast<int>(i));
      absl::StrAppend(&out, ind, "tccd_rt::Vec<", CudaMemType(body[i].dtype), ", kVec> s", i,
                      ";\n");
    }
  }
  absl::StrAppend(&out, "#pragma unroll\n", ind, "for (int q = 0; q < kVec; ++q) {\n");
  const std::string ind2 = absl::StrCat(ind, "  ");
  if (!contig) absl::StrAppend(&out, ind2, "const int c = c0 + q;\n");
  auto name = [](int v) { return absl::StrCat("v", v); };
  for (size_t i = 0; i < body.size(); ++i) {
    if (!in_loop_[i]) continue;
    const PwInstr& in = body[i];
    const DType d = in.dtype;
    if (in.op == PwOp::kLoad) {
      const int o = in.operand;
      std::string value;
      if (contig) {
        const std::string a =
            pipelined && streamed(i) ? absl::StrCat("a", i, "[u]") : absl::StrCat("a", i);
        value = scalar_load(o) ? a : absl::StrCat(a, ".v[q]");
      } else {
        value = absl::StrCat(Ptr(o, true), "[", PerColumn(o) ? "" : absl::StrCat("ro", o, " + "),
                             KeptBroadcast(o) ? "0LL" : Offset(o, "c", lead_, rank_), "]");
      }
      if (d == DType::kBool) value = absl::StrCat("(", value, " != 0)");
      absl::StrAppend(&out, ind2, "const ", CudaRegType(d), " v", i, " = ", value, ";\n");
    } else if (in.op == PwOp::kStore) {
      const int o = OperandOf(in);
      std::string value = name(in.args[0]);
      if (d == DType::kBool) value = absl::StrCat("(unsigned char)", value);
      if (std::find(vector_stores.begin(), vector_stores.end(), static_cast<int>(i)) !=
          vector_stores.end()) {
        absl::StrAppend(&out, ind2, "s", i, ".v[q] = ", value, ";\n");
        continue;
      }
      absl::StrAppend(&out, ind2, Ptr(o, false), "[ro", o, " + ",
                      contig ? ColumnOffset(o, "q") : Offset(o, "c", lead_, rank_), "] = ", value,
                      ";\n");
    } else if (IsReduce(in.op)) {
      absl::StrAppend(&out, ind2, "acc", i, "[q] = tccd_rt::", ReduceOpName(in.op), "Op::apply(acc",
                      i, "[q], v", in.args[0], ");\n");
    } else {
      const std::string expr = CudaInstrExpr(k_, i, name);
      if (expr.empty())
        return absl::InternalError(
            absl::StrCat("no CUDA lowering for ", PwOpName(in.op), " at %", i));
      absl::StrAppend(&out, ind2, "const ", CudaRegType(d), " v", i, " = ", expr, ";\n");
    }
  }
  absl::StrAppend(&out, ind, "}\n");
  for (int i : vector_stores) {
    const int o = OperandOf(body[i]);
    const char* t = CudaMemType(body[i].dtype);
    absl::StrAppend(&out, ind, "*reinterpret_cast<tccd_rt::Vec<", t, ", kVec>*>(", Ptr(o, false),
                    " + ro", o, " + ", Fixed(o, contig) ? absl::StrCat("co", o) : "c0", ") = s", i,
                    ";\n");
  }
  if (pipelined) absl::StrAppend(&out, "      }\n");
  absl::StrAppend(&out, "    }\n  }\n");
  if (nred == 0) {
    absl::StrAppend(&out, "}\n\n");
    return absl::OkStatus();
  }
  // Combine: the stripes of the block, then (kSplit > 1) the blocks of the cluster.
  absl::StrAppend(&out, "#pragma unroll\n  for (int q = 0; q < kVec; ++q) {\n");
  for (int i = 0; i < nred; ++i)
    absl::StrAppend(&out, "    part[", i, "][ty][tx * kVec + q] = acc", reductions_[i], "[q];\n");
  absl::StrAppend(
      &out, "  }\n  __syncthreads();\n", "  for (int idx = threadIdx.x; idx < ", nred,
      " * kTX * kVec; idx += kTX * kTY) {\n",
      "    const int i = idx / (kTX * kVec), col = idx % (kTX * kVec);\n",
      "    float s = part[i][0][col];\n",
      "    for (int y = 1; y < kTY; ++y) s = tccd_rt::Combine(i, s, part[i][y][col]);\n",
      "    part[i][0][col] = s;\n  }\n");
  absl::StrAppend(
      &out, "  if constexpr (kSplit > 1) {\n",
      "    tccd_rt::cluster_sync();  // every block's partials are in its shared memory\n",
      "    if (split == 0) {\n", "      for (int idx = threadIdx.x; idx < ", nred,
      " * kTX * kVec; idx += kTX * kTY) {\n",
      "        const int i = idx / (kTX * kVec), col = idx % (kTX * kVec);\n",
      "        float s = part[i][0][col];\n",
      "        for (int b = 1; b < kSplit; ++b) s = tccd_rt::Combine(i, s, "
      "tccd_rt::cluster_load(&part[i][0][col], b));\n",
      "        part[i][0][col] = s;\n      }\n    }\n",
      "    tccd_rt::cluster_sync();  // the leader has read the others' shared memory\n",
      "    if (split != 0) return;\n  } else {\n    __syncthreads();\n  }\n");
  // Epilogue: threads of stripe 0, per column.
  absl::StrAppend(
      &out,
      "  if (ty != 0 || c0 >= kCols) return;\n#pragma unroll\n  for (int q = 0; q < kVec; ++q) {\n",
      "    const int c = c0 + q;\n");
  for (size_t i = 0; i < body.size(); ++i) {
    if (!in_epi_[i]) continue;
    const PwInstr& in = body[i];
    const DType d = in.dtype;
    if (IsReduce(in.op)) {
      const int idx =
          static_cast<int>(std::find(reductions_.begin(), reductions_.end(), static_cast<int>(i)) -
                           reductions_.begin());
      absl::StrAppend(&out, "    const float v", i, " = part[", idx, "][0][tx * kVec + q];\n");
    } else if (in.op == PwOp::kLoad) {
      const int o = in.operand;
      std::string value = absl::StrCat(
          Ptr(o, true), "[",
          contig ? (Fixed(o, contig) ? ColumnOffset(o, "q") : "c") : Offset(o, "c", lead_, rank_),
          "]");
      if (d == DType::kBool) value = absl::StrCat("(", value, " != 0)");
      absl::StrAppend(&out, "    const ", CudaRegType(d), " v", i, " = ", value, ";\n");
    } else if (in.op == PwOp::kStore) {
      const int o = OperandOf(in);
      std::string value = name(in.args[0]);
      if (d == DType::kBool) value = absl::StrCat("(unsigned char)", value);
      absl::StrAppend(
          &out, "    ", Ptr(o, false), "[",
          contig ? (Fixed(o, contig) ? ColumnOffset(o, "q") : "c") : Offset(o, "c", lead_, rank_),
          "] = ", value, ";\n");
    } else {
      const std::string expr = CudaInstrExpr(k_, i, name);
      if (expr.empty())
        return absl::InternalError(
            absl::StrCat("no CUDA lowering for ", PwOpName(in.op), " at %", i));
      absl::StrAppend(&out, "    const ", CudaRegType(d), " v", i, " = ", expr, ";\n");
    }
  }
  absl::StrAppend(&out, "  }\n}\n\n");
  return absl::OkStatus();
}

absl::Status ColumnEmitter::Emit(std::string& out) {
  Liveness();
  absl::StrAppend(&out, "\n// ", std::string(76, '-'), "\n", CudaIrComment(k_));
  absl::StrAppend(&out, "namespace ", ns_, " {\n\n");
  absl::StrAppend(&out, "struct Params {\n  char* ptr[", k_.num_operands(),
                  "];\n  long long stride[", k_.num_operands(), "][", rank_, "];\n",
                  RuntimeRows() ? absl::StrCat("  long long size[", rank_, "];\n") : "", "};\n");
  absl::StrAppend(&out, "static_assert(sizeof(Params) == ", geo_.param_bytes,
                  ", \"parameter layout\");\n\n");
  // Combine(i, a, b): reduction i's operator.
  absl::StrAppend(&out, "}  // namespace ", ns_, "\n\n");
  std::string combine = "__device__ __forceinline__ float Combine(int i, float a, float b) {\n";
  for (size_t i = 0; i < reductions_.size(); ++i) {
    absl::StrAppend(&combine, "  if (i == ", i,
                    ") return tccd_rt::", ReduceOpName(k_.body[reductions_[i]].op),
                    "Op::apply(a, b);\n");
  }
  absl::StrAppend(&combine, "  return a;\n}\n");
  // Per-kernel Combine lives in the kernel's namespace; the entries call it through a using.
  out.insert(out.rfind("}  // namespace " + ns_), combine);
  std::string contig, strided;
  if (k_.has_dense_entry()) RETURN_IF_ERROR(EmitEntry(true, contig));
  if (k_.has_strided_entry()) RETURN_IF_ERROR(EmitEntry(false, strided));
  for (std::string* e : {&contig, &strided}) {
    size_t at;
    while ((at = e->find("tccd_rt::Combine(")) != std::string::npos)
      e->replace(at, 17, ns_ + "::Combine(");
    out += *e;
  }
  return absl::OkStatus();
}

}  // namespace

const char kCudaColumnPrelude[] = R"(
// Column reductions on sm_90: thread-block cluster barrier and distributed shared memory loads.
namespace tccd_rt {
__device__ __forceinline__ void cluster_sync() {
#if __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
#endif
}
// The float at `p` (this block's shared memory) in block `rank` of the cluster.
__device__ __forceinline__ float cluster_load(const float* p, int rank) {
#if __CUDA_ARCH__ >= 900
  unsigned local = static_cast<unsigned>(__cvta_generic_to_shared(p)), remote;
  float v;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
  asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(remote) : "memory");
  return v;
#else
  return *p;
#endif
}
}  // namespace tccd_rt
)";

CudaColumnGeometry ColumnGeometryOf(const PointwiseKernel& kernel, int cc_major) {
  CudaColumnGeometry g;
  const int rank = static_cast<int>(kernel.shape.size());
  const int lead = kernel.reduction.num_reduced_dims;
  // Run-time row counts (kRuntimeDim in a reduced dim, symbolic graphs): rows -1, and nothing
  // below depends on the row count but the cluster split (see there).
  const bool runtime_rows = HasRuntimeShape(kernel);
  g.rows = 1;
  g.cols = 1;
  for (int d = 0; d < rank; ++d) (d < lead ? g.rows : g.cols) *= kernel.shape[d];
  if (runtime_rows) g.rows = -1;
  // The vector is 16 bytes of the widest operand streamed over the rows. Per-column operands
  // (an f32 mean or weight beside bf16 maps, the f32 sums stored) are read once per column
  // vector and hit L1, fixed-layout operands constant along the innermost kept dim (a per-row
  // statistic over a [A, B, N] split) once per thread and row; neither narrows it (wider
  // per-column vectors take two 16-byte loads): with them counted a bf16 map moved 8 bytes per
  // thread and row.
  auto fixed_scalar = [&](int o) {
    if (!IsFixedLayoutOperand(kernel, o)) return false;
    for (int d = rank - 1; d >= lead; --d)
      if (kernel.shape[d] > 1) return kernel.fixed_strides[static_cast<size_t>(o) * rank + d] == 0;
    return false;
  };
  int largest = 0;
  for (int pass = 0; pass < 2 && largest == 0; ++pass) {
    for (int o = 0; o < kernel.num_operands(); ++o) {
      if (o < static_cast<int>(kernel.reduction.kept_broadcast.size()) &&
          kernel.reduction.kept_broadcast[o])
        continue;
      const bool per_column = o < static_cast<int>(kernel.reduction.row_operand.size()) &&
                              kernel.reduction.row_operand[o];
      if (pass == 0 && (per_column || fixed_scalar(o))) continue;
      largest = std::max(largest, ir::DTypeBytes(kernel.operand_dtype(o)));
    }
  }
  // Kernels that store element outputs in the row loop (a GELU backward beside its bias
  // gradient) take the TCCD_COLUMN_* geometry knobs.
  bool loop_stores = false, knobs = false;
  int reductions = 0;
  for (const PwInstr& in : kernel.body) reductions += IsReduce(in.op) ? 1 : 0;
  for (int j = 0; j < static_cast<int>(kernel.output_dtypes.size()); ++j) {
    const int o = static_cast<int>(kernel.input_dtypes.size()) + j;
    loop_stores = loop_stores || !(o < static_cast<int>(kernel.reduction.row_operand.size()) &&
                                   kernel.reduction.row_operand[o]);
  }
  knobs = loop_stores;
  const int vec_bytes = knobs && ColumnVecBytes() > 0 ? ColumnVecBytes() : 16;
  g.vec = std::max(vec_bytes / std::max(largest, 1), 1);
  while (g.vec > 1 && g.cols % g.vec != 0) g.vec /= 2;
  const int64_t col_vectors = g.cols / g.vec;
  // Enough blocks for the 132 SMs of an H100 (and two waves' worth of tiles on smaller parts):
  // narrow tiles first (down to 4 threads = 64 bytes per row, two sectors), then clusters.
  g.block = 256;
  // A larger block only while the reduction tiles fit 48 KiB of static shared memory.
  if (knobs && ColumnBlock() > 0 &&
      static_cast<int64_t>(std::max(reductions, 1)) * ColumnBlock() * g.vec * 4 <= 48 * 1024)
    g.block = ColumnBlock();
  if (knobs) g.min_blocks = ColumnMinBlocks();
  g.tx = 32;
  while (g.tx > 4 && (col_vectors + g.tx - 1) / g.tx * 8 < 264) g.tx /= 2;
  while (g.tx > 1 && g.tx / 2 >= col_vectors) g.tx /= 2;
  g.ty = g.block / g.tx;
  const int64_t tiles = (col_vectors + g.tx - 1) / g.tx;
  g.split = 1;
  if (cc_major >= 9) {
    // At least 8 rows per thread in each block of a cluster.
    // Run-time rows: the split the tiles allow, as for many rows (a short call leaves some
    // blocks of a cluster without rows; they still take part in its barriers).
    while (g.split < 8 && (runtime_rows || g.rows / (g.split * 2) >= g.ty * 8) &&
           tiles * g.split < 528)
      g.split *= 2;
  }
  g.rows_per_split = runtime_rows ? -1 : (g.rows + g.split - 1) / g.split;
  // Rows whose loads are in flight together (EmitEntry's streaming loop): each costs a register
  // per 4 bytes of every vector input, so fewer with many (a batch norm backward's five).
  int streamed = 0;
  for (int o = 0; o < static_cast<int>(kernel.input_dtypes.size()); ++o) {
    const bool per_column = o < static_cast<int>(kernel.reduction.row_operand.size()) &&
                            kernel.reduction.row_operand[o];
    const bool broadcast = o < static_cast<int>(kernel.reduction.kept_broadcast.size()) &&
                           kernel.reduction.kept_broadcast[o];
    if (!per_column && !broadcast && !fixed_scalar(o)) ++streamed;
  }
  g.unroll = ColumnUnrollOverride() > 0 ? ColumnUnrollOverride()
             : streamed <= 2            ? 4
             : streamed <= 4            ? 2
                                        : 1;
  g.grid = tiles * g.split;
  g.param_bytes = 8 * kernel.num_operands() * (1 + rank) + (runtime_rows ? 8 * rank : 0);
  return g;
}

absl::Status EmitColumnReductionKernel(const PointwiseKernel& kernel, int cc_major,
                                       std::string& out) {
  return ColumnEmitter(kernel, cc_major).Emit(out);
}

}  // namespace tccd::codegen
