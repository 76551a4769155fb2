/* The learned cost model: an XGBoost regressor (gbtree, squared error) over
 * weft_features_extract's vectors, through XGBoost's C API (1.7).
 *
 * Training always starts from scratch (a new booster replaces the old one only once it has
 * trained), single-threaded (nthread=1: libgomp's spinning is ruinous on small machines and one
 * thread keeps results deterministic), fixed seed, no row or column subsampling. Fewer than
 * MIN_TRAIN_ROWS rows leave the model as it was. Every XGBoost call is checked; a failure
 * becomes WEFT_ERR_INTERNAL with XGBoost's message. Models are saved as UBJSON (XGBoost's
 * model format, without training parameters), so a loaded booster gets nthread=1 again.
 *
 * Saved buffer: XGBoost's UBJSON model followed by a 16-byte trailer, "weftcm01" and the
 * FNV-1a 64 hash of the model bytes (little-endian). XGBoost stops reading at the end of the
 * UBJSON object, so the buffer is still a model XGBoost itself can load. The trailer is there
 * because XGBoost trusts a model's contents: a model with one flipped byte (a child index, a
 * split feature) can corrupt the heap or loop forever at predict time. load accepts:
 *  - a buffer with a valid trailer (the hash is checked, then the UBJSON structure);
 *  - a plain XGBoost JSON or UBJSON model (structure checked only, see below; only buffers
 *    from a trusted source should come this way).
 */
#include "tuner/cost_model.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xgboost/c_api.h>

#include "ir/error.h"
#include "runtime/mem.h"

#define MIN_TRAIN_ROWS 4
#define N_ROUNDS 40

struct weft_cost_model {
    BoosterHandle booster; /* NULL while untrained */
};

static weft_status xgb_fail(const char *what)
{
    const char *msg = XGBGetLastError();
    if (!msg || !*msg) msg = "(no message)";
    int n = (int)strcspn(msg, "\n"); /* the first line: the rest is XGBoost's stack trace */
    return weft_fail(WEFT_ERR_INTERNAL, "xgboost: %s: %.*s", what, n, msg);
}

#define XGB_CHECK(call, what)                        \
    do {                                             \
        if ((call) != 0) {                           \
            st = xgb_fail(what);                     \
            goto done;                               \
        }                                            \
    } while (0)

/* Parameters that are not part of a saved model and must be set on every booster. */
static weft_status set_runtime_params(BoosterHandle b)
{
    weft_status st = WEFT_OK;
    XGB_CHECK(XGBoosterSetParam(b, "nthread", "1"), "set nthread");
    XGB_CHECK(XGBoosterSetParam(b, "verbosity", "0"), "set verbosity");
done:
    return st;
}

static const char *const train_params[][2] = {
    {"booster", "gbtree"},
    {"objective", "reg:squarederror"},
    {"tree_method", "hist"},
    {"eta", "0.2"},
    {"max_depth", "6"},
    {"min_child_weight", "1"},
    {"subsample", "1"},
    {"colsample_bytree", "1"},
    {"seed", "0"},
};

/* ---- model buffer validation ------------------------------------------------------------
 * XGBoost 1.7's UBJSON reader trusts the lengths in its input (a truncated or garbage buffer
 * makes it read past the end and allocate whatever size it found there), and anything not
 * starting with '{' is parsed as its legacy binary format (the same problem). So load accepts
 * JSON text (given to XGBoost NUL-terminated: its number parser scans to a non-digit) or
 * UBJSON that passes this check of XGBoost's own UBJSON grammar (src/common/json.cc): object
 * keys and strings are 'L' + int64 length; arrays are typed ('$' d|U|l|L '#' 'L' count),
 * counted ('#' 'L' count) or ']'-terminated; every length must fit in what is left.
 */
typedef struct ubj_reader {
    const unsigned char *p, *end;
    int depth;
} ubj_reader;

