/* Safe measurement of compiled kernels (DESIGN #5): each candidate runs in a forked worker
 * with a wall-clock timeout, on random inputs, repeated until a minimum time; the median is
 * kept. A candidate that crashes, hangs, or exceeds memory is a recorded error and the calling
 * process carries on. The correctness check runs the candidate and a reference (the naive
 * schedule) on the same random inputs and compares every output element.
 */
#ifndef WEFT_TUNER_MEASURE_H
#define WEFT_TUNER_MEASURE_H
#include <stdbool.h>
#include <stdint.h>

#include "targets/target.h"

typedef struct weft_measure_opts {
    double timeout_s;     /* per candidate, whole child lifetime (default 10) */
    double min_time_s;    /* keep repeating until this much time is measured (default 0.1) */
    int min_repeat;       /* at least (default 3) */
    int max_repeat;       /* at most (default 100) */
    bool flush_cache;     /* write a 64 MiB buffer between runs */
    size_t evict_bytes;   /* without flush_cache: write this many bytes between runs (not timed),
                           * so each run starts with its data out of L1/L2, as a kernel in a model
                           * does (the kernels before it read other data); 0: none */
    int threads;          /* thread pool size in the worker (<= 0: cores) */
    size_t memory_limit;  /* RLIMIT_AS for the worker in bytes (0: none) */
    uint64_t seed;        /* random inputs */
    bool compile_in_worker; /* the worker compiles lf with its own target instance instead of
                               calling the parent's kernel (always so on a device target) */
    int fault;            /* test builds only (WEFT_TEST_HOOKS): a weft_measure_fault the worker
                           * injects after each run of the candidate (never the reference) */
} weft_measure_opts;

/* Faults a test injects into a candidate's runs (tests/reliability/faults.sh): a crash, a kernel
 * that never returns, a wild store far past its buffers, wrong output values. */
typedef enum weft_measure_fault {
    WEFT_FAULT_NONE,
    WEFT_FAULT_SEGV,
    WEFT_FAULT_SPIN,
    WEFT_FAULT_OOB,
    WEFT_FAULT_WRONG,
    WEFT_FAULT_COUNT
} weft_measure_fault;

weft_measure_opts weft_measure_opts_default(void);
/* What the tuner writes between timed runs on a target with these caps (evict_bytes): twice
 * its L2 (1 MiB when unknown), so each run starts with cold L1/L2 as a kernel in a model does. */
size_t weft_measure_evict_bytes(const weft_target_caps *caps);

#define WEFT_MEASURE_MAX_TIMES 64
typedef struct weft_measure_result {
    weft_status status;   /* WEFT_OK, WEFT_ERR_TIMEOUT, WEFT_ERR_DEVICE (crashed), WEFT_ERR_COMPILE ... */
    char error[256];      /* what went wrong ("killed by signal 11 (Segmentation fault)", "timed out after 10 s") */
    double median;        /* seconds */
    int n_times;
    double times[WEFT_MEASURE_MAX_TIMES];
    double max_error;     /* weft_measure_check: max |cand - ref| / max(1, max |ref|) */
    double median_other;  /* weft_measure_pair: the second kernel's median (seconds) */
} weft_measure_result;

/* Times kernel k (compiled by ops for loop function lf, whose params give buffer sizes and
 * dtypes). Never crashes the caller; the outcome is in *out (status also returned). On a
 * device target, or with o->compile_in_worker, the worker compiles lf itself and k is not
 * called (measure.c: "What the worker runs"); a compile error there is WEFT_ERR_COMPILE. */
weft_status weft_measure_kernel(const weft_target_ops *ops, weft_kernel *k, const weft_loop_func *lf,
                                const weft_measure_opts *o, weft_measure_result *out);
/* Runs k (of lf) and ref (of ref_lf, the same parameter list) once each on the same random
 * inputs in a forked worker and compares all outputs: WEFT_OK when max relative error <= tol,
 * else WEFT_ERR_INTERNAL with "output differs from the naive schedule by ..." in out->error.
 * The loop functions are what a compiling worker (see weft_measure_kernel) compiles. */
weft_status weft_measure_check(const weft_target_ops *ops, weft_kernel *k, const weft_loop_func *lf, weft_kernel *ref,
                               const weft_loop_func *ref_lf, double tol, const weft_measure_opts *o,
                               weft_measure_result *out);

/* Times k (of lf) and other (of other_lf, the same parameter list) in one forked worker on the
 * same inputs, their runs alternating (k, other, k, ...; each after o's cache eviction), so both
 * see the same load: out->median is k's, out->median_other other's. Runs repeat until both have
 * min_repeat runs and min_time_s of measured time each (at most max_repeat each); n_times and
 * times[] are k's. Host targets only (a device target is WEFT_ERR_INVALID_ARG). */
weft_status weft_measure_pair(const weft_target_ops *ops, weft_kernel *k, const weft_loop_func *lf, weft_kernel *other,
                              const weft_loop_func *other_lf, const weft_measure_opts *o, weft_measure_result *out);

/* For forked measuring workers (this file's and tuner/measure_gpu.c's): reset the crash and
 * termination signals to SIG_DFL and unblock all signals (a crash ends the worker, and the
 * parent sees the signal); write n bytes to fd, retrying on EINTR (a short pipe write is the
 * parent's to notice). */
void weft_measure_child_reset_signals(void);
void weft_measure_write_all(int fd, const void *p, size_t n);

#endif
