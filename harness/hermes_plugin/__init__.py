"""Level1: the Hermes plugin that sets a turn's session key from the real Hermes session.

`mount` copies this file (as the plugin's `__init__.py`) and `plugin.yaml` into
`<home>/plugins/mafiabot-level1/`, writes `level1.json` beside them (the servers it is installed
for) and names the plugin in `plugins.enabled`. Hermes 0.19.0 then calls `register(ctx)` at start-up,
and every tool call passes through `set_session_key` (a `tool_request` middleware) before hooks,
approvals and execution see it. It runs inside Hermes's own interpreter: standard library only, and
nothing of the harness is imported.

Invariants:
- For a call of `mcp__<server>__turn` of a server named in `level1.json`, the arguments that reach the
  body carry `uid`, `channel` and `server` chosen here, whatever the model wrote, and `key_origin` saying
  how they were chosen (the body echoes it in the trace's `session.origin`). Every other call (other
  tools, other servers) is left as it is: the middleware returns None.
- Gateway session (its row in `<home>/state.db`, or a parent's row, has a user or chat): uid = the
  platform's user id, channel = the chat (`chat/thread` when in a thread), server = the platform.
  A session Hermes shares among a chat's participants (its session key ends in the chat, with no
  participant: a thread by default, a group with `group_sessions_per_user: false`) is the chat's:
  uid = `chat:<chat id>`. Its row names only the participant who spoke first, so keying it by that user
  would give every other speaker's turns that user's name, and the key of that user's own session there.
- Gateway API conversation (source `api_server`: Hermes runs it outside the gateway's session store, and
  its row names no user and no chat): the conversation is the chat, as Hermes binds it (chat = the root
  session's id, the one a compression's or a delegation's children descend from): uid = `chat:<id>`,
  channel = `<id>`, server = `api_server`. As a CLI session, every API client would share the home's CLI
  session, and each other's.
- The profile's own session (no user or chat on the chain of rows, whose root, the session that
  started it, is one a person at this machine runs: LOCAL_SOURCES, Hermes's CLI and TUI, `hermes chat
  --source tool`, editor clients over ACP): uid = the Hermes profile, channel = `cli`, server =
  `hermes-<hash of the home>`; the same for every chat of one home, so consecutive chats are turns of
  one session, and two homes (two profiles) are two sessions. The Hermes session id goes only into
  `key_origin`.
- Anything else is a session of its own, never the profile's (fail closed: whoever it is, they must
  not read the operator's recall): a root of another source with no user or chat (a cron job, a
  gateway row whose user was never written) is keyed by that root's session id; a session with no
  row, a call with no session id, and a state.db that cannot be read are keyed by the call's session
  id (a fresh one when there is none), and say so in `key_origin`.
- Each key part is what the body accepts (1-256 bytes, no control characters): a value that is not is
  replaced by `sha256:<hex>` of it, so it stays distinct and valid.
- No platform id can spell a key this plugin derives: a raw user or chat id that starts like a derived
  part (DERIVED_PREFIXES: a hash, a chat's key, a session's own key, or the escape itself) is escaped as
  `raw:<id>` (`raw_part`), so a user whose id is literally `sha256:<hex>` or `chat:<id>` never gets the
  session of the user whose id hashes to it, or of the chat.
- It never raises into Hermes: a failure gives the call a key of its own and logs one line.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import uuid
from collections.abc import Callable, Mapping
from contextlib import closing
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

PLUGIN_NAME = "mafiabot-level1"
SERVERS_FILE = "level1.json"
STATE_DB = "state.db"
CLI_CHANNEL = "cli"
KEY_ORIGIN = "key_origin"  # the turn tool's argument saying who chose the key (the body echoes it)
MAX_PART_BYTES = 256  # the body's own bound on a key part (and on key_origin)
# Reading one row: if Hermes holds the write lock longer than this, the call gets a key of its own
# rather than being held up.
DB_TIMEOUT_SECONDS = 0.5
# Sources of sessions a person at this machine runs in the profile itself (Hermes 0.19.0: cli.py and
# the TUI, `hermes chat --source tool`, acp_adapter): their turns are the profile's one session.
LOCAL_SOURCES = frozenset({"cli", "tui", "tool", "acp"})
# A delegated sub-agent's row has no user: its parents' rows are walked up to this depth to find one.
MAX_PARENT_DEPTH = 8
ROW_COLUMNS = ("source", "user_id", "chat_id", "thread_id", "parent_session_id")
# Sources whose rows name no user and no chat though they are not the CLI's: the conversation is their chat.
# Hermes 0.19.0's API platform (gateway/platforms/api_server.py, _run_agent) binds chat_id = session id itself.
CONVERSATION_SOURCES = frozenset({"api_server"})
# What Hermes adds to a gateway session's row with its routing peer (hermes_state.record_gateway_session_peer).
PEER_COLUMNS = ("session_key", "chat_type")
SELECT_ROW = f"SELECT {', '.join(ROW_COLUMNS)} FROM sessions WHERE id = ?"  # noqa: S608 - constant column names
SELECT_ROW_AND_PEER = f"SELECT {', '.join(ROW_COLUMNS + PEER_COLUMNS)} FROM sessions WHERE id = ?"  # noqa: S608

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SessionKey:
    uid: str
    channel: str
    server: str
    origin: str

    def applied_to(self, args: Mapping[str, Any]) -> dict[str, Any]:
        return {**args, "uid": self.uid, "channel": self.channel, "server": self.server, KEY_ORIGIN: self.origin}


@dataclass(frozen=True)
class SessionRow:
    session_id: str
    source: str
    user_id: str | None
    chat_id: str | None
    thread_id: str | None
    shared_by_chat: bool = False  # Hermes keys the session by its chat alone: no one participant's


def keyed_by_chat_alone(session_key: str | None, chat_type: str | None, chat_id: str | None,
                        thread_id: str | None) -> bool:
    """Whether Hermes's session key ends in the chat (and thread) with no participant after it.

    Hermes 0.19.0 (gateway/session.py, build_session_key) keys a group or channel session
    `<ns>:<platform>:<chat_type>:<chat_id>[:<thread_id>]`, and appends the participant's id only when it
    isolates users; a DM is keyed by its chat, which is the user's own. No key or no chat: not shared.
    """
    if not session_key or not chat_type or not chat_id or chat_type == "dm":
        return False
    return session_key.endswith(":" + ":".join([chat_type, chat_id, *([thread_id] if thread_id else [])]))


def _refused(c: str) -> bool:
    """A character the body refuses in a key part: a control character, DEL, or a lone surrogate."""
    return c < " " or c == "\x7f" or "\ud800" <= c <= "\udfff"


def key_part(value: str) -> str:
    """`value` when the body accepts it as a key part, else `sha256:<hex>` of it (valid, and still distinct).

    A lone surrogate is refused too: Hermes would send it as a `\\ud800` escape, which the body's input guard
    refuses for the whole message.
    """
    encoded = value.encode("utf-8", "surrogatepass")
    if 0 < len(encoded) <= MAX_PART_BYTES and not any(map(_refused, value)):
        return value
    return "sha256:" + hashlib.sha256(encoded).hexdigest()


# What the parts this plugin derives start with (`key_part`'s hash, `gateway_key`'s chat key, `own_key`'s
# session key), and the escape that keeps a raw id from starting like one of them.
RAW_ESCAPE = "raw:"
DERIVED_PREFIXES = ("sha256:", "chat:", "session:", RAW_ESCAPE)


def raw_part(value: str) -> str:
    """A platform's own id as a key part: `key_part` of it, escaped first when it starts like a derived part.

    Injective: an unescaped id never starts with RAW_ESCAPE, and escaping is a fixed prefix."""
    return key_part(RAW_ESCAPE + value if value.startswith(DERIVED_PREFIXES) else value)


def _origin(text: str) -> str:
    """`text` as a key_origin the body accepts: controls and surrogates as `?`, cut to 256 bytes between characters."""
    clean = "".join("?" if _refused(c) else c for c in text)
    return clean.encode("utf-8", "replace")[:MAX_PART_BYTES].decode("utf-8", "ignore") or "level1"


def home_server(home: Path) -> str:
    """The `server` of the home's CLI sessions: short, fixed for the home, distinct between homes."""
    return "hermes-" + hashlib.sha256(str(home).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def cli_key(home: Path, profile: str, session_id: str) -> SessionKey:
    return SessionKey(key_part(profile or "default"), CLI_CHANNEL, home_server(home),
                      _origin(f"level1 cli session={session_id}"))


def own_key(home: Path, session_id: str, kind: str, why: str) -> SessionKey:
    """A session of its own: keyed by `session_id` (a fresh one when there is none), in the home's server."""
    own_id = session_id or f"call-{uuid.uuid4()}"
    return SessionKey(key_part(f"session:{own_id}"), key_part(kind), home_server(home),
                      _origin(f"level1 {kind} session={session_id or '-'} ({why}: a session of its own)"))


def gateway_key(row: SessionRow, session_id: str) -> SessionKey:
    chat = row.chat_id or "-"
    channel = f"{chat}/{row.thread_id}" if row.thread_id else chat
    uid = key_part(f"chat:{chat}") if row.shared_by_chat or not row.user_id else raw_part(row.user_id)
    return SessionKey(uid, raw_part(channel), key_part(row.source or "gateway"),
                      _origin(f"level1 {row.source or 'gateway'} session={session_id}"))


def read_session(state_db: Path, session_id: str) -> SessionRow | None:
    """The row that decides the session's key: the nearest on its chain of parents that names a user or
    chat (an API conversation's root names itself as its chat), else the chain's root (the session that
    started it; the last row read when the chain is longer than MAX_PARENT_DEPTH); None when the
    session has no row.

    Raises sqlite3.Error (locked, corrupt, not Hermes's schema) and OSError for the caller to fall back on.
    """
    if not state_db.is_file():
        return None
    # Read-only and by URI: reading never creates the file or changes Hermes's database.
    with closing(sqlite3.connect(f"{state_db.as_uri()}?mode=ro", uri=True, timeout=DB_TIMEOUT_SECONDS)) as db:
        present = {str(column[1]) for column in db.execute("PRAGMA table_info(sessions)")}
        # A state.db without the peer's columns (a Hermes before them) is read without: no session is shared.
        with_peer = set(PEER_COLUMNS) <= present
        columns = ROW_COLUMNS + PEER_COLUMNS if with_peer else ROW_COLUMNS
        select = SELECT_ROW_AND_PEER if with_peer else SELECT_ROW
        last: SessionRow | None = None
        wanted: str | None = session_id
        for _ in range(MAX_PARENT_DEPTH):
            if not wanted:
                break
            found = db.execute(select, (wanted,)).fetchone()
            if found is None:
                break
            value = dict(zip(columns, (None if v is None else str(v) for v in found), strict=True))
            row = SessionRow(wanted, value["source"] or "", value["user_id"], value["chat_id"], value["thread_id"],
                             keyed_by_chat_alone(value.get("session_key"), value.get("chat_type"), value["chat_id"],
                                                 value["thread_id"]))
            parent = value["parent_session_id"]
            if not (row.user_id or row.chat_id or parent) and row.source in CONVERSATION_SOURCES:
                row = replace(row, chat_id=wanted)
            last = row
            if row.user_id or row.chat_id:
                return row
            wanted = parent
        return last


def choose_key(home: Path, profile: str, session_id: str) -> SessionKey:
    """The key of the session `session_id` of `home`, by the rules above; raises what reading state.db raised."""
    if not session_id:
        return own_key(home, "", "unknown", "no session id")
    row = read_session(home / STATE_DB, session_id)
    if row is None:
        return own_key(home, session_id, "unknown", "no session row")
    if row.user_id or row.chat_id:
        return gateway_key(row, session_id)
    if row.source in LOCAL_SOURCES:
        return cli_key(home, profile, session_id)
    return own_key(home, row.session_id, row.source or "unknown", "no user or chat")


def load_servers(plugin_dir: Path) -> dict[str, str]:
    """tool name -> server, as mount wrote them; {} (the plugin does nothing) when the file is missing or unusable."""
    try:
        document = json.loads((plugin_dir / SERVERS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        logger.warning("%s: cannot read %s (%s): no tool call is changed", PLUGIN_NAME, plugin_dir / SERVERS_FILE, exc)
        return {}
    servers = document.get("servers") if isinstance(document, dict) else None
    if not isinstance(servers, dict):
        logger.warning("%s: %s has no servers mapping: no tool call is changed", PLUGIN_NAME, plugin_dir / SERVERS_FILE)
        return {}
    return {str(tool): str(server) for server, tool in servers.items()}


def middleware(home: Path, profile: str, tools: Mapping[str, str]) -> Callable[..., dict[str, Any] | None]:
    """The tool_request callback for `home`, acting on the calls of `tools` alone."""

    def set_session_key(tool_name: str = "", args: Any = None, session_id: str = "", **_context: Any
                        ) -> dict[str, Any] | None:
        if tool_name not in tools:
            return None
        given = args if isinstance(args, dict) else {}
        try:
            key = choose_key(home, profile, str(session_id or ""))
        except Exception as exc:  # noqa: BLE001 - Hermes would pass the model's own key on; ours replaces it
            logger.warning("%s: session %s of %s: %s: %s; the call is a session of its own", PLUGIN_NAME,
                           session_id or "-", home / STATE_DB, type(exc).__name__, exc)
            key = own_key(home, str(session_id or ""), "unknown", f"state.db unreadable: {type(exc).__name__}")
        return {"args": key.applied_to(given), "source": PLUGIN_NAME,
                "reason": f"session key set for {tools[tool_name]}"}

    return set_session_key


def register(ctx: Any) -> None:
    """Hermes's entry point: install the middleware for the servers mount named."""
    plugin_dir = Path(__file__).resolve().parent
    home = plugin_dir.parent.parent  # <home>/plugins/<name>/
    # Hermes 0.19.0's PluginContext.profile_name answers None rather than raise; an older Hermes has none
    profile = str(getattr(ctx, "profile_name", None) or "default")
    ctx.register_middleware("tool_request", middleware(home, profile, load_servers(plugin_dir)))
