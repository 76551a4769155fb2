/* The schedule database (tuner/db.h): open and schema check, transactions, inserts and the
 * queries the tuner runs. db_text.c holds ls/export/import/prune.
 *
 * Open never writes to a file it refuses: the checks (is it SQLite, is user_version newer,
 * does it carry weft's meta marker) are reads inside one read transaction, and only then is
 * WAL mode switched on and, for an empty file, the schema created in one write transaction
 * (CREATE ... IF NOT EXISTS, so two processes creating the same file at once both succeed).
 *
 * Locking: sqlite3_busy_timeout waits up to busy_ms (5000, or WEFT_DB_BUSY_MS) for a lock;
 * when BEGIN IMMEDIATE still finds the database locked, it is retried DB_RETRIES times with a
 * short sleep and a short timeout, so a caller learns "locked" after about busy_ms + 1 s.
 * In WAL mode, once BEGIN IMMEDIATE holds the write lock, the statements inside cannot be
 * refused for locking, so only BEGIN and COMMIT are retried.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ir/error.h"
#include "tuner/db_private.h"
#include "runtime/mem.h"

enum {
    DB_BUSY_MS_DEFAULT = 5000,
    DB_RETRIES = 3,
};

static const char *const stmt_sql[DB_STMT_COUNT] = {
    [DB_STMT_BEGIN_WRITE] = "BEGIN IMMEDIATE",
    [DB_STMT_BEGIN_READ] = "BEGIN",
    [DB_STMT_COMMIT] = "COMMIT",
    [DB_STMT_ROLLBACK] = "ROLLBACK",
    [DB_STMT_PUT_WORKLOAD] = "INSERT OR IGNORE INTO workloads(key, te, shapes, flops, created) "
                             "VALUES (?1, ?2, ?3, ?4, ?5)",
    [DB_STMT_PUT_TARGET] = "INSERT OR IGNORE INTO targets(key, name, model, features, cores, created) "
                           "VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    [DB_STMT_PUT_MEASUREMENT] = "INSERT INTO measurements(workload, target, steps, latencies, median, error, "
                                "time, version) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    [DB_STMT_FIND_MEASUREMENT] = "SELECT 1 FROM measurements WHERE workload = ?1 AND target = ?2 "
                                 "AND median = ?3 AND time = ?4 AND steps = ?5 LIMIT 1",
    [DB_STMT_BEST] = "SELECT steps, median, version FROM measurements WHERE workload = ?1 AND target = ?2 "
                     "AND median > 0 AND coalesce(error, '') = '' ORDER BY median, id LIMIT 1",
    [DB_STMT_HAS_STEPS] = "SELECT 1 FROM measurements WHERE workload = ?1 AND target = ?2 AND steps = ?3 "
                          "AND median > 0 AND coalesce(error, '') = '' LIMIT 1",
    [DB_STMT_COUNT_ROWS] = "SELECT count(*), coalesce(sum(median > 0 AND coalesce(error, '') = ''), 0) "
                           "FROM measurements WHERE workload = ?1 AND target = ?2",
    [DB_STMT_EACH] = "SELECT steps, median, error FROM measurements WHERE workload = ?1 AND target = ?2 "
                     "ORDER BY time, id",
    [DB_STMT_SAVE_MODEL] = "INSERT INTO cost_models(target, model, time) VALUES (?1, ?2, ?3)",
    [DB_STMT_LOAD_MODEL] = "SELECT model FROM cost_models WHERE target = ?1 ORDER BY id DESC LIMIT 1",
    [DB_STMT_LS] = "SELECT m.workload, m.target, count(*), "
                   "coalesce(sum(m.median > 0 AND coalesce(m.error, '') = ''), 0), "
                   "min(CASE WHEN m.median > 0 AND coalesce(m.error, '') = '' THEN m.median END), "
                   "max(coalesce(w.flops, 0)) "
                   "FROM measurements AS m LEFT JOIN workloads AS w ON w.key = m.workload "
                   "GROUP BY m.workload, m.target ORDER BY m.workload, m.target",
    [DB_STMT_EXPORT_WORKLOADS] = "SELECT key, te, shapes, flops FROM workloads ORDER BY key",
    [DB_STMT_EXPORT_TARGETS] = "SELECT key, name, model, features, cores FROM targets ORDER BY key",
    [DB_STMT_EXPORT_MEASUREMENTS] = "SELECT workload, target, steps, latencies, median, error, time, version "
                                    "FROM measurements ORDER BY id",
    /* every error-free row ranked by speed within its (workload, target); position > keep goes */
    [DB_STMT_PRUNE] = "DELETE FROM measurements WHERE id NOT IN (SELECT id FROM (SELECT id, row_number() "
                      "OVER (PARTITION BY workload, target ORDER BY median, id) AS pos FROM measurements "
                      "WHERE median > 0 AND coalesce(error, '') = '') WHERE pos <= ?1)",
    /* only the latest cost model of each target is ever loaded */
    [DB_STMT_PRUNE_MODELS] = "DELETE FROM cost_models WHERE id NOT IN (SELECT max(id) FROM cost_models GROUP BY target)",
    [DB_STMT_CHECKPOINT] = "PRAGMA wal_checkpoint(TRUNCATE)",
    [DB_STMT_VACUUM] = "VACUUM",
};

