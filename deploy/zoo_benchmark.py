"""The model-zoo benchmark: eager vs TorchInductor (torch.compile default) vs tccd
(torch.compile(backend="tccd")) on real models with random weights, on one GPU.

    TCCD_ADDRESS=unix:/tmp/zoo/tccd.sock python3 deploy/zoo_benchmark.py --out results/zoo
    bash deploy/zoo_gpu_run.sh dist/tccd.tar.xz $OUT/zoo        # on the GPU machine, does the above
    python deploy/zoo_benchmark.py --device cpu --tiny --models toy_lm --backends eager,tccd --out /tmp/z
    python deploy/zoo_benchmark.py --merge $OUT/zoo-a,$OUT/zoo-b --out $OUT/zoo   # one report from several runs

Models (--models, comma list): llama, gpt2, bert, t5 (transformers, built from configs, no
network: HF_HUB_OFFLINE=1), resnet50 (torchvision), vit, convnext (timm; vit falls back to
torchvision's vit_b_16 without timm) and toy_lm (defined here, needs no third-party package).
Workloads: train (bf16 autocast forward + loss, backward, SGD(lr=1e-3) step, zero_grad to None)
and infer (bf16 autocast, no_grad, eval()). Batch "small" (LMs 2, vision 8: host-bound) and
"large" (LMs 16, vision 64). torch.compile wraps the model only; the optimizer runs eagerly.

--mode (default, reduce-overhead, max-autotune...) is torch.compile's mode for BOTH compiled
backends (tccd with reduce-overhead records and replays CUDA graphs as Inductor does; every step
then starts with torch.compiler.cudagraph_mark_step_begin()). Run one mode per --out directory;
--merge keeps cells of different modes apart.

Dropout probabilities are set to 0 in every config unless --dropout is given, so that the
compiled run can be compared with eager (with --dropout the loss/param diffs measure RNG, not
correctness).

Every cell (model, workload, batch, backend) runs in its own fresh Python process (this file
with --worker '<json>'; it prints one line "ZOO_RESULT {json}"). A cell that crashes or passes
--timeout-s is recorded as failed with its last stderr lines; a cell that would start after
--budget-s is recorded as skipped. Per cell:
  first_step_s      wall time of the first step (compile included), synchronised
  step_ms           median of --iters steps after --warmup, each synchronised
  kernels_per_step  torch.profiler events on the CUDA device over one steady step (CPU ops on --device cpu)
  gpu_busy_ms       sum of those events' durations (self CPU time on --device cpu)
  top_kernels       those events grouped by name, heaviest first (--top-kernels; kernels.md)
  peak_mib          max_memory_allocated over the timed steps (CUDA only)
  host_ms           host (CPU) time to enqueue one step while the GPU is kept busy: before
                    each of 10 calls a torch.cuda._sleep kernel longer than 4 steps is queued,
                    the step call is timed without a sync, then synchronised; median. It is the
                    Python + dispatcher + launch cost the GPU hides only when it is slower.
                    host_queue_drained counts calls after which the stream was already idle
                    (the step synchronised inside, or the sleep was short): marked * in the
                    table. On --device cpu, the step's own time.
  fallbacks, extern_steps, native_kernels   from tccd.last_compile_stats() (tccd only)
  python_steps      plan steps run in Python per call, summed over the graphs (tccd only);
                    python_steps_by_graph: per graph name (the table's "Python steps" list);
                    python_step_reasons_by_graph: for graphs with any, "op: why" -> steps per
                    call (an argument or return the stable C ABI cannot carry on this torch...)
  cudagraph_skips   (CUDA graph modes) tccd graphs that ran without CUDA graphs, with the
                    reason; cudagraph_skip_count: torch's cudagraph_skips counter (both backends)
  loss_diff, param_diff  (train, small batch, compiled backends only) max abs difference of the
                    losses over 10 steps and of all parameters after them against eager from the
                    same initial state and batch, measured in that worker after timing.
Warm start (--warm; issue 11's figure): after a cell's cold run, one more process per compiled
backend measures only its first step, warm: Inductor with the cold run's own local caches
(TORCHINDUCTOR_CACHE_DIR, TRITON_CACHE_DIR: FX graph and AOTAutograd caches warm); tccd with an
EMPTY local cache (TCCD_CACHE_DIR) against the daemon the cold run filled, as a new machine of a
cluster would start. Eager's own first step is the eager cell's. The table gains "warm first
step s e/I/t" and the first step over eager's, and a summary line per group: the sums over the
models of (warm first step - eager first step), tccd's over Inductor's (target <= 0.5), and the
cold first steps' ratio tccd / Inductor per model (target <= 0.3). Per warm tccd cell:
warm_graphs, warm_cache_hits (graphs the daemon served from its cache, by a Compile hit or
by key through an AOT recipe) and warm_aot_skipped (graphs whose AOTAutograd trace the
daemon-shared AOT recipe skipped). Every warm cell also splits its first step into phases
(`deploy/phase_timers.py`: dynamo, import, backend, aot_meta, aot_trace, partition, recipe, request,
compile_rpc, compile_wait, fetch, load, aot_load, plan_calls, rest; keys `phase_*`), printed as
tables of where the cold and the warm first steps go, per model and backend. With --aot the
loaded ahead-of-time step (start "aot") is the warm table's `tccd-aot` row. Inductor's cells
import torch._inductor.compile_fx (to time it) inside their first step, as a process's first
Inductor compile does; every first import is the `import` phase.
--first-step-only: every cell stops after its first step (no timed steps, profile, memory or
check), so the cold/warm/AOT first steps of a few models fit one 150 s GPU lane; with --aot the
cold tccd cell also makes the AOT save, after its first step in the same process (the
"aot-save" cell, in_cold_process: one process start and most of the save's compile fewer per
model; ZOO_SEPARATE_AOT_SAVE=1: a process of its own, as without --first-step-only). Under the
table, the sums over its models (a --merge of the lanes: the zoo's) of the warm and the
ahead-of-time first steps over eager's first step, with the targets (_start_sums). --aot-guards
lean|lean-dict-types|serializable: the save's guard filter (lean by default: tccd.precompile.lean_guards;
the AOT table says which and how many guards were kept). --warm-ab
ENV=VALUE[,...]: after each tccd warm cell and AOT load, the same once more with that environment
(start "warm-b" / "aot-b"; e.g. TCCD_CONV_WARMUP=0), in a table of their own (--warm-ab-models:
only for these models; --warm-ab-starts warm|aot: only those starts; a variant that sets
ZOO_AOT_GUARDS saves again, "aot-save-b", before its load). Every cell records Python's garbage
collections inside its first step (first_step_gc_s, first_step_gc_full, first_step_gc_full_s:
_GcWatch; listed under the tables; first_step_gc_full_by_phase: the phase each full one ran in);
ZOO_GC_FREEZE=1 calls gc.freeze() before it. Every cell also records what its first step read from
disk (first_step_majflt, first_step_read_mib: getrusage deltas; printed under the cell when not 0:
a host's first use of a library's pages shows there and not in a later process). Compiled cells record dynamo_frames and
dynamo_metrics (Dynamo's own seconds per dynamo_timed section); ZOO_SAMPLE_PHASE=dynamo (any
phase) samples the main thread's stack every ZOO_SAMPLE_INTERVAL_MS (2) while it is in that phase
(phase_samples: functions by samples, inclusive and innermost; phase_sampler.py). tccd cells record
`conv_warmup` (the backward plans' cuDNN warm-up: plans, shapes, failed, host ms; waiting_calls and
waiting_ms: TCCD_WAIT_CONV_WARMUP's calls while a first call waited for its compile) and, with
TCCD_PLAN_PROFILE=1, `first_call_profile` (each plan's first call by op), printed under the cell.
Every compiled cell records backend_import_s (`import tccd`; Inductor needs none) and compile_call_s
(the torch.compile() call: Dynamo's import in a process's first call), which first_step_s leaves
out, in the table "Before the first step".
GPU cells build their model on the device (ZOO_BUILD_ON_DEVICE=0: on the CPU). tccd's phase
wrappers are installed at its backend's first call, inside the first step, as Inductor's are.
ZOO_TRACE_DIR=DIR: each GPU cell runs one more step under the CPU+CUDA profiler and records
`idle_gaps` (GPU busy vs idle in the step, the worst gaps with the host operators inside each,
the CUDA runtime calls by time: profiling.idle_gaps) and writes the Chrome trace to DIR.
TCCD_EAGER_WHILE_COMPILING=1 (off by default; set it in the environment): tccd's cold first step runs the graphs whose compile is not done eagerly; the
worker waits for those compiles before the timed steps. Graphs still running eagerly at the end
of the first step are not in its records yet (first_daemon_compile_s counts only the others:
the daemon log's compile stages have them all).

Every cell records its process's stages (cell_marks: interpreter start, imports, model,
set-up, first step, AOT save, exit; the table "Where each cell's process time goes"): what a
lane's --budget-s pays. ZOO_FAST_EXIT (default 1): the driver ends eager's cells, the warm starts
and the AOT loads once their result line is in (0: every process exits on its own; 2: with
--first-step-only the cold cells too). --parallel-fill (--warm --first-step-only): a model's
compiled cold cells, which only fill the caches, run at the same time; the warm cells one at a
time after them (those cold cells are marked parallel_fill: no cold ratio, and --merge prefers
a cold cell measured alone).

Cold compiles: each Inductor worker gets fresh TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR,
each tccd worker a fresh TCCD_CACHE_DIR (its local cache). The tccd DAEMON's cache is not
cleared: if the daemon compiled the same graphs before (an earlier run, or the same model at
another batch size), tccd's first step is a warm daemon hit. zoo_gpu_run.sh starts a daemon on
an empty cache, so there only repeated graphs within the run are warm.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Dict, List, Optional, Tuple

ALL_MODELS = ["llama", "gpt2", "bert", "t5", "resnet50", "vit", "convnext", "toy_lm"]
VISION = {"resnet50", "vit", "convnext"}
BATCH = {"small": {"lm": 2, "vision": 8}, "large": {"lm": 16, "vision": 64}}
TINY_BATCH = {"small": {"lm": 2, "vision": 2}, "large": {"lm": 4, "vision": 4}}
RESULT_PREFIX = "ZOO_RESULT "
# The cold tccd cell's AOT save (--first-step-only --aot), printed after its ZOO_RESULT line, so
# that a save that crashes or passes the timeout leaves the cold cell's result standing.
AOT_SAVE_PREFIX = "ZOO_AOT_SAVE "
CHECK_STEPS = 10
# Where a cell's process time goes (the lane's --budget-s pays all of it, not only the first
# step): seconds since the driver spawned the worker (spec "spawned_at", wall clock) at each
# stage; the driver adds "exit" (the process's end after its last mark: interpreter and CUDA
# teardown, atexit handlers, Inductor's compile workers). Result key cell_marks.
_MARKS: Dict[str, float] = {}
_SPAWNED_AT: List[float] = []


def _mark(name: str) -> None:
    if _SPAWNED_AT:
        _MARKS[name] = round(time.time() - _SPAWNED_AT[0], 2)


# ---------------------------------------------------------------------------------------------
# Models: build(name, tiny, dropout) -> (model, batch_fn(bs, device) -> batch, fwd(model, batch, train) -> tensor)
# ---------------------------------------------------------------------------------------------


def _hf_fwd(model, batch, train):
    out = model(**batch)
    return out.loss if train else out.logits


def _vision_fwd(model, batch, train):
    import torch.nn.functional as F

    logits = model(batch["x"])
    return F.cross_entropy(logits.float(), batch["y"]) if train else logits


def _lm_batch(vocab, seq, with_labels=True):
    def make(bs, device):
        import torch

        g = torch.Generator(device="cpu").manual_seed(0)
        ids = torch.randint(1, vocab, (bs, seq), generator=g).to(device)
        return {"input_ids": ids, "labels": ids.clone()} if with_labels else {"input_ids": ids}

    return make


def _vision_batch(size):
    def make(bs, device):
        import torch

        g = torch.Generator(device="cpu").manual_seed(0)
        return {"x": torch.randn(bs, 3, size, size, generator=g).to(device),
                "y": torch.randint(0, 1000, (bs,), generator=g).to(device)}

    return make


class ToyLM:
    """A 2-layer nn.TransformerEncoder language model (embedding, encoder, linear head)."""

    @staticmethod
    def build(tiny, p):
        import torch.nn as nn

        vocab, d, heads, ff, seq = (256, 64, 4, 128, 32) if tiny else (32000, 512, 8, 2048, 512)

        class ToyLMModule(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(vocab, d)
                layer = nn.TransformerEncoderLayer(d, heads, ff, dropout=p, batch_first=True)
                self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
                self.head = nn.Linear(d, vocab)

            def forward(self, input_ids, labels=None):
                import torch.nn.functional as F

                logits = self.head(self.enc(self.emb(input_ids)))
                if labels is None:
                    return logits
                return F.cross_entropy(logits.float().reshape(-1, vocab), labels.reshape(-1))

        def fwd(model, batch, train):
            return model(batch["input_ids"], batch["labels"] if train else None)

        # Published at module scope under its own name: torch's ahead-of-time flow (--aot) saves
        # guards on the module's type, and refuses a type defined in a local scope.
        ToyLMModule.__qualname__ = ToyLMModule.__name__
        globals()[ToyLMModule.__name__] = ToyLMModule
        return ToyLMModule(), _lm_batch(vocab, seq), fwd


def _build_on(spec: Dict[str, Any], device: Any):
    """build_model with its parameters made on `device`: a large model's random initialisation
    on the CPU took 4-10 s of every GPU cell's process (session 15's r1), the GPU does it in
    well under one. Every cell of a run builds the same way from the same seed, so all backends
    start from equal weights. ZOO_BUILD_ON_DEVICE=0 (or an error building on the device) builds
    on the CPU as before."""
    import torch

    if device.type != "cpu" and os.environ.get("ZOO_BUILD_ON_DEVICE", "1") != "0":
        try:
            with device:
                return build_model(spec["model"], spec["tiny"], spec["dropout"])
        except Exception as e:  # noqa: BLE001  the CPU build below is the reference
            print(f"zoo: building {spec['model']} on {device} failed ({e!r}); building on the CPU", file=sys.stderr)
            torch.manual_seed(0)
    return build_model(spec["model"], spec["tiny"], spec["dropout"])


def build_model(name: str, tiny: bool, dropout: bool):
    p = 0.1 if dropout else 0.0
    if name == "toy_lm":
        return ToyLM.build(tiny, p)
    if name == "llama":
        from transformers import LlamaConfig, LlamaForCausalLM

        dims = dict(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                    num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=64) if tiny else \
            dict(vocab_size=32000, hidden_size=1024, intermediate_size=2816, num_hidden_layers=4,
                 num_attention_heads=16, num_key_value_heads=16, max_position_embeddings=1024)
        cfg = LlamaConfig(**dims, attention_dropout=p, use_cache=False)
        return LlamaForCausalLM(cfg), _lm_batch(dims["vocab_size"], 32 if tiny else 512), _hf_fwd
    if name == "gpt2":
        from transformers import GPT2Config, GPT2LMHeadModel

        dims = dict(n_layer=2, n_embd=64, n_head=4, n_positions=64, vocab_size=512) if tiny else \
            dict(n_layer=4, n_embd=768, n_head=12, n_positions=1024)
        cfg = GPT2Config(**dims, resid_pdrop=p, embd_pdrop=p, attn_pdrop=p, use_cache=False)
        return GPT2LMHeadModel(cfg), _lm_batch(cfg.vocab_size, 32 if tiny else 512), _hf_fwd
    if name == "bert":
        from transformers import BertConfig, BertForMaskedLM

        dims = dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=128,
                    vocab_size=512, max_position_embeddings=64) if tiny else dict(num_hidden_layers=4)
        cfg = BertConfig(**dims, hidden_dropout_prob=p, attention_probs_dropout_prob=p)
        return BertForMaskedLM(cfg), _lm_batch(cfg.vocab_size, 32 if tiny else 512), _hf_fwd
    if name == "t5":
        from transformers import T5Config, T5ForConditionalGeneration

        dims = dict(num_layers=2, num_decoder_layers=2, d_model=64, d_ff=128, num_heads=4, d_kv=16,
                    vocab_size=512) if tiny else \
            dict(num_layers=4, num_decoder_layers=4, d_model=512, d_ff=2048, num_heads=8)
        # decoder_start_token_id is required: labels are shifted right into decoder inputs.
        cfg = T5Config(**dims, decoder_start_token_id=0, pad_token_id=0, dropout_rate=p, use_cache=False)
        return T5ForConditionalGeneration(cfg), _lm_batch(cfg.vocab_size, 32 if tiny else 256), _hf_fwd
    size = 32 if tiny else 224
    if name == "resnet50":
        import torchvision

        return torchvision.models.resnet50(), _vision_batch(size), _vision_fwd
    if name == "vit":
        try:
            import timm
        except ImportError:
            import torchvision

            kw = dict(image_size=32, patch_size=16, num_layers=2, num_heads=2, hidden_dim=64, mlp_dim=128) if tiny else {}
            if tiny:
                return torchvision.models.VisionTransformer(dropout=p, attention_dropout=p, **kw), _vision_batch(size), _vision_fwd
            return torchvision.models.vit_b_16(dropout=p, attention_dropout=p), _vision_batch(size), _vision_fwd
        kw = dict(img_size=32, depth=2, embed_dim=64, num_heads=2) if tiny else {}
        m = timm.create_model("vit_base_patch16_224", pretrained=False, drop_rate=p, attn_drop_rate=p, **kw)
        return m, _vision_batch(size), _vision_fwd
    if name == "convnext":
        import timm

        kw = dict(depths=(1, 1, 1, 1), dims=(16, 32, 64, 128)) if tiny else {}
        return timm.create_model("convnext_tiny", pretrained=False, drop_rate=p, **kw), _vision_batch(size), _vision_fwd
    raise ValueError(f"unknown model {name!r}; known: {', '.join(ALL_MODELS)}")


# ---------------------------------------------------------------------------------------------
# Worker: one cell in this process
# ---------------------------------------------------------------------------------------------


def _host_step_ms(step, cuda: bool, step_ms: float, n: int = 10) -> Dict[str, Any]:
    """Host (CPU) time to enqueue one step while the GPU stays busy, median of n.

    Before each timed call a torch.cuda._sleep kernel longer than the whole step is queued, so
    the GPU never drains the queue while the step's Python, dispatcher and launch work run: the
    call's wall time (no sync inside the timed region) is then the host's cost of the step, not
    the GPU's. The sync comes after. `host_queue_drained` counts calls after which the stream
    was already idle (the sleep was too short, or the step synchronised inside: then that
    call's time includes waiting for the GPU). On the CPU there is no queue: the step's own time
    (step_ms, measured already)."""
    import torch

    if not cuda:
        return {"host_ms": step_ms, "host_queue_drained": 0}
    times = []
    drained = 0
    # ~2 GHz SM clocks: 4x the step's measured wall time (at least 20 ms) of sleeping.
    cycles = int(max(4 * step_ms, 20.0) * 2.0e6)
    for _ in range(n):
        torch.cuda.synchronize()
        torch.cuda._sleep(cycles)
        t0 = time.perf_counter()
        step()
        dt = time.perf_counter() - t0
        drained += bool(torch.cuda.current_stream().query())
        torch.cuda.synchronize()
        times.append(dt * 1000.0)
    return {"host_ms": statistics.median(times), "host_queue_drained": drained}


def _profile_step(step, cuda: bool):
    """(events, busy ms, [[name, launches, us]] heaviest first) of one step under torch.profiler:
    the CUDA device's kernels and copies on a GPU, the CPU operators' self time on the CPU
    (deploy/profiling.py sums them)."""
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    from profiling import profile_kernels

    kernels = profile_kernels(step, device="cuda" if cuda else "cpu")
    count = sum(k.launches for k in kernels.values())
    busy_us = sum(k.us for k in kernels.values())
    # Where the device time goes, heaviest first: [name (shortened), launches, total us].
    top = sorted(kernels.items(), key=lambda kv: -kv[1].us)
    return count, busy_us / 1000.0, [[name[:120], k.launches, round(k.us, 1)] for name, k in top]


def _functional_loss(model, fwd):
    """The training loss as a function of (parameters and buffers, batch): what torch's
    ahead-of-time flow saves (every tensor an input; the module is the caller's, external data).
    The model's own fwd runs with the module call replaced by torch.func.functional_call."""
    import torch

    def loss_fn(state, batch):
        def call(*args, **kwargs):
            return torch.func.functional_call(model, state, args, kwargs)

        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=torch.cuda.is_available()):
            return fwd(call, batch, True)

    return loss_fn


def _without_loss_type_warning(model) -> None:
    """transformers' GPT-2 names no loss_type, so its loss_function property calls
    logger.warning_once (an lru_cache Dynamo cannot trace: a graph break, which aot_compile's
    fullgraph refuses) and then uses ForCausalLM's loss. Naming that loss is the same
    computation without the break. Only the --aot cells do this: the cold and warm cells keep
    the model as users run it (two Dynamo graphs)."""
    try:
        from transformers.loss.loss_utils import LOSS_MAPPING
    except ImportError:  # no transformers, or one without loss_type: nothing to do
        return
    if hasattr(model, "loss_type") and getattr(model, "loss_type") not in LOSS_MAPPING and \
            type(model).__name__.endswith(("LMHeadModel", "ForCausalLM")):
        model.loss_type = "ForCausalLM"


def _disk_reads() -> Tuple[int, int]:
    """(major page faults, filesystem blocks read) of this process so far: a first step that
    reads library or kernel pages from disk (a host's first use, before the page cache holds
    them) shows here and not in a later process's step."""
    import resource

    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_majflt, ru.ru_inblock


def _record_disk_reads(out: Dict[str, Any], before: Tuple[int, int]) -> None:
    majflt, inblock = _disk_reads()
    out["first_step_majflt"] = majflt - before[0]
    out["first_step_read_mib"] = round((inblock - before[1]) * 512 / 2**20, 1)


class _GcWatch:
    """Python's garbage collections during a cell's timed first step (every backend): their wall
    seconds, and the full (generation 2) ones apart. A process's first full collection scans
    every object its imports and set-up made (~0.5 s on the CPU machine, in the AOT load's guard
    unpickling); whose step it lands in depends on what the step allocates. ZOO_GC_FREEZE=1:
    gc.freeze() first (what the set-up made is never scanned again), as servers do after
    start-up: a variant for --warm-ab, not the default."""

    def __init__(self, timers: Any = None) -> None:
        self.seconds = 0.0
        self.full_seconds = 0.0
        self.full = 0
        # Full collections on the main thread by the phase they ran in (phase_timers): which
        # phase pays the collections a compile makes due (TCCD_WAIT_FULL_GC moves tccd's).
        self.timers = timers
        self.full_by_phase: Dict[str, List[float]] = {}
        self.froze = os.environ.get("ZOO_GC_FREEZE", "0") == "1"
        self._start: Optional[Tuple[int, float]] = None

    def _callback(self, phase: str, info: Dict[str, Any]) -> None:
        if phase == "start":
            self._start = (info["generation"], time.perf_counter())
        elif self._start is not None:
            generation, t0 = self._start
            elapsed = time.perf_counter() - t0
            self.seconds += elapsed
            if generation == 2:
                self.full += 1
                self.full_seconds += elapsed
                if self.timers is not None and threading.current_thread() is threading.main_thread():
                    n, s = self.full_by_phase.get(self.timers.current_phase(), (0, 0.0))
                    self.full_by_phase[self.timers.current_phase()] = [n + 1, round(s + elapsed, 4)]
            self._start = None

    def __enter__(self) -> "_GcWatch":
        import gc

        if self.froze:
            gc.freeze()
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc: Any) -> None:
        import gc

        gc.callbacks.remove(self._callback)

    def record(self, out: Dict[str, Any]) -> None:
        out["first_step_gc_s"] = round(self.seconds, 4)
        out["first_step_gc_full"] = self.full
        out["first_step_gc_full_s"] = round(self.full_seconds, 4)
        if self.timers is not None:
            out["first_step_gc_full_by_phase"] = self.full_by_phase
        if self.froze:
            out["gc_freeze"] = True


