// Index-aware ops -> kernel IR (see index_ops.h). Formulas follow the ATen ops' definitions:
// each output point reads input element (coordinates) under a mask; masked-off points take the
// op's constant (0 for the backward ops, `value` for constant_pad_nd).
#include "codegen/passes/index_ops.h"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "codegen/passes/depthwise_conv_kernels.h"
#include "codegen/passes/max_pool_kernels.h"
#include "codegen/passes/scatter_ops.h"

namespace tccd::codegen {
namespace {

using ir::DType;

const ir::Arg* ArgOf(const ir::Node& node, size_t index, const char* name) {
  if (index < node.args.size()) return &node.args[index];
  return node.kwarg(name);
}

std::optional<int64_t> IntArg(const ir::Node& node, size_t index, const char* name) {
  const ir::Arg* a = ArgOf(node, index, name);
  if (a == nullptr) return std::nullopt;
  if (auto* i = std::get_if<int64_t>(&a->v)) return *i;
  return std::nullopt;
}

std::optional<std::vector<int64_t>> IntListArg(const ir::Node& node, size_t index,
                                               const char* name) {
  const ir::Arg* a = ArgOf(node, index, name);
  if (a == nullptr) return std::nullopt;
  const auto* list = std::get_if<ir::ArgList>(&a->v);
  if (list == nullptr) return std::nullopt;
  std::vector<int64_t> out;
  for (const ir::Arg& e : *list) {
    auto* i = std::get_if<int64_t>(&e.v);
    if (i == nullptr) return std::nullopt;
    out.push_back(*i);
  }
  return out;
}

// The tensor refs of `node`'s args (lists included), in order.
std::vector<ir::ValueRef> TensorRefs(const ir::Node& node) {
  std::vector<ir::ValueRef> refs;
  for (const ir::Arg& a : node.args)
    ir::ForEachRef(a, [&](const ir::ValueRef& r) { refs.push_back(r); });
  return refs;
}

int64_t WrapDim(int64_t dim, int64_t rank) { return dim < 0 ? dim + rank : dim; }

// One lowering: the node, its graph, and the builder, with the index helpers.
class Lowering {
 public:
  Lowering(const ir::Graph& graph, const ir::Node& node,
           const std::function<int(const ir::ValueRef&)>& input_of, PwBuilder& b)
      : graph_(graph), node_(node), input_of_(input_of), b_(b) {}

  const ir::TensorType& out() const { return node_.outputs[0]; }
  int64_t rank() const { return out().rank(); }
  DType held() const { return HeldDType(out().dtype); }
  PwBuilder& b() { return b_; }

  // Coordinate of the current point along dim d (one kIndex per dim, reused).
  int Coord(int64_t d) {
    auto it = coords_.find(d);
    if (it != coords_.end()) return it->second;
    PwInstr i;
    i.op = PwOp::kIndex;
    i.dtype = DType::kI64;
    i.operand = static_cast<int>(d);
    return coords_[d] = b_.Emit(std::move(i));
  }
  int I64(int64_t v) { return b_.Constant(static_cast<double>(v), DType::kI64); }
  int True() { return b_.Constant(1, DType::kBool); }
  int And(int a, int b) { return b_.Binary(PwOp::kAnd, a, b); }
  // lo <= x < hi on i64 values.
  int InRange(int x, int64_t lo, int64_t hi) {
    // Sequenced: argument evaluation order is unspecified and the body order must be stable.
    const int ge = b_.Compare(PwOp::kGe, x, I64(lo));
    const int lt = b_.Compare(PwOp::kLt, x, I64(hi));
    return And(ge, lt);
  }
  int Shift(int x, int64_t by) {
    if (by == 0) return x;
    const int c = I64(by);
    return b_.Binary(PwOp::kSub, x, c);
  }
  // Reads `r` at `coords` (i64 values, one per dim of r) under `mask`, as a held value of dtype.
  int Gather(const ir::ValueRef& r, int mask, const std::vector<int>& coords, DType dtype) {
    PwInstr i;
    i.op = PwOp::kGather;
    i.dtype = graph_.type_of(r).dtype;
    i.operand = input_of_(r);
    i.args.push_back(mask);
    i.args.insert(i.args.end(), coords.begin(), coords.end());
    return b_.Coerce(b_.Emit(std::move(i)), dtype);
  }
  // The point's coordinates with dim d replaced by `value` (-1: dropped).
  std::vector<int> CoordsWith(int64_t d, int value) {
    std::vector<int> c;
    for (int64_t k = 0; k < rank(); ++k) {
      if (k != d)
        c.push_back(Coord(k));
      else if (value >= 0)
        c.push_back(value);
    }
    return c;
  }
  const ir::Graph& graph() const { return graph_; }
  const ir::Node& node() const { return node_; }

