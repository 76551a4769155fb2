/* Serving tuned schedules: compiling a model with the best database record of each kernel on
 * this machine's target (default schedules where there is none, or where a record's steps no
 * longer apply). */
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "ir/hash.h"
#include "model/model_internal.h"
#include "tuner/tuner.h"

weft_status weft_tuner_lookup(weft_db *db, const weft_tuner_target *t, const weft_te_func *f, weft_schedule *s, bool *found)
{
    *found = false;
    char key[17];
    weft_te_func_hash_hex(f, key);
    char *steps = NULL;
    double median = 0;
    bool have = false;
    weft_status rc = weft_db_best(db, key, t->key, &have, &steps, &median);
    if (rc != WEFT_OK || !have) {
        free(steps);
        return rc;
    }
    /* Replay on a scratch schedule first: steps that no longer apply leave s untouched. */
    weft_schedule *probe = NULL;
    rc = weft_schedule_create(f, &probe);
    if (rc == WEFT_OK && weft_schedule_apply_text(probe, steps) == WEFT_OK) {
        rc = weft_schedule_apply_text(s, steps);
        *found = rc == WEFT_OK;
    }
    weft_schedule_destroy(probe);
    free(steps);
    return rc;
}

typedef struct provider_ctx {
    weft_db *db;
    weft_tuner_target tt;
    bool target_ready;
} provider_ctx;

static weft_status provide(void *ud, const weft_te_func *f, weft_schedule *s, const weft_target_caps *caps, char *src)
{
    provider_ctx *pc = ud;
    if (!pc->target_ready) {
        weft_tuner_target_init(&pc->tt, caps, caps->max_threads);
        pc->target_ready = true;
    }
    bool found = false;
    weft_status rc = weft_tuner_lookup(pc->db, &pc->tt, f, s, &found);
    if (rc == WEFT_OK && found) {
        snprintf(src, 16, "tuned");
        return WEFT_OK;
    }
    snprintf(src, 16, "default");
    return weft_schedule_default(s, caps);
}

weft_status weft_model_compile_tuned(const weft_graph *g, const weft_model_options *opt, const char *db_path,
                                     weft_model **out, int *n_tuned)
{
    provider_ctx pc = {0};
    weft_status rc = weft_db_open(db_path, false, &pc.db);
    if (rc != WEFT_OK) return rc;
    rc = weft_model_compile_ex(g, opt, provide, &pc, n_tuned, out);
    weft_db_close(pc.db);
    return rc;
}