def _dynamo_metrics() -> Dict[str, Any]:
    """Dynamo's own account of its compiles so far (torch._dynamo.utils: frames compiled, and
    seconds per dynamo_timed section: the whole frame, the backend call, guards, its gc), to
    split the `dynamo` phase where it differs between backends (T5's, session 15)."""
    from torch._dynamo.utils import compilation_time_metrics, counters

    metrics = {k: round(sum(v), 3) for k, v in compilation_time_metrics.items() if v and sum(v) >= 0.005}
    return {"dynamo_frames": int(counters["stats"]["unique_graphs"]), "dynamo_metrics": metrics}


def _tccd_first_step_extras() -> Dict[str, Any]:
    """What a tccd cell records about its first step besides the phases: the backward plans'
    cuDNN warm-up (TCCD_CONV_WARMUP: shapes warmed, host ms on the autograd thread) and, with
    TCCD_PLAN_PROFILE=1, each plan's first call by op (native_plan.profile_report)."""
    import tccd
    from tccd import conv_warmup

    out: Dict[str, Any] = {}
    # Per graph, in the order their plans were taken: the daemon's compile and how long the
    # step waited for a prefetched one (which graph's compile the first step waited for).
    out["first_graphs"] = [
        {k: (round(s[k], 1) if isinstance(s[k], float) else s[k])
         for k in ("name", "kind", "compile_ms", "server_ms", "kernels_compiled", "prefetched",
                   "prefetch_wait_ms", "eager_calls", "timeline_ms") if k in s}
        for s in tccd.last_compile_stats()]
    cw = conv_warmup.stats()
    out["conv_warmup"] = {k: cw[k] for k in ("plans", "shapes", "failed")}
    out["conv_warmup"]["ms"] = round(cw["ms"], 1)
    # TCCD_WAIT_CONV_WARMUP: convolution calls run while a first call waited for its compile.
    out["conv_warmup"]["waiting_calls"] = cw.get("waiting_calls", 0)
    out["conv_warmup"]["waiting_ms"] = round(cw.get("waiting_ms", 0.0), 1)
    # TCCD_CONV_WARMUP_FORWARD: a forward plan's convolutions warmed on a thread of their own.
    out["conv_warmup"]["forward_shapes"] = cw.get("forward_shapes", 0)
    out["conv_warmup"]["forward_ms"] = round(cw.get("forward_ms", 0.0), 1)
    try:
        from tccd import full_gc

        # TCCD_WAIT_FULL_GC: full collections run while a first call waited for its compile.
        n, seconds = full_gc.waited_collections()
        out["wait_full_gc"] = {"collections": n, "s": round(seconds, 4)}
    except (ImportError, AttributeError):
        pass
    if os.environ.get("TCCD_PLAN_PROFILE", "") not in ("", "0"):
        from tccd import native_plan

        # Where the first step's plan_calls went, per plan (module loads, cuDNN/cuBLAS set-up
        # by op): the first call of each plan, timed per step by the runtime.
        out["first_call_profile"] = [line for line in native_plan.profile_report().splitlines()
                                     if line.startswith("tccd plan first call")]
    return out


