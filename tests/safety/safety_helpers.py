"""Helpers for the hostile-input tests: run the CLI in-process and check the one-line promise."""
from pathlib import Path

from click.testing import CliRunner

from wargame_odds.analysis.cli import main

SCENARIOS = Path(__file__).resolve().parents[2] / "analysis" / "scenarios"


def run_cli(*args):
    """(exit code, stdout, stderr) of ``wargame-odds ARGS`` run in this process."""
    result = CliRunner().invoke(main, [str(a) for a in args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def assert_one_line_error(code, stderr, *words):
    """Exit 2, one line on stderr (no traceback) holding every word."""
    assert code == 2, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    for word in words:
        assert word in lines[0], (word, lines[0])


def tree(root: Path, skip: Path | None = None) -> dict[str, tuple]:
    """Every file, link and folder under ``root`` (except ``skip`` and what it holds) and what it holds:
    compared before and after a run, it shows anything created, changed or deleted."""
    out = {}
    for path in sorted(root.rglob("*")):
        if skip is not None and (path == skip or skip in path.parents):
            continue
        if path.is_symlink():
            out[str(path)] = ("link", str(path.readlink()))
        elif path.is_file():
            out[str(path)] = ("file", path.read_bytes())
        else:
            out[str(path)] = ("folder", None)
    return out


def toml_paths(node, prefix=()):
    """Every (path, value) in parsed TOML, depth first."""
    items = node.items() if isinstance(node, dict) else enumerate(node)
    for key, value in items:
        yield prefix + (key,), value
        if isinstance(value, (dict, list)):
            yield from toml_paths(value, prefix + (key,))


def toml_parent(data, path):
    """The table or array that holds the value at ``path``."""
    for key in path[:-1]:
        data = data[key]
    return data
