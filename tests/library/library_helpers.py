"""Helpers shared by the library tests."""


def one_error_line(result, *needles):
    """A user mistake: exit status 2, one ``error:`` line holding every needle, no traceback."""
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert "Traceback" not in result.output
    for needle in needles:
        assert needle in lines[0], lines[0]
