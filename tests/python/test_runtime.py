"""runtime.py runs Plans: hand-built extern plans, encoded AOT graphs, and a native C kernel."""

import ctypes
import shutil
import subprocess

import pytest
import torch

from tccd.errors import ArtifactError
from tccd.runtime import LoadedPlan, load_plan, resolve_op
from tccd.serialize import encode_graph, tensor_meta
from tccd.v1 import tccd_pb2 as pb
from tccd_testlib import MLP, SmallCNN, capture_aot_graphs, graph_to_extern_plan


def ref(i):
    return pb.Value(ref=pb.ValueRef(node=i, output=0))


def ints(*xs):
    return pb.Value(list=pb.ValueList(items=[pb.Value(int_value=x) for x in xs]))


def meta(t):
    return tensor_meta(t, "test")


def test_resolve_op():
    assert resolve_op("aten::add.Tensor") is torch.ops.aten.add.Tensor
    assert resolve_op("aten::relu.default") is torch.ops.aten.relu.default
    with pytest.raises(ArtifactError):
        resolve_op("aten::definitely_not_an_op.default")
    with pytest.raises(ArtifactError):
        resolve_op("relu")


def test_hand_built_extern_plan_matches_eager():
    x = torch.randn(2, 3)
    w = torch.randn(3, 4)
    mm = x @ w
    relu = torch.relu(mm)
    mx, arg = torch.max(relu, 1)
    cat = torch.cat([relu, relu], 0)
    s = torch.sum(relu, [0], keepdim=True, dtype=torch.float64)

    plan = pb.Plan(num_inputs=2, values=[meta(t) for t in (x, w, mm, relu, mx, arg, cat, s)])
    plan.steps.append(pb.Step(extern_call=pb.ExternCall(target="aten::mm.default", args=[ref(0), ref(1)]),
                              outputs=[2], release=[1]))
    plan.steps.append(pb.Step(extern_call=pb.ExternCall(target="aten::relu.default", args=[ref(2)]),
                              outputs=[3], release=[2]))
    plan.steps.append(pb.Step(extern_call=pb.ExternCall(target="aten::max.dim", args=[ref(3), pb.Value(int_value=1)]),
                              outputs=[4, 5]))
    plan.steps.append(pb.Step(extern_call=pb.ExternCall(
        target="aten::cat.default",
        args=[pb.Value(list=pb.ValueList(items=[ref(3), ref(3)])), pb.Value(int_value=0)]),
        outputs=[6]))
    plan.steps.append(pb.Step(extern_call=pb.ExternCall(
        target="aten::sum.dim_IntList",
        args=[ref(3), ints(0), pb.Value(bool_value=True)],
        kwargs=[pb.NamedValue(name="dtype", value=pb.Value(dtype=pb.FLOAT64))]),
        outputs=[7]))
    # An op whose second result is unused (-1).
    plan.steps.append(pb.Step(extern_call=pb.ExternCall(target="aten::max.dim", args=[ref(3), pb.Value(int_value=0)]),
                              outputs=[-1, -1]))
    plan.outputs.extend([ref(3), ref(4), ref(5), ref(6), ref(7), pb.Value(none=True), pb.Value(int_value=7),
                         ref(0)])
    loaded = load_plan(plan, {})
    assert loaded.num_extern == 6 and loaded.num_native == 0
    args = [x, w]
    out = loaded(args)
    assert args == [], "boxed convention: the plan takes the inputs"
    torch.testing.assert_close(out[0], relu, rtol=0, atol=0)
    torch.testing.assert_close(out[1], mx, rtol=0, atol=0)
    assert torch.equal(out[2], arg)
    torch.testing.assert_close(out[3], cat, rtol=0, atol=0)
    assert out[4].dtype == torch.float64
    torch.testing.assert_close(out[4], s)
    assert out[5] is None and out[6] == 7
    assert out[7] is x


def _real_inputs(example_inputs, seed=0):
    gen = torch.Generator().manual_seed(seed)
    real = []
    for fake in example_inputs:
        t = torch.empty_strided(fake.shape, fake.stride(), dtype=fake.dtype)
        if fake.dtype.is_floating_point:
            t.copy_(torch.rand(fake.shape, generator=gen) + 0.5)  # positive: fine for variances
        else:
            t.zero_()  # e.g. max-pool indices: 0 is always a valid index
        real.append(t)
    return real


@pytest.mark.parametrize("model_cls,shape", [(MLP, (8, 16)), (SmallCNN, (2, 3, 16, 16))])
def test_encoded_aot_graphs_run_as_extern_plans(model_cls, shape):
    """serialize -> (all-extern plan, as the daemon builds it with fusion off) -> runtime
    reproduces the FX graph bit for bit: the encoding and decoding agree on every argument."""
    torch.manual_seed(0)
    graphs = capture_aot_graphs(model_cls(), torch.randn(*shape), backward=True)
    assert [k for k, _, _ in graphs] == ["forward", "backward"]
    for kind, gm, example_inputs in graphs:
        graph, _ = encode_graph(gm)
        plan = graph_to_extern_plan(graph)
        inputs = _real_inputs(example_inputs)
        expected = gm(*[t.clone() for t in inputs])
        got = load_plan(plan, {}, kind)([t.clone() for t in inputs])
        assert len(got) == len(expected)
        for i, (e, g) in enumerate(zip(expected, got)):
            if e is None:
                assert g is None
            else:
                assert torch.equal(e, g), f"{kind} output {i}"


