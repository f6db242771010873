/* The part of PyTorch's stable C ABI the plan runtime calls, declared here without torch headers
 * (the runtime is plain C, built once, and loads into whatever torch the client runs).
 *
 * Each line is X(required, library, return type, name, parameters). The declarations match
 * torch/csrc/inductor/aoti_torch/c/shim.h and torch/csrc/stable/c/shim.h with AtenTensorHandle
 * written void*, AOTITorchError int32_t and StableIValue uint64_t;
 * tests/python/test_native_plan_abi.py checks every line against the headers of the installed
 * torch wheel. `library`: CPU symbols live in libtorch_cpu.so, CUDA ones in libtorch_cuda.so.
 * An optional symbol (required = 0) missing from this torch disables only what needs it.
 *
 * Supported torch: 2.11 through 2.15 (TCCD_PLAN_TORCH_MIN/MAX, checked by the client at load):
 * every required symbol below exists with this signature in all of them; torch_new_stable_ivalue
 * and torch_exception_get_what_without_backtrace appeared in 2.13 (before it, error messages of
 * extern ops say less, and optional arguments are boxed with C++ operator new); the list and
 * string functions in 2.10. The addmm/baddbmm out shims are AOTInductor's generated fallback-op
 * shims (generated/c_shim_{cpu,cuda}.h), as are the convolution and convolution_backward shims
 * (typed: no boxing, no list allocation; an undefined gradient comes back as a handle the
 * runtime drops, where the stable dispatcher of 2.11 failed on it), and so are flash and cuDNN
 * attention's forward shims (their unused cum_seq_q/cum_seq_k are undefined tensors: the same
 * failure); aoti_torch_new_uninitialized_tensor makes the undefined Tensor argument that their
 * backward takes for them (TCCD_ARG_UNDEFINED_TENSOR). What aoti_torch_call_dispatcher
 * converts in each version (and what it never converts: Scalar) is tabulated in
 * codegen/plan_runtime/README.md.
 */
#ifndef TCCD_PLAN_TORCH_ABI_H_
#define TCCD_PLAN_TORCH_ABI_H_

#include <stddef.h>
#include <stdint.h>

#define TCCD_PLAN_TORCH_MIN "2.11"
#define TCCD_PLAN_TORCH_MAX "2.15"

#define TCCD_LIB_CPU 0
#define TCCD_LIB_CUDA 1

/* The convolution shims' parameters (the same for the CPU and the CUDA one). `bias` and
 * `bias_sizes` point to the value, NULL for None; the ret pointers of convolution_backward may
 * be NULL in newer torch only, so the runtime always passes all three. */
#define TCCD_CONVOLUTION_PARAMS                                                                    \
  (void* input, void* weight, void** bias, const int64_t* stride, int64_t stride_len_,             \
   const int64_t* padding, int64_t padding_len_, const int64_t* dilation, int64_t dilation_len_,   \
   int32_t transposed, const int64_t* output_padding, int64_t output_padding_len_, int64_t groups, \
   void** ret0)
#define TCCD_CONVOLUTION_BACKWARD_PARAMS                                                        \
  (void* grad_output, void* input, void* weight, const int64_t** bias_sizes,                    \
   int64_t bias_sizes_len_, const int64_t* stride, int64_t stride_len_, const int64_t* padding, \
   int64_t padding_len_, const int64_t* dilation, int64_t dilation_len_, int32_t transposed,    \
   const int64_t* output_padding, int64_t output_padding_len_, int64_t groups,                  \
   const int32_t* output_mask, int64_t output_mask_len_, void** ret0, void** ret1, void** ret2)

/* Flash and cuDNN attention's forward shims; returns: output, logsumexp, cum_seq_q, cum_seq_k,
 * max_q, max_k, philox_seed, philox_offset, debug_attn_mask. */
#define TCCD_SDPA_FLASH_PARAMS                                                                   \
  (void* query, void* key, void* value, double dropout_p, int32_t is_causal,                     \
   int32_t return_debug_mask, double* scale, void** ret0, void** ret1, void** ret2, void** ret3, \
   int64_t* ret4, int64_t* ret5, void** ret6, void** ret7, void** ret8)
#define TCCD_SDPA_CUDNN_PARAMS                                                                    \
  (void* query, void* key, void* value, void** attn_bias, int32_t compute_log_sumexp,             \
   double dropout_p, int32_t is_causal, int32_t return_debug_mask, double* scale, void** ret0,    \
   void** ret1, void** ret2, void** ret3, int64_t* ret4, int64_t* ret5, void** ret6, void** ret7, \
   void** ret8)

