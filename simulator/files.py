"""Read and write the YAML contracts (design, scenario) with errors that name file, line and field.

YAML is read with YAML 1.2 semantics (the core schema): ``010`` is the integer 10, ``1:30`` and
``yes``/``no``/``on``/``off`` are strings, ``0o17`` and ``0x1f`` are octal and hexadecimal, and no
tag outside the core schema (str, int, float, bool, null, map, seq) is constructed. It is PyYAML's
parser (libyaml's when PyYAML was built with it) with a resolver and a constructor limited to the
core schema, rather than a second YAML library: the event-stream checks below, the line of every
node and the speed of libyaml are kept.

Every file is also held to limits an author never reaches: at most MAX_FILE_BYTES bytes,
MAX_DEPTH levels of nesting, numbers of at most MAX_NUMBER_CHARS characters, no anchors or
aliases (a YAML bomb), and no key given twice in one mapping (PyYAML would keep the last one
silently). Every mapping key and value keeps the line it came from, so a pydantic error location
such as ``("event_log", "partitions")`` is reported as ``design.yaml:14: event_log.partitions:
Input should be greater than or equal to 1``.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import yaml
from pydantic import BaseModel, ValidationError
from yaml.constructor import ConstructorError

from simulator.design import Design
from simulator.errors import FieldError, InputFileError
from simulator.scenario import Scenario

M = TypeVar("M", bound=BaseModel)

MAX_FILE_BYTES = 1_000_000
MAX_DEPTH = 32
Lines = dict[tuple[str | int, ...], int]

_TAG = "tag:yaml.org,2002:"


class Core12Resolver(yaml.resolver.BaseResolver):
    """Resolves plain scalars by the YAML 1.2 core schema (spec 1.2.2, section 10.3.2) only."""


_DIGITS = list("-+0123456789")
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_INT = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_FLOAT = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
Core12Resolver.add_implicit_resolver(_TAG + "null", _NULL, ["~", "n", "N", ""])
Core12Resolver.add_implicit_resolver(_TAG + "bool", _BOOL, list("tTfF"))
Core12Resolver.add_implicit_resolver(_TAG + "int", _INT, _DIGITS)
Core12Resolver.add_implicit_resolver(_TAG + "float", _FLOAT, [*_DIGITS, "."])


class Core12Constructor(yaml.constructor.SafeConstructor):
    """Constructs the YAML 1.2 core schema's tags only; any other tag (``!!binary``,
    ``!!timestamp``, ``!!python/...``, ``!custom``, a merge key) is a ConstructorError."""

    yaml_constructors: ClassVar[dict[Any, Any]] = {}

    def flatten_mapping(self, node: yaml.MappingNode) -> None:
        """No merge keys (``<<``) in YAML 1.2: a mapping's keys are its own."""

    def _bad(self, node: yaml.Node, kind: str) -> ConstructorError:
        return ConstructorError(
            None, None, f"{node.value!r} is not a YAML 1.2 {kind}", node.start_mark
        )

    def construct_core_bool(self, node: yaml.ScalarNode) -> bool:
        """true/True/TRUE or false/False/FALSE; raises ConstructorError for anything else."""
        value = str(self.construct_scalar(node))
        if not _BOOL.match(value):
            raise self._bad(node, "boolean")
        return value.lower() == "true"

    def construct_core_int(self, node: yaml.ScalarNode) -> int:
        """Decimal (a leading 0 is still decimal), ``0o`` octal or ``0x`` hexadecimal."""
        value = str(self.construct_scalar(node))
        if not _INT.match(value):
            raise self._bad(node, "integer")
        if value.startswith(("0o", "0x")):
            return int(value[2:], 8 if value[1] == "o" else 16)
        return int(value, 10)

    def construct_core_float(self, node: yaml.ScalarNode) -> float:
        """A decimal or exponent number, ``.inf``, ``-.inf`` or ``.nan``."""
        value = str(self.construct_scalar(node))
        if not _FLOAT.match(value):
            raise self._bad(node, "number")
        special = value.lower().lstrip("-+")
        if special in (".inf", ".nan"):
            number = float(special[1:])
            return -number if value.startswith("-") else number
        return float(value)


Core12Constructor.yaml_constructors.update(
    {
        _TAG + "null": Core12Constructor.construct_yaml_null,
        _TAG + "bool": Core12Constructor.construct_core_bool,
        _TAG + "int": Core12Constructor.construct_core_int,
        _TAG + "float": Core12Constructor.construct_core_float,
        _TAG + "str": Core12Constructor.construct_yaml_str,
        _TAG + "seq": Core12Constructor.construct_yaml_seq,
        _TAG + "map": Core12Constructor.construct_yaml_map,
        None: Core12Constructor.construct_undefined,
    }
)


