"""Planning styles: who plans the work before agents execute it.

- **CPDE** (centralised planning, decentralised execution): one planner (the
  tree's root, a Designer) writes the plan, the others execute their parts
  independently, and results are gathered back up.
- **DPDE** (decentralised planning, decentralised execution): every agent
  plans its own solution; agreement emerges from the debate.

``select_planning_style`` decides, in this order:

1. an override of ``cpde`` or ``dpde`` wins (``auto`` or ``None`` means decide);
2. fewer than 3 agents → DPDE: a central plan needs a planner and at least two
   executors to pay for itself;
3. a declared difficulty decides: ``complex``/``hard`` → CPDE,
   ``trivial``/``simple``/``easy`` → DPDE;
4. otherwise the task text is scored, fenced code blocks left out:
   long (more than 250 words) +1; multi-part (3 or more list items, or 3 or
   more sequencing words such as *then*, *also*, *additionally*, *finally*)
   +1; complexity vocabulary (2 or more of *concurrent*, *thread*, *async*,
   *database*, *cache*, *parser*, *protocol*, *class*, *interface*, *module*,
   *api*, *state machine*, *graph*, *optimi[sz]e*, *distributed*, *streaming*)
   +1; 6 or more agents +1. A score of 2 or more → CPDE, else DPDE.
"""

from __future__ import annotations

import enum
import re

__all__ = ["PlanningStyle", "select_planning_style"]

LONG_TASK_WORDS = 250
_HARD = frozenset({"complex", "hard", "difficult"})
_EASY = frozenset({"trivial", "simple", "easy"})
_CODE_BLOCK = re.compile(r"^[ \t]*(```|~~~).*?^[ \t]*\1[ \t]*$", re.MULTILINE | re.DOTALL)
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+\S", re.MULTILINE)
_SEQUENCING = re.compile(r"\b(?:then|also|additionally|furthermore|moreover|finally|afterwards|second|third)\b", re.I)
_COMPLEXITY = re.compile(
    r"\b(?:concurren\w*|thread\w*|async\w*|database|cache|caching|parser|parsing|protocol|class(?:es)?|interfaces?"
    r"|modules?|api|state machine|graphs?|optimi[sz]\w*|distributed|streaming)\b",
    re.I,
)


class PlanningStyle(enum.StrEnum):
    """How planning is split between agents."""

    CPDE = "cpde"
    """Centralised planning, decentralised execution."""
    DPDE = "dpde"
    """Decentralised planning, decentralised execution."""


def _override(override: str | None) -> PlanningStyle | None:
    if override is None or override.strip().lower() == "auto":
        return None
    try:
        return PlanningStyle(override.strip().lower())
    except ValueError:
        raise ValueError(f"unknown planning style {override!r}; known styles: auto, cpde, dpde") from None


def select_planning_style(
    task_text: str, n_agents: int, difficulty: str | None = None, override: str | None = None
) -> tuple[PlanningStyle, str]:
    """The planning style for a task, and a one-line reason (the module docstring gives the rules).

    Raises:
        ValueError: ``override`` is not ``auto``, ``cpde`` or ``dpde``, or ``n_agents`` is below 1.
    """
    if n_agents < 1:
        raise ValueError(f"planning needs at least one agent, got {n_agents}")
    forced = _override(override)
    if forced is not None:
        return forced, f"override: {forced.name} chosen in configuration"
    if n_agents < 3:
        return PlanningStyle.DPDE, f"auto: DPDE because {n_agents} agent(s) are too few for a central planner"
    level = (difficulty or "").strip().lower()
    if level in _HARD:
        return PlanningStyle.CPDE, f"auto: CPDE because the task is marked {level}"
    if level in _EASY:
        return PlanningStyle.DPDE, f"auto: DPDE because the task is marked {level}"
    prose = _CODE_BLOCK.sub(" ", task_text)
    words = len(prose.split())
    items = len(_LIST_ITEM.findall(prose))
    steps = len(_SEQUENCING.findall(prose))
    terms = sorted({match.lower() for match in _COMPLEXITY.findall(prose)})
    signals = []
    if words > LONG_TASK_WORDS:
        signals.append(f"long ({words} words)")
    if items >= 3 or steps >= 3:
        signals.append(f"multi-part ({items} list items, {steps} sequencing words)")
    if len(terms) >= 2:
        signals.append(f"complex vocabulary ({', '.join(terms[:4])})")
    if n_agents >= 6:
        signals.append(f"many agents ({n_agents})")
    if len(signals) >= 2:
        return PlanningStyle.CPDE, "auto: CPDE because the task is " + " and ".join(signals)
    found = "; only " + signals[0] if signals else ""
    return PlanningStyle.DPDE, f"auto: DPDE because the task is short and single-part ({words} words{found})"
