"""Optional Gymnasium: imported when available (and HWGYM_NO_GYMNASIUM is not set).

Supported: Gymnasium 0.29.x and every 1.x.  ``GYM_VERSION`` is its (major, minor) tuple;
``GYM_V0`` is true under 0.29, whose vector API differs (same-step autoreset, ``final_observation``
in info, no ``VectorWrapper``).  Any other version fails at import with a message saying what to do.
"""

from __future__ import annotations

import importlib
import os
import re
from typing import Any, Optional, Tuple

SUPPORTED = "Gymnasium 0.29.x or 1.x"
MIN_VERSION, MAX_VERSION = (0, 29), (2, 0)  # inclusive, exclusive

gymnasium: Any = None
GYM_VERSION: Optional[Tuple[int, int]] = None
if os.environ.get("HWGYM_NO_GYMNASIUM", "") in ("", "0"):
    try:
        gymnasium = importlib.import_module("gymnasium")
        importlib.import_module("gymnasium.spaces")
    except ImportError:
        gymnasium = None


def parse_version(v: object) -> Optional[Tuple[int, int]]:
    """'1.2.0rc1' -> (1, 2); None when it does not start with two numbers."""
    m = re.match(r"\s*(\d+)\.(\d+)", str(v))
    return (int(m.group(1)), int(m.group(2))) if m else None


if gymnasium is not None:
    _v = getattr(gymnasium, "__version__", "?")
    GYM_VERSION = parse_version(_v)
    if GYM_VERSION is None or not (MIN_VERSION <= GYM_VERSION < MAX_VERSION):
        raise ImportError("hwgym supports %s; this Python has Gymnasium %s (%s). Install a supported one "
                          "(pip install 'gymnasium>=0.29,<2'), or set HWGYM_NO_GYMNASIUM=1 to use hwgym "
                          "without Gymnasium." % (SUPPORTED, _v, os.path.dirname(getattr(gymnasium, "__file__", "") or "?")))

HAVE_GYMNASIUM = gymnasium is not None
GYM_V0 = HAVE_GYMNASIUM and GYM_VERSION is not None and GYM_VERSION < (1, 0)
