"""Helpers for the hostile-input tests: run the CLI in-process and check the one-line promise."""
from pathlib import Path

from click.testing import CliRunner

from analysis.cli import main

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
