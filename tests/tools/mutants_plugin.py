"""The pytest plugin of tests/tools/mutants.py: records what each test runs, and runs only a chosen few.

Loaded by the tool (`-p mutants_plugin`, with this folder on PYTHONPATH); each part is switched on by a
variable the tool sets, so the plugin does nothing in a run that sets none:

- MUTANTS_OUTCOMES=<file>: at the end of the session, {node id: [outcome, message]} for every test run
  (outcome "failed" when its setup, call or teardown failed; message the failure's first line).
- MUTANTS_COVERAGE_RC=<rc file>, under `coverage run --rcfile=<it>`: each test's lines are recorded under
  its node id (a dynamic context), and every subprocess a test starts is measured under the same id: the
  rc file's static context is `${MUTANTS_TEST}`, and COVERAGE_PROCESS_START and MUTANTS_TEST go into the
  child's environment even where the test hands Popen an environment of its own.
- MUTANTS_SELECT=<file>: only the node ids listed (one a line) run; MUTANTS_DESELECT=<file>: those listed
  do not. The ids listed and not collected are written to MUTANTS_MISSING (the tool then runs the
  mutant over every test, as the map no longer describes the collection).
- MUTANTS_FIRST_FAILURE=<file>: the node id of the first test that failed, and its first line.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

TEST_VARIABLE = "MUTANTS_TEST"


def listed(variable: str) -> set[str] | None:
    path = os.environ.get(variable)
    if not path:
        return None
    return {line for line in Path(path).read_text(encoding="utf-8").splitlines() if line}


def first_line(report: pytest.TestReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr)
    return text.splitlines()[0][:300] if text else ""


class Recorder:
    def __init__(self) -> None:
        self.outcomes: dict[str, list[str]] = {}
        self.first_failure: list[str] | None = None
        self.coverage: Any = None
        rc = os.environ.get("MUTANTS_COVERAGE_RC")
        if rc:
            import coverage  # only the map run has (and needs) coverage.py

            self.coverage = coverage.Coverage.current()
            if self.coverage is None:
                raise pytest.UsageError("MUTANTS_COVERAGE_RC is set but the run is not under `coverage run`")
            self.measure_children(rc)

    @staticmethod
    def measure_children(rc: str) -> None:
        """Every child gets the rc file and the current test's id, whatever environment it is handed."""
        os.environ["COVERAGE_PROCESS_START"] = rc
        original = subprocess.Popen.__init__

        def init(self: subprocess.Popen[Any], *args: Any, **kwargs: Any) -> None:
            env = kwargs.get("env")
            if env is not None:
                kwargs["env"] = {**env, "COVERAGE_PROCESS_START": rc, TEST_VARIABLE: os.environ.get(TEST_VARIABLE, "")}
            original(self, *args, **kwargs)

        subprocess.Popen.__init__ = init  # type: ignore[method-assign]

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        selected, deselected = listed("MUTANTS_SELECT"), listed("MUTANTS_DESELECT") or set()
        keep = [item for item in items if item.nodeid not in deselected
                and (selected is None or item.nodeid in selected)]
        if selected is not None and os.environ.get("MUTANTS_MISSING"):
            missing = selected - {item.nodeid for item in items}
            Path(os.environ["MUTANTS_MISSING"]).write_text("".join(f"{nodeid}\n" for nodeid in sorted(missing)),
                                                           encoding="utf-8")
        config.hook.pytest_deselected(items=[item for item in items if item not in keep])
        items[:] = keep

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, None, None]:
        os.environ[TEST_VARIABLE] = item.nodeid
        if self.coverage is not None:
            self.coverage.switch_context(item.nodeid)
        try:
            yield
        finally:
            os.environ.pop(TEST_VARIABLE, None)
            if self.coverage is not None:
                self.coverage.switch_context("")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        outcome = self.outcomes.setdefault(report.nodeid, ["passed", ""])
        if report.failed:
            if outcome[0] != "failed":
                outcome[:] = ["failed", first_line(report)]
            if self.first_failure is None:
                self.first_failure = [report.nodeid, first_line(report)]
        elif report.skipped and outcome[0] == "passed":
            outcome[0] = "skipped"

    def pytest_sessionfinish(self) -> None:
        if os.environ.get("MUTANTS_OUTCOMES"):
            Path(os.environ["MUTANTS_OUTCOMES"]).write_text(json.dumps(self.outcomes, indent=0), encoding="utf-8")
        if os.environ.get("MUTANTS_FIRST_FAILURE") and self.first_failure is not None:
            Path(os.environ["MUTANTS_FIRST_FAILURE"]).write_text(json.dumps(self.first_failure), encoding="utf-8")


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(Recorder(), "mutants_recorder")
