"""End to end against the real daemon: kept input mutations (batch norm's running statistics and
num_batches_tracked, a buffer's running mean and count) are written by the step that computes
them, into the buffers, with no copy_ step left in the plan (codegen/passes/
mutations_into_producers.h, batch_norm_stats_in_place.h). The buffers match eager after several
training steps, run by the native plan runtime and by the Python interpreter; where the old
value is still read after the new one is computed, the copy stays and the results still match."""

import copy

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import tccd

MODES = {"native": "1", "interpreter": "0"}
COPY = "aten::copy_.default"


@pytest.fixture(params=sorted(MODES))
def mode(request, daemon_env, monkeypatch):
    monkeypatch.setenv("TCCD_NATIVE_RUNTIME", MODES[request.param])
    from tccd import config

    config.reload()
    return request.param


def _extern_targets(plans):
    return [s.extern_call.target for p in plans for s in p.steps if s.WhichOneof("kind") == "extern_call"]


def _written_in_place(plans):
    return sum(k >= 0 for p in plans for s in p.steps for k in s.write_into)


class BnNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8)
        self.c2, self.b2 = nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8)
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        h = torch.relu(self.b1(self.c1(x)))
        h = torch.relu(h + self.b2(self.c2(h)))
        return self.head(h.mean(dim=(2, 3)))


def test_batch_norm_training_updates_its_buffers_without_copies(mode, plans):
    torch.manual_seed(0)
    eager = BnNet()
    compiled = copy.deepcopy(eager)
    step = torch.compile(compiled, backend="tccd")
    opts = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (eager, compiled)]
    tccd.reset_compile_stats()
    g = torch.Generator().manual_seed(1)
    for _ in range(4):
        x, y = torch.randn(4, 3, 8, 8, generator=g), torch.randint(0, 4, (4,), generator=g)
        for fn, opt in zip((eager, step), opts):
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(fn(x), y).backward()
            opt.step()
    for (name, want), have in zip(eager.state_dict().items(), compiled.state_dict().values()):
        torch.testing.assert_close(have, want, rtol=1e-4, atol=1e-5, msg=name)
    assert int(compiled.b1.num_batches_tracked) == int(compiled.b2.num_batches_tracked) == 4
    stats = tccd.last_compile_stats()
    assert stats and all(s["fallback"] is None for s in stats), stats
    if mode == "native":
        assert all(s["python_steps"] == 0 for s in stats), stats
    targets = _extern_targets(plans)
    # The norms update running_mean / running_var themselves; num_batches_tracked + 1 is written
    # by its kernel; no copy_ is left (six per step before).
    assert COPY not in targets, targets
    assert targets.count("aten::_native_batch_norm_legit.default") == 2, targets
    assert _written_in_place(plans) == 2


class RunningMean(nn.Module):
    """Buffers updated in place, as batch norm's running statistics are; with `read_old`, the
    old mean is also read after the new one is computed (the copy must stay)."""

    def __init__(self, read_old=False):
        super().__init__()
        self.read_old = read_old
        self.register_buffer("mean", torch.zeros(5))
        self.register_buffer("count", torch.zeros((), dtype=torch.int64))

    def forward(self, x):
        new = self.mean * 0.9 + x.mean(0) * 0.1
        out = (x - self.mean) * 2.0 if self.read_old else None
        self.mean.copy_(new)
        self.count.add_(1)
        return out if self.read_old else x - self.mean


@pytest.mark.parametrize("read_old", [False, True], ids=["new-only", "old-read-after"])
def test_buffer_updates_are_written_by_their_kernels(mode, plans, read_old):
    eager, compiled = RunningMean(read_old), RunningMean(read_old)
    step = torch.compile(compiled, backend="tccd")
    tccd.reset_compile_stats()
    for _ in range(3):
        x = torch.randn(8, 5)
        torch.testing.assert_close(step(x), eager(x), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(compiled.mean, eager.mean, rtol=1e-6, atol=1e-6)
    assert int(compiled.count) == 3
    (stats,) = tccd.last_compile_stats()
    assert stats["fallback"] is None, stats
    copies = _extern_targets(plans).count(COPY)
    if read_old:
        # (x - old mean) may be computed after the new mean: then that copy stays.
        assert copies + _written_in_place(plans) == 2
    else:
        assert copies == 0 and _written_in_place(plans) == 2, [p for p in plans]
