/* The loop-IR reference interpreter (DESIGN #3): the ground truth every compiled target is
 * compared with. Registered as the target "interp" (weft_target_interp_ops in targets/target.h).
 *
 * Semantics it pins down, which compiled targets must match:
 *   - float32 arithmetic is done in float and rounded after every operation (no contraction,
 *     no double intermediates); intrinsics use the libm float versions (expf, logf, ...;
 *     rsqrt = 1/sqrtf, sigmoid = 1/(1+expf(-x))); MIN/MAX are (a < b ? a : b) / (a > b ? a : b).
 *   - int32 arithmetic wraps; int64 arithmetic wraps too (no UB); DIV truncates; FLOORDIV and
 *     FLOORMOD round toward -inf. Integer division by zero is an error (WEFT_ERR_INTERNAL).
 *   - SELECT and &&/|| evaluate all their operands, like the compiled code (LLVM select/and),
 *     so an out-of-bounds read in the arm not taken is still reported.
 *   - CAST float->int truncates toward zero; NaN gives 0 and out-of-range values saturate
 *     (the compiled code's result is unspecified there, so tests must not rely on it).
 *   - Every loop kind runs serially in order; the thread pool is ignored.
 *   - Every LOAD and STORE index is checked against its buffer's size: an access outside
 *     makes run() return WEFT_ERR_INTERNAL naming the buffer, the index and the size.
 *   - ALLOCATE'd buffers are filled with 0xFF bytes (NaN for floats, -1 for ints) every time
 *     their ALLOCATE is entered, so reading before writing shows up in results.
 *
 * compile() validates the function (every variable used inside its loop, every buffer inside
 * its ALLOCATE or a parameter, dtypes consistent, no TLOAD) and translates it into a flat
 * program with variables resolved to slots; it keeps no pointer into f after it returns.
 * run() allocates its own environment, so one kernel may run on several threads at once.
 */
#ifndef WEFT_TARGETS_INTERP_H
#define WEFT_TARGETS_INTERP_H
#include <stdbool.h>

#include "ir/stmt.h"
#include "weft/weft.h"

/* Compiles and runs f once on args (args[i] is param i): a convenience for tests and tools. */
weft_status weft_interp_run(const weft_loop_func *f, void *const *args);
/* weft_interp_run with a bound on the work: after max_iterations loop iterations in all (every
 * loop's every iteration counts once) it stops and returns WEFT_ERR_TIMEOUT; the outputs are then
 * partial. For callers that run schedules from untrusted text (fuzzing, verification). */
weft_status weft_interp_run_budget(const weft_loop_func *f, void *const *args, int64_t max_iterations);
/* GPU mode: runs f as a GPU would. Each innermost block-bound loop's body is one block (a
 * thread-bound loop outside any block loop is a grid of one block); its threads are the
 * combinations of the thread-bound loops' indices (block size: the largest extent per axis; a
 * thread outside a loop's extent skips it). Threads run one after another between barriers
 * (threadIdx order, or reversed with `reverse`), so a missing barrier gives a wrong result;
 * shared buffers are the block's, everything else the thread's. Barriers must not be under
 * thread-bound loops (lower/gpu.c's launch check guarantees it). */
weft_status weft_interp_run_gpu(const weft_loop_func *f, void *const *args, bool reverse);
/* GPU mode for a kernel compiled by the interp target (weft_target_interp_ops.compile). */
typedef struct weft_kernel weft_kernel;
weft_status weft_interp_kernel_run_gpu(weft_kernel *k, void *const *args, bool reverse);

#endif
