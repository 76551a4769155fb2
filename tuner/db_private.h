/* Private to tuner/db*.c: the connection struct, the table of prepared statements, and the
 * helpers that every operation shares (error conversion, write transactions with retry on a
 * locked database). db.c opens, checks the schema and answers queries; db_text.c holds the
 * management commands (ls, export, import, prune).
 *
 * Rules kept by every operation: statements are prepared once at open and reset (bindings
 * cleared) before the operation returns, on every path; a write holds BEGIN IMMEDIATE ...
 * COMMIT around all of its statements, and on failure the error message is formatted before
 * the ROLLBACK (which would clear sqlite3_errmsg).
 */
#ifndef WEFT_TUNER_DB_PRIVATE_H
#define WEFT_TUNER_DB_PRIVATE_H
#include <sqlite3.h>

#include "tuner/db.h"

enum db_stmt {
    DB_STMT_BEGIN_WRITE,
    DB_STMT_BEGIN_READ,
    DB_STMT_COMMIT,
    DB_STMT_ROLLBACK,
    DB_STMT_PUT_WORKLOAD,
    DB_STMT_PUT_TARGET,
    DB_STMT_PUT_MEASUREMENT,
    DB_STMT_FIND_MEASUREMENT,
    DB_STMT_BEST,
    DB_STMT_HAS_STEPS,
    DB_STMT_COUNT_ROWS,
    DB_STMT_EACH,
    DB_STMT_SAVE_MODEL,
    DB_STMT_LOAD_MODEL,
    DB_STMT_LS,
    DB_STMT_EXPORT_WORKLOADS,
    DB_STMT_EXPORT_TARGETS,
    DB_STMT_EXPORT_MEASUREMENTS,
    DB_STMT_PRUNE,
    DB_STMT_PRUNE_MODELS,
    DB_STMT_CHECKPOINT,
    DB_STMT_VACUUM,
    DB_STMT_COUNT
};

struct weft_db {
    sqlite3 *conn;
    char *path;                        /* as given to weft_db_open, for messages */
    int busy_ms;                       /* busy timeout of a first attempt (WEFT_DB_BUSY_MS) */
    sqlite3_stmt *stmt[DB_STMT_COUNT]; /* prepared at open, finalized at close */
};

/* Converts the connection's current SQLite error (extended code + errmsg) into a weft status
 * and message naming the path and `op`. SQLITE_BUSY/LOCKED become WEFT_ERR_DB_BUSY. */
weft_status weft_tuner_db_error(weft_db *db, int rc, const char *op);
/* BEGIN IMMEDIATE, retried a few times with a short sleep after the busy timeout runs out. */
weft_status weft_tuner_db_begin_write(weft_db *db, const char *op);
/* COMMIT (retried on busy); on failure the transaction is rolled back. */
weft_status weft_tuner_db_commit(weft_db *db, const char *op);
/* ROLLBACK when a transaction is open; never changes the thread's error message. */
void weft_tuner_db_rollback(weft_db *db);
/* Resets a statement and clears its bindings (its result code is that of the last step,
 * already handled by the caller). */
void weft_tuner_db_reset(sqlite3_stmt *st);

/* Binds a C string (NULL binds SQL NULL) as transient text. */
int weft_tuner_db_bind_text(sqlite3_stmt *st, int i, const char *s);
/* Inserts a measurement row with an explicit time and version (NULL error is stored as NULL;
 * latencies is already the space-separated text). Runs inside the caller's transaction. */
weft_status weft_tuner_db_insert_measurement(weft_db *db, const char *workload, const char *target,
                                             const char *steps, const char *latencies, double median,
                                             const char *error, int64_t time, const char *version,
                                             const char *op);

#endif
