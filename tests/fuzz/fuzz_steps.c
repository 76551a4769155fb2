/* Fuzz target: schedule step text -> apply -> lower -> interpret, checked against the naive
 * schedule.
 *
 * Input: the golden-file format of the .steps files of tests/golden/lower: a first line "# OP D1,D2,..."
 * naming any op weft_op_build knows and its shape, then step lines (or "default"/"manual").
 * Size caps keep one input fast: at most 16 shape numbers, each in 1..64, product <= 16384,
 * at most 64 step lines of at most 256 bytes.
 *
 * Each step line is applied on its own; a rejected line must leave the schedule as it was, so
 * the following lines still apply. When the final schedule lowers, it runs in the loop-IR
 * interpreter (which checks every access against its buffer) on the same inputs as the naive
 * schedule, and the outputs must agree (|a-b| <= 1e-3 + 1e-3|b|). A run past MAX_ITERATIONS loop
 * iterations is skipped. An accepted schedule that
 * reads or writes out of bounds or computes different values aborts: that is a finding. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/stmt.h"
#include "lower/lower.h"
#include "ops/ops.h"
#include "schedule/schedule.h"
#include "targets/interp/interp.h"
#include "targets/target.h"
#include "tests/fuzz/fuzz_note.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_TEXT = 64 * 256, MAX_LINES = 64, MAX_LINE = 256, MAX_DIM = 64, MAX_PRODUCT = 16384 };
/* Loop iterations one interpreter run may take (about a second under ASan): a schedule whose
 * guarded loops multiply the work (split by huge factors, say) is skipped, not a hang. */
enum { MAX_ITERATIONS = 4000000 };

typedef struct bufs {
    int n;
    void **p;
    size_t *bytes;
} bufs;

static void bufs_free(bufs *b)
{
    for (int i = 0; b->p && i < b->n; i++) free(b->p[i]);
    free(b->p);
    free(b->bytes);
    memset(b, 0, sizeof *b);
}

/* Buffers for f's parameters: inputs filled deterministically, the rest zeroed. */
static bool bufs_make(bufs *b, const weft_loop_func *f)
{
    b->n = f->n_params;
    b->p = calloc((size_t)b->n + 1, sizeof *b->p);
    b->bytes = calloc((size_t)b->n + 1, sizeof *b->bytes);
    if (!b->p || !b->bytes) return false;
    for (int i = 0; i < b->n; i++) {
        const weft_buffer *buf = f->params[i];
        size_t eb = (size_t)weft_dtype_bytes(buf->dtype);
        if (buf->size < 0 || buf->size > (1 << 22)) return false;
        b->bytes[i] = (size_t)buf->size * eb;
        b->p[i] = calloc((size_t)buf->size + 1, eb);
        if (!b->p[i]) return false;
        for (int64_t e = 0; e < buf->size; e++) {
            uint32_t h = (uint32_t)(e * 2654435761u + (uint32_t)i * 40503u);
            if (buf->dtype.code == WEFT_DTYPE_FLOAT && eb == 4) ((float *)b->p[i])[e] = (float)(h % 2001) / 1000.0f - 1.0f;
            else if (buf->dtype.code == WEFT_DTYPE_FLOAT) ((double *)b->p[i])[e] = (double)(h % 2001) / 1000.0 - 1.0;
            else if (eb == 8) ((int64_t *)b->p[i])[e] = h % 3;
            else if (eb == 4) ((int32_t *)b->p[i])[e] = (int32_t)(h % 3);
            else ((uint8_t *)b->p[i])[e] = (uint8_t)(h & 1);
        }
    }
    return true;
}

static bool close_enough(const weft_buffer *buf, const void *x, const void *y)
{
    size_t eb = (size_t)weft_dtype_bytes(buf->dtype);
    for (int64_t e = 0; e < buf->size; e++) {
        if (buf->dtype.code != WEFT_DTYPE_FLOAT) {
            if (memcmp((const char *)x + e * eb, (const char *)y + e * eb, eb)) return false;
            continue;
        }
        double a = eb == 4 ? ((const float *)x)[e] : ((const double *)x)[e];
        double b = eb == 4 ? ((const float *)y)[e] : ((const double *)y)[e];
        if (isnan(a) && isnan(b)) continue;
        if (isinf(a) && a == b) continue;
        if (!(fabs(a - b) <= 1e-3 + 1e-3 * fabs(b))) return false;
    }
    return true;
}

/* Lowers s (*lf_out: the loop IR, when it lowered) and runs it on fresh inputs in b. */
static weft_status lower_run(const weft_schedule *s, const weft_target_caps *caps, weft_arena *a, bufs *b,
                             const weft_loop_func **lf_out)
{
    weft_loop_func *lf = NULL;
    weft_status st = weft_lower(s, caps, a, &lf);
    if (st != WEFT_OK) return st;
    *lf_out = lf;
    if (!bufs_make(b, lf)) return WEFT_ERR_NOMEM;
    return weft_interp_run_budget(lf, b->p, MAX_ITERATIONS);
}

