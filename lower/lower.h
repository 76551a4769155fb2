/* TE + schedule -> loop IR for one target (lower/pipeline.c runs the passes in order and lists
 * them). The returned function is allocated in `a`, which must outlive its use. caps is the
 * target's (verify checks the IR against it); NULL lowers for no particular target (analysis,
 * features, tests of the IR itself). */
#ifndef WEFT_LOWER_LOWER_H
#define WEFT_LOWER_LOWER_H
#include "ir/caps.h"
#include "ir/stmt.h"
#include "schedule/schedule.h"

weft_status weft_lower(const weft_schedule *s, const weft_target_caps *caps, weft_arena *a, weft_loop_func **out);

/* The passes, in order: weft_lower_pass_name(i) for 0 <= i < weft_lower_n_passes(). */
int weft_lower_n_passes(void);
const char *weft_lower_pass_name(int i);

/* weft_lower, calling trace with each pass's printed result (as WEFT_DUMP prints it) after the
 * pass runs; text is valid during the call only. */
typedef void (*weft_lower_trace_fn)(void *ud, const char *pass, const char *text);
weft_status weft_lower_traced(const weft_schedule *s, const weft_target_caps *caps, weft_arena *a, weft_loop_func **out,
                              weft_lower_trace_fn trace, void *ud);

#endif
