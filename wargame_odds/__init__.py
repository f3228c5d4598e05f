"""wargame-odds, the public import: ``import wargame_odds as wo``.

``wo.epic``, ``wo.gdb``, ``wo.t9a`` (``load → simulate → result.table() / .plot() / .to_json()``),
``wo.matrix / sweep / threshold / compare / rank / cumulative`` (decisions), ``wo.reports`` (batch reports) and
``wo.examples()`` (the shipped scenarios, decisions and reports by name:
``wo.epic.load("epic/assault_marines_vs_warband")``).

The code lives in the top-level packages ``analysis`` and ``kernels`` installed beside this one.  Those names are
common: a notebook project often has an ``analysis/`` folder of its own, and Python imports a folder in the
current directory before an installed package.  This module therefore imports the installed ``analysis`` and
``kernels`` from the folder it sits in, whatever the current directory holds, so ``import wargame_odds`` always
gets this project's code.  (One Python process cannot hold two modules named ``analysis``: after
``import wargame_odds``, the name ``analysis`` is this project's.)
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_HOME = Path(__file__).resolve().parent.parent  # the folder (site-packages, or a checkout) holding our packages


def _own(name: str):
    """This project's top-level package ``name``, imported from :data:`_HOME` (never from the current folder)."""
    folder = _HOME / name
    loaded = sys.modules.get(name)
    if loaded is not None:
        origin = getattr(loaded, "__file__", None)
        if origin is not None and Path(origin).resolve().parent == folder:
            return loaded
        where = origin or ", ".join(getattr(loaded, "__path__", [])) or "elsewhere"
        raise ImportError(f"wargame_odds needs the module name {name!r} for its own package, but another {name!r} "
                          f"is already imported (from {where}); import wargame_odds before it, in a process "
                          f"that does not need both")
    spec = importlib.util.spec_from_file_location(name, folder / "__init__.py",
                                                  submodule_search_locations=[str(folder)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


_own("kernels")  # first: analysis imports it (and sets Numba's cache folder, wargame_odds.kernels.use_one_cache_dir)
analysis = _own("analysis")

#: What ``wo.NAME`` gives: the rule systems and decisions (loaded on first use, as in ``analysis``) and these.
_MODULES = {"decisions": "wargame_odds.analysis.decisions", "reports": "wargame_odds.analysis.reports", "labels": "wargame_odds.analysis.labels"}


def examples():
    """The shipped scenarios, decisions and report definitions: (name, kind, title, command) each; any of these
    names works wherever a file is read (``wo.epic.load("epic/assault_marines_vs_warband")``)."""
    from .analysis.examples import examples as shipped

    return list(shipped())


def app(query: dict[str, str] | None = None):
    """The point-and-click app in a notebook cell, as ``wargame-odds app`` serves it (needs the ``[app]`` extra;
    docs/app.md); ``query`` as a page address says it: ``{"example": "epic/assault_marines_vs_warband"}``."""
    from .analysis.app import app as page
    from .analysis.errors import ArgumentError

    if query is not None and not (isinstance(query, dict) and len(query) <= 16 and all(
            isinstance(k, str) and isinstance(v, str) and len(k) <= 64 and len(v) <= 1024 for k, v in query.items())):
        raise ArgumentError("query", query, "None or a page address's query as a dict of texts, "
                                            'e.g. {"example": "epic/assault_marines_vs_warband"}')
    return page(query)


def __getattr__(name: str):
    if name in _MODULES:
        return importlib.import_module(_MODULES[name])
    if name in wargame_odds.analysis.SYSTEMS or name in wargame_odds.analysis.DECISIONS:
        return getattr(analysis, name)
    raise AttributeError(f"module 'wargame_odds' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_MODULES, *wargame_odds.analysis.SYSTEMS, *wargame_odds.analysis.DECISIONS])


__all__ = ["examples", "app", *wargame_odds.analysis.SYSTEMS, *wargame_odds.analysis.DECISIONS, *_MODULES]