/* Created in one transaction on an empty file; user_version is set alongside (see init). */
static const char schema_sql[] =
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS workloads(key TEXT PRIMARY KEY, te TEXT NOT NULL, shapes TEXT NOT NULL,"
    " flops REAL NOT NULL, created INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS targets(key TEXT PRIMARY KEY, name TEXT NOT NULL, model TEXT NOT NULL,"
    " features TEXT NOT NULL, cores INTEGER NOT NULL, created INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS measurements(id INTEGER PRIMARY KEY,"
    " workload TEXT NOT NULL REFERENCES workloads(key), target TEXT NOT NULL REFERENCES targets(key),"
    " steps TEXT NOT NULL, latencies TEXT NOT NULL, median REAL NOT NULL, error TEXT,"
    " time INTEGER NOT NULL, version TEXT NOT NULL);"
    "CREATE INDEX IF NOT EXISTS measurements_best ON measurements(workload, target, median);"
    "CREATE TABLE IF NOT EXISTS cost_models(id INTEGER PRIMARY KEY, target TEXT NOT NULL,"
    " model BLOB NOT NULL, time INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS cost_models_target ON cost_models(target, id);"
    "INSERT OR IGNORE INTO meta(key, value) VALUES ('weft_schema', 'weft-schedule-db');";

static const char schema_marker[] = "weft-schedule-db";

static bool is_busy(int rc) { return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED; }

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

weft_status weft_tuner_db_error(weft_db *db, int rc, const char *op)
{
    int ext = sqlite3_extended_errcode(db->conn);
    if (ext == SQLITE_OK) ext = rc;
    const char *msg = sqlite3_errmsg(db->conn);
    if (is_busy(ext) || is_busy(rc))
        return weft_fail(WEFT_ERR_DB_BUSY, "database %s is locked by another process (%s: %s, SQLite code %d)",
                         db->path, op, msg, ext);
    if ((ext & 0xff) == SQLITE_NOMEM) return weft_fail(WEFT_ERR_NOMEM, "database %s: %s: out of memory", db->path, op);
    return weft_fail(WEFT_ERR_DB, "database %s: %s failed: %s (SQLite code %d)", db->path, op, msg, ext);
}

void weft_tuner_db_reset(sqlite3_stmt *st)
{
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

int weft_tuner_db_bind_text(sqlite3_stmt *st, int i, const char *s)
{
    if (!s) return sqlite3_bind_null(st, i);
    return sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
}

/* Steps a statement without results (BEGIN, COMMIT) up to 1 + DB_RETRIES times: the first
 * attempt waits the full busy timeout, the retries a short one after a short sleep. */
static weft_status step_retrying(weft_db *db, sqlite3_stmt *st, const char *op)
{
    int retry_ms = db->busy_ms / 20;
    retry_ms = retry_ms < 10 ? 10 : retry_ms > 250 ? 250 : retry_ms;
    weft_status status = WEFT_OK;
    for (int attempt = 0;; attempt++) {
        int rc = sqlite3_step(st);
        if (rc == SQLITE_DONE) break;
        if (!is_busy(rc) || attempt == DB_RETRIES) {
            status = weft_tuner_db_error(db, rc, op);
            break;
        }
        sqlite3_reset(st);
        sqlite3_busy_timeout(db->conn, retry_ms);
        sleep_ms(50 * (attempt + 1));
    }
    sqlite3_reset(st);
    sqlite3_busy_timeout(db->conn, db->busy_ms);
    return status;
}

weft_status weft_tuner_db_begin_write(weft_db *db, const char *op)
{
    return step_retrying(db, db->stmt[DB_STMT_BEGIN_WRITE], op);
}

void weft_tuner_db_rollback(weft_db *db)
{
    /* a ROLLBACK that fails (out of memory) leaves the transaction open: try again, so the
     * connection is not left inside it for the next statement */
    for (int attempt = 0; attempt < 3 && !sqlite3_get_autocommit(db->conn); attempt++) {
        sqlite3_step(db->stmt[DB_STMT_ROLLBACK]);
        sqlite3_reset(db->stmt[DB_STMT_ROLLBACK]);
    }
}

weft_status weft_tuner_db_commit(weft_db *db, const char *op)
{
    weft_status st = step_retrying(db, db->stmt[DB_STMT_COMMIT], op);
    if (st != WEFT_OK) weft_tuner_db_rollback(db);
    return st;
}

/* ---- open and schema check ------------------------------------------------------------ */

/* WEFT_DB_BUSY_MS: milliseconds to wait for a lock before the retries (tests set it low). */
static int busy_ms_from_env(void)
{
    const char *s = getenv("WEFT_DB_BUSY_MS");
    if (!s || !*s) return DB_BUSY_MS_DEFAULT;
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < 0 || v > 3600 * 1000) return DB_BUSY_MS_DEFAULT;
    return (int)v;
}

/* One-row, one-column integer query with constant SQL; returns the SQLite code. */
static int query_int(weft_db *db, const char *sql, int64_t *v)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db->conn, sql, -1, &st, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            *v = sqlite3_column_int64(st, 0);
            rc = SQLITE_OK;
        }
    }
    if (rc != SQLITE_OK) {
        /* keep the step's error message: finalize would report it again but not change it */
        sqlite3_finalize(st);
        return rc;
    }
    return sqlite3_finalize(st);
}

