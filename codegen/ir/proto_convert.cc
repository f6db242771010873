// tccd.v1 <-> graph IR conversion, validating client input on the way in.
#include "codegen/ir/proto_convert.h"

#include "absl/strings/str_cat.h"
#include "codegen/ir/verifier.h"
#include "base/status_macros.h"

namespace tccd::ir {
namespace {

absl::StatusOr<DType> DTypeFromProto(v1::DType dtype, const std::string& where) {
  switch (dtype) {
    case v1::FLOAT32:
      return DType::kF32;
    case v1::FLOAT64:
      return DType::kF64;
    case v1::FLOAT16:
      return DType::kF16;
    case v1::BFLOAT16:
      return DType::kBF16;
    case v1::INT8:
      return DType::kI8;
    case v1::INT16:
      return DType::kI16;
    case v1::INT32:
      return DType::kI32;
    case v1::INT64:
      return DType::kI64;
    case v1::UINT8:
      return DType::kU8;
    case v1::BOOL:
      return DType::kBool;
    case v1::COMPLEX64:
      return DType::kC64;
    case v1::COMPLEX128:
      return DType::kC128;
    case v1::COMPLEX32:
      return DType::kC32;
    case v1::UINT16:
      return DType::kU16;
    case v1::UINT32:
      return DType::kU32;
    case v1::UINT64:
      return DType::kU64;
    default:
      return absl::InvalidArgumentError(absl::StrCat(where, ": missing or unknown dtype ", dtype));
  }
}

absl::StatusOr<DeviceType> DeviceFromProto(const v1::Device& device, const std::string& where) {
  switch (device.type()) {
    case v1::CPU:
      return DeviceType::kCpu;
    case v1::CUDA:
      return DeviceType::kCuda;
    case v1::META:
      return absl::UnimplementedError(absl::StrCat(where, ": meta tensors cannot be compiled"));
    default:
      return absl::InvalidArgumentError(absl::StrCat(where, ": missing or unknown device type"));
  }
}

absl::StatusOr<int64_t> DimFromProto(const v1::Dim& dim, const std::string& where) {
  switch (dim.kind_case()) {
    case v1::Dim::kValue:
      return dim.value();
    case v1::Dim::kExpr:
      return absl::UnimplementedError(
          absl::StrCat(where, ": symbolic size '", dim.expr().substr(0, 64),
                       "' — dynamic shapes are not supported yet; compile with dynamic=False"));
    default:
      return absl::InvalidArgumentError(absl::StrCat(where, ": a size/stride has no value"));
  }
}

}  // namespace

absl::StatusOr<TensorType> TensorTypeFromProto(const v1::TensorMeta& meta,
                                               const std::string& where) {
  TensorType type;
  ASSIGN_OR_RETURN(type.dtype, DTypeFromProto(meta.dtype(), where));
  ASSIGN_OR_RETURN(type.device, DeviceFromProto(meta.device(), where));
  if (meta.sizes_size() > kMaxRank)
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": rank ", meta.sizes_size(), " > ", kMaxRank));
  for (const v1::Dim& d : meta.sizes()) {
    ASSIGN_OR_RETURN(int64_t v, DimFromProto(d, where));
    type.sizes.push_back(v);
  }
  for (const v1::Dim& d : meta.strides()) {
    ASSIGN_OR_RETURN(int64_t v, DimFromProto(d, where));
    type.strides.push_back(v);
  }
  if (meta.has_storage_offset()) {
    ASSIGN_OR_RETURN(type.storage_offset, DimFromProto(meta.storage_offset(), where));
  }
  return type;
}

