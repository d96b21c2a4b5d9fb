/* dram_sim.c - dram_simulate(): the event-driven controller + device model (docs/dram.md).
 *
 * Time is integer tCK. One step of the controller at time t does, in DRAMSys's order:
 * (1) finish/start a response, (2) accept the waiting request if the scheduler buffer has
 * room, (3) evaluate the refresh manager, (4) every bank machine and the refresh manager
 * propose one command, the timing checker gives each its earliest legal time, and the
 * command mux issues the oldest command that is legal now (at most one per tCK).
 * Between steps the simulation jumps to the next time anything can happen. The initiator
 * (trace player) and the arbiter (Simple / Fifo / Reorder) are modelled as the TLM
 * handshakes they are in DRAMSys, so latency is measured from arbiter acceptance. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/env_limits.h"
#include "dram_sim_int.h"


static inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* ---- energy: cycles with at least one bank open ---- */
static void e_change(sim *s, int64_t t, int delta) {
    if (s->n_open > 0) s->act_cycles += t - s->last_change;
    s->last_change = t;
    s->n_open += delta;
}
static void e_advance(sim *s, int64_t t) {
    while (s->n_pending) {
        int bi = -1;
        int64_t m = INF;
        for (int b = 0; b < s->nbanks; b++)
            if (s->close_at[b] < m) m = s->close_at[b], bi = b;
        if (m > t) return;
        s->close_at[bi] = INF;
        s->n_pending--;
        s->e_open[bi] = 0;
        e_change(s, m, -1);
    }
}
static void e_open(sim *s, int b, int64_t t) {
    e_advance(s, t);
    if (s->close_at[b] != INF) { /* defensive: never happens with legal timings */
        s->close_at[b] = INF;
        s->n_pending--;
        s->e_open[b] = 0;
        e_change(s, t, -1);
    }
    s->e_open[b] = 1;
    e_change(s, t, +1);
}
static void e_close(sim *s, int b, int64_t t) {
    e_advance(s, t);
    if (s->e_open[b] && s->close_at[b] == INF) {
        s->e_open[b] = 0;
        e_change(s, t, -1);
    }
}
static void e_close_later(sim *s, int b, int64_t t) {
    if (s->e_open[b] && s->close_at[b] == INF) {
        s->close_at[b] = t;
        s->n_pending++;
    }
}

/* ---- bank queues and buffer ---- */
static inline int32_t *bq(sim *s, int b) { return s->q + (size_t)b * (size_t)s->qcap; }

static bool has_space(const sim *s, int64_t r) {
    switch (s->c->sched_buffer) {
    case DRAM_BUF_BANKWISE: return s->bank_cnt[s->last_bank] + 1 <= s->c->request_buffer_size; /* DRAMSys quirk */
    case DRAM_BUF_SHARED: return s->total + 1 <= s->c->request_buffer_size;
    default:
        (void)r;
        return s->nrd < s->c->buffer_size_read && s->nwr < s->c->buffer_size_write;
    }
}

static void arb_end_req(sim *s, int64_t e);

static void try_accept(sim *s, int64_t t, int d) {
    if (s->in_req < 0 || s->in_arr > t) return;
    int64_t r = s->in_req;
    if (!has_space(s, r)) return;
    int b = s->bank[r];
    if (s->qn[b] >= s->qcap) return; /* cannot happen: qcap bounds every buffer kind */
    bq(s, b)[s->qn[b]++] = (int32_t)r;
    s->nonempty |= 1ULL << b;
    s->dirty |= 1ULL << b;
    s->bank_cnt[b]++;
    s->total++;
    if (s->wr[r]) s->nwr++;
    else s->nrd++;
    s->last_bank = b;
    s->in_req = -1;
    arb_end_req(s, t + d);
}

/* ---- initiator + arbiter ---- */
static void arb_dispatch(sim *s, int64_t x) {
    /* the arbiter's channel queue has entries; send the head if the channel is free */
    if (s->chan_busy || s->cq_n == 0) return;
    int64_t r = s->cq[s->cq_h];
    s->cq_h = (s->cq_h + 1) % s->cq_cap;
    s->cq_n--;
    int64_t d = max64(x, s->chan_free);
    s->in_req = r;
    s->in_arr = d + (s->last_end_req == d ? 1 : 0) + 1;
    s->chan_busy = 1;
}

