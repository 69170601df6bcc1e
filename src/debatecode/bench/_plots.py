"""Plots in benchmark and sweep reports. matplotlib is optional: it comes with the ``plots`` extra.

Without it the runs, tables and JSON are written as usual; only the plot is
skipped, with a warning naming the extra.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

__all__ = ["PLOTS_EXTRA_HINT", "load_pyplot"]

logger = logging.getLogger(__name__)

PLOTS_EXTRA_HINT = "pip install 'debatecode[plots]'"
"""How to get matplotlib (the ``bench`` extra includes it too)."""


def load_pyplot(path: Path) -> Any | None:
    """``matplotlib.pyplot`` drawing off-screen (Agg), or None when matplotlib is missing.

    ``path`` is the plot that is about to be drawn; the warning names it and the extra.
    """
    try:
        import matplotlib
    except ImportError:
        logger.warning("matplotlib is not installed, so %s is not drawn: %s", path, PLOTS_EXTRA_HINT)
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
