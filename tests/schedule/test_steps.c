/* Schedule steps: text round trip, replay, and clear errors for invalid steps. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "ir/print.h"
#include "lower/lower.h"
#include "ops/ops.h"
#include "schedule/schedule.h"

typedef struct fixture {
    weft_arena *a;
    weft_te_func *matmul, *softmax, *conv, *dense;
    weft_schedule *s[4];
} fixture;

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    fx->a = weft_arena_create();
    fx->matmul = weft_op_matmul(fx->a, 16, 24, 8);
    fx->softmax = weft_op_softmax(fx->a, 4, 12);
    fx->conv = weft_op_conv2d(fx->a, 1, 3, 10, 10, 4, 3, 3, 2, 2, 1, 1);
    fx->dense = weft_op_dense_bias_relu(fx->a, 8, 16, 12);
    weft_te_func *fs[4] = {fx->matmul, fx->softmax, fx->conv, fx->dense};
    for (int i = 0; i < 4; i++)
        if (!fs[i] || weft_schedule_create(fs[i], &fx->s[i]) != WEFT_OK) return -1;
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    for (int i = 0; i < 4; i++) weft_schedule_destroy(fx->s[i]);
    weft_arena_destroy(fx->a);
    free(fx);
    return 0;
}

/* The lowered loop IR of s as text (malloc'd). */
static char *lowered(const weft_schedule *s)
{
    weft_arena *a = weft_arena_create();
    weft_loop_func *lf = NULL;
    char *txt = NULL;
    if (weft_lower(s, NULL, a, &lf) == WEFT_OK) txt = weft_ir_func_str(lf);
    weft_arena_destroy(a);
    return txt;
}

static void test_step_text_round_trip_normalizes_spacing(void **state)
{
    fixture *fx = *state;
    weft_schedule *s = fx->s[0];
    assert_int_equal(weft_schedule_apply(s, "  cache_write   C local  "), WEFT_OK);
    assert_int_equal(weft_schedule_apply(s, "split C i\t4"), WEFT_OK);
    assert_int_equal(weft_schedule_apply(s, "split C j 2 4   # a comment"), WEFT_OK);
    assert_int_equal(weft_schedule_apply(s, "reorder C i.0 j.0 j.1 i.1 j.2"), WEFT_OK);
    assert_int_equal(weft_schedule_apply(s, "fuse C i.0 j.0"), WEFT_OK);
    assert_int_equal(weft_schedule_apply(s, "parallel C i.0@j.0"), WEFT_OK);
    assert_int_equal(weft_schedule_apply(s, "compute_at C.local C j.1"), WEFT_OK);
    assert_int_equal(weft_schedule_apply(s, "split C.local k nparts 2"), WEFT_OK);
    assert_int_equal(weft_schedule_apply(s, "pragma C.local k.0 auto_unroll 16"), WEFT_OK);
    assert_int_equal(weft_schedule_apply(s, "pragma  C.local k.0 prefetch   B"), WEFT_OK);
    assert_int_equal(weft_schedule_apply(s, "cache_read B local C.local"), WEFT_OK);
    assert_int_equal(weft_schedule_apply(s, "compute_at B.local C.local k.0"), WEFT_OK);
    assert_int_equal(weft_schedule_apply(s, "vectorize C j.2"), WEFT_OK);
    assert_int_equal(weft_schedule_apply(s, "unroll C i.1"), WEFT_OK);
    char *text = weft_schedule_text(s);
    assert_string_equal(text,
                        "cache_write C local\nsplit C i 4\nsplit C j 2 4\nreorder C i.0 j.0 j.1 i.1 j.2\n"
                        "fuse C i.0 j.0\nparallel C i.0@j.0\ncompute_at C.local C j.1\nsplit C.local k nparts 2\n"
                        "pragma C.local k.0 auto_unroll 16\npragma C.local k.0 prefetch B\ncache_read B local C.local\n"
                        "compute_at B.local C.local k.0\nvectorize C j.2\nunroll C i.1\n");
    /* Replaying the printed text rebuilds the same schedule: same text, same loop IR. */
    weft_schedule *r = NULL;
    assert_int_equal(weft_schedule_create(fx->matmul, &r), WEFT_OK);
    assert_int_equal(weft_schedule_apply_text(r, text), WEFT_OK);
    char *text2 = weft_schedule_text(r), *ir1 = lowered(s), *ir2 = lowered(r);
    weft_schedule_destroy(r);
    assert_non_null(ir1);
    assert_string_equal(text, text2);
    assert_string_equal(ir1, ir2);
    free(text);
    free(text2);
    free(ir1);
    free(ir2);
}