static void arb_push_req(sim *s, int64_t r, int64_t x) {
    s->cq[(s->cq_h + s->cq_n) % s->cq_cap] = r;
    s->cq_n++;
    arb_dispatch(s, x);
}

/* The player got END_REQ for its request at time e: it sends the next one at max(ts, e). */
static void player_end_req(sim *s, int64_t e) {
    s->p_next++;
    s->p_time = s->p_next < s->n ? max64(s->ts[s->p_next], e) : INF;
}

static void arb_end_req(sim *s, int64_t e) {
    if (s->c->arbiter == DRAM_ARB_SIMPLE) {
        int64_t p = s->p_next + 1;
        s->p_next = p;
        if (p < s->n) {
            s->gen[p] = max64(s->ts[p], e);
            s->in_req = p;
            s->in_arr = s->gen[p] + 1;
        }
        return;
    }
    s->last_end_req = e;
    s->chan_busy = 0;
    s->chan_free = e;
    if (s->cq_n) {
        /* the next queued request is sent one tCK after END_REQ */
        int64_t r = s->cq[s->cq_h];
        s->cq_h = (s->cq_h + 1) % s->cq_cap;
        s->cq_n--;
        s->in_req = r;
        s->in_arr = e + 2;
        s->chan_busy = 1;
    }
}

static void player_send(sim *s, int64_t t) {
    int64_t p = s->p_next;
    if (s->active < s->c->max_active_transactions) {
        s->active++;
        s->gen[p] = t;
        arb_push_req(s, p, t);
        player_end_req(s, t);
    } else {
        s->outstanding = p;
        s->p_time = INF;
    }
}

static void deliver(sim *s, int64_t r, int64_t d) {
    (void)r;
    s->thread_busy = 1;
    s->r_next = d + 1;
    if (d > s->t_last) s->t_last = d;
    s->done++;
}

static int64_t arb_pop_pending(sim *s) {
    if (s->c->arbiter == DRAM_ARB_FIFO) {
        if (!s->pr_n) return -1;
        int64_t r = s->pr[s->pr_h];
        s->pr_h++; /* each request's response passes once: pr_h + pr_n <= n, no wrap */
        s->pr_n--;
        return r;
    }
    if (s->arb_next_ret < s->n && s->pr_ready[s->arb_next_ret]) return s->arb_next_ret++;
    return -1;
}

/* Response reaches the arbiter at b (controller BEGIN_RESP; END_RESP to the controller at once). */
static void arb_resp(sim *s, int64_t r, int64_t b) {
    if (s->c->arbiter == DRAM_ARB_FIFO) {
        s->pr[s->pr_h + s->pr_n] = r;
        s->pr_n++;
    } else
        s->pr_ready[r] = 1;
    if (!s->thread_busy) {
        int64_t q = arb_pop_pending(s);
        if (q >= 0) deliver(s, q, b + (s->last_end_resp == b ? 1 : 0));
    }
}

/* END_RESP from the player reaches the arbiter at t. */
static void arb_end_resp(sim *s, int64_t t) {
    s->last_end_resp = t;
    s->r_next = INF;
    if (s->outstanding >= 0) {
        int64_t o = s->outstanding;
        s->outstanding = -1;
        s->gen[o] = t;
        arb_push_req(s, o, t);
        player_end_req(s, t);
    } else
        s->active--;
    int64_t q = arb_pop_pending(s);
    if (q >= 0) deliver(s, q, t + 1);
    else s->thread_busy = 0;
}

/* ---- response queue ---- */
static inline int64_t rq_next(sim *s, int64_t t) {
    if (s->c->resp_queue == DRAM_RESP_FIFO) {
        if (s->rq_n && s->rq_t[s->rq_h] <= t) {
            int64_t r = s->rq[s->rq_h];
            s->rq_h++; /* each request's response is queued once: rq_h + rq_n <= n, no wrap */
            s->rq_n--;
            return r;
        }
        return -1;
    }
    if (s->next_ret < s->n && s->resp_ready[s->next_ret] <= t) return s->next_ret++;
    return -1;
}
static int64_t rq_trigger(const sim *s) {
    if (s->c->resp_queue == DRAM_RESP_FIFO) return s->rq_n ? s->rq_t[s->rq_h] : INF;
    return s->next_ret < s->n ? s->resp_ready[s->next_ret] : INF;
}

