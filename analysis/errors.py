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
