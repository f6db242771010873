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
  if (node.target != kFunctional || node.args.size() != 8 || !node.kwargs.empty() || node.outputs.size() != 5)
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

// Running stats that are graph inputs nobody but `node` reads (the usual training graph: AOT
// copies the returned new stats back into the module's buffers afterwards).
bool StatsAreOwnInputs(const ir::Graph& graph, size_t id) {
  const ir::Node& node = graph.nodes[id];
  for (int i : {3, 4})
    if (!node.args[i].is_ref() || !node.args[i].ref().is_input()) return false;
  int reads = 0;
  auto count = [&](const ir::ValueRef& r) {
    if (r == node.args[3].ref() || r == node.args[4].ref()) ++reads;
  };
  for (const ir::Node& other : graph.nodes) ir::ForEachInput(other, count);
  for (const ir::Arg& a : graph.outputs) ir::ForEachRef(a, count);
  return reads == 2 && node.args[3].ref() != node.args[4].ref();
}

// Refs to outputs 3 and 4 of node `id` become `mean` and `var`.
void RemapStats(ir::Arg& arg, int id, const ir::ValueRef& mean, const ir::ValueRef& var) {
  if (arg.is_ref()) {
    ir::ValueRef& r = std::get<ir::ValueRef>(arg.v);
    if (r.node == id && r.output >= 3) r = r.output == 3 ? mean : var;
  } else if (auto* list = std::get_if<ir::ArgList>(&arg.v)) {
    for (ir::Arg& a : *list) RemapStats(a, id, mean, var);
  }
}

}  // namespace

absl::StatusOr<bool> CudnnBatchNorm::Run(ir::Graph& graph) {
  bool changed = false;
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    if (!Eligible(graph, graph.nodes[id])) continue;
    if (StatsAreOwnInputs(graph, id)) {
      // cuDNN updates the module's running stats in place, as in eager; the graph returns those
      // very tensors, so AOT's copy back into the buffers is a no-op (ATen's copy_ skips a
      // tensor copied onto itself): no clone and no copy kernel per batch norm.
      ir::Node& bn = graph.nodes[id];
      const ir::ValueRef mean = bn.args[3].ref(), var = bn.args[4].ref();
      const int from = static_cast<int>(id);
      for (ir::Node& other : graph.nodes) {
        for (ir::Arg& a : other.args) RemapStats(a, from, mean, var);
        for (ir::NamedArg& kw : other.kwargs) RemapStats(kw.value, from, mean, var);
      }
      for (ir::Arg& a : graph.outputs) RemapStats(a, from, mean, var);
      ir::TensorType reserve = bn.outputs[0];
      reserve.dtype = ir::DType::kU8;
      reserve.sizes = {0};
      reserve.strides = {1};
      bn.target = "aten::cudnn_batch_norm.default";
      bn.outputs = {bn.outputs[0], bn.outputs[1], bn.outputs[2], reserve};
      changed = true;
      continue;
    }
    const int from = static_cast<int>(id);
    ir::Node bn = graph.nodes[id];
    for (ir::Node& other : graph.nodes) {
      for (ir::Arg& a : other.args) Remap(a, from);
      for (ir::NamedArg& kw : other.kwargs) Remap(kw.value, from);
    }
    for (ir::Arg& a : graph.outputs) Remap(a, from);

    ir::Node clone_mean{.target = "aten::clone.default", .args = {bn.args[3]}, .outputs = {bn.outputs[3]}};
    ir::Node clone_var{.target = "aten::clone.default", .args = {bn.args[4]}, .outputs = {bn.outputs[4]}};
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
