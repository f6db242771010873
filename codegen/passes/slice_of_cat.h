// SliceOfCat: a slice of a cat along the cat's dim is a cat of the slices of its parts (one part:
// that part's slice, a view), so the cat need not be written for a reader of the slice.
// transformers' packed-sequence check (Llama's and GPT-2's mask code,
// `find_packed_sequence_indices`):
//
//   %c = cat([first_position - 1, position_ids], -1)        [B, S + 1]
//   %d = sub(slice(%c, -1, 1, S + 1), slice(%c, -1, 0, S))  [B, S]
// becomes
//   %d = sub(slice(position_ids, ..), cat([first_position - 1, slice(position_ids, -1, 0, S - 1)]))
//
// where the new cat is an index op of the sub's kernel: the [B, S + 1] cat was a kernel of its
// own between the [B, 1] sub and this one. Values are unchanged (a cat copies; a slice is a view).
// Only for slices with step 1 along the cat's dim, of cats whose parts are tensors of the cat's
// rank and dtype; not for a slice that is a graph output (the caller's strides). The old cat is
// left to dead code elimination (kept where something else reads it).
// TCCD_DISABLE_PASSES=slice-of-cat keeps the slices of the cat.
//
// SliceOfPad: the same for constant_pad_nd (a cat with constants): a slice of a padded tensor
// along a padded dim is the pad of the slice of the tensor, with the padding that falls in the
// slice. transformers' causal-LM loss shifts the labels so:
//
//   %p = constant_pad_nd(labels, [0, 1], -100)       [B, S + 1]
//   %s = slice(%p, 1, 1, S + 1)                      [B, S]
// becomes
//   %s = constant_pad_nd(slice(labels, 1, 1, S), [0, 1], -100)
//
// an index op of the kernel that reads %s (the label mask's clone and compare on Llama and
// GPT-2): the [B, S + 1] pad was a kernel of its own. Only for non-negative pads, step-1 slices
// that keep some of the tensor, and no graph output. TCCD_DISABLE_PASSES=slice-of-pad.
#pragma once

#include "codegen/passes/pass.h"

namespace tccd::codegen {

class SliceOfCat : public GraphPass {
 public:
  std::string_view name() const override { return "slice-of-cat"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

class SliceOfPad : public GraphPass {
 public:
  std::string_view name() const override { return "slice-of-pad"; }
  absl::StatusOr<bool> Run(ir::Graph& graph) override;
};

}  // namespace tccd::codegen
