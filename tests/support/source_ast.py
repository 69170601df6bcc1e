"""``parse_source``: ``ast.parse`` for tests that read the package's own source files.

CPython 3.11 can raise ``SystemError: AST constructor recursion depth mismatch``
when the garbage collector runs a finalizer in the middle of building an AST
(python/cpython#106905). A finalizer that raises, such as that of an asyncio
subprocess transport whose loop an earlier test closed, leaves the recursion
counter off by the depth it was at. These tests parse hundreds of files in a
worker that earlier tests have used, so they keep the collector off while each
file is parsed; the garbage is collected after, outside any parse.
"""

from __future__ import annotations

import ast
import gc

__all__ = ["parse_source"]


def parse_source(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)``, with no garbage collection (so no finalizer) while it runs."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return ast.parse(source, filename=filename)
    finally:
        if was_enabled:
            gc.enable()
