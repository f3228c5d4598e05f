"""The point-and-click app: pick formations, set up a fight, a turn or a charge, run it and read the odds.

``wargame-odds app`` serves it on 127.0.0.1 (:func:`serve`); in a notebook :func:`app` shows the same page
inline.  Built on Panel (docs/app.md says why); it needs the ``[app]`` extra
(``pip install 'wargame-odds[app]'``).  Every script and style it uses is served by the app itself.
"""
from __future__ import annotations

import socket
import sys

EXTRA_HINT = "pip install 'wargame-odds[app]'"


def missing_extra() -> str | None:
    """The module of the ``[app]`` extra that cannot be imported, or None when the app can run."""
    import importlib.util

    for module in ("panel", "tomli_w"):
        if importlib.util.find_spec(module) is None:
            return module
    return None


def app(query: dict[str, str] | None = None):
    """The app as a Panel object for a notebook cell (its scripts inline: no network needed).  ``query``: what
    a page address would say, e.g. ``{"example": "epic/assault_marines_vs_warband", "run": "1"}``."""
    import panel as pn

    from .page import Page

    pn.extension(inline=True)
    return Page(query or {}, in_notebook=True).layout


def free_port(host: str) -> int:
    """A port that is free on ``host`` now."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def make_server(host: str = "127.0.0.1", port: int = 0):
    """The app's server on ``host:port`` (0: a free port), not started: every session gets its own
    :class:`~.page.Page`, built from the query of its address."""
    import panel as pn

    from .page import Page

    port = port or free_port(host)

    def session():
        args = {key: values[0].decode("utf-8", "replace") for key, values in (pn.state.session_args or {}).items()
                if values and key in QUERY_KEYS}
        return Page(args).layout

    origins = [f"{host}:{port}"] + ([f"localhost:{port}"] if host in ("127.0.0.1", "::1") else [])
    return pn.serve({"/": session}, address=host, port=port, show=False, start=False, title="wargame-odds",
                    websocket_origin=origins, verbose=False)


#: The page address's keys (others are ignored).
QUERY_KEYS = ("example", "tab", "setup", "a", "b", "labels", "side", "trials", "seed", "precision", "run")


def serve(host: str = "127.0.0.1", port: int = 0, open_browser: bool = True) -> None:
    """Serve the app until interrupted, printing its address (and opening it in a browser)."""
    server = make_server(host, port)
    url = f"http://{'[' + host + ']' if ':' in host else host}:{server.port}/"
    print(f"wargame-odds app: {url}  (Ctrl+C stops it)", flush=True)
    server.start()
    if open_browser:
        import webbrowser

        server.io_loop.add_callback(webbrowser.open, url)
    try:
        server.io_loop.start()
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    finally:
        server.stop()
