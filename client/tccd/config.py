"""Every knob of the tccd client, read from the environment in one place.

    TCCD_ADDRESS       daemon address, `unix:PATH` or `HOST:PORT`.
                       Default: the daemon's own default, unix:$XDG_RUNTIME_DIR/tccd/tccd.sock,
                       or unix:/tmp/tccd-<uid>/tccd.sock when XDG_RUNTIME_DIR is unset.
    TCCD_JOB_ID        job id recorded in the daemon's job index.
                       Default: torch.compiler.config.job_id, else "".
    TCCD_RANK          rank reported to the daemon. Default: $RANK, else 0.
    TCCD_STRICT        1: raise TccdError instead of falling back to eager. Default: 0.
    TCCD_BINARY        the tccd binary to auto-start. Default: <repo>/build/bin/tccd, then
                       `tccd` on PATH, then bin/tccd of a release bundle.
    TCCD_NO_AUTOSTART  1: never start a daemon. Default: 0.
    TCCD_CACHE_DIR     local manifest/artifact cache and daemon logs.
                       Default: $XDG_CACHE_HOME/tccd/client, else ~/.cache/tccd/client.
    TCCD_LOCAL_CACHE   0: do not use the local cache. Default: 1.
    TCCD_AOT_CACHE     0: do not use the AOT recipe cache (aot_cache.py), so every Dynamo graph
                       is traced by AOTAutograd even on a warm start. It lives in the local
                       cache, so TCCD_LOCAL_CACHE=0 turns it off as well. Default: 1.
    TCCD_LEAN_RUNTIME  1: once a graph's AOT recipe is stored (after its first backward, or its
                       inference plan), the graph switches from AOTAutograd's runtime wrappers to
                       the recipe's runtime (aot_runtime.py), which a warm start uses anyway and
                       which costs the host less per call; only graphs with a recipe switch.
                       0: AOTAutograd's wrappers for the whole process. Default: 1 (on the H200,
                       with the saved-tensor fix, ConvNeXt's training peak is 4000 MiB either way).
    TCCD_LEAN_CUDAGRAPHS  1 (with TCCD_LEAN_RUNTIME=1): under CUDA graphs (mode="reduce-overhead")
                       the graph switches to the recipe's runtime as well, around the same
                       CUDA-graph-wrapped forward and backward (cudagraphs.py), so a replayed step
                       pays less Python than AOTAutograd's wrappers cost; that recipe stays in the
                       process (warm starts under CUDA graphs still trace). 0: AOTAutograd's
                       wrappers under CUDA graphs, as before. Default: 1.
    TCCD_LEAN_ENTRY    1: the recipe's runtime (aot_runtime.py) pays less Python per graph call:
                       the autograd engine calls its backward directly as the node's `apply`
                       (one frame, no per-call lookup of the user's backward), and native plans
                       without symbols, profiling or non-ref outputs take a call path of a few
                       lines (native_plan.py). 0: the previous frames. Default: 1.
    TCCD_LEAN_SYMBOLIC  1 (with TCCD_LEAN_RUNTIME=1): a graph with symbolic sizes (dynamic
                       shapes) switches to that runtime too after its first backward, from a
                       recipe kept in this process only (never stored or shared: its sizes are
                       symbols), with the SymInts the forward saves for the backward and the
                       outputs' dynamic dims marked as AOTAutograd marks them. 0: AOTAutograd's
                       wrappers for symbolic graphs, as before. Default: 1.
    TCCD_LEAN_SYMBOLIC_ENTRY  1: a native symbolic plan's call drops the graph's integer inputs,
                       binds their symbols and computes its SymInt outputs in one function, the
                       symbol arrays and SymInt outputs cached per size
                       (NativePlan.lean_symbolic_call). 0: the wrapper and the plan's general
                       call, as before. Default: 1.
    TCCD_PACK_SAVED    1: under CUDA graphs, the forward's small 1-D saved tensors (batch norm's
                       means and inverse standard deviations) are concatenated into one saved
                       tensor the backward slices (saved_packing.py): ~100 fewer saved tensors
                       per ResNet-50 step for the CUDA graph trees and autograd, one concat
                       kernel more. Experimental, not yet measured on a GPU. Default: 0.
    TCCD_CUDAGRAPH_ZERO_TANGENTS  1 (with TCCD_LEAN_CUDAGRAPHS=1): under CUDA graphs, a
                       differentiable output that gets no gradient (a transformers model's
                       logits when only its loss is backpropagated) reaches the graphed backward
                       as zeros made inside the captured graph, from the graph's pool (a variant
                       of the backward without that tangent, cudagraphs.py), instead of zeros
                       autograd makes in ordinary memory at every step and the trees copy in:
                       GPT-2's reduce-overhead peak held its 98 MiB bf16 logits' zeros. 0: autograd
                       materialises the zeros, as before. Default: 1.
    TCCD_PLAN_ZERO_TANGENTS  1 (with TCCD_LEAN_RUNTIME=1), without CUDA graphs: the zeros of an
                       output that gets no gradient (the logits beside the loss) are made by the
                       recipe runtime and handed to the backward plan as its own argument, so the
                       plan frees them after their last reader, instead of autograd's zeros held
                       for the whole backward (aot_runtime._zero_tangents). 0: autograd's, as
                       before. Default: 1.
    TCCD_CUDAGRAPH_CPU_CONSTANTS  1: under CUDA graphs, a graph whose only CPU tensors are 0-dim
                       constants it makes itself (a lifted `torch.tensor(0)`, HF T5's
                       decoder-start token written into the shifted labels) is still captured:
                       ATen reads such a scalar on the host at launch and it never changes
                       (cudagraphs._cpu_constants). 0: any CPU tensor refuses capture, as
                       Dynamo's "cudagraphs" backend does (T5 then ran without CUDA graphs).
                       Default: 1.
    TCCD_FOLD_SCALAR_FILLS  1: fill(x, c) where c is a 0-dim CPU constant of the graph (a lifted
                       `torch.tensor(...)`; HF T5's decoder-start token written into the shifted
                       labels) becomes fill(x, number) before the graph is compiled, so the graph
                       holds no constant: it gets an AOT recipe (and so the lean runtime) and its
                       fill fuses instead of three extern steps (scalar_constants.py). 0: the
                       constant stays (plans and runtime as before). Default: 1.
    TCCD_AOT_SHARE     0: keep AOT recipes in the local cache only; 1: also give them to the daemon
                       and ask it for recipes the local cache lacks, so that a process with an
                       empty local cache (another machine) skips AOTAutograd too. Default: 1.
    TCCD_DYNAMIC_PROFILES  0: do not share Dynamo's automatic-dynamic profiles through the
                       daemon (dynamic_profiles.py). With torch's job id
                       (torch.compiler.config.job_id / TORCH_COMPILE_JOB_ID, which turns torch's
                       PGO on), the dims Dynamo found dynamic are stored under it, merged across
                       ranks and runs, and a later process of the job compiles them dynamic at
                       once. Default: 1.
    TCCD_GEMM_TUNES_SHARED  0: matmul autotuning's choices (a daemon with TCCD_GEMM_AUTOTUNE)
                       stay in this process and its local cache, as before the thirteenth
                       session; 1: they are shared through the daemon (gemm_tunes.py), the first
                       process's choice for a matmul on a GPU model and cuBLASLt kept for every
                       later process and rank, so that they compute the same bits. Default: 1.
    TCCD_TIMEOUT_S     deadline of one Compile call, seconds. Default: 600.
    TCCD_MAX_CONSTANT_MB  most bytes of lifted constant tensors one graph may send (their bytes
                       travel in the request); a graph over it runs eagerly. Default: 64.
    TCCD_NATIVE_RUNTIME  0: run plans in the Python interpreter (runtime.py) instead of the
                       native plan runtime, one call per graph (native_plan.py). Default: 1.
    TCCD_PROGRESS_AFTER_S  a Compile call not answered after this many seconds prints one line
                       to stderr (graph, kernels done/total, elapsed), and one more every 30 s
                       (progress.py); 0: never. Default: 5.
    TCCD_PARTITIONER   how AOTAutograd splits forward and backward: `min_cut` (recompute cheap
                       forward ops in the backward, saving less memory, as Inductor does) or
                       `default` (save what eager autograd saves). Default: min_cut.
    TCCD_LIGHT_PARTITION  1: the min-cut partitioner runs without importing Inductor's pattern
                       matcher (~200 modules, 1.5-2.4 s of a cold first step), with torch's own
                       definitions of the two helpers its CSE takes from it; the partition is
                       the same (light_partition.py). 0: the partitioner imports it. Default: 1.
    TCCD_LIGHT_AOT_LOGGING  1: Dynamo's aot_autograd backend runs without importing Inductor's
                       debug module (scheduler, IR, ...: 25 modules) for its enable_aot_logging,
                       a no-op unless TORCH_COMPILE_DEBUG=1 (light_aot_logging.py). 0: imported
                       as before. Default: 1.
    TCCD_FAST_MIN_CUT  1: on a torch whose min-cut partitioner calls networkx.minimum_cut (the GPU
                       machines' 2.11; 2.15 has its own), the partition runs torch 2.15's max-flow on
                       flat lists instead; the cut is the same (T5: 0.21 -> 0.02 s of CPU before
                       the forward's request; min_cut.py). 0: networkx's. Default: 1.
    TCCD_LAZY_BACKWARD_MODULE  1: the min-cut partitioner's reordered backward is a lazy graph
                       module (its Python code generated when first needed, as Dynamo's and
                       AOTAutograd's other graph modules are), not generated twice inside the
                       partition; the graph is the same (T5: partition 0.48 -> 0.27 s of CPU;
                       lazy_backward.py). 0: a plain GraphModule. Default: 1.
    TCCD_LOG_SOFTMAX_LSE  0: keep ATen's log_softmax; 1: AOTAutograd decomposes it into
                       x - logsumexp(x) so that the backward saves one value per row instead of
                       an f32 copy of the log-probabilities (decompositions.py). Default: 1.
    TCCD_PATCHIFY_GEMM  cuda: a CUDA convolution whose stride is its kernel (larger than 1x1, no
                       padding, dilation or groups; ConvNeXt's stem and downsamples, ViT's patch
                       embedding) is traced as a matmul of the input's patches, its backward as
                       two matmuls, so no process pays cuDNN's per-shape set-up for it
                       (decompositions.py); all: CPU convolutions too; 0: ATen's convolution.
                       Default: 0 until a GPU A/B of the steady step (one sample each on the
                       H200: ConvNeXt 11.23 against 13.19 ms, ViT 9.47 against 7.29; README).
    TCCD_DROP_DETACHES  1: the joint graph's detaches are dropped before the min cut, so that a
                       value the backward reads through one is recomputed rather than saved
                       (GPT-2's f32 GELU tanh; decompositions.drop_detaches); 0: the min cut
                       sees them. Only with TCCD_PARTITIONER=min_cut. Default: 1.
    TCCD_DROP_BN_RUNNING_STATS  1: the joint graph's training batch-norm backwards get None for
                       the running mean and variance they never read, so the forward does not
                       save them (ResNet-50: 106 saved tensors fewer, 429 -> 323;
                       decompositions.drop_bn_running_stats); 0: they are saved. Only with
                       TCCD_PARTITIONER=min_cut. Default: 1.
    TCCD_PREFETCH_BACKWARD  0: compile a graph's backward at its first .backward(), as
                       AOTAutograd asks; 1: request it when the forward's compile begins, in the
                       background, so forward and backward compile at the same time and the
                       backward's compile overlaps the first forward run (prefetch.py). Default: 1.
    TCCD_BACKGROUND_PREFETCH  1: a prefetched backward's request says `background`, and the
                       daemon compiles it at its lower priority (--compile-nice) while the
                       compiles a client waits for (the forward's) keep theirs
                       (--waited-compile-nice), so the forward's kernels get the cores first;
                       0: the prefetched backward compiles at the waited compiles' priority.
                       Not in the request hash. Default: 1.
    TCCD_FORWARD_REQUEST_FIRST  1: a forward compiled in the background (TCCD_ASYNC_COMPILE)
                       sends its Compile request before the prefetched backward's request is
                       built, so the forward's compile, which its first call waits for, starts
                       that much earlier; 0: the backward's request is built and sent first, as
                       before. Default: 1.
    TCCD_EARLY_SAVED_LAYOUT  1: a forward whose saved tensors take its plan's layout
                       (TCCD_SAVED_LAYOUT) also asks the daemon for its plan alone (no machine
                       code: milliseconds) and starts its backward's compile from those strides,
                       beside the forward's compile instead of after it; a compiled plan that
                       lays them out otherwise makes the backward compile again at .backward();
                       0: the backward starts at the forward's manifest. Default: 1.
    TCCD_ASYNC_COMPILE  0: a forward or inference graph compiles before the backend returns;
                       1: the backend returns at once a callable that awaits the compile at its
                       first call, so the daemon compiles while Dynamo and AOTAutograd finish
                       the frame (guards, bytecode, runtime wrappers) (prefetch.py). Default: 1.
    TCCD_EAGER_WHILE_COMPILING  1: a graph compiling in the background (TCCD_ASYNC_COMPILE's
                       forward or inference graph, or a prefetched backward) whose plan is not
                       there yet at a call runs that call eagerly (its ATen graph) instead of
                       waiting; calls after the plan arrived run the plan. The first step of a
                       cold process then waits for no compile (the daemon compiles while the
                       step runs), at the price of eager speed, and eager numerics, for the calls
                       that came too early (GraphRecord.eager_calls). A backward runs eagerly
                       while its forward still does, so a pair switches to plans together.
                       Decided per graph: not for graphs whose saved activations take the
                       forward plan's layout (TCCD_SAVED_LAYOUT), a forward whose backward is
                       not prefetched, under CUDA graphs, aot_compile, TCCD_STRICT or
                       torch.use_deterministic_algorithms(True) (which calls run eagerly depends
                       on the compile's speed). 0: first calls wait for their plans.
                       Default: 0 (the early calls have eager's peak memory, which a job sized
                       for the compiled step may not have room for, and draw other dropout
                       masks than a run whose plans were ready: opt in per job).
    TCCD_DEFER_FULL_GC  1: on a torch that does not defer full garbage collections over a
                       Dynamo compile itself (before 2.14: gc_gen2_threshold_during_compile), the
                       collector's threshold2 is raised to 1000 while tccd's backend runs
                       (AOTAutograd's trace and partition, the request), as newer torch does for
                       the whole compile (full_gc.py); 0: the collector's thresholds stay.
                       Default: 1.
    TCCD_DEFER_FULL_GC_COMPILE  1: with TCCD_DEFER_FULL_GC, on such a torch the raise covers
                       Dynamo's frame compile from its start (a compile callback) to the end of
                       tccd's backend call, when the forward's request is out, not only the
                       backend call: Dynamo's own trace then makes no full collection on the
                       path to the request either; the collections due merge into one that runs
                       beside the daemon's compile (full_gc.install_compile_deferral).
                       Process-wide once the backend is loaded (another backend's compile is
                       covered to its end). 0: tccd's backend call only. Default: 1.
    TCCD_SKIP_AOT_GRAPH_TEXT  1: inside tccd's backend call (not under aot_compile) AOTAutograd
                       does not render the joint, forward and backward graphs as Python text
                       (print_readable), which only its logs, the structured trace and
                       Inductor's cache entry read, unless TORCH_LOGS names aot_graphs,
                       aot_joint_graph or aot_graphs_effects or TORCH_TRACE is on
                       (aot_graph_text.py). 0: rendered as before. Default: 1.
    TCCD_WAIT_FULL_GC  1: the full collection due after a compile runs while a first call
                       waits for its background compile (or a backward for its prefetched
                       one), the raised threshold2 held from the backend call until that first
                       call (full_gc.py). 0: it runs when CPython's thresholds say, right after
                       tccd's backend call with TCCD_DEFER_FULL_GC. Default: 0 (measured on the
                       H200, T5 cold: no gain and +0.5 s in both pairs: the forward's compile is
                       the longer path after its request, so the collection overlapped it anyway,
                       and run nearer the compile's end it holds the GIL the plan's fetch and
                       load need).
    TCCD_SAVED_LAYOUT  0: a training forward's saved activations keep the strides AOTAutograd
                       traced; 1: in CUDA graphs with convolutions the daemon may store them
                       channels-last (as Inductor's layout optimisation does) and the backward
                       is compiled for the strides the forward's plan chose (saved_layouts.py).
                       Default: 1.
    TCCD_SAVED_PADDED  1: with TCCD_SAVED_LAYOUT, graphs with a matmul the daemon pads (an LM
                       head over an odd vocabulary) let it lay out their saved activations too:
                       the saved logits are the padded product's view, not a contiguous copy
                       (saved_layouts.py); their backward's compile then waits for the forward's
                       plan, and TCCD_EAGER_WHILE_COMPILING skips their forward, as for graphs
                       with convolutions. 0: those keep the traced strides. Default: 0 (a cold
                       start cost against a transient copy; not measured on a GPU yet).
    TCCD_RELEASED_INPUTS  1: a training backward's request names its saved activations, which
                       the plan frees at their last reader (the caller keeps no reference), so
                       that the daemon's CUDA segments do not hold them to a segment's end
                       (released_inputs.py); 0: not named (every input counted as the caller's,
                       the plans before). Default: 1.
    TCCD_PADDED_OUTPUTS  1: a forward's or inference graph's user outputs may come back with
                       padded row strides where that saves a copy (GPT-2's logits: the strided
                       view of the vocabulary projection's padded product, row stride 50264, as
                       Inductor returns them); 0: every user output keeps eager's strides. Only
                       strides change: code that merges such an output's rows with .view()
                       raises (padded_outputs.py). Default: 1.
    TCCD_CONV_WARMUP   0: a backward plan's convolutions pay cuDNN's set-up at their first call;
                       1: when the plan is loaded, each distinct convolution_backward call runs
                       once on scratch tensors on the autograd engine's thread of its device,
                       overlapping the forward (conv_warmup.py); 2: CPU plans too (tests);
                       3: cuDNN attention's backward calls too (ATen caches its graphs per
                       thread as well: the backward's first call then finds them built, 55-105
                       ms less on the H200's GPT-2, Llama, T5 and ViT). Default: 3.
    TCCD_CONV_WARMUP_FORWARD  1: a forward (or inference) plan loaded by key (a warm start's AOT
                       recipe, the ahead-of-time flow's load), whose first call comes after
                       other main-thread work (Dynamo finishing the frame, the saved guards'
                       rebuild), runs each distinct convolution once on scratch tensors on a
                       background thread meanwhile, beside the backward plan's warm-up (above).
                       A gain only where cuDNN's set-up is shared by the process's threads
                       (ATen's plan cache is per thread: deploy/cudnn_setup_probe.py measures
                       what is shared); 2: CPU plans too (tests); 3: the fused attentions'
                       forward calls too (without dropout). Default: 0 (its one H200 A/B,
                       when the backward's warm-up still waited for it, showed no gain: README).
    TCCD_WAIT_CONV_WARMUP  1: a graph's first call that waits for its compile (a forward's
                       background compile; the first .backward() for its prefetched one) runs
                       the graph's convolutions (convolution backwards) once each on scratch
                       tensors meanwhile, on that thread (cuDNN's plan cache is per thread), so
                       the plan's first call finds cuDNN's set-up done
                       (conv_warmup.warm_while_waiting); 0: it just waits; 2: CPU graphs too
                       (tests). Default: 0 (the one H200 run had no gain to show for it).
    TCCD_DEFER_BACKWARD_INIT  1: a backward plan loaded by key (a warm start's AOT recipe, the
                       ahead-of-time flow's load: the main thread) loads its kernels' CUDA
                       modules on a background thread, during the forward; a launch before
                       that waits for it in the runtime. 2: the forward's too (what follows
                       its load on the main thread: Dynamo's guards, rebuilt from a saved file
                       in the ahead-of-time flow). 0: every plan's modules load where it is
                       loaded, as before the fourteenth session. Measured once on a GPU
                       (ResNet-50's AOT load, tccd's `load` 0.18 -> 0.09 s, with the guard
                       filter changed beside it). Default: 2.
    TCCD_PREWARM_CUDA  1: a forward or inference graph for CUDA compiling in the background
                       starts, beside the daemon's compile, the process-wide part of loading
                       its plan (this device's context on a thread, cuBLASLt's first handle, the
                       matmul tune table: runtime.prewarm_cuda), which the first plan load paid
                       after the daemon's answer (T5's forward 195-249 ms against its backward's
                       43-69 on the GPU host). 0: the first load does it. Default: 1.
    TCCD_TRACE_ONCE_LOGS  1: a once-per-process logger call (transformers' `warning_once`,
                       `info_once`) with constant arguments runs while Dynamo traces, instead of
                       breaking the graph: GPT-2's loss_type warning made Dynamo trace the model
                       twice and compile two graphs (once_logs.py). The message still prints once,
                       at the first call. Process-wide once the backend is loaded. 0: Dynamo's own
                       handling (a graph break). Default: 1.
    TCCD_AOT_GUARD_STACKS  0: the guards tccd.precompile.lean_guards keeps are saved without the
                       user stack Dynamo recorded for each (the file and line a guard came from,
                       which only messages print), so that loading does not unpickle and format
                       one per guard (~0.25 of ~0.85 CPU s of ResNet-50's guard build on the
                       CPU); guard failures and TORCH_LOGS=guards then name no source line.
                       1: saved with their stacks. Default: 0.
    TCCD_AOT_SETTLE_TRACE_LOG  1: loading a precompiled function (the ahead-of-time flow) first
                       logs one small structured-trace event ("tccd_precompiled_load"), so that
                       torch's lazy trace handler, which removes itself at its first event
                       when TORCH_TRACE is not set, is gone before the guards are rebuilt:
                       otherwise that first event is the guard manager printed as text (~0.3 CPU
                       s on ViT's 12 blocks, for nobody). With TORCH_TRACE set the event lands
                       in the trace and the guard text follows as before. 0: not done.
                       Default: 1.
    TCCD_CACHING_PRECOMPILE  1: torch's caching_precompile for a plain torch.compile: tccd
                       turns torch._dynamo.config.caching_precompile on at its import, records
                       each graph's AOT recipe and plan keys (JSON) for Dynamo's package and
                       writes the package (guards and bytecode, torch's pickle, under
                       TORCHINDUCTOR_CACHE_DIR/dynamo) once every graph of a function has its
                       recipe; a new process's torch.compile of the same function then loads it
                       and skips Dynamo's trace (caching_precompile.py). Torch drops identity
                       guards in that mode (README). 0: torch's flag is left as it is.
                       Default: 0.
    TCCD_PACKAGE_LEAN_GUARDS  1: with TCCD_CACHING_PRECOMPILE, a packaged frame keeps the
                       ahead-of-time flow's lean guards (precompile.lean_guards: no guards on
                       the modules' structure, such as their empty hook dicts; the guards' user
                       stacks not saved), in the saving process and in the package; a hook
                       registered on a submodule after the compile is then not noticed
                       (README). 0: every guard Dynamo can save. Default: 1.
    TCCD_LOADED_GUARDS_ONCE  1: with TCCD_CACHING_PRECOMPILE, a loaded package's (or a
                       precompiled function's) guards are built once: torch builds them twice
                       while caching_precompile is on, the first time only to feed its guard
                       filter, which has nothing left to drop in guards it saved filtered.
                       0: as torch does. Default: 1.
    TCCD_TOKEN         bearer token sent with every call (a daemon started with --tokens).
    TCCD_TOKEN_FILE    file holding the token (first line), instead of TCCD_TOKEN.
    TCCD_TLS_CA        PEM CA file: talk TLS to a TCP address and verify the daemon against it.
    TCCD_TLS_CERT, TCCD_TLS_KEY  PEM client certificate and key, for a daemon that requires
                       client certificates (--tls-client-ca). Setting them also turns TLS on
                       (with the system's CAs unless TCCD_TLS_CA is set).

The environment is read once, on first use (`get()`); `reload()` re-reads it (tests, or a
program that changes os.environ before compiling).
"""

