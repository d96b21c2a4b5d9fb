/* muzero_net.h - the MMap-MuZero networks (paper section 4.3.1) on nn.h MLPs, float64.
 * Owns: the value transform h(x) and its inverse (Pohlen et al. 2018, as in MuZero), scalar <->
 * categorical (two-hot) encoding over the integer support [-S, S], the feature encoder of an
 * mmap-v0 Dict observation, and the three networks with batched inference:
 *   representation  s0 = tanh(f_repr(features))                          features -> E
 *   dynamics        [s', r_logits] = f_dyn([s, onehot(a)]); s' = tanh(.)   E+3 -> E + V
 *   prediction      [p_logits, v_logits] = f_pred(s)                      E -> 3 + V
 * with V = 2S+1 bins. The policy/value output layer and the reward rows of the dynamics output
 * layer start at zero: the untrained model predicts reward 0, value 0, a uniform prior. Values and rewards live in "scaled" units: the agent multiplies env rewards
 * by a reward scale (100 / the heuristic's return) before they meet the networks.
 *
 * Features (mzf_encode): every buffer row of `buffers` (valid, log size, is_output, target time
 * relative to the current buffer's, same-tensor and same-alias flags relative to the current
 * buffer, relative live range, log demand, log benefit), the 3x4 action features (legal, relative
 * interval, log offset), the 6 global features (move and index as fractions of the program,
 * log alias position/remaining, scaled return, backup_safe), the memory map average-pooled to
 * POOLxPOOL, the memory profile and the supply window average-pooled to 32 bins each.
 * The paper's encoder uses embeddings + a ResNet over the map; ours is pooling + one MLP
 * (docs/muzero.md). */
#ifndef HWGYM_MUZERO_NET_H
#define HWGYM_MUZERO_NET_H

#include <gsl/gsl_rng.h>
#include <stdbool.h>
#include <stdio.h>

#include "hw_error.h"

#include "nn.h"

#define MZ_NACT 3
#define MZ_POOL 16  /* memory map pooled to MZ_POOL x MZ_POOL */
#define MZ_VEC 32   /* profile and supply pooled to MZ_VEC bins */

/* ---- value transform and categorical support ---- */
double mz_h(double x);     /* sign(x)(sqrt(|x|+1)-1) + 1e-3 x */
double mz_hinv(double y);  /* exact inverse of mz_h */
/* Two-hot of h(x) clipped to [-S, S] into out[2S+1]. */
void mz_to_cat(double x, int S, double *out);
/* Expectation of the softmax of logits[2S+1], mapped back through h^-1. probs (may be NULL)
 * receives the softmax. */
double mz_from_logits(const double *logits, int S, double *probs);
void mz_softmax(const double *x, int n, double *out);

/* ---- observation layout (Dict keys in sorted order, flattened) ---- */
typedef struct mz_layout {
    int rows;                /* 1 + k + l buffer rows (10 features each) */
    int off_actions, off_buffers, off_global, off_map, off_profile, off_supply; /* -1: absent */
    int map, profile_len, supply_len;
    int obs_dim;
} mz_layout;
/* From the observation space JSON of mmap-v0 (a Dict). Error names the missing key. */
struct hw_space;
int mz_layout_from_space(const struct hw_space *dict, mz_layout *L, hw_err *err);
int mzf_dim(const mz_layout *L);
/* obs: the flattened observation; nbuf: buffers in the program; rscale: reward scale. */
void mzf_encode(const mz_layout *L, const double *obs, int nbuf, double rscale, double *out);

/* ---- networks ---- */
typedef struct mz_net_cfg {
    int F;        /* feature dim */
    int E;        /* embedding (32) */
    int Hr;       /* representation hidden units, 2 layers (128) */
    int H;        /* dynamics / prediction hidden units, 2 layers (64) */
    int S;        /* support half-width (15): V = 2S+1 */
} mz_net_cfg;

typedef struct mz_net {
    mz_net_cfg c;
    int V;
    nnet_mlp *repr, *dyn, *pred; /* masters: parameters and gradients live here */
    /* inference scratch */
    int cap;
    double *in, *tmp;
    /* float32 inference (mz_net_use_f32): mz_net_initial / mz_net_recurrent run the three MLPs in
     * single precision from a float mirror, re-synced on first use after mz_net_params_changed */
    bool f32, dirty32;
} mz_net;

mz_net_cfg mz_net_cfg_default(int F);
mz_net *mz_net_new(const mz_net_cfg *c, gsl_rng *rng);
void mz_net_free(mz_net *n);
size_t mz_net_nparams(const mz_net *n);

/* Batched inference. feats: B x F. emb_out: B x E. policy_logits: B x 3. value: B (scaled units).
 * Any output pointer may be NULL except emb_out. */
void mz_net_initial(mz_net *n, const double *feats, int B, double *emb_out, double *policy_logits, double *value);
/* emb: B x E, act: B actions. Writes next embeddings, reward, logits and value. */
void mz_net_recurrent(mz_net *n, const double *emb, const int *act, int B, double *emb_out, double *reward,
                      double *policy_logits, double *value);

/* Inference in float32 (on) or float64 (off, the default). Training (muzero_train.c) stays in
 * float64; whoever writes the parameters calls mz_net_params_changed (the trainer's step, a load,
 * a checkpoint restore), so the float mirror is rebuilt before the next inference. */
void mz_net_use_f32(mz_net *n, bool on);
void mz_net_params_changed(mz_net *n);

int mz_net_save(const mz_net *n, const char *path, hw_err *err);
int mz_net_load(mz_net *n, const char *path, hw_err *err);

#endif
