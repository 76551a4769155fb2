/* Writes small cost-model seeds for the cost_model fuzz target (run once by hand; the outputs
 * are committed in tests/fuzz/corpus/cost_model):
 *   build/debug/fuzz_make_cost_model_seeds tests/fuzz/corpus/cost_model
 * A model trained on 16 rows is saved as weft stores it (UBJSON + the checksum trailer). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tuner/cost_model.h"

static int write_file(const char *dir, const char *name, const void *p, size_t n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n) return 1;
    return fclose(f) != 0;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    enum { N = 16 };
    float x[N * WEFT_FEATURE_DIM], y[N];
    for (int r = 0; r < N; r++) {
        for (int c = 0; c < WEFT_FEATURE_DIM; c++) x[r * WEFT_FEATURE_DIM + c] = (float)((r * 7 + c * 3) % 11);
        y[r] = (float)(r % 5);
    }
    weft_cost_model *m = NULL;
    void *buf = NULL;
    size_t len = 0;
    if (weft_cost_model_create(&m) || weft_cost_model_train(m, x, y, N) || weft_cost_model_save(m, &buf, &len)) {
        fprintf(stderr, "%s\n", weft_last_error());
        return 1;
    }
    int bad = write_file(dir, "small_stored.bin", buf, len);
    free(buf);
    weft_cost_model_destroy(m);
    return bad;
}
