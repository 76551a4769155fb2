/* The schedule database (DESIGN #6): SQLite in WAL mode with a busy timeout, prepared
 * statements only, a schema version checked on open.
 *
 * Tables: workloads (key = structural hash of the kernel's TE, printable TE, shapes, FLOPs),
 * targets (key, name, CPU/GPU model, ISA features, cores), measurements (workload, target, step
 * text, latencies, error, time, weft version; every candidate ever measured, errors included),
 * cost_models (target, serialized model, time). Every write is one transaction, so a process
 * killed at any moment leaves a readable database; two processes may write at once (WAL + busy
 * timeout + retry on SQLITE_BUSY).
 *
 * Queries are target-aware: a record measured for one target key is never returned for another.
 * Errors: WEFT_ERR_DB (corrupt file, foreign schema: the message says which), WEFT_ERR_DB_BUSY
 * (still locked after the timeout), WEFT_ERR_IO (cannot open).
 *
 * Locking: a write waits up to 5000 ms for the lock, then retries briefly (about 1 s more)
 * before WEFT_ERR_DB_BUSY. The environment variable WEFT_DB_BUSY_MS (milliseconds, read at
 * open) replaces the 5000, e.g. for tests. One weft_db is one SQLite connection: use it from
 * one thread at a time, open one per thread, and never carry an open one across fork().
 */
#ifndef WEFT_TUNER_DB_H
#define WEFT_TUNER_DB_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "weft/weft.h"

#define WEFT_DB_SCHEMA_VERSION 1

typedef struct weft_db weft_db;

typedef struct weft_db_target {
    const char *key;      /* stable identity: "cpu=znver5;features=<hash>;cores=2" */
    const char *name;     /* "llvm" */
    const char *model;    /* CPU model string ("AMD EPYC 9xxx ...") or GPU name */
    const char *features; /* ISA features, comma-separated */
    int cores;
} weft_db_target;

typedef struct weft_db_workload {
    const char *key;    /* 16 hex digits: weft_te_func_hash */
    const char *te;     /* printable tensor expressions */
    const char *shapes; /* e.g. "A[1024,1024] B[1024,1024] -> C[1024,1024]" */
    double flops;
} weft_db_workload;

typedef struct weft_db_measurement {
    const char *workload;    /* workload key */
    const char *target;      /* target key */
    const char *steps;       /* schedule step text */
    const double *latencies; /* seconds, n_latencies of them (may be 0 on error) */
    int n_latencies;
    double median;           /* seconds; <= 0 on error */
    const char *error;       /* NULL or "" when the candidate ran and was correct */
} weft_db_measurement;

/* Makes SQLite allocate through weft_malloc/weft_realloc (runtime/mem.h), so the allocation
 * fail hook reaches SQLite's allocations too (tests/reliability/test_alloc_sweep.c). Process-
 * wide (SQLITE_CONFIG_MALLOC) and opt-in: call it before the process's first use of SQLite;
 * later it is WEFT_ERR_INVALID_ARG and nothing changes. (db_mem.c) */
weft_status weft_db_route_sqlite_allocations(void);
/* True on a thread while SQLite allocates through weft (for a fail hook that must tell SQLite's
 * allocations, some of whose failures SQLite absorbs by design, from weft's own). */
bool weft_db_in_sqlite_allocation(void);

/* Opens (creating when `create`) the database at path. A file whose schema version is newer
 * or whose tables are not weft's is refused with WEFT_ERR_DB and a message saying so. Caller
 * closes with weft_db_close (accepts NULL). */
weft_status weft_db_open(const char *path, bool create, weft_db **out);
void weft_db_close(weft_db *db);

/* Idempotent inserts (same key: kept as is). */
weft_status weft_db_put_workload(weft_db *db, const weft_db_workload *w);
weft_status weft_db_put_target(weft_db *db, const weft_db_target *t);
/* Appends one measurement (a transaction of its own). Its workload and target must have been
 * put first (WEFT_ERR_DB otherwise). */
