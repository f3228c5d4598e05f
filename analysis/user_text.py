"""User text as data in every output: long values elided in messages."""
from __future__ import annotations

#: The most characters of one user value a message shows (longer values keep their ends around "...").
SHOWN_CHARS = 60


def elide(text: str, limit: int = SHOWN_CHARS) -> str:
    """``text`` cut to at most ``limit`` characters, keeping its start and end around "..."."""
    text = str(text)
    if len(text) <= limit:
        return text
    head = (limit - 3) // 2
    return f"{text[:head]}...{text[len(text) - (limit - 3 - head):]}"
