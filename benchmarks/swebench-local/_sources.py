"""The source files of the local SWE-bench repositories, commit by commit.

Read by ``make_instances.py``. Each repository is a list of commits; a commit is
a message, a fixed date and the files it writes (``None`` deletes a file).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Commit:
    """One commit: what it says, when, and the files it writes."""

    message: str
    date: str
    files: dict[str, str | None]


@dataclass(frozen=True)
class LocalInstance:
    """One benchmark instance: the fix commit on top of a base commit."""

    number: int
    base: int
    """Index of the base commit in the repository's commit list."""
    fix: int
    """Index of the commit holding the gold fix and its tests."""
    problem_statement: str
    created_at: str


@dataclass(frozen=True)
class LocalRepo:
    """A small repository we wrote ourselves, and its instances."""

    repo: str
    version: str
    commits: list[Commit]
    instances: list[LocalInstance] = field(default_factory=list)


# --- strutils: string helpers (flat layout, pyproject.toml) ---------------------------------

STRUTILS_PYPROJECT = """\
[project]
name = "strutils"
version = "0.1.0"
requires-python = ">=3.9"

[tool.pytest.ini_options]
testpaths = ["tests"]
"""

STRUTILS_INIT = '''\
"""strutils: small string helpers."""

from strutils.case import to_camel, to_snake
from strutils.text import slugify, truncate

__all__ = ["slugify", "to_camel", "to_snake", "truncate"]
__version__ = "0.1.0"
'''

STRUTILS_CASE_V1 = '''\
"""Identifier case conversion."""


def to_snake(name: str) -> str:
    """``"fooBar"`` -> ``"foo_bar"``; dashes become underscores."""
    out = []
    for index, char in enumerate(name):
        if char.isupper() and index > 0:
            out.append("_")
        out.append(char.lower())
    return "".join(out).replace("-", "_")


def to_camel(name: str) -> str:
    """``"foo_bar"`` -> ``"fooBar"``."""
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)
'''

STRUTILS_CASE_V2 = '''\
"""Identifier case conversion."""

import re

_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def to_snake(name: str) -> str:
    """``"fooBar"`` -> ``"foo_bar"``, ``"HTTPServer"`` -> ``"http_server"``; dashes become underscores."""
    return _BOUNDARY.sub("_", name).replace("-", "_").lower()


def to_camel(name: str) -> str:
    """``"foo_bar"`` -> ``"fooBar"``."""
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)
'''

STRUTILS_TEXT_V1 = '''\
"""Text shortening and slugs."""

import re


def truncate(text: str, width: int, suffix: str = "...") -> str:
    """Shorten ``text`` to at most ``width`` characters, ending with ``suffix`` when it is cut."""
    if len(text) <= width:
        return text
    return text[:width] + suffix


def slugify(text: str) -> str:
    """Lower-case words joined by dashes: ``"Hello, World!"`` -> ``"hello-world"``."""
    return "-".join(re.findall(r"[a-z0-9]+", text.lower()))
'''

STRUTILS_TEXT_V2 = '''\
"""Text shortening and slugs."""

import re


def truncate(text: str, width: int, suffix: str = "...") -> str:
    """Shorten ``text`` to at most ``width`` characters, ending with ``suffix`` when it is cut."""
    if len(text) <= width:
        return text
    if width <= len(suffix):
        return suffix[:width]
    return text[: width - len(suffix)] + suffix


def slugify(text: str) -> str:
    """Lower-case words joined by dashes: ``"Hello, World!"`` -> ``"hello-world"``."""
    return "-".join(re.findall(r"[a-z0-9]+", text.lower()))
'''

STRUTILS_TEST_TEXT_V1 = """\
from strutils import slugify, truncate


def test_truncate_short_text_unchanged():
    assert truncate("abc", 5) == "abc"


def test_truncate_cuts_long_text():
    assert truncate("abcdefghij", 8).endswith("...")


def test_slugify_words():
    assert slugify("Hello, World!") == "hello-world"


def test_slugify_digits():
    assert slugify("Top 10 tips") == "top-10-tips"
"""

STRUTILS_TEST_TEXT_V2 = (
    STRUTILS_TEST_TEXT_V1
    + """

def test_truncate_fits_width():
    assert truncate("abcdefghij", 8) == "abcde..."
    assert len(truncate("a" * 50, 10)) == 10


def test_truncate_narrower_than_suffix():
    assert truncate("abcdefghij", 2) == ".."
"""
)

