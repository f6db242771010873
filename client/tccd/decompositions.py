"""What tccd has AOTAutograd decompose before it partitions the joint graph, and why.

The daemon receives the ATen ops the user's program used, with the exceptions made here: one
because only the partitioner, which runs in the client, can act on it:

log_softmax(x) -> x - logsumexp(x, dim, keepdim=True). Eager autograd saves log_softmax's output
for its backward: for a language model's loss that is an f32 [tokens, vocabulary] tensor (GPT-2
at 16 x 1024 tokens: 3.3 GB, written in the forward and read back in the backward). Decomposed,
the backward needs only the logits the model produced anyway (bf16) and one value per row, as
with Inductor. The subtraction is tagged MUST_RECOMPUTE for the min-cut partitioner: on its own
it would still save it, because nll_loss's backward takes the log-probabilities as an argument
(for their shape only; the daemon rewrites that gradient into pointwise ops). The daemon fuses
x - lse into the row kernels on both sides (logsumexp is a row reduction; the backward's
`_log_softmax_backward_data` reads it as a prologue).

TCCD_LOG_SOFTMAX_LSE=0 keeps ATen's log_softmax (the decomposition's name is part of the AOT
recipe key, so recipes of the two forms never mix).

Patchify convolutions as matmuls (TCCD_PATCHIFY_GEMM=cuda, opt-in): a 2-D convolution whose
stride equals its kernel, larger than 1x1, without padding, dilation or groups, over an input
whose height and width the kernel divides (ConvNeXt's 4x4 stem and 2x2 downsamples, ViT's 16x16
patch embedding), reads each input element once: it is a matmul of the input's patches
[N*Ho*Wo, C*kh*kw] (a permuted copy, no im2col blow-up) with the weight [O, C*kh*kw]. Its
backward is two matmuls and the bias's column sum. Why: every process pays cuDNN's set-up per
convolution shape at its first call, set-up that eager and Inductor pay too; as matmuls the
daemon compiles them once (cuBLASLt, its own layout kernels) and a warm process loads them like
any plan. Measured on the H200 (one sample per arm, train small, session 20): ConvNeXt warm first
step 4.76 -> 4.40 s, AOT 3.12 -> 3.00 s (its four patchify shapes leave the backward warm-up:
8 -> 4 shapes; the costly ones are its depthwise 7x7s, still cuDNN's), ViT warm 2.81 -> 2.00 s,
AOT 0.67 -> 0.63 s; per step fewer kernels (ConvNeXt 485 -> 478, ViT 378 -> 368) and less GPU
time (3.31 -> 3.18, 3.65 -> 3.48 ms); steady step ConvNeXt 13.19 -> 11.23 ms but ViT 7.29 -> 9.47
ms (its host time 7.75 -> 11.32 ms with fewer steps: lane noise or not, not settled), hence not
the default yet. 1x1 convolutions stay cuDNN's (_patchify). Symbolic sizes keep ATen's. The
decomposition's name is part of the AOT recipe key.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Tuple

import torch

aten = torch.ops.aten


def _log_softmax_via_logsumexp(x: torch.Tensor, dim: int, half_to_float: bool) -> torch.Tensor:
    if half_to_float:
        x = x.to(torch.float32)
    if x.dtype in (torch.float16, torch.bfloat16):
        # In f32, rounded once at the end, as ATen's kernel and Inductor's decomposition compute
        # it: a logsumexp rounded to 16 bits shifts its whole row of log-probabilities by up to
        # |lse| * 2^-8 (bf16), one error per row that does not average out, and log_softmax's
        # backward turns it into gradients off by that fraction (a bf16 layer norm's weight
        # gradient was 2-3x eager's error against float64: tests/python/test_gpu_dynamic_rows.py).
        # The saved row value is then f32: [rows, 1], small beside the 16-bit logits.
        xf = x.to(torch.float32)
        return (xf - torch.logsumexp(xf, dim, keepdim=True)).to(x.dtype)
    return x - torch.logsumexp(x, dim, keepdim=True)


def _patchify(x: Any, w: Any, stride: Any, padding: Any, dilation: Any, transposed: Any,
              output_padding: Any, groups: Any, devices: str) -> Any:
    """(kh, kw) when the convolution is a patchify one (module doc), else None."""
    if devices not in ("cuda", "all") or transposed or groups != 1:
        return None
    if not isinstance(x, torch.Tensor) or not isinstance(w, torch.Tensor) or x.dim() != 4 or w.dim() != 4:
        return None
    if devices == "cuda" and x.device.type != "cuda":
        return None
    sizes = tuple(x.shape) + tuple(w.shape)
    if not all(type(v) is int for v in sizes):  # symbolic sizes keep ATen's convolution
        return None
    kh, kw = sizes[6], sizes[7]
    # A 1x1 convolution is a matmul too, but ResNet's read channels-last activations that cuDNN
    # takes as they are, where a matmul over NCHW-promised values added layout copies
    # (test_gpu_channels_last.py): not measured as a gain, so left to cuDNN.
    if kh * kw == 1 or list(stride) != [kh, kw] or any(p != 0 for p in padding) or any(d != 1 for d in dilation):
        return None
    if any(p != 0 for p in output_padding) or sizes[1] != sizes[5] or sizes[2] % kh or sizes[3] % kw:
        return None
    if x.dtype != w.dtype or not (x.is_floating_point() and x.numel() > 0):
        return None
    return kh, kw


def _patches(x: torch.Tensor, kh: int, kw: int) -> torch.Tensor:
    """[N, C, H, W] -> [N*Ho*Wo, C*kh*kw]: each row one patch, in the weight's (C, kh, kw) order."""
    n, c, h, w = x.shape
    p = x.reshape(n, c, h // kh, kh, w // kw, kw).permute(0, 2, 4, 1, 3, 5)
    return p.reshape(n * (h // kh) * (w // kw), c * kh * kw)


def _make_patchify(devices: str) -> Dict[Any, Callable[..., Any]]:
    def convolution(x, w, bias, stride, padding, dilation, transposed, output_padding, groups):
        k = _patchify(x, w, stride, padding, dilation, transposed, output_padding, groups, devices)
        if k is None:
            return NotImplemented
        (kh, kw), (n, _, h, wd), o = k, x.shape, w.shape[0]
        rows = _patches(x, kh, kw)
        weight = w.reshape(o, -1)
        y = torch.addmm(bias, rows, weight.t()) if bias is not None else torch.mm(rows, weight.t())
        # [N, Ho, Wo, O] read as [N, O, Ho, Wo]: the channels-last layout, no copy.
        return y.view(n, h // kh, wd // kw, o).permute(0, 3, 1, 2)

    def convolution_backward(grad, x, w, bias_sizes, stride, padding, dilation, transposed, output_padding,
                             groups, output_mask):
        k = _patchify(x, w, stride, padding, dilation, transposed, output_padding, groups, devices)
        if k is None:
            return NotImplemented
        (kh, kw), (n, c, h, wd), o = k, x.shape, w.shape[0]
        g = grad.permute(0, 2, 3, 1).reshape(-1, o)  # [N*Ho*Wo, O]
        grad_x = grad_w = grad_b = None
        if output_mask[0]:
            rows = torch.mm(g, w.reshape(o, -1))  # [N*Ho*Wo, C*kh*kw]
            grad_x = (rows.view(n, h // kh, wd // kw, c, kh, kw).permute(0, 3, 1, 4, 2, 5)
                      .reshape(n, c, h, wd))
            if x.is_contiguous(memory_format=torch.channels_last) and not x.is_contiguous():
                grad_x = grad_x.contiguous(memory_format=torch.channels_last)
        if output_mask[1]:
            grad_w = torch.mm(g.t(), _patches(x, kh, kw)).view(w.shape)
            if w.is_contiguous(memory_format=torch.channels_last) and not w.is_contiguous():
                grad_w = grad_w.contiguous(memory_format=torch.channels_last)
        if output_mask[2]:
            grad_b = grad.sum((0, 2, 3))
        return grad_x, grad_w, grad_b

    return {aten.convolution.default: convolution, aten.convolution_backward.default: convolution_backward}


def table(lse: bool, patchify: str = "0") -> Dict[Any, Callable[..., Any]]:
    """The decompositions to hand AOTAutograd (patchify: TCCD_PATCHIFY_GEMM, "0", "cuda", "all")."""
    out: Dict[Any, Callable[..., Any]] = {aten._log_softmax.default: _log_softmax_via_logsumexp} if lse else {}
    if patchify in ("cuda", "all"):
        out.update(_make_patchify(patchify))
    return out


def tag_log_softmax_recompute(joint: torch.fx.GraphModule) -> int:
    """Marks each `x - logsumexp(x, dim, keepdim=True)` of the joint graph MUST_RECOMPUTE; returns
    how many it marked."""
    from torch.utils.checkpoint import CheckpointPolicy

    marked = 0
    for node in joint.graph.nodes:
        if node.op != "call_function" or node.target is not aten.logsumexp.default:
            continue
        keepdim = node.args[2] if len(node.args) > 2 else node.kwargs.get("keepdim", False)
        if not keepdim:
            continue
        x = node.args[0]
        for user in node.users:
            if user.target is aten.sub.Tensor and user.args[:2] == (x, node) and "alpha" not in user.kwargs:
                user.meta["recompute"] = CheckpointPolicy.MUST_RECOMPUTE
                marked += 1 + _tag_casts(user, CheckpointPolicy.MUST_RECOMPUTE)
                if isinstance(x, torch.fx.Node) and _is_dtype_cast(x) and "recompute" not in x.meta:
                    # 16-bit logits go through f32 (_log_softmax_via_logsumexp): recompute that
                    # copy too, or the partitioner may save an f32 [tokens, vocabulary] tensor.
                    x.meta["recompute"] = CheckpointPolicy.MUST_RECOMPUTE
                    marked += 1
    return marked


def _is_dtype_cast(node: torch.fx.Node) -> bool:
    """`_to_copy(x, dtype=...)` that changes nothing but the dtype (what autocast inserts)."""
    return (node.op == "call_function" and node.target is aten._to_copy.default and len(node.args) == 1
            and set(node.kwargs) <= {"dtype", "layout", "device"} and "memory_format" not in node.kwargs)


def _tag_casts(node: torch.fx.Node, policy: Any) -> int:
    """Tags the dtype casts reading `node`, and theirs, with `policy`; returns how many.

    CUDA autocast runs nll_loss in f32, so a bf16 log_softmax reaches it through a cast to f32:
    left untagged, the partitioner saves that f32 [tokens, vocabulary] cast for nll_loss's
    backward (which only needs its shape) instead of recomputing it from the saved logits."""
    marked = 0
    for user in node.users:
        if _is_dtype_cast(user):
            user.meta["recompute"] = policy
            marked += 1 + _tag_casts(user, policy)
    return marked


def drop_detaches(joint: torch.fx.GraphModule) -> int:
    """Replaces each `detach(x)` of the joint graph that is not a graph output by `x`; returns
    how many it removed.

    The joint graph records no autograd, so detach is the identity (the daemon drops it too:
    detach-elimination). For the min-cut partitioner it is not: detach is neither a view nor in
    its recomputable list, so a forward value that the backward reads through a detach counts as
    "materialized in the backward" and is saved rather than recomputed. A saved output of an
    op's backward formula always comes through one: GPT-2's tanh-GELU saved its bf16 tanh
    [tokens, 4 x width] beside the matmul output it recomputes from (written by the forward,
    read by the backward: 2 x 50 MB per layer at 8192 tokens). Inductor sees no detach here (its
    decompositions make it an alias, a view for the partitioner) and recomputes the tanh. Outputs
    stay as they are: AOTAutograd fixed their alias relations before partitioning."""
    outputs = {a for node in joint.graph.nodes if node.op == "output" for a in node.all_input_nodes}
    dropped = 0
    for node in list(joint.graph.nodes):
        if node.op != "call_function" or node.target is not aten.detach.default or node in outputs:
            continue
        node.replace_all_uses_with(node.args[0], propagate_meta=False)
        joint.graph.erase_node(node)
        dropped += 1
    if dropped:
        joint.recompile()
    return dropped


# Training batch-norm backwards and the positions of their running_mean and running_var
# arguments (both `Tensor?`), with the position of the `train` flag (None: always training).
_BN_BACKWARD_RUNNING_STATS = {
    aten.native_batch_norm_backward.default: (3, 4, 7),
    # ATen: "Unused: but we require them to be passed so that double backwards has access"
    # (a compiled graph's backward is never differentiated again).
    aten.cudnn_batch_norm_backward.default: (3, 4, None),
}


def drop_bn_running_stats(joint: torch.fx.GraphModule) -> int:
    """Passes None for the running mean and variance of each training batch-norm backward of the
    joint graph; returns how many arguments it replaced.

    In training a batch norm's backward reads only the batch's saved mean and inverse std
    (ATen's CPU and CUDA kernels and torch's decomposition read the running statistics only when
    train is False; cuDNN's never), but the joint graph passes the forward's updated running
    statistics, so the partitioner saves two [C] tensors per norm for nothing: ResNet-50's
    forward returned 429 saved tensors where Inductor's (whose decomposed backward has no such
    argument) returns 324. Each costs per step a forward output and a backward input (a tensor
    handle each way, autograd's saved-variable bookkeeping) and, under CUDA graphs, an output the
    tree rebuilds at every replay. The daemon's batch-norm lowering never reads them either
    (codegen/passes/batch_norm_decomposition.h)."""
    replaced = 0
    for node in joint.graph.nodes:
        positions = _BN_BACKWARD_RUNNING_STATS.get(node.target) if node.op == "call_function" else None
        if positions is None or node.kwargs:
            continue
        mean_at, var_at, train_at = positions
        args = list(node.args)
        if len(args) <= max(mean_at, var_at, train_at or 0):
            continue
        if train_at is not None and args[train_at] is not True:
            continue
        for i in (mean_at, var_at):
            if args[i] is not None:
                args[i] = None
                replaced += 1
        node.args = tuple(args)
    if replaced:
        joint.recompile()
    return replaced


def with_joint_cleanup(
    partition_fn: Callable[..., Tuple[Any, Any]], lse: bool, detaches: bool, bn_running_stats: bool = True
) -> Callable[..., Tuple[Any, Any]]:
    """partition_fn, after dropping the joint graph's detaches (`detaches`: drop_detaches) and
    the running statistics its batch-norm backwards do not read (`bn_running_stats`:
    drop_bn_running_stats) and, with the log_softmax decomposition (`lse`), tagging its
    recomputation (tag_log_softmax_recompute)."""

    def partition(joint_module: torch.fx.GraphModule, *args: Any, **kwargs: Any) -> Tuple[Any, Any]:
        if detaches:
            drop_detaches(joint_module)
        if bn_running_stats:
            drop_bn_running_stats(joint_module)
        if lse:
            tag_log_softmax_recompute(joint_module)
        return partition_fn(joint_module, *args, **kwargs)

    return partition
