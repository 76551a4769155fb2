/* Builds the reference MLP (Linear(512,512) -> ReLU -> Linear(512,512) -> ReLU on a 32x512
 * input) by hand with the graph API, compiles it, runs it, and compares the result with
 * PyTorch's output. The weights are read from the model's ONNX file, used here only as a
 * weight container.
 *
 *   usage: example_mlp DIR      (DIR holds mlp.onnx, mlp.input.bin, mlp.output.bin)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "weft/graph.h"
#include "weft/onnx.h"

static float *read_floats(const char *dir, const char *file, size_t n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "rb");
    float *x = malloc(n * sizeof *x);
    if (!f || !x || fread(x, sizeof *x, n, f) != n) {
        fprintf(stderr, "cannot read %zu floats from %s\n", n, path);
        free(x);
        x = NULL;
    }
    if (f) fclose(f);
    return x;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "tests/data/models";
    char path[1024];
    snprintf(path, sizeof path, "%s/mlp.onnx", dir);
    weft_graph *weights = NULL, *g = NULL;
    weft_model *m = NULL;
    int status = 1;
    float *x = read_floats(dir, "mlp.input.bin", 32 * 512), *ref = read_floats(dir, "mlp.output.bin", 32 * 512);
    float *y = malloc(32 * 512 * sizeof *y);
    if (!x || !ref || !y || weft_onnx_load(path, &weights) != WEFT_OK) goto done;

    /* The graph, by hand: y = relu(relu(x W1^T + b1) W2^T + b2). */
    const char *names[4] = {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"};
    const int64_t wshape[2] = {512, 512}, bshape[1] = {512}, xshape[2] = {32, 512};
    weft_value in, c[4], h1, a1, h2, a2;
    if (weft_graph_create(&g) != WEFT_OK || weft_graph_add_input(g, "x", WEFT_TYPE_FLOAT32, 2, xshape, &in) != WEFT_OK)
        goto done;
    for (int i = 0; i < 4; i++) {
        const void *data = weft_graph_value_data(weights, weft_graph_find_value(weights, names[i]));
        if (!data) {
            fprintf(stderr, "%s has no initializer %s\n", path, names[i]);
            goto done;
        }
        if (weft_graph_add_constant(g, names[i], WEFT_TYPE_FLOAT32, i % 2 ? 1 : 2, i % 2 ? bshape : wshape, data, &c[i]) != WEFT_OK)
            goto done;
    }
    if (weft_graph_gemm(g, in, c[0], c[1], false, true, &h1) != WEFT_OK || weft_graph_unary(g, "Relu", h1, &a1) != WEFT_OK ||
        weft_graph_gemm(g, a1, c[2], c[3], false, true, &h2) != WEFT_OK || weft_graph_unary(g, "Relu", h2, &a2) != WEFT_OK ||
        weft_graph_set_output(g, a2, "y") != WEFT_OK)
        goto done;

    weft_model_options opt = weft_model_options_default();
    if (weft_model_compile(g, &opt, &m) != WEFT_OK) goto done;
    const void *inputs[1] = {x};
    void *outputs[1] = {y};
    if (weft_model_run(m, inputs, outputs) != WEFT_OK) goto done;

    double max_err = 0, max_ref = 1;
    for (int i = 0; i < 32 * 512; i++) {
        double d = fabs((double)y[i] - ref[i]);
        if (!(d <= max_err)) max_err = d;
        if (fabs(ref[i]) > max_ref) max_ref = fabs(ref[i]);
    }
    printf("mlp by hand: %d kernels, max |weft - torch| = %.3g (tolerance %.3g)\n", weft_model_n_kernels(m), max_err,
           1e-4 * max_ref);
    status = max_err <= 1e-4 * max_ref ? 0 : 1;
done:
    if (status && !y) fprintf(stderr, "out of memory\n");
    else if (status) fprintf(stderr, "example_mlp: %s\n", weft_last_error());
    weft_model_destroy(m);
    weft_graph_destroy(g);
    weft_graph_destroy(weights);
    free(x);
    free(ref);
    free(y);
    return status;
}
