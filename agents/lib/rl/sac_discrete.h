/* sac_discrete.h - the EGRL paper's SAC-discrete learner on a graph (Appendix D, Algorithm 2
 * lines 27-36). Owns the GNN actor, twin GNN critics and their targets, the shared cyclic
 * replay of (action, reward, terminated) and one gradient update.
 *
 * The state is the workload graph (node features, Table 1), which placement-v0 keeps fixed
 * through an episode (the paper uses one step per episode), so the replay stores actions and
 * rewards and every transition's state is the graph given at creation.
 *
 * Actor: GNN, per node n_sub x n_ch logits (2 sub-actions x 3 memories); pi = per-group softmax.
 * Critics Q1, Q2 (and targets): GNN on [node features, per-node action encoding] (F + n_sub*n_ch
 *   inputs), one output per node, Q = mean over nodes.
 * Critic update on a batch of B transitions:
 *   a~ = onehot(a) + clip(N(0, noise_std), -noise_clip, noise_clip)   (noisy behavioural action)
 *   y  = scale r + gamma (1 - terminated) (min_j Q'_j(s, pi(s)) + alpha H(pi(s)))
 *   L  = mean_b (Q1(s, a~_b) - y_b)^2 + (Q2(s, a~_b) - y_b)^2
 * Actor update (sampled policy gradient through the critic with the policy's probabilities as
 * the action encoding, entropy in closed form over the choices and averaged over nodes):
 *   H  = (1/N) sum_i sum_g -sum_j pi_igj log pi_igj
 *   L_pi = -min(Q1, Q2)(s, pi(s)) - alpha H
 * Targets: Q'_j <- tau Q_j + (1 - tau) Q'_j after every update. Adam on each network. */
#ifndef HWGYM_SAC_DISCRETE_H
#define HWGYM_SAC_DISCRETE_H

#include <gsl/gsl_rng.h>
#include <stdbool.h>
#include <stdint.h>

#include "gnn.h"
#include "nn.h"

typedef struct sacd_cfg {
    gnn_cfg actor, critic;     /* in / n_out are set by sacd_new */
    double actor_lr, critic_lr; /* 1e-3, 1e-3 */
    double gamma, tau, alpha;   /* 0.99, 1e-3, 0.05 */
    double reward_scale;        /* 5 */
    int batch;                  /* 24 */
    int chunk;                  /* replay samples per critic forward/backward (1; 1..batch): the loss is
                                   a sum over samples, so the gradient is the same for any chunk, but
                                   small chunks keep a pass's buffers in cache (bench/README.md) */
    int64_t buffer;             /* 100000 */
    double noise_std, noise_clip; /* 0.1, 0.2 */
} sacd_cfg;

sacd_cfg sacd_cfg_default(void);

typedef struct sacd_stats {
    double q_loss, pi_loss, entropy, q_pi;
} sacd_stats;

typedef struct sacd {
    sacd_cfg cfg;
    int N, F, nsub, nch, nact; /* nodes, features, sub-actions, choices; nact = nsub*nch */
    const gnn_graph *g;        /* borrowed */
    gnn_graph *gb;             /* cfg.chunk copies of g */
    gnn_graph *gtail;          /* batch % chunk copies (NULL when chunk divides batch) */
    double *feat;              /* N x F (copy) */
    gnn_net *actor, *q1, *q2, *q1t, *q2t;
    nnet_adam *opt_actor, *opt_q1, *opt_q2;
    /* replay: cyclic, cap transitions of N*nsub uint8 actions */
    int64_t cap, size, pos;
    uint8_t *r_act;
    double *r_rew;
    uint8_t *r_done;
    /* scratch */
    double *Xc, *Xa, *dq, *dXa, *probs, *dz, *y;
    int64_t *idx;
} sacd;

/* g and feat (N x F) describe the workload; nsub sub-actions of nch choices per node. */
sacd *sacd_new(const sacd_cfg *cfg, const gnn_graph *g, const double *feat, int F, int nsub, int nch, uint64_t seed,
               hw_err *err);
void sacd_free(sacd *s);
/* action: N*nsub entries in [0, nch) (node-major), stored as one transition. */
void sacd_add(sacd *s, const int64_t *action, double reward, bool terminated);
/* Actor logits (N x nact, owned by the actor, valid until its next forward). */
const double *sacd_logits(sacd *s);
/* The actor's posterior (N*nsub x nch probabilities) into post. */
void sacd_posterior(sacd *s, double *post);
/* Behavioural action: argmax of logits + N(0, sigma) per choice (sigma 0: greedy). */
void sacd_act(sacd *s, gsl_rng *rng, double sigma, int64_t *action);
/* One gradient step (critics, actor, targets); no-op returning 0 while the replay holds fewer
 * transitions than one batch. Returns 1 after an update. */
int sacd_update(sacd *s, gsl_rng *rng, sacd_stats *st);
/* L_pi of the current actor (and its gradient in actor->grads when grad). Exposed for tests. */
double sacd_actor_loss(sacd *s, bool grad, double *entropy);

/* Per-group softmax of a GNN's per-node logits: logits rows x (nsub*nch) -> probabilities. */
void sacd_group_softmax(const double *logits, int rows, int nsub, int nch, double *probs);

#endif
