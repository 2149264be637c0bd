"""The harness as a wheel: built from a copy of its sources, installed into a fresh virtualenv, run from
outside any checkout.

Nothing here reaches the network: the wheel is built with this interpreter's setuptools
(`--no-build-isolation --no-index`) and installed with `--no-deps --no-index`; the fresh
environment sees the already-installed dependencies through a `.pth` line naming their directory
(not the editable harness: that is mapped by a finder `.pth` which a plain path line does not run).
The installed harness must be the wheel's (its `__file__` under the fresh environment), must start
without any checkout, and must find the body and its organ fixture through $MAFIABOT_CHECKOUT,
or say in one line that it cannot.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml

from harness import settings
from support import REPO

# Building a wheel and a virtualenv takes a few seconds on a loaded 2-core machine.
pytestmark = pytest.mark.slow
STEP_BOUND_S = 180.0


def run(argv: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=STEP_BOUND_S, check=False, **kwargs)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fresh environment's bin/ directory, with the harness installed from its wheel."""
    root = tmp_path_factory.mktemp("wheel")
    source = root / "src"
    source.mkdir()
    shutil.copy(REPO / "pyproject.toml", source)
    shutil.copytree(REPO / "harness", source / "harness", ignore=shutil.ignore_patterns("__pycache__"))
    built = run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                 "-w", str(root / "dist"), str(source)])
    assert built.returncode == 0, built.stderr[-2000:]
    wheel, = (root / "dist").glob("mafiabot_harness-*.whl")
    venv = root / "venv"
    created = run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    assert created.returncode == 0, created.stderr[-2000:]
    python = venv / "bin" / "python"
    site = Path(run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    (site / "harness-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    done = run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
                str(wheel)])
    assert done.returncode == 0, done.stderr[-2000:]
    return venv / "bin"


def outside_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAFIABOT_") and k != "PYTHONPATH"}
    return {**env, "HERMES_HOME": str(tmp_path / "hermes-home"), **extra}


def test_the_wheel_holds_the_package_and_not_the_checkout(installed: Path, tmp_path: Path) -> None:
    probe = run([str(installed / "python"), "-c",
                 "import harness, harness.settings as s; print(harness.__file__); print(s.PACKAGE_CHECKOUT)"],
                cwd=tmp_path, env=outside_env(tmp_path))
    where, checkout = probe.stdout.split()
    assert Path(where).is_relative_to(installed.parent) and checkout == "None"


def test_the_installed_command_starts_and_lists_its_commands(installed: Path, tmp_path: Path) -> None:
    result = run([str(installed / "mafiabot-harness"), "--help"], cwd=tmp_path, env=outside_env(tmp_path))
    assert result.returncode == 0 and "delegate" in result.stdout and "mount" in result.stdout


def test_the_body_and_its_organs_are_found_through_the_checkout_variable(installed: Path, tmp_path: Path,
                                                                    body_exe: Path) -> None:
    env = outside_env(tmp_path, **{settings.CHECKOUT_ENV: str(REPO)})
    result = run([str(installed / "mafiabot-harness"), "turn", "hello", "--json", "--no-soul"], cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)["steps"]) == 23
    home = tmp_path / "mounted"
    home.mkdir()
    mounted = run([str(installed / "mafiabot-harness"), "mount", "--hermes-home", str(home)], cwd=tmp_path, env=env)
    assert mounted.returncode == 0, mounted.stderr
    entry = yaml.safe_load((home / "config.yaml").read_text())["mcp_servers"]["mafiabot"]
    assert entry["command"] == str(REPO / "mafiabot_core" / "bin" / "mafiabot")
    assert entry["args"] == ["--organs", str(REPO / "stubs" / "organs" / "default.json"),
                             "--state", str(home / "mafiabot" / "sessions.db")]
    assert (home / "plugins" / "mafiabot-level1" / "plugin.yaml").is_file(), "the wheel's Level1 plugin, installed"


def test_without_a_checkout_the_body_is_missing_in_one_line(installed: Path, tmp_path: Path) -> None:
    result = run([str(installed / "mafiabot-harness"), "turn", "hello", "--no-soul"], cwd=tmp_path,
                 env=outside_env(tmp_path))
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert settings.CHECKOUT_ENV in result.stderr and settings.BODY_ENV in result.stderr


def test_the_wheel_ships_the_level1_plugin_that_mount_installs(installed: Path, tmp_path: Path) -> None:
    probe = run([str(installed / "python"), "-c",
                 "from harness.hermes_mount.level1 import shipped_files; print(sorted(shipped_files()))"],
                cwd=tmp_path, env=outside_env(tmp_path))
    assert probe.stdout.split() == ["['__init__.py',", "'plugin.yaml']"]
