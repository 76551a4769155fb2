/* The control side of the fake CUDA driver (tests/cuda/fake_cuda.c, built as libfakecuda.so).
 *
 * The fake exports the driver calls weft loads (targets/cuda/driver.h) and implements them in
 * host memory: device addresses are host addresses plus FAKECUDA_POISON (non-canonical on
 * x86-64, so host code that dereferences one crashes), every copy and every kernel argument
 * must lie inside one live allocation (else it counts as bad), kernels do not execute (their
 * outputs are whatever the memory held): launches are recorded, with their function name,
 * grid, block and argument values. The calls check what the real driver checks that weft
 * could get wrong: cuInit first, a current context on the calling thread, a cubin that is an
 * ELF image holding the function name asked for, and a freed pointer that was allocated.
 *
 * Environment (read at cuInit):
 *   FAKECUDA_DEVICES=N      devices reported (default 1; 0 gives "no CUDA device")
 *   FAKECUDA_CC=M.m         compute capability (default 9.0)
 *   FAKECUDA_FAIL=CALL[:K]  the K-th (default 1st) call of CALL fails: cuMemAlloc_v2 with
 *                           CUDA_ERROR_OUT_OF_MEMORY, cuLaunchKernel and cuCtxSynchronize with
 *                           CUDA_ERROR_LAUNCH_FAILED, any other call with CUDA_ERROR_UNKNOWN
 *   FAKECUDA_HANG=CALL[:K]  the K-th (default 1st) call of CALL never returns (the process
 *                           sleeps until killed: a kernel that hangs, for measurement timeouts)
 *   FAKECUDA_CRASH=CALL[:K] the K-th call of CALL raises SIGSEGV (a worker that dies); it
 *                           takes the place of FAKECUDA_HANG when both are set
 *   FAKECUDA_COUNT_FILE=PATH the K of FAKECUDA_FAIL, _HANG and _CRASH counts calls across every
 *                           process that loads the fake (a counter in PATH, under flock), e.g.
 *                           over a tuner's measuring workers; without it each process counts
 *   FAKECUDA_NAME=TEXT      device name (default "Fake CUDA Device")
 *   FAKECUDA_DRIVER=N       cuDriverGetVersion (default 13000)
 *   FAKECUDA_L2=BYTES       L2 cache size attribute (default 50 MiB); 132 multiprocessors
 *   FAKECUDA_LOG=PATH       appends one line per allocation, free, copy, module load, launch
 *                           and synchronize, and at exit "exit live=N modules=M bad=B"
 *                           (preceded by "events live=E" when events were not destroyed)
 * Events (cuEventRecord/ElapsedTime) hold the host time of their last record.
 * Tests linking nothing of it get these functions with dlsym on the same handle weft opened.
 */
#ifndef WEFT_TESTS_FAKE_CUDA_H
#define WEFT_TESTS_FAKE_CUDA_H
#include <stddef.h>

#define FAKECUDA_POISON 0x4000000000000000ull
#define FAKECUDA_MAX_ARGS 64

typedef struct fakecuda_stats {
    int allocs, frees, live;     /* allocations made, freed, still live */
    size_t live_bytes;
    int htod, dtoh, syncs;       /* copies and synchronizations */
    size_t htod_bytes, dtoh_bytes;
    int modules_loaded, modules_live;
    int launches, bad;           /* bad: copies, frees or arguments outside live memory, calls out of order */
    unsigned long long last_htod_dst, last_dtoh_src; /* device addresses of the latest copies */
} fakecuda_stats;

typedef struct fakecuda_launch {
    char name[128];
    unsigned grid[3], block[3], shared_bytes;
    int n_args;
    unsigned long long args[FAKECUDA_MAX_ARGS];
} fakecuda_launch;

typedef void (*fakecuda_stats_fn)(fakecuda_stats *out);
typedef int (*fakecuda_get_launch_fn)(int i, fakecuda_launch *out); /* 0 when i is out of range */
typedef void (*fakecuda_reset_fn)(void);                             /* counters and launch record; memory stays */
typedef void (*fakecuda_fail_fn)(const char *call, int nth, int code); /* like FAKECUDA_FAIL; NULL call: none */
/* the host memory behind a device range, or NULL when it is not inside one live allocation */
typedef void *(*fakecuda_host_fn)(unsigned long long dev, size_t bytes);

#endif
