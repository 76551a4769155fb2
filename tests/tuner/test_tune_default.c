/* The tuner measures each task's default schedule first, so a tuned kernel is never slower
 * than the default one: after a short tuning run of a matrix-vector product (whose default
 * schedule is rfactor'd), the database holds an error-free measurement of exactly the default
 * schedule's steps, and the best record is at most as slow as it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    unlink(path);
    char wal[80];
    snprintf(wal, sizeof wal, "%s-wal", path);
    unlink(wal);
    snprintf(wal, sizeof wal, "%s-shm", path);
    unlink(wal);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_tuning_measures_the_default_schedule)};
    return cmocka_run_group_tests_name("tuner_tune_default", tests, NULL, NULL);
}
