/* ops.c - the protocol's op names (task.h): the table the router parses requests with and every
 * message that names an op. A leaf: calls nothing of the server. */
#include <string.h>

#include "task.h"

static const char *const op_names[OP_COUNT] = {"hello", "ping", "envs", "stats", "make", "spaces", "reset", "step", "close",
                                               "snapshot", "restore", "drop_snapshot", "evaluate", "evaluate_batch", "join"};

const char *hw_op_name_of(int op) {
    if (op >= 0 && op < OP_COUNT) return op_names[op];
    return op == OP_DESTROY ? "destroy" : op == OP_BATCH_SLICE ? "batch_slice" : "stop";
}

int hw_op_lookup(const char *name, size_t len) {
    for (int i = 0; i < OP_COUNT; i++)
        if (strlen(op_names[i]) == len && memcmp(op_names[i], name, len) == 0) return i;
    return -1;
}
