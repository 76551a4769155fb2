/* The learned cost model (DESIGN #5): features of a lowered kernel (tuner/features.c) and an
 * XGBoost regressor over them (tuner/cost_model.c, XGBoost's C API, nthread=1), trained online
 * on measured candidates; it predicts a score where higher is faster (normalized throughput).
 * Saved to and loaded from a byte buffer (the database stores it).
 */
#ifndef WEFT_TUNER_COST_MODEL_H
#define WEFT_TUNER_COST_MODEL_H
#include <stdbool.h>
#include <stddef.h>

#include "ir/stmt.h"
#include "weft/weft.h"

#define WEFT_FEATURE_DIM 64

/* Fixed-length features of a lowered kernel (aggregated over its stores): arithmetic counts by
 * kind (float add/mul/fma-able, div, intrinsics, int index ops, compares/selects), loop
 * structure (vectorized lanes, unrolled steps, parallel extent, depth, innermost extent),
 * memory (bytes touched per buffer scope, loads/stores per iteration, unit-stride fraction,
 * stride of the innermost loop per access, reuse estimates), arithmetic intensity, allocation
 * sizes. Log-scaled where counts span orders of magnitude. out has WEFT_FEATURE_DIM floats. */
void weft_features_extract(const weft_loop_func *f, float *out);

typedef struct weft_cost_model weft_cost_model;

weft_status weft_cost_model_create(weft_cost_model **out);
void weft_cost_model_destroy(weft_cost_model *m); /* accepts NULL */
/* Trains from scratch on n rows of features (row-major, WEFT_FEATURE_DIM columns) with
 * targets y (higher = better). Deterministic. */
weft_status weft_cost_model_train(weft_cost_model *m, const float *x, const float *y, int n);
bool weft_cost_model_trained(const weft_cost_model *m);
/* Predicts n rows into out; an untrained model predicts 0 for every row. */
weft_status weft_cost_model_predict(weft_cost_model *m, const float *x, int n, float *out);
/* Serialization (XGBoost's UBJSON/JSON model); *buf malloc'd, caller frees. */
weft_status weft_cost_model_save(weft_cost_model *m, void **buf, size_t *len);
weft_status weft_cost_model_load(weft_cost_model *m, const void *buf, size_t len);
/* Loads a model as weft_cost_model_save wrote it: the checksum trailer is required (what the
 * database stores; a corrupted blob is refused before XGBoost parses it, whose loader can crash
 * on malformed tree arrays: XGBoost 1.7.4, RegTree::LoadModel). */
weft_status weft_cost_model_load_stored(weft_cost_model *m, const void *buf, size_t len);

#endif
