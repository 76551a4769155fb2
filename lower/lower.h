/* TE + schedule -> loop IR (lower/pipeline.c runs the passes in order).
 * The returned function is allocated in `a`, which must outlive its use. */
#ifndef WEFT_LOWER_LOWER_H
#define WEFT_LOWER_LOWER_H
#include "ir/stmt.h"
#include "schedule/schedule.h"

weft_status weft_lower(const weft_schedule *s, weft_arena *a, weft_loop_func **out);

#endif
