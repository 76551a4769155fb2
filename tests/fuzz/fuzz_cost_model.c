/* Fuzz target: the cost-model buffer loader, on model bytes as stored in the database.
 *
 * Input: a saved cost model as the database stores it (XGBoost UBJSON followed by weft's
 * checksum trailer, as weft_cost_model_save writes it; at most 256 KiB).
 * weft_cost_model_load_stored (the tuner's path from the database) must load it or fail
 * cleanly. Plain XGBoost models without the trailer (weft_cost_model_load) are not fuzzed
 * here: XGBoost 1.7.4's own loader segfaults on malformed tree arrays
 * (tests/fuzz/known/cost_model), which only the checksum keeps away. A loaded model predicts two rows (finite or not, but no crash), and
 * saving it and loading the saved bytes again predicts the same values. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz_note.h"
#include "tuner/cost_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_BYTES = 256 * 1024 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MAX_BYTES) return 0;
    weft_cost_model *m = NULL, *m2 = NULL;
    void *saved = NULL;
    size_t saved_len = 0;
    if (weft_cost_model_create(&m) != WEFT_OK) abort();
    if (weft_cost_model_load_stored(m, size ? (const void *)data : "", size) != WEFT_OK) {
        fuzz_note("load");
        goto done;
    }
    fuzz_reached("loaded");
    float x[2 * WEFT_FEATURE_DIM], y[2] = {0}, y2[2] = {0};
    for (int i = 0; i < WEFT_FEATURE_DIM; i++) {
        x[i] = 0.0f;
        x[WEFT_FEATURE_DIM + i] = (float)i / 8.0f;
    }
    if (weft_cost_model_predict(m, x, 2, y) != WEFT_OK) goto done;
    if (weft_cost_model_save(m, &saved, &saved_len) != WEFT_OK) goto done;
    if (weft_cost_model_create(&m2) != WEFT_OK) abort();
    if (weft_cost_model_load_stored(m2, saved, saved_len) != WEFT_OK) {
        fprintf(stderr, "fuzz_cost_model: a saved model does not load: %s\n", weft_last_error());
        abort();
    }
    if (weft_cost_model_predict(m2, x, 2, y2) != WEFT_OK) abort();
    for (int i = 0; i < 2; i++)
        if (memcmp(&y[i], &y2[i], sizeof y[i]) && !(isnan(y[i]) && isnan(y2[i]))) {
            fprintf(stderr, "fuzz_cost_model: reloaded model predicts %g, the loaded one %g\n", y2[i], y[i]);
            abort();
        }
done:
    free(saved);
    weft_cost_model_destroy(m);
    weft_cost_model_destroy(m2);
    return 0;
}
