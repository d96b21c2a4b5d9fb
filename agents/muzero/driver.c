/* driver.c - the games in flight: stepping, trial logging, Drop-backup (section 4.3.2),
 * trajectories into the replay, and the best complete game. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mz_agent.h"

#define MZ_MAX_OPENS 256 /* restore points per game (server snapshots) */

/* Appends trajectory positions [a, b) to the replay as one segment; done marks the last; tail
 * (may be NULL) is the value the game went on from after the last (a rewound stretch). Forced
 * Drops carry policy weight 0. For the learning-only mode the policy weight is 1 where the TD-n
 * return beat the stored value. */
static void flush(mz_agent *A, mz_game *g, int a, int b, bool done, const double *tail) {
    if (!A->store || !A->rb || b <= a) return;
    int n = b - a;
    mz_pos *p = calloc((size_t)n, sizeof *p);
    for (int i = 0; i < n; i++) {
        int j = a + i;
        p[i].feat = g->feat + (size_t)j * (size_t)g->F;
        p[i].action = g->act[j];
        p[i].mask = g->mask[j];
        p[i].reward = g->rew[j];
        memcpy(p[i].policy, g->pol + (size_t)j * MZ_NACT, sizeof p[i].policy);
        p[i].value = g->val[j];
        /* nothing to learn where the move was forced: a forced Drop or a single legal action (the
         * target would be one-hot on it, and about half of a program's positions have one legal
         * action, nearly always Drop: the policy learned Drop everywhere from them) */
        p[i].pweight = g->fz[j] || __builtin_popcount(g->mask[j] & 7) < 2 ? 0 : 1;
        p[i].done = done && i == n - 1;
        p[i].retp = g->retp[j];
        p[i].game = g->gid;
        p[i].buf = g->bix[j];
    }
    if (tail) {
        p[n - 1].has_tail = true;
        p[n - 1].tail = *tail;
    }
    if (A->o.mode == MODE_LEARN) {
        for (int i = 0; i < n; i++) {
            double z = 0, gm = 1;
            int k = i, m = 0;
            for (; m < A->o.train.td_steps && k < n; m++, k++) {
                z += gm * p[k].reward;
                gm *= A->o.train.gamma;
                if (p[k].done) break;
            }
            if (k < n && !p[k].done) z += gm * p[k].value;
            p[i].pweight = z > p[i].value && p[i].pweight > 0 ? 1 : 0;
        }
    }
    mz_replay_add(A->rb, p, n, false);
    free(p);
}

static int new_backup(mz_agent *A, mz_game *g, hw_err *err) {
    if (!A->o.backup) return 0;
    int64_t id;
    if (mz_env_snapshot(g->env, &id, err)) return -1;
    if (g->backup >= 0 && mz_env_drop(g->env, g->backup, err)) return -1;
    g->backup = id;
    g->backup_buf = g->env->st.buffer;
    g->stretch_losses = 0;
    g->opens_missed = false;
    g->backup_len = g->n;
    return 0;
}

/* Drops the restore points at trajectory length >= n. */
static int drop_opens(mz_game *g, int n, hw_err *err) {
    int k = 0;
    for (int i = 0; i < g->nopen; i++) {
        if (g->opens[i].n >= n) {
            if (mz_env_drop(g->env, g->opens[i].snap, err)) return -1;
        } else {
            g->opens[k++] = g->opens[i];
        }
    }
    g->nopen = k;
    return 0;
}

static int game_reset(mz_agent *A, mz_game *g, hw_err *err) {
    if (drop_opens(g, 0, err)) return -1;
    if (mz_env_reset(g->env, err)) return -1;
    g->episode++;
    g->gid = ++A->next_gid;
    g->n = g->flushed = g->backup_len = 0;
    g->nforced = 0;
    mz_game_encode(A, g);
    return new_backup(A, g, err);
}

