"""Scripts that run *inside* the sandbox. Stdlib only; the host reads their source, never imports them to run.

- ``checker.py``: the two-process test checker. It owns the tests and the
  verdict; the code under test runs in a separate process and serves calls
  over a pipe (see ``debatecode.sandbox.verdict`` for the host side).
"""
