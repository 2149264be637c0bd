"""The Level1 plugin in a Hermes home: its files under `<home>/plugins/mafiabot-level1/`, and its name in
`plugins.enabled` (the plugin itself is `harness.hermes_plugin`; docs/hermes.md, "Level1").

Hermes 0.19.0 loads a user plugin only when `plugins.enabled` (a list in config.yaml) names it, and never
when `plugins.disabled` does: the deny list wins. Mount adds the name to the first and never touches the
second; a name the operator put in `plugins.disabled` is reported, not overruled.

Invariants:
- What mount writes into the plugin folder is listed, with each file's sha256, in its manifest
  `level1.json` (also the servers the plugin acts for: server -> tool name). That manifest is the mark:
  a folder of that name without it is someone else's and is never written into or removed.
- Planning never writes (`plan_files` returns the files' new bytes, None for a file to delete); applying
  writes each file atomically, and only files whose bytes change: a remount writes nothing.
- A file mount writes over that holds neither what the manifest says mount wrote nor what this harness
  ships is the operator's edit: it is first kept beside it as `<file>.before-mafiabot.<UTC>` (the
  config's and SOUL.md's backup naming), with a note, and that backup is never removed.
- Unmount of the last server removes exactly the files the manifest lists and that still hold what mount
  wrote (an edited file stays, with a note), the `__pycache__` Hermes's import made of the plugin, and the
  folder when nothing else is left in it; and removes only its own item from `plugins.enabled` (the list,
  and `plugins:`, go when nothing else is left in them, so the file says nothing it did not say before).
- The plugin's state is judged as Hermes reads the config (`hermes_view`, YAML 1.1).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from harness.durable import DurableWriteError, atomic_write
from harness.errors import ConfigError, HarnessError
from harness.hermes_mount.config_file import BACKUP_MARK, HermesConfigError, line_of, new_backup_path
from harness.hermes_mount.entry import tool_name
from harness.hermes_mount.home import HermesHome
from harness.hermes_plugin import PLUGIN_NAME, SERVERS_FILE
from harness.strict_json import InputRejected, read_bounded

PLUGINS_KEY = "plugins"
ENABLED_KEY = "enabled"
DISABLED_KEY = "disabled"
PLUGINS_DIR = "plugins"
# The plugin's own files, shipped in the harness package, and the names Hermes loads them by.
SHIPPED = {"__init__.py": "__init__.py", "plugin.yaml": "plugin.yaml"}
WRITTEN_BY = "mafiabot-harness mount (Level1); unmount removes what it lists"


def plugin_dir(home: HermesHome) -> Path:
    return home.path / PLUGINS_DIR / PLUGIN_NAME


def shipped_files() -> dict[str, bytes]:
    package = resources.files("harness.hermes_plugin")
    return {name: package.joinpath(source).read_bytes() for name, source in SHIPPED.items()}


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Manifest:
    servers: dict[str, str]  # server -> the tool name the plugin acts on
    files: dict[str, str]  # file name -> sha256 of what mount wrote

    def render(self) -> bytes:
        document = {"written_by": WRITTEN_BY, "servers": dict(sorted(self.servers.items())),
                    "files": dict(sorted(self.files.items()))}
        return (json.dumps(document, indent=2) + "\n").encode()


def read_manifest(home: HermesHome) -> Manifest | None:
    """The manifest mount wrote; None when there is no plugin folder. ConfigError when the folder is not mount's."""
    folder = plugin_dir(home)
    if not folder.exists():
        return None
    path = folder / SERVERS_FILE
    if not os.path.lexists(path):
        raise ConfigError(f"{folder} exists but holds no {SERVERS_FILE}: it is not the plugin mount installs, so "
                          "it was left as it is (move it away, or mount with --no-level1)")
    try:  # a regular file only: a FIFO in its place must not hold mount or unmount
        document = json.loads(read_bounded(path))
    except (InputRejected, ValueError) as exc:
        raise ConfigError(f"{path} cannot be read ({exc}); fix or remove it, or mount with --no-level1") from None
    servers, files = (document.get(k) if isinstance(document, dict) else None for k in ("servers", "files"))
    if not isinstance(servers, dict) or not isinstance(files, dict):
        raise ConfigError(f"{path} is not a manifest mount wrote (servers and files mappings); fix or remove it")
    return Manifest({str(k): str(v) for k, v in servers.items()}, {str(k): str(v) for k, v in files.items()})


