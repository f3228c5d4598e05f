"""A result as the page shows it, made in a worker thread: the headline and table as escaped HTML and the CSV
and JSON a player downloads (the CLI's spreadsheet-safe ``--csv`` and its ``--json``) at once, then the figure
as PNG and SVG (drawing it takes longer than most runs)."""
from __future__ import annotations

import io
import threading
from dataclasses import dataclass

from ..intake.user_text import result_csv
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


@dataclass(frozen=True)
class Figures:
    """A result's figure as the page shows it (PNG) and as a player downloads it (PNG and SVG)."""

    png: bytes
    svg: bytes


def figure_files(figure) -> Figures:
    import matplotlib.pyplot as plt

    from ..output.plots import save_figure

    png, svg = io.BytesIO(), io.BytesIO()
    try:
        save_figure(figure, png, format="png", dpi=DPI)
        save_figure(figure, svg, format="svg")
    finally:
        plt.close(figure)
    return Figures(png=png.getvalue(), svg=svg.getvalue())


def render(result) -> Shown:
    """:class:`Shown` of a simulation or decision result."""
    return Shown(html=safe_markup(result._repr_html_()), csv=result_csv(result), json=result.to_json(indent=2),
                 trials=int(result.trials), result=result)


def figure(result) -> Figures:
    """``result.plot()`` as PNG and SVG; names are drawn as text (``$...$`` is no formula)."""
    import matplotlib

    matplotlib.use("Agg")
    with _PYPLOT, matplotlib.rc_context({"text.parse_math": False}):
        return figure_files(result.plot())
