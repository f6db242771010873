// CopyLayoutIntoProducer (see copy_layout_into_producer.h).
#include "codegen/passes/copy_layout_into_producer.h"

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "codegen/passes/graph_rebuild.h"
#include "codegen/passes/pointwise_ops.h"

namespace tccd::codegen {
namespace {

struct Fold {
  int producer = 0;  // the pointwise op that takes the copy's strides
  int expand = -1;   // the identity expand between them, or -1
  int permute = -1;  // the transpose/permute between them, or -1 (then the clone's replacement)
  int reshape = -1;  // the reshape after the permute, or -1 (then the clone's replacement)
  std::vector<int64_t> permute_strides;  // with a reshape: the permute's new (contiguous) strides
  std::vector<int64_t> strides;          // the producer's new strides
};

// The permutation of a permute, transpose or t view of one tensor (graph_rebuild.h).
std::optional<std::vector<int64_t>> ViewPermutation(const ir::Graph& graph, const ir::Node& view) {
  if (view.args.empty() || !view.args[0].is_ref() || view.outputs.size() != 1) return std::nullopt;
  return PermutationOf(view, graph.type_of(view.args[0].ref()).rank());
}

// clone id -> the fold that removes it.
absl::flat_hash_map<int, Fold> Candidates(const ir::Graph& graph, bool through_reshapes) {
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
    if (copy.target != "aten::clone.default" || copy.args.empty() || !copy.args[0].is_ref())
      continue;
    if (copy.outputs.size() != 1) continue;
    const ir::TensorType& want = copy.outputs[0];
    if (want.storage_offset != 0 || !IsDenseNonOverlapping(want)) continue;
    ir::ValueRef source = copy.args[0].ref();
    if (!private_to_reader(source)) continue;
    // An expand to the same sizes is the identity (AOTAutograd's matmul decomposition adds one).
    const ir::Node* node = &graph.nodes[source.node];
    Fold fold;
    // A reshape of a permute into a row-major clone: the permute must come out row-major, the
    // reshape of it is then the clone's layout (through_reshapes).
    std::optional<ir::TensorType> want_before_reshape;
    if (through_reshapes && ViewKindOf(node->target) == ViewKind::kReshape &&
        want.strides == ir::ContiguousStrides(want.sizes) && !node->args.empty() &&
        node->args[0].is_ref() && node->outputs.size() == 1 &&
        node->outputs[0].sizes == want.sizes && node->outputs[0].dtype == want.dtype) {
      const ir::ValueRef under = node->args[0].ref();
      if (!private_to_reader(under) || !ViewPermutation(graph, graph.nodes[under.node])) continue;
      ir::TensorType t = graph.type_of(under);
      t.strides = ir::ContiguousStrides(t.sizes);
      t.storage_offset = 0;
      want_before_reshape = t;
      fold.reshape = source.node;
      fold.permute_strides = t.strides;
      source = under;
      node = &graph.nodes[source.node];
    }
    const ir::TensorType& want_here = want_before_reshape ? *want_before_reshape : want;
    // Between producer and clone: an expand to the same sizes (the identity: AOTAutograd's matmul
    // decomposition adds one), or a permute/transpose/t (the producer then writes the layout
    // whose permutation is the clone's).
    std::vector<int64_t> perm(want_here.rank());
    for (int64_t i = 0; i < want_here.rank(); ++i) perm[i] = i;
    const ViewKind kind = ViewKindOf(node->target);
    if (fold.reshape >= 0 && !ViewPermutation(graph, *node)) continue;
    if (kind == ViewKind::kExpand || ViewPermutation(graph, *node)) {
      if (node->args.empty() || !node->args[0].is_ref()) continue;
      const ir::ValueRef under = node->args[0].ref();
      if (!private_to_reader(under)) continue;
      if (kind == ViewKind::kExpand) {
        if (graph.type_of(under) != node->outputs[0]) continue;
        fold.expand = source.node;
      } else {
        if (node->outputs[0].storage_offset != 0 || graph.type_of(under).storage_offset != 0)
          continue;
        perm = *ViewPermutation(graph, *node);
        fold.permute = source.node;
      }
      source = under;
      node = &graph.nodes[source.node];
    }
    const ir::TensorType& have = node->outputs[0];
    if (have.dtype != want_here.dtype || have.device != want_here.device ||
        have.rank() != want_here.rank())
      continue;
    fold.strides.assign(want_here.rank(), 0);
    bool sizes_match = true;
    for (int64_t i = 0; i < want_here.rank(); ++i) {
      sizes_match = sizes_match && have.sizes[perm[i]] == want_here.sizes[i];
      fold.strides[perm[i]] = want_here.strides[i];
    }
    if (!sizes_match) continue;
    if (have.strides == fold.strides && have.storage_offset == 0) continue;  // fusion's business
    if (!IsPointwiseOp(graph, *node)) continue;
    fold.producer = source.node;
    chosen[id] = std::move(fold);
  }
  return chosen;
}

}  // namespace

absl::StatusOr<bool> CopyLayoutIntoProducer::Run(ir::Graph& graph) {
  const absl::flat_hash_map<int, Fold> chosen = Candidates(graph, through_reshapes_);
  if (chosen.empty()) return false;
  absl::flat_hash_map<int, int> layout_of;    // producer id -> the clone whose layout it takes
  absl::flat_hash_map<int, int> replaced_by;  // clone or expand id -> the node that stands for it
  absl::flat_hash_map<int, int> permute_of;   // permute id -> its clone
  absl::flat_hash_map<int, int> reshape_of;   // reshape id -> its clone
  for (const auto& [copy, fold] : chosen) {
    layout_of[fold.producer] = copy;
    if (fold.expand >= 0) replaced_by[fold.expand] = fold.producer;
    if (fold.permute >= 0) permute_of[fold.permute] = copy;
    if (fold.reshape >= 0) reshape_of[fold.reshape] = copy;
    replaced_by[copy] = fold.reshape >= 0   ? fold.reshape
                        : fold.permute >= 0 ? fold.permute
                                            : fold.producer;
  }
  int id = -1;
  // The producer comes first: it is appended with its new strides; an identity expand and the
  // clone map to it, or the clone to the permute, re-typed as the clone (the same layout now).
  absl::flat_hash_map<int, ir::Arg> new_value;
  return RebuildGraph(
      graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        ++id;
        if (auto it = layout_of.find(id); it != layout_of.end()) {
          ir::Node op = node;
          op.outputs[0].strides = chosen.at(it->second).strides;
          op.outputs[0].storage_offset = 0;
          return std::vector<ir::Arg>{new_value[id] = AppendNode(out, std::move(op))};
        }
        if (auto it = permute_of.find(id); it != permute_of.end()) {
          ir::Node view = node;
          const Fold& fold = chosen.at(it->second);
          if (fold.reshape >= 0) {  // row-major, for the reshape after it
            view.outputs[0].strides = fold.permute_strides;
            view.outputs[0].storage_offset = 0;
          } else {
            view.outputs[0] = graph.nodes[it->second].outputs[0];
          }
          return std::vector<ir::Arg>{new_value[id] = AppendNode(out, std::move(view))};
        }
        if (auto it = reshape_of.find(id); it != reshape_of.end()) {
          ir::Node view = node;
          view.outputs[0] = graph.nodes[it->second].outputs[0];
          return std::vector<ir::Arg>{new_value[id] = AppendNode(out, std::move(view))};
        }
        if (auto it = replaced_by.find(id); it != replaced_by.end())
          return std::vector<ir::Arg>{new_value.at(it->second)};
        return std::nullopt;
      });
}

}  // namespace tccd::codegen