def _aot_save(spec: Dict[str, Any], path: str, model, loss_fn, state, batch, out: Dict[str, Any]):
    """Compiles the functional training step with aot_compile and saves it to `path`; records
    the guard filter and the guards it kept in `out`. Returns the compiled function."""
    import torch

    import tccd
    import tccd.precompile  # noqa: F401  (the saved file names its classes)

    torch._dynamo.config.enable_aot_compile = True  # torch 2.11's default is False
    # Identity guards (transformers' decorated forwards, builtins stored on modules) cannot
    # be saved and mean nothing in another process: dropped (precompile.py's module doc).
    # --aot-guards lean (ZOO_AOT_GUARDS overrides it: --warm-ab's variant) drops the
    # modules' structure guards too (precompile.lean_guards): the load rebuilds fewer;
    # lean-dict-types is lean before it dropped the modules' dict type guards.
    guards = os.environ.get("ZOO_AOT_GUARDS") or spec.get("aot_guards") or "serializable"
    keep = {"serializable": tccd.precompile.serializable_guards, "lean": tccd.precompile.lean_guards,
            "lean-dict-types": tccd.precompile.lean_guards_keep_dict_types}[guards]
    counted: Dict[str, int] = {}

    def guard_filter(entries):
        kept = keep(entries)
        counted.update(total=len(kept), kept=sum(bool(k) for k in kept))
        return kept

    compiled = torch.compile(loss_fn, backend="tccd", fullgraph=True, dynamic=False,
                             options={"guard_filter_fn": guard_filter})
    fn = compiled.aot_compile(((state, batch), {}))
    fn.save_compiled_function(path, external_data={"model": model})
    out["aot_guards"] = guards
    out["aot_guards_kept"], out["aot_guards_total"] = counted.get("kept"), counted.get("total")
    return fn


def _aot_save_after_cold(spec: Dict[str, Any], model, fwd, batch, init_state, sync) -> Dict[str, Any]:
    """--first-step-only --aot: the save in the cold tccd cell's process, after its first step
    (one process fills the daemon for both warm starts; the driver reports it as the
    "aot-save" cell). The model goes back to its initial state first, so the saved step's
    first loss is the one a new process's load computes. Keys prefixed aot_save_."""
    import torch

    out: Dict[str, Any] = {}
    # --warm-precompile's cold cell ran with torch's caching_precompile (TCCD_CACHING_PRECOMPILE):
    # its package is written; the ahead-of-time save is the flow of its own, as without it.
    torch._dynamo.config.caching_precompile = False
    try:
        _without_loss_type_warning(model)
        with torch.no_grad():
            model.load_state_dict(init_state)
        state = {**dict(model.named_parameters()), **dict(model.named_buffers())}
        gc_watch = _GcWatch().__enter__()
        reads0 = _disk_reads()
        t0 = time.perf_counter()
        fn = _aot_save(spec, spec["aot_save_path"], model, _functional_loss(model, fwd), state, batch, out)
        loss = fn(state, batch)
        loss.backward()
        sync()
        out["first_step_s"] = time.perf_counter() - t0
        _record_disk_reads(out, reads0)
        gc_watch.__exit__()
        gc_watch.record(out)
        out["loss"] = float(loss.detach())
        out["ok"] = True
    except Exception as e:  # reported as the save cell's failure; the cold cell stands
        out.update(ok=False, status="failed", error=f"{type(e).__name__}: {e}"[:500])
    _mark("aot_save")
    out["cell_marks"] = dict(_MARKS)  # the cold cell's with the save's: aot_save_cell_marks
    return {f"aot_save_{k}": v for k, v in out.items()}


def run_aot_cell(spec: Dict[str, Any]) -> Dict[str, Any]:
    """--aot (tccd, train): "aot-save" compiles the functional training step with
    torch.compile(...).aot_compile and saves it (once per cluster: not timed as a start);
    "aot" is a new process that loads it (torch.compiler.load_compiled_function: no Dynamo,
    no AOTAutograd, no compile) and runs its first step, timed from the load."""
    import torch

    import tccd
    import tccd.precompile  # noqa: F401  (the saved file names its classes)

    _mark("imports")
    cuda = spec["device"] == "cuda"
    device = torch.device(spec["device"])
    torch.manual_seed(0)
    model, batch_fn, fwd = _build_on(spec, device)
    _mark("model")
    model.to(device).train(True)
    kind = "vision" if spec["model"] in VISION else "lm"
    batch = batch_fn((TINY_BATCH if spec["tiny"] else BATCH)[spec["batch"]][kind], device)
    _without_loss_type_warning(model)
    state = {**dict(model.named_parameters()), **dict(model.named_buffers())}
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    loss_fn = _functional_loss(model, fwd)
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    out: Dict[str, Any] = dict(spec, ok=True)
    timers = None
    if spec["start"] in ("aot", "aot-b"):  # the warm start through the AOT flow: where it goes (--warm)
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from phase_timers import Timers

        timers = Timers()
    sync()
    _mark("set_up")
    gc_watch = _GcWatch(timers).__enter__()
    if timers:
        timers.begin()
    reads0 = _disk_reads()
    t0 = time.perf_counter()
    if timers:
        # Inside the timed first step, as Inductor's instrumentation is: the imports the
        # wrapping does (tccd's client modules) are the process's own. Not AOTAutograd's: the
        # load never imports or runs it (phase_timers.instrument_tccd).
        timers.instrument_tccd(aot_autograd=False)
        timers.instrument_aot_load()
    if spec["start"] in ("aot-save", "aot-save-b"):
        fn = _aot_save(spec, spec["aot_path"], model, loss_fn, state, batch, out)
    else:
        with open(spec["aot_path"], "rb") as f:
            fn = torch.compiler.load_compiled_function(f, external_data={"model": model})
        out["aot_load_s"] = time.perf_counter() - t0
    loss = fn(state, batch)
    loss.backward()
    opt.step()
    sync()
    out["first_step_s"] = time.perf_counter() - t0
    _record_disk_reads(out, reads0)
    _mark("first_step")
    gc_watch.__exit__()
    gc_watch.record(out)
    out["loss"] = float(loss.detach())
    stats = tccd.last_compile_stats()
    out["graphs"] = len(stats)
    out.update(_tccd_first_step_extras())
    if timers:
        # compiled=True: Dynamo's own metrics, which must say ~0 (load_compiled_function runs
        # no trace; a recompile would show here).
        out.update({f"phase_{k}": v for k, v in timers.finish(out["first_step_s"], compiled=True).items()})
        out["warm_graphs"] = len(stats)
        out["warm_aot_skipped"] = sum(bool(s.get("aot_skipped")) for s in stats)
        out["warm_cache_hits"] = sum(bool(s.get("cache_hit") or s.get("aot_skipped")) for s in stats)
        out["fallbacks"] = [{"graph": s["name"], "reason": s["fallback"]} for s in stats if s["fallback"]]
        from torch._dynamo.utils import counters

        out["dynamo_frames"] = int(counters["stats"]["unique_graphs"])
    return out


def _record_traced_frames() -> List[Dict[str, Any]]:
    """--warm-precompile's "warm-pre": every frame Dynamo still compiles (convert_frame._compile,
    after phase_timers' wrapper), with the first failing guard of each entry Dynamo's package
    installed on that code (`check_verbose` on the frame's locals and closure): what makes a
    loaded package trace after all. The list fills while the cell runs."""
    import torch._dynamo.convert_frame as convert_frame

    frames: List[Dict[str, Any]] = []
    compile_frame = convert_frame._compile

    def recording(code, f_globals, f_locals, builtins, closure, *args, **kwargs):
        entry: Dict[str, Any] = {"code": f"{code.co_name} {code.co_filename}:{code.co_firstlineno}"}
        try:
            from torch._C._dynamo.eval_frame import _debug_get_precompile_entries

            scope = dict(f_locals)
            scope.update({name: cell.cell_contents for name, cell in zip(code.co_freevars, closure or ())
                          if _cell_set(cell)})
            entries = _debug_get_precompile_entries(code)
            entry["package_entries"] = len(entries)
            entry["failed_guards"] = [list(e.guard_manager.check_verbose(scope).verbose_code_parts)[:2]
                                      for e in entries][:4]
        except Exception as e:  # deliberately ignored: a diagnostic only
            entry["diagnostic_error"] = f"{type(e).__name__}: {e}"[:200]
        frames.append(entry)
        return compile_frame(code, f_globals, f_locals, builtins, closure, *args, **kwargs)

    convert_frame._compile = recording
    return frames


def _cell_set(cell: Any) -> bool:
    try:
        cell.cell_contents
        return True
    except ValueError:  # an empty cell
        return False


