"""End to end, CPU: the graph rewrites of symbolic CUDA graphs (codegen/symbolic_rewrites.h) match
eager at every size.

On CUDA a symbolic graph's layer norm backwards are split into their row half and their
parameter half (row and column kernels with run-time rows), its embedding gradients become
scatter_add over f32 (ATen's one atomic kernel instead of its sort) and its splits slice views. The CPU target keeps ATen's
ops; a daemon started with TCCD_SYMBOLIC_REWRITES_ON_CPU=1 (tests only) rewrites CPU graphs too,
so the rewritten graphs (their symbolic metas, the remapped refs, the placeholders of the split
halves, the flat views and casts, the qkv slices) run here against eager over several batch sizes and sequence
lengths, forward and backward. The backward's kernels show the embedding rewrite happened (its
f32 casts are kernels); the layer norm halves stay ATen steps on the CPU. The position
embedding's batch sum is folded into its gradient (symbolic-embedding-sum-fold) and the weights'
t(t(W)) read as W (symbolic-double-transposes): each knob off adds its extern steps back.
The CUDA kernels themselves are checked on the GPU (test_gpu_dynamic_rows.py's "block" model).
"""

import shutil

import pytest
import torch

import tccd
from tccd import config
from conftest import TCCD_BINARY, Daemon, short_tempdir
from test_e2e_dynamic_shapes import Block, train_ids_against_eager


@pytest.fixture
def rewriting_daemon(monkeypatch, tmp_path, request):
    if not TCCD_BINARY.exists():
        pytest.skip(f"tccd binary not found at {TCCD_BINARY}")
    monkeypatch.setenv("TCCD_SYMBOLIC_REWRITES_ON_CPU", "1")
    # `disabled`: a rewrite turned off (its knob), e.g. the position embedding's batch sum kept.
    disabled = request.node.callspec.params.get("disabled", "") if getattr(request.node, "callspec", None) else ""
    if disabled:
        monkeypatch.setenv("TCCD_DISABLE_PASSES", disabled)
    else:
        monkeypatch.delenv("TCCD_DISABLE_PASSES", raising=False)
    root = short_tempdir("tccd-dynrw-")
    d = Daemon(TCCD_BINARY, root)
    d.start()
    monkeypatch.setenv("TCCD_ADDRESS", d.address)
    monkeypatch.setenv("TCCD_NO_AUTOSTART", "1")
    monkeypatch.setenv("TCCD_CACHE_DIR", str(tmp_path / "client-cache"))
    monkeypatch.setenv("TCCD_AOT_SHARE", "0")
    config.reload()
    tccd.reset_compile_stats()
    yield d
    try:
        if d.alive():
            assert d.stop() == 0, d.log_tail()
    finally:
        shutil.rmtree(root, ignore_errors=True)


_EXTERN_STEPS = {}  # (padding_idx, disabled) -> the backward plan's extern steps
# Extern steps each knob adds back to the block's backward: the batch sum (and its view, for the
# positions' expand); the four weights' t(t(W)) pairs.
_KNOB_STEPS = {"symbolic-embedding-sum-fold": 1, "symbolic-double-transposes": 8}


@pytest.mark.parametrize("disabled", ["", *_KNOB_STEPS])
@pytest.mark.parametrize("padding_idx", [None, 0])
def test_rewritten_block_matches_eager_at_every_size(rewriting_daemon, padding_idx, disabled):
    import torch._dynamo

    torch._dynamo.reset()
    torch.manual_seed(0)
    model = Block(16)
    if padding_idx is not None:
        # With a padding_idx the embedding gradient stays ATen's (index_add would add the
        # padding row's gradient); the layer norms are split all the same.
        model.embed.padding_idx = padding_idx
    train_ids_against_eager(model, [(3, 12), (2, 7), (5, 20), (4, 5), (2, 31), (6, 9)], 200)
    stats = tccd.last_compile_stats()
    assert all(s["fallback"] is None for s in stats), stats
    backwards = [s for s in stats if s["kind"] == "backward"]
    assert len(backwards) == 1, [s["name"] for s in stats]
    # The whole plans run natively: the new extern steps (slices, views, scatter_add, new_zeros)
    # have arguments the native runtime's dispatcher ABI carries.
    for s in stats:
        assert s["python_steps"] == 0, (s["name"], s.get("python_step_reasons"))
    # The embedding gradients' f32 casts are kernels of the backward (the f32 model's casts are
    # copies): one per rewritten embedding backward, the token one only without a padding_idx.
    # (Both cast the same gradient since the position embedding's batch sum is folded
    # (symbolic-embedding-sum-fold): one kernel may hold both.)
    casts = [op for k in backwards[0]["kernels"] for op in k["ops"] if op == "aten::_to_copy.default"]
    assert len(casts) == (2 if padding_idx is None else 1), backwards[0]["kernels"]
    # Each rewrite's extern steps fewer (checked against the all-on arm of the padding_idx).
    _EXTERN_STEPS[(padding_idx, disabled)] = backwards[0]["extern_steps"]
    if disabled and (padding_idx, "") in _EXTERN_STEPS:
        assert (_EXTERN_STEPS[(padding_idx, disabled)] - _EXTERN_STEPS[(padding_idx, "")]
                == _KNOB_STEPS[disabled]), _EXTERN_STEPS
    print(f"\npadding_idx={padding_idx} disabled={disabled or '-'}: backward {backwards[0]['native_kernels']} kernels, "
          f"{backwards[0]['extern_steps']} extern steps")
