"""once_logs.py (TCCD_TRACE_ONCE_LOGS): a once-per-process logger call inside a compiled region
runs while Dynamo traces instead of breaking the graph; the message prints once, as eagerly.
No daemon: Dynamo's no-op backend traces the same frames tccd's would."""

import functools
import logging

import pytest
import torch

from tccd import once_logs


class _OnceLogger(logging.Logger):
    """transformers' warning_once (transformers/utils/logging.py), without transformers."""

    @functools.lru_cache(None)
    def warning_once(self, *args):
        self.warning(*args)


class _Records(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


LOG = _OnceLogger("tccd-test-once-logs")
RECORDS = _Records()
LOG.addHandler(RECORDS)
LOG.propagate = False


class _Model(torch.nn.Module):
    """The call sits in a property the forward reads, as GPT-2's loss_type warning does: a break
    there (inside an inlined call) restarts the frame's analysis."""

    def __init__(self, message):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.message = message

    @property
    def loss_fn(self):
        LOG.warning_once(self.message)
        return torch.nn.functional.mse_loss

    def forward(self, x):
        return self.loss_fn(self.lin(x).relu(), x)


class _NotConstant(torch.nn.Module):
    def forward(self, x):
        y = x.sin()
        LOG.warning_once("sum %s", y.sum())  # a tensor argument: Dynamo's own handling
        return y.cos()


def _counters():
    from torch._dynamo.utils import counters

    return int(counters["stats"]["unique_graphs"]), sum(counters["graph_break"].values())


@pytest.fixture
def patched():
    torch._dynamo.reset()
    RECORDS.messages.clear()
    assert once_logs.install()
    yield
    once_logs.uninstall()
    torch._dynamo.reset()


def test_a_once_log_in_an_inlined_call_neither_breaks_the_graph_nor_is_lost(patched):
    from torch._dynamo.utils import counters

    counters.clear()
    model = _Model("patched message")
    compiled = torch.compile(model, backend="eager")
    x = torch.randn(2, 4)
    for _ in range(3):
        torch.testing.assert_close(compiled(x), model(x))
    assert _counters() == (1, 0)
    assert RECORDS.messages == ["patched message"]  # once: at the trace, as at an eager first call


def test_without_the_patch_dynamo_breaks_the_graph_there():
    from torch._dynamo.utils import counters

    once_logs.uninstall()
    torch._dynamo.reset()
    counters.clear()
    RECORDS.messages.clear()
    model = _Model("unpatched message")
    compiled = torch.compile(model, backend="eager")
    x = torch.randn(2, 4)
    for _ in range(2):
        torch.testing.assert_close(compiled(x), model(x))
    assert _counters()[1] > 0
    assert RECORDS.messages == ["unpatched message"]
    torch._dynamo.reset()


def test_a_once_log_of_a_tensor_keeps_dynamos_handling(patched):
    from torch._dynamo.utils import counters

    counters.clear()
    compiled = torch.compile(_NotConstant(), backend="eager")
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x), x.sin().cos())
    assert _counters()[1] > 0  # a graph break, as without the patch
    assert len(RECORDS.messages) == 1


def test_the_backend_installs_it_unless_the_knob_is_off(monkeypatch):
    from tccd import backend, config

    once_logs.uninstall()
    monkeypatch.setenv("TCCD_TRACE_ONCE_LOGS", "0")
    config.reload()
    backend._install_once_logs()
    assert not once_logs._installed
    monkeypatch.setenv("TCCD_TRACE_ONCE_LOGS", "1")
    config.reload()
    backend._install_once_logs()
    assert once_logs._installed
    once_logs.uninstall()