#define UBJ_MAX_DEPTH 64

static int64_t ubj_left(const ubj_reader *r) { return (int64_t)(r->end - r->p); }

static bool ubj_skip(ubj_reader *r, int64_t n)
{
    if (n < 0 || ubj_left(r) < n) return false;
    r->p += n;
    return true;
}

/* 'L' then a big-endian int64 >= 0. */
static bool ubj_count(ubj_reader *r, int64_t *n)
{
    if (ubj_left(r) < 9 || r->p[0] != 'L') return false;
    uint64_t u = 0;
    for (int i = 1; i <= 8; i++) u = (u << 8) | r->p[i];
    r->p += 9;
    if (u > (uint64_t)INT64_MAX) return false;
    *n = (int64_t)u;
    return true;
}

static bool ubj_str(ubj_reader *r)
{
    int64_t n;
    return ubj_count(r, &n) && ubj_skip(r, n);
}

static bool ubj_value(ubj_reader *r);

static bool ubj_object(ubj_reader *r)
{
    for (;;) {
        if (r->p >= r->end) return false;
        if (*r->p == '}') {
            r->p++;
            return true;
        }
        if (!ubj_str(r) || !ubj_value(r)) return false;
    }
}

static bool ubj_array(ubj_reader *r)
{
    if (r->p >= r->end) return false;
    int64_t n;
    if (*r->p == '$') {
        if (ubj_left(r) < 3 || r->p[2] != '#') return false;
        int size;
        switch (r->p[1]) {
        case 'd': case 'l': size = 4; break;
        case 'U': size = 1; break;
        case 'L': size = 8; break;
        default: return false;
        }
        r->p += 3;
        if (!ubj_count(r, &n) || n > ubj_left(r) / size) return false;
        r->p += n * size;
        return true;
    }
    if (*r->p == '#') {
        r->p++;
        if (!ubj_count(r, &n) || n > ubj_left(r)) return false; /* every value takes a byte or more */
        for (int64_t i = 0; i < n; i++)
            if (!ubj_value(r)) return false;
        return true;
    }
    for (;;) {
        if (r->p >= r->end) return false;
        if (*r->p == ']') {
            r->p++;
            return true;
        }
        if (!ubj_value(r)) return false;
    }
}

static bool ubj_value(ubj_reader *r)
{
    if (r->p >= r->end) return false;
    unsigned char m = *r->p++;
    switch (m) {
    case '{':
    case '[': {
        if (++r->depth > UBJ_MAX_DEPTH) return false;
        bool ok = m == '{' ? ubj_object(r) : ubj_array(r);
        r->depth--;
        return ok;
    }
    case 'Z': case 'T': case 'F': return true;
    case 'i': case 'U': case 'C': return ubj_skip(r, 1);
    case 'I': return ubj_skip(r, 2);
    case 'l': case 'd': return ubj_skip(r, 4);
    case 'L': return ubj_skip(r, 8);
    case 'S': return ubj_str(r);
    default: return false; /* includes D and H, which XGBoost rejects */
    }
}

typedef enum { MODEL_BAD, MODEL_JSON, MODEL_UBJ } model_format;

#define TRAILER_MAGIC "weftcm01"
#define TRAILER_LEN 16

