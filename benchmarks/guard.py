"""The speed guard (issue 39): every shape of ``benchmarks/shapes.toml`` timed on one thread as trials per raw D6.

``python benchmarks/guard.py`` (``make bench`` runs it) times each shape in this checkout and compares it with
the committed baseline (``benchmarks/baseline.json``); ``--ref COMMIT`` (``make bench-compare REF=...``) builds
COMMIT in a folder of its own (``git archive`` into ``.venv/guard-trees/<hash>``, the same virtual environment
with that folder first on ``sys.path``, a Numba cache of its own beside it, both kept so that the next comparison
with the same commit loads its kernels instead of compiling them; ``--fresh`` builds it anew) and times the two side
by side: one warm worker process
per tree (``benchmarks/measure.py``), the two asked in turn, shape by shape, ``--pairs`` times, the order within a
pair alternating. Each figure is a marginal rate (trials between a small and a large run over the time between
them) divided by the raw generator's D6 rate measured in the same process just before, so that the load of a
shared machine mostly cancels; the guard prints each shape's median ratio new / old with the spread of the
pairs' ratios (lowest and highest) and flags a shape whose median is below ``1 - --noise`` (default 10 %) and
whose highest pair is below 1 too (slower beyond its measured noise). ``--write-baseline`` records this
checkout's medians. ``--scale`` shrinks every trial count (the suite's short form runs the matrix at a tiny
scale and checks only that it runs and produces ratios; speed is a warning, never a failure).
Exit status: 0, also with flagged shapes unless ``--strict``; 2 on a bad argument.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SHAPES = HERE / "shapes.toml"
BASELINE = HERE / "baseline.json"
WORKER = HERE / "measure.py"
#: Where the exported trees of --ref/--new and their Numba caches are kept between runs: inside the virtual
#: environment running the guard (``make`` uses .venv), else in the user's cache folder.
KEPT = (Path(sys.prefix) if sys.prefix != sys.base_prefix else Path.home() / ".cache" / "wargame-odds") / "guard-trees"


def load_shapes(only: list[str] | None = None) -> list[dict]:
    """The matrix (``shapes.toml``), or the shapes named in ``only`` (an unknown name is an error)."""
    shapes = tomllib.loads(SHAPES.read_text())["shape"]
    if only:
        names = {shape["name"] for shape in shapes}
        unknown = [name for name in only if name not in names]
        if unknown:
            raise SystemExit(f"error: --shape: unknown shape {unknown[0]!r} (allowed: {', '.join(sorted(names))})")
        shapes = [shape for shape in shapes if shape["name"] in only]
    return shapes


def cpu() -> str:
    """The CPU's model and whether it has AVX-512 (ratios differ between AVX2 and AVX-512 machines)."""
    try:
        info = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor() or "unknown CPU"
    model = next((line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("model name")), "?")
    flags = next((line.split(":", 1)[1].split() for line in info.splitlines() if line.startswith("flags")), [])
    return f"{model}, {'AVX-512' if 'avx512f' in flags else 'AVX2' if 'avx2' in flags else 'no AVX2'}, " \
           f"{os.cpu_count()} cores"


def full_hash(commit: str) -> str:
    """The full hash of ``commit`` (a name, a short hash), or an error naming it."""
    done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}"],
                          capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"error: --ref/--new: {commit!r} names no commit of this repository")
    return done.stdout.strip()


def kept_folder(commit: str, fresh: bool) -> Path:
    """The folder that keeps ``commit``'s tree and Numba cache between runs (:data:`KEPT`/<full hash>), the tree
    exported on first use (or anew with ``fresh``); a half-written export is never reused."""
    folder = KEPT / full_hash(commit)
    if fresh or not (folder / "complete").is_file():
        shutil.rmtree(folder, ignore_errors=True)
        export_commit(commit, folder)
        (folder / "complete").touch()
    return folder


