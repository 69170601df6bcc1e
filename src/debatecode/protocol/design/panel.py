"""The panel of a design debate: which perspectives debate a question, under the ``[design]`` settings.

One function, used twice: by the debate's analysis step, and before a debate's
session is stored, so that a bad perspective name or council member is refused
before anything is written.
"""

from __future__ import annotations

from debatecode.agents.perspectives import Selection, load_catalog, select_perspectives
from debatecode.protocol.design.question import DesignQuestion
from debatecode.protocol.design.settings import DesignSettings

__all__ = ["select_panel"]


def select_panel(design: DesignSettings, question: DesignQuestion, *, clarification: str = "") -> Selection:
    """The perspectives that debate ``question``: named ones, the council, or the moderator's picks.

    Named perspectives come from ``design.perspectives`` (``--perspectives a,b``), else from the
    question file; council mode debates with ``design.council_members``; otherwise the moderator
    picks ``design.perspective_count`` (or 2-4) by the question, its context and ``clarification``
    (the answer to a clarifying question, or the assumption made instead). The four cross-cutting
    specialists always join, and the Contrarian and the Moonshot unless switched off.

    Raises:
        ConfigError: an unknown perspective or council member, a malformed custom perspective,
            or named perspectives in council mode.
    """
    text = question.text
    if question.context:
        text = f"{text}\n{question.context_text()}"
    if clarification:
        text = f"{text}\n{clarification}"
    return select_perspectives(
        text,
        load_catalog(design.custom_perspectives),
        count=design.perspective_count,
        requested=design.perspectives or list(question.perspectives) or None,
        council=design.council_members if design.council else None,
        switched_off=design.switched_off,
    )
