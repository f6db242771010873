// DropoutToPhilox (see dropout_to_philox.h).
#include "codegen/passes/dropout_to_philox.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <map>
#include <vector>

namespace tccd::codegen {
namespace {

constexpr char kDropout[] = "aten::native_dropout.default";

// p when `node` is a training-mode dropout of a floating tensor this pass rewrites.
std::optional<double> TrainingDropoutP(const ir::Graph& graph, const ir::Node& node) {
  if (node.target != kDropout || node.outputs.size() != 2 || node.args.size() != 3 ||
      !node.kwargs.empty())
    return std::nullopt;
  if (!node.args[0].is_ref() || !ir::IsFloatingPoint(graph.type_of(node.args[0].ref()).dtype))
    return std::nullopt;
  const auto* train = std::get_if<bool>(&node.args[2].v);
  if (train == nullptr || !*train) return std::nullopt;
  double p;
  if (auto* d = std::get_if<double>(&node.args[1].v)) {
    p = *d;
  } else if (auto* i = std::get_if<int64_t>(&node.args[1].v)) {
    p = static_cast<double>(*i);
  } else {
    return std::nullopt;
  }
  if (!(p >= 0 && p <= 1)) return std::nullopt;
  return p;
}

// Row-major strides of `sizes`.
std::vector<int64_t> Contiguous(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size());
  int64_t run = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    strides[d] = run;
    run *= std::max<int64_t>(sizes[d], 1);
  }
  return strides;
}

void Remap(ir::Arg& arg, const std::map<ir::ValueRef, ir::ValueRef>& map) {
  if (arg.is_ref()) {
    ir::ValueRef& r = std::get<ir::ValueRef>(arg.v);
    if (!r.is_input()) r = map.at(r);
  } else if (auto* list = std::get_if<ir::ArgList>(&arg.v)) {
    for (ir::Arg& a : *list) Remap(a, map);
  }
}

}  // namespace

absl::StatusOr<bool> DropoutToPhilox::Run(ir::Graph& graph) {
  std::optional<ir::DeviceType> device;
  for (const ir::Node& node : graph.nodes) {
    if (!TrainingDropoutP(graph, node)) continue;
    const ir::DeviceType d = node.outputs[0].device;
    if (device && *device != d) return false;  // one seed per graph: one device
    device = d;
  }
  if (!device) return false;

  std::vector<ir::Node> nodes;
  std::map<ir::ValueRef, ir::ValueRef> map;  // old node outputs -> new
  auto push = [&](ir::Node node) {
    nodes.push_back(std::move(node));
    return static_cast<int>(nodes.size()) - 1;
  };
  ir::Node seed{.target = "aten::randint.low"};
  seed.args = {ir::Arg{int64_t{0}}, ir::Arg{std::numeric_limits<int64_t>::max()},
               ir::Arg{ir::ArgList{}}};
  seed.kwargs.push_back(ir::NamedArg{.name = "dtype", .value = ir::Arg{ir::DType::kI64}});
  seed.kwargs.push_back(ir::NamedArg{.name = "device", .value = ir::Arg{*device}});
  seed.outputs = {ir::TensorType{.dtype = ir::DType::kI64, .device = *device}};
  const int seed_id = push(std::move(seed));
  int64_t ordinal = 0;
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    ir::Node node = graph.nodes[id];
    for (ir::Arg& a : node.args) Remap(a, map);
    for (ir::NamedArg& kw : node.kwargs) Remap(kw.value, map);
    const std::optional<double> p = TrainingDropoutP(graph, graph.nodes[id]);
    if (!p) {
      const int new_id = push(std::move(node));
      for (size_t o = 0; o < nodes[new_id].outputs.size(); ++o)
        map[{static_cast<int>(id), static_cast<int>(o)}] = {new_id, static_cast<int>(o)};
      continue;
    }
    const ir::TensorType& out = node.outputs[0];
    ir::TensorType dense = out;
    dense.strides = Contiguous(out.sizes);
    dense.storage_offset = 0;
    ir::TensorType uniform = dense;
    uniform.dtype = ir::DType::kF32;
    const int u = push({.target = kPhiloxUniformTarget,
                        .args = {ir::Arg{ir::ValueRef{seed_id, 0}}, ir::Arg{ordinal++}},
                        .outputs = {uniform}});
    const int keep = push({.target = "aten::lt.Scalar",
                           .args = {ir::Arg{ir::ValueRef{u, 0}}, ir::Arg{1.0 - *p}},
                           .outputs = {node.outputs[1]}});
    const int kept = push({.target = "aten::mul.Tensor",
                           .args = {node.args[0], ir::Arg{ir::ValueRef{keep, 0}}},
                           .outputs = {dense}});
    const double scale = *p == 1 ? 0.0 : 1.0 / (1.0 - *p);
    const int scaled = push({.target = "aten::mul.Scalar",
                             .args = {ir::Arg{ir::ValueRef{kept, 0}}, ir::Arg{scale}},
                             .outputs = {out}});
    map[{static_cast<int>(id), 0}] = {scaled, 0};
    map[{static_cast<int>(id), 1}] = {keep, 0};
  }
  for (ir::Arg& a : graph.outputs) Remap(a, map);
  graph.nodes = std::move(nodes);
  return true;
}

}  // namespace tccd::codegen