STRUTILS_TEST_CASE_V1 = """\
import pytest

from strutils import to_camel, to_snake


@pytest.mark.parametrize(("name", "expected"), [("fooBar", "foo_bar"), ("foo-bar", "foo_bar"), ("Foo", "foo")])
def test_to_snake_simple(name, expected):
    assert to_snake(name) == expected


def test_to_camel():
    assert to_camel("foo_bar_baz") == "fooBarBaz"


def test_round_trip():
    assert to_snake(to_camel("make_it_so")) == "make_it_so"
"""

STRUTILS_TEST_CASE_V2 = (
    STRUTILS_TEST_CASE_V1
    + """

@pytest.mark.parametrize(
    ("name", "expected"),
    [("HTTPServer", "http_server"), ("getHTTPResponse", "get_http_response"), ("parseXML", "parse_xml")],
)
def test_to_snake_keeps_acronyms(name, expected):
    assert to_snake(name) == expected
"""
)

STRUTILS_README = """\
# strutils

Small string helpers: `to_snake`, `to_camel`, `truncate`, `slugify`.
"""

STRUTILS_README_V2 = (
    STRUTILS_README
    + """
```python
>>> from strutils import truncate
>>> truncate("a long sentence", 8)
'a lon...'
```
"""
)

STRUTILS = LocalRepo(
    repo="debatecode-local/strutils",
    version="0.1",
    commits=[
        Commit(
            "Initial strutils: case conversion, truncate, slugify",
            "2024-01-02T10:00:00+00:00",
            {
                "README.md": STRUTILS_README,
                "pyproject.toml": STRUTILS_PYPROJECT,
                "strutils/__init__.py": STRUTILS_INIT,
                "strutils/case.py": STRUTILS_CASE_V1,
                "strutils/text.py": STRUTILS_TEXT_V1,
                "tests/test_case.py": STRUTILS_TEST_CASE_V1,
                "tests/test_text.py": STRUTILS_TEST_TEXT_V1,
            },
        ),
        Commit(
            "truncate: keep the result within the width, suffix included",
            "2024-01-09T10:00:00+00:00",
            {"strutils/text.py": STRUTILS_TEXT_V2, "tests/test_text.py": STRUTILS_TEST_TEXT_V2},
        ),
        Commit(
            "to_snake: keep acronyms together",
            "2024-01-16T10:00:00+00:00",
            {"strutils/case.py": STRUTILS_CASE_V2, "tests/test_case.py": STRUTILS_TEST_CASE_V2},
        ),
        Commit("README: a usage example", "2024-01-23T10:00:00+00:00", {"README.md": STRUTILS_README_V2}),
    ],
    instances=[
        LocalInstance(
            number=1,
            base=0,
            fix=1,
            created_at="2024-01-05T09:00:00Z",
            problem_statement="""\
truncate() returns strings longer than the requested width

`truncate(text, width)` is documented to shorten `text` to *at most* `width` characters,
but when the text is cut the suffix is added on top of the width:

```python
>>> from strutils import truncate
>>> truncate("abcdefghij", 8)
'abcdefgh...'   # 11 characters, expected 'abcde...'
```

The suffix should count towards the width. When the width is smaller than the suffix itself,
the result should be the suffix cut to the width (`truncate("abcdefghij", 2) == ".."`).
""",
        ),
        LocalInstance(
            number=2,
            base=1,
            fix=2,
            created_at="2024-01-12T09:00:00Z",
            problem_statement="""\
to_snake() splits acronyms into single letters

```python
>>> from strutils import to_snake
>>> to_snake("HTTPServer")
'h_t_t_p_server'
```

Expected `'http_server'`. Likewise `to_snake("getHTTPResponse")` should give `'get_http_response'`
and `to_snake("parseXML")` should give `'parse_xml'`. Existing behaviour (`"fooBar"` -> `"foo_bar"`,
dashes become underscores) must not change.
""",
        ),
    ],
)

# --- daterange: date ranges on python-dateutil (flat layout, setup.cfg, requirements.txt) ---

DATERANGE_SETUP_CFG = """\
[metadata]
name = daterange
version = 0.3.0

[options]
packages = daterange
install_requires =
    python-dateutil>=2.8

[tool:pytest]
testpaths = tests
"""

DATERANGE_REQUIREMENTS = "python-dateutil==2.9.0.post0\n"

DATERANGE_INIT = '''\
"""daterange: iterate over days and months."""

from daterange.core import days, iter_months, overlap

__all__ = ["days", "iter_months", "overlap"]
'''

