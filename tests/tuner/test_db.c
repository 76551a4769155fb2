/* The schedule database: target-aware queries, errors never chosen as best, export/import
 * round trip, prune, cost model blobs, refusal of foreign/newer/non-database files without
 * touching them, two writer processes at once, a writer killed with SIGKILL, and a locked
 * database reported as WEFT_ERR_DB_BUSY. Every test works in its own mkdtemp directory. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tuner/db.h"

enum { N_TEXT = 4, N_BYTES = 2 };

typedef struct fixture {
    char dir[64];
    char path[128];          /* dir/test.db, the database most tests use */
    weft_db *db, *db2;       /* closed by teardown */
    sqlite3 *raw;            /* a direct SQLite connection, closed by teardown */
    char *text[N_TEXT];      /* open_memstream buffers */
    size_t text_len[N_TEXT];
    unsigned char *bytes[N_BYTES];
} fixture;

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    if (!fx) return -1;
    snprintf(fx->dir, sizeof fx->dir, "/tmp/weft-test-db-XXXXXX");
    if (!mkdtemp(fx->dir)) {
        free(fx);
        return -1;
    }
    snprintf(fx->path, sizeof fx->path, "%s/test.db", fx->dir);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    unsetenv("WEFT_DB_BUSY_MS");
    weft_db_close(fx->db);
    weft_db_close(fx->db2);
    sqlite3_close(fx->raw);
    for (int i = 0; i < N_TEXT; i++)
        free(fx->text[i]);
    for (int i = 0; i < N_BYTES; i++)
        free(fx->bytes[i]);
    DIR *d = opendir(fx->dir);
    if (d) {
        struct dirent *e;
        char p[400];
        while ((e = readdir(d))) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            snprintf(p, sizeof p, "%s/%s", fx->dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(fx->dir);
    free(fx);
    return 0;
}

static const char *W1 = "00000000000000a1", *W2 = "00000000000000b2";
static const char *TA = "cpu=znver5;features=0123456789abcdef;cores=2", *TB = "cpu=sm_90;features=none;cores=132";

static void put_keys(weft_db *db)
{
    weft_db_workload w1 = {W1, "C[i,j] += A[i,k] * B[k,j]", "A[64,64] B[64,64] -> C[64,64]", 2.0 * 64 * 64 * 64};
    weft_db_workload w2 = {W2, "D[i] = relu(E[i])", "E[1024] -> D[1024]", 1024};
    weft_db_target ta = {TA, "llvm", "AMD EPYC 9R45", "avx512f,avx512bw", 2};
    weft_db_target tb = {TB, "cuda", "NVIDIA H100", "sm_90", 132};
    assert_int_equal(weft_db_put_workload(db, &w1), WEFT_OK);
    assert_int_equal(weft_db_put_workload(db, &w2), WEFT_OK);
    assert_int_equal(weft_db_put_target(db, &ta), WEFT_OK);
    assert_int_equal(weft_db_put_target(db, &tb), WEFT_OK);
    /* idempotent */
    assert_int_equal(weft_db_put_workload(db, &w1), WEFT_OK);
    assert_int_equal(weft_db_put_target(db, &ta), WEFT_OK);
}

static weft_status put_m(weft_db *db, const char *w, const char *t, const char *steps, double median,
                         const char *error)
{
    double lat[3] = {median * 1.01, median, median * 0.99};
    weft_db_measurement m = {w, t, steps, lat, median > 0 ? 3 : 0, median, error};
    return weft_db_put_measurement(db, &m);
}

static void open_db(fixture *fx)
{
    assert_int_equal(weft_db_open(fx->path, true, &fx->db), WEFT_OK);
    assert_non_null(fx->db);
}

/* ---- queries ----------------------------------------------------------------------------- */

typedef struct collected {
    int n;
    char steps[16][64];
    double median[16];
    bool has_error[16];
    int stop_after; /* 0: never stop */
} collected;

static bool collect(void *ud, const char *steps, double median, const char *error)
{
    collected *c = ud;
    if (c->n < 16) {
        snprintf(c->steps[c->n], sizeof c->steps[0], "%s", steps);
        c->median[c->n] = median;
        c->has_error[c->n] = error && *error;
    }
    c->n++;
    return c->stop_after == 0 || c->n < c->stop_after;
}

static void test_db_best_is_fastest_error_free_on_its_target(void **state)
{
    fixture *fx = *state;
    open_db(fx);
    weft_db *db = fx->db;
    put_keys(db);
    assert_int_equal(put_m(db, W1, TA, "split i 8\nvectorize i.1", 3e-3, NULL), WEFT_OK);
    assert_int_equal(put_m(db, W1, TA, "split i 16", 1e-3, ""), WEFT_OK);
    assert_int_equal(put_m(db, W1, TA, "split i 32", 0.5e-3, "wrong result: max abs 3.2"), WEFT_OK);
    assert_int_equal(put_m(db, W1, TA, "split k 3", -1, "compile: bad factor"), WEFT_OK);
    assert_int_equal(put_m(db, W1, TA, "split j 4", 2e-3, NULL), WEFT_OK);
    /* the same workload is much faster on B: never an answer for A */
    assert_int_equal(put_m(db, W1, TB, "bind i blockIdx.x", 1e-5, NULL), WEFT_OK);

    bool found = false;
    char *steps = NULL;
    double median = 0;
    assert_int_equal(weft_db_best(db, W1, TA, &found, &steps, &median), WEFT_OK);
    assert_true(found);
    assert_string_equal(steps, "split i 16");
    assert_true(median == 1e-3);
    free(steps);
    assert_int_equal(weft_db_best(db, W1, TB, &found, &steps, &median), WEFT_OK);
    assert_true(found);
    assert_string_equal(steps, "bind i blockIdx.x");
    free(steps);
    assert_int_equal(weft_db_best(db, W2, TA, &found, &steps, &median), WEFT_OK);
    assert_false(found);
    assert_null(steps);

    int total = -1, ok = -1;
    assert_int_equal(weft_db_count(db, W1, TA, &total, &ok), WEFT_OK);
    assert_int_equal(total, 5);
    assert_int_equal(ok, 3);
    assert_int_equal(weft_db_count(db, W1, TB, &total, &ok), WEFT_OK);
    assert_int_equal(total, 1);
    assert_int_equal(weft_db_count(db, W2, TB, &total, &ok), WEFT_OK);
    assert_int_equal(total, 0);

    collected c = {0};
    assert_int_equal(weft_db_each(db, W1, TA, collect, &c), WEFT_OK);
    assert_int_equal(c.n, 5);
    assert_string_equal(c.steps[0], "split i 8\nvectorize i.1");
    assert_string_equal(c.steps[1], "split i 16");
    assert_string_equal(c.steps[2], "split i 32");
    assert_string_equal(c.steps[3], "split k 3");
    assert_string_equal(c.steps[4], "split j 4");
    assert_false(c.has_error[0]);
    assert_false(c.has_error[1]);
    assert_true(c.has_error[2]);
    assert_true(c.has_error[3]);
    assert_true(c.median[3] <= 0);
    collected stop = {.stop_after = 2};
    assert_int_equal(weft_db_each(db, W1, TA, collect, &stop), WEFT_OK);
    assert_int_equal(stop.n, 2);

    /* a measurement of an unknown workload is refused, with a hint */
    assert_int_equal(put_m(db, "ffffffffffffffff", TA, "x", 1e-3, NULL), WEFT_ERR_DB);
    assert_non_null(strstr(weft_last_error(), "put the workload"));
    assert_non_null(strstr(weft_last_error(), fx->path));
}

static void test_db_errors_are_recorded_never_best(void **state)
{
    fixture *fx = *state;
    open_db(fx);
    put_keys(fx->db);
    assert_int_equal(put_m(fx->db, W2, TA, "parallel i", 1e-6, "wrong result"), WEFT_OK);
    assert_int_equal(put_m(fx->db, W2, TA, "unroll i", 0, "timeout after 10 s"), WEFT_OK);
    assert_int_equal(put_m(fx->db, W2, TA, "vectorize i", -1, NULL), WEFT_OK); /* median <= 0 alone */
    bool found = true;
    char *steps = NULL;
    assert_int_equal(weft_db_best(fx->db, W2, TA, &found, &steps, NULL), WEFT_OK);
    assert_false(found);
    assert_null(steps);
    int total = 0, ok = -1;
    assert_int_equal(weft_db_count(fx->db, W2, TA, &total, &ok), WEFT_OK);
    assert_int_equal(total, 3);
    assert_int_equal(ok, 0);
}

/* ---- export, import, ls, prune ------------------------------------------------------------ */

static void fill_for_export(weft_db *db)
{
    put_keys(db);
    assert_int_equal(put_m(db, W1, TA, "split i 8\tfactor\nreorder i.0 k \\ j", 3e-3, NULL), WEFT_OK);
    assert_int_equal(put_m(db, W1, TA, "split i 16", 1.234567890123e-3, NULL), WEFT_OK);
    assert_int_equal(put_m(db, W1, TA, "split i 0", -1, "parse: factor 0\nat step 1\t(\\)"), WEFT_OK);
    assert_int_equal(put_m(db, W1, TB, "bind i threadIdx.x", 7e-6, NULL), WEFT_OK);
    assert_int_equal(put_m(db, W2, TA, "vectorize i", 2e-7, NULL), WEFT_OK);
}

/* Runs fn(db, stream) into fx->text[i] and returns the text. */
static const char *capture(fixture *fx, int i, weft_db *db, weft_status (*fn)(weft_db *, FILE *))
{
    free(fx->text[i]);
    fx->text[i] = NULL;
    FILE *f = open_memstream(&fx->text[i], &fx->text_len[i]);
    assert_non_null(f);
    weft_status st = fn(db, f);
    fclose(f);
    assert_int_equal(st, WEFT_OK);
    return fx->text[i];
}

static void test_db_export_import_reproduces_ls(void **state)
{
    fixture *fx = *state;
    open_db(fx);
    fill_for_export(fx->db);
    const char *ls1 = capture(fx, 0, fx->db, weft_db_ls);
    const char *exp1 = capture(fx, 1, fx->db, weft_db_export);
    assert_non_null(strstr(ls1, "best (us)"));
    assert_non_null(strstr(ls1, "GFLOP/s"));
    assert_non_null(strstr(ls1, W1));
    assert_non_null(strstr(ls1, "...")); /* the long target key is shortened */
    assert_non_null(strstr(exp1, "\\n"));

    char path2[160];
    snprintf(path2, sizeof path2, "%s/copy.db", fx->dir);
    assert_int_equal(weft_db_open(path2, true, &fx->db2), WEFT_OK);
    FILE *in = fmemopen((void *)exp1, strlen(exp1), "r");
    assert_non_null(in);
    int n = -1;
    weft_status st = weft_db_import(fx->db2, in, &n);
    fclose(in);
    assert_int_equal(st, WEFT_OK);
    assert_int_equal(n, 5);
    assert_string_equal(capture(fx, 2, fx->db2, weft_db_ls), ls1);
    /* the same text, except that each measurement's version (its last field) is marked imported */
    char want[8192] = "", *w = want;
    for (const char *line = exp1; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line + 1) : strlen(line);
        const char *tab = line;
        for (const char *p = line; p < line + len; p++)
            if (*p == '\t') tab = p;
        if (line[0] == 'M') w += snprintf(w, sizeof want - (size_t)(w - want), "%.*s" WEFT_DB_IMPORTED_PREFIX "%.*s",
                                          (int)(tab + 1 - line), line, (int)(line + len - tab - 1), tab + 1);
        else w += snprintf(w, sizeof want - (size_t)(w - want), "%.*s", (int)len, line);
        line += len;
    }
    const char *exp2 = capture(fx, 3, fx->db2, weft_db_export);
    assert_non_null(strstr(exp2, "\t" WEFT_DB_IMPORTED_PREFIX));
    assert_string_equal(exp2, want);

    /* importing the same again adds nothing */
    in = fmemopen((void *)exp1, strlen(exp1), "r");
    st = weft_db_import(fx->db2, in, &n);
    fclose(in);
    assert_int_equal(st, WEFT_OK);
    assert_int_equal(n, 0);
    assert_string_equal(capture(fx, 2, fx->db2, weft_db_ls), ls1);

    /* the escaped step text came back exactly */
    bool found = false;
    char *steps = NULL;
    double median = 0;
    collected c = {0};
    assert_int_equal(weft_db_each(fx->db2, W1, TA, collect, &c), WEFT_OK);
    assert_int_equal(c.n, 3);
    assert_string_equal(c.steps[0], "split i 8\tfactor\nreorder i.0 k \\ j");
    assert_int_equal(weft_db_best(fx->db2, W1, TA, &found, &steps, &median), WEFT_OK);
    assert_true(found);
    assert_true(median == 1.234567890123e-3);
    free(steps);
}

