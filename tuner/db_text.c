/* Management of the schedule database (weft db ls/export/import/prune).
 *
 * The export format is one record per line, fields separated by a tab, with tab, newline,
 * carriage return and backslash escaped as \t \n \r \\ inside fields (step text has newlines):
 *     W  key  te  shapes  flops
 *     T  key  name  model  features  cores
 *     M  workload  target  steps  latencies  median  error  time  version
 * Lines starting with '#' and empty lines are comments. Numbers are printed with %.17g so a
 * median survives the round trip exactly: import skips a measurement when one with the same
 * workload, target, steps, time and median exists, which makes import idempotent.
 * Export reads in one read transaction (a consistent snapshot); import writes in one.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ir/error.h"
#include "tuner/db_private.h"
#include "runtime/mem.h"

/* ---- ls --------------------------------------------------------------------------------- */

/* Prints s in a column of `width`; a longer s loses its middle to "..." (a target key keeps
 * both its cpu= head and its cores= tail). */
static void put_column(FILE *out, const char *s, int width)
{
    int n = (int)strlen(s);
    if (n <= width) {
        fprintf(out, "%-*s", width, s);
        return;
    }
    int head = (width - 3) / 2, tail = width - 3 - head;
    fprintf(out, "%.*s...%s", head, s, s + n - tail);
}

/* The groups of `weft db ls`, with each workload's kernel name and shapes. A management query
 * run once per command, so it is prepared here rather than kept open with the tuner's. */
static const char groups_sql[] =
    "SELECT m.workload, m.target, count(*), coalesce(sum(m.median > 0 AND coalesce(m.error, '') = ''), 0), "
    "min(CASE WHEN m.median > 0 AND coalesce(m.error, '') = '' THEN m.median END), max(coalesce(w.flops, 0)), "
    "max(coalesce(w.shapes, '')), max(coalesce(substr(w.te, 1, 200), '')) "
    "FROM measurements AS m LEFT JOIN workloads AS w ON w.key = m.workload "
    "GROUP BY m.workload, m.target ORDER BY m.workload, m.target";

/* The kernel's name from the first line of its printed TE: "func NAME(inputs) -> (outputs)". */
static void te_name(const char *te, char *buf, size_t n)
{
    buf[0] = '\0';
    if (!te || strncmp(te, "func ", 5)) return;
    te += 5;
    size_t len = strcspn(te, "( \n");
    snprintf(buf, n, "%.*s", (int)len, te);
}

weft_status weft_db_groups(weft_db *db, bool (*fn)(void *ud, const weft_db_group *g), void *ud)
{
    if (!db || !fn) return weft_fail(WEFT_ERR_INVALID_ARG, "weft_db_groups: NULL database or callback");
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(db->conn, groups_sql, -1, &s, NULL);
    if (rc != SQLITE_OK) return weft_tuner_db_error(db, rc, "listing measurements");
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        char op[96];
        te_name((const char *)sqlite3_column_text(s, 7), op, sizeof op);
        const char *workload = (const char *)sqlite3_column_text(s, 0), *target = (const char *)sqlite3_column_text(s, 1);
        const char *shapes = (const char *)sqlite3_column_text(s, 6);
        weft_db_group g = {
            .workload = workload ? workload : "",
            .target = target ? target : "",
            .op = op,
            .shapes = shapes ? shapes : "",
            .total = sqlite3_column_int(s, 2),
            .ok = sqlite3_column_int(s, 3),
            .best = sqlite3_column_type(s, 4) == SQLITE_NULL ? 0 : sqlite3_column_double(s, 4),
            .flops = sqlite3_column_double(s, 5),
        };
        if (!fn(ud, &g)) {
            rc = SQLITE_DONE;
            break;
        }
    }
    weft_status st = rc == SQLITE_DONE ? WEFT_OK : weft_tuner_db_error(db, rc, "listing measurements");
    sqlite3_finalize(s);
    return st;
}

enum { LS_OP = 24, LS_TARGET = 36 };

