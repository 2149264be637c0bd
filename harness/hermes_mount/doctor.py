"""`doctor`: every check between "the body is built" and "Hermes lists the tool", in order.

Each check ends in ok, warn, fail or skip with one line saying what was seen and, when it is not
ok, what to do. A check whose precondition failed is skipped (no handshake with a body that
does not exist), except Hermes's own test, which runs whenever Hermes and the entry exist:
what Hermes itself reports is the last word, and it costs seconds, not minutes.

Invariants:
- Doctor writes nothing: not the config, not SOUL.md (its probes run the body with `--soul off`,
  and Hermes's own test runs in a scratch copy of the home, see `quiet_copy`), not a recording.
  The `soul` check asks the body what a boot would do with SOUL.md (`--soul-state`) instead.
- The `state` check alone gives the body the entry's real `--state`, and only when that file exists
  (the body would make a missing one): the body opens it as at every start under Hermes and is sent
  `initialize` only. Opening an existing store changes no session: the body's Open only takes and
  releases the write lock (SQLite may make or remove the -wal and -shm files beside it). Every other
  probe keeps sessions in a scratch store.
- What is probed is what the entry runs (command and args, the recording relay included, under
  Hermes's filtered environment and the entry's env; see `probe.probe_entry`), or `--body` when
  given. With nothing mounted and no `--body`, only the built body's file is checked: every check of
  what Hermes would start is skipped, saying so, never passed. An entry that records into a folder the
  relay cannot write fails the `record` check before anything is started.
- Every line says what it measured or read: start-up in ms against the discovery timeout in s.
- The entry's values are judged as Hermes reads them (YAML 1.1, its coercion of `enabled`): an
  entry Hermes reads as disabled fails the `enabled` check.
- Sampling is checked in two parts: `cognition` reads what the entry asks of Hermes (the body's
  --cognition, and for sampling the `sampling:` block and tool timeout against what the body's
  bounds need, with max_rpm at least one full turn, and how many full turns a minute it allows,
  harness.hermes_mount.cognition); `sampling` runs one turn of the body with
  --cognition sampling from a client that answers every model call itself (`probe.probe_sampling`),
  so the body's side is known to work without spending a call of the operator's model. Hermes's
  own model answering is not probed (docs/hermes.md says why).
- Checks never raise for what they check: harness errors become a failed check with the
  error's own message. Only a config problem doctor cannot even read past is reported as a
  failed `config` check and ends the run early.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.body import body_path, default_organs, find_body
from harness.database import holds_password, shown_url
from harness.errors import BodyDied, HarnessError
from harness.hermes.config_yaml import server_enabled
from harness.hermes.locate import find_executable, not_found_detail
from harness.hermes_mount.cognition import (
    BUDGET_CALLS,
    BUDGET_WINDOW,
    CALLS_PER_FULL_TURN,
    ENERGY_OPTION,
    SAMPLING,
    SAMPLING_KEY,
    SYNTHESIS_CALLS,
    SamplingBounds,
    SessionBudget,
    cognition_of,
    full_turns_a_minute,
    hermes_number,
    required_block,
    sampling_bounds,
    session_budget,
    shortfalls,
    tool_timeout_floor,
)
from harness.hermes_mount.config_file import HermesConfigError, as_hermes, load_config, render
from harness.hermes_mount.entry import (
    DEFAULT_CONNECT_TIMEOUT,
    DISCOVERY_KEY,
    DISCOVERY_RANGE,
    TOOL,
    DatabaseState,
    body_argv,
    discovery_timeout,
    entry_command,
    find_entry,
    flow_args,
    is_ada_body,
    servers_as_hermes,
    state_of,
    tool_name,
)
from harness.hermes_mount.hermes_cli import hermes_python, probe_plugin, run_mcp_test
from harness.hermes_mount.home import HermesHome
from harness.hermes_mount.level1 import DISABLED_NOTE, copy_into, hermes_view, plugin_dir, read_manifest, stale_files
from harness.hermes_mount.probe import (
    SCRIPTED_MODEL,
    check_executable,
    hermes_child_env,
    probe_argv,
    probe_entry,
    probe_sampling,
    probe_store,
    record_problem,
    recorded_into,
)
from harness.hermes_mount.soul import soul_state
from harness.hermes_plugin import PLUGIN_NAME

STEP_COUNT = 23
OPERATOR_SOUL = "operator"
ENV_FILE = ".env"
MCP_STDERR_LOG = "logs/mcp-stderr.log"
# Enough of the body's stderr under Hermes to show why it did not start, short enough to read.
STDERR_TAIL_LINES = 5
QUIETLY = "run in a scratch copy of the home with the body's --soul off, so nothing was written"
# Start-up above this share of mcp_discovery_timeout is a warning: a loaded machine may push it past.
DISCOVERY_MARGIN = 0.5
OK, WARN, FAIL, SKIP = "ok", "warn", "fail", "skip"


@dataclass(frozen=True)
class Check:
    name: str
    status: str
    detail: str


@dataclass
class DoctorRun:
    home: HermesHome
    name: str
    checks: list[Check] = field(default_factory=list)

    def add(self, name: str, status: str, detail: str) -> Check:
        check = Check(name, status, detail)
        self.checks.append(check)
        return check

    @property
    def failed(self) -> bool:
        return any(c.status == FAIL for c in self.checks)


def run_doctor(home: HermesHome, name: str, body: str | None = None, hermes: str | None = None,
               use_hermes: bool = True, on_check: Callable[[Check], None] | None = None) -> DoctorRun:
    run = DoctorRun(home, name)
    report: Callable[[Check], None] = on_check if on_check is not None else (lambda _check: None)

    def add(check_name: str, status: str, detail: str) -> None:
        report(run.add(check_name, status, detail))

    try:
        doc = load_config(home.config)
        # ruamel checks the structure and names lines; the values checked are the ones Hermes reads.
        mounted = find_entry(doc.data, name)
        seen = as_hermes(doc.original or "", home.config)
        discovery, explicit = discovery_timeout(seen)
        entry: dict[str, Any] | None = None
        if mounted is not None:
            read = servers_as_hermes(seen).get(name)
            entry = read if isinstance(read, dict) else {}
    except HermesConfigError as exc:
        add("config", FAIL, str(exc))
        return run
    if doc.original is None:
        add("config", WARN, f"{home.config} does not exist: run `mafiabot-harness mount{home.options(name)}` to "
                            f"create it")
    else:
        add("config", OK, f"{home.config} parses")

    command, args, env, connect_timeout = _body_under_test(entry, body, home, name, add)
    blocked = None  # why the entry cannot be started, as the skipped checks say
    try:
        if not command:
            find_body()  # nothing says where the body is: BodyNotFound names the variables to set
        for executable in dict.fromkeys([command, body_argv(command, args)[0]]):
            check_executable(executable)
        add("body", OK, f"{body_argv(command, args)[0]} is executable")
    except HarnessError as exc:
        add("body", FAIL, str(exc))
        blocked = "the body must exist first"
    if entry is None and body is None:
        # The built body was found (or not) above; what Hermes would run does not exist, so nothing runs it.
        blocked = f"nothing is mounted as '{name}' to start"
    if blocked is None and (target := recorded_into(command, args)) is not None:
        problem = record_problem(command, args)
        if problem is not None:
            add("record", FAIL, f"{problem}: the relay exits at every start and Hermes reports the tool missing; "
                                "create the folder, or mount again without --record")
            blocked = "the relay must be able to record first"
        else:
            add("record", OK, f"the relay can record into {target} (a probe records nothing)")

    startup = None
    if blocked is None:
        startup = _probe(command, args, env, add)
        if startup is None:
            add("soul", SKIP, "the body must start first")
            add("state", SKIP, "the body must start first")
        else:
            _check_soul(body_argv(command, args), env, add)
            _check_state(command, args, env, add)
    else:
        add("handshake", SKIP, blocked)
        add("soul", SKIP, blocked)
        add("state", SKIP, blocked)

    _check_discovery(discovery, explicit, startup, add)
    if entry is not None:
        _check_level1(home, name, seen, hermes if use_hermes else None, use_hermes, add)
    bounds = _check_cognition(entry, body_argv(command, args), add) if blocked is None else None
    if bounds is None:
        cognition = next((c for c in run.checks if c.name == "cognition"), None)
        add("sampling", SKIP, blocked or ("the cognition check must pass first" if cognition and cognition.status == FAIL
                                          else "the entry thinks with the stub organs"))
    elif startup is None:
        add("sampling", SKIP, "the body must start first")
    else:
        _check_sampling(command, args, env, bounds, add)

    if not use_hermes:
        add("hermes", SKIP, "--no-hermes")
    elif entry is None:
        add("hermes", SKIP, f"nothing mounted as '{name}' for Hermes to test")
    else:
        _check_hermes(home, name, hermes, connect_timeout, add)
    return run


def _body_under_test(entry: Any, body: str | None, home: HermesHome, name: str,
                     add: Callable[[str, str, str], None]) -> tuple[str, list[str], dict[str, str], float]:
    if body is not None:
        add("entry", SKIP if entry is None else OK, f"checking --body {body} instead of the mounted entry")
        return str(Path(body).absolute()), [], {"HERMES_HOME": str(home.path)}, DEFAULT_CONNECT_TIMEOUT
    if entry is None:
        add("entry", FAIL, f"no mcp_servers.{name} in {home.config}: run `mafiabot-harness mount"
                           f"{home.options(name)}`")
        organs, built = default_organs(), body_path()
        return (str(built.absolute()) if built is not None else "", ["--organs", str(organs)] if organs else [],
                {"HERMES_HOME": str(home.path)}, DEFAULT_CONNECT_TIMEOUT)
    command, args, env = entry_command(entry)
    add("entry", OK, f"mcp_servers.{name}: {command} {' '.join(args)}".rstrip()
        + f" (the model sees {tool_name(name)})")
    if not server_enabled(entry):
        add("enabled", FAIL, f"Hermes reads the entry's enabled: {entry.get('enabled')!r} as disabled and never "
                             "starts the body: run mount again")
    passed_home = env.get("HERMES_HOME")
    if passed_home is None:
        add("env", WARN, "the entry's env has no HERMES_HOME: Hermes filters the child's environment, so the body "
                         "will write SOUL.md into ~/.hermes; run mount again to set it")
    elif Path(passed_home) != home.path:
        add("env", WARN, f"the entry passes HERMES_HOME={passed_home}, not this home {home.path}")
    else:
        add("env", OK, f"HERMES_HOME={passed_home} is passed to the body")
    timeout = entry.get("connect_timeout", DEFAULT_CONNECT_TIMEOUT)
    return command, args, env, float(timeout) if isinstance(timeout, (int, float)) else DEFAULT_CONNECT_TIMEOUT


def _probe(command: str, args: list[str], env: dict[str, str], add: Callable[[str, str, str], None]) -> float | None:
    try:
        result = probe_entry(command, args, hermes_child_env(env), run_turn=True)
    except HarnessError as exc:
        add("handshake", FAIL, f"{exc}")
        return None
    if TOOL not in result.tool_names:
        add("handshake", FAIL, f"the body lists {list(result.tool_names)}, not '{TOOL}'")
        return result.startup_seconds
    add("handshake", OK, f"initialize answered in {result.startup_seconds * 1000:.0f} ms "
                         f"(protocol {result.protocol_version}), tools: {', '.join(result.tool_names)}")
    trace = result.trace or {}
    steps = trace.get("steps", [])
    if len(steps) != STEP_COUNT:
        add("turn", FAIL, f"a turn came back with {len(steps)} steps, not {STEP_COUNT}")
    else:
        route = trace.get("route", {})
        add("turn", OK, f"{len(steps)} steps, {trace.get('passes_run')} passes, "
                        f"route {route.get('intent')} -> {route.get('target')}")
    return result.startup_seconds


def _check_soul(argv: list[str], env: dict[str, str], add: Callable[[str, str, str], None]) -> None:
    try:
        report = soul_state(argv, hermes_child_env(env))
    except HarnessError as exc:
        add("soul", FAIL, f"the body could not say what it does with SOUL.md: {exc}")
        return
    if report is None:
        add("soul", SKIP, f"{argv[0]} is not the mafiabot body: it has no SOUL.md of its own")
    else:
        # The operator's persona is never replaced unasked, but then the body's identity is not
        # what Hermes puts first in its prompt: worth a warning, never a failure.
        add("soul", WARN if report.word == OPERATOR_SOUL else OK, report.sentence)


def _check_state(command: str, args: list[str], env: dict[str, str], add: Callable[[str, str, str], None]) -> None:
    """`state`: the entry's own session store, opened by its body as Hermes starts it (the handshake's store is a
    scratch one); a store that does not exist yet is never made here."""
    body = body_argv(command, args)
    store = state_of(body)
    if not is_ada_body(body[0]):
        add("state", SKIP, f"{body[0]} is not the mafiabot body: it has no session store of its own")
    elif store is None:
        add("state", OK, "no --state: each body keeps its sessions in memory, so each Hermes session's body starts "
                         "them afresh")
    elif isinstance(store, DatabaseState):
        _check_database_state(command, args, env, store, add)
    elif not store.is_absolute():
        add("state", WARN, f"--state {store} is relative: the body finds it from the folder Hermes runs in, "
                           "whichever that is; run mount again with an absolute --state")
    elif not store.exists():
        add("state", OK, f"sessions: {store} not made yet (the body makes it at its first start)")
    else:
        _open_store(command, args, env, add, ("store", str(store)),
                    f"repair or move away {store}, or mount again with another --state",
                    f"sessions: {store}, usable (the body opened it as Hermes starts it; no session changed)")


def _open_store(command: str, args: list[str], env: dict[str, str], add: Callable[[str, str, str], None],
                kind_and_name: tuple[str, str], remedy: str, usable: str) -> None:
    """Start the entry's body on its own store as Hermes starts it (`probe_store`): a refusal is reported in the
    body's own words and followed by `remedy`, an open store by `usable`."""
    kind, name = kind_and_name
    try:
        probe_store(command, args, hermes_child_env(env))
    except BodyDied as exc:
        said = exc.stderr_tail.strip().splitlines()
        add("state", FAIL, f"the body refuses its {kind} (exit code {exc.exit_code}: "
                           f"{said[-1] if said else 'its stderr was empty'}), so every start of the body under "
                           f"Hermes ends the same way: {remedy}")
    except HarnessError as exc:
        add("state", FAIL, f"the body could not open its {kind} {name}: {exc}")
    else:
        add("state", OK, usable)


