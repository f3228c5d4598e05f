"""Numba kernels for Epic Armageddon (NetEA) assaults and the regroup roll.

Arrays in, counts out: ``analysis/epic/engine.py`` turns a ``CompiledEpic`` into the integer tables
below and the kernel runs the procedure of ``docs/epic-engine.md`` (clauses cited as §n there, TP =
NetEA Tournament Pack).  Trials run in stream blocks of ``BLOCK_TRIALS`` (one generator stream per
block, keyed by the block index), in parallel over blocks; per-block counts are summed at the end,
so the counts depend only on the seed and the trial count.
"""
import numpy as np
from numba import njit, prange

from .rng import BLOCK_TRIALS, d6, die, seed_stream, uniform

NO_ROLL = 7  # a to-hit or save value no D6 reaches

# Unit table columns (int64[N, U_COLS]); units in allocation order (CompiledEpic.units).
# U_SAVE = min(armour, cover); U_SNIPE = a sniper's target (Inspiring, Leader or Supreme Commander);
# U_LOSS_BM = its losses give a winner BMs (not Expendable, unless its whole formation is).
U_FORM, U_ENG, U_SAVE, U_ARMOUR, U_DC, U_RA, U_INV, U_FEARLESS, U_INSPIRING, U_LEADER, U_SC, U_SPEED0, \
    U_SNIPE, U_LOSS_BM = range(14)
U_COLS = 14
# Attack-source table columns (int64[S, S_COLS]): a unit's main dice or one extra-attack line.
S_UNIT, S_N, S_D3, S_VC, S_VN, S_CLASS = range(6)
S_COLS = 6
# Source groups (rows of the source table are sorted by group): side * 3 + step.
G_FIRST, G_NORMAL, G_SUPPORT = 0, 1, 2
# Hit classes: kind (0 ordinary, 1 macro-weapon, 2 titan-killer) + 3 if sniper.
N_CLASSES = 6
# Formation table columns (int64[F, F_COLS]).
# F_ANY_SC / F_ANY_LEADER: the formation has a Supreme Commander / a Leader (skips counting them).
F_SIDE, F_ASSAULT, F_INIT, F_BM0, F_BROKEN0, F_TSKNF, F_MOB, F_ENEMY30, F_CAP, F_ANY_SC, F_ANY_LEADER = range(11)
F_COLS = 11
# Rule switches (int64[R_COLS]).
R_SUM, R_NAT1, R_MAX_ROUNDS, R_SF_KILLS, R_INSP_ENGAGED, R_LEADERS, R_SC_REROLL, R_RALLY = range(8)
R_COLS = 8
# Side-level count offsets (int64[O_COLS]).
O_ATT, O_DEF, O_NONE, O_UNRES, O_NOROLL, O_ROUNDS, O_MARGIN, O_MAX_MARGIN = range(8)
O_COLS = 8
# Per-formation count offsets (int64[F, FO_COLS]).
FO_DESTROYED, FO_BROKEN_A, FO_BROKEN_E, FO_TESTED, FO_PASSED, FO_CAS, FO_CAS_A, FO_BM_A, FO_BM_E = range(9)
FO_COLS = 9

BC, OUT = 0, 2
ATTACKER, DEFENDER = 0, 1
WIN_ATT, WIN_DEF, WIN_NONE, WIN_UNRESOLVED = O_ATT, O_DEF, O_NONE, O_UNRES  # winner code = its count slot


@njit(cache=True, parallel=True)
def regroup_kernel(blast_markers, bonus, key0, key1, first_block, n_trials):
    """Histogram (int64[blast_markers + 1]) of BMs removed = min(highest of 2D6 + bonus, BMs), TP 1.13.1."""
    n_blocks = (n_trials + BLOCK_TRIALS - 1) // BLOCK_TRIALS
    part = np.zeros((n_blocks, blast_markers + 1), np.int64)
    for b in prange(n_blocks):
        state = np.empty(4, np.uint64)
        seed_stream(state, key0, key1, first_block + b)
        for _ in range(min(BLOCK_TRIALS, n_trials - b * BLOCK_TRIALS)):
            part[b, min(max(d6(state), d6(state)) + bonus, blast_markers)] += 1
    return part.sum(axis=0)


