"""Issue 40 §2: a shipped-example name the file system refuses (longer than a file name may be) is "no shipped
example" everywhere a name is read: one line, exit 2, no traceback, no install path."""
import pytest
from click.testing import CliRunner

from wargame_odds.analysis.cli import main
from wargame_odds.analysis.intake.examples import MAX_NAME_CHARS, locate, shipped_path

LONG_PART = "epic/" + "a" * 300  # one part longer than a file name (255 bytes)
HUGE = "epic/" + "a" * 10_000


@pytest.mark.parametrize("name", [LONG_PART, HUGE, "epic/" + "a/" * 3000 + "x", "a" * (MAX_NAME_CHARS + 1)])
def test_a_name_the_file_system_refuses_is_no_shipped_example(name):
    assert shipped_path(name) is None
    assert locate(name) == name


#: every command that reads a shipped name, and the arguments it needs after the name
COMMANDS = {"epic": [], "gdb": [], "t9a": [], "matrix": [], "compare": [], "rank": [], "report": [], "list-search": [],
            "sweep": ["formations[Warband].blast_markers", "0", "1"],
            "threshold": ["formations[Warband].blast_markers", "--values", "0:2", "--at-least", "50"]}


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("name", [LONG_PART, HUGE])
def test_every_command_says_one_line_for_a_name_too_long(command, name):
    result = CliRunner().invoke(main, [command, name, *COMMANDS[command]])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "scenarios" not in result.stderr  # the install path stays out of the message
