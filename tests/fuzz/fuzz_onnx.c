/* Fuzz target: ONNX bytes -> graph -> compiled model -> one inference.
 *
 * Input: a serialized ONNX ModelProto (at most 256 KiB). weft_onnx_load_buffer must load it or
 * fail cleanly. A loaded graph with symbolic dimensions is specialized with every symbol bound
 * to 2. Size caps keep one input fast: the graph is compiled only when it has at most 256
 * nodes and every value at most 2^18 elements (2^24 in all); it then runs once (inputs
 * zeroed, on the loop-IR interpreter target, one thread) when every value has at most 2^14
 * elements and a bound on the work (run_work) is at most 2^22. Compiling for "interp" runs the same graph passes, fusion, schedules, lowering and
 * memory plan as "llvm" without a JIT per kernel, which would make each input take seconds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/graph.h"
#include "tests/fuzz/fuzz_note.h"
#include "weft/model.h"
#include "weft/onnx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_BYTES = 256 * 1024, MAX_NODES = 256 };
#define MAX_VALUE_NUMEL ((int64_t)1 << 18)
#define MAX_TOTAL_NUMEL ((int64_t)1 << 24)
#define MAX_RUN_NUMEL ((int64_t)1 << 14)
#define MAX_RUN_WORK ((int64_t)1 << 22)

/* Largest element count of any value of g, or -1 when over the caps. */
static int64_t largest_value(const weft_graph *g)
{
    if (g->n_nodes > MAX_NODES) return -1;
    int64_t largest = 0, total = 0;
    for (int v = 0; v < g->n_values; v++) {
        int64_t n = 1;
        for (int d = 0; d < g->values[v].ndim; d++) {
            int64_t e = g->values[v].shape[d];
            if (e < 0 || e > MAX_VALUE_NUMEL) return -1;
            n *= e;
            if (n > MAX_VALUE_NUMEL) return -1;
        }
        total += n;
        if (total > MAX_TOTAL_NUMEL) return -1;
        if (n > largest) largest = n;
    }
    return largest;
}

/* g with every symbolic dimension of its inputs bound to 2 (a copy when g is static). */
static weft_status specialize(const weft_graph *g, weft_graph **out)
{
    const char *names[64];
    int64_t values[64];
    int n = 0;
    for (int i = 0; i < weft_graph_n_inputs(g); i++) {
        weft_value v = weft_graph_input(g, i);
        for (int d = 0; d < 8; d++) {
            const char *name = weft_graph_value_dim_name(g, v, d);
            if (!name) continue;
            bool seen = false;
            for (int k = 0; k < n; k++) seen = seen || !strcmp(names[k], name);
            if (!seen && n < 64) {
                names[n] = name;
                values[n++] = 2;
            }
        }
    }
    return weft_graph_specialize(g, n, names, values, NULL, out);
}

/* A bound on the work of one inference: per node, its output elements times the elements of
 * all its inputs (each output element reads at most that much), summed; -1 when over `cap`. */
static int64_t run_work(const weft_graph *g, int64_t cap)
{
    int64_t work = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const weft_gnode *n = &g->nodes[i];
        if (n->dead) continue;
        int64_t in = 1, out = 0;
        for (int k = 0; k < n->n_inputs; k++)
            if (n->inputs[k] >= 0) in += weft_gvalue_numel(&g->values[n->inputs[k]]);
        for (int k = 0; k < n->n_outputs; k++)
            if (n->outputs[k] >= 0) out += weft_gvalue_numel(&g->values[n->outputs[k]]);
        if (out > 0 && in > (cap - work) / out) return -1;
        work += in * out;
    }
    return work;
}

static void run_once(weft_model *m)
{
    int ni = weft_model_n_inputs(m), no = weft_model_n_outputs(m);
    void **in = calloc((size_t)ni + 1, sizeof *in), **out = calloc((size_t)no + 1, sizeof *out);
    bool ok = in && out;
    for (int i = 0; ok && i < ni; i++) {
        weft_tensor_info t;
        ok = weft_model_input_info(m, i, &t) == WEFT_OK && (in[i] = calloc(1, t.bytes + 1));
    }
    for (int i = 0; ok && i < no; i++) {
        weft_tensor_info t;
        ok = weft_model_output_info(m, i, &t) == WEFT_OK && (out[i] = calloc(1, t.bytes + 1));
    }
    if (ok) (void)weft_model_run(m, (const void *const *)in, out);
    for (int i = 0; in && i < ni; i++) free(in[i]);
    for (int i = 0; out && i < no; i++) free(out[i]);
    free(in);
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MAX_BYTES) return 0;
    weft_graph *g = NULL, *s = NULL;
    weft_model *m = NULL;
    if (weft_onnx_load_buffer(data, size, NULL, &g) != WEFT_OK) {
        fuzz_note("load");
        goto done;
    }
    if (largest_value(g) < 0) goto done; /* symbolic values have ndim 0 here: checked again below */
    if (specialize(g, &s) != WEFT_OK) {
        fuzz_note("specialize");
        goto done;
    }
    int64_t largest = largest_value(s);
    if (largest < 0) goto done;
    weft_model_options opt = weft_model_options_default();
    opt.target = "interp";
    opt.threads = 1;
    if (weft_model_compile(s, &opt, &m) != WEFT_OK) {
        fuzz_note("compile");
        goto done;
    }
    fuzz_reached("compiled");
    if (largest <= MAX_RUN_NUMEL && run_work(s, MAX_RUN_WORK) >= 0) run_once(m);
done:
    weft_model_destroy(m);
    weft_graph_destroy(s);
    weft_graph_destroy(g);
    return 0;
}
