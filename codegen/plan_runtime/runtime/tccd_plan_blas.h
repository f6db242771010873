/* Direct BLAS calls for a CPU plan's matmuls (mm, addmm in float32 / float64).
 *
 * ATen runs a CPU float matmul as `sgemm_` / `dgemm_` of the process's BLAS (MKL in the x86
 * wheels, exported by libtorch_cpu.so), after its dispatcher, structured-kernel checks and the
 * bias copy. The plan runtime calls the same function directly on the operands' data: a
 * transposed operand is the call's trans flag (no view, no copy), a row-major output is computed
 * as its transpose (C^T = B^T A^T, as ATen's addmm does), and addmm's bias is copied into the
 * output before a beta = 1 call (what ATen does too). Plain C, no torch header: the runtime's
 * part that tests/codegen/plan_runtime/plan_blas_test.cc checks against a reference.
 *
 * The Fortran BLAS ABI: every argument by pointer, integers as the library's BLAS integer
 * (int32 for LP64, as torch's MKL uses; int64 for ILP64). Each integer is passed as a pointer to
 * an int64 holding a value below 2^31, so either width reads the same number on a little-endian
 * machine (LP64 reads the low 4 bytes); tccd_blas_probe checks a small product exactly before
 * the runtime uses a function. The trailing hidden lengths of the character arguments are not
 * passed, as ATen does not pass them.
 */
#ifndef TCCD_PLAN_BLAS_H_
#define TCCD_PLAN_BLAS_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A 2-D operand: element (i, j) at data + i * row_stride + j * col_stride (elements). */
typedef struct {
  void* data;
  int64_t rows, cols;
  int64_t row_stride, col_stride;
} TccdBlasMatrix;

/* sgemm_ / dgemm_ (Fortran ABI; alpha, beta, a, b, c are float or double). */
typedef void (*TccdBlasGemmFn)(const char* transa, const char* transb, const int64_t* m,
                               const int64_t* n, const int64_t* k, const void* alpha,
                               const void* a, const int64_t* lda, const void* b,
                               const int64_t* ldb, const void* beta, void* c, const int64_t* ldc);

/* c = alpha * a @ b + beta * bias (bias broadcast to c's shape; NULL or beta == 0: no bias,
 * c's contents ignored), with `gemm` sgemm_ (is_double 0) or dgemm_ (1). Returns 0 when done,
 * 1 (nothing written) when some layout or size is not one BLAS takes: an empty or over-2^31
 * dimension, an operand with no unit stride, a leading dimension too small, an output whose
 * rows or columns overlap; the caller then runs the op another way. */
int tccd_blas_gemm(TccdBlasGemmFn gemm, int is_double, const TccdBlasMatrix* a,
                   const TccdBlasMatrix* b, const TccdBlasMatrix* c, const TccdBlasMatrix* bias,
                   double beta, double alpha);

/* 0 when `gemm` computes a small product (row-major output, a transposed operand, a bias)
 * exactly as the Fortran ABI above says; -1 otherwise. */
int tccd_blas_probe(TccdBlasGemmFn gemm, int is_double);

#ifdef __cplusplus
}
#endif

#endif /* TCCD_PLAN_BLAS_H_ */
