"""A finished trial's outcome (mirrors ``kernels/epic/record.py``): what
:class:`wargame_odds.analysis.epic.outcome.TrialOutcome` records of each formation once the end phase is over, beside
the state the assault left.
"""
from __future__ import annotations

from ..outcome import FormationOutcome, TrialOutcome
from .state import Decision, Trial


def trial_outcome(trial: Trial, decision: Decision | None, after_assault: list[tuple[bool, int, int, int, int]]
                  ) -> TrialOutcome:
    """The outcome of a trial from its final state, ``after_assault`` the :func:`assault_snapshot`
    once the assault was over; ``decision`` None when no assault was fought (a turn)."""
    war_engines = [[trial.units[i] for i in f.war_engines] for f in trial.compiled.formations]
    return TrialOutcome(
        winner=decision.winner if decision else None,
        decided_without_roll=decision.decided_without_roll if decision else False,
        rounds=decision.rounds if decision else 0, margin=decision.margin if decision else None,
        formations=[FormationOutcome(
            destroyed=not f.living, broken_after_assault=broken, broken_after_end_phase=bool(f.living) and f.broken,
            rally_tested=f.rally_tested, rally_passed=f.rally_passed,
            casualties=sum(not u.alive for u in f.units), casualties_assault=casualties,
            blast_markers_after_assault=bms, blast_markers_after_end_phase=f.blast_markers if f.living else 0,
            critical=any(u.criticals for u in wes), damage_taken_assault=damage, shields_after_assault=shields,
            damage_taken=sum(u.damage_taken for u in wes), shields_after_end_phase=sum(u.shields_up for u in wes),
        ) for f, (broken, bms, casualties, damage, shields), wes in zip(trial.formations, after_assault, war_engines)],
    )
