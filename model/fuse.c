/* Operator fusion by op pattern (ops/graph_ops.h `pattern`), in the spirit of TVM's FuseOps.
 *
 * Every live node that needs a kernel starts in its own group; groups joined by a data edge
 * are merged while the union stays a kernel the schedules handle well:
 *   - elementwise/injective chains fuse freely;
 *   - reductions (softmax, layer norm's decomposed ReduceMean/Sub/Pow/... chain) fuse with
 *     elementwise/injective neighbours and with each other, but for two window pools, a
 *     window pool with a producer other kernels read too, and a window pool with a row
 *     reduction;
 *   - a conv/matmul/gemm ("out" op) takes elementwise consumers as its epilogue (bias, relu,
 *     residual add; given back when the group would then have two outputs:
 *     split_two_output_epilogues), and pure elementwise/injective producers whose results it alone reads
 *     (a transpose feeding a matmul becomes an index remap) unless they enlarge their data
 *     (Resize, Pad: recomputed per reduction tap) or evaluate a transcendental function
 *     (recomputed per filter block and tap), but never a second out op or a reduction,
 *     nor a Transpose that makes a MatMul's B operand from another axis than its input's last
 *     (moves_last_axis_into_b: B is then written once by a kernel of its own).
 * A merge that would create a cycle between groups (A -> X -> B) is refused. Alias ops
 * (Reshape, Flatten, ...) need no kernel: between two kernels they share their input's
 * buffer. A chain of them that joins two groups being merged, each link read by the next one
 * alone, joins the group as an index remap (their compute): attention's Slice -> Reshape ->
 * Transpose of Q, K and V ran as a copy kernel per slice before the product read it.
 * Groups are returned in a topological order.
 */
#include <stdlib.h>
#include <string.h>

#include "ir/error.h"
#include "model/model_internal.h"
#include "runtime/mem.h"

typedef struct fctx {
    const weft_graph *g;
    int *parent; /* union-find over node indices */
    int *n_out;  /* per root: out ops in group */
    int *n_red;  /* per root: reductions in group */
    int *n_inj;  /* per root: injective ops in group */
    int *n_ops;  /* per root: nodes in group (absorbed alias nodes included) */
    char *absorbed; /* per node: an alias node that joined a group (computed in its kernel) */
    bool oom;    /* an allocation failed: fusion fails (not a smaller fusion) */
} fctx;

/* Nodes one kernel takes at most. A kernel's tensor expression holds up to 256 tensors and its
 * schedule 128 stages (a node is one to a few of each, plus the constants it reads); an unrolled
 * scan (a Mamba block's 24 elementwise steps written as a Python loop) merged into one group
 * of ~300 nodes and failed to compile. 48 leaves room for the widest ops. */
#define WEFT_FUSE_MAX_OPS 48

static int find(fctx *c, int x)
{
    while (c->parent[x] != x) x = c->parent[x] = c->parent[c->parent[x]];
    return x;
}

static bool needs_kernel(const weft_gnode *n) { return !n->dead && n->def && !n->def->alias; }

/* Node j is computed in some group's kernel (a kernel node, or an alias node that joined). */
static bool in_kernel(const fctx *c, int j) { return needs_kernel(&c->g->nodes[j]) || c->absorbed[j]; }

/* Producer node of value v if it is a kernel node, else -1. */
static int kernel_producer(const weft_graph *g, int v)
{
    if (v < 0 || g->values[v].data) return -1;
    int p = g->values[v].producer;
    return p >= 0 && needs_kernel(&g->nodes[p]) ? p : -1;
}

/* Producer of v if it is computed in a kernel (absorbed alias nodes included), else -1. */
static int group_producer(const fctx *c, int v)
{
    if (v < 0 || c->g->values[v].data) return -1;
    int p = c->g->values[v].producer;
    return p >= 0 && in_kernel(c, p) ? p : -1;
}

/* Value v, read by node `reader`, made by a chain of live alias nodes over a kernel node's
 * output, each link's output read only by the next link (the last by `reader` alone) and not
 * a graph output: stores the chain's nodes (nearest the kernel first) and returns the kernel
 * node; -1 otherwise. */
