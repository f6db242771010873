// v1::Plan -> plan descriptor words (runtime/tccd_plan_format.h).
#include "codegen/plan_runtime/plan_descriptor.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "codegen/plan_runtime/runtime/tccd_plan_format.h"
#include "proto/status_macros.h"

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
    return std::string(reinterpret_cast<const char*>(words_.data()), words_.size() * sizeof(int64_t));
  }

 private:
  std::vector<int64_t> words_;
};

absl::StatusOr<int64_t> C10Dtype(v1::DType dtype) {
  switch (dtype) {
    case v1::DTYPE_UNSPECIFIED: return -1;  // an absent value (a None output)
    case v1::FLOAT32: return TCCD_C10_FLOAT32;
    case v1::FLOAT64: return TCCD_C10_FLOAT64;
    case v1::FLOAT16: return TCCD_C10_FLOAT16;
    case v1::BFLOAT16: return TCCD_C10_BFLOAT16;
    case v1::INT8: return TCCD_C10_INT8;
    case v1::INT16: return TCCD_C10_INT16;
    case v1::INT32: return TCCD_C10_INT32;
    case v1::INT64: return TCCD_C10_INT64;
    case v1::UINT8: return TCCD_C10_UINT8;
    case v1::BOOL: return TCCD_C10_BOOL;
    case v1::COMPLEX64: return TCCD_C10_COMPLEX64;
    case v1::COMPLEX128: return TCCD_C10_COMPLEX128;
    default: return absl::UnimplementedError(absl::StrCat("dtype ", dtype));
  }
}

absl::StatusOr<int64_t> C10Device(v1::DeviceType type) {
  switch (type) {
    case v1::CPU: return TCCD_C10_DEVICE_CPU;
    case v1::CUDA: return TCCD_C10_DEVICE_CUDA;
    default: return absl::UnimplementedError(absl::StrCat("device type ", type));
  }
}

absl::StatusOr<int64_t> Static(const v1::Dim& dim) {
  if (dim.kind_case() != v1::Dim::kValue) {
    return absl::UnimplementedError(absl::StrCat("symbolic dimension ", dim.expr(), " (static plans only)"));
  }
  return dim.value();
}

absl::Status WriteMeta(const v1::TensorMeta& meta, Writer& w) {
  ASSIGN_OR_RETURN(int64_t dtype, C10Dtype(meta.dtype()));
  if (dtype < 0) {
    for (int64_t word : {int64_t{-1}, int64_t{0}, int64_t{-1}, int64_t{0}, int64_t{0}}) w.Word(word);
    return absl::OkStatus();
  }
  if (meta.sizes_size() > kMaxRank || meta.strides_size() != meta.sizes_size()) {
    return absl::UnimplementedError(absl::StrCat("tensor of rank ", meta.sizes_size(), " (the runtime takes up to ", kMaxRank, ")"));
  }
  ASSIGN_OR_RETURN(int64_t device, C10Device(meta.device().type()));
  w.Word(dtype);
  w.Word(device);
  w.Word(meta.device().index());
  w.Word(meta.sizes_size());
  for (const v1::Dim& d : meta.sizes()) {
    ASSIGN_OR_RETURN(int64_t v, Static(d));
    w.Word(v);
  }
  for (const v1::Dim& d : meta.strides()) {
    ASSIGN_OR_RETURN(int64_t v, Static(d));
    w.Word(v);
  }
  int64_t offset = 0;
  if (meta.has_storage_offset()) {
    ASSIGN_OR_RETURN(offset, Static(meta.storage_offset()));
  }
  w.Word(offset);
  return absl::OkStatus();
}

