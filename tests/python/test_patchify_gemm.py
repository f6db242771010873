"""Patchify convolutions as matmuls (decompositions.py, TCCD_PATCHIFY_GEMM).

The decompositions against ATen's convolution and its backward (direct calls, every layout and
bias case, and the convolutions they must leave alone), then end to end through a daemon of its
own on the CPU with TCCD_PATCHIFY_GEMM=all (cuda leaves CPU graphs as they are; the default is 0):
the compiled training step equals eager's and its plans run no convolution as an extern step.
"""

import pytest
import torch
import torch.nn as nn

import tccd
from tccd import decompositions
from test_e2e_aot_share import _use, own_daemon  # noqa: F401  (the fixture)

aten = torch.ops.aten


def _table(devices="all"):
    return decompositions._make_patchify(devices)


@pytest.mark.parametrize("layout", ["contiguous", "channels_last"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("kernel", [(2, 2), (4, 4), (2, 3)])
def test_the_decompositions_compute_atens_convolution_and_its_backward(layout, bias, kernel):
    torch.manual_seed(0)
    kh, kw = kernel
    fmt = torch.channels_last if layout == "channels_last" else torch.contiguous_format
    x = torch.randn(2, 5, 3 * kh, 4 * kw, dtype=torch.float64).contiguous(memory_format=fmt)
    w = torch.randn(7, 5, kh, kw, dtype=torch.float64).contiguous(memory_format=fmt)
    b = torch.randn(7, dtype=torch.float64) if bias else None
    args = ([kh, kw], [0, 0], [1, 1], False, [0, 0], 1)
    table = _table()
    want = aten.convolution.default(x, w, b, *args)
    got = table[aten.convolution.default](x, w, b, *args)
    torch.testing.assert_close(got, want)
    grad = torch.randn_like(want)
    mask = [True, True, bias]
    want_grads = aten.convolution_backward.default(grad, x, w, [7] if bias else None, *args, mask)
    got_grads = table[aten.convolution_backward.default](grad, x, w, [7] if bias else None, *args, mask)
    for g, e in zip(got_grads, want_grads):
        if e is None:
            assert g is None
        else:
            torch.testing.assert_close(g, e)
            if g.dim() == 4:  # the input's and the weight's gradients keep their layouts
                assert g.is_contiguous(memory_format=fmt), (g.stride(), e.stride())
    # Only what the mask asks for.
    only_weight = table[aten.convolution_backward.default](grad, x, w, None, *args, [False, True, False])
    assert only_weight[0] is None and only_weight[2] is None
    torch.testing.assert_close(only_weight[1], want_grads[1])


@pytest.mark.parametrize(
    "case",
    [
        dict(stride=[1, 1]),  # stride not the kernel
        dict(padding=[1, 1]),
        dict(dilation=[2, 2]),
        dict(groups=5),
        dict(transposed=True),
        dict(height=7),  # the kernel does not divide the height
        dict(kernel=1, stride=[1, 1]),  # 1x1: left to cuDNN (decompositions._patchify)
    ],
)
def test_other_convolutions_keep_atens(case):
    x = torch.randn(1, 5, case.get("height", 8), 8)
    k = case.get("kernel", 2)
    w = torch.randn(5, 1 if "groups" in case else 5, k, k)
    args = (case.get("stride", [2, 2]), case.get("padding", [0, 0]), case.get("dilation", [1, 1]),
            case.get("transposed", False), [0, 0], case.get("groups", 1))
    table = _table()
    assert table[aten.convolution.default](x, w, None, *args) is NotImplemented
    assert table[aten.convolution_backward.default](x, x, w, None, *args, [True, True, False]) is NotImplemented


def test_cuda_leaves_cpu_inputs_off_by_default_and_the_knob_is_checked(monkeypatch):
    x, w = torch.randn(1, 3, 4, 4), torch.randn(2, 3, 2, 2)
    args = ([2, 2], [0, 0], [1, 1], False, [0, 0], 1)
    assert _table("cuda")[aten.convolution.default](x, w, None, *args) is NotImplemented  # a CPU input
    assert aten.convolution.default not in decompositions.table(True, "0")
    assert aten.convolution.default in decompositions.table(True, "cuda")
    monkeypatch.setenv("TCCD_PATCHIFY_GEMM", "gpu")
    with pytest.raises(ValueError, match="TCCD_PATCHIFY_GEMM"):
        tccd.config.reload()
    monkeypatch.delenv("TCCD_PATCHIFY_GEMM")
    assert tccd.config.reload().patchify_gemm == "0"


class PatchNet(nn.Module):
    """A ConvNeXt-like stem and downsample and a ViT-like patch embedding."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 4, stride=4)
        self.down = nn.Conv2d(8, 16, 2, stride=2)
        self.mix = nn.Conv2d(16, 16, 3, padding=1)  # not a patchify one: stays ATen's
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        h = torch.relu(self.stem(x))
        h = self.mix(self.down(h))
        return self.head(h.mean((2, 3)))


def _train(backend, steps=3):
    """Losses, parameters after `steps` SGD steps, and the ATen convolutions the last step's
    forward ran (torch.profiler's aten::_convolution: the plan runtime's extern steps reach it
    through the dispatcher too)."""
    torch.manual_seed(0)
    model = PatchNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    fn = torch.compile(model, backend=backend, dynamic=False) if backend else model
    x = torch.randn(2, 3, 16, 16)
    losses = []
    for i in range(steps):
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            opt.zero_grad(set_to_none=True)
            loss = fn(x).square().mean()
            loss.backward()
            opt.step()
        losses.append(loss.detach())
    names = [e.name for e in prof.events()]
    return losses, [p.detach().clone() for p in model.parameters()], names.count("aten::_convolution")


def test_a_patchify_model_trains_as_eager_with_no_convolution_left_to_aten(own_daemon, monkeypatch, tmp_path):
    want_losses, want_params, eager_convs = _train(None)
    assert eager_convs == 3, eager_convs
    convs = {}
    for knob in ("0", "all"):
        monkeypatch.setenv("TCCD_PATCHIFY_GEMM", knob)
        _use(monkeypatch, own_daemon, tmp_path / knob)
        torch._dynamo.reset()
        tccd.reset_compile_stats()
        losses, params, convs[knob] = _train("tccd")
        for got, want in zip(losses + params, want_losses + want_params):
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
        stats = tccd.last_compile_stats()
        assert {s["kind"] for s in stats} == {"forward", "backward"}, stats
        assert not any(s["fallback"] for s in stats), stats
        assert sum(s["python_steps"] for s in stats) == 0, stats
    # Off: the three convolutions run as ATen calls; on: only the 3x3 one.
    assert convs == {"0": 3, "all": 1}, convs
