"""FX (AOTAutograd) graph -> tccd.v1 Graph/CompileRequest, without a daemon."""

import operator
import platform

import pytest
import torch
import torch.fx
import torch.nn as nn

from tccd.errors import Unsupported
from tccd.serialize import build_request, encode_graph, op_target_name
from tccd.v1 import tccd_pb2 as pb
from tccd_testlib import SmallCNN, capture_aot_graphs


def _refs(value):
    kind = value.WhichOneof("kind")
    if kind == "ref":
        yield value.ref
    elif kind == "list":
        for item in value.list.items:
            yield from _refs(item)


def _all_refs(graph):
    for node_id, node in enumerate(graph.nodes):
        for a in node.args:
            for r in _refs(a):
                yield node_id, r
        for kv in node.kwargs:
            for r in _refs(kv.value):
                yield node_id, r
    for out in graph.outputs:
        for r in _refs(out):
            yield len(graph.nodes), r


def _check_refs_well_formed(graph):
    for user, ref in _all_refs(graph):
        if ref.node < 0:
            assert -ref.node - 1 < len(graph.inputs)
            assert ref.output == 0
        else:
            assert ref.node < user, "refs point to earlier nodes only"
            assert ref.output < len(graph.nodes[ref.node].outputs)


@pytest.fixture(scope="module")
def cnn_graphs():
    torch.manual_seed(0)
    model = SmallCNN()
    return capture_aot_graphs(model, torch.randn(2, 3, 16, 16), backward=True)


def test_op_target_name_spells_out_default_overload():
    assert op_target_name(torch.ops.aten.relu.default) == "aten::relu.default"
    assert op_target_name(torch.ops.aten.add.Tensor) == "aten::add.Tensor"
    assert op_target_name(torch.ops.aten.sum.dim_IntList) == "aten::sum.dim_IntList"


def test_simple_graph_encodes_inputs_nodes_and_outputs():
    def f(x, y):
        return torch.relu(x) + y * 2

    (kind, gm, inputs), = capture_aot_graphs(f, torch.randn(4, 8), torch.randn(8))
    assert kind == "inference"
    graph, symbolic = encode_graph(gm)
    assert not symbolic
    assert len(graph.inputs) == 2
    x_meta = graph.inputs[0]
    assert [d.value for d in x_meta.sizes] == [4, 8]
    assert [d.value for d in x_meta.strides] == [8, 1]
    assert x_meta.storage_offset.value == 0
    assert x_meta.dtype == pb.FLOAT32
    assert x_meta.device.type == pb.CPU and x_meta.device.index == -1
    targets = [n.target for n in graph.nodes]
    assert targets == ["aten::relu.default", "aten::mul.Tensor", "aten::add.Tensor"]
    relu, mul, add = graph.nodes
    assert relu.args[0].ref.node == -1  # graph input 0
    assert mul.args[0].ref.node == -2  # graph input 1
    assert mul.args[1].int_value == 2
    assert add.args[0].ref.node == 0 and add.args[1].ref.node == 1
    assert [d.value for d in add.outputs[0].sizes] == [4, 8]
    assert len(graph.outputs) == 1 and graph.outputs[0].ref.node == 2
    _check_refs_well_formed(graph)


def test_getitem_becomes_a_ref_to_the_multi_output_node(cnn_graphs):
    kinds = [k for k, _, _ in cnn_graphs]
    assert kinds == ["forward", "backward"]
    for _, gm, _ in cnn_graphs:
        graph, _ = encode_graph(gm)
        _check_refs_well_formed(graph)
        fx_getitems = [n for n in gm.graph.nodes if n.target is operator.getitem]
        assert fx_getitems, "the CNN graphs have multi-output ops"
        fx_ops = [n for n in gm.graph.nodes if isinstance(n.target, torch._ops.OpOverload)]
        assert len(graph.nodes) == len(fx_ops), "getitem emits no Node"
        assert all("getitem" not in n.target for n in graph.nodes)

    fw, _ = encode_graph(cnn_graphs[0][1])
    bn = [i for i, n in enumerate(fw.nodes) if "batch_norm" in n.target]
    assert bn, [n.target for n in fw.nodes]
    assert len(fw.nodes[bn[0]].outputs) > 1
    # Some user reads output k > 0 of a batch-norm node: ValueRef(node=bn, output=k).
    outputs_read = {r.output for _, r in _all_refs(fw) if r.node == bn[0]}
    assert 0 in outputs_read and max(outputs_read) > 0
    pool = [i for i, n in enumerate(fw.nodes) if n.target == "aten::max_pool2d_with_indices.default"]
    assert pool and len(fw.nodes[pool[0]].outputs) == 2
    assert fw.nodes[pool[0]].outputs[1].dtype == pb.INT64


