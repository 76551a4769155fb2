/* Loads the reference MLP (ONNX), compiles it with tuned schedules from the bundled schedule
 * database, prints what it takes and gives, runs it with size-checked buffers and compares
 * the result with PyTorch's output; then does the same for the dynamic-batch export of the
 * MLP at batch 1 and 32 on one execution context. Uses the public API only (libweft.so).
 *
 *   usage: onnx_run DIR      (DIR: tests/data/models, with mlp.onnx, tuned.db, mlp_dyn.onnx
 *                             and their .input.bin / .output.bin files)
 *   build: cc onnx_run.c $(pkg-config --cflags --libs weft) -lm
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "weft/model.h"
#include "weft/onnx.h"

static float *read_file(const char *dir, const char *file, size_t *bytes)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "rb");
    float *x = NULL;
    long n = -1;
    if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 && (x = malloc((size_t)n)) &&
        fread(x, 1, (size_t)n, f) != (size_t)n) {
        free(x);
        x = NULL;
    }
    if (f) fclose(f);
    if (!x) fprintf(stderr, "onnx_run: cannot read %s\n", path);
    *bytes = x ? (size_t)n : 0;
    return x;
}

/* max |y - ref| <= 1e-4 * max(1, max |ref|) */
static int compare(const char *what, const float *y, const float *ref, size_t n)
{
    double err = 0, scale = 1;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)y[i] - ref[i]);
        if (!(d <= err)) err = d;
        if (fabs(ref[i]) > scale) scale = fabs(ref[i]);
    }
    printf("%s: max |weft - torch| = %.3g (tolerance %.3g)\n", what, err, 1e-4 * scale);
    return err <= 1e-4 * scale ? 0 : 1;
}

static void print_info(const char *kind, const weft_tensor_info *t)
{
    static const char *const types[] = {"float32", "int64", "int32", "bool"};
    printf("  %s '%s': %s [", kind, t->name, (unsigned)t->dtype < 4 ? types[t->dtype] : "?");
    for (int d = 0; d < t->ndim; d++) {
        if (t->shape[d] >= 0) printf("%s%lld", d ? ", " : "", (long long)t->shape[d]);
        else printf("%s%s", d ? ", " : "", t->dim_names[d] ? t->dim_names[d] : "?");
    }
    printf("], %zu bytes\n", t->bytes);
}

/* Loads and compiles DIR/file with DIR/tuned.db; prints its inputs and outputs. */
static weft_model *load(const char *dir, const char *file)
{
    char path[1024], db[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    snprintf(db, sizeof db, "%s/tuned.db", dir);
    weft_graph *g = NULL;
    weft_model *m = NULL;
    weft_model_options opt = weft_model_options_default();
    int n_tuned = 0;
    if (weft_onnx_load(path, &g) == WEFT_OK && weft_model_compile_tuned(g, &opt, db, &m, &n_tuned) == WEFT_OK) {
        printf("%s: %d kernels, %d from tuned records%s\n", file, weft_model_n_kernels(m), n_tuned,
               weft_model_is_dynamic(m) ? " (symbolic dimensions: compiled per shape at first use)" : "");
        weft_tensor_info t;
        for (int i = 0; i < weft_model_n_inputs(m) && weft_model_input_info(m, i, &t) == WEFT_OK; i++) print_info("input", &t);
        for (int i = 0; i < weft_model_n_outputs(m) && weft_model_output_info(m, i, &t) == WEFT_OK; i++) print_info("output", &t);
    } else {
        fprintf(stderr, "onnx_run: %s: %s\n", path, weft_last_error());
    }
    weft_graph_destroy(g);
    return m;
}

/* Runs m (one input, one output) on STEM.input.bin and compares with STEM.output.bin. */
static int run_one(weft_model *m, weft_context *c, const char *dir, const char *stem)
{
    char in_file[256], out_file[256];
    snprintf(in_file, sizeof in_file, "%s.input.bin", stem);
    snprintf(out_file, sizeof out_file, "%s.output.bin", stem);
    size_t x_bytes = 0, ref_bytes = 0;
    float *x = read_file(dir, in_file, &x_bytes), *ref = read_file(dir, out_file, &ref_bytes);
    float *y = ref ? malloc(ref_bytes) : NULL;
    int status = 1;
    if (x && y) {
        const void *inputs[1] = {x};
        void *outputs[1] = {y};
        weft_status rc = c ? weft_context_run(c, 1, inputs, &x_bytes, 1, outputs, &ref_bytes)
                           : weft_model_run_sized(m, 1, inputs, &x_bytes, 1, outputs, &ref_bytes);
        if (rc == WEFT_OK) status = compare(stem, y, ref, ref_bytes / sizeof(float));
        else fprintf(stderr, "onnx_run: %s: %s\n", stem, weft_last_error());
    }
    free(x);
    free(ref);
    free(y);
    return status;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "tests/data/models";
    printf("weft %s\n", weft_version());
    int status = 1;
    weft_model *m = load(dir, "mlp.onnx");
    if (m) status = run_one(m, NULL, dir, "mlp");
    weft_model_destroy(m);

    weft_model *dyn = status ? NULL : load(dir, "mlp_dyn.onnx");
    weft_context *c = NULL;
    if (dyn && weft_context_create(dyn, &c) == WEFT_OK)
        status = run_one(dyn, c, dir, "mlp_dyn.b1") | run_one(dyn, c, dir, "mlp_dyn.b32");
    else if (!status) {
        fprintf(stderr, "onnx_run: %s\n", weft_last_error());
        status = 1;
    }
    weft_context_destroy(c);
    weft_model_destroy(dyn);
    return status;
}
