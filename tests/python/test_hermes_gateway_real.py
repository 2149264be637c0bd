"""Level1 under a real Hermes gateway (hermes-agent 0.19.0 in .hermes-venv), fully offline.

The gateway runs as an operator runs it (`hermes -p <profile> gateway run`), with the body mounted
by `mafiabot-harness mount`, the stub model, and Hermes's own IRC platform (plugins/platforms/irc:
standard library only) connected to a stand-in IRC server on 127.0.0.1 (irc_support.IrcStub). A
test speaks in the channel as any nick; the gateway's SessionStore writes that conversation's row
in `<home>/state.db` (source `irc`, the nick as user id, the channel, or the nick in a DM, as chat
id) before the agent runs, and Level1 reads it on the model's `mcp__mafiabot__turn` call.

What it proves: the key the body sees is the gateway session's (platform user, chat, platform),
whatever the model forged; two users in one channel are two sessions; a user's next message in the
same chat continues theirs; a DM is a chat of its own; a `hermes chat` of the same home, run
while the gateway is up (two bodies on one store), is the CLI's session, not a gateway one; and a
channel Hermes shares among its participants (`group_sessions_per_user: false`) is one session keyed
by the channel, not by whoever spoke first (the only user its row names). On Hermes's OpenAI-compatible
API platform (its rows name no user and no chat), a conversation sent whole, as frontends send it, is
a session of its own, keyed by the conversation's Hermes session: neither another client's nor the CLI's.

Invariants:
- HOME and HERMES_HOME are under tmp_path; every socket is on 127.0.0.1.
- The gateway runs in a process group of its own, which is always ended (SIGTERM, then SIGKILL,
  each wait bounded) whatever the test did; no wait is unbounded and none is a sleep.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

import pytest

import harness.hermes_plugin as level1
from harness.cli import main
from hermes_support import (
    HERMES,
    HERMES_RUN_TIMEOUT,
    SCRIPTS,
    StubModel,
    chat_in_profile,
    hermes_env,
    mount_offline,
    offline_config,
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
API_KEY = "k" * 32  # the Bearer key clients give, as an operator's frontend does
# Hermes's shutdown drains its adapters and MCP servers in about a second; this only matters if it hangs.
GATEWAY_STOP_TIMEOUT = 30.0
# Hermes writes its turn count once per turn's end and prints nothing then: how often it is read again.
IDLE_RECHECK = 0.05
# The line Hermes logs once its start-up is over (gateway/run.py, the end of `start`), after the platforms
# connect and after the messages that came during its start-up restore are replayed. A message sent
# between the two is queued and replayed, and on a loaded machine the session of a replayed message was
# seen to stay busy: that user's next message got "Interrupting current task" and never an answer.
STARTED = "gateway.run: Press Ctrl+C to stop"


class Gateway:
    """`hermes -p <profile> gateway run -v` with `platform_env` (its platforms' settings), as a context manager.

    Its output (INFO with -v: "✓ irc connected", ...) is copied to `log` by a reader thread, which also lets
    `wait_for_output` block on a line rather than poll.
    """

    def __init__(self, profile: str, home: Path, root: Path, platform_env: dict[str, str], workdir: Path) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        # A gateway's platform locks (one bot identity per machine) live outside its home: here, the test's.
        self.env = {**hermes_env(home, root), "HERMES_GATEWAY_LOCK_DIR": str(workdir / "locks"), **platform_env}
        self.argv = [str(HERMES), "-p", profile, "gateway", "run", "-v"]
        self.cwd = workdir
        self.log = workdir / "gateway.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self._output = threading.Condition()
        self._lines: list[str] = []
        self._eof = False
        self._reader: threading.Thread | None = None
        self._group_ended = False

    def __enter__(self) -> Gateway:
        self.proc = subprocess.Popen(self.argv, env=self.env, cwd=self.cwd, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        self._reader = threading.Thread(target=self._copy_output, name="gateway-output", daemon=True)
        self._reader.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def _copy_output(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        with self.log.open("wb") as log:
            for raw in self.proc.stdout:
                log.write(raw)
                log.flush()
                with self._output:
                    self._lines.append(raw.decode(errors="replace"))
                    self._output.notify_all()
        with self._output:
            self._eof = True
            self._output.notify_all()

    def wait_for_output(self, fragment: str, bound: float) -> None:
        """Block until a line of the gateway's output holds `fragment`; fail the test after `bound` seconds or
        when the gateway ends first."""
        deadline = time.monotonic() + bound
        with self._output:
            while not any(fragment in line for line in self._lines):
                remaining = deadline - time.monotonic()
                if self._eof or remaining <= 0:
                    pytest.fail(f"no {fragment!r} from the gateway ({'it ended' if self._eof else f'{bound:g} s'}): "
                                f"{''.join(self._lines)[-3000:]}")
                self._output.wait(remaining)

    def wait_until_idle(self, profile_home: Path, bound: float) -> None:
        """Block until the gateway has ended every turn it runs: Hermes writes its count of running agents to
        `<home>/gateway_state.json` at each turn's end, after the reply is sent. A message to a session whose
        turn has not ended yet would interrupt it ("Interrupting current task") instead of starting the next.
        Re-read whenever the gateway prints a line, and every IDLE_RECHECK seconds between; fail after `bound`."""
        state = profile_home / "gateway_state.json"
        deadline = time.monotonic() + bound
        with self._output:
            while (running := _running_agents(state)) != 0:
                remaining = deadline - time.monotonic()
                if self._eof or remaining <= 0:
                    pytest.fail(f"the gateway still runs {running} turn(s) "
                                f"({'it ended' if self._eof else f'after {bound:g} s'}): {''.join(self._lines)[-3000:]}")
                self._output.wait(min(remaining, IDLE_RECHECK))

    def wait_until_started(self, bound: float) -> None:
        """Block until Hermes has ended its start-up (STARTED): a message sent from then on is handled at once."""
        self.wait_for_output(STARTED, bound)

    def output_tail(self) -> str:
        with self._output:
            return "".join(self._lines)[-3000:]

    def stopped_why(self) -> str | None:
        """None while the gateway runs; once it has exited, why, with the end of its output."""
        if self.proc is None or self.proc.poll() is None:
            return None
        return f"the gateway exited ({self.proc.returncode}): {self.output_tail()}"

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
        if self._reader is not None:
            self._reader.join(GATEWAY_STOP_TIMEOUT)  # the pipe's end: every writer of the group is gone
        return self.proc.returncode


def _running_agents(state: Path) -> int | None:
    """Hermes's own count of the turns its gateway runs (gateway/status.py), None before it first writes it."""
    try:
        count = json.loads(state.read_text(encoding="utf-8")).get("active_agents")
    except (FileNotFoundError, json.JSONDecodeError):  # not written yet, or read while Hermes replaces it
        return None
    return int(count) if isinstance(count, int) else None


def free_loopback_port() -> int:
    """A port free on 127.0.0.1 now: Hermes's API platform takes its port from the settings, not from the kernel."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def api_env(port: int) -> dict[str, str]:
    """Hermes's OpenAI-compatible API platform on 127.0.0.1:`port`, with a key (continuing a session needs one)."""
    return {"API_SERVER_ENABLED": "true", "API_SERVER_HOST": "127.0.0.1", "API_SERVER_PORT": str(port),
            "API_SERVER_KEY": API_KEY}


def api_chat(port: int, *texts: str) -> str:
    """One chat completion through the gateway's API, of the conversation `texts` (user, assistant, user, ...),
    sent whole as OpenAI-compatible frontends send it; the Hermes session id it answered in."""
    messages = [{"role": ("user", "assistant")[number % 2], "content": text} for number, text in enumerate(texts)]
    body = json.dumps({"model": "hermes-agent", "messages": messages}).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", data=body, method="POST",
                                     headers={"Content-Type": "application/json", "Authorization": f"Bearer {API_KEY}"})
    with urllib.request.urlopen(request, timeout=HERMES_RUN_TIMEOUT) as response:  # noqa: S310 (http://127.0.0.1 only)
        assert response.status == 200, response.read()
        return str(response.headers["X-Hermes-Session-Id"])


