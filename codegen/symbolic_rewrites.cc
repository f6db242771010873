// RewriteSymbolicGraph; see symbolic_rewrites.h.
#include "codegen/symbolic_rewrites.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/ir/sym_expr.h"
#include "base/status_macros.h"

namespace tccd::codegen {
namespace {

constexpr char kLayerNormBackward[] = "aten::native_layer_norm_backward.default";
constexpr char kEmbeddingDenseBackward[] = "aten::embedding_dense_backward.default";
// scatter_ops.h's kEmbeddingScatterAddTarget (codegen/passes is not this file's dependency).
constexpr char kEmbeddingScatterAdd[] = "tccd::embedding_scatter_add.default";
constexpr int kMaskIndex = 7;

bool SameDim(const v1::Dim& a, const v1::Dim& b) {
  if (a.kind_case() != b.kind_case()) return false;
  return a.kind_case() == v1::Dim::kExpr ? a.expr() == b.expr() : a.value() == b.value();
}

v1::Dim ValueDim(int64_t v) {
  v1::Dim d;
  d.set_value(v);
  return d;
}

// The product of `dims` as a canonical Dim: a value when every factor is one, else the canonical
// text of the product (a constant when it folds to one).
absl::StatusOr<v1::Dim> Product(const std::vector<v1::Dim>& dims) {
  int64_t value = 1;
  std::string text;  // the symbolic factors, then the static ones' product unless it is 1
  for (const v1::Dim& d : dims) {
    if (d.kind_case() == v1::Dim::kValue) value *= d.value();
    if (d.kind_case() == v1::Dim::kExpr)
      absl::StrAppend(&text, text.empty() ? "" : "*", "(", d.expr(), ")");
  }
  if (text.empty()) return ValueDim(value);
  if (value != 1) absl::StrAppend(&text, "*", value);
  ASSIGN_OR_RETURN(ir::SymExpr e, ir::ParseSymExpr(text));
  if (e.IsConst()) return ValueDim(e.value);
  v1::Dim out;
  out.set_expr(ir::PrintSymExpr(e));
  return out;
}

// A contiguous meta of `sizes` (row-major strides as products of the later sizes).
absl::StatusOr<v1::TensorMeta> DenseMeta(const std::vector<v1::Dim>& sizes, v1::DType dtype,
                                         const v1::Device& device) {
  v1::TensorMeta m;
  m.set_dtype(dtype);
  *m.mutable_device() = device;
  *m.mutable_storage_offset() = ValueDim(0);
  for (const v1::Dim& d : sizes) *m.add_sizes() = d;
  std::vector<v1::Dim> strides(sizes.size());
  for (int d = static_cast<int>(sizes.size()) - 1; d >= 0; --d) {
    ASSIGN_OR_RETURN(strides[d], Product(std::vector<v1::Dim>(sizes.begin() + d + 1, sizes.end())));
  }
  for (v1::Dim& s : strides) *m.add_strides() = std::move(s);
  return m;
}

// A 0-element placeholder like the client's for an output the op returns as None (serialize.py
// _absent_output).
v1::TensorMeta Absent(const v1::TensorMeta& like) {
  v1::TensorMeta m;
  m.set_dtype(like.dtype());
  *m.mutable_device() = like.device();
  *m.add_sizes() = ValueDim(0);
  *m.add_strides() = ValueDim(1);
  *m.mutable_storage_offset() = ValueDim(0);
  return m;
}

v1::Value RefValue(const v1::ValueRef& r) {
  v1::Value v;
  *v.mutable_ref() = r;
  return v;
}
v1::Value IntValue(int64_t i) {
  v1::Value v;
  v.set_int_value(i);
  return v;
}
v1::Value IntList(const std::vector<int64_t>& items) {
  v1::Value v;
  for (int64_t i : items) v.mutable_list()->add_items()->set_int_value(i);
  return v;
}

// The graph being rebuilt: the input graph's nodes appended one by one (their refs remapped to
// the new node ids), or a rewrite's nodes in place of one.
class Rebuild {
 public:
  explicit Rebuild(const v1::Graph& in) : in_(in), out_(in) {
    out_.clear_nodes();
    out_.clear_outputs();
  }

  // `v` with its refs to the input graph's nodes remapped to the new graph's.
  v1::Value Remapped(const v1::Value& v) const {
    v1::Value out = v;
    Remap(out);
    return out;
  }
  v1::Node Remapped(const v1::Node& node) const {
    v1::Node out = node;
    for (v1::Value& a : *out.mutable_args()) Remap(a);
    for (v1::NamedValue& kv : *out.mutable_kwargs()) Remap(*kv.mutable_value());
    return out;
  }

  const v1::TensorMeta& MetaOf(const v1::ValueRef& r) const {
    return r.node() < 0 ? out_.inputs(-(r.node() + 1)) : out_.nodes(r.node()).outputs(r.output());
  }
  // The new graph's node that defines `r`, or nullptr for a graph input.
  const v1::Node* ProducerOf(const v1::ValueRef& r) const {
    return r.node() < 0 ? nullptr : &out_.nodes(r.node());
  }

