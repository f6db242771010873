/* The native plan runtime's C API (tccd_plan_runtime.so, ArtifactKind PLAN_RUNTIME).
 *
 * One fixed shared object, the same bytes for every graph, that runs a whole plan in one call:
 * kernels and segments of the graph's own .so, aliases, allocations, releases, and extern ATen
 * ops through PyTorch's stable C ABI (the aoti_torch_* shim), resolved from the libtorch the
 * calling process has already loaded. The client (client/tccd/native_plan.py) drives it with
 * ctypes; nothing here includes a torch header (the ABI is declared in tccd_plan_torch_abi.h and
 * checked against the installed torch wheel's headers by tests/python/test_native_plan_abi.py).
 *
 * Threading: tccd_plan_runtime_init is serialised internally; a loaded plan may be run from
 * several threads at once (each call has its own environment). Errors: functions return 0 or
 * -1; tccd_plan_last_error() then holds a message for the calling thread.
 */
#ifndef TCCD_PLAN_RUNTIME_H_
#define TCCD_PLAN_RUNTIME_H_

#include <stdint.h>

/* -2: tccd_plan_bind_extern takes return kinds; tccd_plan_bind_out_shim.
 * -3: symbolic plans (descriptor format 2): tccd_plan_run_symbolic, TCCD_ARG_SYM*, the
 *     expression table's texts (tccd_plan_expr_text) for binding SymInt arguments;
 *     tccd_plan_bind_arange; TCCD_SHIM_ADD_TENSOR.
 * -4: tccd_plan_bind_typed_shim (convolution, convolution_backward and copy_ through typed C
 *     shims); tccd_plan_py_init, tccd_plan_run_py (one call per plan from Python);
 *     tccd_plan_profile_steps; tccd_plan_bind_view. Optional, looked up by name (no version
 *     bump): tccd_plan_profile_counts, tccd_plan_enable_arena, tccd_plan_profile_native,
 *     tccd_plan_enable_symbolic_segments, tccd_plan_cpu_blas, tccd_plan_cpu_blas_calls,
 *     tccd_plan_cpu_column_sums, tccd_plan_cpu_column_sum_calls. */
#define TCCD_PLAN_RUNTIME_ABI "tccd-plan-runtime-4"

typedef struct TccdPlan TccdPlan;

/* Runs one extern step in Python: `refs` are new tensor handles (the callee takes them) of the
 * values bound with tccd_plan_bind_python_extern; the callee stores one new handle (or NULL)
 * per step output in `outs`. Returns 0, or nonzero after recording its own error. */
typedef int (*TccdPythonStep)(int64_t step, int64_t n_refs, void** refs, int64_t n_outs,
                              void** outs);
/* Makes the device's primary CUDA context current on this thread (a launch reported error 201,
 * TCCD_RT_ERROR_INVALID_CONTEXT). Returns 0 on success. */
typedef int (*TccdMakeContextCurrent)(int32_t device_index);

const char* tccd_plan_runtime_abi(void);
const char* tccd_plan_last_error(void);
/* Resolves the torch ABI from the already loaded libraries at these paths (libtorch_cuda may be
 * NULL on a CPU-only process). Idempotent. */
int tccd_plan_runtime_init(const char* libtorch_cpu_path, const char* libtorch_cuda_path);
/* Parses a descriptor and binds its kernel symbols in the given dlopen handles (by artifact name).
 */
/* Direct BLAS for CPU float32 / float64 mm and addmm steps (optional export): resolves the gemm
 * functions named (Fortran ABI, e.g. "sgemm_", "dgemm_"; NULL: none) in libtorch_cpu, checks
 * each with a small product (tccd_plan_blas.h) and uses those that pass, for every plan of the
 * process, in place of the steps' C shims wherever the operands' layouts are ones BLAS takes.
 * Off until called; call after tccd_plan_runtime_init. Returns 0, or -1 when a named function is
 * missing or fails the check (tccd_plan_last_error says which; the other may still be on). */
int tccd_plan_cpu_blas(const char* sgemm_name, const char* dgemm_name);
/* How many steps ran as direct BLAS calls in this process (optional export; for tests). */
int64_t tccd_plan_cpu_blas_calls(void);
/* Column sums (optional export): on (1), the CPU plans' aten::sum.dim_IntList steps over dim 0 of
 * a 2-D float32/float64 tensor with unit-stride columns (bias gradients) are computed by the
 * runtime (tccd_plan_column_sum.h) instead of the dispatcher, for every plan of the process.
 * Off (0) until called. */
void tccd_plan_cpu_column_sums(int on);
/* How many steps ran as the runtime's column sums in this process (optional export). */
int64_t tccd_plan_cpu_column_sum_calls(void);
TccdPlan* tccd_plan_load(const void* bytes, int64_t size, int64_t n_artifacts, const char** names,
                         void** handles);
