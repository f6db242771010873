// Template part of proto_convert.h.
#pragma once

namespace tccd::ir {

template <typename RefToId>
v1::Value ArgToProto(const Arg& arg, const RefToId& value_id) {
  v1::Value out;
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, NoneArg>) {
          out.set_none(true);
        } else if constexpr (std::is_same_v<T, ValueRef>) {
          out.mutable_ref()->set_node(value_id(v));
          out.mutable_ref()->set_output(0);
        } else if constexpr (std::is_same_v<T, int64_t>) {
          out.set_int_value(v);
        } else if constexpr (std::is_same_v<T, double>) {
          out.set_float_value(v);
        } else if constexpr (std::is_same_v<T, bool>) {
          out.set_bool_value(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          out.set_string_value(v);
        } else if constexpr (std::is_same_v<T, DType>) {
          out.set_dtype(DTypeToProto(v));
        } else if constexpr (std::is_same_v<T, DeviceType>) {
          out.mutable_device()->set_type(v == DeviceType::kCuda ? v1::CUDA : v1::CPU);
          out.mutable_device()->set_index(-1);
        } else if constexpr (std::is_same_v<T, ArgList>) {
          auto* list = out.mutable_list();
          for (const Arg& item : v) *list->add_items() = ArgToProto(item, value_id);
        } else if constexpr (std::is_same_v<T, LayoutArg>) {
          out.set_layout(v.value);
        } else if constexpr (std::is_same_v<T, MemoryFormatArg>) {
          out.set_memory_format(v.value);
        }
      },
      arg.v);
  return out;
}

}  // namespace tccd::ir
