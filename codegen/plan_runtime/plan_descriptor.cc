// v1::Plan -> plan descriptor words (runtime/tccd_plan_format.h).
//
// A symbolic plan (sizes, strides or SymInt arguments that are expressions) is written body
// first (values, steps, outputs), collecting every distinct expression into a table as it goes;
// the header (symbols, input bindings, the table as postfix programs) then goes in front of it,
// since the runtime reads the table before anything refers to it.
#include "codegen/plan_runtime/plan_descriptor.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "codegen/ir/sym_expr.h"
#include "codegen/plan_runtime/runtime/tccd_plan_format.h"
#include "base/status_macros.h"

namespace tccd::codegen {
namespace {

constexpr int kMaxRank = 16;  // tccd_plan_runtime.c MAX_RANK

class Writer {
 public:
  void Word(int64_t w) { words_.push_back(w); }
  // Length, then the bytes and at least one zero byte, padded to whole words.
  void String(std::string_view s) {
    Word(static_cast<int64_t>(s.size()));
    size_t n = (s.size() + 1 + 7) / 8;
    size_t at = words_.size();
    words_.resize(at + n, 0);
    std::memcpy(reinterpret_cast<char*>(words_.data() + at), s.data(), s.size());
  }
  void Ids(const google::protobuf::RepeatedField<int32_t>& ids) {
    Word(ids.size());
    for (int32_t id : ids) Word(id);
  }
  std::string Bytes() const {
    // The format is little-endian words; the daemon only runs on little-endian hosts (x86-64,
    // aarch64), so the in-memory words are the bytes.
    return std::string(reinterpret_cast<const char*>(words_.data()),
                       words_.size() * sizeof(int64_t));
  }

 private:
  std::vector<int64_t> words_;
};

absl::StatusOr<int64_t> C10Dtype(v1::DType dtype) {
  switch (dtype) {
    case v1::DTYPE_UNSPECIFIED:
      return -1;  // an absent value (a None output)
    case v1::FLOAT32:
      return TCCD_C10_FLOAT32;
    case v1::FLOAT64:
      return TCCD_C10_FLOAT64;
    case v1::FLOAT16:
      return TCCD_C10_FLOAT16;
    case v1::BFLOAT16:
      return TCCD_C10_BFLOAT16;
    case v1::INT8:
      return TCCD_C10_INT8;
    case v1::INT16:
      return TCCD_C10_INT16;
    case v1::INT32:
      return TCCD_C10_INT32;
    case v1::INT64:
      return TCCD_C10_INT64;
    case v1::UINT8:
      return TCCD_C10_UINT8;
    case v1::UINT16:
      return TCCD_C10_UINT16;
    case v1::UINT32:
      return TCCD_C10_UINT32;
    case v1::UINT64:
      return TCCD_C10_UINT64;
    case v1::BOOL:
      return TCCD_C10_BOOL;
    case v1::COMPLEX64:
      return TCCD_C10_COMPLEX64;
    case v1::COMPLEX128:
      return TCCD_C10_COMPLEX128;
    default:
      return absl::UnimplementedError(absl::StrCat("dtype ", dtype));
  }
}

absl::StatusOr<int64_t> C10Device(v1::DeviceType type) {
  switch (type) {
    case v1::CPU:
      return TCCD_C10_DEVICE_CPU;
    case v1::CUDA:
      return TCCD_C10_DEVICE_CUDA;
    default:
      return absl::UnimplementedError(absl::StrCat("device type ", type));
  }
}

// The expressions a plan mentions: canonical text -> index into the descriptor's table, and the
// table's postfix programs (TCCD_EXPR_*).
class Exprs {
 public:
  // A dim word: the size itself (>= 0), or -(k + 1) for expression k. A negative size, stride
  // or offset (torch has none) would read as an expression: UNIMPLEMENTED, so that such a plan
  // is interpreted rather than failed.
  absl::StatusOr<int64_t> DimWord(const v1::Dim& dim) {
    if (dim.kind_case() != v1::Dim::kExpr) {
      if (dim.value() < 0)
        return absl::UnimplementedError(
            absl::StrCat("negative size, stride or offset ", dim.value()));
      return dim.value();
    }
    ASSIGN_OR_RETURN(Entry e, Find(dim.expr()));
    if (e.constant) {
      if (e.value < 0)
        return absl::UnimplementedError(absl::StrCat("dimension ", dim.expr(), " is negative"));
      return e.value;
    }
    return -(e.value + 1);
  }

