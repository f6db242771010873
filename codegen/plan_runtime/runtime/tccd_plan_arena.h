/* Packing a plan call's short-lived buffers into one allocation (the per-call arena of
 * tccd_plan_enable_arena, tccd_plan_runtime.h).
 *
 * Each buffer is live over a closed interval of step indices [start, end]: defined by step
 * `start`, last read by step `end` (released after it). Two buffers may share bytes only when
 * their intervals are disjoint; a step that reads one buffer and defines another keeps them apart
 * (both intervals hold that step). Plain C, no torch: the runtime decides which values are
 * buffers and carves them out of the arena it allocates per call.
 */
#ifndef TCCD_PLAN_ARENA_H_
#define TCCD_PLAN_ARENA_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* First fit in the given order (the caller passes definition order): each buffer takes the lowest
 * `align`-aligned offset where it overlaps no earlier buffer in both bytes and interval. Writes
 * offsets[i] (bytes) and returns the arena's size in bytes (0 for no buffers), or -1 when out of
 * memory. `align` is a power of two; a buffer of 0 bytes gets offset 0 and takes no space. */
int64_t tccd_arena_pack(int64_t n, const int64_t* bytes, const int64_t* start, const int64_t* end,
                        int64_t align, int64_t* offsets);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif /* TCCD_PLAN_ARENA_H_ */
