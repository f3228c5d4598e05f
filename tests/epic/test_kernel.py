"""The Numba kernel against the reference engine (every reported quantity, 5σ), exact small cases,
reproducibility (threads, chunk sizes, precision runs) and flat memory.

The scenarios below together exercise every rule of ``docs/epic-engine.md``; the tag list above each
says which.  Seeds are fixed, so these statistical tests cannot flake; tolerances are 5 standard
errors of the two-sample difference and never widened.
"""
import math
from fractions import Fraction

import numpy as np
import pytest

from analysis.epic import simulate
from analysis.epic.compile import compile_scenario
from analysis.epic.engine import KernelJob
from analysis.epic import loads
from kernels.epic import layout as K
from epic_helpers import SIGMAS, compare_results

KERNEL_TRIALS = 1_000_000
REFERENCE_TRIALS = 24_000

HEADER = 'system = "epic"\n'

SCENARIOS = {
    # TSKNF, Mob Rule, support formation, Leader, bc extra attack, out units, the issue's example
    "issue_example": HEADER + """
title = "Assault Marines jump an Ork warband"
[units.assault]
type = "INF"
armour = 4
cc = 3
ff = 5
special = ["jump-packs"]
[units.tactical]
type = "INF"
armour = 4
cc = 4
ff = 4
[units.boyz]
type = "INF"
armour = 6
cc = 4
ff = 6
[units.nobz]
type = "INF"
armour = 4
cc = 3
ff = 5
special = ["leader"]
extra_attacks = [{ count = 1, range = "bc" }]
[[formations]]
name = "Assault Detachment"
side = "attacker"
army_rules = ["they-shall-know-no-fear"]
initiative = 1
blast_markers = 1
units = [{ unit = "assault", count = 4, engaged = "bc" }, { unit = "assault", count = 1, engaged = "ff" }]
[[formations]]
name = "Tactical Detachment"
side = "attacker"
role = "support"
army_rules = ["they-shall-know-no-fear"]
initiative = 1
units = [{ unit = "tactical", count = 3, engaged = "ff" }]
[[formations]]
name = "Warband"
side = "defender"
army_rules = ["mob-rule"]
initiative = 3
blast_markers = 2
units = [
  { unit = "boyz", count = 6, engaged = "bc" },
  { unit = "nobz", count = 1, engaged = "bc" },
  { unit = "boyz", count = 3, engaged = "ff" },
  { unit = "boyz", count = 2, engaged = "out" },
]
[end_phase]
enemy_within_30cm = true
""",
    # Fearless, Inspiring, Supreme Commander (re-rolls, Leader), character host, Expendable
    # (whole formation and mixed), invulnerable save, cover, trapped withdrawal, Mob Rule > 10
    "fearless_inspiring_expendable": HEADER + """
[units.guard]
type = "INF"
armour = 6
cc = 5
ff = 5
special = ["expendable"]
[units.commissar]
type = "CH"
special = ["inspiring", "leader"]
extra_attacks = [{ count = 1, range = "bc" }]
[units.ogryn]
type = "INF"
armour = 4
cc = 3
ff = 6
special = ["fearless"]
[units.grots]
type = "INF"
cc = 6
ff = 6
special = ["expendable"]
[units.warboss]
type = "INF"
armour = 4
cc = 3
ff = 5
special = ["supreme-commander", "invulnerable-save", "inspiring"]
[units.boyz]
type = "INF"
armour = 6
cc = 4
ff = 6
[[formations]]
name = "Guard Company"
side = "attacker"
initiative = 2
blast_markers = 1
trapped = 0.3
units = [
  { unit = "guard", count = 5, engaged = "bc", characters = ["commissar"] },
  { unit = "ogryn", count = 2, engaged = "bc" },
  { unit = "guard", count = 3, engaged = "ff" },
]
[[formations]]
name = "Warband"
side = "defender"
army_rules = ["mob-rule"]
initiative = 3
blast_markers = 3
cover = 5
trapped = 0.5
units = [
  { unit = "warboss", count = 1, engaged = "bc" },
  { unit = "boyz", count = 5, engaged = "bc" },
  { unit = "boyz", count = 4, engaged = "ff" },
  { unit = "grots", count = 3, engaged = "out" },
]
[[formations]]
name = "Grot Mob"
side = "defender"
role = "support"
initiative = 3
units = [{ unit = "grots", count = 4, engaged = "ff" }]
""",
    # War engines on both sides: starting-DC dice, damage, allocation passes, WE 15cm lines in
    # contact, macro-weapon and titan-killer lines, reinforced armour, Fearless WE, extra hits on a
    # damaged WE, WE counting its DC in unit counts and break tests
    "war_engines": HEADER + """
[units.warhound]
type = "WE"
armour = 5
cc = 4
ff = 4
damage_capacity = 3
special = ["reinforced-armour", "fearless"]
extra_attacks = [{ count = 1, range = "15cm", macro_weapon = true }, { count = 1, range = "bc", titan_killer = true }]
[units.stompa]
type = "WE"
armour = 4
cc = 4
ff = 5
damage_capacity = 2
special = ["reinforced-armour"]
extra_attacks = [{ count = 2, range = "bc", macro_weapon = true }]
[units.skitarii]
type = "INF"
armour = 5
cc = 4
ff = 4
[units.boyz]
type = "INF"
armour = 6
cc = 4
ff = 6
special = ["invulnerable-save"]
[[formations]]
name = "Titan Battlegroup"
side = "attacker"
initiative = 1
units = [{ unit = "warhound", count = 1, engaged = "bc" }, { unit = "skitarii", count = 2, engaged = "ff" }]
[[formations]]
name = "Stompa Mob"
side = "defender"
initiative = 3
blast_markers = 1
units = [
  { unit = "boyz", count = 2, engaged = "bc" },
  { unit = "stompa", count = 1, engaged = "bc" },
  { unit = "boyz", count = 2, engaged = "ff" },
]
[[formations]]
name = "Lootas"
side = "defender"
role = "nearby"
initiative = 3
units = [{ unit = "boyz", count = 3, engaged = "out" }]
""",
    # First strike (unit and line), sniper (unit and line, targets the Leader/Inspiring unit first),
    # D3 extra attacks, a first-strike kill turning a bc unit into ff, FF "-" units
    "first_strike_sniper_d3": HEADER + """
[units.banshee]
type = "INF"
armour = 5
cc = 3
ff = 6
special = ["first-strike"]
[units.exarch]
type = "INF"
armour = 4
cc = 3
ff = 5
extra_attacks = [{ count = "D3", range = "bc" }]
[units.ranger]
type = "INF"
armour = 5
cc = 6
ff = 5
special = ["sniper"]
[units.hunter]
type = "INF"
armour = 4
cc = 4
ff = 5
extra_attacks = [{ count = 1, range = "15cm", sniper = true }, { count = "D3", range = "bc", first_strike = true }]
[units.captain]
type = "INF"
armour = 3
cc = 3
ff = 4
special = ["leader", "inspiring"]
[units.tactical]
type = "INF"
armour = 4
cc = 4
ff = 4
[units.chainsword]
type = "INF"
armour = 4
cc = 4
special = ["fearless"]
[[formations]]
name = "Aspect Host"
side = "attacker"
initiative = 1
units = [
  { unit = "banshee", count = 3, engaged = "bc" },
  { unit = "exarch", count = 1, engaged = "bc" },
  { unit = "ranger", count = 2, engaged = "ff" },
  { unit = "hunter", count = 1, engaged = "bc" },
]
[[formations]]
name = "Company"
side = "defender"
initiative = 1
blast_markers = 1
units = [
  { unit = "tactical", count = 2, engaged = "bc" },
  { unit = "captain", count = 1, engaged = "ff" },
  { unit = "chainsword", count = 2, engaged = "ff" },
  { unit = "tactical", count = 2, engaged = "ff" },
]
""",
    # Combined attackers and intermingled defenders (one broken at the start: destroyed when its
    # side loses), support formations on both sides (one broken: no supporting fire, takes a
    # no-save hit when its side loses), winners' BMs formation by formation
    "intermingled_combined_support": HEADER + """
[units.trooper]
type = "INF"
armour = 5
cc = 4
ff = 4
[units.vet]
type = "INF"
armour = 4
cc = 3
ff = 4
special = ["fearless"]
[units.rhino]
type = "AV"
armour = 5
ff = 6
[units.militia]
type = "INF"
armour = 6
cc = 5
ff = 5
[[formations]]
name = "Spearhead"
side = "attacker"
initiative = 2
blast_markers = 1
units = [{ unit = "trooper", count = 3, engaged = "bc" }, { unit = "trooper", count = 1, engaged = "out" }]
[[formations]]
name = "Veterans"
side = "attacker"
initiative = 2
units = [{ unit = "vet", count = 2, engaged = "bc" }, { unit = "rhino", count = 1, engaged = "ff" }]
[[formations]]
name = "Fire Base"
side = "attacker"
role = "support"
initiative = 2
blast_markers = 1
units = [{ unit = "trooper", count = 3, engaged = "ff" }, { unit = "trooper", count = 1, engaged = "out" }]
[[formations]]
name = "Militia A"
side = "defender"
initiative = 2
blast_markers = 2
cover = 4
units = [{ unit = "militia", count = 3, engaged = "bc" }, { unit = "militia", count = 2, engaged = "ff" }]
[[formations]]
name = "Militia B"
side = "defender"
initiative = 2
broken = true
cover = 4
units = [{ unit = "militia", count = 2, engaged = "bc" }, { unit = "vet", count = 1, engaged = "ff" }]
[[formations]]
name = "Heavy Support"
side = "defender"
role = "support"
initiative = 2
units = [{ unit = "militia", count = 3, engaged = "ff" }]
[[formations]]
name = "Broken Reserve"
side = "defender"
role = "support"
initiative = 2
broken = true
units = [{ unit = "vet", count = 1, engaged = "ff" }, { unit = "militia", count = 2, engaged = "ff" }]
""",
    # Skimmers (FF in contact, beside a unit that fights in contact), reinforced armour against ordinary and
    # macro-weapon hits, invulnerable saves after disallowed saves, titan-killer sniper hits,
    # Mounted infantry (no cover)
    "skimmer_macro_invulnerable": HEADER + """
[units.falcon]
type = "AV"
armour = 4
cc = 6
ff = 3
special = ["skimmer", "reinforced-armour"]
[units.wraithguard]
type = "INF"
armour = 4
cc = 4
ff = 4
special = ["invulnerable-save", "fearless"]
extra_attacks = [{ count = 1, range = "15cm", macro_weapon = true }]
[units.hellhound]
type = "AV"
armour = 4
cc = 6
ff = 4
special = ["reinforced-armour", "invulnerable-save"]
[units.dragoon]
type = "INF"
armour = 4
cc = 4
ff = 5
special = ["mounted"]
extra_attacks = [{ count = 1, range = "bc", macro_weapon = true },
                 { count = 1, range = "bc", titan_killer = true, sniper = true }]
[[formations]]
name = "Windriders"
side = "attacker"
initiative = 1
units = [{ unit = "falcon", count = 2, engaged = "bc" }, { unit = "wraithguard", count = 1, engaged = "bc" },
         { unit = "wraithguard", count = 2, engaged = "ff" }]
[[formations]]
name = "Armoured Company"
side = "defender"
initiative = 2
cover = 4
units = [{ unit = "hellhound", count = 2, engaged = "bc" }, { unit = "dragoon", count = 2, engaged = "bc" }]
""",
    # Ties and several rounds; max_rounds = 2 leaves some trials unresolved; stalls (only ff
    # attackers can die while out units live)
    "ties_unresolved": HEADER + """
[rules]
max_rounds = 2
[units.a]
type = "INF"
armour = 3
cc = 5
ff = 5
[units.d]
type = "INF"
armour = 3
cc = 5
ff = 5
[[formations]]
name = "A"
side = "attacker"
initiative = 2
units = [{ unit = "a", count = 2, engaged = "ff" }, { unit = "a", count = 1, engaged = "out" }]
[[formations]]
name = "D"
side = "defender"
initiative = 2
units = [{ unit = "d", count = 2, engaged = "ff" }, { unit = "d", count = 1, engaged = "out" }]
""",
    # result_dice = "sum", no end phase, Inspiring engaged only, supporting-fire kills not
    # counted, max_rounds = 1 (ties unresolved), army rules switched off
    "switches_sum_no_rally": HEADER + """
[rules]
result_dice = "sum"
max_rounds = 1
inspiring = "engaged_only"
supporting_fire_kills_count = false
army_rules = false
[units.marine]
type = "INF"
armour = 4
cc = 4
ff = 4
[units.chaplain]
type = "INF"
armour = 4
cc = 3
ff = 5
special = ["inspiring"]
[units.boyz]
type = "INF"
armour = 6
cc = 4
ff = 6
[[formations]]
name = "Marines"
side = "attacker"
army_rules = ["they-shall-know-no-fear"]
initiative = 1
blast_markers = 2
units = [{ unit = "marine", count = 3, engaged = "bc" }, { unit = "chaplain", count = 1, engaged = "out" }]
[[formations]]
name = "Devastators"
side = "attacker"
role = "support"
initiative = 1
units = [{ unit = "marine", count = 3, engaged = "ff" }]
[[formations]]
name = "Boyz"
side = "defender"
army_rules = ["mob-rule"]
initiative = 3
blast_markers = 1
units = [{ unit = "boyz", count = 4, engaged = "bc" }, { unit = "chaplain", count = 1, engaged = "ff" }]
[end_phase]
rally = false
""",
    # Broken-at-start defender (destroyed on a loss, Fearless survive), nearby formations on the
    # losing side (unbroken: +1 BM and break test; broken: no-save hit; broken TSKNF: ignored),
    # speed-0 units dying on withdrawal, natural-1 switch, no Leader bonus, no SC re-roll,
    # per-formation enemy_within_30cm
    "broken_nearby_withdrawal": HEADER + """
[rules]
rally_natural_one_fails = true
leaders = false
supreme_commander_rerolls = false
[units.raider]
type = "INF"
armour = 5
cc = 3
ff = 5
[units.gun]
type = "INF"
armour = 6
cc = 6
ff = 5
speed = 0
[units.guard]
type = "INF"
armour = 5
cc = 5
ff = 5
[units.priest]
type = "INF"
armour = 5
cc = 4
ff = 5
special = ["fearless", "supreme-commander"]
[units.scout]
type = "INF"
armour = 4
cc = 4
ff = 4
[[formations]]
name = "Raiders"
side = "attacker"
initiative = 1
blast_markers = 1
units = [{ unit = "raider", count = 5, engaged = "bc" }]
[[formations]]
name = "Gun Line"
side = "defender"
initiative = 2
broken = true
units = [
  { unit = "gun", count = 2, engaged = "ff" },
  { unit = "priest", count = 1, engaged = "bc" },
  { unit = "guard", count = 2, engaged = "bc" },
]
[[formations]]
name = "Picket"
side = "defender"
initiative = 2
blast_markers = 1
trapped = 0.4
units = [{ unit = "guard", count = 2, engaged = "bc" }, { unit = "gun", count = 1, engaged = "ff" }]
[[formations]]
name = "Reserve"
side = "defender"
role = "nearby"
initiative = 2
blast_markers = 2
trapped = 0.25
enemy_within_30cm = false
units = [{ unit = "guard", count = 2, engaged = "out" }, { unit = "gun", count = 1, engaged = "ff" }]
[[formations]]
name = "Broken Guns"
side = "defender"
role = "nearby"
initiative = 2
broken = true
units = [{ unit = "gun", count = 2, engaged = "out" }, { unit = "priest", count = 1, engaged = "out" }]
[[formations]]
name = "Broken Scouts"
side = "defender"
role = "nearby"
army_rules = ["they-shall-know-no-fear"]
initiative = 1
broken = true
units = [{ unit = "scout", count = 2, engaged = "out" }]
[[formations]]
name = "Attacker Reserve"
side = "attacker"
role = "nearby"
initiative = 1
blast_markers = 2
units = [{ unit = "raider", count = 3, engaged = "out" }]
""",
    # Wipe-outs and both sides wiped out (no winner), a defender wiped out by supporting fire,
    # TSKNF break at 2 BMs per unit and TSKNF extra-hit halving on the defender
    "wipeouts_tsknf": HEADER + """
[units.killer]
type = "INF"
armour = 6
cc = 2
ff = 2
[units.marine]
type = "INF"
armour = 6
cc = 2
ff = 3
[[formations]]
name = "Killers"
side = "attacker"
initiative = 1
blast_markers = 2
units = [{ unit = "killer", count = 2, engaged = "bc" }]
[[formations]]
name = "Gunline"
side = "attacker"
role = "support"
initiative = 1
units = [{ unit = "killer", count = 1, engaged = "ff" }]
[[formations]]
name = "Marines"
side = "defender"
army_rules = ["they-shall-know-no-fear"]
initiative = 1
blast_markers = 3
units = [{ unit = "marine", count = 2, engaged = "bc" }, { unit = "marine", count = 1, engaged = "ff" }]
""",
    # issue 11 §1 item 7: skimmers choosing FF and a support craft; when every living bc unit of a side
    # firefights, the enemy's bc units use FF too (their bc lines are silent)
    "skimmers_support_craft": HEADER + """
[units.falcon]
type = "AV"
armour = 4
cc = 6
ff = 3
special = ["skimmer"]
[units.vyper]
type = "LV"
armour = 5
cc = 5
ff = 5
special = ["skimmer"]
[units.boyz]
type = "INF"
armour = 6
cc = 3
ff = 6
extra_attacks = [{ count = 1, range = "bc" }]
[units.deffkopta]
type = "LV"
armour = 5
cc = 3
ff = 5
special = ["support-craft"]
[[formations]]
name = "Skimmers"
side = "attacker"
initiative = 1
units = [{ unit = "falcon", count = 2, engaged = "bc" }, { unit = "vyper", count = 2, engaged = "bc" }]
[[formations]]
name = "Warband"
side = "defender"
initiative = 3
units = [{ unit = "boyz", count = 4, engaged = "bc" }, { unit = "deffkopta", count = 2, engaged = "bc" },
         { unit = "boyz", count = 2, engaged = "ff" }]
""",
    # issue 11 §1: reinforced-armour infantry in cover (re-roll on armour), an intermingled partner with
    # BMs that is often wiped out (holds none), war engines that lose, take extra hits while damaged
    # (block of starting DC, excess lost), break, withdraw (2 damage each, not trapped) and rally
    # (size = starting DC); one Supreme Commander whose re-roll serves either defender formation;
    # macro-weapon and titan-killer hits allocated after the ordinary hits, to the survivors
    "rule_corrections": HEADER + """
[units.gargant]
type = "WE"
armour = 5
cc = 3
ff = 4
damage_capacity = 3
extra_attacks = [{ count = 2, range = "bc", macro_weapon = true }, { count = 1, range = "15cm", titan_killer = true }]
[units.veteran]
type = "INF"
armour = 5
cc = 4
ff = 4
special = ["reinforced-armour"]
[units.rabble]
type = "INF"
cc = 5
ff = 6
[units.captain]
type = "INF"
armour = 4
cc = 3
ff = 4
special = ["supreme-commander"]
[[formations]]
name = "Gargants"
side = "attacker"
initiative = 1
blast_markers = 2
trapped = 0.5
withdrawal_enemies_within_15cm = 2
units = [{ unit = "gargant", count = 2, engaged = "bc" }]
[[formations]]
name = "Veterans"
side = "defender"
initiative = 2
cover = 3
units = [{ unit = "veteran", count = 3, engaged = "bc" }, { unit = "captain", count = 1, engaged = "out" }]
[[formations]]
name = "Rabble"
side = "defender"
initiative = 2
blast_markers = 3
units = [{ unit = "rabble", count = 2, engaged = "bc" }]
[end_phase]
enemy_within_30cm = false
""",
    # issue 11 §1 item 6, TP 3.1.2: a war engine split between CC and FF (cc_dice = 2 of 4) with a
    # macro-weapon bc line and a 15cm line, its CC hits only on the units in base contact, its FF hits
    # only on the others; a defending war engine with the default split (all CC in contact, so its
    # hits reach only the titan, never the attacker's ff troopers); contacts that die, leaving a war
    # engine out of contact (all FF, any unit); a Reinforced Armour tank out of contact
    "war_engine_split": HEADER + """
[units.warlord]
type = "WE"
armour = 4
cc = 3
ff = 4
damage_capacity = 4
extra_attacks = [{ count = 1, range = "bc", macro_weapon = true }, { count = 2, range = "15cm" }]
[units.knight]
type = "WE"
armour = 4
cc = 4
ff = 5
damage_capacity = 2
[units.trooper]
type = "INF"
armour = 5
cc = 5
ff = 4
[units.tank]
type = "AV"
armour = 4
cc = 6
ff = 4
special = ["reinforced-armour"]
[[formations]]
name = "Titan"
side = "attacker"
initiative = 1
units = [{ unit = "warlord", count = 1, engaged = "bc", cc_dice = 2 }, { unit = "trooper", count = 2, engaged = "ff" }]
[[formations]]
name = "Line"
side = "defender"
initiative = 2
units = [{ unit = "trooper", count = 2, engaged = "bc" }, { unit = "tank", count = 2, engaged = "ff" }]
[[formations]]
name = "Knights"
side = "defender"
initiative = 2
blast_markers = 1
units = [{ unit = "knight", count = 1, engaged = "bc" }]
[end_phase]
enemy_within_30cm = false
""",
    # issue 14 (docs/epic-engine.md §10): void shields stopping FF hits only (§10.2) on two war engines in
    # one formation, +1 each in the end phase (§10.7); extra_damage criticals that roll again (§10.4);
    # titan-killer D3 rolled at allocation and counting as that many hits (§10.5); a titan killer without
    # dice; power-field dice rolled once per trial (§10.8.5); a destroyed_plus_effect critical whose
    # macro-weapon splash reaches units of both sides (within_splash_of, §10.6); ordinary units on both
    # sides; withdrawal damage that rolls for criticals
    "we_void_shields_titan_killers": HEADER + """
[units.warhound]
type = "WE"
armour = 5
cc = 4
ff = 4
damage_capacity = 3
void_shields = 2
special = ["reinforced-armour"]
critical = "extra_damage"
extra_attacks = [{ count = 1, range = "15cm", macro_weapon = true }, { count = 1, range = "bc", titan_killer = "D3" }]
[units.stompa]
type = "WE"
armour = 4
cc = 4
ff = 5
damage_capacity = 3
power_fields = "D3"
critical = { kind = "destroyed_plus_effect", splash_hit_on = 4, splash_macro_weapon = true }
extra_attacks = [{ count = 1, range = "bc", titan_killer = true }, { count = 2, range = "15cm" }]
[units.skitarii]
type = "INF"
armour = 5
cc = 4
ff = 4
[units.boyz]
type = "INF"
armour = 6
cc = 4
ff = 6
[[formations]]
name = "Warhound Pack"
side = "attacker"
initiative = 1
withdrawal_enemies_within_15cm = 1
within_splash_of = { "Stompa Mob" = 2 }
units = [{ unit = "warhound", count = 2, engaged = "bc" }, { unit = "skitarii", count = 2, engaged = "ff" }]
[[formations]]
name = "Stompa Mob"
side = "defender"
initiative = 3
blast_markers = 1
withdrawal_enemies_within_15cm = 2
within_splash_of = { "Stompa Mob" = 3 }
units = [
  { unit = "boyz", count = 3, engaged = "bc" },
  { unit = "stompa", count = 1, engaged = "bc" },
  { unit = "boyz", count = 2, engaged = "ff" },
]
""",
    # power fields D3+3 that never come back, end-phase fires (§10.4, §10.7: damage, BMs and the break
    # test before the rally), titan-killer D6, lance and ignore-cover lines against reinforced armour and
    # cover, a defending gargant, supporting fire (FF: fields stop it) from a TSKNF formation
    "we_power_fields_fire": HEADER + """
[units.gargant]
type = "WE"
armour = 4
cc = 3
ff = 5
damage_capacity = 4
power_fields = "D3+3"
critical = { kind = "end_phase_fire" }
extra_attacks = [{ count = 1, range = "bc", titan_killer = "D6" }, { count = 2, range = "15cm", macro_weapon = true }]
[units.boyz]
type = "INF"
armour = 6
cc = 4
ff = 6
[units.tactical]
type = "INF"
armour = 4
cc = 4
ff = 4
extra_attacks = [{ count = 1, range = "15cm", ignore_cover = true }]
[units.raider]
type = "AV"
armour = 4
cc = 6
ff = 4
special = ["reinforced-armour"]
extra_attacks = [{ count = 1, range = "15cm", lance = true }]
[[formations]]
name = "Marines"
side = "attacker"
army_rules = ["they-shall-know-no-fear"]
initiative = 1
units = [{ unit = "tactical", count = 4, engaged = "bc" }, { unit = "raider", count = 1, engaged = "ff" }]
[[formations]]
name = "Devastators"
side = "attacker"
role = "support"
army_rules = ["they-shall-know-no-fear"]
initiative = 1
units = [{ unit = "tactical", count = 2, engaged = "ff" }]
[[formations]]
name = "Gargant Mob"
side = "defender"
initiative = 3
cover = 4
units = [{ unit = "gargant", count = 1, engaged = "bc" }, { unit = "boyz", count = 3, engaged = "bc" }]
[end_phase]
enemy_within_30cm = true
""",
    # reactor breaches (§10.4, §10.7) whose explosion splashes the Host (no save), titan-killer D6+1 against a
    # holofield (one save per hit, §10.3), a degrade_then_escalate critical that takes the holofield away and then
    # destroys (§10.4), lance hits against reinforced armour, Fearless and withdrawing war engines
    "we_breach_holofield": HEADER + """
[units.reaver]
type = "WE"
armour = 4
cc = 3
ff = 3
damage_capacity = 4
void_shields = 3
special = ["reinforced-armour", "fearless"]
critical = { kind = "end_phase_breach", splash_hit_on = 4, splash_no_save = true }
extra_attacks = [{ count = 1, range = "15cm", titan_killer = "D6+1" }, { count = 1, range = "bc", macro_weapon = true }]
[units.revenant]
type = "WE"
armour = 5
cc = 4
ff = 4
damage_capacity = 3
special = ["holofield", "reinforced-armour"]
critical = { kind = "degrade_then_escalate", loses = ["holofield"], then = "destroyed" }
extra_attacks = [{ count = 2, range = "15cm", lance = true }]
[units.guardian]
type = "INF"
armour = 5
cc = 5
ff = 4
extra_attacks = [{ count = 1, range = "15cm", lance = true }]
[units.aspect]
type = "INF"
armour = 4
cc = 3
ff = 5
[[formations]]
name = "Reaver"
side = "attacker"
initiative = 1
units = [{ unit = "reaver", count = 1, engaged = "bc" }]
[[formations]]
name = "Host"
side = "defender"
initiative = 1
withdrawal_enemies_within_15cm = 1
within_splash_of = { "Reaver" = 2 }
units = [
  { unit = "aspect", count = 2, engaged = "bc" },
  { unit = "revenant", count = 1, engaged = "ff" },
  { unit = "guardian", count = 2, engaged = "ff" },
]
""",
    # knight shields (unmodified 4+, one per titan-killer point, lost against supporting fire, §10.3),
    # living metal and deflector saves (4+ / 5+ invulnerable), macro-weapon and lance CC attacks
    # (cc_abilities, §10.6), an extra_damage 2 critical, supporting fire on both sides
    "we_knight_shield_living_metal": HEADER + """
[units.paladin]
type = "WE"
armour = 4
cc = 3
ff = 4
damage_capacity = 2
special = ["knight-shield", "reinforced-armour"]
critical = { kind = "extra_damage", damage = 2 }
cc_abilities = { macro_weapon = true, lance = true }
[units.warrior]
type = "INF"
armour = 4
cc = 4
ff = 4
special = ["living-metal"]
[units.monolith]
type = "WE"
armour = 4
cc = 4
ff = 4
damage_capacity = 3
special = ["living-metal", "reinforced-armour"]
critical = "destroyed"
extra_attacks = [{ count = 1, range = "15cm", titan_killer = "D3" }]
[units.drone]
type = "LV"
armour = 5
cc = 6
ff = 5
special = ["deflector-shield"]
[[formations]]
name = "Knights"
side = "attacker"
initiative = 2
units = [{ unit = "paladin", count = 3, engaged = "bc" }]
[[formations]]
name = "Drones"
side = "attacker"
role = "support"
initiative = 2
units = [{ unit = "drone", count = 2, engaged = "ff" }]
[[formations]]
name = "Phalanx"
side = "defender"
initiative = 2
units = [{ unit = "warrior", count = 3, engaged = "bc" }, { unit = "monolith", count = 1, engaged = "ff" }]
[[formations]]
name = "Tomb Guard"
side = "defender"
role = "support"
initiative = 2
units = [{ unit = "warrior", count = 2, engaged = "ff" }, { unit = "monolith", count = 1, engaged = "ff" }]
""",
    # shadowfields absorbing whole FF hits and coming back after the rally (§10.2), disrupt (a BM per
    # hit on a winning formation, §10.6), ignore cover against infantry in cover, a sniper line, an
    # Expendable formation member (no disrupt BM)
    "we_shadowfields_disrupt_cover": HEADER + """
[units.tantalus]
type = "WE"
armour = 5
cc = 5
ff = 4
damage_capacity = 2
shadowfields = 2
critical = "destroyed"
extra_attacks = [{ count = 2, range = "15cm", disrupt = true }, { count = 1, range = "15cm", sniper = true }]
[units.wych]
type = "INF"
armour = 6
cc = 3
ff = 6
special = ["invulnerable-save"]
extra_attacks = [{ count = 1, range = "bc", disrupt = true, ignore_cover = true }]
[units.guard]
type = "INF"
armour = 5
cc = 5
ff = 4
[units.conscript]
type = "INF"
cc = 6
ff = 5
special = ["expendable"]
[units.commissar]
type = "INF"
armour = 5
cc = 4
ff = 4
special = ["leader", "inspiring"]
extra_attacks = [{ count = 1, range = "15cm", disrupt = true }]
[[formations]]
name = "Raiders"
side = "attacker"
initiative = 2
units = [{ unit = "wych", count = 3, engaged = "bc" }, { unit = "tantalus", count = 1, engaged = "ff" }]
[[formations]]
name = "Company"
side = "defender"
initiative = 2
cover = 4
blast_markers = 1
units = [
  { unit = "commissar", count = 1, engaged = "bc" },
  { unit = "guard", count = 3, engaged = "bc" },
  { unit = "conscript", count = 2, engaged = "ff" },
]
[end_phase]
enemy_within_30cm = false
""",
    # a degrade_then_escalate critical with damage, a new FF value and lost extra attacks, then
    # extra_damage (§10.4); a random_move critical's damage part; regeneration in the end phase (§10.7,
    # §10.8.3); a fixed titan-killer damage of 2 and an FF attack that is a titan killer (ff_abilities);
    # void shields from a character added to its host war engine (§10.1); war engines on both sides
    "we_degrade_regeneration": HEADER + """
[units.warlord]
type = "WE"
armour = 4
cc = 3
ff = 3
damage_capacity = 4
void_shields = 2
special = ["reinforced-armour"]
critical = { kind = "degrade_then_escalate", damage = 1, ff_becomes = 5, loses = ["extra_attacks"] }
extra_attacks = [{ count = 2, range = "15cm", titan_killer = 2 }, { count = 1, range = "bc", macro_weapon = true }]
[units.battlecar]
type = "CH"
damage_capacity = 1
void_shields = 1
[units.monolith]
type = "WE"
armour = 4
cc = 5
ff = 4
damage_capacity = 3
special = ["regeneration", "reinforced-armour"]
critical = { kind = "random_move", damage = 1 }
ff_abilities = { titan_killer = true }
[units.immortal]
type = "INF"
armour = 4
cc = 4
ff = 4
[[formations]]
name = "Battle Titan"
side = "attacker"
initiative = 1
blast_markers = 1
units = [{ unit = "warlord", count = 1, engaged = "bc", characters = ["battlecar"] },
         { unit = "immortal", count = 2, engaged = "ff" }]
[[formations]]
name = "Monoliths"
side = "defender"
initiative = 2
units = [{ unit = "immortal", count = 2, engaged = "bc" }, { unit = "monolith", count = 2, engaged = "ff" }]
[end_phase]
enemy_within_30cm = false
""",
    # knight lances that attack only for the assaulting formation (engage_only: the defending knight's never,
    # nor in supporting fire), Automaton robots (a disrupt hit on one gives its winning formation a BM, its
    # death none) and a broken nearby formation of Automatons that may save its no-save hit (§6.3),
    # Automata platforms among Necron warriors (their deaths are kills but place no BM), Necron warriors
    # returning in the end phase (TP-SR Knight Technology, Automaton, Automata, Necron Technology; spec §10.1,
    # §10.6, §10.7)
    "we_knights_automata_necrons": HEADER + """
[units.knight]
type = "WE"
armour = 4
cc = 3
ff = 4
damage_capacity = 2
special = ["knight-shield"]
critical = "destroyed"
extra_attacks = [{ count = 1, range = "bc", macro_weapon = true, lance = true, engage_only = true },
                 { count = 1, range = "15cm", engage_only = true }]
[units.robot]
type = "AV"
armour = 5
cc = 4
ff = 4
special = ["automaton"]
[units.warrior]
type = "INF"
armour = 4
cc = 4
ff = 4
special = ["necron"]
ff_abilities = { disrupt = true }
[units.platform]
type = "LV"
armour = 5
cc = 6
ff = 4
special = ["automata"]
[units.sentry]
type = "AV"
armour = 4
cc = 6
ff = 5
special = ["automaton", "reinforced-armour"]
[[formations]]
name = "Household"
side = "attacker"
initiative = 1
units = [{ unit = "knight", count = 2, engaged = "bc" }, { unit = "robot", count = 2, engaged = "ff" }]
[[formations]]
name = "Phalanx"
side = "defender"
initiative = 2
blast_markers = 1
units = [{ unit = "warrior", count = 4, engaged = "bc" }, { unit = "platform", count = 2, engaged = "ff" },
         { unit = "knight", count = 1, engaged = "bc" }]
[[formations]]
name = "Guard Knights"
side = "defender"
role = "support"
initiative = 2
units = [{ unit = "knight", count = 1, engaged = "ff" }]
[[formations]]
name = "Sentries"
side = "defender"
role = "nearby"
initiative = 2
broken = true
units = [{ unit = "sentry", count = 3, engaged = "out" }]
[end_phase]
enemy_within_30cm = false
""",
    # criticals with a further D6 (extra damage, then one more point or a splash: DATA Hierodule), self hits
    # with a titan-killer (1) splash (DATA Abattoir), lose_character on a war engine with no battlecar (=
    # destroyed), and chained splashes: small war engines whose splash destroys another, which splashes at
    # once (TP 3.2.3; spec §10.4, §10.6)
    "we_further_self_hit_chained_splash": HEADER + """
[units.hierodule]
type = "WE"
armour = 4
cc = 3
ff = 4
damage_capacity = 4
critical = { kind = "extra_damage", further_damage_on = 5, splash_hit_on = 4 }
extra_attacks = [{ count = 2, range = "bc", titan_killer = "D3" }]
[units.gaunt]
type = "INF"
armour = 6
cc = 4
ff = 5
[units.bomb]
type = "WE"
armour = 5
cc = 5
ff = 5
damage_capacity = 1
critical = { kind = "destroyed_plus_effect", splash_hit_on = 3, splash_no_save = true }
[units.cultist]
type = "INF"
armour = 6
cc = 5
ff = 5
[units.abattoir]
type = "WE"
armour = 4
cc = 4
ff = 4
damage_capacity = 4
void_shields = 1
critical = { kind = "self_hit", self_hit_on = 3, self_hits = 2, splash_titan_killer = true, splash_hit_on = 4 }
extra_attacks = [{ count = 2, range = "15cm", macro_weapon = true }]
[units.train]
type = "WE"
armour = 4
cc = 5
ff = 4
damage_capacity = 3
critical = "lose_character"
[[formations]]
name = "Brood"
side = "attacker"
initiative = 1
within_splash_of = { "Brood" = 2, "Cult" = 2 }
units = [{ unit = "hierodule", count = 1, engaged = "bc" }, { unit = "gaunt", count = 4, engaged = "bc" }]
[[formations]]
name = "Cult"
side = "defender"
initiative = 2
within_splash_of = { "Cult" = 3, "Brood" = 1 }
units = [{ unit = "bomb", count = 3, engaged = "bc" }, { unit = "cultist", count = 2, engaged = "bc" },
         { unit = "abattoir", count = 1, engaged = "ff" }, { unit = "train", count = 1, engaged = "ff" }]
""",
}


