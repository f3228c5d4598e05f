"""The result shape shared by every rule system.

A result holds a tree of estimates (nested dicts whose leaves are :class:`Probability`,
:class:`Mean` or :class:`Distribution`) plus the run's facts.  Every system offers the same
``table() / distributions() / cumulative() / plot() / to_json() / _repr_html_``.
"""
from __future__ import annotations

import hashlib
import html
import json
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import numpy as np

from ..intake.arguments import check_choice, check_flag, check_whole
from ..intake.errors import ArgumentError
from .estimates import Distribution, Mean, Probability
from .run_info import RunInfo
from ..intake.user_text import printable

Leaf = Probability | Mean | Distribution
#: The sentences that lead an answer, above its picture; every other one is behind the fold with the table.
LEAD_PREFIXES = ("Verdict:", "Assumed:", "PLACEHOLDER")
#: What the fold that holds every sentence and the full table says while it is closed.
FOLD_SUMMARY = "The full table: every sentence and every estimate with its 95 % interval"


def lead_sentences(sentences: list[str]) -> list[str]:
    """The sentences an answer shows first: its verdict and what it assumes (and a placeholder warning); where
    there is no verdict line (the GdB and T9A charges), its first two sentences."""
    lead = [s for s in sentences if s.startswith(LEAD_PREFIXES)]
    if not any(s.startswith("Verdict:") for s in lead):
        lead += [s for s in sentences[:2] if s not in lead]
    return lead


def fold(*parts: str) -> str:
    """HTML ``parts`` in a collapsed section headed :data:`FOLD_SUMMARY` (HTML's ``<details>``)."""
    return f'<details class="wo-full"><summary>{html.escape(FOLD_SUMMARY)}</summary>{"".join(parts)}</details>'


@lru_cache(maxsize=None)
def package_version() -> str:
    """The installed package's version (looked up once a process), or "unknown" in a source tree."""
    try:
        return version("wargame-odds")
    except PackageNotFoundError:  # running from a source tree
        return "unknown"


@lru_cache(maxsize=None)
def code_digest(root: Path = Path(__file__).resolve().parents[2]) -> str:  # the folder of analysis/ and kernels/
    """SHA-256 over the code and rule data that make the numbers (``analysis/**`` and ``kernels/``: their
    ``.py`` and ``.toml`` files, by path and content), so that a stored result is not reused after the
    engines change under an unchanged package version."""
    digest = hashlib.sha256()
    for package in ("analysis", "kernels"):
        for path in sorted(p for p in (root / package).rglob("*") if p.suffix in (".py", ".toml") and p.is_file()):
            digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _walk(tree: dict, path=()):
    for key, value in tree.items():
        if isinstance(value, dict):
            yield from _walk(value, path + (key,))
        else:
            yield path + (key,), value


def _split(path):
    section = path[0]
    quantity = path[-1]
    entity = "/".join(path[1:-1])
    return section, entity, quantity


def _json_tree(tree: dict) -> dict:
    """The tree as JSON values; a mean ``NAME`` also gives its 95 % interval as ``NAME_ci95``."""
    out = {}
    for key, value in tree.items():
        out[key] = _json_tree(value) if isinstance(value, dict) else value.to_json()
        if isinstance(value, Mean):
            out[f"{key}_ci95"] = value.ci95_json()
    return out