def export_commit(commit: str, folder: Path) -> Path:
    """The tree of ``commit`` written into ``folder/tree`` (``git archive``: no checkout of this one changes)."""
    tree = folder / "tree"
    tree.mkdir(parents=True)
    archive = folder / "tree.tar"
    with archive.open("wb") as out:
        done = subprocess.run(["git", "-C", str(ROOT), "archive", commit], stdout=out, stderr=subprocess.PIPE)
    if done.returncode:
        raise SystemExit(f"error: --ref: git archive {commit!r} failed: {done.stderr.decode().strip()[:200]}")
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    archive.unlink()
    return tree


class Worker:
    """A warm ``measure.py`` process running one tree's code (its root first on ``sys.path``)."""

    def __init__(self, tree: Path, cache: Path | None):
        env = dict(os.environ, PYTHONPATH=str(tree), NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1",
                   OPENBLAS_NUM_THREADS="1")
        if cache is not None:
            env["NUMBA_CACHE_DIR"] = str(cache)
        self.tree = tree
        self.process = subprocess.Popen([sys.executable, str(WORKER)], cwd=tree, env=env, text=True,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def ask(self, request: dict) -> dict:
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"error: the timing worker for {self.tree} ended (see its messages above)")
        return json.loads(line)

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def request(shape: dict, scale: float, seed: int) -> dict:
    small = max(int(shape["small"] * scale), 64)
    return {"system": shape["system"], "scenario": str(ROOT / shape["scenario"]), "small": small,
            "large": max(int(shape["large"] * scale), 2 * small), "seed": seed}


def per_raw_d6(answer: dict) -> float | None:
    return answer["trials_per_s"] / answer["raw_d6_per_s"] if "trials_per_s" in answer else None


def measure(workers: list[Worker], shapes: list[dict], pairs: int, scale: float) -> dict[str, list[list]]:
    """Trials per raw D6 for each shape: ``{name: [[worker 0's figure, worker 1's, ...] for each pair]}``, the
    workers asked in turn (the order reversed every other pair); None where a worker could not run the shape."""
    figures = {shape["name"]: [] for shape in shapes}
    errors = {}
    for pair in range(pairs):
        for shape in shapes:
            order = list(range(len(workers)))[:: -1 if pair % 2 else 1]
            row = [None] * len(workers)
            for index in order:
                answer = workers[index].ask(request(shape, scale, seed=pair))
                row[index] = per_raw_d6(answer)
                if "error" in answer:
                    errors.setdefault((shape["name"], index), answer["error"])
            figures[shape["name"]].append(row)
            print(f"  pair {pair + 1}/{pairs} {shape['name']:<28} "
                  + "  ".join("   n/a  " if v is None else f"{v:.3e}" for v in row), file=sys.stderr, flush=True)
    for (name, index), error in errors.items():
        print(f"note: {name}: worker {index} could not run it: {error}", file=sys.stderr)
    return figures


def summarise(figures: dict[str, list[list]], noise: float, baseline: dict | None) -> tuple[list[dict], list[str]]:
    """Per shape: the median of each column and the ratio column 0 / column 1 (pairwise: median, lowest,
    highest), or against ``baseline`` when there is one column; the names of the shapes flagged slower."""
    rows, flagged = [], []
    for name, pairs in figures.items():
        columns = list(zip(*pairs))
        medians = [statistics.median(v for v in column if v is not None) if any(v is not None for v in column)
                   else None for column in columns]
        if len(columns) == 2:
            ratios = [new / old for new, old in pairs if new is not None and old is not None]
        else:
            old = (baseline or {}).get(name)
            ratios = [new / old for (new,) in pairs if new is not None and old]
        row = {"shape": name, "medians": medians}
        if ratios:
            row.update(ratio=statistics.median(ratios), low=min(ratios), high=max(ratios))
            if row["ratio"] < 1 - noise and row["high"] < 1:
                flagged.append(name)
        rows.append(row)
    return rows, flagged


