"""Named variants: the papers' setups as env ids (``hwgym/dram-tdm-v0``, ``hwgym/maestro-marl-v0``, ...).

A variant is a base env id plus a config.  Libraries that take only an env id (CleanRL, RLlib's
``env=`` string, SB3's ``make_vec_env``) reach a paper's setup through it:
``gymnasium.make("hwgym:hwgym/dram-tdm-v0")`` imports hwgym, which registers every variant.
``hwgym.make("dram-tdm-v0")`` (with or without the ``hwgym/`` prefix) works without Gymnasium.
Keyword arguments given at make time override the variant's config keys one by one.
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

__all__ = ["VARIANTS", "resolve"]

#: variant id -> (base env id, config, what it reproduces).  The configs are those of the make
#: paper-* scripts (scripts/paper-*.sh), the first setup of each paper's main comparison.
VARIANTS: Dict[str, Tuple[str, Dict[str, Any], str]] = {
    "maestro-marl-v0": ("maestro-v0", {"model": "mobilenet_v2", "layer": 3, "objective": "latency", "preset": "archgym"},
                        "MARL DNN mapping (marl-dnn-mapping): Table III, MobileNet-v2 'layer 2', latency, ArchGym's MAESTRO harness"),
    "maestro-gamma-v0": ("maestro-v0", {"model": "mobilenet_v2", "layer": 3, "objective": "latency", "preset": "archgym",
                                        "action_space": "gamma17"},
                         "the same layer with GAMMA's 17-element action space (the paper's GAMMA baseline)"),
    "dram-marl-v0": ("dram-v0", {"workload": "archgym_random", "trace_seed": 1, "objective": "joint"},
                     "MARL DRAM design (marl-dram): Figure 2, random trace, joint objective, one fixed trace"),
    "dram-tdm-v0": ("dram-v0", {"workload": "archgym_random", "trace_seed": 1, "objective": "joint", "action_space": "tdm"},
                    "the same, one DRAM parameter per step (the paper's time-division-multiplexed PPO baseline)"),
    "placement-egrl-v0": ("placement-v0", {"workload": "resnet50"},
                          "EGRL memory placement (egrl-placement): Figure 4, ResNet-50 on the NNP-I-like chip"),
    "mmap-muzero-v0": ("mmap-v0", {"problem": "alexnet_train_batch_32"},
                       "MMap-MuZero memory mapping (mmap-muzero): Table 2, alexnet_train_batch_32"),
    "sched-rlsched-v0": ("sched-v0", {"accelerator": "eyeriss_v1", "model": "resnet50", "mode": "network", "objective": "energy"},
                         "RL scheduling (rl-scheduling): Tables 5-6, ResNet-50 on Eyeriss v1, energy, every layer in turn"),
}


def resolve(env_id: str, config: Dict[str, Any]) -> Tuple[str, Dict[str, Any]]:
    """``(base env id, config)``: a variant id (with or without ``hwgym/``) becomes its base id and
    its config updated with ``config``; a plain ``hwgym/<id>`` loses the prefix."""
    name = env_id[len("hwgym/"):] if isinstance(env_id, str) and env_id.startswith("hwgym/") else env_id
    if name in VARIANTS:
        base, cfg, _ = VARIANTS[name]
        return base, dict(cfg, **config)
    return name, config
