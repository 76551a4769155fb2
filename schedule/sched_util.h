/* Helpers shared by the built-in schedules (default.c, manual.c): steps applied from
 * formatted text, so every built-in schedule is a replayable step list. */
#ifndef WEFT_SCHEDULE_UTIL_H
#define WEFT_SCHEDULE_UTIL_H
#include "schedule/state.h"

/* Formats one step and applies it. */
weft_status weft_sched_stepf(weft_schedule *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Largest candidate (in the order given, first match wins) that divides extent; extent itself
 * when extent <= cap; 1 when none divides. */
int64_t weft_sched_pick_tile(int64_t extent, int64_t cap, const int64_t *cands, int n);
/* Tiles the spatial-only stage t: the last axis by `inner_last`, the one before by
 * `inner_prev` (1 = untiled), outer loops first; the outer loops except the last axis's are
 * fused and made parallel; the last axis's inner loop is vectorized. Writes the name of the
 * innermost outer loop (an attach point; "" when none) and of the fused parallel loop. */
weft_status weft_sched_tile_spatial(weft_schedule *s, int t, int64_t inner_prev, int64_t inner_last, char *attach,
                                    char *par);
/* Orders a reduction stage as reduce loops then spatial loops, unrolls the second-last spatial
 * loop and vectorizes the last one (when its extent is at most max_vec). */
weft_status weft_sched_register_tile(weft_schedule *s, int r, int64_t unroll_extent, int64_t vec_extent, int64_t max_vec);

#endif