static bool ls_row(void *ud, const weft_db_group *g)
{
    FILE *out = ud;
    put_column(out, *g->op ? g->op : "?", LS_OP);
    fputc(' ', out);
    put_column(out, g->target, LS_TARGET);
    fprintf(out, " %7d %7d", g->total, g->ok);
    if (g->best <= 0) fprintf(out, " %12s %9s", "-", "-");
    else if (g->flops <= 0) fprintf(out, " %12.3f %9s", g->best * 1e6, "-");
    else fprintf(out, " %12.3f %9.2f", g->best * 1e6, g->flops / g->best * 1e-9);
    fprintf(out, "  %-16s  %s\n", g->workload, *g->shapes ? g->shapes : "?");
    return true;
}

weft_status weft_db_ls(weft_db *db, FILE *out)
{
    if (!db || !out) return weft_fail(WEFT_ERR_INVALID_ARG, "weft_db_ls: NULL database or stream");
    put_column(out, "op", LS_OP);
    fputc(' ', out);
    put_column(out, "target", LS_TARGET);
    fprintf(out, " %7s %7s %12s %9s  %-16s  %s\n", "total", "ok", "best (us)", "GFLOP/s", "workload", "shapes");
    weft_status st = weft_db_groups(db, ls_row, out);
    if (st == WEFT_OK && (fflush(out) != 0 || ferror(out)))
        st = weft_fail(WEFT_ERR_IO, "database %s: writing the listing: %s", db->path, strerror(errno));
    return st;
}

/* ---- export ----------------------------------------------------------------------------- */

static void put_escaped(FILE *out, const char *s)
{
    fputc('\t', out);
    for (; s && *s; s++) {
        switch (*s) {
        case '\t': fputs("\\t", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\\': fputs("\\\\", out); break;
        default: fputc(*s, out);
        }
    }
}

static void put_text(FILE *out, sqlite3_stmt *s, int col)
{
    put_escaped(out, (const char *)sqlite3_column_text(s, col));
}

/* Writes every row of one export statement; `kind` selects the line layout. */
static weft_status export_rows(weft_db *db, FILE *out, enum db_stmt which, char kind)
{
    sqlite3_stmt *s = db->stmt[which];
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        fputc(kind, out);
        switch (kind) {
        case 'W':
            for (int c = 0; c < 3; c++)
                put_text(out, s, c);
            fprintf(out, "\t%.17g\n", sqlite3_column_double(s, 3));
            break;
        case 'T':
            for (int c = 0; c < 4; c++)
                put_text(out, s, c);
            fprintf(out, "\t%d\n", sqlite3_column_int(s, 4));
            break;
        default: /* 'M' */
            for (int c = 0; c < 4; c++)
                put_text(out, s, c);
            fprintf(out, "\t%.17g", sqlite3_column_double(s, 4));
            put_text(out, s, 5);
            fprintf(out, "\t%lld", (long long)sqlite3_column_int64(s, 6));
            put_text(out, s, 7);
            fputc('\n', out);
            break;
        }
    }
    weft_status st = rc == SQLITE_DONE ? WEFT_OK : weft_tuner_db_error(db, rc, "exporting");
    weft_tuner_db_reset(s);
    return st;
}

weft_status weft_db_export(weft_db *db, FILE *out)
{
    if (!db || !out) return weft_fail(WEFT_ERR_INVALID_ARG, "weft_db_export: NULL database or stream");
    sqlite3_stmt *begin = db->stmt[DB_STMT_BEGIN_READ];
    int rc = sqlite3_step(begin);
    weft_status st = rc == SQLITE_DONE ? WEFT_OK : weft_tuner_db_error(db, rc, "exporting");
    sqlite3_reset(begin);
    if (st != WEFT_OK) return st;
    fprintf(out, "# weft schedule database export (schema %d, weft %s)\n", WEFT_DB_SCHEMA_VERSION, weft_version());
    st = export_rows(db, out, DB_STMT_EXPORT_WORKLOADS, 'W');
    if (st == WEFT_OK) st = export_rows(db, out, DB_STMT_EXPORT_TARGETS, 'T');
    if (st == WEFT_OK) st = export_rows(db, out, DB_STMT_EXPORT_MEASUREMENTS, 'M');
    weft_tuner_db_rollback(db); /* a read transaction: nothing to commit */
    if (st == WEFT_OK && (fflush(out) != 0 || ferror(out)))
        st = weft_fail(WEFT_ERR_IO, "database %s: writing the export: %s", db->path, strerror(errno));
    return st;
}