# A scenario's seed is 20000 + its place here, so that adding a scenario does not redraw the others (new
# names go at the end): with new seeds every rare single value of every distribution is drawn again.
SEED_ORDER = [
    "broken_nearby_withdrawal", "fearless_inspiring_expendable", "first_strike_sniper_d3",
    "intermingled_combined_support", "issue_example", "rule_corrections", "skimmer_macro_invulnerable",
    "skimmers_support_craft", "switches_sum_no_rally", "ties_unresolved", "war_engine_split", "war_engines",
    "we_breach_holofield", "we_degrade_regeneration", "we_knight_shield_living_metal", "we_power_fields_fire",
    "we_shadowfields_disrupt_cover", "we_void_shields_titan_killers", "wipeouts_tsknf",
    "we_knights_automata_necrons", "we_further_self_hit_chained_splash",
]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_kernel_matches_reference(name):
    assert sorted(SEED_ORDER) == sorted(SCENARIOS)
    seed = 20_000 + SEED_ORDER.index(name)
    scenario = loads(SCENARIOS[name])
    kernel = simulate(scenario, trials=KERNEL_TRIALS, seed=seed)
    reference = simulate(scenario, trials=REFERENCE_TRIALS, seed=seed, engine="reference")
    failures = compare_results(kernel, reference)
    assert not failures, f"{name}: kernel v reference, {len(failures)} difference(s):\n" + "\n".join(failures)


