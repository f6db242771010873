"""cuda_row_gpu_check.py: row-reduction kernels (softmax, norms, reductions with fused prologues
and epilogues) on a GPU, checked against PyTorch eager and timed. Not a CTest test.

  here:  python cuda_row_gpu_check.py --emit-cases DIR/cases.txt
         build/tests/cuda_row_gpu_gen DIR/cases.txt DIR        (kernels_cuda.so, manifest.txt)
  there: python cuda_row_gpu_check.py --run DIR [--bench]

Each case is a graph in tccd's IR text that compiles to exactly one row-reduction kernel, a
generator of its inputs and a reference (PyTorch ops in float64 on the same inputs). The kernel
is driven as the tccd client drives a NativeCall step: ctypes, data = inputs then outputs,
strides in the iteration space (expand() for inputs, the plan's strides for outputs). Cases
marked `strided` run again with inputs given as transposed copies, which takes the strided
entry. --bench also times each kernel and the same ops in eager PyTorch (CUDA events around 20
back-to-back launches, median of 15) and a device-to-device copy; GB/s counts every byte read and written once.

Last run (H100 80GB HBM3, torch 2.11, NVRTC 13.0, commit 42db569, 2026-11-22): every case
PASS on both entries except layernorm_residual_bf16, whose reference then rounded the residual
sum to bf16 before the norm (eager's semantics; fused kernels hold it in f32): mean/rstd off by
3.7e-4, reproduced on the CPU, reference fixed since and not rerun. GB/s: softmax f32 2251
(eager 2547), softmax bf16 1802 (eager 1827), softmax bf16 4096x32000 1918, log_softmax
f32 x1000 1816, softmax f32 x64 1675, layer norm + residual bf16 1363 (eager layer_norm alone
1337), RMS norm bf16 2030, _fused_rms_norm f32 1567, sum(x*x) f32 1742 (eager sum 2026), amax f16
1062, var_mean f32 1167, softmax backward bf16 1874, log_softmax backward f32 2254;
cuMemcpyDtoD-like copy 2928. The previous geometry (4 vectors per thread) gave softmax f32 2326.

Run of branch reductions-2 (H100, torch 2.11, NVRTC 13.0, 2026-11-22; two runs, same code):
every case PASS. Row kernels' exp is exp2f(x * log2e) now: softmax f32 2454 / 2251 (run-to-run
noise of ~10%; eager 2615 in the second run), softmax bf16 1972 / 1877 (eager 1773). Column
reductions: sum(x*x, 0) f32 32768x1024 1723 (eager 741), mean(0) bf16 32768x4096 2281 (eager
2323), sum(0) bf16 8192x768 336 (eager 405) and f32 256x4096 118 (eager 167): these two are
12.6 and 4.2 MB, i.e. ~35 us per call in this ctypes/event harness for both tccd and eager, so
host overhead, not the kernels. Layer-norm backward: grad_input bf16 16384x1024 79.6 us (1267
GB/s), parameter gradients 77.7 us (866 GB/s), together 157 us vs eager's one call 142 us; f32
8192x768 77.4 + 71.6 us vs eager 94.7 us: the parameter kernel is not tuned yet. Copy 2931.

Run with back-to-back timing (H100, torch 2.11, NVRTC 13.0, 2026-11-22, kernels of the merged
main): every case PASS. GB/s: softmax f32 2872 (eager 2821 in the run before), softmax bf16 2705
(eager 2057), softmax bf16 4096x32000 2200, log_softmax f32 x1000 2736, layer norm + residual
bf16 2608, decomposed RMS norm bf16 2859, _fused_rms_norm f32 2750, sum(x*x) f32 2848,
var_mean f32 2650, softmax backward bf16 2861, log_softmax backward f32 2908, column mean bf16
32768x4096 2864, column sum(x*x) f32 2304; layer-norm backward bf16 16384x1024 38.2 + 34.2 us
(eager 120.8 us), f32 8192x768 31.6 + 32.5 us (eager 72.6 us); copy 3001. The earlier numbers
above timed one launch per event pair and so included the ~20-35 us of Python/ctypes work per
launch; cases under ~20 MB (e.g. column sums of 8192x768) are still bound by that host time.
"""

import ctypes
import sys

CASES = []


def case(name, graph, make_inputs, reference, strided=False, tol=None):
    # Callers build lambdas over loop-like variables (m, n): bind them now via default args.
    CASES.append(dict(name=name, graph=graph, make=make_inputs, ref=reference, strided=strided, tol=tol))


def t(dtype, *shape):
    strides, s = [], 1
    for d in reversed(shape):
        strides.insert(0, s)
        s *= d
    return f"{dtype}[{','.join(map(str, shape))}]{{{','.join(map(str, strides))}}}@cuda"


