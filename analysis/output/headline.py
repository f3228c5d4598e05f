"""The plain sentences that lead every answer: who fights whom, who wins, who breaks or routs.

Each function reads a result's ``to_dict()`` (the data ``--json`` prints, also what a report stores
for every point), so the CLI, notebooks and reports say the same thing with the same numbers:
every probability in percent with its 95 % interval, "Warband (defender) is destroyed: 12.3 %
[12.1, 12.5]".
"""
from __future__ import annotations

from .estimates import Probability
from .labels import action_name, number, percent


def sentences(data: dict, table=None) -> list[str]:
    """The headline of one simulated scenario (``Result.to_dict()``; none for an unknown system);
    ``table`` (its ``rows()`` or ``table()``) adds the intervals of an Epic turn's means."""
    make = _BY_SYSTEM.get(data["system"])
    if make is epic:
        return epic(data, table)
    return make(data) if make else []


def summary(data: dict) -> list[str]:
    """The one or two sentences that answer "who wins" (for one point of a sweep or a matrix)."""
    make = _SUMMARY.get(data["system"])
    return make(data) if make else []


def _p(node: dict) -> str:
    return percent(node["p"], *node["ci95"])


def _mean(value) -> str:
    return "n/a" if value is None or value != value else f"{value:.2f}"


def _who(names: list[str], role: str) -> str:
    if len(names) == 1:
        return f"{names[0]} ({role})"
    return f"the {role} ({_and(names)})"


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _roles(data: dict) -> dict[str, str]:
    """Each formation's part in the assault: "engaged", "support", "nearby", or "outside" (a turn's
    formation that takes no part in its assault, docs/epic-turn.md §2), as the JSON's ``role`` says."""
    return {name: f.get("role", "engaged") for name, f in data["formations"].items()}


def _named(data: dict, side: str, role: str) -> list[str]:
    roles, formations = _roles(data), data["formations"]
    return [name for name, f in formations.items() if f["side"] == side and roles[name] == role]


def _epic_sides(data: dict) -> tuple[str, str]:
    """Each side as the formations that fight in the assault (TP 1.12.2): "Warband (defender)"."""
    return tuple(_who(_named(data, side, "engaged"), side) for side in ("attacker", "defender"))


def _supported(data: dict, side: str) -> str:
    support = _named(data, side, "support")
    return f", supported by {_and(support)}," if support else ""


def epic_summary(data: dict) -> list[str]:
    """P(each side wins) (TP 1.12.7); in a turn, of the formations in its assault, and P(no assault)."""
    if data.get("sides") is None:  # a turn without an `engage`: no assault
        return []
    attacker, defender = _epic_sides(data)
    sides = data["sides"]
    out = [f"{_capital(attacker)} wins: {_p(sides['attacker_wins'])}",
           f"{_capital(defender)} wins: {_p(sides['defender_wins'])}"]
    if "no_assault" in sides:
        out.append(f"No assault (the engage activation did not lead to one): {_p(sides['no_assault'])}")
    return out


def epic(data: dict, table=None) -> list[str]:
    """Epic Armageddon assault: the sides, P(each side wins), and per formation P(broken or
    destroyed), P(destroyed), P(broken after the assault / after the end phase) and its mean
    casualties.  A turn (``data["turn"]``) first tells its activations (:func:`epic_turn`), and the
    assault sentences name only the formations that fight in the assault."""
    out = epic_turn(data, table) if "turn" in data else []
    end_fire = withdrawal_fire(data.get("end_phase", {}).get("withdrawal_fire", {}), "End phase: ")
    if data.get("sides") is None:
        return out + end_fire
    formations, sides = data["formations"], data["sides"]
    attacker, defender = _epic_sides(data)
    out.insert(0, epic_verdict(data))
    if "turn" not in data and data.get("engagement"):
        out.insert(1, epic_assumptions(data))
    opening = f"{_capital(attacker)}{_supported(data, 'attacker')} assaults {defender}{_supported(data, 'defender')}"
    out.append(opening.rstrip(",") + ".")
    out += [f"{name} ({formations[name]['side']}) is nearby (within 15 cm, not in the fight)."
            for side in ("attacker", "defender") for name in _named(data, side, "nearby")]
    out += epic_summary(data)
    if sides["no_winner"]["count"]:
        out.append(f"No winner, both sides wiped out: {_p(sides['no_winner'])}")
    if sides["unresolved"]["count"]:
        out.append(f"Unresolved, still tied after {data['rules']['max_rounds']} rounds: {_p(sides['unresolved'])}")
    for name, role in _roles(data).items():
        if role == "outside":  # a turn's formation that only shot: its activation sentence says what it did
            continue
        f = formations[name]
        who = f"{name} ({f['side']})"
        unbroken = [f["unbroken_after_assault"]["count"], f["unbroken_after_end_phase"]["count"]]
        if unbroken == [data["trials"]] * 2:
            out.append(f"{who} is never destroyed or broken in these {data['trials']:,} trials")
            continue
        engines = data.get("war_engines", {}).get(name)
        out += [*_broken_or_destroyed(who, unbroken, data["trials"]),
                f"{who} is destroyed: {_p(f['destroyed'])}",
                f"{who} is broken after the assault: {_p(f['broken_after_assault'])}",
                f"{who} is broken after the end phase: {_p(f['broken_after_end_phase'])}"]
        if engines:
            out.append(_war_engine_losses(who, f, engines))
        if not engines or not engines["every_unit"]:
            out.append(f"{who} loses {_mean(f['casualties_mean'])} units on average")
    return out + end_fire