# More than 64 units a side: two alive-mask words per side (the kernel's general word loops; the
# scenarios above fit one word).  Units are ordered bc, ff, out, then by formation (docs/epic-engine.md
# §9.6), so a weaponless support formation listed first fills word 0 between each assault formation's bc
# units (word 0) and its last ff units (word 1): both words hold units that fight and die, with Mob Rule,
# a Leader and armoured vehicles in word 1.  The reference engine's cost grows with engaged units times
# units: 12 v 10 engaged units take about 2 ms a reference trial against 6 ms for the former 66 v 66 melee.
# Power at these counts (kernel run on a changed scenario against this reference): one more blast marker
# on the Regiment or on the Horde, or guard armour 6+ instead of 5+, each fails the comparison (18 to 131
# quantities off, up to 38σ).
TWO_WORDS = HEADER + """
title = "Two mask words a side"
[units.boy]
type = "INF"
armour = 6
cc = 4
ff = 6
[units.nob]
type = "INF"
armour = 4
cc = 3
ff = 5
special = ["leader"]
[units.grot]
type = "INF"
[units.guard]
type = "INF"
armour = 5
cc = 5
ff = 4
[units.tank]
type = "AV"
armour = 4
cc = 6
ff = 4
[units.conscript]
type = "INF"
[[formations]]
name = "Grot Mob"
side = "attacker"
role = "support"
initiative = 2
units = [{ unit = "grot", count = 58, engaged = "ff" }]
[[formations]]
name = "Horde"
side = "attacker"
initiative = 2
blast_markers = 3
army_rules = ["mob-rule"]
units = [
  { unit = "boy", count = 5, engaged = "bc" },
  { unit = "boy", count = 6, engaged = "ff" },
  { unit = "nob", count = 1, engaged = "ff" },
]
[[formations]]
name = "Conscripts"
side = "defender"
role = "support"
initiative = 2
units = [{ unit = "conscript", count = 59, engaged = "ff" }]
[[formations]]
name = "Regiment"
side = "defender"
initiative = 2
blast_markers = 2
units = [
  { unit = "guard", count = 5, engaged = "bc" },
  { unit = "guard", count = 2, engaged = "ff" },
  { unit = "tank", count = 3, engaged = "ff" },
]
"""