def run_cell(spec: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    if spec.get("start") in ("aot-save", "aot", "aot-save-b", "aot-b"):
        return run_aot_cell(spec)
    import torch

    backend, train = spec["backend"], spec["workload"] == "train"
    cuda = spec["device"] == "cuda"
    device = torch.device(spec["device"])
    backend_import_s = 0.0
    if backend == "tccd":
        t_import = time.perf_counter()
        import tccd  # noqa: F401  registers the backend where the entry point is not installed
        backend_import_s = time.perf_counter() - t_import
    _mark("imports")
    torch.manual_seed(0)
    model, batch_fn, fwd = _build_on(spec, device)
    _mark("model")
    model.to(device)
    kind = "vision" if spec["model"] in VISION else "lm"
    bs = (TINY_BATCH if spec["tiny"] else BATCH)[spec["batch"]][kind]
    batch = batch_fn(bs, device)
    model.train(train)
    init_state = {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
    timers = None
    if backend != "eager":  # where the first step goes, cold or warm (cheap: a few wrappers)
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from phase_timers import Timers

        timers = Timers()
    # --mode: torch.compile's mode for both compiled backends ("default": none given).
    mode = None if spec.get("mode", "default") == "default" else spec["mode"]
    # --warm-precompile's "warm-pre": torch.compile() loads Dynamo's package (tccd's plans
    # included), so the first step is timed from before it, instrumented from there (as the AOT
    # load cells are); precompile_load_s is that call.
    precompile = spec.get("start") == "warm-pre" and timers is not None
    precompile_gc_watch: Optional[_GcWatch] = None
    if precompile:
        # What every torch.compile() call imports (Dynamo's backend-debug wrapper: ~1 s on the
        # CPU machine), outside the other cells' first steps (their compile_call_s): outside
        # this one's too; the package's load stays inside.
        import torch._dynamo.repro.after_dynamo  # noqa: F401

        timers.begin()
        t_precompile = time.perf_counter()
        # The package's load is in this cell's first step: its collections too (a full one
        # lands in whichever phase crosses the threshold: the guards' unpickling, tccd's load).
        precompile_gc_watch = _GcWatch(timers).__enter__()
        tccd_backend = timers.instrument_tccd(aot_autograd=False)  # a package hit runs none
        traced_frames = _record_traced_frames()
    t_compile_call = time.perf_counter()
    if backend == "eager":
        compiled = model
    elif backend == "inductor":
        compiled = torch.compile(model, mode=mode)
    else:
        # Instrumented at the backend's first call, inside the first step (phase_timers.lazy_tccd).
        compiled = torch.compile(model, backend=(tccd_backend if precompile else timers.lazy_tccd()) if timers
                                 else "tccd", mode=mode)
    compile_call_s = time.perf_counter() - t_compile_call
    autocast = torch.autocast("cuda", dtype=torch.bfloat16) if cuda else torch.autocast("cpu", enabled=False)

    # CUDA graph modes: a new step begins here (outputs of the last one are not read again).
    cuda_graphs = mode in ("reduce-overhead", "max-autotune") and backend != "eager"
    mark_step = torch.compiler.cudagraph_mark_step_begin if cuda_graphs else (lambda: None)

    def make_step(m, opt):
        def step():
            mark_step()
            if train:
                with autocast:
                    loss = fwd(m, batch, True)
                loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=True)
                return loss.detach()
            with torch.no_grad(), autocast:
                return fwd(m, batch, False)
        return step

    sync = torch.cuda.synchronize if cuda else (lambda: None)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3) if train else None
    step = make_step(compiled, opt)
    # What a backend costs before its first step, outside first_step_s: `import tccd` (Inductor
    # needs no import) and the torch.compile() call (Dynamo's import on a process's first call,
    # both backends). Reported beside the first steps ("Before the first step"), so that a
    # backend that imports at `import` time what the other imports inside its first step is seen.
    out: Dict[str, Any] = dict(spec, batch_size=bs, ok=True, backend_import_s=round(backend_import_s, 3),
                               compile_call_s=round(compile_call_s, 3))
    sync()
    _mark("set_up")  # the model on the device (CUDA's initialisation), the batch, the state's copy
    gc_watch = precompile_gc_watch if precompile else _GcWatch(timers).__enter__()
    sampler = None
    if timers and not precompile:
        timers.begin()
        if os.environ.get("ZOO_SAMPLE_PHASE"):
            # Which functions one phase's seconds went to (phase_sampler.py): the main thread's
            # stack sampled while it is in that phase.
            from phase_sampler import PhaseSampler

            sampler = PhaseSampler(timers, os.environ["ZOO_SAMPLE_PHASE"],
                                   float(os.environ.get("ZOO_SAMPLE_INTERVAL_MS", "2")) / 1e3).start()
    c0 = time.thread_time()
    reads0 = _disk_reads()
    t0 = t_precompile if precompile else time.perf_counter()
    if timers and backend == "inductor":
        # Imports torch._inductor.compile_fx (~200 modules) to wrap it: inside the first step,
        # as the first compile of a process using Inductor imports it (timed as `import`).
        timers.instrument_inductor()
    step()
    sync()
    out["first_step_s"] = time.perf_counter() - t0
    _record_disk_reads(out, reads0)
    _mark("first_step")
    gc_watch.__exit__()
    gc_watch.record(out)
    if sampler is not None:
        out["phase_samples"] = sampler.stop()
    # The main thread's CPU time in it: far below the wall time while that thread traces means
    # it waited for a core (the daemon's compile threads on the same machine: --compile-nice).
    out["first_step_cpu_s"] = time.thread_time() - c0
    if timers:
        first = out["first_step_s"]
        if timers.cpu:  # PHASE_CLOCK=cpu: phases in the main thread's CPU time (phase_timers.py)
            first = out["first_step_cpu_s"]
        out.update({f"phase_{k}": v for k, v in timers.finish(first, compiled=True).items()})
        out["dynamo_cpu_s"] = round(timers.dynamo_cpu, 4)  # the dynamo phase's main-thread CPU time
        # The import phase by package (phase_timers.import_group), >= 5 ms, largest first.
        out["phase_import_by"] = {k: round(v, 3) for k, v in sorted(timers.imports.items(), key=lambda kv: -kv[1])
                                  if v >= 0.005}
        out.update(_dynamo_metrics())
        timers.restore()  # the timed steps below run without the wrappers
        if backend == "tccd":
            import tccd

            # The daemon's compile time (summed over graphs; overlaps the step where prefetched).
            out["first_daemon_compile_s"] = round(sum(s["compile_ms"] for s in tccd.last_compile_stats()) / 1e3, 3)
            out.update(_tccd_first_step_extras())
    if backend == "tccd":
        from tccd import prefetch

        # TCCD_EAGER_WHILE_COMPILING: compiles may still run after the first step (which ran
        # their graphs eagerly); the steps timed below must run the plans.
        waited_s = time.perf_counter()
        prefetch.wait_all(spec.get("timeout_s", 600))
        out["background_compile_wait_s"] = round(time.perf_counter() - waited_s, 3)
    if precompile:
        from torch._dynamo.utils import counters

        out["precompile_load_s"] = round(compile_call_s, 4)  # inside first_step_s
        out["compile_call_s"] = 0.0  # ("Before the first step": none of it is outside)
        # The package: read (hit), none (miss) or dropped (error); frames Dynamo still traced.
        out["dynamo_cache"] = {k: v for k, v in counters["dynamo_cache"].items() if v}
        out["dynamo_frames"] = int(counters["stats"]["unique_graphs"])
        out["traced_frames"] = traced_frames  # what Dynamo still traced, and why the package's guards failed
    if spec.get("start") in ("warm", "warm-b", "warm-pre") or spec.get("first_only"):
        # A warm-start cell measures the first step only (--warm): what a new process pays;
        # --first-step-only makes every cell do so.
        if backend == "tccd" and spec.get("start") in ("warm", "warm-b", "warm-pre"):
            import tccd

            stats = tccd.last_compile_stats()
            out["warm_graphs"] = len(stats)
            # Served warm: a daemon cache hit, or a plan an AOT recipe named (fetched by key).
            out["warm_cache_hits"] = sum(bool(s.get("cache_hit") or s.get("aot_skipped")) for s in stats)
            out["warm_aot_skipped"] = sum(bool(s.get("aot_skipped")) for s in stats)
            out["fallbacks"] = [{"graph": s["name"], "reason": s["fallback"]} for s in stats if s["fallback"]]
            out["warm_local_hits"] = sum(bool(s.get("local_hit")) for s in stats)
            out["warm_graph_stats"] = [{k: s.get(k) for k in ("name", "kind", "cache_hit", "aot_skipped", "local_hit",
                                                              "compile_ms", "fallback", "native_kernels",
                                                              "dynamo_package")}
                                       for s in stats]
        if backend == "tccd" and train and spec.get("aot_save_path"):
            out["cell_marks"] = dict(_MARKS)
            print(RESULT_PREFIX + json.dumps(out), flush=True)  # the cold cell first (AOT_SAVE_PREFIX)
            print(AOT_SAVE_PREFIX + json.dumps(_aot_save_after_cold(spec, model, fwd, batch, init_state, sync)),
                  flush=True)
            return None
        return out
    for _ in range(spec["warmup"]):
        step()
    sync()
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(spec["iters"]):
        t0 = time.perf_counter()
        step()
        sync()
        times.append((time.perf_counter() - t0) * 1000.0)
    out["step_ms"] = statistics.median(times)
    out["peak_mib"] = torch.cuda.max_memory_allocated() / 2**20 if cuda else None
    out.update(_host_step_ms(step, cuda, out["step_ms"]))
    out["kernels_per_step"], out["gpu_busy_ms"], top = _profile_step(step, cuda)
    if cuda_graphs:
        from torch._dynamo.utils import counters

        # Graphs (Inductor: graph partitions) that ran without CUDA graphs, both backends.
        out["cudagraph_skip_count"] = counters["inductor"]["cudagraph_skips"]
    out["top_kernels"] = top[: spec.get("top_kernels_n", 25)]
    trace_dir = os.environ.get("ZOO_TRACE_DIR")
    if trace_dir and cuda:
        # ZOO_TRACE_DIR: one more step under the CPU+CUDA profiler: its GPU idle gaps with the
        # host work inside each, the CUDA runtime calls, and the Chrome trace (profiling.idle_gaps).
        from profiling import idle_gaps

        os.makedirs(trace_dir, exist_ok=True)
        name = f"{spec['model']}-{spec['workload']}-{spec['batch']}-{backend}"
        out["idle_gaps"] = idle_gaps(step, os.path.join(trace_dir, name + ".json"))
    if backend == "tccd":
        import tccd

        stats = tccd.last_compile_stats()
        out["graphs"] = len(stats)
        out["fallbacks"] = [{"graph": s["name"], "reason": s["fallback"]} for s in stats if s["fallback"]]
        out["extern_steps"] = sum(s["extern_steps"] for s in stats)
        out["native_kernels"] = sum(s["native_kernels"] for s in stats)
        # Seconds loading plans into the GPU (modules, cuBLASLt objects, matmul autotuning).
        from tccd import runtime as tccd_runtime

        out["cuda_init_s"] = round(tccd_runtime.cuda_init_seconds(), 4)
        out["python_steps"] = sum(s.get("python_steps", 0) for s in stats)  # per call, all graphs
        # Per graph (issue 8's target is 0 for every graph, not only in sum): which graph still
        # runs steps in Python, in the order the graphs compiled.
        out["python_steps_by_graph"] = {s["name"]: s.get("python_steps", 0) for s in stats}
        # And why, per graph with any: "op: reason" -> steps per call (native_plan.py).
        out["python_step_reasons_by_graph"] = {s["name"]: s["python_step_reasons"] for s in stats
                                               if s.get("python_step_reasons")}
        if cuda_graphs:  # which graphs run without CUDA graphs, and why
            out["cudagraph_skips"] = [{"graph": s["name"], "reason": s.get("cudagraph_skip")}
                                      for s in stats if not s.get("cudagraphs")]
        # Calls run eagerly while their graph compiled (TCCD_EAGER_WHILE_COMPILING): the first step's.
        out["eager_calls"] = sum(s.get("eager_calls", 0) for s in stats)
        # Per graph, what the daemon's compile cost (issue 11: is a graph bounded by its slowest
        # kernel, i.e. did kernel-level parallelism apply?).
        out["graph_compiles"] = [{k: s.get(k) for k in ("name", "compile_ms", "server_ms", "kernels_compiled",
                                                        "kernels_reused", "native_kernels", "prefetch_wait_ms",
                                                        "eager_calls", "cache_hit", "python_steps")}
                                for s in stats]
        # What each generated kernel fused, to read the profile's tccd_k<N>_* names (kernel
        # names restart in every graph).
        ops: Dict[str, List[str]] = {}
        for s in stats:
            for k in s.get("kernels", []):
                fused = ",".join(dict.fromkeys(o.replace("aten::", "").replace(".default", "") for o in k["ops"]))
                shape = "x".join(map(str, k.get("shape", [])))
                ops.setdefault(k["name"], []).append(f"{s['kind']}: {fused[:100]} [{shape}]")
        out["kernel_ops"] = ops
    if train and spec["batch"] == "small" and backend != "eager" and spec.get("check", True):
        out.update(_correctness(model, compiled, init_state, make_step, sync))
    return out


def _correctness(model, compiled, init_state, make_step, sync) -> Dict[str, float]:
    """Eager on a deepcopy, then the compiled model, both from init_state and the same batch."""
    import torch

    def run(m, forward):
        m.load_state_dict(init_state)
        opt = torch.optim.SGD(m.parameters(), lr=1e-3)
        step = make_step(forward, opt)
        losses = [step().float().cpu() for _ in range(CHECK_STEPS)]
        sync()
        return torch.stack(losses), {k: p.detach().float().cpu() for k, p in m.named_parameters()}

    ref = copy.deepcopy(model)
    ref_losses, ref_params = run(ref, ref)
    del ref
    losses, params = run(model, compiled)
    # loss_moved: how much eager's loss changed over the steps (a diff of 0 is only meaningful if > 0).
    return {"loss_diff": (losses - ref_losses).abs().max().item(),
            "loss_moved": (ref_losses[0] - ref_losses[-1]).abs().item(),
            "param_diff": max((params[k] - ref_params[k]).abs().max().item() for k in ref_params)}


def worker_main(spec_json: str) -> int:
    spec = json.loads(spec_json)
    if "spawned_at" in spec:
        _SPAWNED_AT.append(spec.pop("spawned_at"))
        _mark("python")  # the interpreter's start and this file's imports
    result = run_cell(spec)
    if result is not None:  # None: run_cell printed its lines itself
        _mark("done")
        result["cell_marks"] = dict(_MARKS)
        print(RESULT_PREFIX + json.dumps(result), flush=True)
    return 0


# ---------------------------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------------------------


# Environment variables the AOT save cell reads: a --warm-ab variant that sets one saves again
# (TCCD_AOT_GUARD_STACKS: the saved guards' stacks, precompile.drop_guard_stacks;
# TCCD_AOT_INPUT_CHECK: whether the graph inputs' tensor guards are saved, input_check.py).
SAVE_ENV = {"ZOO_AOT_GUARDS", "TCCD_AOT_GUARD_STACKS", "TCCD_AOT_INPUT_CHECK"}