/* A short description of a foreign file's tables for the refusal message. */
static void foreign_tables(weft_db *db, char *buf, size_t size)
{
    snprintf(buf, size, "?");
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db->conn,
                           "SELECT group_concat(name, ', ') FROM (SELECT name FROM sqlite_master "
                           "WHERE type = 'table' ORDER BY name LIMIT 6)",
                           -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        snprintf(buf, size, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
}

/* Does the meta table say this is a weft schedule database? A query that could not run for
 * want of memory is that error (SQLITE_NOMEM in *rc), not a foreign file. */
static bool has_marker(weft_db *db, int *rc)
{
    sqlite3_stmt *st = NULL;
    bool ok = false;
    *rc = sqlite3_prepare_v2(db->conn, "SELECT value FROM meta WHERE key = 'weft_schema'", -1, &st, NULL);
    if (*rc == SQLITE_OK && (*rc = sqlite3_step(st)) == SQLITE_ROW) {
        const unsigned char *v = sqlite3_column_text(st, 0);
        if (!v && sqlite3_errcode(db->conn) == SQLITE_NOMEM) *rc = SQLITE_NOMEM;
        ok = v && strcmp((const char *)v, schema_marker) == 0;
    }
    sqlite3_finalize(st);
    if (!ok && (*rc & 0xff) != SQLITE_NOMEM) *rc = SQLITE_OK;
    return ok;
}

/* Read-only checks, in one read transaction so a concurrent creator is seen all or nothing.
 * *empty: no schema objects at all (a new file), to be initialized by the caller. */
static weft_status check_schema_locked(weft_db *db, bool *empty)
{
    int64_t version = 0, n_objects = 0;
    int rc = query_int(db, "PRAGMA user_version", &version);
    if (rc == SQLITE_OK) rc = query_int(db, "SELECT count(*) FROM sqlite_master", &n_objects);
    if ((rc & 0xff) == SQLITE_NOTADB || (rc & 0xff) == SQLITE_CORRUPT)
        return weft_fail(WEFT_ERR_DB, "%s is not a weft schedule database (%s)", db->path, sqlite3_errmsg(db->conn));
    if (rc != SQLITE_OK) return weft_tuner_db_error(db, rc, "reading the schema");
    if (version > WEFT_DB_SCHEMA_VERSION)
        return weft_fail(WEFT_ERR_DB, "%s has schema version %lld, newer than this weft (%d): upgrade weft",
                         db->path, (long long)version, WEFT_DB_SCHEMA_VERSION);
    *empty = n_objects == 0;
    if (*empty) return WEFT_OK;
    if (!has_marker(db, &rc)) {
        if (rc != SQLITE_OK) return weft_tuner_db_error(db, rc, "reading the schema");
        char tables[160];
        foreign_tables(db, tables, sizeof tables);
        return weft_fail(WEFT_ERR_DB, "%s is a SQLite database of another program (no weft schema marker; tables: %s)",
                         db->path, tables);
    }
    if (version != WEFT_DB_SCHEMA_VERSION)
        return weft_fail(WEFT_ERR_DB, "%s has schema version %lld, expected %d: the file is damaged", db->path,
                         (long long)version, WEFT_DB_SCHEMA_VERSION);
    return WEFT_OK;
}

static weft_status check_schema(weft_db *db, bool *empty)
{
    sqlite3_stmt *begin = db->stmt[DB_STMT_BEGIN_READ];
    int rc = sqlite3_step(begin);
    sqlite3_reset(begin);
    if (rc != SQLITE_DONE) return weft_tuner_db_error(db, rc, "reading the schema");
    weft_status st = check_schema_locked(db, empty);
    weft_tuner_db_rollback(db); /* read-only: nothing to keep */
    if (st == WEFT_OK && !sqlite3_get_autocommit(db->conn))
        st = weft_fail(WEFT_ERR_NOMEM, "database %s: ending the schema check's read transaction failed: out of memory",
                       db->path);
    return st;
}

static weft_status exec_sql(weft_db *db, const char *sql, const char *op)
{
    int rc = sqlite3_exec(db->conn, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? WEFT_OK : weft_tuner_db_error(db, rc, op);
}

static weft_status prepare_range(weft_db *db, int from, int to)
{
    for (int i = from; i < to; i++) {
        int rc = sqlite3_prepare_v3(db->conn, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &db->stmt[i], NULL);
        if (rc != SQLITE_OK) return weft_tuner_db_error(db, rc, "preparing statements");
    }
    return WEFT_OK;
}

/* PRAGMA journal_mode = WAL. On a new file several processes may race to switch it, and the
 * loser is told SQLITE_BUSY at once (waiting could deadlock), so retry with a short, jittered
 * sleep until busy_ms has passed. A file already in WAL mode needs no lock. */
static weft_status set_wal(weft_db *db)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int attempt = 0;; attempt++) {
        int rc = sqlite3_exec(db->conn, "PRAGMA journal_mode = WAL", NULL, NULL, NULL);
        if (rc == SQLITE_OK) return WEFT_OK;
        clock_gettime(CLOCK_MONOTONIC, &t);
        double waited_ms = (double)(t.tv_sec - t0.tv_sec) * 1e3 + (double)(t.tv_nsec - t0.tv_nsec) * 1e-6;
        if (!is_busy(rc) || waited_ms > db->busy_ms) return weft_tuner_db_error(db, rc, "switching to WAL mode");
        sleep_ms(5 + (int)((unsigned)getpid() * 7u + (unsigned)attempt * 13u) % 20);
    }
}