@dataclass
class FilesPlan:
    folder: Path
    writes: dict[str, bytes] = field(default_factory=dict)  # file name -> new bytes
    deletes: list[str] = field(default_factory=list)
    remove_folder: bool = False
    notes: list[str] = field(default_factory=list)
    # Files to write over that hold neither what mount wrote nor what it ships: the operator's edits, kept as
    # `<file>.before-mafiabot.<UTC>` (config_file's backup naming) before the write; `kept` names them once applied.
    backups: list[str] = field(default_factory=list)
    kept: dict[str, Path] = field(default_factory=dict)
    serves: bool = False  # whether the plugin acts for any server once the plan is applied
    ours: bool = True  # False: the folder is not mount's, and neither is a plugins.enabled item of its name

    @property
    def retires(self) -> bool:
        """Whether the plan takes mount's plugin away, and with it its plugins.enabled item."""
        return self.ours and not self.serves

    @property
    def changed(self) -> bool:
        return bool(self.writes or self.deletes or self.remove_folder)

    def kept_as(self, name: str) -> str:
        """The name of an edited file's backup: the real one once applied (its stamp is the write's time)."""
        return self.kept[name].name if name in self.kept else f"{name}{BACKUP_MARK}<UTC>"

    def describe(self) -> list[str]:
        return ([f"keep the edited {self.folder / name} as {self.kept_as(name)}" for name in self.backups]
                + [f"write {self.folder / name}" for name in self.writes]
                + [f"remove {self.folder / name}" for name in self.deletes]
                + ([f"remove the folder {self.folder}"] if self.remove_folder else []))


def plan_files(home: HermesHome, server: str, install: bool) -> FilesPlan:
    """The plugin folder once `server` is added (install) or removed; ConfigError when the folder is not mount's."""
    folder = plugin_dir(home)
    try:
        manifest = read_manifest(home)
    except ConfigError:
        if install:
            raise
        return FilesPlan(folder, serves=False, ours=False)  # someone else's plugin: not ours to take away
    servers = dict(manifest.servers) if manifest is not None else {}
    if install:
        servers[server] = tool_name(server)
    else:
        servers.pop(server, None)
    plan = FilesPlan(folder, serves=bool(servers))
    if manifest is None and not install:
        return plan
    if servers:
        shipped = shipped_files()
        new = Manifest(servers, {name: _digest(data) for name, data in shipped.items()})
        for name, data in {**shipped, SERVERS_FILE: new.render()}.items():
            now = _read(folder / name)
            if now == data:
                continue
            plan.writes[name] = data
            if name in shipped and now is not None and _digest(now) != (manifest.files.get(name) if manifest else None):
                plan.backups.append(name)
                plan.notes.append(f"{folder / name} was edited since mount wrote it: it is kept beside it as "
                                  f"{plan.kept_as(name)}, and this harness's file takes its place")
        return plan
    assert manifest is not None
    for name, digest in sorted(manifest.files.items()):
        now = _read(folder / name)
        if now is None:
            continue
        if _digest(now) == digest:
            plan.deletes.append(name)
        else:
            plan.notes.append(f"{folder / name} was edited since mount wrote it: left as it is")
    plan.deletes.append(SERVERS_FILE)
    left = {p.name for p in folder.iterdir()} - set(plan.deletes) - {"__pycache__"}
    if not left and _only_our_bytecode(folder / "__pycache__"):
        plan.remove_folder = True
    return plan


def _only_our_bytecode(pycache: Path) -> bool:
    """Whether `pycache` is absent or holds only what Hermes's import of the plugin made (`__init__.*.pyc`)."""
    if not pycache.exists():
        return True
    return pycache.is_dir() and all(p.name.startswith("__init__.") and p.suffix == ".pyc" for p in pycache.iterdir())


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise HarnessError(f"cannot read {path}: {exc.strerror or exc}") from None


def apply_files(plan: FilesPlan) -> None:
    """Write (atomically) or remove the plan's files; the manifest is written last and removed last.

    A home that cannot hold them is the operator's to fix (HermesConfigError, like a config that cannot be
    written): mount writes them before config.yaml, so then nothing at all was written.
    """
    try:
        for name in plan.backups:
            edited = _read(plan.folder / name)
            if edited is not None:
                backup = new_backup_path(plan.folder / name)
                atomic_write(backup, edited, stat.S_IMODE((plan.folder / name).stat().st_mode))
                plan.kept[name] = backup
        for name in sorted(plan.writes, key=lambda n: n == SERVERS_FILE):
            atomic_write(plan.folder / name, plan.writes[name])
        for name in plan.deletes:
            (plan.folder / name).unlink(missing_ok=True)
        if plan.remove_folder:
            shutil.rmtree(plan.folder / "__pycache__", ignore_errors=True)
            plan.folder.rmdir()
    except DurableWriteError as exc:
        raise HermesConfigError(f"{exc}; config.yaml was not changed") from None
    except OSError as exc:
        raise HermesConfigError(f"cannot change the Level1 plugin in {plan.folder}: {exc.strerror or exc}") from None


