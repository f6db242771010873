// IndexOpsToReaderShape: an index.Tensor whose only reader is a pointwise op that broadcasts it
// to a larger shape is computed at that shape, its index tensors expanded (stride-0 views), so
// that it joins its reader's kernel instead of being a kernel of its own:
//
//   %i = index.Tensor(%pos, [%b, %q])        i64[2, 1, 512, 1]   (%b [2,1,1,1], %q [1,1,512,1])
//   %m = le.Tensor(%j, %i)                   b8[2, 1, 512, 512]
// becomes
//   %b' = expand(%b, [2, 1, 512, 512])  %q' = expand(%q, [2, 1, 512, 512])       (views)
//   %i  = index.Tensor(%pos, [%b', %q'])     i64[2, 1, 512, 512]  (fuses with %m: same shape)
//
// transformers' causal masks (GPT-2, Llama: masking_utils' sdpa_mask) index the [batch, seq]
// position and packed-sequence tables four times per forward at [B, 1, S, 1] and [B, 1, 1, S]
// and compare the results at [B, 1, S, S]; each index was a kernel of its own. The gathers are
// recomputed per point of the larger shape (the tables are a few KiB: cache hits), as Inductor
// inlines them.
//
// Only when the index op's value is read by that one pointwise op (not returned, no other
// reader: a second reader at the old shape would need the small tensor too), its output is the
// broadcast index shape followed by the untouched dims, and the reader's shape has the same rank.
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

// Embeddings too (`embeddings`, the default; TCCD_DISABLE_PASSES=embeddings-to-reader-shape
// keeps them out): GPT-2's and BERT's position embedding, wpe(position_ids [1, S]) -> [1, S, E]
// added to the token embedding at [B, S, E], is gathered at [B, S, E] from the expanded ids, so
// that it joins the token embedding's group and, with row gathers (reduction_fusion.h), the first
// norm's kernel; it was a kernel of its own. Only the ids grow: the output's last dim (the
// embedding's width) must be the reader's.
class IndexOpsToReaderShape : public GraphPass {
 public:
  explicit IndexOpsToReaderShape(bool embeddings = true) : embeddings_(embeddings) {}
  std::string_view name() const override { return "index-ops-to-reader-shape"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;

 private:
  bool embeddings_;
};

}  // namespace tccd::codegen
