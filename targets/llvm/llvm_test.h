/* What the LLVM target's tests may set beyond the target interface (no LLVM headers needed). */
#ifndef WEFT_TARGETS_LLVM_TEST_H
#define WEFT_TARGETS_LLVM_TEST_H

#include <stdbool.h>

#include "targets/target.h"

/* Overrides t's slow_gather (set from the CPU name at create: AMD Zen), so that a test can
 * check the code made for either kind of CPU on any host. t must be an LLVM target. */
void weft_llvm_test_set_slow_gather(weft_target *t, bool slow);

#endif
