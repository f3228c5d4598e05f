"""Set-up that does only what it says (issue 28 §6): `make test` installs Python packages only, Dask and pyarrow
are extras, and a command that needs a missing extra says which one in one line (exit 2)."""
import re
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from wargame_odds.analysis.cli import main
from wargame_odds.analysis.intake.errors import UserError
from wargame_odds.analysis.intake.extras import require

ROOT = Path(__file__).resolve().parents[1]


def _recipes(makefile: str) -> dict[str, str]:
    """Each Makefile target's recipe lines, joined."""
    recipes, target = {}, None
    for line in makefile.splitlines():
        if line.startswith("\t") and target:
            recipes[target] += line + "\n"
        elif re.match(r"^[^\s#=]+:", line) and ":=" not in line:
            target = line.split(":")[0]
            recipes[target] = ""
    return recipes


def test_make_test_and_make_demo_install_python_packages_only():
    recipes = _recipes((ROOT / "Makefile").read_text(encoding="utf-8"))
    for target in ("test", "demo", "$(VENV)/.installed", "$(VENV)/.installed-test", "$(BIN)/python"):
        assert not re.search(r"\b(sudo|apt-get|apt|brew|install-chromium)\b", recipes[target]), target
    assert "open reports/out/demo/index.html" in recipes["demo"].splitlines()[-1]  # ends saying how to open it
    ci = [line for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    assert ci.index("sh scripts/install-chromium.sh") < ci.index("make test")  # the browser before the suite


def test_dask_and_pyarrow_are_extras_the_make_targets_install():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    base = " ".join(project["dependencies"])
    assert "dask" not in base and "pyarrow" not in base
    for needed in ("numpy", "numba", "pandas", "scipy", "matplotlib"):
        assert needed in base
    extras = project["optional-dependencies"]
    assert any("dask" in d for d in extras["dask"]) and any("pyarrow" in d for d in extras["parquet"])
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "-e '.[parquet]'" in makefile and "-e '.[test,dask,parquet]'" in makefile


@pytest.mark.parametrize("extra, module", [("dask", "distributed"), ("parquet", "pyarrow")])
def test_a_missing_extra_is_one_line_naming_it(extra, module, monkeypatch):
    monkeypatch.setitem(sys.modules, module, None)  # import fails as if it were not installed
    with pytest.raises(UserError, match=rf"install the {extra} extra: pip install 'wargame-odds\[{extra}\]'"):
        require(extra, "here")


def test_report_without_dask_exits_2_before_anything_runs(tmp_path, monkeypatch):
    """(A report without pyarrow writes its CSV tables and page: tests/reports/test_report_folders.py.)"""
    definition = tmp_path / "r.toml"
    definition.write_text('title = "t"\n[[cells]]\nkind = "scenario"\nname = "a"\nscenario = "t9a/three_chargers"\n',
                          encoding="utf-8")
    monkeypatch.setitem(sys.modules, "distributed", None)
    result = CliRunner().invoke(main, ["report", str(definition), "--workers", "2"])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "pip install 'wargame-odds[dask]'" in result.stderr
    assert not (tmp_path / "out").exists()


def test_make_demo_installs_the_package_then_its_extras_requirements_beside_the_compile(tmp_path):
    """`make demo`: the package with its core dependencies, then the parquet and app extras' requirements (read from
    pyproject.toml, a self-reference resolved, each once) while the kernels compile; the package is not installed
    again meanwhile."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from extra_requirements import extra_requirements
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert extra_requirements(["parquet", "app"]) == extras["parquet"] + extras["app"]
    assert set(extra_requirements(["test"])) == set(extras["test"]) - {"wargame-odds[app]"} | set(extras["app"])
    toy = tmp_path / "pyproject.toml"
    toy.write_text('[project]\nname = "toy"\n[project.optional-dependencies]\na = ["x>=1", "toy[b, c]"]\n'
                   'b = ["y", "toy[a]"]\nc = ["x>=1", "z<2"]\n', encoding="utf-8")
    assert extra_requirements(["a"], toy) == ["x>=1", "y", "z<2"]
    with pytest.raises(SystemExit, match="no extra 'd' .*a, b, c"):
        extra_requirements(["d"], toy)
    recipes = _recipes((ROOT / "Makefile").read_text(encoding="utf-8"))
    assert "$(PIP_INSTALL) -e .\n" in recipes["$(VENV)/.installed-core"]
    app = recipes["$(VENV)/.installed-app"]
    assert "extra_requirements.py parquet app" in app and "-e" not in app.replace("-r", "")
    demo = recipes["demo"]
    assert demo.index("$(VENV)/.installed-app &") < demo.index("warm_kernels.py") < demo.index("wait $$extras") \
        < demo.index("report reports/demo")
