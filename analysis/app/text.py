"""User text as data on the page: escaped HTML, control characters shown as escapes, no math markup."""
from __future__ import annotations

import html
import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def visible(text: str) -> str:
    """``text`` with every control character written as an escape (``\\x07``)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256 else f"\\u{ord(m.group()):04x}",
                        str(text))


def safe_html(text: str) -> str:
    """HTML showing ``text`` as it is: markup escaped, control characters visible, and ``$`` and ``\\``
    as entities, so that no math typesetting reads a name as a formula."""
    return html.escape(visible(text)).replace("$", "&#36;").replace("\\", "&#92;")


def safe_markup(markup: str) -> str:
    """HTML that the program made from escaped user text (``_repr_html_``): control characters visible, ``$``
    and ``\\`` as entities."""
    return visible(markup).replace("$", "&#36;").replace("\\", "&#92;")