int mz_agent_init(mz_agent *A, hw_err *err) {
    A->best = -INFINITY;
    if (A->o.curve && !(A->ctl && A->ctl->resume)) { /* a resumed run keeps its curve (ckpt.c) */
        A->curve = fopen(A->o.curve, "w");
        if (!A->curve) return hw_fail(err, HW_E_BAD_REQUEST, "--curve: cannot write %s", A->o.curve);
        fprintf(A->curve, "seconds,env_steps,return,best\n");
    }
    A->t0 = ag_now();
    A->cpu0 = mz_cpu_now();
    A->lean = A->o.mode == MODE_ES || A->o.mode == MODE_RANDOM || A->o.mode == MODE_SEARCH;
    /* the lean modes open the env without the 128x128 memory map (unless the config says
     * otherwise): the same game, a cheaper observation per step and per snapshot */
    json_t *ecfg = json_is_object(A->ao->config) ? json_deep_copy(A->ao->config) : json_object();
    /* AlphaZero mode too: its searches step in-process sessions per leaf, and the leaves'
     * features must match the acting games' */
    if ((A->lean || A->o.model_true) && !json_object_get(ecfg, "memory_map")) json_object_set_new(ecfg, "memory_map", json_false());
    A->ecfg = ecfg;
    A->games = calloc((size_t)A->G, sizeof(mz_game *));
    for (int i = 0; i < A->G; i++) {
        mz_game *g = calloc(1, sizeof *g);
        A->games[i] = g;
        g->idx = i;
        g->backup = -1;
        g->backup_buf = -1;
        g->episode = -1;
        g->env = mz_env_open(A->ao->endpoint, ecfg, err);
        if (!g->env) return -1;
    }
    mz_env *e = A->games[0]->env;
    if (mz_env_reset(e, err)) return -1;
    A->nbuf = e->st.nbuf;
    A->F = mzf_dim(&e->L);
    /* the heuristic's game: reward scale, MuZero-prod and the demonstration */
    json_t *pt = json_pack("{ss}", "policy", "heuristic"), *m = NULL;
    double r = 0;
    int rc = mz_env_evaluate(e, pt, &r, &m, err);
    json_decref(pt);
    if (rc) return -1;
    A->heur_return = json_number_value(json_object_get(m, "return"));
    A->heur_latency = json_number_value(json_object_get(m, "program_latency"));
    const char *acts = json_string_value(json_object_get(m, "actions"));
    A->heur_actions = strdup(acts ? acts : "");
    json_decref(m);
    A->rscale = A->heur_return > 0 ? 100.0 / A->heur_return : 1.0;
    /* the search's normalisation floor: the heuristic's mean reward per buffer (scaled units), so
     * that differences below one buffer's typical reward are not stretched to the whole range */
    if (A->o.mcts.minmax_floor < 0) A->o.mcts.minmax_floor = A->nbuf > 0 ? 100.0 / A->nbuf : 0.01;
    for (int i = 0; i < A->G; i++) {
        mz_game *g = A->games[i];
        g->F = A->F;
        g->prefix = calloc((size_t)A->nbuf + 1, 1);
        g->cur_feat = calloc((size_t)A->F, sizeof(double));
    }
    return 0;
}

void mz_agent_free(mz_agent *A) {
    for (int i = 0; i < A->G && A->games; i++) {
        mz_game *g = A->games[i];
        if (!g) continue;
        mz_env_free(g->env);
        free(g->feat);
        free(g->act);
        free(g->mask);
        free(g->rew);
        free(g->pol);
        free(g->val);
        free(g->retp);
        free(g->fz);
        free(g->bix);
        free(g->prefix);
        free(g->forced);
        free(g->opens);
        free(g->cur_feat);
        free(g);
    }
    free(A->games);
    if (A->curve) fclose(A->curve);
    free(A->heur_actions);
    free(A->best_actions);
    json_decref(A->best_metrics);
    json_decref(A->windows);
    json_decref(A->ecfg);
}

static bool is_forced(const mz_game *g) {
    if (!(g->env->st.mask >> 2 & 1)) return false;
    for (int i = 0; i < g->nforced; i++)
        if (g->forced[i] == g->env->st.alias_cur) return true;
    return false;
}

static void add_forced(mz_game *g, int alias) {
    for (int i = 0; i < g->nforced; i++)
        if (g->forced[i] == alias) return;
    if (g->nforced == g->capforced) {
        g->capforced = g->capforced ? 2 * g->capforced : 8;
        g->forced = realloc(g->forced, sizeof(int) * (size_t)g->capforced);
    }
    g->forced[g->nforced++] = alias;
}

