"""Typed inputs at the edge: the base every input model shares, the shared kinds of text, and the one
translation of a pydantic failure into the layer's own error.

Invariants:
- Every input model is a `StrictModel`: pydantic v2 in strict mode (nothing is coerced: `"5"` is no
  integer, `true` no number, `1.5` no integer), extra fields forbidden, frozen. Lists given for
  tuple fields are accepted as what they are (`Items`), element types still strict.
- The kinds of text are declared here once, and only here: `line(n)` (one non-empty line without
  control characters, at most n characters), `block(n)` (the same, line breaks allowed), `PathText`
  (one line, no NUL, at most MAX_PATH_CHARS, each component at most MAX_NAME_BYTES in UTF-8, the
  filesystem's own limits, so an over-long name is a field error rather than an OSError later) and
  `matching(pattern, what)` (a line that is a name of some kind: `harness.hermes.locate.ProfileName` is one,
  `EnvName` another), and `EnvValue` (any text but a NUL). Each strips surrounding whitespace when asked, and no
  other kind of text check exists in the harness's input models.
- A model that code builds from keywords (a Hermes run, the operator's sub-agent settings) is a `BuiltModel`:
  its constructor raises the layer's own field error, through the same translation as `validate`.
- `validate` (and `field_error` below it) is the only reader of a `ValidationError`: the first error (in field order) becomes
  `error(field, message)`, `field` dotted the way the project always wrote it (`payload.tags[1]`,
  `subtasks[0].uses`, `agents.andy.profile`), the message one line in the project's words: what was
  expected and what kind of value came (`describe`). No message quotes the value itself: the documents
  validated here are often files (plans, registries, intents), and a file named by mistake or by a host
  (a `.env`, `/etc/passwd`) must not come back in the error; the field's name says where to look.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, TypeVar, Union

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, ValidationError

from harness import settings

MAX_PATH_CHARS = settings.MAX_PATH_CHARS
MAX_NAME_BYTES = settings.MAX_NAME_BYTES
ModelT = TypeVar("ModelT", bound=BaseModel)
ItemT = TypeVar("ItemT")


class StrictModel(BaseModel):
    """An input shape: strict types, no unknown fields, immutable once validated."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class BuiltModel(StrictModel):
    """A StrictModel that code builds from keywords (not read from a document): a bad field raises the layer's
    own `FIELD_ERROR(field, message)` through `field_error`, never pydantic's ValidationError."""

    FIELD_ERROR: ClassVar[type[Exception]]

    if not TYPE_CHECKING:  # mypy's pydantic plugin types the constructor from the fields; this only renames the error
        def __init__(self, **fields: Any) -> None:
            try:
                super().__init__(**fields)
            except ValidationError as exc:
                raise field_error(type(self), exc, type(self).FIELD_ERROR) from None