def _saved_in_cold(spec: Dict[str, Any], cold: Dict[str, Any]) -> Dict[str, Any]:
    """The "aot-save" cell of a save made in the cold cell's process (_aot_save_after_cold)."""
    prefix = "aot_save_"
    got = {k[len(prefix):]: v for k, v in cold.items() if k.startswith(prefix) and k != "aot_save_path"}
    if not got:  # the cold cell ended before its save (a failure is recorded as one)
        got = dict(ok=False, status="failed", error="the cold cell did not save (it failed or timed out)")
    return dict(spec, start="aot-save", in_cold_process=True, **got)


def _aot_cells(spec: Dict[str, Any], timeout_s: float, left: float, tag: str,
               ab_env: Optional[Dict[str, str]] = None, tmp: Optional[str] = None,
               saved: Optional[Dict[str, Any]] = None) -> List[Dict[str, Any]]:
    """The --aot pair after a tccd train cell: save (compiles what the daemon lacks), then load
    in a new process with an empty local cache; with --warm-ab, one more load with its
    environment ("aot-b"), after a save of its own ("aot-save-b") where the variant sets what
    the save reads (SAVE_ENV: the guard filter). `saved`: the save was made already, in the
    cold cell's process, to tmp/step.pt2 (--first-step-only); its cell comes first."""
    tmp = tmp or tempfile.mkdtemp(prefix="zoo-aot-")
    cells = [saved] if saved else []
    resave = bool(ab_env and SAVE_ENV.intersection(ab_env))
    try:
        t0 = time.monotonic()
        if saved:
            print(f"{tag} aot-save (in the cold process): " +
                  (f"first {saved['first_step_s']:.2f}s" if saved.get("ok") else f"FAILED {saved.get('error')}"),
                  flush=True)
            if not saved.get("ok"):
                return cells
        for start in ((() if saved else ("aot-save",)) + ("aot",)
                      + ((("aot-save-b",) if resave else ()) + ("aot-b",) if ab_env else ())):
            left_now = left - (time.monotonic() - t0)
            s = dict(spec, start=start, aot_path=os.path.join(tmp, "step-b.pt2" if resave and start.endswith("-b")
                                                              else "step.pt2"))
            if start in ("aot-save-b", "aot-b"):
                s["env"] = ab_env
            if left_now <= 5:
                cells.append(dict(s, ok=False, status="skipped", error="--budget-s reached"))
                break
            r = _run_worker(s, min(timeout_s, left_now))
            cells.append(r)
            print(f"{tag} {start}: " + (f"first {r['first_step_s']:.2f}s ({r['cell_wall_s']:.0f}s){_marks_text(r)}"
                                         if r.get("ok") else
                                         f"FAILED {r.get('error')} {(r.get('stderr_tail') or '').strip()[-300:]}"),
                  flush=True)
            _print_first_calls(r)
            if not r.get("ok"):
                break
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return cells


def _mark_stages(marks: Dict[str, float]) -> Dict[str, float]:
    """cell_marks (seconds since the spawn at each stage's end; "exit" already a duration) as
    each stage's own seconds."""
    out, prev = {}, 0.0
    for k, v in sorted(((k, v) for k, v in marks.items() if k != "exit"), key=lambda kv: kv[1]):
        out[k], prev = round(v - prev, 2), v
    if "exit" in marks:
        out["exit"] = marks["exit"]
    return out


def _marks_text(r: Dict[str, Any]) -> str:
    """' [python 0.1, imports 3.0, ...]': a cell's stages for its progress line."""
    if not r.get("cell_marks"):
        return ""
    return " [" + ", ".join(f"{k} {v:.1f}" for k, v in _mark_stages(r["cell_marks"]).items()) + "]"


def _print_first_calls(r: Dict[str, Any]) -> None:
    """A cell's TCCD_PLAN_PROFILE first-call lines and its conv warm-up, under its line."""
    warmup = r.get("conv_warmup")
    if warmup and warmup["plans"]:
        print(f"  conv warm-up: {warmup['shapes']} shapes, {warmup['ms']:.0f} ms, {warmup['failed']} failed",
              flush=True)
    if warmup and warmup.get("forward_shapes"):
        print(f"  forward conv warm-up: {warmup['forward_shapes']} shapes, {warmup['forward_ms']:.0f} ms", flush=True)
    if warmup and warmup.get("waiting_calls"):
        print(f"  conv warm-up while waiting for compiles: {warmup['waiting_calls']} calls, "
              f"{warmup['waiting_ms']:.0f} ms", flush=True)
    if r.get("first_step_majflt") or r.get("first_step_read_mib"):
        print(f"  first step read from disk: {r.get('first_step_read_mib', 0)} MiB, "
              f"{r.get('first_step_majflt', 0)} major page faults", flush=True)
    for line in r.get("first_call_profile") or []:
        print(f"  {line}", flush=True)


# Cells whose process nothing later reads (its caches, its daemon uploads): the driver ends
# them, with their children, as soon as their result line is in (ZOO_FAST_EXIT=0: they exit on
# their own, as every cell did before). A process's exit after a compile took 3-8 s on the CPU
# machine (eager's, Inductor's and tccd's alike: C-level teardown, no Python frame); the lane's
# budget paid it for nothing. Cold compiled cells fill the caches the warm cells read, so they
# exit on their own unless ZOO_FAST_EXIT=2 (their caches are written when their first step
# ends: Inductor's FX graph, AOTAutograd and Triton caches, tccd's daemon; not the default).
_DISPOSABLE_STARTS = ("warm", "warm-b", "warm-pre", "aot", "aot-b")


def _fast_exit(spec: Dict[str, Any]) -> bool:
    level = os.environ.get("ZOO_FAST_EXIT", "1")
    disposable = spec.get("start", "cold") in _DISPOSABLE_STARTS or spec["backend"] == "eager"
    return (disposable and level != "0") or (level == "2" and bool(spec.get("first_only")))


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _run_worker(spec: Dict[str, Any], timeout_s: float, tmp: Optional[str] = None) -> Dict[str, Any]:
    """Runs one cell in a new process. With `tmp` (an existing directory) the local caches live
    there and are kept for the caller (a warm cell after it); otherwise in a fresh directory
    deleted afterwards."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONUNBUFFERED="1")
    env.update(spec.get("env") or {})  # --warm-ab's variant cells
    keep = tmp is not None
    tmp = tmp or tempfile.mkdtemp(prefix="zoo-cell-")
    if spec["backend"] == "inductor":
        env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(tmp, "inductor")
        env["TRITON_CACHE_DIR"] = os.path.join(tmp, "triton")
    if spec["backend"] == "tccd":
        env["TCCD_CACHE_DIR"] = os.path.join(tmp, "tccd")
    if spec.get("precompile_dir"):
        # --warm-precompile: the cold tccd cell writes Dynamo's package there, "warm-pre" reads it.
        env["TCCD_CACHING_PRECOMPILE"] = "1"
        env["TORCHINDUCTOR_CACHE_DIR"] = spec["precompile_dir"]
    started = time.monotonic()  # the cell's whole process (cell_wall_s): what a lane's budget pays
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", json.dumps(dict(spec, spawned_at=time.time()))]
    # The last line the cell prints: its result, or the in-process AOT save's after it.
    last = AOT_SAVE_PREFIX if spec.get("aot_save_path") else RESULT_PREFIX
    fast = _fast_exit(spec)
    # stderr to a file (only its tail is kept); stdout read by a thread, so the driver sees the
    # result line while the process may still be exiting. Own session, so a timeout (or a fast
    # exit) also ends the worker's children (Inductor's compile workers).
    with tempfile.TemporaryFile(mode="w+") as err:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=err, text=True,
                                start_new_session=True)
        lines: List[str] = []
        got_last = threading.Event()

        def read() -> None:
            for line in proc.stdout:
                lines.append(line)
                if line.startswith(last):
                    got_last.set()
            got_last.set()  # end of output: the process ended (or closed stdout)

        reader = threading.Thread(target=read, name="zoo-cell-stdout", daemon=True)
        reader.start()
        rc: Any = None
        try:
            if not got_last.wait(timeout_s):
                _kill_group(proc)
                rc = f"timeout after {timeout_s:g}s"
            elif fast and any(line.startswith(last) for line in lines):
                _kill_group(proc)
                rc = "ended by the driver after its result (ZOO_FAST_EXIT)"
            else:
                try:
                    proc.wait(timeout=max(timeout_s - (time.monotonic() - started), 0.1))
                    rc = proc.returncode
                except subprocess.TimeoutExpired:
                    _kill_group(proc)
                    rc = f"timeout after {timeout_s:g}s"
            proc.wait()
            # Children outside the group (none expected) may hold stdout open: not waited for.
            reader.join(timeout=5)
        finally:
            if not keep:
                shutil.rmtree(tmp, ignore_errors=True)
        wall_s = time.monotonic() - started
        wall = round(wall_s, 1)
        err.seek(0)
        tail = "\n".join(err.read().strip().splitlines()[-15:])
    result = None
    for line in list(lines):
        if line.startswith(RESULT_PREFIX) and result is None:
            result = dict(json.loads(line[len(RESULT_PREFIX):]), cell_wall_s=wall)
        elif line.startswith(AOT_SAVE_PREFIX) and result is not None:
            result.update(json.loads(line[len(AOT_SAVE_PREFIX):]))
    if result is not None:
        marks = dict(result.get("cell_marks") or {})
        marks.update(result.get("aot_save_cell_marks") or {})
        if marks:  # what the process did after its last mark (or until the driver ended it)
            marks["exit"] = round(wall_s - max(marks.values()), 2)
            result["cell_marks"] = marks
            result.pop("aot_save_cell_marks", None)
        if fast:
            result["fast_exit"] = True
        if spec.get("aot_save_path") and "aot_save_ok" not in result:  # the save crashed or timed out
            result.update(aot_save_ok=False, aot_save_status="failed",
                          aot_save_error=f"the cold cell's process ended in its AOT save: exit {rc}",
                          aot_save_stderr_tail=tail)
        return result
    return dict(spec, ok=False, status="failed", error=f"exit {rc}", stderr_tail=tail)


def _aot_over(cells: List[Dict[str, Any]], models: List[str], wl: str, b: str, get: Any,
              start: str = "aot") -> Dict[str, float]:
    """Per model, tccd's ahead-of-time first step (the load included) over eager's first step;
    start="warm-pre": the first step with Dynamo's package (its torch.compile() included)."""
    over = {}
    for m in models:
        first, eager_first = get(m, wl, b, "tccd", "first_step_s", start), get(m, wl, b, "eager", "first_step_s")
        if first is not None and eager_first is not None:
            over[m] = first - eager_first
    return over


def _start_sums(warm_over: Dict[str, Dict[str, float]], aot_over: Dict[str, float],
                pre_over: Optional[Dict[str, float]] = None) -> List[str]:
    """Issue 11's warm-start figures of one table (a merged run's: the whole zoo): the sums over
    the models of (first step - eager's first step) per backend, tccd / Inductor over the models
    both have (target <= 0.5), the worst tccd model (target <= 1 s), and the ahead-of-time flow's
    sum and worst model (target <= 0.3 s each)."""
    lines = []
    ind, tc = warm_over.get("inductor", {}), warm_over.get("tccd", {})
    both = sorted(set(ind) & set(tc))
    if both:
        si, st = sum(ind[m] for m in both), sum(tc[m] for m in both)
        ratio = f"**{st / si:.2f}**" if si > 0 else "-"
        lines.append(f"Warm start, sum over the {len(both)} models both backends ran of (warm first step - "
                     f"eager's first step): Inductor {si:.2f} s, tccd {st:.2f} s: tccd / Inductor {ratio} "
                     f"(target <= 0.5).")
    if tc:
        worst = max(tc, key=tc.get)
        over_1 = sorted(m for m in tc if tc[m] > 1.0)
        lines.append(f"tccd warm, sum over {len(tc)} models {sum(tc.values()):.2f} s; worst {worst} "
                     f"{tc[worst]:.2f} s over eager's first step (target <= 1 s; over it: "
                     f"{', '.join(over_1) or 'none'}).")
    if aot_over:
        worst = max(aot_over, key=aot_over.get)
        over_03 = sorted(m for m in aot_over if aot_over[m] > 0.3)
        lines.append(f"tccd ahead-of-time flow, sum over {len(aot_over)} models of (first step with the load - "
                     f"eager's first step) {sum(aot_over.values()):.2f} s; worst {worst} {aot_over[worst]:.2f} s "
                     f"(target <= 0.3 s; over it: {', '.join(over_03) or 'none'}).")
    if pre_over:
        # --warm-precompile: the plain torch.compile warm start with Dynamo's package.
        worst = max(pre_over, key=pre_over.get)
        ind_pre = sorted(set(ind) & set(pre_over))
        ratio = ""
        if ind_pre and sum(ind[m] for m in ind_pre) > 0:
            ratio = (f"; over the {len(ind_pre)} models Inductor ran: tccd / Inductor "
                     f"**{sum(pre_over[m] for m in ind_pre) / sum(ind[m] for m in ind_pre):.2f}** (target <= 0.5)")
        lines.append(f"tccd warm with Dynamo's package (TCCD_CACHING_PRECOMPILE, torch.compile() included), sum over "
                     f"{len(pre_over)} models of (first step - eager's first step) {sum(pre_over.values()):.2f} s; "
                     f"worst {worst} {pre_over[worst]:.2f} s (target <= 1 s; over it: "
                     f"{', '.join(sorted(m for m in pre_over if pre_over[m] > 1.0)) or 'none'}){ratio}.")
    return lines + [""] if lines else []