static void responses(sim *s, int64_t t) {
    if (s->c->arbiter == DRAM_ARB_SIMPLE) {
        if (s->rel_req >= 0) {
            if (s->rel_time > t) return; /* END_RESP still on its way */
            s->rel_req = -1;
        }
        int64_t r = rq_next(s, t);
        if (r < 0) return;
        s->end[r] = t + 1;
        s->rel_req = r;
        s->rel_time = t + 1;
        if (t > s->t_last) s->t_last = t;
        s->done++;
        return;
    }
    for (;;) {
        int64_t r = rq_next(s, t);
        if (r < 0) return;
        s->end[r] = t;
        arb_resp(s, r, t);
    }
}

/* ---- scheduler + bank machines ---- */
static int64_t sched_pick(const sim *s, int b) {
    const int32_t *q = s->q + (size_t)b * (size_t)s->qcap;
    int n = s->qn[b];
    if (s->c->scheduler == DRAM_SCHED_FIFO || !s->open[b]) return q[0];
    uint32_t row = s->open_row[b];
    if (s->c->scheduler == DRAM_SCHED_FRFCFS) {
        for (int i = 0; i < n; i++)
            if (s->row[q[i]] == row) return q[i];
        return q[0];
    }
    int first = -1;
    for (int i = 0; i < n; i++) {
        if (s->row[q[i]] != row) continue;
        if (first < 0) first = i;
        if (s->wr[q[i]] == s->last_write) {
            bool hazard = false;
            for (int k = 0; k < i; k++)
                if (s->row[q[k]] == row && s->addr[q[k]] == s->addr[q[i]]) {
                    hazard = true;
                    break;
                }
            if (!hazard) return q[i];
        }
    }
    return first >= 0 ? q[first] : q[0];
}

static bool further_row_hit(const sim *s, int b) {
    const int32_t *q = s->q + (size_t)b * (size_t)s->qcap;
    int n = s->qn[b];
    uint32_t row = s->open_row[b];
    if (s->c->scheduler == DRAM_SCHED_FIFO) return n >= 2 && s->row[q[1]] == row;
    int hits = 0;
    for (int i = 0; i < n; i++)
        if (s->row[q[i]] == row && ++hits == 2) return true;
    return false;
}

/* The command bank b proposes now (DRAM_NCMD = none); its request in *req. */
static int bank_propose(sim *s, int b, int64_t *req) {
    if (s->blocked[b] || !s->qn[b]) return DRAM_NCMD;
    int64_t pick = sched_pick(s, b);
    if (s->keep[b]) {
        if (s->row[pick] == s->open_row[b]) s->cur[b] = (int32_t)pick;
    } else
        s->cur[b] = (int32_t)pick;
    int64_t r = s->cur[b];
    *req = r;
    if (!s->open[b]) return DRAM_CMD_ACT;
    if (s->row[r] != s->open_row[b]) return DRAM_CMD_PRE;
    bool autopre;
    switch (s->c->page_policy) {
    case DRAM_PP_OPEN: autopre = false; break;
    case DRAM_PP_CLOSED: autopre = true; break;
    case DRAM_PP_OPENADAPTIVE: autopre = s->qn[b] >= 2 && !further_row_hit(s, b); break;
    default: autopre = !further_row_hit(s, b); break;
    }
    if (s->wr[r]) return autopre ? DRAM_CMD_WRA : DRAM_CMD_WR;
    return autopre ? DRAM_CMD_RDA : DRAM_CMD_RD;
}

/* Recomputes bank b's proposal (its command and request) and its bank-level bound bp[b]. */
static inline void propose(sim *s, int b) {
    int c = bank_propose(s, b, &s->prop_req[b]);
    s->prop_cmd[b] = (int8_t)c;
    s->dirty &= ~(1ULL << b);
    s->bp[b] = max64(s->nb[b][c], s->ng[s->bg_of[b]][c]);
}

