"""How the native plan runtime binds the attention ops of GPT-2's and Llama's CUDA graphs
(flash or cuDNN scaled-dot-product attention, forward and backward), classified as the client
does at load, on torch 2.11's rules and the installed torch's. No daemon, no GPU: the steps are
written as the daemon writes them (refs name plan value ids, unused outputs are -1).

On the H200 (torch 2.11) each of those graphs ran one Python step per layer: the forward's
unused cum_seq_q/cum_seq_k returns are undefined tensors, which 2.11's stable dispatcher cannot
return, and the backward takes them back as None for a plain Tensor argument, which no argument
kind carried. Now the forward runs through the typed CUDA shim and the backward passes an
undefined tensor (TCCD_ARG_UNDEFINED_TENSOR). The cuDNN steps are written as the ViT plans the H200
dumped have them (12 Python steps per graph there, one per layer; those plans' steps all bind
natively now, arange aside, a factory the runtime computes at load on the GPU)."""

import pytest
import torch

from tccd import native_plan
from tccd.serialize import pb

FLASH = "aten::_scaled_dot_product_flash_attention.default"
CUDNN = "aten::_scaled_dot_product_cudnn_attention.default"


def _value(v):
    if isinstance(v, tuple):  # ("ref", id)
        return pb.Value(ref=pb.ValueRef(node=v[1]))
    if v is None:
        return pb.Value(none=True)
    if isinstance(v, bool):
        return pb.Value(bool_value=v)
    if isinstance(v, int):
        return pb.Value(int_value=v)
    return pb.Value(float_value=v)


def _step(target, args, outputs, **kwargs):
    call = pb.ExternCall(target=target, args=[_value(a) for a in args],
                         kwargs=[pb.NamedValue(name=k, value=_value(v)) for k, v in kwargs.items()])
    return pb.Step(extern_call=call, outputs=outputs)


def _plan(n_values):
    meta = pb.TensorMeta(dtype=pb.BFLOAT16, device=pb.Device(type=pb.CUDA, index=0))
    return pb.Plan(num_inputs=3, values=[meta] * n_values)


def _ref(i):
    return ("ref", i)


# Forward: output, logsumexp and the philox seed/offset are read (saved for the backward);
# cum_seq_q/cum_seq_k/debug_attn_mask are unused, max_q/max_k are ints the backward takes as
# constants.
FORWARDS = {
    FLASH: _step(FLASH, [_ref(0), _ref(1), _ref(2), 0.0, True], [3, 4, -1, -1, -1, -1, 5, 6, -1], scale=0.125),
    CUDNN: _step(CUDNN, [_ref(0), _ref(1), _ref(2), None, True, 0.0, True], [3, 4, -1, -1, -1, -1, 5, 6, -1]),
}
BACKWARDS = {
    FLASH: _step("aten::_scaled_dot_product_flash_attention_backward.default",
                 [_ref(7), _ref(0), _ref(1), _ref(2), _ref(3), _ref(4), None, None, 64, 64, 0.0, True,
                  _ref(5), _ref(6)], [8, 9, 10], scale=0.125),
    CUDNN: _step("aten::_scaled_dot_product_cudnn_attention_backward.default",
                 [_ref(7), _ref(0), _ref(1), _ref(2), _ref(3), _ref(4), _ref(5), _ref(6), None, None, None,
                  64, 64, 0.0, True], [8, 9, 10]),
}


@pytest.fixture(params=["2.11", "installed"])
def rules(request, monkeypatch):
    if request.param == "2.11":
        monkeypatch.setattr(native_plan, "_UNDEFINED_TENSOR_RETURNS_CONVERT", False)
    return request.param


@pytest.mark.parametrize("target", [FLASH, CUDNN])
def test_attention_forward_runs_through_its_typed_shim(rules, target):
    binding = native_plan.bind_extern(FORWARDS[target], _plan(11))
    assert binding is not None and binding[0] == "typed", binding
    shim, ids, words = binding[1]
    assert shim == native_plan._SDPA_SHIMS[target] and ids == [0, 1, 2, -1]
    dropout, causal, debug, has_scale, scale = words[:5]
    assert (dropout, causal, debug) == (native_plan._bits(0.0), 1, 0)
    if target == FLASH:
        assert (has_scale, scale) == (1, native_plan._bits(0.125)) and len(words) == 5
    else:
        assert has_scale == 0 and words[5] == 1  # no scale; compute_log_sumexp


@pytest.mark.parametrize("target", [FLASH, CUDNN])
def test_attention_forward_without_its_shim_says_why_on_2_11(rules, target):
    # Where the typed shim is refused (a torch without it), the dispatcher is the way left:
    # native on 2.15, Python on 2.11, with the reason in the stats.
    why = []
    completed = native_plan.complete_arguments(FORWARDS[target], None, why)
    if not native_plan._UNDEFINED_TENSOR_RETURNS_CONVERT:  # 2.11's rules, forced or installed
        assert completed is None
        assert why and why[0].startswith("return cum_seq_q (Tensor) is unused and may be undefined"), why
    else:
        assert completed is not None and not why


@pytest.mark.parametrize("target", [FLASH, CUDNN])
def test_attention_backward_passes_undefined_tensors_for_none(rules, target):
    step = BACKWARDS[target]
    binding = native_plan.bind_extern(step, _plan(11))
    assert binding is not None and binding[0] == "dispatcher", binding
    kinds, payloads, returns, pool = binding[1]
    schema = torch.ops.aten._scaled_dot_product_flash_attention_backward.default._schema if target == FLASH \
        else torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default._schema
    undefined = [a.name for a, k in zip(schema.arguments, kinds) if k == native_plan._ARG_UNDEFINED_TENSOR]
    assert undefined == (["cum_seq_q", "cum_seq_k"] if target == FLASH else ["attn_bias", "cum_seq_q", "cum_seq_k"])
    assert returns == [native_plan._RET_TENSOR] * 3


def test_none_for_a_non_tensor_argument_still_cannot_be_carried():
    # Only a plain Tensor's None has a meaning (an undefined tensor); an int's None does not.
    pool = []
    assert native_plan._typed_arg(torch.IntType.get(), None, pool) is None
    assert native_plan._typed_arg(torch.TensorType.get(), None, pool) == (native_plan._ARG_UNDEFINED_TENSOR, 0)
    assert native_plan._typed_arg(torch.OptionalType(torch.TensorType.get()), None, pool) == (native_plan._ARG_NONE, 0)
