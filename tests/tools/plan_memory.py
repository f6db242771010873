"""Static peak memory of a tccd plan: what the native plan runtime allocates, step by step.

A plan (tccd.v1.Plan) says everything the runtime allocates and frees: each step's outputs are
allocated when the step runs (a NativeCall's and a NativeSegment's all at once, before the call;
none for an output written into another value's buffer, Step.write_into),
a segment's workspace lives for its step, views (Alias steps, extern view ops) share their base's
bytes, and a value's bytes are freed after the step whose `release` list names the last value
using them. The graph's inputs belong to the caller (weights, the batch): they are live from
before the first step to after the last, whatever the release lists say; except the released
ones (a backward's saved activations: CompileOptions.extra["tccd_released_inputs"],
client/tccd/released_inputs.py), which the plan holds from the start and frees after the step
whose release list names them, as the runtime does. This tool replays that
in step order and reports the peak of the bytes the plan itself holds (the caller's inputs
reported apart, since every backend holds them alike), the step where it occurs and what is live
there, largest first. It is how inference peak memory is tested without a GPU
(tests/python/test_plan_memory.py); on the GPU, torch.cuda.max_memory_allocated also counts the
caching allocator's rounding and what extern ATen ops allocate inside themselves.

  python tests/tools/plan_memory.py PLAN.txt [PLAN.txt ...]     # protobuf text, e.g. from
      tests/tools/cuda_plan_census.py --dump-plans DIR tests/tools/census_models.py bert_infer

Per plan: the peak (plan bytes, and with the inputs), its step, the live values there (dtype,
shape, the step that made them) and the step kinds around it.
"""

import collections
import dataclasses
import sys
from typing import Dict, List, Optional, Sequence, Tuple

_ITEMSIZE = {"FLOAT32": 4, "FLOAT64": 8, "FLOAT16": 2, "BFLOAT16": 2, "INT8": 1, "INT16": 2,
             "INT32": 4, "INT64": 8, "UINT8": 1, "BOOL": 1, "COMPLEX64": 8, "COMPLEX128": 16,
             "FLOAT8_E4M3FN": 1, "FLOAT8_E5M2": 1}
_MIB = float(1 << 20)


def nbytes(meta, pb) -> int:
    """Bytes a tensor of `meta` spans from its storage offset: what an allocation of it takes
    (the runtime allocates exactly the extent of the declared strides)."""
    sizes = [d.value for d in meta.sizes]
    strides = [d.value for d in meta.strides]
    if any(n == 0 for n in sizes):
        return 0
    span = 1 + sum((n - 1) * abs(s) for n, s in zip(sizes, strides))
    return span * _ITEMSIZE.get(pb.DType.Name(meta.dtype), 4)


# Ops whose schema does not say it but that return a view of their first argument (AOTAutograd's
# _unsafe_view of a matmul's result: the storage is the matmul's).
_UNANNOTATED_VIEWS = {"aten::_unsafe_view", "aten::_reshape_alias"}


def _aliased_arg(target: str) -> Optional[int]:
    """The argument index whose storage an extern op's outputs share (views, in-place ops), from
    the op's torch schema; None for ops that return new tensors."""
    if target.split(".")[0] in _UNANNOTATED_VIEWS:
        return 0
    try:
        import torch

        ns, rest = target.split("::")
        name, _, overload = rest.partition(".")
        op = getattr(getattr(getattr(torch.ops, ns), name), overload or "default")
    except Exception:  # deliberately ignored: an op this torch does not know allocates
        return None
    if op.is_view:
        return 0
    schema = op._schema
    aliases = set()
    for r in schema.returns:
        if r.alias_info is not None:
            aliases |= set(r.alias_info.before_set) | set(r.alias_info.after_set)
    for i, a in enumerate(schema.arguments):
        if a.alias_info is not None and (set(a.alias_info.before_set) & aliases):
            return i
    return None


@dataclasses.dataclass
class Live:
    bytes: int
    value: Optional[int]  # the value that allocated it (None: a workspace)
    step: int             # the step that allocated it (-1: a graph input)
    what: str


@dataclasses.dataclass
class Profile:
    peak: int                       # the most bytes the plan held at once (caller's inputs excluded)
    peak_step: int                  # the step during which it occurred
    inputs: int                     # the caller's input bytes (live throughout; released ones not)
    live_at_peak: List[Live]        # largest first
    num_steps: int
    timeline: List[int]             # plan bytes held during each step
    outputs: int                    # bytes of the plan's returned values (live at the end)


def _step_label(step) -> str:
    kind = step.WhichOneof("kind")
    if kind == "extern_call":
        return step.extern_call.target
    if kind in ("native", "segment"):
        body = getattr(step, kind)
        ops = sorted({op.split("::")[-1].split(".")[0] for k in body.kernels for op in k.ops})
        return f"{kind} {body.symbol} ({len(body.kernels)} ops: {','.join(ops)[:70]})"
    return kind


