"""Write the brute-force fixture of tests/decisions/test_list_search_brute_force.py: every candidate of a small
list search scored by ``rank`` at high precision (200,000 trials a cell, independent streams).

    .venv/bin/python -m scripts.list_search_brute_force
"""
from __future__ import annotations

import json
from pathlib import Path

from wargame_odds.analysis.decisions import api
from wargame_odds.analysis.epic.library.upgrades import enumerate_detachments

DEFINITION = {"army": "netea:space-marine-codex-astartes", "max_points": 450,
              "formations": ["Assault", "Terminator"], "upgrades": ["Commander", "Vindicators", "Dreadnoughts"],
              "opponents": [{"force": "netea:ork-war-horde/warband", "weight": 3},
                            {"force": "netea:ork-war-horde/kommando-warhorde", "weight": 1}]}
TRIALS = 200_000
OUT = Path(__file__).resolve().parents[1] / "tests" / "decisions" / "data" / "list_search_brute_force.json"


def main() -> None:
    found = enumerate_detachments(DEFINITION["army"], max_points=DEFINITION["max_points"],
                                  formations_filter=DEFINITION["formations"], upgrades_filter=DEFINITION["upgrades"])
    opponents = DEFINITION["opponents"]
    result = api.rank([d.force() for d in found], [o["force"] for o in opponents],
                      weights=[o["weight"] for o in opponents], trials=TRIALS, seed=2024, progress=False)
    rows = {r.option: {"score": 100 * r.score, "ci95_lo": 100 * r.ci95_lo, "ci95_hi": 100 * r.ci95_hi}
            for r in result.frame.itertuples()}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"definition": DEFINITION, "trials_per_cell": TRIALS, "seed": 2024,
                               "scores": rows}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(rows)} candidates written to {OUT.name}")


if __name__ == "__main__":
    main()
