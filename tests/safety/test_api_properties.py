"""Property tests of the whole Python API (issue 40 §3–§4): every function ``import wargame_odds as wo`` exposes,
and every public method of the classes it exposes, found by walking ``wo`` (a new public function is covered
without touching this file, and fails here until it has a line in :data:`VALID`).

One argument at a time is replaced by a hostile value (a wrong type, NaN or infinity, an endless or huge iterable,
hostile text, a truthy text for a flag); the call must then return, or raise the project's ``ArgumentError`` or
``UserError`` as one line of at most 2,000 characters without a raw control or bidi character, in bounded time and
memory, with no traceback of another exception.  An argument annotated ``bool`` must refuse what is not a bool,
one annotated ``int`` what is not a whole number.  Fixed examples (``derandomize``), bounded counts, deadlines off;
small trial counts."""
import inspect
import itertools
import math
import resource
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import wargame_odds as wo
from wargame_odds.analysis.intake.errors import ArgumentError, UserError

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "analysis" / "scenarios"
EPIC = SCENARIOS / "epic" / "assault_marines_vs_warband.toml"
GDB = SCENARIOS / "gdb" / "cavalry_vs_square.toml"
T9A = SCENARIOS / "t9a" / "single_charge_9in.toml"
T9A_COMBAT = SCENARIOS / "t9a" / "knights_charge_spear_block.toml"
TACTICAL, WARBAND = "netea:space-marine-codex-astartes/tactical", "netea:ork-war-horde/warband"
ASSAULT = "netea:space-marine-codex-astartes/assault"
#: A report of one small cell (the shipped demo takes minutes).
SMALL_REPORT = f'''title = "small"
trials = 4096

[[cells]]
kind = "scenario"
name = "charge"
scenario = "{T9A}"
'''
MAX_SECONDS = 60  # one call, on a busy machine
MAX_RSS_KIB = 4 * 1024 * 1024
RAW = ("\x1b", "\x07", "\u202e", "\x00")
FEW = {"trials": 4096}

#: Hostile values: wrong types, non-finite and huge numbers, huge or endless iterables, hostile or huge text.
HOSTILE = [None, object(), "no", b"bytes", 1.5, 2000.5, math.nan, math.inf, -1, 2**64, [], {}, [None], ("a",) * 3,
           "\x1b[2J\u202e", "two\nlines", "N" * 1_000_000, "nul\x00byte"]
ENDLESS = "endless"  # an itertools.count() (made afresh for each call)
HUGE = "huge"  # range(10**8)


def _result(system):
    """A small result of ``system`` (built once)."""
    if system not in _RESULTS:
        path = {"epic": EPIC, "t9a": T9A}[system]
        _RESULTS[system] = getattr(wo, system).simulate(path, trials=4096, seed=1)
    return _RESULTS[system]


_RESULTS = {}