@njit(cache=True, inline="always")
def _any_alive(idx, lo, hi, hp):
    """Is any unit ``idx[lo:hi]`` alive?"""
    for k in range(lo, hi):
        if hp[idx[k]] > 0:
            return True
    return False


@njit(cache=True, inline="always")
def _size(f, fu, fb, units, hp):
    """Formation size: living units, a war engine counting its starting DC (TP 3.3.3, spec §0)."""
    s = 0
    for k in range(fb[f], fb[f + 1]):
        u = fu[k]
        s += units[u, U_DC] * (hp[u] > 0)
    return s


@njit(cache=True, inline="always")
def _count(f, fu, fb, units, hp, col):
    """Living units of formation ``f`` (with ``units[u, col]`` set, unless ``col`` < 0)."""
    n = 0
    for k in range(fb[f], fb[f + 1]):
        u = fu[k]
        n += (hp[u] > 0) & (col < 0 or units[u, col] != 0)
    return n


@njit(cache=True, inline="always")
def _living(units, hp, alive):
    """``alive[f]`` = living units of formation ``f`` (one pass over the units)."""
    alive[:] = 0
    for u in range(units.shape[0]):
        alive[units[u, U_FORM]] += hp[u] > 0


@njit(cache=True, inline="always")
def _withdraw(state, f, fu, fb, units, hp, trapped, speed_zero_die):
    """Withdrawal (spec §6.2): speed-0 ``bc``/``ff`` units die (if asked), other non-Fearless units
    die with probability ``trapped`` (one uniform draw each, allocation order)."""
    p = trapped[f]
    for k in range(fb[f], fb[f + 1]):
        u = fu[k]
        if hp[u] == 0 or units[u, U_FEARLESS]:
            continue
        if speed_zero_die and units[u, U_SPEED0] and units[u, U_ENG] != OUT:
            hp[u] = 0
        elif p > 0.0 and uniform(state) < p:
            hp[u] = 0


@njit(cache=True, inline="always")
def _fails_break(f, forms, bm, fu, fb, units, hp):
    """Break test: BMs >= size (TSKNF: 2 x size), spec §0."""
    size = _size(f, fu, fb, units, hp)
    return bm[f] >= (2 * size if forms[f, F_TSKNF] else size)


@njit(cache=True, inline="always")
def _unsaved(state, cls, u, units, tally):
    """1 if one hit of class ``cls`` on unit ``u`` is not saved, else 0 (spec §2 saves)."""
    sniper = cls >= 3
    kind = cls - 3 * sniper
    failed = True
    if kind == 0:
        target = units[u, U_SAVE] + sniper
        if target < NO_ROLL:
            tally[0] += 1
            failed = d6(state) < target
            if units[u, U_RA] and failed:
                tally[0] += 1
                failed = d6(state) < target
    elif kind == 1 and units[u, U_RA]:
        target = units[u, U_ARMOUR] + sniper
        if target < NO_ROLL:
            tally[0] += 1
            failed = d6(state) < target
    if units[u, U_INV] and failed:
        tally[0] += 1
        failed = d6(state) < 6
    return np.int64(failed)


@njit(cache=True, inline="always")
def _allocate(state, hits, hs, tgt, lo, hi, units, hp, unsaved, tally):
    """Allocate the hits ``hits[hs]`` to the living units ``tgt[lo:hi]`` and roll saves (spec §2).

    Sniper hits go to the first Inspiring / Leader / Supreme Commander unit (else the first unit);
    then ordinary, macro-weapon and titan-killer hits continue one round-robin in allocation order,
    a war engine taking up to its starting DC hits per pass.  Unsaved hits add to ``unsaved``.
    """
    n_ord = hits[hs, 0]
    n_mw = n_ord + hits[hs, 1]
    total = n_mw + hits[hs, 2]
    n_snipe = hits[hs, 3] + hits[hs, 4] + hits[hs, 5]
    if total + n_snipe == 0:
        return
    first = -1
    snipe = -1
    for k in range(lo, hi):
        u = tgt[k]
        if hp[u] > 0:
            if first < 0:
                first = u
            if units[u, U_SNIPE]:
                snipe = u
                break
    if first < 0:
        return  # no eligible unit: the hits are lost
    if snipe < 0:
        snipe = first
    for cls in range(3, N_CLASSES):
        for _ in range(hits[hs, cls]):
            unsaved[snipe] += _unsaved(state, cls, snipe, units, tally)
    pos = 0
    while pos < total:
        for k in range(lo, hi):
            u = tgt[k]
            if hp[u] == 0:
                continue
            end = min(pos + units[u, U_DC], total)
            for p in range(pos, end):
                cls = 0 if p < n_ord else (1 if p < n_mw else 2)
                unsaved[u] += _unsaved(state, cls, u, units, tally)
            pos = end
            if pos == total:
                break


