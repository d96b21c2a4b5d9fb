"""Behaviour shared by hwgym's stand-ins for Gymnasium's and PettingZoo's base classes.

Used only when those libraries are not importable: ``Seeded`` gives the ``np_random`` /
``np_random_seed`` pair Gymnasium's Env and VectorEnv have (a Generator made on first use), and
``Closing`` the context manager that closes the env on exit.  ``unwrapped`` is the env itself.
"""


def _np_random(seed):
    from .spaces import _np_random as make
    return make(seed)


class Closing:
    """``with env: ...`` closes the env on exit."""

    @property
    def unwrapped(self):
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class Seeded(Closing):
    """Gymnasium's np_random / np_random_seed properties."""
    _np_random = None
    _np_random_seed = None

    @property
    def np_random(self):
        if self._np_random is None:
            self._np_random, self._np_random_seed = _np_random(None)
        return self._np_random

    @np_random.setter
    def np_random(self, value):
        self._np_random, self._np_random_seed = value, -1

    @property
    def np_random_seed(self):
        if self._np_random is None:
            self._np_random, self._np_random_seed = _np_random(None)
        return self._np_random_seed
