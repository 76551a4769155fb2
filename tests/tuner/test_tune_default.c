/* The tuner measures each task's default schedule first, so a tuned kernel is never slower
 * than the default one: after a short tuning run of a matrix-vector product (whose default
 * schedule is rfactor'd), the database holds an error-free measurement of exactly the default
 * schedule's steps, and the best record is at most as slow as it.
 *
 * A candidate faster than the task's best is timed again alternating with that best before it
 * is recorded (tune.c, confirm_claim): resuming from a database whose only record (the default
 * schedule) was made to look slow (1 s), the first candidate measured is such a claim, so the
 * default gets a fresh record (its paired time) right before the candidate's, and every later
 * new best is likewise preceded by a record of the best before it (while the trial budget has
 * room for that extra record: every record before the last batch). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "schedule/schedule.h"
#include "targets/target.h"
#include "tuner/db.h"
#include "tuner/tuner.h"

typedef struct scan {
    const char *want;
    double want_median, best;
    char workload[64], target[200];
} scan;

static bool group(void *ud, const weft_db_group *g)
{
    scan *sc = ud;
    snprintf(sc->workload, sizeof sc->workload, "%s", g->workload);
    snprintf(sc->target, sizeof sc->target, "%s", g->target);
    sc->best = g->best;
    return false;
}

static bool each(void *ud, const char *steps, double median, const char *error)
{
    scan *sc = ud;
    if (median > 0 && (!error || !*error) && !strcmp(steps, sc->want)) sc->want_median = median;
    return true;
}

/* Removes the database at path (and its WAL files) and its directory. */
static void remove_db(const char *dir, const char *path)
{
    unlink(path);
    char wal[80];
    snprintf(wal, sizeof wal, "%s-wal", path);
    unlink(wal);
    snprintf(wal, sizeof wal, "%s-shm", path);
    unlink(wal);
    rmdir(dir);
}

static void test_tuning_measures_the_default_schedule(void **state)
{
    (void)state;
    char dir[] = "/tmp/weft_tune_default_XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/t.db", dir);
    weft_task *tasks = NULL;
    int n = 0;
    assert_int_equal(weft_task_from_op("matmul", 3, (int64_t[]){8, 1, 256}, &tasks, &n), WEFT_OK);
    assert_int_equal(n, 1);
    weft_tune_options o = {.db = path, .trials = 6, .threads = 1, .seed = 3, .batch = 3};
    assert_int_equal(weft_tune_tasks(tasks, n, &o), WEFT_OK);

    const weft_target_ops *L = weft_target_find("llvm");
    weft_target *t = NULL;
    assert_int_equal(L->create(&t), WEFT_OK);
    weft_target_caps caps;
    L->caps(t, &caps);
    weft_schedule *s = NULL;
    assert_int_equal(weft_schedule_create(tasks[0].f, &s), WEFT_OK);
    assert_int_equal(weft_schedule_default(s, &caps), WEFT_OK);
    char *want = weft_schedule_text(s);
    assert_non_null(strstr(want, "rfactor C k.1"));

    weft_db *db = NULL;
    assert_int_equal(weft_db_open(path, false, &db), WEFT_OK);
    scan sc = {.want = want};
    assert_int_equal(weft_db_groups(db, group, &sc), WEFT_OK);
    assert_int_equal(weft_db_each(db, sc.workload, sc.target, each, &sc), WEFT_OK);
    if (!(sc.want_median > 0)) print_error("no measurement of the default schedule:\n%s", want);
    assert_true(sc.want_median > 0);
    assert_true(sc.best > 0 && sc.best <= sc.want_median);
    weft_db_close(db);
    free(want);
    weft_schedule_destroy(s);
    L->destroy(t);
    weft_tasks_free(tasks, n);
    remove_db(dir, path);
}

typedef struct row {
    char *steps;
    double median;
} row;

typedef struct rows {
    row v[256];
    int n;
} rows;

static bool collect(void *ud, const char *steps, double median, const char *error)
{
    rows *r = ud;
    if (r->n < 256) r->v[r->n++] = (row){strdup(steps), median > 0 && (!error || !*error) ? median : 0};
    return true;
}

static void test_claims_are_timed_against_the_best(void **state)
{
    (void)state;
    char dir[] = "/tmp/weft_tune_claim_XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/t.db", dir);
    weft_task *tasks = NULL;
    int n = 0;
    assert_int_equal(weft_task_from_op("matmul", 3, (int64_t[]){32, 64, 48}, &tasks, &n), WEFT_OK);
    weft_tune_options o = {.db = path, .trials = 1, .threads = 1, .seed = 5, .batch = 4};
    assert_int_equal(weft_tune_tasks(tasks, n, &o), WEFT_OK); /* the default schedule only */
    sqlite3 *raw = NULL;
    assert_int_equal(sqlite3_open(path, &raw), SQLITE_OK);
    assert_int_equal(sqlite3_exec(raw, "UPDATE measurements SET median = 1.0", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_changes(raw), 1);
    sqlite3_close(raw);
    o.trials = 16;
    assert_int_equal(weft_tune_tasks(tasks, n, &o), WEFT_OK);

    weft_db *db = NULL;
    assert_int_equal(weft_db_open(path, false, &db), WEFT_OK);
    scan sc = {0};
    assert_int_equal(weft_db_groups(db, group, &sc), WEFT_OK);
    rows r = {.n = 0};
    assert_int_equal(weft_db_each(db, sc.workload, sc.target, collect, &r), WEFT_OK);
    assert_true(r.n >= 4);
    assert_true(r.v[0].median == 1.0);
    /* replay: every record below the best so far (a claim) follows a record of that best */
    const char *best_steps = r.v[0].steps;
    double best = r.v[0].median;
    int claims = 0;
    for (int i = 1; i < r.n; i++) {
        if (r.v[i].median <= 0) continue;
        if (!strcmp(r.v[i].steps, best_steps)) { /* the best's paired time */
            if (r.v[i].median < best) best = r.v[i].median;
            continue;
        }
        /* within a trial budget a claim is confirmed only while the budget has room for the
         * extra record: certain for records before the last batch */
        if (r.v[i].median < best) {
            if (i < o.trials - o.batch && strcmp(r.v[i - 1].steps, best_steps))
                fail_msg("record %d (%g s) beat the best (%g s) without a paired time of it before it", i, r.v[i].median, best);
            claims++;
            best = r.v[i].median;
            best_steps = r.v[i].steps;
        }
    }
    (void)claims;
    /* the first error-free record after the doctored one is the default's paired time (the
     * first candidate measured claimed the best), a real time; the database's best is the
     * replay's */
    int first = 1;
    while (first < r.n && r.v[first].median <= 0) first++;
    assert_true(first < r.n - 1);
    assert_string_equal(r.v[first].steps, r.v[0].steps);
    assert_true(r.v[first].median > 0 && r.v[first].median < 0.5);
    bool found = false;
    char *steps = NULL;
    double median = 0;
    assert_int_equal(weft_db_best(db, sc.workload, sc.target, &found, &steps, &median), WEFT_OK);
    assert_true(found);
    assert_true(median == best);
    free(steps);
    for (int i = 0; i < r.n; i++) free(r.v[i].steps);
    weft_db_close(db);
    weft_tasks_free(tasks, n);
    remove_db(dir, path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_tuning_measures_the_default_schedule),
                                       cmocka_unit_test(test_claims_are_timed_against_the_best)};
    return cmocka_run_group_tests_name("tuner_tune_default", tests, NULL, NULL);
}