def _member(parent: CommentedMap, key: str, kind: type[CommentedMap] | type[CommentedSeq], dotted: str) -> Any:
    """`parent[key]`, created empty when absent; HermesConfigError, naming its line, when it is not of `kind`."""
    value = parent.get(key)
    if value is None:
        value = parent[key] = kind()
    if not isinstance(value, kind):
        wanted = "a mapping" if kind is CommentedMap else "a list, which is what Hermes reads"
        raise HermesConfigError(f"'{dotted}'{line_of(parent, key)} is not {wanted}; fix it by hand, "
                                "the file was left untouched")
    return value


def enable(data: CommentedMap) -> None:
    """Name the plugin in `plugins.enabled` (created as needed), keeping the list's other items."""
    plugins = _member(data, PLUGINS_KEY, CommentedMap, PLUGINS_KEY)
    enabled = _member(plugins, ENABLED_KEY, CommentedSeq, f"{PLUGINS_KEY}.{ENABLED_KEY}")
    if PLUGIN_NAME not in enabled:
        enabled.append(PLUGIN_NAME)


def disable(data: CommentedMap) -> bool:
    """Remove the plugin's item from `plugins.enabled`; whether there was one."""
    plugins = data.get(PLUGINS_KEY)
    enabled = plugins.get(ENABLED_KEY) if isinstance(plugins, CommentedMap) else None
    if not isinstance(enabled, CommentedSeq) or PLUGIN_NAME not in enabled:
        return False
    assert isinstance(plugins, CommentedMap)
    while PLUGIN_NAME in enabled:
        enabled.remove(PLUGIN_NAME)
    if not enabled and not enabled.ca.comment and not enabled.ca.items:
        del plugins[ENABLED_KEY]
        if not plugins and not plugins.ca.comment and not plugins.ca.items:
            del data[PLUGINS_KEY]
    return True


@dataclass(frozen=True)
class HermesView:
    enabled: bool  # plugins.enabled names it
    disabled: bool  # plugins.disabled names it: Hermes never loads it, whatever enabled says

    @property
    def loads(self) -> bool:
        return self.enabled and not self.disabled


def hermes_view(document: dict[str, Any]) -> HermesView:
    """The plugin's standing in a config as Hermes read it (hermes_cli/plugins.py: lists of names, or nothing)."""
    plugins = document.get(PLUGINS_KEY)
    plugins = plugins if isinstance(plugins, dict) else {}

    def names(key: str) -> set[Any]:
        value = plugins.get(key)
        return set(value) if isinstance(value, list) else set()

    return HermesView(PLUGIN_NAME in names(ENABLED_KEY), PLUGIN_NAME in names(DISABLED_KEY))


def without_plugin(document: dict[str, Any]) -> dict[str, Any]:
    """`document` (as Hermes read it, a copy) without the plugin's item in plugins.enabled, nor what it alone made."""
    plugins = document.get(PLUGINS_KEY)
    if not isinstance(plugins, dict) or not isinstance(plugins.get(ENABLED_KEY), list):
        return document
    rest = dict(plugins, **{ENABLED_KEY: [n for n in plugins[ENABLED_KEY] if n != PLUGIN_NAME]})
    if not rest[ENABLED_KEY]:
        del rest[ENABLED_KEY]
    out = dict(document, **{PLUGINS_KEY: rest})
    if not rest:
        del out[PLUGINS_KEY]
    return out


DISABLED_NOTE = (f"plugins.disabled names {PLUGIN_NAME}, and Hermes's deny list wins: the plugin is installed and "
                 f"enabled but will not load, so the model's own uid, channel and server reach the body; remove "
                 f"{PLUGIN_NAME} from plugins.disabled to let Hermes's session set them")


def stale_files(home: HermesHome) -> list[str]:
    """The plugin's files in the home that are not this harness's (edited, or from another version)."""
    return [name for name, data in shipped_files().items() if _read(plugin_dir(home) / name) != data]


def copy_into(home: HermesHome, scratch: Path) -> None:
    """The plugin's folder copied into the scratch home `scratch`, for Hermes to load there."""
    if plugin_dir(home).is_dir():
        shutil.copytree(plugin_dir(home), scratch / PLUGINS_DIR / PLUGIN_NAME,
                        ignore=shutil.ignore_patterns("__pycache__"))