#: Valid arguments of each public function, (args, kwargs); a method's instance is made by ``self``.
VALID = {
    "wo.examples": ((), {}),
    "wo.app": ((), {}),
    "wo.matrix": (([TACTICAL], [WARBAND]), FEW),
    "wo.sweep": ((T9A, "chargers[0].distance", [8, 9]), FEW),
    "wo.threshold": ((T9A, "chargers[0].distance", [8, 9]),
                     {"quantity": "chargers.Swordsmen.arrives", "at_least": 0.5, **FEW}),
    "wo.compare": ((ASSAULT, TACTICAL, [WARBAND]), {"trials": 4096, "method": "exact-pairs"}),
    "wo.rank": (([ASSAULT, TACTICAL], [WARBAND]), FEW),
    "wo.cumulative": ((lambda: _result("t9a"),), {}),
    "wo.decisions.matchup": ((TACTICAL, WARBAND), {}),
    "wo.epic.load": ((EPIC,), {}),
    "wo.epic.loads": ((EPIC.read_text(),), {}),
    "wo.epic.simulate": ((EPIC,), FEW),
    "wo.epic.trace": ((EPIC,), {}),
    "wo.epic.engine_for": ((EPIC,), {}),
    "wo.epic.regroup": ((3,), {}),
    "wo.epic.rally": ((2,), {"blast_markers": 2}),
    "wo.epic.action_test": ((2,), {}),
    "wo.epic.assault_result": ((), {}),
    "wo.gdb.load": ((GDB,), {}),
    "wo.gdb.loads": ((GDB.read_text(),), {}),
    "wo.gdb.simulate": ((GDB,), FEW),
    "wo.gdb.trace": ((GDB,), {}),
    "wo.gdb.sweep": ((GDB, "charger.distance", [6.0]), FEW),
    "wo.t9a.load": ((T9A,), {}),
    "wo.t9a.loads": ((T9A.read_text(),), {}),
    "wo.t9a.simulate": ((T9A,), FEW),
    "wo.t9a.trace": ((T9A,), {}),
    "wo.t9a.charge_table": (([8, 9], [5]), {}),
    "wo.t9a.exact_combat": ((T9A_COMBAT,), {}),
    "wo.reports.build": (("<report>",), {"out": "<tmp>"}),
    "wo.reports.load_report": (("<report>",), {}),
    "wo.reports.cell_key": (("cell",), {}),
    "wo.reports.make_executor": ((), {}),
    "wo.labels.quantity_label": (("epic", "destroyed"), {}),
    "wo.labels.axis_label": (("epic", "blast_markers"), {}),
    "wo.labels.group_label": (("epic", "formations", "Warband"), {}),
    "wo.labels.names": (("systems",), {}),
    "wo.labels.report_at_least": (("epic",), {}),
    "wo.labels.percent": ((0.5, 0.4, 0.6), {}),
    "wo.labels.number": ((1.0, 0.5, 1.5), {}),
    "wo.labels.estimate_text": (("probability", 0.5, 0.4, 0.6), {}),
    "wo.labels.readable_rows": (("t9a", lambda: _result("t9a").table()), {}),
    "wo.labels.decisive_rows": (("t9a", lambda: _result("t9a").table()), {}),
    "wo.labels.action_name": (("sustained_fire",), {}),
    "wo.enumerate_detachments": (("netea:space-marine-codex-astartes",), {"max_points": 200}),
    "wo.list_search": (("epic/decisions/list_search_two_choices",), {"max_trials": 20_000}),
    "wo.labels.text_table": (([{"group": "g", "quantity": "q", "text": "t"}],), {}),
    "wo.labels.sides_of": (({"formations": {}},), {}),
    "wo.labels.html_table": (([{"group": "g", "quantity": "q", "text": "t"}],), {}),
    "wo.labels.field_words": (("formations[0].blast_markers",), {}),
    "wo.labels.result_words": (("epic", "sides.attacker_wins"), {}),
    "wo.systems.names": ((), {}),
    "wo.systems.get": (("gdb",), {}),
    "wo.systems.all": ((), {}),
    "wo.systems.of": ((GDB,), {}),
}


def _public_functions() -> dict[str, object]:
    """Every function of ``wo``, of its modules' ``__all__`` and every public method of the classes there that is
    this project's own (not pydantic's or pandas')."""
    found, seen = {}, set()
    for name in wo.__all__:
        obj = getattr(wo, name)
        if inspect.isfunction(obj):
            found[f"wo.{name}"] = obj
            seen.add(obj)
        elif inspect.ismodule(obj):
            names = getattr(obj, "__all__", None) or [k for k, v in vars(obj).items() if not k.startswith("_")
                                                      and getattr(v, "__module__", None) == obj.__name__]
            for inner in names:
                member = getattr(obj, inner)
                if inspect.isfunction(member) and member not in seen:
                    found[f"wo.{name}.{inner}"] = member
                    seen.add(member)
                elif inspect.isclass(member) and inner not in NEEDS_A_SERVER:
                    for cls in reversed(member.__mro__):  # (a subclass's own method wins)
                        if not cls.__module__.startswith("wargame_odds.analysis"):
                            continue
                        for method_name, method in vars(cls).items():
                            if not method_name.startswith(("_", "model_")) and inspect.isfunction(method):
                                found[f"wo.{name}.{inner}.{method_name}"] = method
    return found


#: Classes whose instances need a running Dask scheduler (their arguments are checked by tests/reports).
NEEDS_A_SERVER = ("DaskExecutor",)


PUBLIC = _public_functions()
#: Methods need an instance; these are the classes whose methods are called here, and how to make one.
INSTANCES = {"EpicScenario": lambda: wo.epic.load(EPIC), "Model": None, "EpicResult": lambda: _result("epic"),
             "T9AResult": lambda: _result("t9a"), "LocalExecutor": lambda: wo.reports.LocalExecutor()}


def _method_call(name: str):
    """(callable, args, kwargs) of a public method with valid arguments."""
    *_, cls, method = name.split(".")
    module = name.split(".")[1]
    if cls == "Model":
        instance = getattr(wo, module).load({"gdb": GDB, "t9a": T9A}[module])
    else:
        instance = INSTANCES[cls]()
    valid = METHOD_VALID.get((cls if cls != "Model" else f"{module}.Model", method), ((), {}))
    return getattr(instance, method), *valid


#: Valid arguments of methods that need some.
METHOD_VALID = {
    ("EpicScenario", "replace"): (("formations[0].blast_markers", 1), {}),
    ("gdb.Model", "replace"): (("charger.distance", 6.0), {}),
    ("T9AResult", "cumulative"): (("chargers", "Swordsmen", "charge_roll"), {}),
    ("EpicResult", "cumulative"): (("formations", "Warband", "casualties"), {}),
    ("LocalExecutor", "map"): ((abs, [1, -2]), {}),
    ("T9AResult", "charge_range_panel"): ((lambda: _axes(),), {}),
}


