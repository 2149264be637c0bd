"""`python -m bench.profile`: where the body's time goes, per turn and at start-up.

Invariants:
- Instruction counts come from valgrind's callgrind (repeatable on a shared machine):
  per-turn figures are (run with N turns − run with the handshake only) ÷ N, for 8 and 1 passes.
- Code touched by one turn: the 64-byte lines of the body's code whose instruction counts grow from a
  run of one turn to a run of two (callgrind --dump-instr), which is what a turn brings into the
  instruction cache. Between two round trips the client runs and the body's code goes cold, so this
  is a cost beside the instruction count that the count does not show.
- Wall-clock shares come from `perf record` with the software cpu-clock event (this machine has
  no hardware counters); a section is skipped, with the reason, when a tool is missing.
- Input is a file of requests on stdin (pinned sessions, so every turn runs the same passes);
  output goes to /dev/null. Nothing is timed here: it explains the figures `python -m bench`
  measures.
- Writes bench/results/profile.md and prints the same text.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import tempfile
from collections import defaultdict
from pathlib import Path

from bench import servers, workloads

RESULTS = workloads.ROOT / "bench" / "results"
# callgrind runs ~50x slower than native: 500 turns take a few seconds.
CALLGRIND_TURNS = 500
PERF_TURNS = 20_000
PERF_BOOTS = 60
TOOL_TIMEOUT = 600.0
CACHE_LINE = 64
# A cost line of a callgrind profile dumped with --dump-instr=yes --compress-pos=no: the instruction's
# address (absolute, or relative to the line before), its source line, then its instruction count.
INSTRUCTION_ROW = re.compile(r"^(0x[0-9a-f]+|[+-]\d+|\*)\s+\S+(?:\s+(\d+))?")
ANNOTATE_ROW = re.compile(r"^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(\S+?):(\S+)\s+\[(.+)\]\s*$")


def requests_file(directory: Path, passes: int, turns: int) -> Path:
    key = workloads.PINNED[passes][0]
    path = directory / f"turns-{passes}-{turns}.jsonl"
    path.write_bytes(workloads.initialize_line() + b"".join(workloads.turn_lines(turns, key)))
    return path


def body_argv(fixture: Path) -> list[str]:
    return [str(servers.body_path()), "--organs", str(fixture), "--no-soul"]


def callgrind(argv: list[str], stdin: Path, out: Path) -> int:
    """Total instructions of one run; its profile is left in `out`."""
    with open(stdin, "rb") as source:
        run = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv],
                             stdin=source, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             timeout=TOOL_TIMEOUT)
    found = re.search(r"Collected : (\d+)", run.stderr)
    if found is None:
        raise RuntimeError(f"callgrind failed: {run.stderr[-500:]}")
    return int(found.group(1))


def annotate(profile: Path, inclusive: bool) -> list[tuple[int, str, str]]:
    """(instructions, function, object) rows of callgrind_annotate, largest first."""
    text = subprocess.run(["callgrind_annotate", f"--inclusive={'yes' if inclusive else 'no'}", str(profile)],
                          capture_output=True, text=True, timeout=TOOL_TIMEOUT).stdout
    rows = []
    for line in text.splitlines():
        match = ANNOTATE_ROW.match(line)
        if match:
            rows.append((int(match.group(1).replace(",", "")), match.group(3), Path(match.group(4)).name))
    return rows


def component(function: str, obj: str) -> str:
    """The package an Ada symbol belongs to (`json_text__put` -> json_text), else its object file."""
    if "__" in function and not function.startswith("_"):
        head = function.split("__", maxsplit=1)[0]
        return f"{head}.{function.split('__')[1]}" if head in ("organs", "system", "ada", "gnatcoll") else head
    return f"C: {obj}" if obj.endswith(".so") or ".so." in obj else f"C/libc in {obj}"


def instruction_section(fixture: Path, work: Path, turns: int) -> list[str]:
    argv = body_argv(fixture)
    baseline = callgrind(argv, requests_file(work, 8, 0), work / "cg-base.out")
    per_turn, profile = {}, None
    for passes in (8, 1):
        profile = work / f"cg-{passes}.out"
        total = callgrind(argv, requests_file(work, passes, turns), profile)
        per_turn[passes] = (total - baseline) / turns
        if passes == 8:
            eight = profile
    lines = ["## Instructions per turn (callgrind)", "",
             (f"start-up and handshake: {baseline:,} instructions; per 8-pass turn {per_turn[8]:,.0f}; "
              f"per 1-pass turn {per_turn[1]:,.0f} ({turns} turns each, pinned sessions)."), ""]
    by_part: dict[str, int] = defaultdict(int)
    for count, function, obj in annotate(eight, inclusive=False):
        by_part[component(function, obj)] += count
    total = sum(by_part.values()) or 1
    lines += ["| component (self instructions, 8-pass run) | share | per turn |", "| --- | --- | --- |"]
    lines += [f"| {part} | {count / total:.1%} | {count / turns:,.0f} |"
              for part, count in sorted(by_part.items(), key=lambda i: -i[1])[:12]]
    lines += ["", "| function (inclusive, 8-pass run) | instructions per turn |", "| --- | --- |"]
    lines += [f"| `{function}` | {count / turns:,.0f} |" for count, function in heaviest(eight, 25)]
    code_lines, second_turn = turn_footprint(fixture, work)
    lines += ["", (f"Code touched by one 8-pass turn (the second of a run): {code_lines:,} lines of {CACHE_LINE} bytes "
                   f"({code_lines * CACHE_LINE / 1024:.1f} KiB) for its {second_turn:,} instructions.")]
    lines += ["", "| function (inclusive, start-up and handshake) | instructions |", "| --- | --- |"]
    lines += [f"| `{function}` | {count:,} |" for count, function in heaviest(work / "cg-base.out", 8)]
    return [*lines, ""]


def instruction_counts(profile: Path) -> dict[int, int]:
    """Instructions executed at each address of one callgrind run dumped with --dump-instr=yes."""
    counts: dict[int, int] = defaultdict(int)
    address, after_call = 0, False
    for line in profile.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith("calls="):
            after_call = True  # the next cost line is the call's inclusive cost, not its instruction's
            continue
        match = INSTRUCTION_ROW.match(line)
        if match is None:
            continue
        position = match.group(1)
        if position.startswith("0x"):
            address = int(position, 16)
        elif position[0] in "+-":
            address += int(position)
        if after_call:
            after_call = False
        elif match.group(2):
            counts[address] += int(match.group(2))
    return counts


def turn_footprint(fixture: Path, work: Path) -> tuple[int, int]:
    """(code lines, instructions) one 8-pass turn adds to a run: the second turn's, against a run of one."""
    counts = []
    for turns in (1, 2):
        out = work / f"cg-instr-{turns}.out"
        with open(requests_file(work, 8, turns), "rb") as source:
            subprocess.run(["valgrind", "--tool=callgrind", "--dump-instr=yes", "--compress-pos=no",
                            "--compress-strings=no", f"--callgrind-out-file={out}", *body_argv(fixture)],
                           stdin=source, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=TOOL_TIMEOUT, check=True)
        counts.append(instruction_counts(out))
    one, two = counts
    grown = {address // CACHE_LINE for address, count in two.items() if count > one.get(address, 0)}
    return len(grown), sum(two.values()) - sum(one.values())


def heaviest(profile: Path, count: int) -> list[tuple[int, str]]:
    """The `count` heaviest functions by inclusive instructions, the program's entry frames left out."""
    entry = ("0x", "(below main)", "main", "_ada_mafiabot", "__libc_start")
    rows = [(n, f) for n, f, _ in annotate(profile, inclusive=True) if not f.startswith(entry) and "below" not in f]
    return rows[:count]


def perf_by_object(command: list[str], stdin: Path | None, work: Path, name: str) -> list[tuple[str, float]]:
    data = work / f"{name}.perf"
    with open(stdin, "rb") if stdin else open("/dev/null", "rb") as source:
        subprocess.run(["perf", "record", "-F", "5000", "-o", str(data), "--", *command], stdin=source,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=TOOL_TIMEOUT, check=True)
    report = subprocess.run(["perf", "report", "-i", str(data), "--no-children", "--sort", "comm,dso",
                             "--stdio", "-g", "none"], capture_output=True, text=True,
                            timeout=TOOL_TIMEOUT).stdout
    rows = []
    for line in report.splitlines():
        match = re.match(r"^\s+([\d.]+)%\s+mafiabot\s+(\S+)", line)
        if match:
            rows.append((match.group(2), float(match.group(1))))
    return rows


def perf_section(fixture: Path, work: Path) -> list[str]:
    if shutil.which("perf") is None:
        return ["## Wall-clock shares (perf)", "", "skipped: perf is not installed", ""]
    boot_script = work / "boots.sh"
    ping = work / "ping.jsonl"
    ping.write_bytes(workloads.ping_line(1))
    boot_script.write_text(f"for i in $(seq {PERF_BOOTS}); do {' '.join(body_argv(fixture))} < {ping} "
                           "> /dev/null; done\n", encoding="utf-8")
    try:
        turns = perf_by_object(body_argv(fixture), requests_file(work, 8, PERF_TURNS), work, "turns")
        boots = perf_by_object(["sh", str(boot_script)], None, work, "boots")
    except subprocess.CalledProcessError as failed:
        return ["## Wall-clock shares (perf)", "", f"skipped: perf record failed ({failed})", ""]
    lines = ["## Wall-clock shares (perf, cpu-clock samples of the body process)", "",
             f"| object | share of {PERF_TURNS:,} 8-pass turns | share of {PERF_BOOTS} boots to a ping |",
             "| --- | --- | --- |"]
    boot_share = dict(boots)
    for obj, share in turns[:8]:
        lines.append(f"| {obj} | {share:.1f}% | {boot_share.pop(obj, 0.0):.1f}% |")
    for obj, share in list(boot_share.items())[:4]:
        lines.append(f"| {obj} | — | {share:.1f}% |")
    return [*lines, ""]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=CALLGRIND_TURNS)
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mafiabot-profile-") as name:
        work = Path(name)
        fixture = workloads.write_bench_fixture(work)
        lines = [f"# Profile of {servers.body_path()}", ""]
        if shutil.which("valgrind") is None:
            lines += ["## Instructions per turn (callgrind)", "", "skipped: valgrind is not installed", ""]
        else:
            lines += instruction_section(fixture, work, options.turns)
        lines += perf_section(fixture, work)
    text = "\n".join(lines)
    print(text)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "profile.md").write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