/* The schema of a new file, in one transaction (a crash leaves the file empty, not half-made). */
static weft_status init_schema(weft_db *db)
{
    const char *op = "creating the schema";
    weft_status st = weft_tuner_db_begin_write(db, op);
    if (st != WEFT_OK) return st;
    char pragma[64];
    snprintf(pragma, sizeof pragma, "PRAGMA user_version = %d", WEFT_DB_SCHEMA_VERSION);
    st = exec_sql(db, schema_sql, op);
    if (st == WEFT_OK) st = exec_sql(db, pragma, op);
    if (st != WEFT_OK) {
        weft_tuner_db_rollback(db);
        return st;
    }
    return weft_tuner_db_commit(db, op);
}

weft_status weft_db_open(const char *path, bool create, weft_db **out)
{
    if (!out) return weft_fail(WEFT_ERR_INVALID_ARG, "weft_db_open: out is NULL");
    *out = NULL;
    if (!path || !*path) return weft_fail(WEFT_ERR_INVALID_ARG, "weft_db_open: empty database path");
    struct stat sb;
    if (!create && stat(path, &sb) != 0)
        return weft_fail(WEFT_ERR_IO, "cannot open schedule database %s: %s", path, strerror(errno));

    weft_status st = WEFT_OK;
    weft_db *db = weft_calloc(1, sizeof *db);
    if (!db || !(db->path = weft_strdup(path))) {
        st = weft_fail(WEFT_ERR_NOMEM, "opening schedule database %s: out of memory", path);
        goto fail;
    }
    db->busy_ms = busy_ms_from_env();
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
    int rc = sqlite3_open_v2(path, &db->conn, flags, NULL);
    if (rc != SQLITE_OK) {
        if (!db->conn)
            st = weft_fail(WEFT_ERR_NOMEM, "opening schedule database %s: out of memory", path);
        else if ((rc & 0xff) == SQLITE_CANTOPEN)
            st = weft_fail(WEFT_ERR_IO, "cannot open schedule database %s: %s", path, sqlite3_errmsg(db->conn));
        else
            st = weft_tuner_db_error(db, rc, "opening");
        goto fail;
    }
    sqlite3_extended_result_codes(db->conn, 1);
    sqlite3_busy_timeout(db->conn, db->busy_ms);

    bool empty = false;
    st = prepare_range(db, DB_STMT_BEGIN_WRITE, DB_STMT_ROLLBACK + 1);
    if (st == WEFT_OK) st = check_schema(db, &empty);
    /* from here on the file is ours: WAL first (it must be set outside a transaction) */
    if (st == WEFT_OK) st = set_wal(db);
    if (st == WEFT_OK) st = exec_sql(db, "PRAGMA synchronous = NORMAL", "setting synchronous mode");
    if (st == WEFT_OK) st = exec_sql(db, "PRAGMA foreign_keys = ON", "enabling foreign keys");
    if (st == WEFT_OK && empty) st = init_schema(db);
    if (st == WEFT_OK) st = prepare_range(db, DB_STMT_ROLLBACK + 1, DB_STMT_COUNT);
    if (st != WEFT_OK) goto fail;
    *out = db;
    return WEFT_OK;
fail:
    /* a refused file in WAL mode (a newer weft's) must not be checkpointed into on close */
    if (db && db->conn) sqlite3_db_config(db->conn, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)NULL);
    weft_db_close(db);
    return st;
}