DATERANGE_CORE_V1 = '''\
"""Day and month ranges."""

from collections.abc import Iterator
from datetime import date, timedelta

from dateutil.relativedelta import relativedelta


def days(start: date, end: date, step: int = 1) -> Iterator[date]:
    """Dates from ``start`` up to and including ``end``, ``step`` days apart."""
    if step <= 0:
        raise ValueError("step must be a positive number of days")
    current = start
    while current <= end:
        yield current
        current += timedelta(days=step)


def iter_months(start: date, count: int) -> list[date]:
    """``count`` dates one calendar month apart, from ``start``; the day is clipped to short months."""
    out = []
    current = start
    for _ in range(count):
        out.append(current)
        current = current + relativedelta(months=1)
    return out


def overlap(a_start: date, a_end: date, b_start: date, b_end: date) -> int:
    """How many days two inclusive ranges share (0 when they are disjoint)."""
    first = max(a_start, b_start)
    last = min(a_end, b_end)
    return max(0, (last - first).days + 1)
'''

DATERANGE_CORE_V2 = DATERANGE_CORE_V1.replace(
    """    out = []
    current = start
    for _ in range(count):
        out.append(current)
        current = current + relativedelta(months=1)
    return out
""",
    """    return [start + relativedelta(months=index) for index in range(count)]
""",
)

DATERANGE_CONFTEST = """\
from datetime import date

import pytest


@pytest.fixture
def leap_day() -> date:
    return date(2024, 2, 29)
"""

DATERANGE_TEST_CORE_V1 = """\
from datetime import date

import pytest

from daterange import days, iter_months, overlap


def test_days_inclusive():
    assert list(days(date(2024, 1, 1), date(2024, 1, 3))) == [date(2024, 1, 1), date(2024, 1, 2), date(2024, 1, 3)]


def test_days_step():
    assert len(list(days(date(2024, 1, 1), date(2024, 1, 31), step=7))) == 5


def test_days_rejects_bad_step():
    with pytest.raises(ValueError):
        list(days(date(2024, 1, 1), date(2024, 1, 2), step=0))


def test_iter_months_simple():
    assert iter_months(date(2024, 1, 15), 3) == [date(2024, 1, 15), date(2024, 2, 15), date(2024, 3, 15)]


def test_iter_months_from_leap_day(leap_day):
    assert iter_months(leap_day, 2) == [date(2024, 2, 29), date(2024, 3, 29)]


def test_overlap():
    assert overlap(date(2024, 1, 1), date(2024, 1, 10), date(2024, 1, 5), date(2024, 1, 20)) == 6
    assert overlap(date(2024, 1, 1), date(2024, 1, 2), date(2024, 2, 1), date(2024, 2, 2)) == 0
"""

DATERANGE_TEST_CORE_V2 = (
    DATERANGE_TEST_CORE_V1
    + """

def test_iter_months_keeps_day_after_short_month():
    assert iter_months(date(2024, 1, 31), 4) == [
        date(2024, 1, 31),
        date(2024, 2, 29),
        date(2024, 3, 31),
        date(2024, 4, 30),
    ]
"""
)

DATERANGE = LocalRepo(
    repo="debatecode-local/daterange",
    version="0.3",
    commits=[
        Commit(
            "Initial daterange: days, iter_months, overlap",
            "2024-02-01T08:30:00+00:00",
            {
                "README.md": "# daterange\n\nIterate over days and months (uses python-dateutil).\n",
                "requirements.txt": DATERANGE_REQUIREMENTS,
                "setup.cfg": DATERANGE_SETUP_CFG,
                "daterange/__init__.py": DATERANGE_INIT,
                "daterange/core.py": DATERANGE_CORE_V1,
                "tests/conftest.py": DATERANGE_CONFTEST,
                "tests/test_core.py": DATERANGE_TEST_CORE_V1,
            },
        ),
        Commit(
            "iter_months: step from the start date, so short months do not shift later dates",
            "2024-02-08T08:30:00+00:00",
            {"daterange/core.py": DATERANGE_CORE_V2, "tests/test_core.py": DATERANGE_TEST_CORE_V2},
        ),
    ],
    instances=[
        LocalInstance(
            number=1,
            base=0,
            fix=1,
            created_at="2024-02-05T12:00:00Z",
            problem_statement="""\
iter_months drifts after a short month

`iter_months(start, count)` should give dates one calendar month apart from `start`, clipping the
day only for months that are too short. After February every later date keeps the clipped day:

```python
>>> from datetime import date
>>> from daterange import iter_months
>>> iter_months(date(2024, 1, 31), 4)
[date(2024, 1, 31), date(2024, 2, 29), date(2024, 3, 29), date(2024, 4, 29)]
```

Expected `[2024-01-31, 2024-02-29, 2024-03-31, 2024-04-30]`.
""",
        ),
    ],
)

# --- confparse: an INI-like config parser (src layout, pytest.ini) ---------------------------

CONFPARSE_PYTEST_INI = """\
[pytest]
testpaths = tests
pythonpath = src
"""

