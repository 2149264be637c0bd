"""`make run` and `make test` say what they install before each install step (the first run takes minutes).

Read from `make -n` with the virtualenvs pointed at folders that do not exist, so every install step is
due: make prints each recipe line without running it, and the announcement of a step must come before
its first installing command and name what it installs.
"""

from __future__ import annotations

import subprocess

import pytest

from support import REPO

STEPS = [
    # (target, what its announcement says, the command that does the work)
    ("apt", "make: installing Debian's Ada toolchain", "apt-get install"),
    ("venv", "make: installing the harness", "pip install"),
    ("hermes", "make: installing the Hermes Agent", "pip install"),
    ("build", "make: building the Ada body", "gprbuild -j0"),
]


def dry_run(target: str, tmp_path) -> list[str]:
    made = subprocess.run(["make", "-n", target, f"VENV={tmp_path}/venv", f"HERMES_VENV={tmp_path}/hermes-venv",
                           f"BODY={tmp_path}/no-body"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    return made.stdout.splitlines()


@pytest.mark.parametrize("target, says, installs", STEPS, ids=[step[0] for step in STEPS])
def test_each_install_step_is_announced_before_it_starts(target, says, installs, tmp_path):
    lines = dry_run(target, tmp_path)
    announced = next((i for i, line in enumerate(lines) if says in line), None)
    started = next(i for i, line in enumerate(lines) if installs in line)
    assert announced is not None and announced <= started, lines
    assert "about" in lines[announced], f"say roughly how long: {lines[announced]}"
