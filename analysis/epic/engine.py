"""The Numba kernel behind :func:`wargame_odds.analysis.epic.simulate`: arrays from a ``CompiledEpic``, counts back.

Python prepares integer tables once per scenario (:class:`KernelArrays`); ``wargame_odds.kernels.epic`` runs the
trials (the procedure of ``docs/epic-engine.md``) and writes the same count slots as
:func:`wargame_odds.analysis.epic.outcome.record`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...kernels.epic import hits as H
from ...kernels.epic import layout as K
from ...kernels.epic import turn_layout as T
from ...kernels.epic.block import assault_kernel, tables

from .compile import (ATTACKER, BC, CRITICAL_KINDS, ENGAGED, FF, NO_ABILITIES, NO_ROLL, OUT, OUTSIDE,
                      SPLASH_MACRO_WEAPON, SPLASH_NO_SAVE, SPLASH_ORDINARY, SPLASH_TITAN_KILLER, SUPPORT, Abilities,
                      CompiledEpic, UnitSlot, war_engine_keys)
from .outcome import precision_successes
from .turn_model import ACTIONS, flier

#: critical kind (analysis/epic/compile.py::CRITICAL_KINDS) -> wargame_odds.kernels.epic.layout CRIT_* code
_CRITICAL_CODES = {
    "destroyed": K.CRIT_DESTROYED, "destroyed_plus_effect": K.CRIT_DESTROYED,
    "destroyed_with_passengers": K.CRIT_DESTROYED, "extra_damage": K.CRIT_EXTRA_DAMAGE,
    "end_phase_breach": K.CRIT_BREACH, "end_phase_fire": K.CRIT_FIRE, "random_move": K.CRIT_EXTRA_DAMAGE,
    "degrade_then_escalate": K.CRIT_DEGRADE, "self_hit": K.CRIT_SELF_HIT,
    "lose_character": K.CRIT_DESTROYED,  # with no character that added damage capacity; else CRIT_LOSE_CHARACTER
}
assert set(_CRITICAL_CODES) == set(CRITICAL_KINDS)
_SPLASH_KINDS = {SPLASH_ORDINARY: H.KIND_AP, SPLASH_MACRO_WEAPON: H.KIND_MW, SPLASH_TITAN_KILLER: H.KIND_TK,
                 SPLASH_NO_SAVE: H.KIND_NO_SAVE}  # -> hit kind (wargame_odds.kernels.epic.hits)
_FORMATION_SLOTS = {  # kernel column -> count slot of analysis/epic/compile.py::_lay_out
    K.FO_DESTROYED: "destroyed", K.FO_BROKEN_A: "broken_after_assault",
    K.FO_BROKEN_E: "broken_after_end_phase", K.FO_TESTED: "rally_tested", K.FO_PASSED: "rally_passed",
    K.FO_CAS: "casualties", K.FO_CAS_A: "casualties_assault", K.FO_BM_A: "blast_markers_after_assault",
    K.FO_BM_E: "blast_markers_after_end_phase",
}
_WAR_ENGINE_SLOTS = {  # kernel column -> count slot of a formation with war engines (spec §10.9)
    K.FO_CRIT: "critical", K.FO_DMG_A: "damage_taken_assault", K.FO_DMG_E: "damage_taken",
    K.FO_SH_A: "shields_after_assault", K.FO_SH_E: "shields_after_end_phase",
}


def _bounds(groups: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate index lists into (flat array, bounds) with bounds[g]..bounds[g + 1]."""
    flat = np.array([i for g in groups for i in g], dtype=np.int64)
    bounds = np.cumsum([0] + [len(g) for g in groups]).astype(np.int64)
    return flat, bounds


def _row(u: UnitSlot, count: int, d3: bool, vc: int, vn: int, a: Abilities, sniper: bool, bc: int, reach: int,
         ff_vc: bool, support: bool, dvc: int, dvn: int, spare: int = -1) -> list[int]:
    """One source row (columns in ``wargame_odds.kernels.epic.layout``): ``a`` the abilities of its hits; ``spare`` -1
    for an extra-attack line, else (main dice) the starting DC its unit may lose before the row rolls fewer dice."""
    kind = 2 if a.titan_killer else int(a.macro_weapon)
    tk = a.titan_killer_damage
    return [u.index, count, int(d3), vc, vn, kind + 3 * sniper, bc, reach, int(ff_vc), int(a.lance),
            int(a.ignore_cover), int(a.disrupt), tk.count, tk.sides, tk.plus, int(support), dvc, dvn, spare]


