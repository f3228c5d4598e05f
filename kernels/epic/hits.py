"""The Epic kernel's hit model: one kind code and one flag set for every hit (an assault's, a shooting attack's, a
critical's splash, a war engine's damage), and the save rule every save site calls.

Clauses: TP = NetEA Tournament Pack; spec §n = docs/epic-engine.md; turn §n = docs/epic-turn.md.

A hit's **kind** (``KIND_*``) says which saves it allows and, for a shooting attack's direct hits, which units may
take it (AP: infantry and light vehicles, AT: vehicles; turn §3.7).  An assault's hits are AP (its ordinary hits),
MW or TK; a critical's splash hits (units column ``U_SPLASH_KIND``) AP, MW, TK or NO_SAVE.  The shooting step
allocates AP and AT hits together, then MW and TK hits (turn §3.7: :func:`_step_kinds`).  An assault's hit
*class* (the rows of ``Fight.hits``, the source table's ``S_CLASS``) is the slot of its kind (0 AP,
1 MW, 2 TK) plus ``ASSAULT_KINDS`` for a sniper's: :func:`_class_kind` gives its kind.

A hit's **flags** (``H_*``, one bit each) say what else it does.

The constants are np.int64 values (wargame_odds.kernels.epic.layout._int64s says why); the functions are small scalar
helpers that LLVM inlines into their callers (wargame_odds.kernels.epic.access).  The saves are rolled by
wargame_odds.kernels.epic.saves._save; the break test is wargame_odds.kernels.epic.breaks._fails_break.
"""
import numpy as np

from .access import _min, kernel_function

NO_ROLL = np.int64(7)  # a to-hit or save value no D6 reaches (np.int64: access.INT0 says why)

#: An ordinary hit (TP 1.9.5, 1.12.5): an assault's ordinary hit, a splash's "ordinary", a shooting AP hit.
#: Saves: armour or cover, the better; Reinforced Armour's re-roll on armour (TP 1.9.6, 2.1.11).
KIND_AP = np.int64(0)
#: A shooting attack's AT hit (TP 1.9.5): saved as an ordinary hit, taken only by vehicles (turn §3.7).
KIND_AT = np.int64(1)
#: A macro-weapon hit (TP 2.2.6): only Reinforced Armour's armour save, no re-roll; no cover.
KIND_MW = np.int64(2)
#: A titan-killer hit (TP 2.2.9): no armour save; on a war engine it does D3 / D6 points (TP 3.2.5).
KIND_TK = np.int64(3)
#: A hit with no save at all: a broken formation's hit (TP 1.13.4), a critical's "no save" splash (spec §10.6).
KIND_NO_SAVE = np.int64(4)

#: The kinds an assault's hits have (AP, MW, TK: the slots 0, 1, 2 of its hit classes, :func:`_class_kind`).
ASSAULT_KINDS = 3
assert (KIND_MW, KIND_TK) == (KIND_AP + 2, KIND_AP + 3), "_class_kind maps the slots 0, 1, 2 to AP, MW, TK"

#: No flags.
NO_FLAGS = np.int64(0)
#: A sniper's hit (TP 2.1.14): its saves are 1 worse; an assault's picks its target.
H_SNIPER = np.int64(1)
#: Lance (TP 2.2.5): no Reinforced Armour re-roll.
H_LANCE = np.int64(2)
#: Ignore Cover (TP 2.2.4): no cover save.
H_IC = np.int64(4)
#: Supporting fire (TP 1.12.6): a knight shield does not save it (spec §10.3).
H_SUPPORT = np.int64(8)
#: A firefight hit (TP 1.12.5): void shields, power fields and shadowfields stop it (spec §10.2).
H_FF = np.int64(16)
#: Disrupt (TP 2.2.2): a hit that gets through places a BM and does no damage.
H_DISRUPT = np.int64(32)


@kernel_function
def _class_kind(cls):
    """The kind (KIND_AP, KIND_MW or KIND_TK) of an assault hit of class ``cls`` (sniper or not)."""
    slot = cls - ASSAULT_KINDS * np.int64(cls >= ASSAULT_KINDS)
    return slot + np.int64(slot > 0)


@kernel_function
def _step_kinds(step):
    """The two kinds a shooting attack's allocation step ``step`` pools (turn §3.7): 0 the normal hits, AP and AT;
    1 the macro-weapon hits, MW and TK."""
    if step == 0:
        return KIND_AP, KIND_AT
    return KIND_MW, KIND_TK


@kernel_function
def _ordinary(kind):
    """Is a hit of ``kind`` an ordinary one (AP or AT: armour or cover, TP 1.9.6)?"""
    return kind == KIND_AP or kind == KIND_AT


@kernel_function
def _save_targets(kind, flags, armour, cover, ra, worse):
    """The save rule (TP 1.8.3, 1.9.6, 1.11, 2.1.11, 2.1.14, 2.2.5, 2.2.6, 2.2.9; spec §2; turn §3.8), written once:
    the first save roll and Reinforced Armour's re-roll (each a D6 value, NO_ROLL none) of one hit of ``kind`` and
    ``flags`` on a unit with the armour save ``armour``, the cover save ``cover`` (NO_ROLL none) and Reinforced
    Armour ``ra``, both saves ``worse`` (Crossfire, Sniper: TP 1.11, 2.1.14).  Ordinary: armour or cover (not
    against Ignore Cover), the better, then the re-roll on armour (not against Lance); MW: armour with Reinforced
    Armour only, no re-roll; TK and no save: none.  The invulnerable-type save comes after these (:func:`_save`).
    Returns (first, re-roll)."""
    armour = _min(armour + worse, NO_ROLL)
    if _ordinary(kind):
        first = armour
        if cover < NO_ROLL and (flags & H_IC) == 0:
            first = _min(armour, _min(cover + worse, NO_ROLL))
        return first, (armour if ra and (flags & H_LANCE) == 0 else NO_ROLL)
    if kind == KIND_MW and ra:
        return armour, NO_ROLL
    return NO_ROLL, NO_ROLL
