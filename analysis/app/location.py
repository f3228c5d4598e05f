"""The app's address, read by the server (the package's ``__init__``) and by its pages (``page.py``); no Panel here,
so the CLI names the default port without importing it."""
from __future__ import annotations

#: The app's port unless told otherwise: the same address, http://127.0.0.1:8642/, on every machine, so a link one
#: player copies (its setup in the address) opens on a club mate's install too.
DEFAULT_PORT = 8642

#: The page address's keys (others are ignored).
QUERY_KEYS = ("example", "tab", "setup", "a", "b", "labels", "side", "trials", "seed", "precision", "run")


def address_of(host: str, port: int) -> str:
    """The page's address on ``host:port``: ``http://127.0.0.1:8642/``."""
    return f"http://{'[' + host + ']' if ':' in host else host}:{port}/"