void weft_db_close(weft_db *db)
{
    if (!db) return;
    for (int i = 0; i < DB_STMT_COUNT; i++)
        sqlite3_finalize(db->stmt[i]);
    sqlite3_close(db->conn);
    free(db->path);
    free(db);
}

/* ---- inserts ---------------------------------------------------------------------------- */

weft_status weft_db_put_workload(weft_db *db, const weft_db_workload *w)
{
    if (!db || !w || !w->key || !*w->key)
        return weft_fail(WEFT_ERR_INVALID_ARG, "weft_db_put_workload: NULL database, workload or key");
    char op[160];
    snprintf(op, sizeof op, "storing workload %s", w->key);
    weft_status st = weft_tuner_db_begin_write(db, op);
    if (st != WEFT_OK) return st;
    sqlite3_stmt *s = db->stmt[DB_STMT_PUT_WORKLOAD];
    int rc = weft_tuner_db_bind_text(s, 1, w->key);
    if (rc == SQLITE_OK) rc = weft_tuner_db_bind_text(s, 2, w->te ? w->te : "");
    if (rc == SQLITE_OK) rc = weft_tuner_db_bind_text(s, 3, w->shapes ? w->shapes : "");
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(s, 4, isfinite(w->flops) ? w->flops : 0.0);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 5, (sqlite3_int64)time(NULL));
    if (rc == SQLITE_OK) rc = sqlite3_step(s);
    if (rc != SQLITE_DONE) st = weft_tuner_db_error(db, rc, op);
    weft_tuner_db_reset(s);
    if (st != WEFT_OK) {
        weft_tuner_db_rollback(db);
        return st;
    }
    return weft_tuner_db_commit(db, op);
}

