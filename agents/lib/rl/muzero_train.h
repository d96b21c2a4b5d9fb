/* muzero_train.h - MuZero training for the MMap-MuZero agent: the trajectory replay, TD-n
 * targets, the K-step unrolled loss with its exact gradient, and Adam with weight decay.
 *
 * Replay (mz_replay): a ring of `cap` positions (paper: 20000). A trajectory is appended as one
 * segment of consecutive positions; a position keeps its features, action, legal mask, scaled
 * reward, search policy, search (root) value and flags (terminal after it, demonstration).
 * When the ring wraps, old positions are overwritten; unrolls and TD-n sums never cross a
 * segment boundary (beyond a non-terminal segment end the n-step sum is truncated and
 * bootstrapped from the last stored root value; unroll steps past the end carry no loss, past a
 * terminal end they are absorbing: reward 0, value 0, no policy loss).
 *
 * Targets for a sampled position t (mz_batch_targets):
 *   z_t = sum_{i<n} gamma^i r_{t+i} + gamma^n v_{t+n}       (TD-n, n = td_steps)
 *   A non-terminal segment may end with a tail value (Drop-backup's rewound stretch: the game
 *   went on from the restore state): past its last position the sum bootstraps from that value
 *   after the last reward, instead of from the last position's own value.
 *   value_target MZ_VT_MC: z_t = G_final - G_t (Monte Carlo return-to-go, undiscounted: the game is
 *   finite), where G_t is the game's return before the move at t and G_final the return it ended
 *   with (mz_replay_finish writes it when the game ends); TD-n until then. Every position of a
 *   game, rewound or not, has this target: a restore puts the return back to the restore state's.
 *   advantage (cfg.vbase set, --value-target adv / adv-mc): the value network's target is
 *   z_t - vbase[buf_t], z_t as above and vbase the heuristic's scaled return-to-go from the
 *   buffer the position decides; the searches add vbase back to the network's value, so MCTS
 *   still backs up returns. Values near 0 keep the two-hot support's resolution (h(x) ~ x near 0)
 *   and the untrained network's value is the heuristic's return-to-go instead of 0.
 *   policy target: the stored search policy (or a fresh one when the caller reanalysed it).
 *
 * Loss (mz_loss_grad) for a batch of B samples unrolled K steps:
 *   L = 1/B sum_b [ CE(pi_0, p_0) + CE(z_0, v_0)
 *                   + 1/K sum_{k=1..K} ( CE(u_k, r_k) + CE(pi_k, p_k) + CE(z_k, v_k) ) ]
 * where CE is cross-entropy against two-hot (value, reward) or probability (policy) targets.
 * The gradient entering the dynamics function through its embedding input is scaled by
 * `grad_scale` (MuZero: 0.5) - with 1.0 the gradient is the exact derivative of L, which the
 * finite-difference tests check through the whole unroll.
 * Optimiser: Adam (lr 2e-4) with L2 weight decay 1e-4 added to the gradient (coupled, as the
 * MuZero paper's L2 term), over all three networks. */
#ifndef HWGYM_MUZERO_TRAIN_H
#define HWGYM_MUZERO_TRAIN_H

#include <gsl/gsl_rng.h>
#include <stdbool.h>
#include <stdint.h>

#include "muzero_net.h"

typedef struct mz_pos {      /* one position handed to mz_replay_add */
    const double *feat;      /* F */
    int action;
    uint8_t mask;            /* legal actions, bit a */
    double reward;           /* scaled */
    double policy[MZ_NACT];
    double value;            /* scaled root value */
    double pweight;          /* weight of the policy loss at this position (1; 0: none) */
    bool done;               /* the game ended after this move */
    bool has_tail;           /* last of a non-terminal segment with a tail value */
    double tail;             /* that value (scaled): the state the game went on from */
    double retp;             /* the game's scaled return before this move */
    int64_t game;            /* game id (mz_replay_finish) */
    bool has_fin;            /* the game's final scaled return is known: fin */
    double fin;
    int buf;                 /* the buffer this move decides (the advantage baseline's index) */
} mz_pos;