def _check_database_state(command: str, args: list[str], env: dict[str, str], store: DatabaseState,
                          add: Callable[[str, str, str], None]) -> None:
    """`state` for a database: the body connects to it and makes or migrates its schema as Hermes starts it (no
    session changed); what it refuses is said in its own words, which name the server and never the password."""
    shown = shown_url(store.url)
    if holds_password(store.url):
        add("state", WARN, f"--state {shown} holds a password in config.yaml: move it to ~/.pgpass (PGPASSFILE) or a "
                           "service file, and mount again with the URL without it")
    _open_store(command, args, env, add, ("database", shown),
                "see that the server is up and the role can log in (PGPASSFILE), or mount again with another --state",
                f"sessions: the database {shown}, usable (the body connected as Hermes starts it; no session changed)")


def _check_discovery(discovery: float, explicit: bool, startup: float | None,
                     add: Callable[[str, str, str], None]) -> None:
    source = "set in config.yaml" if explicit else "Hermes's default"
    low, high = DISCOVERY_RANGE
    odd = "" if low <= discovery <= high else f" (outside the {low:g} to {high:g} s mount writes)"
    if startup is None:
        add("discovery", SKIP, f"{DISCOVERY_KEY} is {discovery:g} s ({source}){odd}; the start-up was not measured")
        return
    measured = (f"started in {startup * 1000:.0f} ms against a discovery timeout of {discovery:g} s "
                f"({source}){odd}")
    if startup > discovery:
        add("discovery", WARN, f"{measured}: {late_server_effect(discovery, source)}; "
                               "run mount with a larger --discovery-timeout")
    elif startup > discovery * DISCOVERY_MARGIN:
        add("discovery", WARN, f"{measured}, more than {DISCOVERY_MARGIN:.0%} of it: a loaded machine may push it "
                               "past; run mount with --discovery-timeout 5")
    elif odd:
        add("discovery", WARN, f"{measured}: run mount with --discovery-timeout 5")
    else:
        add("discovery", OK, measured)


