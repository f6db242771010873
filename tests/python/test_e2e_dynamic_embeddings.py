"""End to end, CPU: embeddings of symbolic graphs as gather kernels with run-time sizes
(SymbolicKernelOptions::embeddings, codegen/symbolic_kernels.h) match eager at every size.

An `aten::embedding` whose table is static is an index kernel of its own in a symbolic plan: it
reads the indices and the table by gather with their own strides (NativeCall.gather_inputs,
descriptor layout TCCD_LAYOUT_OWN_GATHER), its coordinates from the call's sizes. The CPU
backend builds the same kernels as CUDA (its loop nest takes run-time sizes), so the plan's
gather operands, the runtime's stride rows and the kernel's bounds check run here over several
batch sizes and sequence lengths, in the native runtime and in the Python interpreter.
`TCCD_DISABLE_PASSES=symbolic-embedding-kernels` keeps them ATen steps. A cat along a static dim
is such an index kernel too (SymbolicKernelOptions::cats; `symbolic-cat-kernels`), and so is the
position ids' arange (SymbolicKernelOptions::aranges; `symbolic-arange-kernels`). The CUDA
kernels are checked on a GPU by test_gpu_dynamic_embeddings.py.
"""

import copy
import shutil

import pytest
import torch

import tccd
from tccd import config
from conftest import TCCD_BINARY, Daemon, short_tempdir
from test_e2e_dynamic_shapes import ATOL, RTOL, Block, train_ids_against_eager

EMBEDDING = "aten::embedding.default"
ARANGE = "aten::arange.default"
SIZES = [(3, 12), (2, 7), (5, 20), (4, 5), (7, 31), (6, 9)]


@pytest.fixture
def make_daemon(monkeypatch, tmp_path):
    """Starts a daemon of its own with TCCD_DISABLE_PASSES set as asked."""
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    started = []

    def start(disabled: str):
        if disabled:
            monkeypatch.setenv("TCCD_DISABLE_PASSES", disabled)
        else:
            monkeypatch.delenv("TCCD_DISABLE_PASSES", raising=False)
        root = short_tempdir("tccd-dynemb-")
        d = Daemon(TCCD_BINARY, root)
        d.start()
        started.append((d, root))
        monkeypatch.setenv("TCCD_ADDRESS", d.address)
        monkeypatch.setenv("TCCD_NO_AUTOSTART", "1")
        monkeypatch.setenv("TCCD_CACHE_DIR", str(tmp_path / "client-cache"))
        monkeypatch.setenv("TCCD_AOT_SHARE", "0")
        config.reload()
        tccd.reset_compile_stats()
        return d

    yield start
    for d, root in started:
        try:
            if d.alive():
                assert d.stop() == 0, d.log_tail()
        finally:
            shutil.rmtree(root, ignore_errors=True)
    config.reload()


def _train_over_sizes(model):
    import torch._dynamo

    torch._dynamo.reset()
    train_ids_against_eager(model, SIZES, 300, column_major_step=2)
    stats = tccd.last_compile_stats()
    assert all(s["fallback"] is None for s in stats), stats
    forwards = [s for s in stats if s["kind"] == "forward"]
    # One dynamic graph (Dynamo may add one for the column-major indices' strides).
    assert 1 <= len(forwards) <= 2, [s["name"] for s in stats]
    return forwards[0]


def _embedding_kernels(s):
    return [k for k in s["kernels"] if EMBEDDING in k["ops"]]


@pytest.mark.parametrize("native_runtime", ["1", "0"])
def test_embeddings_are_gather_kernels_and_match_eager(make_daemon, monkeypatch, native_runtime):
    monkeypatch.setenv("TCCD_NATIVE_RUNTIME", native_runtime)
    make_daemon("")
    torch.manual_seed(0)
    forward = _train_over_sizes(Block(16))
    # The token and the position embeddings, each a kernel of its own (the position add stays
    # the kernel it was).
    kernels = _embedding_kernels(forward)
    assert len(kernels) == 2, forward["kernels"]
    assert all(k["ops"] == [EMBEDDING] for k in kernels), kernels
    # The position ids, arange(T), are a kernel of their own too (symbolic-arange-kernels).
    aranges = [k for k in forward["kernels"] if ARANGE in k["ops"]]
    assert len(aranges) == 1 and aranges[0]["ops"] == [ARANGE], forward["kernels"]
    if native_runtime == "1":
        assert forward["python_steps"] == 0, (forward["name"], forward.get("python_step_reasons"))
    print(f"\nnative_runtime={native_runtime}: forward {forward['native_kernels']} kernels, "
          f"{forward['extern_steps']} extern steps")


def test_knob_keeps_embeddings_extern(make_daemon):
    make_daemon("symbolic-embedding-kernels")
    torch.manual_seed(0)
    forward = _train_over_sizes(Block(16))
    assert _embedding_kernels(forward) == [], forward["kernels"]


def test_knob_keeps_aranges_extern(make_daemon):
    make_daemon("symbolic-arange-kernels")
    torch.manual_seed(0)
    forward = _train_over_sizes(Block(16))
    assert [k for k in forward["kernels"] if ARANGE in k["ops"]] == [], forward["kernels"]
    assert len(_embedding_kernels(forward)) == 2, forward["kernels"]


class CatMLP(torch.nn.Module):
    """Linear, then a cat of two of its functions along the static feature dim."""

    def __init__(self, d: int):
        super().__init__()
        self.fc = torch.nn.Linear(d, d)
        self.out = torch.nn.Linear(3 * d, 2)

    def forward(self, x):
        h = self.fc(x)
        return self.out(torch.cat([torch.tanh(h), h * 2, torch.sigmoid(h)], dim=-1))


@pytest.mark.parametrize("disabled,native_runtime", [("", "1"), ("", "0"), ("symbolic-cat-kernels", "1")])
def test_cat_along_a_static_dim_is_a_kernel_and_matches_eager(make_daemon, monkeypatch, disabled, native_runtime):
    """A cat along a static dim (symbolic_kernels.h, SymbolicKernelOptions::cats): an index kernel
    with run-time rows, in the native runtime and the interpreter; the knob keeps ATen's cat. All
    match eager at every size."""
    import torch._dynamo

    monkeypatch.setenv("TCCD_NATIVE_RUNTIME", native_runtime)
    make_daemon(disabled)
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = CatMLP(8)
    eager = copy.deepcopy(model)
    compiled = torch.compile(model, backend="tccd", dynamic=True)
    for step, rows in enumerate([5, 9, 3, 17, 6]):
        x = torch.randn(rows, 8, generator=torch.Generator().manual_seed(700 + step))
        out = compiled(x)
        expected = eager(x)
        torch.testing.assert_close(out, expected, rtol=RTOL, atol=ATOL, msg=f"forward at {rows}")
        out.sum().backward()
        expected.sum().backward()
        for (name, p), q in zip(model.named_parameters(), eager.parameters()):
            torch.testing.assert_close(p.grad, q.grad, rtol=RTOL, atol=ATOL, msg=f"grad {name} at {rows}")
            p.grad = None
            q.grad = None
    stats = tccd.last_compile_stats()
    assert all(s["fallback"] is None for s in stats), stats
    forward = [s for s in stats if s["kind"] == "forward"][0]
    cats = [k for k in forward["kernels"] if "aten::cat.default" in k["ops"]]
    assert len(cats) == (0 if disabled else 1), forward["kernels"]
    if native_runtime == "1":
        assert forward["python_steps"] == 0, forward.get("python_step_reasons")
