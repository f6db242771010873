"""End to end, CPU: a symbolic graph's position embedding gathered at its reader's shape
(codegen/symbolic_rewrites.h, "symbolic-embeddings-to-reader-shape") matches eager at every size.

On CUDA the rewrite lets the bench's position embedding, [T, E] added to the token embedding at
[B, T, E], join the first layer norm's row kernel with the token embedding (symbolic row
gathers, symbolic_kernels.h; the kernel itself: the golden corpus's
embedding_pair_layer_norm_rows*_sym, run on the host by tests/codegen/cuda/host_emulation/run.sh,
and test_gpu_dynamic_embeddings.py on a GPU). The CPU has no row kernels; a daemon started with
TCCD_SYMBOLIC_REWRITES_ON_CPU=1 (tests only) rewrites CPU graphs too, so the rewritten forward
(the ids expanded over the batch by a view with a symbolic size, the gather an index kernel at
[B, T, E]) trains here against eager over several batch sizes and sequence lengths, forward and
gradients, with the knob on and off (TCCD_DISABLE_PASSES=symbolic-embeddings-to-reader-shape:
the position embedding's kernel at [T, E]).
"""

import pytest
import torch

import tccd
from test_e2e_dynamic_rewrites import rewriting_daemon  # noqa: F401 (a fixture; `disabled` picks the knob)
from test_e2e_dynamic_shapes import Block, train_ids_against_eager

KNOB = "symbolic-embeddings-to-reader-shape"
EMBEDDING = "aten::embedding.default"


@pytest.mark.parametrize("disabled", ["", KNOB])
def test_position_embedding_at_the_readers_shape_matches_eager(rewriting_daemon, disabled):
    import torch._dynamo

    torch._dynamo.reset()
    torch.manual_seed(0)
    model = Block(16)
    train_ids_against_eager(model, [(3, 12), (2, 7), (5, 20), (4, 5), (2, 31), (6, 9)], 300)
    stats = tccd.last_compile_stats()
    assert all(s["fallback"] is None for s in stats), stats
    forwards = [s for s in stats if s["kind"] == "forward"]
    assert len(forwards) == 1, [s["name"] for s in stats]
    assert forwards[0]["python_steps"] == 0, forwards[0].get("python_step_reasons")
    # The two embeddings' gather kernels: both at [B, T, E] with the rewrite, the position
    # embedding at [T, E] without it.
    ranks = sorted(len(k["shape"]) for k in forwards[0]["kernels"] if k["ops"] == [EMBEDDING])
    assert ranks == ([2, 3] if disabled else [3, 3]), forwards[0]["kernels"]