def define_cases():
    import torch
    F = torch.nn.functional
    dt = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}

    def randn(dtype, *shape, scale=1.0):
        return lambda: (torch.randn(*shape, device="cuda", dtype=torch.float32) * scale).to(dt[dtype])

    def softmax_case(name, dtype, m, n, log=False, strided=False):
        op = "_log_softmax" if log else "_softmax"
        g = f"""graph(%a0: {t(dtype, m, n)}) {{
  %0 = aten::mul.Tensor(%a0, 0.5) -> {t(dtype, m, n)}
  %1 = aten::{op}.default(%0, -1, false) -> {t(dtype, m, n)}
  return (%1)
}}"""
        fn = F.log_softmax if log else F.softmax
        case(name, g, lambda m=m, n=n: [randn(dtype, m, n, scale=4.0)()],
             lambda x, m=m, n=n: {"1#0": fn(x[0].double() * 0.5, -1)},
             strided=strided)

    softmax_case("softmax_f32", "f32", 32768, 1024)
    softmax_case("softmax_bf16", "bf16", 32768, 1024)
    softmax_case("softmax_bf16_vocab", "bf16", 4096, 32000)
    softmax_case("log_softmax_f32_1000", "f32", 16384, 1000, log=True)
    softmax_case("softmax_f32_rows64", "f32", 262144, 64, strided=True)
    softmax_case("softmax_f16_odd", "f16", 4099, 77, strided=True)

    # Vocabulary rows (looped kernels, rows > kMaxPersistentRowLength): cross entropy's bf16
    # logits cast to f32 and log_softmax'ed, as the LM heads of GPT-2 (50257, odd: scalar
    # accesses) and BERT (30522) run them.
    def vocab_log_softmax_case(name, m, n):
        g = f"""graph(%a0: {t('bf16', m, n)}) {{
  %0 = aten::_to_copy.default(%a0, dtype=f32) -> {t('f32', m, n)}
  %1 = aten::_log_softmax.default(%0, 1, false) -> {t('f32', m, n)}
  return (%1)
}}"""
        case(name, g, lambda m=m, n=n: [randn("bf16", m, n, scale=4.0)()],
             lambda x: {"1#0": F.log_softmax(x[0].double(), -1)}, strided=True)

    vocab_log_softmax_case("log_softmax_vocab_gpt2", 1024, 50257)
    vocab_log_softmax_case("log_softmax_vocab_bert", 1024, 30522)
    # Shifted rows (bf16 throughout: 8-element vectors that divide neither length; every row
    # starts at another misalignment), persistent and looped, and a broadcast bias whose
    # misalignment differs from the rows' (read per element).
    softmax_case("softmax_bf16_shifted_30522", "bf16", 2048, 30522, strided=True)
    softmax_case("log_softmax_bf16_shifted_50257", "bf16", 1024, 50257, log=True, strided=True)

    def bias_softmax_case(name, m, n):
        g = f"""graph(%a0: {t('bf16', m, n)}, %a1: {t('bf16', n)}) {{
  %0 = aten::add.Tensor(%a0, %a1) -> {t('bf16', m, n)}
  %1 = aten::_softmax.default(%0, -1, false) -> {t('bf16', m, n)}
  return (%1)
}}"""
        case(name, g, lambda m=m, n=n: [randn("bf16", m, n, scale=4.0)(), randn("bf16", n)()],
             lambda x: {"1#0": F.softmax(x[0].double() + x[1].double(), -1)}, strided=True)

    bias_softmax_case("bias_softmax_bf16_shifted_30522", 1024, 30522)
    bias_softmax_case("bias_softmax_bf16_shifted_1003", 4096, 1003)

    m, n = 16384, 1024
    case("layernorm_residual_bf16", f"""graph(%a0: {t('bf16', m, n)}, %a1: {t('bf16', m, n)}, %a2: {t('bf16', n)}, %a3: {t('bf16', n)}) {{
  %0 = aten::add.Tensor(%a0, %a1) -> {t('bf16', m, n)}
  %1 = aten::native_layer_norm.default(%0, [{n}], %a2, %a3, 1e-05) -> ({t('bf16', m, n)}, {t('f32', m, 1)}, {t('f32', m, 1)})
  return (%0, %1#0, %1#1, %1#2)
}}""", lambda m=m, n=n: [randn("bf16", m, n)(), randn("bf16", m, n)(), randn("bf16", n)(), randn("bf16", n)()],
         # Fused, the norm reads the residual sum unrounded (held in f32, like every fused
         # intermediate); eager rounds it to bf16 first, which moves mean/rstd by up to ~4e-4.
         lambda x, m=m, n=n: (lambda h: dict(zip(["0#0", "1#0", "1#1", "1#2"],
                                       [h.to(torch.bfloat16).double(),
                                        F.layer_norm(h, [n], x[2].double(), x[3].double(), 1e-5),
                                        h.mean(-1, keepdim=True),
                                        torch.rsqrt(h.var(-1, unbiased=False, keepdim=True) + 1e-5)])))(
             x[0].double() + x[1].double()),
         strided=True)

    # Layer norms as autocast runs them: bf16 rows, f32 weight and bias (the row vector is 8
    # elements: 16 bytes of the rows, two 16-byte loads of each parameter). A ConvNeXt
    # LayerNorm2d row of 64 channels (8 lanes, one vector each) and a ViT row of 768.
    for name, m, n in [("layernorm_bf16_f32params_64", 200704, 64),
                       ("layernorm_bf16_f32params_768", 25216, 768)]:
        case(name, f"""graph(%a0: {t('bf16', m, n)}, %a1: {t('f32', n)}, %a2: {t('f32', n)}) {{
  %0 = aten::native_layer_norm.default(%a0, [{n}], %a1, %a2, 1e-05) -> ({t('bf16', m, n)}, {t('f32', m, 1)}, {t('f32', m, 1)})
  return (%0#0, %0#1, %0#2)
}}""", lambda m=m, n=n: [randn("bf16", m, n)(), randn("f32", n)(), randn("f32", n)()],
             lambda x, n=n: (lambda h: dict(zip(["0#0", "0#1", "0#2"],
                                               [F.layer_norm(h, [n], x[1].double(), x[2].double(), 1e-5),
                                                h.mean(-1, keepdim=True),
                                                torch.rsqrt(h.var(-1, unbiased=False, keepdim=True) + 1e-5)])))(
                 x[0].double()),
             strided=True)

    m, n = 16384, 4096
    case("rmsnorm_decomposed_bf16", f"""graph(%a0: {t('bf16', m, n)}, %a1: {t('bf16', n)}) {{
  %0 = prims::convert_element_type.default(%a0, f32) -> {t('f32', m, n)}
  %1 = aten::pow.Tensor_Scalar(%0, 2) -> {t('f32', m, n)}
  %2 = aten::mean.dim(%1, [-1], true) -> {t('f32', m, 1)}
  %3 = aten::add.Tensor(%2, 1e-06) -> {t('f32', m, 1)}
  %4 = aten::rsqrt.default(%3) -> {t('f32', m, 1)}
  %5 = aten::mul.Tensor(%0, %4) -> {t('f32', m, n)}
  %6 = prims::convert_element_type.default(%5, bf16) -> {t('bf16', m, n)}
  %7 = aten::mul.Tensor(%6, %a1) -> {t('bf16', m, n)}
  return (%7)
}}""", lambda m=m, n=n: [randn("bf16", m, n)(), randn("bf16", n)()],
         lambda x, m=m, n=n: {"7#0": (x[0].double() * torch.rsqrt(x[0].double().pow(2).mean(-1, keepdim=True) + 1e-6))
                    .to(torch.bfloat16).double() * x[1].double()})

    m, n = 8192, 2048
    case("fused_rms_norm_f32", f"""graph(%a0: {t('f32', m, n)}, %a1: {t('f32', n)}) {{
  %0 = aten::_fused_rms_norm.default(%a0, [{n}], %a1, 1e-05) -> ({t('f32', m, n)}, {t('f32', m, 1)})
  return (%0#0, %0#1)
}}""", lambda m=m, n=n: [randn("f32", m, n)(), randn("f32", n)()],
         lambda x, m=m, n=n: {"0#0": x[0].double() * torch.rsqrt(x[0].double().pow(2).mean(-1, keepdim=True) + 1e-5) * x[1].double(),
                    "0#1": torch.rsqrt(x[0].double().pow(2).mean(-1, keepdim=True) + 1e-5)})

    m, n = 65536, 512
    case("sum_squares_f32", f"""graph(%a0: {t('f32', m, n)}) {{
  %0 = aten::mul.Tensor(%a0, %a0) -> {t('f32', m, n)}
  %1 = aten::sum.dim_IntList(%0, [-1]) -> f32[{m}]{{1}}@cuda
  return (%1)
}}""", lambda m=m, n=n: [randn("f32", m, n)()], lambda x, m=m, n=n: {"1#0": (x[0].double() ** 2).sum(-1)})

    m, n = 32768, 1024
    case("amax_f16", f"""graph(%a0: {t('f16', m, n)}) {{
  %0 = aten::amax.default(%a0, [1], true) -> {t('f16', m, 1)}
  return (%0)
}}""", lambda m=m, n=n: [randn("f16", m, n)()], lambda x, m=m, n=n: {"0#0": x[0].double().amax(1, keepdim=True)})

    m, n = 16384, 1024
    case("var_mean_f32", f"""graph(%a0: {t('f32', m, n)}) {{
  %0 = aten::var_mean.correction(%a0, [-1], correction=1, keepdim=true) -> ({t('f32', m, 1)}, {t('f32', m, 1)})
  return (%0#0, %0#1)
}}""", lambda m=m, n=n: [randn("f32", m, n)()],
         lambda x, m=m, n=n: {"0#0": x[0].double().var(-1, keepdim=True), "0#1": x[0].double().mean(-1, keepdim=True)})

    case("mean_2d_f32", f"""graph(%a0: {t('f32', 256, 64, 64)}) {{
  %0 = aten::mean.dim(%a0, [-2, -1], true) -> {t('f32', 256, 1, 1)}
  return (%0)
}}""", lambda m=m, n=n: [randn("f32", 256, 64, 64)()], lambda x, m=m, n=n: {"0#0": x[0].double().mean((-2, -1), keepdim=True)},
         strided=True)

    m, n = 1048576, 8
    case("sum_rows8_f32", f"""graph(%a0: {t('f32', m, n)}) {{
  %0 = aten::sum.dim_IntList(%a0, [1], true) -> {t('f32', m, 1)}
  return (%0)
}}""", lambda m=m, n=n: [randn("f32", m, n)()], lambda x, m=m, n=n: {"0#0": x[0].double().sum(1, keepdim=True)})

    m, n = 32768, 1024
    def softmax_pair(dtype, log, m, n):
        def make():
            x = torch.randn(m, n, device="cuda")
            y = F.log_softmax(x, -1) if log else F.softmax(x, -1)
            return [torch.randn(m, n, device="cuda").to(dt[dtype]), y.to(dt[dtype])]
        return make
    case("softmax_backward_bf16", f"""graph(%a0: {t('bf16', m, n)}, %a1: {t('bf16', m, n)}) {{
  %0 = aten::_softmax_backward_data.default(%a0, %a1, -1, bf16) -> {t('bf16', m, n)}
  return (%0)
}}""", softmax_pair("bf16", False, m, n),
         lambda x, m=m, n=n: {"0#0": x[1].double() * (x[0].double() - (x[0].double() * x[1].double()).sum(-1, keepdim=True))})
    # BERT's attention backward under bf16 autocast (192 heads x 512 queries, rows of 512): the
    # f32 probabilities' bf16 cast for the dV matmul is a second output of the softmax-backward
    # kernel (casts_before_views.h, row fusion's siblings). Inputs: f32 probabilities, bf16 dP.
    ma, na = 192 * 512, 512
    def attention_backward_inputs(m=ma, n=na):
        return [F.softmax(torch.randn(m, n, device="cuda"), -1),
                torch.randn(m, n, device="cuda").to(torch.bfloat16)]
    def attention_backward_reference(x):
        p, g = x[0].double(), x[1].double()
        return {"3#0": p, "2#0": p * (g - (g * p).sum(-1, keepdim=True))}
    case("softmax_backward_probs_cast_bert", f"""graph(%a0: {t('f32', ma, na)}, %a1: {t('bf16', ma, na)}) {{
  %0 = aten::_to_copy.default(%a1, dtype=f32) -> {t('f32', ma, na)}
  %1 = aten::_softmax_backward_data.default(%0, %a0, -1, f32) -> {t('f32', ma, na)}
  %2 = aten::_to_copy.default(%1, dtype=bf16) -> {t('bf16', ma, na)}
  %3 = aten::_to_copy.default(%a0, dtype=bf16) -> {t('bf16', ma, na)}
  return (%3, %2)
}}""", attention_backward_inputs, attention_backward_reference, strided=True)
    case("log_softmax_backward_f32", f"""graph(%a0: {t('f32', m, n)}, %a1: {t('f32', m, n)}) {{
  %0 = aten::_log_softmax_backward_data.default(%a0, %a1, -1, f32) -> {t('f32', m, n)}
  return (%0)
}}""", softmax_pair("f32", True, m, n),
         lambda x, m=m, n=n: {"0#0": x[0].double() - torch.exp(x[1].double()) * x[0].double().sum(-1, keepdim=True)})
    m, n = 1024, 50257
    case("log_softmax_backward_vocab_f32", f"""graph(%a0: {t('f32', m, n)}, %a1: {t('f32', m, n)}) {{
  %0 = aten::_log_softmax_backward_data.default(%a0, %a1, 1, f32) -> {t('f32', m, n)}
  return (%0)
}}""", softmax_pair("f32", True, m, n),
         lambda x: {"0#0": x[0].double() - torch.exp(x[1].double()) * x[0].double().sum(-1, keepdim=True)})

    # Cross-entropy's loss rows as the LMs run them at batch 16 x seq 512 (8192 rows; BERT's
    # vocabulary 30522, GPT-2's 50257), in the form the daemon's passes leave them: log_softmax
    # decomposed into x - logsumexp(x) (client/tccd/decompositions.py), the forward's target
    # picked in the logsumexp's row kernel (nll_loss_forward_to_rows.h), the backward's one-hot
    # gradient as pointwise ops (nll_loss_backward_to_pointwise.h); the class index arange(C)
    # is computed in the kernel (the manifest's input -1: an unread operand). Rows with
    # numerics to check: an ignored target (-100), a row of -inf (lse -inf, picked NaN), masked
    # (-inf) columns, a +inf logit (lse +inf).
    def loss_inputs(m, n, dtype="bf16"):
        def make():
            x = torch.randn(m, n, device="cuda") * 4.0
            x[1, :] = float("-inf")
            x[2, ::3] = float("-inf")
            x[3, 17] = float("inf")
            t = torch.randint(0, n, (m, 1), device="cuda")
            t[5::20] = -100
            t[2] = 3  # a masked (-inf) class: picked -inf
            return [x.to(dt[dtype]), t]
        return make

    def loss_forward_ref(x):
        logits, t = x[0].double(), x[1]
        lse = torch.logsumexp(logits, 1, keepdim=True)
        hit = (t >= 0) & (t < logits.shape[1])
        picked = torch.where(hit, logits.gather(1, t.clamp(0, logits.shape[1] - 1)) - lse, torch.zeros_like(lse))
        return lse, picked

    def with_index_input(make, n):
        # The class index read from memory (an i64 [C] input, as main's loss rows read it).
        return lambda: make() + [torch.arange(n, device="cuda")]

    def numbered(header, lines, outputs):
        # Graph text from lines "name = op -> type" (names %x, %lse, ...) numbered %0, %1, ...
        # in order (the parser wants nodes numbered from %0), outputs by name.
        names = {}
        body = []
        for line in lines:
            lhs, rhs = line.split(" = ", 1)
            for k in sorted(names, key=len, reverse=True):
                rhs = rhs.replace(k, names[k])
            names[lhs] = f"%{len(names)}"
            body.append(f"  {names[lhs]} = {rhs}")
        refs = ", ".join(names[o] for o in outputs)
        return f"{header} {{\n" + "\n".join(body) + f"\n  return ({refs})\n}}", [names[o][1:] + "#0" for o in outputs]

    def loss_forward_case(name, m, n, dtype="bf16", index_input=False):
        f = t("f32", m, n)
        header = f"graph(%a0: {t(dtype, m, n)}, %a1: {t('i64', m, 1)}" + (f", %a2: {t('i64', n)})" if index_input else ")")
        # f32 logits: a copy stands in for the cast (sibling reductions of a graph input are two
        # kernels; of a value a kernel produces, one).
        lines = [f"%x = aten::{'clone.default(%a0)' if dtype == 'f32' else '_to_copy.default(%a0, dtype=f32)'} -> {f}"]
        x = "%x"
        lines.append(f"%lse = aten::logsumexp.default({x}, [1], true) -> {t('f32', m, 1)}")
        if not index_input:
            lines.append(f"%cls = aten::arange.default({n}, dtype=i64, layout=layout(0), device=device(cuda), pin_memory=false) -> {t('i64', n)}")
        cls = "%a2" if index_input else "%cls"
        lines += [f"%other = aten::ne.Tensor({cls}, %a1) -> {t('b8', m, n)}",
                  f"%masked = aten::masked_fill.Scalar({x}, %other, 0.0) -> {f}",
                  f"%sum = aten::sum.dim_IntList(%masked, [1], true) -> {t('f32', m, 1)}",
                  f"%below = aten::lt.Scalar(%a1, 0) -> {t('b8', m, 1)}",
                  f"%above = aten::ge.Scalar(%a1, {n}) -> {t('b8', m, 1)}",
                  f"%miss = aten::logical_or.default(%below, %above) -> {t('b8', m, 1)}",
                  f"%shift = aten::masked_fill.Scalar(%lse, %miss, 0.0) -> {t('f32', m, 1)}",
                  f"%picked = aten::sub.Tensor(%sum, %shift) -> {t('f32', m, 1)}"]
        g, refs = numbered(header, lines, ["%lse", "%picked"])
        make = loss_inputs(m, n, dtype)
        case(name, g, with_index_input(make, n) if index_input else make,
             lambda x, refs=refs: dict(zip(refs, loss_forward_ref(x))), tol=(2e-5, 2e-5))

    # The backward: d loss / d logits = (softmax(x) - one_hot(t)) * g for a mean loss' g =
    # grad / total, through log_softmax's backward of the recomputed log-probabilities x - lse.
    def loss_backward_case(name, m, n, dtype="bf16", index_input=False):
        f = t("f32", m, n)
        header = (f"graph(%a0: {t(dtype, m, n)}, %a1: {t('f32', m, 1)}, %a2: {t('i64', m, 1)}, %a3: f32[]{{}}@cuda"
                  + (f", %a4: {t('i64', n)})" if index_input else ")"))
        lines = [f"%x = aten::_to_copy.default(%a0, dtype=f32) -> {f}",
                 f"%logp = aten::sub.Tensor(%x, %a1) -> {f}"]
        if not index_input:
            lines.append(f"%cls = aten::arange.default({n}, dtype=i64, layout=layout(0), device=device(cuda), pin_memory=false) -> {t('i64', n)}")
        cls = "%a4" if index_input else "%cls"
        lines += [f"%hit = aten::eq.Tensor({cls}, %a2) -> {t('b8', m, n)}",
                  f"%g = aten::mul.Tensor(%hit, %a3) -> {f}",
                  f"%ng = aten::neg.default(%g) -> {f}",
                  f"%gin = aten::_log_softmax_backward_data.default(%ng, %logp, 1, f32) -> {f}",
                  f"%out = aten::_to_copy.default(%gin, dtype={dtype}) -> {t(dtype, m, n)}"]
        g, refs = numbered(header, lines, ["%out"])

        def make(m=m, n=n):
            logits, tg = loss_inputs(m, n, dtype)()
            lse = torch.logsumexp(logits.float(), 1, keepdim=True)
            return [logits, lse, tg, torch.tensor(1.0 / m, device="cuda")]

        def ref(x):
            logits, lse, tg, gr = x[0].double(), x[1].double(), x[2], x[3].double()
            hit = torch.zeros_like(logits).scatter_(1, tg.clamp(0, logits.shape[1] - 1), 1.0) * ((tg >= 0) & (tg < logits.shape[1]))
            gin = -hit * gr
            return {refs[0]: gin - torch.exp(logits - lse) * gin.sum(1, keepdim=True)}

        case(name, g, with_index_input(make, n) if index_input else make, ref)

    for vocab, label in [(30522, "bert"), (50257, "gpt2")]:
        loss_forward_case(f"loss_forward_{label}_8192", 8192, vocab)
        loss_backward_case(f"loss_backward_{label}_8192", 8192, vocab)
        loss_forward_case(f"loss_forward_{label}_8192_index_read", 8192, vocab, index_input=True)
        loss_backward_case(f"loss_backward_{label}_8192_index_read", 8192, vocab, index_input=True)
    # Vocabularies the 16-byte vector divides (Llama's 32000, T5's 32128): looped, not shifted,
    # since the twelfth session (TCCD_ALIGNED_ROW_LOOPS=0 at generation: persistent).
    loss_forward_case("loss_forward_llama_8192", 8192, 32000)
    loss_backward_case("loss_backward_llama_8192", 8192, 32000)
    loss_backward_case("loss_backward_t5_4096", 4096, 32128)
    loss_forward_case("loss_forward_gpt2_f32_1024", 1024, 50257, dtype="f32")
    # Softmax over BERT's vocabulary stays persistent (its looped form streams twice); the
    # 1024 x 50257 one above streams twice where it streamed three times (online max + sum).

    # A row kernel writing a zero-padded layout (padded_row_stores.h): the logits gradient of
    # BERT (30522, persistent rows) and GPT-2 (50257, looped shifted rows) stored at the padded
    # row stride of the aligned matmul that reads it, its tail columns written as zeros (the
    # outputs start as NaN, so an unwritten tail fails). Both entries.
    def padded_lsm_backward_case(name, m, n, pad):
        g = f"""graph(%a0: {t('bf16', m, n)}, %a1: {t('bf16', m, n)}) {{
  %0 = aten::_log_softmax_backward_data.default(%a0, %a1, 1, bf16) -> {t('bf16', m, n)}
  %1 = aten::constant_pad_nd.default(%0, [0, {pad}], 0) -> {t('bf16', m, n + pad)}
  return (%1)
}}"""
        case(name, g, softmax_pair("bf16", True, m, n),
             lambda x, pad=pad: {"1#0": F.pad(x[0].double() - torch.exp(x[1].double()) * x[0].double().sum(-1, keepdim=True),
                                              (0, pad))},
             strided=True)

    padded_lsm_backward_case("log_softmax_backward_padded_bert", 1024, 30522, 6)
    padded_lsm_backward_case("log_softmax_backward_padded_gpt2", 1024, 50257, 7)

    # Column reductions (over the leading dims): bias gradients, with a pointwise prologue.
    def colsum_case(name, dtype, m, n, prologue=False, mean=False, strided=False):
        op = "aten::mean.dim" if mean else "aten::sum.dim_IntList"
        src = "%a0"
        pre = ""
        if prologue:
            pre = f"  %p = aten::mul.Tensor(%a0, %a0) -> {t(dtype, m, n)}\n"
            src = "%p"
        g = f"""graph(%a0: {t(dtype, m, n)}) {{
{pre}  %r = {op}({src}, [0], true) -> {t(dtype, 1, n)}
  return (%r)
}}""".replace("%p", "%0").replace("%r", "%1" if prologue else "%0")
        out = "1#0" if prologue else "0#0"
        def ref(x, prologue=prologue, mean=mean):
            v = x[0].double() ** 2 if prologue else x[0].double()
            return {out: v.mean(0, keepdim=True) if mean else v.sum(0, keepdim=True)}
        case(name, g, lambda m=m, n=n: [randn(dtype, m, n)()], ref, strided=strided,
             tol=(2e-4, 2e-4) if dtype == "f32" else None)

    colsum_case("colsum_bf16_8192x768", "bf16", 8192, 768)
    colsum_case("colsum_f32_256x4096", "f32", 256, 4096, strided=True)
    colsum_case("colsum_f32_32768x1024_sq", "f32", 32768, 1024, prologue=True)
    colsum_case("colmean_bf16_32768x4096", "bf16", 32768, 4096, mean=True)

    # Layer-norm backward, split as the pipeline splits it: grad_input (rows), then grad_weight
    # and grad_bias (columns).
    def lnb_inputs(m, n, dtype, param_dtype=None):
        def make():
            x = torch.randn(m, n, device="cuda")
            mean = x.mean(-1, keepdim=True)
            rstd = torch.rsqrt(x.var(-1, unbiased=False, keepdim=True) + 1e-5)
            pdt = dt[param_dtype or dtype]
            return [torch.randn(m, n, device="cuda").to(dt[dtype]), x.to(dt[dtype]), mean, rstd,
                    torch.randn(n, device="cuda").to(pdt), torch.randn(n, device="cuda").to(pdt)]
        return make

    def lnb_ref(x, n):
        g, xx, mean, rstd, w = [v.double() for v in x[:5]]
        xhat = (xx - mean) * rstd
        wg = g * w
        dx = rstd * (wg - (wg.sum(-1, keepdim=True) + xhat * (wg * xhat).sum(-1, keepdim=True)) / n)
        return dx, (g * xhat).sum(0), g.sum(0)

    # ConvNeXt's LayerNorm2d backward rows: bf16 g and x over 64 channels, f32 weight.
    ln2d_sig = f"%a0: {t('bf16', 200704, 64)}, %a1: {t('bf16', 200704, 64)}, %a2: {t('f32', 200704, 1)}, %a3: {t('f32', 200704, 1)}, %a4: {t('f32', 64)}, %a5: {t('f32', 64)}"
    case("ln_backward_input_bf16_f32params_64", f"""graph({ln2d_sig}) {{
  %0 = aten::native_layer_norm_backward.default(%a0, %a1, [64], %a2, %a3, %a4, %a5, [true, false, false]) -> ({t('bf16', 200704, 64)}, f32[0]{{1}}@cuda, f32[0]{{1}}@cuda)
  return (%0#0)
}}""", lnb_inputs(200704, 64, "bf16", "f32"), lambda x: {"0#0": lnb_ref(x, 64)[0]})

    for dtype, lm, ln in [("bf16", 16384, 1024), ("f32", 8192, 768)]:  # not m, n: closures above read those
        sig = f"%a0: {t(dtype, lm, ln)}, %a1: {t(dtype, lm, ln)}, %a2: {t('f32', lm, 1)}, %a3: {t('f32', lm, 1)}, %a4: {t(dtype, ln)}, %a5: {t(dtype, ln)}"
        case(f"ln_backward_input_{dtype}", f"""graph({sig}) {{
  %0 = aten::native_layer_norm_backward.default(%a0, %a1, [{ln}], %a2, %a3, %a4, %a5, [true, false, false]) -> ({t(dtype, lm, ln)}, {dtype}[0]{{1}}@cuda, {dtype}[0]{{1}}@cuda)
  return (%0#0)
}}""", lnb_inputs(lm, ln, dtype), lambda x, n=ln: {"0#0": lnb_ref(x, n)[0]}, tol=(1e-4, 1e-4) if dtype == "f32" else None)
        case(f"ln_backward_params_{dtype}", f"""graph({sig}) {{
  %0 = aten::native_layer_norm_backward.default(%a0, %a1, [{ln}], %a2, %a3, %a4, %a5, [false, true, true]) -> ({dtype}[0]{{1}}@cuda, {t(dtype, ln)}, {t(dtype, ln)})
  return (%0#1, %0#2)
}}""", lnb_inputs(lm, ln, dtype), lambda x, n=ln: dict(zip(["0#1", "0#2"], lnb_ref(x, n)[1:])),
             tol=(2e-4, 2e-4) if dtype == "f32" else None)