typedef struct mz_replay {
    int cap, F, n, head;     /* n stored, head = next write */
    float *feat;
    uint8_t *act, *mask, *done, *demo;
    float *rew, *pol, *pw, *val;
    float *tail, *retp, *fin; /* NAN: none / unknown */
    int64_t *seg, *game;
    int32_t *buf;             /* buffer decided at each position */
    int64_t next_seg;
} mz_replay;

mz_replay *mz_replay_new(int cap, int F);
void mz_replay_free(mz_replay *r);
/* Appends one segment (n positions, chronological). Returns the ring index of the first. */
int mz_replay_add(mz_replay *r, const mz_pos *pos, int n, bool demo);
/* Empties the ring (positions and segment ids). */
void mz_replay_clear(mz_replay *r);
/* Game `game` ended with scaled return fin: its positions still stored get their MC target. */
void mz_replay_finish(mz_replay *r, int64_t game, double fin);
/* Ring index of the position k steps after idx in the same segment, or -1. */
int mz_replay_next(const mz_replay *r, int idx, int k);

typedef struct mz_train_cfg {
    int K;             /* unroll steps (5) */
    int td_steps;      /* n of TD-n (10) */
    double gamma;      /* 0.9999 */
    double grad_scale; /* 0.5 */
    double lr;         /* 2e-4 */
    double weight_decay; /* 1e-4 */
    double max_grad_norm; /* 0: none */
    int value_target;  /* MZ_VT_TD or MZ_VT_MC */
    /* advantage baseline (NULL: none): the value network learns z_t - vbase[buf_t], the return
     * over the heuristic's return-to-go from the same buffer (nbase entries; 0 past the end) */
    const double *vbase;
    int nbase;
} mz_train_cfg;
enum { MZ_VT_TD = 0, MZ_VT_MC = 1 };
mz_train_cfg mz_train_cfg_default(void);

/* One training batch: B samples, each with K+1 steps of targets. */
typedef struct mz_batch {
    int B, K, F, V;
    double *feat;      /* B x F */
    int *act;          /* B x K (actions a_{t+1..t+K}; 0 where absent) */
    double *pol;       /* B x (K+1) x 3 */
    double *polw;      /* B x (K+1): weight of the policy loss (0: none) */
    double *val;       /* B x (K+1) scalar value targets (scaled) */
    double *valw;      /* B x (K+1) */
    double *rew;       /* B x (K+1) reward targets, index 0 unused */
    double *reww;      /* B x (K+1) */
} mz_batch;

mz_batch *mz_batch_new(int B, int K, int F, int V);
void mz_batch_free(mz_batch *b);
/* Fills sample i of the batch from replay position idx. */
void mz_batch_fill(mz_batch *b, int i, const mz_replay *r, int idx, const mz_train_cfg *c);
/* TD-n value target of position idx. */
double mz_replay_target(const mz_replay *r, int idx, const mz_train_cfg *c);
/* The advantage baseline at buffer b: vbase[b] (0 without a baseline or past its end). */
double mz_vbase(const double *vbase, int nbase, int b);

typedef struct mz_trainer {
    mz_train_cfg c;
    mz_net *net;
    int K, cap;
    nnet_mlp **dyn, **pred;  /* per-step clones (forward caches); params copied from the masters */
    double *emb, *din, *dres; /* scratch */
    double *gemb;
    void *adam[3];
    long steps;
} mz_trainer;

mz_trainer *mz_trainer_new(mz_net *net, const mz_train_cfg *c);
/* Mixed precision (on): the unrolled loss's forward and backward run their GEMMs in float32
 * (nnet_train32 on the representation network and the per-step clones); parameters, Adam and
 * gradients stay float64. Inference with the masters (mz_net_initial / mz_net_recurrent) is set
 * apart by mz_net_use_f32. */
void mz_trainer_use_f32(mz_trainer *t, bool on);
void mz_trainer_free(mz_trainer *t);
/* Zeroes the master gradients, computes the loss of the batch and ADDS its gradient into the
 * masters' grads. Returns the loss; parts (may be NULL) receives {policy, value, reward}. */
double mz_loss_grad(mz_trainer *t, const mz_batch *b, double parts[3]);
/* Loss only (no gradient), same value as mz_loss_grad. */
double mz_loss(mz_trainer *t, const mz_batch *b);
/* Weight decay + (clip) + Adam step on the masters. */
void mz_trainer_apply(mz_trainer *t);

#endif
