// Writes the textual graph IR. The grammar (parser.cc reads it back):
//   graph    := 'graph' '(' [input (',' input)*] ')' '{' node* 'return' '(' args ')' '}'
//   input    := '%a' N ':' type
//   node     := '%' N '=' target '(' args ')' '->' (type | '(' [type (',' type)*] ')')
//   type     := dtype '[' sizes ']' '{' strides '}' ['+' offset] '@' ('cpu' | 'cuda')
//   arg      := ref | 'None' | int | float | 'true' | 'false' | string | dtype
//             | 'device(' dev ')' | 'layout(' N ')' | 'memory_format(' N ')' | '[' args ']'
//   ref      := '%a' N | '%' N ['#' N]
//   kwarg    := name '=' arg
#include "codegen/ir/printer.h"

#include <cmath>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace tccd::ir {
namespace {

const char* DeviceName(DeviceType device) { return device == DeviceType::kCuda ? "cuda" : "cpu"; }

// Floats print so that they read back bit-identically and never look like ints.
std::string PrintFloat(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  std::string text = absl::StrFormat("%.17g", value);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

struct ArgPrinter {
  std::string operator()(const NoneArg&) const { return "None"; }
  std::string operator()(const ValueRef& ref) const { return PrintValueRef(ref); }
  std::string operator()(int64_t v) const { return absl::StrCat(v); }
  std::string operator()(double v) const { return PrintFloat(v); }
  std::string operator()(bool v) const { return v ? "true" : "false"; }
  std::string operator()(const std::string& v) const {
    return absl::StrCat("\"", absl::CEscape(v), "\"");
  }
  std::string operator()(DType v) const { return DTypeName(v); }
  std::string operator()(DeviceType v) const { return absl::StrCat("device(", DeviceName(v), ")"); }
  std::string operator()(const ArgList& list) const {
    return absl::StrCat(
        "[",
        absl::StrJoin(list, ", ", [](std::string* out, const Arg& a) { out->append(PrintArg(a)); }),
        "]");
  }
  std::string operator()(const LayoutArg& v) const { return absl::StrCat("layout(", v.value, ")"); }
  std::string operator()(const MemoryFormatArg& v) const {
    return absl::StrCat("memory_format(", v.value, ")");
  }
};

}  // namespace

std::string PrintValueRef(const ValueRef& ref) {
  if (ref.is_input()) return absl::StrCat("%a", ref.output);
  if (ref.output == 0) return absl::StrCat("%", ref.node);
  return absl::StrCat("%", ref.node, "#", ref.output);
}

std::string PrintArg(const Arg& arg) { return std::visit(ArgPrinter{}, arg.v); }

std::string PrintTensorType(const TensorType& type) {
  std::string text = absl::StrCat(DTypeName(type.dtype), "[", absl::StrJoin(type.sizes, ","), "]{",
                                  absl::StrJoin(type.strides, ","), "}");
  if (type.storage_offset != 0) absl::StrAppend(&text, "+", type.storage_offset);
  absl::StrAppend(&text, "@", DeviceName(type.device));
  return text;
}

std::string PrintGraph(const Graph& graph) {
  std::string out = "graph(";
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    if (i) out += ", ";
    absl::StrAppend(&out, "%a", i, ": ", PrintTensorType(graph.inputs[i]));
  }
  out += ") {\n";
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    const Node& node = graph.nodes[id];
    std::vector<std::string> args;
    for (const Arg& a : node.args) args.push_back(PrintArg(a));
    for (const NamedArg& kw : node.kwargs)
      args.push_back(absl::StrCat(kw.name, "=", PrintArg(kw.value)));
    absl::StrAppend(&out, "  %", id, " = ", node.target, "(", absl::StrJoin(args, ", "), ") -> ");
    if (node.outputs.size() == 1) {
      out += PrintTensorType(node.outputs[0]);
    } else {
      out += "(";
      for (size_t i = 0; i < node.outputs.size(); ++i) {
        if (i) out += ", ";
        out += PrintTensorType(node.outputs[i]);
      }
      out += ")";
    }
    out += "\n";
  }
  std::vector<std::string> outputs;
  for (const Arg& a : graph.outputs) outputs.push_back(PrintArg(a));
  absl::StrAppend(&out, "  return (", absl::StrJoin(outputs, ", "), ")\n}\n");
  return out;
}

}  // namespace tccd::ir
