/* reply_slot.c - see reply_slot.h. */
#include "reply_slot.h"

#include <stdlib.h>
#include <string.h>

/* Raw msgpack writers with a chosen encoding (every form is valid msgpack and decodes to the same
 * value; the longer forms only serve to align what follows). form: 0 shortest .. 3 longest. */
static size_t str_len(size_t l, int form) { return form == 0 ? (l < 32 ? 1 + l : 0) : form == 1 ? 2 + l : form == 2 ? 3 + l : 5 + l; }
static size_t uint_len(uint64_t v, int form) {
    return form == 0 ? (v < 128 ? 1 : 0) : form == 1 ? (v < 256 ? 2 : 0) : form == 2 ? (v < 65536 ? 3 : 0) : form == 3 ? (v >> 32 ? 0 : 5) : 9;
}
static void put_be(unsigned char *p, uint64_t v, int nbytes) {
    for (int i = nbytes - 1; i >= 0; i--, v >>= 8) p[i] = (unsigned char)v;
}
static size_t put_str(unsigned char *p, const char *s, int form) {
    size_t l = strlen(s), h;
    if (form == 0) p[0] = (unsigned char)(0xa0 | l), h = 1;
    else if (form == 1) p[0] = 0xd9, p[1] = (unsigned char)l, h = 2;
    else if (form == 2) p[0] = 0xda, put_be(p + 1, l, 2), h = 3;
    else p[0] = 0xdb, put_be(p + 1, l, 4), h = 5;
    memcpy(p + h, s, l);
    return h + l;
}
static size_t put_uint(unsigned char *p, uint64_t v, int form) {
    static const unsigned char tag[] = {0, 0xcc, 0xcd, 0xce, 0xcf};
    static const int nb[] = {0, 1, 2, 4, 8};
    if (form == 0) {
        p[0] = (unsigned char)v;
        return 1;
    }
    p[0] = tag[form];
    put_be(p + 1, v, nb[form]);
    return 1 + (size_t)nb[form];
}

/* Appends key `key` and the header of a wire array {dtype, shape [n], data: bin} to sb, whose
 * data then starts at an offset that is a multiple of 8 (the encodings of "shape", "data" and n
 * are chosen for that), and returns where its n elements go: the slot is reserved, not written.
 * sb must have room for all of it (no reallocation). */
void *reply_slot(msgpack_sbuffer *sb, const char *key, hw_dtype dt, int64_t n) {
    size_t nb = (size_t)n * hw_dtype_size(dt), binh = nb < 256 ? 2 : nb < 65536 ? 3 : 5;
    const char *dn = hw_dtype_name(dt);
    size_t fixed = str_len(strlen(key), 0) + 1 + str_len(5, 0) + str_len(strlen(dn), 0) + 1 + binh; /* key, map3, "dtype", name, [ , bin hdr */
    for (int fs = 0; fs < 4; fs++)
        for (int fd = 0; fd < 4; fd++)
            for (int fu = 0; fu < 5; fu++) {
                size_t lu = uint_len((uint64_t)n, fu), len = fixed + str_len(5, fs) + str_len(4, fd) + lu;
                if (!lu || (sb->size + len) % 8) continue;
                unsigned char *p = (unsigned char *)sb->data + sb->size, *q = p;
                q += put_str(q, key, 0);
                *q++ = 0x83;
                q += put_str(q, "dtype", 0);
                q += put_str(q, dn, 0);
                q += put_str(q, "shape", fs);
                *q++ = 0x91;
                q += put_uint(q, (uint64_t)n, fu);
                q += put_str(q, "data", fd);
                if (binh == 2) *q++ = 0xc4, *q++ = (unsigned char)nb;
                else if (binh == 3) *q++ = 0xc5, put_be(q, nb, 2), q += 2;
                else *q++ = 0xc6, put_be(q, nb, 4), q += 4;
                sb->size += (size_t)(q - p) + nb;
                return q;
            }
    abort(); /* unreachable: the forms cover every residue mod 8 */
}
