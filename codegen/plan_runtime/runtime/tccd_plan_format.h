/* The plan descriptor (ArtifactKind PLAN_DESCRIPTOR, "plan.tccdplan"): a graph's v1::Plan as a
 * flat array of little-endian 64-bit words, written by the daemon (plan_descriptor.cc) and read
 * by the native plan runtime (tccd_plan_runtime.c). Plain C: both sides include this header, so
 * the codes below are the single definition of the format.
 *
 * Layout (every field one int64 word; a string is its byte length then its bytes, zero-padded
 * to a multiple of 8):
 *   magic, format version
 *   num_symbols, n_bindings, (input, part, dim, symbol)[n_bindings]
 *   n_exprs; per expression: its canonical text (a string), n_ops, ops[n_ops] (below)
 *   num_inputs, num_values
 *   per value: dtype (c10::ScalarType code, -1 for an absent value), device type (c10 code),
 *              device index, rank, sizes[rank]*, strides[rank]*, storage offset*
 *   num_steps; per step: kind, its fields (below), n_release, release[n_release]
 *     KERNEL:  abi, artifact, symbol, rank, shape[rank]*, n_in, in[n_in], n_out, out[n_out],
 *              into[n_out], layout (TCCD_LAYOUT_*), expected_strides[(n_in + n_out) * rank]
 *              unless the layout is TCCD_LAYOUT_OWN (then none) or TCCD_LAYOUT_OWN_GATHER
 *              (then own[n_in + n_out]); a sized gemm
 *              (TCCD_ABI_CUDA_SYM_GEMM) is a KERNEL step whose shape is its ten sizes
 *     SEGMENT: abi, artifact, symbol, n_in, in[n_in], n_out, out[n_out], into[n_out],
 *              workspace_bytes
 *     into[o]: -1, or the graph input whose buffer output o is written into instead of an
 *              allocation (v1 Step.write_into; an input in another layout than the output's
 *              gets a fresh output, copied into it after the step)
 *     ALIAS:   base, out, storage offset delta (out's declared offset - base's)
 *     EXTERN:  target, n_args, value[n_args], n_kwargs, (name, value)[n_kwargs], n_out, out[n_out]
 *   num_outputs, value[num_outputs]
 * A value is a tag and its payload: NONE; REF id; INT v; FLOAT bits; BOOL v; STRING s;
 * DTYPE c10 code; DEVICE type index; LAYOUT code; MEMORY_FORMAT code; LIST n value[n];
 * SYM expression index (a SymInt computed at each call).
 *
 * Symbolic sizes (graphs compiled with dynamic shapes). A word marked * is a *dim word*: a
 * value >= 0 is that size (sizes, strides and offsets are never negative); -(k + 1) is the value
 * of expression k at this call. Expressions are over the symbols s0 .. s(num_symbols - 1); a
 * binding says where a call's inputs carry a symbol's value: input `input`'s size (part 0) or
 * stride (part 1) at `dim`; a symbol no binding names comes from the caller (a SymInt graph
 * input, tccd_plan_run_symbolic). An expression is a postfix program over a stack of int64
 * (TCCD_EXPR_*), evaluated once per call with Python's semantics (floor division, modulo with
 * the divisor's sign) and overflow checked, as codegen/ir/sym_expr.h's EvalSymExpr. A static
 * plan has no symbols and no expressions, and every dim word is a plain size.
 *
 * Bump TCCD_PLAN_FORMAT_VERSION with any change to this layout: a runtime refuses descriptors
 * of another version (the client then runs the plan in its Python interpreter).
 */
#ifndef TCCD_PLAN_FORMAT_H_
#define TCCD_PLAN_FORMAT_H_

#define TCCD_PLAN_MAGIC 0x4e414c5044434354LL /* "TCCDPLAN" read as a little-endian word */
/* 2: symbols, expressions and dim words (symbolic plans); a kernel's layout word.
 * 3: into[n_out] of kernels and segments (outputs written into graph inputs' buffers).
 * 4: TCCD_LAYOUT_OWN_GATHER (symbolic plans' index kernels). */