static void complete(mz_agent *A, mz_game *g) {
    double ret = json_number_value(json_object_get(g->env->info, "return"));
    A->games_done++;
    if (ret > A->best) {
        A->best = ret;
        A->elite_due = true;
        free(A->best_actions);
        A->best_actions = malloc((size_t)A->nbuf + 1);
        for (int i = 0; i < A->nbuf; i++) A->best_actions[i] = (char)('0' + g->prefix[i]);
        A->best_actions[A->nbuf] = 0;
        json_decref(A->best_metrics);
        A->best_metrics = json_deep_copy(g->env->info);
    }
    if (A->curve) {
        fprintf(A->curve, "%.3f,%lld,%.17g,%.17g\n", mz_agent_clock(A), (long long)A->env_steps, ret, A->best);
        fflush(A->curve);
    }
    if (A->on_done) A->on_done(A, g, ret);
    if (A->o.log_games > 0 && ++A->window_games >= A->o.log_games) {
        if (!A->windows) A->windows = json_array();
        json_array_append_new(A->windows, mz_window_json(A));
        int64_t n = A->choice[0] + A->choice[1] + A->choice[2];
        for (int a = 0; a < 3 && n >= 20; a++)
            if ((double)A->choice[a] > 0.95 * (double)n && !A->quiet)
                fprintf(stderr, "[hwgym-muzero] warning: %s took %.1f%% of the last %lld choices (policy entropy %.3f): the policy may be collapsing\n",
                        a == 0 ? "Copy" : a == 1 ? "NoCopy" : "Drop", 100.0 * (double)A->choice[a] / (double)n, (long long)n,
                        A->ent_n ? A->ent_sum / (double)A->ent_n : 0.0);
        A->choice[0] = A->choice[1] = A->choice[2] = 0;
        A->ent_sum = 0;
        A->ent_n = 0;
        A->window_games = 0;
    }
}

json_t *mz_window_json(const mz_agent *A) {
    double n = (double)(A->choice[0] + A->choice[1] + A->choice[2]);
    json_t *w = json_object();
    json_object_set_new(w, "games", json_integer(A->games_done));
    json_object_set_new(w, "env_steps", json_integer(A->env_steps));
    json_object_set_new(w, "entropy", A->ent_n ? json_real(A->ent_sum / (double)A->ent_n) : json_null());
    static const char *const names[3] = {"copy", "nocopy", "drop"};
    for (int a = 0; a < 3; a++) json_object_set_new(w, names[a], json_real(n > 0 ? (double)A->choice[a] / n : 0));
    return w;
}

/* After one env step of g: Drop-backup on a lost game, completion, new backup, flushing.
 * alias_prev / last_of_group describe the buffer just decided. */
static int after_step(mz_agent *A, mz_game *g, int alias_prev, bool last_of_group, hw_err *err) {
    mz_env *e = g->env;
    if (e->terminated && e->lost) {
        A->losses++;
        if (A->o.backup && g->backup >= 0) {
            /* restore point: the state just before the group that cannot be completed was opened
             * in CMEM, when that is inside the backup stretch; otherwise the backup_safe state */
            int64_t snap = g->backup;
            int n0 = g->backup_len;
            bool escalate = ++g->stretch_losses > 1;
            if (escalate) {
                /* a second loss since the backup_safe state: the groups waiting in CMEM compete
                 * for the same memory, and dropping them one per loss would re-walk thousands of
                 * steps per group on a big training program. Back to the backup (the paper's
                 * restore point), and Drop every group that was open at the loss. */
                for (int i = 0; i < g->nopen; i++) add_forced(g, g->opens[i].alias);
                /* every group open at the loss was opened in this stretch; the latest state from
                 * which all of them can still be dropped is the earliest of their restore points
                 * (when each has one, the stuck group included): no need to undo the groups
                 * completed before it */
                bool stuck_has_point = false;
                for (int i = 0; i < g->nopen; i++) stuck_has_point |= g->opens[i].alias == e->st.alias_cur;
                if (!g->opens_missed && stuck_has_point)
                    for (int i = 0; i < g->nopen; i++)
                        if (g->opens[i].n >= g->backup_len && (snap == g->backup || g->opens[i].n < n0)) {
                            snap = g->opens[i].snap;
                            n0 = g->opens[i].n;
                        }
                g->stretch_losses = 0;
            } else {
                for (int i = 0; i < g->nopen; i++)
                    if (g->opens[i].alias == e->st.alias_cur && g->opens[i].n >= n0) {
                        snap = g->opens[i].snap;
                        n0 = g->opens[i].n;
                    }
            }
            /* the discarded stretch becomes a short NON-terminal segment whose last reward cancels
             * the stretch's rewards and which bootstraps from the restore state's value (the game
             * goes on from there): the negative signal stays local */
            double s = 0;
            for (int i = n0; i < g->n - 1; i++) s += g->rew[i];
            g->rew[g->n - 1] = -s;
            double tail = g->val[n0];
            flush(A, g, n0, g->n, false, &tail);
            add_forced(g, alias_prev);
            add_forced(g, e->st.alias_cur);
            A->rewound += g->n - n0;
            if (!A->quiet)
                fprintf(stderr, "[hwgym-muzero] game %d lost at buffer %d (alias group %d stuck, %d groups open): %s, %d steps undone\n",
                        g->idx, e->st.buffer, e->st.alias_cur, g->nopen,
                        escalate ? "second loss in the backup stretch, back to the earliest open group's restore point"
                                 : "back to the stuck group's restore point", g->n - n0);
            g->n = n0;
            if (mz_env_restore(e, snap, err) || drop_opens(g, n0, err)) return -1;
            g->restores++;
            A->restores++;
            mz_game_encode(A, g);
            return 0;
        }
        flush(A, g, g->flushed, g->n, true, NULL);
        if (A->rb) mz_replay_finish(A->rb, g->gid, 0);
        if (A->on_done) A->on_done(A, g, 0);
        return game_reset(A, g, err);
    }
    if (last_of_group) /* the group is complete: it can no longer be the one that fails */
        for (int i = 0; i < g->nopen; i++)
            if (g->opens[i].alias == alias_prev) {
                if (mz_env_drop(e, g->opens[i].snap, err)) return -1;
                g->opens[i] = g->opens[--g->nopen];
                break;
            }
    if (e->terminated) {
        complete(A, g);
        flush(A, g, g->flushed, g->n, true, NULL);
        if (A->rb) mz_replay_finish(A->rb, g->gid, json_number_value(json_object_get(e->info, "return")) * A->rscale);
        return game_reset(A, g, err);
    }
    mz_game_encode(A, g);
    if (A->o.backup && e->st.backup_safe && new_backup(A, g, err)) return -1;
    if (!A->o.backup) g->backup_len = g->n;
    if (g->backup_len - g->flushed >= 256) {
        flush(A, g, g->flushed, g->backup_len, false, NULL);
        int k = g->backup_len;
        int rest = g->n - k;
        memmove(g->feat, g->feat + (size_t)k * (size_t)g->F, sizeof(double) * (size_t)rest * (size_t)g->F);
        memmove(g->act, g->act + k, (size_t)rest);
        memmove(g->mask, g->mask + k, (size_t)rest);
        memmove(g->rew, g->rew + k, sizeof(double) * (size_t)rest);
        memmove(g->pol, g->pol + (size_t)k * MZ_NACT, sizeof(double) * (size_t)rest * MZ_NACT);
        memmove(g->val, g->val + k, sizeof(double) * (size_t)rest);
        memmove(g->retp, g->retp + k, sizeof(double) * (size_t)rest);
        memmove(g->fz, g->fz + k, (size_t)rest);
        memmove(g->bix, g->bix + k, sizeof(int) * (size_t)rest);
        g->n = rest;
        for (int i = 0; i < g->nopen; i++) g->opens[i].n -= k;
        g->backup_len = 0;
        g->flushed = 0;
    }
    return 0;
}

