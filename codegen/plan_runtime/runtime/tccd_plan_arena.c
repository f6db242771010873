/* First-fit interval packing for the per-call arena (tccd_plan_arena.h). */
#include "tccd_plan_arena.h"

#include <stdlib.h>

static int64_t round_up(int64_t v, int64_t align) { return (v + align - 1) & ~(align - 1); }

/* Compares placed buffers by offset (qsort). */
typedef struct {
  int64_t lo, hi; /* [lo, hi) bytes */
} Span;

static int by_lo(const void* a, const void* b) {
  const int64_t x = ((const Span*)a)->lo, y = ((const Span*)b)->lo;
  return (x > y) - (x < y);
}

int64_t tccd_arena_pack(int64_t n, const int64_t* bytes, const int64_t* start, const int64_t* end,
                        int64_t align, int64_t* offsets) {
  Span* live = malloc(sizeof(Span) * (size_t)(n > 0 ? n : 1));
  if (live == NULL) return -1;
  int64_t total = 0;
  for (int64_t i = 0; i < n; ++i) {
    offsets[i] = 0;
    if (bytes[i] <= 0) continue;
    /* The earlier buffers whose intervals meet this one's, by offset. */
    int64_t k = 0;
    for (int64_t j = 0; j < i; ++j) {
      if (bytes[j] > 0 && start[j] <= end[i] && start[i] <= end[j])
        live[k++] = (Span){offsets[j], offsets[j] + bytes[j]};
    }
    qsort(live, (size_t)k, sizeof(Span), by_lo);
    /* The lowest aligned gap that holds it. */
    int64_t at = 0;
    for (int64_t j = 0; j < k; ++j) {
      if (at + bytes[i] <= live[j].lo) break;
      if (live[j].hi > at) at = round_up(live[j].hi, align);
    }
    offsets[i] = at;
    if (at + bytes[i] > total) total = at + bytes[i];
  }
  free(live);
  return round_up(total, align);
}