static void test_random_step_lists_replay_to_same_loop_ir(void **state)
{
    fixture *fx = *state;
    for (int k = 0; k < 4; k++)
        for (uint64_t seed = 1; seed <= 10; seed++) {
            weft_schedule *s = NULL, *r = NULL;
            const weft_te_func *f = k == 0 ? fx->matmul : k == 1 ? fx->softmax : k == 2 ? fx->conv : fx->dense;
            assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
            assert_int_equal(weft_schedule_create(f, &r), WEFT_OK);
            assert_int_equal(weft_schedule_random(s, seed, 12), WEFT_OK);
            char *text = weft_schedule_text(s);
            assert_int_equal(weft_schedule_apply_text(r, text), WEFT_OK);
            char *ir1 = lowered(s), *ir2 = lowered(r), *text2 = weft_schedule_text(r);
            weft_schedule_destroy(s);
            weft_schedule_destroy(r);
            if (!ir1 || strcmp(ir1, ir2 ? ir2 : "") || strcmp(text, text2)) print_error("seed %llu:\n%s", (unsigned long long)seed, text);
            assert_non_null(ir1);
            assert_string_equal(ir1, ir2);
            assert_string_equal(text, text2);
            free(text);
            free(text2);
            free(ir1);
            free(ir2);
        }
}

typedef struct bad_step {
    int sched; /* 0 matmul, 1 softmax, 2 conv, 3 dense */
    const char *setup; /* steps applied first (valid) */
    const char *step;
    weft_status status;
    const char *message; /* substring of weft_last_error() */
} bad_step;

