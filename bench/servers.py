"""The servers a run compares, and how each is built and started.

Invariants:
- Every server speaks the same `turn` contract on stdio and is driven by `PipeClient`.
- The floor and the SDK peer answer with a canned reply captured from the body itself at
  the start of the run (`capture_canned`), so all replies are the same size within bytes.
- Nothing here writes outside the run's work directory except the build trees of the body's
  variants (other link, contracts off), which live in the system temp dir
  (`variant_build_root`) so rebuilds are incremental and `mafiabot_core/` is never touched
  (gprbuild --relocate-build-tree).
- A server that cannot be built or found is reported with the reason, never faked.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from bench import workloads
from bench.pipe_client import PipeClient

ROOT = workloads.ROOT
BODY = ROOT / "mafiabot_core" / "bin" / "mafiabot"
GPR = ROOT / "mafiabot_core" / "mafiabot_core.gpr"
FLOOR_SOURCE = ROOT / "bench" / "floor" / "floor.c"
SDK_PEER = ROOT / "bench" / "peers" / "sdk_server.py"
# Owned by the Hermes/replays work; used by path when it exists.
PASSTHROUGH_STUB = ROOT / "stubs" / "passthrough_body.py"
# A full build of the body takes ~35 s on two cores; incremental ones are seconds.
VARIANT_BUILD_TIMEOUT = 600.0
PT_INTERP = 3
CC_TIMEOUT = 60.0


@dataclass(frozen=True)
class Server:
    """A server's name in the table and its command line."""

    name: str
    argv: tuple[str, ...]
    env: dict[str, str] | None = field(default=None, compare=False)

    def start(self, deadline: float, stderr_path: Path | None = None) -> PipeClient:
        return PipeClient(self.argv, env=self.env, deadline=deadline, stderr_path=stderr_path)


@dataclass
class Unavailable:
    name: str
    reason: str


def body_path() -> Path:
    return Path(os.environ.get("MAFIABOT_BODY", BODY))


def body_server(fixture: Path, path: Path | None = None, name: str = "body",
                extra: tuple[str, ...] = ()) -> Server:
    exe = path or body_path()
    return Server(name, (str(exe), "--organs", str(fixture), "--no-soul", *extra))


def build_floor(work: Path, static: bool = False, sqlite: bool = False) -> Path:
    """The C floor, built with the system cc (-static: the start-up floor of a static body; sqlite: the
    store floor, one SQLite transaction a reply, linked as the body links SQLite)."""
    exe = work / ("floor" + ("-static" if static else "") + ("-sqlite" if sqlite else ""))
    subprocess.run(["cc", "-O2", "-Wall", "-Wextra", "-D_GNU_SOURCE", *(["-static"] if static else []),
                    *(["-DFLOOR_SQLITE"] if sqlite else []), "-o", str(exe), str(FLOOR_SOURCE),
                    # SQLite's static library, as the body links it
                    *(["-Wl,-Bstatic", "-lsqlite3", "-Wl,-Bdynamic", "-lm"] if sqlite else [])],
                   check=True, timeout=CC_TIMEOUT)
    return exe


def capture_canned(body: Server, work: Path) -> tuple[Path, Path]:
    """One steady-state 8-pass reply of the body: (reply line with id 0, its trace).

    The pinned full session is served four turns first, so MoRAG recall is as full as it
    is in every later turn of the bench.
    """
    key = workloads.PINNED[8][0]
    with body.start(deadline=30.0) as client:
        client.exchange(workloads.initialize_line())
        for request_id in range(1, 5):
            client.exchange(workloads.turn_line(request_id, key))
        reply = client.exchange(workloads.turn_line(0, key))
    message = json.loads(reply)
    reply_path = work / "canned-reply.json"
    reply_path.write_bytes(reply)
    trace_path = work / "canned-trace.json"
    trace_path.write_text(json.dumps(message["result"]["structuredContent"]), encoding="utf-8")
    return reply_path, trace_path


def floor_server(exe: Path, reply: Path) -> Server:
    return Server("C floor", (str(exe), str(reply)))


def store_floor_server(exe: Path, reply: Path, store: Path, record_bytes: int) -> Server:
    """The store floor (build_floor(sqlite=True)): the C floor committing a record of `record_bytes` a reply."""
    return Server("C floor + SQLite turn", (str(exe), str(reply), str(store), str(record_bytes)))


def sdk_server(trace: Path) -> Server:
    return Server("SDK MCPServer", (sys.executable, str(SDK_PEER), str(trace)))


def passthrough_server() -> Server | Unavailable:
    if not PASSTHROUGH_STUB.is_file():
        return Unavailable("jsonrpcserver stub", f"{PASSTHROUGH_STUB.relative_to(ROOT)} does not exist yet")
    return Server("jsonrpcserver stub", (sys.executable, str(PASSTHROUGH_STUB), "--no-soul"))


def variant_build_root() -> Path:
    digest = hashlib.sha1(str(ROOT).encode()).hexdigest()[:10]
    return Path(tempfile.gettempdir()) / f"mafiabot-bench-{os.getuid()}-{digest}"


def build_variant(link: str, contracts: str = "on") -> Path | Unavailable:
    """The body built from the current sources out of tree, with this link and contract mode."""
    name = f"body ({link}{', contracts off' if contracts == 'off' else ''})"
    gprbuild = shutil.which("gprbuild")
    if gprbuild is None:
        return Unavailable(name, "gprbuild not found")
    root = variant_build_root() / f"{link}-contracts-{contracts}"
    result = subprocess.run(
        # -s: a change of the project's switches rebuilds, as `make build` does
        [gprbuild, "-j0", "-p", "-q", "-s", "-P", str(GPR), f"-XMAFIABOT_LINK={link}",
         f"-XMAFIABOT_CONTRACTS={contracts}", f"--relocate-build-tree={root}"],
        cwd=ROOT, capture_output=True, text=True, timeout=VARIANT_BUILD_TIMEOUT)
    # The names mafiabot_core.gpr gives its variants
    exe = root / "bin" / ("mafiabot" + ("-dynamic" if link == "dynamic" else "")
                          + ("-unchecked" if contracts == "off" else ""))
    if result.returncode != 0 or not exe.is_file():
        return Unavailable(name, f"build failed: {result.stderr.strip()[-300:]}")
    return exe


def linkage(path: Path) -> str:
    """"dynamic" when the ELF executable names a program interpreter (PT_INTERP), else "static"."""
    with open(path, "rb") as elf:
        header = elf.read(64)
        if header[:5] != b"\x7fELF\x02":
            return "unknown"
        phoff = int.from_bytes(header[0x20:0x28], "little")
        entry_size = int.from_bytes(header[0x36:0x38], "little")
        count = int.from_bytes(header[0x38:0x3A], "little")
        elf.seek(phoff)
        table = elf.read(entry_size * count)
    types = [int.from_bytes(table[n * entry_size:n * entry_size + 4], "little") for n in range(count)]
    return "dynamic" if PT_INTERP in types else "static"
