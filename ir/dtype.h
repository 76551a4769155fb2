/* Data types as a {code, bits, lanes} triple (DLPack's DLDataType). lanes is 1 everywhere in
 * the IR today: vectorized loops are widened by the backends, not by IR rewriting. */
#ifndef WEFT_IR_DTYPE_H
#define WEFT_IR_DTYPE_H
#include <stdbool.h>
#include <stdint.h>

typedef enum weft_dtype_code { WEFT_DTYPE_BOOL, WEFT_DTYPE_INT, WEFT_DTYPE_FLOAT, WEFT_DTYPE_CODE_COUNT } weft_dtype_code;

typedef struct weft_dtype {
    uint8_t code;   /* weft_dtype_code */
    uint8_t bits;   /* 1 for bool (stored as one byte), 32 or 64 */
    uint16_t lanes; /* 1 */
} weft_dtype;

#define WEFT_F32 ((weft_dtype){WEFT_DTYPE_FLOAT, 32, 1})
#define WEFT_I32 ((weft_dtype){WEFT_DTYPE_INT, 32, 1})
#define WEFT_I64 ((weft_dtype){WEFT_DTYPE_INT, 64, 1})
#define WEFT_BOOL ((weft_dtype){WEFT_DTYPE_BOOL, 1, 1})

static inline bool weft_dtype_eq(weft_dtype a, weft_dtype b)
{ return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes; }
static inline bool weft_dtype_is_float(weft_dtype t) { return t.code == WEFT_DTYPE_FLOAT; }
static inline bool weft_dtype_is_int(weft_dtype t) { return t.code == WEFT_DTYPE_INT; }
static inline bool weft_dtype_is_bool(weft_dtype t) { return t.code == WEFT_DTYPE_BOOL; }
/* Bytes of one element in memory (bool is one byte). */
static inline int weft_dtype_bytes(weft_dtype t) { return t.bits == 1 ? 1 : t.bits / 8; }
/* "float32", "int32", "int64", "bool"; static storage. */
const char *weft_dtype_name(weft_dtype t);
/* Parses a name printed by weft_dtype_name; false when unknown. */
bool weft_dtype_parse(const char *s, weft_dtype *out);

#endif