static inline int64_t earliest(const sim *s, int cmd, int b, int64_t t) {
    int64_t e = max64(t, s->bus);
    e = max64(e, s->nr[cmd]);
    if (b >= 0) {
        e = max64(e, s->nb[b][cmd]);
        e = max64(e, s->ng[s->bg_of[b]][cmd]);
    }
    return e;
}

static inline void upd(int64_t *slot, int64_t v) {
    if (v > *slot) *slot = v;
}

/* ---- refresh manager (AllBank with postpone / pull-in credits) ---- */
static void refresh_eval(sim *s, int64_t t) {
    s->ref_cmd = DRAM_NCMD;
    if (s->c->refresh != DRAM_REF_ALLBANK || t < s->ref_trigger) return;
    int64_t refi = s->ms->REFI;
    if (t >= s->ref_trigger + refi) {
        s->ref_trigger += refi;
        s->ref_pulledin_state = 0;
    }
    if (!s->ref_pulledin_state) {
        if (s->flex == s->c->refresh_max_postponed) {
            for (int b = 0; b < s->nbanks; b++) s->blocked[b] = 1; /* forced */
            s->dirty = ~0ULL;
        } else if (s->nonempty) {
            s->flex++;
            s->ref_trigger += refi; /* postponed */
            return;
        }
        s->ref_cmd = s->activated > 0 ? DRAM_CMD_PREA : DRAM_CMD_REF;
    } else {
        if (s->nonempty) {
            s->ref_pulledin_state = 0;
            s->ref_trigger += refi;
            return;
        }
        s->ref_cmd = DRAM_CMD_REF; /* pulled in */
    }
}

