// What an ATen op *is*, in one table: the facts passes ask about a target independently of how
// (or whether) it is lowered. The lowering libraries (passes/pointwise_ops.h, reduction_ops.h)
// say *how* an op becomes kernel IR; a test checks that every op they lower is listed here with
// the matching category, so the two cannot drift apart.
//
// Why a table of targets and not per-node predicates: these facts hold for every call of the
// overload (a transpose always aliases its input, a dropout always draws random numbers).
// Argument-dependent questions ("is this _to_copy a device transfer?") stay with the lowerings.
#pragma once

#include <cstdint>

#include "absl/strings/string_view.h"

namespace tccd::codegen {

enum class OpCategory : uint8_t {
  kUnknown,    // not in the table: assume it has side effects and is opaque
  kView,       // output(s) always alias input 0 (metadata only, no data movement)
  kReshape,    // aliases input 0 when the strides allow, else copies (reshape)
  kPointwise,  // elementwise over broadcast operands (incl. casts and copies)
  kReduction,  // reduces or normalises over dims (sum, softmax, layer norm, ...)
  kIndex,      // output points select input elements by index arithmetic (cat, pad, embedding,
               // slice/select backward, ...): passes/index_ops.h
  kGemm,       // matmul family (mm, bmm, addmm)
  kNorm,       // batch norm family (stays ATen or cuDNN)
  kScatter,    // adds values into its output at computed coordinates: passes/scatter_ops.h
  kOther,      // any other functional op (embedding, cat, convolution, ...)
};

// What a view (category kView) or reshape does to its input's layout, for the passes that move
// views, casts and copies around (which views they may look through depends on this, not on
// a list of their own).
enum class ViewKind : uint8_t {
  kNone,      // not a view
  kIdentity,  // alias, detach: the input itself (same sizes, strides and offset)
  kReshape,   // view, _unsafe_view, reshape: new sizes from a list, row-major element order kept
  kPermute,   // permute, transpose, t: the input's dims reordered (passes/graph_rebuild.h:
              // PermutationOf)
  kExpand,    // expand: size-1 dims broadcast (stride 0)
  kOther,     // any other view: slices, selects, splits, squeezes, as_strided, dtype views, ...
};

struct OpProperties {
  OpCategory category = OpCategory::kUnknown;
  // kNone unless category is kView or kReshape.
  ViewKind view = ViewKind::kNone;
  // No observable effect beyond its outputs: safe to drop when nothing reads them. False for
  // in-place/out= ops, random ops (they advance the generator) and anything unknown.
  bool pure = false;
};

// The properties of `target` (e.g. "aten::permute.default"); category kUnknown, impure when
// the target is not in the table.
OpProperties PropertiesOf(absl::string_view target);

// Output(s) always alias input 0 (category kView).
inline bool IsViewOp(absl::string_view target) {
  return PropertiesOf(target).category == OpCategory::kView;
}
// The view kind of `target` (kNone for anything but a view or reshape).
inline ViewKind ViewKindOf(absl::string_view target) { return PropertiesOf(target).view; }
// Safe to drop when dead.
inline bool IsSideEffectFree(absl::string_view target) { return PropertiesOf(target).pure; }

const char* OpCategoryName(OpCategory category);

}  // namespace tccd::codegen