@njit(cache=True, inline="always")
def _margin(state, kills, units, hp, asu, ab, forms, bm, broken, fu, fb, rules):
    """Attacker score - defender score of one result roll (spec §5): highest (or sum) of 2D6 + modifiers."""
    n_att = 0
    n_def = 0
    insp = 0
    out_counts = rules[R_INSP_ENGAGED] == 0
    for k in range(ab[0], ab[1]):  # branch-free: which units live is random
        u = asu[k]
        alive = hp[u] > 0
        n_att += units[u, U_DC] * alive
        insp += alive & (units[u, U_INSPIRING] != 0) & (out_counts | (units[u, U_ENG] != OUT))
    for k in range(ab[1], ab[2]):
        u = asu[k]
        alive = hp[u] > 0
        n_def += units[u, U_DC] * alive
        insp -= alive & (units[u, U_INSPIRING] != 0) & (out_counts | (units[u, U_ENG] != OUT))
    bm_att = 0
    bm_def = 0
    raw_att = 0
    raw_def = 0
    for f in range(forms.shape[0]):
        if not forms[f, F_ASSAULT]:
            continue
        if broken[f]:
            raw = _size(f, fu, fb, units, hp)
            held = raw
        else:
            raw = bm[f]
            held = bm[f] // 2 if forms[f, F_TSKNF] else bm[f]
        if forms[f, F_SIDE] == ATTACKER:
            bm_att += held
            raw_att += raw
        else:
            bm_def += held
            raw_def += raw
    mod = kills[ATTACKER] - kills[DEFENDER] + insp
    mod += (n_att > n_def) + (n_att > 2 * n_def) - (n_def > n_att) - (n_def > 2 * n_att)
    mod += (raw_att == 0) - (raw_def == 0) + (bm_def > bm_att) - (bm_att > bm_def)
    a1 = d6(state)
    a2 = d6(state)
    d1 = d6(state)
    d2 = d6(state)
    if rules[R_SUM]:
        return a1 + a2 - d1 - d2 + mod
    return max(a1, a2) - max(d1, d2) + mod


