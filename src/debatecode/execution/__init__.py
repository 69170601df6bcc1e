"""Test execution: test files from tasks, sandbox runs, per-test reports."""
