"""Turn GdB counts into the shared :class:`~wargame_odds.analysis.output.result.Result` shape (issue 3 §4)."""
from __future__ import annotations

from ..output.estimates import Distribution, Probability
from ..output.result import Result
from ..run.runner import RunInfo

from . import reference as ref
from .compile import DEFENDER_END
from .model import Model

PLACEHOLDER_NOTE = ("PLACEHOLDER rule tables (docs/gdb.md §2.3): morale bands, modifiers and the fire table are "
                    "not General de Brigade's; write yours with `wargame-odds gdb-tables template > my_tables.toml`, "
                    "fill it in (docs/gdb.md, Filling in the rule tables) and set `tables = \"my_tables.toml\"`")


def build_result(model: Model, lay, counts, info: RunInfo, notes: list[str], engine: str) -> Result:
    n = info.trials
    g = lambda name: lay.get(counts, name)  # noqa: E731
    probs = lambda keys, arr: {k: Probability(int(v), n) for k, v in zip(keys, arr)}  # noqa: E731
    outcomes = probs(ref.OUTCOMES, g("outcome"))
    o = dict(zip(ref.OUTCOMES, (int(x) for x in g("outcome"))))
    stopped = sum(o[k] for k in ref.OUTCOMES[:5])
    gives_way = o["gives_way_caught"] + o["gives_way_escaped"]
    cas = Distribution(g("casualties"), 0, n)
    cas_t = Distribution(g("casualties_by_target"), 0, n)
    friends = Distribution(g("friends_disordered"), 0, n)
    tree = {
        "charger": probs(ref.CHARGER_KEYS, g("charger")),
        "defender": probs(ref.DEFENDER_KEYS, g("defender")),
        "outcomes": outcomes,
        "summary": {"charge_stopped": Probability(stopped, n),
                    "contact": Probability(n - stopped - o["gives_way_escaped"], n),
                    "defender_gives_way": Probability(gives_way, n)},
        "end_state": {"charger": probs(ref.END_STATES, g("charger_end")),
                      "defender": probs(DEFENDER_END, g("defender_end"))},
        "casualties": {
            "charger": {"mean": cas.mean(), "distribution": cas},
            "charger_from_target_fire": {"mean": cas_t.mean(), "distribution": cas_t},
            "target": {"mean": Distribution([n], 0, n).mean(), "distribution": Distribution([n], 0, n)},
        },
        "events": {"charger_double_six": Probability(lay.scalar(counts, "charger_double_six"), n),
                   "defender_double_six": Probability(lay.scalar(counts, "defender_double_six"), n),
                   "friends_disordered": {"mean": friends.mean(), "distribution": friends}},
    }
    s = model.scenario
    all_notes = []
    if model.tables.placeholder:
        all_notes.append(PLACEHOLDER_NOTE)
    all_notes += notes
    all_notes.append("the target takes no casualties in the charge sequence (melee comes later, in the Melee Phase)")
    meta = {"tables": "placeholder" if model.tables.placeholder else "user",
            "tables_file": model.tables.source, "engine": engine, "scale": model.scale,
            "rules": s.rules.model_dump()}
    title = f"{s.title}: {s.charger.name} -> {s.target.name}"
    return Result(system="gdb", title=title, info=info, tree=tree, notes=all_notes, meta=meta)