def test_two_mask_words_match_reference():
    """Every reported quantity within 5σ of the reference (as the scenarios above), with engaged units in
    both alive-mask words of each side (§9.6 allocation order) and units of word 1 killed: a formation
    losing more units than it has targets in word 0 lost one in word 1."""
    scenario = loads(TWO_WORDS)
    arrays = KernelJob(compile_scenario(scenario)).arrays
    assert arrays.masks.shape[2] == 2
    units = arrays.units
    targets_in_word_0 = {}
    for side, formation in ((0, "Horde"), (1, "Regiment")):  # the side's one assault formation
        targets = units[(units[:, K.U_SIDE] == side) & (units[:, K.U_TARGET] == 1)]
        targets_in_word_0[formation] = int((targets[:, K.U_WORD] == 0).sum())
        assert 0 < targets_in_word_0[formation] < len(targets), (formation, "engaged units in both words")
    kernel = simulate(scenario, trials=KERNEL_TRIALS, seed=20_100)
    reference = simulate(scenario, trials=REFERENCE_TRIALS, seed=20_100, engine="reference")
    for formation, in_word_0 in targets_in_word_0.items():
        casualties = kernel["formations", formation, "casualties"]
        assert casualties.counts[casualties.values > in_word_0].sum() > 0.1 * KERNEL_TRIALS, formation
    failures = compare_results(kernel, reference)
    assert not failures, "two mask words: kernel v reference:\n" + "\n".join(failures)