/* ---- issuing a command ---- */
static void issue(sim *s, int cmd, int b, int64_t r, int64_t t) {
    const dram_memspec *ms = s->ms;
    s->res->cmd[cmd]++;
    s->bus = t + 1;
    if (b >= 0) s->dirty |= 1ULL << b;
    else s->dirty = ~0ULL;
    if (s->res->cmd_log_n < s->res->cmd_log_cap)
        s->res->cmd_log[s->res->cmd_log_n++] = (dram_cmd_rec){t, cmd, b, r};
    int g = b >= 0 ? s->bg_of[b] : 0;
    switch (cmd) {
    case DRAM_CMD_ACT: {
        upd(&s->nb[b][DRAM_CMD_PRE], t + ms->RAS);
        for (int k = DRAM_CMD_RD; k <= DRAM_CMD_WRA; k++) upd(&s->nb[b][k], t + ms->RCD - ms->AL);
        upd(&s->nb[b][DRAM_CMD_ACT], t + s->act_act);
        upd(&s->ng[g][DRAM_CMD_ACT], t + ms->RRD_L);
        upd(&s->nr[DRAM_CMD_ACT], t + ms->RRD_S);
        upd(&s->nr[DRAM_CMD_PREA], t + ms->RAS);
        upd(&s->nr[DRAM_CMD_REF], t + ms->RC);
        /* tFAW: at most 4 ACT in any window */
        s->faw[(s->faw_h + s->faw_n) % 4] = t;
        s->faw_n++;
        if (s->faw_n >= 4) {
            upd(&s->nr[DRAM_CMD_ACT], s->faw[s->faw_h] + ms->FAW);
            s->faw_h = (s->faw_h + 1) % 4;
            s->faw_n--;
        }
        s->open[b] = 1;
        s->open_mask |= 1ULL << b;
        s->open_row[b] = s->row[r];
        s->act_t[b] = t;
        s->keep[b] = 1;
        s->activated++;
        s->acted[r] = 1;
        e_open(s, b, t);
        break;
    }
    case DRAM_CMD_PRE:
        upd(&s->nb[b][DRAM_CMD_ACT], t + ms->RP);
        upd(&s->nr[DRAM_CMD_REF], t + ms->RP);
        s->open[b] = 0;
        s->open_mask &= ~(1ULL << b);
        s->keep[b] = 0;
        s->activated--;
        e_close(s, b, t);
        break;
    case DRAM_CMD_PREA:
        upd(&s->nr[DRAM_CMD_ACT], t + ms->RP);
        upd(&s->nr[DRAM_CMD_REF], t + ms->RP);
        for (int k = 0; k < s->nbanks; k++) {
            if (s->open[k]) {
                s->res->n_prea_banks++; /* PRE energy per open bank */
                e_close(s, k, t);
            }
            s->open[k] = 0;
            s->keep[k] = 0;
        }
        s->activated = 0;
        s->open_mask = 0;
        break;
    case DRAM_CMD_REF:
        upd(&s->nr[DRAM_CMD_ACT], t + ms->RFC);
        upd(&s->nr[DRAM_CMD_REF], t + ms->RFC);
        for (int k = 0; k < s->nbanks; k++) s->blocked[k] = 0;
        if (s->ref_pulledin_state) s->flex--;
        else s->ref_pulledin_state = 1;
        if (s->flex == -s->c->refresh_max_pulledin) {
            s->ref_pulledin_state = 0;
            s->ref_trigger += ms->REFI;
        }
        break;
    default: { /* CAS */
        bool rd = cmd == DRAM_CMD_RD || cmd == DRAM_CMD_RDA, ap = cmd == DRAM_CMD_RDA || cmd == DRAM_CMD_WRA;
        if (rd) {
            upd(&s->nb[b][DRAM_CMD_PRE], t + ms->AL + ms->RTP);
            upd(&s->nr[DRAM_CMD_PREA], t + ms->AL + ms->RTP);
            upd(&s->ng[g][DRAM_CMD_RD], t + ms->CCD_L);
            upd(&s->ng[g][DRAM_CMD_RDA], t + ms->CCD_L);
            upd(&s->ng[g][DRAM_CMD_WR], t + s->tRDWR);
            upd(&s->ng[g][DRAM_CMD_WRA], t + s->tRDWR);
            upd(&s->nr[DRAM_CMD_RD], t + ms->CCD_S);
            upd(&s->nr[DRAM_CMD_RDA], t + ms->CCD_S);
            upd(&s->nr[DRAM_CMD_WR], t + s->tRDWR);
            upd(&s->nr[DRAM_CMD_WRA], t + s->tRDWR);
            if (ap) {
                upd(&s->nb[b][DRAM_CMD_ACT], t + s->tRDAACT);
                upd(&s->nr[DRAM_CMD_REF], t + s->tRDAACT);
            }
        } else {
            upd(&s->nb[b][DRAM_CMD_PRE], t + s->tWRPRE);
            upd(&s->nr[DRAM_CMD_PREA], t + s->tWRPRE);
            upd(&s->nb[b][DRAM_CMD_RDA], t + max64(s->tWRRD_L, s->tWRPRE - ms->RTP - ms->AL));
            upd(&s->ng[g][DRAM_CMD_WR], t + ms->CCD_L);
            upd(&s->ng[g][DRAM_CMD_WRA], t + ms->CCD_L);
            upd(&s->ng[g][DRAM_CMD_RD], t + s->tWRRD_L);
            upd(&s->ng[g][DRAM_CMD_RDA], t + s->tWRRD_L);
            upd(&s->nr[DRAM_CMD_WR], t + ms->CCD_S);
            upd(&s->nr[DRAM_CMD_WRA], t + ms->CCD_S);
            upd(&s->nr[DRAM_CMD_RD], t + s->tWRRD_S);
            upd(&s->nr[DRAM_CMD_RDA], t + s->tWRRD_S);
            if (ap) {
                upd(&s->nb[b][DRAM_CMD_ACT], t + s->tWRAACT);
                upd(&s->nr[DRAM_CMD_REF], t + s->tWRPRE + ms->RP);
            }
        }
        /* remove the request from its bank queue and the buffer counters */
        int32_t *q = bq(s, b);
        int n = s->qn[b], i = 0;
        while (i < n && q[i] != r) i++;
        memmove(q + i, q + i + 1, (size_t)(n - i - 1) * sizeof *q);
        if (--s->qn[b] == 0) {
            s->nonempty &= ~(1ULL << b);
            s->prop_cmd[b] = DRAM_NCMD;
            s->bp[b] = INF;
        }
        s->bank_cnt[b]--;
        s->total--;
        if (s->wr[r]) s->nwr--;
        else s->nrd--;
        if (s->c->scheduler == DRAM_SCHED_FRFCFSGRP && s->last_write != s->wr[r]) {
            s->dirty |= s->nonempty & s->open_mask; /* only activated banks choose by direction */
        }
        s->last_write = s->wr[r];
        s->cur[b] = -1;
        s->keep[b] = 0;
        if (s->acted[r]) s->res->row_misses++;
        else s->res->row_hits++;
        if (s->cas_t) s->cas_t[r] = t;
        if (ap) {
            s->open[b] = 0;
            s->open_mask &= ~(1ULL << b);
            s->activated--;
            s->res->n_pre_implicit++;
            /* the auto-precharge starts once both RTP/WR and tRAS allow it (DRAMPower's view) */
            e_close_later(s, b, max64(t + (rd ? ms->AL + ms->RTP : s->tWRPRE), s->act_t[b] + ms->RAS));
        }
        int64_t ready = t + (rd ? ms->CL + ms->AL : ms->WL) + s->burst;
        if (s->c->resp_queue == DRAM_RESP_FIFO) {
            int64_t pos = s->rq_h + s->rq_n;
            s->rq[pos] = r;
            s->rq_t[pos] = ready;
            s->rq_n++;
        } else
            s->resp_ready[r] = ready;
        try_accept(s, t, 1);
        break;
    }
    }
}

