"""Scripts that run *inside* the sandbox. Stdlib only; the host reads their source, never imports them to run.

- ``runner.py`` (+ ``pool_server.py`` for warm containers): the job runner.
- ``checker.py``: the two-process test checker. It owns the tests and the
  verdict; the code under test runs in a separate process and serves calls
  over a pipe (see ``debatecode.sandbox.verdict`` for the host side). Its
  parts, ``codec.py``, ``candidate.py``, ``remote.py``, ``session.py`` and
  ``modes.py``, are joined before it into one file when sent
  (``debatecode.sandbox.wire.checker_source``).
"""