_PyParser: type = type(
    "_PyParser",
    (yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser, yaml.composer.Composer),
    {},
)
# libyaml's parser lives in yaml.cyaml (yaml.CParser is not exported): about ten times faster
# than PyYAML's own on the course's files, with the same events, nodes and line marks.
_CParser: type | None = getattr(yaml, "cyaml", None) and getattr(yaml.cyaml, "CParser", None)
_Parser: Any = _CParser or _PyParser


class _LineLoader(_Parser, Core12Constructor, Core12Resolver):
    """libyaml's parser when PyYAML was built with it (else PyYAML's own), the YAML 1.2 core
    schema's resolver and constructor."""

    def __init__(self, stream: str) -> None:
        if _Parser is not _PyParser:
            _Parser.__init__(self, stream)
        else:
            yaml.reader.Reader.__init__(self, stream)
            yaml.scanner.Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)
            yaml.composer.Composer.__init__(self)
        Core12Constructor.__init__(self)
        Core12Resolver.__init__(self)


MAX_NUMBER_CHARS = 100
"""A number written with more characters than this is refused (Python refuses to convert an
integer of over 4300 digits, and no field of a design or scenario needs more than a few)."""


def _refuse(filename: str, line: int | None, field: str, message: str) -> InputFileError:
    return InputFileError([FieldError(filename, line, field, message)])


def _check_events(text: str, filename: str) -> None:
    """Refuse aliases and nesting deeper than MAX_DEPTH from the parser's event stream, before
    any tree is built: the composer recurses once per level (thousands of ``[`` exhaust Python's
    stack) and an alias makes a tree walk visit its anchor again (a YAML bomb)."""
    depth = 0
    for event in yaml.parse(text, Loader=_LineLoader):
        line = event.start_mark.line + 1 if event.start_mark else None
        if isinstance(event, yaml.AliasEvent):
            raise _refuse(filename, line, "", "YAML aliases (*name) are not allowed")
        if isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
            depth += 1
            if depth > MAX_DEPTH + 1:
                raise _refuse(filename, line, "", f"nesting deeper than {MAX_DEPTH} levels")
        elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
            depth -= 1


def _walk(
    node: yaml.Node, path: tuple[str | int, ...], lines: Lines, depth: int, filename: str
) -> None:
    if depth > MAX_DEPTH:
        raise yaml.YAMLError(f"nesting deeper than {MAX_DEPTH} levels")
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        seen: dict[tuple[str, str], int] = {}
        for key, value in node.value:
            name = key.value if isinstance(key, yaml.ScalarNode) else str(key.start_mark.line)
            line = key.start_mark.line + 1
            if isinstance(key, yaml.ScalarNode):
                first = seen.get((key.tag, key.value))
                if first is not None:
                    field = ".".join(str(p) for p in path + (name,))
                    message = (
                        f"duplicate key {name!r}: already given at line {first}, and a key may "
                        "appear only once in a mapping (remove one of them)"
                    )
                    raise _refuse(filename, line, field, message)
                seen[(key.tag, key.value)] = line
            lines[path + (name,)] = line
            _walk(value, path + (name,), lines, depth + 1, filename)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, path + (i,), lines, depth + 1, filename)
    elif node.tag.endswith((":int", ":float")) and len(node.value) > MAX_NUMBER_CHARS:
        field = ".".join(str(p) for p in path)
        message = f"a number of {len(node.value)} characters; at most {MAX_NUMBER_CHARS} are read"
        raise _refuse(filename, node.start_mark.line + 1, field, message)


def parse_yaml(text: str, filename: str) -> tuple[Any, Lines]:
    """Parse YAML text safely; return the data and a map from key path to line number.

    YAML 1.2 core schema semantics (see the module's docstring). Raises InputFileError for a
    file over MAX_FILE_BYTES, a syntax error, a tag outside the core schema, aliases (a YAML
    bomb defence: anchors are refused), nesting deeper than MAX_DEPTH, a number longer than
    MAX_NUMBER_CHARS, or a key given twice in one mapping (named with its line and dotted path).
    """
    if len(text.encode("utf-8", "replace")) > MAX_FILE_BYTES:
        raise InputFileError(
            [FieldError(filename, None, "", f"file larger than {MAX_FILE_BYTES} bytes")]
        )
    try:
        _check_events(text, filename)
        node = yaml.compose(text, Loader=_LineLoader)
        if node is None:
            return None, {}
        lines: Lines = {}
        _walk(node, (), lines, 0, filename)
        data = _LineLoader("").construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = mark.line + 1 if mark else None
        if line is not None:
            # A problem found at the end of the text (an unclosed bracket or quote) is marked
            # just past its last line: name the last line instead.
            line = min(line, max(1, len(text.splitlines())))
        problem = f"YAML syntax: {exc.problem}"
        if "nesting depth" in str(exc.problem):  # libyaml's own limit, far above ours
            problem = f"nesting deeper than {MAX_DEPTH} levels"
        raise InputFileError([FieldError(filename, line, "", problem)]) from exc
    except yaml.YAMLError as exc:
        raise InputFileError([FieldError(filename, None, "", f"YAML: {exc}")]) from exc
    return data, lines


