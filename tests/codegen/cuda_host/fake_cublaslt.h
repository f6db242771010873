/* A fake cuBLASLt (libcublasLt.so.13 by SONAME) for tests of the host library's gemms without a
 * GPU: the entry points the runtime resolves (runtime/tccd_cuda_gemm.c), with cublasLt.h's
 * signatures as that file declares them, each recording its call: how many descriptors, layouts
 * and heuristic queries were made and destroyed, and the last matmul with the layouts and
 * descriptor attributes it was given. Loaded by the test with dlopen (RTLD_GLOBAL) before the
 * library under test, which then finds it by its SONAME (RTLD_NOLOAD), as it finds PyTorch's. */
#ifndef TCCD_TESTS_CODEGEN_CUDA_HOST_FAKE_CUBLASLT_H_
#define TCCD_TESTS_CODEGEN_CUDA_HOST_FAKE_CUBLASLT_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int type;
  uint64_t rows, cols;
  int64_t ld;
  int32_t batch; /* 1 unless BATCH_COUNT was set */
  int64_t batch_stride;
  int32_t order; /* CUBLASLT_MATRIX_LAYOUT_ORDER: 0 unset (column), 1 row */
} fake_lt_layout;

typedef struct {
  int32_t trans_a, trans_b;
  uint32_t epilogue;
  const void* bias;
  float alpha, beta;
  fake_lt_layout a, b, c, d;
  const void *A, *B, *C, *D;
  void* workspace;
  size_t workspace_size;
  void* stream;
  uint64_t algo; /* the algorithm's first word: 0xa1 + its index in the heuristic's list */
} fake_lt_matmul;

/* Calls so far of "create", "desc_create", "desc_destroy", "layout_create", "layout_destroy",
 * "heuristic", "check" (cublasLtMatmulAlgoCheck), "matmul"; -1 for another name. */
int fake_lt_calls(const char* what);
void fake_lt_last_matmul(fake_lt_matmul* out);
/* The MIN_ALIGNMENT_{A,B,C,D}_BYTES preferences of the last heuristic query (0: not set). */
void fake_lt_last_alignment(uint32_t out[4]);
/* The workspace the heuristic's algorithm needs (default 4096; it offers one needing none when
 * the preference allows less). */
void fake_lt_set_algo_workspace(uint64_t bytes);
/* The heuristic offers `n` algorithms (0xa1, 0xa2, ...; at most 16, default 1), and a matmul
 * with algorithm i advances the fake driver's clock by ms[i] (fake_cuda_advance_clock). */
void fake_lt_set_algos(int n, const double* ms);
/* cublasLtMatmulAlgoCheck fails (NOT_SUPPORTED) for algorithm `algo` (its first word; 0:
 * for none). */
void fake_lt_set_check_fails(uint64_t algo);
/* Algorithm i launches launches[i] kernels and memsets per run (what a stream capture of it
 * counts; default 1). */
void fake_lt_set_algo_launches(int n, const int* launches);
/* Matmuls writing a row-ordered D (the swapped formulation) take `factor` times their
 * algorithm's time (default 1). */
void fake_lt_set_row_factor(double factor);
/* How many algorithms the last heuristic query asked for. */
int fake_lt_last_requested(void);

#ifdef __cplusplus
}
#endif

#endif /* TCCD_TESTS_CODEGEN_CUDA_HOST_FAKE_CUBLASLT_H_ */
