/* auth.h - optional CURVE authentication for hwgym-server.
 * Owns: loading the server's secret key and the allow-list of client public keys (Z85, one per
 * line, '#' comments), configuring the ROUTER socket as a CURVE server, and the ZAP handler
 * thread that accepts exactly the allow-listed clients. Without an allow-list any client that
 * knows the server's public key may connect (traffic is still encrypted). */
#ifndef HW_AUTH_H
#define HW_AUTH_H

#include <stdbool.h>

typedef struct hw_auth hw_auth;

/* Reads the key files; NULL allow_file = no allow-list. Errors go to stderr; NULL on failure. */
hw_auth *hw_auth_load(const char *secret_file, const char *allow_file);
/* Starts the ZAP handler in ctx (when there is an allow-list) and makes `sock` a CURVE server.
 * Call before binding. Returns 0, or -1 after printing why. */
int hw_auth_apply(hw_auth *a, void *ctx, void *sock);
/* Joins the ZAP handler (call after zmq_ctx_term, which makes it close its socket and stop)
 * and frees everything. */
void hw_auth_free(hw_auth *a);
/* Prints a fresh keypair as JSON {"public": Z85, "secret": Z85}. Returns 0 or 1. */
int hw_auth_keygen(void);

#endif
