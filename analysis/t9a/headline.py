"""The 9th Age's headline: each charge and, with close combat, its outcome (docs/t9a.md), from its result's
``to_dict()``."""
from __future__ import annotations

from ..output.headline import joined, chance
from ..output.labels import number


def t9a_summary(data: dict) -> list[str]:
    """P(charge succeeds) of every charger (docs/t9a.md §3.1); with close combat, who wins it over all trials."""
    out = [f"Charge of {name} succeeds (ends in the combat): {chance(c['arrives'])}"
           for name, c in data["chargers"].items()]
    if "melee" in data:
        a, b = data["melee_setup"]["charger"], data["melee_setup"]["target"]
        every = data["melee"]["unconditional"]
        out.append(f"Over all trials: {a} win the combat {chance(every['a_wins'])}, "
                   f"{b} win it {chance(every['b_wins'])}")
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
             f"Given the charge arrives, {a} win the combat: {chance(given['a_wins'])}; "
             f"{b} break {chance(given['b_breaks'])}, "
             f"caught {chance(given['b_caught'])}; still fighting after {rounds} round{'s' if rounds != 1 else ''} "
             f"{chance(given['unresolved'])}",
             f"Given the charge arrives, {b} win the combat: {chance(given['b_wins'])}; "
             f"{a} break {chance(given['a_breaks'])}, "
             f"caught {chance(given['a_caught'])}",
             f"Round 1: {a} win {chance(given['r1_a_wins'])}, equal scores {chance(given['r1_draw'])}, {b} win "
             f"{chance(given['r1_b_wins'])}; HP lost on average {a} {_mean_of(given['e_hp_lost_a_r1'])}, "
             f"{b} {_mean_of(given['e_hp_lost_b_r1'])}",
             f"Fled units that rally: {a} {chance(given['a_fled_rallied'])}, {b} {chance(given['b_fled_rallied'])}; "
             f"HP lost in the whole fight on average: {a} {_mean_of(given['e_hp_lost_a'])}, "
             f"{b} {_mean_of(given['e_hp_lost_b'])}",
             f"Over all trials (the charge may fail): {a} win the combat {chance(every['a_wins'])}, {b} win it "
             f"{chance(every['b_wins'])}, {b} destroyed {chance(every['b_destroyed'])}"]
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
    out = [f"{joined(list(chargers))} charging {target} (reaction: {data['reaction'].replace('_', ' ')})."]
    for name, c in chargers.items():
        out += [f"Charge range of {name} reaches: {chance(c['reaches'])}",
                f"Charge of {name} succeeds (ends in the combat): {chance(c['arrives'])}"]
        if "catches" in c:
            out.append(f"Fleeing {target} caught by {name}: {chance(c['catches'])}")
        if "shot_down" in c:
            out.append(f"{name} shot down by Stand and Shoot: {chance(c['shot_down'])}")
    if "destroyed" in data.get("target", {}):
        out.append(f"{target} destroyed: {chance(data['target']['destroyed'])}")
    if "melee" in data:
        out += t9a_melee(data)
    return out
