/* Multi-agent sessions: partition, barrier, timeout to every waiting worker, invalid parts and
 * vanished workers do not wedge the session, superseding, concurrency across workers. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "harness.h"

static srv S;
static void up(void) { srv_start(&S, 2, 600); }
static void down(void) { cr_assert_eq(srv_stop(&S), 0); }
TestSuite(multi, .init = up, .fini = down, .timeout = 60);

static char *make_multi(void *c, int timeout_ms) {
    json_t *r = call(c,
                     "{\"op\":\"make\",\"v\":1,\"env\":\"diag-v0\",\"config\":{\"dims\":4,\"choices\":8},\"agent_timeout_ms\":%d,"
                     "\"agents\":[{\"name\":\"a\",\"dims\":[0,1]},{\"name\":\"b\",\"dims\":[2]},{\"name\":\"c\",\"dims\":[3]}]}",
                     timeout_ms);
    cr_assert_null(err_code(r), "%s", err_msg(r));
    cr_assert_str_eq(json_string_value(json_object_get(r, "kind")), "multi");
    char *tok = strdup(json_string_value(json_object_get(r, "session")));
    json_decref(r);
    return tok;
}

typedef struct job {
    const char *ep, *tok, *agent, *part;
    json_t *reset_reply, *step_reply;
} job;

static void *worker_proc(void *arg) {
    job *j = arg;
    void *c = cli_new(j->ep);
    json_t *jr = call(c, "{\"op\":\"join\",\"v\":1,\"session\":\"%s\",\"agent\":\"%s\"}", j->tok, j->agent);
    cr_assert_null(err_code(jr), "%s", err_msg(jr));
    json_decref(jr);
    j->reset_reply = call(c, "{\"op\":\"reset\",\"v\":1,\"session\":\"%s\",\"agent\":\"%s\",\"seed\":9}", j->tok, j->agent);
    j->step_reply = call(c, "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"agent\":\"%s\",\"action\":%s}", j->tok, j->agent, j->part);
    cli_close(c);
    return NULL;
}

Test(multi, barrier_joint_action_shared_reward) {
    void *c = cli_new(S.ep);
    char *tok = make_multi(c, 5000);
    job jobs[3] = {{S.ep, tok, "a", "[1,2]", 0, 0}, {S.ep, tok, "b", "[3]", 0, 0}, {S.ep, tok, "c", "[4]", 0, 0}};
    pthread_t th[3];
    for (int i = 0; i < 3; i++) pthread_create(&th[i], NULL, worker_proc, &jobs[i]);
    for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
    double r0 = json_real_value(json_object_get(jobs[0].step_reply, "reward"));
    for (int i = 0; i < 3; i++) {
        cr_assert_null(err_code(jobs[i].step_reply), "%s", err_msg(jobs[i].step_reply));
        cr_assert_eq(json_real_value(json_object_get(jobs[i].step_reply, "reward")), r0);
        json_t *act = json_object_get(jobs[i].step_reply, "action");
        for (int k = 0; k < 4; k++) cr_assert_eq(json_integer_value(json_array_get(act, k)), k + 1);
        json_decref(jobs[i].reset_reply);
        json_decref(jobs[i].step_reply);
    }
    /* the joint step equals a single-agent step of the same action with the same seed */
    json_t *r = call(c, "{\"op\":\"make\",\"v\":1,\"env\":\"diag-v0\",\"config\":{\"dims\":4,\"choices\":8}}");
    char *single = strdup(json_string_value(json_object_get(r, "session")));
    json_decref(r);
    json_decref(call(c, "{\"op\":\"reset\",\"v\":1,\"session\":\"%s\",\"seed\":9}", single));
    r = call(c, "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"action\":[1,2,3,4]}", single);
    cr_assert_eq(json_real_value(json_object_get(r, "reward")), r0);
    json_decref(r);
    free(single);
    free(tok);
    cli_close(c);
}

Test(multi, timeout_errors_every_waiting_worker_and_session_recovers) {
    void *c = cli_new(S.ep);
    char *tok = make_multi(c, 300);
    void *a = cli_new(S.ep), *b = cli_new(S.ep);
    send_json(a, "{\"op\":\"reset\",\"v\":1,\"session\":\"%s\",\"agent\":\"a\",\"id\":1}", tok);
    send_json(b, "{\"op\":\"reset\",\"v\":1,\"session\":\"%s\",\"agent\":\"b\",\"id\":2}", tok);
    json_t *ra = recv_reply(a), *rb = recv_reply(b);
    cr_assert_str_eq(err_code(ra), "TIMEOUT");
    cr_assert_str_eq(err_code(rb), "TIMEOUT");
    cr_assert(strstr(err_msg(ra), "missing agents: c"), "%s", err_msg(ra));
    json_decref(ra);
    json_decref(rb);
    /* a bad part is answered at once and does not count */
    json_t *r = call(c, "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"agent\":\"b\",\"action\":[3]}", tok);
    cr_assert_str_eq(err_code(r), "BAD_STATE", "step before reset: %s", err_msg(r));
    json_decref(r);
    r = call(c, "{\"op\":\"reset\",\"v\":1,\"session\":\"%s\",\"agent\":\"zed\"}", tok);
    cr_assert_str_eq(err_code(r), "UNKNOWN_AGENT");
    json_decref(r);
    /* a complete barrier now succeeds */
    send_json(a, "{\"op\":\"reset\",\"v\":1,\"session\":\"%s\",\"agent\":\"a\"}", tok);
    send_json(b, "{\"op\":\"reset\",\"v\":1,\"session\":\"%s\",\"agent\":\"b\"}", tok);
    r = call(c, "{\"op\":\"reset\",\"v\":1,\"session\":\"%s\",\"agent\":\"c\"}", tok);
    cr_assert_null(err_code(r), "%s", err_msg(r));
    json_decref(r);
    json_decref(recv_reply(a));
    json_decref(recv_reply(b));
    /* an out-of-range part gets BAD_ACTION naming the element, others keep waiting */
    send_json(a, "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"agent\":\"a\",\"action\":[0,0]}", tok);
    r = call(b, "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"agent\":\"b\",\"action\":[99]}", tok);
    cr_assert_str_eq(err_code(r), "BAD_ACTION");
    cr_assert(strstr(err_msg(r), "p2"), "%s", err_msg(r));
    json_decref(r);
    send_json(b, "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"agent\":\"b\",\"action\":[1]}", tok);
    r = call(c, "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"agent\":\"c\",\"action\":[1]}", tok);
    cr_assert_null(err_code(r), "%s", err_msg(r));
    json_decref(r);
    json_decref(recv_reply(a));
    json_decref(recv_reply(b));
    cli_close(a);
    cli_close(b);
    free(tok);
    cli_close(c);
}