def test_scenarios_reach_the_rules_they_are_for():
    """The comparison above means something only if the rare branches actually happen."""
    r = {name: simulate(loads(text), trials=200_000, seed=7) for name, text in SCENARIOS.items()}

    def p(name, *path):
        return r[name][path].p

    assert p("ties_unresolved", "sides", "unresolved") > 0.01
    assert r["ties_unresolved"]["sides", "rounds"].counts[1] > 0
    assert p("switches_sum_no_rally", "sides", "unresolved") > 0.01
    assert p("wipeouts_tsknf", "sides", "no_winner") > 0.005
    assert p("wipeouts_tsknf", "sides", "decided_without_roll") > 0.1
    assert p("broken_nearby_withdrawal", "formations", "Gun Line", "destroyed") > 0.05
    assert p("broken_nearby_withdrawal", "formations", "Reserve", "broken_after_assault") > 0.05
    assert r["broken_nearby_withdrawal"]["formations", "Broken Guns", "casualties_mean"].value > 0.05
    assert r["intermingled_combined_support"]["formations", "Militia B", "casualties_mean"].value > 1
    assert p("intermingled_combined_support", "sides", "defender_wins") > 0.05
    assert p("war_engines", "formations", "Stompa Mob", "broken_after_assault") > 0.1

    def mean(name, formation, quantity):
        return r[name]["formations", formation, quantity].value

    # war engines and weapon abilities (docs/epic-engine.md §10): criticals, shields and fields that come back
    # (§10.2, §10.7), end-phase fires and breaches (§10.7), regeneration (§10.8.3)
    for name, formation in (("we_void_shields_titan_killers", "Warhound Pack"),
                            ("we_void_shields_titan_killers", "Stompa Mob"),
                            ("we_knight_shield_living_metal", "Knights")):
        assert p(name, "formations", formation, "critical") > 0.1
    assert p("we_breach_holofield", "formations", "Host", "critical") > 0.05
    assert p("we_degrade_regeneration", "formations", "Battle Titan", "critical") > 0.05
    for name, formation in (("we_void_shields_titan_killers", "Warhound Pack"),
                            ("we_shadowfields_disrupt_cover", "Raiders"), ("we_breach_holofield", "Reaver")):
        assert mean(name, formation, "shields_after_end_phase_mean") > mean(name, formation,
                                                                             "shields_after_assault_mean") + 0.05
    for name, formation in (("we_power_fields_fire", "Gargant Mob"), ("we_breach_holofield", "Reaver")):
        assert mean(name, formation, "damage_taken_mean") > mean(name, formation, "damage_taken_assault_mean") + 0.05
    assert mean("we_degrade_regeneration", "Monoliths", "damage_taken_mean") < \
        mean("we_degrade_regeneration", "Monoliths", "damage_taken_assault_mean") - 0.1
    # an Automaton saving a broken formation's no-save hit (§6.3), Necrons returning (§10.7), criticals
    # with further damage, self hits and splashes (§10.4)
    assert mean("we_knights_automata_necrons", "Sentries", "casualties_mean") > 0.05
    assert mean("we_knights_automata_necrons", "Phalanx", "casualties_mean") < \
        mean("we_knights_automata_necrons", "Phalanx", "casualties_assault_mean") - 0.3
    for formation in ("Brood", "Cult"):
        assert p("we_further_self_hit_chained_splash", "formations", formation, "critical") > 0.2
    assert p("fearless_inspiring_expendable", "formations", "Warband", "rally_passed") > 0.05
    assert p("rule_corrections", "formations", "Rabble", "destroyed") > 0.2
    assert p("rule_corrections", "formations", "Gargants", "broken_after_assault") > 0.1
    assert p("rule_corrections", "formations", "Gargants", "rally_passed") > 0.1