  // Appends `node` (refs already in the new graph's ids); returns the ref of its output 0.
  v1::ValueRef Append(v1::Node node) {
    v1::ValueRef r;
    r.set_node(out_.nodes_size());
    r.set_output(0);
    *out_.add_nodes() = std::move(node);
    return r;
  }

  // The new refs of input node `id`'s outputs.
  void Define(int id, std::vector<v1::ValueRef> outputs) {
    if (static_cast<int>(map_.size()) <= id) map_.resize(id + 1);
    map_[id] = std::move(outputs);
  }

  v1::Graph Finish() && {
    for (const v1::Value& v : in_.outputs()) *out_.add_outputs() = Remapped(v);
    return std::move(out_);
  }

 private:
  void Remap(v1::Value& v) const {
    if (v.kind_case() == v1::Value::kRef) {
      const v1::ValueRef& r = v.ref();
      if (r.node() >= 0) *v.mutable_ref() = map_[r.node()][r.output()];
    } else if (v.kind_case() == v1::Value::kList) {
      for (v1::Value& item : *v.mutable_list()->mutable_items()) Remap(item);
    }
  }

  const v1::Graph& in_;
  v1::Graph out_;
  std::vector<std::vector<v1::ValueRef>> map_;  // input node id -> its outputs' new refs
};

// A rewrite: the new refs of `node`'s outputs after appending its replacement to `b`, or
// nullopt (nothing appended) to keep the node. `node` has its refs remapped already.
using Rewrite = std::optional<std::vector<v1::ValueRef>>;

// --- layer norm backward --------------------------------------------------------------------

bool MaskBits(const v1::Node& node, bool bits[3]) {
  if (node.args_size() <= kMaskIndex) return false;
  const v1::Value& mask = node.args(kMaskIndex);
  if (mask.kind_case() != v1::Value::kList || mask.list().items_size() != 3) return false;
  for (int i = 0; i < 3; ++i) {
    if (mask.list().items(i).kind_case() != v1::Value::kBoolValue) return false;
    bits[i] = mask.list().items(i).bool_value();
  }
  return true;
}

void SetMask(v1::Node& node, bool a, bool b, bool c) {
  v1::ValueList& items = *node.mutable_args(kMaskIndex)->mutable_list();
  items.mutable_items(0)->set_bool_value(a);
  items.mutable_items(1)->set_bool_value(b);
  items.mutable_items(2)->set_bool_value(c);
}

Rewrite SplitLayerNormBackward(Rebuild& b, const v1::Node& node) {
  bool mask[3];
  if (node.target() != kLayerNormBackward || node.outputs_size() != 3 || node.kwargs_size() != 0 ||
      !MaskBits(node, mask) || !mask[0] || !(mask[1] || mask[2]))
    return std::nullopt;
  // Static normalized dims (grad_input's trailing dims, as many as the parameter gradient has):
  // static rows for the row half and static columns for the column half, what the symbolic
  // row and column kernels need (symbolic_kernels.h). Otherwise one ATen call beats two.
  const v1::TensorMeta& dx = node.outputs(0);
  const v1::TensorMeta& param = node.outputs(mask[1] ? 1 : 2);
  if (param.sizes_size() > dx.sizes_size()) return std::nullopt;
  for (int d = dx.sizes_size() - param.sizes_size(); d < dx.sizes_size(); ++d)
    if (dx.sizes(d).kind_case() != v1::Dim::kValue) return std::nullopt;
  v1::Node rows = node;
  SetMask(rows, true, false, false);
  *rows.mutable_outputs(1) = Absent(node.outputs(1));
  *rows.mutable_outputs(2) = Absent(node.outputs(2));
  v1::Node params = node;
  SetMask(params, false, mask[1], mask[2]);
  *params.mutable_outputs(0) = Absent(node.outputs(0));
  const v1::ValueRef r = b.Append(std::move(rows));
  v1::ValueRef p = b.Append(std::move(params));
  v1::ValueRef p1 = p, p2 = p;
  p1.set_output(1);
  p2.set_output(2);
  return std::vector<v1::ValueRef>{r, p1, p2};
}

// --- embedding backward ---------------------------------------------------------------------

bool IsFloat(v1::DType t) { return t == v1::FLOAT32 || t == v1::BFLOAT16 || t == v1::FLOAT16; }

// The f32 accumulator `acc` as the gradient `result` (its dtype and meta): itself for f32
// gradients, else one _to_copy (the rewrites accumulate 16-bit gradients in f32, as ATen does).
v1::ValueRef NarrowedTo(Rebuild& b, const v1::ValueRef& acc, const v1::TensorMeta& result) {
  if (result.dtype() == v1::FLOAT32) return acc;
  v1::Node narrow;
  narrow.set_target("aten::_to_copy.default");
  *narrow.add_args() = RefValue(acc);
  v1::NamedValue* dtype = narrow.add_kwargs();
  dtype->set_name("dtype");
  dtype->mutable_value()->set_dtype(result.dtype());
  *narrow.add_outputs() = result;
  return b.Append(std::move(narrow));
}

// The position embedding's gradient arrives summed over the batch: for pos = arange(T) broadcast
// over [B, T, E], AOTAutograd's backward is
//   s = sum(G, [0], keepdim=True)    [1, T, E]   an extern ATen step with run-time kept dims
//   v = view(s, [T, E])
//   embedding_dense_backward(v, pos, ...)
// Summing G's rows into the table directly is the same sum: the gradient becomes G itself and
// the indices expand(pos, [B, T]) (a view, stride 0 along B), so the sum and its view are never
// run ("symbolic-embedding-sum-fold"; 40 us of host time per backward call for the dynamic
// bench's sum, H200 profile). The f32 accumulation then adds B * T rows instead of T rounded
// 16-bit sums: the same values up to rounding (more exact: no 16-bit intermediate).
// When the fold applies, `grad` and `indices` become the new refs, the expand is appended and
// the bypassed sum (and view) go into `bypassed` for DropBypassed; else nothing changes.
// `grad` and `indices` are the embedding gradient's (remapped) arguments, checked by the caller
// (grad [indices..., E] of the result's dtype).
void FoldLeadingSum(Rebuild& b, v1::ValueRef* grad, v1::ValueRef* indices,
                    std::vector<int>* bypassed) {
  const v1::TensorMeta grad_meta = b.MetaOf(*grad);
  const v1::Node* view = b.ProducerOf(*grad);
  if (view == nullptr || view->outputs_size() != 1) return;
  const v1::Node* sum = view;
  int view_node = -1;
  if (view->target() == "aten::view.default" || view->target() == "aten::_unsafe_view.default" ||
      view->target() == "aten::reshape.default") {
    if (view->args_size() != 2 || view->args(0).kind_case() != v1::Value::kRef) return;
    view_node = grad->node();
    sum = b.ProducerOf(view->args(0).ref());
    if (sum == nullptr) return;
  }
  if (sum->target() != "aten::sum.dim_IntList" || sum->kwargs_size() != 0 || sum->args_size() < 2 ||
      sum->args_size() > 3 || sum->outputs_size() != 1 ||
      sum->args(0).kind_case() != v1::Value::kRef || sum->args(1).kind_case() != v1::Value::kList ||
      (sum->args_size() == 3 && sum->args(2).kind_case() != v1::Value::kBoolValue))
    return;
  const bool keepdim = sum->args_size() == 3 && sum->args(2).bool_value();
  // A keepdim sum reaches the gradient only through the view that drops its 1s; without keepdim
  // the sum is the gradient itself.
  if (keepdim != (view_node >= 0)) return;
  const v1::ValueRef g = sum->args(0).ref();
  const v1::TensorMeta& g_meta = b.MetaOf(g);
  const int rank = g_meta.sizes_size(), lead = rank - grad_meta.sizes_size();
  if (lead < 1 || g_meta.dtype() != grad_meta.dtype() || sum->args(1).list().items_size() != lead)
    return;
  // The reduced dims are exactly the leading `lead` ones, each once.
  std::vector<bool> reduced(rank, false);
  for (const v1::Value& item : sum->args(1).list().items()) {
    if (item.kind_case() != v1::Value::kIntValue) return;
    int64_t d = item.int_value();
    if (d < 0) d += rank;
    if (d < 0 || d >= lead || reduced[d]) return;
    reduced[d] = true;
  }
  for (int j = 0; j < grad_meta.sizes_size(); ++j)
    if (!SameDim(g_meta.sizes(lead + j), grad_meta.sizes(j))) return;
  const v1::TensorMeta& sum_meta = sum->outputs(0);
  if (keepdim) {
    if (sum_meta.sizes_size() != rank) return;
    for (int d = 0; d < lead; ++d)
      if (sum_meta.sizes(d).kind_case() != v1::Dim::kValue || sum_meta.sizes(d).value() != 1)
        return;
  }
  // expand(indices, [lead sizes..., -1...]): the lead sizes as ints or the symbols' expressions.
  const v1::TensorMeta idx = b.MetaOf(*indices);
  v1::Node expand;
  expand.set_target("aten::expand.default");
  *expand.add_args() = RefValue(*indices);
  v1::ValueList& sizes = *expand.add_args()->mutable_list();
  v1::TensorMeta& out = *expand.add_outputs();
  out.set_dtype(idx.dtype());
  *out.mutable_device() = idx.device();
  *out.mutable_storage_offset() = idx.has_storage_offset() ? idx.storage_offset() : ValueDim(0);
  for (int d = 0; d < lead; ++d) {
    const v1::Dim& size = g_meta.sizes(d);
    if (size.kind_case() == v1::Dim::kExpr)
      sizes.add_items()->set_sym_expr(size.expr());
    else
      sizes.add_items()->set_int_value(size.value());
    *out.add_sizes() = size;
    *out.add_strides() = ValueDim(0);
  }
  for (int d = 0; d < idx.sizes_size(); ++d) {
    sizes.add_items()->set_int_value(-1);
    *out.add_sizes() = idx.sizes(d);
    *out.add_strides() = idx.strides(d);
  }
  if (view_node >= 0) bypassed->push_back(view_node);
  bypassed->push_back(view_node >= 0 ? view->args(0).ref().node() : grad->node());
  *indices = b.Append(std::move(expand));
  *grad = g;
}

absl::StatusOr<Rewrite> EmbeddingBackwardAsIndexAdd(Rebuild& b, const v1::Node& node,
                                                    std::vector<int>* bypassed) {
  if (node.target() != kEmbeddingDenseBackward || node.args_size() != 5 ||
      node.kwargs_size() != 0 || node.outputs_size() != 1 ||
      node.args(0).kind_case() != v1::Value::kRef || node.args(1).kind_case() != v1::Value::kRef ||
      node.args(2).kind_case() != v1::Value::kIntValue ||
      node.args(3).kind_case() != v1::Value::kIntValue || node.args(3).int_value() != -1 ||
      node.args(4).kind_case() != v1::Value::kBoolValue || node.args(4).bool_value())
    return std::nullopt;
  const v1::TensorMeta& result = node.outputs(0);
  v1::ValueRef grad_ref = node.args(0).ref(), indices_ref = node.args(1).ref();
  const int64_t num_weights = node.args(2).int_value();
  {
    // [V, E] dense and static, grad [..., E] of the result's dtype, indices [...] of grad's
    // leading dims (what ATen checks; a graph that breaks it keeps the op, which reports it).
    const v1::TensorMeta& grad = b.MetaOf(grad_ref);
    const v1::TensorMeta& indices = b.MetaOf(indices_ref);
    if (result.sizes_size() != 2 || result.sizes(0).kind_case() != v1::Dim::kValue ||
        result.sizes(1).kind_case() != v1::Dim::kValue || result.sizes(0).value() != num_weights ||
        !IsFloat(result.dtype()) || grad.dtype() != result.dtype() ||
        indices.dtype() != v1::INT64 || indices.sizes_size() < 1 ||
        grad.sizes_size() != indices.sizes_size() + 1 ||
        !SameDim(grad.sizes(grad.sizes_size() - 1), result.sizes(1)))
      return std::nullopt;
    for (int d = 0; d < indices.sizes_size(); ++d)
      if (!SameDim(grad.sizes(d), indices.sizes(d))) return std::nullopt;
    ASSIGN_OR_RETURN(v1::TensorMeta dense_result, DenseMeta({result.sizes(0), result.sizes(1)},
                                                            result.dtype(), result.device()));
    for (int d = 0; d < 2; ++d)
      if (!SameDim(result.strides(d), dense_result.strides(d))) return std::nullopt;
  }
  if (bypassed != nullptr) FoldLeadingSum(b, &grad_ref, &indices_ref, bypassed);
  const v1::TensorMeta grad = b.MetaOf(grad_ref);
  const v1::TensorMeta indices = b.MetaOf(indices_ref);
  ASSIGN_OR_RETURN(v1::TensorMeta dense_result,
                   DenseMeta({result.sizes(0), result.sizes(1)}, result.dtype(), result.device()));
  const int64_t e = result.sizes(1).value();
  ASSIGN_OR_RETURN(v1::Dim n, Product(std::vector<v1::Dim>(indices.sizes().begin(),
                                                           indices.sizes().end())));

  // f32(grad), contiguous: a kernel where grad's producer is one (and the layout ATen's
  // _to_copy gives where it stays an extern step).
  v1::Node cast;
  cast.set_target("aten::_to_copy.default");
  *cast.add_args() = RefValue(grad_ref);
  {
    v1::NamedValue* dtype = cast.add_kwargs();
    dtype->set_name("dtype");
    dtype->mutable_value()->set_dtype(v1::FLOAT32);
    v1::NamedValue* format = cast.add_kwargs();
    format->set_name("memory_format");
    format->mutable_value()->set_memory_format(0);
  }
  ASSIGN_OR_RETURN(*cast.add_outputs(),
                   DenseMeta(std::vector<v1::Dim>(grad.sizes().begin(), grad.sizes().end()),
                             v1::FLOAT32, grad.device()));
  const v1::ValueRef grad32 = b.Append(std::move(cast));

  v1::Node flat;
  flat.set_target("aten::view.default");
  *flat.add_args() = RefValue(grad32);
  *flat.add_args() = IntList({-1, e});
  ASSIGN_OR_RETURN(*flat.add_outputs(), DenseMeta({n, ValueDim(e)}, v1::FLOAT32, grad.device()));
  const v1::ValueRef src = b.Append(std::move(flat));

  // The indices as an [N, 1] column (unsqueeze, a view, for 1-D indices; reshape for others,
  // which may be any layout: the dispatcher's result, a view or a copy, whose strides the plan
  // runtimes read, not the meta's), expanded to [N, E] (stride 0 along E): scatter_add's index
  // has src's shape.
  v1::ValueRef column;
  if (indices.sizes_size() == 1) {
    v1::Node unsqueeze;
    unsqueeze.set_target("aten::unsqueeze.default");
    *unsqueeze.add_args() = RefValue(indices_ref);
    *unsqueeze.add_args() = IntValue(1);
    v1::TensorMeta& m = *unsqueeze.add_outputs();
    m = indices;
    *m.add_sizes() = ValueDim(1);
    *m.add_strides() = ValueDim(1);  // torch's stride for a new innermost dim
    column = b.Append(std::move(unsqueeze));
  } else {
    v1::Node reshape;
    reshape.set_target("aten::reshape.default");
    *reshape.add_args() = RefValue(indices_ref);
    *reshape.add_args() = IntList({-1, 1});
    ASSIGN_OR_RETURN(*reshape.add_outputs(),
                     DenseMeta({n, ValueDim(1)}, indices.dtype(), indices.device()));
    column = b.Append(std::move(reshape));
  }
  v1::Node expand;
  expand.set_target("aten::expand.default");
  *expand.add_args() = RefValue(column);
  *expand.add_args() = IntList({-1, e});
  {
    const v1::TensorMeta& c = b.MetaOf(column);
    v1::TensorMeta& m = *expand.add_outputs();
    m = c;
    *m.mutable_sizes(1) = ValueDim(e);
    *m.mutable_strides(1) = ValueDim(0);
  }
  const v1::ValueRef index = b.Append(std::move(expand));

  v1::Node zeros;
  zeros.set_target("aten::new_zeros.default");
  *zeros.add_args() = RefValue(src);
  *zeros.add_args() = IntList({num_weights, e});
  ASSIGN_OR_RETURN(*zeros.add_outputs(),
                   DenseMeta({result.sizes(0), result.sizes(1)}, v1::FLOAT32, result.device()));
  const v1::TensorMeta acc_meta = zeros.outputs(0);
  const v1::ValueRef zero = b.Append(std::move(zeros));

  // scatter_add, not index_add: the same atomics on CUDA, and no Scalar argument (index_add's
  // alpha), which the native runtime's stable dispatcher ABI cannot carry.
  v1::Node add;
  add.set_target("aten::scatter_add.default");
  *add.add_args() = RefValue(zero);
  *add.add_args() = IntValue(0);
  *add.add_args() = RefValue(index);
  *add.add_args() = RefValue(src);
  *add.add_outputs() = acc_meta;
  return Rewrite(std::vector<v1::ValueRef>{NarrowedTo(b, b.Append(std::move(add)), dense_result)});
}

// embedding_dense_backward as scatter_ops.h's op, which symbolic_kernels.h makes a scatter
// kernel with run-time sizes (CUDA; SymbolicRewriteOptions::embedding_backward_kernel):
//   acc = tccd::embedding_scatter_add(grad, indices, V, padding_idx)   f32 [V, E], one kernel
//   gw  = to_copy(acc, dtype)                                          16-bit grads only
// The conditions are scatter_ops.h's IsScatterOp on the symbolic graph (V and E static, grad
// [indices..., E]), so the kernel check accepts every node made here.
absl::StatusOr<Rewrite> EmbeddingBackwardAsScatterKernel(Rebuild& b, const v1::Node& node,
                                                         std::vector<int>* bypassed) {
  if (node.target() != kEmbeddingDenseBackward || node.args_size() != 5 ||
      node.kwargs_size() != 0 || node.outputs_size() != 1 ||
      node.args(0).kind_case() != v1::Value::kRef || node.args(1).kind_case() != v1::Value::kRef ||
      node.args(2).kind_case() != v1::Value::kIntValue ||
      node.args(3).kind_case() != v1::Value::kIntValue ||
      node.args(4).kind_case() != v1::Value::kBoolValue || node.args(4).bool_value())
    return std::nullopt;
  const v1::TensorMeta& result = node.outputs(0);
  const v1::TensorMeta& grad = b.MetaOf(node.args(0).ref());
  const v1::TensorMeta& indices = b.MetaOf(node.args(1).ref());
  const int64_t num_weights = node.args(2).int_value();
  if (result.sizes_size() != 2 || result.sizes(0).kind_case() != v1::Dim::kValue ||
      result.sizes(1).kind_case() != v1::Dim::kValue || result.sizes(0).value() != num_weights ||
      num_weights <= 0 || result.sizes(1).value() <= 0 || !IsFloat(result.dtype()) ||
      grad.dtype() != result.dtype() ||
      (indices.dtype() != v1::INT64 && indices.dtype() != v1::INT32) || indices.sizes_size() < 1 ||
      grad.sizes_size() != indices.sizes_size() + 1 ||
      !SameDim(grad.sizes(grad.sizes_size() - 1), result.sizes(1)) ||
      result.device().type() != v1::CUDA || grad.device().type() != v1::CUDA ||
      indices.device().type() != v1::CUDA)
    return std::nullopt;
  for (int d = 0; d < indices.sizes_size(); ++d)
    if (!SameDim(grad.sizes(d), indices.sizes(d))) return std::nullopt;
  auto dense = DenseMeta({result.sizes(0), result.sizes(1)}, v1::FLOAT32, result.device());
  if (!dense.ok()) return std::nullopt;
  v1::ValueRef grad_ref = node.args(0).ref(), indices_ref = node.args(1).ref();
  // The expanded indices keep grad [indices..., E] (what IsScatterOp checks).
  if (bypassed != nullptr) FoldLeadingSum(b, &grad_ref, &indices_ref, bypassed);
  v1::Node scatter;
  scatter.set_target(kEmbeddingScatterAdd);
  *scatter.add_args() = RefValue(grad_ref);
  *scatter.add_args() = RefValue(indices_ref);
  for (int a = 2; a < 4; ++a) *scatter.add_args() = node.args(a);
  *scatter.add_outputs() = *dense;
  return Rewrite(std::vector<v1::ValueRef>{NarrowedTo(b, b.Append(std::move(scatter)), result)});
}

// --- embeddings at their reader's shape ------------------------------------------------------

void CountRefs(const v1::Value& v, int delta, std::vector<int>& uses);

// Per node: the one node that reads it, when that is its only use (no graph output, one
// argument slot) and a binary pointwise op that broadcasts (add, sub, mul of two tensors) whose
// value a layer norm normalises (its input 0: the row kernel the gather is to join); -1
// otherwise. Where no norm reads the sum (GPT-2's dropout between them), the gather at the
// reader's shape would join no row kernel and only gather B times the rows.
std::vector<int> BroadcastingReaders(const v1::Graph& g) {
  std::vector<int> uses(g.nodes_size(), 0), reader(g.nodes_size(), -1);
  std::vector<bool> normalised(g.nodes_size(), false);
  for (const v1::Node& node : g.nodes())
    if (node.target() == "aten::native_layer_norm.default" && node.args_size() > 0 &&
        node.args(0).kind_case() == v1::Value::kRef && node.args(0).ref().node() >= 0)
      normalised[node.args(0).ref().node()] = true;
  for (int id = 0; id < g.nodes_size(); ++id) {
    const v1::Node& node = g.nodes(id);
    for (const v1::Value& a : node.args()) CountRefs(a, 1, uses);
    for (const v1::NamedValue& kv : node.kwargs()) CountRefs(kv.value(), 1, uses);
    const std::string& t = node.target();
    if ((t != "aten::add.Tensor" && t != "aten::sub.Tensor" && t != "aten::mul.Tensor") ||
        node.args_size() != 2 || node.kwargs_size() != 0 || node.outputs_size() != 1 ||
        !normalised[id])
      continue;
    for (const v1::Value& a : node.args())
      if (a.kind_case() == v1::Value::kRef && a.ref().node() >= 0) reader[a.ref().node()] = id;
  }
  for (const v1::Value& v : g.outputs()) CountRefs(v, 2, uses);
  for (int id = 0; id < g.nodes_size(); ++id)
    if (uses[id] != 1) reader[id] = -1;
  return reader;
}

// embedding(table, ids) -> [ids..., E], read only by a pointwise op `reader` that broadcasts it
// to [lead..., ids..., E] and whose value a layer norm reads (the position embedding, [T, E],
// added to the token embedding at
// [B, T, E]), becomes embedding(table, expand(ids, [lead..., ids...])) at the reader's shape:
// the ids grow (a view, stride 0 along the new and broadcast dims), E stays. Same values; the
// gather then has the reader's iteration space, so it joins the reader's kernel, and with row
// gathers the first norm's (SymbolicKernelOptions::row_gathers), as the static pipeline's
// embeddings-to-reader-shape does (index_ops_to_reader_shape.h; that one keeps the rank). Every
// size is the reader's, an expression of the graph's symbols.
absl::StatusOr<Rewrite> EmbeddingToReaderShape(Rebuild& b, const v1::Node& node,
                                               const v1::Node* reader) {
  if (reader == nullptr || node.target() != "aten::embedding.default" || node.args_size() < 2 ||
      node.outputs_size() != 1 || node.args(1).kind_case() != v1::Value::kRef)
    return std::nullopt;
  const v1::TensorMeta& out = node.outputs(0);
  const v1::TensorMeta& shape = reader->outputs(0);
  const v1::TensorMeta idx = b.MetaOf(node.args(1).ref());
  const int rank = shape.sizes_size(), n = out.sizes_size(), lead = rank - n;
  if (n < 1 || lead < 0 || idx.sizes_size() != n - 1 || idx.strides_size() != n - 1 ||
      !SameDim(out.sizes(n - 1), shape.sizes(rank - 1)))
    return std::nullopt;
  // Something to grow, and every dim of the ids the reader's or a static 1.
  bool grows = lead > 0;
  for (int j = 0; j < n - 1; ++j) {
    if (SameDim(idx.sizes(j), shape.sizes(lead + j))) continue;
    if (idx.sizes(j).kind_case() != v1::Dim::kValue || idx.sizes(j).value() != 1)
      return std::nullopt;
    grows = true;
  }
  if (!grows) return std::nullopt;
  v1::Node expand;
  expand.set_target("aten::expand.default");
  *expand.add_args() = RefValue(node.args(1).ref());
  v1::ValueList& sizes = *expand.add_args()->mutable_list();
  v1::TensorMeta& e = *expand.add_outputs();
  e.set_dtype(idx.dtype());
  *e.mutable_device() = idx.device();
  *e.mutable_storage_offset() = idx.has_storage_offset() ? idx.storage_offset() : ValueDim(0);
  for (int d = 0; d < rank - 1; ++d) {
    const v1::Dim& size = shape.sizes(d);
    const int j = d - lead;  // the ids' dim, when >= 0
    const bool same = j >= 0 && SameDim(idx.sizes(j), size);
    if (same) {
      sizes.add_items()->set_int_value(-1);
    } else if (size.kind_case() == v1::Dim::kExpr) {
      sizes.add_items()->set_sym_expr(size.expr());
    } else {
      sizes.add_items()->set_int_value(size.value());
    }
    *e.add_sizes() = size;
    *e.add_strides() = same ? idx.strides(j) : ValueDim(0);
  }
  std::vector<v1::Dim> grown(shape.sizes().begin(), shape.sizes().end());
  auto dense = DenseMeta(grown, out.dtype(), out.device());
  if (!dense.ok()) return std::nullopt;
  v1::Node gathered = node;
  *gathered.mutable_args(1) = RefValue(b.Append(std::move(expand)));
  *gathered.mutable_outputs(0) = *std::move(dense);
  return Rewrite(std::vector<v1::ValueRef>{b.Append(std::move(gathered))});
}

// --- split into slices ----------------------------------------------------------------------

// split.Tensor(x, size, dim) along a static dim: one slice.Tensor per part, each with the
// part's meta from the graph (a view the plan runtimes make from the meta, and the view chain
// fold absorbs, where split is a dispatcher call returning a list: 24 us of host time per call
// of the bench's forward, H200).
Rewrite SplitAsSlices(Rebuild& b, const v1::Node& node) {
  if (node.target() != "aten::split.Tensor" || node.kwargs_size() != 0 || node.args_size() < 2 ||
      node.args_size() > 3 || node.args(0).kind_case() != v1::Value::kRef ||
      node.args(1).kind_case() != v1::Value::kIntValue || node.args(1).int_value() <= 0 ||
      (node.args_size() == 3 && node.args(2).kind_case() != v1::Value::kIntValue))
    return std::nullopt;
  const v1::TensorMeta& x = b.MetaOf(node.args(0).ref());
  const int rank = x.sizes_size();
  int64_t dim = node.args_size() == 3 ? node.args(2).int_value() : 0;
  if (dim < 0) dim += rank;
  if (dim < 0 || dim >= rank || x.sizes(dim).kind_case() != v1::Dim::kValue) return std::nullopt;
  const int64_t length = x.sizes(dim).value(), size = node.args(1).int_value();
  const int64_t parts = length == 0 ? 1 : (length + size - 1) / size;
  if (node.outputs_size() != parts) return std::nullopt;
  std::vector<v1::ValueRef> outputs;
  for (int64_t k = 0; k < parts; ++k) {
    const v1::TensorMeta& part = node.outputs(static_cast<int>(k));
    const int64_t start = std::min(k * size, length), end = std::min((k + 1) * size, length);
    if (part.sizes_size() != rank || part.sizes(dim).kind_case() != v1::Dim::kValue ||
        part.sizes(dim).value() != end - start)
      return std::nullopt;
  }
  for (int64_t k = 0; k < parts; ++k) {
    v1::Node slice;
    slice.set_target("aten::slice.Tensor");
    *slice.add_args() = node.args(0);
    *slice.add_args() = IntValue(dim);
    *slice.add_args() = IntValue(std::min(k * size, length));
    *slice.add_args() = IntValue(std::min((k + 1) * size, length));
    *slice.add_args() = IntValue(1);
    *slice.add_outputs() = node.outputs(static_cast<int>(k));
    outputs.push_back(b.Append(std::move(slice)));
  }
  return outputs;
}

// --- double transposes ---------------------------------------------------------------------

// t(t(x)) is x itself (sizes, strides and offset; any layout, any rank t takes): AOTAutograd's
// backward reads every linear weight as t(t(W)) for its input-gradient matmul (four pairs, eight
// extern view steps and their releases per call in the dynamic bench's backward; the view-chain
// fold, symbolic_views.h, takes chains over kernel and gemm outputs only). The outer t's readers
// read x; the inner t is dropped when nothing else reads it. Not for a graph output (an output
// that is an input would alias it). Returns the new ref, or nullopt.
Rewrite DoubleTranspose(Rebuild& b, const v1::Node& node, bool is_graph_output,
                        std::vector<int>* bypassed) {
  if (is_graph_output || node.target() != "aten::t.default" || node.args_size() != 1 ||
      node.kwargs_size() != 0 || node.outputs_size() != 1 ||
      node.args(0).kind_case() != v1::Value::kRef)
    return std::nullopt;
  const v1::Node* inner = b.ProducerOf(node.args(0).ref());
  if (inner == nullptr || inner->target() != "aten::t.default" || inner->args_size() != 1 ||
      inner->kwargs_size() != 0 || inner->args(0).kind_case() != v1::Value::kRef)
    return std::nullopt;
  const v1::ValueRef x = inner->args(0).ref();
  // The metas agree (they must; a graph whose metas say otherwise keeps its views).
  const v1::TensorMeta& mx = b.MetaOf(x);
  const v1::TensorMeta& mo = node.outputs(0);
  if (mx.sizes_size() != mo.sizes_size() || mx.strides_size() != mo.strides_size() ||
      mx.dtype() != mo.dtype())
    return std::nullopt;
  for (int d = 0; d < mx.sizes_size(); ++d)
    if (!SameDim(mx.sizes(d), mo.sizes(d))) return std::nullopt;
  for (int d = 0; d < mx.strides_size(); ++d)
    if (!SameDim(mx.strides(d), mo.strides(d))) return std::nullopt;
  bypassed->push_back(node.args(0).ref().node());
  return std::vector<v1::ValueRef>{x};
}

// --- bypassed nodes -----------------------------------------------------------------------

void CountRefs(const v1::Value& v, int delta, std::vector<int>& uses) {
  if (v.kind_case() == v1::Value::kRef) {
    if (v.ref().node() >= 0) uses[v.ref().node()] += delta;
  } else if (v.kind_case() == v1::Value::kList) {
    for (const v1::Value& item : v.list().items()) CountRefs(item, delta, uses);
  }
}

// `g` without the `bypassed` nodes nothing reads any more (a fold's sum and view: pure ops, so
// dropping them changes no result; every plan step runs, read or not). Others stay.
v1::Graph DropBypassed(v1::Graph g, const std::vector<int>& bypassed) {
  if (bypassed.empty()) return g;
  std::vector<int> uses(g.nodes_size(), 0);
  for (const v1::Node& node : g.nodes()) {
    for (const v1::Value& a : node.args()) CountRefs(a, 1, uses);
    for (const v1::NamedValue& kv : node.kwargs()) CountRefs(kv.value(), 1, uses);
  }
  for (const v1::Value& v : g.outputs()) CountRefs(v, 1, uses);
  std::vector<bool> dead(g.nodes_size(), false);
  std::vector<int> order = bypassed;
  std::sort(order.rbegin(), order.rend());  // readers (the view) before what they read (the sum)
  for (int id : order) {
    if (id < 0 || id >= g.nodes_size() || dead[id] || uses[id] != 0) continue;
    dead[id] = true;
    for (const v1::Value& a : g.nodes(id).args()) CountRefs(a, -1, uses);
    for (const v1::NamedValue& kv : g.nodes(id).kwargs()) CountRefs(kv.value(), -1, uses);
  }
  Rebuild b(g);
  for (int id = 0; id < g.nodes_size(); ++id) {
    if (dead[id]) {
      b.Define(id, {});
      continue;
    }
    const v1::ValueRef r = b.Append(b.Remapped(g.nodes(id)));
    std::vector<v1::ValueRef> refs;
    for (int o = 0; o < g.nodes(id).outputs_size(); ++o) {
      v1::ValueRef ro = r;
      ro.set_output(o);
      refs.push_back(ro);
    }
    b.Define(id, std::move(refs));
  }
  return std::move(b).Finish();
}

}  // namespace

absl::StatusOr<int> RewriteSymbolicGraph(SymbolicGraph& graph,
                                         const SymbolicRewriteOptions& options) {
  const v1::Graph& in = graph.graph;
  Rebuild b(in);
  int rewritten = 0;
  // Nodes of the new graph a fold bypassed (FoldLeadingSum), dropped at the end when unread.
  std::vector<int> bypassed;
  std::vector<int>* fold = options.fold_embedding_grad_sum ? &bypassed : nullptr;
  std::vector<int> graph_output(in.nodes_size(), 0);  // per node: refs among the graph outputs
  for (const v1::Value& v : in.outputs()) CountRefs(v, 1, graph_output);
  const std::vector<int> reader = options.embeddings_to_reader_shape
                                      ? BroadcastingReaders(in)
                                      : std::vector<int>(in.nodes_size(), -1);
  for (int id = 0; id < in.nodes_size(); ++id) {
    const v1::Node node = b.Remapped(in.nodes(id));
    Rewrite outputs;
    if (reader[id] >= 0) {
      ASSIGN_OR_RETURN(outputs, EmbeddingToReaderShape(b, node, &in.nodes(reader[id])));
    }
    if (!outputs && options.double_transposes)
      outputs = DoubleTranspose(b, node, graph_output[id] > 0, &bypassed);
    if (!outputs && options.layer_norm_backward_split) outputs = SplitLayerNormBackward(b, node);
    if (!outputs && options.split_as_slices) outputs = SplitAsSlices(b, node);
    if (!outputs && options.embedding_backward_kernel && !options.deterministic) {
      ASSIGN_OR_RETURN(outputs, EmbeddingBackwardAsScatterKernel(b, node, fold));
    }
    if (!outputs && options.embedding_backward && !options.deterministic) {
      ASSIGN_OR_RETURN(outputs, EmbeddingBackwardAsIndexAdd(b, node, fold));
    }
    if (outputs) {
      ++rewritten;
      b.Define(id, *std::move(outputs));
      continue;
    }
    const v1::ValueRef r = b.Append(node);
    std::vector<v1::ValueRef> refs;
    for (int o = 0; o < node.outputs_size(); ++o) {
      v1::ValueRef ro = r;
      ro.set_output(o);
      refs.push_back(ro);
    }
    b.Define(id, std::move(refs));
  }
  if (rewritten > 0) graph.graph = DropBypassed(std::move(b).Finish(), bypassed);
  return rewritten;
}

}  // namespace tccd::codegen
