"""Issue 41 §4: a long run typed in a terminal shows the progress bar the docs promise on stderr (docs/decisions.md,
docs/limits.md), also in a pseudo-terminal that reports no size; a run whose stderr is not a terminal shows none.

The run asks for 10¹⁰ trials, far more than the test waits for: the test reads the terminal until the bar's rate
("trial/s") appears, then stops the run, so it passes at any load (the bar shows once a run has taken 2 s)."""
from __future__ import annotations

import fcntl
import os
import pty
import select
import shutil
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

WARGAME_ODDS = shutil.which("wargame-odds", path=str(Path(sys.executable).parent))
LONG_RUN = [WARGAME_ODDS, "epic", "epic/assault_marines_vs_warband", "--trials", "10000000000", "--threads", "1"]
BAR = b"trial/s"


def _terminal_stderr(command: list[str], columns: int, wait_s: float = 300) -> bytes:
    """What ``command`` writes to a pseudo-terminal ``columns`` wide (0: no size set) on its stderr, read until the
    bar's rate shows or the command ends (``wait_s`` bounds a broken run only); the command is then stopped."""
    master, slave = pty.openpty()
    if columns:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    run = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    seen, deadline = b"", time.monotonic() + wait_s
    try:
        while BAR not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the command ended and closed the terminal
                    break
                if not chunk:
                    break
                seen += chunk
            elif run.poll() is not None:
                break
    finally:
        run.kill()
        run.wait()
        os.close(master)
    return seen


@pytest.mark.skipif(WARGAME_ODDS is None, reason="the wargame-odds command is not installed beside this Python")
@pytest.mark.parametrize("columns", [80, 0], ids=["80 columns", "a terminal with no size"])
def test_a_long_run_in_a_terminal_shows_a_progress_bar(columns):
    seen = _terminal_stderr(LONG_RUN, columns)
    assert BAR in seen, seen[-500:]
    assert b"Traceback" not in seen


def test_a_run_whose_stderr_is_a_file_shows_no_bar(tmp_path):
    done = subprocess.run([*LONG_RUN[:3], "--trials", "8192"], capture_output=True, check=True)
    assert BAR.decode() not in done.stderr.decode()
