// Row-reduction group -> PointwiseKernel with a reduction section (see kernel_builder.h and
// codegen/kernel/pointwise_kernel.h): loads of the group's inputs (row operands where the input
// is constant along the reduced dims), the members in order (pointwise ops through
// pointwise_ops.h, reductions through reduction_ops.h), stores of the escaping values (row
// operands where the output has one value per row and the stored value is row-level).
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "codegen/ir/printer.h"
#include "codegen/passes/index_ops.h"
#include "codegen/passes/kernel_builder.h"
#include "codegen/passes/padded_row_stores.h"
#include "codegen/passes/pointwise_ops.h"
#include "codegen/passes/reduction_ops.h"
#include "base/status_macros.h"

namespace tccd::codegen {
namespace {

// Whether `type`, broadcast right-aligned to `shape`, is constant along the trailing k dims.
bool ConstantAlongRow(const ir::TensorType& type, const std::vector<int64_t>& shape, int k) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  for (int64_t d = rank - k; d < rank; ++d) {
    const int64_t td = d - (rank - type.rank());
    if (td >= 0 && type.sizes[td] != 1) return false;
  }
  return true;
}

// Whether `type`, broadcast right-aligned to `shape`, is constant along the leading k dims.
bool ConstantAlongLeading(const ir::TensorType& type, const std::vector<int64_t>& shape, int k) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  for (int64_t d = 0; d < k; ++d) {
    const int64_t td = d - (rank - type.rank());
    if (td >= 0 && type.sizes[td] != 1) return false;
  }
  return true;
}

// Whether `type` is constant along the reduced dims of the group (one value per row/column).
bool PerReducedSlice(const ir::TensorType& type, const FusionGroup& group) {
  return group.reduce_leading ? ConstantAlongLeading(type, group.shape, group.num_reduced_dims)
                              : ConstantAlongRow(type, group.shape, group.num_reduced_dims);
}

// Whether group input `r` is arange(C) (i64/i32, on CUDA) broadcast along the group's last dim,
// a reduced one: the class index of the cross-entropy rewrites (nll_loss_*_to_*.h), which the
// kernel computes (kIndex) instead of reading 8 bytes per element of the row from an [C] tensor
// (a wider operand than the logits, it also narrowed every row vector to two elements).
bool IsClassIndex(const ir::Graph& graph, const ir::ValueRef& r, const FusionGroup& group) {
  if (r.is_input() || group.reduce_leading || group.num_reduced_dims < 1 || group.shape.empty())
    return false;
  const ir::Node& node = graph.nodes[r.node];
  if (node.target != "aten::arange.default" || node.args.size() != 1) return false;
  const ir::TensorType& t = graph.type_of(r);
  return t.rank() == 1 && t.sizes[0] == group.shape.back() && t.device == ir::DeviceType::kCuda &&
         IsIndexDType(t.dtype);
}

}  // namespace

