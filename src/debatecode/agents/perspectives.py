"""Perspectives: the viewpoints design debaters argue from, and how the moderator picks them.

A perspective is a viewpoint ("optimise for maintainability"), never a persona.
The catalog (``_perspective_catalog``) ships as ``perspectives.yaml`` next to
this module; users add or override entries with ``[[design.custom_perspectives]]``
(``CustomPerspective``), and ``load_catalog`` merges the two.

``select_perspectives`` (``_perspective_selection``) is the moderator's
heuristic. It is deterministic and calls no model:

1. **Matching.** The question (and any explicit constraints) is lower-cased
   and reduced to words. A keyword of four or more characters is a stem and
   matches any word it starts (``cach`` matches "caching"); a shorter one
   matches whole words only (``ui`` never matches "build"); a keyword of
   several words matches them in a row. Each domain perspective scores one
   point per keyword of its own that matches.
2. **Implicit constraints.** Phrases in ``CONSTRAINTS`` ("ship fast", "small
   team", "deadline", "budget", "compliance", "legacy"...) are detected the same
   way and add their weights to the perspectives they favour: a small team
   that must ship fast weighs Simplicity and Operational Simplicity up.
   Explicit ``constraints`` may also name a constraint directly.
3. **Domain.** The question's domain (architecture, data, security,
   performance, ux, operations, process) is the one whose stems in ``DOMAINS``
   match most often, ties going to the earlier one; ``general`` when none does.
4. **Complexity.** One point each for 20+ words, 45+ words, three or more
   options ("A, B or C"), four or more clauses (sentences and clauses joined
   by "and", "but", "while", "because", "given"...) and two or more
   constraints: 0 points is ``low``, 1-2 ``medium``, 3+ ``high``.
5. **How many.** A binary choice ("X or Y", or a yes/no question such as
   "should we ...?") gets 2 domain perspectives unless it is ``high``
   complexity; anything else gets 3, or 4 when ``high``. ``count`` overrides this.
6. **Picking.** Domain perspectives (not the specialists, not council members,
   not the always-present ones) are ranked by score, ties in catalog order;
   the best ``count`` with a positive score are picked, and free slots are
   filled from ``FALLBACK`` (then catalog order).
7. **Balance.** Two picks whose trade-offs pull against each other form an
   opposing pair (``OPPOSING_PAIRS``: performance vs simplicity, security vs
   user experience...). When two or more picks contain no such pair, the
   best-scoring perspective that opposes one of them (ties: the one opposing
   most picks, then catalog order) replaces the weakest pick, but never the
   only one it opposes, so the debaters never all pull the same way.
8. **Specialists.** Test, Security, Observability and Operations (the
   catalog's cross-cutting entries, ``specialists``) take part in every
   debate, whatever the question (seed 000's rule of thumb).
9. **Order.** Domain picks come first in rank order, then cross-cutting ones
   in the fixed order observability → operations → test → security, then
   every ``always`` perspective (the Contrarian and the Moonshot) that is not
   switched off (``design.contrarian`` / ``design.moonshot``).

``requested`` perspectives (keys or names, any case, custom ones included), or
the ``council`` members of a council debate, replace steps 5-7; the specialists
and the always-present perspectives still join. An unknown name is a
``ConfigError`` listing the known keys with a did-you-mean.
"""

from __future__ import annotations

from debatecode.agents._perspective_catalog import (
    ALWAYS_PRESENT,
    CATALOG_FILE,
    CONCERNS,
    CROSS_CUTTING_CONCERNS,
    CustomPerspective,
    Perspective,
    load_catalog,
    parse_catalog,
)
from debatecode.agents._perspective_selection import (
    FALLBACK,
    OPPOSING_PAIRS,
    Selection,
    complexity_rounds,
    opposes,
    select_perspectives,
    specialists,
)
from debatecode.agents._question import CONSTRAINTS, DOMAINS, Complexity, Domain, ImplicitConstraint

__all__ = [
    "ALWAYS_PRESENT",
    "CATALOG_FILE",
    "CONCERNS",
    "CONSTRAINTS",
    "CROSS_CUTTING_CONCERNS",
    "DOMAINS",
    "FALLBACK",
    "OPPOSING_PAIRS",
    "Complexity",
    "CustomPerspective",
    "Domain",
    "ImplicitConstraint",
    "Perspective",
    "Selection",
    "complexity_rounds",
    "load_catalog",
    "opposes",
    "parse_catalog",
    "select_perspectives",
    "specialists",
]
