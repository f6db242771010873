// PermuteIntoIndexOps (see permute_into_index_ops.h).
#include "codegen/passes/permute_into_index_ops.h"

#include <optional>
#include <utility>
#include <vector>

#include "codegen/passes/graph_rebuild.h"
#include "codegen/passes/index_ops.h"
#include "codegen/passes/pointwise_ops.h"

namespace tccd::codegen {
namespace {

constexpr char kPermute[] = "aten::permute.default";
constexpr char kStack[] = "aten::stack.default";
constexpr char kCat[] = "aten::cat.default";
constexpr char kPad[] = "aten::constant_pad_nd.default";

const ir::Arg* ArgOf(const ir::Node& node, size_t index, const char* name) {
  if (index < node.args.size()) return &node.args[index];
  return node.kwarg(name);
}

bool IsPermuteView(const std::string& target) { return ViewKindOf(target) == ViewKind::kPermute; }

// The op's dim argument (cat, stack), wrapped into [0, rank).
int64_t DimOf(const ir::Node& node, int64_t rank) {
  const ir::Arg* a = ArgOf(node, 1, "dim");
  const auto* i = a ? std::get_if<int64_t>(&a->v) : nullptr;
  const int64_t d = i ? *i : 0;
  return d < 0 ? d + rank : d;
}

bool IsIdentity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

class Mover {
 public:
  explicit Mover(ir::Graph& out) : out_(out) {}

  // `permute` (args in `out`) of an index op, re-emitted as the index op over the permuted
  // space; the new value, or nullopt (nothing emitted).
  std::optional<ir::Arg> Move(const ir::Node& permute) {
    if (permute.args.empty() || !permute.args[0].is_ref() || permute.args[0].ref().is_input())
      return std::nullopt;
    // A copy: emitting the input permutes grows out_.nodes.
    const ir::Node op = out_.nodes[permute.args[0].ref().node];
    if (op.outputs.size() != 1 || !IsIndexOp(out_, op)) return std::nullopt;
    const int64_t rank = op.outputs[0].rank();
    std::optional<std::vector<int64_t>> perm = PermutationOf(permute, rank);
    if (!perm || IsIdentity(*perm) || permute.outputs.size() != 1) return std::nullopt;
    // The permute's declared sizes must be the op's, permuted (they size the new op's kernel).
    const std::vector<int64_t>& sizes = permute.outputs[0].sizes;
    if (static_cast<int64_t>(sizes.size()) != rank) return std::nullopt;
    for (int64_t i = 0; i < rank; ++i)
      if (sizes[i] != op.outputs[0].sizes[(*perm)[i]]) return std::nullopt;
    // Rewrites may emit input permutes before they find they cannot go on: undone below.
    mark_ = out_.nodes.size();
    std::optional<ir::Node> moved;
    if (op.target == kStack) moved = Stack(op, *perm);
    if (op.target == kCat) moved = Cat(op, *perm);
    if (op.target == kPad) moved = Pad(op, *perm);
    if (!moved) {
      out_.nodes.resize(mark_);
      return std::nullopt;
    }
    moved->outputs = {
        DenseType(op.outputs[0].dtype, permute.outputs[0].sizes, op.outputs[0].device)};
    // The index op's own checks on the new form (e.g. shapes it gathers from) must still hold.
    if (!IsIndexOp(out_, *moved)) {
      out_.nodes.resize(mark_);
      return std::nullopt;
    }
    return AppendNode(out_, *std::move(moved));
  }

 private:
  // stack(xs, d) permuted by perm: output dim i is stack dim perm[i]; the new stack dim is the i
  // with perm[i] == d, and each input (the stack's dims without d) is permuted alike.
  std::optional<ir::Node> Stack(const ir::Node& op, const std::vector<int64_t>& perm) {
    const int64_t rank = static_cast<int64_t>(perm.size());
    const int64_t d = DimOf(op, rank);
    int64_t new_d = -1;
    std::vector<int64_t> input_perm;
    for (int64_t i = 0; i < rank; ++i) {
      if (perm[i] == d)
        new_d = i;
      else
        input_perm.push_back(perm[i] < d ? perm[i] : perm[i] - 1);
    }
    if (new_d < 0) return std::nullopt;
    return WithInputs(op, input_perm, ir::Arg{new_d});
  }

  // cat(xs, d) permuted by perm: every input permuted alike, along the i with perm[i] == d.
  std::optional<ir::Node> Cat(const ir::Node& op, const std::vector<int64_t>& perm) {
    const int64_t rank = static_cast<int64_t>(perm.size());
    const int64_t d = DimOf(op, rank);
    for (int64_t i = 0; i < rank; ++i)
      if (perm[i] == d) return WithInputs(op, perm, ir::Arg{i});
    return std::nullopt;
  }