def _fmt(v, spec="{:.2f}"):
    return "-" if v is None else spec.format(v)


def render_markdown(cells: List[Dict[str, Any]], backends: List[str], note: str) -> str:
    # One table per (workload, batch, mode); eager cells have no mode of their own: they serve
    # every mode's table.
    current = {"mode": "default"}

    def same_mode(c):
        return c["backend"] == "eager" or c.get("mode", "default") == current["mode"]

    def get(model, wl, b, be, key, start="cold"):
        for c in cells:
            if ((c["model"], c["workload"], c["batch"], c["backend"]) == (model, wl, b, be) and c.get("ok")
                    and c.get("start", "cold") == start and same_mode(c)):
                return c.get(key)
        return None

    def status(model, wl, b, be):
        for c in cells:
            if ((c["model"], c["workload"], c["batch"], c["backend"]) == (model, wl, b, be)
                    and c.get("start", "cold") == "cold" and same_mode(c)):
                return "ok" if c.get("ok") else c.get("status", "failed")
        return "not run"

    lines = [note, ""]
    groups = []
    for c in cells:
        g = (c["workload"], c["batch"], c.get("mode", "default"))
        if c["backend"] != "eager" and g not in groups:
            groups.append(g)
    for c in cells:  # eager-only runs
        if not any(g[:2] == (c["workload"], c["batch"]) for g in groups):
            groups.append((c["workload"], c["batch"], "default"))
    trio = ["eager", "inductor", "tccd"]
    reasons = []
    python_steps = []  # per model: the tccd graphs with plan steps run in Python, per call
    cudagraph_skips = []  # CUDA graph modes: graphs that ran without CUDA graphs
    for wl, b, mode in groups:
        current["mode"] = mode
        models = []
        for c in cells:
            if (c["workload"], c["batch"]) == (wl, b) and c["model"] not in models:
                models.append(c["model"])
        warm = any(c.get("start") == "warm" and (c["workload"], c["batch"]) == (wl, b) and same_mode(c)
                   for c in cells)
        lines += [f"### {wl}, batch {b}" + ("" if mode == "default" else f", mode {mode}"), "",
                  "| model | eager ms | Inductor ms (speedup) | tccd ms (speedup) | host ms e/I/t (t/I) | "
                  "kernels/step e/I/t | "
                  "GPU busy ms e/I/t | peak MiB e/I/t | tccd fallbacks | tccd extern steps | "
                  "loss diff I/t | param diff I/t | first step s e/I/t |"
                  + (" cold first step t/I | warm first step s e/I/t | warm - eager s I/t |" if warm else ""),
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|---|---|" if warm else "")]
        warm_over: Dict[str, Dict[str, float]] = {"inductor": {}, "tccd": {}}  # model -> s over eager's
        speedups = {"inductor": [], "tccd": []}
        for m in models:
            e = get(m, wl, b, "eager", "step_ms")

            def ms_cell(be):
                v = get(m, wl, b, be, "step_ms")
                if v is None:
                    return status(m, wl, b, be) if be in backends else "-"
                if e:
                    speedups[be].append(e / v)
                    return f"{v:.2f} ({e / v:.2f}x)"
                return f"{v:.2f}"

            def trip(key, f="{:.2f}"):
                return " / ".join(_fmt(get(m, wl, b, be, key), f) for be in trio)

            def warm_cells(m):
                # Eager's own first step is its cold cell's: eager has nothing to warm.
                eager_first = get(m, wl, b, "eager", "first_step_s")
                cold_i, cold_t = get(m, wl, b, "inductor", "first_step_s"), get(m, wl, b, "tccd", "first_step_s")
                ratio = f"{cold_t / cold_i:.2f}x" if cold_i and cold_t else "-"
                if get(m, wl, b, "inductor", "parallel_fill") or get(m, wl, b, "tccd", "parallel_fill"):
                    ratio = "- (parallel fill)"  # the two cold first steps shared the machine
                firsts = {be: get(m, wl, b, be, "first_step_s", "warm") for be in ("inductor", "tccd")}
                over = []
                for be in ("inductor", "tccd"):
                    v = firsts[be]
                    if v is not None and eager_first is not None:
                        warm_over[be][m] = v - eager_first
                        over.append(f"{v - eager_first:.2f}")
                    else:
                        over.append("-")
                return (f" {ratio} | {_fmt(eager_first)} / {_fmt(firsts['inductor'])} / {_fmt(firsts['tccd'])} | "
                        f"{' / '.join(over)} |")

            def host_cell():
                # Host time per step (the GPU kept busy: _host_step_ms); * where the stream
                # drained during some timed call (the number then includes GPU waiting).
                vals = []
                for be in trio:
                    v = get(m, wl, b, be, "host_ms")
                    vals.append(_fmt(v) + ("*" if get(m, wl, b, be, "host_queue_drained") else ""))
                hi, ht = get(m, wl, b, "inductor", "host_ms"), get(m, wl, b, "tccd", "host_ms")
                return " / ".join(vals) + (f" ({ht / hi:.2f})" if hi and ht else "")

            fb = get(m, wl, b, "tccd", "fallbacks")
            for x in fb or []:
                reasons.append(f"- {m} {wl}/{b} `{x['graph']}`: {x['reason']}")
            by_graph = get(m, wl, b, "tccd", "python_steps_by_graph")
            if by_graph is not None:
                left = [f"`{g}` {n}" for g, n in by_graph.items() if n]
                python_steps.append(f"- {m} {wl}/{b}" + (f", mode {mode}" if mode != "default" else "") + ": "
                                    + (", ".join(left) if left else f"0 in all {len(by_graph)} graphs"))
                why = get(m, wl, b, "tccd", "python_step_reasons_by_graph") or {}
                for g, reasons in why.items():
                    python_steps += [f"  - `{g}`: {n}x {r}" for r, n in sorted(reasons.items())]
            for be in ("inductor", "tccd"):
                n = get(m, wl, b, be, "cudagraph_skip_count")
                graphs = get(m, wl, b, be, "cudagraph_skips") or []
                if n or graphs:
                    cudagraph_skips.append(f"- {m} {wl}/{b} {be}: {n} skips" + "".join(
                        f"; `{x['graph']}`: {x['reason']}" for x in graphs))
            lines.append(
                f"| {m} | {_fmt(e) if e is not None else status(m, wl, b, 'eager')} | {ms_cell('inductor')} | "
                f"{ms_cell('tccd')} | {host_cell()} | {trip('kernels_per_step', '{:d}')} | {trip('gpu_busy_ms')} | "
                f"{trip('peak_mib', '{:.0f}')} | {'-' if fb is None else len(fb)} | "
                f"{_fmt(get(m, wl, b, 'tccd', 'extern_steps'), '{:d}')} | "
                f"{_fmt(get(m, wl, b, 'inductor', 'loss_diff'), '{:.1e}')} / {_fmt(get(m, wl, b, 'tccd', 'loss_diff'), '{:.1e}')} | "
                f"{_fmt(get(m, wl, b, 'inductor', 'param_diff'), '{:.1e}')} / {_fmt(get(m, wl, b, 'tccd', 'param_diff'), '{:.1e}')} | "
                f"{trip('first_step_s')} |" + (warm_cells(m) if warm else ""))

        def geo(xs):
            return f"**{math.exp(sum(map(math.log, xs)) / len(xs)):.2f}x** (n={len(xs)})" if xs else "-"

        lines += [f"| **geomean** | | {geo(speedups['inductor'])} | {geo(speedups['tccd'])} |"
                  + " |" * (12 if warm else 9), ""]
        lines += _start_sums(warm_over, _aot_over(cells, models, wl, b, get),
                             _aot_over(cells, models, wl, b, get, start="warm-pre"))
        # Columns that are 0 in every row of the run (e.g. an older result file's) are left out.
        phases = [p for p in ("dynamo", "import", "backend", "aot_meta", "aot_trace", "partition", "recipe", "request",
                              "compile_rpc", "compile_wait", "fetch", "load", "aot_load", "plan_calls", "rest")
                  if p in ("dynamo", "backend", "rest") or any(c.get(f"phase_{p}") for c in cells)]
        for start in ("cold", "warm"):
            rows = []
            # The warm table's "tccd-aot" row: the saved step loaded by load_compiled_function.
            for m in models:
                for be, cell_start in (("inductor", start), ("tccd", start)) + (
                        (("tccd-aot", "aot"), ("tccd-pre", "warm-pre")) if start == "warm" else ()):
                    cell_be = be.split("-")[0]
                    first = get(m, wl, b, cell_be, "first_step_s", cell_start)
                    if first is None or get(m, wl, b, cell_be, "phase_rest", cell_start) is None:
                        continue
                    if be == "inductor":
                        extra = "-"
                    elif start == "warm":
                        extra = " / ".join(_fmt(get(m, wl, b, cell_be, k, cell_start), "{:d}")
                                           for k in ("warm_graphs", "warm_aot_skipped", "warm_cache_hits"))
                    else:
                        extra = _fmt(get(m, wl, b, be, "first_daemon_compile_s", start))
                        if get(m, wl, b, be, "eager_calls", start):
                            extra += f" ({get(m, wl, b, be, 'eager_calls', start)} eager calls)"
                    rows.append(f"| {m} | {be} | {first:.2f} | "
                                + " | ".join(_fmt(get(m, wl, b, cell_be, f"phase_{p}", cell_start)) for p in phases)
                                + f" | {extra} |")
            if rows:
                lines += [f"Where the {start} first step goes (s; `deploy/phase_timers.py`):", "",
                          "| model | backend | first step | " + " | ".join(phases) + " | "
                          + ("graphs / AOT-skipped / hits |" if start == "warm" else "daemon compile s |"),
                          "|---|---|---|" + "---|" * len(phases) + "---|"] + rows + [""]
        aot_rows = []
        for m in models:
            first = get(m, wl, b, "tccd", "first_step_s", "aot")
            eager_first = get(m, wl, b, "eager", "first_step_s")
            if first is not None:
                over = f"{first - eager_first:.2f}" if eager_first is not None else "-"
                kept, total = (get(m, wl, b, "tccd", k, "aot-save") for k in ("aot_guards_kept", "aot_guards_total"))
                guards = (f"{get(m, wl, b, 'tccd', 'aot_guards', 'aot-save')} {kept} / {total}"
                          if kept is not None else "-")
                aot_rows.append(f"| {m} | {_fmt(get(m, wl, b, 'tccd', 'first_step_s', 'aot-save'))} | {guards} | "
                                f"{_fmt(get(m, wl, b, 'tccd', 'aot_load_s', 'aot'))} | {first:.2f} | {over} |")
            elif any(c.get("start") in ("aot-save", "aot") and (c["model"], c["workload"], c["batch"]) == (m, wl, b)
                     and same_mode(c) for c in cells):  # a section of another mode has none
                aot_rows.append(f"| {m} | failed (see below) | | | | |")
        ab_rows = []
        for m in models:
            # --warm-ab: the same warm starts with the variant's environment (start "warm-b",
            # "aot-b"); conv warm-up: shapes warmed / host ms on the autograd thread.
            if get(m, wl, b, "tccd", "first_step_s", "warm-b") is None and \
                    get(m, wl, b, "tccd", "first_step_s", "aot-b") is None:
                continue
            variant = next((c.get("env") for c in cells if c.get("start") in ("warm-b", "aot-b")
                            and c["model"] == m), {})

            def cw(start):
                v = get(m, wl, b, "tccd", "conv_warmup", start)
                return f"{v['shapes']} / {v['ms']:.0f}" if v else "-"

            ab_rows.append(
                f"| {m} | {','.join(f'{k}={v}' for k, v in (variant or {}).items())} | "
                f"{_fmt(get(m, wl, b, 'tccd', 'first_step_s', 'warm'))} / "
                f"{_fmt(get(m, wl, b, 'tccd', 'first_step_s', 'warm-b'))} | "
                f"{_fmt(get(m, wl, b, 'tccd', 'first_step_s', 'aot'))} / "
                f"{_fmt(get(m, wl, b, 'tccd', 'first_step_s', 'aot-b'))} | "
                f"{_fmt(get(m, wl, b, 'tccd', 'phase_plan_calls', 'warm'))} / "
                f"{_fmt(get(m, wl, b, 'tccd', 'phase_plan_calls', 'warm-b'))} | "
                f"{cw('warm')} / {cw('warm-b')} |")
        if ab_rows:
            lines += ["tccd warm starts, default vs the --warm-ab variant (s):", "",
                      "| model | variant | warm first step | AOT first step | warm plan_calls | "
                      "conv warm-up shapes / ms |", "|---|---|---|---|---|---|"] + ab_rows + [""]
        if aot_rows:
            lines += ["Ahead-of-time flow (tccd; `aot_compile` of the functional training step, then a new "
                      "process: `torch.compiler.load_compiled_function` + first step; target <= 0.3 s over eager's "
                      "first step):", "",
                      "| model | save s (compile, once) | guards saved (filter, kept / all) | load s | "
                      "first step s (load included) | - eager s |",
                      "|---|---|---|---|---|---|"] + aot_rows + [""]
    failed = [c for c in cells if not c.get("ok")]
    # Python's garbage collections inside the first steps (_GcWatch): a full one in one cell and
    # not in another is a difference between the processes' histories, not the backends.
    gc_lines = [f"- {c['model']} {c['workload']}/{c['batch']} {c['backend']}"
                + (f" ({c['start']})" if c.get("start", "cold") != "cold" else "")
                + f": {c['first_step_gc_s']:.3f} s, {c['first_step_gc_full']} full ({c['first_step_gc_full_s']:.3f} s)"
                + (" [gc.freeze() before it]" if c.get("gc_freeze") else "")
                + ("; full by phase " + ", ".join(f"{p} {n}x {t:.3f}" for p, (n, t) in c["first_step_gc_full_by_phase"].items())
                   if c.get("first_step_gc_full_by_phase") else "")
                + (f"; in compile waits {c['wait_full_gc']['collections']}x {c['wait_full_gc']['s']:.3f}"
                   if c.get("wait_full_gc", {}).get("collections") else "")
                for c in cells if c.get("ok") and c.get("first_step_gc_s") is not None]
    if gc_lines:
        lines += ["Garbage collection inside the first step (s; full collections):", ""] + gc_lines + [""]
    # Dynamo's own sections (dynamo_timed) where the `dynamo` phase differs between backends.
    dyn_lines = [f"- {c['model']} {c['workload']}/{c['batch']} {c['backend']}"
                 + (f" ({c['start']})" if c.get("start", "cold") != "cold" else "")
                 + f": {c.get('dynamo_frames')} frames; "
                 + ", ".join(f"{k} {v:.3f}" for k, v in sorted(c["dynamo_metrics"].items(), key=lambda kv: -kv[1])[:10])
                 for c in cells if c.get("ok") and c.get("dynamo_metrics")]
    if dyn_lines:
        lines += ["Dynamo's sections in the first step (s, torch._dynamo.utils.compilation_time_metrics, largest 10):", ""] + dyn_lines + [""]
    pre = [c for c in cells if c.get("ok") and c["backend"] != "eager" and c.get("compile_call_s") is not None]
    if pre:
        # Outside first_step_s but paid before it: the backend's import and the torch.compile()
        # call; the last column is what the user waits from `import`/torch.compile to the
        # first step's end.
        lines += ["Before the first step (s; outside `first step`: the backend's import, the torch.compile() "
                  "call; `total` = both + the first step):", "",
                  "| model | workload | batch | backend | start | import | torch.compile() | first step | total |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for c in pre:
            first = c.get("first_step_s")
            total = (c.get("backend_import_s") or 0) + c["compile_call_s"] + first if first is not None else None
            lines.append(f"| {c['model']} | {c['workload']} | {c['batch']} | {c['backend']} | {c.get('start', 'cold')} | "
                         f"{_fmt(c.get('backend_import_s'))} | {_fmt(c['compile_call_s'])} | {_fmt(first)} | {_fmt(total)} |")
        lines.append("")
    marked = [c for c in cells if c.get("ok") and c.get("cell_marks")]
    if marked:
        # What a lane's budget pays per cell, by stage (_mark): besides the first step, the
        # process's start, imports, model, set-up and exit.
        stages = ["python", "imports", "model", "set_up", "first_step", "aot_save", "done", "exit"]
        lines += ["Where each cell's process time goes (s; `cell_marks`: stage durations, driver's wall "
                  "clock; `exit` ends at the process's end or the driver's fast exit, marked *):", "",
                  "| model | backend | start | wall | " + " | ".join(stages) + " |",
                  "|---|---|---|---|" + "---|" * len(stages)]
        for c in marked:
            d = _mark_stages(c["cell_marks"])
            lines.append(f"| {c['model']} | {c['backend']} | {c.get('start', 'cold')} | {_fmt(c.get('cell_wall_s'), '{:.1f}')} | "
                         + " | ".join(_fmt(d.get(k), "{:.1f}") + ("*" if k == "exit" and c.get("fast_exit") else "")
                                      for k in stages) + " |")
        lines.append("")
    if reasons:
        lines += ["tccd fallbacks (graph: reason):", ""] + reasons + [""]
    if python_steps:
        lines += ["tccd plan steps run in Python per call (`python_steps`, per graph; target 0):", ""] \
            + python_steps + [""]
    if cudagraph_skips:
        lines += ["Graphs run without CUDA graphs (`cudagraph_skips` counter; tccd: graph: reason):", ""] \
            + cudagraph_skips + [""]
    if failed:
        lines += ["Failed / skipped cells:", ""]
        for c in failed:
            tail = (c.get("stderr_tail") or "").strip().splitlines()[-1:] or [""]
            start = "" if c.get("start", "cold") == "cold" else f" ({c['start']})"
            lines.append(f"- {c['model']} {c['workload']}/{c['batch']} {c['backend']}{start}: "
                         f"{c.get('status', 'failed')} {c.get('error', '')} {tail[0][:300]}")
        lines.append("")
    return "\n".join(lines)


def render_png(cells, path) -> Optional[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:  # noqa: BLE001  any import failure means no chart
        return f"no chart: matplotlib unavailable ({e})"
    # Warm cells and --first-step-only cells have no step time: nothing to chart.
    ok = [c for c in cells if c.get("ok") and c.get("start", "cold") == "cold" and "step_ms" in c]
    groups = sorted({(c["workload"], c["batch"]) for c in ok})
    if not groups:
        return "no chart: no successful cell"
    fig, axes = plt.subplots(len(groups), 1, figsize=(10, 3.2 * len(groups)), squeeze=False)
    for ax, (wl, b) in zip(axes[:, 0], groups):
        eager = {c["model"]: c["step_ms"] for c in ok if (c["workload"], c["batch"], c["backend"]) == (wl, b, "eager")}
        models = list(eager)
        for i, be in enumerate(["inductor", "tccd"]):
            ms = {c["model"]: c["step_ms"] for c in ok if (c["workload"], c["batch"], c["backend"]) == (wl, b, be)}
            ax.bar([j + i * 0.4 for j in range(len(models))],
                   [eager[m] / ms[m] if m in ms else 0 for m in models], 0.4, label=be)
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_xticks([j + 0.2 for j in range(len(models))])
        ax.set_xticklabels(models)
        ax.set_ylabel("speedup over eager")
        ax.set_title(f"{wl}, batch {b}")
        ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    return None


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--out", help="output directory (results.json, results.md, results.png)")
    p.add_argument("--models", default=",".join(m for m in ALL_MODELS))
    p.add_argument("--backends", default="eager,inductor,tccd")
    p.add_argument("--workloads", default="train,infer")
    p.add_argument("--batch", default="small,large")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--timeout-s", type=float, default=240)
    p.add_argument("--budget-s", type=float, default=540)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--tiny", action="store_true", help="tiny configs (pipeline test)")
    p.add_argument("--dropout", action="store_true", help="keep dropout (diffs then measure RNG)")
    p.add_argument("--merge", help="comma list of earlier --out dirs: write one merged report to --out, run nothing")
    p.add_argument("--no-check", action="store_true", help="skip the loss/param comparison phase")
    p.add_argument("--mode", default="default",
                   choices=["default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"],
                   help="torch.compile mode of both compiled backends (a cell's results carry it; "
                        "--merge keeps modes apart)")
    p.add_argument("--warm", action="store_true",
                   help="after each compiled cell, measure a warm start in a new process (first step only)")
    p.add_argument("--warm-precompile", action="store_true",
                   help="with --warm: the cold tccd cell runs with TCCD_CACHING_PRECOMPILE=1 (writes "
                        "Dynamo's package into a torch cache dir of the model's), and after the tccd warm "
                        "cell one more, \"warm-pre\": a new process, empty tccd local cache, the same "
                        "plain torch.compile, which loads that package (no Dynamo trace); its first step "
                        "includes the torch.compile() call, where the load happens")
    p.add_argument("--aot", action="store_true",
                   help="tccd, train: also save the functional training step with aot_compile and time "
                        "a new process's first step through torch.compiler.load_compiled_function")
    p.add_argument("--aot-guards", default="lean", choices=["lean", "lean-dict-types", "serializable"],
                   help="the guard filter of --aot's save: lean (tccd.precompile.lean_guards: without "
                        "the modules' structure guards, ~1/6 to 1/3 of the guards kept), lean-dict-types "
                        "(lean before it dropped the type guards of the modules' _modules/_parameters/"
                        "_buffers dicts) or serializable "
                        "(every guard Dynamo can save). ZOO_AOT_GUARDS in the environment overrides it, "
                        "so --warm-ab ZOO_AOT_GUARDS=serializable saves and loads the other once more")
    p.add_argument("--first-step-only", action="store_true",
                   help="every cell times its first step only (no timed steps, profile, memory or "
                        "check): the cold and warm first steps of --warm/--aot in the least GPU time")
    p.add_argument("--parallel-fill", action="store_true",
                   help="with --warm --first-step-only: run a model's compiled cold cells (they fill the "
                        "caches the warm cells read) at the same time; their first steps then shared the "
                        "machine (parallel_fill in the results: no cold ratio from them, and --merge "
                        "prefers a cold cell measured alone); the warm cells run alone as before")
    p.add_argument("--warm-ab", metavar="ENV=VALUE[,ENV=VALUE]",
                   help="with --warm: after each tccd warm cell (and --aot load), one more with this "
                        "environment (e.g. TCCD_CONV_WARMUP=0: the knob off), reported side by side; "
                        "with --aot but no --warm, after the AOT load only")
    p.add_argument("--warm-ab-models", help="comma list: --warm-ab for these models only (default: all)")
    p.add_argument("--warm-ab-starts", default="warm,aot",
                   help="comma list of the starts --warm-ab repeats: warm (Dynamo path), aot (the AOT load)")
    p.add_argument("--top-kernels", type=int, default=25,
                   help="kernels per cell listed in kernels.md (heaviest device time first)")
    a = p.parse_args(argv)
    if a.worker:
        return worker_main(a.worker)
    if not a.out:
        p.error("--out is required")
    if a.merge:
        return merge([d for d in a.merge.split(",") if d], a.out)
    models = [m for m in a.models.split(",") if m]
    backends = [b for b in a.backends.split(",") if b]
    ab_env = None
    if a.warm_ab:
        pairs = [kv.split("=", 1) for kv in a.warm_ab.split(",") if kv]
        if not (a.warm or a.aot) or any(len(kv) != 2 or not kv[0] for kv in pairs):
            p.error("--warm-ab needs --warm or --aot (then only its AOT load is repeated) and ENV=VALUE pairs")
        ab_env = dict(pairs)
    ab_models = set(m for m in (a.warm_ab_models or a.models).split(",") if m)
    ab_starts = set(x for x in a.warm_ab_starts.split(",") if x)
    if ab_starts - {"warm", "aot"}:
        p.error("--warm-ab-starts: warm and/or aot")
    if a.warm_precompile and not a.warm:
        p.error("--warm-precompile needs --warm")
    precompile_dirs: Dict[Tuple[str, str, str], str] = {}  # (model, workload, batch) -> torch cache dir

    def precompile_dir(spec: Dict[str, Any]) -> str:
        key = (spec["model"], spec["workload"], spec["batch"])
        if key not in precompile_dirs:
            precompile_dirs[key] = tempfile.mkdtemp(prefix="zoo-dynamo-")
        return precompile_dirs[key]
    for m in models:
        if m not in ALL_MODELS:
            p.error(f"unknown model {m!r}; known: {', '.join(ALL_MODELS)}")
    for b in backends:
        if b not in ("eager", "inductor", "tccd"):
            p.error(f"unknown backend {b!r}")
    if "tccd" in backends and not os.environ.get("TCCD_ADDRESS"):
        print("warning: TCCD_ADDRESS is not set; the tccd client will use its default address", flush=True)
    order = {"eager": 0, "inductor": 1, "tccd": 2}
    backends.sort(key=order.get)
    specs = [dict(model=m, workload=w, batch=b, backend=be, device=a.device, tiny=a.tiny,
                  dropout=a.dropout, iters=a.iters, warmup=a.warmup, check=not a.no_check,
                  top_kernels_n=a.top_kernels, mode=a.mode, first_only=a.first_step_only,
                  aot_guards=a.aot_guards)
             for m in models for w in a.workloads.split(",") if w
             for b in a.batch.split(",") if b for be in backends]
    os.makedirs(a.out, exist_ok=True)
    # --parallel-fill (with --warm --first-step-only): a model's compiled cold cells, which only
    # fill the caches its warm cells read, run at the same time (Inductor's cold compile and
    # tccd's cold compile plus its AOT save); the warm cells then run one at a time, alone.
    parallel_fill = a.parallel_fill and a.warm and a.first_step_only
    filled: Dict[int, Tuple[Dict[str, Any], Optional[str], Optional[str], bool]] = {}
    start = time.monotonic()
    cells = []

    def cold(spec: Dict[str, Any], left: float):
        """A compiled or eager cell's cold process: (result, its local cache dir kept for the
        warm cell, the AOT save's dir, whether the save was made in it)."""
        # Inductor's warm cell reuses the cold cell's local caches; tccd's gets empty ones (the
        # daemon's cache, filled by the cold cell, is what is warm).
        cache_dirs = tempfile.mkdtemp(prefix="zoo-cell-") if a.warm and spec["backend"] != "eager" else None
        aot_here = a.aot and spec["backend"] == "tccd" and spec["workload"] == "train"
        # --first-step-only: the cold tccd cell saves the AOT step too, after its first step
        # (one process fills the daemon for both warm starts: a process start and most of the
        # save's compile fewer per model); ZOO_SEPARATE_AOT_SAVE=1: a process of its own.
        aot_tmp = tempfile.mkdtemp(prefix="zoo-aot-") if aot_here else None
        save_in_cold = aot_here and a.first_step_only and os.environ.get("ZOO_SEPARATE_AOT_SAVE", "0") != "1"
        if a.warm_precompile and spec["backend"] == "tccd":
            spec = dict(spec, precompile_dir=precompile_dir(spec))
        r = _run_worker(dict(spec, aot_save_path=os.path.join(aot_tmp, "step.pt2")) if save_in_cold else spec,
                        min(a.timeout_s, left), cache_dirs)
        r.pop("aot_save_path", None)
        return r, cache_dirs, aot_tmp, save_in_cold

    for i, spec in enumerate(specs):
        left = a.budget_s - (time.monotonic() - start)
        tag = f"[{i + 1}/{len(specs)}] {spec['model']} {spec['workload']}/{spec['batch']} {spec['backend']}"
        if left <= 5 and i not in filled:
            cells.append(dict(spec, ok=False, status="skipped", error="--budget-s reached"))
            print(f"{tag}: skipped (budget)", flush=True)
            continue
        t0 = time.monotonic()
        compiled = a.warm and spec["backend"] != "eager"
        if parallel_fill and compiled and i not in filled:
            group = [j for j, s2 in enumerate(specs) if j >= i and s2["backend"] != "eager" and
                     (s2["model"], s2["workload"], s2["batch"]) == (spec["model"], spec["workload"], spec["batch"])]
            if len(group) > 1:
                results: Dict[int, Any] = {}
                threads = [threading.Thread(target=lambda j=j: results.__setitem__(j, cold(specs[j], left)))
                           for j in group]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
                for j in group:
                    results[j][0]["parallel_fill"] = True  # its first step shared the machine
                    filled[j] = results[j]
                print(f"{tag}: parallel fill of {len(group)} cold cells ({time.monotonic() - t0:.0f}s)", flush=True)
        r, cache_dirs, aot_tmp, save_in_cold = filled.pop(i) if i in filled else (None, None, None, False)
        aot_here = a.aot and spec["backend"] == "tccd" and spec["workload"] == "train"
        try:
            if r is None:
                r, cache_dirs, aot_tmp, save_in_cold = cold(spec, left)
            cells.append(r)
            if compiled and r.get("ok"):
                warm_spec = dict(spec, start="warm")
                left = a.budget_s - (time.monotonic() - start)
                if left <= 5:
                    cells.append(dict(warm_spec, ok=False, status="skipped", error="--budget-s reached"))
                else:
                    if spec["backend"] == "tccd":
                        shutil.rmtree(cache_dirs, ignore_errors=True)
                        cache_dirs = tempfile.mkdtemp(prefix="zoo-cell-")
                    w = _run_worker(warm_spec, min(a.timeout_s, left), cache_dirs)
                    cells.append(w)
                    print(f"{tag} warm: " + (f"first {w['first_step_s']:.2f}s ({w['cell_wall_s']:.0f}s){_marks_text(w)}"
                                              if w.get("ok") else
                                              f"FAILED {w.get('error')}"), flush=True)
                    _print_first_calls(w)
                    left = a.budget_s - (time.monotonic() - start)
                    if (ab_env and "warm" in ab_starts and spec["backend"] == "tccd" and spec["model"] in ab_models
                            and left > 5):
                        # The variant: an empty local cache of its own, the same daemon.
                        w = _run_worker(dict(warm_spec, start="warm-b", env=ab_env), min(a.timeout_s, left))
                        cells.append(w)
                        print(f"{tag} warm ({a.warm_ab}): " + (f"first {w['first_step_s']:.2f}s" if w.get("ok")
                                                              else f"FAILED {w.get('error')}"), flush=True)
                        _print_first_calls(w)
                    left = a.budget_s - (time.monotonic() - start)
                    if a.warm_precompile and spec["backend"] == "tccd" and left > 5:
                        # Dynamo's package from the cold cell; an empty local cache of its own.
                        pre_cache = tempfile.mkdtemp(prefix="zoo-cell-")
                        try:
                            w = _run_worker(dict(warm_spec, start="warm-pre", precompile_dir=precompile_dir(spec)),
                                            min(a.timeout_s, left), pre_cache)
                        finally:
                            shutil.rmtree(pre_cache, ignore_errors=True)
                        cells.append(w)
                        print(f"{tag} warm-pre: " + (
                            f"first {w['first_step_s']:.2f}s (torch.compile() {w['precompile_load_s']:.2f}s, "
                            f"Dynamo frames {w['dynamo_frames']}, package {w['dynamo_cache']}) "
                            f"({w['cell_wall_s']:.0f}s){_marks_text(w)}" if w.get("ok") else
                            f"FAILED {w.get('error')} {(w.get('stderr_tail') or '').strip()[-300:]}"), flush=True)
                        for frame in (w.get("traced_frames") or [])[:4]:
                            print(f"  warm-pre traced {json.dumps(frame)[:600]}", flush=True)
                        _print_first_calls(w)
            if aot_here and r.get("ok"):
                cells.extend(_aot_cells(spec, a.timeout_s, a.budget_s - (time.monotonic() - start), tag,
                                        ab_env if spec["model"] in ab_models and "aot" in ab_starts else None,
                                        aot_tmp, _saved_in_cold(spec, r) if save_in_cold else None))
        finally:
            if cache_dirs:
                shutil.rmtree(cache_dirs, ignore_errors=True)
            if aot_tmp:
                shutil.rmtree(aot_tmp, ignore_errors=True)
        dt = time.monotonic() - t0
        if r.get("ok"):
            extra = f" fallbacks={len(r['fallbacks'])} extern={r['extern_steps']}" if "extern_steps" in r else ""
            if "cuda_init_s" in r:
                extra += f" cuda_init={r['cuda_init_s']:.3f}s"
            diff = f" loss_diff={r['loss_diff']:.1e} param_diff={r['param_diff']:.1e}" if "loss_diff" in r else ""
            cpu = f" (main thread CPU {r['first_step_cpu_s']:.2f}s)" if "first_step_cpu_s" in r else ""
            if "dynamo_cpu_s" in r:
                cpu += f", dynamo {r['phase_dynamo']:.2f}s (CPU {r['dynamo_cpu_s']:.2f}s)"
            if r.get("phase_import_by"):
                cpu += ", imports " + " ".join(f"{k} {v:.3f}s" for k, v in list(r["phase_import_by"].items())[:6])
            steady = f"{r['step_ms']:.2f} ms/step, " if "step_ms" in r else ""
            kernels = f", {r['kernels_per_step']} kernels" if "kernels_per_step" in r else ""
            print(f"{tag}: {steady}first {r['first_step_s']:.2f}s{cpu}{kernels}{extra}{diff} ({dt:.0f}s)"
                  + _marks_text(r), flush=True)
            _print_first_calls(r)
        else:
            last = (r.get("stderr_tail") or "").strip().splitlines()[-1:] or [""]
            print(f"{tag}: FAILED {r.get('error')} {last[0][:200]} ({dt:.0f}s)", flush=True)
        with open(os.path.join(a.out, "results.json"), "w") as f:  # partial results survive a kill
            json.dump(cells, f, indent=1)
    for d in precompile_dirs.values():
        shutil.rmtree(d, ignore_errors=True)
    import torch

    note = (f"torch {torch.__version__}, device {a.device}{' (tiny configs)' if a.tiny else ''}, "
            f"mode {a.mode}, "
            f"dropout {'on' if a.dropout else 'off (0) for correctness comparison'}, "
            + ("first steps only (--first-step-only)" if a.first_step_only else
               f"{a.iters} timed steps after {a.warmup} warm-up, median")
            + "; tccd daemon cache may be warm.")
    write_outputs(a.out, cells, backends, note)
    return 0


def write_outputs(out: str, cells: List[Dict[str, Any]], backends: List[str], note: str) -> None:
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(cells, f, indent=1)
    with open(os.path.join(out, "notes.txt"), "w") as f:
        f.write(note + "\n")
    md = render_markdown(cells, backends, note)
    png_note = render_png(cells, os.path.join(out, "results.png"))
    if png_note:
        md += "\n" + png_note + "\n"
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(md)
    with open(os.path.join(out, "kernels.md"), "w") as f:
        f.write(render_top_kernels(cells))
    print(md, flush=True)


def render_top_kernels(cells: List[Dict[str, Any]]) -> str:
    """Per cell, the kernels that took the most device time in the profiled step."""
    lines = ["# Device time by kernel (one profiled steady step)", ""]
    for c in sorted(cells, key=lambda c: (c["model"], c["workload"], c["batch"], c["backend"])):
        if not c.get("top_kernels"):
            continue
        lines.append(f"## {c['model']} {c['workload']} {c['batch']} {c['backend']}: "
                     f"{c.get('kernels_per_step')} kernels, {_fmt(c.get('gpu_busy_ms'))} ms busy")
        lines += ["", "| kernel | launches | us |", "|---|---|---|"]
        kernel_ops = c.get("kernel_ops") or {}
        for name, n, us in c["top_kernels"]:
            label = f"`{name.replace('|', '/')}`"
            base = name.rsplit("_", 1)[0] if name.endswith(("_contig", "_strided")) else name
            if base in kernel_ops:
                label += " (" + "; ".join(kernel_ops[base])[:200].replace("|", "/") + ")"
            lines.append(f"| {label} | {n} | {us} |")
        lines.append("")
    return "\n".join(lines) + "\n"


def merge(dirs: List[str], out: str) -> int:
    """One report from several runs (e.g. one per 10-minute GPU command); later dirs win per cell."""
    by_cell: Dict[tuple, Dict[str, Any]] = {}
    notes = []
    for d in dirs:
        with open(os.path.join(d, "results.json")) as f:
            for c in json.load(f):
                key = (c["model"], c["workload"], c["batch"], c["backend"], c.get("start", "cold"),
                       c.get("mode", "default"))
                old = by_cell.get(key)
                # A cold cell of a --parallel-fill run shared the machine: it does not replace
                # one measured alone (e.g. the train-small lane's), nor a failed cell an ok one.
                if (old is None or (c.get("ok") and not (c.get("parallel_fill") and old.get("ok")
                                                          and not old.get("parallel_fill")))
                        or not old.get("ok")):
                    by_cell[key] = c
        try:
            with open(os.path.join(d, "notes.txt")) as f:
                notes.append(f.read().strip())
        except OSError:
            pass
    cells = list(by_cell.values())
    backends = sorted({c["backend"] for c in cells}, key=["eager", "inductor", "tccd"].index)
    os.makedirs(out, exist_ok=True)
    note = f"merged from {', '.join(dirs)}: " + " | ".join(dict.fromkeys(notes))
    write_outputs(out, cells, backends, note)
    return 0

if __name__ == "__main__":
    sys.exit(main())