/* ---- steps (3)-(5): the command pass ----
 * Bank b's command c = prop_cmd[b] is legal at max(bus, nr[c], bp[b]), where bp[b] is its
 * bank-level bound max(nb[b][c], ng[group][c]). bp changes only when b's proposal changes
 * (dirty) or a command issues in b's bank group; the rank-level part nr[c] and the bus are
 * applied at every pass, so the bounds are exact and one pass finds the next command time
 * without evaluating banks one by one. Banks without a command (empty, blocked) have
 * prop_cmd = DRAM_NCMD, whose timing slots hold INF. */

/* the proposals of the nonempty banks that changed */
static inline void propose_dirty(sim *s) {
    for (uint64_t m = s->nonempty & s->dirty; m; m &= m - 1) propose(s, __builtin_ctzll(m));
}

/* The least time m any bank's command is legal (INF if none); *first: the banks legal at
 * max(m, t) (see dram_scan.h). */
static inline int64_t bank_times(const sim *s, int64_t t, uint64_t *first) {
    uint64_t x = s->nonempty;
    x &= x - 1;
    x &= x - 1;
    x &= x - 1;
    if (x & (x - 1)) return s->bank_times(s->bp, s->prop_cmd, s->nr, s->nbanks, t, first);
    /* at most four busy banks (streaming, light traffic): those alone */
    int64_t m = INF, e[4];
    int bk[4], k = 0;
    for (x = s->nonempty; x; x &= x - 1, k++) {
        bk[k] = __builtin_ctzll(x);
        e[k] = max64(s->bp[bk[k]], s->nr[s->prop_cmd[bk[k]]]);
        m = min64(m, e[k]);
    }
    int64_t thr = max64(m, t);
    uint64_t r = 0;
    for (int i = 0; i < k; i++) r |= (uint64_t)(e[i] <= thr) << bk[i];
    *first = m == INF ? 0 : r;
    return m;
}

/* Issues the oldest command that is legal at t, if any, and returns the next time a command
 * could issue (exact while no proposal changes). The scan after a command also gives the banks
 * legal at the next possible command time (next_ready, at ready_at): a pass at that time
 * needs no scan before it issues, only the banks whose proposals changed since. */
