"""Close-combat scenarios of the T9A tests, built from dicts (docs/t9a.md, "Close combat")."""
import copy

from wargame_odds.analysis.intake.scenario import validate
from wargame_odds.analysis.t9a.charge.model import Scenario, resolve

#: §C10's example: five lance knights charge a 5 × 5 spear block.
KNIGHTS = {"models": 5, "width": 5, "defensive_skill": 4, "resilience": 3, "armour": 5, "discipline": 8,
           "standard": True,
           "attacks": [{"name": "knight", "attacks": 1, "offensive_skill": 4, "strength": 4, "armour_penetration": 1,
                        "charge_strength": 2, "charge_ap": 2},
                       {"name": "warhorse", "attacks": 1, "offensive_skill": 3, "strength": 3}]}
SPEARMEN = {"models": 25, "width": 5, "defensive_skill": 3, "resilience": 3, "armour": 2, "discipline": 7,
            "standard": True,
            "attacks": [{"name": "spearman", "attacks": 1, "offensive_skill": 3, "strength": 3,
                         "armour_penetration": 1, "agility": 3, "extra_ranks": 1}]}
#: Large monsters with Impact Hits, Stomp, Multiple Wounds (D3), Hatred, Swiftstride.
BEASTS = {"models": 3, "width": 3, "hp": 3, "height": "large", "defensive_skill": 3, "resilience": 5, "armour": 3,
          "discipline": 8, "swiftstride": True,
          "attacks": [{"name": "rider", "attacks": 2, "offensive_skill": 4, "strength": 4, "armour_penetration": 1,
                       "agility": 4, "hatred": True, "charge_ap": 1},
                      {"name": "beast", "attacks": 3, "offensive_skill": 3, "strength": 5, "armour_penetration": 2,
                       "agility": 2, "multiple_wounds": "D3", "impact_hits": "D3", "stomp_attacks": "1"}]}
#: Halberdiers with a Battle Standard, a General nearby, an Aegis save and a Great-Weapon-like fixed step.
HALBERDS = {"models": 20, "width": 5, "defensive_skill": 3, "resilience": 3, "armour": 1, "aegis": 6, "discipline": 7,
            "standard": True, "battle_standard": True,
            "attacks": [{"name": "halberdier", "attacks": 1, "offensive_skill": 3, "strength": 4,
                         "armour_penetration": 1, "agility": 3, "strike_step": 0}]}
HALBERD_SUPPORT = {"general_discipline": 8, "rally_around_the_flag": True}


def combat_model(charger_unit=KNIGHTS, target_unit=SPEARMEN, combat=None, charger=None, target=None, rules=None,
                 charger_support=None, target_support=None, distance=9.0):
    """A resolved one-charger scenario with ``[combat]`` (the charge at ``distance`` from Advance Rate 8)."""
    data = {"system": "t9a", "title": "combat test",
            "combat": dict(combat or {}),
            "target": {"name": "Target", "unit": copy.deepcopy(target_unit), **(target or {})},
            "chargers": [{"name": "Charger", "advance_rate": 8.0, "distance": distance,
                          "unit": copy.deepcopy(charger_unit), **(charger or {})}]}
    if rules:
        data["rules"] = rules
    if charger_support:
        data["chargers"][0]["support"] = charger_support
    if target_support:
        data["target"]["support"] = target_support
    return resolve(validate(Scenario, data, "<test>"), "<test>")


#: The combats the engines are checked on against the exact fight (name -> combat_model keywords).
CASES = {
    "knights_vs_spears": {},
    "beasts_vs_halberds": {"charger_unit": BEASTS, "target_unit": HALBERDS, "target_support": HALBERD_SUPPORT,
                           "combat": {"rounds": 4}},
    "switches": {"charger_unit": dict(KNIGHTS, unbreakable=True),
                 "target_unit": dict(SPEARMEN, light_troops=True, models=12, width=4, swiftstride=True),
                 "combat": {"rounds": 5, "pursue": False, "double_one_passes": True,
                            "decimated_rally": "double_one_only", "to_hit_table": "beta", "rank_bonus": "beta",
                            "decimated_flee": "removed"}},
    "stubborn_halberds_vs_beasts": {"charger_unit": dict(HALBERDS, models=15, stubborn=True),
                                    "target_unit": dict(BEASTS, models=2, width=2),
                                    "combat": {"decimated_rally": "none"}, "charger_support": HALBERD_SUPPORT},
}
