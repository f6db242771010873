"""Regenerates the fuzzers' seed corpora in tests/fuzz/corpus/ from real client requests.

    .venv/bin/python tests/fuzz/make_corpus.py

Runs small models (the kinds the e2e tests compile: MLPs forward and backward, convolutions,
norms, softmax, dropout, embeddings, views, reductions, lifted constants) through torch.compile
with the tccd backend, capturing each CompileRequest the client builds (tccd.serialize) instead
of sending it; no daemon is needed. Each request is written as
  corpus/request/<name>.pb        the serialized CompileRequest (CPU target)
  corpus/request/<name>.cuda.pb   the same graph for an sm_90 target (tensors moved to cuda)
Each model is compiled twice: static, and with dynamic=True (symbolic sizes: SymInt inputs,
sym_expr arguments, a ShapeEnv), since the symbolic paths are where the fuzzers found most bugs.
  corpus/ir_text/<name>.ir        its graph as the textual IR (tccd.serialize has no printer,
                                  so the IR texts come from the IR tests: see IR_TEXTS below)
File names are content hashes, so rerunning only adds what changed.
"""

import hashlib
import os
from pathlib import Path

os.environ.setdefault("TCCD_LOCAL_CACHE", "0")
os.environ.setdefault("TCCD_AOT_CACHE", "0")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

ROOT = Path(__file__).resolve().parent
import tccd.compiler  # noqa: E402
from tccd.v1 import tccd_pb2 as pb  # noqa: E402

captured = []


class _Captured(Exception):
    pass


def _capture(request, *args, **kwargs):
    captured.append(request)
    raise _Captured("captured for the fuzz corpus")


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 16)
        self.b = nn.Linear(16, 4)

    def forward(self, x):
        return self.b(F.gelu(self.a(x))).softmax(-1)


class Conv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x))).mean(dim=(2, 3))


class Norms(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(8)
        self.emb = nn.Embedding(10, 8)
        self.drop = nn.Dropout(0.1)

    def forward(self, idx, x):
        h = self.ln(self.emb(idx) + x)
        return self.drop(h).transpose(0, 1).reshape(-1).cumsum(0)


class Constants(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.arange(8.0))

    def forward(self, x):
        return (x * torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]) + self.scale).amax(-1)


def pointwise(x, y):
    z = torch.where(x > 0, x * y, torch.exp(-x)) / (1 + y.abs())
    return z.sum(0), z.to(torch.float16).view(-1)[::2], torch.cat([x, y], 1).permute(1, 0)


def reductions(x):
    return x.var(1), x.max(0).values, x.argmax(-1), torch.nn.functional.log_softmax(x, 1)


def cases():
    g = torch.Generator().manual_seed(0)
    yield "mlp", Mlp(), (torch.randn(4, 8, generator=g, requires_grad=True),)
    yield "conv", Conv(), (torch.randn(2, 3, 8, 8, generator=g, requires_grad=True),)
    yield "norms", Norms(), (torch.randint(0, 10, (4, 3)), torch.randn(4, 3, 8, generator=g, requires_grad=True))
    yield "constants", Constants(), (torch.randn(4, 8, generator=g),)
    yield "pointwise", pointwise, (torch.randn(4, 6, generator=g, requires_grad=True), torch.randn(4, 6, generator=g))
    yield "reductions", reductions, (torch.randn(5, 7, generator=g),)


def to_cuda(request):
    """The same graph for an sm_90 target: every tensor on cuda, as a CUDA client would send."""
    cuda = pb.CompileRequest()
    cuda.CopyFrom(request)
    cuda.target.Clear()
    cuda.target.device_type = pb.CUDA
    cuda.target.cuda_device_name = "NVIDIA H100 80GB HBM3"
    cuda.target.cuda_cc_major, cuda.target.cuda_cc_minor = 9, 0
    metas = list(cuda.graph.inputs) + [m for n in cuda.graph.nodes for m in n.outputs]
    for meta in metas:
        if meta.device.type == pb.CPU and (len(meta.sizes) > 0 or meta in cuda.graph.inputs):
            meta.device.type = pb.CUDA
            meta.device.index = 0
    return cuda


def write(directory, data: bytes, suffix):
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / (hashlib.sha256(data).hexdigest()[:16] + suffix)
    path.write_bytes(data)
    return path


# Graph texts from tests/codegen (the IR tests' inputs): the textual IR's seeds.
IR_TEXTS_FROM = ["tests/codegen/ir", "tests/codegen/passes", "tests/codegen/pipeline"]


def ir_texts():
    import re

    pattern = re.compile(r'R"\((graph\(.*?)\)"', re.S)
    for directory in IR_TEXTS_FROM:
        for source in sorted((ROOT.parents[1] / directory).glob("*.cc")):
            for text in pattern.findall(source.read_text()):
                yield text


def main():
    tccd.compiler.compile_request = _capture
    import warnings

    warnings.simplefilter("ignore")
    for dynamic in (False, True):
        for name, model, inputs in cases():
            torch._dynamo.reset()
            compiled = torch.compile(model, backend="tccd", dynamic=dynamic)
            out = compiled(*inputs)
            outs = out if isinstance(out, tuple) else (out,)
            loss = sum(o.float().sum() for o in outs if o.requires_grad)
            if isinstance(loss, torch.Tensor):
                loss.backward()  # the backward graph
    requests = ROOT / "corpus" / "request"
    for request in captured:
        write(requests, request.SerializeToString(), ".pb")
        write(requests, to_cuda(request).SerializeToString(), ".cuda.pb")
    texts = list(ir_texts())
    for text in texts:
        write(ROOT / "corpus" / "ir_text", text.encode(), ".ir")
    print(f"{len(captured)} requests (x2 targets), {len(texts)} IR texts")


if __name__ == "__main__":
    main()