static int64_t commands_full(sim *s, int64_t t) {
    refresh_eval(s, t);
    int best_cmd = DRAM_NCMD, best_b = -1;
    int64_t best_r = INT64_MAX;
    if (s->ref_cmd != DRAM_NCMD && earliest(s, s->ref_cmd, -1, t) == t) {
        best_cmd = s->ref_cmd; /* the refresh payload is the oldest */
        best_r = -1;
    }
    uint64_t changed = s->nonempty & s->dirty, ready;
    propose_dirty(s);
    int64_t nxt = INF;
    bool scanned = false;
    if (s->ready_at >= t) { /* no other bank is legal before ready_at */
        ready = s->ready_at == t ? s->next_ready & ~changed : 0;
        for (uint64_t m = changed; m; m &= m - 1) {
            int b = __builtin_ctzll(m);
            ready |= (uint64_t)(max64(s->bp[b], s->nr[s->prop_cmd[b]]) <= t) << b;
        }
    } else {
        uint64_t first;
        nxt = bank_times(s, t, &first);
        ready = nxt <= t ? first : 0;
        if (nxt > t) { /* nothing legal now: the scan also gives the next time's banks */
            s->next_ready = first;
            s->ready_at = nxt;
            scanned = true;
        }
    }
    if (s->bus > t) ready = 0;
    if (best_r >= 0 && ready) {
        /* the oldest request among the banks that can issue now, without a data branch */
        uint64_t best_u = UINT64_MAX;
        for (uint64_t m = ready; m; m &= m - 1) {
            int b = __builtin_ctzll(m);
            uint64_t key = (uint64_t)s->prop_req[b];
            best_b = key < best_u ? b : best_b;
            best_u = key < best_u ? key : best_u;
        }
        best_cmd = s->prop_cmd[best_b];
        best_r = (int64_t)best_u;
    }
    if (best_cmd != DRAM_NCMD) {
        issue(s, best_cmd, best_b, best_r < 0 ? -1 : best_r, t);
        refresh_eval(s, t);
        propose_dirty(s);
        if (best_b >= 0) { /* the bank group's constraints grew: its banks' bounds (INF if idle) */
            int g = s->bg_of[best_b];
            for (int b = g * s->bpg; b < (g + 1) * s->bpg; b++) {
                int c = s->prop_cmd[b];
                s->bp[b] = max64(s->nb[b][c], s->ng[g][c]);
            }
        }
        scanned = false;
    }
    if (!scanned) {
        nxt = bank_times(s, t + 1, &s->next_ready);
        s->ready_at = max64(nxt, t + 1);
    }
    if (s->ref_cmd != DRAM_NCMD) nxt = min64(nxt, earliest(s, s->ref_cmd, -1, t));
    return nxt == INF ? INF : max64(nxt, max64(s->bus, t + 1));
}

/* Skips the command pass when nothing can issue before the last bound: no proposal changed,
 * no refresh command is pending and no refresh trigger is due. */
static int64_t commands(sim *s, int64_t t) {
    if (!(s->dirty & s->nonempty) && t < s->cmd_bound && s->ref_cmd == DRAM_NCMD &&
        (s->c->refresh != DRAM_REF_ALLBANK || t < s->ref_trigger))
        return s->cmd_bound;
    s->cmd_bound = commands_full(s, t);
    return s->cmd_bound;
}

/* ---- closed-form idle time ----
 * When nothing is queued, offered, in flight or open and the refresh manager is in its steady
 * state (every pull-in credit used, so each trigger issues exactly one REF at the trigger time
 * and moves the trigger by tREFI), the stepped simulation of a gap until the next request E
 * only issues one REF per tREFI. This applies K of them at once, with the state stepping would
 * leave (REF count and log, timing checker slots, bus, trigger, dirty mask, command bound), so
 * results are identical (tests/c/dram compares both); a 1e16-cycle gap no longer takes hours. */
int dram_sim_idle_skip = 1;

static int64_t rq_trigger(const sim *s);