def irc_env(irc: IrcStub) -> dict[str, str]:
    """Hermes's IRC platform, on the stub, in CHANNEL, answering USERS alone."""
    return {"IRC_SERVER": "127.0.0.1", "IRC_PORT": str(irc.port), "IRC_USE_TLS": "false", "IRC_CHANNEL": CHANNEL,
            "IRC_NICKNAME": BOT_NICK, "IRC_ALLOWED_USERS": ",".join(USERS)}


def _signal_group(group: int, signum: signal.Signals) -> None:
    try:
        os.killpg(group, signum)
    except ProcessLookupError:  # the group is already empty
        pass


def say_and_wait(irc: IrcStub, gateway: Gateway, profile_home: Path, nick: str, target: str, text: str,
                 reply: str) -> None:
    """`nick` sends `text` to `target`; returns once the gateway has answered with `reply` where `nick` reads it
    and has ended that turn (the reply is sent before the turn ends)."""
    answered_in = target if target.startswith("#") else nick  # a DM's answer goes to the sender
    irc.say(nick, target, f"{BOT_NICK}: {text}" if target.startswith("#") else text)
    irc.wait_until(lambda lines: reply in privmsgs_to(answered_in, lines), HERMES_RUN_TIMEOUT,
                   f"the gateway's {reply!r} to {nick} in {answered_in}", abort=gateway.stopped_why)
    gateway.wait_until_idle(profile_home, HERMES_RUN_TIMEOUT)