def test_one_against_one_exact():
    """1 v 1 in contact, 4+ to hit, 4+ save, one round: P(kill) = 1/4 each, simultaneous; no kill
    → result roll at equal modifiers (both +1 for no BMs): 505/1296 each, 286/1296 unresolved; both
    killed (1/16) is "no winner" and not "decided without roll" (issue 11 §2)."""
    text = HEADER + """
[rules]
max_rounds = 1
[units.a]
type = "INF"
armour = 4
cc = 4
ff = 4
[[formations]]
name = "A"
side = "attacker"
initiative = 1
units = [{ unit = "a", count = 1, engaged = "bc" }]
[[formations]]
name = "D"
side = "defender"
initiative = 1
units = [{ unit = "a", count = 1, engaged = "bc" }]
"""
    n = 2_000_000
    r = simulate(loads(text), trials=n, seed=3)
    quiet = Fraction(9, 16)
    exact = {
        "attacker_wins": Fraction(3, 16) + quiet * Fraction(505, 1296),
        "defender_wins": Fraction(3, 16) + quiet * Fraction(505, 1296),
        "no_winner": Fraction(1, 16),
        "unresolved": quiet * Fraction(286, 1296),
        "decided_without_roll": Fraction(6, 16),  # a side won by wiping the other out; no winner excluded
    }
    for name, value in exact.items():
        p = float(value)
        got = r["sides", name]
        assert abs(got.p - p) <= SIGMAS * math.sqrt(p * (1 - p) / n), (name, got.p, p)


