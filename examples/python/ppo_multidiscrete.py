#!/usr/bin/env python3
"""CleanRL-style PPO over the wire on a MultiDiscrete hwgym env (maestro-v0, dram-v0, diag-v0, ...).

    build/bin/hwgym-server --bind tcp://127.0.0.1:5555 &
    PYTHONPATH=clients/python python3 examples/python/ppo_multidiscrete.py --env maestro-v0 \\
        --endpoint tcp://127.0.0.1:5555 --total-steps 20000 --config '{"model": "mobilenet_v2", "layer": 3}'

What makes it learn on these envs (docs/python.md, "Training"):
  * ``normalize_obs=True``: observations are raw units (maestro-v0: cycles, mW, nJ, um^2 up to
    1e8); the client maps them through sign(x)*log1p(|x|).
  * one categorical head per action element (a factored MultiDiscrete policy), the usual choice
    in CleanRL's MultiDiscrete PPO and SB3's MultiCategorical distribution;
  * rewards divided by a running standard deviation (like Gymnasium's NormalizeReward) and
    per-minibatch advantage normalisation, since rewards such as 1/latency are tiny numbers.
Needs torch (Debian: python3-torch); Gymnasium is not needed (hwgym.make_vec has the same API).
Progress lines go to stderr; a JSON summary to stdout: mean reward per step of the trained policy
and of uniform random play, over the same evaluation episodes (same seeds).
"""

import argparse
import json
import sys
import time

import numpy as np

try:
    import torch
    import torch.nn as nn
except ImportError:
    sys.exit("ppo_multidiscrete.py needs torch (Debian: apt install python3-torch; or pip install torch)")

import hwgym


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--env", default="maestro-v0")
    p.add_argument("--endpoint", default=None, help="hwgym-server endpoint (default: $HWGYM_ENDPOINT or tcp://127.0.0.1:5555)")
    p.add_argument("--config", default="{}", help="env config as JSON")
    p.add_argument("--num-envs", type=int, default=8)
    p.add_argument("--num-steps", type=int, default=32, help="rollout length per env")
    p.add_argument("--total-steps", type=int, default=20000)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--gamma", type=float, default=0.9)
    p.add_argument("--gae-lambda", type=float, default=0.9)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--minibatches", type=int, default=4)
    p.add_argument("--clip", type=float, default=0.2)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--eval-episodes", type=int, default=8)
    p.add_argument("--seed", type=int, default=1)
    return p.parse_args(argv)


class Agent(nn.Module):
    def __init__(self, obs_dim, nvec, hidden=64):
        super().__init__()
        self.nvec = [int(n) for n in nvec]
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh())
        self.actor = nn.Linear(hidden, sum(self.nvec))
        self.critic = nn.Linear(hidden, 1)
        nn.init.zeros_(self.actor.weight)
        nn.init.zeros_(self.actor.bias)  # start from uniform random play

    def dist(self, x):
        logits = torch.split(self.actor(self.body(x)), self.nvec, dim=-1)
        return [torch.distributions.Categorical(logits=l) for l in logits]

    def value(self, x):
        return self.critic(self.body(x)).squeeze(-1)

    def act(self, x, action=None, greedy=False):
        ds = self.dist(x)
        if action is None:
            action = torch.stack([d.probs.argmax(-1) if greedy else d.sample() for d in ds], dim=-1)
        logp = torch.stack([d.log_prob(action[..., i]) for i, d in enumerate(ds)], dim=-1).sum(-1)
        ent = torch.stack([d.entropy() for d in ds], dim=-1).sum(-1)
        return action, logp, ent, self.value(x)


def flat(obs):
    return np.asarray(obs, dtype=np.float32).reshape(len(obs), -1)


def evaluate(env, policy, episodes, seed):
    """Mean reward per step over ``episodes`` episodes of sub-env-seeded resets (vector env)."""
    total, steps, done_eps = 0.0, 0, 0
    obs, _ = env.reset(seed=seed)
    ended = np.zeros(env.num_envs, bool)
    while done_eps < episodes:
        a = policy(obs)
        obs, r, te, tr, info = env.step(a)
        live = ~ended  # next-step autoreset: the step after an end is a reset step, not counted
        total += float(r[live].sum())
        steps += int(live.sum())
        ended = te | tr
        done_eps += int(ended.sum())
    return total / max(steps, 1)


