/* The interpreter's compiled form of a loop function: flat arrays of expression nodes and
 * statements with loop variables resolved to environment slots and buffers to buffer slots.
 * Written by program.c (compile and validate), read by interp.c (execute). Private to
 * targets/interp/.
 */
#ifndef WEFT_TARGETS_INTERP_PROGRAM_H
#define WEFT_TARGETS_INTERP_PROGRAM_H
#include <stddef.h>
#include <stdint.h>

#include "ir/stmt.h"
#include "targets/target.h"
#include "weft/weft.h"

/* Value classes. */
enum { V_BOOL, V_I32, V_I64, V_F32, V_F64 };

/* Internal opcodes after the expression kinds: the hot int64 index arithmetic and float32
 * arithmetic with the class folded in, so evaluating them takes one dispatch, not three. */
enum {
    OP_I64_ADD = WEFT_EXPR_COUNT, OP_I64_SUB, OP_I64_MUL,
    OP_F32_ADD, OP_F32_SUB, OP_F32_MUL, OP_F32_DIV,
    OP_F32_LOAD, OP_I64_LOAD,
};

typedef union ival {
    int64_t i; /* V_BOOL (0/1), V_I32 (sign-extended), V_I64 */
    double d;  /* V_F64 */
    float f;   /* V_F32 */
} ival;

/* One expression node. Access rules by op (a kind, or a fused OP_ code with the same fields):
 *   INT, FLOAT   imm
 *   VAR          a = slot
 *   binary ops   a, b = operands; cls = operand class (the result is bool for compares)
 *   NOT          a
 *   CAST         a; cls = source class, rcls = result class
 *   SELECT       a = cond, b = true arm, c = false arm; cls = arm class
 *   CALL         a, b = arguments (b = -1 when unary), c = intrinsic; cls = argument class
 *   LOAD         a = buffer slot, b = index */
typedef struct inode {
    uint16_t op;       /* weft_expr_kind, or OP_* */
    uint8_t cls, rcls; /* value classes (V_*), see above */
    int32_t a, b, c;
    ival imm;
} inode;

/* One statement. FOR: a = var slot, b = min, c = extent, d = body. STORE: a = buffer slot,
 * b = index, c = value. ALLOCATE: a = buffer slot, d = body. IF: b = cond, c = then, d = else
 * or -1. SEQ: a = first item in kids, b = count. */
typedef struct istmt {
    weft_stmt_kind kind;
    int32_t a, b, c, d;
    int32_t axis; /* FOR: the weft_thread_axis of a THREAD_BOUND loop, 0 otherwise */
} istmt;

typedef struct ibuf {
    const weft_buffer *buf; /* identity during compile only; not read by run */
    char *name;             /* owned copy, for messages */
    int cls;       /* V_* of the elements */
    int param;     /* parameter index, or -1 when ALLOCATE'd */
    int64_t size;  /* elements */
    size_t bytes;  /* size * element bytes */
    int scope;     /* weft_scope */
} ibuf;

/* A compiled kernel owns all its arrays (and copies of the names it prints); it keeps no
 * pointer into the loop function once compiled. */
struct weft_kernel {
    char *name;
    inode *nodes;
    int n_nodes, cap_nodes;
    istmt *stmts;
    int n_stmts, cap_stmts;
    int32_t *kids;
    int n_kids, cap_kids;
    ibuf *bufs;
    int n_bufs, cap_bufs;
    int n_slots;
    int32_t root;
};

/* Validates f and translates it; on failure *out is NULL and weft_last_error says why. */
weft_status weft_interp_program_compile(const weft_loop_func *f, weft_kernel **out);
/* Accepts NULL. */
void weft_interp_program_destroy(weft_kernel *k);

#endif
