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
U_SIDE, U_FORM, U_ENG, U_SAVE, U_ARMOUR, U_DC, U_RA, U_INV, U_FEARLESS, U_INSPIRING, U_LEADER, \
    U_SC, U_SPEED0, U_SNIPE, U_LOSS_BM, U_ASSAULT = range(16)
U_COLS = 16
# Attack-source table columns (int64[S, S_COLS]): a unit's main dice or one extra-attack line.
S_UNIT, S_N, S_D3, S_VC, S_VN, S_CLASS = range(6)
S_COLS = 6
# Source groups (rows of the source table are sorted by group): side * 3 + step.
G_FIRST, G_NORMAL, G_SUPPORT = 0, 1, 2
# Hit classes: kind (0 ordinary, 1 macro-weapon, 2 titan-killer) + 3 if sniper.
N_CLASSES = 6
# Formation table columns (int64[F, F_COLS]).
F_SIDE, F_ASSAULT, F_INIT, F_BM0, F_BROKEN0, F_TSKNF, F_MOB, F_ENEMY30, F_ALL_EXP, F_CAP = range(10)
F_COLS = 10
# Rule switches (int64[R_COLS]).
R_SUM, R_NAT1, R_MAX_ROUNDS, R_SF_KILLS, R_INSP_ENGAGED, R_LEADERS, R_SC_REROLL, R_RALLY = range(8)
R_COLS = 8
# Side-level count offsets (int64[O_COLS]).
O_ATT, O_DEF, O_NONE, O_UNRES, O_NOROLL, O_ROUNDS, O_MARGIN, O_MAX_MARGIN = range(8)
O_COLS = 8
# Per-formation count offsets (int64[F, FO_COLS]).
FO_DESTROYED, FO_BROKEN_A, FO_BROKEN_E, FO_TESTED, FO_PASSED, FO_CAS, FO_CAS_A, FO_BM_A, FO_BM_E = range(9)
FO_COLS = 9

BC = 0
ATTACKER, DEFENDER = 0, 1
WIN_NONE, WIN_ATT, WIN_DEF, WIN_UNRESOLVED = 0, 1, 2, 3


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
def _roll_hits(state, n, val):
    """Hits of ``n`` dice hitting on D6 >= ``val`` (branch-free count)."""
    h = 0
    for _ in range(n):
        h += d6(state) >= val
    return h


@njit(cache=True)
def _roll_group(state, src, lo, hi, units, hp, contact, hits, tally):
    """Roll the sources ``src[lo:hi]`` of living units into ``hits`` (per hit class), §1 and §4.

    ``contact`` = the enemy side has a living ``bc`` unit of its assault formations.
    """
    for k in range(lo, hi):
        u = src[k, S_UNIT]
        if hp[u] == 0:
            continue
        val = src[k, S_VC] if (contact and units[u, U_ENG] == BC) else src[k, S_VN]
        if val >= NO_ROLL:
            continue
        n = die(state, 3) if src[k, S_D3] else src[k, S_N]
        tally[0] += n
        hits[src[k, S_CLASS]] += _roll_hits(state, n, val)


@njit(cache=True, inline="always")
def _failed(state, cls, save, armour, ra, inv, tally):
    """Is one hit of class ``cls`` unsaved (§2 saves)?  ``save`` = min(armour, cover)."""
    sniper = cls >= 3
    kind = cls - 3 if sniper else cls
    if kind == 0:
        target = save + sniper
        failed = True
        if target < NO_ROLL:
            tally[0] += 1
            failed = d6(state) < target
            if failed and ra:
                tally[0] += 1
                failed = d6(state) < target
    elif kind == 1 and ra and armour + sniper < NO_ROLL:
        tally[0] += 1
        failed = d6(state) < armour + sniper
    else:
        failed = True
    if failed and inv:
        tally[0] += 1
        failed = d6(state) < 6
    return failed