/* Imports text into fx->db and returns the status. */
static weft_status import_text(fixture *fx, const char *text)
{
    FILE *in = fmemopen((void *)text, strlen(text), "r");
    assert_non_null(in);
    int n = -1;
    weft_status st = weft_db_import(fx->db, in, &n);
    fclose(in);
    if (st != WEFT_OK) assert_int_equal(n, 0);
    return st;
}

static void test_db_import_rejects_malformed_lines(void **state)
{
    fixture *fx = *state;
    open_db(fx);
    static const char ok_head[] = "# comment\nW\tw9\tte\tshapes\t100\nT\tt9\tllvm\tcpu\tavx2\t4\n";
    static const struct {
        const char *tail;
        const char *msg;
    } cases[] = {
        {"X\tw9\n", "line 5: unknown record"},
        {"M\tw9\tt9\tsteps\t1e-3\t1e-3\t\t1700000000\n", "line 5: a M line has 9"},
        {"M\tw9\tt9\tsteps\t1e-3\t1e-3\t\t1700000000\t0.1.0\textra\n", "more than"},
        {"M\tw9\tt9\tst\\qeps\t1e-3\t1e-3\t\t1700000000\t0.1.0\n", "bad escape '\\q'"},
        {"M\tw9\tt9\tsteps\t1e-3\tfast\t\t1700000000\t0.1.0\n", "median 'fast'"},
        {"M\tw9\tt9\tsteps\t1e-3 x\t1e-3\t\t1700000000\t0.1.0\n", "latencies"},
        {"M\tw9\tt9\tsteps\t1e-3\t1e-3\t\tyesterday\t0.1.0\n", "time 'yesterday'"},
        {"M\tnope\tt9\tsteps\t1e-3\t1e-3\t\t1700000000\t0.1.0\n", "no W or T line"},
        {"W\tw8\tte\tshapes\tmany\n", "flops 'many'"},
        {"T\tt8\tllvm\tcpu\tavx2\tfour\n", "cores 'four'"},
    };
    char text[512];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* a good M line first: the failed import must roll it back too */
        snprintf(text, sizeof text, "%sM\tw9\tt9\tgood\t1e-3\t1e-3\t\t1700000000\t0.1.0\n%s", ok_head,
                 cases[i].tail);
        assert_int_equal(import_text(fx, text), WEFT_ERR_PARSE);
        if (!strstr(weft_last_error(), cases[i].msg)) fail_msg("case %zu: '%s'", i, weft_last_error());
        int total = -1;
        assert_int_equal(weft_db_count(fx->db, "w9", "t9", &total, NULL), WEFT_OK);
        assert_int_equal(total, 0);
    }
    snprintf(text, sizeof text, "%sM\tw9\tt9\tgood\t1e-3\t1e-3\t\t1700000000\t0.1.0\n", ok_head);
    assert_int_equal(import_text(fx, text), WEFT_OK);
    int total = -1;
    assert_int_equal(weft_db_count(fx->db, "w9", "t9", &total, NULL), WEFT_OK);
    assert_int_equal(total, 1);
}

