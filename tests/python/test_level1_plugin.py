"""The Level1 plugin's middleware (harness/hermes_plugin): the key it sets from the Hermes session, whatever
the model wrote.

The state.db rows are written by Hermes's own `hermes_state.SessionDB` (its interpreter, its schema), so the
plugin reads exactly what Hermes 0.19.0 writes; the later tests load the installed plugin through Hermes's own
plugin loader and middleware chain. The key-part rule is written twice, in the plugin (`key_part`) and in the
body (turn_tool.adb): the last test holds them to one another on the real body.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

import harness.hermes_plugin as level1
from harness.cli import main
from harness.client import BodyClient
from hermes_support import HERMES
from test_mount import home  # noqa: F401 (fixtures: an empty Hermes home)

HERMES_PYTHON = HERMES.parent / "python"
needs_hermes_python = pytest.mark.skipif(not HERMES_PYTHON.exists(), reason=f"no Hermes interpreter at {HERMES_PYTHON}")
TOOL = "mcp__mafiabot__turn"
FORGED = {"input": "What does Bob remember?", "uid": "bob", "channel": "bobs-dm", "server": "telegram"}

# Rows as Hermes writes them: a gateway session (with a thread), one without a thread, a CLI session, a
# delegated sub-agent of the gateway session and one of the CLI session (an agent's own row has no user:
# Hermes writes user_id=None for agents), the other local sources, and sources that name no user: Hermes's
# API server (two conversations), a cron job, and a chain of sub-agents deeper than the plugin walks.
DEEP = level1.MAX_PARENT_DEPTH + 1
SESSIONS = [
    {"session_id": "tg-1", "source": "telegram", "user_id": "4242", "chat_id": "-1001", "thread_id": "17"},
    {"session_id": "dc-1", "source": "discord", "user_id": "alice#1", "chat_id": "guild-7"},
    {"session_id": "cli-1", "source": "cli"},
    {"session_id": "cli-2", "source": "cli"},
    {"session_id": "child-1", "source": "telegram", "parent_session_id": "tg-1"},
    {"session_id": "sub-1", "source": "subagent", "parent_session_id": "cli-1"},
    *({"session_id": f"{source}-1", "source": source} for source in ("tui", "tool", "acp")),
    {"session_id": "api-1", "source": "api_server"},
    {"session_id": "api-2", "source": "api_server"},
    {"session_id": "cron-1", "source": "cron"},
    *({"session_id": f"deep-{n}", "source": "subagent", "parent_session_id": f"deep-{n - 1}" if n else "cli-1"}
      for n in range(DEEP)),
]


def hermes_state_db(path: Path, sessions: list[dict[str, Any]]) -> Path:
    """A state.db written by Hermes's own SessionDB.create_session."""
    script = ("import json, sys\nfrom pathlib import Path\nfrom hermes_state import SessionDB\n"
              "db = SessionDB(Path(sys.argv[1]))\n"
              "for row in json.loads(sys.argv[2]):\n    db.create_session(**row)\ndb.close()\n")
    done = subprocess.run([str(HERMES_PYTHON), "-c", script, str(path), json.dumps(sessions)], capture_output=True,
                          text=True, timeout=60, env={"HOME": str(path.parent), "HERMES_HOME": str(path.parent)})
    assert done.returncode == 0, done.stderr
    return path


@pytest.fixture
def populated(home: Path) -> Path:
    if not HERMES_PYTHON.exists():
        pytest.skip(f"no Hermes interpreter at {HERMES_PYTHON}")
    hermes_state_db(home / level1.STATE_DB, SESSIONS)
    return home


def call(home: Path, session_id: str, tool: str = TOOL, args: dict[str, Any] | None = None,
         profile: str = "tester") -> dict[str, Any] | None:
    callback = level1.middleware(home, profile, {TOOL: "mafiabot"})
    given = dict(FORGED if args is None else args)
    return callback(tool_name=tool, args=given, original_args=dict(given), session_id=session_id, task_id="t",
                    tool_call_id="c1", turn_id="1", api_request_id="", telemetry_schema_version="hermes.observer.v1")


