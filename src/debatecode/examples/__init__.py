"""Examples written in task text, found in every common form, and checked by value.

``find_examples`` reads a docstring or a task description and returns each example
of the entry point as ``(call, expected)``. ``check_example`` compares a call's result
with the expected text by value; its module's text (``comparison_source``) is written
into every test job, since nothing of debatecode is importable inside the sandbox.
"""

from __future__ import annotations

from importlib import resources

from debatecode.examples._compare import check_example, example_passes, expected_value, values_match
from debatecode.examples._forms import FORMS, FoundExample, example_key, find_examples, parameter_names

__all__ = [
    "FORMS",
    "FoundExample",
    "check_example",
    "comparison_source",
    "example_key",
    "example_passes",
    "expected_value",
    "find_examples",
    "parameter_names",
    "values_match",
]


def comparison_source() -> str:
    """The text of the stdlib-only module that defines ``check_example``, to write into a test job."""
    return resources.files("debatecode.examples").joinpath("_compare.py").read_text(encoding="utf-8")
