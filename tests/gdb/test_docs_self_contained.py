"""The project explains itself (issue 11 §4): the GdB and T9A clause numbers that traces, notes and
tables cite are written down in docs/gdb.md and docs/t9a.md, and what ships points only into the
repository."""
import re
from pathlib import Path

import pytest

import wargame_odds.analysis.gdb as gdb
import wargame_odds.analysis.t9a as t9a
from wargame_odds.analysis.gdb.tables import template_text

CLAUSE = re.compile(r"§C?\d+(?:\.\d+)*|Q-[ABC]\d+")
OUTSIDE = re.compile(r"shared/|charges\.md|source-texts|epic-armageddon\.md")


def _defined(doc: str, tag: str) -> bool:
    """A clause is defined when the doc heads a paragraph with it (``**§2.1``, ``**Q-A4**``), or, for
    a numbered item such as §3.4.2, with its parent clause."""
    while True:
        if re.search(rf"\*\*(?:§\d+–)?{re.escape(tag)}(?![\d.])", doc):
            return True
        if "." not in tag:
            return False
        tag = tag.rsplit(".", 1)[0]


@pytest.mark.parametrize("system, doc", [(gdb, "docs/gdb.md"), (t9a, "docs/t9a.md")])
def test_every_clause_a_trace_cites_is_in_the_docs(system, doc):
    """Traces of every shipped scenario cite only clauses that the system's doc defines."""
    text = Path(doc).read_text(encoding="utf-8")
    name = system.__name__.rsplit(".", 1)[1]
    cited = set()
    for path in sorted(Path(f"analysis/scenarios/{name}").glob("*.toml")):
        for seed in range(5):
            cited |= set(CLAUSE.findall(system.trace(system.load(str(path)), seed=seed)))
    assert cited, "no clause cited: the trace format changed"
    missing = sorted(tag for tag in cited if not _defined(text, tag))
    assert not missing, f"{doc} does not define {missing}"


def test_gdb_and_t9a_files_that_ship_point_only_into_the_repository():
    files = [Path("docs/gdb.md"), Path("docs/t9a.md"), *Path("analysis/gdb").glob("*.*"),
             *Path("analysis/t9a").glob("*.py"), *Path("analysis/scenarios/gdb").glob("*.toml"),
             *Path("analysis/scenarios/t9a").glob("*.toml")]
    texts = {str(f): f.read_text(encoding="utf-8") for f in files if f.suffix in (".md", ".py", ".toml")}
    texts["gdb-tables template"] = template_text()
    outside = sorted(name for name, text in texts.items() if OUTSIDE.search(text))
    assert not outside, f"these point outside the repository: {outside}"
