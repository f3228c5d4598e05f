"""Issue 12 §1, first run and speed of use: one Numba cache folder for every entry point, lazy command
loading (``--help`` imports neither Numba nor the data libraries), the cold-compile notice."""
import gc
import importlib
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from numba import njit
from numba.core import event

from wargame_odds import kernels
from wargame_odds.analysis.cli import COMMANDS, SYSTEMS, main
from wargame_odds.analysis.run.numba_cache import EPIC_TURN_COMPILE, KERNEL_COMPILES, CompileNotice, compile_notice

ROOT = Path(__file__).resolve().parent.parent
GDB_SCENARIO = ROOT / "analysis" / "scenarios" / "gdb" / "column_vs_line.toml"
HEAVY = ("numba", "numpy", "pandas", "scipy", "matplotlib", "dask", "pydantic")

#: Printed by a child process at exit: where its GdB kernel's cache lives and whether it was loaded.
_REPORT_CACHE = """
import atexit, json, sys
def _report():
    import numba, wargame_odds.kernels.gdb as k
    print(json.dumps({"config": numba.config.CACHE_DIR,
                      "kernel_cache": k.run_blocks._cache._impl.locator.get_cache_path(),
                      "signatures": len(k.run_blocks.signatures)}), file=sys.stderr)
atexit.register(_report)
"""


@njit
def _not_a_kernel(x):
    return x


def _child(code: str, env_update: dict | None = None, drop_cache_var: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ, **(env_update or {}))
    if drop_cache_var:
        env.pop("NUMBA_CACHE_DIR", None)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=900)


def _warm_child(code: str) -> subprocess.CompletedProcess:
    """:func:`_child` with the test's Numba cache (``NUMBA_CACHE_DIR`` kept), run once to fill the cache if this
    test runs first, then again: the second run, which must exit 0."""
    _child(code, drop_cache_var=False)
    child = _child(code, drop_cache_var=False)
    assert child.returncode == 0, child.stderr
    return child


def _last_json(stderr: str) -> dict:
    return json.loads(stderr.strip().splitlines()[-1])


def test_cli_and_api_use_one_numba_cache_folder():
    """§1 'one Numba cache location for every entry point': the console script (run as installed) and
    the Python API, neither with NUMBA_CACHE_DIR set, load the GdB kernel from the same folder,
    wargame_odds.kernels.default_cache_dir()."""
    script = Path(sys.executable).with_name("wargame-odds")
    cli = _child(_REPORT_CACHE + f"import runpy; sys.argv = ['wargame-odds', 'gdb', {str(GDB_SCENARIO)!r}, "
                 f"'--trials', '1000', '--json']\ntry:\n    runpy.run_path({str(script)!r}, run_name='__main__')\n"
                 "except SystemExit as e:\n    assert not e.code, e.code\n")
    api = _child(_REPORT_CACHE + "import wargame_odds.analysis.gdb as g\n"
                 f"g.simulate(g.load({str(GDB_SCENARIO)!r}), trials=1000)\n")
    assert cli.returncode == 0, cli.stderr
    assert api.returncode == 0, api.stderr
    cli_cache, api_cache = _last_json(cli.stderr), _last_json(api.stderr)
    assert cli_cache["signatures"] == api_cache["signatures"] == 1  # the kernel ran in both
    assert cli_cache["kernel_cache"] == api_cache["kernel_cache"]
    default = str(_child("import wargame_odds.kernels; print(wargame_odds.kernels.default_cache_dir())").stdout.strip())
    assert cli_cache["config"] == api_cache["config"] == default
    assert Path(cli_cache["kernel_cache"]).is_relative_to(default)


def test_cache_folder_set_by_the_user_wins_and_reaches_an_already_imported_numba(tmp_path):
    """§1: NUMBA_CACHE_DIR chosen by the user is kept; a notebook that imported Numba before the
    package still gets the package's folder (Numba reads the variable only when imported)."""
    mine = _child("import wargame_odds.analysis.cli, numba; print(numba.config.CACHE_DIR)",
                  {"NUMBA_CACHE_DIR": str(tmp_path)}, drop_cache_var=False)
    assert mine.stdout.strip() == str(tmp_path)
    numba_first = _child("import numba; import wargame_odds.analysis.epic; import wargame_odds.kernels; "
                         "print(numba.config.CACHE_DIR == str(wargame_odds.kernels.default_cache_dir()))")
    assert numba_first.stdout.strip() == "True", numba_first.stderr


