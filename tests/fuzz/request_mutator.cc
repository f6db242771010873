// MutateRequest; see request_mutator.h.
#include "tests/fuzz/request_mutator.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace tccd::fuzz {
namespace {

using Rng = std::mt19937_64;

int64_t Pick(Rng& rng, int64_t n) {  // uniform in [0, n), n >= 1
  return std::uniform_int_distribution<int64_t>(0, n - 1)(rng);
}

// Integers that sit on boundaries the daemon checks or computes with.
int64_t InterestingInt(Rng& rng) {
  static const int64_t kValues[] = {0,
                                    1,
                                    -1,
                                    2,
                                    3,
                                    7,
                                    8,
                                    16,
                                    17,
                                    64,
                                    1023,
                                    1024,
                                    65536,
                                    -2,
                                    -3,
                                    INT32_MAX,
                                    INT32_MIN,
                                    INT64_MAX,
                                    INT64_MIN,
                                    int64_t{1} << 31,
                                    int64_t{1} << 40,
                                    int64_t{1} << 62};
  return kValues[Pick(rng, std::size(kValues))];
}

std::vector<std::string>& OpNames() {
  static auto* names = new std::vector<std::string>{"aten::add.Tensor",
                                                    "aten::view.default",
                                                    "aten::permute.default",
                                                    "aten::sum.dim_IntList",
                                                    "aten::mm.default",
                                                    "aten::native_layer_norm.default",
                                                    "aten::native_batch_norm.default",
                                                    "aten::native_dropout.default",
                                                    "aten::fill.Scalar",
                                                    "aten::expand.default",
                                                    "aten::_softmax.default",
                                                    "aten::amax.default",
                                                    "aten::where.self",
                                                    "aten::cat.default",
                                                    "aten::_to_copy.default",
                                                    "aten::clone.default",
                                                    "aten::addmm.default",
                                                    "aten::bmm.default",
                                                    "aten::constant_pad_nd.default",
                                                    "aten::slice.Tensor",
                                                    "aten::select.int",
                                                    "aten::gather.default",
                                                    "aten::index.Tensor",
                                                    "aten::embedding.default",
                                                    "aten::native_layer_norm_backward.default",
                                                    "aten::native_batch_norm_backward.default",
                                                    "aten::convolution.default",
                                                    "aten::unsqueeze.default",
                                                    "aten::squeeze.dim",
                                                    "aten::reshape.default",
                                                    "aten::t.default",
                                                    "aten::transpose.int",
                                                    "aten::full.default",
                                                    "aten::scalar_tensor.default",
                                                    "aten::rand.default",
                                                    "prims::convert_element_type.default"};
  return *names;
}

void Remember(const std::string& op) {
  std::vector<std::string>& names = OpNames();
  if (names.size() >= 4096 || op.empty() || op.size() > 128) return;
  for (const std::string& n : names)
    if (n == op) return;
  names.push_back(op);
}

// Size expressions: the shapes Dynamo prints for sizes and strides (codegen/ir/sym_expr.h's
// language), a few edge cases of it, and a few texts outside it.
const char* SymExprText(Rng& rng) {
  static const char* const kTexts[] = {"s0",
                                       "s1",
                                       "s2",
                                       "s0*2 + 1",
                                       "2*s0",
                                       "s0 - 1",
                                       "s0 + 1",
                                       "s0*s1",
                                       "s1**2",
                                       "3*s1**2",
                                       "8*s0",
                                       "s0*s1*s2",
                                       "(s0 + 1)//2",
                                       "FloorDiv(s0, 8)",
                                       "Mod(s0, 4)",
                                       "PythonMod(s1, 2)",
                                       "CleanDiv(s0, 2)",
                                       "Max(1, s0)",
                                       "Min(s0, s1)",
                                       "-s0",
                                       "s0 - s0",
                                       "0*s1",
                                       "s0//0",
                                       "s0**0",
                                       "s0**62",
                                       "9223372036854775807*s0",
                                       "s63",
                                       "s64",
                                       "s0 +",
                                       "u0"};
  return kTexts[Pick(rng, std::size(kTexts))];
}

void MutateDim(v1::Dim& dim, Rng& rng) {
  switch (Pick(rng, 5)) {
    case 0:
      dim.set_value(InterestingInt(rng));
      break;
    case 1:
      dim.set_value(static_cast<int64_t>(static_cast<uint64_t>(dim.value()) + Pick(rng, 5) - 2));
      break;
    case 2:
    case 3:
      dim.set_expr(SymExprText(rng));
      break;
    default:
      dim.set_value(Pick(rng, 33));
      break;
  }
}

void MutateMeta(v1::TensorMeta& meta, Rng& rng) {
  switch (Pick(rng, 7)) {
    case 0:
      if (meta.sizes_size() > 0) MutateDim(*meta.mutable_sizes(Pick(rng, meta.sizes_size())), rng);
      break;
    case 1:
      if (meta.strides_size() > 0)
        MutateDim(*meta.mutable_strides(Pick(rng, meta.strides_size())), rng);
      break;
    case 2:
      MutateDim(*meta.mutable_storage_offset(), rng);
      break;
    case 3:
      meta.set_dtype(static_cast<v1::DType>(Pick(rng, 20)));
      break;
    case 4:
      meta.mutable_device()->set_type(static_cast<v1::DeviceType>(Pick(rng, 4)));
      break;
    case 5:  // add a dimension (size and stride), or drop one
      if (Pick(rng, 2) && meta.sizes_size() > 0) {
        meta.mutable_sizes()->RemoveLast();
        if (meta.strides_size() > 0) meta.mutable_strides()->RemoveLast();
      } else {
        meta.add_sizes()->set_value(Pick(rng, 5));
        meta.add_strides()->set_value(Pick(rng, 3));
      }
      break;
    default:  // the strides of another rank
      if (meta.strides_size() > 0) meta.mutable_strides()->RemoveLast();
      break;
  }
}

void MutateValue(v1::Value& value, int num_nodes, int num_inputs, Rng& rng, int depth = 0) {
  switch (Pick(rng, 10)) {
    case 0:
      value.set_int_value(InterestingInt(rng));
      break;
    case 1:
      value.set_float_value(Pick(rng, 2) ? -0.0 : 1e308 * (Pick(rng, 3) - 1));
      break;
    case 2:
      value.set_bool_value(Pick(rng, 2));
      break;
    case 3:
      value.set_none(true);
      break;
    case 4:
      value.set_dtype(static_cast<v1::DType>(Pick(rng, 20)));
      break;
    case 5: {  // a reference to another tensor, maybe a forward or out-of-range one
      v1::ValueRef* ref = value.mutable_ref();
      ref->set_node(Pick(rng, 8) == 0
                        ? static_cast<int32_t>(InterestingInt(rng))
                        : static_cast<int32_t>(Pick(rng, num_nodes + num_inputs + 1)) - num_inputs);
      ref->set_output(Pick(rng, 6) == 0 ? 3 : 0);
      break;
    }
    case 6: {
      v1::ValueList* list = value.mutable_list();
      if (list->items_size() > 0 && depth < 3) {
        MutateValue(*list->mutable_items(Pick(rng, list->items_size())), num_nodes, num_inputs, rng,
                    depth + 1);
      } else {
        list->add_items()->set_int_value(Pick(rng, 4) - 1);
      }
      break;
    }
    case 7:
      if (value.has_list() && value.list().items_size() > 0)
        value.mutable_list()->mutable_items()->RemoveLast();
      else
        value.set_sym_expr(SymExprText(rng));
      break;
    case 8:
      value.set_memory_format(static_cast<int32_t>(Pick(rng, 6)));
      break;
    default:
      if (value.kind_case() == v1::Value::kIntValue)
        value.set_int_value(
            static_cast<int64_t>(static_cast<uint64_t>(value.int_value()) + Pick(rng, 5) - 2));
      else
        value.set_string_value("none");
      break;
  }
}

void MutateNode(v1::Graph& graph, int index, Rng& rng) {
  v1::Node& node = *graph.mutable_nodes(index);
  const int num_inputs = graph.inputs_size();
  switch (Pick(rng, 6)) {
    case 0: {
      const std::vector<std::string>& names = OpNames();
      node.set_target(names[Pick(rng, names.size())]);
      break;
    }
    case 1:
      if (node.args_size() > 0)
        MutateValue(*node.mutable_args(Pick(rng, node.args_size())), index, num_inputs, rng);
      else
        MutateValue(*node.add_args(), index, num_inputs, rng);
      break;
    case 2:
      if (node.args_size() > 0 && Pick(rng, 2))
        node.mutable_args()->RemoveLast();
      else
        MutateValue(*node.add_args(), index, num_inputs, rng);
      break;
    case 3:
      if (node.kwargs_size() > 0) {
        MutateValue(*node.mutable_kwargs(Pick(rng, node.kwargs_size()))->mutable_value(), index,
                    num_inputs, rng);
      } else {
        v1::NamedValue* kw = node.add_kwargs();
        kw->set_name(Pick(rng, 2) ? "dtype" : "dim");
        MutateValue(*kw->mutable_value(), index, num_inputs, rng);
      }
      break;
    case 4:
      if (node.outputs_size() > 0)
        MutateMeta(*node.mutable_outputs(Pick(rng, node.outputs_size())), rng);
      break;
    default:
      if (node.outputs_size() > 1 && Pick(rng, 2))
        node.mutable_outputs()->RemoveLast();
      else if (node.outputs_size() > 0)
        *node.add_outputs() = node.outputs(0);
      break;
  }
}

// Every tensor meta of the graph: inputs, then node outputs.
std::vector<v1::TensorMeta*> AllMetas(v1::Graph& graph) {
  std::vector<v1::TensorMeta*> metas;
  for (v1::TensorMeta& m : *graph.mutable_inputs()) metas.push_back(&m);
  for (v1::Node& n : *graph.mutable_nodes())
    for (v1::TensorMeta& m : *n.mutable_outputs()) metas.push_back(&m);
  return metas;
}

void SymbolizeInts(v1::Value& value, int64_t size, const std::string& symbol, Rng& rng,
                   int depth = 0) {
  if (value.kind_case() == v1::Value::kIntValue && value.int_value() == size && Pick(rng, 4))
    value.set_sym_expr(symbol);
  if (value.has_list() && depth < 3)
    for (v1::Value& item : *value.mutable_list()->mutable_items())
      SymbolizeInts(item, size, symbol, rng, depth + 1);
}

// Dynamic shapes as Dynamo would capture them from this graph: one size (a value >= 2 some dim
// has) becomes a symbol in every size and stride equal to it, and in most integer arguments equal
// to it, so a static seed becomes a consistent symbolic graph (where most findings were) rather
// than one with a lone symbolic dim the first check refuses.
void Symbolize(v1::CompileRequest& request, Rng& rng) {
  v1::Graph& graph = *request.mutable_graph();
  std::vector<v1::TensorMeta*> metas = AllMetas(graph);
  std::vector<int64_t> sizes;
  for (const v1::TensorMeta* m : metas)
    for (const v1::Dim& d : m->sizes())
      if (d.kind_case() == v1::Dim::kValue && d.value() >= 2) sizes.push_back(d.value());
  if (sizes.empty()) return;
  const int64_t size = sizes[Pick(rng, sizes.size())];
  const std::string symbol = absl::StrCat("s", Pick(rng, 3));
  for (v1::TensorMeta* m : metas) {
    for (v1::Dim& d : *m->mutable_sizes())
      if (d.kind_case() == v1::Dim::kValue && d.value() == size) d.set_expr(symbol);
    for (v1::Dim& d : *m->mutable_strides())
      if (d.kind_case() == v1::Dim::kValue && d.value() == size) d.set_expr(symbol);
  }
  for (v1::Node& n : *graph.mutable_nodes()) {
    for (v1::Value& a : *n.mutable_args()) SymbolizeInts(a, size, symbol, rng);
    for (v1::NamedValue& kv : *n.mutable_kwargs())
      SymbolizeInts(*kv.mutable_value(), size, symbol, rng);
  }
  (*request.mutable_shape_env()->mutable_hints())[symbol] = size;
  request.mutable_shape_env()->add_guards(absl::StrCat(symbol, " >= 2"));
}

// The whole request on one device, as a client of that device sends it (the target and every
// tensor that has a device), rather than a target that disagrees with its tensors.
void MoveToDevice(v1::CompileRequest& request, Rng& rng) {
  const bool cuda = Pick(rng, 3) != 0;
  v1::Target& target = *request.mutable_target();
  target.Clear();
  if (cuda) {
    target.set_device_type(v1::CUDA);
    target.set_cuda_device_name("NVIDIA H100 80GB HBM3");
    target.set_cuda_cc_major(Pick(rng, 4) ? 9 : 8);
    target.set_cuda_cc_minor(0);
  } else {
    target.set_device_type(v1::CPU);
    target.set_cpu_arch("x86_64");
    target.add_cpu_features("avx2");
  }
  for (v1::TensorMeta* m : AllMetas(*request.mutable_graph())) {
    if (m->device().type() != v1::CPU && m->device().type() != v1::CUDA) continue;
    m->mutable_device()->set_type(cuda ? v1::CUDA : v1::CPU);
    m->mutable_device()->set_index(0);
  }
}

void MutateOnce(v1::CompileRequest& request, Rng& rng) {
  v1::Graph& graph = *request.mutable_graph();
  const int num_nodes = graph.nodes_size();
  switch (Pick(rng, 14)) {
    case 0:
    case 1:
    case 2:
    case 3:
      if (num_nodes > 0) MutateNode(graph, Pick(rng, num_nodes), rng);
      break;
    case 12:
      Symbolize(request, rng);
      break;
    case 13:
      MoveToDevice(request, rng);
      break;
    case 4:
      if (graph.inputs_size() > 0)
        MutateMeta(*graph.mutable_inputs(Pick(rng, graph.inputs_size())), rng);
      break;
    case 5:  // drop or duplicate a node (refs after it now point elsewhere)
      if (num_nodes > 0 && Pick(rng, 2)) {
        graph.mutable_nodes()->DeleteSubrange(Pick(rng, num_nodes), 1);
      } else if (num_nodes > 0) {
        *graph.add_nodes() = graph.nodes(Pick(rng, num_nodes));
      }
      break;
    case 6:
      if (graph.outputs_size() > 0)
        MutateValue(*graph.mutable_outputs(Pick(rng, graph.outputs_size())), num_nodes,
                    graph.inputs_size(), rng);
      else
        MutateValue(*graph.add_outputs(), num_nodes, graph.inputs_size(), rng);
      break;
    case 7: {  // a constant input, of the right size or not
      v1::Constant* c = graph.constants_size() > 0 && Pick(rng, 2)
                            ? graph.mutable_constants(Pick(rng, graph.constants_size()))
                            : graph.add_constants();
      c->set_input(static_cast<int32_t>(Pick(rng, graph.inputs_size() + 2)) - 1);
      c->set_data(std::string(Pick(rng, 2) ? 4 : Pick(rng, 70), '\x01'));
      break;
    }
    case 8: {
      v1::Target& target = *request.mutable_target();
      switch (Pick(rng, 5)) {
        case 0:
          target.set_device_type(static_cast<v1::DeviceType>(Pick(rng, 4)));
          break;
        case 1:
          target.set_cpu_arch(Pick(rng, 3) == 0 ? "aarch64" : Pick(rng, 2) ? "x86_64" : "");
          break;
        case 2:
          target.add_cpu_features(Pick(rng, 2) ? "avx512f" : "bogus");
          break;
        case 3:
          target.set_cuda_cc_major(
              static_cast<int32_t>(Pick(rng, 2) ? Pick(rng, 13) : InterestingInt(rng)));
          break;
        default:
          target.set_cuda_cc_minor(static_cast<int32_t>(Pick(rng, 10) - 1));
          break;
      }
      break;
    }
    case 9: {
      v1::CompileOptions& options = *request.mutable_options();
      switch (Pick(rng, 5)) {
        case 0:
          options.set_mode(Pick(rng, 2) ? "max-autotune" : "reduce-overhead");
          break;
        case 1:
          (*options.mutable_extra())["fallback_random"] = Pick(rng, 2) ? "1" : "false";
          break;
        case 2:
          (*options.mutable_extra())["deterministic_algorithms"] = "True";
          break;
        case 3:  // start:stop ranges of the outputs the client takes in any layout
          (*options.mutable_extra())["tccd_free_layout_outputs"] = Pick(rng, 2) ? "0:1" : "0:1,0:2";
          break;
        default:  // ... and of the inputs it gives up to the plan
          (*options.mutable_extra())["tccd_released_inputs"] = Pick(rng, 2) ? "0:2" : "1:3,0:1";
          break;
      }
      break;
    }
    case 10:  // swap two nodes: refs now point forward
      if (num_nodes > 1)
        graph.mutable_nodes()->SwapElements(Pick(rng, num_nodes), Pick(rng, num_nodes));
      break;
    default:  // a new node from an existing one, consuming the last node's output
      if (num_nodes > 0) {
        v1::Node copy = graph.nodes(Pick(rng, num_nodes));
        if (copy.args_size() > 0 && copy.args(0).has_ref()) {
          copy.mutable_args(0)->mutable_ref()->set_node(num_nodes - 1);
          copy.mutable_args(0)->mutable_ref()->set_output(0);
        }
        *graph.add_nodes() = copy;
        if (graph.outputs_size() > 0 && Pick(rng, 2)) {
          graph.mutable_outputs(0)->mutable_ref()->set_node(num_nodes);
          graph.mutable_outputs(0)->mutable_ref()->set_output(0);
        }
      }
      break;
  }
}

}  // namespace

void MutateRequest(v1::CompileRequest& request, std::mt19937_64& rng) {
  for (const v1::Node& node : request.graph().nodes()) Remember(node.target());
  const int64_t rounds = 1 + Pick(rng, 4);
  for (int64_t i = 0; i < rounds; ++i) MutateOnce(request, rng);
}

}  // namespace tccd::fuzz
