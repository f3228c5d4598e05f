"""The Numba kernel behind :func:`analysis.epic.simulate`: arrays from a ``CompiledEpic``, counts back.

Python prepares integer tables once per scenario (:class:`KernelArrays`); ``kernels.epic`` runs the
trials (the procedure of ``docs/epic-engine.md``) and writes the same count slots as
:func:`analysis.epic.outcome.record`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernels import epic as K

from .compile import BC, ENGAGED, FF, NO_ROLL, OUT, SUPPORT, CompiledEpic, UnitSlot
from .outcome import precision_successes

_FORMATION_SLOTS = {  # kernel column -> count slot of analysis/epic/compile.py::_lay_out
    K.FO_DESTROYED: "destroyed", K.FO_BROKEN_A: "broken_after_assault",
    K.FO_BROKEN_E: "broken_after_end_phase", K.FO_TESTED: "rally_tested", K.FO_PASSED: "rally_passed",
    K.FO_CAS: "casualties", K.FO_CAS_A: "casualties_assault", K.FO_BM_A: "blast_markers_after_assault",
    K.FO_BM_E: "blast_markers_after_end_phase",
}


def _bounds(groups: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate index lists into (flat array, bounds) with bounds[g]..bounds[g + 1]."""
    flat = np.array([i for g in groups for i in g], dtype=np.int64)
    bounds = np.cumsum([0] + [len(g) for g in groups]).astype(np.int64)
    return flat, bounds


def _sources(u: UnitSlot, support: bool) -> list[tuple[int, list[int]]]:
    """(group step, source row) for a unit's main dice and each extra-attack line (§1, §4).

    A war engine's rows carry where their hits may land while it is in base contact (TP 3.1.2):
    ``cc_dice`` main dice and ``bc`` lines only on units in contact (K.REACH_CONTACT), the other main
    dice and ``15cm`` lines only on the others (K.REACH_NON_CONTACT); sniper dice, and every row of
    another unit, anywhere (K.REACH_ANY)."""
    we = u.type == "WE"
    rows = []
    if support:  # supporting fire: FF only, 15cm lines only, first strike gives nothing (§4)
        rows.append((K.G_SUPPORT, [u.index, u.damage_capacity, 0, u.ff, u.ff, 3 * u.sniper, 0, K.REACH_ANY]))
        for line in u.extra:
            if not line.contact_only:
                kind = 2 if line.titan_killer else int(line.macro_weapon)
                rows.append((K.G_SUPPORT, [u.index, line.count, int(line.d3), u.ff, u.ff,
                                           kind + 3 * (line.sniper or u.sniper), 0, K.REACH_ANY]))
    else:
        bc = int(u.engaged == BC and not u.firefights)  # a firefighting skimmer attacks as a ff unit (§1)

        def reach(contact_dice: bool, sniper: bool) -> int:
            if not we or sniper:
                return K.REACH_ANY
            return K.REACH_CONTACT if contact_dice else K.REACH_NON_CONTACT

        step = K.G_FIRST if u.first_strike else K.G_NORMAL
        if we:  # cc_dice at CC in contact, the rest at FF; all at FF out of contact (TP 3.1.2)
            main = [(u.cc_dice, u.cc, True), (u.damage_capacity - u.cc_dice, u.ff, False)]
        else:
            main = [(1, u.cc, True)]
        for count, vc, contact_dice in main:
            if count:
                rows.append((step, [u.index, count, 0, vc, u.ff, 3 * u.sniper, bc, reach(contact_dice, u.sniper)]))
        for line in u.extra:
            kind = 2 if line.titan_killer else int(line.macro_weapon)
            vc = u.cc if line.contact_only else (u.ff if we else NO_ROLL)
            vn = NO_ROLL if line.contact_only else u.ff
            step = K.G_FIRST if (line.first_strike or u.first_strike) else K.G_NORMAL
            sniper = line.sniper or u.sniper
            rows.append((step, [u.index, line.count, int(line.d3), vc, vn, kind + 3 * sniper, bc,
                                reach(line.contact_only, sniper)]))
    return [(step, row) for step, row in rows if min(row[K.S_VC], row[K.S_VN]) < NO_ROLL]