def test_the_cache_folder_is_set_by_the_entry_points_not_by_importing_the_kernels():
    """Issue 38 §7: the kernels' module sets no ``NUMBA_CACHE_DIR``; the entry points set it.  The kernels are
    ``wargame_odds.kernels`` (§4), so any import of them first runs the entry point ``wargame_odds``, which
    sets it (as do the command line, scripts and Dask workers)."""
    code = ("import os\n"
            "print(os.environ.get('NUMBA_CACHE_DIR'))\n"
            "import {entry}\n"
            "from wargame_odds import kernels\n"
            "print(os.environ.get('NUMBA_CACHE_DIR') == str(wargame_odds.kernels.default_cache_dir()))")
    for entry in ("wargame_odds", "wargame_odds.kernels", "wargame_odds.analysis.cli"):
        child = _child(code.format(entry=entry))
        assert child.returncode == 0, child.stderr
        assert child.stdout.split() == ["None", "True"], (entry, child.stdout)


def test_help_imports_no_numba_nor_data_libraries():
    """§1 '--help under 1 s (lazy imports)': the command list comes from wargame_odds.analysis.cli.COMMANDS."""
    code = ("import sys\nfrom wargame_odds.analysis.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            f"print([m for m in {HEAVY!r} if m in sys.modules], file=sys.stderr)")
    child = _child(code)
    assert child.stderr.strip().splitlines()[-1] == "[]", child.stderr
    for name in list(COMMANDS) + list(SYSTEMS):
        assert name in child.stdout


def test_lazy_command_table_matches_the_modules():
    """§1 lazy registration: every command a module lists in cli_commands is in COMMANDS with its
    module and its own short help (so --help shows the right text without importing it), and the
    system modules add no command that COMMANDS lacks."""
    modules = {module for module, _ in COMMANDS.values()} | {f"wargame_odds.analysis.{name}" for name in SYSTEMS}
    for module_name in sorted(modules):
        for command in getattr(importlib.import_module(module_name), "cli_commands", []):
            assert command.name in COMMANDS, \
                f"{module_name}: add {command.name!r} to wargame_odds.analysis.cli.COMMANDS"
            module, short_help = COMMANDS[command.name]
            assert module == module_name
            assert short_help == command.get_short_help_str(limit=10**6)
    for name in COMMANDS:
        assert main.get_command(None, name) is not None, name


@pytest.mark.parametrize("module", sorted(KERNEL_COMPILES))
def test_compile_notice_is_one_line_for_a_kernel_compile(module, capsys):
    """§1 'before a cold compile, one line on stderr says what is compiling and that it happens once':
    Numba's compile event (fired on a cache miss only) of a kernels.* function prints one line, once;
    a compile elsewhere prints nothing."""
    kernel = importlib.import_module(module).run_blocks if module != "wargame_odds.kernels.epic" else \
        importlib.import_module("wargame_odds.kernels.epic.block")._run_block
    notice = CompileNotice()
    with event.install_listener("numba:compile", notice):
        for dispatcher in (kernel, kernel):  # a nested compile of the same run stays silent
            event.start_event("numba:compile", data={"dispatcher": dispatcher})
            event.end_event("numba:compile", data={"dispatcher": dispatcher})
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and KERNEL_COMPILES[module][0] in err[0] and "once" in err[0]
    other = CompileNotice()
    other.on_start(event.Event("numba:compile", event.EventStatus.START, data={"dispatcher": _not_a_kernel}))
    assert capsys.readouterr().err == ""


def test_compile_notice_names_the_epic_turn_variant(capsys):
    """§1 'one line on stderr says what is compiling': the Epic block function compiled for a turn (turn
    tables given; a turn scenario compiles it even when assaults are cached) is announced as the turn
    kernel with its own duration; compiled for an assault (no turn tables), as the Epic kernel."""
    from numba.core import types

    from wargame_odds.kernels.epic import block as epic

    params = list(inspect.signature(epic._run_block.py_func).parameters)
    for turn_type, expected in ((types.UniTuple(types.int64[:, :], 2), EPIC_TURN_COMPILE),
                                (types.none, KERNEL_COMPILES["wargame_odds.kernels.epic"])):
        args = tuple(turn_type if name == "turn" else types.int64 for name in params)
        CompileNotice().on_start(event.Event("numba:compile", event.EventStatus.START,
                                             data={"dispatcher": epic._run_block, "args": args}))
        err = capsys.readouterr().err
        assert f"compiling {expected[0]}, once ({expected[1]};" in err


def test_nested_compile_notice_blocks_announce_a_compile_once(capsys):
    """§1 'one line on stderr': a search that runs several simulations (threshold, sweep) holds a
    compile_notice block around runs that each open their own; one kernel compile prints one line."""
    from wargame_odds.kernels import t9a

    with compile_notice():
        with compile_notice():
            event.start_event("numba:compile", data={"dispatcher": t9a.run_blocks})
            event.end_event("numba:compile", data={"dispatcher": t9a.run_blocks})
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and KERNEL_COMPILES["wargame_odds.kernels.t9a"][0] in err[0]


def test_compile_notice_names_the_cache_folder(capsys):
    notice = CompileNotice()
    from wargame_odds.kernels import gdb

    notice.on_start(event.Event("numba:compile", event.EventStatus.START, data={"dispatcher": gdb.run_blocks}))
    assert os.environ["NUMBA_CACHE_DIR"] in capsys.readouterr().err
    assert kernels.use_one_cache_dir() == os.environ["NUMBA_CACHE_DIR"]


#: A shipped scenario of each system, and modules its warm run must not import besides the data libraries
#: (the Epic and T9A reference engines, which only --trace and --engine reference use; GdB's compiles the
#: kernel's tables, so a GdB run imports it; the NetEA library, for an Epic scenario that names none of it).
_RUNS = {"epic": ("epic/assault_marines_vs_warband.toml",
                  ("wargame_odds.analysis.epic.reference", "wargame_odds.analysis.epic.turn",
                   "wargame_odds.analysis.epic.shooting", "wargame_odds.analysis.epic.library.netea")),
         "epic-turn": ("epic/turns/ork_warband_shoots_then_assaults_guard.toml", ()),
         "gdb": ("gdb/column_vs_line.toml", ()),
         "t9a": ("t9a/flee_reaction.toml", ("wargame_odds.analysis.t9a.charge.reference",))}


@pytest.mark.parametrize("output", ["--json", "text"])
@pytest.mark.parametrize("run", sorted(_RUNS))
def test_a_run_imports_no_table_or_plot_library(run, output):
    """§1 'import pandas, matplotlib, dask only where used': loading a shipped scenario of each system
    and printing --json, or the text output (headline and
    readable table), needs none of them; nor tqdm when no bar can show (stderr not a terminal), nor the
    reference and turn engines when the kernel runs an assault; all for a warm 1,000-trial run under 1 s."""
    path, engines = _RUNS[run]
    scenario = ROOT / "analysis" / "scenarios" / path
    flags = ", '--json'" if output == "--json" else ""
    unused = ("pandas", "matplotlib", "dask", "tqdm", *engines)
    code = ("import sys\nfrom wargame_odds.analysis.cli import main\n"
            "main([{system!r}, {scenario!r}, '--trials', '1000'{flags}], standalone_mode=False)\n"
            "print([m for m in {unused!r} if m in sys.modules], file=sys.stderr)").format(
        system=run.removesuffix("-turn"), scenario=str(scenario), flags=flags, unused=unused)
    _child(code)  # fills the cache if this test runs first (a compile imports all of Numba)
    child = _child(code)
    assert child.returncode == 0, child.stderr
    assert child.stderr.strip().splitlines()[-1] == "[]", child.stderr
    if output == "--json":
        assert json.loads(child.stdout)["trials"] == 1000
    else:
        assert "trials=1,000" in child.stdout and "All estimates (95 % interval in brackets)" in child.stdout


def test_paced_chunks_for_a_progress_bar_give_the_same_counts():
    """§1 progress bar on a terminal for runs over ~2 s: while a bar may show, chunks are sized to
    about PROGRESS_STEP_S each (starting from one block per thread); the counts stay those of one chunk."""
    import wargame_odds.analysis.gdb as gdb

    scenario = gdb.load(str(GDB_SCENARIO))
    shown = gdb.simulate(scenario, trials=100_000, seed=7, progress=True)
    plain = gdb.simulate(scenario, trials=100_000, seed=7, progress=False)
    assert shown.info.chunks > 1 and plain.info.chunks == 1
    assert shown.to_json() == plain.to_json()


def test_kernel_helpers_set_up_their_cache_only_when_compiled():
    """§1 warm run: the kernels' jitted helpers (wargame_odds.kernels.jit.njit) set up Numba's on-disk cache at their
    first compile, not when their module is imported: a warm run, which loads its kernels from the cache, creates no
    cache object for any of them; a function compiled later that calls a helper still loads that helper from the cache
    (no compile of it) instead of compiling it again."""
    assault = ROOT / "analysis" / "scenarios" / "epic" / "assault_marines_vs_warband.toml"
    code = ("import numpy as np\n"
            "import wargame_odds.analysis.epic as epic\n"
            "from numba import njit\n"
            "from numba.core import event\n"
            "from numba.core.caching import NullCache\n"
            "import sys\n"
            "import wargame_odds.kernels.epic.block\n"
            "from wargame_odds.kernels.epic import dice as K, layout\n"
            "from wargame_odds.kernels.link_only import HelperDispatcher\n"
            f"epic.simulate(epic.load({str(assault)!r}),"
            " trials=1000, progress=False)\n"
            "helpers = [f for name, m in list(sys.modules.items()) if name.startswith('wargame_odds.kernels.epic.')\n"
            "           for f in vars(m).values() if isinstance(f, HelperDispatcher)]\n"
            "print(len(helpers), sum(not isinstance(f._cache, NullCache) for f in helpers))\n"
            "compiled = []\n"
            "class Seen(event.Listener):\n"
            "    def on_start(self, ev):\n"
            "        compiled.append(ev.data['dispatcher'].py_func.__name__)\n"
            "    def on_end(self, ev):\n"
            "        pass\n"
            "@njit\n"
            "def roll(rs):\n"
            "    return K._d6(rs, 0)\n"
            "with event.install_listener('numba:compile', Seen()):\n"
            "    value = roll(np.arange(4 * layout.LANES, dtype=np.uint64) + np.uint64(12345))\n"
            "print(compiled, 1 <= value <= 6, isinstance(K._d6._cache, NullCache))\n")
    child = _warm_child(code)
    counts, loaded = child.stdout.splitlines()[-2:]
    helpers, with_cache = map(int, counts.split())
    assert helpers > 50 and with_cache == 0, counts
    assert loaded == "['roll'] True False", loaded


def test_the_program_starts_without_the_collector_and_leaves_its_objects_to_the_operating_system():
    """§1 warm run: run as the ``wargame-odds`` program, the garbage collector is off from the command's start
    until the first chunk of trials has run (wargame_odds.analysis.run.gc_pause: no collection in between; on after it,
    with start-up's objects frozen: the CLI installs the resume as the runner's hook,
    wargame_odds.analysis.run.runner.AFTER_CHUNK), pydantic's plugins are not looked for, and what the command leaves is
    frozen out of the collector's reach once it has printed (wargame_odds.analysis.cli.CliGroup.main), so that Python's
    collections at exit do not walk it; the output is the same.  Called with arguments (tests, a notebook), main changes
    none of this: the collector runs during the imports, no hook is installed, and nothing is frozen."""
    script = Path(sys.executable).with_name("wargame-odds")
    report = ("import atexit, gc, json, os, sys\n"
              "import wargame_odds.analysis.run.gc_pause as pause\n"
              "seen = {'collections': 0, 'at_pause': 0}\n"
              "gc.callbacks.append(lambda phase, info:"
              " seen.update(collections=seen['collections'] + (phase == 'start')))\n"
              "start, resume = pause.pause, pause.resume\n"
              "def paused():\n"
              "    seen['at_pause'] = seen['collections']\n"
              "    start()\n"
              "pause.pause = paused\n"
              "def first_chunk_done():\n"
              "    if 'collected_before_first_chunk' not in seen:\n"
              "        seen.update(collected_before_first_chunk=seen['collections'] - seen['at_pause'],\n"
              "                    frozen_before_first_chunk=gc.get_freeze_count() > 0)\n"
              "        resume()\n"
              "        seen.update(enabled_after=gc.isenabled(), frozen_after=gc.get_freeze_count() > 0)\n"
              "    else:\n"
              "        resume()\n"
              "pause.resume = first_chunk_done\n"
              "atexit.register(lambda: print(json.dumps(dict(seen,\n"
              "    hooks=len(sys.modules['wargame_odds.analysis.run.runner'].AFTER_CHUNK),\n"
              "    plugins=os.environ.get('PYDANTIC_DISABLE_PLUGINS'),\n"
              "    frozen_at_exit=gc.get_freeze_count() > 0)), file=sys.stderr))\n")
    argv = ["gdb", str(GDB_SCENARIO), "--trials", "1000", "--json"]
    environment = {key: value for key, value in os.environ.items() if key != "PYDANTIC_DISABLE_PLUGINS"}
    program = subprocess.run([sys.executable, "-c", report + f"import runpy; sys.argv = ['wargame-odds', *{argv!r}]\n"
                              f"try:\n    runpy.run_path({str(script)!r}, run_name='__main__')\n"
                              "except SystemExit as e:\n    assert not e.code, e.code\n"],
                             env=environment, capture_output=True, text=True, timeout=900)
    called = subprocess.run([sys.executable, "-c", report + "from wargame_odds.analysis.cli import main\n"
                             f"main({argv!r}, standalone_mode=False)\n"],
                            env=environment, capture_output=True, text=True, timeout=900)
    assert program.returncode == 0 and called.returncode == 0, program.stderr + called.stderr
    as_program, as_call = _last_json(program.stderr), _last_json(called.stderr)
    steps = ("collected_before_first_chunk", "frozen_before_first_chunk", "enabled_after", "frozen_after", "plugins",
             "frozen_at_exit")
    assert [as_program[k] for k in steps] == [0, False, True, True, "__all__", True], as_program
    assert as_program["hooks"] == 1, as_program  # gc_pause.resume, installed by the CLI (issue 38 §7)
    assert as_call["collections"] > 0 and "collected_before_first_chunk" not in as_call, as_call
    assert [as_call[k] for k in ("hooks", "plugins", "frozen_at_exit")] == [0, None, False], as_call
    assert program.stdout == called.stdout and json.loads(program.stdout)["trials"] == 1000


@pytest.mark.parametrize("argv", [["units", "search", "Space Marine", "--json"], ["t9a-table", "--distances", "6"]])
def test_a_command_that_runs_no_trials_runs_with_the_collector_on(argv):
    """§1 warm run: the start-up pause ends as a command that runs no trials starts
    (wargame_odds.analysis.cli.NO_TRIALS), since no first chunk of trials will end it: the collector is on, with
    start-up's objects frozen, when the command runs (checked as the command's module is imported) and at exit."""
    script = Path(sys.executable).with_name("wargame-odds")
    module = COMMANDS[argv[0]][0]
    code = ("import atexit, gc, json, sys\n"
            "seen = {}\n"
            "class Watch:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            f"        if name == {module!r} and 'at_import' not in seen:\n"
            "            seen['at_import'] = gc.isenabled()\n"
            "sys.meta_path.insert(0, Watch())\n"
            "atexit.register(lambda: print(json.dumps(dict(seen, at_exit=gc.isenabled(),\n"
            "                                              frozen=gc.get_freeze_count() > 0)), file=sys.stderr))\n"
            f"import runpy; sys.argv = ['wargame-odds', *{argv!r}]\n"
            f"try:\n    runpy.run_path({str(script)!r}, run_name='__main__')\n"
            "except SystemExit as e:\n    assert not e.code, e.code\n")
    program = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert program.returncode == 0, program.stderr
    assert _last_json(program.stderr) == {"at_import": True, "at_exit": True, "frozen": True}
    assert program.stdout.strip()


def test_the_collector_pause_leaves_a_collector_it_did_not_turn_off_alone():
    """§1 warm run: :mod:`wargame_odds.analysis.run.gc_pause` turns off only a collector that was on, and turns back on
    only one it turned off (a notebook or a test that runs with the collector off keeps it off)."""
    from wargame_odds.analysis.run import gc_pause

    gc.disable()
    try:
        gc_pause.pause()
        gc_pause.resume()
        assert not gc.isenabled()
    finally:
        gc.enable()