weft_status weft_db_put_target(weft_db *db, const weft_db_target *t)
{
    if (!db || !t || !t->key || !*t->key)
        return weft_fail(WEFT_ERR_INVALID_ARG, "weft_db_put_target: NULL database, target or key");
    char op[200];
    snprintf(op, sizeof op, "storing target %s", t->key);
    weft_status st = weft_tuner_db_begin_write(db, op);
    if (st != WEFT_OK) return st;
    sqlite3_stmt *s = db->stmt[DB_STMT_PUT_TARGET];
    int rc = weft_tuner_db_bind_text(s, 1, t->key);
    if (rc == SQLITE_OK) rc = weft_tuner_db_bind_text(s, 2, t->name ? t->name : "");
    if (rc == SQLITE_OK) rc = weft_tuner_db_bind_text(s, 3, t->model ? t->model : "");
    if (rc == SQLITE_OK) rc = weft_tuner_db_bind_text(s, 4, t->features ? t->features : "");
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(s, 5, t->cores);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 6, (sqlite3_int64)time(NULL));
    if (rc == SQLITE_OK) rc = sqlite3_step(s);
    if (rc != SQLITE_DONE) st = weft_tuner_db_error(db, rc, op);
    weft_tuner_db_reset(s);
    if (st != WEFT_OK) {
        weft_tuner_db_rollback(db);
        return st;
    }
    return weft_tuner_db_commit(db, op);
}

weft_status weft_tuner_db_insert_measurement(weft_db *db, const char *workload, const char *target,
                                             const char *steps, const char *latencies, double median,
                                             const char *error, int64_t time, const char *version,
                                             const char *op)
{
    sqlite3_stmt *s = db->stmt[DB_STMT_PUT_MEASUREMENT];
    int rc = weft_tuner_db_bind_text(s, 1, workload);
    if (rc == SQLITE_OK) rc = weft_tuner_db_bind_text(s, 2, target);
    if (rc == SQLITE_OK) rc = weft_tuner_db_bind_text(s, 3, steps);
    if (rc == SQLITE_OK) rc = weft_tuner_db_bind_text(s, 4, latencies);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(s, 5, median);
    if (rc == SQLITE_OK) rc = weft_tuner_db_bind_text(s, 6, error && *error ? error : NULL);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 7, (sqlite3_int64)time);
    if (rc == SQLITE_OK) rc = weft_tuner_db_bind_text(s, 8, version);
    if (rc == SQLITE_OK) rc = sqlite3_step(s);
    weft_status st = WEFT_OK;
    if (rc != SQLITE_DONE && sqlite3_extended_errcode(db->conn) == SQLITE_CONSTRAINT_FOREIGNKEY)
        st = weft_fail(WEFT_ERR_DB,
                       "database %s: %s: workload %s or target %s is not in the database (put the workload "
                       "and the target before their measurements)",
                       db->path, op, workload, target);
    else if (rc != SQLITE_DONE)
        st = weft_tuner_db_error(db, rc, op);
    weft_tuner_db_reset(s);
    return st;
}

/* "l0 l1 ..." with enough digits for a microsecond-scale latency to survive the text. */
static char *latency_text(const double *lat, int n)
{
    size_t cap = (size_t)(n > 0 ? n : 0) * 26 + 1, len = 0;
    char *buf = weft_malloc(cap);
    if (!buf) return NULL;
    buf[0] = '\0';
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(buf + len, cap - len, i ? " %.9g" : "%.9g", lat[i]);
    return buf;
}

