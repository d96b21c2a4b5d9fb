/* ops.c - the protocol's op names (task.h): the table the router parses requests with and every
 * message that names an op. A leaf: calls nothing of the server. */
#include <string.h>

#include "task.h"

#define OP_NAMES(X) X("hello") X("ping") X("envs") X("stats") X("make") X("spaces") X("reset") X("step") X("close") \
    X("snapshot") X("restore") X("drop_snapshot") X("evaluate") X("evaluate_batch") X("join")
#define OP_NAME(s) s,
#define OP_LEN(s) sizeof s - 1,
static const char *const op_names[OP_COUNT] = {OP_NAMES(OP_NAME)};
static const size_t op_lens[OP_COUNT] = {OP_NAMES(OP_LEN)}; /* no strlen per request */

const char *hw_op_name_of(int op) {
    if (op >= 0 && op < OP_COUNT) return op_names[op];
    return op == OP_DESTROY ? "destroy" : op == OP_BATCH_SLICE ? "batch_slice" : "stop";
}

int hw_op_lookup(const char *name, size_t len) {
    for (int i = 0; i < OP_COUNT; i++)
        if (op_lens[i] == len && memcmp(op_names[i], name, len) == 0) return i;
    return -1;
}