static void test_db_prune_keeps_fastest_error_free(void **state)
{
    fixture *fx = *state;
    open_db(fx);
    put_keys(fx->db);
    char steps[32];
    for (int i = 10; i >= 1; i--) {
        snprintf(steps, sizeof steps, "split i %d", i);
        assert_int_equal(put_m(fx->db, W1, TA, steps, i * 1e-3, NULL), WEFT_OK);
    }
    for (int i = 0; i < 3; i++)
        assert_int_equal(put_m(fx->db, W1, TA, "bad", i ? -1 : 1e-6, "error"), WEFT_OK);
    assert_int_equal(put_m(fx->db, W1, TB, "b1", 2e-3, NULL), WEFT_OK);
    assert_int_equal(put_m(fx->db, W1, TB, "b2", 1e-3, NULL), WEFT_OK);

    int n = -1;
    assert_int_equal(weft_db_prune(fx->db, 3, &n), WEFT_OK);
    assert_int_equal(n, 7 + 3);
    int total = 0, ok = 0;
    assert_int_equal(weft_db_count(fx->db, W1, TA, &total, &ok), WEFT_OK);
    assert_int_equal(total, 3);
    assert_int_equal(ok, 3);
    collected c = {0};
    assert_int_equal(weft_db_each(fx->db, W1, TA, collect, &c), WEFT_OK);
    assert_int_equal(c.n, 3);
    assert_string_equal(c.steps[0], "split i 3"); /* oldest of the kept */
    assert_string_equal(c.steps[2], "split i 1");
    assert_int_equal(weft_db_count(fx->db, W1, TB, &total, &ok), WEFT_OK);
    assert_int_equal(total, 2);

    /* the WAL was checkpointed and truncated */
    char wal[160];
    snprintf(wal, sizeof wal, "%s-wal", fx->path);
    struct stat sb;
    if (stat(wal, &sb) == 0) assert_int_equal(sb.st_size, 0);

    assert_int_equal(weft_db_prune(fx->db, 0, &n), WEFT_OK);
    assert_int_equal(n, 5);
    assert_int_equal(weft_db_prune(fx->db, -1, &n), WEFT_ERR_INVALID_ARG);
}