def _sym_meta(sizes, strides):
    def dim(d):
        return pb.Dim(expr=d) if isinstance(d, str) else pb.Dim(value=d)

    return pb.TensorMeta(sizes=[dim(d) for d in sizes], strides=[dim(d) for d in strides],
                         dtype=pb.FLOAT32, device=pb.Device(type=pb.CPU, index=-1))


def test_symbolic_plan_binds_sizes_at_every_call():
    """x: [s0, 3] -> view(relu(x), [3*s0]) and the scalar 3*s0 + s1 (s1 given by the caller):
    one loaded plan serves every size."""
    plan = pb.Plan(num_inputs=1, values=[_sym_meta(["s0", 3], [3, 1]), _sym_meta(["s0", 3], [3, 1]),
                                         _sym_meta(["(3*s0)"], [1])])
    plan.steps.append(pb.Step(extern_call=pb.ExternCall(target="aten::relu.default", args=[ref(0)]),
                              outputs=[1], release=[0]))
    view_shape = pb.Value(list=pb.ValueList(items=[pb.Value(sym_expr="(3*s0)")]))
    plan.steps.append(pb.Step(extern_call=pb.ExternCall(target="aten::view.default", args=[ref(1), view_shape]),
                              outputs=[2], release=[1]))
    plan.outputs.extend([ref(2), pb.Value(sym_expr="((3*s0) + s1)")])
    loaded = load_plan(plan, {})
    assert loaded.symbolic
    for n in (2, 5, 17):
        x = torch.randn(n, 3)
        out, scalar = loaded([x.clone()], {"s1": 4})
        assert torch.equal(out, torch.relu(x).view(-1))
        assert scalar == 3 * n + 4


def test_symbolic_plan_refuses_expressions_outside_the_grammar():
    bad = pb.Plan(num_inputs=1, values=[_sym_meta(["s0"], [1])])
    bad.outputs.append(pb.Value(sym_expr="__import__('os').getpid()"))
    with pytest.raises(ArtifactError, match="not allowed"):
        load_plan(bad, {})


def test_symbolic_plan_with_segments_or_unknown_native_abi_is_rejected_at_load():
    plan = pb.Plan(num_inputs=1, values=[_sym_meta(["s0"], [1]), _sym_meta(["s0"], [1])])
    plan.steps.append(pb.Step(segment=pb.NativeSegment(artifact="k.so", symbol="f", inputs=[0]), outputs=[1]))
    with pytest.raises(ArtifactError, match="a symbolic plan has a segment step"):
        LoadedPlan(plan, {})
    plan.steps[0].Clear()
    plan.steps[0].native.CopyFrom(pb.NativeCall(artifact="k.so", symbol="f", abi="tccd-cpu-2", inputs=[0]))
    plan.steps[0].outputs.append(1)
    with pytest.raises(ArtifactError, match="native ABI 'tccd-cpu-2' in a symbolic plan"):
        LoadedPlan(plan, {"k.so": None})


def test_plan_with_dangling_ids_is_rejected_at_load():
    x = torch.randn(2)
    plan = pb.Plan(num_inputs=1, values=[meta(x)])
    plan.steps.append(pb.Step(extern_call=pb.ExternCall(target="aten::relu.default", args=[ref(0)]), outputs=[5]))
    with pytest.raises(ArtifactError):
        load_plan(plan, {})


# ---------------------------------------------------------------------------------------------
# A native step, with a C kernel implementing the tccd-cpu-1 ABI
# ---------------------------------------------------------------------------------------------

KERNEL_C = r"""
#include <stdint.h>
/* tccd-cpu-sym-1: the same over [shape[0], 3] (rows at run time). */
void k_add_relu_sym(void* const* data, const int64_t* strides, const int64_t* shape) {
  const float* a = (const float*)data[0];
  const float* b = (const float*)data[1];
  float* out = (float*)data[2];
  const int64_t* sa = strides + 0;
  const int64_t* sb = strides + 2;
  const int64_t* so = strides + 4;
  for (int64_t i = 0; i < shape[0]; ++i)
    for (int64_t j = 0; j < shape[1]; ++j) {
      float v = a[i * sa[0] + j * sa[1]] + b[i * sb[0] + j * sb[1]];
      out[i * so[0] + j * so[1]] = (v > 0 ? v : 0) * 2;
    }
}
/* out[i,j] = relu(a[i,j] + b[i,j]) * 2 over the iteration space [4, 3]. */
void k_add_relu(void* const* data, const int64_t* strides) {
  const float* a = (const float*)data[0];
  const float* b = (const float*)data[1];
  float* out = (float*)data[2];
  const int64_t* sa = strides + 0;
  const int64_t* sb = strides + 2;
  const int64_t* so = strides + 4;
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 3; ++j) {
      float v = a[i * sa[0] + j * sa[1]] + b[i * sb[0] + j * sb[1]];
      out[i * so[0] + j * so[1]] = (v > 0 ? v : 0) * 2;
    }
}
"""


