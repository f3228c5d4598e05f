"""User-facing errors: one clear line naming the file, the field and what is allowed."""
from .user_text import MAX_MESSAGE_CHARS, elide, printable


def one_line(text: str) -> str:
    """A message as one line: whitespace runs as one space, control and bidi characters escaped, at most
    :data:`~wargame_odds.analysis.intake.user_text.MAX_MESSAGE_CHARS` characters."""
    return printable(elide(" ".join(text.split()), MAX_MESSAGE_CHARS), keep_lines=False)


class UserError(Exception):
    """A mistake in the user's input.  The CLI prints ``str(error)`` on one line and exits 2."""

    def __init__(self, source: str, field: str | None, problem: str, allowed: str | None = None):
        self.source = source
        self.field = field
        self.problem = problem
        self.allowed = allowed
        parts = [source]
        if field:
            parts.append(f"field '{field}'")
        text = ": ".join(parts) + f": {problem}"
        if allowed:
            text += f" (allowed: {allowed})"
        super().__init__(one_line(text))


class ArgumentError(ValueError):
    """A bad argument of the Python API (``trials=2.9``): names the argument and what is allowed."""

    def __init__(self, name: str, value, allowed: str):
        self.name = name
        self.allowed = allowed
        shown = repr(value)
        super().__init__(one_line(f"{name} must be {allowed}, got {elide(shown)}"))
