"""Reading scenario files: TOML in, a validated pydantic model out, or one clear UserError."""
from __future__ import annotations

import math
import os
import re
import stat
import tomllib
from pathlib import Path
from typing import TypeVar, get_args

from pydantic import BaseModel, ConfigDict, ValidationError

from .arguments import MAX_PATH_CHARS  # one cap for input files and the path arguments of the API
from .bounds import MAX_TEXT_CHARS
from .errors import ArgumentError, UserError

M = TypeVar("M", bound=BaseModel)

#: Limits on every input file (documented in README.md, "Limits and safety").
MAX_FILE_BYTES = 4 * 1024 * 1024  # scenario, report, matrix, force, base and table files
MAX_TOML_DEPTH = 24  # tables and arrays nested in each other
MAX_KEY_CHARS = 200
MAX_TOML_INT = 2**53  # larger integers are rejected before any model sees them


class StrictModel(BaseModel):
    """Base for input models: unknown keys are errors, values are not silently coerced, ``inf`` and
    ``nan`` are never accepted, and no text is longer than ``MAX_TEXT_CHARS`` (names and titles have their
    own, smaller caps: wargame_odds.analysis.intake.bounds)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, allow_inf_nan=False,
                              str_max_length=MAX_TEXT_CHARS)

    def replace(self, path: str, value, source: str = "<scenario>"):
        """A copy with the field at ``path`` set to ``value`` and validated again, e.g.
        ``scenario.replace("formations[Warband].blast_markers", 3)`` (paths: wargame_odds.analysis.intake.fieldpath);
        a bad path or value raises one :class:`UserError` naming ``source``."""
        from .arguments import check_name
        from .fieldpath import with_value

        check_name("source", source, max_chars=MAX_TEXT_CHARS)
        return validate(type(self), with_value(self.model_dump(), path, value, source), source)


def shown_path(path: str | Path) -> str:
    """A path as error messages show it: at most 120 characters."""
    text = str(path)
    return text if len(text) <= 120 else f"{text[:58]}...{text[-58:]}"


def read_file(path: str | Path) -> str:
    """The text of a regular UTF-8 file of at most ``MAX_FILE_BYTES``, or one :class:`UserError`.

    The only way the program reads a user's file: devices, FIFOs and folders are refused before
    anything is read, and the size is checked before reading (and bounds the read itself).  A path is a
    ``str`` or ``os.PathLike`` (never a file descriptor: ``load(3)`` is an ArgumentError); a UTF-8
    byte-order mark at the start is dropped.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise ArgumentError("path", path, "a file path (str or pathlib.Path), or a loaded scenario")
    source = shown_path(path)
    if len(str(path)) > MAX_PATH_CHARS:
        raise UserError(source, None, f"path is {len(str(path))} characters long",
                        f"at most {MAX_PATH_CHARS} characters")
    if "\x00" in str(path):
        raise UserError(source, None, "a NUL byte in the path", "a file path without NUL bytes")
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise UserError(source, None, f"{kind}", "a regular file")
        if info.st_size > MAX_FILE_BYTES:
            raise UserError(source, None, f"file is {info.st_size} bytes", f"at most {MAX_FILE_BYTES} bytes")
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):  # replaced since the check
                raise UserError(source, None, "not a regular file", "a regular file")
            data = f.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise UserError(source, None, "file not found") from None
    except OSError as exc:
        raise UserError(source, None, f"cannot read file ({exc.__class__.__name__}: {exc.strerror})") from None
    if len(data) > MAX_FILE_BYTES:
        raise UserError(source, None, "file grew while read", f"at most {MAX_FILE_BYTES} bytes")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UserError(source, None, f"not UTF-8 text (byte {exc.start})") from None


def _check_tree(data: dict, source: str) -> None:
    """Depth, key lengths and numbers of parsed TOML: bounded, finite (walked without recursion)."""
    stack = [(data, "", 1)]
    while stack:
        node, where, depth = stack.pop()
        if depth > MAX_TOML_DEPTH:
            raise UserError(source, where or None, "nested too deeply", f"at most {MAX_TOML_DEPTH} levels")
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in items:
            if isinstance(key, str) and len(key) > MAX_KEY_CHARS:
                raise UserError(source, where or None, f"a key is {len(key)} characters long",
                                f"keys of at most {MAX_KEY_CHARS} characters")
            here = f"{where}[{key}]" if isinstance(key, int) else f"{where}.{key}" if where else key
            if isinstance(value, (dict, list)):
                stack.append((value, here, depth + 1))
            elif isinstance(value, float) and not math.isfinite(value):
                raise UserError(source, here, f"{value} is not a number", "finite numbers")
            elif isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_TOML_INT:
                raise UserError(source, here, "integer too large", "-2**53 to 2**53 (and the field's own range)")