 private:
  const ir::Graph& graph_;
  const ir::Node& node_;
  const std::function<int(const ir::ValueRef&)>& input_of_;
  PwBuilder& b_;
  absl::flat_hash_map<int64_t, int> coords_;
};

// ---- cat(tensors, dim): the input whose range along dim holds the point.
bool CatOk(const ir::Graph& g, const ir::Node& n) {
  auto dim = IntArg(n, 1, "dim");
  const int64_t rank = n.outputs[0].rank();
  const int64_t d = WrapDim(dim.value_or(0), rank);
  if (d < 0 || d >= rank || n.args.empty()) return false;
  const auto* list = std::get_if<ir::ArgList>(&n.args[0].v);
  if (list == nullptr || list->empty()) return false;
  for (const ir::Arg& a : *list) {
    if (!a.is_ref()) return false;
    const ir::TensorType& t = g.type_of(a.ref());
    if (t.rank() != rank) return false;  // legacy empty 1-d inputs stay extern
    for (int64_t k = 0; k < rank; ++k)
      if (k != d && t.sizes[k] != n.outputs[0].sizes[k]) return false;
  }
  return true;
}

int LowerCat(Lowering& l) {
  const int64_t d = WrapDim(IntArg(l.node(), 1, "dim").value_or(0), l.rank());
  const auto& list = std::get<ir::ArgList>(l.node().args[0].v);
  struct Piece {
    int mask, value;
  };
  std::vector<Piece> pieces;
  int64_t offset = 0;
  for (const ir::Arg& a : list) {
    const int64_t size = l.graph().type_of(a.ref()).sizes[d];
    if (size > 0) {
      const int mask = l.InRange(l.Coord(d), offset, offset + size);
      const int shifted = l.Shift(l.Coord(d), offset);
      const std::vector<int> coords = l.CoordsWith(d, shifted);
      const int v = l.Gather(a.ref(), mask, coords, l.held());
      pieces.push_back({mask, v});
    }
    offset += size;
  }
  if (pieces.empty()) return l.b().Constant(0, l.held());
  int result = pieces.back().value;
  for (int j = static_cast<int>(pieces.size()) - 2; j >= 0; --j)
    result = l.b().Where(pieces[j].mask, pieces[j].value, result);
  return result;
}

// ---- constant_pad_nd(x, pad, value): pad pairs (low, high) from the last dim backwards.
bool PadOk(const ir::Graph& g, const ir::Node& n) {
  auto pad = IntListArg(n, 1, "pad");
  if (!pad || pad->size() % 2 != 0 || n.args.empty() || !n.args[0].is_ref()) return false;
  const ir::TensorType& t = g.type_of(n.args[0].ref());
  if (t.rank() != n.outputs[0].rank() || static_cast<int64_t>(pad->size() / 2) > t.rank())
    return false;
  const ir::Arg* value = ArgOf(n, 2, "value");
  if (value && !value->is_none() && !std::holds_alternative<int64_t>(value->v) &&
      !std::holds_alternative<double>(value->v) && !std::holds_alternative<bool>(value->v))
    return false;
  return true;
}

int LowerPad(Lowering& l) {
  const ir::Node& n = l.node();
  const auto pad = *IntListArg(n, 1, "pad");
  const ir::ValueRef x = n.args[0].ref();
  const ir::TensorType& t = l.graph().type_of(x);
  int mask = l.True();
  std::vector<int> coords;
  for (int64_t k = 0; k < l.rank(); ++k) {
    const int64_t pair = l.rank() - 1 - k;  // pad[2*pair] is dim k's low pad
    if (pair < static_cast<int64_t>(pad.size() / 2)) {
      const int c = l.Shift(l.Coord(k), pad[2 * pair]);
      const int in_range = l.InRange(c, 0, t.sizes[k]);
      mask = l.And(mask, in_range);
      coords.push_back(c);
    } else {
      coords.push_back(l.Coord(k));
    }
  }
  double value = 0;
  if (const ir::Arg* v = ArgOf(n, 2, "value")) {
    if (auto* i = std::get_if<int64_t>(&v->v)) value = static_cast<double>(*i);
    if (auto* f = std::get_if<double>(&v->v)) value = *f;
    if (auto* b = std::get_if<bool>(&v->v)) value = *b;
  }
  const int in = l.Gather(x, mask, coords, l.held());
  const int fill = l.b().Constant(value, l.held());
  return l.b().Where(mask, in, fill);
}

// ---- slice_backward(grad, input_sizes, dim, start, end, step): grad placed at [start, end).
// Normalised like ATen's slice: negative start/end wrap, then clamp to [0, size].
std::optional<int64_t> SliceStart(const ir::Node& n, int64_t size, size_t start_index) {
  auto start = IntArg(n, start_index, "start");
  if (!start) return std::nullopt;
  int64_t s = *start < 0 ? *start + size : *start;
  return std::clamp<int64_t>(s, 0, size);
}

bool SliceBackwardOk(const ir::Graph& g, const ir::Node& n) {
  if (n.args.empty() || !n.args[0].is_ref()) return false;
  const int64_t rank = n.outputs[0].rank();
  auto dim = IntArg(n, 2, "dim");
  auto step = IntArg(n, 5, "step");
  if (!dim || !step || *step != 1) return false;
  const int64_t d = WrapDim(*dim, rank);
  if (d < 0 || d >= rank || !SliceStart(n, n.outputs[0].sizes[d], 3)) return false;
  return g.type_of(n.args[0].ref()).rank() == rank;
}

int LowerSliceBackward(Lowering& l) {
  const ir::Node& n = l.node();
  const int64_t d = WrapDim(*IntArg(n, 2, "dim"), l.rank());
  const int64_t start = *SliceStart(n, l.out().sizes[d], 3);
  const ir::ValueRef grad = n.args[0].ref();
  const int64_t len = l.graph().type_of(grad).sizes[d];
  const int mask = l.InRange(l.Coord(d), start, start + len);
  const int shifted = l.Shift(l.Coord(d), start);
  const std::vector<int> coords = l.CoordsWith(d, shifted);
  const int v = l.Gather(grad, mask, coords, l.held());
  const int zero = l.b().Constant(0, l.held());
  return l.b().Where(mask, v, zero);
}

// ---- select_backward(grad, input_sizes, dim, index): grad placed at index along dim.
bool SelectBackwardOk(const ir::Graph& g, const ir::Node& n) {
  if (n.args.empty() || !n.args[0].is_ref()) return false;
  const int64_t rank = n.outputs[0].rank();
  auto dim = IntArg(n, 2, "dim");
  auto index = IntArg(n, 3, "index");
  if (!dim || !index) return false;
  const int64_t d = WrapDim(*dim, rank);
  if (d < 0 || d >= rank) return false;
  const int64_t size = n.outputs[0].sizes[d];
  const int64_t i = *index < 0 ? *index + size : *index;
  return i >= 0 && i < size && g.type_of(n.args[0].ref()).rank() == rank - 1;
}

int LowerSelectBackward(Lowering& l) {
  const ir::Node& n = l.node();
  const int64_t d = WrapDim(*IntArg(n, 2, "dim"), l.rank());
  int64_t index = *IntArg(n, 3, "index");
  if (index < 0) index += l.out().sizes[d];
  const int coord = l.Coord(d);
  const int at = l.I64(index);
  const int mask = l.b().Compare(PwOp::kEq, coord, at);
  const std::vector<int> coords = l.CoordsWith(d, -1);
  const int v = l.Gather(n.args[0].ref(), mask, coords, l.held());
  const int zero = l.b().Constant(0, l.held());
  return l.b().Where(mask, v, zero);
}

// ---- embedding(weight [V, E], indices [...], padding_idx, scale_grad_by_freq, sparse):
// out[..., e] = weight[indices[...], e]. An index outside [0, V) reads 0 (ATen raises a device
// assert; a kernel cannot raise, and reading out of bounds is never acceptable).

bool EmbeddingOk(const ir::Graph& g, const ir::Node& n) {
  if (n.args.size() < 2 || !n.args[0].is_ref() || !n.args[1].is_ref()) return false;
  const ir::TensorType& w = g.type_of(n.args[0].ref());
  const ir::TensorType& idx = g.type_of(n.args[1].ref());
  return w.rank() == 2 && IsIndexDType(idx.dtype) && idx.rank() >= 1 &&
         n.outputs[0].rank() == idx.rank() + 1;
}

int LowerEmbedding(Lowering& l) {
  const ir::Node& n = l.node();
  const ir::ValueRef w = n.args[0].ref();
  std::vector<int> lead;
  for (int64_t k = 0; k + 1 < l.rank(); ++k) lead.push_back(l.Coord(k));
  const int all = l.True();
  const int row = l.Gather(n.args[1].ref(), all, lead, DType::kI64);
  const int mask = l.InRange(row, 0, l.graph().type_of(w).sizes[0]);
  const int col = l.Coord(l.rank() - 1);
  return l.Gather(w, mask, {row, col}, l.held());
}

// ---- index_select(self, dim, index [n]): out[.., i, ..] = self[.., index[i], ..].
bool IndexSelectOk(const ir::Graph& g, const ir::Node& n) {
  if (n.args.size() < 3 || !n.args[0].is_ref() || !n.args[2].is_ref()) return false;
  const ir::TensorType& self = g.type_of(n.args[0].ref());
  const ir::TensorType& idx = g.type_of(n.args[2].ref());
  auto dim = IntArg(n, 1, "dim");
  if (!dim || self.rank() == 0 || self.rank() != n.outputs[0].rank()) return false;
  const int64_t d = WrapDim(*dim, self.rank());
  return d >= 0 && d < self.rank() && IsIndexDType(idx.dtype) && idx.rank() <= 1;
}

int LowerIndexSelect(Lowering& l) {
  const ir::Node& n = l.node();
  const ir::ValueRef self = n.args[0].ref();
  const ir::ValueRef index = n.args[2].ref();
  const int64_t d = WrapDim(*IntArg(n, 1, "dim"), l.rank());
  std::vector<int> icoords;
  if (l.graph().type_of(index).rank() == 1) icoords.push_back(l.Coord(d));
  const int all = l.True();
  const int i = l.Gather(index, all, icoords, DType::kI64);
  const int mask = l.InRange(i, 0, l.graph().type_of(self).sizes[d]);
  const std::vector<int> coords = l.CoordsWith(d, i);
  return l.Gather(self, mask, coords, l.held());
}

// ---- nll_loss_backward(grad_output, self [N, C] or [C], target [N] or [], weight (None only),
// reduction, ignore_index, total_weight): grad_input[n, c] = -grad_output[n?] (/ total_weight
// for mean) where c == target[n] != ignore_index, else 0 (aten/src/ATen/native/LossNLL.cpp).
constexpr int64_t kReductionNone = 0, kReductionMean = 1;

bool NllLossBackwardOk(const ir::Graph& g, const ir::Node& n) {
  if (n.args.size() < 7) return false;
  for (int i : {0, 1, 2, 6})
    if (!n.args[i].is_ref()) return false;
  if (!n.args[3].is_none()) return false;  // class weights stay extern
  auto reduction = IntArg(n, 4, "reduction");
  auto ignore = IntArg(n, 5, "ignore_index");
  if (!reduction || !ignore || *reduction < 0 || *reduction > 2) return false;
  const ir::TensorType& self = g.type_of(n.args[1].ref());
  const ir::TensorType& target = g.type_of(n.args[2].ref());
  const ir::TensorType& grad = g.type_of(n.args[0].ref());
  if (self.rank() < 1 || self.rank() > 2 || target.rank() != self.rank() - 1) return false;
  if (!IsIndexDType(target.dtype) || g.type_of(n.args[6].ref()).rank() != 0) return false;
  return grad.rank() == (*reduction == kReductionNone ? target.rank() : 0);
}

int LowerNllLossBackward(Lowering& l) {
  const ir::Node& n = l.node();
  const int64_t reduction = *IntArg(n, 4, "reduction");
  const int64_t ignore = *IntArg(n, 5, "ignore_index");
  const bool batched = l.rank() == 2;
  const int all = l.True();
  std::vector<int> row;
  if (batched) row.push_back(l.Coord(0));
  const int c = l.Coord(l.rank() - 1);
  const int t = l.Gather(n.args[2].ref(), all, row, DType::kI64);
  const int hit = l.b().Compare(PwOp::kEq, c, t);
  const int ignore_value = l.I64(ignore);
  const int kept = l.b().Compare(PwOp::kNe, t, ignore_value);
  const int valid = l.And(hit, kept);
  std::vector<int> grad_coords;
  if (reduction == kReductionNone) grad_coords = row;
  int g = l.Gather(n.args[0].ref(), all, grad_coords, l.held());
  if (reduction == kReductionMean) {
    const int total = l.Gather(n.args[6].ref(), all, {}, l.held());
    g = l.b().Binary(PwOp::kDiv, g, total);
  }
  const int neg = l.b().Unary(PwOp::kNeg, g);
  const int zero = l.b().Constant(0, l.held());
  return l.b().Where(valid, neg, zero);
}

// ---- slice_scatter(self, src, dim, start, end, step) (step 1): self with [start, start + n)
// along dim replaced by src; select_scatter(self, src, dim, index): self with index replaced.
// A number as `self` (or select_scatter's `src`): a constant fill inlined by FillCopyFolding.
bool IsNumber(const ir::Arg& a) {
  return std::holds_alternative<int64_t>(a.v) || std::holds_alternative<double>(a.v) ||
         std::holds_alternative<bool>(a.v);
}

double NumberOf(const ir::Arg& a) {
  if (auto* i = std::get_if<int64_t>(&a.v)) return static_cast<double>(*i);
  if (auto* b = std::get_if<bool>(&a.v)) return *b ? 1 : 0;
  return std::get<double>(a.v);
}

// Rank of a tensor operand, or `number_rank` for a number.
int64_t RankOf(const ir::Graph& g, const ir::Arg& a, int64_t number_rank) {
  return a.is_ref() ? g.type_of(a.ref()).rank() : number_rank;
}

// The value of `arg` at `coords` under `mask`: a gather, or the number itself.
int GatherOrConstant(Lowering& l, const ir::Arg& arg, int mask, const std::vector<int>& coords) {
  if (arg.is_ref()) return l.Gather(arg.ref(), mask, coords, l.held());
  return l.b().Constant(NumberOf(arg), l.held());
}

// `self` of a scatter where `mask` (the scattered points) is false: gathered at the point's own
// coordinates, or the number itself (no mask needed then).
int GatherOrConstantOutside(Lowering& l, const ir::Arg& self, int mask) {
  if (!self.is_ref()) return GatherOrConstant(l, self, -1, {});
  const int not_mask = l.b().Unary(PwOp::kNot, mask);
  return l.Gather(self.ref(), not_mask, l.CoordsWith(-1, -1), l.held());
}

bool SliceScatterOk(const ir::Graph& g, const ir::Node& n) {
  if (n.args.size() < 2 || !(n.args[0].is_ref() || IsNumber(n.args[0])) || !n.args[1].is_ref())
    return false;
  const int64_t rank = n.outputs[0].rank();
  const int64_t d = WrapDim(IntArg(n, 2, "dim").value_or(0), rank);
  const ir::Arg* step = ArgOf(n, 5, "step");
  if (step && !step->is_none() && IntArg(n, 5, "step") != 1) return false;
  const ir::Arg* start = ArgOf(n, 3, "start");
  if (start && !start->is_none() && !IntArg(n, 3, "start")) return false;
  return d >= 0 && d < rank && g.type_of(n.args[1].ref()).rank() == rank &&
         RankOf(g, n.args[0], rank) == rank;
}

int LowerSliceScatter(Lowering& l) {
  const ir::Node& n = l.node();
  const int64_t d = WrapDim(IntArg(n, 2, "dim").value_or(0), l.rank());
  const int64_t size = l.out().sizes[d];
  int64_t start = IntArg(n, 3, "start").value_or(0);
  start = std::clamp<int64_t>(start < 0 ? start + size : start, 0, size);
  const int64_t len = l.graph().type_of(n.args[1].ref()).sizes[d];
  const int mask = l.InRange(l.Coord(d), start, start + len);
  const int shifted = l.Shift(l.Coord(d), start);
  const std::vector<int> src_coords = l.CoordsWith(d, shifted);
  const int src = l.Gather(n.args[1].ref(), mask, src_coords, l.held());
  const int self = GatherOrConstantOutside(l, n.args[0], mask);
  return l.b().Where(mask, src, self);
}

bool SelectScatterOk(const ir::Graph& g, const ir::Node& n) {
  if (n.args.size() < 4 || !(n.args[0].is_ref() || IsNumber(n.args[0])) ||
      !(n.args[1].is_ref() || IsNumber(n.args[1])))
    return false;
  const int64_t rank = n.outputs[0].rank();
  auto dim = IntArg(n, 2, "dim");
  auto index = IntArg(n, 3, "index");
  if (!dim || !index) return false;
  const int64_t d = WrapDim(*dim, rank);
  if (d < 0 || d >= rank) return false;
  const int64_t i = *index < 0 ? *index + n.outputs[0].sizes[d] : *index;
  return i >= 0 && i < n.outputs[0].sizes[d] && RankOf(g, n.args[1], rank - 1) == rank - 1 &&
         RankOf(g, n.args[0], rank) == rank;
}

int LowerSelectScatter(Lowering& l) {
  const ir::Node& n = l.node();
  const int64_t d = WrapDim(*IntArg(n, 2, "dim"), l.rank());
  int64_t index = *IntArg(n, 3, "index");
  if (index < 0) index += l.out().sizes[d];
  const int coord = l.Coord(d);
  const int at = l.I64(index);
  const int mask = l.b().Compare(PwOp::kEq, coord, at);
  const std::vector<int> src_coords = l.CoordsWith(d, -1);
  const int src = GatherOrConstant(l, n.args[1], mask, src_coords);
  const int self = GatherOrConstantOutside(l, n.args[0], mask);
  return l.b().Where(mask, src, self);
}

// ---- stack(tensors, dim): input j at coordinate j along the new dim.
bool StackOk(const ir::Graph& g, const ir::Node& n) {
  const int64_t rank = n.outputs[0].rank();
  const int64_t d = WrapDim(IntArg(n, 1, "dim").value_or(0), rank);
  if (d < 0 || d >= rank || n.args.empty()) return false;
  const auto* list = std::get_if<ir::ArgList>(&n.args[0].v);
  if (list == nullptr || list->empty() ||
      static_cast<int64_t>(list->size()) != n.outputs[0].sizes[d])
    return false;
  for (const ir::Arg& a : *list)
    if (!a.is_ref() || g.type_of(a.ref()).rank() != rank - 1) return false;
  return true;
}

int LowerStack(Lowering& l) {
  const int64_t d = WrapDim(IntArg(l.node(), 1, "dim").value_or(0), l.rank());
  const auto& list = std::get<ir::ArgList>(l.node().args[0].v);
  const std::vector<int> coords = l.CoordsWith(d, -1);
  int result = -1;
  for (int64_t j = static_cast<int64_t>(list.size()) - 1; j >= 0; --j) {
    const int at = l.I64(j);
    const int mask = l.b().Compare(PwOp::kEq, l.Coord(d), at);
    const int v = l.Gather(list[j].ref(), mask, coords, l.held());
    result = result < 0 ? v : l.b().Where(mask, v, result);
  }
  return result;
}

// ---- gather(self, dim, index): out[c] = self[c with c_dim = index[c]] (index's shape).
bool GatherOk(const ir::Graph& g, const ir::Node& n) {
  if (n.args.size() < 3 || !n.args[0].is_ref() || !n.args[2].is_ref()) return false;
  const ir::TensorType& self = g.type_of(n.args[0].ref());
  const ir::TensorType& idx = g.type_of(n.args[2].ref());
  const int64_t rank = n.outputs[0].rank();
  auto dim = IntArg(n, 1, "dim");
  if (!dim || rank == 0 || self.rank() != rank || idx.rank() != rank || !IsIndexDType(idx.dtype))
    return false;
  const int64_t d = WrapDim(*dim, rank);
  return d >= 0 && d < rank;
}

int LowerGatherOp(Lowering& l) {
  const ir::Node& n = l.node();
  const int64_t d = WrapDim(*IntArg(n, 1, "dim"), l.rank());
  const int all = l.True();
  const std::vector<int> coords = l.CoordsWith(-1, -1);
  const int i = l.Gather(n.args[2].ref(), all, coords, DType::kI64);
  const int mask = l.InRange(i, 0, l.graph().type_of(n.args[0].ref()).sizes[d]);
  const std::vector<int> self_coords = l.CoordsWith(d, i);
  return l.Gather(n.args[0].ref(), mask, self_coords, l.held());
}

// ---- index.Tensor(self, [i_0, ..., i_{k-1}]): integer index tensors on self's first k dims,
// broadcast together to a shape B: out[b..., rest...] = self[i_0[b], ..., i_{k-1}[b], rest...]
// (negative indices wrap, as in Python indexing). transformers' attention masks index a
// [batch, seq] tensor with two broadcast index tensors (batch [B, 1, 1, 1] and position
// [1, 1, S, 1]): as ATen steps those were an index kernel and two expand copies each (GPT-2 and
// Llama: 4 such indexes per forward), here they fuse with the mask's comparisons.

// The broadcast shape of `index`'s tensors (right-aligned, size-1 dims stretch), or nullopt.
std::optional<std::vector<int64_t>> BroadcastShape(const ir::Graph& g, const ir::ArgList& index) {
  std::vector<int64_t> shape;
  for (const ir::Arg& a : index) {
    const ir::TensorType& t = g.type_of(a.ref());
    if (t.rank() > static_cast<int64_t>(shape.size()))
      shape.insert(shape.begin(), t.rank() - static_cast<int64_t>(shape.size()), 1);
    const int64_t offset = static_cast<int64_t>(shape.size()) - t.rank();
    for (int64_t m = 0; m < t.rank(); ++m) {
      int64_t& s = shape[offset + m];
      if (t.sizes[m] == s || t.sizes[m] == 1) continue;
      if (s != 1) return std::nullopt;
      s = t.sizes[m];
    }
  }
  return shape;
}

bool IndexTensorOk(const ir::Graph& g, const ir::Node& n) {
  if (n.args.size() != 2 || !n.args[0].is_ref()) return false;
  const auto* list = std::get_if<ir::ArgList>(&n.args[1].v);
  if (list == nullptr || list->empty()) return false;
  const ir::TensorType& self = g.type_of(n.args[0].ref());
  if (static_cast<int64_t>(list->size()) > self.rank()) return false;
  for (const ir::Arg& a :
       *list)  // a None entry (an unindexed dim before an indexed one) stays extern
    if (!a.is_ref() || !IsIndexDType(g.type_of(a.ref()).dtype)) return false;
  const auto shape = BroadcastShape(g, *list);
  if (!shape) return false;
  // A gather reads at most as many coordinates as the kernel has dims (kGather): self's rank
  // may not exceed the output's (indexing k dims with 1-d tensors of one size shrinks it).
  if (static_cast<int64_t>(shape->size()) < static_cast<int64_t>(list->size())) return false;
  std::vector<int64_t> expected = *shape;
  expected.insert(expected.end(), self.sizes.begin() + static_cast<int64_t>(list->size()),
                  self.sizes.end());
  return n.outputs[0].sizes == expected;
}

int LowerIndexTensor(Lowering& l) {
  const ir::Node& n = l.node();
  const ir::ValueRef self = n.args[0].ref();
  const ir::TensorType& self_type = l.graph().type_of(self);
  const auto& list = std::get<ir::ArgList>(n.args[1].v);
  const int64_t rb = static_cast<int64_t>(BroadcastShape(l.graph(), list)->size());
  const int all = l.True();
  int mask = -1;
  std::vector<int> coords;
  for (size_t j = 0; j < list.size(); ++j) {
    const ir::ValueRef index = list[j].ref();
    const ir::TensorType& t = l.graph().type_of(index);
    // The point's coordinates in this index tensor: right-aligned in B, 0 along its size-1 dims.
    std::vector<int> icoords;
    for (int64_t m = 0; m < t.rank(); ++m)
      icoords.push_back(t.sizes[m] == 1 ? l.I64(0) : l.Coord(rb - t.rank() + m));
    const int64_t size = self_type.sizes[j];
    const int raw = l.Gather(index, all, icoords, DType::kI64);
    const int zero = l.I64(0);
    const int negative = l.b().Compare(PwOp::kLt, raw, zero);
    const int wrapped = l.b().Binary(PwOp::kAdd, raw, l.I64(size));
    const int i = l.b().Where(negative, wrapped, raw);
    const int in_range = l.InRange(i, 0, size);
    mask = mask < 0 ? in_range : l.And(mask, in_range);
    coords.push_back(i);
  }
  for (int64_t k = rb; k < l.rank(); ++k) coords.push_back(l.Coord(k));
  return l.Gather(self, mask, coords, l.held());
}

// ---- max pooling (max_pool_kernels.h). tccd::max_pool2d_values / _offsets(x, kernel_size,
// stride, padding, dilation, ceil_mode[, channels_last]) and
// tccd::max_pool2d_gather_backward(grad, indices, kernel_size, stride, padding, dilation,
// ceil_mode[, channels_last]): the ATen ops' arguments, pooling the last two dims of a 3-D or 4-D
// tensor, or with channels_last dims 1 and 2 of a 4-D [N, H, W, C] one (a channels-last
// tensor's permuted view: the kernel then walks C innermost).
struct PoolDim {
  int64_t kernel, stride, pad, in, out;
};

struct PoolGeometryOf {
  std::array<PoolDim, 2> dims;
  std::array<int64_t, 2> axes;  // the pooled dims (H, W) of the tensors
};

// The pooling geometry from the arguments at `first` onwards, for input sizes `in` and output
// sizes `out` (equal ranks); nullopt for what the generated form does not take (dilation > 1,
// ceil_mode, windows of more than 64 points, a padding over half the window, which ATen rejects,
// or sizes that disagree with the arguments).
std::optional<PoolGeometryOf> PoolGeometry(const ir::Node& n, size_t first,
                                           const std::vector<int64_t>& in,
                                           const std::vector<int64_t>& out) {
  const int64_t rank = static_cast<int64_t>(out.size());
  if ((rank != 3 && rank != 4) || static_cast<int64_t>(in.size()) != rank) return std::nullopt;
  auto pair = [&](size_t index,
                  std::vector<int64_t> fallback) -> std::optional<std::vector<int64_t>> {
    if (index >= n.args.size() || n.args[index].is_none()) return fallback;
    auto list = IntListArg(n, index, "");
    if (!list) return std::nullopt;
    if (list->empty()) return fallback;
    if (list->size() == 1) list->push_back(list->front());
    if (list->size() != 2) return std::nullopt;
    return list;
  };
  auto flag = [&](size_t index) -> std::optional<bool> {
    if (index >= n.args.size()) return false;
    const bool* b = std::get_if<bool>(&n.args[index].v);
    if (b == nullptr) return std::nullopt;
    return *b;
  };
  auto kernel = pair(first, {});
  if (!kernel || kernel->size() != 2) return std::nullopt;
  auto stride = pair(first + 1, *kernel);
  auto pad = pair(first + 2, {0, 0});
  auto dilation = pair(first + 3, {1, 1});
  if (!stride || !pad || !dilation || (*dilation)[0] != 1 || (*dilation)[1] != 1)
    return std::nullopt;
  const std::optional<bool> ceil_mode = flag(first + 4);
  const std::optional<bool> channels_last = flag(first + 5);
  if (!ceil_mode || *ceil_mode || !channels_last || (*channels_last && rank != 4))
    return std::nullopt;
  if ((*kernel)[0] * (*kernel)[1] > 64) return std::nullopt;
  PoolGeometryOf g;
  g.axes = *channels_last ? std::array<int64_t, 2>{1, 2} : std::array<int64_t, 2>{rank - 2, rank - 1};
  for (int k = 0; k < 2; ++k) {
    PoolDim d{(*kernel)[k], (*stride)[k], (*pad)[k], in[g.axes[k]], out[g.axes[k]]};
    if (d.kernel <= 0 || d.stride <= 0 || d.pad < 0 || 2 * d.pad > d.kernel) return std::nullopt;
    // The backward's window division runs in f32 (exact below 2^22).
    if (d.in + d.pad >= (int64_t{1} << 22)) return std::nullopt;
    if (d.in + 2 * d.pad < d.kernel || (d.in + 2 * d.pad - d.kernel) / d.stride + 1 != d.out)
      return std::nullopt;
    g.dims[k] = d;
  }
  for (int64_t k = 0; k < rank; ++k)
    if (k != g.axes[0] && k != g.axes[1] && in[k] != out[k]) return std::nullopt;
  return g;
}

// The point's coordinates with the pooled dims replaced by h and w.
std::vector<int> PoolCoords(Lowering& l, const PoolGeometryOf& g, int h, int w) {
  std::vector<int> coords;
  for (int64_t k = 0; k < l.rank(); ++k)
    coords.push_back(k == g.axes[0] ? h : k == g.axes[1] ? w : l.Coord(k));
  return coords;
}

bool MaxPoolForwardOk(const ir::Graph& g, const ir::Node& n) {
  if (n.args.empty() || !n.args[0].is_ref()) return false;
  const ir::TensorType& x = g.type_of(n.args[0].ref());
  if (!IsF32OrHalf(x.dtype)) return false;
  const bool values = n.target == "tccd::max_pool2d_values.default";
  if (n.outputs[0].dtype != (values ? x.dtype : DType::kI64)) return false;
  return PoolGeometry(n, 1, x.sizes, n.outputs[0].sizes).has_value();
}

// The window loop, unrolled in ATen's order (rows, then columns): a point replaces the running
// maximum when it is greater or NaN (max_pool2d_with_indices' CPU and CUDA kernels); padding is
// never taken, and a window of -inf keeps its first in-bounds point's index.
int LowerMaxPoolForward(Lowering& l, bool want_index) {
  const ir::Node& n = l.node();
  const ir::ValueRef x = n.args[0].ref();
  const ir::TensorType& xt = l.graph().type_of(x);
  const PoolGeometryOf geometry = *PoolGeometry(n, 1, xt.sizes, l.out().sizes);
  const std::array<PoolDim, 2>& dims = geometry.dims;
  int start[2];
  for (int k = 0; k < 2; ++k) {
    const int scaled =
        l.b().Binary(PwOp::kMul, l.Coord(geometry.axes[k]), l.I64(dims[k].stride));
    start[k] = l.Shift(scaled, dims[k].pad);
  }
  int max_index = -1;
  if (want_index) {
    int clamped[2];
    for (int k = 0; k < 2; ++k) {
      const int zero = l.I64(0);
      const int negative = l.b().Compare(PwOp::kLt, start[k], zero);
      clamped[k] = l.b().Where(negative, zero, start[k]);
    }
    const int row = l.b().Binary(PwOp::kMul, clamped[0], l.I64(dims[1].in));
    max_index = l.b().Binary(PwOp::kAdd, row, clamped[1]);
  }
  int max_value = l.b().Constant(-std::numeric_limits<double>::infinity(), DType::kF32);
  for (int64_t i = 0; i < dims[0].kernel; ++i) {
    const int h = i == 0 ? start[0] : l.b().Binary(PwOp::kAdd, start[0], l.I64(i));
    const int h_ok = l.InRange(h, 0, dims[0].in);
    for (int64_t j = 0; j < dims[1].kernel; ++j) {
      const int w = j == 0 ? start[1] : l.b().Binary(PwOp::kAdd, start[1], l.I64(j));
      const int w_ok = l.InRange(w, 0, dims[1].in);
      const int valid = l.And(h_ok, w_ok);
      const int v = l.Gather(x, valid, PoolCoords(l, geometry, h, w), DType::kF32);
      const int greater = l.b().Compare(PwOp::kGt, v, max_value);
      const int nan = l.b().Compare(PwOp::kNe, v, v);
      const int better = l.b().Binary(PwOp::kOr, greater, nan);
      const int take = l.And(valid, better);
      // (The index's last point needs no running maximum after it: an unused value would be
      // an NVRTC warning.)
      const bool last = i + 1 == dims[0].kernel && j + 1 == dims[1].kernel;
      if (!want_index || !last) max_value = l.b().Where(take, v, max_value);
      if (want_index) {
        const int row = l.b().Binary(PwOp::kMul, h, l.I64(dims[1].in));
        const int flat = l.b().Binary(PwOp::kAdd, row, w);
        max_index = l.b().Where(take, flat, max_index);
      }
    }
  }
  return want_index ? max_index : l.b().Coerce(max_value, l.held());
}

int LowerMaxPoolValues(Lowering& l) { return LowerMaxPoolForward(l, false); }
int LowerMaxPoolOffsets(Lowering& l) { return LowerMaxPoolForward(l, true); }

bool MaxPoolGatherBackwardOk(const ir::Graph& g, const ir::Node& n) {
  if (n.args.size() < 3 || !n.args[0].is_ref() || !n.args[1].is_ref()) return false;
  const ir::TensorType& grad = g.type_of(n.args[0].ref());
  const ir::TensorType& indices = g.type_of(n.args[1].ref());
  if (!IsF32OrHalf(n.outputs[0].dtype) || grad.dtype != n.outputs[0].dtype ||
      indices.dtype != DType::kI64 || indices.sizes != grad.sizes)
    return false;
  auto geometry = PoolGeometry(n, 2, n.outputs[0].sizes, grad.sizes);
  if (!geometry) return false;
  const std::array<PoolDim, 2>& dims = geometry->dims;
  const int64_t windows = (dims[0].kernel + dims[0].stride - 1) / dims[0].stride *
                          ((dims[1].kernel + dims[1].stride - 1) / dims[1].stride);
  return windows <= 16;
}

// Gather form (Inductor's): the windows holding input point h along a dim are those starting
// at ph * stride - pad in (h - kernel, h], ph in [0, out). The last one, q = (h + pad) / stride
// (floor), comes from an f32 division of (h + pad + 0.5): at least 0.5 / stride from an integer,
// so the rounding (below 2^-24 relative, h + pad < 2^22) never crosses one. The candidates are
// q, q - 1, ..., ceil(kernel / stride) of them; a candidate's gradient counts when its window
// holds h and its saved index is h * W + w. Sums in f32, in ATen's order of windows.
int LowerMaxPoolGatherBackward(Lowering& l) {
  const ir::Node& n = l.node();
  const ir::ValueRef grad = n.args[0].ref();
  const ir::ValueRef indices = n.args[1].ref();
  const PoolGeometryOf geometry =
      *PoolGeometry(n, 2, l.out().sizes, l.graph().type_of(grad).sizes);
  const std::array<PoolDim, 2>& dims = geometry.dims;
  struct Candidate {
    int index, ok;
  };
  std::vector<Candidate> candidates[2];
  for (int k = 0; k < 2; ++k) {
    const PoolDim& d = dims[k];
    const int padded = l.Shift(l.Coord(geometry.axes[k]), -d.pad);
    const int as_float = l.b().Coerce(padded, DType::kF32);
    const int half = l.b().Binary(PwOp::kAdd, as_float, l.b().Constant(0.5, DType::kF32));
    const int quotient =
        l.b().Binary(PwOp::kDiv, half, l.b().Constant(static_cast<double>(d.stride), DType::kF32));
    const int last = l.b().Coerce(l.b().Unary(PwOp::kFloor, quotient), DType::kI64);
    const int64_t count = (d.kernel + d.stride - 1) / d.stride;
    for (int64_t c = count - 1; c >= 0; --c) {  // ascending window order, as ATen sums
      const int p = l.Shift(last, c);
      const int in_range = l.InRange(p, 0, d.out);
      // The window starting at p * stride - pad ends after h: h + pad < p * stride + kernel.
      const int end = l.b().Binary(PwOp::kAdd, l.b().Binary(PwOp::kMul, p, l.I64(d.stride)),
                                   l.I64(d.kernel));
      const int holds = l.b().Compare(PwOp::kLt, padded, end);
      candidates[k].push_back({p, l.And(in_range, holds)});
    }
  }
  const int row = l.b().Binary(PwOp::kMul, l.Coord(geometry.axes[0]), l.I64(dims[1].in));
  const int self = l.b().Binary(PwOp::kAdd, row, l.Coord(geometry.axes[1]));
  const int zero = l.b().Constant(0, DType::kF32);
  int sum = -1;
  for (const Candidate& ph : candidates[0]) {
    for (const Candidate& pw : candidates[1]) {
      const int ok = l.And(ph.ok, pw.ok);
      const std::vector<int> coords = PoolCoords(l, geometry, ph.index, pw.index);
      const int saved = l.Gather(indices, ok, coords, DType::kI64);
      const int hit = l.And(ok, l.b().Compare(PwOp::kEq, saved, self));
      const int g = l.Gather(grad, hit, coords, DType::kF32);
      const int term = l.b().Where(hit, g, zero);
      sum = sum < 0 ? term : l.b().Binary(PwOp::kAdd, sum, term);
    }
  }
  return l.b().Coerce(sum, l.held());
}

// ---- depthwise convolution (depthwise_conv_kernels.h). tccd::depthwise_conv2d(x, weight,
// bias, kernel_size, padding, flip, channels_last): out[n, h, w, c] = sum over the window's
// (i, j), row-major, of x[n, h + i - ph, w + j - pw, c] * weight[i', j', c] (i' = i, or
// kh - 1 - i with flip; j' likewise), plus bias[c]; x's points outside the map read 0. x is
// [N, H, W, C] with channels_last (the kernel walks C innermost), else [N, C, H, W]; weight is
// [kh, kw, C] (C innermost: one vector per tap), bias [C] or None. The padding is the "same"
// one (k / 2, odd k), so the output has x's sizes and the flipped window is the input gradient
// of the same convolution. Sums in f32, rounded once.
struct DepthwiseGeometry {
  int64_t kh, kw, h_axis, w_axis, c_axis;
  bool flip;
};

std::optional<DepthwiseGeometry> DepthwiseGeometryOf(const ir::Graph& g, const ir::Node& n) {
  if (n.args.size() != 7 || !n.args[0].is_ref() || !n.args[1].is_ref()) return std::nullopt;
  auto kernel = IntListArg(n, 3, "");
  auto padding = IntListArg(n, 4, "");
  const bool* flip = std::get_if<bool>(&n.args[5].v);
  const bool* channels_last = std::get_if<bool>(&n.args[6].v);
  if (!kernel || !padding || kernel->size() != 2 || padding->size() != 2 || !flip || !channels_last)
    return std::nullopt;
  DepthwiseGeometry d{(*kernel)[0], (*kernel)[1], 1, 2, 3, *flip};
  if (!*channels_last) d = {d.kh, d.kw, 2, 3, 1, d.flip};
  for (int k = 0; k < 2; ++k) {
    const int64_t size = (*kernel)[k];
    if (size < 1 || size > 7 || size % 2 == 0 || (*padding)[k] != size / 2) return std::nullopt;
  }
  const ir::TensorType& x = g.type_of(n.args[0].ref());
  const ir::TensorType& w = g.type_of(n.args[1].ref());
  if (x.rank() != 4 || x.sizes != n.outputs[0].sizes || !IsF32OrHalf(x.dtype) ||
      n.outputs[0].dtype != x.dtype || !IsF32OrHalf(w.dtype))
    return std::nullopt;
  const int64_t channels = x.sizes[d.c_axis];
  if (w.sizes != std::vector<int64_t>{d.kh, d.kw, channels}) return std::nullopt;
  if (!n.args[2].is_none()) {
    if (!n.args[2].is_ref()) return std::nullopt;
    const ir::TensorType& b = g.type_of(n.args[2].ref());
    if (b.sizes != std::vector<int64_t>{channels} || !IsF32OrHalf(b.dtype)) return std::nullopt;
  }
  return d;
}

bool DepthwiseConvOk(const ir::Graph& g, const ir::Node& n) {
  return DepthwiseGeometryOf(g, n).has_value();
}

int LowerDepthwiseConv(Lowering& l) {
  const ir::Node& n = l.node();
  const DepthwiseGeometry d = *DepthwiseGeometryOf(l.graph(), n);
  const ir::ValueRef x = n.args[0].ref();
  const ir::ValueRef weight = n.args[1].ref();
  const ir::TensorType& xt = l.graph().type_of(x);
  const int c = l.Coord(d.c_axis);
  int sum = -1;
  for (int64_t i = 0; i < d.kh; ++i) {
    const int h = l.Shift(l.Coord(d.h_axis), d.kh / 2 - i);
    const int h_ok = l.InRange(h, 0, xt.sizes[d.h_axis]);
    for (int64_t j = 0; j < d.kw; ++j) {
      const int w = l.Shift(l.Coord(d.w_axis), d.kw / 2 - j);
      const int w_ok = l.InRange(w, 0, xt.sizes[d.w_axis]);
      std::vector<int> coords;
      for (int64_t k = 0; k < 4; ++k)
        coords.push_back(k == d.h_axis ? h : k == d.w_axis ? w : l.Coord(k));
      // A masked-off gather reads 0 (the zero padding).
      const int v = l.Gather(x, l.And(h_ok, w_ok), coords, DType::kF32);
      const int wi = l.I64(d.flip ? d.kh - 1 - i : i);
      const int wj = l.I64(d.flip ? d.kw - 1 - j : j);
      const int tap = l.Gather(weight, l.True(), {wi, wj, c}, DType::kF32);
      const int term = l.b().Binary(PwOp::kMul, v, tap);
      sum = sum < 0 ? term : l.b().Binary(PwOp::kAdd, sum, term);
    }
  }
  if (!n.args[2].is_none()) {
    const int bias = l.Gather(n.args[2].ref(), l.True(), {c}, DType::kF32);
    sum = l.b().Binary(PwOp::kAdd, sum, bias);
  }
  return l.b().Coerce(sum, l.held());
}

// tccd::depthwise_conv2d_weight_partials(grad, x, kernel_size, padding, rows, channels_last):
// the weight gradient of that convolution in partial sums, f32 [N, H / rows, kh, kw, C]: point
// (n, b, i, j, c) sums grad[n, h, w, c] * x[n, h + i - ph, w + j - pw, c] over the block's
// `rows` map rows h = b * rows + r and every column w (unrolled, row-major; x zero outside the
// map). The pass sums the partials over (n, b). grad and x as the forward's x (channels_last:
// [N, H, W, C], else [N, C, H, W]); on CUDA both gathers are 16-byte vectors along C.
struct WeightPartialsGeometry {
  int64_t kh, kw, rows, h_axis, w_axis, c_axis;
};

std::optional<WeightPartialsGeometry> WeightPartialsGeometryOf(const ir::Graph& g,
                                                               const ir::Node& n) {
  if (n.args.size() != 6 || !n.args[0].is_ref() || !n.args[1].is_ref()) return std::nullopt;
  auto kernel = IntListArg(n, 2, "");
  auto padding = IntListArg(n, 3, "");
  auto rows = IntArg(n, 4, "");
  const bool* channels_last = std::get_if<bool>(&n.args[5].v);
  if (!kernel || !padding || !rows || kernel->size() != 2 || padding->size() != 2 || !channels_last)
    return std::nullopt;
  WeightPartialsGeometry d{(*kernel)[0], (*kernel)[1], *rows, 1, 2, 3};
  if (!*channels_last) d = {d.kh, d.kw, d.rows, 2, 3, 1};
  for (int k = 0; k < 2; ++k) {
    const int64_t size = (*kernel)[k];
    if (size < 1 || size > 7 || size % 2 == 0 || (*padding)[k] != size / 2) return std::nullopt;
  }
  const ir::TensorType& grad = g.type_of(n.args[0].ref());
  const ir::TensorType& x = g.type_of(n.args[1].ref());
  if (grad.rank() != 4 || grad.sizes != x.sizes || !IsF32OrHalf(grad.dtype) ||
      !IsF32OrHalf(x.dtype))
    return std::nullopt;
  const int64_t height = x.sizes[d.h_axis], width = x.sizes[d.w_axis];
  // The unrolled body holds rows * W terms (kMaxWeightPartialTerms; kMaxTemplatePartialTerms
  // for the CUDA templates' partials, whose rows the template loops over).
  if (d.rows < 1 || height % d.rows != 0 || width > kMaxWeightPartialTerms ||
      d.rows * width > kMaxTemplatePartialTerms)
    return std::nullopt;
  const std::vector<int64_t> out = {x.sizes[0], height / d.rows, d.kh, d.kw, x.sizes[d.c_axis]};
  if (n.outputs[0].sizes != out || n.outputs[0].dtype != DType::kF32) return std::nullopt;
  return d;
}

bool WeightPartialsOk(const ir::Graph& g, const ir::Node& n) {
  return WeightPartialsGeometryOf(g, n).has_value();
}

int LowerWeightPartials(Lowering& l) {
  const ir::Node& n = l.node();
  const WeightPartialsGeometry d = *WeightPartialsGeometryOf(l.graph(), n);
  const ir::ValueRef grad = n.args[0].ref();
  const ir::ValueRef x = n.args[1].ref();
  const ir::TensorType& xt = l.graph().type_of(x);
  const int64_t height = xt.sizes[d.h_axis], width = xt.sizes[d.w_axis];
  // Coordinates of the partial: (n, block, i, j, c).
  const int image = l.Coord(0), c = l.Coord(4), i = l.Coord(2), j = l.Coord(3);
  const int first = l.b().Binary(PwOp::kMul, l.Coord(1), l.I64(d.rows));
  // x's row offset i - ph and column offset j - pw, per point.
  const int di = l.Shift(i, d.kh / 2);
  const int dj = l.Shift(j, d.kw / 2);
  auto coords = [&](int h, int w) {
    std::vector<int> out(4);
    out[0] = image;
    out[d.h_axis] = h;
    out[d.w_axis] = w;
    out[d.c_axis] = c;
    return out;
  };
  int sum = -1;
  for (int64_t r = 0; r < d.rows; ++r) {
    const int h = r == 0 ? first : l.b().Binary(PwOp::kAdd, first, l.I64(r));
    const int hx = l.b().Binary(PwOp::kAdd, h, di);
    const int h_ok = l.InRange(hx, 0, height);
    for (int64_t w = 0; w < width; ++w) {
      const int wx = w == 0 ? dj : l.b().Binary(PwOp::kAdd, dj, l.I64(w));
      const int w_ok = l.InRange(wx, 0, width);
      const int g = l.Gather(grad, l.True(), coords(h, l.I64(w)), DType::kF32);
      // A masked-off gather reads 0 (the zero padding).
      const int v = l.Gather(x, l.And(h_ok, w_ok), coords(hx, wx), DType::kF32);
      const int term = l.b().Binary(PwOp::kMul, g, v);
      sum = sum < 0 ? term : l.b().Binary(PwOp::kAdd, sum, term);
    }
  }
  return l.b().Coerce(sum, l.held());
}

struct Entry {
  bool (*ok)(const ir::Graph&, const ir::Node&);
  int (*lower)(Lowering&);
};

const absl::flat_hash_map<std::string, Entry>& Table() {
  static const auto* table = new absl::flat_hash_map<std::string, Entry>{
      {"aten::cat.default", {CatOk, LowerCat}},
      {"aten::constant_pad_nd.default", {PadOk, LowerPad}},
      {"aten::slice_backward.default", {SliceBackwardOk, LowerSliceBackward}},
      {"aten::select_backward.default", {SelectBackwardOk, LowerSelectBackward}},
      {"aten::embedding.default", {EmbeddingOk, LowerEmbedding}},
      {"aten::index_select.default", {IndexSelectOk, LowerIndexSelect}},
      {"aten::nll_loss_backward.default", {NllLossBackwardOk, LowerNllLossBackward}},
      {"aten::slice_scatter.default", {SliceScatterOk, LowerSliceScatter}},
      {"aten::select_scatter.default", {SelectScatterOk, LowerSelectScatter}},
      {"aten::stack.default", {StackOk, LowerStack}},
      {"aten::gather.default", {GatherOk, LowerGatherOp}},
      {"aten::index.Tensor", {IndexTensorOk, LowerIndexTensor}},
      {kMaxPoolValuesTarget, {MaxPoolForwardOk, LowerMaxPoolValues}},
      {kMaxPoolOffsetsTarget, {MaxPoolForwardOk, LowerMaxPoolOffsets}},
      {kMaxPoolGatherBackwardTarget, {MaxPoolGatherBackwardOk, LowerMaxPoolGatherBackward}},
      {kDepthwiseConvTarget, {DepthwiseConvOk, LowerDepthwiseConv}},
      {kDepthwiseWeightPartialsTarget, {WeightPartialsOk, LowerWeightPartials}},
  };
  return *table;
}

}  // namespace

bool IsIndexOp(const ir::Graph& graph, const ir::Node& node) {
  auto it = Table().find(node.target);
  if (it == Table().end() || node.outputs.size() != 1 || ir::TouchesExternOnlyDType(graph, node))
    return false;
  const ir::TensorType& out = node.outputs[0];
  if (!IsDenseNonOverlapping(out)) return false;
  for (const ir::ValueRef& r : TensorRefs(node))
    if (graph.type_of(r).device != out.device) return false;
  for (const ir::NamedArg& kw : node.kwargs)
    if (kw.value.is_ref()) return false;
  return it->second.ok(graph, node);
}

bool NeedsCoordinates(const ir::Graph& graph, const ir::Node& node) {
  return IsIndexOp(graph, node) || node.target == "tccd::philox_uniform.default" ||
         IsScatterOp(graph, node);
}

std::vector<ir::ValueRef> GatheredRefs(const ir::Node& node) {
  if (!Table().contains(node.target)) return {};
  std::vector<ir::ValueRef> refs = TensorRefs(node);
  // nll_loss_backward reads only its target, gradient and total weight; `self` (its shape
  // only) stays an ordinary operand of the iteration space's shape.
  if (node.target == "aten::nll_loss_backward.default" && node.args.size() > 1 &&
      node.args[1].is_ref())
    std::erase(refs, node.args[1].ref());
  return refs;
}

std::vector<std::string> IndexOpTargets() {
  std::vector<std::string> targets;
  for (const auto& [target, entry] : Table()) targets.push_back(target);
  return targets;
}

absl::StatusOr<int> LowerIndexOp(const ir::Graph& graph, const ir::Node& node,
                                 const std::function<int(const ir::ValueRef&)>& input_of,
                                 PwBuilder& builder) {
  auto it = Table().find(node.target);
  RET_CHECK(it != Table().end());
  Lowering l(graph, node, input_of, builder);
  return it->second.lower(l);
}

}  // namespace tccd::codegen