static const bad_step bad_steps[] = {
    {0, "", "splitt C i 4", WEFT_ERR_PARSE, "unknown step 'splitt'"},
    {0, "", "split C i", WEFT_ERR_PARSE, "needs at least 3 arguments"},
    {0, "", "split X i 4", WEFT_ERR_INVALID_ARG, "unknown stage 'X'"},
    {0, "", "split C q 4", WEFT_ERR_INVALID_ARG, "no iterator 'q'"},
    {0, "", "split C i 0", WEFT_ERR_INVALID_ARG, "positive integer, got '0'"},
    {0, "", "split C i four", WEFT_ERR_INVALID_ARG, "positive integer, got 'four'"},
    {0, "", "split C i nparts -2", WEFT_ERR_INVALID_ARG, "nparts must be a positive integer"},
    {0, "", "split C j 77777777777777777 777774", WEFT_ERR_INVALID_ARG, "multiply to more than 2^40"},
    {0, "split C i 4", "split C i 2", WEFT_ERR_INVALID_ARG, "already split or fused"},
    {0, "reorder C k i j", "vectorize C k", WEFT_ERR_INVALID_ARG, "cannot vectorize reduction iterator k of stage C: only as"},
    {0, "", "parallel C k", WEFT_ERR_INVALID_ARG, "cannot parallelize reduction iterator k"},
    {0, "", "fuse C i k", WEFT_ERR_INVALID_ARG, "not adjacent"},
    {0, "", "fuse C j k", WEFT_ERR_INVALID_ARG, "spatial and reduction"},
    {0, "", "reorder C i j i", WEFT_ERR_INVALID_ARG, "names i twice"},
    {0, "", "pragma C i unroll_all 4", WEFT_ERR_INVALID_ARG, "unknown pragma"},
    {0, "", "pragma C i auto_unroll x", WEFT_ERR_INVALID_ARG, "auto_unroll takes one integer"},
    {0, "", "pragma C k prefetch X", WEFT_ERR_INVALID_ARG, "stage C does not read a tensor named 'X'"},
    {0, "", "pragma C k prefetch A B", WEFT_ERR_INVALID_ARG, "pragma prefetch takes one tensor name"},
    {0, "", "pragma C q prefetch A", WEFT_ERR_INVALID_ARG, "no iterator 'q'"},
    {0, "split C i 4", "cache_write C local", WEFT_ERR_INVALID_ARG, "before splits"},
    {0, "", "cache_write C texture", WEFT_ERR_INVALID_ARG, "scope must be global, shared or local"},
    {0, "", "compute_inline C", WEFT_ERR_INVALID_ARG, "output stage C cannot be inlined"},
    {1, "", "compute_inline mx", WEFT_ERR_INVALID_ARG, "has a reduction"},
    {1, "", "compute_at e mx i", WEFT_ERR_INVALID_ARG, "does not read e"},
    {1, "", "compute_at e Y j", WEFT_ERR_INVALID_ARG, "also read by s"},
    {1, "", "compute_at Y e j", WEFT_ERR_INVALID_ARG, "output stage Y"},
    {1, "compute_at mx e j", "compute_inline e", WEFT_ERR_INVALID_ARG, "mx is computed inside e"},
    {1, "compute_at mx e j", "split e j 4", WEFT_ERR_INVALID_ARG, "no longer a loop"},
    {3, "compute_at D out j", "compute_inline out", WEFT_ERR_INVALID_ARG, "cannot be inlined"},
    {2, "compute_inline pad", "split pad h 2", WEFT_ERR_INVALID_ARG, "pad is inlined and has no loops"},
    {2, "", "cache_read X local pad.foo", WEFT_ERR_INVALID_ARG, "unknown stage 'pad.foo'"},
    {2, "", "cache_read X local Y", WEFT_ERR_INVALID_ARG, "does not read X directly"},
    {0, "", "rfactor C", WEFT_ERR_PARSE, "needs at least 2 arguments"},
    {0, "", "rfactor C i", WEFT_ERR_INVALID_ARG, "i is a spatial iterator of C, not a reduction"},
    {0, "", "rfactor C k 4", WEFT_ERR_INVALID_ARG, "takes a stage and an iterator"},
    {1, "", "rfactor e j", WEFT_ERR_INVALID_ARG, "stage e is not a reduction"},
    {0, "split C k 4", "rfactor C k", WEFT_ERR_INVALID_ARG, "must come before splits and fuses of C"},
    {0, "split C i 4\nsplit C k 4", "rfactor C k.1", WEFT_ERR_INVALID_ARG, "the only split or fuse of C"},
    {0, "split C i 4", "rfactor C i.1", WEFT_ERR_INVALID_ARG, "not a part of a reduction axis"},
    {0, "cache_read B local C\ncompute_at B.local C k", "rfactor C k", WEFT_ERR_INVALID_ARG,
     "B.local is attached inside a reduction loop of C"},
};

static void test_invalid_steps_give_clear_errors_and_change_nothing(void **state)
{
    fixture *fx = *state;
    for (size_t i = 0; i < sizeof bad_steps / sizeof bad_steps[0]; i++) {
        const bad_step *b = &bad_steps[i];
        const weft_te_func *f = b->sched == 0 ? fx->matmul : b->sched == 1 ? fx->softmax : b->sched == 2 ? fx->conv : fx->dense;
        weft_schedule *s = NULL;
        assert_int_equal(weft_schedule_create(f, &s), WEFT_OK);
        assert_int_equal(weft_schedule_apply_text(s, b->setup), WEFT_OK);
        char *before = weft_schedule_text(s), *ir_before = lowered(s);
        weft_status rc = weft_schedule_apply(s, b->step);
        const char *msg = weft_last_error();
        if (rc != b->status || !strstr(msg, b->message))
            print_error("step '%s': status %s, message '%s'\n", b->step, weft_status_name(rc), msg);
        assert_int_equal(rc, b->status);
        assert_non_null(strstr(msg, b->message));
        if (b->status != WEFT_ERR_PARSE) assert_non_null(strstr(msg, b->step)); /* names the step */
        char *after = weft_schedule_text(s), *ir_after = lowered(s);
        assert_string_equal(before, after);
        assert_string_equal(ir_before, ir_after);
        free(before);
        free(after);
        free(ir_before);
        free(ir_after);
        weft_schedule_destroy(s);
    }
}

/* Split factors that each pass, fused into one loop of 2^41 iterations: lowering refuses it with
 * a message (it multiplied past int64 before, with large enough factors). */
