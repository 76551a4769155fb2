/* Golden lowering tests: each tests/golden/lower/NAME.steps (first line "# OP SHAPE [gpu]", then step
 * text or one line naming a built-in schedule) is lowered and its printed loop IR compared
 * with NAME.expected; where NAME.after-PASS.expected exists, what WEFT_DUMP=PASS prints after
 * that pass is compared with it too, and every pass of the pipeline has at least one such
 * file. Regenerate with tests/golden/regen.sh, which prints the diff. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/slurp.h"
#include "ir/print.h"
#include "lower/lower.h"
#include "ops/ops.h"
#include "targets/target.h"

#define GOLDEN_DIR "tests/golden/lower"

/* What one pass printed (the pass to capture in, the text out). */
typedef struct capture {
    const char *pass;
    char *text;
} capture;

static void on_pass(void *ud, const char *pass, const char *text)
{
    capture *c = ud;
    if (c && !strcmp(pass, c->pass)) c->text = strdup(text);
}

/* Lowers one case; returns the printed loop IR (malloc'd) or NULL; with cap, also what cap->pass
 * printed (cap->text, malloc'd). */
static char *lower_case(const char *steps_text, capture *cap)
{
    char op[64];
    char shape_s[128], kind[16] = "";
    char first[256];
    snprintf(first, sizeof first, "%.*s", (int)strcspn(steps_text, "\n"), steps_text);
    if (sscanf(first, "# %63s %127s %15s", op, shape_s, kind) < 2) return NULL;
    int64_t shape[16];
    int n = 0;
    for (char *p = strtok(shape_s, ","); p && n < 16; p = strtok(NULL, ",")) shape[n++] = atoll(p);
    const char *body = strchr(steps_text, '\n');
    body = body ? body + 1 : "";
    weft_arena *a = weft_arena_create();
    weft_te_func *f = NULL;
    weft_schedule *s = NULL;
    weft_loop_func *lf = NULL;
    char *out = NULL;
    const weft_target_ops *interp = weft_target_find("interp");
    weft_target_caps caps;
    interp->caps(NULL, &caps);
    if (!strcmp(kind, "gpu")) caps = weft_caps_gpu("gpu"); /* "# OP SHAPE gpu": lowered for a GPU */
    weft_status rc = weft_op_build(a, op, n, shape, &f);
    if (rc == WEFT_OK) rc = weft_schedule_create(f, &s);
    if (rc == WEFT_OK) {
        if (!strcmp(body, "default\n")) rc = weft_schedule_default(s, &caps);
        else if (!strcmp(body, "manual\n")) rc = weft_schedule_manual_matmul(s, &caps);
        else rc = weft_schedule_apply_text(s, body);
    }
    if (rc == WEFT_OK) rc = weft_lower_traced(s, &caps, a, &lf, on_pass, cap);
    if (rc == WEFT_OK) out = weft_ir_func_str(lf);
    else print_error("%s\n", weft_last_error());
    weft_schedule_destroy(s);
    weft_arena_destroy(a);
    return out;
}

static void test_golden_lowering_matches_expected(void **state)
{
    (void)state;
    DIR *d = opendir(GOLDEN_DIR);
    assert_non_null(d);
    int n_cases = 0, failures = 0;
    struct dirent *ent;
    while ((ent = readdir(d))) {
        size_t len = strlen(ent->d_name);
        if (len < 7 || strcmp(ent->d_name + len - 6, ".steps")) continue;
        char path[512], exp_path[512];
        snprintf(path, sizeof path, "%s/%s", GOLDEN_DIR, ent->d_name);
        snprintf(exp_path, sizeof exp_path, "%s/%.*s.expected", GOLDEN_DIR, (int)(len - 6), ent->d_name);
        char *steps = slurp(path), *expected = slurp(exp_path);
        assert_non_null(steps);
        assert_non_null(expected);
        char *got = lower_case(steps, NULL);
        n_cases++;
        if (!got || strcmp(got, expected)) {
            print_error("%s: loop IR differs\n--- expected\n%s--- got\n%s\n", ent->d_name, expected, got ? got : "(error)");
            failures++;
        }
        free(steps);
        free(expected);
        free(got);
    }
    closedir(d);
    assert_true(n_cases >= 10);
    assert_int_equal(failures, 0);
}

/* s without trailing newlines (in place). */
static char *trim(char *s)
{
    size_t n = s ? strlen(s) : 0;
    while (n && s[n - 1] == '\n') s[--n] = '\0';
    return s;
}

static void test_golden_each_pass_matches_expected(void **state)
{
    (void)state;
    int n_pass = weft_lower_n_passes();
    assert_true(n_pass >= 9);
    int *per_pass = calloc((size_t)n_pass, sizeof *per_pass);
    int failures = 0;
    DIR *d = opendir(GOLDEN_DIR);
    assert_non_null(d);
    struct dirent *ent;
    while ((ent = readdir(d))) {
        size_t len = strlen(ent->d_name);
        if (len < 7 || strcmp(ent->d_name + len - 6, ".steps")) continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", GOLDEN_DIR, ent->d_name);
        char *steps = slurp(path);
        assert_non_null(steps);
        for (int i = 0; i < n_pass; i++) {
            const char *pass = weft_lower_pass_name(i);
            char exp_path[512];
            snprintf(exp_path, sizeof exp_path, "%s/%.*s.after-%s.expected", GOLDEN_DIR, (int)(len - 6), ent->d_name, pass);
            char *expected = slurp(exp_path);
            if (!expected) continue;
            per_pass[i]++;
            capture cap = {pass, NULL};
            free(lower_case(steps, &cap));
            if (!cap.text || strcmp(trim(cap.text), trim(expected))) {
                print_error("%s: after %s differs\n--- expected\n%s\n--- got\n%s\n", ent->d_name, pass, expected,
                            cap.text ? cap.text : "(error)");
                failures++;
            }
            free(cap.text);
            free(expected);
        }
        free(steps);
    }
    closedir(d);
    for (int i = 0; i < n_pass; i++) {
        if (!per_pass[i]) print_error("pass %s has no golden file (NAME.after-%s.expected)\n", weft_lower_pass_name(i),
                                      weft_lower_pass_name(i));
        failures += !per_pass[i];
    }
    free(per_pass);
    assert_int_equal(failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_golden_lowering_matches_expected),
                                       cmocka_unit_test(test_golden_each_pass_matches_expected)};
    return cmocka_run_group_tests_name("lower_golden", tests, NULL, NULL);
}