static void test_db_cost_model_blob_round_trip(void **state)
{
    fixture *fx = *state;
    open_db(fx);
    unsigned char blob[1000];
    for (size_t i = 0; i < sizeof blob; i++)
        blob[i] = (unsigned char)(i * 7 % 256); /* zeros included */
    assert_int_equal(weft_db_save_model(fx->db, TA, "old", 3), WEFT_OK);
    assert_int_equal(weft_db_save_model(fx->db, TA, blob, sizeof blob), WEFT_OK);
    bool found = false;
    void *buf = NULL;
    size_t len = 0;
    assert_int_equal(weft_db_load_model(fx->db, TA, &found, &buf, &len), WEFT_OK);
    assert_true(found);
    assert_int_equal(len, sizeof blob);
    assert_memory_equal(buf, blob, sizeof blob);
    free(buf);
    assert_int_equal(weft_db_load_model(fx->db, TB, &found, &buf, &len), WEFT_OK);
    assert_false(found);
    assert_null(buf);
    assert_int_equal(weft_db_save_model(fx->db, TB, NULL, 0), WEFT_OK);
    assert_int_equal(weft_db_load_model(fx->db, TB, &found, &buf, &len), WEFT_OK);
    assert_true(found);
    assert_int_equal(len, 0);
    free(buf);
}

