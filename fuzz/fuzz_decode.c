/* fuzz_decode.c - libFuzzer harness for the message decoder (protocol/hw_codec.c): the bounded
 * pre-check, msgpack decoding, typed field access, wire arrays and msgpack -> JSON conversion.
 * Any crash, sanitizer report, leak or hang is a finding. Run: make fuzz (docs/security.md). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hw_codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    hw_limits lim = hw_limits_default;
    lim.max_msg = 1 << 20;
    lim.max_bin = 1 << 20;
    hw_err err;
    hw_err_clear(&err);
    hw_msg m;
    (void)hw_msg_check((const char *)data, size, &lim, &err);
    if (hw_msg_decode(&m, (const char *)data, size, &lim, &err) == 0) {
        const msgpack_object *root = m.root;
        char buf[64];
        int64_t x;
        bool b;
        (void)hw_mp_str(root, "op", "", buf, sizeof buf, &err);
        (void)hw_mp_str(root, "session", "", buf, sizeof buf, &err);
        (void)hw_mp_int(root, "v", false, 0, INT64_MIN, INT64_MAX, &x, &err);
        (void)hw_mp_bool(root, "flag", false, &b, &err);
        hw_array a;
        const msgpack_object *act = hw_mp_get(root, "action");
        if (act && hw_mp_array(act, "action", m.up.zone, 1 << 16, &a, &err) == 0) {
            int64_t n = hw_array_numel(&a);
            for (int64_t i = 0; i < n && i < 64; i++) {
                (void)hw_array_get_i64(&a, i);
                (void)hw_array_get_f64(&a, i);
            }
        }
        json_t *j = hw_mp_to_json_max(root, 1 << 16, &err);
        if (j) {
            msgpack_sbuffer sb;
            msgpack_sbuffer_init(&sb);
            msgpack_packer pk;
            msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
            hw_pack_json(&pk, j);
            msgpack_sbuffer_destroy(&sb);
            json_decref(j);
        }
        hw_msg_free(&m);
    }
    if (!hw_utf8_valid(err.msg, strnlen(err.msg, sizeof err.msg))) abort(); /* error text is always UTF-8 */
    return 0;
}
