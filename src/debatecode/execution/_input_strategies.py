"""Hypothesis strategies from argument shapes, drawn deterministically.

Values stay small so that candidates run fast on them: lists of at most 8 items,
strings of at most 12 characters over the examples' own characters, numbers near
the examples' range (``[-10, 100]`` without examples).

Hypothesis' default provider mixes in constants it collects from the source of every
*local* module loaded in the process, so its draws would change with whatever else
happens to be imported; the provider here leaves those out, and the draws depend only
on the strategy, the seed and the installed hypothesis version.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException
from hypothesis.internal.conjecture.providers import AVAILABLE_PROVIDERS, HypothesisProvider
from hypothesis.internal.constants_ast import Constants

from debatecode.execution._input_shapes import Shape

__all__ = ["MAX_ITEMS", "MAX_TEXT", "draw_arguments", "strategy"]

logger = logging.getLogger(__name__)

MAX_ITEMS = 8
"""Most items in a generated list, tuple or set."""
MAX_TEXT = 12
"""Most characters in a generated string."""
_MAX_KEYS = 5
_DEFAULT_INTS = (-10, 100)
_DEFAULT_ALPHABET = "abcdeiouxyzABXYZ 0129.,!?-_()[]"
_BACKEND = "debatecode-inputs"


class _ProjectFreeProvider(HypothesisProvider):
    """Hypothesis' own provider without the constants collected from the caller's local modules."""

    @property
    def _local_constants(self) -> Constants:
        return Constants()


def draw_arguments(shapes: Sequence[Shape], count: int, seed: int) -> list[tuple[Any, ...]]:
    """Up to ``count`` argument tuples, one value per shape, the same for the same shapes and seed.

    A strategy hypothesis refuses (it should not happen for shapes ``shape_of`` builds) gives the
    tuples drawn so far, with a warning: the other sources of inputs still stand.
    """
    AVAILABLE_PROVIDERS.setdefault(_BACKEND, _ProjectFreeProvider)
    drawn: list[tuple[Any, ...]] = []

    @hypothesis_seed(seed)
    @settings(
        max_examples=max(count, 1),
        derandomize=True,
        database=None,
        phases=[Phase.generate],
        deadline=None,
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        print_blob=False,
        backend=_BACKEND,
    )
    @given(st.tuples(*(strategy(shape) for shape in shapes)))
    def collect(arguments: tuple[Any, ...]) -> None:
        drawn.append(arguments)

    try:
        collect()
    except HypothesisException as exc:
        logger.warning("generated inputs: hypothesis stopped after %d draws: %s", len(drawn), exc)
    return drawn


def strategy(shape: Shape) -> st.SearchStrategy[Any]:
    """Values of ``shape``; every value's ``repr`` reads back with ``ast.literal_eval``."""
    kind = shape.kind
    if kind == "int":
        low, high = int_range(shape.samples)
        return st.integers(low, high)
    if kind == "float":
        low_f, high_f = float_range(shape.samples)
        return st.floats(low_f, high_f, allow_nan=False, allow_infinity=False).map(lambda x: round(x, 3))
    if kind == "str":
        # A list of sampled characters, not st.text: text() builds and caches a unicode table on disk.
        return st.lists(st.sampled_from(alphabet(shape.samples)), max_size=MAX_TEXT).map("".join)
    if kind == "bool":
        return st.booleans()
    if kind == "none":
        return st.none()
    if kind == "bytes":
        return st.binary(max_size=MAX_TEXT)
    if kind == "list":
        return st.lists(strategy(shape.parts[0]), max_size=MAX_ITEMS)
    if kind == "set":
        return st.sets(_hashable(shape.parts[0]), max_size=MAX_ITEMS)
    if kind == "tuple":
        if shape.variadic:
            return st.lists(strategy(shape.parts[0]), max_size=MAX_ITEMS).map(tuple)
        return st.tuples(*(strategy(part) for part in shape.parts))
    if kind == "dict":
        return st.dictionaries(_hashable(shape.parts[0]), strategy(shape.parts[1]), max_size=_MAX_KEYS)
    if kind == "union":
        return st.one_of(*(strategy(part) for part in shape.parts))
    return st.one_of(st.integers(*_DEFAULT_INTS), strategy(Shape("str")), st.lists(st.integers(*_DEFAULT_INTS)))


def int_range(samples: Sequence[Any]) -> tuple[int, int]:
    """Around the examples' ints (never below 0 when none is negative); ``[-10, 100]`` without any."""
    values = [int(v) for v in samples if isinstance(v, int | float) and not isinstance(v, bool)]
    if not values:
        return _DEFAULT_INTS
    low, high = min(values), max(values)
    pad = max(10, (high - low) // 2)
    return (max(0, low - pad) if low >= 0 else low - pad), high + pad


def float_range(samples: Sequence[Any]) -> tuple[float, float]:
    values = [float(v) for v in samples if isinstance(v, int | float) and not isinstance(v, bool)]
    if not values:
        return float(_DEFAULT_INTS[0]), float(_DEFAULT_INTS[1])
    low, high = min(values), max(values)
    pad = max(5.0, (high - low) / 2)
    return (max(0.0, low - pad) if low >= 0 else low - pad), high + pad


def alphabet(samples: Sequence[Any]) -> str:
    """The characters of the example strings, in a fixed order; a small mixed alphabet without any."""
    chars = sorted({c for s in samples if isinstance(s, str) for c in s})
    return "".join(chars) or _DEFAULT_ALPHABET


def _hashable(shape: Shape) -> st.SearchStrategy[Any]:
    if shape.kind in ("list", "set", "dict", "any") or any(p.kind in ("list", "set", "dict") for p in shape.parts):
        return strategy(Shape("str"))
    return strategy(shape)