def epic_verdict(data: dict) -> str:
    """The one line a player acts on (TP 1.12.7, 1.14.1): who wins the assault, and how often each side's engaged
    formations end the turn broken or destroyed. "Verdict: Assault Detachment (attacker) wins 58.0 % [57.9,
    58.1]; after the end phase broken or destroyed: Assault Detachment 41.2 % [...], Warband 50.1 % [...]"."""
    attacker, defender = _epic_sides(data)
    sides, trials = data["sides"], data["trials"]
    wins = (f"{_capital(attacker)} wins {_p(sides['attacker_wins'])}"
            if sides["attacker_wins"]["count"] >= sides["defender_wins"]["count"]
            else f"{_capital(defender)} holds: it wins {_p(sides['defender_wins'])}")
    ends = [f"{name} {_p(Probability(trials - f['unbroken_after_end_phase']['count'], trials).to_json())}"
            for side in ("attacker", "defender") for name in sorted(_named(data, side, "engaged"))
            for f in [data["formations"][name]]]
    return f"Verdict: {wins}; broken or destroyed after the end phase: {', '.join(ends)}."


def epic_assumptions(data: dict) -> str:
    """What the scenario assumes that changes the answer most (TP 1.12.3-1.12.6): for each formation in the fight,
    how many of its units are in base contact, within 15 cm, or out of it, and its blast markers at the start."""
    parts = []
    order = {(side, role): i for i, (side, role) in enumerate(
        (side, role) for side in ("attacker", "defender") for role in ("engaged", "support", "nearby"))}
    # a canonical order (side, role, name): a stored result's JSON may hold the formations sorted by name
    for name, f in sorted(data["formations"].items(),
                          key=lambda item: (order.get((item[1]["side"], item[1].get("role", "engaged")), 9), item[0])):
        e = data["engagement"].get(name)
        if e is None or f.get("role", "engaged") == "outside":
            continue
        role = f.get("role", "engaged")
        if role == "engaged":
            where = [f"{e['base_contact']} of {e['units']} units in base contact"]
            where += [f"{e['firefight']} within 15 cm"] if e["firefight"] else []
            where += [f"{e['out']} out of the fight"] if e["out"] else []
        else:  # support / nearby: the units that shoot in the firefight (TP 1.12.6), or none
            where = [f"{'supports' if role == 'support' else 'is nearby'} with {e['firefight'] + e['base_contact']} "
                     f"of {e['units']} units within 15 cm"]
        markers = e["blast_markers"]
        state = (", broken" if e["broken"] else "") + (f", {markers} blast marker{'s' if markers != 1 else ''}"
                                                        if markers else "")
        parts.append(f"{name} {', '.join(where)}{state}")
    return ("Assumed: " + "; ".join(parts) + ". Who is in base contact changes the answer most "
            "(set it per unit group with engaged = \"bc\", \"ff\" or \"out\").")


def _war_engine_losses(who: str, f: dict, engines: dict) -> str:
    """What a formation's war engines lose, in damage points of their starting damage capacity, void shields and
    fields, and critical hits (TP 3.0-3.2; docs/epic-engine.md §10.9)."""
    text = (f"{who} takes {_mean(f['damage_taken_mean'])} damage points of {engines['damage_capacity']} on average "
            f"(war engines)")
    if engines["shields"]:
        text += (f"; {_mean(f['shields_after_end_phase_mean'])} of its {engines['shields']} void shields and fields "
                 f"are up after the end phase on average")
    return text + f"; it takes a critical hit: {_p(f['critical'])}"


