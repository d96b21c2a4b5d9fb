/* snapshot.c - see snapshot.h. Moved from worker.c unchanged. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "reply.h"
#include "snapshot.h"
#include "worker_int.h"

static void *xcalloc(size_t n, size_t sz) {
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    if (!p) abort();
    return p;
}

void op_snapshot(task *t) {
    session *s = t->s;
    hw_err err;
    if (!s->fam->snapshot) {
        reply_fail(t, HW_E_NOT_SUPPORTED, "%s does not support snapshots", s->fam->id);
        return;
    }
    if (s->nsnaps >= s->max_snapshots) {
        reply_fail(t, HW_E_LIMIT, "session holds %d snapshots (the limit); drop some first", s->nsnaps);
        return;
    }
    snap_rec r = {0};
    r.snaps = xcalloc((size_t)s->num_envs, sizeof(void *));
    for (int i = 0; i < s->num_envs; i++) {
        r.snaps[i] = s->fam->snapshot(s->envs[i], &err);
        if (!r.snaps[i]) {
            snap_free(s, &r);
            reply_error(t, &err);
            return;
        }
    }
    r.started = xcalloc((size_t)s->num_envs, sizeof(bool));
    r.needs_reset = xcalloc((size_t)s->num_envs, sizeof(bool));
    memcpy(r.started, s->started, (size_t)s->num_envs * sizeof(bool));
    memcpy(r.needs_reset, s->needs_reset, (size_t)s->num_envs * sizeof(bool));
    r.id = ++s->next_snap;
    s->snaps = realloc(s->snaps, (size_t)(s->nsnaps + 1) * sizeof *s->snaps);
    if (!s->snaps) abort();
    s->snaps[s->nsnaps++] = r;
    if (s->snap_ctr) atomic_fetch_add(s->snap_ctr, 1);
    msgpack_packer pk = reply_begin(t, 1);
    hw_pack_cstr(&pk, "snapshot");
    msgpack_pack_int64(&pk, r.id);
}

static int find_snap(session *s, task *t, hw_err *err) {
    int64_t id;
    if (hw_mp_int(t->msg.root, "snapshot", true, 0, INT64_MIN, INT64_MAX, &id, err)) return -1;
    for (int k = 0; k < s->nsnaps; k++)
        if (s->snaps[k].id == id) return k;
    return hw_fail(err, HW_E_UNKNOWN_SNAPSHOT, "no snapshot %lld in this session", (long long)id);
}

void op_restore(task *t) {
    session *s = t->s;
    hw_err err;
    int k = find_snap(s, t, &err);
    if (k < 0) {
        reply_error(t, &err);
        return;
    }
    for (int i = 0; i < s->num_envs; i++)
        if (s->fam->restore(s->envs[i], s->snaps[k].snaps[i], &err)) {
            reply_error(t, &err);
            return;
        }
    memcpy(s->started, s->snaps[k].started, (size_t)s->num_envs * sizeof(bool));
    memcpy(s->needs_reset, s->snaps[k].needs_reset, (size_t)s->num_envs * sizeof(bool));
    reply_begin(t, 0);
}

void op_drop_snapshot(task *t) {
    session *s = t->s;
    hw_err err;
    int k = find_snap(s, t, &err);
    if (k < 0) {
        reply_error(t, &err);
        return;
    }
    snap_free(s, &s->snaps[k]);
    s->snaps[k] = s->snaps[--s->nsnaps];
    if (s->snap_ctr) atomic_fetch_sub(s->snap_ctr, 1);
    reply_begin(t, 0);
}