absl::StatusOr<PointwiseKernel> BuildRowReductionKernel(const ir::Graph& graph,
                                                        const FusionGroup& group,
                                                        const std::string& name) {
  RET_CHECK(group.num_reduced_dims > 0);
  const int k = group.num_reduced_dims;
  PointwiseKernel kernel;
  kernel.name = name;
  kernel.shape = group.shape;
  kernel.reduction.num_reduced_dims = k;
  if (group.reduce_leading) kernel.reduction.axis = RowReduction::Axis::kLeading;
  PwBuilder b(&kernel.body);

  // Gather operands of index-op members (row gathers, reduction_fusion.h) are read only by
  // their gathers: no load. They count as row operands: never streamed along the row, so the
  // dense-entry test and the shifted rows' head skip them (their stride rows are their own).
  std::set<ir::ValueRef> gathered;
  for (int m : group.nodes)
    if (ZeroTailPadWidth(graph, graph.nodes[m]) == 0)  // an absorbed pad reads its input's value
      for (const ir::ValueRef& r : GatheredRefs(graph.nodes[m])) gathered.insert(r);
  std::map<ir::ValueRef, int> held;
  std::map<ir::ValueRef, int> input_index;
  for (size_t i = 0; i < group.inputs.size(); ++i) {
    const ir::TensorType& t = graph.type_of(group.inputs[i]);
    kernel.input_dtypes.push_back(t.dtype);
    input_index[group.inputs[i]] = static_cast<int>(i);
    if (gathered.contains(group.inputs[i])) {
      kernel.reduction.row_operand.push_back(true);
      kernel.reduction.kept_broadcast.push_back(false);
      continue;
    }
    kernel.reduction.row_operand.push_back(PerReducedSlice(t, group));
    // Element inputs constant along the kept dims: columns' per-row values such as layer
    // norm's mean and rstd (kept dims trailing); rows' weights and biases (kept dims leading).
    const int rank = static_cast<int>(group.shape.size());
    kernel.reduction.kept_broadcast.push_back(
        !kernel.reduction.row_operand.back() &&
        (group.reduce_leading ? ConstantAlongRow(t, group.shape, rank - k)
                              : ConstantAlongLeading(t, group.shape, rank - k)));
    if (IsClassIndex(graph, group.inputs[i], group)) {
      // The operand stays in the launch ABI, unread.
      PwInstr index;
      index.op = PwOp::kIndex;
      index.dtype = ir::DType::kI64;
      index.operand = static_cast<int>(group.shape.size()) - 1;
      held[group.inputs[i]] = b.Coerce(b.Coerce(b.Emit(index), t.dtype), HeldDType(t.dtype));
      continue;
    }
    PwInstr load;
    load.op = PwOp::kLoad;
    load.dtype = t.dtype;
    load.operand = static_cast<int>(i);
    held[group.inputs[i]] = b.Coerce(b.Emit(load), HeldDType(t.dtype));
  }
  auto value_of = [&](const ir::ValueRef& r) { return held.at(r); };
  auto input_of = [&](const ir::ValueRef& r) { return input_index.at(r); };
  for (int m : group.nodes) {
    const ir::Node& node = graph.nodes[m];
    if (ZeroTailPadWidth(graph, node) > 0) {
      // An absorbed zero pad (padded_row_stores.h): its output is its input's value, stored
      // with a zero tail after each row. (Before the index ops: the pad is one, but not a
      // gather here.)
      held[{m, 0}] = value_of(node.args[0].ref());
      kernel.fused_ops.push_back(node.target);
      continue;
    }
    if (!group.reduce_leading && IsIndexOp(graph, node)) {
      ASSIGN_OR_RETURN(int v, LowerIndexOp(graph, node, input_of, b));
      RETURN_IF_ERROR(CheckDeclaredDType(node, m, b.dtype(v)));
      held[{m, 0}] = v;
      kernel.fused_ops.push_back(node.target);
      continue;
    }
    if (ReductionAxesOf(graph, node).num_reduced_dims > 0) {
      ASSIGN_OR_RETURN(std::vector<int> outs, LowerRowReductionOp(graph, node, value_of, b));
      RETURN_IF_ERROR(CheckDeclaredOutputCount(node, m, outs.size()));
      for (size_t o = 0; o < outs.size(); ++o)
        if (outs[o] >= 0) held[{m, static_cast<int>(o)}] = outs[o];
    } else {
      ASSIGN_OR_RETURN(int v, LowerPointwiseOp(node, value_of, b));
      RETURN_IF_ERROR(CheckDeclaredDType(node, m, b.dtype(v)));
      held[{m, 0}] = v;
    }
    kernel.fused_ops.push_back(node.target);
  }
  // Row levels of the body so far decide which outputs are row operands.
  kernel.reduction.row_operand.resize(kernel.input_dtypes.size());
  kernel.reduction.kept_broadcast.resize(kernel.input_dtypes.size());
  const std::vector<bool> row_level = RowLevelValues(kernel);
  for (size_t o = 0; o < group.outputs.size(); ++o) {
    const ir::TensorType& t = graph.type_of(group.outputs[o]);
    const auto found = held.find(group.outputs[o]);
    if (found == held.end()) {
      return absl::InternalError(
          absl::StrCat("kernel ", name, " outputs ", ir::PrintValueRef(group.outputs[o]),
                       ", which its op does not produce (a masked-off output)"));
    }
    const int value = found->second;
    // A reduction without keepdim, or a keepdim-shaped value computed per row. (With rows of
    // one element an iteration-shaped output is constant along the row too; it stays an
    // element operand when its value is element-level.)
    const bool dropped = t.rank() == static_cast<int64_t>(group.shape.size()) - k;
    const bool per_row =
        (dropped && !group.reduce_leading) || (PerReducedSlice(t, group) && row_level[value]);
    RET_CHECK(row_level[value] || !per_row);  // an element-level value in a per-row tensor
    kernel.output_dtypes.push_back(t.dtype);
    kernel.reduction.row_operand.push_back(per_row);
    // A padded output (an absorbed zero pad): wider than the row by its zero tail.
    const bool padded = !per_row && t.rank() == static_cast<int64_t>(group.shape.size()) &&
                        t.sizes.back() > group.shape.back();
    if (padded) {
      const int64_t tail = t.sizes.back() - group.shape.back();
      kernel.output_zero_tail.resize(group.outputs.size(), 0);
      kernel.output_zero_tail[o] = tail;
    }
    kernel.reduction.kept_broadcast.push_back(false);
    PwInstr store;
    store.op = PwOp::kStore;
    store.dtype = t.dtype;
    store.operand = static_cast<int>(o);
    store.args = {b.Coerce(value, t.dtype)};
    b.Emit(store);
  }
  std::string problem = VerifyPointwiseKernel(kernel);
  if (!problem.empty())
    return absl::InternalError("generated an invalid kernel " + name + ": " + problem);
  return kernel;
}

}  // namespace tccd::codegen