@njit(cache=True)
def _allocate(state, hits, tgt, tlo, thi, units, hp, unsaved, tally):
    """Allocate one side's hits of one step to the enemy's directly engaged units and roll saves (§2).

    Sniper hits go to the first eligible Inspiring / Leader / Supreme Commander (else the first
    eligible unit); then ordinary, macro-weapon and titan-killer hits round-robin in allocation
    order, a war engine taking up to its starting DC hits per pass.  Unsaved hits add to ``unsaved``.
    """
    first = -1
    snipe = -1
    weight = 0
    for k in range(tlo, thi):
        u = tgt[k]
        if hp[u] > 0:
            weight += units[u, U_DC]
            if first < 0:
                first = u
            if snipe < 0 and units[u, U_SNIPE]:
                snipe = u
    if first < 0:
        return
    if snipe < 0:
        snipe = first
    for cls in range(3, N_CLASSES):
        for _ in range(hits[cls]):
            unsaved[snipe] += _failed(state, cls, units[snipe, U_SAVE], units[snipe, U_ARMOUR],
                                      units[snipe, U_RA], units[snipe, U_INV], tally)
    n_ord = hits[0]
    n_mw = n_ord + hits[1]
    total = n_mw + hits[2]
    pos = 0
    while pos < total:
        for k in range(tlo, thi):
            u = tgt[k]
            if hp[u] == 0:
                continue
            end = min(pos + units[u, U_DC], total)
            for p in range(pos, end):
                cls = 0 if p < n_ord else (1 if p < n_mw else 2)
                unsaved[u] += _failed(state, cls, units[u, U_SAVE], units[u, U_ARMOUR],
                                      units[u, U_RA], units[u, U_INV], tally)
            pos = end
            if pos == total:
                break


@njit(cache=True)
def _apply(lo, hi, tgt, units, hp, unsaved, kills, enemy, losses_bm, count_kills):
    """Remove casualties: a unit loses min(unsaved, remaining DC); kills and losses count points (§2).

    ``losses_bm`` counts the losses that turn into a winner's BMs (Expendable excluded, TP 2.1.22).
    """
    for k in range(lo, hi):
        u = tgt[k]
        if unsaved[u] == 0:
            continue
        done = min(unsaved[u], hp[u])
        unsaved[u] = 0
        hp[u] -= done
        losses_bm[units[u, U_FORM]] += done * units[u, U_LOSS_BM]
        if count_kills:
            kills[enemy] += done


@njit(cache=True)
def _bc_alive(side, units, hp, tgt, tbounds):
    for k in range(tbounds[side], tbounds[side + 1]):
        u = tgt[k]
        if hp[u] > 0 and units[u, U_ENG] == BC:
            return True
    return False


@njit(cache=True)
def _step(state, src, gb, step, units, hp, tgt, tbounds, unsaved, hits, kills, losses_bm,
          count_kills, tally):
    """One simultaneous step of both sides (first strike, normal or supporting fire)."""
    hits[:] = 0
    for side in range(2):
        g = side * 3 + step
        if gb[g + 1] > gb[g]:
            contact = _bc_alive(1 - side, units, hp, tgt, tbounds)
            _roll_group(state, src, gb[g], gb[g + 1], units, hp, contact, hits[side], tally)
    for side in range(2):
        _allocate(state, hits[1 - side], tgt, tbounds[side], tbounds[side + 1], units, hp, unsaved, tally)
    for side in range(2):
        _apply(tbounds[side], tbounds[side + 1], tgt, units, hp, unsaved, kills, 1 - side, losses_bm,
               count_kills)


@njit(cache=True)
def _withdraw(state, f, fu, fb, units, hp, trapped, speed_zero_die):
    """Withdrawal (§6.2): speed-0 ``bc``/``ff`` units die (if asked), others die with P(trapped)."""
    p = trapped[f]
    for k in range(fb[f], fb[f + 1]):
        u = fu[k]
        if hp[u] == 0 or units[u, U_FEARLESS]:
            continue
        if speed_zero_die and units[u, U_SPEED0] and units[u, U_ENG] != 2:
            hp[u] = 0
        elif p > 0.0 and uniform(state) < p:
            hp[u] = 0


@njit(cache=True)
def _size(f, fu, fb, units, hp):
    """Formation size: living units, a war engine counting its starting DC (TP 3.3.3)."""
    s = 0
    for k in range(fb[f], fb[f + 1]):
        u = fu[k]
        if hp[u] > 0:
            s += units[u, U_DC]
    return s


@njit(cache=True)
def _living(f, fu, fb, hp):
    n = 0
    for k in range(fb[f], fb[f + 1]):
        n += hp[fu[k]] > 0
    return n


@njit(cache=True)
def _leaders(f, fu, fb, units, hp, col):
    n = 0
    for k in range(fb[f], fb[f + 1]):
        u = fu[k]
        n += (hp[u] > 0) & (units[u, col] != 0)
    return n