/* ---- import ----------------------------------------------------------------------------- */

enum { MAX_FIELDS = 9 };

/* Splits line at tabs into at most MAX_FIELDS + 1 fields (one more reveals "too many"). */
static int split_fields(char *line, char **fields)
{
    int n = 0;
    fields[n++] = line;
    for (char *p = line; *p; p++) {
        if (*p != '\t') continue;
        *p = '\0';
        if (n == MAX_FIELDS + 1) return n;
        fields[n++] = p + 1;
    }
    return n;
}

/* Undoes put_escaped in place; returns the offending character of a bad escape, else 0. */
static int unescape(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++) {
        if (*r != '\\') {
            *w++ = *r;
            continue;
        }
        switch (r[1]) {
        case 't': *w++ = '\t'; break;
        case 'n': *w++ = '\n'; break;
        case 'r': *w++ = '\r'; break;
        case '\\': *w++ = '\\'; break;
        default: *w = '\0'; return r[1] ? r[1] : '$';
        }
        r++;
    }
    *w = '\0';
    return 0;
}

static bool parse_double(const char *s, double *v)
{
    char *end = NULL;
    errno = 0;
    *v = strtod(s, &end);
    return *s && !*end && errno != ERANGE;
}

static bool parse_int64(const char *s, int64_t *v)
{
    char *end = NULL;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    *v = x;
    return *s && !*end && errno != ERANGE;
}

/* Latencies are empty or space-separated numbers. */
static bool valid_latencies(const char *s)
{
    while (*s) {
        char *end = NULL;
        strtod(s, &end);
        if (end == s) return false;
        s = end;
        if (*s == ' ') s++;
        else if (*s) return false;
    }
    return true;
}

typedef struct import_ctx {
    weft_db *db;
    long line;    /* 1-based line number, for messages */
    int n_new;    /* measurements inserted */
} import_ctx;

static weft_status import_workload(import_ctx *ic, char **f)
{
    double flops;
    if (!*f[1]) return weft_fail(WEFT_ERR_PARSE, "line %ld: W line with an empty key", ic->line);
    if (!parse_double(f[4], &flops))
        return weft_fail(WEFT_ERR_PARSE, "line %ld: workload %s: flops '%s' is not a number", ic->line, f[1], f[4]);
    weft_db *db = ic->db;
    sqlite3_stmt *s = db->stmt[DB_STMT_PUT_WORKLOAD];
    int rc = weft_tuner_db_bind_text(s, 1, f[1]);
    if (rc == SQLITE_OK) rc = weft_tuner_db_bind_text(s, 2, f[2]);
    if (rc == SQLITE_OK) rc = weft_tuner_db_bind_text(s, 3, f[3]);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(s, 4, flops);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 5, (sqlite3_int64)time(NULL));
    if (rc == SQLITE_OK) rc = sqlite3_step(s);
    char op[64];
    snprintf(op, sizeof op, "import, line %ld", ic->line);
    weft_status st = rc == SQLITE_DONE ? WEFT_OK : weft_tuner_db_error(db, rc, op);
    weft_tuner_db_reset(s);
    return st;
}

static weft_status import_target(import_ctx *ic, char **f)
{
    int64_t cores;
    if (!*f[1]) return weft_fail(WEFT_ERR_PARSE, "line %ld: T line with an empty key", ic->line);
    if (!parse_int64(f[5], &cores) || cores < 0 || cores > 1 << 20)
        return weft_fail(WEFT_ERR_PARSE, "line %ld: target %s: cores '%s' is not a core count", ic->line, f[1], f[5]);
    weft_db *db = ic->db;
    sqlite3_stmt *s = db->stmt[DB_STMT_PUT_TARGET];
    int rc = SQLITE_OK;
    for (int i = 1; i <= 4 && rc == SQLITE_OK; i++)
        rc = weft_tuner_db_bind_text(s, i, f[i]);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(s, 5, (int)cores);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 6, (sqlite3_int64)time(NULL));
    if (rc == SQLITE_OK) rc = sqlite3_step(s);
    char op[64];
    snprintf(op, sizeof op, "import, line %ld", ic->line);
    weft_status st = rc == SQLITE_DONE ? WEFT_OK : weft_tuner_db_error(db, rc, op);
    weft_tuner_db_reset(s);
    return st;
}