#define MAX_ALIAS_CHAIN 8
static int alias_chain(const fctx *c, int v, int *chain, int *n_chain)
{
    const weft_graph *g = c->g;
    int rev[MAX_ALIAS_CHAIN], n = 0;
    *n_chain = 0;
    while (v >= 0 && !g->values[v].data && !g->values[v].is_output && weft_graph_n_uses(g, v) == 1) {
        int p = g->values[v].producer;
        if (p < 0) return -1;
        const weft_gnode *nd = &g->nodes[p];
        if (needs_kernel(nd)) {
            if (n == 0) return -1; /* a plain edge, not a chain */
            for (int k = 0; k < n; k++) chain[k] = rev[n - 1 - k];
            *n_chain = n;
            return p;
        }
        if (nd->dead || !nd->def || !nd->def->alias || c->absorbed[p] || n == MAX_ALIAS_CHAIN) return -1;
        /* the alias's other inputs (Reshape's shape) are constants */
        for (int k = 1; k < nd->n_inputs; k++)
            if (nd->inputs[k] >= 0 && !g->values[nd->inputs[k]].data) return -1;
        rev[n++] = p;
        v = nd->inputs[0];
    }
    return -1;
}

/* Whether one of the alias nodes chain[0..n) merges its input's last axis with others (its
 * output's last extent is larger: [B, N, H, D] -> [B*N, H*D]). Read through such a chain, a
 * conv/matmul's reduction index is divided back into the producer's axes (floordiv and
 * floormod by D) at every step: attention's heads transposed back and merged, fused into the
 * output projection, ran it at 64 GFLOP/s against 110 apart (BERT-base at batch 8). */
static bool merges_last_axis(const weft_graph *g, const int *chain, int n)
{
    for (int k = 0; k < n; k++) {
        const weft_gnode *nd = &g->nodes[chain[k]];
        const weft_gvalue *in = &g->values[nd->inputs[0]], *out = &g->values[nd->outputs[0]];
        if (in->ndim < 1 || out->ndim < 1) continue;
        int64_t in_last = in->shape[in->ndim - 1], out_last = out->shape[out->ndim - 1];
        if (in_last > 1 && out_last > in_last) return true; /* not a trailing 1 squeezed away */
    }
    return false;
}

/* True when group a's root reaches group b's root through some third group. */
static bool reaches_via_other(fctx *c, int a, int b)
{
    const weft_graph *g = c->g;
    int n = g->n_nodes;
    if (n <= 0) return false;
    char *seen = weft_calloc((size_t)n, 1);
    int *stack = weft_malloc(sizeof *stack * (size_t)(n + 1) * 4);
    int sp = 0;
    bool found = false;
    if (!seen || !stack) {
        free(seen);
        free(stack);
        c->oom = true; /* weft_model_fuse fails with WEFT_ERR_NOMEM */
        return true;
    }
    /* Start from nodes of other groups fed by group a. */
    for (int i = 0; i < n && !found; i++) {
        if (!needs_kernel(&g->nodes[i]) || find(c, i) == a || find(c, i) == b) continue;
        const weft_gnode *nd = &g->nodes[i];
        for (int k = 0; k < nd->n_inputs; k++) {
            int p = kernel_producer(g, weft_model_storage_root(g, nd->inputs[k]));
            if (p >= 0 && find(c, p) == a && !seen[i]) {
                seen[i] = 1;
                stack[sp++] = i;
            }
        }
    }
    while (sp > 0 && !found) {
        int x = stack[--sp];
        int gx = find(c, x);
        for (int i = 0; i < n && !found; i++) {
            if (!needs_kernel(&g->nodes[i]) || seen[i]) continue;
            const weft_gnode *nd = &g->nodes[i];
            bool fed = find(c, i) == gx && gx != a && gx != b;
            for (int k = 0; k < nd->n_inputs && !fed; k++) {
                int p = kernel_producer(g, weft_model_storage_root(g, nd->inputs[k]));
                fed = p >= 0 && find(c, p) == gx;
            }
            if (!fed) continue;
            if (find(c, i) == b) found = true;
            else if (find(c, i) != a) {
                seen[i] = 1;
                if (sp < n * 4) stack[sp++] = i;
            }
        }
    }
    free(seen);
    free(stack);
    return found;
}

