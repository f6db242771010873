"""Small CPU-traceable training models for cuda_plan_census.py: each is capture(cap) -> graphs."""

import os

import torch
import torch.nn as nn
import torch.nn.functional as F


def llama(cap):
    """Embedding, RMS norm, rotary cat of slices, attention, SwiGLU, cross entropy (bf16)."""
    torch.manual_seed(0)
    d, h, vocab = 64, 4, 100

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb, self.n1, self.n2 = nn.Embedding(vocab, d), nn.RMSNorm(d), nn.RMSNorm(d)
            self.qkv, self.o = nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d, bias=False)
            self.g, self.u = nn.Linear(d, 2 * d, bias=False), nn.Linear(d, 2 * d, bias=False)
            self.dn, self.head = nn.Linear(2 * d, d, bias=False), nn.Linear(d, vocab, bias=False)

        def forward(self, ids, tgt, cos, sin):
            def rot(x):
                return torch.cat((-x[..., x.shape[-1] // 2:], x[..., : x.shape[-1] // 2]), dim=-1)

            x = self.emb(ids)
            B, S, _ = x.shape
            q, k, v = (t.view(B, S, h, -1).transpose(1, 2) for t in self.qkv(self.n1(x)).split(d, dim=-1))
            q, k = q * cos + rot(q) * sin, k * cos + rot(k) * sin
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, S, d)
            x = x + self.o(a)
            y = self.n2(x)
            x = x + self.dn(F.silu(self.g(y)) * self.u(y))
            return F.cross_entropy(self.head(x).flatten(0, 1), tgt.flatten())

    m = Block()
    ids, tgt = torch.randint(0, vocab, (4, 16)), torch.randint(0, vocab, (4, 16))
    cos, sin = torch.randn(16, 16), torch.randn(16, 16)

    def step(i, t):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return m(i, t, cos, sin)

    return cap(step, ids, tgt, backward=True)


def resnet(cap):
    """Conv, batch norm (training), relu, max pool, residual, mean pool, linear, cross entropy."""
    torch.manual_seed(0)

    class Block(nn.Module):
        def __init__(self, c=16):
            super().__init__()
            self.c1, self.b1 = nn.Conv2d(3, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
            self.c2, self.b2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
            self.fc = nn.Linear(c, 10)

        def forward(self, x, y):
            h = F.max_pool2d(torch.relu(self.b1(self.c1(x))), 2)
            h = torch.relu(h + self.b2(self.c2(h)))
            return F.cross_entropy(self.fc(h.mean((2, 3))), y)

    m = Block()
    return cap(lambda x, y: m(x, y), torch.randn(4, 3, 16, 16), torch.randint(0, 10, (4,)), backward=True)


def conv_block(cap):
    """tests/python/test_gpu_training.py's ConvBlock (f32, two training batch norms, residual):
    with --cuda its norms are cuDNN's (codegen/passes/cudnn_batch_norm.h)."""
    torch.manual_seed(0)

    class ConvBlock(nn.Module):
        def __init__(self, c=8):
            super().__init__()
            self.c1, self.b1 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
            self.c2, self.b2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
            self.head = nn.Linear(c, 10)

        def forward(self, x, y):
            h = torch.relu(x + self.b2(self.c2(torch.relu(self.b1(self.c1(x))))))
            return F.cross_entropy(self.head(h.mean(dim=(2, 3))), y)

    m = ConvBlock()
    return cap(m, torch.randn(16, 8, 12, 12), torch.randint(0, 10, (16,)), backward=True)


def cnn_stem(cap):
    """A ResNet stem and a 64-channel block at ImageNet size (bf16 autocast, training): batch
    norms of 64 rows of batch x 112 x 112 (or 56 x 56) elements, few long rows that the row
    kernels take only as split reductions (codegen/passes/split_reductions.h). CENSUS_BATCH=N
    sets the batch (default 8)."""
    torch.manual_seed(0)

    class Stem(nn.Module):
        def __init__(self, c=64):
            super().__init__()
            self.c1, self.b1 = nn.Conv2d(3, c, 7, stride=2, padding=3, bias=False), nn.BatchNorm2d(c)
            self.c2, self.b2 = nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)
            self.fc = nn.Linear(c, 10)

        def forward(self, x, y):
            h = F.max_pool2d(torch.relu(self.b1(self.c1(x))), 3, 2, 1)
            h = torch.relu(h + self.b2(self.c2(h)))
            return F.cross_entropy(self.fc(h.mean((2, 3))), y)

    m = Stem()
    n = int(os.environ.get("CENSUS_BATCH", 8))

    def step(x, y):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return m(x, y)

    return cap(step, torch.randn(n, 3, 224, 224), torch.randint(0, 10, (n,)), backward=True)


def _norm_layout_case(norm):
    """deploy/bn_layout_bench.py's cases as census graphs: x bf16 channels-last [B, C, H, W],
    parameters f32, forward and backward. CENSUS_BATCH (default 64), CENSUS_C (64), CENSUS_H
    (112) set the shape."""

    def capture(cap):
        b = int(os.environ.get("CENSUS_BATCH", 64))
        c = int(os.environ.get("CENSUS_C", 64))
        h = int(os.environ.get("CENSUS_H", 112))
        g = torch.Generator().manual_seed(0)
        x = torch.randn(b, c, h, h, generator=g).to(torch.bfloat16)
        x = x.contiguous(memory_format=torch.channels_last).requires_grad_(True)
        w = torch.randn(c, generator=g).requires_grad_(True)
        bias = torch.randn(c, generator=g).requires_grad_(True)
        if norm == "bn":
            rm, rv = torch.zeros(c), torch.ones(c)
            return cap(lambda x, w, bias, rm, rv: F.batch_norm(x, rm, rv, w, bias, training=True).relu(),
                       x, w, bias, rm, rv, backward=True)
        return cap(lambda x, w, bias: F.layer_norm(x.permute(0, 2, 3, 1), (c,), w, bias).permute(0, 3, 1, 2),
                   x, w, bias, backward=True)

    return capture


# relu(batch_norm(x)) and timm's LayerNorm2d over a channels-last map (bn_layout_bench.py).
bn_relu_channels_last = _norm_layout_case("bn")
layer_norm_2d = _norm_layout_case("ln")


def _zoo(name, batch_size=2, infer=False):
    """A model of deploy/zoo_benchmark.py at its full size (needs transformers/timm/torchvision;
    vit is torchvision's vit_b_16 where timm is not installed).

    CENSUS_BATCH=N overrides the batch size; CENSUS_DEVICE=cuda traces on a GPU (CUDA autocast
    gives the graphs a real run gets: its casts differ from CPU autocast's)."""
    import pathlib

    sys_path = str(pathlib.Path(__file__).resolve().parents[2] / "deploy")
    import sys

    if sys_path not in sys.path:
        sys.path.insert(0, sys_path)
    import zoo_benchmark

    def capture(cap):
        torch.manual_seed(0)
        device = os.environ.get("CENSUS_DEVICE", "cpu")
        model, batch_fn, fwd = zoo_benchmark.build_model(name, tiny=False, dropout=False)
        model = model.to(device)
        batch = batch_fn(int(os.environ.get("CENSUS_BATCH", batch_size)), device)

        if os.environ.get("CENSUS_AS_ZOO") == "1" and isinstance(batch, dict) and "labels" in batch:
            # As the zoo runs it: the model compiled (its outputs, logits included, leave the
            # graph), autocast entered outside.
            with torch.autocast(device, dtype=torch.bfloat16):
                return cap(lambda b: model(**b), batch, backward=lambda out: out.loss)

        if infer:
            # As the zoo's infer workload: eval(), no_grad and autocast entered outside the
            # compiled model, whose whole output (a transformers model's loss and logits) leaves
            # the graph: one inference graph. CENSUS_SDPA=math: attention decomposed into
            # matmuls and a softmax on the CPU too (the CPU otherwise traces its flash kernel,
            # an extern step; the GPU trace decomposes T5's biased self-attention this way).
            model.eval()
            call = (lambda b: model(**b)) if "labels" in batch else (lambda b: model(b["x"]))
            import contextlib

            sdpa = contextlib.nullcontext()
            if os.environ.get("CENSUS_SDPA") == "math":
                from torch.nn.attention import SDPBackend, sdpa_kernel

                sdpa = sdpa_kernel(SDPBackend.MATH)
            with torch.no_grad(), torch.autocast(device, dtype=torch.bfloat16), sdpa:
                if os.environ.get("CENSUS_F32_NORMS") != "1":
                    return cap(call, batch)
                # CENSUS_F32_NORMS=1: layer norms in f32 with an f32 result, as CUDA autocast
                # runs them (CPU autocast runs them in bf16).
                import torch.nn.functional as F

                saved = F.layer_norm

                def f32_layer_norm(x, shape, weight=None, bias=None, eps=1e-5):
                    f = lambda t: None if t is None else t.float()
                    with torch.autocast(device, enabled=False):
                        return saved(f(x), shape, f(weight), f(bias), eps)

                F.layer_norm = f32_layer_norm
                try:
                    return cap(call, batch)
                finally:
                    F.layer_norm = saved

        def step(b):
            with torch.autocast(device, dtype=torch.bfloat16):
                return fwd(model, b, True)

        return cap(step, batch, backward=True)

    return capture


gpt2 = _zoo("gpt2")
bert = _zoo("bert")
llama_zoo = _zoo("llama")
t5 = _zoo("t5")
resnet50 = _zoo("resnet50", batch_size=8)
vit = _zoo("vit", batch_size=8)
convnext = _zoo("convnext", batch_size=8)
# GPT-2's MLP as CUDA autocast traces it (CPU autocast makes no such casts): pow runs in f32, so
# the tanh-GELU is f32 from the pow on and its bf16 cast feeds the second matmul. Tokens
# CENSUS_BATCH x 512 (default 16: the zoo's large batch).
def gpt2_mlp_cuda_autocast(cap):
    import math

    torch.manual_seed(0)
    fc, proj = nn.Linear(768, 3072), nn.Linear(3072, 768)

    def step(h):
        x = F.linear(h.to(torch.bfloat16), fc.weight.to(torch.bfloat16), fc.bias.to(torch.bfloat16))
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x.float(), 3.0))
        y = 0.5 * x * (1.0 + torch.tanh(inner))
        return F.linear(y.to(torch.bfloat16), proj.weight.to(torch.bfloat16), proj.bias.to(torch.bfloat16))

    tokens = int(os.environ.get("CENSUS_BATCH", 16)) * 512
    return cap(step, torch.randn(tokens, 768, requires_grad=True), backward=True)


