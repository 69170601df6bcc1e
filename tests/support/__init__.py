"""Test-only helpers shared across the test suites. Never imported by the package."""
