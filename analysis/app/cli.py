"""``wargame-odds app``: the point-and-click app on a local web server."""
from __future__ import annotations

import click

from . import DEFAULT_PORT

LOOPBACK = ("127.0.0.1", "localhost", "::1")


@click.command("app", help="A local web app: pick formations, set up a fight, a turn or a charge, read the odds "
                           "(needs pip install 'wargame-odds[app]').")
@click.option("--port", type=click.IntRange(0, 65535), default=None, show_default=False,
              help=f"Port to listen on (default {DEFAULT_PORT}, the same on every machine, so that copied links open "
                   "for a club mate; the next free one, said in one line, when it is taken; 0: any free port).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; anything but the loopback address lets other machines in.")
@click.option("--no-browser", is_flag=True, help="Print the address without opening a browser.")
@click.pass_context
def app_command(ctx, port, host, no_browser):
    from . import EXTRA_HINT, missing_extra, serve

    missing = missing_extra()
    if missing is not None:
        click.echo(f"error: the app needs the [app] extra ({missing} is not installed): {EXTRA_HINT}", err=True)
        ctx.exit(2)
    if host not in LOOPBACK:
        click.echo(f"warning: listening on {host}, not 127.0.0.1: other machines that reach this one can open the "
                   "app and run simulations on it", err=True)
    try:
        serve(host, port, open_browser=not no_browser)
    except OSError as exc:
        click.echo(f"error: cannot listen on {host}:{DEFAULT_PORT if port is None else port} "
                   f"({exc.strerror or exc})", err=True)
        ctx.exit(2)


cli_commands = [app_command]