static uint64_t fnv1a64(const unsigned char *p, size_t n)
{
    uint64_t h = 14695981039346656037ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

static void put_u64le(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_u64le(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static model_format model_buffer_format(const void *buf, size_t len)
{
    const unsigned char *p = buf;
    if (len < 2 || p[0] != '{') return MODEL_BAD;
    if (p[1] == '"') return MODEL_JSON;
    ubj_reader r = {p, p + len, 0};
    return ubj_value(&r) && r.p == r.end ? MODEL_UBJ : MODEL_BAD;
}

weft_status weft_cost_model_create(weft_cost_model **out)
{
    if (!out) return weft_fail(WEFT_ERR_INVALID_ARG, "cost_model_create: out is NULL");
    *out = weft_calloc(1, sizeof **out);
    if (!*out) return weft_fail(WEFT_ERR_NOMEM, "cost_model_create: out of memory");
    return WEFT_OK;
}

void weft_cost_model_destroy(weft_cost_model *m)
{
    if (!m) return;
    if (m->booster) XGBoosterFree(m->booster);
    free(m);
}

bool weft_cost_model_trained(const weft_cost_model *m) { return m && m->booster; }

weft_status weft_cost_model_train(weft_cost_model *m, const float *x, const float *y, int n)
{
    if (!m || n < 0 || (n > 0 && (!x || !y)))
        return weft_fail(WEFT_ERR_INVALID_ARG, "cost_model_train: bad arguments (n=%d)", n);
    if (n < MIN_TRAIN_ROWS) return WEFT_OK;
    for (int i = 0; i < n; i++)
        if (!isfinite(y[i]))
            return weft_fail(WEFT_ERR_INVALID_ARG, "cost_model_train: target %d is not finite (%g)", i, (double)y[i]);

    weft_status st = WEFT_OK;
    DMatrixHandle d = NULL;
    BoosterHandle b = NULL;
    XGB_CHECK(XGDMatrixCreateFromMat(x, (bst_ulong)n, WEFT_FEATURE_DIM, NAN, &d), "create DMatrix");
    XGB_CHECK(XGDMatrixSetFloatInfo(d, "label", y, (bst_ulong)n), "set labels");
    XGB_CHECK(XGBoosterCreate(&d, 1, &b), "create booster");
    st = set_runtime_params(b);
    if (st != WEFT_OK) goto done;
    for (size_t i = 0; i < sizeof train_params / sizeof train_params[0]; i++)
        XGB_CHECK(XGBoosterSetParam(b, train_params[i][0], train_params[i][1]), train_params[i][0]);
    for (int it = 0; it < N_ROUNDS; it++) XGB_CHECK(XGBoosterUpdateOneIter(b, it, d), "update");
    if (m->booster) XGBoosterFree(m->booster);
    m->booster = b;
    b = NULL;
done:
    if (b) XGBoosterFree(b);
    if (d) XGDMatrixFree(d);
    return st;
}

weft_status weft_cost_model_predict(weft_cost_model *m, const float *x, int n, float *out)
{
    if (!m || n < 0 || (n > 0 && (!x || !out)))
        return weft_fail(WEFT_ERR_INVALID_ARG, "cost_model_predict: bad arguments (n=%d)", n);
    if (n == 0) return WEFT_OK;
    if (!m->booster) {
        memset(out, 0, sizeof(float) * (size_t)n);
        return WEFT_OK;
    }
    weft_status st = WEFT_OK;
    DMatrixHandle d = NULL;
    bst_ulong len = 0;
    const float *res = NULL;
    XGB_CHECK(XGDMatrixCreateFromMat(x, (bst_ulong)n, WEFT_FEATURE_DIM, NAN, &d), "create DMatrix");
    XGB_CHECK(XGBoosterPredict(m->booster, d, 0, 0, 0, &len, &res), "predict");
    if (len != (bst_ulong)n || !res) {
        st = weft_fail(WEFT_ERR_INTERNAL, "xgboost: predict returned %llu values for %d rows",
                       (unsigned long long)len, n);
        goto done;
    }
    memcpy(out, res, sizeof(float) * (size_t)n);
done:
    if (d) XGDMatrixFree(d);
    return st;
}

weft_status weft_cost_model_save(weft_cost_model *m, void **buf, size_t *len)
{
    if (!m || !buf || !len) return weft_fail(WEFT_ERR_INVALID_ARG, "cost_model_save: bad arguments");
    *buf = NULL;
    *len = 0;
    if (!m->booster) return weft_fail(WEFT_ERR_INVALID_ARG, "cost_model_save: the model is not trained");
    weft_status st = WEFT_OK;
    bst_ulong n = 0;
    const char *data = NULL;
    XGB_CHECK(XGBoosterSaveModelToBuffer(m->booster, "{\"format\": \"ubj\"}", &n, &data), "save model");
    if (!data || n == 0) {
        st = weft_fail(WEFT_ERR_INTERNAL, "xgboost: save model returned an empty buffer");
        goto done;
    }
    unsigned char *out = weft_malloc((size_t)n + TRAILER_LEN); /* the booster owns data: copy it */
    if (!out) {
        st = weft_fail(WEFT_ERR_NOMEM, "cost_model_save: out of memory (%llu bytes)", (unsigned long long)n);
        goto done;
    }
    memcpy(out, data, (size_t)n);
    memcpy(out + n, TRAILER_MAGIC, 8);
    put_u64le(out + n + 8, fnv1a64(out, (size_t)n));
    *buf = out;
    *len = (size_t)n + TRAILER_LEN;
done:
    return st;
}

weft_status weft_cost_model_load_stored(weft_cost_model *m, const void *buf, size_t len)
{
    if (!m || !buf || len == 0) return weft_fail(WEFT_ERR_INVALID_ARG, "cost_model_load: bad arguments");
    if (len < TRAILER_LEN || memcmp((const unsigned char *)buf + len - TRAILER_LEN, TRAILER_MAGIC, 8))
        return weft_fail(WEFT_ERR_PARSE, "cost_model_load: stored model (%zu bytes) has no weft checksum trailer", len);
    return weft_cost_model_load(m, buf, len);
}

weft_status weft_cost_model_load(weft_cost_model *m, const void *buf, size_t len)
{
    if (!m || !buf || len == 0) return weft_fail(WEFT_ERR_INVALID_ARG, "cost_model_load: bad arguments");
    const unsigned char *bytes = buf;
    if (len >= TRAILER_LEN && !memcmp(bytes + len - TRAILER_LEN, TRAILER_MAGIC, 8)) {
        len -= TRAILER_LEN;
        if (get_u64le(bytes + len + 8) != fnv1a64(bytes, len))
            return weft_fail(WEFT_ERR_PARSE, "cost_model_load: model checksum mismatch (%zu bytes): corrupted", len);
    }
    model_format fmt = model_buffer_format(buf, len);
    if (fmt == MODEL_BAD)
        return weft_fail(WEFT_ERR_PARSE, "cost_model_load: not an XGBoost JSON/UBJSON model (%zu bytes)", len);
    weft_status st = WEFT_OK;
    BoosterHandle b = NULL;
    char *text = NULL;
    if (fmt == MODEL_JSON) {
        text = weft_malloc(len + 1);
        if (!text) return weft_fail(WEFT_ERR_NOMEM, "cost_model_load: out of memory (%zu bytes)", len);
        memcpy(text, buf, len);
        text[len] = '\0';
        buf = text;
    }
    XGB_CHECK(XGBoosterCreate(NULL, 0, &b), "create booster");
    XGB_CHECK(XGBoosterLoadModelFromBuffer(b, buf, (bst_ulong)len), "load model");
    st = set_runtime_params(b);
    if (st != WEFT_OK) goto done;
    /* A model for another feature width would mispredict silently: reject it. */
    bst_ulong nf = 0;
    XGB_CHECK(XGBoosterGetNumFeature(b, &nf), "number of features");
    if (nf != WEFT_FEATURE_DIM) {
        st = weft_fail(WEFT_ERR_INVALID_ARG, "cost_model_load: model has %llu features, expected %d",
                       (unsigned long long)nf, WEFT_FEATURE_DIM);
        goto done;
    }
    if (m->booster) XGBoosterFree(m->booster);
    m->booster = b;
    b = NULL;
done:
    if (b) XGBoosterFree(b);
    free(text);
    return st;
}