Test(multi, vanished_worker_is_superseded_by_a_restarted_one) {
    void *c = cli_new(S.ep);
    /* 15 s: once, on a loaded 2-core CI run under ASan, b's and c's parts did not reach the
     * barrier within 5 s (not reproduced since; if it recurs with 15 s it is a real bug) */
    char *tok = make_multi(c, 15000);
    /* worker 'a' sends its part and disappears without reading the reply */
    void *dead = cli_new(S.ep);
    send_json(dead, "{\"op\":\"reset\",\"v\":1,\"session\":\"%s\",\"agent\":\"a\"}", tok);
    /* a ping on the same connection: its reply proves the server read the reset (one connection's
     * requests are read in order) and queued it for the session's worker before anything the
     * restarted 'a' sends. A fixed sleep here let the reset arrive late on a loaded CI run, open a
     * second reset barrier and turn a's step below into BAD_STATE. */
    json_decref(call(dead, "{\"op\":\"ping\",\"v\":1}"));
    cli_close(dead);
    /* a restarted 'a' sends again (superseding), b and c complete the barrier */
    void *a = cli_new(S.ep), *b = cli_new(S.ep);
    /* each part is proved read (a ping on its connection) before the next is sent: requests on
     * different connections may be read in any order, and c's part overtaking a's once completed
     * the barrier with the dead part, left a's reset waiting and failed a's step below */
    send_json(a, "{\"op\":\"reset\",\"v\":1,\"session\":\"%s\",\"agent\":\"a\"}", tok);
    json_decref(call(a, "{\"op\":\"ping\",\"v\":1}"));
    send_json(b, "{\"op\":\"reset\",\"v\":1,\"session\":\"%s\",\"agent\":\"b\"}", tok);
    json_decref(call(b, "{\"op\":\"ping\",\"v\":1}"));
    json_t *r = call(c, "{\"op\":\"reset\",\"v\":1,\"session\":\"%s\",\"agent\":\"c\"}", tok);
    cr_assert_null(err_code(r), "%s", err_msg(r));
    json_decref(r);
    r = recv_reply(a);
    cr_assert_null(err_code(r), "%s", err_msg(r));
    json_decref(r);
    r = recv_reply(b);
    cr_assert_null(err_code(r), "%s", err_msg(r));
    json_decref(r);
    /* closing with a barrier open answers the waiter */
    send_json(a, "{\"op\":\"step\",\"v\":1,\"session\":\"%s\",\"agent\":\"a\",\"action\":[1,1]}", tok);
    json_decref(call(a, "{\"op\":\"ping\",\"v\":1}")); /* the step is queued before the close */
    json_decref(call(c, "{\"op\":\"close\",\"v\":1,\"session\":\"%s\"}", tok));
    r = recv_reply(a);
    cr_assert_str_eq(err_code(r), "UNKNOWN_SESSION", "%s", err_msg(r));
    cr_assert(strstr(err_msg(r), "closed while this agent waited"), "the held step is answered by the close: %s", err_msg(r));
    json_decref(r);
    cli_close(a);
    cli_close(b);
    free(tok);
    cli_close(c);
}

Test(multi, bad_partitions_rejected) {
    void *c = cli_new(S.ep);
    json_t *r = call(c, "{\"op\":\"make\",\"v\":1,\"env\":\"diag-v0\",\"agents\":[{\"name\":\"a\",\"dims\":[0,1]},{\"name\":\"b\",\"dims\":[1,2,3]}]}");
    cr_assert_str_eq(err_code(r), "BAD_REQUEST");
    cr_assert(strstr(err_msg(r), "already belongs to agent 'a'"), "%s", err_msg(r));
    json_decref(r);
    r = call(c, "{\"op\":\"make\",\"v\":1,\"env\":\"diag-v0\",\"agents\":[{\"name\":\"a\",\"dims\":[0,1]}]}");
    cr_assert(strstr(err_msg(r), "belongs to no agent"), "%s", err_msg(r));
    json_decref(r);
    r = call(c, "{\"op\":\"make\",\"v\":1,\"env\":\"diag-v0\",\"config\":{\"action_space\":\"box\"},\"agents\":[{\"name\":\"a\",\"dims\":[0]}]}");
    cr_assert_str_eq(err_code(r), "NOT_SUPPORTED");
    json_decref(r);
    r = call(c, "{\"op\":\"stats\",\"v\":1}");
    cr_assert_eq(json_integer_value(json_object_get(r, "sessions")), 0, "failed makes leave no session");
    json_decref(r);
    cli_close(c);
}
