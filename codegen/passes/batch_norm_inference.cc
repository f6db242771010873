// BatchNormInference (see batch_norm_inference.h).
#include "codegen/passes/batch_norm_inference.h"

#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "codegen/passes/graph_rebuild.h"

namespace tccd::codegen {
namespace {

constexpr char kInferenceNorm[] = "aten::_native_batch_norm_legit_no_training.default";

std::optional<double> Number(const ir::Arg& arg) {
  if (const auto* d = std::get_if<double>(&arg.v)) return *d;
  if (const auto* i = std::get_if<int64_t>(&arg.v)) return static_cast<double>(*i);
  return std::nullopt;
}

bool IsChannelVector(const ir::Graph& graph, const ir::Arg& arg, int64_t channels, bool optional) {
  if (arg.is_none()) return optional;
  if (!arg.is_ref()) return false;
  const ir::TensorType& t = graph.type_of(arg.ref());
  return t.device == ir::DeviceType::kCuda && IsF32OrHalf(t.dtype) && t.rank() == 1 &&
         t.sizes[0] == channels;
}

// args: input, weight, bias, running_mean, running_var, momentum, eps.
bool Rewritable(const ir::Graph& graph, const ir::Node& node) {
  if (node.target != kInferenceNorm || node.args.size() < 7 || node.outputs.size() != 3 ||
      !node.args[0].is_ref())
    return false;
  const ir::TensorType& x = graph.type_of(node.args[0].ref());
  if (x.device != ir::DeviceType::kCuda || !IsF32OrHalf(x.dtype) || x.rank() < 2 || x.numel() == 0)
    return false;
  const int64_t channels = x.sizes[1];
  return node.outputs[0].sizes == x.sizes && IsChannelVector(graph, node.args[1], channels, true) &&
         IsChannelVector(graph, node.args[2], channels, true) &&
         IsChannelVector(graph, node.args[3], channels, false) &&
         IsChannelVector(graph, node.args[4], channels, false) && Number(node.args[6]).has_value();
}

class Emitter {
 public:
  Emitter(ir::Graph& out, const ir::TensorType& result) : out_(out), result_(result) {}

  ir::Arg Emit(std::string target, std::vector<ir::Arg> args, ir::TensorType type,
               std::vector<ir::NamedArg> kwargs = {}) {
    return AppendNode(out_, ir::Node{.target = std::move(target),
                                     .args = std::move(args),
                                     .kwargs = std::move(kwargs),
                                     .outputs = {std::move(type)}});
  }

  // The result's shape and strides in `dtype`.
  ir::TensorType Like(ir::DType dtype) const {
    ir::TensorType t = result_;
    t.dtype = dtype;
    return t;
  }

  // A [C] vector as a stride-0 broadcast over the result's shape.
  ir::Arg PerChannel(const ir::Arg& vector) {
    const ir::TensorType& v = out_.type_of(vector.ref());
    const int64_t rank = result_.rank();
    ir::TensorType column = v;
    column.sizes.assign(rank - 1, 1);
    column.sizes[0] = v.sizes[0];
    column.strides = ir::ContiguousStrides(column.sizes);
    const ir::Arg viewed = Emit("aten::view.default", {vector, IntListArg(column.sizes)}, column);
    ir::TensorType expanded = v;
    expanded.sizes = result_.sizes;
    expanded.strides.assign(rank, 0);
    expanded.strides[1] = 1;
    expanded.storage_offset = v.storage_offset;
    return Emit("aten::expand.default", {viewed, IntListArg(result_.sizes)}, expanded);
  }

 private:
  ir::Graph& out_;
  ir::TensorType result_;
};

ir::Arg Decompose(ir::Graph& out, const ir::Node& node) {
  const ir::TensorType& result = node.outputs[0];
  Emitter e(out, result);
  const ir::DType f32 = ir::DType::kF32;
  ir::Arg x = node.args[0];
  if (out.type_of(x.ref()).dtype != f32)
    x = e.Emit("aten::_to_copy.default", {x}, e.Like(f32), {{"dtype", ir::Arg{f32}}});
  ir::Arg y = e.Emit("aten::sub.Tensor", {x, e.PerChannel(node.args[3])}, e.Like(f32));
  const ir::Arg shifted =
      e.Emit("aten::add.Scalar", {e.PerChannel(node.args[4]), ir::Arg{*Number(node.args[6])}},
             e.Like(f32));
  y = e.Emit("aten::mul.Tensor", {y, e.Emit("aten::rsqrt.default", {shifted}, e.Like(f32))},
             e.Like(f32));
  if (!node.args[1].is_none())
    y = e.Emit("aten::mul.Tensor", {y, e.PerChannel(node.args[1])}, e.Like(f32));
  if (!node.args[2].is_none())
    y = e.Emit("aten::add.Tensor", {y, e.PerChannel(node.args[2])}, e.Like(f32));
  if (result.dtype != f32)
    y = e.Emit("aten::_to_copy.default", {y}, result, {{"dtype", ir::Arg{result.dtype}}});
  return y;
}

}  // namespace

absl::StatusOr<bool> BatchNormInference::Run(ir::Graph& graph) {
  std::set<int> chosen;
  for (int id = 0; id < static_cast<int>(graph.nodes.size()); ++id)
    if (Rewritable(graph, graph.nodes[id])) chosen.insert(id);
  if (chosen.empty()) return false;
  // The statistics outputs (empty in eval mode) must be unused.
  auto drop_if_stat = [&](const ir::ValueRef& r) {
    if (!r.is_input() && r.output > 0 && chosen.count(r.node)) chosen.erase(r.node);
  };
  for (const ir::Node& node : graph.nodes) ir::ForEachInput(node, drop_if_stat);
  for (const ir::Arg& a : graph.outputs) ir::ForEachRef(a, drop_if_stat);
  if (chosen.empty()) return false;
  int id = -1;
  return RebuildGraph(
      graph, [&](ir::Graph& out, const ir::Node& node) -> std::optional<std::vector<ir::Arg>> {
        ++id;
        if (!chosen.count(id)) return std::nullopt;
        // The unused statistics outputs map to the normalised output (nothing reads them).
        const ir::Arg y = Decompose(out, node);
        return std::vector<ir::Arg>{y, y, y};
      });
}

}  // namespace tccd::codegen
