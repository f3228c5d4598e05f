"""Epic Armageddon's headline: the plain sentences of an assault or a turn, from its result's ``to_dict()``
(the shared sentence helpers are :mod:`wargame_odds.analysis.output.headline`'s)."""
from __future__ import annotations

from ..output.estimates import Probability
from ..output.headline import joined, capitalised, mean_text, chance, who
from ..output.labels import action_name, number


def _roles(data: dict) -> dict[str, str]:
    """Each formation's part in the assault: "engaged", "support", "nearby", or "outside" (a turn's
    formation that takes no part in its assault, docs/epic-turn.md §2), as the JSON's ``role`` says."""
    return {name: f.get("role", "engaged") for name, f in data["formations"].items()}


def _named(data: dict, side: str, role: str) -> list[str]:
    roles, formations = _roles(data), data["formations"]
    return [name for name, f in formations.items() if f["side"] == side and roles[name] == role]


def _epic_sides(data: dict) -> tuple[str, str]:
    """Each side as the formations that fight in the assault (TP 1.12.2): "Warband (defender)"."""
    return tuple(who(_named(data, side, "engaged"), side) for side in ("attacker", "defender"))


def _supported(data: dict, side: str) -> str:
    support = _named(data, side, "support")
    return f", supported by {joined(support)}," if support else ""


def epic_summary(data: dict) -> list[str]:
    """P(each side wins) (TP 1.12.7); in a turn, of the formations in its assault, and P(no assault)."""
    if data.get("sides") is None:  # a turn without an `engage`: no assault
        return []
    attacker, defender = _epic_sides(data)
    sides = data["sides"]
    out = [f"{capitalised(attacker)} wins: {chance(sides['attacker_wins'])}",
           f"{capitalised(defender)} wins: {chance(sides['defender_wins'])}"]
    if "no_assault" in sides:
        out.append(f"No assault (the engage activation did not lead to one): {chance(sides['no_assault'])}")
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
    opening = f"{capitalised(attacker)}{_supported(data, 'attacker')} assaults {defender}{_supported(data, 'defender')}"
    out.append(opening.rstrip(",") + ".")
    out += [f"{name} ({formations[name]['side']}) is nearby (within 15 cm, not in the fight)."
            for side in ("attacker", "defender") for name in _named(data, side, "nearby")]
    out += epic_summary(data)
    if sides["no_winner"]["count"]:
        out.append(f"No winner, both sides wiped out: {chance(sides['no_winner'])}")
    if sides["unresolved"]["count"]:
        out.append(f"Unresolved, still tied after {data['rules']['max_rounds']} rounds: {chance(sides['unresolved'])}")
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
                f"{who} is destroyed: {chance(f['destroyed'])}",
                f"{who} is broken after the assault: {chance(f['broken_after_assault'])}",
                f"{who} is broken after the end phase: {chance(f['broken_after_end_phase'])}"]
        if engines:
            out.append(_war_engine_losses(who, f, engines))
        if not engines or not engines["every_unit"]:
            out.append(f"{who} loses {mean_text(f['casualties_mean'])} units on average")
    return out + end_fire


def epic_verdict(data: dict) -> str:
    """The one line a player acts on (TP 1.12.7, 1.14.1): who wins the assault, and how often each side's engaged
    formations end the turn broken or destroyed. "Verdict: Assault Detachment (attacker) wins 58.0 % [57.9,
    58.1]; after the end phase broken or destroyed: Assault Detachment 41.2 % [...], Warband 50.1 % [...]"."""
    attacker, defender = _epic_sides(data)
    sides, trials = data["sides"], data["trials"]
    wins = (f"{capitalised(attacker)} wins {chance(sides['attacker_wins'])}"
            if sides["attacker_wins"]["count"] >= sides["defender_wins"]["count"]
            else f"{capitalised(defender)} holds: it wins {chance(sides['defender_wins'])}")
    ends = [f"{name} {chance(Probability(trials - f['unbroken_after_end_phase']['count'], trials).to_json())}"
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
    text = (f"{who} takes {mean_text(f['damage_taken_mean'])} damage points of {engines['damage_capacity']} on average "
            f"(war engines)")
    if engines["shields"]:
        text += (f"; {mean_text(f['shields_after_end_phase_mean'])} of its {engines['shields']} void shields and "
                 f"fields are up after the end phase on average")
    return text + f"; it takes a critical hit: {chance(f['critical'])}"


def _broken_or_destroyed(who: str, unbroken: list[int], trials: int) -> list[str]:
    """P(broken or destroyed) = 1 − P(unbroken) after the assault (TP 1.12.8) and after the end
    phase (TP 1.14.1), Wilson interval of its own count; one sentence when the counts agree."""
    counts = [trials - k for k in unbroken]
    if counts[0] == counts[1]:
        return [f"{who} is broken or destroyed after the assault and after the end phase: "
                f"{chance(Probability(counts[0], trials).to_json())}"]
    return [f"{who} is broken or destroyed after the {when}: {chance(Probability(k, trials).to_json())}"
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
            return mean_text(entry[quantity])
        return number(*intervals[key, quantity])

    lines = []
    for key, entry in data["turn"].items():
        line = (f"{key}. {entry['formation']} ({action_name(entry['action'])}"
                + (f" at {entry['target']}" if "target" in entry else "")
                + f") passes its action test {chance(entry['action_test_passed'])}")
        if "target_broken" in entry:
            line += (f"; {mean(key, entry, 'hits_mean')} hits, {mean(key, entry, 'kills_mean')} kills and "
                     f"{mean(key, entry, 'blast_markers_placed_mean')} blast markers placed on average; "
                     f"{entry['target']} is broken after it {chance(entry['target_broken'])} and holds "
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
        lines.append(f"{when}{entry['formation']} fire at the withdrawing {entry['at']}: {chance(entry['fired'])}; "
                     + (f"{number(kills, *interval)} kills when they fire" if interval else "never fire"))
    return lines


def scoring_assumption(result) -> list[str]:
    """What an Epic matrix or ranking assumes that a player must know before acting on it (issue 41 §3): one
    assault a cell, the option as the attacker (or as the side it names), its units placed as its file says."""
    side = result.meta.get("side", "attacker") if result.kind == "rank" else "attacker"
    if any((result.meta.get("plans") or {}).values()):
        who = "each option" if result.kind == "rank" else "each row's formation"
        return [f"How this is scored: {who} plays its turn plan against each opponent as the attacker: an assault "
                "plan fights one assault (a library formation puts every unit in base contact), a shooting plan "
                "takes its shooting action at the opponent's first formation (every shooter in range, every target "
                "exposed, no cover), then the end phase. A plan is chosen per option (plan = \"assault\", \"shoot\" "
                "or \"shoot_then_assault\" in the definition); by default a formation plays its job: a shooting "
                "formation shoots, any other assaults."]
    scored = "each option fights one assault against each opponent" if result.kind == "rank" \
        else "each cell is one assault, the row's formation against the column's"
    return [f"How this is scored: {scored}, as the {side}, with the units placed as their files say (a library "
            "formation puts every unit in base contact). Options that play the defender receive the assault, so "
            "they have no turn plan."]
