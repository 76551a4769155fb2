/* weft — a tensor compiler and autotuner.
 *
 * Public umbrella header. Every fallible function returns a weft_status; on failure a
 * thread-local message (weft_last_error) says what went wrong, where, and expected vs got.
 * Strings returned by the library are borrowed: valid until the next weft call on the same thread.
 *
 * The public headers: weft.h (status codes, errors, version), graph.h (building graphs by
 * calls, compiling them into models, running them), model.h (what a model takes and gives,
 * size-checked runs, execution contexts for threads, symbolic dimensions, tuned compile) and
 * onnx.h (ONNX import). Link with libweft.so: `pkg-config --cflags --libs weft`, or CMake
 * `find_package(weft)` and the target weft::weft.
 *
 * Worked example (an ONNX model with tuned schedules, checked runs; public API only):
 *
 *   #include "weft/model.h"
 *   #include "weft/onnx.h"
 *
 *   weft_graph *g = NULL;
 *   weft_model *m = NULL;
 *   if (weft_onnx_load("mlp.onnx", &g) != WEFT_OK) { fprintf(stderr, "%s\n", weft_last_error()); return 1; }
 *   weft_model_options opt = weft_model_options_default();   // opt.threads = 0: the cores
 *   weft_status st = weft_model_compile_tuned(g, &opt, "tuned.db", &m, NULL);  // or weft_model_compile
 *   weft_graph_destroy(g);                                     // the model keeps what it needs
 *   if (st != WEFT_OK) { fprintf(stderr, "%s: %s\n", weft_status_name(st), weft_last_error()); return 1; }
 *   weft_tensor_info in, out;
 *   weft_model_input_info(m, 0, &in);                          // "input", float32 [32, 512], 65536 bytes
 *   weft_model_output_info(m, 0, &out);
 *   float *x = malloc(in.bytes), *y = malloc(out.bytes);      // ... fill x ...
 *   st = weft_model_run_sized(m, 1, (const void *[]){x}, &in.bytes, 1, (void *[]){y}, &out.bytes);
 *   weft_model_destroy(m);
 *
 * examples/onnx_run.c is this example in full (and a model with a symbolic batch dimension);
 * examples/mlp.c builds the same network by calls with graph.h.
 */
#ifndef WEFT_WEFT_H
#define WEFT_WEFT_H

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_VERSION_MAJOR 0
#define WEFT_VERSION_MINOR 1
#define WEFT_VERSION_PATCH 0
#define WEFT_VERSION_STRING "0.1.0"

#if defined(__GNUC__)
#define WEFT_API __attribute__((visibility("default")))
#else
#define WEFT_API
#endif

typedef enum weft_status {
    WEFT_OK = 0,
    WEFT_ERR_INVALID_ARG,
    WEFT_ERR_SHAPE,
    WEFT_ERR_UNSUPPORTED,
    WEFT_ERR_PARSE,
    WEFT_ERR_NOMEM,
    WEFT_ERR_UNAVAILABLE, /* no driver, device or library */
    WEFT_ERR_COMPILE,
    WEFT_ERR_DEVICE,
    WEFT_ERR_DB,
    WEFT_ERR_DB_BUSY,
    WEFT_ERR_IO,
    WEFT_ERR_TIMEOUT,
    WEFT_ERR_INTERNAL,
    WEFT_STATUS_COUNT
} weft_status;

/* Name of a status code ("WEFT_ERR_PARSE"); static storage. */
WEFT_API const char *weft_status_name(weft_status st);

/* The message of the last failure on this thread; borrowed, never NULL ("" when none). */
WEFT_API const char *weft_last_error(void);

/* Library version string, static storage. */
WEFT_API const char *weft_version(void);

#ifdef __cplusplus
}
#endif
#endif