/* ---- refused files ------------------------------------------------------------------------ */

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)n + 1);
    *len = buf ? fread(buf, 1, (size_t)n, f) : 0;
    fclose(f);
    return buf;
}

/* Opens fx->path, expects WEFT_ERR_DB with `msg`, and checks that the file did not change and
 * (unless it is in WAL mode, where reading makes -wal and -shm) gained no sibling. */
static void expect_refused_wal(fixture *fx, const char *msg, bool wal)
{
    size_t len0 = 0, len1 = 0;
    fx->bytes[0] = slurp(fx->path, &len0);
    assert_non_null(fx->bytes[0]);
    for (int create = 0; create <= 1; create++) {
        weft_db *db = NULL;
        assert_int_equal(weft_db_open(fx->path, create, &db), WEFT_ERR_DB);
        assert_null(db);
        if (!strstr(weft_last_error(), msg)) fail_msg("expected '%s' in '%s'", msg, weft_last_error());
        assert_non_null(strstr(weft_last_error(), fx->path));
    }
    fx->bytes[1] = slurp(fx->path, &len1);
    assert_non_null(fx->bytes[1]);
    assert_int_equal(len0, len1);
    assert_memory_equal(fx->bytes[0], fx->bytes[1], len0);
    static const char *const sibling[] = {"-journal", "-wal", "-shm"};
    char p[200];
    for (int i = 0; i < (wal ? 1 : 3); i++) {
        snprintf(p, sizeof p, "%s%s", fx->path, sibling[i]);
        assert_int_not_equal(access(p, F_OK), 0);
    }
}