#define TCCD_PLAN_FORMAT_VERSION 4

/* Step kinds. */
#define TCCD_STEP_KERNEL 1
#define TCCD_STEP_SEGMENT 2
#define TCCD_STEP_ALIAS 3
#define TCCD_STEP_EXTERN 4

/* Native ABIs (v1 NativeCall.abi / NativeSegment.abi strings). */
#define TCCD_ABI_CPU 1  /* "tccd-cpu-1": void f(void** ptrs, const int64_t* strides) */
#define TCCD_ABI_CUDA 2 /* "tccd-cuda-1": int f(void** ptrs, const int64_t* strides, stream) */
#define TCCD_ABI_CUDA_SEGMENT 3 /* "tccd-cuda-segment-1": int f(void** ptrs, void* ws, stream) */
#define TCCD_ABI_CPU_SYM \
  4 /* "tccd-cpu-sym-1": void f(void** ptrs, const int64_t* strides, const int64_t* shape) */
#define TCCD_ABI_CUDA_SYM                                                                          \
  5 /* "tccd-cuda-sym-1": int f(void** ptrs, const int64_t* strides, const int64_t* shape, stream) \
     */

/* "tccd-cuda-sym-gemm-1": a cuBLASLt matmul with run-time sizes, a KERNEL step of rank
 * TCCD_GEMM_DIMS whose shape words are m, n, k, lda, ldb, ldd, batch, stride_a, stride_b,
 * stride_d (dim words) and layout TCCD_LAYOUT_OWN; inputs A, B[, bias], one output D:
 *   int f(void** ptrs, const int64_t* dims, void* workspace, uint64_t workspace_bytes, stream)
 * Inputs not in their declared layout, or misaligned, are copied into it; the runtime passes
 * TCCD_GEMM_WORKSPACE_BYTES of scratch (codegen::kLegacyGemmWorkspaceBytes; static matmuls get
 * codegen::kGemmWorkspaceBytes, 32 MiB, in their segments since the thirteenth session). */
#define TCCD_ABI_CUDA_SYM_GEMM 6
#define TCCD_GEMM_DIMS 10
#define TCCD_GEMM_WORKSPACE_BYTES (8LL << 20)

/* A kernel step's layout word: how its operands' strides are found. */
#define TCCD_LAYOUT_DECLARED \
  0 /* the expected strides; an input in another layout: its own strides */
#define TCCD_LAYOUT_COPY \
  1 /* the expected strides; an input in another layout is copied into them */
#define TCCD_LAYOUT_OWN                                                 \
  2 /* no expected strides: every operand's own, broadcast to the shape \
       (symbolic plans: layouts vary with the sizes) */
#define TCCD_LAYOUT_OWN_GATHER                                                                \
  3 /* TCCD_LAYOUT_OWN, then n_in + n_out words: 1 where the operand is a gather operand or a \
       scatter output of an index kernel (its own strides, dim k in slot k, zeros after; not  \
       broadcast), else 0 */

/* Expression ops (postfix). CONST and SYM take the next word (a value, a symbol index); the
 * others pop two operands (a, then b on top) and push a OP b. */
#define TCCD_EXPR_CONST 1
#define TCCD_EXPR_SYM 2
#define TCCD_EXPR_ADD 3
#define TCCD_EXPR_MUL 4
#define TCCD_EXPR_FLOORDIV 5
#define TCCD_EXPR_MOD 6
#define TCCD_EXPR_MAX 7
#define TCCD_EXPR_MIN 8
#define TCCD_EXPR_POW 9