def report(rows: list[dict], flagged: list[str], labels: list[str], noise: float) -> str:
    """The table: each shape's median trials per raw D6 per tree, its ratio and spread, a flag where slower."""
    header = f"{'shape':<30}" + "".join(f"{label:>14}" for label in labels) + f"{'ratio':>8} {'spread':>15}"
    lines = [header, "-" * len(header)]
    for row in rows:
        cells = "".join(f"{'n/a':>14}" if m is None else f"{m:>14.3e}" for m in row["medians"])
        if len(row["medians"]) == 1:
            cells += f"{row.get('baseline', float('nan')):>14.3e}" if "baseline" in row else f"{'n/a':>14}"
        ratio = f"{row['ratio']:>8.2f} [{row['low']:.2f}, {row['high']:.2f}]" if "ratio" in row else f"{'n/a':>8}"
        lines.append(f"{row['shape']:<30}{cells}{ratio}" + ("  SLOWER" if row["shape"] in flagged else ""))
    lines.append(f"ratio: first column / second, median of the pairs [lowest, highest]; SLOWER: median below "
                 f"{1 - noise:.2f} and every pair below 1")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ref", help="a commit to compare this checkout with (built in .venv/guard-trees/)")
    parser.add_argument("--fresh", action="store_true", help="export --ref/--new anew and compile them cold")
    parser.add_argument("--new", help="a commit to take the place of this checkout (as --ref; for a bisection)")
    parser.add_argument("--pairs", type=int, default=None, help="rounds over the matrix (default 3, 1 with no --ref)")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every trial count (0 < scale <= 10)")
    parser.add_argument("--noise", type=float, default=0.10, help="a ratio below 1 - NOISE is flagged (default 0.10)")
    parser.add_argument("--shape", action="append", help="only this shape (repeatable)")
    parser.add_argument("--write-baseline", action="store_true", help="record this checkout's figures")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a shape is flagged")
    parser.add_argument("--json", type=Path, help="also write the figures and ratios to this file")
    args = parser.parse_args(argv)
    if not 0 < args.scale <= 10 or not 0 <= args.noise < 1 or (args.pairs is not None and not 1 <= args.pairs <= 50):
        print("error: --scale must be in (0, 10], --noise in [0, 1), --pairs in 1..50", file=sys.stderr)
        return 2
    shapes = load_shapes(args.shape)
    pairs = args.pairs or (3 if args.ref else 1)
    print(f"CPU: {cpu()}; load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}; one thread; "
          f"trials per raw D6 (marginal rate / raw generator rate, same process)")
    trees, labels = [], []
    for index, commit in enumerate((args.new, args.ref)):
        if commit is None and index == 0:
            trees.append((ROOT, None))
            labels.append("this tree")
        elif commit is not None:
            folder = kept_folder(commit, args.fresh)
            trees.append((folder / "tree", folder / "numba-cache"))
            labels.append(commit[:12])
    print(f"compiling or loading the kernels of: {', '.join(labels)} (a cold compile takes minutes)",
          file=sys.stderr, flush=True)
    workers = [Worker(tree, cache) for tree, cache in trees]
    try:
        figures = measure(workers, shapes, pairs, args.scale)
    finally:
        for worker in workers:
            worker.close()
    baseline = json.loads(BASELINE.read_text()) if BASELINE.is_file() else {"shapes": {}}
    rows, flagged = summarise(figures, args.noise, None if args.ref else baseline["shapes"])
    if not args.ref:
        labels.append("baseline")
        for row in rows:
            if row["shape"] in baseline["shapes"]:
                row["baseline"] = baseline["shapes"][row["shape"]]
    print(report(rows, flagged, labels, args.noise))
    if not args.ref and baseline.get("cpu"):
        print(f"baseline: {baseline['cpu']} ({baseline.get('note', '')}); on another CPU the ratios to it mean little")
    if args.json:
        args.json.write_text(json.dumps({"cpu": cpu(), "labels": labels, "figures": figures, "rows": rows,
                                         "flagged": flagged}, indent=1))
    if args.write_baseline:
        BASELINE.write_text(json.dumps({"cpu": cpu(), "note": f"{pairs} pair(s), scale {args.scale}",
                                        "shapes": {row["shape"]: row["medians"][0] for row in rows
                                                   if row["medians"][0] is not None}}, indent=1) + "\n")
        print(f"wrote {BASELINE.relative_to(ROOT)}")
    for name in flagged:
        print(f"warning: {name} is slower than {'--ref' if args.ref else 'its baseline'} beyond the noise",
              file=sys.stderr)
    return 1 if flagged and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
