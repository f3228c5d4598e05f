"""Compile (or load from the cache) every kernel the README's commands use, so that none of them
compiles on first use: `make demo` runs this before the demo report.

The Epic kernel's block function is compiled twice, once for assaults (without the turn code) and once
for turns; each serves every scenario of its kind (the units a side are a runtime value).  The GdB and T9A
kernels (the T9A charge and its close combat) are compiled once each.  Each cold compile prints its one-line
notice; a warm cache makes this take a few seconds.
"""
from importlib import resources

from wargame_odds import analysis

SHIPPED = resources.files("wargame_odds.analysis") / "scenarios"


def main() -> int:
    analysis.epic.simulate(analysis.epic.load(str(SHIPPED / "epic" / "assault_marines_vs_warband.toml")), trials=1000,
                           progress=False)
    turn = SHIPPED / "epic" / "turns" / "devastators_then_assault_marines.toml"
    analysis.epic.simulate(analysis.epic.load(str(turn)), trials=1000, progress=False)
    analysis.gdb.simulate(analysis.gdb.load(str(SHIPPED / "gdb" / "column_vs_line.toml")), trials=1000, progress=False)
    analysis.t9a.simulate(analysis.t9a.load(str(SHIPPED / "t9a" / "single_charge_9in.toml")), trials=1000,
                          progress=False)
    analysis.t9a.simulate(analysis.t9a.load(str(SHIPPED / "t9a" / "knights_charge_spear_block.toml")), trials=1000,
                          progress=False)
    print("kernels ready: Epic (assaults and turns), General de Brigade, The 9th Age (charges and close combat)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
