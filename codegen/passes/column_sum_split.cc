// ColumnSumSplit (see column_sum_split.h).
#include "codegen/passes/column_sum_split.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "codegen/ops/op_properties.h"
#include "codegen/passes/graph_rebuild.h"
#include "codegen/passes/reduction_ops.h"
#include "codegen/passes/split_columns.h"

namespace tccd::codegen {
namespace {

constexpr char kSum[] = "aten::sum.dim_IntList";
constexpr char kView[] = "aten::view.default";
constexpr ir::DType kF32 = ir::DType::kF32;
// The fewest rows (A) a stage-one column keeps: shorter columns would spend their time on the
// second stage (layer_norm_param_grad_split.cc's bound).
constexpr int64_t kMinRows = 256;
// Sums of fewer elements keep one kernel: the second stage's launch (a few us) would cost about
// what the first stage saves (unmeasured: 4M elements are 8 MB of bf16, ~8 us at the 1 TB/s the
// one-kernel form reached on ConvNeXt's 384 columns).
constexpr int64_t kMinElements = int64_t{1} << 22;

bool IsFloatCuda(const ir::TensorType& t) {
  return t.device == ir::DeviceType::kCuda && IsF32OrHalf(t.dtype) && t.numel() > 0;
}

// value -> the nodes reading it.
using Readers = std::map<ir::ValueRef, std::vector<int>>;

// One sum to split: its [A, B, C] view and, when hoisted, the node making its input.
struct Split {
  int64_t a = 0, b = 0, c = 0;
  int producer = -1;  // old node id of the pointwise producer rewritten over the view, or -1
};

// The node making `ref` when it is a pointwise op whose every tensor operand is contiguous with
// its output's sizes, or 0-dim: what can be computed over the [A, B, C] view instead.
std::optional<int> HoistableProducer(const ir::Graph& graph, const ir::ValueRef& ref) {
  if (ref.is_input()) return std::nullopt;
  const ir::Node& p = graph.nodes[ref.node];
  const OpProperties props = PropertiesOf(p.target);
  if (props.category != OpCategory::kPointwise || !props.pure || p.outputs.size() != 1)
    return std::nullopt;
  const ir::TensorType& out = p.outputs[0];
  if (!IsPlain(out) || !IsFloatCuda(out)) return std::nullopt;
  bool ok = true;
  auto check = [&](const ir::Arg& arg) {
    if (std::holds_alternative<ir::ArgList>(arg.v)) {
      for (const ir::Arg& item : std::get<ir::ArgList>(arg.v))
        if (item.is_ref()) ok = false;  // a list of tensors: not an elementwise operand
      return;
    }
    if (!arg.is_ref()) return;
    const ir::TensorType& t = graph.type_of(arg.ref());
    if (t.rank() == 0) return;
    if (t.sizes != out.sizes || !IsPlain(t) || t.device != out.device) ok = false;
  };
  for (const ir::Arg& arg : p.args) check(arg);
  for (const ir::NamedArg& kw : p.kwargs) check(kw.value);
  if (!ok) return std::nullopt;
  return ref.node;
}

// Whether a column reduction other than node `id` reads `value`: horizontal fusion merges
// independent column sums over the same rows into one pass (a bias sum beside a layer norm's
// parameter gradients), which a split of one of them would undo.
bool SiblingColumnReduction(const ir::Graph& graph, const Readers& readers,
                            const ir::ValueRef& value, int id) {
  auto it = readers.find(value);
  if (it == readers.end()) return false;
  for (int r : it->second)
    if (r != id && ReductionAxesOf(graph, graph.nodes[r]).leading) return true;
  return false;
}

// The split of sum node `id`, or nullopt.
std::optional<Split> PlanSplit(const ir::Graph& graph, const Readers& readers, int id) {
  const ir::Node& node = graph.nodes[id];
  if (node.target != kSum || !node.kwargs.empty() || node.args.empty() || node.args.size() > 3 ||
      node.outputs.size() != 1 || !node.args[0].is_ref())
    return std::nullopt;
  if (node.args.size() == 3 && !std::holds_alternative<bool>(node.args[2].v)) return std::nullopt;
  const ReductionAxes axes = ReductionAxesOf(graph, node);
  if (axes.num_reduced_dims == 0 || !axes.leading) return std::nullopt;
  const ir::TensorType& v = graph.type_of(node.args[0].ref());
  const ir::TensorType& result = node.outputs[0];
  if (!IsFloatCuda(v) || !IsPlain(v) || !IsFloatCuda(result)) return std::nullopt;
  Split s;
  int64_t rows = 1;
  s.c = 1;
  for (int64_t d = 0; d < v.rank(); ++d) (d < axes.num_reduced_dims ? rows : s.c) *= v.sizes[d];
  if (s.c >= kColumnSumSplitMaxColumns || result.numel() != s.c || rows * s.c < kMinElements)
    return std::nullopt;
  s.b = 1;
  while (s.b * s.c < SplitColumnTarget() && rows % (2 * s.b) == 0 && rows / (2 * s.b) >= kMinRows)
    s.b *= 2;
  if (s.b == 1) return std::nullopt;
  s.a = rows / s.b;
  if (SiblingColumnReduction(graph, readers, node.args[0].ref(), id)) return std::nullopt;
  // The producer: the sum's input, or the input of a reshape the sum reads.
  ir::ValueRef source = node.args[0].ref();
  if (!source.is_input()) {
    const ir::Node& maker = graph.nodes[source.node];
    if (IsReshapeTarget(maker.target) && !maker.args.empty() && maker.args[0].is_ref() &&
        IsPlain(graph.type_of(maker.args[0].ref())))
      source = maker.args[0].ref();
  }
  if (source != node.args[0].ref() && SiblingColumnReduction(graph, readers, source, id))
    return std::nullopt;
  if (source.is_input()) return s;
  const OpCategory made_by = PropertiesOf(graph.nodes[source.node].target).category;
  if (made_by != OpCategory::kPointwise) return s;  // an extern result (matmul): split alone
  const std::optional<int> producer = HoistableProducer(graph, source);
  if (!producer) return std::nullopt;  // cost rule: keep the producer fused (see the header)
  s.producer = *producer;
  return s;
}

}  // namespace

absl::StatusOr<bool> ColumnSumSplit::Run(ir::Graph& graph) {
  absl::flat_hash_map<int, Split> sums;   // old sum id -> its split
  absl::flat_hash_map<int, int> hoisted;  // old producer id -> old sum id
  Readers readers;
  for (int id = 0; id < static_cast<int>(graph.nodes.size()); ++id) {
    ir::ForEachInput(graph.nodes[id], [&](const ir::ValueRef& ref) { readers[ref].push_back(id); });
  }
  for (int id = 0; id < static_cast<int>(graph.nodes.size()); ++id) {
    std::optional<Split> s = PlanSplit(graph, readers, id);
    if (!s) continue;
    if (s->producer >= 0) {
      if (hoisted.contains(s->producer)) continue;  // one view per producer
      hoisted[s->producer] = id;
    }
    sums[id] = *s;
  }
  if (sums.empty()) return false;

  absl::flat_hash_map<int, ir::Arg> producer3;  // old producer id -> its [A, B, C] value
  int id = -1;  // RebuildGraph offers every node once, in order: this is the node's old id
  return RebuildGraph(
      graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        ++id;
        auto dense = [](ir::DType dtype, std::vector<int64_t> sizes) {
          return DenseType(dtype, std::move(sizes), ir::DeviceType::kCuda);
        };
        if (auto h = hoisted.find(id); h != hoisted.end()) {
          // The producer over [A, B, C]; its readers get a view back to its own shape.
          const Split& s = sums.at(h->second);
          const std::vector<int64_t> abc = {s.a, s.b, s.c};
          ir::Node p3 = node;
          auto view = [&](ir::Arg& arg) {
            if (!arg.is_ref()) return;
            const ir::TensorType t = out.type_of(arg.ref());
            if (t.rank() == 0) return;
            arg = EmitOp(out, kView, {arg, IntListArg(abc)}, dense(t.dtype, abc));
          };
          for (ir::Arg& arg : p3.args) view(arg);
          for (ir::NamedArg& kw : p3.kwargs) view(kw.value);
          p3.outputs = {dense(node.outputs[0].dtype, abc)};
          const ir::Arg value = AppendNode(out, std::move(p3));
          producer3[id] = value;
          return std::vector<ir::Arg>{
              EmitOp(out, kView, {value, IntListArg(node.outputs[0].sizes)}, node.outputs[0])};
        }
        auto it = sums.find(id);
        if (it == sums.end()) return std::nullopt;
        const Split& s = it->second;
        const size_t mark = out.nodes.size();
        ir::Arg rows;
        if (s.producer >= 0) {
          rows = producer3.at(s.producer);
        } else {
          const ir::TensorType& v = out.type_of(node.args[0].ref());
          rows = EmitOp(out, kView, {node.args[0], IntListArg({s.a, s.b, s.c})},
                        dense(v.dtype, {s.a, s.b, s.c}));
        }
        // f32 before the sums (the cast is the first stage's prologue), as layer_norm_param_grad_
        // split.cc does: the partials stay f32 and the result is rounded once.
        if (out.type_of(rows.ref()).dtype != kF32)
          rows = EmitOp(out, "aten::_to_copy.default", {rows}, dense(kF32, {s.a, s.b, s.c}),
                        {{"dtype", ir::Arg{kF32}}});
        ir::Node one{
            .target = kSum, .args = {rows, IntListArg({0})}, .outputs = {dense(kF32, {s.b, s.c})}};
        const bool one_ok = ReductionAxesOf(out, one) == ReductionAxes{1, true};
        const ir::Arg partial = AppendNode(out, std::move(one));
        // Stage 2 gives the result's shape itself where a keepdim sum can ([C] or [1, C]): a view
        // after it would keep the result's casts out of its kernel (a group never spans a reshape).
        const ir::TensorType& result = node.outputs[0];
        const bool keepdim = result.sizes == std::vector<int64_t>{1, s.c};
        ir::Node two{.target = kSum,
                     .args = {partial, IntListArg({0}), ir::Arg{keepdim}},
                     .outputs = {dense(kF32, keepdim ? result.sizes : std::vector<int64_t>{s.c})}};
        if (!one_ok || ReductionAxesOf(out, two) != ReductionAxes{1, true}) {
          out.nodes.resize(mark);  // the sum as it was (a hoisted producer stays correct)
          return std::nullopt;
        }
        ir::Arg total = AppendNode(out, std::move(two));
        if (!keepdim && result.sizes != std::vector<int64_t>{s.c})
          total = EmitOp(out, kView, {total, IntListArg(result.sizes)}, dense(kF32, result.sizes));
        if (result.dtype != kF32)
          total = EmitOp(out, "aten::_to_copy.default", {total}, result,
                         {{"dtype", ir::Arg{result.dtype}}});
        return std::vector<ir::Arg>{total};
      });
}

}  // namespace tccd::codegen
