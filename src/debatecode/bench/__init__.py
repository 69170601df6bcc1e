"""Research tooling: parameter sweeps now; the HumanEval and SWE-bench bridges and strategy suites next."""
