"""User text as data on the page: escaped HTML, control and bidi characters shown as escapes, no math markup."""
from __future__ import annotations

import html

from ..intake.user_text import printable


def visible(text: str) -> str:
    """``text`` with every control and bidi character written as an escape (``\\x07``, ``\\u202e``): the option
    text of a choice, which the browser shows as it is."""
    return printable(text, keep_lines=False)


def safe_html(text: str) -> str:
    """HTML showing ``text`` as it is: markup escaped, control and bidi characters visible, and ``$`` and ``\\``
    as entities, so that no math typesetting reads a name as a formula."""
    return html.escape(visible(text)).replace("$", "&#36;").replace("\\", "&#92;")


def safe_markup(markup: str) -> str:
    """HTML that the program made from escaped user text (``_repr_html_``): control and bidi characters
    visible, ``$`` and ``\\`` as entities."""
    return printable(markup, keep_lines=True).replace("$", "&#36;").replace("\\", "&#92;")
