"""Design debates: a question argued from perspectives, ending in an architecture decision record.

``debatecode debate "QUESTION"`` runs one (``cli/debate.py``). The pieces:
``question.py`` (the question and its context files), ``steps.py`` (analysis,
independent positions, arguments, rebuttals, moderation), ``gate.py`` (the
gate reviewer), ``synthesis.py`` (escalation, synthesis and its review),
``adr.py`` (the decision record), ``sections.py`` (reading model-written synthesis),
``files.py`` (the session folder),
``engine.py`` (``DesignEngine``, driven by the shared ``SessionDriver``).
"""