def emit_cases(path):
    # Graph texts only; no GPU needed.
    define_cases()
    with open(path, "w") as f:
        for c in CASES:
            f.write(f"=== {c['name']}\n{c['graph']}\n")
    print(f"{len(CASES)} cases -> {path}")


def run(directory, bench):
    import torch
    define_cases()
    dtypes = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
    lib = ctypes.CDLL(f"{directory}/kernels_cuda.so")
    lib.tccd_cuda_last_error.restype = ctypes.c_char_p
    torch.empty(1, device="cuda")
    assert lib.tccd_cuda_init() == 0, lib.tccd_cuda_last_error()
    manifest = {}
    for line in open(f"{directory}/manifest.txt"):
        name, *fields = line.split()
        kv = dict(f.split("=", 1) for f in fields)
        outs = []
        for o in kv["outputs"].split(";"):
            ref, dtype, sizes, strides = o.split(":")
            ints = lambda s: [int(v) for v in s.split(",")] if s else []
            outs.append((ref, dtypes[dtype], ints(sizes), ints(strides)))
        manifest[name] = dict(shape=[int(v) for v in kv["shape"].split(",")],
                              inputs=[int(v) for v in kv["inputs"].split(",")], outputs=outs,
                              expected=[int(v) for v in kv["expected"].split(",")])
    failures = 0
    rows = []

    def launch(fn, m, ins, outs):
        shape = m["shape"]
        rank = len(shape)
        views = [x.expand(shape) for x in ins]
        strides = [s for v in views for s in v.stride()] + m["expected"][len(ins) * rank:]
        data = (ctypes.c_void_p * (len(ins) + len(outs)))(*[x.data_ptr() for x in ins], *[o.data_ptr() for o in outs])
        st = (ctypes.c_int64 * len(strides))(*strides)
        rc = fn(data, st, ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
        if rc != 0:
            raise RuntimeError(lib.tccd_cuda_last_error().decode())

    def time_ms(f, per_sample=20):
        # Back-to-back launches between the events, so the GPU never waits for the host: the
        # per-launch host work (ctypes arrays here, dispatch in eager) is not timed, only the
        # kernels. One launch per event pair would add that host time to small kernels.
        for _ in range(3):
            f()
        times = []
        for _ in range(15):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            for _ in range(per_sample):
                f()
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b) / per_sample)
        return sorted(times)[len(times) // 2]

    for c in CASES:
        m = manifest[c["name"]]
        fn = getattr(lib, c["name"])
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        torch.manual_seed(0)
        graph_inputs = c["make"]()
        expect = c["ref"](graph_inputs)
        variants = [("contig", graph_inputs)]
        if c["strided"]:
            # Same values, transposed storage: the reduced dim is not unit-stride.
            variants.append(("strided", [x.transpose(-1, -2).contiguous().transpose(-1, -2) if x.dim() >= 2 else x
                                         for x in graph_inputs]))
        arange = lambda: torch.arange(m["shape"][-1], device="cuda")  # an unread class index (-1)
        for label, xs in variants:
            ins = [xs[i] if i >= 0 else arange() for i in m["inputs"]]
            outs = [torch.empty_strided(sz, st, dtype=d, device="cuda") for _, d, sz, st in m["outputs"]]
            ins = [xs[i] for i in m["inputs"]]
            # NaN first: an element the kernel should write and does not fails the NaN check.
            outs = [torch.empty_strided(sz, st, dtype=d, device="cuda").fill_(float("nan")) for _, d, sz, st in m["outputs"]]
            try:
                launch(fn, m, ins, outs)
                torch.cuda.synchronize()
                worst, ok = 0.0, True
                for (ref, d, _, _), o in zip(m["outputs"], outs):
                    want = expect[ref]
                    rtol, atol = c["tol"] or {torch.float32: (2e-5, 2e-5), torch.float16: (2e-3, 2e-3),
                                              torch.bfloat16: (1.6e-2, 1.6e-2)}[d]
                    got = o.double()
                    # Excess over the tolerance (one rounding to the output dtype is allowed).
                    excess = ((got - want).abs() - (atol + rtol * want.abs())).nan_to_num(0.0)
                    worst = max(worst, excess.max().item())
                    ok = ok and excess.max().item() <= 0 and torch.equal(got.isnan(), want.isnan())
                print(f"{'PASS' if ok else 'FAIL'} {c['name']} [{label}] worst excess over tolerance {worst:.3g}", flush=True)
                failures += 0 if ok else 1
            except Exception as e:
                print(f"FAIL {c['name']} [{label}]: {e}", flush=True)
                failures += 1
        if bench:
            ins = [graph_inputs[i] if i >= 0 else arange() for i in m["inputs"]]
            outs = [torch.empty_strided(sz, st, dtype=d, device="cuda") for _, d, sz, st in m["outputs"]]
            nbytes = sum(x.numel() * x.element_size() for x in ins) + sum(o.numel() * o.element_size() for o in outs)
            ms = time_ms(lambda: launch(fn, m, ins, outs))
            rows.append((c["name"], m["shape"], nbytes, ms))
            print(f"BENCH {c['name']} shape={m['shape']} {nbytes / 1e6:.1f} MB {ms * 1e3:.1f} us "
                  f"{nbytes / ms / 1e6:.0f} GB/s", flush=True)
    if bench:
        x = torch.empty(1 << 28, dtype=torch.float32, device="cuda")
        y = torch.empty_like(x)
        ms = time_ms(lambda: y.copy_(x))
        print(f"BENCH memcpy_dtod 1 GiB -> {2 * x.numel() * 4 / ms / 1e6:.0f} GB/s (read + write)")
        F = torch.nn.functional
        for name, shape, dtype, f in [
            ("eager softmax f32", (32768, 1024), torch.float32, lambda a: F.softmax(a, -1)),
            ("eager softmax bf16", (32768, 1024), torch.bfloat16, lambda a: F.softmax(a, -1)),
            ("eager layer_norm bf16", (16384, 1024), torch.bfloat16, lambda a: F.layer_norm(a, [1024])),
            ("eager sum f32", (65536, 512), torch.float32, lambda a: a.sum(-1)),
            ("eager colsum bf16", (8192, 768), torch.bfloat16, lambda a: a.sum(0, keepdim=True)),
            ("eager colsum f32", (256, 4096), torch.float32, lambda a: a.sum(0, keepdim=True)),
            ("eager colsum-sq f32", (32768, 1024), torch.float32, lambda a: (a * a).sum(0, keepdim=True)),
            ("eager colmean bf16", (32768, 4096), torch.bfloat16, lambda a: a.mean(0, keepdim=True)),
        ]:
            a = torch.randn(shape, device="cuda").to(dtype)
            out = f(a)
            ms = time_ms(lambda: f(a))
            nbytes = a.numel() * a.element_size() + out.numel() * out.element_size()
            print(f"BENCH {name} shape={list(shape)} {nbytes / ms / 1e6:.0f} GB/s")
        for n in (30522, 50257):
            # Eager cross-entropy on bf16 logits as the LMs run it (cast to f32, log_softmax,
            # nll): forward, and the backward kernels given the saved log-probabilities.
            x = torch.randn(8192, n, device="cuda").to(torch.bfloat16)
            tg = torch.randint(0, n, (8192,), device="cuda")
            ms = time_ms(lambda: F.nll_loss(F.log_softmax(x.float(), -1), tg))
            print(f"BENCH eager cross_entropy forward bf16->f32 [8192, {n}] {ms * 1e3:.1f} us")
            lp = F.log_softmax(x.float(), -1)
            go = torch.zeros_like(lp)
            ms = time_ms(lambda: torch.ops.aten._log_softmax_backward_data(
                torch.ops.aten.nll_loss_backward(torch.tensor(1.0, device="cuda"), lp, tg, None, 1, -100,
                                                 torch.tensor(8192.0, device="cuda")), lp, 1, torch.float32).to(torch.bfloat16))
            print(f"BENCH eager cross_entropy backward [8192, {n}] {ms * 1e3:.1f} us")
            del x, lp, go
        for dtype, m, n in [(torch.bfloat16, 16384, 1024), (torch.float32, 8192, 768)]:
            g, x = torch.randn(m, n, device="cuda", dtype=dtype), torch.randn(m, n, device="cuda", dtype=dtype)
            w, b = torch.randn(n, device="cuda", dtype=dtype), torch.randn(n, device="cuda", dtype=dtype)
            _, mean, rstd = torch.ops.aten.native_layer_norm(x, [n], w, b, 1e-5)
            f = lambda: torch.ops.aten.native_layer_norm_backward(g, x, [n], mean, rstd, w, b, [True, True, True])
            ms = time_ms(f)
            nbytes = 3 * g.numel() * g.element_size() + 2 * mean.numel() * 4 + 3 * n * g.element_size()
            print(f"BENCH eager layer_norm_backward {dtype} shape={[m, n]} {ms * 1e3:.1f} us {nbytes / ms / 1e6:.0f} GB/s (grad_in + grad_w + grad_b)")
    print("PASS" if failures == 0 else f"FAIL ({failures} failures)")
    return failures


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--emit-cases":
        emit_cases(sys.argv[2])
    elif len(sys.argv) >= 3 and sys.argv[1] == "--run":
        sys.exit(1 if run(sys.argv[2], "--bench" in sys.argv) else 0)
    else:
        print(__doc__)
        sys.exit(2)
