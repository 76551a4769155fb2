/* The HIP target (targets/hip/hip.c): loop IR -> HIP C++ (targets/gpu/emit_c.h, HIP dialect)
 * -> hiprtc -> an AMD GPU code object (an ELF "hsaco") for one gfx architecture.
 *
 * Targets: "hip" (the device's architecture when a HIP runtime and device are present, gfx90a
 * otherwise) and "hip:gfxNNN" for each architecture listed in HIP_ARCHES (hip.c): those ROCm
 * 5.2's hiprtc compiles for. They compile without a device. An architecture outside the list
 * is refused before hiprtc sees it: ROCm 5.2's hiprtcCompileProgram aborts the whole process
 * on an architecture it does not know (gfx940, gfx1100, typos).
 *
 * Nothing of ROCm is linked: libamdhip64.so.5 (the HIP runtime, which also holds hiprtc) is
 * loaded with dlopen on first use (the environment variable WEFT_HIP_LIB names another file),
 * so weft starts on machines without ROCm; there every use says "no HIP runtime ...", and
 * where the runtime finds no GPU, running says "no HIP device ...".
 *
 * dump(WEFT_DUMP_IR) gives the HIP source; dump(WEFT_DUMP_ASM) a summary of the code object
 * (architecture, size, kernel names): hiprtc in ROCm 5.2 gives no assembly text.
 *
 * Caps: name "hip", cpu the gfx architecture, features "device=NAME" (the GPU's name, or
 * "none" when compiling without one), so tuning records are keyed by device name and
 * architecture; warp_size the wavefront (64 on GCN/CDNA, 32 on RDNA gfx10+); 1024 threads and
 * 64 KiB of LDS (shared memory) per block. Buffer operations and run() use hipMalloc,
 * hipMemcpy*Async, hipModuleLoadData and hipModuleLaunchKernel on device 0. */
#ifndef WEFT_TARGETS_HIP_H
#define WEFT_TARGETS_HIP_H
#include <stdbool.h>
#include <stddef.h>

#include "targets/target.h"

/* The registered HIP targets: "hip" then "hip:gfxNNN" for each known architecture. */
extern const weft_target_ops *const weft_target_hip_list[];
extern const int weft_target_hip_count;

/* Whether the HIP runtime loads and reports a device; when not, why (one line: "no HIP
 * runtime ..." or "no HIP device ...") in why[0..n-1]. */
bool weft_hip_device_available(char *why, size_t n);

/* WEFT_OK when hiprtc can compile for arch ("gfx90a"); else WEFT_ERR_UNAVAILABLE with a
 * message naming arch and listing the known architectures. Never calls hiprtc. */
weft_status weft_hip_check_arch(const char *arch);

/* Wavefront size of arch: 32 on RDNA (gfx10, gfx11), 64 otherwise. */
int weft_hip_wavefront(const char *arch);

/* HIP source -> code object for arch. *code is malloc'd (caller frees); hiprtc's log is in
 * the error message. An unknown arch is refused (weft_hip_check_arch). */
weft_status weft_hip_hiprtc(const char *src, const char *arch, void **code, size_t *size);

#endif