void mz_progress(mz_agent *A, bool force) {
    if (A->quiet) return;
    double now = ag_now();
    if (!force && now - A->last_print < ag_progress_interval()) return;
    A->last_print = now;
    double el = now - A->t0, rate = el > 0 ? (double)A->env_steps / el : 0;
    double left = (double)(A->ao->budget - A->env_steps), eta = rate > 0 && left > 0 ? left / rate : 0;
    if (A->o.time_limit > 0 && A->o.time_limit - el < eta) eta = A->o.time_limit - el > 0 ? A->o.time_limit - el : 0;
    char best[32];
    if (isfinite(A->best)) snprintf(best, sizeof best, "%.6g", A->best);
    else snprintf(best, sizeof best, "-");
    double nc = (double)(A->choice[0] + A->choice[1] + A->choice[2]);
    char watch[96] = "";
    if (nc > 0)
        snprintf(watch, sizeof watch, "  C/N/D %.0f/%.0f/%.0f%%  H %.2f", 100 * (double)A->choice[0] / nc, 100 * (double)A->choice[1] / nc,
                 100 * (double)A->choice[2] / nc, A->ent_n ? A->ent_sum / (double)A->ent_n : 0.0);
    fprintf(stderr, "[hwgym-muzero] steps %lld/%lld (%.1f%%)  games %lld (%d in flight)  best %s (heuristic %.6g)  restores %lld  train %lld%s  rate %.1f/s  eta %.1fs\n",
            (long long)A->env_steps, (long long)A->ao->budget, A->ao->budget > 0 ? 100.0 * (double)A->env_steps / (double)A->ao->budget : 0.0,
            (long long)A->games_done, A->live, best, A->heur_return, (long long)A->restores, (long long)A->train_steps, watch, rate, eta);
}

/* A restore point before the current buffer opens its alias group in CMEM: if the group later
 * cannot be completed, Drop-backup comes back here instead of to the (possibly much older)
 * backup_safe state. */