absl::StatusOr<Arg> ArgFromProto(const v1::Value& value, const std::string& where, int depth) {
  if (depth > 8)
    return absl::InvalidArgumentError(absl::StrCat(where, ": lists nested too deeply"));
  switch (value.kind_case()) {
    case v1::Value::kNone:
      return Arg{NoneArg{}};
    case v1::Value::kRef: {
      ValueRef ref;
      if (value.ref().node() < 0) {
        ref.node = ValueRef::kInput;
        ref.output = -(value.ref().node() + 1);
        if (value.ref().output() != 0)
          return absl::InvalidArgumentError(
              absl::StrCat(where, ": graph input reference with output index"));
      } else {
        ref.node = value.ref().node();
        ref.output = value.ref().output();
      }
      return Arg{ref};
    }
    case v1::Value::kIntValue:
      return Arg{int64_t{value.int_value()}};
    case v1::Value::kFloatValue:
      return Arg{value.float_value()};
    case v1::Value::kBoolValue:
      return Arg{value.bool_value()};
    case v1::Value::kStringValue:
      if (value.string_value().size() > 4096)
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": string argument longer than 4096 bytes"));
      return Arg{value.string_value()};
    case v1::Value::kDtype: {
      ASSIGN_OR_RETURN(DType d, DTypeFromProto(value.dtype(), where));
      return Arg{d};
    }
    case v1::Value::kDevice: {
      ASSIGN_OR_RETURN(DeviceType d, DeviceFromProto(value.device(), where));
      return Arg{d};
    }
    case v1::Value::kList: {
      ArgList list;
      list.reserve(value.list().items_size());
      for (const v1::Value& item : value.list().items()) {
        ASSIGN_OR_RETURN(Arg a, ArgFromProto(item, where, depth + 1));
        list.push_back(std::move(a));
      }
      return Arg{std::move(list)};
    }
    case v1::Value::kSymExpr:
      return absl::UnimplementedError(
          absl::StrCat(where, ": symbolic argument '", value.sym_expr().substr(0, 64),
                       "' — dynamic shapes are not supported yet; compile with dynamic=False"));
    case v1::Value::kLayout:
      return Arg{LayoutArg{value.layout()}};
    case v1::Value::kMemoryFormat:
      return Arg{MemoryFormatArg{value.memory_format()}};
    default:
      return absl::InvalidArgumentError(absl::StrCat(where, ": argument has no value"));
  }
}

absl::StatusOr<Graph> GraphFromProto(const v1::Graph& proto) {
  if (proto.nodes_size() > kMaxNodes)
    return absl::InvalidArgumentError(absl::StrCat(
        "graph has ", proto.nodes_size(), " nodes; at most ", kMaxNodes, " are supported"));
  Graph graph;
  for (int i = 0; i < proto.inputs_size(); ++i) {
    ASSIGN_OR_RETURN(TensorType t, TensorTypeFromProto(proto.inputs(i), absl::StrCat("input ", i)));
    graph.inputs.push_back(std::move(t));
  }
  graph.nodes.reserve(proto.nodes_size());
  for (int id = 0; id < proto.nodes_size(); ++id) {
    const v1::Node& pn = proto.nodes(id);
    const std::string where = absl::StrCat("node ", id, " (", pn.target().substr(0, 80), ")");
    Node node;
    node.target = pn.target();
    for (const v1::Value& a : pn.args()) {
      ASSIGN_OR_RETURN(Arg arg, ArgFromProto(a, where));
      node.args.push_back(std::move(arg));
    }
    for (const v1::NamedValue& kw : pn.kwargs()) {
      ASSIGN_OR_RETURN(Arg arg, ArgFromProto(kw.value(), where));
      node.kwargs.push_back({kw.name(), std::move(arg)});
    }
    for (const v1::TensorMeta& m : pn.outputs()) {
      ASSIGN_OR_RETURN(TensorType t, TensorTypeFromProto(m, where));
      node.outputs.push_back(std::move(t));
    }
    graph.nodes.push_back(std::move(node));
  }
  for (const v1::Value& out : proto.outputs()) {
    ASSIGN_OR_RETURN(Arg arg, ArgFromProto(out, "graph output"));
    graph.outputs.push_back(std::move(arg));
  }
  RETURN_IF_ERROR(VerifyGraph(graph));
  return graph;
}

v1::DType DTypeToProto(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return v1::FLOAT32;
    case DType::kF64:
      return v1::FLOAT64;
    case DType::kF16:
      return v1::FLOAT16;
    case DType::kBF16:
      return v1::BFLOAT16;
    case DType::kI8:
      return v1::INT8;
    case DType::kI16:
      return v1::INT16;
    case DType::kI32:
      return v1::INT32;
    case DType::kI64:
      return v1::INT64;
    case DType::kU8:
      return v1::UINT8;
    case DType::kBool:
      return v1::BOOL;
    case DType::kC64:
      return v1::COMPLEX64;
    case DType::kC128:
      return v1::COMPLEX128;
    case DType::kC32:
      return v1::COMPLEX32;
    case DType::kU16:
      return v1::UINT16;
    case DType::kU32:
      return v1::UINT32;
    case DType::kU64:
      return v1::UINT64;
  }
  return v1::DTYPE_UNSPECIFIED;
}

v1::TensorMeta TensorTypeToProto(const TensorType& type) {
  v1::TensorMeta meta;
  for (int64_t s : type.sizes) meta.add_sizes()->set_value(s);
  for (int64_t s : type.strides) meta.add_strides()->set_value(s);
  meta.mutable_storage_offset()->set_value(type.storage_offset);
  meta.set_dtype(DTypeToProto(type.dtype));
  meta.mutable_device()->set_type(type.device == DeviceType::kCuda ? v1::CUDA : v1::CPU);
  meta.mutable_device()->set_index(-1);
  return meta;
}

}  // namespace tccd::ir