def line_of(lines: Lines, loc: tuple[str | int, ...]) -> int | None:
    """The line of the deepest existing prefix of ``loc`` (a missing field points at its parent)."""
    for end in range(len(loc), -1, -1):
        if loc[:end] in lines:
            return lines[loc[:end]]
    return None


_TYPE_TAGS = {"int", "float", "str", "bool", "list", "dict", "none"}


def _clean_loc(loc: tuple[str | int, ...], data: Any, lines: Lines) -> tuple[str | int, ...]:
    """Drop the union-member tags pydantic adds to a location (``worker_crash``, ``int``)."""
    kept: tuple[str | int, ...] = ()
    node = data
    for part in loc:
        is_tag = (
            isinstance(part, str)
            and kept + (part,) not in lines
            and (
                part in _TYPE_TAGS
                or "[" in part
                or part.startswith("function-")
                or (isinstance(node, dict) and node.get("kind") == part)
            )
        )
        if is_tag:
            continue
        kept += (part,)
        if isinstance(node, dict):
            node = node.get(part)
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        else:
            node = None
    return kept


def validation_errors(
    exc: ValidationError, filename: str, lines: Lines, data: Any = None
) -> list[FieldError]:
    """Turn every pydantic error into a FieldError naming file, line and dotted field."""
    out = []
    for err in exc.errors():
        loc = _clean_loc(tuple(err["loc"]), data, lines)
        field = ".".join(str(p) for p in loc)
        out.append(FieldError(filename, line_of(lines, loc), field, _message(err, loc)))
    return out


def _message(err: Any, loc: tuple[str | int, ...]) -> str:
    """pydantic's message, in the file's terms where pydantic's own would puzzle an author."""
    if err["type"] == "extra_forbidden":
        return (
            f"unknown field {str(loc[-1])!r}: not part of this file's format "
            "(check its spelling and its indentation)"
        )
    value = err.get("input")
    if isinstance(value, float) and not math.isfinite(value):
        # pydantic compares NaN with a bound and reports the bound, which puzzles: say what it is.
        return f"{value!r} is not a finite number"
    return str(err["msg"])


def load_model(model: type[M], text: str, filename: str) -> M:
    """Validate YAML text as ``model``; raise InputFileError listing all errors with lines."""
    data, lines = parse_yaml(text, filename)
    if not isinstance(data, dict):
        raise InputFileError([FieldError(filename, 1, "", "expected a mapping at the top level")])
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise InputFileError(validation_errors(exc, filename, lines, data)) from exc


def read_text(path: Path) -> str:
    """Read a UTF-8 file; raise InputFileError (not OSError) when it cannot be read."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise InputFileError(
                [FieldError(str(path), None, "", f"file larger than {MAX_FILE_BYTES} bytes")]
            )
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputFileError([FieldError(str(path), None, "", f"cannot read: {exc}")]) from exc


def load_design(path: Path) -> Design:
    """Load a design file; raise InputFileError naming file, line and field of every problem."""
    return load_model(Design, read_text(path), str(path))


def load_scenario(path: Path) -> Scenario:
    """Load a scenario file; raise InputFileError naming file, line and field of every problem."""
    return load_model(Scenario, read_text(path), str(path))


def dump_yaml(model: BaseModel) -> str:
    """Serialise a design or scenario as YAML in field order (enums as their values); a whole
    number in a float field is written without ``.0`` (``45000``, not ``45000.0``), which loads
    back to the same value. Uses libyaml's emitter when present."""
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    data = _whole_numbers(model.model_dump(mode="json"))
    return yaml.dump(data, Dumper=dumper, sort_keys=False, allow_unicode=True)


def _whole_numbers(value: Any) -> Any:
    """``value`` with every float that is a whole number (below 2**53) made an int."""
    if isinstance(value, dict):
        return {k: _whole_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole_numbers(v) for v in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value