def main(argv=None):
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    cfg = json.loads(args.config)
    env = hwgym.make_vec(args.env, args.num_envs, endpoint=args.endpoint, normalize_obs=True, **cfg)
    space = env.single_action_space
    if not hasattr(space, "nvec"):
        sys.exit("%s has a %s action space; this example handles MultiDiscrete" % (args.env, type(space).__name__))
    obs_dim = int(np.prod(env.single_observation_space.shape))
    agent = Agent(obs_dim, space.nvec)
    opt = torch.optim.Adam(agent.parameters(), lr=args.lr, eps=1e-5)
    N, T = args.num_envs, args.num_steps
    rng = np.random.default_rng(args.seed)
    random_policy = lambda o: np.stack([rng.integers(0, space.nvec) for _ in range(N)])  # noqa: E731

    def trained_policy(o):
        with torch.no_grad():
            return agent.act(torch.as_tensor(flat(o)))[0].numpy()

    t0 = time.monotonic()
    obs, _ = env.reset(seed=args.seed)
    ended = np.zeros(N, bool)  # sub-envs whose next step is the server's autoreset step
    r_m2, r_n = 0.0, 0
    updates = max(1, args.total_steps // (N * T))
    for u in range(updates):
        B_obs, B_act, B_logp, B_rew, B_done, B_val, B_live = [], [], [], [], [], [], []
        for t in range(T):
            x = torch.as_tensor(flat(obs))
            with torch.no_grad():
                a, logp, _, v = agent.act(x)
            obs, r, te, tr, _ = env.step(a.numpy())
            live = ~ended
            r_n += int(live.sum())
            r_m2 += float((r[live] ** 2).sum())
            B_obs.append(x); B_act.append(a); B_logp.append(logp); B_val.append(v)
            B_rew.append(torch.as_tensor(r, dtype=torch.float32)); B_done.append(torch.as_tensor(te | tr))
            B_live.append(torch.as_tensor(live))
            ended = te | tr
        scale = float(np.sqrt(r_m2 / max(r_n, 1))) or 1.0
        with torch.no_grad():
            next_v = agent.value(torch.as_tensor(flat(obs)))
        adv = torch.zeros(T, N)
        last = torch.zeros(N)
        for t in reversed(range(T)):
            nv = next_v if t == T - 1 else B_val[t + 1]
            nonterm = (~B_done[t]).float()
            delta = B_rew[t] / scale + args.gamma * nv * nonterm - B_val[t]
            last = delta + args.gamma * args.gae_lambda * nonterm * last
            adv[t] = last
        ret = adv + torch.stack(B_val)
        live = torch.stack(B_live).reshape(-1)  # autoreset steps carry no action: leave them out
        bo = torch.stack(B_obs).reshape(T * N, -1)[live]
        ba = torch.stack(B_act).reshape(T * N, -1)[live]
        bl, badv, bret = torch.stack(B_logp).reshape(-1)[live], adv.reshape(-1)[live], ret.reshape(-1)[live]
        idx = np.arange(len(bo))
        mb = max(1, len(idx) // args.minibatches)
        for _ in range(args.epochs):
            rng.shuffle(idx)
            for s in range(0, len(idx), mb):
                j = torch.as_tensor(idx[s:s + mb])
                _, logp, ent, v = agent.act(bo[j], ba[j])
                ratio = (logp - bl[j]).exp()
                a_ = badv[j]
                a_ = (a_ - a_.mean()) / (a_.std() + 1e-8) if len(j) > 1 else a_
                pg = torch.max(-a_ * ratio, -a_ * ratio.clamp(1 - args.clip, 1 + args.clip)).mean()
                loss = pg + 0.5 * ((v - bret[j]) ** 2).mean() - args.ent_coef * ent.mean()
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                opt.step()
        print("[ppo %s] update %d/%d steps %d mean reward %.6g (%.1fs)" % (
            args.env, u + 1, updates, (u + 1) * N * T, float(torch.stack(B_rew).mean()), time.monotonic() - t0),
            file=sys.stderr, flush=True)
    eval_seed = args.seed + 1000
    rand = evaluate(env, random_policy, args.eval_episodes, eval_seed)
    trained = evaluate(env, trained_policy, args.eval_episodes, eval_seed)
    env.close()
    out = {"env": args.env, "config": cfg, "env_steps": updates * N * T, "seconds": round(time.monotonic() - t0, 2),
           "random_mean_reward": rand, "trained_mean_reward": trained, "beats_random": trained > rand}
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