def test_a_gateway_session_is_keyed_by_its_platform_user_and_chat_not_by_what_the_model_wrote(populated):
    result = call(populated, "tg-1")
    assert result is not None
    assert result["args"] == {"input": FORGED["input"], "uid": "4242", "channel": "-1001/17", "server": "telegram",
                              "key_origin": "level1 telegram session=tg-1"}
    assert call(populated, "dc-1")["args"]["channel"] == "guild-7", "no thread: the chat alone"


def test_a_delegated_agent_inherits_its_parent_gateway_session_s_key(populated):
    assert call(populated, "child-1")["args"] | {"key_origin": ""} == (
        call(populated, "tg-1")["args"] | {"key_origin": ""})


def test_a_cli_session_is_keyed_by_profile_and_home_and_the_hermes_session_is_only_the_origin(populated):
    args = call(populated, "cli-1")["args"]
    assert (args["uid"], args["channel"]) == ("tester", "cli")
    assert args["server"] == level1.home_server(populated) and args["server"].startswith("hermes-")
    assert args["key_origin"] == "level1 cli session=cli-1"
    # Another chat of the same home is the same session; the same profile name in another home is not.
    later = call(populated, "cli-2")["args"]
    assert {k: later[k] for k in ("uid", "channel", "server")} == {k: args[k] for k in ("uid", "channel", "server")}
    assert level1.home_server(populated.parent / "other-home") != args["server"]


def key_of(result: dict[str, Any] | None) -> tuple[str, str, str]:
    assert result is not None
    return result["args"]["uid"], result["args"]["channel"], result["args"]["server"]


def test_every_local_source_and_a_cli_sub_agent_are_the_profile_s_one_session(populated):
    profile_key = ("tester", "cli", level1.home_server(populated))
    for session_id in ("cli-1", "tui-1", "tool-1", "acp-1", "sub-1"):
        assert key_of(call(populated, session_id)) == profile_key, session_id
    assert call(populated, "sub-1")["args"]["key_origin"] == "level1 cli session=sub-1"


def test_a_session_naming_no_user_and_not_local_is_one_of_its_own_never_the_profile_s(populated):
    """A cron job writes no user: its turns must not read the operator's recall, nor share another's."""
    profile_key = key_of(call(populated, "cli-1"))
    cron = key_of(call(populated, "cron-1"))
    assert cron == ("session:cron-1", "cron", level1.home_server(populated))
    assert call(populated, "cron-1")["args"]["key_origin"] == (
        "level1 cron session=cron-1 (no user or chat: a session of its own)")
    assert key_of(call(populated, "cron-1")) == cron, "the same session is the same key"
    others = {cron, key_of(call(populated, "api-1")), key_of(call(populated, "api-2")),
              key_of(call(populated, f"deep-{DEEP - 1}"))}
    assert len(others) == 4 and profile_key not in others
    assert key_of(call(populated, f"deep-{DEEP - 1}"))[0] == f"session:deep-{DEEP - level1.MAX_PARENT_DEPTH}", (
        "a chain longer than the walk is keyed by the last row read, not taken for its root's")


def test_no_row_no_state_db_and_no_session_id_give_a_session_of_its_own(populated, home, tmp_path):
    profile_key = key_of(call(populated, "cli-1"))
    missing = call(populated, "never-written")["args"]
    assert (missing["uid"], missing["channel"], missing["server"]) == (
        "session:never-written", "unknown", level1.home_server(populated))
    assert missing["key_origin"] == "level1 unknown session=never-written (no session row: a session of its own)"
    fresh = tmp_path / "fresh-home"
    fresh.mkdir()
    assert key_of(call(fresh, "s"))[0] == "session:s"
    assert not (fresh / level1.STATE_DB).exists(), "reading must never create Hermes's database"
    unnamed = {key_of(call(populated, "")) for _ in range(2)}
    assert len(unnamed) == 2 and profile_key not in unnamed, "no session id: each call alone"
    assert all(uid.startswith("session:call-") for uid, _, _ in unnamed)


