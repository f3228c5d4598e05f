"""wargame-odds, the public import: ``import wargame_odds as wo``.

``wo.epic``, ``wo.gdb``, ``wo.t9a`` (``load → simulate → result.table() / .plot() / .to_json()``),
``wo.matrix / sweep / threshold / compare / rank / cumulative`` (decisions), ``wo.reports`` (batch reports) and
``wo.examples()`` (the shipped scenarios, decisions and reports by name:
``wo.epic.load("epic/assault_marines_vs_warband")``).

Installed, this package holds the whole project: ``wargame_odds.analysis`` (the Python domain) and
``wargame_odds.kernels`` (the Numba kernels), mapped from the repository's top-level ``analysis/`` and ``kernels/``
folders by ``[tool.setuptools] package-dir`` in ``pyproject.toml``.  In a checkout those folders sit beside this
one, so this module adds the checkout's root to its own ``__path__`` (the package search path that the import
system documents for this, like :func:`pkgutil.extend_path`): ``wargame_odds.analysis`` is then found in the
checkout without an install, and a folder named ``analysis`` or ``kernels`` in the current directory is never
imported in its place.
"""
from __future__ import annotations

import importlib
from pathlib import Path

_CHECKOUT = Path(__file__).resolve().parent.parent
if not (Path(__file__).resolve().parent / "analysis").is_dir() and all(
        (_CHECKOUT / folder / "__init__.py").is_file() for folder in ("analysis", "kernels")):
    __path__.append(str(_CHECKOUT))  # noqa: F821 - a package's __path__, set by the import system

from . import analysis  # noqa: E402 - after __path__ is complete (and analysis sets Numba's cache folder)

#: What ``wo.NAME`` gives: the rule systems and decisions (loaded on first use, as in ``analysis``) and these.
_MODULES = {"decisions": "wargame_odds.analysis.decisions", "reports": "wargame_odds.analysis.reports",
            "labels": "wargame_odds.analysis.output.labels", "systems": "wargame_odds.analysis.intake.systems"}


def examples():
    """The shipped scenarios, decisions and report definitions: (name, kind, title, command) each; any of these
    names works wherever a file is read (``wo.epic.load("epic/assault_marines_vs_warband")``)."""
    from .analysis.intake.examples import examples as shipped

    return list(shipped())


def app(query: dict[str, str] | None = None):
    """The point-and-click app in a notebook cell, as ``wargame-odds app`` serves it (needs the ``[app]`` extra;
    docs/app.md); ``query`` as a page address says it: ``{"example": "epic/assault_marines_vs_warband"}``."""
    from .analysis.app import app as page
    from .analysis.intake.errors import ArgumentError

    if query is not None and not (isinstance(query, dict) and len(query) <= 16 and all(
            isinstance(k, str) and isinstance(v, str) and len(k) <= 64 and len(v) <= 1024 for k, v in query.items())):
        raise ArgumentError("query", query, "None or a page address's query as a dict of texts, "
                                            'e.g. {"example": "epic/assault_marines_vs_warband"}')
    return page(query)


def __getattr__(name: str):
    if name in _MODULES:
        return importlib.import_module(_MODULES[name])
    if name in analysis.SYSTEMS or name in analysis.DECISIONS:
        return getattr(analysis, name)
    raise AttributeError(f"module 'wargame_odds' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_MODULES, *analysis.SYSTEMS, *analysis.DECISIONS])


__all__ = ["examples", "app", *analysis.SYSTEMS, *analysis.DECISIONS, *_MODULES]