def test_same_json_for_any_thread_count_chunk_size_and_precision_run():
    scenario = loads(SCENARIOS["issue_example"])
    base = simulate(scenario, trials=3 * 4096 + 100, seed=11, threads=1).to_json()
    assert simulate(scenario, trials=3 * 4096 + 100, seed=11, threads=2).to_json() == base
    assert simulate(scenario, trials=3 * 4096 + 100, seed=11, chunk_trials=4096).to_json() == base
    assert simulate(scenario, trials=3 * 4096 + 100, seed=11, chunk_trials=5000, threads=2).to_json() == base
    first = simulate(scenario, precision=0.004, seed=5, chunk_trials=4096)
    again = simulate(scenario, precision=0.004, seed=5, chunk_trials=4096, threads=1)
    assert first.to_json() == again.to_json()
    assert first.info.precision_reached
    plain = simulate(scenario, trials=first.trials, seed=5)
    assert plain.to_dict()["sides"] == first.to_dict()["sides"]


def test_counts_do_not_grow_with_trials():
    job = KernelJob(compile_scenario(loads(SCENARIOS["issue_example"])))
    small = job.run_chunk(1, 2, 0, 10)
    large = job.run_chunk(1, 2, 0, 300_000)
    assert small.shape == large.shape == (job.compiled.layout.size,)
    assert small.dtype == large.dtype == np.int64
    assert large[job.compiled.layout.offset("attacker_wins"):][:4].sum() == 300_000


