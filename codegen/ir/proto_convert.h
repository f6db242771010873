// Conversion between tccd.v1 protos and the graph IR, at the one boundary where client input
// enters the compiler. GraphFromProto validates as it converts (then VerifyGraph checks the
// structure); the To* functions are used to write Plans.
#pragma once

#include "absl/status/statusor.h"
#include "codegen/ir/graph.h"
#include "tccd/v1/tccd.pb.h"

namespace tccd::ir {

// INVALID_ARGUMENT for malformed input; UNIMPLEMENTED for valid input tccd does not support yet
// (symbolic sizes, meta tensors).
absl::StatusOr<Graph> GraphFromProto(const v1::Graph& proto);

// The pieces GraphFromProto validates with, also used to read a Plan back (schedule/): `where`
// prefixes error messages. Refs keep the proto's numbering (node < 0: graph input -node-1).
absl::StatusOr<TensorType> TensorTypeFromProto(const v1::TensorMeta& meta,
                                               const std::string& where);
absl::StatusOr<Arg> ArgFromProto(const v1::Value& value, const std::string& where, int depth = 0);

v1::DType DTypeToProto(DType dtype);
v1::TensorMeta TensorTypeToProto(const TensorType& type);
// `value_id` maps IR refs to plan value ids.
template <typename RefToId>
v1::Value ArgToProto(const Arg& arg, const RefToId& value_id);

}  // namespace tccd::ir

#include "codegen/ir/proto_convert_inl.h"