@pytest.fixture(scope="module")
def kernel_so(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler to build the test kernel")
    d = tmp_path_factory.mktemp("kernel")
    src = d / "k.c"
    src.write_text(KERNEL_C)
    so = d / "k.so"
    subprocess.run([cc, "-O1", "-shared", "-fPIC", "-o", str(so), str(src)], check=True)
    return str(so)


def _native_plan(a_meta, b_meta):
    out_meta = meta(torch.empty(4, 3))
    call = pb.NativeCall(
        artifact="kernels.so", symbol="k_add_relu", abi="tccd-cpu-1", shape=[4, 3], inputs=[0, 1],
        kernels=[pb.KernelInfo(name="k_add_relu", kind="cpu_pointwise_loop",
                               ops=["aten::add.Tensor", "aten::relu.default", "aten::mul.Tensor"])],
        # a contiguous [4,3]; b a [3] row broadcast over dim 0; out contiguous.
        expected_strides=[3, 1, 0, 1, 3, 1],
    )
    plan = pb.Plan(num_inputs=2, values=[a_meta, b_meta, out_meta])
    plan.steps.append(pb.Step(native=call, outputs=[2], release=[0, 1]))
    plan.outputs.append(ref(2))
    return plan


def test_symbolic_native_step_takes_the_sizes_of_each_call(kernel_so):
    """A kernel with run-time sizes in a symbolic plan (codegen/symbolic_kernels.h): sizes from
    the output's meta evaluated at each call, strides from the tensors (b broadcast)."""
    plan = pb.Plan(num_inputs=2, values=[_sym_meta(["s0", 3], [3, 1]), _sym_meta([3], [1]),
                                         _sym_meta(["s0", 3], [3, 1])])
    call = pb.NativeCall(artifact="kernels.so", symbol="k_add_relu_sym", abi="tccd-cpu-sym-1", shape=[-1, 3],
                         inputs=[0, 1], kernels=[pb.KernelInfo(name="k_add_relu_sym", kind="cpu_pointwise_loop")])
    plan.steps.append(pb.Step(native=call, outputs=[2], release=[0, 1]))
    plan.outputs.append(ref(2))
    loaded = load_plan(plan, {"kernels.so": kernel_so})
    assert loaded.symbolic and loaded.num_native == 1 and loaded.num_extern == 0
    for rows in (1, 5, 2, 17):
        a = torch.randn(rows, 3)
        b = torch.randn(3)
        (out,) = loaded([a, b])
        assert out.shape == (rows, 3)
        torch.testing.assert_close(out, torch.relu(a + b) * 2, rtol=0, atol=0)
    a = torch.randn(3, 6).t()  # [6, 3], transposed layout
    b = torch.randn(3)
    (out,) = loaded([a, b])
    torch.testing.assert_close(out, torch.relu(a + b) * 2, rtol=0, atol=0)
    with pytest.raises(RuntimeError, match="does not broadcast"):
        loaded([torch.randn(4, 3), torch.randn(2)])


def test_native_step_with_declared_strides(kernel_so):
    a = torch.randn(4, 3)
    b = torch.randn(3)
    loaded = load_plan(_native_plan(meta(a), meta(b)), {"kernels.so": kernel_so})
    assert loaded.num_native == 1 and loaded.num_fused_kernels == 1
    (out,) = loaded([a, b])
    torch.testing.assert_close(out, torch.relu(a + b) * 2, rtol=0, atol=0)
    assert out.stride() == (3, 1)


def test_native_step_recomputes_strides_for_other_layouts(kernel_so):
    a_decl = torch.randn(4, 3)
    b = torch.randn(3)
    loaded = load_plan(_native_plan(meta(a_decl), meta(b)), {"kernels.so": kernel_so})
    a = torch.randn(3, 4).t()  # same shape, transposed layout
    b_strided = torch.randn(6)[::2]  # stride 2
    (out,) = loaded([a, b_strided])
    torch.testing.assert_close(out, torch.relu(a + b_strided) * 2, rtol=0, atol=0)


def test_native_step_rejects_wrong_shape_or_dtype(kernel_so):
    loaded = load_plan(_native_plan(meta(torch.randn(4, 3)), meta(torch.randn(3))), {"kernels.so": kernel_so})
    with pytest.raises(RuntimeError, match="compiled for"):
        loaded([torch.randn(5, 3), torch.randn(3)])
    with pytest.raises(RuntimeError, match="float64"):
        loaded([torch.randn(4, 3, dtype=torch.float64), torch.randn(3)])


def test_missing_symbol_or_artifact_is_an_artifact_error(kernel_so):
    plan = _native_plan(meta(torch.randn(4, 3)), meta(torch.randn(3)))
    with pytest.raises(ArtifactError, match="not fetched"):
        load_plan(plan, {})
    plan.steps[0].native.symbol = "nope"
    with pytest.raises(ArtifactError, match="no symbol"):
        load_plan(plan, {"kernels.so": kernel_so})
