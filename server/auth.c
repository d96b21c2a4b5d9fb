/* auth.c - see auth.h. The ZAP protocol is ZeroMQ RFC 27: the handler binds
 * inproc://zeromq.zap.01 in the server's context and answers each handshake. */
#include "auth.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#define MAX_KEYS 4096

struct hw_auth {
    char secret[41];
    unsigned char allow[MAX_KEYS][32];
    int nallow;
    bool has_allow;
    void *ctx, *zap;
    pthread_t th;
    bool running;
};

/* The first whitespace-separated token of the line that is a 40-character Z85 key (Z85 itself
 * uses ':', '=', '#', so keys are recognised by length and decoding, not by separators). */
static bool line_key(const char *line, char out[41], unsigned char raw[32]) {
    const char *p = line;
    for (;;) {
        while (*p == ' ' || *p == '\t') p++;
        if (!*p || *p == '\n' || *p == '\r') return false;
        size_t n = strcspn(p, " \t\r\n");
        if (n == 40) {
            memcpy(out, p, 40);
            out[40] = 0;
            if (zmq_z85_decode(raw, out)) return true;
        }
        p += n;
    }
}

static int read_key_token(FILE *f, char *out) {
    char line[512];
    unsigned char raw[32];
    while (fgets(line, sizeof line, f))
        if (line_key(line, out, raw)) return 0;
    return -1;
}

hw_auth *hw_auth_load(const char *secret_file, const char *allow_file) {
    hw_auth *a = calloc(1, sizeof *a);
    if (!a) abort();
    FILE *f = fopen(secret_file, "r");
    if (!f) {
        fprintf(stderr, "hwgym-server: --curve-secret: cannot read %s\n", secret_file);
        free(a);
        return NULL;
    }
    int rc = read_key_token(f, a->secret);
    fclose(f);
    unsigned char raw[32];
    if (rc || !zmq_z85_decode(raw, a->secret)) {
        fprintf(stderr, "hwgym-server: --curve-secret: %s holds no 40-character Z85 key (make one with --curve-keygen)\n", secret_file);
        free(a);
        return NULL;
    }
    if (allow_file) {
        a->has_allow = true;
        f = fopen(allow_file, "r");
        if (!f) {
            fprintf(stderr, "hwgym-server: --curve-allow: cannot read %s\n", allow_file);
            free(a);
            return NULL;
        }
        char line[512];
        int ln = 0;
        while (fgets(line, sizeof line, f)) {
            ln++;
            const char *p = line;
            while (*p == ' ' || *p == '\t') p++;
            char key[41];
            if (a->nallow < MAX_KEYS && line_key(line, key, a->allow[a->nallow])) {
                a->nallow++;
                continue;
            }
            if (*p == '#' || *p == '\n' || *p == '\r' || !*p) continue; /* comment or blank */
            fprintf(stderr, "hwgym-server: --curve-allow: %s:%d: expected a 40-character Z85 public key%s\n", allow_file, ln,
                    a->nallow >= MAX_KEYS ? " (too many keys)" : "");
            fclose(f);
            free(a);
            return NULL;
        }
        fclose(f);
    }
    return a;
}

static int recv_str(void *s, char *buf, size_t cap, int *more) {
    int n = zmq_recv(s, buf, cap - 1, 0);
    if (n < 0) return -1;
    if ((size_t)n >= cap) n = (int)cap - 1;
    buf[n] = 0;
    int m = 0;
    size_t ml = sizeof m;
    zmq_getsockopt(s, ZMQ_RCVMORE, &m, &ml);
    *more = m;
    return n;
}

static void *zap_main(void *arg) {
    hw_auth *a = arg;
    for (;;) {
        char frames[8][256];
        int lens[8], more = 1, n = 0;
        while (more && n < 8) {
            lens[n] = recv_str(a->zap, frames[n], sizeof frames[n], &more);
            if (lens[n] < 0) { /* the context is being terminated: close our socket and stop */
                zmq_close(a->zap);
                return NULL;
            }
            n++;
        }
        while (more) { /* drain anything unexpected */
            char junk[256];
            if (recv_str(a->zap, junk, sizeof junk, &more) < 0) {
                zmq_close(a->zap);
                return NULL;
            }
        }
        bool ok = false, curve = n >= 7 && !strcmp(frames[5], "CURVE") && lens[6] == 32;
        if (curve && !a->has_allow) ok = true; /* no allow-list: any key; the handler only names it */
        if (curve)
            for (int k = 0; k < a->nallow && !ok; k++) ok = memcmp(a->allow[k], frames[6], 32) == 0;
        /* User-Id = the client's public key in hex: the router counts sessions per key with it */
        char uid[65] = "";
        if (curve && ok)
            for (int k = 0; k < 32; k++) snprintf(uid + 2 * k, 3, "%02x", (unsigned char)frames[6][k]);
        const char *reqid = n > 1 ? frames[1] : "";
        zmq_send(a->zap, "1.0", 3, ZMQ_SNDMORE);
        zmq_send(a->zap, reqid, n > 1 ? (size_t)lens[1] : 0, ZMQ_SNDMORE);
        zmq_send(a->zap, ok ? "200" : "400", 3, ZMQ_SNDMORE);
        const char *text = ok ? "OK" : "client key not in the allow-list";
        zmq_send(a->zap, text, strlen(text), ZMQ_SNDMORE);
        zmq_send(a->zap, uid, strlen(uid), ZMQ_SNDMORE);
        zmq_send(a->zap, "", 0, 0);
    }
}

int hw_auth_apply(hw_auth *a, void *ctx, void *sock) {
    a->ctx = ctx;
    { /* always: without an allow-list the handler accepts every key but still names it (User-Id) */
        a->zap = zmq_socket(ctx, ZMQ_REP);
        int linger = 0;
        zmq_setsockopt(a->zap, ZMQ_LINGER, &linger, sizeof linger);
        if (zmq_bind(a->zap, "inproc://zeromq.zap.01") != 0) {
            fprintf(stderr, "hwgym-server: cannot start the ZAP handler: %s\n", zmq_strerror(zmq_errno()));
            return -1;
        }
        if (pthread_create(&a->th, NULL, zap_main, a) != 0) return -1;
        a->running = true;
    }
    int one = 1;
    if (zmq_setsockopt(sock, ZMQ_CURVE_SERVER, &one, sizeof one) || zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, a->secret, 40)) {
        fprintf(stderr, "hwgym-server: CURVE is not available in this libzmq: %s\n", zmq_strerror(zmq_errno()));
        return -1;
    }
    return 0;
}

void hw_auth_free(hw_auth *a) {
    if (!a) return;
    /* call after zmq_ctx_term has begun/finished: the handler's recv fails with ETERM and it
     * closes its own socket, which lets the termination complete */
    if (a->running) pthread_join(a->th, NULL);
    free(a);
}

int hw_auth_keygen(void) {
    char pub[41], sec[41];
    if (zmq_curve_keypair(pub, sec) != 0) {
        fprintf(stderr, "hwgym-server: CURVE is not available in this libzmq\n");
        return 1;
    }
    printf("{\"public\": \"%s\", \"secret\": \"%s\"}\n", pub, sec);
    return 0;
}