def _check_cognition(entry: dict[str, Any] | None, body: list[str],
                     add: Callable[[str, str, str], None]) -> SamplingBounds | None:
    """What the entry asks of Hermes for the body's cognition; the body's bounds when it samples."""
    if cognition_of(body) != SAMPLING:
        add("cognition", OK, "stub organs: a turn asks no model (mount --cognition sampling has Hermes's model "
                             f"think each pass, {CALLS_PER_FULL_TURN} calls a full turn)")
        return None
    try:
        bounds = sampling_bounds(body)
        budget = session_budget(body)
    except HarnessError as exc:
        add("cognition", FAIL, str(exc))
        return None
    if entry is None:
        add("cognition", OK, "the body thinks with sampling (no entry: Hermes's side is not read)")
        return bounds
    required = required_block(bounds, 1)  # the brake's size is the operator's; less than one full turn is none
    problems = shortfalls(entry.get(SAMPLING_KEY), required)
    timeout, floor = entry.get("timeout"), tool_timeout_floor(bounds)
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout < floor:
        problems.append(f"timeout: {timeout!r} < {floor} (the body's turn deadline is {bounds.turn_deadline_ms} ms)")
    if problems:
        add("cognition", FAIL, f"the entry asks for sampling, but Hermes reads {'; '.join(problems)}: a full turn "
                               "would be refused, cut short or throttled; run mount again to size it")
    else:
        block = entry[SAMPLING_KEY]
        rpm = int(hermes_number(block['max_rpm'], int) or 0)
        status, paced = _budget_pacing(budget, rpm)
        add("cognition", status, f"sampling: Hermes answers the body's calls with its model, enabled, max_rpm "
                                 f"{block['max_rpm']}, timeout {block['timeout']} s, max_tokens_cap "
                                 f"{block['max_tokens_cap']}, tool timeout {timeout} s: "
                                 f"{full_turns_a_minute(rpm, bounds.full_turn_calls)} of {bounds.full_turn_calls} "
                                 f"calls a minute back to back, then Hermes throttles; {paced}")
    return bounds