def gpt2_cuda_gelu(cap):
    """The zoo's GPT-2 with its tanh-GELU's pow in f32, as CUDA autocast runs it (CPU autocast
    leaves it bf16): the rest of the CUDA trace's casts are CPU autocast's too (layer norms and
    the loss in f32, matmuls in bf16), attention aside."""
    import math

    from transformers import activations

    def forward(self, input):
        inner = math.sqrt(2.0 / math.pi) * (input + 0.044715 * torch.pow(input.float(), 3.0))
        return 0.5 * input * (1.0 + torch.tanh(inner))

    saved = activations.NewGELUActivation.forward
    activations.NewGELUActivation.forward = forward
    try:
        return gpt2(cap)
    finally:
        activations.NewGELUActivation.forward = saved


def convnext_tv(cap):
    """torchvision's convnext_tiny (the zoo's ConvNeXt is timm's, which this machine may lack):
    the same blocks (depthwise conv, permute, LayerNorm over channels, MLP, layer scale) and
    LayerNorm2d downsampling, bf16 autocast training step. CENSUS_BATCH (default 8)."""
    import torchvision

    torch.manual_seed(0)
    model = torchvision.models.convnext_tiny()
    n = int(os.environ.get("CENSUS_BATCH", 8))
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(n, 3, 224, 224, generator=g), torch.randint(0, 1000, (n,), generator=g)

    def step(x, y):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return F.cross_entropy(model(x).float(), y)

    return cap(step, x, y, backward=True)