def test_none_outputs_keep_their_slot(cnn_graphs):
    bw, _ = encode_graph(cnn_graphs[1][1])
    conv_bw = [n for n in bw.nodes if n.target == "aten::convolution_backward.default"]
    assert conv_bw
    # The first conv's input needs no gradient: output_mask[0] is False, the op returns None
    # there, and the slot is a 0-element placeholder that nothing references.
    first = [n for n in conv_bw if not n.args[-1].list.items[0].bool_value]
    assert first, "expected a convolution_backward with output_mask[0] = False"
    node = first[0]
    assert len(node.outputs) == 3
    assert [d.value for d in node.outputs[0].sizes] == [0]
    assert node.outputs[0].dtype == node.outputs[1].dtype
    node_id = list(bw.nodes).index(node)
    assert all(not (r.node == node_id and r.output == 0) for _, r in _all_refs(bw))
    # Graph outputs that are None (grads of inputs that need none) are Value.none.
    assert any(o.WhichOneof("kind") == "none" for o in bw.outputs)


def test_backward_outputs_reference_placeholders_and_nodes(cnn_graphs):
    fw, _ = encode_graph(cnn_graphs[0][1])
    kinds = {o.WhichOneof("kind") for o in fw.outputs}
    assert kinds <= {"ref", "none"}
    assert any(o.ref.node < 0 for o in fw.outputs if o.HasField("ref")), "saved primals are inputs"


def test_argument_encodings():
    def f(x):
        y = x.to(torch.float64)
        z = torch.sum(y, dim=[0], keepdim=True)
        w = torch.cat([x, x], dim=1)
        return z, w.contiguous(memory_format=torch.contiguous_format), torch.zeros(2, device="cpu")

    (_, gm, _), = capture_aot_graphs(f, torch.randn(3, 4))
    graph, _ = encode_graph(gm)
    by_target = {n.target: n for n in graph.nodes}
    to_copy = by_target["aten::_to_copy.default"]
    kw = {kv.name: kv.value for kv in to_copy.kwargs}
    assert kw["dtype"].dtype == pb.FLOAT64
    total = by_target["aten::sum.dim_IntList"]
    assert [v.int_value for v in total.args[1].list.items] == [0]
    assert total.args[2].bool_value is True
    cat = by_target["aten::cat.default"]
    assert [r.node for r in _refs(cat.args[0])] == [-1, -1]
    zeros = [n for n in graph.nodes if n.target.startswith("aten::zeros") or n.target.startswith("aten::full")]
    assert zeros
    kw = {kv.name: kv.value for kv in zeros[0].kwargs}
    assert kw["device"].device.type == pb.CPU
    if "layout" in kw:
        assert kw["layout"].layout == 0


def _graph_module(fn, example):
    gm = torch.fx.symbolic_trace(fn)
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            node.meta["val"] = example
    return gm


def test_non_opoverload_call_is_unsupported():
    gm = _graph_module(lambda x: torch.sin(x), torch.randn(3))
    with pytest.raises(Unsupported, match="not an ATen operator overload"):
        encode_graph(gm)


def test_call_module_is_unsupported():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)

        def forward(self, x):
            return self.lin(x)

    gm = _graph_module(M(), torch.randn(3))
    with pytest.raises(Unsupported, match="call_module"):
        encode_graph(gm)


def test_non_tensor_non_integer_placeholder_is_unsupported():
    gm = _graph_module(lambda x: x, 3.5)
    with pytest.raises(Unsupported, match="not a tensor or an integer"):
        encode_graph(gm)