from __future__ import annotations

import dataclasses
import os
import threading
from typing import Mapping, Optional

# TCCD_PARTITIONER values.
PARTITIONERS = ("min_cut", "default")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(f"{name}={raw!r}: expected 0 or 1")


def default_address(env: Mapping[str, str]) -> str:
    """The daemon's default listen address (keep in sync with the daemon's --listen default)."""
    runtime_dir = env.get("XDG_RUNTIME_DIR")
    if runtime_dir:
        return f"unix:{os.path.join(runtime_dir, 'tccd', 'tccd.sock')}"
    return f"unix:/tmp/tccd-{os.getuid()}/tccd.sock"


def default_cache_dir(env: Mapping[str, str]) -> str:
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tccd", "client")


@dataclasses.dataclass(frozen=True)
class Config:
    address: str
    # None: not set in the environment; resolved from torch.compiler.config.job_id at use.
    job_id_env: Optional[str]
    rank: int
    strict: bool
    binary: Optional[str]  # TCCD_BINARY as given; None = search the default places
    autostart: bool
    cache_dir: str
    local_cache: bool
    aot_cache: bool  # the AOT recipe cache; only used together with local_cache
    native_runtime: bool  # run plans with the native plan runtime (native_plan.py)
    timeout_s: float
    max_constant_bytes: int = 64 << 20
    partitioner: str = "min_cut"
    log_softmax_lse: bool = True  # TCCD_LOG_SOFTMAX_LSE (decompositions.py)
    patchify_gemm: str = "0"  # TCCD_PATCHIFY_GEMM (decompositions.py)
    drop_detaches: bool = True  # TCCD_DROP_DETACHES (decompositions.py)
    drop_bn_running_stats: bool = True  # TCCD_DROP_BN_RUNNING_STATS (decompositions.py)
    light_partition: bool = True  # TCCD_LIGHT_PARTITION (light_partition.py)
    fast_min_cut: bool = True  # TCCD_FAST_MIN_CUT (min_cut.py)
    lazy_backward_module: bool = True  # TCCD_LAZY_BACKWARD_MODULE (lazy_backward.py)
    light_aot_logging: bool = True  # TCCD_LIGHT_AOT_LOGGING (light_aot_logging.py)
    token: Optional[str] = None
    tls_ca: Optional[str] = None  # paths
    tls_cert: Optional[str] = None
    tls_key: Optional[str] = None

    @property
    def tls(self) -> bool:
        return bool(self.tls_ca or self.tls_cert)
    progress_after_s: float = 5.0
    aot_share: bool = True  # AOT recipes through the daemon too (TCCD_AOT_SHARE)
    lean_runtime: bool = True  # TCCD_LEAN_RUNTIME: the recipe's runtime once a recipe is stored
    lean_cudagraphs: bool = True  # TCCD_LEAN_CUDAGRAPHS: that runtime under CUDA graphs too
    lean_entry: bool = True  # TCCD_LEAN_ENTRY: that runtime's leaner per-call Python (aot_runtime.py)
    lean_symbolic: bool = True  # TCCD_LEAN_SYMBOLIC: that runtime for symbolic graphs too
    lean_symbolic_entry: bool = True  # TCCD_LEAN_SYMBOLIC_ENTRY (native_plan.lean_symbolic_call)
    # TCCD_SHARED_SAVED_CONSTANTS: a forward's constant factory saved for the backward (position
    # ids) is the load-time tensor, not a clone per call (NativePlan.share_saved_constants)
    shared_saved_constants: bool = True
    # TCCD_SYMBOLIC_SAVED_ARANGES: a symbolic forward's arange saved for the backward (position
    # ids) is kept per size by the runtime, not launched per call
    # (NativePlan.share_saved_sized_aranges)
    symbolic_saved_aranges: bool = True
    pack_saved: bool = False  # TCCD_PACK_SAVED (saved_packing.py)
    cudagraph_cpu_constants: bool = True  # TCCD_CUDAGRAPH_CPU_CONSTANTS (cudagraphs.py)
    cudagraph_zero_tangents: bool = True  # TCCD_CUDAGRAPH_ZERO_TANGENTS (cudagraphs.py)
    plan_zero_tangents: bool = True  # TCCD_PLAN_ZERO_TANGENTS (aot_runtime.py)
    fold_scalar_fills: bool = True  # TCCD_FOLD_SCALAR_FILLS (scalar_constants.py)
    prefetch_backward: bool = True  # TCCD_PREFETCH_BACKWARD
    background_prefetch: bool = True  # TCCD_BACKGROUND_PREFETCH
    forward_request_first: bool = True  # TCCD_FORWARD_REQUEST_FIRST
    early_saved_layout: bool = True  # TCCD_EARLY_SAVED_LAYOUT
    async_compile: bool = True  # TCCD_ASYNC_COMPILE
    eager_while_compiling: bool = False  # TCCD_EAGER_WHILE_COMPILING
    defer_full_gc: bool = True  # TCCD_DEFER_FULL_GC (full_gc.py)
    defer_full_gc_compile: bool = True  # TCCD_DEFER_FULL_GC_COMPILE (full_gc.py)
    wait_full_gc: bool = False  # TCCD_WAIT_FULL_GC (full_gc.py)
    skip_aot_graph_text: bool = True  # TCCD_SKIP_AOT_GRAPH_TEXT (aot_graph_text.py)
    saved_layout: bool = True  # TCCD_SAVED_LAYOUT
    saved_padded: bool = False  # TCCD_SAVED_PADDED
    released_inputs: bool = True  # TCCD_RELEASED_INPUTS (released_inputs.py)
    padded_outputs: bool = True  # TCCD_PADDED_OUTPUTS
    dynamic_profiles: bool = True  # automatic-dynamic profiles through the daemon
    gemm_tunes_shared: bool = True  # TCCD_GEMM_TUNES_SHARED (gemm_tunes.py)
    conv_warmup: int = 3  # TCCD_CONV_WARMUP (conv_warmup.py)
    conv_warmup_forward: int = 0  # TCCD_CONV_WARMUP_FORWARD (conv_warmup.start_forward)
    wait_conv_warmup: int = 0  # TCCD_WAIT_CONV_WARMUP (conv_warmup.warm_while_waiting)
    defer_backward_init: int = 2  # TCCD_DEFER_BACKWARD_INIT: 1 backward plans, 2 forward too
    prewarm_cuda: bool = True  # TCCD_PREWARM_CUDA (runtime.prewarm_cuda)
    aot_settle_trace_log: bool = True  # TCCD_AOT_SETTLE_TRACE_LOG (precompile.settle_trace_log)
    aot_guard_stacks: bool = False  # TCCD_AOT_GUARD_STACKS (precompile.lean_guards)
    aot_input_check: bool = True  # TCCD_AOT_INPUT_CHECK (input_check.py)
    aot_shared_fake_mode: bool = True  # TCCD_AOT_SHARED_FAKE_MODE (precompile._share_fake_mode_in_guard_loads)
    trace_once_logs: bool = True  # TCCD_TRACE_ONCE_LOGS (once_logs.py)
    caching_precompile: bool = False  # TCCD_CACHING_PRECOMPILE (caching_precompile.py)
    package_lean_guards: bool = True  # TCCD_PACKAGE_LEAN_GUARDS (caching_precompile._drop_unsaveable_guards)
    loaded_guards_once: bool = True  # TCCD_LOADED_GUARDS_ONCE (caching_precompile._build_loaded_guards_once)

    @property
    def unix_socket_path(self) -> Optional[str]:
        """The socket path when the address is `unix:PATH` (or `unix://PATH`), else None."""
        if self.address.startswith("unix://"):
            return self.address[len("unix://"):]
        if self.address.startswith("unix:"):
            return self.address[len("unix:"):]
        return None

    def job_id(self) -> str:
        if self.job_id_env is not None:
            return self.job_id_env
        try:
            import torch.compiler.config as compiler_config

            return getattr(compiler_config, "job_id", None) or ""
        except ImportError:
            return ""

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> "Config":
        address = env.get("TCCD_ADDRESS") or default_address(env)
        rank_raw = env.get("TCCD_RANK") or env.get("RANK") or "0"
        try:
            rank = int(rank_raw)
        except ValueError:
            raise ValueError(f"TCCD_RANK/RANK={rank_raw!r}: expected an integer") from None
        timeout_raw = env.get("TCCD_TIMEOUT_S") or "600"
        try:
            timeout_s = float(timeout_raw)
        except ValueError:
            raise ValueError(f"TCCD_TIMEOUT_S={timeout_raw!r}: expected seconds") from None
        if timeout_s <= 0:
            raise ValueError(f"TCCD_TIMEOUT_S={timeout_raw!r}: must be positive")
        constant_raw = env.get("TCCD_MAX_CONSTANT_MB") or "64"
        try:
            max_constant_bytes = int(float(constant_raw) * (1 << 20))
        except ValueError:
            raise ValueError(f"TCCD_MAX_CONSTANT_MB={constant_raw!r}: expected MiB") from None
        progress_raw = env.get("TCCD_PROGRESS_AFTER_S") or "5"
        try:
            progress_after_s = float(progress_raw)
        except ValueError:
            raise ValueError(f"TCCD_PROGRESS_AFTER_S={progress_raw!r}: expected seconds") from None
        partitioner = (env.get("TCCD_PARTITIONER") or "min_cut").strip().lower()
        if partitioner not in PARTITIONERS:
            raise ValueError(
                f"TCCD_PARTITIONER={partitioner!r}: expected one of {', '.join(PARTITIONERS)}"
            )
        token = env.get("TCCD_TOKEN") or None
        token_file = env.get("TCCD_TOKEN_FILE")
        if token is None and token_file:
            try:
                with open(token_file, encoding="utf-8") as f:
                    token = f.readline().strip() or None
            except OSError as e:
                raise ValueError(f"TCCD_TOKEN_FILE={token_file!r}: {e}") from None
            if token is None:
                raise ValueError(f"TCCD_TOKEN_FILE={token_file!r}: the file is empty")
        tls_cert, tls_key = env.get("TCCD_TLS_CERT") or None, env.get("TCCD_TLS_KEY") or None
        if bool(tls_cert) != bool(tls_key):
            raise ValueError("TCCD_TLS_CERT and TCCD_TLS_KEY go together: set both or neither")
        defer_raw = (env.get("TCCD_DEFER_BACKWARD_INIT") or "2").strip().lower()
        if defer_raw not in _TRUE | _FALSE | {"2"}:
            raise ValueError(f"TCCD_DEFER_BACKWARD_INIT={defer_raw!r}: expected 0, 1 or 2")
        defer = 2 if defer_raw == "2" else int(defer_raw in _TRUE)
        patchify_gemm = (env.get("TCCD_PATCHIFY_GEMM") or "0").strip().lower()
        if patchify_gemm not in ("0", "cuda", "all"):
            raise ValueError(f"TCCD_PATCHIFY_GEMM={patchify_gemm!r}: expected 0, cuda or all")
        conv_warmup_raw = (env.get("TCCD_CONV_WARMUP") or "3").strip()
        if conv_warmup_raw not in ("0", "1", "2", "3"):
            raise ValueError(f"TCCD_CONV_WARMUP={conv_warmup_raw!r}: expected 0, 1, 2 or 3")
        forward_warmup_raw = (env.get("TCCD_CONV_WARMUP_FORWARD") or "0").strip()
        if forward_warmup_raw not in ("0", "1", "2", "3"):
            raise ValueError(f"TCCD_CONV_WARMUP_FORWARD={forward_warmup_raw!r}: expected 0, 1, 2 or 3")
        wait_warmup_raw = (env.get("TCCD_WAIT_CONV_WARMUP") or "0").strip()
        if wait_warmup_raw not in ("0", "1", "2"):
            raise ValueError(f"TCCD_WAIT_CONV_WARMUP={wait_warmup_raw!r}: expected 0, 1 or 2")
        return cls(
            conv_warmup=int(conv_warmup_raw),
            conv_warmup_forward=int(forward_warmup_raw),
            wait_conv_warmup=int(wait_warmup_raw),
            defer_backward_init=defer,
            prewarm_cuda=_flag(env, "TCCD_PREWARM_CUDA", True),
            token=token,
            tls_ca=env.get("TCCD_TLS_CA") or None,
            tls_cert=tls_cert,
            tls_key=tls_key,
            max_constant_bytes=max_constant_bytes,
            partitioner=partitioner,
            log_softmax_lse=_flag(env, "TCCD_LOG_SOFTMAX_LSE", True),
            patchify_gemm=patchify_gemm,
            drop_detaches=_flag(env, "TCCD_DROP_DETACHES", True),
            drop_bn_running_stats=_flag(env, "TCCD_DROP_BN_RUNNING_STATS", True),
            light_partition=_flag(env, "TCCD_LIGHT_PARTITION", True),
            fast_min_cut=_flag(env, "TCCD_FAST_MIN_CUT", True),
            lazy_backward_module=_flag(env, "TCCD_LAZY_BACKWARD_MODULE", True),
            light_aot_logging=_flag(env, "TCCD_LIGHT_AOT_LOGGING", True),
            progress_after_s=progress_after_s,
            address=address,
            job_id_env=env.get("TCCD_JOB_ID"),
            rank=rank,
            strict=_flag(env, "TCCD_STRICT", False),
            binary=env.get("TCCD_BINARY") or None,
            autostart=not _flag(env, "TCCD_NO_AUTOSTART", False),
            cache_dir=env.get("TCCD_CACHE_DIR") or default_cache_dir(env),
            local_cache=_flag(env, "TCCD_LOCAL_CACHE", True),
            aot_cache=_flag(env, "TCCD_AOT_CACHE", True),
            aot_share=_flag(env, "TCCD_AOT_SHARE", True),
            lean_runtime=_flag(env, "TCCD_LEAN_RUNTIME", True),
            lean_cudagraphs=_flag(env, "TCCD_LEAN_CUDAGRAPHS", True),
            lean_entry=_flag(env, "TCCD_LEAN_ENTRY", True),
            lean_symbolic=_flag(env, "TCCD_LEAN_SYMBOLIC", True),
            lean_symbolic_entry=_flag(env, "TCCD_LEAN_SYMBOLIC_ENTRY", True),
            shared_saved_constants=_flag(env, "TCCD_SHARED_SAVED_CONSTANTS", True),
            symbolic_saved_aranges=_flag(env, "TCCD_SYMBOLIC_SAVED_ARANGES", True),
            pack_saved=_flag(env, "TCCD_PACK_SAVED", False),
            cudagraph_cpu_constants=_flag(env, "TCCD_CUDAGRAPH_CPU_CONSTANTS", True),
            cudagraph_zero_tangents=_flag(env, "TCCD_CUDAGRAPH_ZERO_TANGENTS", True),
            plan_zero_tangents=_flag(env, "TCCD_PLAN_ZERO_TANGENTS", True),
            fold_scalar_fills=_flag(env, "TCCD_FOLD_SCALAR_FILLS", True),
            prefetch_backward=_flag(env, "TCCD_PREFETCH_BACKWARD", True),
            background_prefetch=_flag(env, "TCCD_BACKGROUND_PREFETCH", True),
            forward_request_first=_flag(env, "TCCD_FORWARD_REQUEST_FIRST", True),
            early_saved_layout=_flag(env, "TCCD_EARLY_SAVED_LAYOUT", True),
            async_compile=_flag(env, "TCCD_ASYNC_COMPILE", True),
            eager_while_compiling=_flag(env, "TCCD_EAGER_WHILE_COMPILING", False),
            defer_full_gc=_flag(env, "TCCD_DEFER_FULL_GC", True),
            defer_full_gc_compile=_flag(env, "TCCD_DEFER_FULL_GC_COMPILE", True),
            wait_full_gc=_flag(env, "TCCD_WAIT_FULL_GC", False),
            skip_aot_graph_text=_flag(env, "TCCD_SKIP_AOT_GRAPH_TEXT", True),
            saved_layout=_flag(env, "TCCD_SAVED_LAYOUT", True),
            saved_padded=_flag(env, "TCCD_SAVED_PADDED", False),
            released_inputs=_flag(env, "TCCD_RELEASED_INPUTS", True),
            padded_outputs=_flag(env, "TCCD_PADDED_OUTPUTS", True),
            dynamic_profiles=_flag(env, "TCCD_DYNAMIC_PROFILES", True),
            gemm_tunes_shared=_flag(env, "TCCD_GEMM_TUNES_SHARED", True),
            aot_settle_trace_log=_flag(env, "TCCD_AOT_SETTLE_TRACE_LOG", True),
            aot_guard_stacks=_flag(env, "TCCD_AOT_GUARD_STACKS", False),
            aot_input_check=_flag(env, "TCCD_AOT_INPUT_CHECK", True),
            aot_shared_fake_mode=_flag(env, "TCCD_AOT_SHARED_FAKE_MODE", True),
            trace_once_logs=_flag(env, "TCCD_TRACE_ONCE_LOGS", True),
            caching_precompile=_flag(env, "TCCD_CACHING_PRECOMPILE", False),
            package_lean_guards=_flag(env, "TCCD_PACKAGE_LEAN_GUARDS", True),
            loaded_guards_once=_flag(env, "TCCD_LOADED_GUARDS_ONCE", True),
            native_runtime=_flag(env, "TCCD_NATIVE_RUNTIME", True),
            timeout_s=timeout_s,
        )


_lock = threading.Lock()
_config: Optional[Config] = None


def get() -> Config:
    global _config
    with _lock:
        if _config is None:
            _config = Config.from_env()
        return _config


def reload() -> Config:
    """Re-reads the environment. Channels are cached per address, so a changed TCCD_ADDRESS
    simply gets its own."""
    global _config
    with _lock:
        _config = Config.from_env()
        return _config
