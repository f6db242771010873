/* Direct BLAS calls for a CPU plan's matmuls (tccd_plan_blas.h). */
#include "tccd_plan_blas.h"

#include <string.h>

#define BLAS_INT_MAX 2147483647LL /* LP64: every integer argument fits an int32 */

/* How BLAS reads x (column-major): 'N' with ld its column stride when its rows are unit
 * stride, 'T' (x's transpose stored column-major) with ld its row stride when its columns are;
 * a dimension of size 1 has no stride that matters. Returns 0, or 1 when neither holds. */
static int operand(const TccdBlasMatrix* x, char* trans, int64_t* ld) {
  const int64_t min_n = x->rows > 1 ? x->rows : 1, min_t = x->cols > 1 ? x->cols : 1;
  if (x->rows == 1 || x->row_stride == 1) {
    const int64_t l = x->cols == 1 ? min_n : x->col_stride;
    if (l >= min_n && l <= BLAS_INT_MAX) {
      *trans = 'N';
      *ld = l;
      return 0;
    }
  }
  if (x->cols == 1 || x->col_stride == 1) {
    const int64_t l = x->rows == 1 ? min_t : x->row_stride;
    if (l >= min_t && l <= BLAS_INT_MAX) {
      *trans = 'T';
      *ld = l;
      return 0;
    }
  }
  return 1;
}

static TccdBlasMatrix transposed(const TccdBlasMatrix* x) {
  TccdBlasMatrix t = {x->data, x->cols, x->rows, x->col_stride, x->row_stride};
  return t;
}

/* c (column-major, ldc) = bias broadcast; c is rows x cols. */
static void fill_bias(int is_double, const TccdBlasMatrix* bias, void* c, int64_t rows,
                      int64_t cols, int64_t ldc) {
  const int64_t size = is_double ? 8 : 4;
  const int64_t rs = bias->rows == 1 ? 0 : bias->row_stride;
  const int64_t cs = bias->cols == 1 ? 0 : bias->col_stride;
  for (int64_t j = 0; j < cols; ++j) {
    char* dst = (char*)c + j * ldc * size;
    const char* src = (const char*)bias->data + j * cs * size;
    if (rs == 1) {
      memcpy(dst, src, (size_t)(rows * size));
    } else if (is_double) {
      for (int64_t i = 0; i < rows; ++i) ((double*)dst)[i] = ((const double*)src)[i * rs];
    } else {
      for (int64_t i = 0; i < rows; ++i) ((float*)dst)[i] = ((const float*)src)[i * rs];
    }
  }
}

int tccd_blas_gemm(TccdBlasGemmFn gemm, int is_double, const TccdBlasMatrix* a,
                   const TccdBlasMatrix* b, const TccdBlasMatrix* c, const TccdBlasMatrix* bias,
                   double beta, double alpha) {
  const int64_t m = c->rows, n = c->cols, k = a->cols;
  if (a->rows != m || b->rows != k || b->cols != n) return 1;
  if (m < 1 || n < 1 || k < 1 || m > BLAS_INT_MAX || n > BLAS_INT_MAX || k > BLAS_INT_MAX)
    return 1;
  if (bias != NULL && beta != 0 &&
      ((bias->rows != m && bias->rows != 1) || (bias->cols != n && bias->cols != 1)))
    return 1;
  char tc;
  int64_t ldc;
  /* The output must be BLAS's column-major C ('N'); a row-major one is written as its
   * transpose: c^T = b^T a^T, with every operand and the bias transposed. */
  if (operand(c, &tc, &ldc)) return 1;
  if (tc == 'T') {
    const TccdBlasMatrix at = transposed(a), bt = transposed(b), ct = transposed(c);
    TccdBlasMatrix biast;
    if (bias != NULL) biast = transposed(bias);
    return tccd_blas_gemm(gemm, is_double, &bt, &at, &ct, bias != NULL ? &biast : NULL, beta,
                          alpha);
  }
  char ta, tb;
  int64_t lda, ldb;
  if (operand(a, &ta, &lda) || operand(b, &tb, &ldb)) return 1;
  const int with_bias = bias != NULL && beta != 0;
  if (with_bias) fill_bias(is_double, bias, c->data, m, n, ldc);
  if (is_double) {
    const double al = alpha, be = with_bias ? beta : 0;
    gemm(&ta, &tb, &m, &n, &k, &al, a->data, &lda, b->data, &ldb, &be, c->data, &ldc);
  } else {
    const float al = (float)alpha, be = with_bias ? (float)beta : 0.f;
    gemm(&ta, &tb, &m, &n, &k, &al, a->data, &lda, b->data, &ldb, &be, c->data, &ldc);
  }
  return 0;
}

int tccd_blas_probe(TccdBlasGemmFn gemm, int is_double) {
  /* c (2x2, row-major) = a (2x3, stored transposed) @ b (3x2, row-major) + bias (1x2):
   * [[1,2,3],[4,5,6]] @ [[1,2],[3,4],[5,6]] + [10,20] = [[32,48],[59,84]], exact in float. */
  const double av[6] = {1, 4, 2, 5, 3, 6}, bv[6] = {1, 2, 3, 4, 5, 6}, biasv[2] = {10, 20};
  const double want[4] = {32, 48, 59, 84};
  double a64[6], b64[6], bias64[2], c64[4] = {0, 0, 0, 0};
  float a32[6], b32[6], bias32[2], c32[4] = {0, 0, 0, 0};
  for (int i = 0; i < 6; ++i) {
    a64[i] = av[i], b64[i] = bv[i];
    a32[i] = (float)av[i], b32[i] = (float)bv[i];
  }
  for (int i = 0; i < 2; ++i) bias64[i] = biasv[i], bias32[i] = (float)biasv[i];
  void* ad = is_double ? (void*)a64 : (void*)a32;
  TccdBlasMatrix a = {ad, 2, 3, 1, 2};
  TccdBlasMatrix b = {is_double ? (void*)b64 : (void*)b32, 3, 2, 2, 1};
  TccdBlasMatrix c = {is_double ? (void*)c64 : (void*)c32, 2, 2, 2, 1};
  TccdBlasMatrix bias = {is_double ? (void*)bias64 : (void*)bias32, 1, 2, 0, 1};
  if (tccd_blas_gemm(gemm, is_double, &a, &b, &c, &bias, 1.0, 1.0) != 0) return -1;
  for (int i = 0; i < 4; ++i) {
    if ((is_double ? c64[i] : (double)c32[i]) != want[i]) return -1;
  }
  return 0;
}