#define TCCD_TORCH_ABI(X)                                                                        \
  X(1, TCCD_LIB_CPU, int32_t, aoti_torch_empty_strided,                                          \
    (int64_t ndim, const int64_t* sizes_ptr, const int64_t* strides_ptr, int32_t dtype,          \
     int32_t device_type, int32_t device_index, void** ret_new_tensor))                          \
  X(1, TCCD_LIB_CPU, int32_t, aoti_torch__reinterpret_tensor,                                    \
    (void* self, int64_t ndim, const int64_t* sizes_ptr, const int64_t* strides_ptr,             \
     int64_t storage_offset, void** ret_new_tensor))                                             \
  X(1, TCCD_LIB_CPU, int32_t, aoti_torch_delete_tensor_object, (void* tensor))                   \
  X(1, TCCD_LIB_CPU, int32_t, aoti_torch_new_tensor_handle,                                      \
    (void* orig_handle, void** new_handle))                                                      \
  X(1, TCCD_LIB_CPU, int32_t, aoti_torch_get_data_ptr, (void* tensor, void** ret_data_ptr))      \
  X(1, TCCD_LIB_CPU, int32_t, aoti_torch_get_dim, (void* tensor, int64_t* ret_dim))              \
  X(1, TCCD_LIB_CPU, int32_t, aoti_torch_get_sizes, (void* tensor, int64_t** ret_sizes))         \
  X(1, TCCD_LIB_CPU, int32_t, aoti_torch_get_strides, (void* tensor, int64_t** ret_strides))     \
  X(1, TCCD_LIB_CPU, int32_t, aoti_torch_get_dtype, (void* tensor, int32_t* ret_dtype))          \
  X(1, TCCD_LIB_CPU, int32_t, aoti_torch_get_storage_offset,                                     \
    (void* tensor, int64_t* ret_storage_offset))                                                 \
  X(1, TCCD_LIB_CPU, int32_t, aoti_torch_get_device_index,                                       \
    (void* tensor, int32_t* ret_device_index))                                                   \
  X(1, TCCD_LIB_CPU, int32_t, aoti_torch_copy_, (void* self, void* src, int32_t non_blocking))   \
  X(1, TCCD_LIB_CPU, int32_t, aoti_torch_call_dispatcher,                                        \
    (const char* opName, const char* overloadName, uint64_t* stack))                             \
  X(0, TCCD_LIB_CPU, int32_t, aoti_torch_get_current_device_index, (int32_t * ret_device_index)) \
  X(0, TCCD_LIB_CPU, const char*, torch_exception_get_what_without_backtrace, (void))            \
  X(0, TCCD_LIB_CPU, int32_t, torch_new_stable_ivalue, (uint64_t * *ret_value))                  \
  X(0, TCCD_LIB_CPU, int32_t, torch_new_list_reserve_size, (size_t size, void** ret))            \
  X(0, TCCD_LIB_CPU, int32_t, torch_list_push_back, (void* list_handle, uint64_t element))       \
  X(0, TCCD_LIB_CPU, int32_t, torch_list_size, (void* list_handle, size_t* size))                \
  X(0, TCCD_LIB_CPU, int32_t, torch_list_get_item,                                               \
    (void* list_handle, size_t index, uint64_t* element))                                        \
  X(0, TCCD_LIB_CPU, int32_t, torch_delete_list, (void* list_handle))                            \
  X(0, TCCD_LIB_CPU, int32_t, torch_new_string_handle,                                           \
    (const char* data, size_t length, void** handle))                                            \
  X(0, TCCD_LIB_CPU, int32_t, aoti_torch_cpu_addmm_out,                                          \
    (void* out, void* self, void* mat1, void* mat2, double beta, double alpha))                  \
  X(0, TCCD_LIB_CPU, int32_t, aoti_torch_cpu_baddbmm_out,                                        \
    (void* out, void* self, void* batch1, void* batch2, double beta, double alpha))              \
  X(0, TCCD_LIB_CUDA, int32_t, aoti_torch_cuda_addmm_out,                                        \
    (void* out, void* self, void* mat1, void* mat2, double beta, double alpha))                  \
  X(0, TCCD_LIB_CUDA, int32_t, aoti_torch_cuda_baddbmm_out,                                      \
    (void* out, void* self, void* batch1, void* batch2, double beta, double alpha))              \
  X(0, TCCD_LIB_CPU, int32_t, aoti_torch_cpu_mm_out, (void* out, void* self, void* mat2))        \
  X(0, TCCD_LIB_CUDA, int32_t, aoti_torch_cuda_mm_out, (void* out, void* self, void* mat2))      \
  X(0, TCCD_LIB_CPU, int32_t, aoti_torch_cpu_bmm_out, (void* out, void* self, void* mat2))       \
  X(0, TCCD_LIB_CUDA, int32_t, aoti_torch_cuda_bmm_out, (void* out, void* self, void* mat2))     \
  X(0, TCCD_LIB_CPU, int32_t, aoti_torch_cpu_add_Tensor,                                         \
    (void* self, void* other, double alpha, void** ret0))                                        \
  X(0, TCCD_LIB_CUDA, int32_t, aoti_torch_cuda_add_Tensor,                                       \
    (void* self, void* other, double alpha, void** ret0))                                        \
  X(0, TCCD_LIB_CUDA, int32_t, aoti_torch_get_current_cuda_stream,                               \
    (int32_t device_index, void** ret_stream))                                                   \
  X(0, TCCD_LIB_CPU, int32_t, aoti_torch_cpu_convolution, TCCD_CONVOLUTION_PARAMS)               \
  X(0, TCCD_LIB_CUDA, int32_t, aoti_torch_cuda_convolution, TCCD_CONVOLUTION_PARAMS)             \
  X(0, TCCD_LIB_CPU, int32_t, aoti_torch_cpu_convolution_backward,                               \
    TCCD_CONVOLUTION_BACKWARD_PARAMS)                                                            \
  X(0, TCCD_LIB_CUDA, int32_t, aoti_torch_cuda_convolution_backward,                             \
    TCCD_CONVOLUTION_BACKWARD_PARAMS)                                                            \
  X(0, TCCD_LIB_CPU, int32_t, aoti_torch_new_uninitialized_tensor, (void** ret))                 \
  X(0, TCCD_LIB_CUDA, int32_t, aoti_torch_cuda__scaled_dot_product_flash_attention,              \
    TCCD_SDPA_FLASH_PARAMS)                                                                      \
  X(0, TCCD_LIB_CUDA, int32_t, aoti_torch_cuda__scaled_dot_product_cudnn_attention,              \
    TCCD_SDPA_CUDNN_PARAMS)

#endif /* TCCD_PLAN_TORCH_ABI_H_ */