void tccd_plan_free(TccdPlan* plan);
int tccd_plan_set_callbacks(TccdPlan* plan, TccdPythonStep python_step,
                            TccdMakeContextCurrent make_current);
/* Extern step `step` runs through the dispatcher with this complete argument list (TCCD_ARG_*;
 * list and string arguments point into `pool`) and these returns (TCCD_RET_*); `target`
 * ("aten::clone.default"), when not NULL, replaces the step's own op (a load-time rewrite). */
int tccd_plan_bind_extern(TccdPlan* plan, int64_t step, const char* target, int64_t n_args,
                          const int64_t* kinds, const int64_t* payloads, int64_t n_returns,
                          const int64_t* ret_kinds, int64_t n_pool, const int64_t* pool);
/* The plan takes `handle` (a tensor no step writes) as constant *index (TCCD_ARG_CONSTANT). */
int tccd_plan_add_constant(TccdPlan* plan, void* handle, int64_t* index);
/* Extern step `step` (addmm, baddbmm: Scalar arguments) runs through AOTInductor's C shim
 * `shim` (TCCD_SHIM_*) with tensor arguments `ids[3]` into its one output, allocated as the
 * plan declares it. */
int tccd_plan_bind_out_shim(TccdPlan* plan, int64_t step, int64_t shim, const int64_t* ids,
                            double beta, double alpha);
/* Extern step `step` (aten::convolution, aten::convolution_backward, aten::copy_) runs through a
 * typed C shim `shim` (TCCD_SHIM_CONVOLUTION*, TCCD_SHIM_COPY): `ids[3]` are its tensor
 * arguments (a forward's bias -1 for None), `words` its int lists, flags and output mask
 * (tccd_plan_format.h). */
int tccd_plan_bind_typed_shim(TccdPlan* plan, int64_t step, int64_t shim, const int64_t* ids,
                              int64_t n_words, const int64_t* words);
/* Extern step `step` (aten::arange with SymInt bounds) is computed by the runtime: `words` is
 * (is_expr, v) for start, end, step, each an int or an expression index. Integral outputs. */
int tccd_plan_bind_arange(TccdPlan* plan, int64_t step, const int64_t* words);
/* Extern step `step`, bound to the dispatcher, is a view op of value `base` (view, t, transpose,
 * permute, expand, select, slice, ...): where the base has the plan's declared sizes and strides
 * at run time, the runtime makes the output from the declared metadata (as an alias step), no
 * dispatcher call; otherwise the dispatcher runs the op. */
int tccd_plan_bind_view(TccdPlan* plan, int64_t step, int64_t base);
/* Extern step `step` runs through the Python callback, which receives these values. */
int tccd_plan_bind_python_extern(TccdPlan* plan, int64_t step, int64_t n_refs, const int64_t* ids);
/* The per-call arena: the values `ids` (those the caller found read only by steps that keep no
 * view of their inputs: kernels, segments, shim calls that return new tensors; no plan output)
 * that the runtime allocates itself (kernel and segment outputs not written into a graph input,
 * out shims' outputs), and every segment's workspace, are packed by lifetime (first fit in
 * definition order, 256-byte aligned; tccd_plan_arena.h) into one buffer per dtype and device
 * type, allocated once per call through PyTorch's allocator at its first use and dropped when
 * the call ends; each such value is a view of it, so a call makes a few allocations instead of
 * one per value and workspace. Other ids are ignored. Call once, after binding, before the first
 * run; a symbolic plan gets none (0). Returns the arena's bytes per call, or -1 (error). The
 * arena is held for the whole call: its bytes are the packed peak of those values, whatever
 * else the call frees meanwhile. */
int64_t tccd_plan_enable_arena(TccdPlan* plan, int64_t n, const int64_t* ids);
/* Symbolic segments (optional export): of the value ids given (the client's candidates: values
 * read only by sized kernels, gemms and view steps bound with tccd_plan_bind_view, never a plan
 * output), those a symbolic plan's sized kernels and gemms define, and views of them, never
 * become tensors: each call packs them by lifetime into one workspace at its sizes and passes
 * raw pointers; their view steps do nothing. Call after every binding. Returns how many values
 * were taken (0: the plan runs as before), or -1 (tccd_plan_last_error). */
int64_t tccd_plan_enable_symbolic_segments(TccdPlan* plan, int64_t n, const int64_t* ids);
/* The same (optional export), with every segment in one workspace per call: one allocation
 * and release per call instead of one per segment; roots of segments that do not overlap share
 * its bytes, which it holds from the first root's definition to the last root's last read. */
