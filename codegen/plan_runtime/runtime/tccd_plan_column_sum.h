/* Column sums of a row-major matrix: a bias gradient (aten::sum.dim_IntList over dim 0 of a
 * linear layer's 2-D output gradient), computed by the plan runtime itself on the CPU.
 *
 * ATen's reduction of a [64, 512] gradient costs ~12 us a call inside a small MLP's training
 * step (its TensorIterator set-up, the boxed dispatcher call, the output's allocation), where the
 * sum itself is a few microseconds of vector adds. Plain C with GCC/Clang vector extensions (the
 * runtime is compiled for the baseline ISA: SSE2 on x86-64), no torch header. Float32 input is
 * summed in float partials of 32 rows added in double: the error of a 32-row float sum, like
 * the leaves of ATen's cascade sum (the last bits may differ from eager's, as a different
 * summation order does).
 */
#ifndef TCCD_PLAN_COLUMN_SUM_H_
#define TCCD_PLAN_COLUMN_SUM_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* out[j] = sum over i of x[i * row_stride + j] for j < cols (float32 or float64, is_double), the
 * columns unit stride; rows may be 0 (zeros). `out` holds cols contiguous elements. */
void tccd_column_sum(int is_double, const void* x, int64_t rows, int64_t cols, int64_t row_stride,
                     void* out);

#ifdef __cplusplus
}
#endif

#endif /* TCCD_PLAN_COLUMN_SUM_H_ */
