/* objective.c - hs_objective over an agents/lib session (see search.h). */
#include <stdlib.h>

#include "agent_common.h"
#include "search.h"

static int sess_eval(void *ctx, int n, const double *x, double *rewards, json_t **metrics, hw_err *err) {
    hs_sess_obj *o = ctx;
    /* through a server: the lean evaluate_batch (numeric metrics as arrays, cache hits flagged) */
    /* (a space with its own encoding, e.g. sched-v0 tables, sends its designs as JSON points) */
    if (!o->sess->local && !o->space->scalar && !o->space->encode) return ag_sess_evaluate_lean(o->sess, n, x, rewards, metrics, err);
    const int d = o->space->dim;
    json_t *pts = json_array();
    for (int i = 0; i < n; i++) json_array_append_new(pts, hs_point_json(o->space, x + (size_t)i * d));
    json_t *ml = NULL;
    int rc = ag_sess_evaluate_batch(o->sess, pts, rewards, &ml, err);
    json_decref(pts);
    if (rc) return -1;
    for (int i = 0; i < n; i++) {
        json_t *m = json_array_get(ml, (size_t)i);
        metrics[i] = json_is_object(m) ? json_incref(m) : NULL;
    }
    json_decref(ml);
    return 0;
}

hs_objective hs_sess_objective(hs_sess_obj *o) { return (hs_objective){o, sess_eval}; }
