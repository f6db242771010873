// ChannelsLastLayout (see channels_last_layout.h).
#include "codegen/passes/channels_last_layout.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "codegen/passes/graph_rebuild.h"
#include "codegen/passes/pointwise_ops.h"
#include "codegen/passes/reduction_ops.h"

namespace tccd::codegen {
namespace {

using Key = std::pair<int, int>;  // (node, output) of a node output

constexpr char kConvolution[] = "aten::convolution.default";
constexpr char kConvolutionBackward[] = "aten::convolution_backward.default";
constexpr char kClone[] = "aten::clone.default";

// An extern op whose 4-D outputs ATen allocates in the memory format its `format_from` operands
// suggest (channels-last if any of them does), converting its `coupled` operands to that format
// inside the op (a copy kernel each) when they arrive in another.
struct Follower {
  const char* target;
  std::vector<int> format_from;
  std::vector<int> coupled;
  std::vector<int> outputs;
  bool convolution;  // counts as a convolution (what the layout saves transposes around)
};

const std::vector<Follower>& Followers() {
  static const auto* table = new std::vector<Follower>{
      // at::native::cudnn_conv_suggest_memory_format(input, weight); meta_conv likewise on CUDA.
      {kConvolution, {0, 1}, {0, 1}, {0}, true},
      // grad_input and grad_weight (cudnn_convolution_backward_{input,weight}: the same rule).
      {kConvolutionBackward, {1, 2}, {0, 1, 2}, {0, 1}, true},
      // max_pool2d_with_indices_out_cuda: input.suggest_memory_format() for both outputs.
      {"aten::max_pool2d_with_indices.default", {0}, {0}, {0, 1}, false},
      {"aten::max_pool2d_with_indices_backward.default", {1}, {0, 1, 7}, {0}, false},
      // batch_norm_cuda / batch_norm_backward_cuda: empty_like(input,
      // input.suggest_memory_format()).
      {"aten::_native_batch_norm_legit_functional.default", {0}, {0}, {0}, false},
      {"aten::_native_batch_norm_legit_no_training.default", {0}, {0}, {0}, false},
      {"aten::native_batch_norm_backward.default", {1}, {0, 1}, {0}, false},
  };
  return *table;
}

// The Follower entry of `node`, or nullptr. Convolutions qualify when 2-D, not transposed and not
// grouped over a 4-D CUDA input (what ATen hands cuDNN; depthwise kernels may not be cuDNN's).
const Follower* FollowerOf(const ir::Graph& graph, const ir::Node& node) {
  const Follower* f = nullptr;
  for (const Follower& candidate : Followers())
    if (node.target == candidate.target) f = &candidate;
  if (f == nullptr) return nullptr;
  for (int a : f->format_from)
    if (a >= static_cast<int>(node.args.size()) || !node.args[a].is_ref()) return nullptr;
  const ir::TensorType& x = graph.type_of(node.args[f->format_from[0]].ref());
  if (x.device != ir::DeviceType::kCuda || x.rank() != 4) return nullptr;
  if (f->target == std::string_view(kConvolution) ||
      f->target == std::string_view(kConvolutionBackward)) {
    const bool conv = f->target == std::string_view(kConvolution);
    const size_t transposed_at = conv ? 6 : 7, groups_at = conv ? 8 : 9;
    if (node.args.size() <= groups_at || !IsF32OrHalf(x.dtype)) return nullptr;
    const bool* transposed = std::get_if<bool>(&node.args[transposed_at].v);
    if (transposed == nullptr || *transposed || IntArgAt(node, groups_at) != 1) return nullptr;
  }
  return f;
}

// detach or alias of a tensor, with the tensor's own type: its output takes the input's strides.
bool IsIdentityView(const ir::Graph& graph, const ir::Node& node) {
  return ViewKindOf(node.target) == ViewKind::kIdentity && node.args.size() == 1 &&
         node.args[0].is_ref() && node.outputs.size() == 1 &&
         graph.type_of(node.args[0].ref()) == node.outputs[0];
}

// Whether t's strides make ATen suggest channels-last (c10 is_channels_last_strides_2d, for
// dense tensors): exactly the channels-last strides, where they differ from the contiguous ones.
bool SuggestsChannelsLast(const ir::TensorType& t) {
  return t.rank() == 4 && t.strides == ChannelsLastStrides(t.sizes) &&
         t.strides != ir::ContiguousStrides(t.sizes);
}

// Union-find over node outputs.
class Regions {
 public:
  Key Find(Key k) {
    auto it = parent_.find(k);
    if (it == parent_.end()) return k;
    Key root = Find(it->second);
    parent_[k] = root;
    return root;
  }
  void Join(Key a, Key b) {
    a = Find(a);
    b = Find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }

 private:
  std::map<Key, Key> parent_;
};

}  // namespace

std::vector<int64_t> ChannelsLastStrides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> s(4);
  s[1] = 1;
  s[3] = std::max<int64_t>(sizes[1], 1);
  s[2] = s[3] * std::max<int64_t>(sizes[3], 1);
  s[0] = s[2] * std::max<int64_t>(sizes[2], 1);
  return s;
}

absl::StatusOr<bool> ChannelsLastLayout::Run(ir::Graph& graph) {
  const int n = static_cast<int>(graph.nodes.size());
  std::vector<const Follower*> follower(n);
  // Pointwise ops, and identity views (detach, alias: the output has the input's strides), whose
  // output layout is ours to choose.
  std::vector<bool> pointwise(n);
  bool any_conv = false;
  for (int id = 0; id < n; ++id) {
    const ir::Node& node = graph.nodes[id];
    follower[id] = FollowerOf(graph, node);
    pointwise[id] =
        node.outputs.size() == 1 && (IsPointwiseOp(graph, node) || IsIdentityView(graph, node));
    any_conv = any_conv || (follower[id] != nullptr && follower[id]->convolution);
  }
  if (!any_conv) return false;

  // 1. Movable values (their strides are ours to choose) and the regions that couple them.
  auto candidate = [&](const ir::ValueRef& r) {
    if (r.is_input()) return false;
    const ir::TensorType& t = graph.type_of(r);
    return t.device == ir::DeviceType::kCuda && t.rank() == 4 && IsPlain(t);
  };
  // A follower's layout is fixed by operands whose layout is not ours (graph inputs, views):
  // channels-last if one of them suggests it, NCHW if all of them are NCHW; free otherwise.
  enum class Fixed { kFree, kNchw, kChannelsLast };
  std::vector<Fixed> fixed(n, Fixed::kFree);
  auto movable = [&](const ir::ValueRef& r) {
    if (!candidate(r)) return false;
    if (pointwise[r.node]) return true;
    const Follower* f = follower[r.node];
    return f != nullptr && fixed[r.node] != Fixed::kNchw &&
           std::find(f->outputs.begin(), f->outputs.end(), r.output) != f->outputs.end();
  };
  for (int id = 0; id < n; ++id) {
    const Follower* f = follower[id];
    if (f == nullptr) continue;
    bool any_free = false, any_cl = false;
    for (int a : f->format_from) {
      const ir::ValueRef r = graph.nodes[id].args[a].ref();
      if (movable(r))
        any_free = true;
      else if (SuggestsChannelsLast(graph.type_of(r)))
        any_cl = true;
    }
    fixed[id] = any_cl ? Fixed::kChannelsLast : any_free ? Fixed::kFree : Fixed::kNchw;
  }
  Regions regions;
  std::set<Key> anchored_values;    // in a region ATen makes channels-last whatever we choose
  std::map<Key, int> convolutions;  // per region
  std::vector<std::vector<int>> layout_args(n);  // per node: args that follow its region's layout
  for (int id = 0; id < n; ++id) {
    const ir::Node& node = graph.nodes[id];
    if (pointwise[id]) {
      if (!movable({id, 0})) continue;
      ir::ForEachInput(node, [&](const ir::ValueRef& r) {
        if (movable(r) && graph.type_of(r).sizes == node.outputs[0].sizes)
          regions.Join({r.node, r.output}, {id, 0});
      });
      continue;
    }
    const Follower* f = follower[id];
    if (f == nullptr || fixed[id] == Fixed::kNchw) continue;
    std::vector<Key> members;
    for (int o : f->outputs)
      if (o < static_cast<int>(node.outputs.size()) && movable({id, o})) members.push_back({id, o});
    for (int a : f->coupled) {
      if (a >= static_cast<int>(node.args.size()) || !node.args[a].is_ref()) continue;
      layout_args[id].push_back(a);
      const ir::ValueRef r = node.args[a].ref();
      if (movable(r)) members.push_back({r.node, r.output});
    }
    if (members.empty()) continue;
    for (const Key& k : members) regions.Join(members[0], k);
    if (fixed[id] == Fixed::kChannelsLast) anchored_values.insert(members[0]);
    // Only 16-bit convolutions argue for the layout: cuDNN's NHWC kernels are what bf16/f16 run
    // (the transposes this saves); f32 ones (TF32 or not) keep the layout eager gives them unless
    // ATen makes them channels-last anyway (an anchored region).
    const ir::DType dtype = graph.type_of(node.args[f->format_from[0]].ref()).dtype;
    if (f->convolution && (dtype == ir::DType::kBF16 || dtype == ir::DType::kF16))
      convolutions[members[0]] += 1;  // re-rooted below
  }
  std::set<Key> anchored;
  for (const Key& k : anchored_values) anchored.insert(regions.Find(k));
  std::map<Key, int> convs;
  for (const auto& [k, count] : convolutions) convs[regions.Find(k)] += count;

  // 2. Values a reader needs in NCHW (a graph output AOTAutograd promised, a view, a reduction,
  //    an op that is neither pointwise nor a follower at a following position): one copy each.
  auto changes = [&](const ir::ValueRef& r) {
    return ChannelsLastStrides(graph.type_of(r).sizes) != graph.type_of(r).strides;
  };
  // A reduction's kernel reads its input through any strides (a copy would be one more pass).
  std::vector<bool> reduction(n);
  for (int id = 0; id < n; ++id)
    reduction[id] = ReductionAxesOf(graph, graph.nodes[id]).num_reduced_dims > 0;
  // Permutes of movable values that only kernels read (pointwise ops other than identity views,
  // whose output would keep the old strides; a reduction's input) and that the graph does not
  // return: the permutation, so that they follow their input's layout (channels_last_layout.h).
  std::vector<std::optional<std::vector<int64_t>>> permute(n);
  if (permutes_follow_) {
    const std::set<int> returned = ReturnedNodes(graph);
    for (int id = 0; id < n; ++id) {
      const ir::Node& node = graph.nodes[id];
      if (ViewKindOf(node.target) != ViewKind::kPermute || node.outputs.size() != 1 ||
          node.args.empty() || !node.args[0].is_ref() || !movable(node.args[0].ref()) ||
          returned.contains(id))
        continue;
      permute[id] = PermutationOf(node, 4);
    }
    auto not_by_kernel = [&](const ir::ValueRef& r) {
      if (!r.is_input()) permute[r.node].reset();
    };
    for (int id = 0; id < n; ++id) {
      const ir::Node& node = graph.nodes[id];
      const bool kernel = pointwise[id] && !IsIdentityView(graph, node);
      for (size_t a = 0; a < node.args.size(); ++a)
        if (!kernel && !(reduction[id] && a == 0)) ir::ForEachRef(node.args[a], not_by_kernel);
      if (!kernel)
        for (const ir::NamedArg& kw : node.kwargs) ir::ForEachRef(kw.value, not_by_kernel);
    }
  }
  auto follows = [&](int id, size_t a) {
    return pointwise[id] || (reduction[id] && a == 0) || (permute[id].has_value() && a == 0) ||
           std::find(layout_args[id].begin(), layout_args[id].end(), static_cast<int>(a)) !=
               layout_args[id].end();
  };
  std::set<Key> needs_copy;
  std::map<Key, int> copies;
  auto note_nchw_reader = [&](const ir::ValueRef& r) {
    if (!movable(r) || !changes(r) || !needs_copy.insert({r.node, r.output}).second) return;
    ++copies[regions.Find({r.node, r.output})];
  };
  for (int id = 0; id < n; ++id) {
    const ir::Node& node = graph.nodes[id];
    for (size_t a = 0; a < node.args.size(); ++a)
      if (!follows(id, a)) ir::ForEachRef(node.args[a], note_nchw_reader);
    if (!pointwise[id])
      for (const ir::NamedArg& kw : node.kwargs) ir::ForEachRef(kw.value, note_nchw_reader);
  }
  for (size_t i = 0; i < graph.outputs.size(); ++i)
    if (!free_outputs_.contains(static_cast<int>(i)))
      ir::ForEachRef(graph.outputs[i], note_nchw_reader);

  // 3. A region is channels-last when ATen makes it so anyway, or when it holds convolutions and
  //    needs fewer copies back than it has convolutions (each saves cuDNN's two transposes).
  auto channels_last = [&](const ir::ValueRef& r) {
    if (!movable(r)) return false;
    const Key root = regions.Find({r.node, r.output});
    if (anchored.contains(root)) return true;
    auto c = convs.find(root);
    return c != convs.end() && copies[root] < c->second;
  };
  std::set<Key> flipped, copied;
  for (int id = 0; id < n; ++id)
    for (int o = 0; o < static_cast<int>(graph.nodes[id].outputs.size()); ++o) {
      const ir::ValueRef r{id, o};
      if (!channels_last(r) || !changes(r)) continue;
      flipped.insert({id, o});
      if (needs_copy.contains({id, o})) copied.insert({id, o});
    }
  if (flipped.empty()) return false;
  for (const auto& [id, o] : flipped) {
    ir::TensorType& t = graph.nodes[id].outputs[o];
    t.strides = ChannelsLastStrides(t.sizes);
  }
  // A following permute of a flipped value: output dim i has the stride of input dim perm[i].
  for (int id = 0; id < n; ++id) {
    if (!permute[id].has_value()) continue;
    const ir::ValueRef in = graph.nodes[id].args[0].ref();
    if (!flipped.contains({in.node, in.output})) continue;
    const std::vector<int64_t> strides = graph.type_of(in).strides;
    ir::TensorType& t = graph.nodes[id].outputs[0];
    for (size_t i = 0; i < permute[id]->size(); ++i) t.strides[i] = strides[(*permute[id])[i]];
  }
  if (copied.empty()) return true;

  // 4. NCHW readers read a contiguous copy made right after the producer; readers that follow
  //    the layout keep the channels-last value.
  ir::Graph out;
  out.inputs = graph.inputs;
  RebuildMap map, copy_map;
  auto remap = [](ir::Arg& arg, const RebuildMap& primary, const RebuildMap& fallback) {
    std::function<void(ir::Arg&)> visit = [&](ir::Arg& a) {
      if (a.is_ref()) {
        if (a.ref().is_input()) return;
        const Key k{a.ref().node, a.ref().output};
        auto it = primary.find(k);
        a = it != primary.end() ? it->second : fallback.at(k);
      } else if (auto* list = std::get_if<ir::ArgList>(&a.v)) {
        for (ir::Arg& item : *list) visit(item);
      }
    };
    visit(arg);
  };
  for (int id = 0; id < n; ++id) {
    ir::Node node = graph.nodes[id];
    for (size_t a = 0; a < node.args.size(); ++a)
      remap(node.args[a], follows(id, a) ? map : copy_map, map);
    for (ir::NamedArg& kw : node.kwargs) remap(kw.value, pointwise[id] ? map : copy_map, map);
    const ir::Arg first = AppendNode(out, std::move(node));
    for (int o = 0; o < static_cast<int>(graph.nodes[id].outputs.size()); ++o) {
      const ir::Arg value{ir::ValueRef{first.ref().node, o}};
      map[{id, o}] = value;
      if (!copied.contains({id, o})) continue;
      const ir::TensorType& t = graph.nodes[id].outputs[o];
      copy_map[{id, o}] = EmitOp(out, kClone, {value}, DenseType(t.dtype, t.sizes, t.device),
                                 {{"memory_format", ir::Arg{ir::MemoryFormatArg{0}}}});
    }
  }
  out.outputs = graph.outputs;
  for (size_t i = 0; i < out.outputs.size(); ++i)
    remap(out.outputs[i], free_outputs_.contains(static_cast<int>(i)) ? map : copy_map, map);
  graph = std::move(out);
  return true;
}

}  // namespace tccd::codegen
