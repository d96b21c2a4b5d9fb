import numpy as np


def np_random(seed=None):
    if seed is not None and not (isinstance(seed, int) and seed >= 0):
        raise ValueError("Seed must be a python integer, actual type: %s" % type(seed))
    ss = np.random.SeedSequence(seed)
    return np.random.Generator(np.random.PCG64(ss)), ss.entropy
