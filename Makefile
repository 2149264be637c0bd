# mafiabot: the Ada body and its Python harness.
#
#   make run    installs what is missing, builds, and runs a demonstration session
#   make test   installs what is missing, builds, runs the lint and type gates (make lint), then every test suite
#
# Both work on a fresh Debian machine: Debian's Ada packages come from apt-get,
# the harness lives in a virtualenv at .venv.

SHELL        := /bin/bash
VENV         := .venv
PYTHON       ?= python3
# -s: a change of the project's switches (mafiabot_core.gpr) recompiles what it changes
GPRBUILD     := gprbuild -j0 -p -q -s
APT_PACKAGES := gnat gprbuild libgnatcoll21-dev libaunit22-dev libsqlite3-dev postgresql libpq5 libpq-dev
SUDO         := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
BODY         := mafiabot_core/bin/mafiabot
ADA_TESTS    := tests/ada/bin/run_ada_tests
DEMO_HOME    := .demo/hermes-home
# The real Hermes Agent, for the tests that mount the body in it. Its wheel installs
# top-level modules named tools, agent, utils...: it gets a virtualenv of its own.
HERMES_VENV  := .hermes-venv
HERMES_PIN   := hermes-agent[mcp]==0.19.0

.PHONY: all deps apt venv hermes build build-unchecked build-dynamic run test lint test-ada test-python test-exhaustive test-scale bench bench-scale profile fuzz clean

all: build

deps: apt venv hermes

# Installs Debian's GNAT toolchain only when something is missing.
apt:
	@if ! command -v gprbuild >/dev/null || [ ! -f /usr/share/gpr/gnatcoll.gpr ] \
	    || [ ! -f /usr/share/gpr/aunit.gpr ] || [ ! -f /usr/include/sqlite3.h ] \
	    || [ ! -f /usr/include/postgresql/libpq-fe.h ] \
	    || ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; then \
	  echo "make: installing Debian's Ada toolchain and PostgreSQL ($(APT_PACKAGES)) with apt-get: about 1-2 minutes"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq \
	    --no-install-recommends $(APT_PACKAGES) >/dev/null; \
	fi

venv: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	@echo "make: installing the harness and its test tools into $(VENV) (pip, editable): about 1 minute"
	@test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	@$(VENV)/bin/pip install -q --upgrade pip
	@$(VENV)/bin/pip install -q -e '.[test]'
	@touch $@

hermes: $(HERMES_VENV)/.installed

$(HERMES_VENV)/.installed: Makefile
	@echo "make: installing the Hermes Agent ($(HERMES_PIN)) into $(HERMES_VENV): about 2 minutes"
	@test -x $(HERMES_VENV)/bin/python || $(PYTHON) -m venv $(HERMES_VENV)
	@$(HERMES_VENV)/bin/pip install -q '$(HERMES_PIN)'
	@touch $@

build: apt
	@test -x $(BODY) || echo "make: building the Ada body $(BODY) with gprbuild: about 1 minute the first time"
	$(GPRBUILD) -P mafiabot_core/mafiabot_core.gpr

# The body without run-time contract checks (-gnata off), for the test that
# compares its bytes with the checked body's.
build-unchecked: apt
	$(GPRBUILD) -P mafiabot_core/mafiabot_core.gpr -XMAFIABOT_CONTRACTS=off

# The body linked against Debian's shared GNAT libraries (the default build is
# static: it starts ten times faster; see mafiabot_core.gpr), and the only one
# with the PostgreSQL store (libpq, from libpq-dev: docs/scale-out.md).
build-dynamic: apt
	$(GPRBUILD) -P mafiabot_core/mafiabot_core.gpr -XMAFIABOT_LINK=dynamic

run: deps build
	@mkdir -p $(DEMO_HOME)
	$(VENV)/bin/mafiabot-harness demo --hermes-home $(DEMO_HOME)

test-ada: build
	$(GPRBUILD) -P tests/ada/ada_tests.gpr
	@# The units under test log to stderr (evictions...); keep it beside the objects.
	$(ADA_TESTS) 2> tests/ada/obj/stderr.log

# Two workers, a file's tests on one (--dist loadfile: a module's shared body and fixtures stay together).
# The suite is bound by CPU (its processes' CPU time is about twice its wall time on the two cores), so
# more workers than cores buy little. Tiers, what runs where and how the time was measured: docs/testing.md.
PYTEST_WORKERS ?= 2
PYTEST_PARALLEL = -n $(PYTEST_WORKERS) --dist loadfile

# The suite starts hundreds of Python processes (the harness's commands, serve, the stub model) and each
# worker imports every test module: with bytecode writes off (PYTHONDONTWRITEBYTECODE, which some CI and
# agent shells set) each process compiles the harness again and each worker rewrites every test's asserts.
# The caches go to __pycache__/, which git ignores.
test-python test-exhaustive test-scale: export PYTHONDONTWRITEBYTECODE :=
test-python: deps build build-unchecked build-dynamic
	$(VENV)/bin/pytest tests/python -q $(PYTEST_PARALLEL)

# Everything, the full hostile matrix of the CLI's edge (marker `exhaustive`) included.
test-exhaustive: lint test-ada deps build build-unchecked build-dynamic
	$(VENV)/bin/pytest tests/python -q $(PYTEST_PARALLEL) -m ""

# The scale-out tier (marker `scale`, left out of `make test`): several drainers as separate processes, each with
# its own Hermes home, on one PostgreSQL cluster with fsync on, SIGKILLed mid-run; the server itself crashed
# under drainers and under bodies; then an exact audit.
test-scale: deps
	$(VENV)/bin/pytest tests/python -q -m scale -p no:cacheprovider

# The gates, configured in pyproject.toml: mypy --strict over harness/, ruff over every Python tree
# (harness/ under the full rule set, the tests and scripts under a named looser one). Both run, so one
# failure does not hide the other's findings; either fails the target.
lint: venv
	@status=0; \
	$(VENV)/bin/mypy || status=1; \
	$(VENV)/bin/ruff check harness tests/python tests/tools stubs bench || status=1; \
	exit $$status

test: lint test-ada test-python

# Figures against the floor and the peers, one run: bench/results/latest.{md,json,png}.
bench: venv build
	$(VENV)/bin/python -m bench

# The PostgreSQL queue's figures: enqueue -> claimed latency and items/s with 1, 4 and 16 drainers on the fake
# Hermes: bench/results/scale.md.
bench-scale: deps
	$(VENV)/bin/python -m bench.scale

# Where the body's time goes (callgrind, perf): bench/results/profile.md.
profile: venv build
	$(VENV)/bin/python -m bench.profile

# The fuzz properties with a random seed and 20,000 cases each (MAFIABOT_FUZZ_EXAMPLES=N to change).
fuzz: venv build
	MAFIABOT_FUZZ=long $(VENV)/bin/pytest tests/python/test_fuzz_protocol.py tests/python/test_fuzz_sessions.py -q

clean:
	rm -rf mafiabot_core/obj mafiabot_core/bin tests/ada/obj tests/ada/bin .demo