def _run_job(job, trials, seed, **kwargs):
    from analysis import runner
    from analysis.epic.outcome import build_result

    counts, info = runner.run(job, trials=trials, seed=seed, **kwargs)
    return counts, build_result(job.compiled, counts, info)


@pytest.mark.parametrize("name", ["issue_example", "war_engines", "first_strike_sniper_d3"])
def test_trial_streams_do_not_depend_on_chunks_and_change_nothing_statistically(name):
    """With ``trial_streams`` trial t's dice depend only on (seed, cell, t): any chunk size or thread
    count gives the same counts (and 2 blocks = block 0 + block 1), the option does change the dice,
    and the results match block streams on every leaf within 5 sigma."""
    compiled = compile_scenario(loads(SCENARIOS[name]))
    job = KernelJob(compiled, trial_streams=True)
    n = 5 * 4096 + 123
    base, _ = _run_job(job, n, 13, threads=1)
    for chunk, threads in ((4096, 1), (2 * 4096, 2), (10 ** 6, 2)):
        counts, _ = _run_job(job, n, 13, chunk_trials=chunk, threads=threads)
        assert np.array_equal(counts, base), (chunk, threads)
    k0, k1 = 5, 6
    both = job.run_chunk(k0, k1, 0, 2 * 4096)
    assert np.array_equal(both, job.run_chunk(k0, k1, 0, 4096) + job.run_chunk(k0, k1, 1, 4096))
    assert not np.array_equal(both, KernelJob(compiled).run_chunk(k0, k1, 0, 2 * 4096))  # the option is used

    _, per_trial = _run_job(job, KERNEL_TRIALS, 31)
    _, per_block = _run_job(KernelJob(compiled), KERNEL_TRIALS, 31)
    failures = compare_results(per_trial, per_block)
    assert not failures, f"{name}: trial v block streams, {len(failures)} difference(s):\n" + "\n".join(failures)


def test_kernel_helpers_compile_once_whatever_the_call_sites_pass():
    """Issue 12 §1 'no kernel compiled twice for one signature': a helper made by kernels.jit.njit is
    compiled once for calls that pass constants (typed as literals by Numba) and int32 or int64
    scalars, and computes what Python computes for each call.  It has no wrapper for calls from Python
    (kernels/jit.py): such a call raises TypeError instead of running."""
    from numba import njit as numba_njit

    from kernels.jit import njit

    @njit()
    def helper(a, flag, row):
        return a + row[0] if flag else a - row[1]

    @numba_njit
    def caller(x, flag, row):
        return (helper(1, True, row), helper(np.int32(2), False, row), helper(x, flag, row),
                helper(row[2], flag, row))

    row = np.array([10, 20, 30], np.int32)
    assert caller(5, False, row) == (11, -18, -15, 10)
    assert len(helper.signatures) == 1, helper.signatures
    with pytest.raises(TypeError, match="called from jitted code only"):
        helper(1, True, row)
