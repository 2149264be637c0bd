"""Every ```sh block of README.md and docs/*.md runs as written on a fresh machine, so the docs cannot rot.

How a block is taken, by the HTML comment on the line just before its fence:
- no marker: run by `bash` with `set -euo pipefail`, from the checkout, and must exit 0;
- `<!-- docs-test: slow (why) -->`: run the same way, but marked `slow` (it runs Hermes);
- `<!-- docs-test: illustrative (why) -->`: not run (placeholders, a model, a client of the reader's own);
  its commands are still checked: each program exists (a path in the checkout, or on `PATH` once
  `.venv/bin` is put on it as the README says), each `mafiabot-harness` subcommand exists, and each
  `make` target is one the Makefile runs (`make -n`).

A block runs as a reader's shell on a fresh machine would run it: HOME and TMPDIR are new empty folders,
HERMES_HOME, the XDG dirs and every MAFIABOT_* variable are unset, and no virtualenv is on PATH (a bare
`hermes` or `mafiabot-harness` fails, as it does there). `make` is a stand-in that checks its targets with
`make -n` and runs nothing: the suite neither installs nor rebuilds (`make test` built the body first).
A block passes when it exits 0 within its bound, leaves no `~/.hermes` in its HOME (every recipe makes
its own temporary home) and adds no file to the checkout. Whatever it started in the background is
killed with its session afterwards.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.program import build_parser
from hermes_support import requires_hermes
from support import REPO

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
MARKER = re.compile(r"<!-- docs-test: (slow|illustrative)\b.*-->")
QUICK_BOUND = 120.0  # seconds: a quick block starts the body a few times
SLOW_BOUND = 300.0  # seconds: doctor's `hermes mcp test` and a `hermes chat` take ~10 s each, more on a loaded machine
KILL_GRACE = 5.0
HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?")
PATH_EXPORT = 'export PATH="$PWD/.venv/bin:$PATH"'
MAKE_STAND_IN = '#!/bin/sh\n# the docs test runs nothing of make: it checks the targets exist\nexec "{make}" -n "$@" >/dev/null\n'


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # of the opening fence
    kind: str  # "run", "slow" or "illustrative"
    text: str

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"


def sh_blocks(path: Path) -> list[Block]:
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks, index = [], 0
    while index < len(lines):
        if lines[index].strip() == "```sh":
            end = next(j for j in range(index + 1, len(lines)) if lines[j].startswith("```"))
            marker = MARKER.fullmatch(lines[index - 1].strip()) if index else None
            blocks.append(Block(path, index + 1, marker.group(1) if marker else "run", "\n".join(lines[index + 1:end])))
            index = end
        index += 1
    return blocks


BLOCKS = [block for path in DOCS for block in sh_blocks(path)]


def blocks_of(*kinds: str) -> list[Block]:
    return [block for block in BLOCKS if block.kind in kinds]


def commands(text: str) -> list[list[str]]:
    """The block's commands as words: comments dropped, a line ending in a backslash or followed by an
    indented one (a synopsis's wrapped options) joined to the next, here-documents skipped, and `export`
    lines left out."""
    logical: list[str] = []
    for line in text.replace("\\\n", " ").splitlines():
        if logical and line[:1].isspace() and line.strip():
            logical[-1] += " " + line.strip()
        else:
            logical.append(line)
    found, heredoc_end = [], None
    for line in logical:
        if heredoc_end is not None:
            heredoc_end = None if line.strip() == heredoc_end else heredoc_end
            continue
        if opened := HEREDOC.search(line):
            heredoc_end = opened.group(1)
        words = shlex.split(line, comments=True)
        if words and words[0] != "export":
            found.append(words)
    return found


def clean_path() -> str:
    """PATH without any virtualenv: what a fresh login shell has."""
    return os.pathsep.join(entry for entry in os.environ.get("PATH", "").split(os.pathsep)
                           if entry and not (Path(entry) / "activate").exists())


def fresh_env(root: Path) -> dict[str, str]:
    stand_ins = root / "bin"
    stand_ins.mkdir(parents=True)
    make = stand_ins / "make"
    make.write_text(MAKE_STAND_IN.format(make=shutil.which("make")), encoding="utf-8")
    make.chmod(0o755)
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("MAFIABOT_", "XDG_", "VIRTUAL_ENV")) and name != "HERMES_HOME"}
    for name in ("home", "tmp"):
        (root / name).mkdir()
    env.update(HOME=str(root / "home"), TMPDIR=str(root / "tmp"), NO_COLOR="1",
               PATH=os.pathsep.join([str(stand_ins), clean_path()]))
    return env


def checkout_files() -> set[str]:
    listed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=REPO,
                            capture_output=True, text=True, check=True, timeout=30)
    return set(listed.stdout.splitlines())


def run_block(block: Block, root: Path, bound: float) -> None:
    env = fresh_env(root)
    before = checkout_files()
    out = root / "block.out"
    with out.open("wb") as sink:
        proc = subprocess.Popen(["bash", "-c", "set -euo pipefail\n" + block.text], cwd=REPO, env=env,
                                stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            status = proc.wait(timeout=bound)
        except subprocess.TimeoutExpired:
            status = None
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(timeout=KILL_GRACE)
    printed = out.read_text(encoding="utf-8", errors="replace")
    assert status is not None, f"{block.name} did not finish within {bound:g} s:\n{printed}"
    assert status == 0, f"{block.name} exited {status}:\n{printed}"
    assert not (root / "home" / ".hermes").exists(), f"{block.name} wrote into ~/.hermes, not a temporary home"
    assert checkout_files() == before, f"{block.name} left files in the checkout"


@pytest.mark.parametrize("block", blocks_of("run"), ids=lambda block: block.name)
def test_a_quick_block_runs_as_written(block, tmp_path):
    run_block(block, tmp_path, QUICK_BOUND)


@pytest.mark.parametrize("block", blocks_of("slow"), ids=lambda block: block.name)
@requires_hermes[0]
@requires_hermes[1]
@requires_hermes[2]
def test_a_block_that_runs_hermes_runs_as_written(block, tmp_path):
    run_block(block, tmp_path, SLOW_BOUND)


def subcommand_exists(words: list[str]) -> bool:
    """Whether the words after `mafiabot-harness` start with a command the harness has (nested ones too)."""
    parser: argparse.ArgumentParser = build_parser()
    for word in words:
        actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not actions:
            return True
        if word not in actions[0].choices:
            return False
        parser = actions[0].choices[word]
    return not any(isinstance(a, argparse._SubParsersAction) for a in parser._actions)


@pytest.mark.parametrize("block", blocks_of("illustrative", "run", "slow"), ids=lambda block: block.name)
def test_every_command_a_block_shows_exists(block, tmp_path):
    path = os.pathsep.join([str(REPO / ".venv" / "bin"), clean_path()])
    for words in commands(block.text):
        program = words[0]
        where = REPO / program if "/" in program else shutil.which(program, path=path)
        assert where is not None and Path(where).exists(), f"{block.name}: {program} is not there: {' '.join(words)}"
        if Path(program).name == "mafiabot-harness":
            assert subcommand_exists(words[1:]), f"{block.name}: no such harness command: {' '.join(words)}"
        if program == "make":
            dry = subprocess.run(["make", "-n", *words[1:]], cwd=REPO, capture_output=True, text=True, timeout=60)
            assert dry.returncode == 0, f"{block.name}: {' '.join(words)}: {dry.stderr}"


def test_the_readme_says_how_to_put_the_harness_on_path_and_every_doc_is_read():
    assert PATH_EXPORT in (REPO / "README.md").read_text(encoding="utf-8")
    assert {block.path for block in BLOCKS} == {path for path in DOCS if "```sh" in path.read_text(encoding="utf-8")}
    assert blocks_of("run") and blocks_of("slow") and blocks_of("illustrative")


@pytest.mark.slow
@pytest.mark.parametrize("named", [False, True], ids=["by-environment", "by-options"])
def test_the_next_step_mount_prints_runs_as_printed(tmp_path, named):
    env = fresh_env(tmp_path)
    env["HERMES_HOME"] = str(tmp_path / "hermes-home")
    # By options, the home and the entry are not the ones the environment names: the hint must carry them.
    options = ["--hermes-home", str(tmp_path / "other home"), "--name", "body2"] if named else []
    mounted = subprocess.run([".venv/bin/mafiabot-harness", "mount", *options], cwd=REPO, env=env,
                             capture_output=True, text=True, timeout=QUICK_BOUND)
    assert mounted.returncode == 0, mounted.stdout + mounted.stderr
    [hint] = [line for line in mounted.stdout.splitlines() if line.startswith("next: ")]
    doctor = subprocess.run(["bash", "-c", hint.removeprefix("next: ")], cwd=REPO, env=env, capture_output=True,
                            text=True, timeout=SLOW_BOUND)
    assert doctor.returncode == 0, hint + "\n" + doctor.stdout + doctor.stderr
    assert doctor.stdout.rstrip().endswith("all checks passed")