/* True when every value produced in group a is read only inside groups a and b. */
static bool only_feeds(fctx *c, int a, int b)
{
    const weft_graph *g = c->g;
    for (int i = 0; i < g->n_nodes; i++) {
        if (!in_kernel(c, i) || find(c, i) != a) continue;
        for (int k = 0; k < g->nodes[i].n_outputs; k++) {
            int v = g->nodes[i].outputs[k];
            if (g->values[v].is_output) return false;
            for (int j = 0; j < g->n_nodes; j++) {
                const weft_gnode *u = &g->nodes[j];
                if (u->dead) continue;
                for (int m = 0; m < u->n_inputs; m++)
                    if (u->inputs[m] == v && (!in_kernel(c, j) || (find(c, j) != a && find(c, j) != b))) return false;
            }
        }
    }
    return true;
}

/* True when some node of group a writes more elements than its largest non-constant input
 * (Resize, Pad, Upsample, broadcasts). Inlined into a conv/matmul, such a producer would be
 * recomputed for every reduction tap on the enlarged data: a 16->3 3x3 conv reading an
 * inlined bilinear x2 + reflect pad ran at 2 GFLOP/s, and took 27 ms against 3 ms apart. */
static bool expands(fctx *c, int a)
{
    const weft_graph *g = c->g;
    for (int i = 0; i < g->n_nodes; i++) {
        const weft_gnode *nd = &g->nodes[i];
        if (!needs_kernel(nd) || find(c, i) != a) continue;
        int64_t in = 0;
        for (int k = 0; k < nd->n_inputs; k++) {
            int v = nd->inputs[k];
            if (v >= 0 && !g->values[v].data && weft_gvalue_numel(&g->values[v]) > in) in = weft_gvalue_numel(&g->values[v]);
        }
        for (int k = 0; k < nd->n_outputs; k++)
            if (weft_gvalue_numel(&g->values[nd->outputs[k]]) > in) return true;
    }
    return false;
}

/* True when some node of group a evaluates a transcendental function (erf, exp, tanh, ...).
 * Inlined into a conv/matmul, such a producer is recomputed, a scalar per broadcast, for every
 * filter block and tap reading its element: wav2vec2's GELU between two 1-D convs (no epilogue
 * through their Squeeze) ran inside the next conv at 9 GFLOP/s, 1.1 ms against 0.1 apart. */
static bool transcendental(fctx *c, int a)
{
    static const char *const ops[] = {"Erf", "Exp", "Log", "Tanh", "Sigmoid", "Pow", "Sin", "Cos", "Tan", "Asin",
                                      "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Softplus",
                                      "Mish", "Gelu", "Elu", "Selu", "Celu"};
    const weft_graph *g = c->g;
    for (int i = 0; i < g->n_nodes; i++) {
        if (!needs_kernel(&g->nodes[i]) || find(c, i) != a) continue;
        for (size_t k = 0; k < sizeof ops / sizeof *ops; k++)
            if (!strcmp(g->nodes[i].op_type, ops[k])) return true;
    }
    return false;
}

/* A Transpose that makes the B operand of a MatMul out of another axis than its input's last:
 * read in the product, each vector of B's columns would be a gather (strided by a row); as a
 * kernel of its own (with what it reads: a slice of attention's QKV product) it writes B
 * with its columns contiguous, once, and the product reads rows of it. */
static bool moves_last_axis_into_b(const weft_graph *g, const weft_gnode *mm, const weft_gnode *p)
{
    return !strcmp(mm->op_type, "MatMul") && weft_model_transpose_moves_last(g, p);
}

static bool is_window_pool(const weft_graph *g, const weft_gnode *nd)
{
    (void)g;
    return !strcmp(nd->op_type, "MaxPool") || !strcmp(nd->op_type, "AveragePool");
}

/* Kernel nodes of group r for which pred holds. */
static int count_in(fctx *c, int r, bool (*pred)(const weft_graph *, const weft_gnode *))
{
    const weft_graph *g = c->g;
    int count = 0;
    for (int i = 0; i < g->n_nodes; i++)
        if (needs_kernel(&g->nodes[i]) && find(c, i) == r && pred(g, &g->nodes[i])) count++;
    return count;
}

/* Window pools (MaxPool, AveragePool) in group r. */
static int pools_in(fctx *c, int r) { return count_in(c, r, is_window_pool); }