@njit(cache=True)
def _result_score(state, side, kills, units, hp, asu, ab, forms, bm, broken, fu, fb, rules):
    """One side's result roll (§5): highest (or sum) of 2D6 + modifiers."""
    other = 1 - side
    a = d6(state)
    b = d6(state)
    score = a + b if rules[R_SUM] else max(a, b)
    score += kills[side]
    n_units = np.zeros(2, np.int64)
    inspiring = 0
    for s in range(2):
        for k in range(ab[s], ab[s + 1]):
            u = asu[k]
            if hp[u] > 0:
                n_units[s] += units[u, U_DC]
                if s == side and units[u, U_INSPIRING] and (not rules[R_INSP_ENGAGED] or units[u, U_ENG] != 2):
                    inspiring += 1
    if n_units[side] > n_units[other]:
        score += 1
        if n_units[side] > 2 * n_units[other]:
            score += 1
    bm_count = np.zeros(2, np.int64)
    raw = 0
    for f in range(forms.shape[0]):
        if not forms[f, F_ASSAULT]:
            continue
        s = forms[f, F_SIDE]
        if broken[f]:
            v = _size(f, fu, fb, units, hp)
            bm_count[s] += v
            raw += v * (s == side)
        else:
            bm_count[s] += bm[f] // 2 if forms[f, F_TSKNF] else bm[f]
            raw += bm[f] * (s == side)
    if raw == 0:
        score += 1
    if bm_count[other] > bm_count[side]:
        score += 1
    return score + inspiring


@njit(cache=True)
def _extra_hits(hits, loser, units, hp, asu, ab):
    """The loser's extra hits (§6.1): one pass over living non-Fearless units, no saves."""
    for k in range(ab[loser], ab[loser + 1]):
        if hits == 0:
            return
        u = asu[k]
        if hp[u] == 0 or units[u, U_FEARLESS]:
            continue
        take = min(units[u, U_DC], hits)
        hits -= take
        hp[u] = max(hp[u] - take, 0)


@njit(cache=True)
def _break_test(f, forms, bm, fu, fb, units, hp):
    size = _size(f, fu, fb, units, hp)
    return bm[f] >= (2 * size if forms[f, F_TSKNF] else size)