/* Value tags. */
#define TCCD_VAL_NONE 0
#define TCCD_VAL_REF 1
#define TCCD_VAL_INT 2
#define TCCD_VAL_FLOAT 3
#define TCCD_VAL_BOOL 4
#define TCCD_VAL_STRING 5
#define TCCD_VAL_DTYPE 6
#define TCCD_VAL_DEVICE 7
#define TCCD_VAL_LAYOUT 8
#define TCCD_VAL_MEMORY_FORMAT 9
#define TCCD_VAL_LIST 10
#define TCCD_VAL_SYM 11 /* payload: expression index */

/* c10 codes the descriptor uses (stable: AOTInductor's shim returns the same numbers from
 * aoti_torch_dtype_*() and aoti_torch_device_type_*(); tests/python/test_native_plan_abi.py
 * checks them against the installed torch). */
#define TCCD_C10_UINT8 0
#define TCCD_C10_INT8 1
#define TCCD_C10_INT16 2
#define TCCD_C10_INT32 3
#define TCCD_C10_INT64 4
#define TCCD_C10_FLOAT16 5
#define TCCD_C10_FLOAT32 6
#define TCCD_C10_FLOAT64 7
#define TCCD_C10_COMPLEX64 9
#define TCCD_C10_COMPLEX128 10
#define TCCD_C10_BOOL 11
#define TCCD_C10_BFLOAT16 15
/* Flash attention's philox seed / offset (rng_state) are uint64 tensors: without these codes a
 * plan with them had no descriptor and ran in the Python interpreter (torch 2.11, H200). */
#define TCCD_C10_UINT16 27
#define TCCD_C10_UINT32 28
#define TCCD_C10_UINT64 29
#define TCCD_C10_DEVICE_CPU 0
#define TCCD_C10_DEVICE_CUDA 1

/* Argument kinds of a native extern binding (tccd_plan_bind_extern): one per schema argument,
 * complete (defaults filled) and typed by the client from torch's schema. OPTIONAL is a flag:
 * the argument's schema type is T? and it holds a value. */
#define TCCD_ARG_NONE 0        /* None (an optional without value) */
#define TCCD_ARG_TENSOR 1      /* payload: plan value id */
#define TCCD_ARG_INT 2         /* payload: the int64 */
#define TCCD_ARG_FLOAT 3       /* payload: the double's bits */
#define TCCD_ARG_BOOL 4        /* payload: 0 or 1 */
#define TCCD_ARG_SCALAR_TYPE 5 /* payload: c10::ScalarType code */
#define TCCD_ARG_INT_LIST 6    /* payload: offset in the step's pool of [n, v0 .. vn-1] */
#define TCCD_ARG_TENSOR_LIST 7 /* payload: offset in the step's pool of [n, id0 .. idn-1] */
#define TCCD_ARG_BOOL_LIST 8   /* payload: offset in the step's pool of [n, b0 .. bn-1] */
#define TCCD_ARG_STRING 9 /* payload: offset in the step's pool of [len, bytes packed 8 a word] */
#define TCCD_ARG_DEVICE \
  10 /* payload: device type << 32 | (uint32) index (the dispatcher's packing) */
#define TCCD_ARG_LAYOUT 11        /* payload: c10::Layout code (aoti_torch_layout_*) */
#define TCCD_ARG_MEMORY_FORMAT 12 /* payload: c10::MemoryFormat code (aoti_torch_memory_format_*) \
                                   */
#define TCCD_ARG_OPTIONAL_TENSOR_LIST 13 /* Tensor?[]: pool [n, id0 .. idn-1], -1 for None */
#define TCCD_ARG_FLOAT_LIST 14 /* payload: offset in the step's pool of [n, bits0 .. bitsn-1] */
#define TCCD_ARG_CONSTANT \
  15                    /* payload: index of a tensor the plan holds (tccd_plan_add_constant) */
#define TCCD_ARG_SYM 16 /* an int (SymInt) computed at each call; payload: expression index */
#define TCCD_ARG_SYM_INT_LIST                                         \
  17 /* an int list with SymInts; pool [n, (is_expr, v)[n]]: v is the \
        int, or with is_expr 1 an expression index */