def _budget_pacing(budget: SessionBudget | None, max_rpm: int) -> tuple[str, str]:
    """The configured budget in words, and whether Hermes's max_rpm lets through what it allows one session."""
    if budget is None:
        return OK, f"no budget paces a session ({ENERGY_OPTION} fixture: the fixture's energy curve)"
    most = budget.most_calls_a_minute()
    said = (f"budget: {BUDGET_CALLS.option} {budget.calls} in {BUDGET_WINDOW.option} {budget.window_s} a session, at "
            f"most {most} calls of one session a minute")
    if max_rpm < most:
        return WARN, (f"{said}, more than max_rpm {max_rpm}: Hermes refuses calls the budget allows (run mount again "
                      "to size max_rpm)")
    return OK, f"{said}, within max_rpm"


def _check_sampling(command: str, args: list[str], env: dict[str, str], bounds: SamplingBounds,
                    add: Callable[[str, str, str], None]) -> None:
    try:
        probe = probe_sampling(command, args, hermes_child_env(env), bounds.turn_deadline_ms / 1000)
    except HarnessError as exc:
        add("sampling", FAIL, f"a sampled turn failed: {exc}")
        return
    cognition = probe.trace.get("cognition")
    if not isinstance(cognition, dict):
        add("sampling", FAIL, "the body answered a sampled turn without its cognition member: it predates "
                              "--cognition sampling (build the current body with `make build`)")
        return
    calls = [call for call in cognition.get("calls") or [] if isinstance(call, dict)]
    answered = [call for call in calls if call.get("status") == "answered" and call.get("model") == SCRIPTED_MODEL]
    passes = int(probe.trace.get("passes_run") or 0)
    expected = passes + SYNTHESIS_CALLS + bounds.intent_calls
    asked = "the passes, the intent and the synthesis" if bounds.intent_calls else "the passes and the synthesis"
    if cognition.get("thinker") != SAMPLING or cognition.get("fallback") is not None:
        add("sampling", FAIL, f"the body thought with {cognition.get('thinker')!r} although the client declared "
                              f"sampling: {cognition.get('fallback')}")
    elif not (len(answered) == len(calls) == len(probe.requests) == expected):
        statuses = ", ".join(f"{call.get('status')}" for call in calls)
        add("sampling", FAIL, f"{len(probe.requests)} sampling requests for a turn of {passes} passes, not {expected} "
                              f"({asked}); the trace's calls: {statuses or 'none'}")
    else:
        add("sampling", OK, f"a turn of {passes} passes sent {len(probe.requests)} sampling requests ({asked}), all "
                            "answered by doctor's own scripted client: the body's side works (no model was asked, "
                            f"nothing spent){_probe_cost(cognition.get('budget'))}")