static void test_fused_extent_past_2_40_fails_lowering(void **state)
{
    fixture *fx = *state;
    weft_schedule *s = NULL;
    assert_int_equal(weft_schedule_create(fx->matmul, &s), WEFT_OK);
    assert_int_equal(weft_schedule_apply_text(s, "split C i 1048576\nsplit C j 2097152\nreorder C i.0 j.0 i.1 j.1\n"
                                                 "fuse C i.1 j.1"),
                     WEFT_OK);
    weft_arena *a = weft_arena_create();
    weft_loop_func *lf = NULL;
    assert_int_equal(weft_lower(s, NULL, a, &lf), WEFT_ERR_UNSUPPORTED);
    assert_non_null(strstr(weft_last_error(), "over 2^40"));
    weft_arena_destroy(a);
    weft_schedule_destroy(s);
}

/* rfactor: the new stage and the final reduction, as stages and loops, and the text replays. */
static void test_rfactor_makes_a_partial_stage(void **state)
{
    fixture *fx = *state;
    weft_schedule *s = fx->s[0];
    assert_int_equal(weft_schedule_apply_text(s, "split C k 4\nrfactor C k.1\nvectorize C.rf k.1\nrfactor C.rf k.0"), WEFT_OK);
    char buf[4096] = "";
    FILE *m = fmemopen(buf, sizeof buf - 1, "w");
    weft_schedule_print(s, m);
    fclose(m);
    /* C.rf[i, j, k.1] (vectorized) = sum over k.0; C.rf.rf holds it per k.0; C sums over k.1 */
    assert_non_null(strstr(buf, "stage C.rf.rf root: i j k.1 k.0\n"));
    assert_non_null(strstr(buf, "stage C.rf root: i j k.1[vectorized] k.0(r)\n"));
    assert_non_null(strstr(buf, "stage C root: i j k.1(r)\n"));
    char *text = weft_schedule_text(s);
    weft_schedule *r = NULL;
    assert_int_equal(weft_schedule_create(fx->matmul, &r), WEFT_OK);
    assert_int_equal(weft_schedule_apply_text(r, text), WEFT_OK);
    char *ir1 = lowered(s), *ir2 = lowered(r);
    assert_non_null(ir1);
    assert_string_equal(ir1, ir2);
    free(ir1);
    free(ir2);
    free(text);
    weft_schedule_destroy(r);
}

static void test_apply_text_names_the_failing_line(void **state)
{
    fixture *fx = *state;
    weft_status rc = weft_schedule_apply_text(fx->s[0], "split C i 4\nsplit C i.0 0\nparallel C i.0");
    assert_int_equal(rc, WEFT_ERR_INVALID_ARG);
    assert_non_null(strstr(weft_last_error(), "line 2"));
    assert_int_equal(weft_schedule_n_steps(fx->s[0]), 1);
}

static void test_default_and_manual_schedules_are_replayable_text(void **state)
{
    fixture *fx = *state;
    weft_target_caps caps = weft_caps_cpu(512, 2);
    assert_int_equal(weft_schedule_default(fx->s[1], &caps), WEFT_OK);
    assert_int_equal(weft_schedule_manual_matmul(fx->s[3], &caps), WEFT_OK);
    for (int k = 1; k <= 3; k += 2) {
        char *text = weft_schedule_text(fx->s[k]);
        assert_true(strlen(text) > 0);
        weft_schedule *r = NULL;
        assert_int_equal(weft_schedule_create(weft_schedule_func(fx->s[k]), &r), WEFT_OK);
        assert_int_equal(weft_schedule_apply_text(r, text), WEFT_OK);
        char *a = lowered(fx->s[k]), *b = lowered(r);
        assert_string_equal(a, b);
        free(a);
        free(b);
        free(text);
        weft_schedule_destroy(r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_step_text_round_trip_normalizes_spacing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_random_step_lists_replay_to_same_loop_ir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_invalid_steps_give_clear_errors_and_change_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fused_extent_past_2_40_fails_lowering, setup, teardown),
        cmocka_unit_test_setup_teardown(test_apply_text_names_the_failing_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rfactor_makes_a_partial_stage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_default_and_manual_schedules_are_replayable_text, setup, teardown),
    };
    return cmocka_run_group_tests_name("schedule_steps", tests, NULL, NULL);
}