/* True when some node of group a is a Transpose that moves its input's last axis (its reads
 * are gathers, or transposes in registers when it is a kernel's output). */
static bool moves_last_in(fctx *c, int a) { return count_in(c, a, weft_model_transpose_moves_last) > 0; }

/* May producer group a and consumer group b become one kernel? */
static bool can_merge(fctx *c, int a, int b)
{
    int out = c->n_out[a] + c->n_out[b], red = c->n_red[a] + c->n_red[b];
    if (out > 1 || (out == 1 && red > 0)) return false;
    if (c->n_ops[a] + c->n_ops[b] > WEFT_FUSE_MAX_OPS) return false;
    /* two window pools in one kernel (a 3-D pool's separable (H, W) and D passes) have no rule
     * (the pool rule takes one): they ran as scalar loops at 1.3 GFLOP/s */
    if (red > 1 && c->n_red[a] && c->n_red[b] && pools_in(c, a) + pools_in(c, b) > 1) return false;
    /* nor a window pool with a producer whose result other kernels read too: the kernel would
     * have two outputs, which the pool rule does not take (Inception's branch pools over the
     * block's concatenation ran as scalar loops at 2.4 GFLOP/s, 1.3-2.1 ms each) */
    if (c->n_red[b] && c->n_out[a] == 0 && pools_in(c, b) && !only_feeds(c, a, b)) return false;
    /* nor a window pool with a row reduction (a norm, a softmax) on the other side: the pool
     * rule takes plain data, and the pool would recompute the normalisation (a square root
     * and a division) per tap in a scalar loop (PoolFormer's pool over GroupNorm: 7 ms at 1
     * GFLOP/s where apart the two take 0.15 ms) */
    if (red > 1 && c->n_red[a] && c->n_red[b]) {
        int pa = pools_in(c, a), pb = pools_in(c, b);
        if ((pa && c->n_red[b] > pb) || (pb && c->n_red[a] > pa)) return false;
    }
    if (out == 1) {
        bool a_plain = c->n_out[a] == 0 && c->n_red[a] == 0;
        bool b_plain = c->n_out[b] == 0 && c->n_red[b] == 0;
        if (c->n_out[b] == 1 && a_plain) { /* producer fusion into a conv/matmul */
            if (!only_feeds(c, a, b) || expands(c, a) || transcendental(c, a)) return false;
        } else if (c->n_out[a] == 1 && b_plain) { /* epilogue: elementwise only */
            if (c->n_inj[b] > 0) return false;
        } else return false;
    }
    /* A transpose of the last axis feeding a copy that enlarges the data (a concat, a 3-D
     * conv's depth taps) stays apart: inside, its gathers ran once per copied element (a 3-D
     * U-Net's sub-pixel shuffle, skip concat and taps: one kernel of gathers, 0.9 ms). */
    if (out == 0 && moves_last_in(c, a) && expands(c, b)) return false;
    return !reaches_via_other(c, a, b);
}

static void merge(fctx *c, int a, int b)
{
    c->parent[b] = a;
    c->n_out[a] += c->n_out[b];
    c->n_red[a] += c->n_red[b];
    c->n_inj[a] += c->n_inj[b];
    c->n_ops[a] += c->n_ops[b];
}

static bool in_list(const int *v, int n, int x)
{
    for (int i = 0; i < n; i++)
        if (v[i] == x) return true;
    return false;
}

/* A conv/matmul group whose results leave it more than once (the raw product read by another
 * kernel as well as through its epilogue) gives up its epilogue: the nodes downstream of the
 * out op become a group of their own, so the out op's kernel has one output and its conv or
 * matmul rule (which take one output) schedules it. Two outputs fell to the generic schedule:
 * MaxViT's stem conv, read by a BatchNorm and by a pooled shortcut, ran in 1.4 s at 0.4
 * GFLOP/s with its Winograd input transform inlined into the products; apart, 5 ms and a
 * 0.1 ms BatchNorm. A window pool (one output) likewise, for the pool rule: Xception's
 * maxpool(body) + shortcut, read by the next shortcut conv and, through a ReLU, by the next
 * body, ran as a scalar loop at 2.5 GFLOP/s (1 ms of 10.8). (Judged on the final groups: a
 * SiLU epilogue reads the product twice, inside the group.) Linear in the graph's size: which
 * values leave their group is found in one pass over the nodes' inputs. false: out of memory. */