@pytest.mark.parametrize("damage", ["corrupt", "locked", "not-hermes"])
def test_an_unreadable_state_db_gives_a_session_of_its_own_and_one_log_line(home, caplog, damage):
    db = home / level1.STATE_DB
    if damage == "corrupt":
        db.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4000)
    else:
        with sqlite3.connect(db) as setup:
            setup.execute("CREATE TABLE other (x)" if damage == "not-hermes"
                          else "CREATE TABLE sessions (id TEXT, source TEXT, user_id TEXT, chat_id TEXT, "
                               "thread_id TEXT, parent_session_id TEXT)")
    holder = None
    if damage == "locked":
        holder = sqlite3.connect(db, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")  # a rollback-journal database: readers wait, then give up
    try:
        with caplog.at_level(logging.WARNING, logger=level1.__name__):
            result = call(home, "tg-1")
    finally:
        if holder is not None:
            holder.close()
    assert result is not None
    args = result["args"]
    assert (args["uid"], args["channel"], args["server"]) == ("session:tg-1", "unknown", level1.home_server(home))
    assert args["key_origin"].startswith("level1 unknown session=tg-1 (state.db unreadable: ")
    [record] = caplog.records
    assert "\n" not in record.getMessage() and str(db) in record.getMessage()


def test_other_tools_and_other_servers_pass_untouched(populated):
    assert call(populated, "tg-1", tool="terminal") is None
    assert call(populated, "tg-1", tool="mcp__other__turn") is None
    assert call(populated, "tg-1", tool="mcp__mafiabot__other") is None


def test_arguments_the_model_left_out_are_not_invented_and_unknown_ones_stay_for_the_body_to_refuse(populated):
    args = call(populated, "tg-1", args={"input": "hi", "extra": 1})["args"]
    assert args["extra"] == 1 and args["uid"] == "4242"
    assert call(populated, "tg-1", args={})["args"]["uid"] == "4242"


def gateway_key_of(home: Path, session_id: str) -> tuple[str, str, str]:
    """(uid, channel, server) Level1 sets for a call of the session, checking its origin names the platform."""
    args = call(home, session_id)["args"]
    assert args["key_origin"] == f"level1 {args['server']} session={session_id}"
    return args["uid"], args["channel"], args["server"]


def gateway_sessions(home: Path, messages: list[dict[str, Any]]) -> list[str]:
    """The session ids Hermes's own gateway SessionStore gives `messages` (SessionSource fields, and the
    store's `group_sessions_per_user` / `thread_sessions_per_user`), its rows written to <home>/state.db as
    the gateway writes them (with the session key Hermes builds)."""
    script = ("import json, sys\nfrom pathlib import Path\nfrom gateway.config import GatewayConfig, Platform\n"
              "from gateway.session import SessionSource, SessionStore\nids = []\n"
              "for message in json.loads(sys.argv[2]):\n"
              "    config = GatewayConfig(group_sessions_per_user=message.pop('group_sessions_per_user', True),\n"
              "                           thread_sessions_per_user=message.pop('thread_sessions_per_user', False))\n"
              "    store = SessionStore(Path(sys.argv[1]) / 'sessions', config)\n"
              "    source = SessionSource(platform=Platform(message.pop('platform')), **message)\n"
              "    ids.append(store.get_or_create_session(source).session_id)\n"
              "print(json.dumps(ids))\n")
    done = subprocess.run([str(HERMES_PYTHON), "-c", script, str(home), json.dumps(messages)], capture_output=True,
                          text=True, timeout=60, env={"HOME": str(home), "HERMES_HOME": str(home)})
    assert done.returncode == 0, done.stderr
    return [str(session_id) for session_id in json.loads(done.stdout.splitlines()[-1])]


@needs_hermes_python
def test_a_session_hermes_shares_among_a_chat_s_participants_is_the_chat_s_not_its_first_speaker_s(home):
    topic = {"platform": "telegram", "chat_id": "-1001", "chat_type": "group", "thread_id": "17"}
    ids = gateway_sessions(home, [
        {**topic, "user_id": "4242"}, {**topic, "user_id": "777"},  # a forum topic: shared by default
        {**topic, "user_id": "4242", "thread_sessions_per_user": True},  # the same topic, isolated per user
        {"platform": "telegram", "chat_id": "-1001", "chat_type": "group", "user_id": "4242"},
        {"platform": "telegram", "chat_id": "4242", "chat_type": "dm", "user_id": "4242"},
        {"platform": "discord", "chat_id": "guild-7", "chat_type": "group", "user_id": "alice",
         "group_sessions_per_user": False},
        {"platform": "signal", "chat_id": "grp", "chat_type": "group", "user_id": "+100", "user_id_alt": "uuid-1"}])
    first_in_topic, second_in_topic, own_in_topic, own_in_group, dm, shared_group, signal_group = ids
    assert first_in_topic == second_in_topic, "Hermes gives the topic's participants one session"

    # Its row names 4242, who spoke first: keyed by that user, 777's turns would be 4242's, and the key that
    # of 4242's own session in the topic once the operator isolates topics per user.
    assert gateway_key_of(home, first_in_topic) == ("chat:-1001", "-1001/17", "telegram")
    assert gateway_key_of(home, own_in_topic) == ("4242", "-1001/17", "telegram")
    assert gateway_key_of(home, shared_group) == ("chat:guild-7", "guild-7", "discord")
    # Sessions of one participant stay theirs: isolated per user (Signal's key ends in the alternate id), and DMs.
    assert gateway_key_of(home, own_in_group) == ("4242", "-1001", "telegram")
    assert gateway_key_of(home, dm) == ("4242", "4242", "telegram")
    assert gateway_key_of(home, signal_group) == ("+100", "grp", "signal")


@needs_hermes_python
def test_an_api_conversation_is_its_own_session_neither_the_cli_s_nor_another_client_s(home):
    # Hermes's API platform writes rows with no user and no chat; a compression continues one under a new id.
    hermes_state_db(home / level1.STATE_DB, [{"session_id": "api-1", "source": "api_server"},
                                             {"session_id": "api-2", "source": "api_server"},
                                             {"session_id": "api-1b", "source": "api_server",
                                              "parent_session_id": "api-1"},
                                             {"session_id": "cli-1", "source": "cli"}])

    assert gateway_key_of(home, "api-1") == ("chat:api-1", "api-1", "api_server")
    assert gateway_key_of(home, "api-2") == ("chat:api-2", "api-2", "api_server")
    assert gateway_key_of(home, "api-1b") == gateway_key_of(home, "api-1"), "a compression continues its session"
    cli = call(home, "cli-1")["args"]
    assert (cli["uid"], cli["channel"], cli["server"]) == ("tester", "cli", level1.home_server(home))


def test_a_state_db_without_the_session_key_column_keys_a_gateway_session_by_its_user(home):
    with closing(sqlite3.connect(home / level1.STATE_DB)) as db, db:
        db.execute("CREATE TABLE sessions (id TEXT, source TEXT, user_id TEXT, chat_id TEXT, thread_id TEXT, "
                   "parent_session_id TEXT)")
        db.execute("INSERT INTO sessions VALUES ('old-1', 'telegram', '4242', '-1001', '17', NULL)")
    args = call(home, "old-1")["args"]
    assert (args["uid"], args["channel"], args["server"]) == ("4242", "-1001/17", "telegram")


@pytest.mark.parametrize(("value", "kept"), [("alice", True), ("", False), ("x" * 256, True), ("x" * 257, False),
                                             ("é" * 129, False), ("tab\there", False), ("del\x7f", False),
                                             ("lone\ud800", False), ("ünï", True)])
def test_a_key_part_the_body_would_refuse_becomes_a_distinct_valid_one(value, kept):
    part = level1.key_part(value)
    assert (part == value) is kept
    if not kept:
        assert part.startswith("sha256:") and len(part) == 7 + 64
        assert part != level1.key_part(value + "y")


def test_a_gateway_id_too_long_for_the_body_is_hashed_not_cut(home):
    if not HERMES_PYTHON.exists():
        pytest.skip(f"no Hermes interpreter at {HERMES_PYTHON}")
    hermes_state_db(home / level1.STATE_DB, [{"session_id": "s", "source": "slack", "user_id": "u" * 300,
                                              "chat_id": "c"}])
    args = call(home, "s")["args"]
    assert args["uid"] == level1.key_part("u" * 300) and args["channel"] == "c"


def test_no_user_or_chat_id_can_spell_a_key_the_plugin_derives(home):
    if not HERMES_PYTHON.exists():
        pytest.skip(f"no Hermes interpreter at {HERMES_PYTHON}")
    long_id = "u" * 300
    hashed = level1.key_part(long_id)
    hermes_state_db(home / level1.STATE_DB, [
        {"session_id": "victim", "source": "slack", "user_id": long_id, "chat_id": "c"},
        {"session_id": "forger", "source": "slack", "user_id": hashed, "chat_id": "c"},
        {"session_id": "api", "source": "api_server"},
        {"session_id": "chat-forger", "source": "api_server", "user_id": "chat:api", "chat_id": "api"},
        {"session_id": "escaped", "source": "slack", "user_id": "raw:" + hashed, "chat_id": "sha256:" + "0" * 64}])
    keys = {sid: call(home, sid)["args"] for sid in ("victim", "forger", "api", "chat-forger", "escaped")}
    uids = {sid: (args["uid"], args["channel"], args["server"]) for sid, args in keys.items()}
    assert uids["victim"][0] == hashed and uids["forger"][0] == "raw:" + hashed
    assert uids["api"][0] == "chat:api" and uids["chat-forger"][0] == "raw:chat:api"
    assert uids["escaped"][:2] == ("raw:raw:" + hashed, "raw:sha256:" + "0" * 64)
    assert len(set(uids.values())) == len(uids)
    assert all(level1.key_part(part) == part for key in uids.values() for part in key), "each part stays valid"


# --- the installed plugin, loaded the way Hermes loads it ---------------------------------------------------


class FakeContext:
    profile_name = "work"

    def __init__(self) -> None:
        self.middleware: list[tuple[str, Any]] = []

    def register_middleware(self, kind: str, callback: Any) -> None:
        self.middleware.append((kind, callback))


def load_installed(home: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The installed plugin imported as Hermes imports it (hermes_cli/plugins.py, _load_directory_module)."""
    init = home / "plugins" / level1.PLUGIN_NAME / "__init__.py"
    name = "hermes_plugins.mafiabot_level1"
    spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(init.parent)])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


@needs_hermes_python
def test_the_installed_copy_registers_one_tool_request_middleware_for_the_servers_mount_named(home, body_exe,
                                                                                              monkeypatch):
    hermes_state_db(home / level1.STATE_DB, [{"session_id": "s", "source": "cli"}])
    assert main(["mount", "--hermes-home", str(home), "--no-check"]) == 0
    assert main(["mount", "--hermes-home", str(home), "--no-check", "--name", "second"]) == 0
    ctx = FakeContext()
    load_installed(home, monkeypatch).register(ctx)
    [(kind, callback)] = ctx.middleware
    assert kind == "tool_request"
    for tool in ("mcp__mafiabot__turn", "mcp__second__turn"):
        args = callback(tool_name=tool, args=dict(FORGED), session_id="s")["args"]
        assert (args["uid"], args["server"]) == ("work", level1.home_server(home.resolve()))
    assert callback(tool_name="mcp__third__turn", args=dict(FORGED), session_id="s") is None


def test_a_missing_manifest_makes_a_plugin_that_changes_nothing(home, body_exe, caplog, monkeypatch):
    assert main(["mount", "--hermes-home", str(home), "--no-check"]) == 0
    (home / "plugins" / level1.PLUGIN_NAME / level1.SERVERS_FILE).unlink()
    ctx = FakeContext()
    with caplog.at_level(logging.WARNING):
        load_installed(home, monkeypatch).register(ctx)
    [(_, callback)] = ctx.middleware
    assert callback(tool_name=TOOL, args=dict(FORGED), session_id="s") is None
    assert any(level1.SERVERS_FILE in r.getMessage() for r in caplog.records)


HERMES_PROBE = """
import json, sys
from hermes_cli.plugins import get_plugin_manager
from hermes_cli.middleware import apply_tool_request_middleware
manager = get_plugin_manager()
manager.discover_and_load()
[plugin] = [p for p in manager.list_plugins() if p["key"] == sys.argv[1]]
done = apply_tool_request_middleware(sys.argv[2], json.loads(sys.argv[3]), session_id=sys.argv[4])
print(json.dumps({"plugin": plugin, "args": done.payload}))
"""


@needs_hermes_python
def test_hermes_s_own_loader_and_middleware_chain_apply_the_mounted_plugin(home, body_exe, tmp_path):
    assert main(["mount", "--hermes-home", str(home), "--no-check"]) == 0
    hermes_state_db(home / level1.STATE_DB, SESSIONS)
    done = subprocess.run([str(HERMES_PYTHON), "-c", HERMES_PROBE, level1.PLUGIN_NAME, TOOL, json.dumps(FORGED),
                           "tg-1"], capture_output=True, text=True, timeout=60, cwd=tmp_path,
                          env={"HOME": str(tmp_path), "HERMES_HOME": str(home), "PYTHONDONTWRITEBYTECODE": "1"})
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["plugin"]["enabled"] is True and seen["plugin"]["middleware"] == 1 and seen["plugin"]["error"] is None
    assert seen["args"] == {"input": FORGED["input"], "uid": "4242", "channel": "-1001/17", "server": "telegram",
                            "key_origin": "level1 telegram session=tg-1"}


# --- one rule, two places: the plugin's key_part against the body's own refusals (turn_tool.adb Fault_Of) -----

EDGE = level1.MAX_PART_BYTES
# Around each of the body's rules: empty, the byte bound (ASCII, and multibyte characters ending on it or
# straddling it), control characters (NUL and the C0 set), DEL, and a lone surrogate; and the characters
# just past each rule (a space, U+0080 and U+2028, which are no C0 control, a surrogate pair).
KEY_PART_EDGES = ["", " ", "x" * EDGE, "x" * (EDGE + 1), "é" * (EDGE // 2), "é" * (EDGE // 2) + "x",
                  "x" * (EDGE - 2) + "€", "x" * (EDGE - 1) + "é", "😀" * (EDGE // 4), "😀" * (EDGE // 4) + "x",
                  "\x00", "nul\x00inside", "tab\there", "\x1f", "del\x7f", "\x80", "line\u2028sep",
                  "lone\ud800", "\udfff", "pair\U0001f600"]


def _body_refuses(client: BodyClient, request_id: int, part: str, value: str) -> bool:
    """Whether the body refuses one turn whose key part `part` is `value`, sent as Hermes sends it: UTF-8,
    and a lone surrogate (which no UTF-8 holds) as its \\u escape."""
    arguments = {"input": "tie the rules", "uid": "u", "channel": "c", "server": "s", part: value}
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
               "params": {"name": "turn", "arguments": arguments}}
    try:
        line = json.dumps(message, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        line = json.dumps(message).encode("ascii")
    client.send_raw(line + b"\n")
    reply = client.read_message(None, f"the reply to a turn with {part}={value!r}")
    assert reply.get("id") in (request_id, None), reply  # None: the body's parse error names no request
    return "error" in reply or bool(reply["result"].get("isError"))


@pytest.mark.parametrize("part", ["uid", "channel", "server"])
def test_the_plugin_hashes_a_key_part_exactly_when_the_real_body_refuses_it(spawn_body, part):
    client = spawn_body()
    client.initialize()
    ids = iter(range(1000, 2000))
    for value in KEY_PART_EDGES:
        hashed = level1.key_part(value) != value
        assert _body_refuses(client, next(ids), part, value) is hashed, f"{part}={value!r}: the two rules differ"
        if hashed:
            assert not _body_refuses(client, next(ids), part, level1.key_part(value)), "the hash must be valid"