def gateway_session(profile_home: Path, chat: str, user: str | None = None) -> str:
    """The id of the one Hermes session the gateway keeps for `user` in `chat`, or for `chat` (its row, as
    Hermes wrote it)."""
    with sqlite3.connect(profile_home / "state.db") as db:
        rows = db.execute("SELECT id, user_id FROM sessions WHERE source = ? AND chat_id = ?",
                          (PLATFORM, chat)).fetchall()
    found = [session_id for session_id, user_id in rows if user is None or user_id == user]
    assert len(found) == 1, f"Hermes's rows for {user or 'anyone'} in {chat}: {rows}"
    return str(found[0])


def cli_sessions(profile_home: Path) -> list[str]:
    with sqlite3.connect(profile_home / "state.db") as db:
        return [str(row[0]) for row in db.execute("SELECT id FROM sessions WHERE source != ?", (PLATFORM,))]


@pytest.fixture
def homes(tmp_path: Path) -> tuple[Path, Path]:
    """(HOME, the Hermes root): both empty directories under tmp_path."""
    home, root = tmp_path / "home", tmp_path / "hermes-root"
    home.mkdir()
    root.mkdir()
    return home, root


@contextmanager
def gateway_on_irc(homes: tuple[Path, Path], tmp_path: Path, settings: str = ""
                   ) -> Iterator[tuple[StubModel, Path, IrcStub, Gateway]]:
    """The stub model, the profile's home (mounted, `settings` added to its config.yaml), the IRC stub, and the
    gateway once it has joined CHANNEL."""
    home, root = homes
    script = json.loads((SCRIPTS / "forged_key_gateway.json").read_text())
    with StubModel(script, tmp_path / "model") as model, IrcStub() as irc:
        profile_home = mount_offline(root, PROFILE, model.base_url)
        with (profile_home / "config.yaml").open("a", encoding="utf-8") as config:
            config.write(settings)
        with Gateway(PROFILE, home, root, irc_env(irc), tmp_path / "gateway") as gateway:
            irc.wait_for_join(CHANNEL, HERMES_RUN_TIMEOUT, abort=gateway.stopped_why)
            gateway.wait_until_started(HERMES_RUN_TIMEOUT)
            yield model, profile_home, irc, gateway


def test_level1_under_a_real_gateway_the_key_is_the_platform_user_and_chat_whatever_the_model_forged(
        body_exe, homes, tmp_path):
    home, root = homes
    with gateway_on_irc(homes, tmp_path) as (model, profile_home, irc, gateway):
        say_and_wait(irc, gateway, profile_home, "alice", CHANNEL, "who is the godfather?", "reply one")
        say_and_wait(irc, gateway, profile_home, "bob", CHANNEL, "who is the godfather?", "reply two")
        say_and_wait(irc, gateway, profile_home, "alice", CHANNEL, "and now?", "reply three")
        say_and_wait(irc, gateway, profile_home, "alice", BOT_NICK, "just between us", "reply four")
        # The operator's CLI on the same home, while the gateway's body holds the same store.
        cli = chat_in_profile(PROFILE, home, root, tmp_path / "cwd")
        assert cli.returncode == 0, cli.stdout + cli.stderr
        assert gateway.stop() in (0, 1), gateway.output_tail()
        calls = model.agent_calls()
    alice_in_channel, bob_in_channel, alice_again, alice_in_dm, in_cli = tool_results(calls)

    # The model forged carol/#backroom/discord, then bob's and alice's keys in turn: the body saw the gateway's.
    def gateway_key(user: str, chat: str) -> dict[str, str]:
        session_id = gateway_session(profile_home, chat, user)
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


def test_level1_under_a_real_gateway_a_channel_hermes_shares_is_the_channel_s_session_not_its_first_speaker_s(
        body_exe, homes, tmp_path):
    # One Hermes session for all of a channel.
    with gateway_on_irc(homes, tmp_path, "group_sessions_per_user: false\n") as (model, profile_home, irc, gateway):
        say_and_wait(irc, gateway, profile_home, "alice", CHANNEL, "who is the godfather?", "reply one")
        say_and_wait(irc, gateway, profile_home, "bob", CHANNEL, "who is the godfather?", "reply two")
        assert gateway.stop() in (0, 1), gateway.output_tail()
        calls = model.agent_calls()
    alice_first, then_bob = tool_results(calls)
    # Hermes's one row for the channel names alice, who spoke first; bob's turn is not alice's, it is the channel's.
    shared = gateway_session(profile_home, CHANNEL)
    for trace in (alice_first, then_bob):
        assert trace["session"] == {"uid": f"chat:{CHANNEL}", "channel": CHANNEL, "server": PLATFORM,
                                    "origin": f"level1 {PLATFORM} session={shared}"}
    assert (alice_first["turn"], then_bob["turn"]) == (1, 2), "the channel's one session, as Hermes keeps it"