static void fuzz_one(const char *text)
{
    char op[64], shape_s[256];
    if (sscanf(text, "# %63s %255s", op, shape_s) != 2) return;
    int64_t shape[16];
    int n = 0;
    int64_t product = 1;
    for (char *p = strtok(shape_s, ","); p; p = strtok(NULL, ",")) {
        if (n == 16) return;
        long long v = atoll(p);
        if (v < 1 || v > MAX_DIM) return;
        product *= v;
        if (product > MAX_PRODUCT) return;
        shape[n++] = v;
    }
    const char *body = strchr(text, '\n');
    body = body ? body + 1 : "";

    weft_arena *a = weft_arena_create();
    weft_te_func *f = NULL;
    weft_schedule *s = NULL, *naive = NULL;
    bufs want = {0}, got = {0};
    const weft_target_ops *interp = weft_target_find("interp");
    weft_target_caps caps;
    interp->caps(NULL, &caps);
    if (!a || weft_op_build(a, op, n, shape, &f) != WEFT_OK) goto done;
    if (weft_schedule_create(f, &s) != WEFT_OK || weft_schedule_create(f, &naive) != WEFT_OK) goto done;

    char line[MAX_LINE + 1];
    int n_lines = 0;
    for (const char *p = body; *p && n_lines < MAX_LINES; n_lines++) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > MAX_LINE) len = MAX_LINE;
        memcpy(line, p, len);
        line[len] = '\0';
        p = end ? end + 1 : p + strlen(p);
        int before = weft_schedule_n_steps(s);
        char *text_before = weft_schedule_text(s);
        weft_status st;
        if (!strcmp(line, "default")) st = weft_schedule_default(s, &caps);
        else if (!strcmp(line, "manual")) st = weft_schedule_manual_matmul(s, &caps);
        else st = weft_schedule_apply(s, line);
        if (st != WEFT_OK) fuzz_note(line);
        if (st != WEFT_OK && strcmp(line, "default") && strcmp(line, "manual")) {
            /* A rejected step leaves the schedule unchanged. */
            char *text_after = weft_schedule_text(s);
            if (weft_schedule_n_steps(s) != before || !text_before || !text_after || strcmp(text_before, text_after)) {
                fprintf(stderr, "fuzz_steps: rejected step '%s' changed the schedule\n", line);
                abort();
            }
            free(text_after);
        }
        free(text_before);
    }

    /* The step text round-trips: replaying it gives the same text. */
    char *printed = weft_schedule_text(s);
    weft_schedule *replay = NULL;
    if (printed && weft_schedule_create(f, &replay) == WEFT_OK) {
        if (weft_schedule_apply_text(replay, printed) != WEFT_OK) {
            fprintf(stderr, "fuzz_steps: printed steps do not replay: %s\n%s", weft_last_error(), printed);
            abort();
        }
        char *again = weft_schedule_text(replay);
        if (!again || strcmp(again, printed)) {
            fprintf(stderr, "fuzz_steps: replay prints differently:\n%s---\n%s", printed, again ? again : "(null)");
            abort();
        }
        free(again);
    }
    weft_schedule_destroy(replay);
    free(printed);

    const weft_loop_func *lf_naive = NULL, *lf = NULL;
    if (lower_run(naive, &caps, a, &want, &lf_naive) != WEFT_OK) { /* includes a naive run past the budget */
        fuzz_note("naive");
        goto done;
    }
    weft_status st = lower_run(s, &caps, a, &got, &lf);
    if (!lf) { /* the schedule did not lower: a clean error */
        fuzz_note("lower");
        goto done;
    }
    if (st == WEFT_ERR_NOMEM) goto done;
    if (st == WEFT_ERR_TIMEOUT) { /* more work than the budget: skipped */
        fuzz_note("budget");
        goto done;
    }
    if (st != WEFT_OK) {
        fprintf(stderr, "fuzz_steps: an accepted schedule failed in the interpreter: %s\n", weft_last_error());
        abort();
    }
    if (lf->n_params != lf_naive->n_params) {
        fprintf(stderr, "fuzz_steps: %d parameters, the naive schedule has %d\n", lf->n_params, lf_naive->n_params);
        abort();
    }
    for (int i = 0; i < lf->n_params; i++) {
        if (lf->params[i]->size != lf_naive->params[i]->size || !close_enough(lf->params[i], got.p[i], want.p[i])) {
            fprintf(stderr, "fuzz_steps: parameter %d (%s) differs from the naive schedule\n", i, lf->params[i]->name);
            abort();
        }
    }
    fuzz_reached("ran and matched the naive schedule");
done:
    bufs_free(&want);
    bufs_free(&got);
    weft_schedule_destroy(s);
    weft_schedule_destroy(naive);
    weft_arena_destroy(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MAX_TEXT) return 0;
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    if (strlen(text) == size) fuzz_one(text); /* text with NUL bytes: not step text */
    free(text);
    return 0;
}