def _degraded(u: UnitSlot) -> tuple[int, int, bool]:
    """(CC, FF, extra attacks kept) of a unit once its critical has degraded it (spec §10.4)."""
    crit = u.critical
    if crit is None or crit.kind != "degrade_then_escalate":
        return u.cc, u.ff, True
    ff = NO_ROLL if crit.loses_ff else (crit.ff_becomes if crit.ff_becomes != NO_ROLL else u.ff)
    return (NO_ROLL if crit.loses_cc else u.cc), ff, not crit.loses_extra_attacks


def _sources(u: UnitSlot, support: bool, we: bool) -> list[tuple[int, list[int]]]:
    """(group step, source row) for a unit's main dice and each extra-attack line (§1, §4).

    A war engine's rows carry where their hits may land while it is in base contact (TP 3.1.2):
    ``cc_dice`` main dice and ``bc`` lines only on units in contact (K.REACH_CONTACT), the other main
    dice and ``15cm`` lines only on the others (K.REACH_NON_CONTACT); sniper dice, and every row of
    another unit, anywhere (K.REACH_ANY).  With war-engine rules (``we``) a main-dice row that rolls at
    CC in contact and at FF out of contact is split in two (one for each), so that each row's hits have
    one kind, one set of abilities and one firefight flag (spec §10.2, §10.6).  A war engine that loses a
    character rolls main dice for its new starting DC, ``cc_dice`` of them at most in contact: its FF rest
    shrinks first (each main row's ``spare``; analysis/epic/reference/assault.py::assault_dice, spec §10.4)."""
    is_we = u.type == "WE"
    dcc, dff, keeps_extra = _degraded(u)
    rows = []
    if support:  # supporting fire: FF only, 15cm lines only, first strike gives nothing (§4)
        rows.append((K.G_SUPPORT, _row(u, u.damage_capacity, False, u.ff, u.ff, u.ff_abilities, u.sniper, 0,
                                       K.REACH_ANY, True, True, dff, dff, spare=0)))
        for line in u.extra:
            if not line.contact_only and not line.engage_only:  # a knight lance: not in supporting fire
                dv = dff if keeps_extra else NO_ROLL
                rows.append((K.G_SUPPORT, _row(u, line.count, line.d3, u.ff, u.ff, line, line.sniper or u.sniper,
                                               0, K.REACH_ANY, True, True, dv, dv)))
    else:
        bc = int(u.engaged == BC and not u.firefights)  # a firefighting skimmer attacks as a ff unit (§1)

        def reach(contact_dice: bool, sniper: bool) -> int:
            if not is_we or sniper:
                return K.REACH_ANY
            return K.REACH_CONTACT if contact_dice else K.REACH_NON_CONTACT

        step = K.G_FIRST if u.first_strike else K.G_NORMAL
        rest = u.damage_capacity - u.cc_dice
        if is_we:  # cc_dice at CC in contact, the rest at FF; all at FF out of contact (TP 3.1.2)
            main = [(u.cc_dice, u.cc, dcc, True, rest), (rest, u.ff, dff, False, 0)]
        else:
            main = [(1, u.cc, dcc, True, 0)]
        for count, vc, dvc, contact_dice, spare in main:
            if not count:
                continue
            r = reach(contact_dice, u.sniper)
            if we and contact_dice:  # CC hits in contact, FF hits out of contact (spec §10.8.1)
                rows.append((step, _row(u, count, False, vc, NO_ROLL, u.cc_abilities, u.sniper, bc, r, False, False,
                                        dvc, NO_ROLL, spare)))
                rows.append((step, _row(u, count, False, NO_ROLL, u.ff, u.ff_abilities, u.sniper, bc, r, False,
                                        False, NO_ROLL, dff, spare)))
            else:
                a = u.ff_abilities if we else NO_ABILITIES
                rows.append((step, _row(u, count, False, vc, u.ff, a, u.sniper, bc, r, True, False, dvc, dff, spare)))
        for line in u.extra:
            if line.engage_only and u.side != ATTACKER:  # TP-SR Knight Technology: only when it assaults
                continue
            vc = u.cc if line.contact_only else (u.ff if is_we else NO_ROLL)
            vn = NO_ROLL if line.contact_only else u.ff
            dvc = NO_ROLL if not keeps_extra else dcc if line.contact_only else (dff if is_we else NO_ROLL)
            dvn = NO_ROLL if not keeps_extra or line.contact_only else dff
            step = K.G_FIRST if (line.first_strike or u.first_strike) else K.G_NORMAL
            sniper = line.sniper or u.sniper
            rows.append((step, _row(u, line.count, line.d3, vc, vn, line, sniper, bc, reach(line.contact_only, sniper),
                                    not line.contact_only, False, dvc, dvn)))
    return [(step, row) for step, row in rows if min(row[K.S_VC], row[K.S_VN]) < NO_ROLL]


