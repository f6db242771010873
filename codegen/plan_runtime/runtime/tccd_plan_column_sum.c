/* Column sums of a row-major matrix (tccd_plan_column_sum.h). */
#include "tccd_plan_column_sum.h"

#include <string.h>

typedef float F4 __attribute__((vector_size(16), aligned(4)));
typedef double D2 __attribute__((vector_size(16), aligned(8)));

/* Columns per block: one block's accumulators (1-2 KiB) stay in L1 while its rows stream
 * through. */
#define BLOCK 256

/* Rows per float partial sum: CHUNK rows are summed in float lanes, then that partial is added
 * into a double total (a float error bound of CHUNK rows, like a cascade sum's leaves; the
 * conversion spread over CHUNK rows). */
#define CHUNK 32
/* Columns summed at once: 8 vectors of 4 floats, held in registers while the rows stream. */
#define GROUP 32

/* out[0 .. GROUP) for one group of columns (GROUP of them, all present). */
static void sum_float_group(const float* x, int64_t rows, int64_t ld, float* out) {
  double total[GROUP];
  memset(total, 0, sizeof(total));
  for (int64_t i0 = 0; i0 < rows; i0 += CHUNK) {
    const int64_t i1 = rows - i0 < CHUNK ? rows : i0 + CHUNK;
    F4 a0 = {0, 0, 0, 0}, a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    for (int64_t i = i0; i < i1; ++i) {
      const float* r = x + i * ld;
      a0 += *(const F4*)(r + 0);
      a1 += *(const F4*)(r + 4);
      a2 += *(const F4*)(r + 8);
      a3 += *(const F4*)(r + 12);
      a4 += *(const F4*)(r + 16);
      a5 += *(const F4*)(r + 20);
      a6 += *(const F4*)(r + 24);
      a7 += *(const F4*)(r + 28);
    }
    const F4 a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    for (int j = 0; j < GROUP; ++j) total[j] += a[j / 4][j % 4];
  }
  for (int j = 0; j < GROUP; ++j) out[j] = (float)total[j];
}

static void sum_float(const float* x, int64_t rows, int64_t cols, int64_t ld, float* out) {
  int64_t j0 = 0;
  for (; j0 + GROUP <= cols; j0 += GROUP) sum_float_group(x + j0, rows, ld, out + j0);
  for (int64_t j = j0; j < cols; ++j) { /* the last < GROUP columns */
    double total = 0;
    for (int64_t i0 = 0; i0 < rows; i0 += CHUNK) {
      const int64_t i1 = rows - i0 < CHUNK ? rows : i0 + CHUNK;
      float part = 0;
      for (int64_t i = i0; i < i1; ++i) part += x[i * ld + j];
      total += part;
    }
    out[j] = (float)total;
  }
}

static void sum_double(const double* x, int64_t rows, int64_t cols, int64_t ld, double* out) {
  for (int64_t j0 = 0; j0 < cols; j0 += BLOCK) {
    const int64_t n = cols - j0 < BLOCK ? cols - j0 : BLOCK;
    D2 acc[BLOCK / 2];
    memset(acc, 0, sizeof(acc));
    const int64_t n2 = n & ~(int64_t)1;
    double tail = 0;
    for (int64_t i = 0; i < rows; ++i) {
      const double* row = x + i * ld + j0;
      for (int64_t j = 0; j < n2; j += 2) acc[j / 2] += *(const D2*)(row + j);
      if (n2 < n) tail += row[n2];
    }
    for (int64_t j = 0; j < n2; j += 2) {
      out[j0 + j] = acc[j / 2][0];
      out[j0 + j + 1] = acc[j / 2][1];
    }
    if (n2 < n) out[j0 + n2] = tail;
  }
}

void tccd_column_sum(int is_double, const void* x, int64_t rows, int64_t cols, int64_t row_stride,
                     void* out) {
  if (is_double)
    sum_double((const double*)x, rows, cols, row_stride, (double*)out);
  else
    sum_float((const float*)x, rows, cols, row_stride, (float*)out);
}
