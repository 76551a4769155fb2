/* 2-D convolution, NCHW input and FCKHKW (OIHW) weights, float32: the `conv2d` op of weft_op_build
 * (`weft show/bench op/tune --op conv2d`).
 *
 * The stages are the graph's Conv (ops/nn_conv.c, weft_conv2d_stages), so a single-op benchmark
 * measures the compute models run: zero padding is a separate injective stage "pad" whose
 * interior loads X at clamped indices (SELECT evaluates both arms), padding that no tap reads is
 * not materialized and taps that only read padding are dropped; the reduction stage is "Y".
 * Without any padding read there is no pad stage at all. Weights stay [F, C, KH, KW] here: the
 * filter-blocked layout is a compile-time rewrite of a model's constant weights
 * (model/passes.c).
 */
#include <inttypes.h>

#include "ir/error.h"
#include "ops/internal.h"

weft_te_func *weft_op_conv2d(weft_arena *a, int64_t N, int64_t C, int64_t H, int64_t W, int64_t F,
                             int64_t KH, int64_t KW, int64_t stride_h, int64_t stride_w,
                             int64_t pad_h, int64_t pad_w)
{
    const char *op = "conv2d";
    if (!weft_ops_check_sizes(a, op, 9,
                              (const char *const[]){"N", "C", "H", "W", "F", "KH", "KW", "stride_h", "stride_w"},
                              (int64_t[]){N, C, H, W, F, KH, KW, stride_h, stride_w}))
        return NULL;
    if (pad_h < 0 || pad_w < 0 || pad_h > WEFT_OPS_MAX_SIZE || pad_w > WEFT_OPS_MAX_SIZE) {
        weft_fail(WEFT_ERR_INVALID_ARG, "%s: pad_h=%" PRId64 " pad_w=%" PRId64 " must be in [0, %" PRId64 "]", op,
                  pad_h, pad_w, WEFT_OPS_MAX_SIZE);
        return NULL;
    }
    int64_t HP = H + 2 * pad_h, WP = W + 2 * pad_w;
    if (KH > HP || KW > WP) {
        weft_fail(WEFT_ERR_INVALID_ARG,
                  "%s: kernel %" PRId64 "x%" PRId64 " is larger than the padded input %" PRId64 "x%" PRId64
                  " (H=%" PRId64 " W=%" PRId64 " pad %" PRId64 ",%" PRId64 ")",
                  op, KH, KW, HP, WP, H, W, pad_h, pad_w);
        return NULL;
    }
    int64_t OH = (HP - KH) / stride_h + 1, OW = (WP - KW) / stride_w + 1;

    weft_tensor *X = weft_te_placeholder(a, "X", WEFT_F32, 4, (int64_t[]){N, C, H, W});
    weft_tensor *Wt = weft_te_placeholder(a, "Wt", WEFT_F32, 4, (int64_t[]){F, C, KH, KW});
    weft_conv2d_spec spec = {.pad_name = "pad",
                             .red_name = "Y",
                             .out_name = "Y",
                             .w = {.in = {H, W},
                                   .k = {KH, KW},
                                   .s = {stride_h, stride_w},
                                   .d = {1, 1},
                                   .pb = {pad_h, pad_w},
                                   .pe = {pad_h, pad_w},
                                   .out = {OH, OW}},
                             .group = 1,
                             .fb = 0,
                             .F = F};
    weft_tensor *Y = weft_conv2d_stages(a, &spec, X, Wt, NULL);
    return weft_ops_finish(a, op, 2, (const weft_tensor *const[]){X, Wt}, 1, (const weft_tensor *const[]){Y});
}
