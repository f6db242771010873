// Graph rewrites of symbolic graphs (symbolic_plan.h), before their kernels are chosen.
//
// The static pipeline's graph passes work on the static IR, which a symbolic graph never enters
// (symbolic_kernels.h lowers a surrogate of it and checks every group on the symbolic graph).
// The few rewrites that decide what a symbolic plan runs as ATen extern steps are redone here on
// the symbolic graph itself, so that every size they write is an expression of the graph's
// symbols, right for every size the guards allow: nothing specialises on a placeholder or on the
// example sizes.
//
//  * "symbolic-layer-norm-backward-split": a native_layer_norm_backward that wants grad_input
//    and a parameter gradient becomes two nodes of the same op, output_mask [true, false, false]
//    (per row: a row kernel with run-time rows) and [false, w, b] (grad_weight, grad_bias: a
//    column kernel over the run-time row count), as layer_norm_backward_split.h does for static
//    graphs. The masked-off outputs are the client's 0-element placeholders, which nothing reads.
//    A half no kernel takes stays the ATen op, with the same result.
//  * "symbolic-embedding-backward": embedding_dense_backward (int64 indices, no padding_idx, no
//    scale_grad_by_freq, not under deterministic algorithms) becomes
//        src = view(f32(grad), [N, E])           the cast a kernel (fused with grad's producer)
//        idx = expand(indices as [N, 1], [N, E]) views (a reshape for N-D indices)
//        acc = scatter_add(new_zeros(src, [V, E]), 0, idx, src)
//        gw  = to_copy(acc, dtype)               16-bit grads only, a kernel
//    ATen's CUDA scatter_add is one kernel of f32 atomics where embedding_dense_backward sorts
//    the indices above 3072 of them (a sort and a segmented reduction, about ten launches:
//    317 us of host time per call for the dynamic bench's two, H200 profile). The same f32
//    sums, added in another (run-dependent) order, rounded once; the static plans' scatter kernel
//    (embedding_backward_to_scatter.h) makes the same trade. (index_add would take a 1-D
//    index, but its Scalar alpha is an argument the native runtime's dispatcher ABI cannot
//    carry: a Python step.)
//  * "symbolic-embedding-scatter-kernels" (CUDA): before that, the same op becomes scatter_ops.h's
//        acc = tccd::embedding_scatter_add(grad, indices, V, padding_idx)   f32 [V, E]
//        gw  = to_copy(acc, dtype)                                          16-bit grads only
//    which symbolic_kernels.h makes a scatter kernel with run-time sizes (the launcher zero-fills
//    acc, the kernel adds grad's rows with f32 atomics, reading the 16-bit grad itself): no
//    f32 copy of grad, no new_zeros, no index views, no dispatcher call (the static plans' kernel,
//    embedding_backward_to_scatter.h).
//  * "symbolic-embedding-sum-fold": with either form above, an embedding gradient that is a sum
//    over leading dims of a larger gradient G (the position embedding's: sum(G, [0], keepdim),
//    a view dropping the 1, for positions broadcast over the batch; an extern ATen step of 40 us
//    host time per backward call, its kept dims run-time sizes no column kernel takes) scatters
//    G itself with expand(indices, [B, ...]) (a view, stride 0 over the summed dims); the sum
//    and view are dropped when nothing else reads them. The same f32 sums without the 16-bit
//    intermediate.
//  * "symbolic-double-transposes": t(t(x)) is x (AOTAutograd's backward reads each linear weight
//    so for its input gradient: two extern view steps and their releases per weight and call);
//    its readers read x, the inner t is dropped when unread. Not for graph outputs.
//  * "symbolic-split-as-slices": split.Tensor along a static dim becomes one slice.Tensor view
//    per part, each with the part's meta from the graph: views the plan runtimes make from the
//    metas (and the view chain fold, symbolic_views.h, absorbs) where split is a dispatcher call
//    returning a list (24 us of host time per call of the dynamic bench's forward, H200).
//  * "symbolic-embeddings-to-reader-shape": an embedding [ids..., E] read only by an add, sub
//    or mul that broadcasts it to [lead..., ids..., E] and whose value a layer norm reads (the
//    position embedding of arange(T), [T, E], added to the token embedding at [B, T, E], then
//    normalised) is gathered at the reader's shape from expand(ids, [lead..., ids...]), as the
//    static embeddings-to-reader-shape does (index_ops_to_reader_shape.h), so that with
//    symbolic row gathers (symbolic_kernels.h) it joins the norm's row kernel; it was an index
//    kernel of its own. Same values. Set by the pipeline with row gathers only: without a row
//    kernel to join (GPT-2's dropout between the add and the norm keeps it as it is) it would
//    only gather B times as many rows.
// TCCD_DISABLE_PASSES=<name> turns one off. The CUDA target runs both; the CPU target none
// (its ATen ops are what a CPU plan wants), unless the tests ask (SymbolicRewriteOptions).
#pragma once

#include "absl/status/statusor.h"
#include "codegen/symbolic_plan.h"

namespace tccd::codegen {

struct SymbolicRewriteOptions {
  // Split layer norm backwards into their row and column halves. Default: true.
  bool layer_norm_backward_split = true;
  // embedding_dense_backward as scatter_add over f32. Default: true.
  bool embedding_backward = true;
  // embedding_dense_backward as tccd::embedding_scatter_add (scatter_ops.h), a scatter kernel
  // with run-time sizes (symbolic_kernels.h), before the scatter_add form above: CUDA only (the
  // CPU has no scatter kernels and no such ATen op). Default: false.
  bool embedding_backward_kernel = false;
  // With either embedding form: a gradient that is sum(G, leading dims) (keepdim, then a view
  // dropping the 1s; the position embedding's, broadcast over the batch) scatters G itself with
  // the indices expanded over those dims, and the sum is not run. Default: true.
  bool fold_embedding_grad_sum = true;
  // t(t(x)) read as x, the inner t dropped when unread. Default: true.
  bool double_transposes = true;
  // split.Tensor along a static dim as slice views. Default: true.
  bool split_as_slices = true;
  // An embedding broadcast by its one (pointwise) reader gathered at the reader's shape from
  // expanded ids (see "symbolic-embeddings-to-reader-shape" above). Default: false.
  bool embeddings_to_reader_shape = false;
  // torch.use_deterministic_algorithms(True) (CompileInput.deterministic): no float atomics, so
  // no embedding rewrite. Default: false.
  bool deterministic = false;
};

// Rewrites `graph.graph` in place; returns how many nodes were rewritten. The key text and facts
// are not touched (the key is the request's graph: the rewrite is the compiler's, keyed by its
// fingerprint). INVALID_ARGUMENT only for a graph PrepareSymbolicGraph would not have accepted.
absl::StatusOr<int> RewriteSymbolicGraph(SymbolicGraph& graph,
                                         const SymbolicRewriteOptions& options);

}  // namespace tccd::codegen
