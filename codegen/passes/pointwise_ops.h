// The library of ATen pointwise ops the compiler can fuse, and how each lowers to kernel IR.
//
// This is backend-neutral: the CPU loop emitter and (later) the CUDA emitter consume the same
// PwInstr bodies. Every fused value is "held" in a compute dtype: f16/bf16 are held as f32
// (arithmetic never happens in 16-bit floats, as in Inductor), every other dtype as itself.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/ir/graph.h"
#include "codegen/kernel/pointwise_kernel.h"

namespace tccd::codegen {

// The node's declared outputs (client metadata) against what its lowering produced: a graph whose
// metadata contradicts the op (a _softmax declaring two outputs, an add declaring an f16 result
// of two f32 inputs) is INVALID_ARGUMENT naming the node, not an internal error.
absl::Status CheckDeclaredOutputCount(const ir::Node& node, int node_id, size_t produced);
absl::Status CheckDeclaredDType(const ir::Node& node, int node_id, ir::DType produced_held);

// The tensor's view touches exactly numel distinct elements of its storage (no overlap, no holes):
// a kernel output a store may write once per point.
bool IsDenseNonOverlapping(const ir::TensorType& type);

// Appends instructions to a kernel body; small conveniences over PwInstr.
class PwBuilder {
 public:
  explicit PwBuilder(std::vector<PwInstr>* body) : body_(body) {}

  ir::DType dtype(int value) const { return (*body_)[value].dtype; }
  int Emit(PwInstr instr);
  int Constant(double value, ir::DType dtype);
  int Coerce(int value, ir::DType dtype);  // casts only when needed
  int Unary(PwOp op, int a);
  int Binary(PwOp op, int a, int b);   // operands coerced to a's dtype by the caller
  int Compare(PwOp op, int a, int b);  // result kBool
  int Where(int cond, int a, int b);

 private:
  std::vector<PwInstr>* body_;
};

// True if `node` is an op this library lowers, with arguments it can handle (e.g. no
// rounding_mode on div, no device change in _to_copy) and one output.
bool IsPointwiseOp(const ir::Graph& graph, const ir::Node& node);

// fill.Scalar, full, zeros/ones/full_like, scalar_tensor: ops whose value is a constant, their
// tensor operand (if any) giving only the shape.
bool PointwiseValueIgnoresOperands(const ir::Node& node);

// How many leading positional args of `node` (a pointwise op) are tensor-or-number operands.
int PointwiseOperandCount(const ir::Node& node);

// Every target this library lowers (for the op-properties consistency test).
std::vector<std::string> PointwiseOpTargets();

// Lowers `node` into `builder`. `value_of` returns the held value of a tensor operand (already in
// the body). Returns the held value of the node's output.
absl::StatusOr<int> LowerPointwiseOp(const ir::Node& node,
                                     const std::function<int(const ir::ValueRef&)>& value_of,
                                     PwBuilder& builder);

}  // namespace tccd::codegen