int64_t tccd_plan_enable_symbolic_segments_one_workspace(TccdPlan* plan, int64_t n,
                                                         const int64_t* ids);
int64_t tccd_plan_num_inputs(const TccdPlan* plan);
/* Symbols s0 .. s(n - 1) of a symbolic plan (0 for a static one), and its expressions: their
 * canonical texts (the plan's sym_expr texts), by the index TCCD_ARG_SYM payloads name. */
int64_t tccd_plan_num_symbols(const TccdPlan* plan);
int64_t tccd_plan_num_exprs(const TccdPlan* plan);
const char* tccd_plan_expr_text(const TccdPlan* plan, int64_t k);
/* Plan outputs that are value refs (the others are constants the client fills in). */
int64_t tccd_plan_num_ref_outputs(const TccdPlan* plan);
/* Extern steps bound to neither the dispatcher nor Python (an unbound plan must not run). */
int64_t tccd_plan_num_unbound(const TccdPlan* plan);
/* Runs the plan. Takes ownership of the `inputs` handles (all of them, even on failure); stores
 * one new handle per ref output in `outputs`. */
int tccd_plan_run(TccdPlan* plan, void** inputs, int64_t n_inputs, void** outputs,
                  int64_t n_outputs);
/* With TCCD_PLAN_PROFILE set when the plan was loaded: the number of runs profiled (every run
 * but the first, which pays one-time set-up), and per class of
 * step (kernel, segment, alias, extern via the dispatcher, extern via an out shim, extern in
 * Python, releases, entry/exit) the wall nanoseconds and steps summed over them, into arrays of
 * n; returns the number of classes (0: profiling is off for this plan). */
int64_t tccd_plan_profile(const TccdPlan* plan, int64_t* calls, int64_t* ns, int64_t* steps,
                          int64_t n);
/* With TCCD_PLAN_PROFILE: every step's wall nanoseconds summed over the profiled runs, by step
 * index, into ns[n]; returns the number of steps (0: profiling is off). */
int64_t tccd_plan_profile_steps(const TccdPlan* plan, int64_t* ns, int64_t n);
/* With TCCD_PLAN_PROFILE: every step's wall nanoseconds in the plan's first run (its releases
 * included), by step index, into ns[n]; returns the number of steps (0: profiling is off). An
 * optional symbol: clients look it up before calling it. */
int64_t tccd_plan_profile_first_steps(const TccdPlan* plan, int64_t* ns, int64_t n);
/* With TCCD_PLAN_PROFILE: counts summed over the profiled runs into counts[n], in this order:
 * values allocated through PyTorch's allocator, inputs copied into their declared layout,
 * outputs copied into a mutated input, workspace allocations, current-stream lookups, values
 * and workspaces carved from the call's arena; returns the number of counters (0: profiling is
 * off). */
int64_t tccd_plan_profile_counts(const TccdPlan* plan, int64_t* counts, int64_t n);
/* With TCCD_PLAN_PROFILE: the native steps by kind, in this order: CUDA kernels with static
 * sizes, CUDA kernels with run-time sizes, gemms with run-time sizes, CUDA segments, CPU kernels;
 * for each four words summed over the profiled runs: wall nanoseconds, nanoseconds in the launch
 * (the kernels .so's entry with the driver or cuBLASLt; a CPU kernel's body), nanoseconds in
 * allocations through PyTorch's allocator, steps. Into out[n] kind by kind; returns the number
 * of words (0: profiling is off). An optional symbol: clients look it up before calling it. */
int64_t tccd_plan_profile_native(const TccdPlan* plan, int64_t* out, int64_t n);
/* tccd_plan_run for a symbolic plan: `symbols[i]` is the value of si where no input size or
 * stride carries it (a SymInt graph input), INT64_MIN where the caller has none; the inputs'
 * sizes and strides bind the others. A symbol an expression needs and nothing binds fails the
 * call. */
int tccd_plan_run_symbolic(TccdPlan* plan, void** inputs, int64_t n_inputs, void** outputs,
                           int64_t n_outputs, int64_t n_symbols, const int64_t* symbols);

/* The same from Python in one foreign call (ctypes.PyDLL: the GIL held; the plan runs with it
 * released): `in_list` a list of capsules of owned tensor handles (taken, as by tccd_plan_run),
 * each ref output appended to the list `out_list` as a capsule of a new handle (none on failure).
 * tccd_plan_py_init resolves Python's C API from the calling process first (0 on success). */
int tccd_plan_py_init(void);
int tccd_plan_run_py(TccdPlan* plan, void* in_list, void* out_list, int64_t n_symbols,
                     const int64_t* symbols);

#endif /* TCCD_PLAN_RUNTIME_H_ */
