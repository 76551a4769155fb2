/* TensorProto decoding: an ONNX tensor (initializer or Constant value) -> dense data.
 *
 * Where the bytes come from, in this order:
 *   1. data_location == EXTERNAL: the file named by external_data["location"], relative to the
 *      model's folder, from "offset" for "length" bytes (both optional). The path must be
 *      relative, without ".." components, and its realpath() must stay inside the model folder:
 *      a model file must not be able to read /etc/passwd through a weight.
 *   2. raw_data: fixed-width little-endian elements (bool: one byte each).
 *   3. the typed repeated field: float_data (FLOAT), int64_data (INT64), int32_data (INT32,
 *      BOOL, INT8 and UINT8).
 * INT8 and UINT8 (one byte each in raw and external data) are widened to INT32 elements of the
 * same value: quantized models keep zero points and weights in them (onnx_qdq.c).
 * Whatever the source, the byte or element count must match prod(dims) exactly, and the shape
 * is checked before any allocation (negative dims, more than WEFT_ONNX_MAX_ELEMS elements), so
 * a corrupt file costs an error message, never a huge allocation or a crash.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frontend/onnx.h"
#include "ir/error.h"
#include "runtime/mem.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define WEFT_HOST_BIG_ENDIAN 1
#else
#define WEFT_HOST_BIG_ENDIAN 0
#endif

const char *weft_onnx_dtype_name(int32_t dt)
{
    static const char *const names[] = {
        "UNDEFINED", "FLOAT",  "UINT8",  "INT8",   "UINT16",    "INT16",      "INT32",    "INT64", "STRING",
        "BOOL",      "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16",
        "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4", "INT4",
    };
    if (dt < 0 || (size_t)dt >= sizeof names / sizeof names[0]) return "?";
    return names[dt];
}

int weft_onnx_dtype_to_type(int32_t dt, weft_type *out)
{
    switch (dt) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: *out = WEFT_TYPE_FLOAT32; return 1;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: *out = WEFT_TYPE_INT64; return 1;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: *out = WEFT_TYPE_INT32; return 1;
    case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: *out = WEFT_TYPE_BOOL; return 1;
    default: return 0;
    }
}

static size_t type_size(weft_type t)
{
    switch (t) {
    case WEFT_TYPE_FLOAT32: return 4;
    case WEFT_TYPE_INT64: return 8;
    case WEFT_TYPE_INT32: return 4;
    case WEFT_TYPE_BOOL: return 1;
    default: return 0;
    }
}

void weft_onnx_dims_str(char *buf, size_t cap, size_t ndim, const int64_t *dims)
{
    size_t at = 0;
    int k = snprintf(buf, cap, "[");
    at = k > 0 ? (size_t)k : 0;
    for (size_t d = 0; d < ndim && at < cap; d++) {
        k = snprintf(buf + at, cap - at, "%s%lld", d ? ", " : "", (long long)dims[d]);
        if (k < 0) break;
        at += (size_t)k;
    }
    if (at < cap) snprintf(buf + at, cap - at, "]");
}

weft_status weft_onnx_check_shape(const weft_onnx_ctx *cx, const char *what, size_t ndim, const int64_t *dims,
                                  int64_t *numel)
{
    char ds[256];
    if (ndim > WEFT_ONNX_MAX_DIMS)
        return weft_fail(WEFT_ERR_UNSUPPORTED, "%s: %s has %zu dimensions; at most %d are supported", cx->src, what,
                         ndim, WEFT_ONNX_MAX_DIMS);
    if (ndim > 0 && dims == NULL) return weft_fail(WEFT_ERR_PARSE, "%s: %s: dims missing", cx->src, what);
    int64_t n = 1;
    for (size_t d = 0; d < ndim; d++) {
        if (dims[d] < 0) {
            weft_onnx_dims_str(ds, sizeof ds, ndim, dims);
            return weft_fail(WEFT_ERR_PARSE, "%s: %s has a negative dimension %lld at axis %zu (dims %s)", cx->src,
                             what, (long long)dims[d], d, ds);
        }
        if (dims[d] > 0 && n > WEFT_ONNX_MAX_ELEMS / dims[d]) {
            weft_onnx_dims_str(ds, sizeof ds, ndim, dims);
            return weft_fail(WEFT_ERR_UNSUPPORTED, "%s: %s has dims %s: more than 2^40 elements", cx->src, what, ds);
        }
        n *= dims[d];
    }
    *numel = n;
    return WEFT_OK;
}

/* ---- external data ------------------------------------------------------------------- */