weft_status weft_db_put_measurement(weft_db *db, const weft_db_measurement *m)
{
    if (!db || !m || !m->workload || !m->target || !m->steps)
        return weft_fail(WEFT_ERR_INVALID_ARG, "weft_db_put_measurement: NULL database, measurement, workload, "
                                               "target or steps");
    if (m->n_latencies < 0 || (m->n_latencies > 0 && !m->latencies))
        return weft_fail(WEFT_ERR_INVALID_ARG, "weft_db_put_measurement: %d latencies at %p", m->n_latencies,
                         (const void *)m->latencies);
    if (isnan(m->median))
        return weft_fail(WEFT_ERR_INVALID_ARG, "weft_db_put_measurement: median is NaN (use <= 0 and an error "
                                               "for a failed candidate)");
    char op[256];
    snprintf(op, sizeof op, "storing a measurement of workload %s on target %s", m->workload, m->target);
    char *lat = latency_text(m->latencies, m->n_latencies);
    if (!lat) return weft_fail(WEFT_ERR_NOMEM, "database %s: %s: out of memory", db->path, op);
    weft_status st = weft_tuner_db_begin_write(db, op);
    if (st == WEFT_OK) {
        st = weft_tuner_db_insert_measurement(db, m->workload, m->target, m->steps, lat, m->median, m->error,
                                              (int64_t)time(NULL), weft_version(), op);
        if (st == WEFT_OK)
            st = weft_tuner_db_commit(db, op);
        else
            weft_tuner_db_rollback(db);
    }
    free(lat);
    return st;
}

/* ---- queries ---------------------------------------------------------------------------- */

static int bind_pair(sqlite3_stmt *s, const char *workload, const char *target)
{
    int rc = weft_tuner_db_bind_text(s, 1, workload);
    return rc == SQLITE_OK ? weft_tuner_db_bind_text(s, 2, target) : rc;
}

weft_status weft_db_best(weft_db *db, const char *workload, const char *target, bool *found, char **steps,
                         double *median)
{
    return weft_db_best_record(db, workload, target, found, steps, median, NULL);
}

weft_status weft_db_best_record(weft_db *db, const char *workload, const char *target, bool *found, char **steps,
                                double *median, bool *imported)
{
    if (imported) *imported = false;
    if (found) *found = false;
    if (steps) *steps = NULL;
    if (median) *median = 0.0;
    if (!db || !workload || !target || !found || !steps)
        return weft_fail(WEFT_ERR_INVALID_ARG, "weft_db_best: NULL database, key or result pointer");
    sqlite3_stmt *s = db->stmt[DB_STMT_BEST];
    weft_status st = WEFT_OK;
    int rc = bind_pair(s, workload, target);
    if (rc == SQLITE_OK) rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        const char *text = (const char *)sqlite3_column_text(s, 0);
        *steps = weft_strdup(text ? text : "");
        if (!*steps)
            st = weft_fail(WEFT_ERR_NOMEM, "database %s: best schedule of %s: out of memory", db->path, workload);
        else
            *found = true;
        if (median) *median = sqlite3_column_double(s, 1);
        const char *version = (const char *)sqlite3_column_text(s, 2);
        if (imported)
            *imported = version && !strncmp(version, WEFT_DB_IMPORTED_PREFIX, strlen(WEFT_DB_IMPORTED_PREFIX));
    } else if (rc != SQLITE_DONE) {
        st = weft_tuner_db_error(db, rc, "looking up the best schedule");
    }
    weft_tuner_db_reset(s);
    return st;
}

weft_status weft_db_has_steps(weft_db *db, const char *workload, const char *target, const char *steps, bool *found)
{
    if (found) *found = false;
    if (!db || !workload || !target || !steps || !found)
        return weft_fail(WEFT_ERR_INVALID_ARG, "weft_db_has_steps: NULL database, key, steps or result pointer");
    sqlite3_stmt *s = db->stmt[DB_STMT_HAS_STEPS];
    weft_status st = WEFT_OK;
    int rc = bind_pair(s, workload, target);
    if (rc == SQLITE_OK) rc = weft_tuner_db_bind_text(s, 3, steps);
    if (rc == SQLITE_OK) rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) *found = true;
    else if (rc != SQLITE_DONE) st = weft_tuner_db_error(db, rc, "looking up a schedule's measurement");
    weft_tuner_db_reset(s);
    return st;
}