def _broken_or_destroyed(who: str, unbroken: list[int], trials: int) -> list[str]:
    """P(broken or destroyed) = 1 − P(unbroken) after the assault (TP 1.12.8) and after the end
    phase (TP 1.14.1), Wilson interval of its own count; one sentence when the counts agree."""
    counts = [trials - k for k in unbroken]
    if counts[0] == counts[1]:
        return [f"{who} is broken or destroyed after the assault and after the end phase: "
                f"{_p(Probability(counts[0], trials).to_json())}"]
    return [f"{who} is broken or destroyed after the {when}: {_p(Probability(k, trials).to_json())}"
            for when, k in zip(("assault", "end phase"), counts)]


def epic_turn(data: dict, table=None) -> list[str]:
    """A turn's activations in words, each probability with its 95 % interval: per activation its
    action test and, when it shot, its hits, kills and blast markers placed, the target broken and the
    target's blast markers after the attack (docs/epic-turn.md §4).  ``table`` (the result's tidy
    ``rows()``, or its ``table()``) gives the intervals of the means; without it the means are given alone."""
    rows = table.to_dict("records") if hasattr(table, "to_dict") else table
    intervals = {(r["entity"], r["quantity"]): (r["estimate"], r["ci95_lo"], r["ci95_hi"])
                 for r in rows or () if r["section"] == "turn"}

    def mean(key: str, entry: dict, quantity: str) -> str:
        if not intervals:
            return _mean(entry[quantity])
        return number(*intervals[key, quantity])

    lines = []
    for key, entry in data["turn"].items():
        line = (f"{key}. {entry['formation']} ({action_name(entry['action'])}"
                + (f" at {entry['target']}" if "target" in entry else "")
                + f") passes its action test {_p(entry['action_test_passed'])}")
        if "target_broken" in entry:
            line += (f"; {mean(key, entry, 'hits_mean')} hits, {mean(key, entry, 'kills_mean')} kills and "
                     f"{mean(key, entry, 'blast_markers_placed_mean')} blast markers placed on average; "
                     f"{entry['target']} is broken after it {_p(entry['target_broken'])} and holds "
                     f"{mean(key, entry, 'target_blast_markers_after_mean')} blast markers on average")
        if "aircraft_lost_mean" in entry:  # a ground attack (docs/epic-turn.md §9): what flak did to the aircraft
            line += (f"; flak scores {mean(key, entry, 'flak_hits_mean')} hits and shoots down "
                     f"{mean(key, entry, 'aircraft_lost_mean')} aircraft on average")
        lines.append(line)
        lines += withdrawal_fire(entry.get("withdrawal_fire", {}))
    return lines


def withdrawal_fire(entries: dict, when: str = "") -> list[str]:
    """One sentence per ``withdrawal_fire`` entry of a turn's JSON (docs/epic-turn.md §4): "Devastators fire at
    the withdrawing Warband: 48.1 % [47.9, 48.3]; 2.30 [2.26, 2.34] kills when they fire"."""
    lines = []
    for entry in entries.values():
        kills = entry["kills_mean_when_fired"]
        interval = entry["kills_mean_when_fired_ci95"]
        lines.append(f"{when}{entry['formation']} fire at the withdrawing {entry['at']}: {_p(entry['fired'])}; "
                     + (f"{number(kills, *interval)} kills when they fire" if interval else "never fire"))
    return lines


def gdb_parties(title: str) -> tuple[str, str]:
    """Charger and target names from a GdB result title ("TITLE: CHARGER -> TARGET")."""
    _, _, pair = title.rpartition(": ")
    charger, arrow, target = pair.partition(" -> ")
    return (charger, target) if arrow else ("the charger", "the target")


def gdb_summary(data: dict) -> list[str]:
    """Contact or stopped (docs/gdb.md §2.4)."""
    return [f"The charge goes in (contact): {_p(data['summary']['contact'])}",
            f"The charge is stopped: {_p(data['summary']['charge_stopped'])}"]


