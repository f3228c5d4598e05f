"""wargame-odds: Monte Carlo outcome analysis for tabletop wargames.

Every rule system (registered in :mod:`wargame_odds.analysis.intake.systems`, each implementing its ``System`` protocol
once) offers the same path: ``analysis.<system>.load(path)`` (or ``.loads(toml_text)``) →
``analysis.<system>.simulate(scenario, trials=..., seed=...)`` → ``result.table() / .plot() / .to_json()``.  Systems:
``epic`` (Epic Armageddon), ``gdb`` (General de Brigade), ``t9a`` (The 9th Age).  ``wargame_odds.analysis.matrix / sweep
/ threshold / compare / rank / cumulative`` turn simulations into decisions (``wargame_odds.analysis.decisions``).
Submodules load on first use, so that ``import wargame_odds.analysis`` and ``wargame-odds --help`` stay fast.
"""
import importlib

from .. import kernels

kernels.use_one_cache_dir()  # every entry point imports analysis first: Numba's one cache folder

from .intake import systems  # noqa: E402 -- after the cache folder is set (the registry itself imports nothing heavy)

SYSTEMS = systems.names()  # the systems this package ships (wargame_odds.analysis.intake.systems registers them)
DECISIONS = ("matrix", "sweep", "threshold", "compare", "rank", "cumulative", "list_search", "enumerate_detachments")


def __getattr__(name):
    if name in systems.names():
        return systems.package(name)
    if name in DECISIONS:
        return getattr(importlib.import_module("wargame_odds.analysis.decisions"), name)
    raise AttributeError(f"module 'wargame_odds.analysis' has no attribute {name!r}")