weft_status weft_db_count(weft_db *db, const char *workload, const char *target, int *total, int *ok)
{
    if (total) *total = 0;
    if (ok) *ok = 0;
    if (!db || !workload || !target)
        return weft_fail(WEFT_ERR_INVALID_ARG, "weft_db_count: NULL database or key");
    sqlite3_stmt *s = db->stmt[DB_STMT_COUNT_ROWS];
    weft_status st = WEFT_OK;
    int rc = bind_pair(s, workload, target);
    if (rc == SQLITE_OK) rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        if (total) *total = sqlite3_column_int(s, 0);
        if (ok) *ok = sqlite3_column_int(s, 1);
    } else {
        st = weft_tuner_db_error(db, rc, "counting measurements");
    }
    weft_tuner_db_reset(s);
    return st;
}

weft_status weft_db_each(weft_db *db, const char *workload, const char *target,
                         bool (*fn)(void *ud, const char *steps, double median, const char *error), void *ud)
{
    if (!db || !workload || !target || !fn)
        return weft_fail(WEFT_ERR_INVALID_ARG, "weft_db_each: NULL database, key or callback");
    sqlite3_stmt *s = db->stmt[DB_STMT_EACH];
    weft_status st = WEFT_OK;
    int rc = bind_pair(s, workload, target);
    while (rc == SQLITE_OK || rc == SQLITE_ROW) {
        rc = sqlite3_step(s);
        if (rc != SQLITE_ROW) break;
        const char *steps = (const char *)sqlite3_column_text(s, 0);
        double median = sqlite3_column_double(s, 1);
        const char *error = (const char *)sqlite3_column_text(s, 2);
        if (!fn(ud, steps ? steps : "", median, error)) {
            rc = SQLITE_DONE;
            break;
        }
    }
    if (rc != SQLITE_DONE) st = weft_tuner_db_error(db, rc, "reading measurements");
    weft_tuner_db_reset(s);
    return st;
}

/* ---- cost models ------------------------------------------------------------------------ */

weft_status weft_db_save_model(weft_db *db, const char *target, const void *buf, size_t len)
{
    if (!db || !target || (len > 0 && !buf))
        return weft_fail(WEFT_ERR_INVALID_ARG, "weft_db_save_model: NULL database, target or buffer");
    char op[200];
    snprintf(op, sizeof op, "storing the cost model of target %s", target);
    weft_status st = weft_tuner_db_begin_write(db, op);
    if (st != WEFT_OK) return st;
    sqlite3_stmt *s = db->stmt[DB_STMT_SAVE_MODEL];
    int rc = weft_tuner_db_bind_text(s, 1, target);
    /* a non-NULL pointer makes an empty model a zero-length BLOB rather than NULL */
    if (rc == SQLITE_OK) rc = sqlite3_bind_blob64(s, 2, len ? buf : "", len, SQLITE_STATIC);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 3, (sqlite3_int64)time(NULL));
    if (rc == SQLITE_OK) rc = sqlite3_step(s);
    if (rc != SQLITE_DONE) st = weft_tuner_db_error(db, rc, op);
    weft_tuner_db_reset(s);
    if (st != WEFT_OK) {
        weft_tuner_db_rollback(db);
        return st;
    }
    return weft_tuner_db_commit(db, op);
}

weft_status weft_db_load_model(weft_db *db, const char *target, bool *found, void **buf, size_t *len)
{
    if (found) *found = false;
    if (buf) *buf = NULL;
    if (len) *len = 0;
    if (!db || !target || !found || !buf || !len)
        return weft_fail(WEFT_ERR_INVALID_ARG, "weft_db_load_model: NULL database, target or result pointer");
    sqlite3_stmt *s = db->stmt[DB_STMT_LOAD_MODEL];
    weft_status st = WEFT_OK;
    int rc = weft_tuner_db_bind_text(s, 1, target);
    if (rc == SQLITE_OK) rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        const void *blob = sqlite3_column_blob(s, 0);
        size_t n = (size_t)sqlite3_column_bytes(s, 0);
        void *copy = weft_malloc(n ? n : 1);
        if (!copy) {
            st = weft_fail(WEFT_ERR_NOMEM, "database %s: loading a %zu-byte cost model: out of memory", db->path, n);
        } else {
            if (n) memcpy(copy, blob, n);
            *buf = copy;
            *len = n;
            *found = true;
        }
    } else if (rc != SQLITE_DONE) {
        st = weft_tuner_db_error(db, rc, "loading the cost model");
    }
    weft_tuner_db_reset(s);
    return st;
}
