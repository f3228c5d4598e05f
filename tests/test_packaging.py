"""Issue 38 §4: the install is one top-level package, ``wargame_odds``; §5: the report definitions of the top-level
``reports/`` ship with it, where the shipped names are read.

The packaging is ``pyproject.toml``'s ``[tool.setuptools]``: ``packages`` lists each package and ``package-dir`` maps
the repository's folders into ``wargame_odds``.  A sub-package folder missing from the list would be left out of the
wheel (setuptools only warns), so the list is checked against the folders here.
"""
from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def _folder(package: str) -> Path:
    """The folder ``package-dir`` maps a package to (the longest mapped prefix wins, as in setuptools)."""
    mapping = SETUPTOOLS["package-dir"]
    for prefix in sorted(mapping, key=len, reverse=True):
        if package == prefix or package.startswith(prefix + "."):
            return ROOT / mapping[prefix] / package[len(prefix):].lstrip(".").replace(".", "/")
    return ROOT / package.replace(".", "/")


def test_every_package_is_under_the_one_installed_name():
    assert {p.split(".")[0] for p in SETUPTOOLS["packages"]} == {"wargame_odds"}
    assert SETUPTOOLS["package-dir"]["wargame_odds.analysis"] == "analysis"
    assert SETUPTOOLS["package-dir"]["wargame_odds.kernels"] == "kernels"


def test_the_package_list_names_every_folder_with_an_init():
    """Every folder of analysis/ and kernels/ with an ``__init__.py`` is listed, and every listed one exists."""
    found = {"wargame_odds"}
    for package, folder in (("wargame_odds.analysis", "analysis"), ("wargame_odds.kernels", "kernels")):
        for init in (ROOT / folder).rglob("__init__.py"):
            parts = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((package, *parts)))
    listed = set(SETUPTOOLS["packages"])
    data_only = {p for p in listed if not (_folder(p) / "__init__.py").is_file()}
    assert listed - data_only == found
    # every data folder inside analysis/ (no __init__.py) is listed too: setuptools warns about each one that is not,
    # a wall of warnings at every install (`make demo`)
    data_folders = {".".join(("wargame_odds.analysis", *d.relative_to(ROOT / "analysis").parts))
                    for d in (ROOT / "analysis").rglob("*")
                    if d.is_dir() and d.name != "__pycache__" and not (d / "__init__.py").is_file()}
    assert data_only == data_folders | {"wargame_odds.analysis.scenarios.reports"}


def test_the_report_definitions_ship_where_the_shipped_names_are_read():
    """§5: ``reports/*.toml`` installed in the package's analysis folder as ``scenarios/reports/*.toml``, the
    shipped names ``reports/NAME`` (``reports/demo``)."""
    assert _folder("wargame_odds.analysis.scenarios.reports") == ROOT / "reports"
    assert SETUPTOOLS["package-data"]["wargame_odds.analysis.scenarios.reports"] == ["*.toml"]
    assert (ROOT / "reports" / "demo.toml").is_file()
    assert not (ROOT / "analysis" / "scenarios").joinpath("reports").exists()  # one copy in git
