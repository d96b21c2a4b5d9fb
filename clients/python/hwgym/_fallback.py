"""Behaviour shared by hwgym's stand-ins for Gymnasium's and PettingZoo's base classes.

Used only when those libraries are not importable: ``Seeded`` gives the ``np_random`` /
``np_random_seed`` pair Gymnasium's Env and VectorEnv have (a Generator made on first use), and
``Closing`` the context manager that closes the env on exit.  ``unwrapped`` is the env itself.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np


def _np_random(seed: Optional[int]) -> Tuple[np.random.Generator, int]:
    from .spaces import _np_random as make
    gen, used = make(seed)
    return gen, used


class Closing:
    """``with env: ...`` closes the env on exit."""

    @property
    def unwrapped(self) -> Any:
        return self

    def close(self) -> None:
        pass

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Seeded(Closing):
    """Gymnasium's np_random / np_random_seed properties."""
    _np_random: Optional[np.random.Generator] = None
    _np_random_seed: Optional[int] = None

    @property
    def np_random(self) -> np.random.Generator:
        if self._np_random is None:
            self._np_random, self._np_random_seed = _np_random(None)
        return self._np_random

    @np_random.setter
    def np_random(self, value: np.random.Generator) -> None:
        self._np_random, self._np_random_seed = value, -1

    @property
    def np_random_seed(self) -> Optional[int]:
        if self._np_random is None:
            self._np_random, self._np_random_seed = _np_random(None)
        return self._np_random_seed