@njit(cache=True, inline="always")
def _consequences(state, winner, extra, forms, bm, broken, losses_bm, fu, fb, units, hp, asu, ab, trapped):
    """Extra hits, the loser breaks or is destroyed, nearby losers, the winner's BMs (spec §6)."""
    loser = DEFENDER if winner == WIN_ATT else ATTACKER
    n_forms = forms.shape[0]
    if extra > 0:  # §6.1: no saves, Fearless immune, front to back, a unit takes its remaining DC
        all_tsknf = True
        for f in range(n_forms):
            if forms[f, F_SIDE] == loser and forms[f, F_ASSAULT] and not forms[f, F_TSKNF]:
                all_tsknf = False
        if all_tsknf:
            extra //= 2
        for k in range(ab[loser], ab[loser + 1]):
            if extra == 0:
                break
            u = asu[k]
            if hp[u] > 0 and not units[u, U_FEARLESS]:
                take = min(hp[u], extra)
                extra -= take
                hp[u] -= take
    for f in range(n_forms):  # §6.2
        if forms[f, F_SIDE] != loser or not forms[f, F_ASSAULT]:
            continue
        if forms[f, F_BROKEN0]:
            for k in range(fb[f], fb[f + 1]):
                if not units[fu[k], U_FEARLESS]:
                    hp[fu[k]] = 0
        else:
            bm[f] = 0
            broken[f] = True
            _withdraw(state, f, fu, fb, units, hp, trapped, True)
    for f in range(n_forms):  # §6.3
        if forms[f, F_SIDE] != loser or forms[f, F_ASSAULT]:
            continue
        if broken[f]:
            if not forms[f, F_TSKNF]:
                for k in range(fb[f], fb[f + 1]):
                    u = fu[k]
                    if hp[u] > 0 and not units[u, U_FEARLESS]:
                        hp[u] -= 1
                        break
        else:
            bm[f] += 1
            if _fails_break(f, forms, bm, fu, fb, units, hp):
                bm[f] = 0
                broken[f] = True
                _withdraw(state, f, fu, fb, units, hp, trapped, True)
    for f in range(n_forms):  # §6.4
        if forms[f, F_SIDE] == loser or not forms[f, F_ASSAULT] or forms[f, F_BROKEN0]:
            continue
        bm[f] += losses_bm[f]
        if _fails_break(f, forms, bm, fu, fb, units, hp):
            bm[f] = 0
            broken[f] = True