CONFPARSE_INIT = '''\
"""confparse: parse small INI-like configuration files."""

from confparse.parser import ParseError, get_bool, parse

__all__ = ["ParseError", "get_bool", "parse"]
'''

CONFPARSE_PARSER_V1 = '''\
"""``[section]`` headers, ``key = value`` lines, ``#`` and ``;`` comment lines."""

from __future__ import annotations


class ParseError(ValueError):
    """A line that is neither a header, a comment nor ``key = value``."""

    def __init__(self, line_no: int, message: str) -> None:
        super().__init__(f"line {line_no}: {message}")
        self.line_no = line_no


def parse(text: str) -> dict[str, dict[str, str]]:
    """Sections by name (keys before any header go to ``"DEFAULT"``), each a dict of stripped values."""
    sections: dict[str, dict[str, str]] = {"DEFAULT": {}}
    current = sections["DEFAULT"]
    for line_no, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1].strip(), {})
            continue
        if "=" not in line:
            raise ParseError(line_no, f"expected 'key = value', got {line!r}")
        key, value = line.split("=")
        current[key.strip()] = value.strip()
    return sections


_TRUE = {"1", "yes", "true", "on"}
_FALSE = {"0", "no", "false", "off"}


def get_bool(section: dict[str, str], key: str, default: bool = False) -> bool:
    """A yes/no value, case-insensitive; ``default`` when the key is missing."""
    if key not in section:
        return default
    value = section[key].lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(f"{key} = {section[key]!r} is not a boolean")
'''

CONFPARSE_PARSER_V2 = CONFPARSE_PARSER_V1.replace(
    '        key, value = line.split("=")\n', '        key, _, value = line.partition("=")\n'
)

CONFPARSE_TEST_PARSER_V1 = '''\
import pytest

from confparse import ParseError, get_bool, parse

SAMPLE = """
# global settings
name = demo

[server]
host = localhost
port = 8080
debug = yes
"""


def test_sections_and_default():
    parsed = parse(SAMPLE)
    assert parsed["DEFAULT"] == {"name": "demo"}
    assert parsed["server"]["port"] == "8080"


def test_comments_and_blank_lines_are_skipped():
    assert parse("; comment\\n\\n# another\\nx = 1\\n") == {"DEFAULT": {"x": "1"}}


def test_bad_line_reports_its_number():
    with pytest.raises(ParseError) as info:
        parse("x = 1\\nnot a pair\\n")
    assert info.value.line_no == 2


def test_get_bool():
    section = parse(SAMPLE)["server"]
    assert get_bool(section, "debug") is True
    assert get_bool(section, "missing", default=True) is True
'''

CONFPARSE_TEST_PARSER_V2 = (
    CONFPARSE_TEST_PARSER_V1
    + """

def test_value_may_contain_equals():
    parsed = parse("[db]\\nurl = postgres://h/db?sslmode=require\\nexpr = a=b=c\\n")
    assert parsed["db"] == {"url": "postgres://h/db?sslmode=require", "expr": "a=b=c"}
"""
)

CONFPARSE = LocalRepo(
    repo="debatecode-local/confparse",
    version="1.0",
    commits=[
        Commit(
            "Initial confparse: sections, comments, get_bool",
            "2024-03-04T14:00:00+00:00",
            {
                "README.md": "# confparse\n\nParse small INI-like configuration files.\n",
                "pytest.ini": CONFPARSE_PYTEST_INI,
                "src/confparse/__init__.py": CONFPARSE_INIT,
                "src/confparse/parser.py": CONFPARSE_PARSER_V1,
                "tests/test_parser.py": CONFPARSE_TEST_PARSER_V1,
            },
        ),
        Commit(
            "parse: split each line at the first '=' only",
            "2024-03-11T14:00:00+00:00",
            {"src/confparse/parser.py": CONFPARSE_PARSER_V2, "tests/test_parser.py": CONFPARSE_TEST_PARSER_V2},
        ),
    ],
    instances=[
        LocalInstance(
            number=1,
            base=0,
            fix=1,
            created_at="2024-03-07T16:00:00Z",
            problem_statement="""\
parse() crashes on values that contain '='

A value such as a URL with a query string cannot be parsed:

```python
>>> from confparse import parse
>>> parse("url = postgres://h/db?sslmode=require")
ValueError: too many values to unpack (expected 2)
```

Only the first `=` on a line should separate the key from the value; the rest belongs to the value
(`parse("expr = a=b=c")["DEFAULT"] == {"expr": "a=b=c"}`).
""",
        ),
    ],
)

REPOS = [STRUTILS, DATERANGE, CONFPARSE]
