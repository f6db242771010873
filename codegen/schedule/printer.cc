// Writes the textual schedule IR, one line per value and per step. Grammar (parser.cc):
//   schedule := 'schedule(inputs=' N ')' '{' decl* step* 'return' '(' args ')' '}'
//   decl     := '%' N ':' type                      (type as in the graph IR)
//   step     := [outs '='] op
//   outs     := out (',' out)*        out := '%' N | '_'
//   op       := 'extern' target '(' args ')'         (args as in the graph IR; refs are %N)
//             | 'kernel' '(' ids ')' attrs          attrs: artifact symbol abi shape strides
//             kernels [into] | 'library' function '(' ids ')' 'name=' string 'params=' record
//             'of' target '(' args ')' | 'segment' '(' ids ')' attrs    attrs: artifact symbol
//             abi workspace kernels [into] | 'alias' '(' '%' N ')' | 'release' '(' ids ')'
//             (into: per output -1 or the graph input written in place, schedule.h)
//   attrs    := (name '=' attr)*     attr := number | string | '[' [attr (',' attr)*] ']' | record
//   record   := '{' name '=' attr (',' name '=' attr)* '}'     (a KernelInfo)
#include "codegen/schedule/printer.h"

#include <cmath>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/ir/printer.h"

namespace tccd::schedule {
namespace {

std::string Quote(const std::string& s) { return absl::StrCat("\"", absl::CEscape(s), "\""); }

std::string Ids(const std::vector<ValueId>& ids) {
  return absl::StrJoin(ids, ", ",
                       [](std::string* out, ValueId v) { absl::StrAppend(out, "%", v); });
}

std::string Ints(const std::vector<int64_t>& v) {
  return absl::StrCat("[", absl::StrJoin(v, ","), "]");
}

std::string PrintKernelInfo(const KernelInfo& k) {
  std::vector<std::string> fields = {absl::StrCat("name=", Quote(k.name)),
                                     absl::StrCat("kind=", Quote(k.kind))};
  std::vector<std::string> ops;
  for (const std::string& op : k.ops) ops.push_back(Quote(op));
  fields.push_back(absl::StrCat("ops=[", absl::StrJoin(ops, ", "), "]"));
  if (!k.grid.empty()) fields.push_back(absl::StrCat("grid=", Ints(k.grid)));
  if (!k.block.empty()) fields.push_back(absl::StrCat("block=", Ints(k.block)));
  if (k.shared_mem_bytes != 0) fields.push_back(absl::StrCat("shared_mem=", k.shared_mem_bytes));
  fields.push_back(absl::StrCat("shape=", Ints(k.shape)));
  return absl::StrCat("{", absl::StrJoin(fields, ", "), "}");
}

std::string PrintKernelInfos(const std::vector<KernelInfo>& kernels) {
  std::vector<std::string> items;
  for (const KernelInfo& k : kernels) items.push_back(PrintKernelInfo(k));
  return absl::StrCat("[", absl::StrJoin(items, ", "), "]");
}

// An integral value as an integer, any other as the graph IR prints floats (bit-exact).
std::string PrintNumber(double v) {
  if (v == std::trunc(v) && std::abs(v) < 9007199254740992.0)
    return absl::StrCat(static_cast<int64_t>(v));
  return ir::PrintArg(ir::Arg{v});
}

// target(args): the graph IR's syntax.
std::string PrintOp(const ExternOp& e) {
  std::vector<std::string> args;
  for (const ir::Arg& a : e.args) args.push_back(ir::PrintArg(a));
  for (const ir::NamedArg& kw : e.kwargs)
    args.push_back(absl::StrCat(kw.name, "=", ir::PrintArg(kw.value)));
  return absl::StrCat(e.target, "(", absl::StrJoin(args, ", "), ")");
}

std::string PrintEntry(const NativeEntry& e) {
  return absl::StrCat(" artifact=", Quote(e.artifact), " symbol=", Quote(e.symbol),
                      " abi=", Quote(e.abi));
}

// " into=[-1,2]" (per output: -1 or the input written in place), or "" when none.
std::string PrintInto(const std::vector<ValueId>& into) {
  if (into.empty()) return "";
  return absl::StrCat(" into=", Ints(std::vector<int64_t>(into.begin(), into.end())));
}

struct OpPrinter {
  std::string operator()(const KernelLaunch& k) const {
    return absl::StrCat("kernel(", Ids(k.inputs), ")", PrintEntry(k.entry),
                        " shape=", Ints(k.shape), " strides=", Ints(k.expected_strides),
                        " kernels=", PrintKernelInfos(k.kernels), PrintInto(k.write_into));
  }
  std::string operator()(const ExternOp& e) const { return absl::StrCat("extern ", PrintOp(e)); }
  std::string operator()(const LibraryCall& l) const {
    std::vector<std::string> params;
    for (const auto& [name, value] : l.params)
      params.push_back(absl::StrCat(name, "=", PrintNumber(value)));
    return absl::StrCat("library ", l.function, "(", Ids(l.operands), ") name=", Quote(l.name),
                        " params={", absl::StrJoin(params, ", "), "} of ", PrintOp(l.op));
  }
  std::string operator()(const Segment& s) const {
    return absl::StrCat("segment(", Ids(s.inputs), ")", PrintEntry(s.entry),
                        " workspace=", s.workspace_bytes, " kernels=", PrintKernelInfos(s.kernels),
                        PrintInto(s.write_into));
  }
  std::string operator()(const Alias& a) const { return absl::StrCat("alias(%", a.base, ")"); }
  std::string operator()(const Release& r) const {
    return absl::StrCat("release(", Ids(r.values), ")");
  }
};

}  // namespace

std::string PrintStep(const Step& step) {
  std::string out;
  if (!step.outputs.empty()) {
    out = absl::StrJoin(step.outputs, ", ", [](std::string* o, ValueId v) {
      if (v == kUnused) {
        o->append("_");
      } else {
        absl::StrAppend(o, "%", v);
      }
    });
    out += " = ";
  }
  return out + std::visit(OpPrinter{}, step.op);
}

std::string PrintSchedule(const Schedule& schedule) {
  std::string out = absl::StrCat("schedule(inputs=", schedule.num_inputs, ") {\n");
  for (size_t v = 0; v < schedule.values.size(); ++v)
    absl::StrAppend(&out, "  %", v, ": ", ir::PrintTensorType(schedule.values[v]), "\n");
  for (const Step& step : schedule.steps) absl::StrAppend(&out, "  ", PrintStep(step), "\n");
  std::vector<std::string> outputs;
  for (const ir::Arg& a : schedule.outputs) outputs.push_back(ir::PrintArg(a));
  absl::StrAppend(&out, "  return (", absl::StrJoin(outputs, ", "), ")\n}\n");
  return out;
}

}  // namespace tccd::schedule