@dataclass
class KernelArrays:
    """The integer tables ``wargame_odds.kernels.epic.block.assault_kernel`` takes (column names in
    ``wargame_odds.kernels.epic.layout``)."""

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
    fwe: np.ndarray  # each formation's war engines and shielded units (FormationSlot.war_engines), bounds fweb
    fweb: np.ndarray
    splash: np.ndarray  # [g, s]: units of formation g within the critical splash of formation s's war engines
    trapped: np.ndarray
    rules: np.ndarray
    side_off: np.ndarray
    form_off: np.ndarray
    n_counts: int
    turn: T.TurnTables | None = None  # a turn scenario's tables; None for an assault
    _tables: K.Tables | None = field(default=None, repr=False, compare=False)

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
            # a winner's BM for a disrupt hit on it, and for its losses (TP 2.1.22; TP-SR Automaton, Automata:
            # an Automata unit places none for either, an Automaton none for its losses, whatever its formation)
            row[K.U_DISRUPT_BM] = not u.automata and ((not u.expendable) or all_expendable[u.formation])
            row[K.U_LOSS_BM] = row[K.U_DISRUPT_BM] and not u.automaton
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
            row[K.U_VOID] = u.void_shields
            row[K.U_PF_FIX] = sum(d.plus for d in u.power_fields)
            row[K.U_PF_D3] = sum(d.count for d in u.power_fields if d.sides == 3)
            row[K.U_PF_D6] = sum(d.count for d in u.power_fields if d.sides == 6)
            row[K.U_SHADOW] = u.shadowfields
            row[K.U_HOLO] = u.holofield
            row[K.U_KNIGHT] = u.knight_shield
            row[K.U_INV_ON] = u.invulnerable_on
            crit = u.critical
            deflector_lost = crit is not None and crit.loses_deflector_shield and u.invulnerable_on == 5
            row[K.U_INV_DEG] = (6 if u.invulnerable else NO_ROLL) if deflector_lost else u.invulnerable_on
            row[K.U_CRIT] = K.CRIT_NONE if crit is None else K.CRIT_LOSE_CHARACTER \
                if crit.kind == "lose_character" and u.characters_capacity else _CRITICAL_CODES[crit.kind]
            assert len(u.characters_capacity) <= K.MAX_CHARACTERS
            row[K.U_CHARS] = len(u.characters_capacity)
            for i, (capacity, shields) in enumerate(u.characters_capacity):
                row[K.U_CH_DC + i] = capacity
                row[K.U_CH_VS + i] = shields
            row[K.U_CRIT_DMG] = 0 if crit is None else crit.extra_damage
            row[K.U_CRIT_THEN] = K.CRIT_NONE if crit is None or crit.then is None else _CRITICAL_CODES[crit.then]
            row[K.U_COVER] = u.cover
            row[K.U_REGEN] = u.regeneration and u.type == "WE"
            row[K.U_SPLASH_ON] = 0 if crit is None else crit.splash_hit_on
            row[K.U_SPLASH_KIND] = 0 if crit is None else _SPLASH_KINDS[crit.splash_kind]
            row[K.U_HOLO_LOST] = crit is not None and crit.loses_holofield
            row[K.U_AUTOMATON] = u.automaton
            row[K.U_NECRON] = u.necron
            row[K.U_FURTHER_ON] = 0 if crit is None else crit.further_damage_on
            row[K.U_SELF_HITS] = 0 if crit is None else crit.self_hits
            row[K.U_SELF_ON] = 0 if crit is None else crit.self_hit_on
            flag = np.uint64(1) << np.uint64(bit)
            for kind, member in ((K.M_ALL, True), (K.M_ASSAULT, row[K.U_ASSAULT]), (K.M_TARGET, row[K.U_TARGET]),
                                 (K.M_BC, row[K.U_BCT]), (K.M_INSP, row[K.U_INSPC]),
                                 (K.M_WE, u.damage_capacity > 1), (K.M_LEADER, u.leader),
                                 (K.M_SC, u.supreme_commander), (K.M_XHIT, assault and not u.fearless)):
                if member:
                    masks[u.side, kind, word] |= flag
            fmasks[u.formation, word] |= flag

        we = war_engine_keys(c) is not None
        groups: list[list[list[int]]] = [[] for _ in range(6)]
        # in the reference engine's order: a step's attacks unit by unit, supporting fire formation by formation
        order = sorted(c.units, key=lambda u: (forms[u.formation].role == SUPPORT and u.formation, u.index)) \
            if we else c.units
        for u in order:
            f = forms[u.formation]
            engaged = u.engaged in (BC, FF)
            if engaged and (f.role == ENGAGED or (f.role == SUPPORT and not f.broken)):
                for step, row in _sources(u, support=f.role == SUPPORT, we=we):
                    groups[u.side * 3 + step].append(row)
        # one-D6 sources go to dice pools keyed by (to-hit in contact, not in contact, class); a unit's
        # second such line goes to a second pool of the same key (a pool rolls once per living unit)
        pools: list[list[tuple[tuple[int, int, int], set[int]]]] = [[] for _ in range(6)]
        may_break = _support_that_may_break(c)
        for g, rows_g in enumerate(groups):
            rest = []
            for row in rows_g:  # (none with war-engine rules: their hits are kept per row)
                if we or row[K.S_N] != 1 or row[K.S_D3] or row[K.S_REACH] != K.REACH_ANY \
                        or c.units[row[K.S_UNIT]].formation in may_break:
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
        fwe, fweb = _bounds([list(f.war_engines) for f in forms])
        splash = np.array([f.within_splash_of for f in forms], np.int64).reshape(len(forms), len(forms))

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
                                                        for i in f.units),
                             f.role == OUTSIDE]
        rules = np.zeros(K.R_COLS, np.int64)
        rules[K.R_SUM] = r.result_dice == "sum"
        rules[K.R_NAT1] = r.rally_natural_one_fails
        rules[K.R_MAX_ROUNDS] = r.max_rounds
        rules[K.R_SF_KILLS] = r.supporting_fire_kills_count
        rules[K.R_INSP_ENGAGED] = r.inspiring == "engaged_only"
        rules[K.R_LEADERS] = r.leaders
        rules[K.R_SC_REROLL] = r.supreme_commander_rerolls
        rules[K.R_RALLY] = c.scenario.end_phase.rally
        rules[K.R_WE] = we

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
            for col, name in _WAR_ENGINE_SLOTS.items():
                form_off[f.index, col] = lay.offset(f"f{f.index}.{name}") if f.war_engines else -1
        return cls(units=units, src=src, gb=gb, pmask=pmask, pinfo=pinfo, pb=pb, masks=masks, fmasks=fmasks,
                   base=base, forms=ftab, fu=fu, fb=fb, fwe=fwe, fweb=fweb, splash=splash,
                   trapped=np.array([f.trapped for f in forms], np.float64), rules=rules,
                   side_off=side_off, form_off=form_off, n_counts=lay.size)

    @classmethod
    def build_turn(cls, ct) -> "KernelArrays":
        """The tables of a turn scenario (a ``CompiledTurn``): the assault's, with the roles the turn gives
        (the charger and its target engaged, formations without a role outside: docs/epic-turn.md §2), and
        the turn's own (:func:`turn_tables`)."""
        from .turn_result import assault_roles

        arrays = cls.build(assault_roles(ct))
        arrays.rules[K.R_TURN] = 1
        arrays.side_off[K.O_NO_ASSAULT] = ct.compiled.layout.offset("no_assault")
        arrays.turn = turn_tables(ct)
        return arrays

    def tables(self) -> K.Tables:
        """The kernel's :class:`wargame_odds.kernels.epic.layout.Tables` of these arrays (built once)."""
        if self._tables is None:
            self._tables = tables(self)
        return self._tables

    def run(self, key0: int, key1: int, first_block: int, n_trials: int,
            trial_streams: bool = False) -> tuple[np.ndarray, int]:
        """Counts of ``n_trials`` assaults and the number of D6 (and D3) rolled.

        ``trial_streams``: trial ``t`` (global index ``first_block * BLOCK_TRIALS + offset``) draws its
        dice from its own stream ``(key0, key1 ^ 0x5452494C5354524D, t)``, so its dice depend only on
        the seed, the cell and ``t``; otherwise one stream per lane of each block of ``BLOCK_TRIALS``
        trials (``wargame_odds.kernels.epic``: a block runs ``LANES`` trials in lock-step).
        """
        counts, dice = assault_kernel(self.tables(), self.n_counts, key0, key1, first_block, n_trials, trial_streams,
                                      self.turn)
        return counts, int(dice)


