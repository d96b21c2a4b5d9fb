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
    /* the length and the first byte tell every op from the others (tests/c/server/test_codec.c checks
     * each name round-trips): one candidate, one compare */
    int i = -1;
    switch (len) {
    case 4: i = name[0] == 's' ? OP_STEP : name[0] == 'p' ? OP_PING : name[0] == 'e' ? OP_ENVS : name[0] == 'm' ? OP_MAKE : name[0] == 'j' ? OP_JOIN : -1; break;
    case 5: i = name[0] == 'r' ? OP_RESET : name[0] == 'h' ? OP_HELLO : name[0] == 's' ? OP_STATS : name[0] == 'c' ? OP_CLOSE : -1; break;
    case 6: i = OP_SPACES; break;
    case 7: i = OP_RESTORE; break;
    case 8: i = name[0] == 's' ? OP_SNAPSHOT : OP_EVALUATE; break;
    case 13: i = OP_DROP_SNAPSHOT; break;
    case 14: i = OP_EVALUATE_BATCH; break;
    default: break;
    }
    return i >= 0 && op_lens[i] == len && memcmp(op_names[i], name, len) == 0 ? i : -1;
}