@njit(cache=True, inline="always")
def _end_phase(state, forms, bm, broken, fu, fb, units, hp, trapped, rules, tested, passed, alive, tally):
    """The rally of every formation with a living unit and BMs or broken (spec §7).

    ``alive[f]`` = living units of formation ``f`` after the assault (only its own rally changes them).
    """
    for f in range(forms.shape[0]):
        living = alive[f]
        if living == 0 or (bm[f] == 0 and not broken[f]):
            continue
        tested[f] = True
        mod = forms[f, F_ENEMY30] * -1 - 2 * broken[f]
        if forms[f, F_MOB]:
            mod += 2 if living > 10 else (1 if living > 5 else 0)
        tries = 1 + (_count(f, fu, fb, units, hp, U_SC) if rules[R_SC_REROLL] and forms[f, F_ANY_SC] else 0)
        ok = False
        for _ in range(tries):
            roll = d6(state)
            tally[0] += 1
            ok = roll + mod >= forms[f, F_INIT] and not (rules[R_NAT1] and roll == 1)
            if ok:
                break
        leaders = _count(f, fu, fb, units, hp, U_LEADER) if rules[R_LEADERS] and forms[f, F_ANY_LEADER] else 0
        per_leader = 2 if forms[f, F_TSKNF] else 1
        if ok:
            passed[f] = True
            if broken[f]:
                broken[f] = False
                bm[f] = (living if forms[f, F_TSKNF] else living // 2) - per_leader * leaders
            else:
                bm[f] = bm[f] // 2 - per_leader * leaders
            bm[f] = max(bm[f], 0)
        elif broken[f]:
            _withdraw(state, f, fu, fb, units, hp, trapped, False)


@njit(cache=True, _nrt=False)
def _run_block(state, units, src, gb, tgt, tb, tbc, asu, ab, forms, fu, fb, trapped, rules, side_off,
               form_off, part, b, n_trials, hp, unsaved, hits, kills, bm, broken, losses_bm, tested, passed,
               cas_a, bm_a, broken_a, alive, tally):
    """``n_trials`` assaults (spec §0-§7) counted into ``part[b]``; the D6 (and D3) rolled add to ``tally[0]``.

    Work arrays: ``hp`` (remaining damage capacity, 1 for a unit that is not a WE), ``unsaved``
    per unit; ``hits[side that rolled, class]``; ``kills`` per side; per formation ``bm``,
    ``broken``, ``losses_bm`` (losses that become a winner's BMs, TP 2.1.22), ``tested``,
    ``passed``, the state after the assault (``cas_a``, ``bm_a``, ``broken_a``) and living units
    (``alive``).  Compiled
    without the runtime (``_nrt=False``): nothing here allocates, and no reference counting
    slows the per-trial code.
    """
    n_units = units.shape[0]
    n_forms = forms.shape[0]
    max_rounds = rules[R_MAX_ROUNDS]
    has_first = gb[G_FIRST + 1] > gb[G_FIRST] or gb[3 + G_FIRST + 1] > gb[3 + G_FIRST]
    has_support = gb[G_SUPPORT + 1] > gb[G_SUPPORT] or gb[3 + G_SUPPORT + 1] > gb[3 + G_SUPPORT]
    for _ in range(n_trials):
        for u in range(n_units):
            hp[u] = units[u, U_DC]
        kills[0] = 0
        kills[1] = 0
        for f in range(n_forms):
            broken[f] = forms[f, F_BROKEN0] != 0
            bm[f] = 0 if broken[f] else forms[f, F_BM0]
            losses_bm[f] = 0
            tested[f] = False
            passed[f] = False
        winner = WIN_UNRESOLVED
        margin = 0
        by_roll = False
        rnd = 1
        while True:  # one round: first strike, normal step, early ends, supporting fire, result
            ended = False
            for step in range(3):
                if step == G_FIRST and not has_first:
                    continue
                if step == G_SUPPORT:  # §3 early ends, after the normal step
                    if not _any_alive(asu, ab[DEFENDER], ab[DEFENDER + 1], hp):
                        winner = WIN_ATT if _any_alive(asu, ab[ATTACKER], ab[ATTACKER + 1], hp) else WIN_NONE
                        ended = True
                        break
                    if not _any_alive(tgt, tb[ATTACKER], tb[ATTACKER + 1], hp):
                        winner = WIN_DEF
                        ended = True
                        break
                    if not has_support:
                        break
                for side in range(2):  # §1 / §4: roll; a bc unit is in contact while an enemy bc unit lives
                    for c in range(N_CLASSES):
                        hits[side, c] = 0
                    g = side * 3 + step
                    if gb[g + 1] == gb[g]:
                        continue
                    contact = _any_alive(tgt, tb[1 - side], tbc[1 - side], hp)
                    for k in range(gb[g], gb[g + 1]):
                        u = src[k, S_UNIT]
                        if hp[u] == 0:
                            continue
                        val = src[k, S_VC] if (contact and units[u, U_ENG] == BC) else src[k, S_VN]
                        if val >= NO_ROLL:
                            continue
                        n = die(state, 3) if src[k, S_D3] else src[k, S_N]
                        tally[0] += n + src[k, S_D3]
                        h = 0
                        for _i in range(n):
                            h += d6(state) >= val
                        hits[side, src[k, S_CLASS]] += h
                for side in range(2):  # §2: allocation and saves, from the living units before removal
                    _allocate(state, hits, 1 - side, tgt, tb[side], tb[side + 1], units, hp, unsaved, tally)
                count_kills = step != G_SUPPORT or rules[R_SF_KILLS] != 0
                for side in range(2):  # remove casualties of both sides together (branch-free)
                    for k in range(tb[side], tb[side + 1]):
                        u = tgt[k]
                        done = min(unsaved[u], hp[u])
                        unsaved[u] = 0
                        hp[u] -= done
                        losses_bm[units[u, U_FORM]] += done * units[u, U_LOSS_BM]
                        kills[1 - side] += done * count_kills
                if step == G_SUPPORT:  # §4: a side wiped out by supporting fire loses without a roll
                    att = _any_alive(asu, ab[ATTACKER], ab[ATTACKER + 1], hp)
                    dfd = _any_alive(asu, ab[DEFENDER], ab[DEFENDER + 1], hp)
                    if not (att and dfd):
                        winner = WIN_ATT if att else (WIN_DEF if dfd else WIN_NONE)
                        ended = True
            if ended:
                break
            tally[0] += 4
            margin = _margin(state, kills, units, hp, asu, ab, forms, bm, broken, fu, fb, rules)
            if margin != 0:
                by_roll = True
                winner = WIN_ATT if margin > 0 else WIN_DEF
                break
            if rnd == max_rounds:
                break
            rnd += 1
        if winner == WIN_ATT or winner == WIN_DEF:
            _consequences(state, winner, abs(margin), forms, bm, broken, losses_bm, fu, fb, units, hp, asu, ab,
                          trapped)
        _living(units, hp, alive)
        for f in range(n_forms):
            cas_a[f] = fb[f + 1] - fb[f] - alive[f]
            bm_a[f] = bm[f]
            broken_a[f] = broken[f]
        if rules[R_RALLY]:
            _end_phase(state, forms, bm, broken, fu, fb, units, hp, trapped, rules, tested, passed, alive, tally)
            _living(units, hp, alive)
        # the slots of analysis/epic/outcome.py::record
        part[b, side_off[winner]] += 1
        part[b, side_off[O_NOROLL]] += winner != WIN_UNRESOLVED and not by_roll
        part[b, side_off[O_ROUNDS] + rnd - 1] += 1
        if by_roll:
            part[b, side_off[O_MARGIN] + margin + side_off[O_MAX_MARGIN]] += 1
        for f in range(n_forms):
            n_f = fb[f + 1] - fb[f]
            dead = n_f - alive[f]
            cap = forms[f, F_CAP]
            part[b, form_off[f, FO_DESTROYED]] += dead == n_f
            part[b, form_off[f, FO_BROKEN_A]] += broken_a[f]
            part[b, form_off[f, FO_BROKEN_E]] += broken[f]
            part[b, form_off[f, FO_TESTED]] += tested[f]
            part[b, form_off[f, FO_PASSED]] += passed[f]
            part[b, form_off[f, FO_CAS] + dead] += 1
            part[b, form_off[f, FO_CAS_A] + cas_a[f]] += 1
            part[b, form_off[f, FO_BM_A] + min(bm_a[f], cap)] += 1
            part[b, form_off[f, FO_BM_E] + min(bm[f], cap)] += 1


@njit(cache=True, parallel=True)
def assault_kernel(units, src, gb, tgt, tb, tbc, asu, ab, forms, fu, fb, trapped, rules, side_off, form_off,
                   n_counts, key0, key1, first_block, n_trials):
    """Run ``n_trials`` assaults from stream block ``first_block``: (int64[n_counts], D6 and D3 rolled).

    Tables (built by ``analysis.epic.engine.KernelArrays``, columns named above): ``units``
    int64[N, U_COLS] in allocation order; attack sources ``src`` int64[S, S_COLS] sorted by group
    ``side * 3 + step`` with bounds ``gb``; ``tgt`` each side's directly engaged assault units (bounds
    ``tb``, its ``bc`` units first, up to ``tbc``); ``asu`` each side's assault units (bounds ``ab``);
    ``forms`` int64[F, F_COLS] with member units ``fu`` (bounds ``fb``) and ``trapped`` float64[F];
    ``rules`` int64[R_COLS]; count offsets ``side_off`` and ``form_off``.
    """
    n_blocks = (n_trials + BLOCK_TRIALS - 1) // BLOCK_TRIALS
    part = np.zeros((n_blocks, n_counts), np.int64)
    dice = np.zeros(n_blocks, np.int64)
    n_units = units.shape[0]
    n_forms = forms.shape[0]
    for b in prange(n_blocks):
        state = np.empty(4, np.uint64)
        seed_stream(state, key0, key1, first_block + b)
        tally = np.zeros(1, np.int64)
        _run_block(state, units, src, gb, tgt, tb, tbc, asu, ab, forms, fu, fb, trapped, rules, side_off,
                   form_off, part, b, min(BLOCK_TRIALS, n_trials - b * BLOCK_TRIALS),
                   np.empty(n_units, np.int64), np.zeros(n_units, np.int64), np.zeros((2, N_CLASSES), np.int64),
                   np.zeros(2, np.int64), np.zeros(n_forms, np.int64), np.zeros(n_forms, np.bool_),
                   np.zeros(n_forms, np.int64), np.zeros(n_forms, np.bool_), np.zeros(n_forms, np.bool_),
                   np.zeros(n_forms, np.int64), np.zeros(n_forms, np.int64), np.zeros(n_forms, np.bool_),
                   np.zeros(n_forms, np.int64), tally)
        dice[b] = tally[0]
    return part.sum(axis=0), dice.sum()