static bool split_two_output_epilogues(fctx *c)
{
    const weft_graph *g = c->g;
    int n = g->n_nodes;
    int *root = weft_malloc(sizeof(int) * (size_t)(n + 1)), *escapes = weft_calloc((size_t)n + 1, sizeof(int));
    if (!root || !escapes) {
        free(root), free(escapes);
        return false;
    }
    char *up = weft_malloc((size_t)n + 1);
    if (!up) {
        free(root), free(escapes);
        return false;
    }
    for (int i = 0; i < n; i++) root[i] = in_kernel(c, i) ? find(c, i) : -1;
    /* escapes[r]: values made in group r that a node outside it reads or that are graph outputs */
    char *seen = weft_calloc((size_t)g->n_values + 1, 1);
    if (!seen) {
        free(root), free(escapes), free(up);
        return false;
    }
    for (int j = 0; j < n; j++) {
        const weft_gnode *u = &g->nodes[j];
        for (int m = 0; m < u->n_inputs && !u->dead; m++) {
            int v = u->inputs[m], p = v >= 0 ? g->values[v].producer : -1;
            if (p < 0 || root[p] < 0 || root[p] == root[j] || seen[v]) continue;
            seen[v] = 1;
            escapes[root[p]]++;
        }
    }
    for (int i = 0; i < n; i++)
        for (int k = 0; root[i] >= 0 && k < g->nodes[i].n_outputs; k++) {
            int v = g->nodes[i].outputs[k];
            if (v >= 0 && g->values[v].is_output && !seen[v]) seen[v] = 1, escapes[root[i]]++;
        }
    free(seen);
    for (int o = 0; o < n; o++) {
        if (!needs_kernel(&g->nodes[o]) ||
            !(g->nodes[o].def->pattern == WEFT_PATTERN_OUT_REDUCTION_REUSE ||
              (is_window_pool(g, &g->nodes[o]) && g->nodes[o].n_outputs == 1)))
            continue;
        int r = root[o];
        if (escapes[r] < 2) continue;
        /* members downstream of o within the group move to a new group rooted at the first */
        int e = -1;
        for (int i = o + 1; i < n; i++) {
            if (root[i] != r) continue;
            const weft_gnode *u = &g->nodes[i];
            bool down = false;
            for (int m = 0; m < u->n_inputs && !down; m++) {
                int v = u->inputs[m];
                int p = v >= 0 ? g->values[v].producer : -1;
                down = p == o || (p >= 0 && e >= 0 && root[p] == e);
            }
            if (!down) continue;
            if (e < 0) {
                /* the rest of the group keeps a root that is not moving: o itself */
                for (int j = 0; j < n; j++)
                    if (root[j] == r) c->parent[j] = o;
                c->parent[o] = o;
                c->n_out[o] = c->n_out[r], c->n_red[o] = c->n_red[r], c->n_inj[o] = c->n_inj[r];
                e = i;
                c->n_out[e] = c->n_red[e] = c->n_inj[e] = 0;
            }
            c->parent[i] = e;
            c->parent[e] = e;
            root[i] = e;
        }
        /* members o does not read, directly or through the group (an elementwise producer of
         * the epilogue's residual add), follow the epilogue: they would otherwise stay as a
         * second, unrelated output of the out op's kernel */
        if (e >= 0) {
            memset(up, 0, (size_t)n);
            up[o] = 1;
            for (int i = o; i >= 0; i--) {
                if (!up[i]) continue;
                const weft_gnode *u = &g->nodes[i];
                for (int m = 0; m < u->n_inputs; m++) {
                    int v = u->inputs[m], p = v >= 0 ? g->values[v].producer : -1;
                    if (p >= 0 && root[p] == r) up[p] = 1;
                }
            }
            for (int i = 0; i < n; i++)
                if (root[i] == r && !up[i]) c->parent[i] = e, root[i] = e;
        }
        /* the out op's group, and no other, has changed roots */
        for (int j = 0; e >= 0 && j < n; j++)
            if (root[j] == r) root[j] = o;
    }
    free(root), free(escapes), free(up);
    return true;
}