def gdb(data: dict) -> list[str]:
    """General de Brigade charge: contact or stopped, who gives way, retreats, routs."""
    charger, target = gdb_parties(data["title"])
    summary, ends = data["summary"], data["end_state"]
    out = []
    if data.get("tables") == "placeholder":
        out.append("PLACEHOLDER rule tables: these are not General de Brigade's numbers (see the note below).")
    out += [f"{charger} charges {target}.", *gdb_summary(data),
            f"{target} gives way: {_p(summary['defender_gives_way'])}"]
    for name, role in ((charger, "charger"), (target, "defender")):
        out += [f"{name} ({role}) retreats: {_p(ends[role]['retreating'])}",
                f"{name} ({role}) routs: {_p(ends[role]['routing'])}"]
    if ends["charger"]["eliminated"]["count"]:
        out.append(f"{charger} (charger) is eliminated: {_p(ends['charger']['eliminated'])}")
    losses = _mean(data["casualties"]["charger"]["mean"])
    out.append(f"{charger} (charger) loses {losses} casualties on average to the fire")
    return out


def t9a_summary(data: dict) -> list[str]:
    """P(charge succeeds) of every charger (docs/t9a.md §3.1); with close combat, who wins it over all trials."""
    out = [f"Charge of {name} succeeds (ends in the combat): {_p(c['arrives'])}"
           for name, c in data["chargers"].items()]
    if "melee" in data:
        a, b = data["melee_setup"]["charger"], data["melee_setup"]["target"]
        every = data["melee"]["unconditional"]
        out.append(f"Over all trials: {a} win the combat {_p(every['a_wins'])}, {b} win it {_p(every['b_wins'])}")
    return out


def t9a_melee(data: dict) -> list[str]:
    """The close combat after the charge (docs/t9a.md, "Close combat"): the units at the start, who wins,
    who breaks and is caught, round one, and the same over all trials (a failed charge fights no combat)."""
    setup, melee = data["melee_setup"], data["melee"]
    a, b, rounds = setup["charger"], setup["target"], setup["rounds"]
    given, every = melee["given_contact"], melee["unconditional"]
    facts = [f"{u['name']} {u['models']} models, {u['full_ranks']} Full Rank{'s' if u['full_ranks'] != 1 else ''} "
             f"(Rank Bonus +{u['rank_bonus']})" + (", Steadfast" if u["steadfast"] else "")
             for u in setup["units"].values()]
    if given["a_wins"]["p"] is None or given["a_wins"]["p"] != given["a_wins"]["p"]:   # no trial reached it
        return [f"At the start of the combat: {'; '.join(facts)}.", f"{a} never reach {b}: no combat in these trials."]
    lines = [f"At the start of the combat: {'; '.join(facts)}.",
             f"Given the charge arrives, {a} win the combat: {_p(given['a_wins'])}; {b} break {_p(given['b_breaks'])}, "
             f"caught {_p(given['b_caught'])}; still fighting after {rounds} round{'s' if rounds != 1 else ''} "
             f"{_p(given['unresolved'])}",
             f"Given the charge arrives, {b} win the combat: {_p(given['b_wins'])}; {a} break {_p(given['a_breaks'])}, "
             f"caught {_p(given['a_caught'])}",
             f"Round 1: {a} win {_p(given['r1_a_wins'])}, equal scores {_p(given['r1_draw'])}, {b} win "
             f"{_p(given['r1_b_wins'])}; HP lost on average {a} {_mean_of(given['e_hp_lost_a_r1'])}, "
             f"{b} {_mean_of(given['e_hp_lost_b_r1'])}",
             f"Fled units that rally: {a} {_p(given['a_fled_rallied'])}, {b} {_p(given['b_fled_rallied'])}; "
             f"HP lost in the whole fight on average: {a} {_mean_of(given['e_hp_lost_a'])}, "
             f"{b} {_mean_of(given['e_hp_lost_b'])}",
             f"Over all trials (the charge may fail): {a} win the combat {_p(every['a_wins'])}, {b} win it "
             f"{_p(every['b_wins'])}, {b} destroyed {_p(every['b_destroyed'])}"]
    return lines


def _mean_of(node: dict) -> str:
    """A ``{"mean", "mean_ci95"}`` object as "2.37 [2.36, 2.37]"."""
    if node["mean"] is None:
        return "n/a"
    return number(node["mean"], *node["mean_ci95"])


def t9a(data: dict) -> list[str]:
    """The 9th Age charge: per charger P(charge range reaches) and P(charge succeeds), and what
    happens to the target."""
    chargers, target = data["chargers"], data["target_name"]
    out = [f"{_and(list(chargers))} charging {target} (reaction: {data['reaction'].replace('_', ' ')})."]
    for name, c in chargers.items():
        out += [f"Charge range of {name} reaches: {_p(c['reaches'])}",
                f"Charge of {name} succeeds (ends in the combat): {_p(c['arrives'])}"]
        if "catches" in c:
            out.append(f"Fleeing {target} caught by {name}: {_p(c['catches'])}")
        if "shot_down" in c:
            out.append(f"{name} shot down by Stand and Shoot: {_p(c['shot_down'])}")
    if "destroyed" in data.get("target", {}):
        out.append(f"{target} destroyed: {_p(data['target']['destroyed'])}")
    if "melee" in data:
        out += t9a_melee(data)
    return out


