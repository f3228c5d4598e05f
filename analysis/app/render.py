"""A result as the page shows it, made in the worker thread: the headline and table as escaped HTML, the
figure as a PNG, and the CSV and JSON a player downloads (the CLI's ``--csv`` and ``--json``)."""
from __future__ import annotations

import io
import threading
from dataclasses import dataclass

from .text import safe_markup

#: pyplot keeps global state: one figure is drawn at a time.
_PYPLOT = threading.Lock()
DPI = 80


@dataclass(frozen=True)
class Shown:
    """A rendered result."""

    html: str
    png: bytes
    csv: str
    json: str
    trials: int


def figure_png(figure) -> bytes:
    import matplotlib.pyplot as plt

    out = io.BytesIO()
    try:
        figure.savefig(out, format="png", dpi=DPI)
    finally:
        plt.close(figure)
    return out.getvalue()


def render(result) -> Shown:
    """:class:`Shown` of a simulation or decision result."""
    import matplotlib

    matplotlib.use("Agg")
    with _PYPLOT, matplotlib.rc_context({"text.parse_math": False}):  # a name's $...$ is text, not a formula
        png = figure_png(result.plot())
    table = result.table() if not hasattr(result, "to_csv") else None
    csv = result.to_csv() if table is None else table.to_csv(index=False)
    return Shown(html=safe_markup(result._repr_html_()), png=png, csv=csv, json=result.to_json(indent=2),
                 trials=int(result.trials))
