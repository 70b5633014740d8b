"""Control characters in text from outside: found in form fields (refused) and made visible in
reports (escaped).

A control character is a C0 code point other than tab, line feed and carriage return (U+0000 to
U+001F), DEL (U+007F) or a C1 code point (U+0080 to U+009F): none of them is typed in a form, a
NUL byte cannot be stored in a PostgreSQL text column, and XML 1.0 cannot carry most of them even
as character references, so a JUnit report holding one is unreadable. Reports also escape the
other code points XML 1.0 excludes (lone surrogates, U+FFFE and U+FFFF).
"""

from __future__ import annotations

import re

CONTROL_CHARACTER = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
"""One control character as defined above (tab, line feed and carriage return are not)."""

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def first_control_character(text: str) -> str | None:
    """The first control character in ``text`` written as ``U+0001``, or None."""
    found = CONTROL_CHARACTER.search(text)
    return f"U+{ord(found.group()):04X}" if found else None


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with every control character (and every code point XML 1.0 excludes) written as
    an escape (``\\x01``, ``\\ufffe``), so a report shows it and an XML parser reads it.
    Tab, line feed, carriage return and every printable character are kept as they are."""
    return _NOT_XML.sub(_escape, text)