_BY_SYSTEM = {"epic": epic, "gdb": gdb, "t9a": t9a}
_SUMMARY = {"epic": epic_summary, "gdb": gdb_summary, "t9a": t9a_summary}


def decision_sentences(result) -> list[str]:
    """The headline of a decision result (matrix, sweep, compare, rank): who wins each matchup or
    each swept value, or how the options compare against the meta."""
    kind = result.kind
    if kind == "threshold":
        return result.lines()
    if kind == "matrix":
        return [f"{a} against {d}: " + "; ".join(summary(result.cells[(i, j)].to_dict()))
                for i, a in enumerate(result.attackers) for j, d in enumerate(result.defenders)] \
            + scoring_assumption(result)
    if kind == "sweep":
        return [f"{result.field} = {value}: " + "; ".join(summary(cell.to_dict()))
                for value, cell in zip(result.values, result.cells)]
    frame = result.table()
    if kind == "compare":
        a, b = result.meta["option_a"], result.meta["option_b"]
        lines = []
        for r in frame.itertuples(index=False):
            line = (f"Against {r.opponent}: {a} wins {percent(r.p_a, r.p_a_lo, r.p_a_hi)}, "
                    f"{b} wins {percent(r.p_b, r.p_b_lo, r.p_b_hi)}; "
                    f"{a} − {b}: {percent(r.difference, r.ci95_lo, r.ci95_hi, 'percentage points')}")
            if "points_swing_a" in frame:
                line += (f"; points swing (destroyed − lost): {a} {_points_swing(r, '_a')}, "
                         f"{b} {_points_swing(r, '_b')}")
            lines.append(line)
        return lines + ([result.meta["method_reason"]] if result.meta.get("method_reason") else [])
    if kind == "rank":
        side = result.meta.get("side", "attacker")
        per_points = result.meta.get("by") == "per_100_points"
        return [f"{r.rank}. {r.option} wins {percent(r.score, r.ci95_lo, r.ci95_hi)} against the meta "
                f"(weighted, as the {side})"
                + (f"; per 100 points: {percent(r.per_100_points, r.per_100_points_lo, r.per_100_points_hi)}"
                   if per_points else "")
                + (f"; points swing (destroyed − lost): {_points_swing(r)}" if "points_swing" in frame else "")
                + (_behind_the_best(r, result.meta.get("indifference", 1.0)) if "behind_best" in frame else "")
                for r in frame.itertuples(index=False)] + scoring_assumption(result)
    return []


def _behind_the_best(row, delta: float) -> str:
    """A ranked option against the best one, paired on the same dice: "within 1 point of the best", or "behind the
    best by 12.4 points [12.1, 12.6]" (never "better by"), from the paired interval of the difference."""
    if row.rank == 1 or row.behind_best == 0 and row.behind_lo == row.behind_hi == 0:
        return "; the best by its score"
    pts = f"{delta:g} point{'s' if delta != 1 else ''}"
    behind = percent(row.behind_best, row.behind_lo, row.behind_hi, "points")
    if row.within_delta:
        return f"; within {pts} of the best (paired: {behind} behind)"
    return f"; behind the best by {behind} (paired)"


def scoring_assumption(result) -> list[str]:
    """What an Epic matrix or ranking assumes that a player must know before acting on it (issue 41 §3): one
    assault a cell, the option as the attacker (or as the side it names), its units placed as its file says."""
    if result.system != "epic":
        return []
    side = result.meta.get("side", "attacker") if result.kind == "rank" else "attacker"
    who = "each option fights one assault against each opponent" if result.kind == "rank" \
        else "each cell is one assault, the row's formation against the column's"
    return [f"How this is scored: {who}, as the {side}, with the units placed as their files say (a library "
            "formation puts every unit in base contact). A formation whose job is shooting scores low here: "
            "compare a turn plan for it (shoot, then engage) with `wargame-odds compare`."]


def _points_swing(row, suffix: str = "") -> str:
    """Mean points destroyed − points lost with its interval (a list-building trade value)."""
    return number(*(getattr(row, f"points_swing{suffix}{end}") for end in ("", "_lo", "_hi")))
