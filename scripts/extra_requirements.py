"""Print the requirements of the named extras of pyproject.toml, one a line (an extra that names another of this
project's, ``wargame-odds[app]``, gives that one's), for ``pip install -r``.

`make demo` installs the package with its core dependencies first, then these (``parquet``: the report's Parquet
tables; ``app``: the point-and-click app) while the kernels compile, which needs none of them: pip unpacking the
extras and a compile share the two cores instead of taking turns.  Installing the requirements, not the package
again with its extras, leaves the installed package alone while the compile imports it.

Usage: python scripts/extra_requirements.py EXTRA [EXTRA ...]
"""
import re
import sys
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def extra_requirements(extras: list[str], pyproject: Path = PYPROJECT) -> list[str]:
    """The requirements of ``extras``, in the order pyproject.toml lists them, each once."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    own = re.compile(rf"^{re.escape(project['name'])}\[([^\]]+)\]$")
    table = project.get("optional-dependencies", {})
    found: list[str] = []

    def add(extra: str, seen: tuple[str, ...]) -> None:
        if extra not in table:
            raise SystemExit(f"error: pyproject.toml has no extra {extra!r} (it has: {', '.join(sorted(table))})")
        for requirement in table[extra]:
            mine = own.match(requirement.replace(" ", ""))
            if mine:
                for inner in mine.group(1).split(","):
                    if inner not in seen:
                        add(inner, seen + (inner,))
            elif requirement not in found:
                found.append(requirement)

    for extra in extras:
        add(extra, (extra,))
    return found


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit(__doc__.strip().splitlines()[-1])
    print("\n".join(extra_requirements(sys.argv[1:])))