@dataclass
class KernelArrays:
    """The integer tables ``kernels.epic.assault_kernel`` takes (column names in ``kernels.epic``)."""

    units: np.ndarray
    src: np.ndarray
    gb: np.ndarray
    pmask: np.ndarray
    pinfo: np.ndarray
    pb: np.ndarray
    masks: np.ndarray
    fmasks: np.ndarray
    base: np.ndarray
    forms: np.ndarray
    fu: np.ndarray
    fb: np.ndarray
    trapped: np.ndarray
    rules: np.ndarray
    side_off: np.ndarray
    form_off: np.ndarray
    n_counts: int

    @classmethod
    def build(cls, c: CompiledEpic) -> "KernelArrays":
        forms = c.formations
        all_expendable = [all(c.units[i].expendable for i in f.units) for f in forms]
        r = c.rules
        base = np.array([min((u.index for u in c.units if u.side == s), default=0) for s in (0, 1)], np.int64)
        per_side = [sum(u.side == s for u in c.units) for s in (0, 1)]
        assert all(u.index - base[u.side] < per_side[u.side] for u in c.units), "a side's units are contiguous"
        n_words = max(1, -(-max(per_side) // 64))
        masks = np.zeros((2, K.M_COLS, n_words), np.uint64)
        fmasks = np.zeros((len(forms), n_words), np.uint64)
        units = np.zeros((len(c.units), K.U_COLS), np.int64)
        for u in c.units:
            row = units[u.index]
            assault = forms[u.formation].role == ENGAGED
            row[K.U_FORM] = u.formation
            row[K.U_ENG] = u.engaged
            row[K.U_SAVE] = min(u.armour, u.cover)
            row[K.U_ARMOUR] = u.armour
            row[K.U_DC] = u.damage_capacity
            row[K.U_RA] = u.reinforced_armour
            row[K.U_INV] = u.invulnerable
            row[K.U_FEARLESS] = u.fearless
            row[K.U_INSPIRING] = u.inspiring
            row[K.U_LEADER] = u.leader
            row[K.U_SC] = u.supreme_commander
            row[K.U_SPEED0] = u.speed_zero
            row[K.U_SNIPE] = u.inspiring or u.leader or u.supreme_commander
            row[K.U_LOSS_BM] = (not u.expendable) or all_expendable[u.formation]
            row[K.U_SIDE] = u.side
            row[K.U_ASSAULT] = assault
            row[K.U_TARGET] = assault and u.engaged in (BC, FF)
            row[K.U_BCT] = assault and u.engaged == BC and not u.firefights
            row[K.U_INSPC] = assault and u.inspiring and (r.inspiring != "engaged_only" or u.engaged in (BC, FF))
            row[K.U_SIMPLE] = not (u.reinforced_armour or u.invulnerable)
            word, bit = divmod(u.index - int(base[u.side]), 64)
            row[K.U_WORD] = word
            row[K.U_BIT] = bit
            row[K.U_WE] = u.type == "WE"
            flag = np.uint64(1) << np.uint64(bit)
            for kind, member in ((K.M_ALL, True), (K.M_ASSAULT, row[K.U_ASSAULT]), (K.M_TARGET, row[K.U_TARGET]),
                                 (K.M_BC, row[K.U_BCT]), (K.M_INSP, row[K.U_INSPC]),
                                 (K.M_WE, u.damage_capacity > 1), (K.M_LEADER, u.leader),
                                 (K.M_SC, u.supreme_commander), (K.M_XHIT, assault and not u.fearless)):
                if member:
                    masks[u.side, kind, word] |= flag
            fmasks[u.formation, word] |= flag

        groups: list[list[list[int]]] = [[] for _ in range(6)]
        for u in c.units:
            f = forms[u.formation]
            engaged = u.engaged in (BC, FF)
            if engaged and (f.role == ENGAGED or (f.role == SUPPORT and not f.broken)):
                for step, row in _sources(u, support=f.role == SUPPORT):
                    groups[u.side * 3 + step].append(row)
        # one-D6 sources go to dice pools keyed by (to-hit in contact, not in contact, class); a unit's
        # second such line goes to a second pool of the same key (a pool rolls once per living unit)
        pools: list[list[tuple[tuple[int, int, int], set[int]]]] = [[] for _ in range(6)]
        for g, rows_g in enumerate(groups):
            rest = []
            for row in rows_g:
                if row[K.S_N] != 1 or row[K.S_D3] or row[K.S_REACH] != K.REACH_ANY:
                    rest.append(row)
                    continue
                key = (row[K.S_VC] if row[K.S_BC] else row[K.S_VN], row[K.S_VN], row[K.S_CLASS])
                for k, members in pools[g]:
                    if k == key and row[K.S_UNIT] not in members:
                        members.add(row[K.S_UNIT])
                        break
                else:
                    pools[g].append((key, {row[K.S_UNIT]}))
            groups[g] = rest
        flat_pools = [p for g in pools for p in g]
        pmask = np.zeros((len(flat_pools), n_words), np.uint64)
        pinfo = np.zeros((len(flat_pools), K.P_COLS), np.int64)
        for i, (key, members) in enumerate(flat_pools):
            pinfo[i] = key
            for m in members:
                word, bit = divmod(m - int(base[c.units[m].side]), 64)
                pmask[i, word] |= np.uint64(1) << np.uint64(bit)
        pb = np.cumsum([0] + [len(g) for g in pools]).astype(np.int64)
        rows = [r for g in groups for r in g]
        src = np.array(rows, np.int64).reshape(len(rows), K.S_COLS)
        gb = np.cumsum([0] + [len(g) for g in groups]).astype(np.int64)
        fu, fb = _bounds([list(f.units) for f in forms])

        ftab = np.zeros((len(forms), K.F_COLS), np.int64)
        for f in forms:
            ftab[f.index] = [f.side, f.role == ENGAGED, f.initiative, f.blast_markers, f.broken, f.tsknf,
                             f.mob_rule, f.enemy_within_30cm, f.max_blast_markers,
                             any(c.units[i].supreme_commander for i in f.units),
                             any(c.units[i].leader for i in f.units),
                             len(f.units), sum(c.units[i].damage_capacity for i in f.units),
                             any(c.units[i].speed_zero and not c.units[i].fearless and c.units[i].engaged != OUT
                                 for i in f.units),
                             any(c.units[i].damage_capacity > 1 for i in f.units),
                             f.withdrawal_enemies * any(c.units[i].type == "WE" and not c.units[i].fearless
                                                        for i in f.units)]
        rules = np.zeros(K.R_COLS, np.int64)
        rules[K.R_SUM] = r.result_dice == "sum"
        rules[K.R_NAT1] = r.rally_natural_one_fails
        rules[K.R_MAX_ROUNDS] = r.max_rounds
        rules[K.R_SF_KILLS] = r.supporting_fire_kills_count
        rules[K.R_INSP_ENGAGED] = r.inspiring == "engaged_only"
        rules[K.R_LEADERS] = r.leaders
        rules[K.R_SC_REROLL] = r.supreme_commander_rerolls
        rules[K.R_RALLY] = c.scenario.end_phase.rally

        lay = c.layout
        side_off = np.zeros(K.O_COLS, np.int64)
        for col, name in ((K.O_ATT, "attacker_wins"), (K.O_DEF, "defender_wins"), (K.O_NONE, "no_winner"),
                          (K.O_UNRES, "unresolved"), (K.O_NOROLL, "decided_without_roll"),
                          (K.O_ROUNDS, "rounds"), (K.O_MARGIN, "margin")):
            side_off[col] = lay.offset(name)
        side_off[K.O_MAX_MARGIN] = c.max_margin
        form_off = np.zeros((len(forms), K.FO_COLS), np.int64)
        for f in forms:
            for col, name in _FORMATION_SLOTS.items():
                form_off[f.index, col] = lay.offset(f"f{f.index}.{name}")
        return cls(units=units, src=src, gb=gb, pmask=pmask, pinfo=pinfo, pb=pb, masks=masks, fmasks=fmasks,
                   base=base, forms=ftab, fu=fu, fb=fb,
                   trapped=np.array([f.trapped for f in forms], np.float64), rules=rules,
                   side_off=side_off, form_off=form_off, n_counts=lay.size)

    def run(self, key0: int, key1: int, first_block: int, n_trials: int,
            trial_streams: bool = False) -> tuple[np.ndarray, int]:
        """Counts of ``n_trials`` assaults and the number of D6 (and D3) rolled.

        ``trial_streams``: trial ``t`` (global index ``first_block * BLOCK_TRIALS + offset``) draws its
        dice from its own stream ``(key0, key1 ^ 0x5452494C5354524D, t)``, so its dice depend only on
        the seed, the cell and ``t``; otherwise one stream per lane of each block of ``BLOCK_TRIALS``
        trials (``kernels.epic``: a block runs ``LANES`` trials in lock-step).
        """
        counts, dice = K.assault_kernel(
            self.units, self.src, self.gb, self.pmask, self.pinfo, self.pb, self.masks, self.fmasks, self.base,
            self.forms, self.fu, self.fb, self.trapped, self.rules, self.side_off, self.form_off, self.n_counts,
            np.uint64(key0), np.uint64(key1), np.int64(first_block), np.int64(n_trials), bool(trial_streams),
            (0,) * self.masks.shape[2])
        return counts, int(dice)


class KernelJob:
    """Runs the Numba assault kernel through the shared runner (``analysis.runner.Job``)."""

    def __init__(self, compiled: CompiledEpic, trial_streams: bool = False):
        """``trial_streams``: one generator stream per trial (see :meth:`KernelArrays.run`), so that a
        trial's dice depend only on (seed, cell, trial index), e.g. for common random numbers across
        the scenarios a list-building ``compare`` runs; the default is one stream per lane of each block."""
        from .turn_result import refuse_turn

        refuse_turn(compiled, "Numba kernel")  # turns run on the reference engine for now (docs/epic-turn.md)
        self.compiled = compiled
        self.trial_streams = bool(trial_streams)
        self.arrays = KernelArrays.build(compiled)

    def run_chunk(self, key0: int, key1: int, first_block: int, n_trials: int) -> np.ndarray:
        return self.arrays.run(key0, key1, first_block, n_trials, self.trial_streams)[0]

    def precision_successes(self, counts: np.ndarray) -> np.ndarray:
        return precision_successes(self.compiled, counts)
