"""aot_graph_text (TCCD_SKIP_AOT_GRAPH_TEXT): AOTAutograd renders no graph text inside tccd's
compiles unless a log or the structured trace reads it; everywhere else as before."""

import pytest
import torch
from functorch.compile import make_boxed_func
from torch._dynamo.backends.common import aot_autograd

from tccd import aot_graph_text


def _step(x, w):
    return (torch.tanh(x @ w) * 2).sum()


@pytest.fixture
def rendered(monkeypatch):
    """How many graphs print_readable rendered (what AOTAutograd's helpers call). The structured
    trace log without readers, as in a process without TORCH_TRACE (pytest's capture adds its
    handlers to every logger)."""
    from torch._logging import _internal

    import logging

    # Not registered with logging's manager, so that pytest's capture cannot add handlers to it.
    quiet = logging.Logger("tccd-test-structured-trace")
    quiet.propagate = False
    monkeypatch.setattr(_internal, "trace_log", quiet)
    calls = []
    original = torch.fx.GraphModule.print_readable

    def counting(self, *args, **kwargs):
        calls.append(type(self).__name__)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(torch.fx.GraphModule, "print_readable", counting)
    yield calls
    aot_graph_text.uninstall()


def _train_step(skip):
    inner = aot_autograd(fw_compiler=lambda gm, ex: make_boxed_func(gm.forward))

    def backend(gm, example_inputs):
        with aot_graph_text.skipping(skip):
            return inner(gm, example_inputs)

    x, w = torch.randn(4, 8), torch.randn(8, 8, requires_grad=True)
    torch._dynamo.reset()
    loss = torch.compile(_step, backend=backend)(x, w)
    loss.backward()
    torch.testing.assert_close(loss, _step(x, w))
    return w.grad


def test_no_graph_text_inside_a_skipping_compile(rendered):
    grad = _train_step(True)
    assert rendered == [], rendered
    assert grad is not None


def test_rendered_when_off_or_outside(rendered):
    _train_step(False)
    assert len(rendered) >= 3, rendered  # joint, forward, backward
    rendered.clear()
    aot_graph_text.install()
    inner = aot_autograd(fw_compiler=lambda gm, ex: make_boxed_func(gm.forward))  # another backend
    torch._dynamo.reset()
    torch.compile(_step, backend=inner)(torch.randn(4, 8), torch.randn(8, 8, requires_grad=True)).backward()
    assert len(rendered) >= 3, rendered


def test_rendered_when_the_structured_trace_reads_it(rendered):
    import logging

    from torch._logging import _internal

    _internal.trace_log.handlers.append(logging.NullHandler())
    _train_step(True)
    assert len(rendered) >= 3, rendered


def test_rendered_when_a_log_reads_it(rendered):
    torch._logging.set_logs(aot_graphs=True)
    try:
        _train_step(True)
    finally:
        torch._logging.set_logs()
    assert len(rendered) >= 2, rendered  # forward and backward for the aot_graphs log


def test_a_lazy_trace_handler_without_a_directory_reads_nothing(monkeypatch):
    import logging

    from torch._logging import _internal

    trace = logging.Logger("tccd-test-structured-trace-2")
    monkeypatch.setattr(_internal, "trace_log", trace)
    assert not aot_graph_text._text_wanted()
    trace.addHandler(_internal.LazyTraceHandler(None))  # what torch keeps until its first record
    assert not aot_graph_text._text_wanted()
    trace.addHandler(_internal.LazyTraceHandler("/tmp/some-trace-dir"))  # TORCH_TRACE
    assert aot_graph_text._text_wanted()
