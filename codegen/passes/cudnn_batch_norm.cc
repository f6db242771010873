// CudnnBatchNorm (see cudnn_batch_norm.h).
#include "codegen/passes/cudnn_batch_norm.h"

#include <limits>
#include <optional>
#include <vector>

namespace tccd::codegen {
namespace {

constexpr char kFunctional[] = "aten::_native_batch_norm_legit_functional.default";

const ir::TensorType* TypeOfRef(const ir::Graph& graph, const ir::Arg& arg) {
  if (!arg.is_ref()) return nullptr;
  return &graph.type_of(std::get<ir::ValueRef>(arg.v));
}

bool IsF32Vector(const ir::TensorType* t, int64_t channels) {
  return t != nullptr && t->dtype == ir::DType::kF32 && t->rank() == 1 && t->sizes[0] == channels &&
         (channels == 1 || t->strides[0] == 1) && t->device == ir::DeviceType::kCuda;
}

std::optional<double> Number(const ir::Arg& arg) {
  if (const auto* d = std::get_if<double>(&arg.v)) return *d;
  if (const auto* i = std::get_if<int64_t>(&arg.v)) return static_cast<double>(*i);
  return std::nullopt;
}

bool Eligible(const ir::Graph& graph, const ir::Node& node) {
  if (node.target != kFunctional || node.args.size() != 8 || !node.kwargs.empty() ||
      node.outputs.size() != 5)
    return false;
  const ir::TensorType* x = TypeOfRef(graph, node.args[0]);
  if (x == nullptr || x->dtype != ir::DType::kF32 || x->rank() != 4 || !x->IsContiguous() ||
      x->device != ir::DeviceType::kCuda || x->storage_offset != 0)
    return false;
  if (x->sizes[0] > 880801 || x->numel() >= std::numeric_limits<int32_t>::max()) return false;
  const int64_t channels = x->sizes[1];
  for (int i = 1; i <= 4; ++i)
    if (!IsF32Vector(TypeOfRef(graph, node.args[i]), channels)) return false;
  const bool* training = std::get_if<bool>(&node.args[5].v);
  std::optional<double> momentum = Number(node.args[6]), eps = Number(node.args[7]);
  return training != nullptr && *training && momentum && eps && *eps >= 1e-5;
}

// Rewrites a ref to output `o` of the replaced node `from`, and shifts later nodes by 2.
void Remap(ir::Arg& arg, int from) {
  if (arg.is_ref()) {
    ir::ValueRef& r = std::get<ir::ValueRef>(arg.v);
    if (r.is_input() || r.node < from) return;
    if (r.node > from) {
      r.node += 2;
      return;
    }
    // The replaced node's outputs: 0..2 from cudnn_batch_norm (from + 2), 3 and 4 are the clones.
    if (r.output <= 2) {
      r.node = from + 2;
    } else {
      r.node = from + (r.output - 3);
      r.output = 0;
    }
  } else if (auto* list = std::get_if<ir::ArgList>(&arg.v)) {
    for (ir::Arg& a : *list) Remap(a, from);
  }
}

}  // namespace

absl::StatusOr<bool> CudnnBatchNorm::Run(ir::Graph& graph) {
  bool changed = false;
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    if (!Eligible(graph, graph.nodes[id])) continue;
    const int from = static_cast<int>(id);
    ir::Node bn = graph.nodes[id];
    for (ir::Node& other : graph.nodes) {
      for (ir::Arg& a : other.args) Remap(a, from);
      for (ir::NamedArg& kw : other.kwargs) Remap(kw.value, from);
    }
    for (ir::Arg& a : graph.outputs) Remap(a, from);

    ir::Node clone_mean{
        .target = "aten::clone.default", .args = {bn.args[3]}, .outputs = {bn.outputs[3]}};
    ir::Node clone_var{
        .target = "aten::clone.default", .args = {bn.args[4]}, .outputs = {bn.outputs[4]}};
    ir::Node cudnn = bn;
    cudnn.target = "aten::cudnn_batch_norm.default";
    cudnn.args[3] = ir::Arg{ir::ValueRef{from, 0}};
    cudnn.args[4] = ir::Arg{ir::ValueRef{from + 1, 0}};
    // The reserve space: cuDNN sizes it at run time; nothing in the graph reads it.
    ir::TensorType reserve = bn.outputs[0];
    reserve.dtype = ir::DType::kU8;
    reserve.sizes = {0};
    reserve.strides = {1};
    cudnn.outputs = {bn.outputs[0], bn.outputs[1], bn.outputs[2], reserve};
    graph.nodes[id] = std::move(clone_mean);
    graph.nodes.insert(graph.nodes.begin() + from + 1, std::move(clone_var));
    graph.nodes.insert(graph.nodes.begin() + from + 2, std::move(cudnn));
    changed = true;
    id += 2;
  }
  return changed;
}

}  // namespace tccd::codegen