/* Is this exact measurement (workload, target, steps, time, median) already stored? */
static weft_status measurement_exists(import_ctx *ic, char **f, double median, int64_t t, bool *exists)
{
    weft_db *db = ic->db;
    sqlite3_stmt *s = db->stmt[DB_STMT_FIND_MEASUREMENT];
    int rc = weft_tuner_db_bind_text(s, 1, f[1]);
    if (rc == SQLITE_OK) rc = weft_tuner_db_bind_text(s, 2, f[2]);
    if (rc == SQLITE_OK) rc = sqlite3_bind_double(s, 3, median);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(s, 4, (sqlite3_int64)t);
    if (rc == SQLITE_OK) rc = weft_tuner_db_bind_text(s, 5, f[3]);
    if (rc == SQLITE_OK) rc = sqlite3_step(s);
    *exists = rc == SQLITE_ROW;
    char op[64];
    snprintf(op, sizeof op, "import, line %ld", ic->line);
    weft_status st = rc == SQLITE_ROW || rc == SQLITE_DONE ? WEFT_OK : weft_tuner_db_error(db, rc, op);
    weft_tuner_db_reset(s);
    return st;
}

static weft_status import_measurement(import_ctx *ic, char **f)
{
    double median;
    int64_t t;
    if (!*f[1] || !*f[2])
        return weft_fail(WEFT_ERR_PARSE, "line %ld: M line with an empty workload or target", ic->line);
    if (!valid_latencies(f[4]))
        return weft_fail(WEFT_ERR_PARSE, "line %ld: latencies '%s' are not space-separated numbers", ic->line, f[4]);
    if (!parse_double(f[5], &median) || isnan(median))
        return weft_fail(WEFT_ERR_PARSE, "line %ld: median '%s' is not a number", ic->line, f[5]);
    if (!parse_int64(f[7], &t))
        return weft_fail(WEFT_ERR_PARSE, "line %ld: time '%s' is not an integer (unix seconds)", ic->line, f[7]);
    bool exists = false;
    weft_status st = measurement_exists(ic, f, median, t, &exists);
    if (st != WEFT_OK || exists) return st;
    char op[64];
    snprintf(op, sizeof op, "import, line %ld", ic->line);
    /* marked as imported: never checked on this machine (apply.c checks it before serving it) */
    const size_t np = strlen(WEFT_DB_IMPORTED_PREFIX);
    char *version = NULL;
    if (strncmp(f[8], WEFT_DB_IMPORTED_PREFIX, np) != 0) {
        size_t nv = strlen(f[8]);
        if (!(version = weft_malloc(np + nv + 1)))
            return weft_fail(WEFT_ERR_NOMEM, "line %ld: out of memory", ic->line);
        memcpy(version, WEFT_DB_IMPORTED_PREFIX, np);
        memcpy(version + np, f[8], nv + 1);
    }
    st = weft_tuner_db_insert_measurement(ic->db, f[1], f[2], f[3], f[4], median, f[6], t, version ? version : f[8], op);
    free(version);
    if (st == WEFT_ERR_DB && sqlite3_extended_errcode(ic->db->conn) == SQLITE_CONSTRAINT_FOREIGNKEY)
        return weft_fail(WEFT_ERR_PARSE, "line %ld: measurement of workload %s on target %s, but no W or T line "
                                         "(nor stored row) defines them before it",
                         ic->line, f[1], f[2]);
    if (st == WEFT_OK) ic->n_new++;
    return st;
}

