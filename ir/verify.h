/* The loop-IR verifier: the rules every loop function obeys, checked by lowering's last pass
 * and by targets before they run or compile one.
 *
 *   parameters: params[i]->param_index == i; every load/store names a parameter or a buffer
 *   ALLOCATEd around it; each loop variable is bound by one FOR and used only inside it;
 *   extents are positive where constant, constant for VECTORIZED and UNROLLED loops;
 *   THREAD_BOUND loops only where caps allow thread binding (caps NULL: no target checks);
 *   no TLOAD left; indices are integers; a store's value has its buffer's dtype.
 *
 * A failure is WEFT_ERR_INTERNAL naming the spot (a lowering bug), or WEFT_ERR_INVALID_ARG
 * when the IR is fine but this target cannot run it.
 */
#ifndef WEFT_IR_VERIFY_H
#define WEFT_IR_VERIFY_H
#include "ir/caps.h"
#include "ir/stmt.h"
#include "weft/weft.h"

weft_status weft_ir_verify(const weft_loop_func *f, const weft_target_caps *caps);

#endif