def test_symbolic_graph_names_symbols_canonically_and_sends_its_facts():
    """The graph's symbols are s0, s1, ... in the order the graph first mentions them, in sizes,
    strides and arguments alike (Dynamo's own numbering never reaches the request; sizes equal
    at tracing share a symbol, here the 4s); only facts over these symbols go."""
    from torch.fx.experimental.proxy_tensor import make_fx

    from tccd.serialize import encode_request

    def fn(a, b):
        return torch.cat([a, b]).view(-1), a.shape[0] * 4

    gm = make_fx(fn, tracing_mode="symbolic")(torch.randn(6, 4), torch.randn(5, 4))
    request, scalar_inputs = encode_request(gm, [], graph_name="t")
    assert scalar_inputs == []
    dims = [[d.expr or d.value for d in m.sizes] for m in request.graph.inputs]
    assert dims == [["s0", "s1"], ["s2", "s1"]], dims
    out = request.graph.nodes[-1].outputs[0]
    assert out.sizes[0].expr == "s1*(s0 + s2)", out
    assert request.graph.outputs[1].sym_expr == "4*s0"
    assert dict(request.shape_env.hints) == {"s0": 6, "s1": 4, "s2": 5}
    import re

    for guard in request.shape_env.guards:
        assert set(re.findall(r"s\d+", guard)) <= {"s0", "s1", "s2"}, guard


def test_unknown_dtype_is_unsupported():
    gm = _graph_module(lambda x: x, torch.empty(2, dtype=torch.float8_e4m3fn))
    with pytest.raises(Unsupported, match="dtype"):
        encode_graph(gm)


def test_build_request_fills_target_options_and_identity():
    (_, gm, inputs), = capture_aot_graphs(lambda x: torch.relu(x), torch.randn(5))
    req = build_request(
        gm, inputs, graph_name="0/0 inference", mode="max-autotune",
        options={"a": 1}, job_id="job-7", rank=3,
    )
    assert req.target.device_type == pb.CPU
    assert req.target.cpu_arch == platform.machine()
    if platform.machine() == "x86_64":
        assert "sse2" in req.target.cpu_features
    assert req.options.mode == "max-autotune"
    assert dict(req.options.extra) == {"a": "1"}
    assert req.job_id == "job-7" and req.rank == 3 and req.graph_name == "0/0 inference"
    assert req.client.torch_version == str(torch.__version__)
    assert not req.HasField("shape_env")
    again = pb.CompileRequest.FromString(req.SerializeToString())
    assert again == req


def test_scalar_outputs_of_an_op_become_constants_in_their_users():
    # cuDNN/flash attention return (Tensor, ..., SymInt max_q, SymInt max_k, ...): with static
    # shapes the ints are the traced values, which their users (the backward op) receive as
    # constants, while the op keeps a placeholder slot per output.
    op = torch.ops.aten._scaled_dot_product_flash_attention.default
    g = torch.fx.Graph()
    q, k, v = (g.placeholder(name) for name in "qkv")
    for p in (q, k, v):
        p.meta["val"] = torch.empty(1, 2, 8, 4)
    attn = g.call_function(op, (q, k, v))
    t = torch.empty(1, 2, 8, 4)
    attn.meta["val"] = (t, torch.empty(1, 2, 8), torch.empty(0), torch.empty(0), 8, 8,
                        torch.empty(2, dtype=torch.int64), torch.empty(0, dtype=torch.int64), torch.empty(0))
    out = g.call_function(operator.getitem, (attn, 0))
    out.meta["val"] = t
    max_q = g.call_function(operator.getitem, (attn, 4))
    max_q.meta["val"] = 8
    scaled = g.call_function(torch.ops.aten.mul.Tensor, (out, max_q))
    scaled.meta["val"] = t
    g.output((scaled, max_q))
    graph, _ = encode_graph(torch.fx.GraphModule(torch.nn.Module(), g))
    attn_node, mul = graph.nodes
    assert len(attn_node.outputs) == 9
    assert [d.value for d in attn_node.outputs[4].sizes] == [0]  # the placeholder slot
    assert mul.args[0].ref.node == 0 and mul.args[0].ref.output == 0
    assert mul.args[1].int_value == 8
    assert graph.outputs[1].int_value == 8
    _check_refs_well_formed(graph)


