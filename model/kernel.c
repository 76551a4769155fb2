/* One fused group -> one TE kernel: a placeholder per external input value, each node's
 * compute chained on the tensors of the values it reads, and the group's output values as
 * the kernel's outputs. Placeholders that no stage reads (inputs an op reads as constants,
 * like Reshape's shape) are dropped from the parameter list. Tensor names are short and
 * unique ("conv0", "relu1"); they never reach the kernel's structural hash. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "ir/error.h"
#include "model/model_internal.h"

static int value_index(const int *vals, int n, int v)
{
    for (int i = 0; i < n; i++)
        if (vals[i] == v) return i;
    return -1;
}

static bool reads_tensor(const weft_te_func *f, const weft_tensor *t)
{
    for (int i = 0; i < f->n_tensors; i++)
        if (f->tensors[i] == t) return true;
    return false;
}

weft_status weft_model_group_kernel(weft_arena *a, const weft_graph *g, const weft_group *grp, weft_te_func **out,
                                    int *params, int *n_params, char *name, size_t name_len, weft_op_step_param *step,
                                    int64_t *n_steps)
{
    *out = NULL;
    if (n_steps) *n_steps = 0;
    const weft_gnode *first = &g->nodes[grp->nodes[0]];
    if (grp->n_nodes == 1 && weft_op_step(first->def)) {
        /* a recurrence: its step kernel, parameters as slices of the node's values */
        weft_op_step_param sp[2 * WEFT_MODEL_MAX_STEP_PARAMS];
        int64_t steps = 0;
        char lower[24];
        size_t l = 0;
        for (const char *p = first->op_type; *p && l < sizeof lower - 1; p++) lower[l++] = (char)tolower((unsigned char)*p);
        lower[l] = '\0';
        weft_status rc = weft_op_step(first->def)(a, g, first, out, sp, n_params, &steps);
        if (rc != WEFT_OK) return rc;
        if (*n_params > WEFT_MODEL_MAX_STEP_PARAMS)
            return weft_fail(WEFT_ERR_INTERNAL, "step kernel of node '%s' has too many parameters", first->name);
        for (int i = 0; i < *n_params; i++) {
            params[i] = sp[i].value;
            if (step) step[i] = sp[i];
        }
        if (n_steps) *n_steps = steps;
        snprintf(name, name_len, "%s_step", lower);
        return WEFT_OK;
    }
    int n_vals = grp->n_inputs;
    int vals[1024];
    const weft_tensor *tens[1024];
    if (grp->n_inputs > 512) return weft_fail(WEFT_ERR_UNSUPPORTED, "kernel with more than 512 inputs");
    for (int i = 0; i < grp->n_inputs; i++) {
        const weft_gvalue *v = &g->values[grp->inputs[i]];
        char nm[16];
        snprintf(nm, sizeof nm, "in%d", i);
        vals[i] = grp->inputs[i];
        tens[i] = weft_te_placeholder(a, nm, v->dtype, v->ndim, v->shape);
        if (!tens[i]) return weft_fail(WEFT_ERR_NOMEM, "out of memory building a kernel");
    }
    size_t len = 0;
    int n_named = 0;
    name[0] = '\0';
    for (int m = 0; m < grp->n_nodes; m++) {
        const weft_gnode *nd = &g->nodes[grp->nodes[m]];
        const weft_tensor *ins[WEFT_NODE_MAX_IO] = {0};
        weft_tensor *outs[WEFT_NODE_MAX_IO] = {0};
        for (int k = 0; k < nd->n_inputs; k++) {
            int idx = nd->inputs[k] >= 0 ? value_index(vals, n_vals, nd->inputs[k]) : -1;
            ins[k] = idx >= 0 ? tens[idx] : NULL;
        }
        char tname[48], lower[24];
        size_t l = 0;
        for (const char *p = nd->op_type; *p && l < sizeof lower - 1; p++) lower[l++] = (char)tolower((unsigned char)*p);
        lower[l] = '\0';
        snprintf(tname, sizeof tname, "%s%d", lower, m);
        weft_status rc = nd->def->compute(a, g, nd, tname, ins, outs);
        if (rc != WEFT_OK) {
            char msg[1024];
            snprintf(msg, sizeof msg, "%s", weft_last_error());
            return weft_fail(rc, "building kernel for %s node '%s': %s", nd->op_type, nd->name, msg);
        }
        for (int k = 0; k < nd->n_outputs; k++) {
            if (!outs[k]) continue;
            if (n_vals >= 1024) return weft_fail(WEFT_ERR_UNSUPPORTED, "kernel too large");
            vals[n_vals] = nd->outputs[k];
            tens[n_vals++] = outs[k];
        }
        if (!nd->def->alias && len + strlen(lower) + 2 < name_len && n_named < 4) { /* views go unnamed */
            len += (size_t)snprintf(name + len, name_len - len, "%s%s", len ? "_" : "", lower);
            n_named++;
        }
    }
    const weft_tensor *outputs[256];
    if (grp->n_outputs > 256) return weft_fail(WEFT_ERR_UNSUPPORTED, "kernel with more than 256 outputs");
    for (int o = 0; o < grp->n_outputs; o++) {
        int idx = value_index(vals, n_vals, grp->outputs[o]);
        if (idx < grp->n_inputs) return weft_fail(WEFT_ERR_INTERNAL, "kernel output %s has no compute", g->values[grp->outputs[o]].name);
        outputs[o] = tens[idx];
    }
    /* First pass: every input declared, to learn which are read. */
    weft_te_func *f = NULL;
    weft_status rc = weft_te_func_create(a, name, grp->n_inputs, tens, grp->n_outputs, outputs, &f);
    if (rc != WEFT_OK) return rc;
    const weft_tensor *used[512];
    int n_used = 0;
    *n_params = 0;
    for (int i = 0; i < grp->n_inputs; i++)
        if (reads_tensor(f, tens[i])) {
            used[n_used++] = tens[i];
            params[(*n_params)++] = grp->inputs[i];
        }
    for (int o = 0; o < grp->n_outputs; o++) params[(*n_params)++] = grp->outputs[o];
    return weft_te_func_create(a, name, n_used, used, grp->n_outputs, outputs, out);
}
