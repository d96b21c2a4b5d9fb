"""Optional Gymnasium: imported when available (and HWGYM_NO_GYMNASIUM is not set)."""

import os

gymnasium = None
if os.environ.get("HWGYM_NO_GYMNASIUM", "") in ("", "0"):
    try:
        import gymnasium  # noqa: F401
        import gymnasium.spaces  # noqa: F401
    except ImportError:
        gymnasium = None

HAVE_GYMNASIUM = gymnasium is not None
