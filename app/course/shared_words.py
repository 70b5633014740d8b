"""Lint rule: the course is written in its own words, not in its sources' sentences.

``designlab lint --seeds DIR`` compares every text of the course folder with the source material
in DIR (every ``*.txt`` file there) and reports, as a warning with file and line, each run of
SHARED_RUN_WORDS or more consecutive words that a text shares with a source.

What is compared:

- Markdown (``*.md``): the whole file, except ``{{ figures.name }}`` placeholders (a run never
  spans one) and quoted, attributed definitions (below);
- YAML (``*.yaml``): every string value (keys and comments are not read), each on its own, a
  Jinja ``{{ ... }}``/``{% ... %}`` inside a template breaking a run.

Words are compared in lower case, as runs of letters and digits (an apostrophe inside a word
kept), so punctuation, Markdown markup and line breaks do not hide a copied sentence.

A quoted, attributed definition is a Markdown block quote whose last line names its source,
starting with an em dash (``—``) or two hyphens (``--``)::

    > At-least-once delivery: every event is processed, possibly more than once.
    > — Source, chapter or page

Such a block is not compared. A block quote without that last line is compared like any text,
and YAML strings have no quotes (course.yaml, step.yaml: always the course's own words).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

from app.course.content import Problem

SHARED_RUN_WORDS = 8
"""A shared run of this many consecutive words or more is reported."""

_TOKEN = re.compile(
    r"(?P<template>\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\})|(?P<word>[^\W_]+(?:['\u2019][^\W_]+)*)",
    re.DOTALL,
)
_ATTRIBUTION = re.compile(r"^\s*(?:—|--)\s*\S")
_BREAK = None


@dataclass(frozen=True)
class Word:
    """A word of a course text (lower case, apostrophes as ``'``) and its 1-based line."""

    text: str
    line: int


Token = Word | None
"""A word, or None for a break no run may span."""


def _words(text: str, first_line: int = 1) -> Iterator[Token]:
    """The words of ``text`` with their lines; each Jinja tag in it is a break."""
    line = first_line
    offset = 0
    for match in _TOKEN.finditer(text):
        line += text.count("\n", offset, match.start())
        offset = match.start()
        if match.lastgroup == "template":
            yield _BREAK
        else:
            yield Word(match.group().lower().replace("\u2019", "'"), line)


def markdown_words(text: str) -> list[Token]:
    """The compared words of a Markdown file, quoted attributed definitions left out."""
    lines = text.splitlines()
    skipped = _attributed_quote_lines(lines)
    tokens: list[Token] = []
    for number, line in enumerate(lines, start=1):
        if number in skipped:
            tokens.append(_BREAK)
            continue
        tokens.extend(_words(line, number))
    return tokens


def _attributed_quote_lines(lines: list[str]) -> set[int]:
    """1-based numbers of the lines of every block quote whose last line is an attribution."""
    skipped: set[int] = set()
    block: list[int] = []
    for number, line in enumerate([*lines, ""], start=1):
        if line.lstrip().startswith(">"):
            block.append(number)
            continue
        if block:
            last = lines[block[-1] - 1].lstrip()[1:]
            if _ATTRIBUTION.match(last):
                skipped.update(block)
            block = []
    return skipped


def yaml_strings(text: str) -> Iterator[tuple[str, int]]:
    """Every string value of a YAML document as it stands in the file (for a block or folded
    scalar, its source lines) with the 1-based line it starts on; keys are left out.

    Raises yaml.YAMLError for a file that is not YAML (the course loader reports those)."""
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    stack = [root] if root is not None else []
    while stack:
        node = stack.pop()
        if isinstance(node, yaml.MappingNode):
            stack.extend(value for _key, value in reversed(node.value))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(reversed(node.value))
        elif isinstance(node, yaml.ScalarNode) and node.tag.endswith(":str"):
            source = text[node.start_mark.index : node.end_mark.index]
            yield source, node.start_mark.line + 1


def seed_runs(seeds_dir: Path) -> dict[tuple[str, ...], str]:
    """Every SHARED_RUN_WORDS-word run of the sources in ``seeds_dir`` to the first file that
    holds it (its name). Raises OSError when the folder or a file cannot be read."""
    runs: dict[tuple[str, ...], str] = {}
    for path in sorted(seeds_dir.glob("*.txt")):
        words = [w.text for w in _words(path.read_text(encoding="utf-8")) if w is not None]
        for i in range(len(words) - SHARED_RUN_WORDS + 1):
            runs.setdefault(tuple(words[i : i + SHARED_RUN_WORDS]), path.name)
    return runs


@dataclass(frozen=True)
class SharedRun:
    """A run of words a course text shares with a source: where, how long, which source."""

    file: Path
    line: int
    words: tuple[str, ...]
    source: str

    def problem(self) -> Problem:
        """The run as a lint warning with file and line."""
        shown = " ".join(self.words)
        if len(self.words) > 16:
            shown = " ".join(self.words[:16]) + " ..."
        message = (
            f"{len(self.words)} words shared with the source {self.source}: \u201c{shown}\u201d; "
            "say it in the course's own words, or quote it as an attributed definition "
            "(steps/README.md)"
        )
        return Problem("warning", str(self.file), self.line, "", message)


def shared_runs_in(
    tokens: Iterable[Token], seeds: dict[tuple[str, ...], str], file: Path
) -> list[SharedRun]:
    """The maximal runs of ``tokens`` covered by SHARED_RUN_WORDS-word runs found in ``seeds``;
    overlapping and adjacent matches merge into one run."""
    found: list[SharedRun] = []
    segment: list[Word] = []
    for token in [*tokens, _BREAK]:
        if token is not None:
            segment.append(token)
            continue
        found.extend(_runs_of_segment(segment, seeds, file))
        segment = []
    return found


def _runs_of_segment(
    words: list[Word], seeds: dict[tuple[str, ...], str], file: Path
) -> Iterator[SharedRun]:
    n = SHARED_RUN_WORDS
    end = -1
    start = 0
    source = ""
    for i in range(len(words) - n + 1):
        hit = seeds.get(tuple(w.text for w in words[i : i + n]))
        if hit is None:
            continue
        if i > end:  # not touching the run so far: that one is complete
            if end >= 0:
                yield _run(words, start, end, source, file)
            start, source = i, hit
        end = i + n - 1
    if end >= 0:
        yield _run(words, start, end, source, file)


def _run(words: list[Word], start: int, end: int, source: str, file: Path) -> SharedRun:
    return SharedRun(file, words[start].line, tuple(w.text for w in words[start : end + 1]), source)


def course_texts(root: Path) -> Iterator[tuple[Path, list[Token]]]:
    """Every Markdown and YAML file under the course folder ``root`` with its compared words.

    A YAML file that does not parse yields nothing (the loader reports it)."""
    for path in sorted(root.rglob("*")):
        if path.suffix == ".md":
            yield path, markdown_words(path.read_text(encoding="utf-8"))
        elif path.suffix in (".yaml", ".yml"):
            text = path.read_text(encoding="utf-8")
            tokens: list[Token] = []
            try:
                for source, line in yaml_strings(text):
                    tokens += [*_words(source, line), _BREAK]
            except yaml.YAMLError:
                continue
            yield path, tokens


def shared_with_seeds(root: Path, seeds_dir: Path) -> list[SharedRun]:
    """Every run of SHARED_RUN_WORDS or more words a text under ``root`` shares with a source
    in ``seeds_dir``, by file and line.

    Raises NotADirectoryError when ``seeds_dir`` is not a folder, and FileNotFoundError when it
    holds no ``*.txt`` file (a wrong folder would otherwise report nothing)."""
    if not seeds_dir.is_dir():
        raise NotADirectoryError(f"{seeds_dir}: not a folder")
    seeds = seed_runs(seeds_dir)
    if not any(seeds_dir.glob("*.txt")):
        raise FileNotFoundError(f"{seeds_dir}: no *.txt source file in this folder")
    found: list[SharedRun] = []
    for path, tokens in course_texts(root):
        found += shared_runs_in(tokens, seeds, path)
    return found