def _probe_cost(budget: Any) -> str:
    """What the probe turn cost of its (scratch) session's budget, as its trace says; "" without a budget."""
    if not isinstance(budget, dict):
        return ""
    tokens = budget.get("turn_tokens") if budget.get("tokens_limit") is not None else None
    return (f"; it cost {budget.get('turn_calls')} of the session's {budget.get('calls_limit')} calls in "
            f"{budget.get('window_s')} s{f' and {tokens} tokens' if tokens is not None else ''} (--energy budget)")


def late_server_effect(discovery: float, source: str) -> str:
    """What Hermes 0.19.0 does with a server slower than the discovery timeout, as measured (docs/hermes.md)."""
    return (f"`hermes chat` starts MCP servers as it launches, then fixes the first turn's tools after its own "
            f"start-up (seconds) plus at most {DISCOVERY_KEY} ({discovery:g} s, {source}); a server not ready "
            "by then is missing from that turn (the model is told the tool does not exist), which is all a "
            "one-shot `hermes chat -q` has; an interactive session adds it from its next turn")


def _check_level1(home: HermesHome, name: str, seen: dict[str, Any], hermes: str | None, use_hermes: bool,
                  add: Callable[[str, str, str], None]) -> None:
    """`level1`: the plugin installed for this entry and enabled as Hermes reads the config; `loaded`: Hermes's own
    loader ran it and its middleware set a probe call's key (in a scratch copy of the home)."""
    tool = tool_name(name)
    try:
        manifest = read_manifest(home)
    except HarnessError as exc:
        add("level1", WARN, str(exc))
        add("loaded", SKIP, "the plugin must be mount's first")
        return
    if manifest is None or name not in manifest.servers:
        add("level1", WARN, f"the {PLUGIN_NAME} plugin is not installed for {tool}: the model's own uid, channel and "
                            "server reach the body; mount again without --no-level1 to install it")
        add("loaded", SKIP, "the plugin must be installed first")
        return
    view, stale = hermes_view(seen), stale_files(home)
    where = f"installed in {plugin_dir(home)} for {tool}"
    if not view.enabled:
        add("level1", WARN, f"{where}, but plugins.enabled does not name it, so Hermes never loads it: mount again")
    elif view.disabled:
        add("level1", WARN, f"{where}; {DISABLED_NOTE}")
    elif stale:
        add("level1", WARN, f"{where}, but its {', '.join(stale)} differ from this harness's: mount again to update it")
    else:
        add("level1", OK, f"{where} and named in plugins.enabled")
    if not use_hermes:
        add("loaded", SKIP, "--no-hermes")
        return
    executable = find_executable(hermes)
    python = hermes_python(executable) if executable is not None else None
    if python is None:
        add("loaded", SKIP, not_found_detail(hermes) if executable is None
            else f"cannot tell which Python runs {executable} (its #! line names none)")
        return
    with tempfile.TemporaryDirectory(prefix="mafiabot-doctor-") as scratch:
        copy = HermesHome(Path(scratch))
        shutil.copyfile(home.config, copy.config)
        copy_into(home, copy.path)
        probe = probe_plugin(python, copy, PLUGIN_NAME, tool, {"input": "probe", "uid": "forged", "channel": "forged",
                                                               "server": "forged"})
    expected = FAIL if view.loads else WARN  # a plugin the operator disabled is not expected to load
    plugin = probe.plugin
    if not probe.hermes:
        add("loaded", SKIP, f"{python}, which runs {executable}, has no Hermes plugin loader to ask")
    elif probe.problem is not None:
        add("loaded", FAIL, probe.problem)
    elif plugin is None:
        add("loaded", FAIL, f"Hermes's plugin loader did not find {PLUGIN_NAME} in the home's plugins folder")
    elif not plugin.get("enabled"):
        add("loaded", expected, f"Hermes's plugin loader did not load it: {plugin.get('error')}")
    elif not plugin.get("middleware") or not str(probe.args.get("key_origin", "")).startswith("level1"):
        add("loaded", FAIL, f"Hermes loaded it, but a probe call of {tool} came back as the model wrote it: "
                            f"{probe.args}")
    else:
        add("loaded", OK, f"Hermes's own plugin loader ran it, and a probe call of {tool} with a forged key came back "
                          f"uid={probe.args.get('uid')}, channel={probe.args.get('channel')} "
                          f"({probe.args.get('key_origin')}; in a scratch copy of the home)")