weft_status weft_model_fuse(const weft_graph *g, weft_group **out, int *n_out)
{
    *out = NULL;
    *n_out = 0;
    int n = g->n_nodes;
    fctx c = {.g = g,
              .parent = weft_malloc(sizeof(int) * (size_t)(n + 1)),
              .n_out = weft_calloc((size_t)n + 1, sizeof(int)),
              .n_red = weft_calloc((size_t)n + 1, sizeof(int)),
              .n_inj = weft_calloc((size_t)n + 1, sizeof(int)),
              .n_ops = weft_calloc((size_t)n + 1, sizeof(int)),
              .absorbed = weft_calloc((size_t)n + 1, 1)};
    weft_group *groups = weft_calloc((size_t)n + 1, sizeof *groups);
    int *order = weft_malloc(sizeof(int) * (size_t)(n + 1));
    if (!c.parent || !c.n_out || !c.n_red || !c.n_inj || !c.n_ops || !c.absorbed || !groups || !order) {
        free(c.parent);
        free(c.n_out);
        free(c.n_red);
        free(c.n_inj);
        free(c.n_ops);
        free(c.absorbed);
        free(groups);
        free(order);
        return weft_fail(WEFT_ERR_NOMEM, "fusion: out of memory");
    }
    for (int i = 0; i < n; i++) {
        c.parent[i] = i;
        if (!needs_kernel(&g->nodes[i])) continue;
        weft_op_pattern p = g->nodes[i].def->pattern;
        c.n_out[i] = p == WEFT_PATTERN_OUT_REDUCTION_REUSE;
        c.n_red[i] = p == WEFT_PATTERN_REDUCTION;
        c.n_inj[i] = p == WEFT_PATTERN_INJECTIVE;
        c.n_ops[i] = 1;
    }
    /* Merge along data edges, consumers in topological order. */
    for (int i = 0; i < n; i++) {
        const weft_gnode *nd = &g->nodes[i];
        /* a recurrence's step kernel and a loop kernel stand alone */
        if (!needs_kernel(nd) || weft_op_step(nd->def) || weft_op_loop(g, nd)) continue;
        for (int k = 0; k < nd->n_inputs; k++) {
            int chain[MAX_ALIAS_CHAIN], n_chain = 0;
            int p = kernel_producer(g, nd->inputs[k]);
            if (p < 0) p = alias_chain(&c, nd->inputs[k], chain, &n_chain);
            if (p < 0 || weft_op_step(g->nodes[p].def) || weft_op_loop(g, &g->nodes[p])) continue;
            if (k == 1 && moves_last_axis_into_b(g, nd, &g->nodes[p])) continue;
            if (n_chain && nd->def->pattern == WEFT_PATTERN_OUT_REDUCTION_REUSE &&
                g->nodes[p].def->pattern == WEFT_PATTERN_INJECTIVE && merges_last_axis(g, chain, n_chain))
                continue;
            int a = find(&c, p), b = find(&c, i);
            if (a == b) continue;
            /* the chain joins the consumer's group while the merge is judged */
            for (int q = 0; q < n_chain; q++) c.absorbed[chain[q]] = 1, c.parent[chain[q]] = b;
            c.n_inj[b] += n_chain; /* alias ops are injective (no epilogue through a reshape) */
            c.n_ops[b] += n_chain;
            if (can_merge(&c, a, b)) merge(&c, a, b);
            else {
                c.n_inj[b] -= n_chain;
                c.n_ops[b] -= n_chain;
                for (int q = 0; q < n_chain; q++) c.absorbed[chain[q]] = 0, c.parent[chain[q]] = chain[q];
            }
        }
    }
    if (!split_two_output_epilogues(&c)) c.oom = true;
    /* Collect groups in order of their first node, then order them topologically. */
    int n_groups = 0;
    int *group_of = weft_malloc(sizeof(int) * (size_t)(n + 1));
    for (int i = 0; i < n && group_of; i++) {
        group_of[i] = -1;
        if (!in_kernel(&c, i)) continue;
        int r = find(&c, i), gi = -1;
        for (int j = 0; j < i; j++)
            if (in_kernel(&c, j) && find(&c, j) == r) gi = group_of[j];
        if (gi < 0) {
            gi = n_groups++;
            groups[gi].nodes = weft_malloc(sizeof(int) * (size_t)(n + 1));
            groups[gi].inputs = weft_malloc(sizeof(int) * (size_t)(g->n_values + 1));
            groups[gi].outputs = weft_malloc(sizeof(int) * (size_t)(g->n_values + 1));
        }
        group_of[i] = gi;
        if (groups[gi].nodes) groups[gi].nodes[groups[gi].n_nodes++] = i;
    }
    weft_status rc = group_of && !c.oom ? WEFT_OK : weft_fail(WEFT_ERR_NOMEM, "fusion: out of memory");
    for (int gi = 0; gi < n_groups; gi++)
        if (!groups[gi].nodes || !groups[gi].inputs || !groups[gi].outputs) rc = weft_fail(WEFT_ERR_NOMEM, "fusion: out of memory");
    /* Inputs and outputs of each group. */
    for (int gi = 0; rc == WEFT_OK && gi < n_groups; gi++) {
        weft_group *gr = &groups[gi];
        for (int m = 0; m < gr->n_nodes; m++) {
            const weft_gnode *nd = &g->nodes[gr->nodes[m]];
            for (int k = 0; k < nd->n_inputs; k++) {
                int v = nd->inputs[k];
                if (v < 0) continue;
                int p = group_producer(&c, v);
                bool inside = p >= 0 && group_of[p] == gi;
                if (!inside && !in_list(gr->inputs, gr->n_inputs, v)) gr->inputs[gr->n_inputs++] = v;
            }
            for (int k = 0; k < nd->n_outputs; k++) {
                int v = nd->outputs[k];
                bool external = g->values[v].is_output;
                for (int j = 0; j < n && !external; j++) {
                    const weft_gnode *u = &g->nodes[j];
                    if (u->dead) continue;
                    for (int q = 0; q < u->n_inputs; q++)
                        if (u->inputs[q] == v && (!in_kernel(&c, j) || group_of[j] != gi)) external = true;
                }
                if (external) gr->outputs[gr->n_outputs++] = v;
            }
        }
    }
    /* Topological order of groups (Kahn; ties by first node). */
    int *done = weft_calloc((size_t)n_groups + 1, sizeof(int));
    int n_done = 0;
    if (rc == WEFT_OK && !done) rc = weft_fail(WEFT_ERR_NOMEM, "fusion: out of memory");
    while (rc == WEFT_OK && done && n_done < n_groups) {
        int pick = -1;
        for (int gi = 0; gi < n_groups && pick < 0; gi++) {
            if (done[gi]) continue;
            bool ready = true;
            for (int k = 0; k < groups[gi].n_inputs && ready; k++) {
                int p = kernel_producer(g, weft_model_storage_root(g, groups[gi].inputs[k]));
                if (p >= 0 && group_of[p] != gi && !done[group_of[p]]) ready = false;
            }
            if (ready) pick = gi;
        }
        if (pick < 0) {
            rc = weft_fail(WEFT_ERR_INTERNAL, "fusion produced a cycle between kernels");
            break;
        }
        done[pick] = 1;
        order[n_done++] = pick;
    }
    weft_group *sorted = rc == WEFT_OK ? weft_calloc((size_t)n_groups + 1, sizeof *sorted) : NULL;
    if (rc == WEFT_OK && !sorted) rc = weft_fail(WEFT_ERR_NOMEM, "fusion: out of memory");
    if (rc == WEFT_OK) {
        for (int k = 0; k < n_groups; k++) sorted[k] = groups[order[k]];
        *out = sorted;
        *n_out = n_groups;
    } else weft_model_groups_free(groups, n_groups), groups = NULL;
    free(groups);
    free(done);
    free(group_of);
    free(order);
    free(c.parent);
    free(c.n_out);
    free(c.n_red);
    free(c.n_inj);
    free(c.n_ops);
    free(c.absorbed);
    return rc;
}

void weft_model_groups_free(weft_group *groups, int n)
{
    if (!groups) return;
    for (int i = 0; i < n; i++) {
        free(groups[i].nodes);
        free(groups[i].inputs);
        free(groups[i].outputs);
    }
    free(groups);
}