/* One line (without its newline); comments and empty lines are skipped. */
static weft_status import_line(import_ctx *ic, char *line)
{
    if (!*line || *line == '#') return WEFT_OK;
    char *f[MAX_FIELDS + 1];
    int n = split_fields(line, f);
    int want = 0;
    if (strcmp(f[0], "W") == 0) want = 5;
    else if (strcmp(f[0], "T") == 0) want = 6;
    else if (strcmp(f[0], "M") == 0) want = 9;
    else return weft_fail(WEFT_ERR_PARSE, "line %ld: unknown record '%.20s' (expected W, T or M)", ic->line, f[0]);
    if (n != want)
        return weft_fail(WEFT_ERR_PARSE, "line %ld: a %s line has %d tab-separated fields, got %s%d", ic->line, f[0],
                         want, n > MAX_FIELDS ? "more than " : "", n > MAX_FIELDS ? MAX_FIELDS : n);
    for (int i = 1; i < n; i++) {
        int bad = unescape(f[i]);
        if (bad)
            return weft_fail(WEFT_ERR_PARSE, "line %ld: field %d: bad escape '\\%c' (expected \\t \\n \\r or \\\\)",
                             ic->line, i + 1, bad);
    }
    if (want == 5) return import_workload(ic, f);
    if (want == 6) return import_target(ic, f);
    return import_measurement(ic, f);
}

weft_status weft_db_import(weft_db *db, FILE *in, int *n_imported)
{
    if (n_imported) *n_imported = 0;
    if (!db || !in) return weft_fail(WEFT_ERR_INVALID_ARG, "weft_db_import: NULL database or stream");
    weft_status st = weft_tuner_db_begin_write(db, "import");
    if (st != WEFT_OK) return st;
    import_ctx ic = {.db = db};
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while (st == WEFT_OK && (len = getline(&line, &cap, in)) != -1) {
        ic.line++;
        if (len > 0 && line[len - 1] == '\n') line[--len] = '\0';
        if (len > 0 && line[len - 1] == '\r') line[--len] = '\0';
        if ((size_t)len != strlen(line)) {
            st = weft_fail(WEFT_ERR_PARSE, "line %ld: NUL byte in the line", ic.line);
            break;
        }
        st = import_line(&ic, line);
    }
    if (st == WEFT_OK && ferror(in))
        st = weft_fail(WEFT_ERR_IO, "import into %s: reading line %ld: %s", db->path, ic.line + 1, strerror(errno));
    free(line);
    if (st != WEFT_OK) {
        weft_tuner_db_rollback(db);
        return st;
    }
    st = weft_tuner_db_commit(db, "import");
    if (st == WEFT_OK && n_imported) *n_imported = ic.n_new;
    return st;
}

/* ---- prune ------------------------------------------------------------------------------ */

weft_status weft_db_prune(weft_db *db, int keep, int *n_deleted)
{
    if (n_deleted) *n_deleted = 0;
    if (!db || keep < 0) return weft_fail(WEFT_ERR_INVALID_ARG, "weft_db_prune: NULL database or keep %d < 0", keep);
    const char *op = "pruning measurements";
    weft_status st = weft_tuner_db_begin_write(db, op);
    if (st != WEFT_OK) return st;
    sqlite3_stmt *s = db->stmt[DB_STMT_PRUNE];
    int rc = sqlite3_bind_int(s, 1, keep);
    if (rc == SQLITE_OK) rc = sqlite3_step(s);
    int n = sqlite3_changes(db->conn);
    if (rc != SQLITE_DONE) st = weft_tuner_db_error(db, rc, op);
    weft_tuner_db_reset(s);
    if (st == WEFT_OK) {
        s = db->stmt[DB_STMT_PRUNE_MODELS];
        rc = sqlite3_step(s);
        if (rc != SQLITE_DONE) st = weft_tuner_db_error(db, rc, "pruning cost models");
        weft_tuner_db_reset(s);
    }
    if (st != WEFT_OK) {
        weft_tuner_db_rollback(db);
        return st;
    }
    st = weft_tuner_db_commit(db, op);
    if (st != WEFT_OK) return st;
    if (n_deleted) *n_deleted = n;
    /* give the space back: compact the file (VACUUM), then fold the WAL into it and truncate
     * the WAL; a busy VACUUM or checkpoint (another process reading) is left for later */
    s = db->stmt[DB_STMT_VACUUM];
    rc = sqlite3_step(s);
    if (rc != SQLITE_DONE && (rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED)
        st = weft_tuner_db_error(db, rc, "vacuuming after prune");
    weft_tuner_db_reset(s);
    s = db->stmt[DB_STMT_CHECKPOINT];
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    }
    if (st == WEFT_OK && rc != SQLITE_DONE && (rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED)
        st = weft_tuner_db_error(db, rc, "checkpointing after prune");
    weft_tuner_db_reset(s);
    return st;
}
