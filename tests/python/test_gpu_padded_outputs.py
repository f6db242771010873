"""GPU: an LM head with GPT-2's odd vocabulary, compiled as the zoo compiles GPT-2 (the model
under torch.compile, the loss outside it), with TCCD_PADDED_OUTPUTS=1 (the default): the logits come back as
the strided view of the padded vocabulary product (row stride 50264, no contiguous copy kernel),
the loss outside the graph reads them as they are, and training matches eager. With
TCCD_PADDED_OUTPUTS=0 the logits keep eager's contiguous strides. Inference too. tests/python/test_e2e_padded_outputs.py checks the
plans without a GPU; deploy/lm_head_bench.py times the variants.
"""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from tccd_testlib import kernel_launches

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

_VOCAB, _PADDED, _HIDDEN, _BATCH, _SEQ = 50257, 50264, 768, 2, 512
_BF16 = dict(rtol=3e-2, atol=3e-2)


class _Head(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(_HIDDEN)
        self.proj = nn.Linear(_HIDDEN, _VOCAB, bias=False)

    def forward(self, h):
        return self.proj(self.norm(h))


def _train(backend, steps=3):
    torch.manual_seed(0)
    model = _Head().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    fn = torch.compile(model, backend=backend) if backend else model
    g = torch.Generator(device="cuda").manual_seed(1)
    h = torch.randn(_BATCH, _SEQ, _HIDDEN, device="cuda", generator=g)
    y = torch.randint(0, _VOCAB, (_BATCH * _SEQ,), device="cuda", generator=g)
    strides = []

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = fn(h)
        strides.append(logits.stride())
        loss = F.cross_entropy(logits.float().view(-1, _VOCAB), y)  # the loss outside the graph
        loss.backward()
        opt.step()
        return loss.detach()

    losses = torch.stack([step() for _ in range(steps)]).cpu()
    state = {k: v.detach().float().cpu() for k, v in model.state_dict().items()}
    return losses, state, strides, step


def _tccd_clone_launches(fn) -> int:
    return sum(n for k, n in kernel_launches(fn).items() if k.startswith("tccd_") and "clone" in k)


@pytest.mark.parametrize("padded", [True, False])
def test_lm_head_logits_padded_view_matches_eager(daemon_env, monkeypatch, padded):
    from tccd import config

    monkeypatch.setenv("TCCD_PADDED_OUTPUTS", "1" if padded else "0")
    config.reload()
    eager_losses, eager_state, eager_strides, _ = _train(None)
    losses, state, strides, step = _train("tccd")
    torch.testing.assert_close(losses, eager_losses, **_BF16)
    for k in eager_state:
        torch.testing.assert_close(state[k], eager_state[k], **_BF16, msg=k)
    assert eager_strides[0] == (_SEQ * _VOCAB, _VOCAB, 1)
    expected = (_SEQ * _PADDED, _PADDED, 1) if padded else eager_strides[0]
    assert all(s == expected for s in strides), strides
    clones = _tccd_clone_launches(step)
    assert clones == 0 if padded else clones >= 1


def test_lm_head_inference_logits_padded_view_matches_eager(daemon_env, monkeypatch):
    from tccd import config

    monkeypatch.setenv("TCCD_PADDED_OUTPUTS", "1")
    config.reload()
    torch.manual_seed(0)
    model = _Head().cuda().eval()
    h = torch.randn(_BATCH, _SEQ, _HIDDEN, device="cuda")
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        expected = model(h)
        got = torch.compile(model, backend="tccd")(h)
    assert got.stride() == (_SEQ * _PADDED, _PADDED, 1)
    torch.testing.assert_close(got.float(), expected.float(), **_BF16)


class _HeadWithLoss(nn.Module):
    """BERT's masked-LM head as transformers' BertForMaskedLM runs it under torch.compile: the
    biased vocabulary projection (30522: padded to 30528) and the loss in the same graph, both
    returned."""

    def __init__(self, vocab=30522) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(_HIDDEN)
        self.proj = nn.Linear(_HIDDEN, vocab)

    def forward(self, h, labels):
        logits = self.proj(self.norm(h))
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), labels.view(-1)), logits


def test_inference_loss_reads_the_padded_logits_matches_eager(daemon_env, monkeypatch):
    # The loss reads the padded product's columns too (padded_output_views.h): no contiguous
    # [tokens, 30522] copy is made for it, and the loss and logits match eager's.
    from tccd import config

    monkeypatch.setenv("TCCD_PADDED_OUTPUTS", "1")
    config.reload()
    torch.manual_seed(0)
    model = _HeadWithLoss().cuda().eval()
    h = torch.randn(_BATCH, _SEQ, _HIDDEN, device="cuda")
    labels = torch.randint(0, 30522, (_BATCH, _SEQ), device="cuda")
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        loss, logits = model(h, labels)
        compiled = torch.compile(model, backend="tccd")
        got_loss, got_logits = compiled(h, labels)
        got_loss, got_logits = compiled(h, labels)
        kernels = kernel_launches(lambda: compiled(h, labels))
    clones = sum(n for k, n in kernels.items() if k.startswith("tccd_") and "clone" in k)
    assert got_logits.stride() == (_SEQ * 30528, 30528, 1)
    assert clones == 0
    torch.testing.assert_close(got_logits.float(), logits.float(), **_BF16)
    torch.testing.assert_close(got_loss.float(), loss.float(), **_BF16)