static void expect_refused(fixture *fx, const char *msg) { expect_refused_wal(fx, msg, false); }

static void raw_exec(fixture *fx, const char *sql)
{
    if (!fx->raw) assert_int_equal(sqlite3_open(fx->path, &fx->raw), SQLITE_OK);
    assert_int_equal(sqlite3_exec(fx->raw, sql, NULL, NULL, NULL), SQLITE_OK);
}

static void test_db_refuses_newer_schema(void **state)
{
    fixture *fx = *state;
    raw_exec(fx, "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                 "INSERT INTO meta VALUES ('weft_schema', 'weft-schedule-db'); PRAGMA user_version = 99;");
    sqlite3_close(fx->raw);
    fx->raw = NULL;
    expect_refused(fx, "schema version 99, newer than this weft (1): upgrade weft");
}

/* A database a newer weft made (WAL mode, its last change still in the WAL): refused, and its
 * main file keeps its bytes (no checkpoint into it on close). */
static void test_db_refuses_newer_wal_database(void **state)
{
    fixture *fx = *state;
    open_db(fx);
    put_keys(fx->db);
    weft_db_close(fx->db);
    fx->db = NULL;
    raw_exec(fx, "PRAGMA user_version = 2");
    /* leave the change in the WAL, so that a checkpoint would rewrite the main file */
    assert_int_equal(sqlite3_db_config(fx->raw, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)NULL), SQLITE_OK);
    assert_int_equal(sqlite3_close(fx->raw), SQLITE_OK);
    fx->raw = NULL;
    expect_refused_wal(fx, "schema version 2, newer than this weft (1)", true);
}

static void test_db_refuses_random_bytes(void **state)
{
    fixture *fx = *state;
    FILE *f = fopen(fx->path, "wb");
    assert_non_null(f);
    uint32_t x = 12345;
    for (int i = 0; i < 8192; i++) {
        x = x * 1664525u + 1013904223u;
        fputc((int)(x >> 24), f);
    }
    fclose(f);
    expect_refused(fx, "is not a weft schedule database (file is not a database)");
}

static void test_db_refuses_foreign_database(void **state)
{
    fixture *fx = *state;
    raw_exec(fx, "CREATE TABLE people(name TEXT, age INTEGER); INSERT INTO people VALUES ('ada', 36);");
    sqlite3_close(fx->raw);
    fx->raw = NULL;
    expect_refused(fx, "is a SQLite database of another program");
    assert_non_null(strstr(weft_last_error(), "people"));
}

static void test_db_open_missing_without_create_is_io(void **state)
{
    fixture *fx = *state;
    weft_db *db = NULL;
    assert_int_equal(weft_db_open(fx->path, false, &db), WEFT_ERR_IO);
    assert_null(db);
    assert_non_null(strstr(weft_last_error(), fx->path));
    assert_int_not_equal(access(fx->path, F_OK), 0);
    /* reopening an existing weft database works, with or without create */
    open_db(fx);
    weft_db_close(fx->db);
    fx->db = NULL;
    assert_int_equal(weft_db_open(fx->path, false, &fx->db), WEFT_OK);
}

/* ---- processes ---------------------------------------------------------------------------- */

