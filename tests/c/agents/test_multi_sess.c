/* test_multi_sess.c - the agent session over a spawned hwgym-server: single-agent make,
 * evaluate_batch, and a multi-agent session joined by two agents on two threads (barriers,
 * shared reward, per-agent mask slices). */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "../common/hwtest.h"
#include "agent_common.h"

typedef struct worker_arg {
    const char *ep, *token, *name;
    int64_t value;
    double rewards[3];
    int64_t ndims, mask_len;
    int rc;
    char msg[400];
} worker_arg;

static void *worker(void *p) {
    worker_arg *w = p;
    hw_err err = {0};
    ag_sess *s = ag_sess_join(w->ep, w->token, w->name, &err);
    if (!s) {
        w->rc = -1;
        snprintf(w->msg, sizeof w->msg, "join: %s", err.msg);
        return NULL;
    }
    w->ndims = s->ndims;
    uint64_t seed = 3;
    if (ag_sess_reset(s, &seed, &err)) {
        w->rc = -1;
        snprintf(w->msg, sizeof w->msg, "reset: %s", err.msg);
    }
    w->mask_len = s->mask_len;
    for (int t = 0; t < 3 && !w->rc; t++) {
        int64_t a[4] = {w->value, w->value, w->value, w->value};
        if (ag_sess_step_i64(s, a, &err)) {
            w->rc = -1;
            snprintf(w->msg, sizeof w->msg, "step: %s", err.msg);
        }
        w->rewards[t] = s->reward;
    }
    ag_sess_free(s);
    return NULL;
}

Test(agent_sess_server, single_and_multi_agent, .timeout = 60) {
    hwtest_server srv;
    int src = hwtest_server_start(&srv, NULL);
    if (src == -1) cr_skip_test("BUILD/bin/hwgym-server is not built");
    cr_assert_eq(src, 0);
    hw_err err = {0};
    json_t *cfg = json_pack("{s:i, s:i, s:i, s:b}", "dims", 3, "choices", 5, "episode_length", 3, "action_mask", 1);
    /* single agent: same results as in-process */
    ag_sess *r = ag_sess_make(srv.endpoint, "diag-v0", cfg, NULL, 0, &err);
    cr_assert(r, "%s", err.msg);
    ag_sess *l = ag_sess_make("local", "diag-v0", cfg, NULL, 0, &err);
    cr_assert(l);
    uint64_t seed = 11;
    cr_assert_eq(ag_sess_reset(r, &seed, &err), 0, "%s", err.msg);
    cr_assert_eq(ag_sess_reset(l, &seed, &err), 0);
    cr_assert_eq(r->mask_len, 15);
    int64_t a[3] = {1, 2, 3};
    cr_assert_eq(ag_sess_step_i64(r, a, &err), 0, "%s", err.msg);
    cr_assert_eq(ag_sess_step_i64(l, a, &err), 0);
    cr_assert_eq(r->reward, l->reward);
    for (int i = 0; i < r->obs_dim; i++) cr_assert_float_eq(r->obs[i], l->obs[i], 1e-6);
    json_t *pts = json_loads("[[0,0,0],[1,2,3],[9,9,9]]", 0, NULL);
    double rw[3];
    json_t *ms = NULL;
    cr_assert_eq(ag_sess_evaluate_batch(r, pts, rw, &ms, &err), 0, "%s", err.msg);
    cr_assert(isfinite(rw[0]) && isfinite(rw[1]) && isnan(rw[2]));
    cr_assert(json_is_null(json_array_get(ms, 2)));
    json_decref(ms);
    json_decref(pts);
    ag_sess_free(r);
    ag_sess_free(l);

    /* multi-agent: a0 controls dims 0,2 and a1 dim 1 */
    json_t *agents = json_loads("[{\"name\":\"a0\",\"dims\":[0,2]},{\"name\":\"a1\",\"dims\":[1]}]", 0, NULL);
    ag_sess *m = ag_sess_make(srv.endpoint, "diag-v0", cfg, agents, 10000, &err);
    cr_assert(m, "%s", err.msg);
    worker_arg w[2] = {{srv.endpoint, m->token, "a0", 1, {0}, 0, 0, 0, ""}, {srv.endpoint, m->token, "a1", 4, {0}, 0, 0, 0, ""}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, worker, &w[i]);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 2; i++) cr_assert_eq(w[i].rc, 0, "%s: %s", w[i].name, w[i].msg);
    cr_assert_eq(w[0].ndims, 2);
    cr_assert_eq(w[1].ndims, 1);
    cr_assert_eq(w[0].mask_len, 10);
    cr_assert_eq(w[1].mask_len, 5);
    for (int t = 0; t < 3; t++) cr_assert_eq(w[0].rewards[t], w[1].rewards[t], "shared reward");
    /* the joint action [1,4,1] scored in-process gives the same reward */
    ag_sess *chk = ag_sess_make("local", "diag-v0", cfg, NULL, 0, &err);
    double want;
    json_t *pt = json_loads("[1,4,1]", 0, NULL);
    cr_assert_eq(ag_sess_evaluate(chk, pt, &want, NULL, &err), 0, "%s", err.msg);
    cr_assert_eq(w[0].rewards[0], want);
    json_decref(pt);
    ag_sess_free(chk);
    ag_sess_free(m);
    json_decref(agents);
    json_decref(cfg);
    cr_assert_eq(hwtest_server_stop(&srv), 0);
}
