# The two commands a new user runs: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
# Debian packages the tests need; installed by scripts/system-deps.sh when missing.
SYSTEM_PACKAGES := chromium postgresql

.PHONY: demo test check bench soak faults clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python scripts/demo.py

# The gates: a linter and a strict type checker, clean on src/ (and the linter on tests/ and bench/).
check: $(STAMP)
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/mypy

test: $(STAMP) check
	bash scripts/system-deps.sh $(SYSTEM_PACKAGES)
	$(BIN)/pytest $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python -m bench

# Not in CI: 10,000 hooks, 100 kill -9 of the worker, random damage; prints the zeros (lost events,
# duplicates, orphans, secrets found). `make soak SOAK_ARGS=--quick` for a one-minute version.
soak: $(STAMP)
	$(BIN)/python -m bench.soak $(SOAK_ARGS)

# The fault suite (also part of `make test`): disk full on a small tmpfs (needs root), a 0-byte database
# with a hook first, the clock ten years ahead and back, a read-only data dir, a locked database, hostile
# import files, deep JSON over HTTP and malformed MCP requests. Prints what each fault cost.
faults: $(STAMP)
	bash scripts/system-deps.sh $(SYSTEM_PACKAGES)
	$(BIN)/pytest -v -rA tests/test_faults_*.py $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache build dist