static void check_integrity(fixture *fx)
{
    sqlite3 *raw = NULL;
    assert_int_equal(sqlite3_open_v2(fx->path, &raw, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(raw, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
    int rc = sqlite3_step(st);
    char result[256] = "";
    if (rc == SQLITE_ROW) snprintf(result, sizeof result, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(raw);
    assert_int_equal(rc, SQLITE_ROW);
    assert_string_equal(result, "ok");
}

/* Child process body: n measurements (n < 0: forever), then exit 0; exit 1 on any failure.
 * After the first commit it writes one byte to `ready` (when >= 0). */
static void child_insert(const char *path, int id, int n, int ready)
{
    weft_db *db = NULL;
    if (weft_db_open(path, false, &db) != WEFT_OK) {
        fprintf(stderr, "child %d: %s\n", id, weft_last_error());
        _exit(1);
    }
    char steps[64];
    for (int i = 0; n < 0 || i < n; i++) {
        snprintf(steps, sizeof steps, "child %d row %d", id, i);
        if (put_m(db, W1, TA, steps, (i + 1) * 1e-6, NULL) != WEFT_OK) {
            fprintf(stderr, "child %d row %d: %s\n", id, i, weft_last_error());
            _exit(1);
        }
        if (i == 0 && ready >= 0 && write(ready, "x", 1) != 1) _exit(1);
    }
    weft_db_close(db);
    _exit(0);
}

static void make_db(fixture *fx)
{
    open_db(fx);
    put_keys(fx->db);
    weft_db_close(fx->db); /* no connection crosses a fork */
    fx->db = NULL;
}

typedef struct row_check {
    int n[2];   /* rows seen per child */
    bool order; /* each child's rows appear as 0, 1, 2, ... */
} row_check;

static bool check_row(void *ud, const char *steps, double median, const char *error)
{
    row_check *rc = ud;
    int id = -1, i = -1;
    if (sscanf(steps, "child %d row %d", &id, &i) != 2 || id < 0 || id > 1 || error) {
        rc->order = false;
        return false;
    }
    if (i != rc->n[id] || median != (i + 1) * 1e-6) rc->order = false;
    rc->n[id]++;
    return true;
}

static void test_db_two_processes_write_concurrently(void **state)
{
    fixture *fx = *state;
    make_db(fx);
    pid_t pid[2];
    for (int c = 0; c < 2; c++) {
        pid[c] = fork();
        assert_true(pid[c] >= 0);
        if (pid[c] == 0) child_insert(fx->path, c, 200, -1);
    }
    for (int c = 0; c < 2; c++) {
        int status = 0;
        assert_int_equal(waitpid(pid[c], &status, 0), pid[c]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    check_integrity(fx);
    open_db(fx);
    int total = 0, ok = 0;
    assert_int_equal(weft_db_count(fx->db, W1, TA, &total, &ok), WEFT_OK);
    assert_int_equal(total, 400);
    assert_int_equal(ok, 400);
    row_check rc = {.order = true};
    assert_int_equal(weft_db_each(fx->db, W1, TA, check_row, &rc), WEFT_OK);
    assert_true(rc.order);
    assert_int_equal(rc.n[0], 200);
    assert_int_equal(rc.n[1], 200);
}

/* Three processes create the same new file at once: one schema, every row kept. */
static void test_db_processes_create_same_file_at_once(void **state)
{
    fixture *fx = *state;
    pid_t pid[3];
    for (int c = 0; c < 3; c++) {
        pid[c] = fork();
        assert_true(pid[c] >= 0);
        if (pid[c] == 0) {
            weft_db *db = NULL;
            if (weft_db_open(fx->path, true, &db) != WEFT_OK) {
                fprintf(stderr, "child %d: %s\n", c, weft_last_error());
                _exit(1);
            }
            weft_db_workload w = {W1, "te", "shapes", 1};
            weft_db_target t = {TA, "llvm", "cpu", "avx2", 2};
            bool ok = weft_db_put_workload(db, &w) == WEFT_OK && weft_db_put_target(db, &t) == WEFT_OK;
            for (int i = 0; ok && i < 20; i++)
                ok = put_m(db, W1, TA, "split i 2", 1e-3, NULL) == WEFT_OK;
            if (!ok) fprintf(stderr, "child %d: %s\n", c, weft_last_error());
            weft_db_close(db);
            _exit(ok ? 0 : 1);
        }
    }
    for (int c = 0; c < 3; c++) {
        int status = 0;
        assert_int_equal(waitpid(pid[c], &status, 0), pid[c]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    check_integrity(fx);
    open_db(fx);
    int total = 0;
    assert_int_equal(weft_db_count(fx->db, W1, TA, &total, NULL), WEFT_OK);
    assert_int_equal(total, 60);
}

static void test_db_survives_kill_9(void **state)
{
    fixture *fx = *state;
    make_db(fx);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        child_insert(fx->path, 0, -1, fds[1]);
    }
    close(fds[1]);
    char b;
    ssize_t got = read(fds[0], &b, 1); /* the child has committed at least once */
    close(fds[0]);
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
    kill(pid, SIGKILL);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_int_equal(got, 1);
    assert_true(WIFSIGNALED(status));

    open_db(fx);
    check_integrity(fx);
    int total = 0, ok = 0;
    assert_int_equal(weft_db_count(fx->db, W1, TA, &total, &ok), WEFT_OK);
    assert_true(total > 0);
    assert_int_equal(ok, total);
    row_check rc = {.order = true};
    assert_int_equal(weft_db_each(fx->db, W1, TA, check_row, &rc), WEFT_OK);
    assert_true(rc.order); /* every commit is whole: the rows are exactly 0 .. total-1 */
    assert_int_equal(rc.n[0], total);
    /* and the database takes writes again */
    assert_int_equal(put_m(fx->db, W1, TA, "after the crash", 1e-9, NULL), WEFT_OK);
    bool found = false;
    char *steps = NULL;
    assert_int_equal(weft_db_best(fx->db, W1, TA, &found, &steps, NULL), WEFT_OK);
    assert_true(found);
    assert_string_equal(steps, "after the crash");
    free(steps);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void test_db_locked_returns_busy(void **state)
{
    fixture *fx = *state;
    setenv("WEFT_DB_BUSY_MS", "300", 1);
    open_db(fx);
    put_keys(fx->db);
    raw_exec(fx, "BEGIN EXCLUSIVE");
    double t0 = now_s();
    assert_int_equal(put_m(fx->db, W1, TA, "split i 4", 1e-3, NULL), WEFT_ERR_DB_BUSY);
    double dt = now_s() - t0;
    assert_non_null(strstr(weft_last_error(), "is locked by another process"));
    assert_non_null(strstr(weft_last_error(), fx->path));
    assert_true(dt >= 0.3);
    assert_true(dt < 3.0);
    /* reads still work in WAL mode while another connection writes */
    int total = -1;
    assert_int_equal(weft_db_count(fx->db, W1, TA, &total, NULL), WEFT_OK);
    assert_int_equal(total, 0);
    raw_exec(fx, "ROLLBACK");
    assert_int_equal(put_m(fx->db, W1, TA, "split i 4", 1e-3, NULL), WEFT_OK);
    assert_int_equal(weft_db_count(fx->db, W1, TA, &total, NULL), WEFT_OK);
    assert_int_equal(total, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_db_best_is_fastest_error_free_on_its_target, setup, teardown),
        cmocka_unit_test_setup_teardown(test_db_errors_are_recorded_never_best, setup, teardown),
        cmocka_unit_test_setup_teardown(test_db_export_import_reproduces_ls, setup, teardown),
        cmocka_unit_test_setup_teardown(test_db_import_rejects_malformed_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(test_db_prune_keeps_fastest_error_free, setup, teardown),
        cmocka_unit_test_setup_teardown(test_db_cost_model_blob_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_db_refuses_newer_schema, setup, teardown),
        cmocka_unit_test_setup_teardown(test_db_refuses_newer_wal_database, setup, teardown),
        cmocka_unit_test_setup_teardown(test_db_refuses_random_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_db_refuses_foreign_database, setup, teardown),
        cmocka_unit_test_setup_teardown(test_db_open_missing_without_create_is_io, setup, teardown),
        cmocka_unit_test_setup_teardown(test_db_two_processes_write_concurrently, setup, teardown),
        cmocka_unit_test_setup_teardown(test_db_processes_create_same_file_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_db_survives_kill_9, setup, teardown),
        cmocka_unit_test_setup_teardown(test_db_locked_returns_busy, setup, teardown),
    };
    return cmocka_run_group_tests_name("tuner_db", tests, NULL, NULL);
}