def test_with_effects_becomes_the_wrapped_op_and_its_token_passes_through():
    # AOTAutograd wraps linalg's error check in with_effects(token, _linalg_check_errors, ...),
    # threading an effect token from a graph input to a graph output.
    ((kind, gm, _),) = capture_aot_graphs(lambda a: torch.linalg.inv(a) * 2, torch.randn(3, 3))
    assert any(n.target is torch.ops.higher_order.with_effects for n in gm.graph.nodes), gm.graph
    graph, _ = encode_graph(gm)
    _check_refs_well_formed(graph)
    targets = [n.target for n in graph.nodes]
    assert "aten::_linalg_check_errors.default" in targets
    check = graph.nodes[targets.index("aten::_linalg_check_errors.default")]
    assert len(check.outputs) == 0  # it returns nothing; it raises on a singular matrix
    assert [kv.name for kv in check.kwargs] == ["is_matrix"]
    assert check.args[0].ref.node == targets.index("aten::linalg_inv_ex.default")
    assert check.args[1].string_value == "linalg.inv"
    # The token output is the token input (AOTAutograd's first input, a 0-element tensor).
    token_outputs = [o for o in graph.outputs if o.ref.node < 0]
    assert len(token_outputs) == 1
    token = graph.inputs[-token_outputs[0].ref.node - 1]
    assert [d.value for d in token.sizes] == [0]


def test_symbol_names_do_not_depend_on_dynamos_numbering():
    import sympy

    from tccd.sym_eval import SymbolNames

    s3, s7, s12 = sympy.symbols("s3 s7 s12", integer=True, positive=True)
    names = SymbolNames()
    # Graphs meet their symbols one at a time, as input sizes (two new symbols in one
    # expression would be numbered in sympy's print order, which sorts by name).
    assert names.text(s7) == "s0"
    assert names.text(s12) == "s1"
    assert names.text(s3 * s7 + s12) == "s0*s2 + s1"
    assert names.text(sympy.Integer(5)) == "5"
    u0 = sympy.Symbol("u0", integer=True)
    with pytest.raises(Unsupported, match="data-dependent"):
        names.text(u0 + 1)


def test_static_metas_built_once_equal_what_tensor_meta_builds(cnn_graphs):
    """The encoder builds each distinct static tensor meta once and copies it (GraphEncoder._meta,
    a ~40% shorter encode of T5's graphs): every copy equals tensor_meta of its own tensor, and
    the copies are separate messages (a change to one is not a change to the others)."""
    from tccd.serialize import tensor_meta

    for _, gm, _ in cnn_graphs:
        graph, has_symbols = encode_graph(gm)
        assert not has_symbols
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        assert len(graph.inputs) == len(placeholders)
        for meta, node in zip(graph.inputs, placeholders):
            assert meta == tensor_meta(node.meta["val"], node.name)
        # Each output meta equals tensor_meta of its node's value, node by node in fx order.
        encoded = iter(graph.nodes)
        for node in gm.graph.nodes:
            if node.op != "call_function" or node.target is operator.getitem:
                continue
            pb_node = next(encoded)
            val = node.meta.get("val")
            if isinstance(val, torch.Tensor):
                assert pb_node.outputs[0] == tensor_meta(val, node.name), node.name
    graph, _ = encode_graph(cnn_graphs[0][1])
    same = [i for i, m in enumerate(graph.inputs) if m == graph.inputs[0]]
    if len(same) > 1:
        graph.inputs[same[0]].sizes[0].value += 1
        assert graph.inputs[same[1]] != graph.inputs[same[0]]


def test_a_graph_with_static_and_symbolic_tensors_still_reports_its_symbols():
    from torch.fx.experimental.proxy_tensor import make_fx

    def fn(a, b):
        return torch.ones(3) * 2, torch.cat([b, a])

    gm = make_fx(fn, tracing_mode="symbolic")(torch.randn(6, 4), torch.randn(5, 4))
    # Static metas (the ones(3) nodes) take the copied path, symbolic ones are built and looked
    # through: the symbols are seen, the static outputs stay plain values.
    graph, has_symbols = encode_graph(gm)
    assert has_symbols
    assert any(d.expr for m in graph.inputs for d in m.sizes)
    assert [d.value for d in graph.nodes[0].outputs[0].sizes] == [3]
    assert any(d.expr for d in graph.nodes[-1].outputs[0].sizes)