# The zoo's inference workload (eval, no_grad, bf16 autocast): one inference graph per model.
gpt2_infer = _zoo("gpt2", infer=True)
bert_infer = _zoo("bert", infer=True)
llama_infer = _zoo("llama", infer=True)
t5_infer = _zoo("t5", infer=True)
resnet50_infer = _zoo("resnet50", batch_size=8, infer=True)
vit_infer = _zoo("vit", batch_size=8, infer=True)
convnext_infer = _zoo("convnext", batch_size=8, infer=True)


def _traced_graphs(directory, prefix):
    """Graphs a GPU run dumped as readable Python (GraphModule.print_readable(), e.g.
    /work/gpu_graphs/bert/bert_{0_forward,1_backward}.py), retraced on fake CUDA tensors so the
    census compiles what the GPU run compiled. The dump keeps sizes and dtypes but not strides:
    every input is taken contiguous (a transposed weight the real graph received differs in
    layout only)."""
    import glob
    import inspect
    import re

    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.proxy_tensor import make_fx

    dtypes = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16, "i64": torch.int64,
              "i32": torch.int32, "b8": torch.bool, "f64": torch.float64, "u8": torch.uint8}

    def capture(cap):
        graphs = []
        for path in sorted(glob.glob(os.path.join(directory, f"{prefix}_*.py"))):
            kind = re.sub(r"^\d+_", "", os.path.basename(path)[len(prefix) + 1:-3])
            namespace = {"torch": torch, "device": torch.device, "inf": float("inf"), "nan": float("nan")}
            # An inference graph captured from a lambda prints as `class <lambda>(...)`.
            source = re.sub(r"^class [^(]*\(", "class GraphModule(", open(path).read(), count=1)
            exec(compile(source, path, "exec"), namespace)
            module = namespace["GraphModule"]()
            # Tensor constants the dump reads from `self` (T5's decoder start token): zeros of
            # the annotated dtype and shape (the dump keeps no values).
            for name, dt, shape in re.findall(r'(_tensor_constant\d+): "(\w+)\[([\d, ]*)\]" = self\.\1', source):
                sizes = [int(s) for s in shape.split(",") if s.strip()]
                setattr(module, name, torch.zeros(sizes, dtype=dtypes[dt]))
            params = list(inspect.signature(module.forward).parameters.values())
            with FakeTensorMode(allow_non_fake_inputs=True):
                inputs = []
                for p in params:
                    m = re.fullmatch(r"(\w+)\[([\d, ]*)\]", p.annotation)
                    sizes = [int(s) for s in m.group(2).split(",") if s.strip()]
                    inputs.append(torch.empty(sizes, dtype=dtypes[m.group(1)], device="cuda"))
                gm = make_fx(lambda *args: module.forward(*args), tracing_mode="fake")(*inputs)
            # make_fx records the dump's detach calls as alias; the real graph has detach
            # (DetachElimination drops it, so the recomputed log-probabilities stay fused).
            for node in gm.graph.nodes:
                if node.target is torch.ops.aten.alias.default:
                    node.target = torch.ops.aten.detach.default
            gm.recompile()
            graphs.append((kind, gm, inputs))
        return graphs

    return capture


