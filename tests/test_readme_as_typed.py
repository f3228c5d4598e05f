"""Issue 41 §1: every command of the README works exactly as typed, in a fresh shell that has done only what the
README's own set-up lines say (`make demo` or `make test`, then `source .venv/bin/activate`), in a folder laid out
like the clone; and where the README shows what a command prints, the command prints it.

The set-up lines themselves (`make …`, `python3 -m venv …`, `pip install …`) are what `make test` did before the
suite started, so they are not run again; every other line of a bash block, and the Python block, is."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
SETUP = re.compile(r"^(make |python3 -m venv |pip install |source \.venv/bin/activate)")
ACTIVATE = "source .venv/bin/activate"
#: what a README command may write into the folder it is typed in, and must write
WRITES = {"--plot compare.png": "compare.png", "--plot rank.png": "rank.png", "> my_tables.toml": "my_tables.toml",
          "report reports/demo": "reports/out/demo/index.html"}


def _blocks() -> list[tuple[str, str]]:
    return BLOCK.findall(README.read_text(encoding="utf-8"))


def _lines(body: str) -> list[str]:
    """The logical lines of a shell block: continuations joined, comments and blank lines kept out."""
    return [line.strip() for line in body.replace("\\\n", " ").splitlines()
            if line.strip() and not line.strip().startswith("#")]


def commands() -> list[tuple[str, str]]:
    """(command line, what the README shows it printing, or "") for every command the README asks a reader to type
    after its set-up lines, in order; the Python block as one command run by `python -`."""
    found, blocks = [], _blocks()
    for i, (lang, body) in enumerate(blocks):
        shown = blocks[i + 1][1] if i + 1 < len(blocks) and blocks[i + 1][0] == "" else ""
        if lang == "bash":
            lines = [line for line in _lines(body) if not SETUP.match(line)]
            found += [(line, shown if len(lines) == 1 else "") for line in lines]
        elif lang == "python":
            found.append((f"python - <<'EOF'\n{body}EOF", ""))
    return found


def test_the_readme_says_how_to_set_up_the_shell():
    """The set-up block names `make demo` and then the activation every later command relies on."""
    setup = _lines(_blocks()[0][1])
    assert setup[0].startswith("make demo") and any(line.startswith(ACTIVATE) for line in setup[1:])
    assert len(commands()) >= 12


#: The package's folders: the clone links them to the checkout's (see :func:`clone`).
PACKAGE_FOLDERS = ("wargame_odds", "analysis", "kernels")


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """A folder laid out like a fresh clone after the README's set-up: the checkout's files (no generated output)
    and `.venv` (the environment this suite runs in, which `make test` made).  The package's folders are links to
    the checkout's: `make test` compiled that code's kernels into the cache, as `make demo` does a clone's, and
    Numba keys its cache on the source file's path, so a copy would compile the Epic kernel again (about a minute
    of the Python block's run) where a reader's clone loads it."""
    folder = tmp_path_factory.mktemp("clone")
    generated = shutil.ignore_patterns(".git", ".venv", "out", "__pycache__", ".pytest_cache", "*.egg-info")

    def ignore(where: str, names: list[str]) -> set[str]:
        linked = PACKAGE_FOLDERS if Path(where) == ROOT else ()
        return set(generated(where, names)) | {name for name in names if name in linked}

    shutil.copytree(ROOT, folder, dirs_exist_ok=True, symlinks=True, ignore=ignore)
    for name in (".venv", *PACKAGE_FOLDERS):
        (folder / name).symlink_to(Path(sys.prefix) if name == ".venv" else ROOT / name, target_is_directory=True)
    return folder


def _fresh_shell(folder: Path, line: str) -> subprocess.CompletedProcess:
    """`line` typed in a new terminal in ``folder`` after `source .venv/bin/activate`: a login-free bash whose
    environment holds only what a terminal has (no variables of this test run, no PATH to this Python)."""
    env = {"HOME": str(folder.parent / "home"), "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
           "TERM": "dumb"}
    if os.environ.get("NUMBA_CACHE_DIR"):  # a reader who set it has it in every shell
        env["NUMBA_CACHE_DIR"] = os.environ["NUMBA_CACHE_DIR"]
    Path(env["HOME"]).mkdir(exist_ok=True)
    return subprocess.run(["bash", "--noprofile", "--norc", "-c", f"set -e\n{ACTIVATE}\n{line}\n"], cwd=folder,
                          env=env, capture_output=True, text=True, timeout=600)


def _shown_lines(shown: str) -> list[str]:
    """The lines a README output block shows, each cut at its "…" (the README elides the rest)."""
    return [line.split("…")[0].rstrip() for line in shown.splitlines() if line.split("…")[0].strip()]


@pytest.mark.parametrize("line, shown", commands(), ids=[c[0].split("\n")[0][:60] for c in commands()])
def test_each_readme_command_works_as_typed(clone, line, shown):
    done = _fresh_shell(clone, line)
    assert done.returncode == 0, f"{line}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    printed = done.stdout.splitlines()
    for want in _shown_lines(shown):
        assert any(got.startswith(want) for got in printed), f"{line}: the README shows {want!r}; it printed\n" \
                                                             f"{done.stdout[:3000]}"
    for typed, written in WRITES.items():
        if typed in line:
            assert (clone / written).is_file() and (clone / written).stat().st_size > 0, written


def test_a_command_that_fails_fails_the_check(clone):
    """The fresh shell reports a command that does not work (so the test above can fail)."""
    assert _fresh_shell(clone, "wargame-odds epic epic/no_such_example").returncode != 0
    no_test_variables = "python -c 'import os; assert \"PYTEST_CURRENT_TEST\" not in os.environ'"
    assert _fresh_shell(clone, no_test_variables).returncode == 0


def test_the_clone_runs_the_kernels_the_cache_holds(clone):
    """Python in the clone imports the checkout's kernel files, the ones whose compiled code the cache holds (and
    the clone's own files are the checkout's, not stale copies)."""
    where = "python -c 'import wargame_odds.kernels as k; print(k.__file__)'"
    done = _fresh_shell(clone, where)
    assert done.returncode == 0, done.stderr[-2000:]
    assert Path(done.stdout.strip()) == ROOT / "kernels" / "__init__.py"
