"""§3.7 / Q-B6 placement choice: the cases of the figure and random cases, both engines."""
import random

import pytest

import wargame_odds.analysis.t9a as t9a

ALWAYS, NEVER = 0.0, 40.0           # distances a 4" Advance Rate charger always / never makes


def scenario(distances, placements, order="2.0"):
    text = f'system = "t9a"\n[rules]\nplacement_order = "{order}"\n[target]\nname = "T"\n'
    for i, d in enumerate(distances):
        text += f'[[chargers]]\nname = "c{i}"\nadvance_rate = 4\ndistance = {d}\n'
    for j, p in enumerate(placements):
        names = ", ".join(f'"c{i}"' for i in p["chargers"])
        text += (f'[[placements]]\nname = "p{j}"\nchargers = [{names}]\n'
                 f'rotates_target = {str(p.get("rot", False)).lower()}\n'
                 f'models_in_contact = {p["models"]}\nimpassable = {str(p.get("imp", False)).lower()}\n'
                 f'extra_enemy_units = {p.get("extra", 0)}\n')
    return t9a.loads(text)


def chosen(model, engine):
    """The placement chosen in every trial (the chargers' success is certain here)."""
    r = t9a.simulate(model, trials=4096 if engine == "kernel" else 256, seed=1, engine=engine)
    picked = {name: p.k for name, p in r["placements"].items() if p.k}
    assert len(picked) == 1, picked
    (name, k), = picked.items()
    assert k == r.trials
    return name


ENGINES = ["kernel", "reference"]


@pytest.mark.parametrize("engine", ENGINES)
def test_more_models_wins_3_7(engine):
    """§3.7 figure 6: four units with 12 models in contact beat four units with 10."""
    m = scenario([ALWAYS] * 4, [{"chargers": [0, 1, 2, 3], "models": 10},
                                {"chargers": [0, 1, 2, 3], "models": 12},
                                {"chargers": [0, 1, 2], "models": 14}])
    assert chosen(m, engine) == "p1"


@pytest.mark.parametrize("engine", ENGINES)
def test_fewer_units_never_beat_more_3_7(engine):
    """§3.7: more charging units beats any number of models in contact."""
    m = scenario([ALWAYS] * 3, [{"chargers": [0, 1], "models": 30},
                                {"chargers": [0, 1, 2], "models": 3}])
    assert chosen(m, engine) == "p1"


@pytest.mark.parametrize("engine", ENGINES)
def test_rotation_never_beats_no_rotation_3_7(engine):
    """§3.7 / Q-B6: in the 2.0 order a rotating placement never beats a non-rotating one; the
    2022 order (switch) puts units before rotation."""
    places = [{"chargers": [0, 1, 2], "models": 12, "rot": True}, {"chargers": [0], "models": 1}]
    assert chosen(scenario([ALWAYS] * 3, places), engine) == "p1"
    assert chosen(scenario([ALWAYS] * 3, places, order="2022"), engine) == "p0"


@pytest.mark.parametrize("engine", ENGINES)
def test_2022_extra_enemy_units_first_3_7(engine):
    """§3.7 2022 order: avoiding extra enemy units comes before everything else."""
    places = [{"chargers": [0, 1], "models": 12, "extra": 1}, {"chargers": [0], "models": 2}]
    assert chosen(scenario([ALWAYS] * 2, places, order="2022"), engine) == "p1"
    assert chosen(scenario([ALWAYS] * 2, places), engine) == "p0"


@pytest.mark.parametrize("engine", ENGINES)
def test_impassable_never_chosen_3_7(engine):
    """§3.7 figure 5: a placement crossing impassable terrain is never chosen, even if it is
    better on every criterion; with no legal one left, nobody arrives."""
    m = scenario([ALWAYS] * 2, [{"chargers": [0, 1], "models": 12, "imp": True},
                                {"chargers": [0], "models": 3, "rot": True}])
    assert chosen(m, engine) == "p1"
    m = scenario([ALWAYS], [{"chargers": [0], "models": 5, "imp": True}])
    r = t9a.simulate(m, trials=4096, seed=1, engine=engine)
    assert r["placements", "p0"].k == 0 and r["placements", "(none)"].k == 4096
    assert r["chargers", "c0", "fails_for_room"].k == 4096


@pytest.mark.parametrize("engine", ENGINES)
def test_failed_roll_excludes_placement_3_7(engine):
    """Issue §3: a placement needs every charger it names to make its roll; a charger that made
    its roll but is in no chosen placement fails for lack of room."""
    m = scenario([ALWAYS, NEVER, ALWAYS], [{"chargers": [0, 1, 2], "models": 12},
                                           {"chargers": [0], "models": 4},
                                           {"chargers": [2], "models": 3}])
    assert chosen(m, engine) == "p1"
    r = t9a.simulate(m, trials=4096, seed=1, engine=engine)
    assert r["chargers", "c2", "fails_for_room"].k == 4096
    assert r["combat", "units_in_combat"].counts[1] == 4096


def _better(a, b):
    """Is a strictly better than b in the 2.0 order?  Written out criterion by criterion."""
    if a["rot"] != b["rot"]:
        return not a["rot"]
    if len(a["chargers"]) != len(b["chargers"]):
        return len(a["chargers"]) > len(b["chargers"])
    return a["models"] > b["models"]


def test_random_placements_kernel_choice_3_7():
    """§3.7: on 40 random cases the kernel's choice is legal (made rolls, clear of impassable
    terrain) and no legal candidate is strictly better; the reference agrees."""
    rng = random.Random(7)
    for case in range(40):
        n = rng.randint(1, 4)
        made = [rng.random() < 0.7 for _ in range(n)]
        places = []
        for _ in range(rng.randint(1, 6)):
            who = sorted(rng.sample(range(n), rng.randint(1, n)))
            places.append({"chargers": who, "models": rng.randint(1, 12), "rot": rng.random() < 0.3,
                           "imp": rng.random() < 0.2})
        m = scenario([ALWAYS if ok else NEVER for ok in made], places)
        legal = [p for p in places if not p["imp"] and all(made[i] for i in p["chargers"])]
        r = t9a.simulate(m, trials=4096, seed=case)
        picked = [j for j in range(len(places)) if r["placements", f"p{j}"].k]
        if not legal:
            assert picked == [] and r["placements", "(none)"].k == 4096
            continue
        assert len(picked) == 1 and r["placements", f"p{picked[0]}"].k == 4096
        best = places[picked[0]]
        assert best in legal
        assert not any(_better(p, best) for p in legal), (case, places, made)
        assert chosen(m, "reference") == f"p{picked[0]}"
