"""The ``debatecode`` command line (typer + rich). Heavy modules load inside commands."""