def _list_as_tuple(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


Items = Annotated[tuple[ItemT, ...], BeforeValidator(_list_as_tuple)]
"""A JSON or YAML list held as a tuple; anything else is refused as not a list."""


def _text_check(max_chars: int, one_line: bool, strip: bool) -> Callable[[str], str]:
    def check(value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        if "\0" in value:
            raise ValueError("contains a NUL character")
        if one_line and any(ch in value.strip() for ch in "\n\r"):
            raise ValueError("must be one line")
        if len(value) > max_chars:
            raise ValueError(f"is {len(value)} characters long; at most {max_chars}")
        return value.strip() if strip else value
    return check


def line(max_chars: int, *, strip: bool = False) -> AfterValidator:
    """One non-empty line of at most `max_chars` characters (use as `Annotated[str, line(200)]`)."""
    return AfterValidator(_text_check(max_chars, True, strip))


def block(max_chars: int, *, strip: bool = False) -> AfterValidator:
    """Non-empty text of at most `max_chars` characters, line breaks allowed."""
    return AfterValidator(_text_check(max_chars, False, strip))


def matching(pattern: re.Pattern[str], what: str) -> AfterValidator:
    """A string that `pattern` matches whole; the refusal says it is not `what`."""
    def check(value: str) -> str:
        if not pattern.fullmatch(value):
            raise ValueError(f"is not {what}")
        return value
    return AfterValidator(check)


def _path_check(value: str) -> str:
    value = _text_check(MAX_PATH_CHARS, True, False)(value)
    problem = settings.path_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


PathText = Annotated[str, AfterValidator(_path_check)]
"""A path as the operator wrote it (relative or absolute); where it may point is the caller's policy."""


def _no_nul(value: str) -> str:
    if "\0" in value:
        raise ValueError("contains a NUL character")
    return value


ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
EnvName = Annotated[str, matching(ENV_NAME, "an environment variable name (letters, digits and '_', not first a digit)")]
EnvValue = Annotated[str, AfterValidator(_no_nul)]
"""An environment variable's value: any text, empty included, but no NUL (no environment can carry one)."""


def describe(value: Any) -> str:
    """A value as the error messages show it: its JSON kind, never its content (see the module invariants)."""
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "list", tuple: "list",
            dict: "mapping", type(None): "null"}.get(type(value), type(value).__name__)


def validate(model: type[ModelT], document: Any, error: Callable[[str, str], Exception], *,
             root: str = "(document)", prefix: str = "") -> ModelT:
    """`document` as `model`, or `error(field, message)` for its first bad field.

    `root` names the document itself (when it is not even a mapping); `prefix` goes before every
    field name (`sentinel.` for a sentinel file)."""
    try:
        return model.model_validate(document)
    except ValidationError as exc:
        raise field_error(model, exc, error, root=root, prefix=prefix) from None


def field_error(model: type[BaseModel], exc: ValidationError, error: Callable[[str, str], Exception], *,
                root: str = "(document)", prefix: str = "") -> Exception:
    """`error(field, message)` for the first bad field of `exc`, a failure to build `model` (see `validate`)."""
    first = exc.errors(include_url=False)[0]
    loc = tuple(first["loc"])
    field = prefix + dotted(loc) if loc else root
    return error(field, _message(model, first, loc))


def dotted(loc: tuple[int | str, ...]) -> str:
    """A pydantic location as the project spells a field: names joined by dots, list indexes in brackets."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        elif part == "[key]":
            text += " (the key)"
        else:
            text += f".{part}" if text else str(part)
    return text


_KINDS = {"string_type": "a string", "int_type": "an integer", "float_type": "a number", "bool_type": "true or false",
          "tuple_type": "a list", "list_type": "a list", "dict_type": "a mapping", "model_type": "a mapping",
          "model_attributes_type": "a mapping", "none_required": "null"}


# pydantic's bound errors in the project's words; each template's names are that error's ctx keys.
_BOUNDS = {"greater_than_equal": "must be at least {ge}",
           "less_than_equal": "must be at most {le}",
           "greater_than": "must be more than {gt}",
           "literal_error": "must be one of {expected}, got {shown}",
           "finite_number": "must be a finite number",
           "too_long": "has {actual_length} entries; at most {max_length}",
           "too_short": "must have at least {min_length} entries"}


def _message(model: type[BaseModel], error: Mapping[str, Any], loc: tuple[Any, ...]) -> str:
    kind, ctx, given = error["type"], error.get("ctx") or {}, error.get("input")
    if kind == "missing":
        return "is required"
    if kind == "extra_forbidden":
        known = ", ".join(_known_fields(model, loc[:-1]))
        return f"is not a known field (known: {known})" if known else "is not a known field"
    if kind in _KINDS:
        return f"must be {_KINDS[kind]}, got {describe(given)}"
    if kind == "value_error" and "error" in ctx:
        return str(ctx["error"])
    if kind == "too_short" and ctx.get("min_length") == 1:
        return "must be a non-empty list"
    if kind in _BOUNDS:
        return _BOUNDS[kind].format(**ctx, shown=describe(given))
    return str(error["msg"])


def _known_fields(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The field names of the model found at `loc` inside `model`, for an 'unknown field' message."""
    candidates: list[Any] = [model]
    for part in loc:
        following: list[Any] = []
        for candidate in _unwrapped(candidates):
            if isinstance(part, str) and isinstance(candidate, type) and issubclass(candidate, BaseModel):
                field = candidate.model_fields.get(part)
                if field is not None:
                    following.append(field.annotation)
            elif typing.get_origin(candidate) in (tuple, list, dict):  # an index or a key: the element's type
                following.extend([arg for arg in typing.get_args(candidate) if arg is not Ellipsis][-1:])
        candidates = following
    models = [c for c in _unwrapped(candidates) if isinstance(c, type) and issubclass(c, BaseModel)]
    return list(models[0].model_fields) if models else []


def _unwrapped(candidates: list[Any]) -> list[Any]:
    result: list[Any] = []
    pending = list(candidates)
    while pending:
        candidate = pending.pop(0)
        origin = typing.get_origin(candidate)
        if origin is Annotated:
            pending.append(typing.get_args(candidate)[0])
        elif origin is Union or isinstance(candidate, types.UnionType):
            pending.extend(typing.get_args(candidate))
        else:
            result.append(candidate)
    return result