def _check_hermes(home: HermesHome, name: str, hermes: str | None, connect_timeout: float,
                  add: Callable[[str, str, str], None]) -> None:
    executable = find_executable(hermes)
    if executable is None:
        # Asked for by name, a missing Hermes is a failure; merely not installed, the check is skipped.
        add("hermes", FAIL if hermes is not None else SKIP, not_found_detail(hermes))
        return
    with tempfile.TemporaryDirectory(prefix="mafiabot-doctor-") as scratch:
        report = run_mcp_test(executable, quiet_copy(home, name, Path(scratch)), name, connect_timeout)
        # The scratch home goes with its log, where Hermes put the body's own words.
        said = _tail(Path(scratch) / MCP_STDERR_LOG)
    if not report.connected:
        add("hermes", FAIL, f"`hermes mcp test {name}` could not connect: {report.problem}"
                            + (f"\nthe body's stderr under Hermes ({MCP_STDERR_LOG}):\n{said}" if said else ""))
    elif TOOL not in report.tools:
        add("hermes", FAIL, f"`hermes mcp test {name}` connected but lists {list(report.tools)}, not '{TOOL}'")
    else:
        add("hermes", OK, f"`hermes mcp test {name}` connected in {report.connect_ms} ms and lists {TOOL} "
                          f"({QUIETLY})")


def _tail(log: Path) -> str:
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(line for line in lines[-STDERR_TAIL_LINES:] if line.strip())


def quiet_copy(home: HermesHome, name: str, scratch: Path) -> HermesHome:
    """A scratch home where Hermes can test the entry without writing into `home`.

    Hermes itself seeds SOUL.md, logs/ and more into the home it runs in, and the body it starts
    would write SOUL.md: so `hermes mcp test` runs in `scratch`, on a copy of config.yaml (and of
    .env, which its ${VAR} placeholders may need) whose entry runs as a probe does (`probe.probe_argv`:
    the body's `--soul off` last, the relay recording into `scratch`).
    """
    doc = load_config(home.config)
    entry = find_entry(doc.data, name)
    if entry is not None:
        command, args, _ = entry_command(entry)
        quiet_args = probe_argv(command, args, scratch)[1:]
        if quiet_args != args:
            entry["args"] = flow_args(quiet_args)
    (scratch / home.config.name).write_text(render(doc), encoding="utf-8")
    secrets = home.path / ENV_FILE
    if secrets.is_file():
        shutil.copyfile(secrets, scratch / ENV_FILE)
        (scratch / ENV_FILE).chmod(0o600)
    return HermesHome(scratch)