weft_status weft_db_put_measurement(weft_db *db, const weft_db_measurement *m);

/* The fastest error-free measurement of workload on target. *found false when none; *steps is
 * malloc'd (caller frees) when found. */
weft_status weft_db_best(weft_db *db, const char *workload, const char *target, bool *found, char **steps,
                         double *median);
/* The same, and whether that record came in through weft_db_import (*imported, optional):
 * import marks each measurement's version "imported:VERSION", since text from elsewhere was
 * never checked on this machine (the model compiler checks such a record before it serves it). */
#define WEFT_DB_IMPORTED_PREFIX "imported:"
weft_status weft_db_best_record(weft_db *db, const char *workload, const char *target, bool *found, char **steps,
                                double *median, bool *imported);
/* Does the database hold an error-free measurement of workload on target with exactly these
 * steps (as weft_schedule_text prints them)? */
weft_status weft_db_has_steps(weft_db *db, const char *workload, const char *target, const char *steps, bool *found);
/* Counts of measurements (all, and error-free) of workload on target. */
weft_status weft_db_count(weft_db *db, const char *workload, const char *target, int *total, int *ok);
/* Calls fn for every measurement of workload on target (for resuming and training the cost
 * model), oldest first; median <= 0 marks an error; error is NULL when the row has none. Stops
 * when fn returns false. fn must not call into the same db. */
weft_status weft_db_each(weft_db *db, const char *workload, const char *target,
                         bool (*fn)(void *ud, const char *steps, double median, const char *error), void *ud);

/* The serialized cost model of a target (latest), or *found false. *buf malloc'd. */
weft_status weft_db_save_model(weft_db *db, const char *target, const void *buf, size_t len);
weft_status weft_db_load_model(weft_db *db, const char *target, bool *found, void **buf, size_t *len);

/* Management (weft db ...). ls: one line per (workload, target): the kernel's name, target,
 * counts, the best, the workload key and the shapes.
 * export: every workload, target and measurement as text lines (tab-separated, escaped);
 * import: reads what export wrote (duplicates are skipped) in one transaction, *n_imported =
 * measurements added; a malformed line is WEFT_ERR_PARSE "line N: ..." and imports nothing.
 * Imported measurements keep their fields, except that their version gets the prefix
 * WEFT_DB_IMPORTED_PREFIX (once: a re-imported export does not stack it).
 * prune: keeps the `keep` fastest error-free measurements per (workload, target) and deletes
 * the rest (errors included), *n_deleted = rows deleted; it also keeps only the latest cost
 * model of each target and compacts the file (VACUUM, WAL checkpoint). */
weft_status weft_db_ls(weft_db *db, FILE *out);
/* One (workload, target) pair of the database, as ls lists it: op is the kernel's name from its
 * printed TE ("conv_relu_add"), shapes its tensors ("A[64,64] B[64,64] -> C[64,64]"), both ""
 * when the workload row is missing; best is the fastest error-free median in seconds (0: none).
 * The strings are valid during the callback only. */
typedef struct weft_db_group {
    const char *workload, *target, *op, *shapes;
    int total, ok; /* measurements, and those without error */
    double best, flops;
} weft_db_group;
/* Calls fn for every group, ordered by workload and target, until it returns false. fn must
 * not call into the same db. */
weft_status weft_db_groups(weft_db *db, bool (*fn)(void *ud, const weft_db_group *g), void *ud);
weft_status weft_db_export(weft_db *db, FILE *out);
weft_status weft_db_import(weft_db *db, FILE *in, int *n_imported);
weft_status weft_db_prune(weft_db *db, int keep, int *n_deleted);

/* PRAGMA integrity_check: *report is "ok\n" for a sound file, else SQLite's findings
 * (malloc'd, caller frees). */
weft_status weft_db_check(weft_db *db, char **report);

#endif
