# The two commands of the README: `make demo` and `make test`. Both install first, from the lock file.
UV_VERSION := 0.13.8
TOOLS := .tools
UV := $(TOOLS)/bin/uv
export UV_PYTHON_DOWNLOADS := never
# uv's cache stays in the checkout: nothing the build or the tests do writes into your home directory.
export UV_CACHE_DIR := $(CURDIR)/.tools/uv-cache

.PHONY: install inspector conformance demo test lint benchmark clean

$(UV):
	python3 -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

# Compiled once here (~5 s, then nothing while the lock is unchanged): where the environment says not to write
# bytecode (PYTHONDONTWRITEBYTECODE, as on the CI machines), every command would otherwise compile every
# module it imports from source, each time (~0.4 s of a `theurian` start, ~2 s of the daemon's). uv compiles the
# installed libraries only; the checkout's own modules (installed editable) are compiled by compileall, which
# writes whatever that setting says and redoes only a file newer than its bytecode (~1.5 s once, ~0.5 s after):
# without it each command compiled Theurian's own modules again (0.2 s of a `theurian review status`).
CHECKOUT_PACKAGES := theurian ingest evidence projection knowledge serve integrations tests scripts
install: $(UV)
	$(UV) sync --locked --quiet --compile-bytecode
	$(UV) run --locked --no-sync python -m compileall -q -j 0 $(CHECKOUT_PACKAGES)

# The MCP Inspector CLI (a third-party MCP client) for the end-to-end tests, pinned by scripts/inspector's lock.
INSPECTOR := $(TOOLS)/inspector/node_modules/.bin/mcp-inspector
$(INSPECTOR): scripts/inspector/package.json scripts/inspector/package-lock.json | $(UV)
	mkdir -p $(TOOLS)/inspector
	cp scripts/inspector/package.json scripts/inspector/package-lock.json $(TOOLS)/inspector/
	cd $(TOOLS)/inspector && npm install --no-audit --no-fund --no-save --silent  # the copied lock pins every version
	touch $(INSPECTOR)
inspector: $(INSPECTOR)

# The official MCP conformance scenarios and the Node (>= 22) they need, both from the npm registry, pinned by
# scripts/conformance's lock; the tests run them with that Node, whatever node is on the PATH.
CONFORMANCE := $(TOOLS)/conformance/node_modules/.bin/conformance
$(CONFORMANCE): scripts/conformance/package.json scripts/conformance/package-lock.json | $(UV)
	mkdir -p $(TOOLS)/conformance
	cp scripts/conformance/package.json scripts/conformance/package-lock.json $(TOOLS)/conformance/
	cd $(TOOLS)/conformance && npm install --no-audit --no-fund --no-save --silent  # the copied lock pins every version
	touch $(CONFORMANCE)
conformance: $(CONFORMANCE)

## demo: install, then serve a bundled sample project on 127.0.0.1:7419 (Ctrl-C stops)
demo: install
	bash scripts/demo.sh

## test: install, lint, type-check, and run the default test suite
test: install inspector conformance lint
# A module's tests share one worker (--dist loadfile), so its daemon starts once (the two modules reading the one
# demo build share one: tests/support/xdist_units). Modules are handed out in the
# order they are collected (--no-loadscope-reorder): pytest-xdist would otherwise hand out the modules of most
# tests first, which leaves the end-to-end modules of one long test (a README walk, a concurrent build) for last,
# one worker running them while the other has nothing left; collected in order, tests/e2e comes first and the
# many short in-process modules fill both workers at the end.
	$(UV) run --locked --no-sync pytest -n 2 --dist loadfile --no-loadscope-reorder

lint: install
	$(UV) run --locked --no-sync ruff check .
	$(UV) run --locked --no-sync mypy
	$(UV) run --locked --no-sync lint-imports  # the import contracts in pyproject.toml (docs/code-map.md)

## benchmark: the printed-figure benchmarks (not part of `make test`)
benchmark: install
	$(UV) run --locked --no-sync pytest -m benchmark -s tests/benchmarks

clean:
	rm -rf $(TOOLS) .venv .demo dist