static int64_t idle_skip(sim *s, int64_t t) {
    const dram_ctrl *c = s->c;
    const dram_memspec *ms = s->ms;
    if (!dram_sim_idle_skip || c->refresh != DRAM_REF_ALLBANK) return t;
    if (s->nonempty || s->activated || s->n_open || s->n_pending || s->total || s->rq_n || s->pr_n || s->cq_n ||
        s->rel_req >= 0 || s->r_next != INF || rq_trigger(s) != INF)
        return t;
    if (s->ref_pulledin_state || s->flex != -c->refresh_max_pulledin || s->ref_cmd != DRAM_NCMD) return t;
    int64_t T0 = s->ref_trigger, refi = ms->REFI;
    if (t > T0 || refi <= ms->RFC || max64(s->bus, s->nr[DRAM_CMD_REF]) > T0) return t;
    int64_t E = s->p_time;
    if (s->in_req >= 0) E = min64(E, s->in_arr);
    if (E == INF || E <= T0 + ms->RFC) return t;
    int64_t K = (E - T0 - ms->RFC - 1) / refi; /* T0 + (K-1) refi + RFC < E */
    if (K < 2) return t;
    int64_t last = T0 + (K - 1) * refi;
    s->res->cmd[DRAM_CMD_REF] += K;
    for (int64_t j = 0; j < K && s->res->cmd_log_n < s->res->cmd_log_cap; j++)
        s->res->cmd_log[s->res->cmd_log_n++] = (dram_cmd_rec){T0 + j * refi, DRAM_CMD_REF, -1, -1};
    s->bus = last + 1;
    upd(&s->nr[DRAM_CMD_ACT], last + ms->RFC);
    upd(&s->nr[DRAM_CMD_REF], last + ms->RFC);
    for (int k = 0; k < s->nbanks; k++) s->blocked[k] = 0;
    s->dirty = ~0ULL;
    s->ready_at = -1;
    s->ref_trigger = T0 + K * refi;
    s->cmd_bound = INF;
    return min64(s->ref_trigger, E);
}

int dram_simulate(const dram_memspec *ms, const dram_addrmap *am, const dram_ctrl *c, const dram_trace *tr,
                  dram_result *res, hw_err *err) {
    sim S;
    memset(&S, 0, sizeof S);
    sim *s = &S;
    int64_t n = tr->n;
    if (dram_sim_init(s, ms, am, c, tr, res, err)) goto fail;
    /* the player's first request */
    int64_t t;
    if (c->arbiter == DRAM_ARB_SIMPLE) {
        s->p_next = 0;
        s->gen[0] = s->ts[0];
        s->in_req = 0;
        s->in_arr = s->ts[0] + 1;
        s->p_time = INF;
        t = s->in_arr;
    } else {
        s->in_req = -1;
        s->p_next = 0;
        s->p_time = s->ts[0];
        t = s->p_time;
    }
    if (c->refresh == DRAM_REF_ALLBANK) t = min64(t, s->ref_trigger);
    int64_t iter = 0;
    while (s->done < n) {
        if ((++iter & 0xffff) == 0 && hw_deadline_check("dram simulation", err)) goto fail; /* server's request deadline */
        t = idle_skip(s, t);
        if (c->arbiter != DRAM_ARB_SIMPLE) {
            if (s->r_next == t) arb_end_resp(s, t);
            while (s->p_time == t) player_send(s, t);
        }
        responses(s, t);
        try_accept(s, t, 0);
        int64_t nxt = commands(s, t);
        if (s->done >= n) break;
        /* next event */
        if (s->in_req >= 0 && s->in_arr > t) nxt = min64(nxt, s->in_arr);
        /* the END_RESP of the response in flight matters only if another response is ready by then */
        int64_t rt = rq_trigger(s);
        if (rt != INF) nxt = min64(nxt, max64(rt, s->rel_req >= 0 ? s->rel_time : t + 1));
        if (c->refresh == DRAM_REF_ALLBANK && s->ref_trigger > t) nxt = min64(nxt, s->ref_trigger);
        nxt = min64(nxt, s->r_next);
        nxt = min64(nxt, s->p_time);
        if (nxt == INF) {
            hw_fail(err, HW_E_INTERNAL, "dram model deadlock at t=%lld (done %lld of %lld)", (long long)t,
                    (long long)s->done, (long long)n);
            goto fail;
        }
        t = max64(nxt, t + 1);
    }
    {
        int64_t T = s->t_last;
        e_advance(s, T);
        if (s->n_open > 0 && T > s->last_change) s->act_cycles += T - s->last_change;
        /* DRAMPower counts tRFC - tRP of every REF as active standby */
        s->act_cycles += res->cmd[DRAM_CMD_REF] * (int64_t)(ms->RFC - ms->RP);
        if (s->act_cycles > T) s->act_cycles = T;
        if (dram_sim_results(s, T, err)) goto fail;
    }
    int rc = 0;
    if (0) {
    fail:
        rc = -1;
    }
    dram_sim_free(s);
    return rc;
}
