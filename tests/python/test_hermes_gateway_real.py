"""Level1 under a real Hermes gateway (hermes-agent 0.19.0 in .hermes-venv), fully offline.

The gateway runs as an operator runs it (`hermes -p <profile> gateway run`), with the body mounted
by `mafiabot-harness mount`, the stub model, and Hermes's own IRC platform (plugins/platforms/irc:
standard library only) connected to a stand-in IRC server on 127.0.0.1 (irc_support.IrcStub). A
test speaks in the channel as any nick; the gateway's SessionStore writes that conversation's row
in `<home>/state.db` (source `irc`, the nick as user id, the channel, or the nick in a DM, as chat
id) before the agent runs, and Level1 reads it on the model's `mcp__mafiabot__turn` call.

What it proves: the key the body sees is the gateway session's (platform user, chat, platform),
whatever the model forged; two users in one channel are two sessions; a user's next message in the
same chat continues theirs; a DM is a chat of its own; and a `hermes chat` of the same home, run
while the gateway is up (two bodies on one store), is the CLI's session, not a gateway one.

Invariants:
- HOME and HERMES_HOME are under tmp_path; every socket is on 127.0.0.1.
- The gateway runs in a process group of its own, which is always ended (SIGTERM, then SIGKILL,
  each wait bounded) whatever the test did; no wait is unbounded and none is a sleep.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
from pathlib import Path
from types import TracebackType

import pytest

import harness.hermes_plugin as level1
from hermes_support import (
    HERMES,
    HERMES_RUN_TIMEOUT,
    SCRIPTS,
    StubModel,
    chat_in_profile,
    hermes_env,
    mount_offline,
    project_hermes,
    requires_hermes,
    tool_results,
)
from irc_support import IrcStub, privmsgs_to

pytestmark = [*requires_hermes, pytest.mark.usefixtures(project_hermes.__name__)]
PROFILE = "tester"
PLATFORM = "irc"
CHANNEL = "#mafia"
BOT_NICK = "hermes-bot"
USERS = ("alice", "bob")
# Hermes's shutdown drains its adapters and MCP servers in about a second; this only matters if it hangs.
GATEWAY_STOP_TIMEOUT = 30.0


class Gateway:
    """`hermes -p <profile> gateway run` against the IRC stub, as a context manager."""

    def __init__(self, profile: str, home: Path, root: Path, irc: IrcStub, workdir: Path) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.env = {**hermes_env(home, root), "IRC_SERVER": "127.0.0.1", "IRC_PORT": str(irc.port),
                    "IRC_USE_TLS": "false", "IRC_CHANNEL": CHANNEL, "IRC_NICKNAME": BOT_NICK,
                    "IRC_ALLOWED_USERS": ",".join(USERS)}
        self.argv = [str(HERMES), "-p", profile, "gateway", "run"]
        self.cwd = workdir
        self.log = workdir / "gateway.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self._group_ended = False

    def __enter__(self) -> Gateway:
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(self.argv, env=self.env, cwd=self.cwd, stdin=subprocess.DEVNULL,
                                         stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def stopped_why(self) -> str | None:
        """None while the gateway runs; once it has exited, why, with the end of its log."""
        if self.proc is None or self.proc.poll() is None:
            return None
        return f"the gateway exited ({self.proc.returncode}): {self.log.read_text(errors='replace')[-3000:]}"

    def stop(self) -> int | None:
        """SIGTERM to the whole group (the gateway and the bodies it started); SIGKILL to what outlives the bound."""
        if self.proc is None or self._group_ended:
            return None if self.proc is None else self.proc.returncode
        group = self.proc.pid  # start_new_session: the group's id is the gateway's pid
        if self.proc.poll() is None:
            _signal_group(group, signal.SIGTERM)
            try:
                self.proc.wait(GATEWAY_STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                _signal_group(group, signal.SIGKILL)
                self.proc.wait(GATEWAY_STOP_TIMEOUT)
        _signal_group(group, signal.SIGKILL)  # a body the gateway left behind
        self._group_ended = True  # the group's id may be reused once empty: it is never signalled again
        return self.proc.returncode


def _signal_group(group: int, signum: signal.Signals) -> None:
    try:
        os.killpg(group, signum)
    except ProcessLookupError:  # the group is already empty
        pass


def say_and_wait(irc: IrcStub, gateway: Gateway, nick: str, target: str, text: str, reply: str) -> None:
    """`nick` sends `text` to `target`; returns once the gateway has answered with `reply` where `nick` reads it."""
    answered_in = target if target.startswith("#") else nick  # a DM's answer goes to the sender
    irc.say(nick, target, f"{BOT_NICK}: {text}" if target.startswith("#") else text)
    irc.wait_until(lambda lines: reply in privmsgs_to(answered_in, lines), HERMES_RUN_TIMEOUT,
                   f"the gateway's {reply!r} to {nick} in {answered_in}", abort=gateway.stopped_why)


def gateway_session(profile_home: Path, user: str, chat: str) -> str:
    """The id of the one Hermes session the gateway keeps for `user` in `chat` (its row, as Hermes wrote it)."""
    with sqlite3.connect(profile_home / "state.db") as db:
        rows = db.execute("SELECT id FROM sessions WHERE source = ? AND user_id = ? AND chat_id = ?",
                          (PLATFORM, user, chat)).fetchall()
    assert len(rows) == 1, f"Hermes's rows for {user} in {chat}: {rows}"
    return str(rows[0][0])


def cli_sessions(profile_home: Path) -> list[str]:
    with sqlite3.connect(profile_home / "state.db") as db:
        return [str(row[0]) for row in db.execute("SELECT id FROM sessions WHERE source != ?", (PLATFORM,))]


def test_level1_under_a_real_gateway_the_key_is_the_platform_user_and_chat_whatever_the_model_forged(
        body_exe, tmp_path):
    home, root = tmp_path / "home", tmp_path / "hermes-root"
    home.mkdir()
    root.mkdir()
    script = json.loads((SCRIPTS / "forged_key_gateway.json").read_text())
    with StubModel(script, tmp_path / "model") as model, IrcStub() as irc:
        profile_home = mount_offline(root, PROFILE, model.base_url)
        with Gateway(PROFILE, home, root, irc, tmp_path / "gateway") as gateway:
            irc.wait_for_join(CHANNEL, HERMES_RUN_TIMEOUT, abort=gateway.stopped_why)
            say_and_wait(irc, gateway, "alice", CHANNEL, "who is the godfather?", "reply one")
            say_and_wait(irc, gateway, "bob", CHANNEL, "who is the godfather?", "reply two")
            say_and_wait(irc, gateway, "alice", CHANNEL, "and now?", "reply three")
            say_and_wait(irc, gateway, "alice", BOT_NICK, "just between us", "reply four")
            # The operator's CLI on the same home, while the gateway's body holds the same store.
            cli = chat_in_profile(PROFILE, home, root, tmp_path / "cwd")
            assert cli.returncode == 0, cli.stdout + cli.stderr
            assert gateway.stop() in (0, 1), gateway.log.read_text(errors="replace")[-3000:]
        calls = model.agent_calls()
    alice_in_channel, bob_in_channel, alice_again, alice_in_dm, in_cli = tool_results(calls)

    # The model forged carol/#backroom/discord, then bob's and alice's keys in turn: the body saw the gateway's.
    def gateway_key(user: str, chat: str) -> dict[str, str]:
        session_id = gateway_session(profile_home, user, chat)
        return {"uid": user, "channel": chat, "server": PLATFORM, "origin": f"level1 {PLATFORM} session={session_id}"}

    assert alice_in_channel["session"] == gateway_key("alice", CHANNEL)
    assert bob_in_channel["session"] == gateway_key("bob", CHANNEL)
    assert alice_again["session"] == gateway_key("alice", CHANNEL)
    # Hermes keeps a DM's chat as the sender's nick: a chat, and so a session, of its own.
    assert alice_in_dm["session"] == gateway_key("alice", "alice")
    # Two users in one channel are two sessions; alice's next message there is turn 2 of hers.
    assert [trace["turn"] for trace in (alice_in_channel, bob_in_channel, alice_again, alice_in_dm)] == [1, 1, 2, 1]
    assert alice_again["energy"] < alice_in_channel["energy"]
    assert "recall: 'what did carol say in the back room?'" in alice_again["steps"][1]["detail"]
    for first_turn in (bob_in_channel, alice_in_dm):
        assert first_turn["steps"][1]["detail"].endswith("recall: nothing"), "no other session's memory"

    # The CLI chat of the same home is the CLI's session, a first turn: no gateway session's key or state.
    cli_session, = cli_sessions(profile_home)
    assert in_cli["session"] == {"uid": PROFILE, "channel": "cli", "server": level1.home_server(profile_home.resolve()),
                                 "origin": f"level1 cli session={cli_session}"}
    assert in_cli["turn"] == 1