def _table(rows: list[list[int]], cols: int) -> np.ndarray:
    return np.array(rows, np.int64).reshape(len(rows), cols)


_TYPE_CODES = {"INF": T.INF, "LV": T.LV, "AV": T.AV, "WE": T.WE, "CH": T.CH}
_HOLD_CODES = {"shoot": T.HOLD_SHOOT, "move": T.HOLD_MOVE, "regroup": T.HOLD_REGROUP}
_AP_AT_CODES = {"auto": T.AP_AT_AUTO, "ap": T.AP_AT_AP, "at": T.AP_AT_AT}
_DECLARE_CODES = {"auto": T.DECLARE_AUTO, "war_engines": T.DECLARE_WE, "others": T.DECLARE_OTHERS}
assert ACTIONS == ("advance", "double", "sustained_fire", "marshal", "hold", "overwatch", "march", "engage")


def _value(v: int | None) -> int:
    return T.NONE if v is None else v


def turn_tables(ct) -> T.TurnTables:
    """The turn tables of kernels/epic/turn_layout.py for a ``CompiledTurn`` (its activations, weapon lines, unit
    types, the barrage table, the withdrawal-fire entries, the count offsets of each activation's and entry's
    results)."""
    from .shooting import barrage_table, dice_of, fires_at_ground, titan_killer_dice  # not imported by assault runs
    c, lay = ct.compiled, ct.compiled.layout
    scenario = c.scenario
    index = {f.name: f.index for f in c.formations}
    weapons, bounds = [], [[0]]
    for u in c.units:
        for w in ct.weapons[u.index]:
            tk, shots, bp = titan_killer_dice(w), dice_of(w.shots), dice_of(w.bp or 0)
            weapons.append([w.count, shots.plus, _value(w.ap), _value(w.at), _value(w.mw), bp.plus,
                            int(bool(w.titan_killer)), int(w.disrupt), int(w.lance), int(w.ignore_cover),
                            int(w.sniper), int(w.macro), tk.count, tk.sides, tk.plus, int(w.bp is not None),
                            shots.count, shots.sides, bp.count, bp.sides])
        bounds.append([len(weapons)])
    all_expendable = [all(c.units[i].expendable for i in f.units) for f in c.formations]
    tunits = [[_TYPE_CODES[u.type], int(u.expendable or u.automata),
               int(any(fires_at_ground(w) for w in ct.weapons[u.index])),
               int((not u.expendable or all_expendable[u.formation]) and not u.automaton and not u.automata)]
              for u in c.units]
    barrage = [[r.bp_min, r.bp_max, r.templates, r.extra_blast_markers, r.ap, r.at] for r in barrage_table()]
    direct = [sum(w.count * dice_of(w.shots).maximum for i in f.units for w in ct.weapons[i] if w.bp is None)
              for f in c.formations]
    # a barrage rolls once per unit under a template, ⌈starting DC / 2⌉ times for a war engine under its centre
    barrage_rolls = [sum(-(-c.units[i].damage_capacity // 2) if c.units[i].type == "WE" else 1 for i in f.units)
                     for f in c.formations]
    max_hits = max(direct) + max(barrage_rolls) + 1
    acts, owf, wf = [], [], []

    def withdrawal_fire(prefix: str, entries) -> tuple[int, int]:
        """The rows of ``entries`` (docs/epic-turn.md §2a) appended to ``wf``, with the count offsets of
        ``{prefix}wf{j}.*``; returns their bounds."""
        first = len(wf)
        for j, entry in enumerate(entries):
            p = f"{prefix}wf{j}."
            target = scenario.formations[index[entry.at]]
            cover_save = entry.cover_save if entry.cover_save is not None else target.cover
            wf.append([index[entry.formation], index[entry.at], _value(entry.in_range), _value(entry.exposed),
                       int(entry.cover), NO_ROLL if cover_save is None else cover_save, _AP_AT_CODES[entry.ap_at],
                       _DECLARE_CODES[entry.declare_at], _value(entry.templates_cover), lay.offset(p + "fired"),
                       lay.offset(p + "hits"), lay.length(p + "hits"), lay.offset(p + "kills"),
                       lay.length(p + "kills")])
        return first, len(wf)

    for k, act in enumerate(scenario.turn):
        p = f"t{k}."
        target = scenario.formations[index[act.target]] if act.target is not None else None
        cover_save = act.cover_save if act.cover_save is not None else (target.cover if target else None)
        row = [0] * T.A_COLS
        row[T.A_FORM] = index[act.formation]
        row[T.A_ACTION] = ACTIONS.index(act.action)
        row[T.A_TARGET] = index[act.target] if target else T.NONE
        row[T.A_RETAIN] = int(act.retain)
        row[T.A_HOLD] = _HOLD_CODES[act.hold]
        row[T.A_CROSSFIRE] = int(act.crossfire)
        row[T.A_IN_RANGE] = _value(act.in_range)
        row[T.A_EXPOSED] = _value(act.exposed)
        row[T.A_COVER] = int(act.cover)
        row[T.A_COVER_SAVE] = NO_ROLL if cover_save is None else cover_save
        row[T.A_OW_COVER] = int(target is not None and all(scenario.units[g.unit].type == "INF" for g in target.units))
        row[T.A_AP_AT] = _AP_AT_CODES[act.ap_at]
        row[T.A_DECLARE] = _DECLARE_CODES[act.declare_at]
        row[T.A_TEMPLATES] = _value(act.templates_cover)
        row[T.A_MAY_SHOOT] = int(act.may_shoot)
        row[T.A_OWF0] = len(owf)
        owf += [[index[name]] for name in act.overwatch_fire]
        row[T.A_OWF1] = len(owf)
        row[T.A_O_ACTED] = lay.offset(p + "acted")
        row[T.A_O_PASSED] = lay.offset(p + "test_passed")
        if act.may_shoot:
            row[T.A_O_BROKEN] = lay.offset(p + "target_broken")
            for col, n_col, name in ((T.A_O_HITS, T.A_N_HITS, "hits"), (T.A_O_KILLS, T.A_N_KILLS, "kills"),
                                     (T.A_O_BMP, T.A_N_BMP, "blast_markers_placed"),
                                     (T.A_O_BMA, T.A_N_BMA, "target_blast_markers_after")):
                row[col] = lay.offset(p + name)
                row[n_col] = lay.length(p + name)
        row[T.A_WF0], row[T.A_WF1] = withdrawal_fire(p, act.withdrawal_fire)
        acts.append(row)
    forms = [[int(f.overwatch)] for f in scenario.formations]
    splashes = int(any(any(f.within_splash_of.values()) for f in scenario.formations))
    end_wf = withdrawal_fire("end.", scenario.end_phase.withdrawal_fire)
    return T.TurnTables(acts=_table(acts, T.A_COLS), owf=_table(owf, 1), wpn=_table(weapons, T.WP_COLS),
                        wb=_table(bounds, 1), tu=_table(tunits, T.TU_COLS), bar=_table(barrage, 6),
                        forms=_table(forms, T.TF_COLS), info=_table([[max_hits, splashes, *end_wf]], T.I_COLS),
                        wf=_table(wf, T.WF_COLS))


def turn_kernel_unsupported(ct) -> tuple[str, str] | None:
    """(field, feature) of the first part of a turn scenario (a ``CompiledTurn``) the kernel does not simulate
    yet (the reference engine does), or None; one check per feature, the only list of them
    (docs/epic-turn.md §7).  (Every assault scenario runs on the kernel.)"""
    c = ct.compiled
    scenario = c.scenario
    for k, act in enumerate(scenario.turn):  # aircraft and spacecraft (docs/epic-turn.md §9)
        if act.flies:
            return f"turn[{k}].action", f"{act.action} (aircraft and spacecraft)"
    for k, formation in enumerate(scenario.formations):
        kind = flier(scenario, formation)
        if kind is not None:
            return f"formations[{k}]", f"an {kind} formation"
    # the turn's shooting takes a war engine's starting DC as fixed (kernels/epic/shooting.py): a lose_character
    # critical that removes a battlecar changes it
    for u in c.units:
        if u.critical is not None and u.critical.kind == "lose_character" and u.characters_capacity:
            name = u.name.split(" + ")[0]
            return f"units.{name}.critical", "lose_character on a war engine with a battlecar attached, in a turn"
    return None


def _support_that_may_break(c: CompiledEpic) -> set[int]:
    """The support formations a turn may break before its assault (they act, are shot at or are within a
    critical's splash): the kernel checks, lane by lane, that they are unbroken when they would give supporting
    fire (TP 1.12.6), so their supporting dice are never pooled."""
    scenario = c.scenario
    if not scenario.turn:
        return set()
    named = {name for act in scenario.turn if act.action != "engage" for name in (act.formation, act.target)}
    return {f.index for f in c.formations if f.role == SUPPORT
            and (f.name in named or any(f.within_splash_of))}


class KernelJob:
    """Runs the Numba kernel through the shared runner (``wargame_odds.analysis.run.runner.Job``): an assault scenario
    (a ``CompiledEpic``) or a turn scenario (a ``CompiledTurn`` of wargame_odds.analysis.epic.turn_result)."""

    def __init__(self, compiled, trial_streams: bool = False):
        """``trial_streams``: one generator stream per trial (see :meth:`KernelArrays.run`), so that a
        trial's dice depend only on (seed, cell, trial index), e.g. for common random numbers across
        the scenarios a list-building ``compare`` runs; the default is one stream per lane of each block."""
        from .turn_result import CompiledTurn, refuse_turn

        self.trial_streams = bool(trial_streams)
        if isinstance(compiled, CompiledTurn):
            self.c = compiled
            self.compiled = compiled.compiled
            self.arrays = KernelArrays.build_turn(compiled)
        else:
            refuse_turn(compiled, "Numba assault job")  # a turn needs its CompiledTurn (compile_turn)
            self.c = None
            self.compiled = compiled
            self.arrays = KernelArrays.build(compiled)

    def run_chunk(self, key0: int, key1: int, first_block: int, n_trials: int) -> np.ndarray:
        counts = self.arrays.run(key0, key1, first_block, n_trials, self.trial_streams)[0]
        if self.c is not None and not self.c.has_engage:  # no engage: no assault to count as missing
            counts[self.compiled.layout.offset("no_assault")] = 0
        return counts

    def precision_successes(self, counts: np.ndarray) -> np.ndarray:
        base = precision_successes(self.compiled, counts)
        if self.c is None:
            return base
        return np.append(base, self.compiled.layout.scalar(counts, "no_assault"))
