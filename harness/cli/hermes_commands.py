"""`mount`, `unmount` and `doctor`: the body in the Hermes Agent, for an operator (docs/hermes.md).

`mount` checks the entry it is about to write starts and answers the way Hermes will start it
(relay included), then adds or updates its `mcp_servers` entry in the home's config.yaml
(comments, key order, line endings and what mount does not own kept, a backup generation made,
nothing written when nothing changes; `--dry-run` prints the diff instead), and says what the
body will do with SOUL.md (`--soul` chooses); it also installs and enables the Level1 plugin
(`--no-level1` opts out), points a new entry's `--state` at the home (`--state FILE|off`; a remount
keeps the entry's own; without Level1 none unless asked), and with
`--cognition sampling` prints the `sampling:` block it sized and why (harness.hermes_mount.cognition).
`unmount` removes the entry (and the plugin with the last entry it serves), then has the body put
back the persona its SOUL.md replaced, if the body's is still there unedited (exit 1 when it
could not: `unmount:soul_not_restored`). `doctor` runs every check and ends `doctor:passed` when
none failed, `doctor:check_failed` otherwise. Errors get the exit-code table's codes (a malformed
config.yaml is invalid input and is left untouched).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import TextIO

from harness.body import BODY_HELP, ORGANS_HELP
from harness.cli.exit_codes import Status
from harness.cli.hermes_options import DIRECTORY, FILE
from harness.client import BODY_REFUSED_STATUS
from harness.errors import BodyDied, ConfigError, HarnessError
from harness.hermes.locate import LOOKUP_ORDER
from harness.hermes_mount.cognition import (
    CALLS_PER_DRAINED_TURN,
    CALLS_PER_FULL_TURN,
    COGNITIONS,
    DEFAULT_TURNS_PER_MINUTE,
    TURNS_PER_MINUTE_OPTION,
    TURNS_PER_MINUTE_RANGE,
    describe,
)
from harness.hermes_mount.doctor import FAIL, Check, late_server_effect, run_doctor
from harness.hermes_mount.entry import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_NAME,
    DEFAULT_TIMEOUT,
    DISCOVERY_KEY,
    DISCOVERY_RANGE,
    DatabaseState,
    EntrySpec,
    discovery_timeout,
    state_of,
    tool_name,
)
from harness.hermes_mount.home import HermesHome, resolve_home
from harness.hermes_mount.mount import (
    IN_MEMORY,
    STATE_FILE,
    STATE_FOLDER,
    STATE_OFF,
    HomeChange,
    apply_mount,
    apply_plan,
    build_spec,
    finish_unmount,
    mounted_body,
    plan_mount,
    plan_unmount,
    planned_body,
    planned_entry,
)
from harness.hermes_mount.probe import hermes_child_env, probe_entry
from harness.hermes_mount.soul import SOUL_POLICIES, restore_soul, soul_state
from harness.hermes_plugin import KEY_ORIGIN, PLUGIN_NAME

SUGGESTED_DISCOVERY = 5
# Where a doctor line's detail starts: continuation lines of a detail line up under it.
DETAIL_COLUMN = 19


def _home(args: argparse.Namespace) -> HermesHome:
    return resolve_home(args.hermes_home, args.profile)


def check_entry_as_hermes_would(plan: HomeChange, out: TextIO) -> float:
    """Start-up seconds of the plan's entry under Hermes's environment; raises what it did wrong (a body that
    cannot take the Level1 plugin's key_origin included: every call the plugin passed on would be refused)."""
    command, args, env = planned_entry(plan)
    print(f"checking the entry as Hermes will start it: {' '.join([command, *args])}", file=out, flush=True)
    try:
        result = probe_entry(command, args, hermes_child_env(env), run_turn=False)
    except HarnessError as exc:
        # stdout: the progress lines are there, and stderr keeps to the one line of the error itself
        print("the body does not work, so config.yaml was not changed", file=out)
        if isinstance(exc, BodyDied) and exc.exit_code == BODY_REFUSED_STATUS and exc.error_line is not None:
            # It refused what the entry gives it (an argument, a fixture, a store): the mount's input, not a crash.
            raise ConfigError(f"the body refused the entry: {exc.error_line}; "
                              f"config.yaml was not changed") from None
        raise
    print(f"  initialize answered in {result.startup_seconds * 1000:.0f} ms, tools: "
          f"{', '.join(result.tool_names)}", file=out)
    if plan.plugin is not None and plan.plugin.serves and KEY_ORIGIN not in result.turn_arguments:
        raise ConfigError(f"the body's turn takes no {KEY_ORIGIN} ({', '.join(result.turn_arguments) or 'no schema'}), "
                          f"so it would refuse every call the Level1 plugin passes on: rebuild it (make build), or "
                          f"mount --no-level1; config.yaml was not changed")
    return result.startup_seconds


def discovery_advice(plan: HomeChange, startup: float | None) -> str:
    seconds, explicit = discovery_timeout(plan.doc.data)
    source = "as set in config.yaml" if explicit else "Hermes's default"
    measured = f"; the body started in {startup * 1000:.0f} ms" if startup is not None else ""
    advice = f"note: {late_server_effect(seconds, source)}{measured}."
    if seconds < SUGGESTED_DISCOVERY:
        advice += f" On a slow or loaded machine, mount again with --discovery-timeout {SUGGESTED_DISCOVERY}."
    return advice


def runnable_harness() -> str:
    """This harness as the operator can type it again: its name where PATH finds this very script, else
    the path it was started by, else this interpreter running the package (started from Python itself)."""
    script = Path(sys.argv[0])
    if script.name != "mafiabot-harness":
        return f"{sys.executable} -m harness"
    on_path = shutil.which(script.name)
    return script.name if on_path and Path(on_path).resolve() == script.resolve() else str(script)


def print_sampling(spec: EntrySpec, out: TextIO, indent: str = "") -> None:
    """What mount chose for the entry's `sampling:` block and why, when its cognition samples."""
    if spec.sampling is not None and spec.sampling.on:
        assert spec.timeout is not None  # settled
        for line in describe(spec.sampling, spec.timeout):
            print(f"{indent}{line}", file=out)


def cmd_mount(args: argparse.Namespace, out: TextIO) -> Status:
    home = _home(args)
    spec = build_spec(home, args.name, args.body, args.organs, args.timeout, args.connect_timeout, args.record,
                      args.soul, tuple(args.body_arg) if args.body_arg is not None else None, args.compact,
                      args.state, args.cognition, args.sampling_turns_per_minute)
    plan = plan_mount(home, spec, args.discovery_timeout, level1=not args.no_level1)
    spec = plan.spec or spec
    startup = None if args.no_check else check_entry_as_hermes_would(plan, out)
    body = planned_body(plan)
    soul = None if args.no_check else soul_state(body.argv, body.env)
    for note in plan.notes:
        print(f"note: {note}", file=out)
    for warning in plan.warnings:
        print(f"warning: {warning}", file=out)
    if args.dry_run:
        if plan.changed:
            print(f"dry run: {home.config} would change as follows (nothing was written):", file=out)
            print(plan.diff(), file=out, end="")
            _print_plugin_changes(plan, out, "would ")
        else:
            print(f"dry run: '{args.name}' is already mounted as asked in {home.config}; nothing would change",
                  file=out)
        if soul is not None:
            print(f"SOUL.md: {soul.sentence}", file=out)
        print_sampling(spec, out)
        return Status.DONE
    new_profile = home.profile is not None and not home.path.exists()
    backup = apply_mount(plan, args.name)
    if not plan.changed:
        print(f"'{args.name}' is already mounted as asked in {home.config}; nothing changed", file=out)
    else:
        if new_profile:
            print(f"created profile '{home.profile}' at {home.path}", file=out)
        if plan.config_changed:
            kept = f" (the previous file is kept as {backup.name})" if backup else " (a new file)"
            print(f"mounted '{args.name}' in {home.config}{kept}", file=out)
        else:
            print(f"'{args.name}' was already mounted as asked in {home.config}", file=out)
        _print_plugin_changes(plan, out)
    print(f"  command: {spec.command}", file=out)
    print(f"  args:    {' '.join(spec.args)}", file=out)
    print(f"  env:     HERMES_HOME={spec.hermes_home}", file=out)
    print(f"  timeout: {spec.timeout} s per call, connect_timeout {spec.connect_timeout} s", file=out)
    print(f"  the model sees the tool as {tool_name(args.name)}", file=out)
    if isinstance(plan.state, DatabaseState):
        print(f"  sessions: kept in the database {plan.state}, so every body on it, on any machine, continues "
              f"them (--state off: each Hermes session's body starts them afresh)", file=out)
    elif plan.state is not None:
        print(f"  sessions: kept in {plan.state}, so every `hermes chat` of this home continues them "
              f"(--state off: each Hermes session's body starts them afresh)", file=out)
    else:
        print(f"  sessions: in {IN_MEMORY}, so each Hermes session's body starts them afresh (--state FILE keeps "
              "them)", file=out)
    print_sampling(spec, out, indent="  ")
    if args.record:
        print(f"  every Hermes session is recorded as a transcript at {args.record} (then -2, -3, ...)", file=out)
    if plan.plugin is not None and plan.plugin.serves:
        print(f"  Level1: the {PLUGIN_NAME} plugin in {plan.plugin.folder} sets every call's uid, channel and "
              "server from the Hermes session (--no-level1 leaves them to the model)", file=out)
    if soul is not None:
        print(f"  SOUL.md: {soul.sentence}", file=out)
    print(discovery_advice(plan, startup), file=out)
    print(f"next: {runnable_harness()} doctor{home.options(args.name)}", file=out)
    return Status.DONE


def _print_plugin_changes(plan: HomeChange, out: TextIO, mood: str = "") -> None:
    if plan.plugin is not None:
        for change in plan.plugin.describe():
            print(f"Level1: {mood}{change}", file=out)


def _print_sessions_kept(body_argv: tuple[str, ...] | list[str], out: TextIO) -> None:
    """Where the removed body's sessions stay: they hold the users' words, so unmount never deletes them."""
    store = state_of(body_argv)
    if isinstance(store, DatabaseState):
        print(f"sessions: kept in the database {store}; unmount deletes no session: a body mounted again with that "
              "--state continues them", file=out)
    elif store is not None and store.exists():
        print(f"sessions: kept in {store} (with its -wal and -shm files, if any); unmount deletes no session: "
              "a body mounted again with that --state continues them, and removing the files forgets them all",
              file=out)


def cmd_unmount(args: argparse.Namespace, out: TextIO) -> Status:
    home = _home(args)
    body = mounted_body(home, args.name)
    plan, removed = plan_unmount(home, args.name)
    if not removed or body is None:
        print(f"nothing is mounted as '{args.name}' in {home.config}; nothing changed", file=out)
        return Status.DONE
    if args.dry_run:
        print(f"dry run: {home.config} would change as follows (nothing was written):", file=out)
        print(plan.diff(), file=out, end="")
        _print_plugin_changes(plan, out, "would ")
        soul = soul_state(body.argv, body.env)
        if soul is not None:
            print(f"SOUL.md: {soul.sentence}", file=out)
        _print_sessions_kept(body.argv, out)
        return Status.DONE
    backup = apply_plan(plan)
    kept = f" (the previous file is kept as {backup.name})" if backup else ""
    if plan.remove_config:
        print(f"removed '{args.name}' and {home.config}, which mount made and which holds nothing else now{kept}",
              file=out)
    else:
        discovery = ("the " + DISCOVERY_KEY + " mount added was taken out too" if plan.dropped_discovery
                     else f"{DISCOVERY_KEY} was left as it is")
        print(f"removed '{args.name}' from {home.config}{kept}; {discovery}", file=out)
    for note in plan.notes:
        print(f"note: {note}", file=out)
    _print_plugin_changes(plan, out)
    _print_sessions_kept(body.argv, out)
    # After the entry is gone, so that no Hermes starting meanwhile boots the body again.
    try:
        soul = restore_soul(body.argv, body.env)
    except HarnessError as exc:
        print(f"SOUL.md was left as it is: {exc}; the persona the body replaced, if any, is in "
              f"{home.path}/SOUL.md.before-mafiabot.*", file=sys.stderr)
        _print_folders_removed(plan, args.name, out)
        return Status.UNMOUNT_SOUL_NOT_RESTORED
    if soul is not None:
        print(f"SOUL.md: {soul.sentence}", file=out)
    _print_folders_removed(plan, args.name, out)
    return Status.DONE


def _print_folders_removed(plan: HomeChange, name: str, out: TextIO) -> None:
    """Last, once SOUL.md is put back: the folders mount made go only when nothing is left in them."""
    for folder in finish_unmount(plan, name):
        print(f"removed the empty folder {folder}, which mount made", file=out)


def cmd_doctor(args: argparse.Namespace, out: TextIO) -> Status:
    home = _home(args)
    print(f"mafiabot doctor: Hermes home {home.describe()}, server '{args.name}'", file=out, flush=True)

    def show(check: Check) -> None:
        detail = check.detail.replace("\n", "\n" + " " * DETAIL_COLUMN)
        print(f"  {check.status:<5} {check.name:<10} {detail}", file=out, flush=True)

    run = run_doctor(home, args.name, body=args.body, hermes=args.hermes, use_hermes=not args.no_hermes,
                     on_check=show)
    failed = [c for c in run.checks if c.status == FAIL]
    if failed:
        print(f"{len(failed)} check(s) failed: {', '.join(c.name for c in failed)}", file=out)
        return Status.DOCTOR_CHECK_FAILED
    print("all checks passed", file=out)
    return Status.DOCTOR_PASSED


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `mount`, `unmount` and `doctor`."""
    where = argparse.ArgumentParser(add_help=False)
    group = where.add_argument_group("Hermes home")
    group.add_argument("--hermes-home", metavar="DIR", type=DIRECTORY,
                       help="Hermes's home (default: $HERMES_HOME, else ~/.hermes)")
    group.add_argument("--profile", metavar="NAME", help="a Hermes profile: <home>/profiles/NAME (created by mount if missing)")
    group.add_argument("--name", default=DEFAULT_NAME, help=f"the mcp_servers entry (default: {DEFAULT_NAME})")

    mount = commands.add_parser("mount", parents=[where], help="add or update the body's entry in Hermes's config",
                                description="Add or update mcp_servers.NAME in Hermes's config.yaml, keeping "
                                            "the rest of the file (comments included) and a backup.")
    mount.add_argument("--body", metavar="BIN", type=FILE, help=BODY_HELP)
    mount.add_argument("--organs", metavar="FILE", type=FILE, help=ORGANS_HELP)
    mount.add_argument("--timeout", type=int,
                       help=f"seconds Hermes waits for one turn (default: the entry's own, else {DEFAULT_TIMEOUT})")
    mount.add_argument("--connect-timeout", type=int,
                       help=f"seconds Hermes waits to connect (default: the entry's own, "
                            f"else {DEFAULT_CONNECT_TIMEOUT})")
    mount.add_argument("--discovery-timeout", type=float,
                       help=f"also set Hermes's top-level {DISCOVERY_KEY}, {DISCOVERY_RANGE[0]:g} to "
                            f"{DISCOVERY_RANGE[1]:g} s (its default: 1.5 s)")
    mount.add_argument("--body-arg", action="append", metavar="ARG",
                       help="an argument for the body after the ones mount writes (repeatable, e.g. "
                            "--body-arg=--max-sessions --body-arg=50); given, they replace the entry's own, "
                            "which are otherwise kept")
    mount.add_argument("--record", metavar="FILE", type=FILE,
                       help="run the body through the recording relay: each Hermes session becomes a transcript")
    mount.add_argument("--soul", choices=SOUL_POLICIES,
                       help="the body's --soul: keep (its default) writes SOUL.md only where it is missing, "
                            "Hermes's default or the body's own; replace also replaces yours, keeping a "
                            "timestamped backup; off writes none")
    mount.add_argument("--compact", action="store_true",
                       help="the body's --text-block compact: the model reads each turn's output and a one-line "
                            "summary, not the whole trace (structuredContent keeps it)")
    mount.add_argument("--state", metavar="FILE|URL|off", type=FILE.also({STATE_OFF}),
                       help=f"the body's session store (default: the entry's own on a remount; for a new entry "
                            f"<home>/{STATE_FOLDER}/{STATE_FILE}, shared by the home's CLI chats and gateway, or none "
                            "with --no-level1, where the model chooses the key); a postgresql:// URL shares them with "
                            "every host on that database (the dynamic body; no password in the URL: PGPASSFILE); "
                            "off: none, sessions last as long as one body")
    mount.add_argument("--no-level1", action="store_true",
                       help=f"do not install the Level1 plugin ({PLUGIN_NAME}), which sets each turn's uid, channel "
                            "and server from the Hermes session; the model's own values then reach the body")
    mount.add_argument("--cognition", choices=COGNITIONS,
                       help="the body's --cognition: stub (its default) thinks with canned organs; sampling asks "
                            f"Hermes's own model for each pass, {CALLS_PER_FULL_TURN} model calls a full-energy turn "
                            f"and {CALLS_PER_DRAINED_TURN} a drained one, and sizes the entry's sampling: block for it "
                            "(default: the entry's own, else stub)")
    mount.add_argument(TURNS_PER_MINUTE_OPTION, type=int, metavar="N",
                       help=f"with sampling, the full turns a minute Hermes answers before it throttles: max_rpm "
                            f"is N x {CALLS_PER_FULL_TURN}, the brake on a loop spending your model, "
                            f"{TURNS_PER_MINUTE_RANGE[0]} to {TURNS_PER_MINUTE_RANGE[1]} (default: "
                            f"{DEFAULT_TURNS_PER_MINUTE}, {DEFAULT_TURNS_PER_MINUTE * CALLS_PER_FULL_TURN} calls; "
                            "given, max_rpm is written as asked; else the entry's own is kept when larger)")
    mount.add_argument("--dry-run", action="store_true", help="print the diff; write nothing")
    mount.add_argument("--no-check", action="store_true", help="do not start the body before mounting it")
    mount.set_defaults(handler=cmd_mount)

    unmount = commands.add_parser("unmount", parents=[where], help="remove the body's entry from Hermes's config")
    unmount.add_argument("--dry-run", action="store_true", help="print the diff; write nothing")
    unmount.set_defaults(handler=cmd_unmount)

    doctor = commands.add_parser("doctor", parents=[where], help="check the body, its entry, and Hermes's view of it",
                                 description="Exit 0 when no check failed, 1 otherwise (the table below).")
    doctor.add_argument("--body", metavar="BIN", type=FILE, help="check this body executable instead of the mounted entry's")
    doctor.add_argument("--hermes", metavar="BIN", type=FILE, help=f"the hermes executable (default: {LOOKUP_ORDER})")
    doctor.add_argument("--no-hermes", action="store_true", help="skip `hermes mcp test`")
    doctor.set_defaults(handler=cmd_doctor)
