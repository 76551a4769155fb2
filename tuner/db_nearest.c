/* Records of other machines (tuner/tuner.h, "nearest machine"): the best error-free record of
 * a workload under every target key but one, and the targets that have a stored cost model.
 * Both are read-only queries run a few times per model compile or tuning run, so they are
 * prepared per call rather than kept with the tuner's statements. Ranking the machines by how
 * near they are to this one is target_key.c's business. */
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "tuner/db_private.h"
#include "tuner/tuner.h"
#include "runtime/mem.h"

/* SQLite's min() aggregate takes the bare columns (steps) from the row holding the minimum. */
static const char best_per_target_sql[] =
    "SELECT m.target, coalesce(t.features, ''), m.steps, min(m.median) FROM measurements AS m "
    "LEFT JOIN targets AS t ON t.key = m.target "
    "WHERE m.workload = ?1 AND m.target <> ?2 AND m.median > 0 AND coalesce(m.error, '') = '' "
    "GROUP BY m.target ORDER BY m.target";

static const char model_targets_sql[] =
    "SELECT c.target, coalesce(t.features, '') FROM cost_models AS c LEFT JOIN targets AS t ON t.key = c.target "
    "WHERE c.target <> ?1 GROUP BY c.target ORDER BY c.target";

/* Runs sql with ?1 (and ?2 when b) bound; calls row(ud, stmt) per row. */
static weft_status each_row(weft_db *db, const char *sql, const char *a, const char *b, const char *op,
                            weft_status (*row)(void *ud, sqlite3_stmt *st), void *ud)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db->conn, sql, -1, &st, NULL);
    if (rc == SQLITE_OK) rc = weft_tuner_db_bind_text(st, 1, a);
    if (rc == SQLITE_OK && b) rc = weft_tuner_db_bind_text(st, 2, b);
    weft_status status = WEFT_OK;
    while (rc == SQLITE_OK || rc == SQLITE_ROW) {
        rc = sqlite3_step(st);
        if (rc != SQLITE_ROW) break;
        status = row(ud, st);
        if (status != WEFT_OK) break;
    }
    if (status == WEFT_OK && rc != SQLITE_DONE) status = weft_tuner_db_error(db, rc, op);
    sqlite3_finalize(st);
    return status;
}

static const char *col_text(sqlite3_stmt *st, int i)
{
    const char *s = (const char *)sqlite3_column_text(st, i);
    return s ? s : "";
}

typedef struct list_ctx {
    const weft_tuner_target *t;
    weft_tuner_nearest *v;
    int n, cap;
    bool with_steps;
} list_ctx;

static weft_status add_row(void *ud, sqlite3_stmt *st)
{
    list_ctx *c = ud;
    double dist = weft_tuner_target_distance(c->t, col_text(st, 0), col_text(st, 1));
    if (dist < 0) return WEFT_OK; /* another backend: never served */
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 8;
        weft_tuner_nearest *v = weft_realloc(c->v, sizeof *v * (size_t)cap);
        if (!v) return weft_fail(WEFT_ERR_NOMEM, "nearest records: out of memory");
        c->v = v;
        c->cap = cap;
    }
    weft_tuner_nearest *r = &c->v[c->n];
    memset(r, 0, sizeof *r);
    snprintf(r->target, sizeof r->target, "%s", col_text(st, 0));
    r->distance = dist;
    if (c->with_steps) {
        r->median = sqlite3_column_double(st, 3);
        r->steps = weft_strdup(col_text(st, 2));
        if (!r->steps) return weft_fail(WEFT_ERR_NOMEM, "nearest records: out of memory");
    }
    c->n++;
    return WEFT_OK;
}

static int cmp_nearest(const void *a, const void *b)
{
    const weft_tuner_nearest *x = a, *y = b;
    if (x->distance != y->distance) return x->distance < y->distance ? -1 : 1;
    if (x->median != y->median) return x->median < y->median ? -1 : 1;
    return strcmp(x->target, y->target);
}

static weft_status finish_list(weft_status st, list_ctx *c, weft_tuner_nearest **out, int *n)
{
    if (st != WEFT_OK) {
        weft_tuner_nearest_free(c->v, c->n);
        return st;
    }
    if (c->n > 1) qsort(c->v, (size_t)c->n, sizeof *c->v, cmp_nearest);
    *out = c->v;
    *n = c->n;
    return WEFT_OK;
}

weft_status weft_tuner_nearest_records(weft_db *db, const weft_tuner_target *t, const char *workload,
                                       weft_tuner_nearest **out, int *n)
{
    *out = NULL;
    *n = 0;
    if (!db || !t || !workload) return weft_fail(WEFT_ERR_INVALID_ARG, "nearest records: NULL argument");
    list_ctx c = {.t = t, .with_steps = true};
    char op[96];
    snprintf(op, sizeof op, "looking up records of other machines for workload %.20s", workload);
    weft_status st = each_row(db, best_per_target_sql, workload, t->key, op, add_row, &c);
    return finish_list(st, &c, out, n);
}

weft_status weft_tuner_nearest_models(weft_db *db, const weft_tuner_target *t, weft_tuner_nearest **out, int *n)
{
    *out = NULL;
    *n = 0;
    if (!db || !t) return weft_fail(WEFT_ERR_INVALID_ARG, "nearest cost models: NULL argument");
    list_ctx c = {.t = t, .with_steps = false};
    weft_status st = each_row(db, model_targets_sql, t->key, NULL, "listing the cost models of other machines", add_row, &c);
    return finish_list(st, &c, out, n);
}

void weft_tuner_nearest_free(weft_tuner_nearest *v, int n)
{
    for (int i = 0; v && i < n; i++) free(v[i].steps);
    free(v);
}
