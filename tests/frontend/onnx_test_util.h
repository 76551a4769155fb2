/* Helpers of the frontend tests: packing a hand-built ONNX graph (protobuf-c structs) into
 * model bytes, loading it, and checking a refusal's status and message. Include after cmocka.h. */
#ifndef WEFT_TESTS_FRONTEND_ONNX_TEST_UTIL_H
#define WEFT_TESTS_FRONTEND_ONNX_TEST_UTIL_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"
#include "weft/onnx.h"

/* The bytes (*len of them, malloc'd) of a model holding graph gp that imports `domain`'s opset
 * `opset` (IR version 7). */
static inline uint8_t *onnx_pack(Onnx__GraphProto *gp, const char *domain, int64_t opset, size_t *len)
{
    Onnx__OperatorSetIdProto op = ONNX__OPERATOR_SET_ID_PROTO__INIT;
    op.domain = (char *)domain;
    op.has_version = 1;
    op.version = opset;
    Onnx__OperatorSetIdProto *ops[] = {&op};
    Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
    m.has_ir_version = 1;
    m.ir_version = 7;
    m.producer_name = "weft-test";
    m.graph = gp;
    m.n_opset_import = 1;
    m.opset_import = ops;
    *len = onnx__model_proto__get_packed_size(&m);
    uint8_t *buf = malloc(*len);
    assert_non_null(buf);
    assert_int_equal(onnx__model_proto__pack(&m, buf), *len);
    return buf;
}

/* Graph gp at the default domain's opset `opset`, loaded from memory into *g. */
static inline weft_status onnx_pack_load(Onnx__GraphProto *gp, int64_t opset, weft_graph **g)
{
    size_t len;
    uint8_t *buf = onnx_pack(gp, "", opset, &len);
    *g = NULL;
    weft_status rc = weft_onnx_load_buffer(buf, len, NULL, g);
    free(buf);
    return rc;
}

/* got is want, and weft_last_error() holds every one of needles (NULL-terminated). */
static inline void expect_refusal(weft_status got, weft_status want, const char *const *needles)
{
    const char *msg = weft_last_error();
    print_message("%s\n", got == WEFT_OK ? "ok" : msg);
    assert_int_equal(got, want);
    for (int i = 0; needles[i]; i++) {
        if (!strstr(msg, needles[i])) print_error("missing '%s' in: %s\n", needles[i], msg);
        assert_non_null(strstr(msg, needles[i]));
    }
}

#endif