# CENSUS_GRAPHS=DIR (default /work/gpu_graphs/bert): DIR/bert_*.py as traced on the GPU.
bert_gpu = _traced_graphs(os.environ.get("CENSUS_GRAPHS", "/work/gpu_graphs/bert"), "bert")
# The same for graphs that cuda_plan_census.py --dump-graphs wrote on the GPU machine
# (CENSUS_DEVICE=cuda CENSUS_AS_ZOO=1 CENSUS_BATCH=16 ... gpt2 / bert): files <model>_<n>_<kind>.py.
gpt2_gpu = _traced_graphs(os.environ.get("CENSUS_GRAPHS", "/work/gpu_graphs/gpt2"), "gpt2")
bert_zoo_gpu = _traced_graphs(os.environ.get("CENSUS_GRAPHS", "/work/gpu_graphs/bert_zoo"), "bert")
# The zoo's vision models at train large as traced on the H200 (/work/gpu_graphs/g: the ninth
# session's ResNet-50 and ConvNeXt graphs, whose daemon compile the fusion partition dominated).
resnet50_gpu = _traced_graphs(os.environ.get("CENSUS_GRAPHS", "/work/gpu_graphs/g"), "resnet50")
convnext_gpu = _traced_graphs(os.environ.get("CENSUS_GRAPHS", "/work/gpu_graphs/g"), "convnext")
vit_gpu = _traced_graphs(os.environ.get("CENSUS_GRAPHS", "/work/gpu_graphs/vit/g"), "vit")
# The zoo's inference graphs as traced on the GPU (CENSUS_DEVICE=cuda ... --dump-graphs DIR
# --graphs-only t5_infer / llama_infer / convnext_infer): DIR/<model>_infer_0_inference.py.
t5_infer_gpu = _traced_graphs(os.environ.get("CENSUS_GRAPHS", "/work/gpu_graphs/infer"), "t5_infer")
llama_infer_gpu = _traced_graphs(os.environ.get("CENSUS_GRAPHS", "/work/gpu_graphs/infer"), "llama_infer")
convnext_infer_gpu = _traced_graphs(os.environ.get("CENSUS_GRAPHS", "/work/gpu_graphs/infer"), "convnext_infer")


def gelu_mlp(cap):
    """Linear -> GELU -> Linear under bf16 autocast, forward and backward: the GELU forward
    pointwise kernel and the GELU-backward + bias-gradient column kernel (deploy/column_bench.py
    times them on a GPU). CENSUS_TOKENS (default 25088: ConvNeXt-T's first stage at batch 8),
    CENSUS_D (96), CENSUS_H (384), CENSUS_GELU ("none" or "tanh")."""
    torch.manual_seed(0)
    tokens = int(os.environ.get("CENSUS_TOKENS", 25088))
    d, h = int(os.environ.get("CENSUS_D", 96)), int(os.environ.get("CENSUS_H", 384))
    approximate = os.environ.get("CENSUS_GELU", "none")
    fc, proj = nn.Linear(d, h), nn.Linear(h, d)

    def step(x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return proj(F.gelu(fc(x), approximate=approximate)).float().sum()

    return cap(step, torch.randn(tokens, d, requires_grad=True), backward=True)