def test_level1_under_a_real_gateway_an_api_conversation_is_its_own_session_not_the_cli_s(body_exe, homes, tmp_path):
    home, root = homes
    port = free_loopback_port()
    script = json.loads((SCRIPTS / "forged_key_gateway.json").read_text())
    with StubModel(script, tmp_path / "model") as model:
        profile_home = mount_offline(root, PROFILE, model.base_url)
        with Gateway(PROFILE, home, root, api_env(port), tmp_path / "gateway") as gateway:
            gateway.wait_for_output("✓ api_server connected", HERMES_RUN_TIMEOUT)
            gateway.wait_until_started(HERMES_RUN_TIMEOUT)
            first = api_chat(port, "who is the godfather?")
            continued = api_chat(port, "who is the godfather?", "reply one", "and now?")
            other_client = api_chat(port, "who is the consigliere?")
            cli = chat_in_profile(PROFILE, home, root, tmp_path / "cwd")
            assert cli.returncode == 0, cli.stdout + cli.stderr
            assert gateway.stop() in (0, 1), gateway.output_tail()
        calls = model.agent_calls()
    # Hermes names an API conversation by its system prompt and first message (api_server.py,
    # _derive_chat_session_id): the whole conversation sent again is the same Hermes session.
    assert continued == first and other_client != first
    in_first, in_continued, in_other, in_cli = tool_results(calls)
    # Hermes's API rows name no user and no chat: each conversation is the chat, as Hermes binds it.
    for trace, session_id in ((in_first, first), (in_continued, first), (in_other, other_client)):
        assert trace["session"] == {"uid": f"chat:{session_id}", "channel": session_id, "server": "api_server",
                                    "origin": f"level1 api_server session={session_id}"}
    assert [trace["turn"] for trace in (in_first, in_continued, in_other, in_cli)] == [1, 2, 1, 1]
    assert in_cli["session"] | {"origin": ""} == {"uid": PROFILE, "channel": "cli", "origin": "",
                                                  "server": level1.home_server(profile_home.resolve())}


def test_two_gateway_hosts_on_one_database_continue_a_user_s_session_one_after_the_other(body_exe, pg_url, tmp_path):
    """Two "machines": each its own HOME and Hermes home, its gateway on the same IRC network, its body on one
    PostgreSQL database (docs/scale-out.md). alice's message to the first is her turn 1; once it is gone, her next
    message to the second is turn 2 of the same session, her first turn's recall in it."""
    if not (body_exe.parent / "mafiabot-dynamic").is_file():
        pytest.skip("needs mafiabot-dynamic (make build-dynamic): only the dynamic build links libpq")
    script = json.loads((SCRIPTS / "forged_key_gateway.json").read_text())
    with StubModel(script, tmp_path / "model") as model, IrcStub() as irc:
        for joins, (machine, reply) in enumerate((("a", "reply one"), ("b", "reply two")), start=1):
            home, root = tmp_path / machine / "home", tmp_path / machine / "hermes-root"
            home.mkdir(parents=True)
            profile_home = root / "profiles" / PROFILE
            profile_home.mkdir(parents=True)
            (profile_home / "config.yaml").write_text(offline_config(model.base_url), encoding="utf-8")
            assert main(["mount", "--hermes-home", str(root), "--profile", PROFILE, "--discovery-timeout", "30",
                         "--state", pg_url]) == 0
            with Gateway(PROFILE, home, root, irc_env(irc), tmp_path / machine / "gateway") as gateway:
                # The network is the same for both: the second host has joined when a second JOIN arrives
                irc.wait_until(lambda lines, joins=joins: sum(line.command == "JOIN" for line in lines) >= joins,
                               HERMES_RUN_TIMEOUT, f"host {machine} to join {CHANNEL}", abort=gateway.stopped_why)
                say_and_wait(irc, gateway, profile_home, "alice", CHANNEL, "who is the godfather?", reply)
                assert gateway.stop() in (0, 1), gateway.output_tail()
        calls = model.agent_calls()
    on_a, on_b = tool_results(calls)
    assert on_a["session"] | {"origin": ""} == on_b["session"] | {"origin": ""} == {
        "uid": "alice", "channel": CHANNEL, "server": PLATFORM, "origin": ""}
    assert (on_a["turn"], on_b["turn"]) == (1, 2), "the second host continued the first host's session"
    assert on_b["energy"] < on_a["energy"]
    assert "recall: 'what did carol say in the back room?'" in on_b["steps"][1]["detail"]