def _axes():
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    return Figure().add_subplot()


def _call(name: str, tmp_path: Path, replace: tuple[str, object] | None = None):
    """Call public ``name`` with its valid arguments, one of them replaced by ``replace`` (name, value)."""
    if name.count(".") == 3:
        function, args, kwargs = _method_call(name)
        params = list(inspect.signature(PUBLIC[name]).parameters.values())[1:]
    else:
        function = PUBLIC[name]
        args, kwargs = VALID[name]
        params = list(inspect.signature(function).parameters.values())
    report = tmp_path / "small.toml"
    report.write_text(SMALL_REPORT)
    places = {"<tmp>": str(tmp_path / "out"), "<report>": report}
    args = [a() if callable(a) and getattr(a, "__name__", "") == "<lambda>" else places.get(a, a)
            if isinstance(a, str) else a for a in args]
    kwargs = {k: places.get(v, v) if isinstance(v, str) else v for k, v in kwargs.items()}
    if replace is not None:
        key, value = replace
        value = itertools.count() if value is ENDLESS else range(10**8) if value is HUGE else value
        index = next(i for i, p in enumerate(params) if p.name == key)
        if index < len(args) and params[index].kind != inspect.Parameter.KEYWORD_ONLY:
            args[index] = value
        else:
            kwargs = kwargs | {key: value}
    return function(*args, **kwargs)


def _parameters(name: str) -> list[inspect.Parameter]:
    params = list(inspect.signature(PUBLIC[name]).parameters.values())
    if name.count(".") == 3:
        params = params[1:]
    return [p for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name not in ("executor",)]


def _check_outcome(name: str, key: str, value, tmp_path: Path) -> None:
    """Call ``name`` with argument ``key`` = ``value`` in ``tmp_path`` (a path it takes as valid, "no" or
    "two\\nlines", is written there, never into the checkout) and check the promises."""
    if value is None and inspect.signature(PUBLIC[name]).parameters[key].default is None:
        return  # the default: what the valid call does
    before = sorted(ROOT.iterdir())
    start = time.monotonic()
    detail = f"{name}({key}={value!r:.60})"
    try:
        _call(name, tmp_path, (key, value))
        refused = None
    except (ArgumentError, UserError) as exc:
        refused = str(exc)
    took = time.monotonic() - start
    assert took < MAX_SECONDS, detail
    assert sorted(ROOT.iterdir()) == before, f"{detail}: wrote into the checkout"
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss < MAX_RSS_KIB, detail
    annotation = str(inspect.signature(PUBLIC[name]).parameters[key].annotation)
    if value not in (ENDLESS, HUGE):
        if annotation in ("bool", "bool | None") and not (isinstance(value, bool) or value is None):
            assert refused is not None, f"{detail}: a flag took a value that is not True or False"
        if annotation.startswith("int") and not (value is None or isinstance(value, int)):
            assert refused is not None, f"{detail}: a whole number took {value!r:.40}"
    if refused is not None:
        assert len(refused.splitlines()) == 1 and len(refused) <= 2000, detail
        for raw in RAW:
            assert raw not in refused, (raw, detail)


def test_every_public_function_has_valid_arguments_here():
    """A new public function is found by the walk; it needs its valid arguments in VALID (or METHOD_VALID)."""
    missing = [n for n in PUBLIC if n.count(".") < 3 and n not in VALID]
    assert not missing, f"add valid arguments for {missing}"
    assert len(PUBLIC) >= 40


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_valid_arguments_work(name, tmp_path, monkeypatch):
    """The valid arguments of each function run (so a refusal below is the hostile value's doing)."""
    monkeypatch.chdir(tmp_path)
    _call(name, tmp_path)


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_none_and_a_wrong_type_for_each_argument_are_refused_in_one_line(name, tmp_path, monkeypatch):
    """Every argument in turn given ``None``, an ``object()`` and a truthy text: returns or one line."""
    monkeypatch.chdir(tmp_path)
    for param in _parameters(name):
        for value in (None, object(), "no"):
            _check_outcome(name, param.name, value, tmp_path)


@pytest.mark.parametrize("name", sorted(PUBLIC))
@settings(max_examples=12, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_hostile_values_are_refused_in_one_line_in_bounded_time(name, tmp_path, monkeypatch, data):
    """Any argument, any hostile value (NaN, infinity, 2**64, 2000.5, huge and endless iterables, hostile text)."""
    monkeypatch.chdir(tmp_path)
    params = _parameters(name)
    if not params:
        return
    param = data.draw(st.sampled_from(params), label="argument")
    value = data.draw(st.sampled_from([*HOSTILE, ENDLESS, HUGE]), label="value")
    _check_outcome(name, param.name, value, tmp_path)