def profile(plan, pb, released: Sequence[int] = ()) -> Profile:
    """Replays `plan`'s allocations and releases (see the module docstring). `released`: the
    input indices the caller gave up (held by the plan from the start, freed at release)."""
    storage: Dict[int, int] = {}    # value -> the storage id it uses (its own id, or its base's)
    users = collections.Counter()   # storage id -> values defined on it and not released yet
    held: Dict[int, Live] = {}      # storage id -> its allocation, while held
    released = set(released)
    inputs = sum(nbytes(plan.values[i], pb) for i in range(plan.num_inputs) if i not in released)
    current = 0
    for i in range(plan.num_inputs):
        if i in released:
            storage[i] = i
            held[i] = Live(nbytes(plan.values[i], pb), i, -1, "released input")
            current += held[i].bytes
            users[i] += 1
        else:
            storage[i] = -1 - i     # caller-owned: never counted, never freed
    peak, peak_step, at_peak, timeline = 0, -1, [], []

    def define(value: int, base: Optional[int], index: int, what: str) -> None:
        nonlocal current
        if value < 0:
            return
        if base is not None and base in storage:
            storage[value] = storage[base]
        else:
            storage[value] = value
            held[value] = Live(nbytes(plan.values[value], pb), value, index, what)
            current += held[value].bytes
        users[storage[value]] += 1

    def release(value: int) -> None:
        nonlocal current
        sid = storage.get(value)
        if sid is None or sid < 0:
            return
        users[sid] -= 1
        if users[sid] == 0 and sid in held:
            current -= held.pop(sid).bytes

    for index, step in enumerate(plan.steps):
        kind = step.WhichOneof("kind")
        label = _step_label(step)
        workspace = 0
        if kind == "alias":
            for o in step.outputs:
                define(o, step.alias.base, index, label)
        elif kind == "extern_call":
            at = _aliased_arg(step.extern_call.target)
            args = step.extern_call.args
            base = args[at].ref.node if at is not None and at < len(args) and args[at].HasField("ref") else None
            for o in step.outputs:
                define(o, base, index, label)
        else:
            # An output written into another value's buffer (Step.write_into: a graph input's,
            # or that of a value dying at this step) allocates nothing.
            into = list(step.write_into) or [-1] * len(step.outputs)
            for o, k in zip(step.outputs, into):
                define(o, k if k >= 0 else None, index, label)
            workspace = getattr(step, kind).workspace_bytes if kind == "segment" else 0
        during = current + workspace
        timeline.append(during)
        if during > peak:
            peak, peak_step = during, index
            at_peak = list(held.values())
            if workspace:
                at_peak.append(Live(workspace, None, index, f"workspace of step {index}"))
        for v in step.release:
            release(v)
    returned = set()
    for out in plan.outputs:
        if out.HasField("ref") and storage.get(out.ref.node, -1) >= 0:
            returned.add(storage[out.ref.node])
    outputs = sum(held[s].bytes for s in returned if s in held)
    return Profile(peak, peak_step, inputs, sorted(at_peak, key=lambda l: -l.bytes), len(plan.steps),
                   timeline, outputs)


def describe(plan, pb, p: Profile, top: int = 12) -> str:
    lines = [f"peak {p.peak / _MIB:.1f} MiB of plan allocations ({(p.peak + p.inputs) / _MIB:.1f} MiB with "
             f"the {p.inputs / _MIB:.1f} MiB of the caller's inputs) during step {p.peak_step}/{p.num_steps}: "
             f"{_step_label(plan.steps[p.peak_step]) if p.peak_step >= 0 else '-'}; "
             f"outputs {p.outputs / _MIB:.1f} MiB; live there, largest first:"]
    for live in p.live_at_peak[:top]:
        meta = plan.values[live.value] if live.value is not None else None
        shape = [d.value for d in meta.sizes] if meta is not None else []
        dtype = pb.DType.Name(meta.dtype) if meta is not None else ""
        src = "input" if live.step < 0 else f"step {live.step}"
        lines.append(f"  {live.bytes / _MIB:9.1f} MiB  {dtype:8s} {str(shape):22s} {src:9s} {live.what[:80]}")
    rest = p.live_at_peak[top:]
    if rest:
        lines.append(f"  {sum(l.bytes for l in rest) / _MIB:9.1f} MiB  ({len(rest)} more)")
    return "\n".join(lines)


def main(argv: List[str]) -> int:
    from google.protobuf import text_format
    from tccd.serialize import pb

    for path in argv:
        plan = text_format.Parse(open(path).read(), pb.Plan())
        print(f"== {path}")
        print(describe(plan, pb, profile(plan, pb)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
