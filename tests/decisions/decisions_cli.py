"""The command line as the decision tests drive it (shared by test_cli.py and test_list_search.py)."""
from click.testing import CliRunner

from wargame_odds.analysis.cli import main


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_error_line(result, *needles):
    """A user mistake: exit 2 and one line "error: …" holding every needle."""
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    for needle in needles:
        assert needle in lines[0], lines[0]