@njit(cache=True)
def _consequences(state, winner, margin, forms, bm, broken, losses_bm, fu, fb, units, hp, asu, ab,
                  trapped):
    """Extra hits, the loser breaks or is destroyed, nearby BMs, the winner's BMs (§6)."""
    loser = DEFENDER if winner == WIN_ATT else ATTACKER
    win_side = 1 - loser
    if margin > 0:
        all_tsknf = True
        for f in range(forms.shape[0]):
            if forms[f, F_SIDE] == loser and forms[f, F_ASSAULT] and not forms[f, F_TSKNF]:
                all_tsknf = False
        _extra_hits(margin // 2 if all_tsknf else margin, loser, units, hp, asu, ab)
    for f in range(forms.shape[0]):
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
    for f in range(forms.shape[0]):
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
            if _break_test(f, forms, bm, fu, fb, units, hp):
                bm[f] = 0
                broken[f] = True
                _withdraw(state, f, fu, fb, units, hp, trapped, True)
    for f in range(forms.shape[0]):
        if forms[f, F_SIDE] != win_side or not forms[f, F_ASSAULT] or forms[f, F_BROKEN0]:
            continue
        bm[f] += losses_bm[f]
        if _break_test(f, forms, bm, fu, fb, units, hp):
            bm[f] = 0
            broken[f] = True


@njit(cache=True)
def _end_phase(state, forms, bm, broken, fu, fb, units, hp, trapped, rules, tested, passed, tally):
    """End-phase rally of every formation with BMs or broken (§7)."""
    for f in range(forms.shape[0]):
        living = _living(f, fu, fb, hp)
        if living == 0 or (bm[f] == 0 and not broken[f]):
            continue
        tested[f] = True
        mod = 0
        if broken[f]:
            mod -= 2
        if forms[f, F_ENEMY30]:
            mod -= 1
        if forms[f, F_MOB]:
            mod += 2 if living > 10 else (1 if living > 5 else 0)
        tries = 1 + (_leaders(f, fu, fb, units, hp, U_SC) if rules[R_SC_REROLL] else 0)
        ok = False
        for _ in range(tries):
            roll = d6(state)
            tally[0] += 1
            ok = roll + mod >= forms[f, F_INIT] and not (rules[R_NAT1] and roll == 1)
            if ok:
                break
        leaders = _leaders(f, fu, fb, units, hp, U_LEADER) if rules[R_LEADERS] else 0
        if ok:
            passed[f] = True
            if broken[f]:
                broken[f] = False
                bm[f] = living - 2 * leaders if forms[f, F_TSKNF] else living // 2 - leaders
            else:
                bm[f] = bm[f] // 2 - (2 * leaders if forms[f, F_TSKNF] else leaders)
            bm[f] = max(bm[f], 0)
        elif broken[f]:
            _withdraw(state, f, fu, fb, units, hp, trapped, False)


@njit(cache=True)
def _dead(f, fu, fb, hp):
    n = 0
    for k in range(fb[f], fb[f + 1]):
        n += hp[fu[k]] == 0
    return n


@njit(cache=True)
def _trial(state, units, src, gb, tgt, tb, asu, ab, forms, fu, fb, trapped, rules, side_off, form_off,
           hp, unsaved, hits, kills, bm, broken, losses_bm, tested, passed, cas_a, bm_a, broken_a,
           out, tally):
    """One assault from the first round to the end phase; adds its outcome to ``out`` (§1-§7)."""
    n_forms = forms.shape[0]
    hp[:] = units[:, U_DC]
    kills[:] = 0
    losses_bm[:] = 0
    tested[:] = False
    passed[:] = False
    for f in range(n_forms):
        broken[f] = forms[f, F_BROKEN0] != 0
        bm[f] = 0 if broken[f] else forms[f, F_BM0]
    winner = WIN_UNRESOLVED
    margin = 0
    by_roll = False
    rnd = 1
    max_rounds = rules[R_MAX_ROUNDS]
    while True:
        if gb[G_FIRST + 1] > gb[G_FIRST] or gb[3 + G_FIRST + 1] > gb[3 + G_FIRST]:
            _step(state, src, gb, G_FIRST, units, hp, tgt, tb, unsaved, hits, kills, losses_bm,
                  True, tally)
        _step(state, src, gb, G_NORMAL, units, hp, tgt, tb, unsaved, hits, kills, losses_bm,
              True, tally)
        alive_def = False
        alive_att = False
        for k in range(ab[DEFENDER], ab[DEFENDER + 1]):
            alive_def |= hp[asu[k]] > 0
        for k in range(ab[ATTACKER], ab[ATTACKER + 1]):
            alive_att |= hp[asu[k]] > 0
        if not alive_def:
            winner = WIN_ATT if alive_att else WIN_NONE
            break
        engaged_att = False
        for k in range(tb[ATTACKER], tb[ATTACKER + 1]):
            engaged_att |= hp[tgt[k]] > 0
        if not engaged_att:
            winner = WIN_DEF
            break
        if gb[G_SUPPORT + 1] > gb[G_SUPPORT] or gb[3 + G_SUPPORT + 1] > gb[3 + G_SUPPORT]:
            _step(state, src, gb, G_SUPPORT, units, hp, tgt, tb, unsaved, hits, kills, losses_bm,
                  rules[R_SF_KILLS] != 0, tally)
            alive_def = False
            alive_att = False
            for k in range(ab[DEFENDER], ab[DEFENDER + 1]):
                alive_def |= hp[asu[k]] > 0
            for k in range(ab[ATTACKER], ab[ATTACKER + 1]):
                alive_att |= hp[asu[k]] > 0
            if not (alive_def and alive_att):
                winner = WIN_ATT if alive_att else (WIN_DEF if alive_def else WIN_NONE)
                break
        tally[0] += 4
        s_att = _result_score(state, ATTACKER, kills, units, hp, asu, ab, forms, bm, broken, fu, fb, rules)
        s_def = _result_score(state, DEFENDER, kills, units, hp, asu, ab, forms, bm, broken, fu, fb, rules)
        if s_att != s_def:
            margin = s_att - s_def
            by_roll = True
            winner = WIN_ATT if margin > 0 else WIN_DEF
            break
        if rnd == max_rounds:
            break
        rnd += 1
    if winner == WIN_ATT or winner == WIN_DEF:
        _consequences(state, winner, abs(margin) if by_roll else 0, forms, bm, broken, losses_bm, fu, fb,
                      units, hp, asu, ab, trapped)
    for f in range(n_forms):
        cas_a[f] = _dead(f, fu, fb, hp)
        bm_a[f] = bm[f]
        broken_a[f] = broken[f]
    if rules[R_RALLY]:
        _end_phase(state, forms, bm, broken, fu, fb, units, hp, trapped, rules, tested, passed, tally)
    # record (analysis/epic/outcome.py: record)
    if winner == WIN_ATT:
        out[side_off[O_ATT]] += 1
    elif winner == WIN_DEF:
        out[side_off[O_DEF]] += 1
    elif winner == WIN_NONE:
        out[side_off[O_NONE]] += 1
    else:
        out[side_off[O_UNRES]] += 1
    out[side_off[O_NOROLL]] += (winner != WIN_UNRESOLVED) & (not by_roll)
    out[side_off[O_ROUNDS] + rnd - 1] += 1
    if by_roll:
        out[side_off[O_MARGIN] + margin + side_off[O_MAX_MARGIN]] += 1
    for f in range(n_forms):
        o = form_off[f]
        dead = _dead(f, fu, fb, hp)
        out[o[FO_DESTROYED]] += dead == fb[f + 1] - fb[f]
        out[o[FO_BROKEN_A]] += broken_a[f]
        out[o[FO_BROKEN_E]] += broken[f]
        out[o[FO_TESTED]] += tested[f]
        out[o[FO_PASSED]] += passed[f]
        out[o[FO_CAS] + dead] += 1
        out[o[FO_CAS_A] + cas_a[f]] += 1
        cap = forms[f, F_CAP]
        out[o[FO_BM_A] + min(bm_a[f], cap)] += 1
        out[o[FO_BM_E] + min(bm[f], cap)] += 1


@njit(cache=True, parallel=True)
def assault_kernel(units, src, gb, tgt, tb, asu, ab, forms, fu, fb, trapped, rules, side_off, form_off,
                   n_counts, key0, key1, first_block, n_trials):
    """Run ``n_trials`` assaults from stream block ``first_block``; returns (int64[n_counts], D6 rolled).

    Arrays (built by ``analysis.epic.engine.KernelArrays``): ``units`` int64[N, U_COLS]; attack
    sources ``src`` int64[S, S_COLS] sorted by group with bounds ``gb`` (side * 3 + step);
    ``tgt``/``tb`` each side's directly engaged assault units; ``asu``/``ab`` each side's assault
    units; ``forms`` int64[F, F_COLS] with member units ``fu``/``fb`` and ``trapped`` float64[F];
    ``rules`` int64[R_COLS]; count offsets ``side_off`` and ``form_off``.
    """
    n_units = units.shape[0]
    n_forms = forms.shape[0]
    n_blocks = (n_trials + BLOCK_TRIALS - 1) // BLOCK_TRIALS
    part = np.zeros((n_blocks, n_counts), np.int64)
    dice = np.zeros(n_blocks, np.int64)
    for b in prange(n_blocks):
        state = np.empty(4, np.uint64)
        seed_stream(state, key0, key1, first_block + b)
        hp = np.empty(n_units, np.int64)
        unsaved = np.zeros(n_units, np.int64)
        hits = np.zeros((2, N_CLASSES), np.int64)
        kills = np.zeros(2, np.int64)
        bm = np.zeros(n_forms, np.int64)
        broken = np.zeros(n_forms, np.bool_)
        losses_bm = np.zeros(n_forms, np.int64)
        tested = np.zeros(n_forms, np.bool_)
        passed = np.zeros(n_forms, np.bool_)
        cas_a = np.zeros(n_forms, np.int64)
        bm_a = np.zeros(n_forms, np.int64)
        broken_a = np.zeros(n_forms, np.bool_)
        tally = np.zeros(1, np.int64)
        out = part[b]
        for _ in range(min(BLOCK_TRIALS, n_trials - b * BLOCK_TRIALS)):
            _trial(state, units, src, gb, tgt, tb, asu, ab, forms, fu, fb, trapped, rules, side_off, form_off,
                   hp, unsaved, hits, kills, bm, broken, losses_bm, tested, passed, cas_a, bm_a,
                   broken_a, out, tally)
        dice[b] = tally[0]
    return part.sum(axis=0), dice.sum()
