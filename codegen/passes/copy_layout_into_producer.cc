// CopyLayoutIntoProducer (see copy_layout_into_producer.h).
#include "codegen/passes/copy_layout_into_producer.h"

#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "codegen/passes/graph_rebuild.h"
#include "codegen/passes/pointwise_ops.h"

namespace tccd::codegen {
namespace {

struct Fold {
  int producer = 0;  // the pointwise op that takes the copy's strides
  int expand = -1;   // the identity expand between them, or -1
};

// clone id -> the fold that removes it.
absl::flat_hash_map<int, Fold> Candidates(const ir::Graph& graph) {
  const int n = static_cast<int>(graph.nodes.size());
  std::vector<int> readers(n, 0);  // reads, counted per argument (a node reading twice counts 2)
  for (const ir::Node& node : graph.nodes)
    ir::ForEachInput(node, [&](const ir::ValueRef& r) {
      if (!r.is_input()) ++readers[r.node];
    });
  std::vector<bool> is_output(n, false);
  for (const ir::Arg& a : graph.outputs)
    ir::ForEachRef(a, [&](const ir::ValueRef& r) {
      if (!r.is_input()) is_output[r.node] = true;
    });
  // Only this one reader sees the value's strides.
  auto private_to_reader = [&](const ir::ValueRef& r) {
    return !r.is_input() && r.output == 0 && !is_output[r.node] && readers[r.node] == 1 &&
           graph.nodes[r.node].outputs.size() == 1;
  };

  absl::flat_hash_map<int, Fold> chosen;
  for (int id = 0; id < n; ++id) {
    const ir::Node& copy = graph.nodes[id];
    if (copy.target != "aten::clone.default" || copy.args.empty() || !copy.args[0].is_ref()) continue;
    if (copy.outputs.size() != 1) continue;
    const ir::TensorType& want = copy.outputs[0];
    if (want.storage_offset != 0 || !IsDenseNonOverlapping(want)) continue;
    ir::ValueRef source = copy.args[0].ref();
    if (!private_to_reader(source)) continue;
    // An expand to the same sizes is the identity (AOTAutograd's matmul decomposition adds one).
    const ir::Node* node = &graph.nodes[source.node];
    int expand = -1;
    if (node->target == "aten::expand.default") {
      expand = source.node;
      if (node->args.empty() || !node->args[0].is_ref()) continue;
      const ir::ValueRef under = node->args[0].ref();
      if (graph.type_of(under) != node->outputs[0] || !private_to_reader(under)) continue;
      source = under;
      node = &graph.nodes[source.node];
    }
    const ir::TensorType& have = node->outputs[0];
    if (have.dtype != want.dtype || have.sizes != want.sizes || have.device != want.device) continue;
    if (have.strides == want.strides && have.storage_offset == 0) continue;  // fusion's business
    if (!IsPointwiseOp(graph, *node)) continue;
    chosen[id] = Fold{.producer = source.node, .expand = expand};
  }
  return chosen;
}

}  // namespace

absl::StatusOr<bool> CopyLayoutIntoProducer::Run(ir::Graph& graph) {
  const absl::flat_hash_map<int, Fold> chosen = Candidates(graph);
  if (chosen.empty()) return false;
  absl::flat_hash_map<int, int> layout_of;  // producer id -> the clone whose layout it takes
  absl::flat_hash_map<int, int> producer_of;  // clone or expand id -> its producer
  for (const auto& [copy, fold] : chosen) {
    layout_of[fold.producer] = copy;
    producer_of[copy] = fold.producer;
    if (fold.expand >= 0) producer_of[fold.expand] = fold.producer;
  }
  int id = -1;
  // The producer comes first: it is appended with the clone's strides, and the expand (the
  // identity) and the clone map to it.
  absl::flat_hash_map<int, ir::Arg> producer_value;
  return RebuildGraph(graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
    ++id;
    if (auto it = layout_of.find(id); it != layout_of.end()) {
      ir::Node op = node;
      op.outputs[0].strides = graph.nodes[it->second].outputs[0].strides;
      op.outputs[0].storage_offset = 0;
      ir::Arg value = AppendNode(out, std::move(op));
      producer_value[id] = value;
      return std::vector<ir::Arg>{value};
    }
    if (auto it = producer_of.find(id); it != producer_of.end()) return std::vector<ir::Arg>{producer_value.at(it->second)};
    return std::nullopt;
  });
}

}  // namespace tccd::codegen