#: A line starting with a key of more than MAX_TOML_DEPTH dotted parts (tomllib takes quadratic
#: time over such keys, so they are refused before parsing).
_DEEP_DOTTED_KEY = re.compile(r"""^[ \t]*\[{0,2}[ \t]*(?:(?:[A-Za-z0-9_-]+|"[^"\n]*"|'[^'\n]*')[ \t]*\.[ \t]*){%d}"""
                              % MAX_TOML_DEPTH, re.MULTILINE)


def parse_toml(text: str, source: str = "<string>") -> dict:
    """Parse TOML text (named ``source`` in messages) into checked data, or one :class:`UserError`."""
    if not isinstance(text, str):
        raise ArgumentError("text", text, "TOML text (str); a file is read with load(path)")
    if not isinstance(source, str) or len(source) > MAX_TEXT_CHARS:
        raise ArgumentError("source", source, f"text of at most {MAX_TEXT_CHARS} characters naming the scenario")
    if len(text) > MAX_FILE_BYTES:
        raise UserError(source, None, f"text is {len(text)} characters", f"at most {MAX_FILE_BYTES}")
    deep = _DEEP_DOTTED_KEY.search(text)
    if deep:
        line = text.count("\n", 0, deep.start()) + 1
        raise UserError(source, None, f"a dotted key nested too deeply (line {line})",
                        f"at most {MAX_TOML_DEPTH} levels")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(source, None, f"invalid TOML: {exc}") from None
    except RecursionError:
        raise UserError(source, None, "nested too deeply", f"at most {MAX_TOML_DEPTH} levels") from None
    _check_tree(data, source)
    return data


def read_toml(path: str | Path) -> tuple[dict, str]:
    """Parse a TOML file; returns (data, source name for messages).  A string is always a path
    (text goes through :func:`parse_toml`); a shipped example's name (``epic/assault_marines_vs_warband``,
    :mod:`wargame_odds.analysis.intake.examples`) stands for that file when no file of that name exists."""
    from .examples import locate

    path = locate(path)
    try:
        text = read_file(path)
    except UserError as exc:
        if exc.problem != "file not found":
            raise
        raise UserError(exc.source, None, exc.problem,
                        "a TOML file, or the name of a shipped example: `wargame-odds examples` lists them") from None
    return parse_toml(text, shown_path(path)), shown_path(path)


def _field_name(loc) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _allowed(error: dict) -> str | None:
    ctx = error.get("ctx") or {}
    if "expected" in ctx:
        return str(ctx["expected"])
    for key, word in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
        if key in ctx:
            return f"{word} {ctx[key]}"
    if "allowed" in ctx:
        return str(ctx["allowed"])
    if error["type"] == "extra_forbidden":
        return None
    return None


def _inner_model(annotation) -> type[BaseModel] | None:
    """The model inside ``X``, ``list[X]``, ``dict[str, X]`` or ``X | None``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


def _model_at(model: type[BaseModel] | None, loc) -> type[BaseModel] | None:
    """The model that owns the last key of ``loc`` (list indices and dict keys are stepped over)."""
    current = model
    for part in loc[:-1]:
        if current is None:
            return None
        if isinstance(part, str) and part in current.model_fields:
            current = _inner_model(current.model_fields[part].annotation)
    return current


def validation_error(source: str, exc: ValidationError, model: type[BaseModel] | None = None) -> UserError:
    """Turn pydantic's report into one line: file, field, problem, allowed values."""
    errors = exc.errors(include_url=False)
    first = errors[0]
    # Union members that were not chosen add noise such as 'int' or 'function-after[...]'.
    loc = [p for p in first["loc"] if not (isinstance(p, str) and ("[" in p or p in ("int", "str", "float", "bool")))]
    problem = first["msg"]
    if first["type"] == "extra_forbidden":
        problem = "unknown key"
        owner = _model_at(model, first["loc"])
        if owner is not None:
            problem += f"; allowed: {', '.join(owner.model_fields)}"
    elif first["type"] == "missing":
        problem = "required key is missing"
    elif "input" in first and first["type"] not in ("value_error",):
        shown = repr(first["input"])
        problem += f", got {shown if len(shown) <= 60 else shown[:57] + '...'}"
    field = _field_name(loc) or None
    allowed = _allowed(first)
    if problem.startswith("Value error, "):
        # Model-level checks write "FIELD: problem; allowed: A, B" to name the field themselves.
        problem = problem[len("Value error, "):]
        head, sep, rest = problem.partition(": ")
        if sep and " " not in head:
            field = f"{field}.{head}" if field else head
            problem = rest
    problem, sep, listed = problem.partition("; allowed: ")
    if sep:
        allowed = listed
    more = len(errors) - 1
    if more:
        problem += f" (and {more} more problem{'s' if more > 1 else ''})"
    return UserError(source, field, problem, allowed)


def validate(model: type[M], data: dict, source: str, context: dict | None = None) -> M:
    try:
        return model.model_validate(data, context=context)
    except ValidationError as exc:
        raise validation_error(source, exc, model) from None