class Result:
    """Estimates of one simulated scenario, with 95 % intervals throughout."""

    def __init__(self, *, system: str, title: str, info: RunInfo, tree: dict,
                 notes: list[str] | None = None, meta: dict | None = None):
        self.system = system
        self.title = title
        self.info = info
        self.tree = tree
        self.notes = list(dict.fromkeys(notes or []))  # a note is given once
        self.meta = dict(meta or {})

    # -- access -------------------------------------------------------------------------------
    @property
    def trials(self) -> int:
        return self.info.trials

    @property
    def seed(self) -> int:
        return self.info.seed

    def __getitem__(self, path):
        """``result["sides", "attacker_wins"]`` returns that estimate (or sub-tree)."""
        node = self.tree
        for key in (path if isinstance(path, tuple) else (path,)):
            node = node[key]
        return node

    def leaves(self):
        """(path, estimate) pairs in tree order."""
        return list(_walk(self.tree))

    # -- tables ---------------------------------------------------------------------------------
    def rows(self) -> list[dict]:
        """The rows of :meth:`table` as plain dicts (what the text output reads, without pandas)."""
        rows = []
        for path, leaf in self.leaves():
            if isinstance(leaf, Distribution):
                continue
            section, entity, quantity = _split(path)
            lo, hi = leaf.ci95
            kind = "probability" if isinstance(leaf, Probability) else "mean"
            value = leaf.p if isinstance(leaf, Probability) else leaf.value
            rows.append({"section": section, "entity": entity, "quantity": quantity, "kind": kind,
                         "estimate": value, "ci95_lo": lo, "ci95_hi": hi})
        return rows

    def table(self):
        """Probabilities and means with their 95 % intervals, one row each (tidy pandas)."""
        import pandas as pd

        return pd.DataFrame(self.rows(), columns=["section", "entity", "quantity", "kind", "estimate",
                                                  "ci95_lo", "ci95_hi"])

    def distributions(self):
        """Every distribution in long form: one row per value with P and its interval."""
        import pandas as pd

        frames = []
        for path, leaf in self.leaves():
            if not isinstance(leaf, Distribution):
                continue
            section, entity, quantity = _split(path)
            lo, hi = leaf.ci95
            frames.append(pd.DataFrame({"section": section, "entity": entity, "quantity": quantity,
                                        "value": leaf.values, "p": leaf.p, "ci95_lo": lo,
                                        "ci95_hi": hi}))
        if not frames:
            return pd.DataFrame(columns=["section", "entity", "quantity", "value", "p", "ci95_lo",
                                         "ci95_hi"])
        return pd.concat(frames, ignore_index=True)

    def cumulative(self, *path, kind: str = "at_least"):
        """"At least N" (or ``kind="at_most"``) table of one distribution, with intervals."""
        import pandas as pd

        check_choice("kind", kind, ("at_least", "at_most"))
        distributions = "the keys of a distribution of this result, e.g. " + ", ".join(
            [repr("/".join(p)) for p, leaf in self.leaves() if isinstance(leaf, Distribution)][:4])
        if not path or not all(isinstance(key, str) for key in path):
            raise ArgumentError("path", path, distributions)
        try:
            leaf = self[tuple(path)]
        except (KeyError, TypeError):
            leaf = None
        if not isinstance(leaf, Distribution):
            raise ArgumentError("path", "/".join(path), distributions)
        values, p, lo, hi = leaf.at_least() if kind == "at_least" else leaf.at_most()
        return pd.DataFrame({"value": values, "p": p, "ci95_lo": lo, "ci95_hi": hi})

    def cumulative_frame(self):
        """At-least and at-most tables of every distribution, long form (``direction`` says which)."""
        import pandas as pd

        frames = []
        for path, leaf in self.leaves():
            if not isinstance(leaf, Distribution):
                continue
            for direction in ("at_least", "at_most"):
                table = self.cumulative(*path, kind=direction)
                table.insert(0, "direction", direction)
                table.insert(0, "quantity", path[-1])
                table.insert(0, "entity", "/".join(path[1:-1]))
                table.insert(0, "section", path[0])
                frames.append(table)
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
            columns=["section", "entity", "quantity", "direction", "value", "p", "ci95_lo", "ci95_hi"])

    def at_least_frame(self):
        """The "at least N" rows of every distribution (long form, with intervals)."""
        frame = self.cumulative_frame()
        return frame[frame["direction"] == "at_least"].drop(columns="direction").reset_index(drop=True)

    # -- output ---------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        out = {"system": self.system, "title": self.title, "trials": self.info.trials,
               "seed": self.info.seed}
        out.update(self.meta)
        out.update(_json_tree(self.tree))
        run = {"version": package_version()}  # no chunk count: the JSON must not depend on the chunk size (issue §6)
        if self.info.precision is not None:
            run.update(precision=self.info.precision, precision_reached=self.info.precision_reached,
                       achieved_half_width=self.info.achieved_half_width)
        out["run"] = run
        out["notes"] = self.notes
        return out

    def to_json(self, indent: int | None = None) -> str:
        """Strict JSON: a quantity with no data (NaN, e.g. a mean over no trials) becomes null."""
        check_whole("indent", indent, 0, 16, none_ok=True)
        return json.dumps(finite_json(self.to_dict()), indent=indent, allow_nan=False, default=_json_default)

    def _header(self) -> str:
        if self.info.extra.get("method") == "exact":  # enumerated, not simulated: no trials, no seed
            return f"{self.title}  [{self.system}]  exact ({self.info.trials:,} equally likely outcomes)"
        line = f"{self.title}  [{self.system}]  trials={self.info.trials:,}  seed={self.info.seed}"
        if self.info.precision is not None:
            state = "reached" if self.info.precision_reached else "NOT reached (trial cap)"
            line += f"  precision ±{self.info.precision} {state}"
        return line

    def headline(self, data: dict | None = None) -> list[str]:
        """Plain sentences: who fights whom, each side's chance of winning, who breaks or routs (``data``:
        :meth:`to_dict`, when the caller has it already)."""
        from .headline import sentences

        _check_data(self, data)
        return sentences(self.to_dict() if data is None else data)

    def readable_rows(self, data: dict | None = None) -> list[dict]:
        """The table as a player reads it: readable labels, percentages, no repeated numbers (``data`` as for
        :meth:`headline`)."""
        from .labels import readable_rows, sides_of

        _check_data(self, data)
        return readable_rows(self.system, self.rows(), sides_of(self.to_dict() if data is None else data))

    def text(self, distributions: bool = False, at_least: bool = False) -> str:
        """The headline, the notes, then the full table; optionally every distribution and its
        "at least N" table, labelled."""
        from .labels import sides_of, text_table

        check_flag("distributions", distributions)
        check_flag("at_least", at_least)
        data = self.to_dict()
        blocks = [self._header(), "\n".join(self.headline(data))]
        if self.notes:
            blocks.append("\n".join(f"note: {n}" for n in self.notes))
        blocks.append("All estimates (95 % interval in brackets)\n" + text_table(self.readable_rows(data)))
        if distributions:
            blocks.append(self._distribution_text("Distributions", "P(exactly this value)", None, sides_of(data)))
        if at_least:
            blocks.append(self._distribution_text('"At least N" tables', "P(at least this value)", "at_least",
                                                  sides_of(data)))
        return printable("\n\n".join(b for b in blocks if b))

    def _distribution_text(self, heading: str, column: str, kind: str | None, sides) -> str:
        from .labels import axis_label, group_label, percent

        lines = [heading]
        for path, leaf in self.leaves():
            if not isinstance(leaf, Distribution):
                continue
            section, entity, quantity = _split(path)
            values, p, lo, hi = ((leaf.values, leaf.p, *leaf.ci95) if kind is None else leaf.at_least())
            lines.append(f"{group_label(self.system, section, entity, sides)}: "
                         f"{axis_label(self.system, quantity, entity)}")
            lines.append(f"  {'value':>8}  {column}")
            lines += [f"  {_value_text(v):>8}  {percent(a, b, c)}" for v, a, b, c in zip(values, p, lo, hi)]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text()

    __repr__ = __str__

    def html_parts(self) -> tuple[str, str]:
        """The answer as HTML in two parts, for a page that shows the picture between them (the app): the lead (the
        title, the verdict and what it assumes, the notes) and the fold (every other sentence and the full table,
        in a collapsed ``<details>`` section).  Control and bidi characters as escapes."""
        from .labels import html_table

        data = self.to_dict()
        sentences = self.headline(data)
        lead = lead_sentences(sentences)
        notes = "".join(f"<p><em>note:</em> {html.escape(n)}</p>" for n in self.notes)
        first = "".join(f"<p><b>{html.escape(s)}</b></p>" for s in lead)
        rest = "".join(f"<li>{html.escape(s)}</li>" for s in sentences if s not in lead)
        return (printable(f"<h4>{html.escape(self._header())}</h4>{first}{notes}"),
                printable(fold(f"<ul>{rest}</ul>" if rest else "", html_table(self.readable_rows(data)))))

    def _repr_html_(self) -> str:
        """Notebooks: the verdict first, then every sentence and the full table behind a fold (:meth:`html_parts`)."""
        return "".join(self.html_parts())

    def plot(self, detail: bool = False):
        """The chances that decide the scenario, in percent with 95 % intervals, and the "at least N" curves of
        casualties and blast markers (:func:`wargame_odds.analysis.output.plots.outcome_figure`); ``detail``: every
        probability and every counted quantity's curves."""
        from ..intake.arguments import check_flag
        from .labels import sides_of
        from .plots import outcome_figure

        check_flag("detail", detail)
        data = self.to_dict()
        return outcome_figure(self.system, self.table(), self.at_least_frame(), self.title, notes=self.notes,
                              sides=sides_of(data), engaged=sides_of(data, engaged_only=True), detail=detail)


def _check_data(result: Result, data) -> None:
    """``data`` of :meth:`Result.headline` and :meth:`Result.readable_rows`: None or the result's ``to_dict()``
    (a dict of its system holding every section of its tree)."""
    if data is not None and not (isinstance(data, dict) and data.get("system") == result.system
                                 and all(key in data for key in result.tree)):
        raise ArgumentError("data", data, "None or this result's to_dict()")


def _value_text(value) -> str:
    return f"{value:g}"


def finite_json(value):
    """The same data with NaN and infinities (an estimate with nothing behind it) as None: strict JSON."""
    if isinstance(value, dict):
        return {k: finite_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_json(v) for v in value]
    if isinstance(value, (float, np.floating)) and not np.isfinite(value):
        return None
    return value


def _json_default(obj):
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")

