"""Reading scenario files: TOML in, a validated pydantic model out, or one clear UserError."""
from __future__ import annotations

import tomllib
from pathlib import Path
from typing import TypeVar, get_args

from pydantic import BaseModel, ConfigDict, ValidationError

from .errors import UserError

M = TypeVar("M", bound=BaseModel)


class StrictModel(BaseModel):
    """Base for scenario models: unknown keys are errors, values are not silently coerced."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    def replace(self, path: str, value, source: str = "<scenario>"):
        """A copy with the field at ``path`` set to ``value`` and validated again, e.g.
        ``scenario.replace("formations[Warband].blast_markers", 3)`` (paths: analysis.decisions.fieldpath);
        a bad path or value raises one :class:`UserError` naming ``source``."""
        from .decisions.fieldpath import with_value

        return validate(type(self), with_value(self.model_dump(), path, value, source), source)


def read_toml(path_or_text: str | Path) -> tuple[dict, str]:
    """Parse a TOML file (a path) or TOML text; returns (data, source name for messages)."""
    if isinstance(path_or_text, Path) or not ("\n" in path_or_text or "=" in path_or_text):
        path = Path(path_or_text)
        source = str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise UserError(source, None, "file not found") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise UserError(source, None, f"cannot read file ({exc.__class__.__name__}: {exc})") from None
    else:
        source, text = "<string>", str(path_or_text)
    try:
        return tomllib.loads(text), source
    except tomllib.TOMLDecodeError as exc:
        raise UserError(source, None, f"invalid TOML: {exc}") from None


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