  // A SymInt argument or output: TCCD_VAL_INT for a constant expression, else TCCD_VAL_SYM.
  absl::Status Value(const std::string& text, Writer& w) {
    ASSIGN_OR_RETURN(Entry e, Find(text));
    w.Word(e.constant ? TCCD_VAL_INT : TCCD_VAL_SYM);
    w.Word(e.value);
    return absl::OkStatus();
  }

  // Symbols s0 .. s(n - 1): one past the highest any expression names.
  int NumSymbols() const { return num_symbols_; }
  bool empty() const { return texts_.empty(); }

  void Write(Writer& w) const {
    w.Word(static_cast<int64_t>(texts_.size()));
    for (size_t k = 0; k < texts_.size(); ++k) {
      w.String(texts_[k]);
      w.Word(static_cast<int64_t>(programs_[k].size()));
      for (int64_t op : programs_[k]) w.Word(op);
    }
  }

 private:
  struct Entry {
    bool constant = false;
    int64_t value = 0;  // the constant, or the table index
  };

  absl::StatusOr<Entry> Find(const std::string& text) {
    if (auto it = index_.find(text); it != index_.end()) return it->second;
    absl::StatusOr<ir::SymExpr> parsed = ir::ParseSymExpr(text);
    // The plan builder writes canonical expressions it parsed itself: a bad one is its bug.
    if (!parsed.ok())
      return absl::InternalError(absl::StrCat("plan expression: ", parsed.status().message()));
    Entry e;
    if (parsed->IsConst()) {
      e = {true, parsed->value};
    } else {
      std::vector<int64_t> program;
      RETURN_IF_ERROR(Emit(*parsed, program));
      e = {false, static_cast<int64_t>(texts_.size())};
      texts_.push_back(text);
      programs_.push_back(std::move(program));
    }
    index_.emplace(text, e);
    return e;
  }

  absl::Status Emit(const ir::SymExpr& e, std::vector<int64_t>& out) {
    using Kind = ir::SymExpr::Kind;
    switch (e.kind) {
      case Kind::kConst:
        out.insert(out.end(), {TCCD_EXPR_CONST, e.value});
        return absl::OkStatus();
      case Kind::kSymbol:
        num_symbols_ = std::max<int>(num_symbols_, static_cast<int>(e.value) + 1);
        out.insert(out.end(), {TCCD_EXPR_SYM, e.value});
        return absl::OkStatus();
      default:
        break;
    }
    int64_t op = 0;
    switch (e.kind) {
      case Kind::kAdd:
        op = TCCD_EXPR_ADD;
        break;
      case Kind::kMul:
        op = TCCD_EXPR_MUL;
        break;
      case Kind::kFloorDiv:
        op = TCCD_EXPR_FLOORDIV;
        break;
      case Kind::kMod:
        op = TCCD_EXPR_MOD;
        break;
      case Kind::kMax:
        op = TCCD_EXPR_MAX;
        break;
      case Kind::kMin:
        op = TCCD_EXPR_MIN;
        break;
      case Kind::kPow:
        op = TCCD_EXPR_POW;
        break;
      default:
        return absl::InternalError("unknown symbolic operation");
    }
    if (e.operands.size() < 2)
      return absl::InternalError("symbolic operation with fewer than two operands");
    // n-ary sums, products, Max and Min fold left: ((a + b) + c).
    RETURN_IF_ERROR(Emit(e.operands[0], out));
    for (size_t i = 1; i < e.operands.size(); ++i) {
      RETURN_IF_ERROR(Emit(e.operands[i], out));
      out.push_back(op);
    }
    return absl::OkStatus();
  }