/* A non-negative decimal integer; false when s is not one. */
static bool parse_count(const char *s, int64_t *out)
{
    if (s == NULL || *s < '0' || *s > '9') return false;
    errno = 0;
    char *end = NULL;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < 0) return false;
    *out = v;
    return true;
}

/* True when the relative path p has a ".." component ("/" and "\" both separate). */
static bool has_dotdot(const char *p)
{
    const char *c = p;
    while (*c) {
        size_t len = strcspn(c, "/\\");
        if (len == 2 && c[0] == '.' && c[1] == '.') return true;
        c += len;
        while (*c == '/' || *c == '\\') c++;
    }
    return false;
}

static weft_status read_external(const weft_onnx_ctx *cx, const Onnx__TensorProto *t, const char *what, int64_t bytes,
                                 void **owned)
{
    const char *loc = NULL;
    int64_t offset = 0, length = -1;
    for (size_t i = 0; i < t->n_external_data; i++) {
        const Onnx__StringStringEntryProto *e = t->external_data[i];
        if (e == NULL || e->key == NULL) continue;
        if (strcmp(e->key, "location") == 0) {
            loc = e->value;
        } else if (strcmp(e->key, "offset") == 0) {
            if (!parse_count(e->value, &offset))
                return weft_fail(WEFT_ERR_PARSE, "%s: %s: external data offset '%s' is not a non-negative integer",
                                 cx->src, what, e->value ? e->value : "");
        } else if (strcmp(e->key, "length") == 0) {
            if (!parse_count(e->value, &length))
                return weft_fail(WEFT_ERR_PARSE, "%s: %s: external data length '%s' is not a non-negative integer",
                                 cx->src, what, e->value ? e->value : "");
        }
    }
    if (loc == NULL || loc[0] == '\0')
        return weft_fail(WEFT_ERR_PARSE, "%s: %s: external data without a 'location'", cx->src, what);
    if (loc[0] == '/' || loc[0] == '\\' || has_dotdot(loc))
        return weft_fail(WEFT_ERR_INVALID_ARG, "%s: %s: external data path '%s' escapes the model folder", cx->src,
                         what, loc);
    if (cx->model_dir == NULL)
        return weft_fail(WEFT_ERR_INVALID_ARG,
                         "%s: %s: external data file '%s' but no model folder is known (load the model from a "
                         "file, or pass model_dir)",
                         cx->src, what, loc);

    weft_status st = WEFT_OK;
    char *joined = NULL, *rdir = NULL, *rfile = NULL;
    void *buf = NULL;
    int fd = -1;
    size_t jlen = strlen(cx->model_dir) + 1 + strlen(loc) + 1;
    joined = weft_malloc(jlen);
    if (joined == NULL) {
        st = weft_fail(WEFT_ERR_NOMEM, "%s: %s: out of memory", cx->src, what);
        goto done;
    }
    snprintf(joined, jlen, "%s/%s", cx->model_dir, loc);
    rdir = realpath(cx->model_dir, NULL);
    if (rdir == NULL) {
        st = weft_fail(WEFT_ERR_IO, "%s: model folder '%s': %s", cx->src, cx->model_dir, strerror(errno));
        goto done;
    }
    rfile = realpath(joined, NULL);
    if (rfile == NULL) {
        st = weft_fail(WEFT_ERR_IO, "%s: %s: external data file '%s': %s", cx->src, what, joined, strerror(errno));
        goto done;
    }
    size_t dl = strlen(rdir);
    bool inside = strncmp(rfile, rdir, dl) == 0 && (rfile[dl] == '/' || (dl == 1 && rdir[0] == '/'));
    if (!inside) { /* a symlink pointing out */
        st = weft_fail(WEFT_ERR_INVALID_ARG, "%s: %s: external data path '%s' escapes the model folder (it resolves "
                       "to '%s')", cx->src, what, loc, rfile);
        goto done;
    }
    fd = open(rfile, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        st = weft_fail(WEFT_ERR_IO, "%s: %s: external data file '%s': %s", cx->src, what, joined, strerror(errno));
        goto done;
    }
    if (!S_ISREG(sb.st_mode)) {
        st = weft_fail(WEFT_ERR_IO, "%s: %s: external data file '%s' is not a regular file", cx->src, what, joined);
        goto done;
    }
    int64_t size = (int64_t)sb.st_size;
    if (length < 0) length = offset <= size ? size - offset : 0;
    if (length != bytes) {
        st = weft_fail(WEFT_ERR_PARSE, "%s: %s: external data in '%s' has %lld bytes, expected %lld", cx->src, what,
                       joined, (long long)length, (long long)bytes);
        goto done;
    }
    if (offset > size || size - offset < length) {
        st = weft_fail(WEFT_ERR_IO, "%s: %s: external data file '%s' is too short: %lld bytes, need %lld at offset "
                       "%lld", cx->src, what, joined, (long long)size, (long long)length, (long long)offset);
        goto done;
    }
    buf = weft_malloc(bytes > 0 ? (size_t)bytes : 1);
    if (buf == NULL) {
        st = weft_fail(WEFT_ERR_NOMEM, "%s: %s: out of memory for %lld bytes", cx->src, what, (long long)bytes);
        goto done;
    }
    for (int64_t got = 0; got < bytes;) {
        ssize_t r = pread(fd, (char *)buf + got, (size_t)(bytes - got), (off_t)(offset + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            st = weft_fail(WEFT_ERR_IO, "%s: %s: reading external data file '%s': %s", cx->src, what, joined,
                           r < 0 ? strerror(errno) : "unexpected end of file");
            goto done;
        }
        got += r;
    }
    *owned = buf;
    buf = NULL;
done:
    if (fd >= 0) close(fd);
    free(buf);
    free(rfile);
    free(rdir);
    free(joined);
    return st;
}

/* ---- decoding ---------------------------------------------------------------------- */

/* Little-endian bytes -> host order, in place (a no-op on little-endian hosts). */
static void from_le(void *p, int64_t numel, size_t esize)
{
#if WEFT_HOST_BIG_ENDIAN
    unsigned char *b = p;
    for (int64_t i = 0; i < numel; i++, b += esize)
        for (size_t k = 0; k < esize / 2; k++) {
            unsigned char tmp = b[k];
            b[k] = b[esize - 1 - k];
            b[esize - 1 - k] = tmp;
        }
#else
    (void)p, (void)numel, (void)esize;
#endif
}

static void normalize_bool(unsigned char *p, int64_t numel)
{
    for (int64_t i = 0; i < numel; i++) p[i] = p[i] != 0;
}

/* The low byte of v as int8 (sign-extended) or uint8. */
static int32_t narrow_value(int32_t v, bool is_signed)
{
    int32_t b = v & 0xff;
    return is_signed && b >= 128 ? b - 256 : b;
}

/* out's data, one byte per element, -> INT32 elements of the same int8 or uint8 value. */
static weft_status widen_bytes(const weft_onnx_ctx *cx, const char *what, bool is_signed, weft_onnx_tensor *out)
{
    int32_t *w = weft_malloc(out->numel > 0 ? (size_t)out->numel * sizeof *w : 1);
    if (w == NULL) {
        weft_onnx_tensor_release(out);
        return weft_fail(WEFT_ERR_NOMEM, "%s: %s: out of memory", cx->src, what);
    }
    const unsigned char *b = out->data;
    for (int64_t i = 0; i < out->numel; i++) w[i] = narrow_value(b[i], is_signed);
    free(out->owned);
    out->owned = w;
    out->data = w;
    return WEFT_OK;
}

weft_status weft_onnx_tensor_decode(const weft_onnx_ctx *cx, const Onnx__TensorProto *t, const char *what,
                                    weft_onnx_tensor *out)
{
    memset(out, 0, sizeof *out);
    if (t == NULL) return weft_fail(WEFT_ERR_PARSE, "%s: %s: tensor missing", cx->src, what);
    if (!t->has_data_type) return weft_fail(WEFT_ERR_PARSE, "%s: %s has no data type", cx->src, what);
    weft_type ty;
    bool is_i8 = t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT8;
    bool narrow = is_i8 || t->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__UINT8; /* widened to INT32 */
    if (narrow) ty = WEFT_TYPE_INT32;
    else if (!weft_onnx_dtype_to_type(t->data_type, &ty))
        return weft_fail(WEFT_ERR_UNSUPPORTED,
                         "%s: %s has data type %s (%d); supported: FLOAT, INT64, INT32, BOOL, INT8, UINT8", cx->src,
                         what, weft_onnx_dtype_name(t->data_type), (int)t->data_type);
    if (t->segment != NULL)
        return weft_fail(WEFT_ERR_UNSUPPORTED, "%s: %s is a segment of a tensor; segments are not supported",
                         cx->src, what);
    int64_t numel;
    weft_status st = weft_onnx_check_shape(cx, what, t->n_dims, t->dims, &numel);
    if (st != WEFT_OK) return st;

    out->type = ty;
    out->onnx_type = t->data_type;
    out->ndim = (int)t->n_dims;
    for (size_t d = 0; d < t->n_dims; d++) out->shape[d] = t->dims[d];
    out->numel = numel;
    size_t esize = narrow ? 1 : type_size(ty); /* bytes per element in the file */
    int64_t bytes = numel * (int64_t)esize;
    char ds[256];

    if (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
        st = read_external(cx, t, what, bytes, &out->owned);
        if (st != WEFT_OK) return st;
        out->data = out->owned;
    } else if (t->has_raw_data || t->raw_data.len > 0) {
        if (t->raw_data.len != (size_t)bytes) {
            weft_onnx_dims_str(ds, sizeof ds, t->n_dims, t->dims);
            return weft_fail(WEFT_ERR_PARSE, "%s: %s: raw_data has %zu bytes, expected %lld (dims %s of %s, %zu bytes "
                             "each)", cx->src, what, t->raw_data.len, (long long)bytes, ds,
                             weft_onnx_dtype_name(t->data_type), esize);
        }
        bool aligned = t->raw_data.data != NULL && (uintptr_t)t->raw_data.data % esize == 0;
        if (aligned && !WEFT_HOST_BIG_ENDIAN && ty != WEFT_TYPE_BOOL) {
            out->data = t->raw_data.data; /* borrowed from the message: add_constant copies it */
        } else {
            out->owned = weft_malloc(bytes > 0 ? (size_t)bytes : 1);
            if (out->owned == NULL)
                return weft_fail(WEFT_ERR_NOMEM, "%s: %s: out of memory for %lld bytes", cx->src, what,
                                 (long long)bytes);
            if (bytes > 0) memcpy(out->owned, t->raw_data.data, (size_t)bytes);
            out->data = out->owned;
        }
    } else {
        size_t have;
        const void *src;
        const char *field;
        switch (ty) {
        case WEFT_TYPE_FLOAT32: have = t->n_float_data, src = t->float_data, field = "float_data"; break;
        case WEFT_TYPE_INT64: have = t->n_int64_data, src = t->int64_data, field = "int64_data"; break;
        default: have = t->n_int32_data, src = t->int32_data, field = "int32_data"; break;
        }
        if (have != (size_t)numel) {
            weft_onnx_dims_str(ds, sizeof ds, t->n_dims, t->dims);
            if (have == 0)
                return weft_fail(WEFT_ERR_PARSE, "%s: %s has no data (dims %s: expected %lld elements in raw_data or "
                                 "%s)", cx->src, what, ds, (long long)numel, field);
            return weft_fail(WEFT_ERR_PARSE, "%s: %s: %s has %zu elements, expected %lld (dims %s)", cx->src, what,
                             field, have, (long long)numel, ds);
        }
        if (narrow) {
            int32_t *w = weft_malloc(numel > 0 ? (size_t)numel * sizeof *w : 1);
            if (w == NULL) return weft_fail(WEFT_ERR_NOMEM, "%s: %s: out of memory", cx->src, what);
            for (int64_t i = 0; i < numel; i++) w[i] = narrow_value(t->int32_data[i], is_i8);
            out->owned = w;
            out->data = w;
            return WEFT_OK;
        }
        if (ty == WEFT_TYPE_BOOL) {
            unsigned char *b = weft_malloc(numel > 0 ? (size_t)numel : 1);
            if (b == NULL) return weft_fail(WEFT_ERR_NOMEM, "%s: %s: out of memory", cx->src, what);
            for (int64_t i = 0; i < numel; i++) b[i] = t->int32_data[i] != 0;
            out->owned = b;
            out->data = b;
            return WEFT_OK; /* already host order and 0/1 */
        }
        if (numel == 0 || src == NULL) {
            out->owned = weft_malloc(1);
            if (out->owned == NULL) return weft_fail(WEFT_ERR_NOMEM, "%s: %s: out of memory", cx->src, what);
            out->data = out->owned;
        } else {
            out->data = src; /* typed fields are host-order arrays in the message */
        }
        return WEFT_OK;
    }
    if (narrow) return widen_bytes(cx, what, is_i8, out);
    if (out->owned != NULL) {
        from_le(out->owned, numel, esize);
        if (ty == WEFT_TYPE_BOOL) normalize_bool(out->owned, numel);
    }
    return WEFT_OK;
}

void weft_onnx_tensor_release(weft_onnx_tensor *t)
{
    if (t == NULL) return;
    free(t->owned);
    t->owned = NULL;
    t->data = NULL;
}
