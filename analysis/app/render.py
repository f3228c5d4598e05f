"""A result as the page shows it, made in a worker thread: the headline and table as escaped HTML and the CSV
and JSON a player downloads (the CLI's spreadsheet-safe ``--csv`` and its ``--json``) at once, then the figure
as a PNG (drawing it takes longer than most runs)."""
from __future__ import annotations

import io
import threading
from dataclasses import dataclass

from ..user_text import result_csv
from .text import safe_markup

#: pyplot keeps global state: one figure is drawn at a time.
_PYPLOT = threading.Lock()
DPI = 80


@dataclass(frozen=True)
class Shown:
    """A rendered result (``result``: the result itself, whose figure :func:`figure` draws)."""

    html: str
    csv: str
    json: str
    trials: int
    result: object


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
    return Shown(html=safe_markup(result._repr_html_()), csv=result_csv(result), json=result.to_json(indent=2),
                 trials=int(result.trials), result=result)


def figure(result) -> bytes:
    """The PNG of ``result.plot()``; names are drawn as text (``$...$`` is no formula)."""
    import matplotlib

    matplotlib.use("Agg")
    with _PYPLOT, matplotlib.rc_context({"text.parse_math": False}):
        return figure_png(result.plot())