  // constant_pad_nd(x, pad, value) permuted by perm: x permuted, each output dim i padded as the
  // op's dim perm[i] was. The pad list names (low, high) pairs from the last dim backwards.
  std::optional<ir::Node> Pad(const ir::Node& op, const std::vector<int64_t>& perm) {
    const int64_t rank = static_cast<int64_t>(perm.size());
    const ir::Arg* pad_arg = ArgOf(op, 1, "pad");
    const auto* list = pad_arg ? std::get_if<ir::ArgList>(&pad_arg->v) : nullptr;
    if (list == nullptr || list->size() % 2 != 0 || static_cast<int64_t>(list->size() / 2) > rank)
      return std::nullopt;
    std::vector<int64_t> low(rank, 0), high(rank, 0);
    for (size_t pair = 0; pair < list->size() / 2; ++pair) {
      const auto* lo = std::get_if<int64_t>(&(*list)[2 * pair].v);
      const auto* hi = std::get_if<int64_t>(&(*list)[2 * pair + 1].v);
      if (lo == nullptr || hi == nullptr) return std::nullopt;
      low[rank - 1 - pair] = *lo;
      high[rank - 1 - pair] = *hi;
    }
    std::vector<int64_t> pad;
    for (int64_t i = rank - 1; i >= 0; --i) {
      pad.push_back(low[perm[i]]);
      pad.push_back(high[perm[i]]);
    }
    // Trailing (0, 0) pairs name leading dims that are not padded: dropped, as a user writes it.
    while (pad.size() > 2 && pad[pad.size() - 1] == 0 && pad[pad.size() - 2] == 0)
      pad.resize(pad.size() - 2);
    if (op.args.size() < 2 || !op.args[0].is_ref())
      return std::nullopt;  // pad= as a keyword: left alone
    ir::Node moved = op;
    moved.args[0] = Permuted(op.args[0], perm);
    moved.args[1] = IntListArg(pad);
    return moved;
  }

  // `op` (cat or stack) with every tensor of its list permuted by `input_perm` and dim `dim`.
  std::optional<ir::Node> WithInputs(const ir::Node& op, const std::vector<int64_t>& input_perm,
                                     ir::Arg dim) {
    if (op.args.empty()) return std::nullopt;
    const auto* list = std::get_if<ir::ArgList>(&op.args[0].v);
    if (list == nullptr) return std::nullopt;
    ir::ArgList inputs;
    for (const ir::Arg& x : *list) {
      if (!x.is_ref() || out_.type_of(x.ref()).rank() != static_cast<int64_t>(input_perm.size()))
        return std::nullopt;
      inputs.push_back(Permuted(x, input_perm));
    }
    ir::Node moved = op;
    moved.args = {ir::Arg{std::move(inputs)}, std::move(dim)};
    std::erase_if(moved.kwargs, [](const ir::NamedArg& kw) { return kw.name == "dim"; });
    return moved;
  }

  // permute(x, perm) as a view (x itself for the identity).
  ir::Arg Permuted(const ir::Arg& x, const std::vector<int64_t>& perm) {
    if (IsIdentity(perm)) return x;
    const ir::TensorType& t = out_.type_of(x.ref());
    ir::TensorType viewed = t;
    for (size_t i = 0; i < perm.size(); ++i) {
      viewed.sizes[i] = t.sizes[perm[i]];
      viewed.strides[i] = t.strides[perm[i]];
    }
    return EmitOp(out_, kPermute, {x, IntListArg(perm)}, std::move(viewed));
  }

  ir::Graph& out_;
  size_t mark_ = 0;  // out_'s size before this rewrite emitted anything
};

}  // namespace

absl::StatusOr<bool> PermuteIntoIndexOps::Run(ir::Graph& graph) {
  // Readers per value of the graph as given (graph outputs count as readers).
  const int n = static_cast<int>(graph.nodes.size());
  std::vector<std::vector<int>> readers(n);
  std::vector<bool> returned(n, false);
  for (int id = 0; id < n; ++id)
    ir::ForEachInput(graph.nodes[id], [&](const ir::ValueRef& r) {
      if (!r.is_input()) readers[r.node].push_back(id);
    });
  for (const ir::Arg& out : graph.outputs)
    ir::ForEachRef(out, [&](const ir::ValueRef& r) {
      if (!r.is_input()) returned[r.node] = true;
    });
  std::vector<bool> candidate(n, false);
  for (int id = 0; id < n; ++id) {
    const ir::Node& p = graph.nodes[id];
    if (!IsPermuteView(p.target) || returned[id] || p.args.empty() || !p.args[0].is_ref()) continue;
    const ir::ValueRef src = p.args[0].ref();
    if (src.is_input() || returned[src.node]) continue;
    const std::string& t = graph.nodes[src.node].target;
    if (t != kStack && t != kCat && t != kPad) continue;
    // The permute is the op's one reader (once: stack([s, s]) reads it twice).
    if (readers[src.node] != std::vector<int>{id}) continue;
    bool ok = !readers[id].empty();
    for (int r : readers[id])
      ok = ok && (IsPointwiseOp(graph, graph.nodes[r]) || IsIndexOp(graph, graph.nodes[r]));
    candidate[id] = ok;
  }
  int next = 0;
  return RebuildGraph(
      graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        const int id = next++;
        if (!candidate[id]) return std::nullopt;
        std::optional<ir::Arg> moved = Mover(out).Move(node);
        if (!moved) return std::nullopt;
        return std::vector<ir::Arg>{*moved};
      });
}

}  // namespace tccd::codegen