static int open_point(mz_game *g, hw_err *err) {
    if (g->nopen == g->capopen) {
        g->capopen = g->capopen ? 2 * g->capopen : 16;
        g->opens = realloc(g->opens, sizeof *g->opens * (size_t)g->capopen);
    }
    struct mz_open *o = &g->opens[g->nopen];
    if (mz_env_snapshot(g->env, &o->snap, err)) return -1;
    o->alias = g->env->st.alias_cur;
    o->n = g->n;
    o->buf = g->env->st.buffer;
    g->nopen++;
    return 0;
}

int mz_agent_play(mz_agent *A, hw_err *err) {
    int G = A->G;
    for (int i = 0; i < G && !A->resumed; i++)
        if (game_reset(A, A->games[i], err)) return -1;
    A->live = 0;
    for (int i = 0; i < G; i++) A->live += !A->games[i]->retired;
    A->fit_t = mz_agent_clock(A);
    A->fit_steps = A->env_steps;
    mz_game **live = calloc((size_t)G, sizeof *live);
    int *act = calloc((size_t)G, sizeof(int));
    double *pol = calloc((size_t)G * MZ_NACT, sizeof(double)), *val = calloc((size_t)G, sizeof(double));
    int rc = 0;
    const char *worker = A->o.worker ? A->o.worker : "0";
    while (!mz_agent_out_of_budget(A)) {
        if (mz_ckpt_maybe(A, err)) {
            rc = -1;
            goto out;
        }
        int n = 0, was = A->live;
        mz_fit_games(A);
        if (A->live < was && !A->quiet)
            fprintf(stderr, "[hwgym-muzero] %d of %d games in flight retired: the budget left cannot complete them (%d live; --no-fit-games keeps all)\n",
                    was - A->live, was, A->live);
        for (int i = 0; i < G; i++)
            if (!A->games[i]->retired) live[n++] = A->games[i];
        A->decide(A, live, n, act, pol, val);
        if (A->failed) {
            *err = A->fatal;
            rc = -1;
            goto out;
        }
        for (int i = 0; i < n && !mz_agent_out_of_budget(A); i++) {
            mz_game *g = live[i];
            mz_env *e = g->env;
            int a = act[i];
            if (a < 0) continue;
            bool forced = is_forced(g);
            if (forced) {
                a = 2;
                pol[i * MZ_NACT] = pol[i * MZ_NACT + 1] = 0;
                pol[i * MZ_NACT + 2] = 1;
            }
            if (!(e->st.mask >> a & 1)) /* never send an illegal action */
                for (a = MZ_NACT - 1; a > 0 && !(e->st.mask >> a & 1); a--) {
                }
            int alias_prev = e->st.alias_cur, buf = e->st.buffer;
            const double *gl = e->L.off_global >= 0 ? e->st.obs + e->L.off_global : NULL;
            bool opens = gl && a != 2 && gl[2] == 0 && gl[3] > 0, last = gl && gl[3] == 0;
            if (opens && A->o.backup && g->backup >= 0) {
                if (g->nopen >= MZ_MAX_OPENS) g->opens_missed = true;
                else if (open_point(g, err)) {
                    rc = -1;
                    goto out;
                }
            }
            mz_traj_reserve(g, g->n + 1);
            memcpy(g->feat + (size_t)g->n * (size_t)g->F, g->cur_feat, sizeof(double) * (size_t)g->F);
            g->act[g->n] = (uint8_t)a;
            g->mask[g->n] = e->st.mask;
            memcpy(g->pol + (size_t)g->n * MZ_NACT, pol + (size_t)i * MZ_NACT, sizeof(double) * MZ_NACT);
            g->val[g->n] = val[i];
            g->retp[g->n] = e->st.ret * A->rscale;
            g->fz[g->n] = forced;
            g->bix[g->n] = buf;
            if (!forced && __builtin_popcount(e->st.mask & 7) >= 2) {
                A->choice[a]++;
                A->choice_all[a]++;
            }
            if (mz_env_step(e, a, err)) {
                rc = -1;
                goto out;
            }
            g->rew[g->n] = e->reward * A->rscale;
            g->n++;
            if (buf >= 0 && buf < A->nbuf) g->prefix[buf] = (uint8_t)a;
            if (mz_log_step(A, g, worker, a, err) || after_step(A, g, alias_prev, last, err)) {
                rc = -1;
                goto out;
            }
        }
        if (mz_elite_maybe(A, err)) {
            rc = -1;
            goto out;
        }
        mz_train_maybe(A);
        mz_progress(A, false);
    }
    mz_progress(A, true);
out:
    free(live);
    free(act);
    free(pol);
    free(val);
    return rc;
}