absl::Status WriteValue(const v1::Value& value, Writer& w) {
  switch (value.kind_case()) {
    case v1::Value::KIND_NOT_SET:
    case v1::Value::kNone: w.Word(TCCD_VAL_NONE); break;
    case v1::Value::kRef: w.Word(TCCD_VAL_REF); w.Word(value.ref().node()); break;
    case v1::Value::kIntValue: w.Word(TCCD_VAL_INT); w.Word(value.int_value()); break;
    case v1::Value::kFloatValue: {
      int64_t bits;
      double d = value.float_value();
      std::memcpy(&bits, &d, sizeof(bits));
      w.Word(TCCD_VAL_FLOAT);
      w.Word(bits);
      break;
    }
    case v1::Value::kBoolValue: w.Word(TCCD_VAL_BOOL); w.Word(value.bool_value()); break;
    case v1::Value::kStringValue: w.Word(TCCD_VAL_STRING); w.String(value.string_value()); break;
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
    case v1::Value::kLayout: w.Word(TCCD_VAL_LAYOUT); w.Word(value.layout()); break;
    case v1::Value::kMemoryFormat: w.Word(TCCD_VAL_MEMORY_FORMAT); w.Word(value.memory_format()); break;
    case v1::Value::kList:
      w.Word(TCCD_VAL_LIST);
      w.Word(value.list().items_size());
      for (const v1::Value& item : value.list().items()) RETURN_IF_ERROR(WriteValue(item, w));
      break;
    case v1::Value::kSymExpr:
      return absl::UnimplementedError(absl::StrCat("symbolic argument ", value.sym_expr()));
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> Abi(std::string_view abi) {
  if (abi == "tccd-cpu-1") return TCCD_ABI_CPU;
  if (abi == "tccd-cuda-1") return TCCD_ABI_CUDA;
  if (abi == "tccd-cuda-segment-1") return TCCD_ABI_CUDA_SEGMENT;
  return absl::UnimplementedError(absl::StrCat("native ABI ", std::string(abi)));
}

absl::Status WriteStep(const v1::Step& step, int index, Writer& w) {
  switch (step.kind_case()) {
    case v1::Step::kNative: {
      const v1::NativeCall& call = step.native();
      ASSIGN_OR_RETURN(int64_t abi, Abi(call.abi()));
      const int rank = call.shape_size();
      if (rank > kMaxRank) return absl::UnimplementedError(absl::StrCat("step ", index, ": rank ", rank));
      const int operands = call.inputs_size() + step.outputs_size();
      if (call.expected_strides_size() != operands * rank) {
        return absl::InternalError(absl::StrCat("step ", index, ": ", call.expected_strides_size(),
                                                " expected strides for ", operands, " operands of rank ", rank));
      }
      w.Word(TCCD_STEP_KERNEL);
      w.Word(abi);
      w.String(call.artifact());
      w.String(call.symbol());
      w.Word(rank);
      for (int64_t s : call.shape()) w.Word(s);
      w.Ids(call.inputs());
      w.Ids(step.outputs());
      // Index-aware kernels (KernelInfo.kind "*_index") take gather operands' own strides, and
      // CUDA kernels have only the entry point of their declared layout (entry_points.h): an
      // input in another layout is copied into the declared one (as runtime.py does).
      bool copy_to_declared = abi == TCCD_ABI_CUDA;
      for (const v1::KernelInfo& k : call.kernels()) copy_to_declared |= k.kind().ends_with("_index") || k.kind().ends_with("_reordered");
      w.Word(copy_to_declared);
      for (int64_t s : call.expected_strides()) w.Word(s);
      break;
    }
    case v1::Step::kSegment: {
      const v1::NativeSegment& seg = step.segment();
      ASSIGN_OR_RETURN(int64_t abi, Abi(seg.abi()));
      w.Word(TCCD_STEP_SEGMENT);
      w.Word(abi);
      w.String(seg.artifact());
      w.String(seg.symbol());
      w.Ids(seg.inputs());
      w.Ids(step.outputs());
      w.Word(seg.workspace_bytes());
      break;
    }
    case v1::Step::kAlias:
      if (step.outputs_size() != 1) return absl::InternalError(absl::StrCat("step ", index, ": alias with ", step.outputs_size(), " outputs"));
      w.Word(TCCD_STEP_ALIAS);
      w.Word(step.alias().base());
      w.Word(step.outputs(0));
      break;  // the offset delta is appended by the caller, which has the value metas
    case v1::Step::kExternCall: {
      const v1::ExternCall& call = step.extern_call();
      w.Word(TCCD_STEP_EXTERN);
      w.String(call.target());
      w.Word(call.args_size());
      for (const v1::Value& v : call.args()) RETURN_IF_ERROR(WriteValue(v, w));
      w.Word(call.kwargs_size());
      for (const v1::NamedValue& kv : call.kwargs()) {
        w.String(kv.name());
        RETURN_IF_ERROR(WriteValue(kv.value(), w));
      }
      w.Ids(step.outputs());
      break;
    }
    case v1::Step::KIND_NOT_SET:
      return absl::InternalError(absl::StrCat("step ", index, " has no kind"));
  }
  return absl::OkStatus();
}

// The first symbolic argument in `value` (a SymInt), or nullptr.
const v1::Value* FirstSymbolic(const v1::Value& value) {
  if (value.kind_case() == v1::Value::kSymExpr) return &value;
  if (value.kind_case() == v1::Value::kList)
    for (const v1::Value& item : value.list().items())
      if (const v1::Value* s = FirstSymbolic(item)) return s;
  return nullptr;
}

// A plan with a symbolic argument anywhere is a symbolic plan, even where every value's meta is
// static (a graph whose only symbol is a SymInt output): its kernels take their strides from the
// tensors at run time, so it is refused as a whole before any step is written.
absl::Status CheckStatic(const v1::Plan& plan) {
  auto check = [](const v1::Value& value) -> absl::Status {
    if (const v1::Value* s = FirstSymbolic(value))
      return absl::UnimplementedError(absl::StrCat("symbolic argument ", s->sym_expr(), " (static plans only)"));
    return absl::OkStatus();
  };
  for (const v1::Value& v : plan.outputs()) RETURN_IF_ERROR(check(v));
  for (const v1::Step& step : plan.steps()) {
    if (!step.has_extern_call()) continue;
    for (const v1::Value& v : step.extern_call().args()) RETURN_IF_ERROR(check(v));
    for (const v1::NamedValue& kw : step.extern_call().kwargs()) RETURN_IF_ERROR(check(kw.value()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> WritePlanDescriptor(const v1::Plan& plan) {
  RETURN_IF_ERROR(CheckStatic(plan));
  Writer w;
  w.Word(TCCD_PLAN_MAGIC);
  w.Word(TCCD_PLAN_FORMAT_VERSION);
  w.Word(plan.num_inputs());
  w.Word(plan.values_size());
  std::vector<int64_t> offsets;
  for (const v1::TensorMeta& meta : plan.values()) {
    RETURN_IF_ERROR(WriteMeta(meta, w));
    int64_t offset = 0;
    if (meta.has_storage_offset() && meta.storage_offset().kind_case() == v1::Dim::kValue) offset = meta.storage_offset().value();
    offsets.push_back(offset);
  }
  w.Word(plan.steps_size());
  for (int i = 0; i < plan.steps_size(); ++i) {
    const v1::Step& step = plan.steps(i);
    RETURN_IF_ERROR(WriteStep(step, i, w));
    if (step.has_alias()) {
      const int base = step.alias().base(), out = step.outputs(0);
      if (base < 0 || base >= plan.values_size() || out < 0 || out >= plan.values_size()) {
        return absl::InternalError(absl::StrCat("step ", i, ": alias names values ", base, " and ", out));
      }
      w.Word(offsets[out] - offsets[base]);
    }
    w.Ids(step.release());
  }
  w.Word(plan.outputs_size());
  for (const v1::Value& v : plan.outputs()) RETURN_IF_ERROR(WriteValue(v, w));
  return w.Bytes();
}

}  // namespace tccd::codegen