  absl::flat_hash_map<std::string, Entry> index_;
  std::vector<std::string> texts_;
  std::vector<std::vector<int64_t>> programs_;
  int num_symbols_ = 0;
};

absl::Status WriteMeta(const v1::TensorMeta& meta, Exprs& exprs, Writer& w) {
  ASSIGN_OR_RETURN(int64_t dtype, C10Dtype(meta.dtype()));
  if (dtype < 0) {
    for (int64_t word : {int64_t{-1}, int64_t{0}, int64_t{-1}, int64_t{0}, int64_t{0}})
      w.Word(word);
    return absl::OkStatus();
  }
  if (meta.sizes_size() > kMaxRank || meta.strides_size() != meta.sizes_size()) {
    return absl::UnimplementedError(absl::StrCat("tensor of rank ", meta.sizes_size(),
                                                 " (the runtime takes up to ", kMaxRank, ")"));
  }
  ASSIGN_OR_RETURN(int64_t device, C10Device(meta.device().type()));
  w.Word(dtype);
  w.Word(device);
  w.Word(meta.device().index());
  w.Word(meta.sizes_size());
  for (const v1::Dim& d : meta.sizes()) {
    ASSIGN_OR_RETURN(int64_t v, exprs.DimWord(d));
    w.Word(v);
  }
  for (const v1::Dim& d : meta.strides()) {
    ASSIGN_OR_RETURN(int64_t v, exprs.DimWord(d));
    w.Word(v);
  }
  int64_t offset = 0;
  if (meta.has_storage_offset()) {
    ASSIGN_OR_RETURN(offset, exprs.DimWord(meta.storage_offset()));
  }
  w.Word(offset);
  return absl::OkStatus();
}

absl::Status WriteValue(const v1::Value& value, Exprs& exprs, Writer& w) {
  switch (value.kind_case()) {
    case v1::Value::KIND_NOT_SET:
    case v1::Value::kNone:
      w.Word(TCCD_VAL_NONE);
      break;
    case v1::Value::kRef:
      w.Word(TCCD_VAL_REF);
      w.Word(value.ref().node());
      break;
    case v1::Value::kIntValue:
      w.Word(TCCD_VAL_INT);
      w.Word(value.int_value());
      break;
    case v1::Value::kFloatValue: {
      int64_t bits;
      double d = value.float_value();
      std::memcpy(&bits, &d, sizeof(bits));
      w.Word(TCCD_VAL_FLOAT);
      w.Word(bits);
      break;
    }
    case v1::Value::kBoolValue:
      w.Word(TCCD_VAL_BOOL);
      w.Word(value.bool_value());
      break;
    case v1::Value::kStringValue:
      w.Word(TCCD_VAL_STRING);
      w.String(value.string_value());
      break;
    case v1::Value::kDtype: {
      ASSIGN_OR_RETURN(int64_t code, C10Dtype(value.dtype()));
      w.Word(TCCD_VAL_DTYPE);
      w.Word(code);
      break;
    }
    case v1::Value::kDevice: {
      ASSIGN_OR_RETURN(int64_t type, C10Device(value.device().type()));
      w.Word(TCCD_VAL_DEVICE);
      w.Word(type);
      w.Word(value.device().index());
      break;
    }
    case v1::Value::kLayout:
      w.Word(TCCD_VAL_LAYOUT);
      w.Word(value.layout());
      break;
    case v1::Value::kMemoryFormat:
      w.Word(TCCD_VAL_MEMORY_FORMAT);
      w.Word(value.memory_format());
      break;
    case v1::Value::kList:
      w.Word(TCCD_VAL_LIST);
      w.Word(value.list().items_size());
      for (const v1::Value& item : value.list().items())
        RETURN_IF_ERROR(WriteValue(item, exprs, w));
      break;
    case v1::Value::kSymExpr:
      return exprs.Value(value.sym_expr(), w);
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> Abi(std::string_view abi) {
  if (abi == "tccd-cpu-1") return TCCD_ABI_CPU;
  if (abi == "tccd-cuda-1") return TCCD_ABI_CUDA;
  if (abi == "tccd-cuda-segment-1") return TCCD_ABI_CUDA_SEGMENT;
  if (abi == "tccd-cpu-sym-1") return TCCD_ABI_CPU_SYM;
  if (abi == "tccd-cuda-sym-1") return TCCD_ABI_CUDA_SYM;
  if (abi == "tccd-cuda-sym-gemm-1") return TCCD_ABI_CUDA_SYM_GEMM;
  return absl::UnimplementedError(absl::StrCat("native ABI ", std::string(abi)));
}

// What the steps of one plan share while they are written.
struct PlanContext {
  const v1::Plan& plan;
  bool symbolic;  // kernels take their operands' own strides (TCCD_LAYOUT_OWN)
  Exprs& exprs;
};

// A kernel's or segment's into[n_out]: per output -1, or the value whose buffer it is written
// into (tccd.v1.Step.write_into: a graph input, or a value that dies at the step).
absl::Status WriteInto(const v1::Step& step, int index, const PlanContext& ctx, Writer& w) {
  if (step.write_into_size() != 0 && step.write_into_size() != step.outputs_size())
    return absl::InternalError(absl::StrCat("step ", index, ": ", step.write_into_size(),
                                            " write_into entries for ", step.outputs_size(),
                                            " outputs"));
  for (int o = 0; o < step.outputs_size(); ++o) {
    const int into = step.write_into_size() ? step.write_into(o) : -1;
    if (into < -1 || into >= ctx.plan.values_size())
      return absl::InternalError(
          absl::StrCat("step ", index, ": writes into ", into, ", which is not a value"));
    w.Word(into);
  }
  return absl::OkStatus();
}

absl::Status WriteStep(const v1::Step& step, int index, PlanContext& ctx, Writer& w) {
  switch (step.kind_case()) {
    case v1::Step::kNative: {
      const v1::NativeCall& call = step.native();
      ASSIGN_OR_RETURN(int64_t abi, Abi(call.abi()));
      if (abi == TCCD_ABI_CUDA_SYM_GEMM) {
        // A gemm with run-time sizes: its ten sizes are the shape's dim words; its operands
        // are checked against their own metas at run time (no expected strides).
        if (!ctx.symbolic || call.shape_size() != TCCD_GEMM_DIMS || step.outputs_size() != 1 ||
            step.outputs(0) < 0 || call.inputs_size() < 2 || call.inputs_size() > 3)
          return absl::InternalError(absl::StrCat("step ", index, ": a malformed sized gemm"));
        w.Word(TCCD_STEP_KERNEL);
        w.Word(abi);
        w.String(call.artifact());
        w.String(call.symbol());
        w.Word(TCCD_GEMM_DIMS);
        for (int64_t word : call.shape()) {
          if (word >= 0) {
            w.Word(word);
            continue;
          }
          // GemmDimRef: operand's size or stride.
          const int64_t code = -(word + 1), dim = code % 16, part = (code / 16) % 2;
          const int64_t operand = code / 32;
          const int id = operand < call.inputs_size()    ? call.inputs(operand)
                         : operand == call.inputs_size() ? step.outputs(0)
                                                         : -1;
          if (id < 0 || id >= ctx.plan.values_size() || dim >= ctx.plan.values(id).sizes_size())
            return absl::InternalError(
                absl::StrCat("step ", index, ": sized gemm word ", word, " names no operand dim"));
          const v1::TensorMeta& meta = ctx.plan.values(id);
          ASSIGN_OR_RETURN(int64_t dw,
                           ctx.exprs.DimWord(part == 0 ? meta.sizes(dim) : meta.strides(dim)));
          w.Word(dw);
        }
        w.Ids(call.inputs());
        w.Ids(step.outputs());
        RETURN_IF_ERROR(WriteInto(step, index, ctx, w));
        w.Word(TCCD_LAYOUT_OWN);
        break;
      }
      const int rank = call.shape_size();
      if (rank > kMaxRank)
        return absl::UnimplementedError(absl::StrCat("step ", index, ": rank ", rank));
      const int operands = call.inputs_size() + step.outputs_size();
      if (!ctx.symbolic && call.expected_strides_size() != operands * rank) {
        return absl::InternalError(absl::StrCat("step ", index, ": ", call.expected_strides_size(),
                                                " expected strides for ", operands,
                                                " operands of rank ", rank));
      }
      if (ctx.symbolic && step.outputs_size() == 0) {
        return absl::InternalError(absl::StrCat("step ", index, ": a kernel without outputs"));
      }
      w.Word(TCCD_STEP_KERNEL);
      w.Word(abi);
      w.String(call.artifact());
      w.String(call.symbol());
      w.Word(rank);
      for (int d = 0; d < rank; ++d) {
        const int64_t size = call.shape(d);
        if (size >= 0) {
          w.Word(size);
          continue;
        }
        // A run-time dim (kRuntimeDim): every operand of a symbolic kernel, right-aligned to
        // the iteration space, has its size there or a static 1 (symbolic_kernels.h), so the
        // first operand with an expression there (outputs first) names it: a row kernel's
        // outputs, a column kernel's element inputs (its column outputs drop the row dims).
        if (!ctx.symbolic)
          return absl::InternalError(
              absl::StrCat("step ", index, ": run-time dim ", d, " in a static plan"));
        const v1::Dim* found = nullptr;
        auto look = [&](int id) {
          if (found != nullptr || id < 0 || id >= ctx.plan.values_size()) return;
          const v1::TensorMeta& m = ctx.plan.values(id);
          const int at = d - (rank - m.sizes_size());
          if (at >= 0 && m.sizes(at).kind_case() == v1::Dim::kExpr) found = &m.sizes(at);
        };
        // Gather operands and scatter outputs (index kernels) are not aligned to the space.
        for (int o = 0; o < step.outputs_size(); ++o)
          if (call.scatter_outputs_size() == 0 || !call.scatter_outputs(o)) look(step.outputs(o));
        for (int i = 0; i < call.inputs_size(); ++i)
          if (call.gather_inputs_size() == 0 || !call.gather_inputs(i)) look(call.inputs(i));
        if (found == nullptr)
          return absl::InternalError(absl::StrCat("step ", index, ": run-time dim ", d,
                                                  " and no operand with an expression there"));
        ASSIGN_OR_RETURN(int64_t word, ctx.exprs.DimWord(*found));
        w.Word(word);
      }
      w.Ids(call.inputs());
      w.Ids(step.outputs());
      RETURN_IF_ERROR(WriteInto(step, index, ctx, w));
      if (ctx.symbolic) {
        // Layouts vary with the sizes: every operand's own strides, as runtime.py's symbolic
        // kernels take them (kernels with run-time sizes take any strides).
        // Outputs of a lower rank (a column kernel's per-column values) are right-aligned.
        for (int out : step.outputs()) {
          if (out < 0 || out >= ctx.plan.values_size() || ctx.plan.values(out).sizes_size() > rank)
            return absl::InternalError(absl::StrCat("step ", index, ": output ", out,
                                                    " has a higher rank than the kernel's ", rank));
        }
        if (call.gather_inputs_size() == 0 && call.scatter_outputs_size() == 0) {
          w.Word(TCCD_LAYOUT_OWN);
          break;
        }
        // An index kernel: its gather operands and scatter output take their own strides.
        if ((call.gather_inputs_size() != 0 && call.gather_inputs_size() != call.inputs_size()) ||
            (call.scatter_outputs_size() != 0 &&
             call.scatter_outputs_size() != step.outputs_size()))
          return absl::InternalError(
              absl::StrCat("step ", index, ": ", call.gather_inputs_size(), " gather flags for ",
                           call.inputs_size(), " inputs, ", call.scatter_outputs_size(),
                           " scatter flags for ", step.outputs_size(), " outputs"));
        w.Word(TCCD_LAYOUT_OWN_GATHER);
        for (int i = 0; i < call.inputs_size(); ++i)
          w.Word(call.gather_inputs_size() != 0 && call.gather_inputs(i) ? 1 : 0);
        for (int o = 0; o < step.outputs_size(); ++o)
          w.Word(call.scatter_outputs_size() != 0 && call.scatter_outputs(o) ? 1 : 0);
        break;
      }
      // Index-aware kernels (KernelInfo.kind "*_index") take gather operands' own strides, and
      // CUDA kernels have only the entry point of their declared layout (entry_points.h): an
      // input in another layout is copied into the declared one (as runtime.py does).
      bool copy_to_declared = abi == TCCD_ABI_CUDA;
      for (const v1::KernelInfo& k : call.kernels())
        copy_to_declared |= k.kind().ends_with("_index") || k.kind().ends_with("_reordered");
      w.Word(copy_to_declared ? TCCD_LAYOUT_COPY : TCCD_LAYOUT_DECLARED);
      for (int64_t s : call.expected_strides()) w.Word(s);
      break;
    }
    case v1::Step::kSegment: {
      const v1::NativeSegment& seg = step.segment();
      if (ctx.symbolic)
        return absl::UnimplementedError(
            absl::StrCat("step ", index, ": a segment in a symbolic plan"));
      ASSIGN_OR_RETURN(int64_t abi, Abi(seg.abi()));
      w.Word(TCCD_STEP_SEGMENT);
      w.Word(abi);
      w.String(seg.artifact());
      w.String(seg.symbol());
      w.Ids(seg.inputs());
      w.Ids(step.outputs());
      RETURN_IF_ERROR(WriteInto(step, index, ctx, w));
      w.Word(seg.workspace_bytes());
      break;
    }
    case v1::Step::kAlias:
      if (ctx.symbolic)
        return absl::UnimplementedError(
            absl::StrCat("step ", index, ": an alias in a symbolic plan"));
      if (step.outputs_size() != 1)
        return absl::InternalError(
            absl::StrCat("step ", index, ": alias with ", step.outputs_size(), " outputs"));
      w.Word(TCCD_STEP_ALIAS);
      w.Word(step.alias().base());
      w.Word(step.outputs(0));
      break;  // the offset delta is appended by the caller, which has the value metas
    case v1::Step::kExternCall: {
      const v1::ExternCall& call = step.extern_call();
      w.Word(TCCD_STEP_EXTERN);
      w.String(call.target());
      w.Word(call.args_size());
      for (const v1::Value& v : call.args()) RETURN_IF_ERROR(WriteValue(v, ctx.exprs, w));
      w.Word(call.kwargs_size());
      for (const v1::NamedValue& kv : call.kwargs()) {
        w.String(kv.name());
        RETURN_IF_ERROR(WriteValue(kv.value(), ctx.exprs, w));
      }
      w.Ids(step.outputs());
      break;
    }
    case v1::Step::KIND_NOT_SET:
      return absl::InternalError(absl::StrCat("step ", index, " has no kind"));
  }
  return absl::OkStatus();
}

bool HasSymExpr(const v1::Value& value) {
  if (value.kind_case() == v1::Value::kSymExpr) return true;
  if (value.kind_case() == v1::Value::kList)
    for (const v1::Value& item : value.list().items())
      if (HasSymExpr(item)) return true;
  return false;
}

bool HasExpr(const v1::TensorMeta& meta) {
  for (const v1::Dim& d : meta.sizes())
    if (d.kind_case() == v1::Dim::kExpr) return true;
  for (const v1::Dim& d : meta.strides())
    if (d.kind_case() == v1::Dim::kExpr) return true;
  return meta.has_storage_offset() && meta.storage_offset().kind_case() == v1::Dim::kExpr;
}

// A plan scheduled from a symbolic graph says so (Plan.symbolic); one with an expression anywhere
// is symbolic too (entries written before the flag). Its kernels carry no expected strides
// (symbolic_kernels.h), so they take their operands' own, even where every value's meta is
// static (a graph whose only symbol is a SymInt output, or rewrites that took the last one).
bool IsSymbolic(const v1::Plan& plan) {
  if (plan.symbolic()) return true;
  for (const v1::TensorMeta& meta : plan.values())
    if (HasExpr(meta)) return true;
  for (const v1::Value& v : plan.outputs())
    if (HasSymExpr(v)) return true;
  for (const v1::Step& step : plan.steps()) {
    if (step.has_native() &&
        (step.native().abi() == "tccd-cpu-sym-1" || step.native().abi() == "tccd-cuda-sym-1" ||
         step.native().abi() == "tccd-cuda-sym-gemm-1"))
      return true;
    if (!step.has_extern_call()) continue;
    for (const v1::Value& v : step.extern_call().args())
      if (HasSymExpr(v)) return true;
    for (const v1::NamedValue& kw : step.extern_call().kwargs())
      if (HasSymExpr(kw.value())) return true;
  }
  return false;
}

// Where each call's inputs carry a symbol: (input, 0 for sizes or 1 for strides, dim, symbol)
// for every input dim whose expression is a bare symbol, as the client's input_bindings.
std::vector<std::array<int64_t, 4>> InputBindings(const v1::Plan& plan) {
  std::vector<std::array<int64_t, 4>> out;
  for (int i = 0; i < plan.num_inputs() && i < plan.values_size(); ++i) {
    const v1::TensorMeta& meta = plan.values(i);
    for (int part = 0; part < 2; ++part) {
      const auto& dims = part == 0 ? meta.sizes() : meta.strides();
      for (int d = 0; d < dims.size(); ++d) {
        if (dims[d].kind_case() != v1::Dim::kExpr) continue;
        absl::StatusOr<ir::SymExpr> e = ir::ParseSymExpr(dims[d].expr());
        if (e.ok() && e->kind == ir::SymExpr::Kind::kSymbol) out.push_back({i, part, d, e->value});
      }
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> WritePlanDescriptor(const v1::Plan& plan) {
  Exprs exprs;
  PlanContext ctx{plan, IsSymbolic(plan), exprs};
  Writer w;  // the body; the header goes in front once the expressions are known
  w.Word(plan.num_inputs());
  w.Word(plan.values_size());
  std::vector<int64_t> offsets;
  for (const v1::TensorMeta& meta : plan.values()) {
    RETURN_IF_ERROR(WriteMeta(meta, exprs, w));
    int64_t offset = 0;
    if (meta.has_storage_offset() && meta.storage_offset().kind_case() == v1::Dim::kValue)
      offset = meta.storage_offset().value();
    offsets.push_back(offset);
  }
  w.Word(plan.steps_size());
  for (int i = 0; i < plan.steps_size(); ++i) {
    const v1::Step& step = plan.steps(i);
    RETURN_IF_ERROR(WriteStep(step, i, ctx, w));
    if (step.has_alias()) {
      const int base = step.alias().base(), out = step.outputs(0);
      if (base < 0 || base >= plan.values_size() || out < 0 || out >= plan.values_size()) {
        return absl::InternalError(
            absl::StrCat("step ", i, ": alias names values ", base, " and ", out));
      }
      w.Word(offsets[out] - offsets[base]);
    }
    w.Ids(step.release());
  }
  w.Word(plan.outputs_size());
  for (const v1::Value& v : plan.outputs()) RETURN_IF_ERROR(WriteValue(v, exprs, w));

  Writer header;
  header.Word(TCCD_PLAN_MAGIC);
  header.Word(TCCD_PLAN_FORMAT_VERSION);
  const std::vector<std::array<int64_t, 4>> bindings = InputBindings(plan);
  int num_symbols = exprs.NumSymbols();
  for (const auto& b : bindings)
    num_symbols = std::max<int>(num_symbols, static_cast<int>(b[3]) + 1);
  header.Word(num_symbols);
  header.Word(static_cast<int64_t>(bindings.size()));
  for (const auto& b : bindings)
    for (int64_t word : b) header.Word(word);
  exprs.Write(header);
  return header.Bytes() + w.Bytes();
}

}  // namespace tccd::codegen
