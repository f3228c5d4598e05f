"""Issue 12 §2: the headline sentences and readable tables carry the same numbers as the JSON.

Each test parses the printed sentences back (percent and interval, or a mean), finds the JSON
quantity each one names by its wording, and checks that the printed digits are the JSON value
rounded: nothing in the headline is computed apart from what ``--json`` prints.
"""
from __future__ import annotations

import csv
import html
import io
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from wargame_odds.analysis import epic
from wargame_odds.analysis.cli import main
from wargame_odds.analysis.output.labels import number, percent

SCENARIOS = Path(__file__).resolve().parents[1] / "analysis" / "scenarios"
PERCENT = re.compile(r"^(?P<text>.+): (?P<p>[\d.]+) % \[(?P<lo>[\d.]+), (?P<hi>[\d.]+)\]$")
MEAN = re.compile(r"^(?P<text>.+) loses (?P<mean>[\d.]+) (?P<what>.+) on average(?P<rest>.*)$")


def _digits(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def _assert_rounded(printed: str, value: float, scale: float = 1.0):
    """``printed`` is ``value * scale`` rounded to the printed number of decimals."""
    assert abs(float(printed) - value * scale) <= 0.5 * 10 ** -_digits(printed) + 1e-9, (printed, value)


def _check_percent(match, node: dict):
    _assert_rounded(match["p"], node["p"], 100)
    _assert_rounded(match["lo"], node["ci95"][0], 100)
    _assert_rounded(match["hi"], node["ci95"][1], 100)


def _headline(text: str) -> list[str]:
    """The sentences between the header line and the first blank-line-separated block after them."""
    return text.split("\n\n")[1].splitlines()


def _check_sentences(sentences: list[str], lookup) -> int:
    """Every sentence with a number is matched to its JSON quantity by ``lookup(sentence)`` ->
    ("p", node) or ("mean", value); returns how many were checked."""
    checked = 0
    for sentence in sentences:
        if m := PERCENT.match(sentence):
            kind, node = lookup(m["text"])
            assert kind == "p", sentence
            _check_percent(m, node)
            checked += 1
        elif m := MEAN.match(sentence):
            kind, value = lookup(sentence)
            assert kind == "mean", sentence
            _assert_rounded(m["mean"], value)
            checked += 1
        else:
            assert not re.search(r"\d+\.\d", sentence), f"a number the test cannot trace: {sentence}"
    return checked


def _run(*args) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def _broken_or_destroyed_node(formation: dict, when: str) -> dict:
    """P(broken or destroyed) from the JSON: 1 − P(unbroken), and its Wilson interval [1 − hi, 1 − lo]
    of P(unbroken)'s (the Wilson interval of n − k successes mirrors that of k)."""
    node = formation[f"unbroken_after_{when}"]
    return {"p": 1 - node["p"], "ci95": [1 - node["ci95"][1], 1 - node["ci95"][0]]}


VERDICT = re.compile(r"^Verdict: (?P<winner>.+) (?:wins|holds: it wins) (?P<p>[\d.]+) % \[(?P<lo>[\d.]+), "
                     r"(?P<hi>[\d.]+)\]; broken or destroyed after the end phase: (?P<ends>.+)\.$")
ENDS = re.compile(r"(?P<name>[^,]+?) (?P<p>[\d.]+) % \[(?P<lo>[\d.]+), (?P<hi>[\d.]+)\]")


def _check_verdict_and_assumptions(verdict: str, assumed: str, data: dict) -> None:
    """Issue 41 §3: the first line is the verdict (the likelier winner of the assault, TP 1.12.7, and each engaged
    formation's P(broken or destroyed after the end phase), TP 1.14.1) with the JSON's numbers; the second states
    who the scenario puts in base contact and its blast markers (TP 1.12.3-1.12.6), from the JSON's engagement."""
    m = VERDICT.match(verdict)
    assert m, verdict
    winner = "attacker" if data["sides"]["attacker_wins"]["count"] >= data["sides"]["defender_wins"]["count"] \
        else "defender"
    assert f"({winner})" in m["winner"]
    _check_percent(m, data["sides"][f"{winner}_wins"])
    ends = list(ENDS.finditer(m["ends"]))
    engaged = [n for n, f in data["formations"].items() if f.get("role", "engaged") == "engaged"]
    assert sorted(e["name"].strip() for e in ends) == sorted(engaged)
    for e in ends:
        _check_percent(e, _broken_or_destroyed_node(data["formations"][e["name"].strip()], "end_phase"))
    assert assumed.startswith("Assumed: ")
    for name in engaged:
        e = data["engagement"][name]
        assert f"{name} {e['base_contact']} of {e['units']} units in base contact" in assumed


def _check_epic_headline(result) -> dict:
    """Every sentence of an Epic headline traced to the JSON; returns the JSON."""
    data = json.loads(result.to_json())
    names = "|".join(re.escape(n) for n in data["formations"])

    def lookup(text):
        if m := re.fullmatch(rf"(?:The (?P<side>attacker|defender) \(.+\)|(?:{names}) "
                             rf"\((?P<side2>attacker|defender)\)) wins", text):
            return "p", data["sides"][f"{m['side'] or m['side2']}_wins"]
        if m := re.fullmatch(rf"(?P<name>{names}) \((?:attacker|defender)\) is broken or destroyed after the "
                             r"(?P<when>assault|end phase|assault and after the end phase)", text):
            formation = data["formations"][m["name"]]
            if m["when"] == "assault and after the end phase":  # one sentence only when both counts agree
                assert formation["unbroken_after_assault"]["count"] == formation["unbroken_after_end_phase"]["count"]
                return "p", _broken_or_destroyed_node(formation, "assault")
            return "p", _broken_or_destroyed_node(formation, m["when"].replace(" ", "_"))
        if m := re.fullmatch(rf"(?P<name>{names}) \((?:attacker|defender)\) is (?P<what>destroyed|broken after the "
                             r"assault|broken after the end phase)", text):
            key = {"destroyed": "destroyed", "broken after the assault": "broken_after_assault",
                   "broken after the end phase": "broken_after_end_phase"}[m["what"]]
            return "p", data["formations"][m["name"]][key]
        if m := re.fullmatch(rf"(?P<name>{names}) \((?:attacker|defender)\) loses .+ units on average", text):
            return "mean", data["formations"][m["name"]]["casualties_mean"]
        if text == "No winner, both sides wiped out":
            return "p", data["sides"]["no_winner"]
        raise AssertionError(f"untraced sentence: {text}")

    sentences = _headline(result.text())
    _check_verdict_and_assumptions(sentences[0], sentences[1], data)
    sentences = sentences[2:]
    assert sentences[0] == ("Assault Detachment (attacker), supported by Tactical Detachment, "
                            "assaults Warband (defender).")
    never = [s for s in sentences if " is never destroyed or broken in these " in s]
    for sentence in never:  # a formation no trial harmed: one sentence, every count zero
        name, trials = re.fullmatch(r"(.+) \((?:attacker|defender)\) is never destroyed or broken in these "
                                    r"([\d,]+) trials", sentence).groups()
        assert int(trials.replace(",", "")) == data["trials"]
        assert all(data["formations"][name][k]["count"] == 0
                   for k in ("destroyed", "destroyed_after_assault", "broken_after_assault", "broken_after_end_phase"))
    assert [s.split(" (")[0] for s in never] == ["Tactical Detachment"]
    harmed = [f for n, f in data["formations"].items() if n != "Tactical Detachment"]
    combined = sum(1 if f["unbroken_after_assault"]["count"] == f["unbroken_after_end_phase"]["count"] else 2
                   for f in harmed)
    assert _check_sentences([s for s in sentences if s not in never], lookup) == 2 + 4 * len(harmed) + combined
    notebook = result._repr_html_()  # a notebook shows the same sentences above the table
    assert all(html.escape(sentence) in notebook for sentence in sentences)
    return data


def test_epic_headline_sides_and_formations_match_json():
    """TP 1.12.7 (who wins the assault), TP 1.12.8 / 1.14.1 (broken, destroyed, rallied): the
    headline states each side's win chance, each formation's chance of ending broken or destroyed
    after the assault and after the end phase (1 − P(unbroken), Wilson interval of that count),
    its destroyed / broken chances and mean casualties, with the JSON's numbers."""
    scenario = epic.load(SCENARIOS / "epic" / "assault_marines_vs_warband.toml")
    result = epic.simulate(scenario, trials=3000, seed=5, engine="reference")
    _check_epic_headline(result)
    sentences = _headline(result.text())
    # the end-phase rally (TP 1.14.1) lets a broken Warband recover: two different numbers
    assert any(s.startswith("Warband (defender) is broken or destroyed after the assault: ") for s in sentences)
    assert any(s.startswith("Warband (defender) is broken or destroyed after the end phase: ") for s in sentences)
    assert sentences.index(next(s for s in sentences if "Warband (defender) is broken or destroyed" in s)) < \
        sentences.index(next(s for s in sentences if s.startswith("Warband (defender) is destroyed: ")))


def test_epic_headline_names_the_formations_in_the_fight_by_their_role():
    """TP 1.12.2, 1.12.6 (support), 1.12.8 (nearby losers): only engaged formations are said to assault
    or to be assaulted; a supporting formation is named as support, a nearby one as nearby, and each
    still gets its broken / destroyed sentence(s) (a nearby loser takes a blast marker)."""
    scenario = epic.load(SCENARIOS / "epic" / "terminators_vs_guard_in_cover.toml")
    result = epic.simulate(scenario, trials=2000, seed=2)
    sentences = _headline(result.text())[2:]  # after the verdict and the assumptions
    assert sentences[:2] == ["Terminator Detachment (attacker) assaults the defender "
                             "(Guard Company and Guard Platoon).",
                             "Leman Russ Company (defender) is nearby (within 15 cm, not in the fight)."]
    assert sentences[3].startswith("The defender (Guard Company and Guard Platoon) wins: ")
    assert any(s.startswith("Leman Russ Company (defender) is ") and "nearby" not in s for s in sentences)
    assert json.loads(result.to_json())["formations"]["Leman Russ Company"]["role"] == "nearby"


def test_epic_headline_one_broken_or_destroyed_sentence_without_a_rally():
    """TP 1.14.1 not simulated (``end_phase.rally = false``): a formation broken after the assault
    stays broken, so the two counts agree and the headline says so in one sentence."""
    scenario = epic.load(SCENARIOS / "epic" / "assault_marines_vs_warband.toml").replace("end_phase.rally", False)
    result = epic.simulate(scenario, trials=2000, seed=6, engine="reference")
    _check_epic_headline(result)
    assert any(s.startswith("Warband (defender) is broken or destroyed after the assault and after the end phase: ")
               for s in _headline(result.text()))


def test_gdb_cli_headline_matches_cli_json():
    """charges.md §2.4 (outcome: contact, stopped, gives way; end states): the text output's
    sentences carry the numbers of ``--json`` for the same seed."""
    scenario = str(SCENARIOS / "gdb" / "column_vs_line.toml")
    text = _run("gdb", scenario, "-n", "20000", "-s", "3")
    data = json.loads(_run("gdb", scenario, "-n", "20000", "-s", "3", "--json"))
    charger, target = "2e Legere", "52nd Foot"

    def lookup(text):
        fixed = {"The charge goes in (contact)": ("summary", "contact"),
                 "The charge is stopped": ("summary", "charge_stopped"),
                 f"{target} gives way": ("summary", "defender_gives_way")}
        if text in fixed:
            section, key = fixed[text]
            return "p", data[section][key]
        if m := re.fullmatch(rf"(?:{charger} \((?P<c>charger)\)|{target} \((?P<d>defender)\)) "
                             r"(?P<verb>retreats|routs|is eliminated)", text):
            state = {"retreats": "retreating", "routs": "routing", "is eliminated": "eliminated"}[m["verb"]]
            return "p", data["end_state"]["charger" if m["c"] else "defender"][state]
        if text.startswith(f"{charger} (charger) loses "):
            return "mean", data["casualties"]["charger"]["mean"]
        raise AssertionError(f"untraced sentence: {text}")

    sentences = _headline(text)
    assert sentences[0].startswith("PLACEHOLDER") and sentences[1] == f"{charger} charges {target}."
    assert _check_sentences(sentences, lookup) >= 8


@pytest.mark.parametrize("scenario", ["three_chargers", "flee_reaction", "stand_and_shoot"])
def test_t9a_cli_headline_matches_cli_json(scenario):
    """charges.md §3.1-§3.4 (charge range reaches, charge succeeds, flee caught): sentences carry the
    numbers of ``--json`` for the same seed."""
    path = str(SCENARIOS / "t9a" / f"{scenario}.toml")
    text = _run("t9a", path, "-n", "20000", "-s", "2")
    data = json.loads(_run("t9a", path, "-n", "20000", "-s", "2", "--json"))
    names = "|".join(re.escape(n) for n in data["chargers"])
    target = re.escape(data["target_name"])

    def lookup(text):
        if m := re.fullmatch(rf"Charge range of (?P<n>{names}) reaches", text):
            return "p", data["chargers"][m["n"]]["reaches"]
        if m := re.fullmatch(rf"Charge of (?P<n>{names}) succeeds \(ends in the combat\)", text):
            return "p", data["chargers"][m["n"]]["arrives"]
        if m := re.fullmatch(rf"Fleeing {target} caught by (?P<n>{names})", text):
            return "p", data["chargers"][m["n"]]["catches"]
        if m := re.fullmatch(rf"(?P<n>{names}) shot down by Stand and Shoot", text):
            return "p", data["chargers"][m["n"]]["shot_down"]
        if text == f"{data['target_name']} destroyed":
            return "p", data["target"]["destroyed"]
        raise AssertionError(f"untraced sentence: {text}")

    assert _check_sentences(_headline(text), lookup) >= 2 * len(data["chargers"])


def test_readable_table_has_no_keys_and_no_repeated_rows():
    """§2: the full table uses readable labels (no snake_case keys), shows probabilities in percent
    with their interval, and shows a number that always repeats another (the T9A after-fail flags
    of §3.4.4, equal to "fails") once."""
    text = _run("t9a", str(SCENARIOS / "t9a" / "three_chargers.toml"), "-n", "4096")
    table = text.split("All estimates (95 % interval in brackets)\n", 1)[1]
    assert not re.search(r"\b[a-z]+_[a-z_]+\b", table), table
    rows = [line for line in table.splitlines() if line.startswith("  ")]
    assert len(rows) == len(set(rows))
    assert "charge fails (then: no move next Movement Phase; no shooting next Shooting Phase)" in table
    assert re.search(r"charge range reaches +\d+\.\d %", table)


def test_percent_shows_two_decimals_only_for_narrow_intervals():
    """Every probability is printed in percent with its 95 % interval."""
    assert percent(0.6512, 0.6494, 0.6531) == "65.1 % [64.9, 65.3]"
    assert percent(0.58041, 0.57972, 0.58110) == "58.04 % [57.97, 58.11]"
    assert percent(float("nan"), float("nan"), float("nan")) == "n/a"


def test_cli_csv_distributions_and_at_least_match_json(tmp_path):
    """§2: ``--csv``, ``--distributions`` and ``--at-least`` on a single scenario carry the JSON's
    distribution (charges.md §2.2 charger casualties) and its "at least N" sums; ``--plot`` writes
    the figure."""
    scenario = str(SCENARIOS / "gdb" / "column_vs_line.toml")
    args = ["gdb", scenario, "-n", "20000", "-s", "4"]
    data = json.loads(_run(*args, "--json"))
    dist = data["casualties"]["charger"]["distribution"]
    rows = list(csv.DictReader(io.StringIO(_run(*args, "--csv"))))
    contact = next(r for r in rows if r["section"] == "summary" and r["quantity"] == "contact")
    assert float(contact["estimate"]) == data["summary"]["contact"]["p"]
    at_least = [r for r in csv.DictReader(io.StringIO(_run(*args, "--csv", "--at-least")))
                if r["section"] == "casualties" and r["entity"] == "charger"]
    assert [float(r["p"]) for r in at_least] == pytest.approx([sum(dist["p"][i:]) for i in range(len(dist["p"]))])
    plot = tmp_path / "charge.png"
    text = _run(*args, "--distributions", "--at-least", "--plot", str(plot))
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    block = text.split('"At least N" tables\n', 1)[1].split("Casualties: charger from target fire", 1)[0]
    assert block.startswith("Casualties: charger: casualties (losses)\n     value  P(at least this value)\n")
    lines = block.splitlines()[2:]
    for value, line in zip(dist["values"], lines):
        m = re.fullmatch(r"\s+(\d+)\s+(?P<p>[\d.]+) % \[(?P<lo>[\d.]+), (?P<hi>[\d.]+)\]", line)
        assert m and int(m[1]) == value, line
        _assert_rounded(m["p"], sum(dist["p"][value:]), 100)
    exact = text.split("Distributions\n", 1)[1]
    assert exact.startswith("Casualties: charger: casualties (losses)\n     value  P(exactly this value)\n")


def test_cli_plot_rejects_an_unknown_file_type(tmp_path):
    """Bad input: one line naming the file and the allowed types, exit 2."""
    result = CliRunner().invoke(main, ["gdb", str(SCENARIOS / "gdb" / "column_vs_line.toml"), "-n", "100",
                                       "--plot", str(tmp_path / "x.bmpx")])
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert "x.bmpx" in result.output and ".png, .svg, .pdf" in result.output


def _check_summary(summary_text: str, row_of):
    """'NAME (attacker) wins: p % [lo, hi]; …' sentences against the JSON rows ``row_of(text)``."""
    for sentence in summary_text.split("; "):
        m = PERCENT.match(sentence)
        assert m, sentence
        row = row_of(m["text"])
        _check_percent(m, {"p": row["estimate"], "ci95": [row["ci95_lo"], row["ci95_hi"]]})


def test_sweep_cli_headline_matches_its_json():
    """charges.md §2.4 (contact, stopped) at every swept charge distance: the decision command's
    first lines carry the numbers of its ``--json`` rows."""
    args = ["sweep", str(SCENARIOS / "gdb" / "column_vs_line.toml"), "charger.distance", "4", "10", "-n", "8192"]
    text = _run(*args)
    lines = text.split("\n\n", 1)[0].splitlines()
    header = text.split("\n\n", 1)[1].splitlines()[1]  # the value → probability table: readable columns (§2, §4)
    assert header.split()[0] == "charger.distance" and "contact" in header
    assert not re.search(r"\b[a-z]+_[a-z_]+\b", header), header
    rows = json.loads(_run(*args, "--json"))["rows"]
    assert [line.split(":", 1)[0] for line in lines] == ["charger.distance = 4", "charger.distance = 10"]
    for line, value in zip(lines, (4, 10)):
        key = {"The charge goes in (contact)": "contact", "The charge is stopped": "charge_stopped"}
        _check_summary(line.split(": ", 1)[1], lambda text: next(
            r for r in rows if r["value"] == value and r["section"] == "summary" and r["quantity"] == key[text]))


def test_matrix_headline_matches_its_rows():
    """TP 1.12.7 (who wins) for every attacker × defender: the matrix headline carries the numbers
    of its JSON rows."""
    from wargame_odds.analysis import decisions
    from wargame_odds.analysis.output.headline import decision_sentences

    matrix = decisions.matrix(["netea:space-marine-codex-astartes/tactical"], ["netea:ork-war-horde/warband"],
                              base=str(SCENARIOS / "epic" / "assault_marines_vs_warband.toml"), trials=1500, seed=3,
                              engine="reference")
    rows = json.loads(matrix.to_json())["rows"]
    plans, line, scored = decision_sentences(matrix)
    assert plans == "Options are scored by their plan (Tactical: assault), on the chance to win the assault."
    assert scored.startswith("How this is scored: each row's formation plays its turn plan")
    assert "base contact" in scored
    head, summary_text = line.split(": ", 1)
    assert head == "Tactical against Warband"
    side = {"Tactical (attacker) wins": "attacker_wins", "Warband (defender) wins": "defender_wins"}
    _check_summary(summary_text, lambda text: next(r for r in rows if r["quantity"] == side[text]))
    assert html.escape(line) in matrix._repr_html_()


def _number(name: str, unit: str = "") -> str:
    """A pattern for "ESTIMATE UNIT [LO, HI]" with groups ``name``, ``name_lo``, ``name_hi``."""
    return (rf"(?P<{name}>-?[\d.]+){' ' + re.escape(unit) if unit else ''} "
            rf"\[(?P<{name}_lo>-?[\d.]+), (?P<{name}_hi>-?[\d.]+)\]")


def _check_triple(match, name: str, row: dict, column: str, scale: float = 1.0):
    """``name``, ``name_lo``, ``name_hi`` of ``match`` are the row's ``column`` (with _lo / _hi, or the
    ci95_lo / ci95_hi pair for ``column`` = "difference" / "score") times ``scale``, rounded."""
    ends = ("ci95_lo", "ci95_hi") if column in ("difference", "score") else (f"{column}_lo", f"{column}_hi")
    for part, key in zip(("", "_lo", "_hi"), (column, *ends)):
        _assert_rounded(match[name + part], row[key], scale)


def test_compare_headline_matches_its_rows():
    """TP 1.12.7 (who wins) for two options against every opponent and the weighted meta: each
    sentence carries both win chances (percent), their difference (percentage points) and each
    option's points swing (points destroyed − lost), all with the numbers of the JSON rows; the
    table after them has readable headings (no keys) and the same numbers in percent."""
    from wargame_odds.analysis import decisions
    from wargame_odds.analysis.output.headline import decision_sentences

    result = decisions.compare("netea:space-marine-codex-astartes/assault",
                               "netea:space-marine-codex-astartes/tactical",
                               ["netea:ork-war-horde/warband", "netea:ork-war-horde/kommando-warhorde"],
                               base=str(SCENARIOS / "epic" / "assault_marines_vs_warband.toml"), trials=600, seed=4,
                               engine="reference", method="exact-pairs")
    rows = json.loads(result.to_json())["rows"]
    sentence = re.compile(
        rf"Against (?P<opponent>.+): Assault wins {_number('a', '%')}, Tactical wins {_number('b', '%')}; "
        rf"Assault − Tactical: {_number('d', 'percentage points')}; points swing \(destroyed − lost\): "
        rf"Assault {_number('sa')}, Tactical {_number('sb')}")
    *lines, method = decision_sentences(result)
    assert len(lines) == len(rows) == 3 and method == result.meta["method_reason"]
    for line, row in zip(lines, rows):
        m = sentence.fullmatch(line)
        assert m and m["opponent"] == row["opponent"], line
        _check_triple(m, "a", row, "p_a", 100)
        _check_triple(m, "b", row, "p_b", 100)
        _check_triple(m, "d", row, "difference", 100)
        _check_triple(m, "sa", row, "points_swing_a")
        _check_triple(m, "sb", row, "points_swing_b")
    answer = str(result).split("\nDetails for those who ask: what pairing by common random numbers bought")[0]
    assert not re.search(r"\b[a-z]+_[a-z_]+\b", answer), answer
    assert "Assault − Tactical" in answer and "Points trade (means, 95 % interval)" in answer
    assert percent(rows[0]["p_a"], rows[0]["p_a_lo"], rows[0]["p_a_hi"]) in answer


def test_rank_headline_matches_its_rows():
    """TP 1.12.7 against a weighted meta: each option's rank, score and chance per 100 points (percent)
    and its points swing carry the numbers of the JSON rows; so does the readable table."""
    from wargame_odds.analysis import decisions
    from wargame_odds.analysis.output.headline import decision_sentences

    result = decisions.rank(["netea:space-marine-codex-astartes/assault", "netea:space-marine-codex-astartes/tactical"],
                            [("netea:ork-war-horde/warband", 2), ("netea:ork-war-horde/kommando-warhorde", 1)],
                            base=str(SCENARIOS / "epic" / "assault_marines_vs_warband.toml"), trials=500, seed=5,
                            engine="reference", by="per_100_points")
    rows = json.loads(result.to_json())["rows"]
    sentence = re.compile(
        rf"(?P<rank>\d)\. (?P<option>.+) \(assault\) wins {_number('s', '%')} against the meta \(weighted, as the "
        rf"attacker\); "
        rf"per 100 points: {_number('h', '%')}; points swing \(destroyed − lost\): {_number('w')}"
        rf"(?:; the best by its score|; within 1 point of the best \(paired: .+ behind\)|"
        rf"; behind the best by {_number('b', 'points')} \(paired\))")
    plans, *lines, scored = decision_sentences(result)
    assert plans.startswith("Options are scored by their plan (")
    assert plans.endswith("on the chance to win the assault.")
    assert scored.startswith("How this is scored: each option plays its turn plan against each opponent as the ")
    assert len(lines) == len(rows) == 2
    for line, row in zip(lines, rows):
        m = sentence.fullmatch(line)
        assert m and int(m["rank"]) == row["rank"] and m["option"] == row["option"], line
        _check_triple(m, "s", row, "score", 100)
        _check_triple(m, "h", row, "per_100_points", 100)
        _check_triple(m, "w", row, "points_swing")
        if m["b"] is not None:  # the paired interval of the score behind the best (rank's behind_* columns)
            for part, key in (("", "behind_best"), ("_lo", "behind_lo"), ("_hi", "behind_hi")):
                _assert_rounded(m["b" + part], row[key], 100)
    text = str(result)
    assert not re.search(r"\b[a-z]+_[a-z_]+\b", text), text
    assert percent(rows[0]["score"], rows[0]["ci95_lo"], rows[0]["ci95_hi"]) in text


def test_threshold_cli_statement_matches_its_json():
    """Issue 12 §4 (charge range, t9a.md §3.1): the threshold text starts with its statement, whose two
    values and intervals are the JSON's points, the answer and the value tried just after it."""
    args = ["threshold", str(SCENARIOS / "t9a" / "single_charge_9in.toml"), "chargers[Swordsmen].distance",
            "--values", "8:12", "--quantity", "chargers[Swordsmen].reaches", "--at-least", "0.5", "--largest",
            "-n", "8192", "-s", "2"]
    data = json.loads(_run(*args, "--json"))
    first = _run(*args).splitlines()[0]
    points = {pt["value"]: pt for pt in data["points"]}
    shown = re.findall(r"(\d+) \(?(?:gives )?([\d.]+) % \[([\d.]+), ([\d.]+)\]", first)
    assert [int(v) for v, *_ in shown] == [data["value"], data["value"] + 1], first
    for value, p, lo, hi in shown:
        point = points[int(value)]
        _check_percent({"p": p, "lo": lo, "hi": hi}, point)
    assert first == data["statement"]


def _check_turn_headline(result) -> list[str]:
    """Every sentence of a turn headline traced to the JSON: per activation its action test (and
    target broken), then the assault sentences of the formations that fight in it only."""
    data = json.loads(result.to_json())
    sentences = _headline(result.text())
    activations = [s for s in sentences if re.match(r"\d+\. ", s)]
    assert len(activations) == len(data["turn"])
    for sentence, (key, entry) in zip(activations, data["turn"].items()):
        m = re.match(rf"{key}\. {re.escape(entry['formation'])} \(.+\) passes its action test "
                     r"(?P<p>[\d.]+) % \[(?P<lo>[\d.]+), (?P<hi>[\d.]+)\]", sentence)
        assert m, sentence
        _check_percent(m, entry["action_test_passed"])
        if "target_broken" in entry:
            m = re.search(rf"{re.escape(entry['target'])} is broken after it (?P<p>[\d.]+) % "
                          r"\[(?P<lo>[\d.]+), (?P<hi>[\d.]+)\]", sentence)
            _check_percent(m, entry["target_broken"])
    [engage] = [e for e in data["turn"].values() if e["action"] == "engage"]
    fighting = [engage["formation"], engage["target"]]
    names = "|".join(re.escape(n) for n in data["formations"])

    def lookup(text):
        if text == "No assault (the engage activation did not lead to one)":
            return "p", data["sides"]["no_assault"]
        m = re.match(rf"(?P<name>{names}) \((?P<side>attacker|defender)\) (?P<what>.+)", text)
        assert m and m["name"] in fighting, f"a formation outside the assault in an assault sentence: {text}"
        formation = data["formations"][m["name"]]
        if m["what"] == "wins":
            return "p", data["sides"][f"{m['side']}_wins"]
        if m["what"].startswith("is broken or destroyed after the "):
            when = m["what"].removeprefix("is broken or destroyed after the ")
            when = "assault" if when == "assault and after the end phase" else when.replace(" ", "_")
            return "p", _broken_or_destroyed_node(formation, when)
        if m["what"].startswith("loses "):
            return "mean", formation["casualties_mean"]
        key = {"is destroyed": "destroyed", "is broken after the assault": "broken_after_assault",
               "is broken after the end phase": "broken_after_end_phase"}[m["what"]]
        return "p", formation[key]

    rest = [s for s in sentences if s not in activations]
    assert rest[0].startswith("Verdict: ") and sentences[0] == rest[0]  # the verdict leads a turn too
    m = VERDICT.match(rest.pop(0))
    _check_percent(m, data["sides"][f"{'attacker' if '(attacker)' in m['winner'] else 'defender'}_wins"])
    assert sorted(e["name"].strip() for e in ENDS.finditer(m["ends"])) == sorted(fighting)
    assert rest[0] == f"{fighting[0]} ({data['formations'][fighting[0]]['side']}) assaults " \
                      f"{fighting[1]} ({data['formations'][fighting[1]]['side']})."
    assert _check_sentences(rest[1:], lookup) >= 3 + 2 * 5
    return sentences


def test_turn_headline_names_only_the_formations_in_the_assault():
    """docs/epic-turn.md §2, §4 (TP 1.6.2, 1.12.7): a turn's headline tells each activation (action test,
    target broken) and then the assault in the words of an assault's headline, naming only the charger
    and its target: the Big Gunz and the Heavy Weapons shoot or stand by but never assault, and no
    sentence groups them with the Warband; every number is the JSON's."""
    scenario = epic.load(SCENARIOS / "epic" / "turns" / "ork_warband_shoots_then_assaults_guard.toml")
    result = epic.simulate(scenario, trials=600, seed=3, engine="reference")
    sentences = _check_turn_headline(result)
    outside = [s for s in sentences if not re.match(r"\d+\. ", s) and ("Big Gunz" in s or "Heavy Weapons" in s)]
    assert outside == []
    assert any(s.startswith("1. Big Gunz (Sustained Fire at Guard Company) passes its action test") for s in sentences)
    assert any(s.startswith("3. Warband (Engage at Guard Company)") for s in sentences)
    assert html.escape(sentences[-1]) in result._repr_html_()


def test_turn_headline_keeps_an_explicit_engaged_role():
    """docs/epic-turn.md §2 (TP 1.12.2): in a turn, a formation with an explicit ``role = "engaged"`` fights
    in the assault beside the charge's target, and one without a role stays out: the JSON's ``role`` says
    so for each formation, and the headline names the engaged one among the assault's side."""
    scenario = epic.load(SCENARIOS / "epic" / "turns" / "ork_warband_shoots_then_assaults_guard.toml")
    scenario = scenario.replace("formations[Heavy Weapons].role", "engaged")
    scenario = scenario.replace("formations[Heavy Weapons].units[0].engaged", "ff")
    result = epic.simulate(scenario, trials=300, seed=3, engine="reference")
    data = json.loads(result.to_json())
    assert {name: f["role"] for name, f in data["formations"].items()} == {
        "Big Gunz": "outside", "Warband": "engaged", "Guard Company": "engaged", "Heavy Weapons": "engaged"}
    sentences = _headline(result.text())
    assert "Warband (attacker) assaults the defender (Guard Company and Heavy Weapons)." in sentences
    assert any(s.startswith("Heavy Weapons (defender) is broken or destroyed") for s in sentences)
    assert not any(s.startswith("Big Gunz (attacker) is") for s in sentences)


def test_ground_attack_headline_tells_what_flak_did():
    """docs/epic-turn.md §9 (TP 4.2.4, 4.2.7): a ground attack's sentence adds the flak hits on the
    aircraft and the aircraft shot down, each mean with its interval as the result's rows give them."""
    scenario = epic.load(SCENARIOS / "epic" / "aircraft" / "thunderbolts_strafe_ork_warband.toml")
    result = epic.simulate(scenario, trials=300, seed=3, engine="reference")
    rows = {(r["entity"], r["quantity"]): r for r in result.rows() if r["section"] == "turn"}
    [sentence] = [s for s in _headline(result.text()) if s.startswith("1. Thunderbolt Squadron (Ground Attack")]
    shown = [number(r["estimate"], r["ci95_lo"], r["ci95_hi"])
             for r in (rows["1", "flak_hits_mean"], rows["1", "aircraft_lost_mean"])]
    assert f"; flak scores {shown[0]} hits and shoots down {shown[1]} aircraft on average" in sentence
    turn_json = json.loads(result.to_json())["turn"]["1"]
    assert rows["1", "aircraft_lost_mean"]["estimate"] == turn_json["aircraft_lost_mean"]
