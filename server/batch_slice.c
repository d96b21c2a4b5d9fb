/* batch_slice.c - see batch_slice.h. */
#include <math.h>

#include "batch.h"
#include "batch_slice.h"
#include "common/env_limits.h"
#include "reply.h"
#include "worker_int.h"

static json_t *err_json(const hw_err *e) {
    char msg[HW_ERR_MSG];
    reply_msg_copy(msg, sizeof msg, e->msg, "the env failed on this point without a message"); /* json_pack refuses invalid UTF-8 */
    return json_pack("{s:s, s:s}", "code", hw_code_name(e->code), "message", msg);
}

/* the slice has used its time budget (never once the request's deadline has passed: then the
 * remaining points are answered TIMEOUT at once) */
static bool over_budget(const task *t, double t0) { return t->budget_s > 0 && !hw_deadline_passed() && hw_now() - t0 >= t->budget_s; }

/* A lean slice in chunks of 1, 2, 4, ... points, checking the budget between chunks; returns
 * where it stopped. Past the deadline, one call answers the rest (TIMEOUT). */
static int64_t lean_chunks(lean_batch *lb, const task *t, const hw_env_family *fam, void *env, const hw_err *err, double t0) {
    int64_t p = t->lo, c = t->chunk > 1 ? t->chunk : 1;
    lean_run *R = lean_run_open(lb, fam, env); /* once for the slice's chunks */
    while (p < t->hi) {
        if (p > t->lo && over_budget(t, t0)) break;
        int64_t e = t->budget_s <= 0 || hw_deadline_passed() || t->hi - p <= c ? t->hi : p + c;
        lean_run_slice(lb, t->slice, R, fam, env, err, p, e);
        p = e;
        if (c < ((int64_t)1 << 40)) c *= 2;
    }
    lean_run_close(lb, R);
    return p;
}

void op_batch_slice(worker *w, task *t) {
    batch *b = t->b;
    hw_err err;
    const hw_env_family *fam;
    json_t *own_cfg = NULL;
    void *env = NULL;
    double t_env = hw_now();
    if (!b->config && b->config_mp && b->config_mp->type != MSGPACK_OBJECT_NIL) { /* converted here, not on the router */
        if (b->config_mp->type != MSGPACK_OBJECT_MAP) hw_fail(&err, HW_E_BAD_CONFIG, "config: expected a map");
        else if (!(own_cfg = hw_mp_to_json_max(b->config_mp, w->opts->max_config_values, &err))) hw_err_prefix(&err, "config");
        if (own_cfg) env = cached_env(w, b->env_id, own_cfg, &fam, &err);
    } else {
        env = cached_env(w, b->env_id, b->config, &fam, &err);
    }
    json_decref(own_cfg);
    double t0 = hw_now();
    t->setup_s = t0 - t_env;
    t->stop = t->hi;
    if (b->lean) { /* lean batch: batch.c scores todo[lo..hi) (points past the request deadline get TIMEOUT) */
        t->stop = lean_chunks(b->lean, t, fam, env, &err, t0);
        if (env) atomic_fetch_add_explicit(&w->env_steps, (unsigned long long)(t->stop - t->lo), memory_order_relaxed);
        t->run_s = hw_now() - t0;
        return;
    }
    for (int64_t k = t->lo; k < t->hi; k++) {
        if (k > t->lo && over_budget(t, t0)) { /* the rest goes back to the router, to run after other clients' work */
            t->stop = k;
            break;
        }
        b->rewards[k] = NAN;
        if (env && hw_deadline_passed()) { /* the request's deadline: the rest is abandoned */
            t->failed = true;
            break;
        }
        if (!env) {
            b->errors[k] = err_json(&err);
            continue;
        }
        if (!fam->evaluate) {
            hw_fail(&err, HW_E_NOT_SUPPORTED, "%s has no one-shot evaluate", fam->id);
            b->errors[k] = err_json(&err);
            continue;
        }
        json_t *pt;
        if (b->list) {
            pt = hw_mp_to_json_max(&b->list->via.array.ptr[k], w->opts->max_config_values, &err);
        } else {
            pt = json_array();
            int64_t m = b->grid.shape[1];
            bool fl = b->grid.dtype == HW_DT_FLOAT32 || b->grid.dtype == HW_DT_FLOAT64;
            for (int64_t j = 0; j < m; j++)
                json_array_append_new(pt, fl ? json_real(hw_array_get_f64(&b->grid, k * m + j))
                                             : json_integer(hw_array_get_i64(&b->grid, k * m + j)));
        }
        if (!pt) {
            hw_err_prefix(&err, "point");
            b->errors[k] = err_json(&err);
            continue;
        }
        json_t *metrics = json_object();
        double r;
        if (fam->evaluate(env, pt, &r, metrics, &err)) {
            b->errors[k] = err_json(&err);
            json_decref(metrics);
        } else {
            b->rewards[k] = r;
            b->metrics[k] = metrics;
            atomic_fetch_add_explicit(&w->env_steps, 1, memory_order_relaxed);
        }
        json_decref(pt);
    }
    t->run_s = hw_now() - t0;
}