/* An undefined Tensor where the schema's type is a plain Tensor (no payload): the Python
 * binding's None (torch converts None to an undefined Tensor for a Tensor argument), e.g. the
 * cum_seq_q/cum_seq_k of flash and cuDNN attention's backward, undefined for dense inputs. */
#define TCCD_ARG_UNDEFINED_TENSOR 18
#define TCCD_ARG_LAST 18
#define TCCD_ARG_OPTIONAL 0x100

/* Return kinds of a native extern binding, one per schema return. */
#define TCCD_RET_TENSOR 1      /* the next step output */
#define TCCD_RET_TENSOR_LIST 2 /* a Tensor[]: its items are the step's outputs (the only return) \
                                */
#define TCCD_RET_DISCARD 3     /* an int/float/bool return no step output reads */

/* Extern ops with Scalar arguments, which no torch's dispatcher converts from a StableIValue,
 * run through AOTInductor's generated C shims that take the Scalars as doubles
 * (tccd_plan_bind_out_shim); the shim writes into an output the runtime allocates. */
#define TCCD_SHIM_ADDMM_OUT \
  1 /* aoti_torch_{cpu,cuda}_addmm_out(out, self, mat1, mat2, beta, alpha) */
#define TCCD_SHIM_BADDBMM_OUT \
  2 /* aoti_torch_{cpu,cuda}_baddbmm_out(out, self, b1, b2, beta, alpha) */
/* aoti_torch_{cpu,cuda}_add_Tensor(self, other, alpha, &ret): add.Tensor's defaulted alpha is a
 * Scalar; a functional shim (the result is the shim's, not allocated by the runtime). Where the
 * running torch has no such shim, the step goes through the Python callback. */
#define TCCD_SHIM_ADD_TENSOR 3
/* aoti_torch_{cpu,cuda}_{mm,bmm}_out(out, self, mat2): typed, into the output the plan declares
 * (no boxed call; extern matmuls of CPU plans). */
#define TCCD_SHIM_MM_OUT 7
#define TCCD_SHIM_BMM_OUT 8
/* Typed shims (tccd_plan_bind_typed_shim).
 * aoti_torch_{cpu,cuda}_convolution and _convolution_backward: typed
 * calls instead of the boxed dispatcher's (no IValue stack, no list handles per call), and
 * convolution_backward's undefined gradients (output_mask false) come back as handles of
 * undefined tensors the runtime drops, which torch 2.11's stable dispatcher could not return.
 * The step's int lists, flags and mask are bound once as words:
 *   n, stride[n], n, padding[n], n, dilation[n], transposed, n, output_padding[n], groups,
 *   then for the backward: has_bias_sizes, n, bias_sizes[n], output_mask[3]. */
#define TCCD_SHIM_CONVOLUTION 4
#define TCCD_SHIM_CONVOLUTION_BACKWARD 5
/* aoti_torch_copy_(self, src, non_blocking) for copy_ (batch norm's running statistics written
 * back: three per layer and step); words: non_blocking. */
#define TCCD_SHIM_COPY 6
/* aoti_torch_cuda__scaled_dot_product_{flash,cudnn}_attention: typed, returning every output
 * as a handle (the unused cum_seq_q / cum_seq_k / debug_attn_mask are undefined tensors, which
 * torch 2.11's stable dispatcher cannot return; max_q / max_k ints are dropped). ids: query,
 * key, value, attn_bias (-1: None; cuDNN only). Words: dropout_p (the double's bits),
 * is_causal, return_debug_mask, has_scale, scale (bits), compute_log_sumexp (cuDNN only). */
#define TCCD_SHIM_SDPA_FLASH 9
#define TCCD_SHIM_SDPA_CUDNN 10

#endif /* TCCD_PLAN_FORMAT_H_ */
