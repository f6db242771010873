"""Numerical check of a graph rewrite without a GPU: evaluates two graph IR texts of one function
(a daemon's TCCD_DUMP_DIR dumps, e.g. the IR before a pass and NN-<pass>.ir after it) op by op
with torch.ops.aten on the CPU, on the same random inputs laid out at the declared strides, and
prints per output the relative L2 difference. CUDA-only rewrites (batch-norm-decomposition,
layer-norm-param-grad-split) get their math checked this way; the kernels themselves are the GPU
tests' job.

  python tests/tools/ir_equivalence.py BEFORE.ir AFTER.ir

An op that refuses 16-bit operands on the CPU (native_layer_norm_backward with bf16 statistics)
is retried with its floating operands in f32. Differences of ~1e-3 on 16-bit outputs are their
rounding; a wrong rewrite shows as O(1).
"""
import re
import sys

import torch

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16, "f64": torch.float64,
          "b8": torch.bool, "i64": torch.int64}


def split_top(s, sep=","):
    """s split at `sep` outside brackets."""
    out, depth, cur = [], 0, ""
    for ch in s:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == sep and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def parse_type(text):
    m = re.match(r"(\w+)\[([\d,]*)\]\{([\d,]*)\}", text.strip())
    return (DTYPES[m.group(1)], [int(v) for v in m.group(2).split(",") if v],
            [int(v) for v in m.group(3).split(",") if v])


def value(tok, env):
    tok = tok.strip()
    if tok.startswith("%"):
        name, _, idx = tok[1:].partition("#")
        v = env[name]
        return v[int(idx)] if idx else (v[0] if isinstance(v, tuple) else v)
    if tok.startswith("["):
        return [value(t, env) for t in split_top(tok[1:-1])]
    if tok in ("true", "false"):
        return tok == "true"
    if tok == "None":
        return None
    if tok in DTYPES:
        return DTYPES[tok]
    if tok.startswith("layout("):
        return torch.strided
    if tok.startswith("device("):  # every value lives on the CPU here
        return torch.device("cpu")
    if tok.startswith("memory_format("):
        return torch.contiguous_format
    try:
        return int(tok)
    except ValueError:
        return float(tok)


def params(text):
    head = text.strip().splitlines()[0]
    return split_top(head[head.index("(") + 1: head.rindex(")")])


# The daemon's own ops (codegen/passes/*.h), as ATen computes them.
TCCD_OPS = {
    # embedding_backward_to_scatter.h: f32 [V, E] sums of the gradient rows by token id.
    "embedding_scatter_add": lambda grad, ids, v, padding_idx: torch.ops.aten.embedding_dense_backward(
        grad.float(), ids, v, padding_idx, False),
}


def run(text, inputs):
    env = {p.split(":")[0].strip()[1:]: inputs[p.split(":")[0].strip()[1:]] for p in params(text)}
    for line in text.strip().splitlines()[1:]:
        line = line.strip()
        if line.startswith("return"):
            return [value(t, env) for t in split_top(line[line.index("(") + 1: line.rindex(")")])]
        if line == "}":
            continue
        name, target, args = re.match(r"%(\w+) = ([\w:.]+)\((.*)\) -> (.*)$", line).groups()[:3]
        pos, kw = [], {}
        for a in split_top(args):
            if re.match(r"^\w+=", a):
                k, v = a.split("=", 1)
                kw[k] = value(v, env)
            else:
                pos.append(value(a, env))
        op_name, overload = target.split("::")[1].split(".")
        fn = TCCD_OPS[op_name] if target.startswith("tccd::") else getattr(getattr(torch.ops.aten, op_name), overload)
        if op_name == "view" and not pos[0].is_contiguous():
            pos[0] = pos[0].contiguous()  # the IR's view of a permuted-contiguous value
        try:
            out = fn(*pos, **kw)
        except RuntimeError:
            def up(v):
                return v.float() if isinstance(v, torch.Tensor) and v.is_floating_point() else v
            out = fn(*[up(v) for v in pos], **kw)
        env[name] = tuple(out) if isinstance(out, (tuple, list)) else out
    raise ValueError("graph without return")


def random_inputs(text, seed=0):
    """Inputs at their declared strides; 1-D f32 ones (statistics, weights) positive, i64 ones 0 or 1."""
    g = torch.Generator().manual_seed(seed)
    out = {}
    for p in params(text):
        name, t = p.split(":", 1)
        dtype, sizes, strides = parse_type(t.split("@")[0])
        n = max(sum((s - 1) * st for s, st in zip(sizes, strides)) + 1, 1)
        base = torch.randn(n, generator=g) * 2 + 0.5
        if len(sizes) == 1:
            base = base.abs() + 0.5
        if dtype == torch.int64:  # indices (token ids, targets): small and valid for any table
            base = torch.randint(0, 2, (n,), generator=g)
        out[name.strip()[1:]] = base.to(dtype).as_strided(sizes, strides)
    return out


def main():
    before, after = open(sys.argv[1]).read(), open(sys.argv[2]).read()
    inputs = random_inputs(before)
    for i, (x, y) in enumerate(zip(run(before, inputs), run(after, inputs))):
        if not isinstance(x, torch.Tensor) or not isinstance(y, torch.Tensor):
            print(f"output {i}: {type(x).__name__} / {type(y).__name__}")
            continue
        x, y = x.double(), y.double()
        # Random inputs can make non-finite values (a loss over random logits); where both
        # graphs agree on them, the difference is taken over the finite rest.
        bad_x, bad_y = ~torch.isfinite(x), ~torch.isfinite(y)
        note = ""
        if bool(bad_x.any()) or bool(bad_y.any()):
            same = bool((bad_x == bad_y).all()) and bool((x[bad_x].nan_to_num(0) == y[bad_y].nan_to_num(0)).all())
            note = f" ({int(bad_x.sum())} non-finite, {'same' if same else 'DIFFERENT'} in both)"
            x, y = x.nan_to_num(0, 0, 0), y.nan_to_num(0, 0, 0)
        rel = float((x - y).norm() / max(float(x.norm()), 1e-30))
        print(f"output {i}: {tuple(x.shape)}: relative L2 difference {rel:.2e}{note}")


if __name__ == "__main__":
    main()
