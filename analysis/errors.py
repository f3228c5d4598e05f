"""User-facing errors: one clear line naming the file, the field and what is allowed."""


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
        super().__init__(" ".join(text.split()))


class ArgumentError(ValueError):
    """A bad argument of the Python API (``trials=2.9``): names the argument and what is allowed."""

    def __init__(self, name: str, value, allowed: str):
        self.name = name
        self.allowed = allowed
        shown = repr(value)
        super().__init__(f"{name} must be {allowed}, got {shown if len(shown) <= 60 else shown[:57] + '...'}")
