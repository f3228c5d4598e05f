"""Compile (or load from the cache) every kernel the README's commands use, so that none of them
compiles on first use: `make demo` runs this before the demo report.

The Epic kernel is compiled once per number of 64-unit mask words a side needs: this warms scenarios
with up to 64 and up to 128 units a side; the GdB and T9A kernels once each.  Each cold compile
prints its one-line notice; a warm cache makes this take a few seconds.
"""
from importlib import resources

import analysis

SHIPPED = resources.files("analysis") / "scenarios"
EPIC_WORDS = (1, 2)  # mask words of 64 units a side


def main() -> int:
    epic = analysis.epic.load(str(SHIPPED / "epic" / "assault_marines_vs_warband.toml"))
    for words in EPIC_WORDS:  # the first group of the first formation grows to (words - 1) * 64 + 1 units
        count = max(epic.formations[0].units[0].count, (words - 1) * 64 + 1)
        analysis.epic.simulate(epic.replace("formations[0].units[0].count", count), trials=1000, progress=False)
    analysis.gdb.simulate(analysis.gdb.load(str(SHIPPED / "gdb" / "column_vs_line.toml")), trials=1000, progress=False)
    analysis.t9a.simulate(analysis.t9a.load(str(SHIPPED / "t9a" / "single_charge_9in.toml")), trials=1000,
                          progress=False)
    print("kernels ready: Epic (up to 64 and 128 units a side), General de Brigade, The 9th Age")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
