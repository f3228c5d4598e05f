"""General de Brigade's headline: contact or stopped, who gives way, retreats and routs (docs/gdb.md §2.4), from
its result's ``to_dict()``."""
from __future__ import annotations

from ..output.headline import mean_text, chance


def gdb_parties(title: str) -> tuple[str, str]:
    """Charger and target names from a GdB result title ("TITLE: CHARGER -> TARGET")."""
    _, _, pair = title.rpartition(": ")
    charger, arrow, target = pair.partition(" -> ")
    return (charger, target) if arrow else ("the charger", "the target")


def gdb_summary(data: dict) -> list[str]:
    """Contact or stopped (docs/gdb.md §2.4)."""
    return [f"The charge goes in (contact): {chance(data['summary']['contact'])}",
            f"The charge is stopped: {chance(data['summary']['charge_stopped'])}"]


def gdb(data: dict) -> list[str]:
    """General de Brigade charge: contact or stopped, who gives way, retreats, routs."""
    charger, target = gdb_parties(data["title"])
    summary, ends = data["summary"], data["end_state"]
    out = []
    if data.get("tables") == "placeholder":
        out.append("PLACEHOLDER rule tables: these are not General de Brigade's numbers; make yours with "
                   "`wargame-odds gdb-tables template > my_tables.toml`, fill it in from your rulebook, and name it "
                   "in the scenario (tables = \"my_tables.toml\") or load it on the app's GdB tab.")
    out += [f"{charger} charges {target}.", *gdb_summary(data),
            f"{target} gives way: {chance(summary['defender_gives_way'])}"]
    for name, role in ((charger, "charger"), (target, "defender")):
        out += [f"{name} ({role}) retreats: {chance(ends[role]['retreating'])}",
                f"{name} ({role}) routs: {chance(ends[role]['routing'])}"]
    if ends["charger"]["eliminated"]["count"]:
        out.append(f"{charger} (charger) is eliminated: {chance(ends['charger']['eliminated'])}")
    losses = mean_text(data["casualties"]["charger"]["mean"])
    out.append(f"{charger} (charger) loses {losses} casualties on average to the fire")
    return out
