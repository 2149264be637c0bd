"""Every setting the harness reads from its environment, and where its own state and the project's files are.

Each `MAFIABOT_*` variable is named here once (`ENV_VARS` lists them all, which is what the test
fixture scrubs); modules import the name from here and never spell it themselves.

Two roots, kept apart on purpose:
- The *project root* is the worktree a command acts on (writes, the ledger, the queue):
  `--project-root`, else `$MAFIABOT_PROJECT_ROOT`, else the current directory.
- The *checkout* is where the mafiabot project's own files are (the built body
  `mafiabot_core/bin/mafiabot`, the organ fixture `stubs/organs/default.json`, the stub bodies
  under `stubs/`, the Hermes virtualenv `.hermes-venv`): `$MAFIABOT_CHECKOUT`, else the checkout
  this package sits in when it runs from one (an editable install), else none. A harness installed
  from a wheel has no checkout unless `$MAFIABOT_CHECKOUT` names one; what then needs a checkout
  file says so in one line naming the variable. `$MAFIABOT_PROJECT_ROOT` used to name both: it
  still names the checkout where `$MAFIABOT_CHECKOUT` is unset and the folder it names is a
  mafiabot checkout (CHECKOUT_MARKERS), with a one-line deprecation note on stderr, once a process;
  a project that is not a checkout never hides the package's own checkout.

Invariants:
- Every lookup takes an optional `environ` (default `os.environ`), read at call time, so a caller
  that prepares a child's environment resolves exactly what the child will.
- An empty variable counts as unset. Paths from variables are expanded (`~`) and made absolute.
- Where an option (a flag, a tool's argument) can override a variable, the option wins, else the variable, else
  the caller's default: `given`, the one spelling of that rule, which every reader below and `harness.resolve`
  (the layer both edges call) go through.
- A path that cannot be made absolute (a symlink loop, a name past the system's limit) is a
  `ConfigError` naming what it is for (`resolved`), never a `RuntimeError` or `OSError`. A path
  longer than any the system takes (PATH_RULE) is refused before any system call sees it
  (`path_problem`, `checked_path`): the typed inputs, the command line and the variables share it.
- `user_home` is `Path.home()` as Python computes it (which Hermes uses), but from the given
  environment: `$HOME` when it is set, else the password database.
"""

from __future__ import annotations

import os
import pwd
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from harness.errors import ConfigError

PROJECT_ROOT_ENV = "MAFIABOT_PROJECT_ROOT"
CHECKOUT_ENV = "MAFIABOT_CHECKOUT"
HERMES_BIN_ENV = "MAFIABOT_HERMES"
BODY_ENV = "MAFIABOT_BODY"
AGENT_REGISTRY_ENV = "MAFIABOT_AGENT_REGISTRY"
AUTOBOT_QUEUE_ENV = "MAFIABOT_AUTOBOT_QUEUE"
AUTOPILOT_SENTINEL_ENV = "MAFIABOT_AUTOPILOT_SENTINEL"
AUTOPILOT_DNA_ENV = "MAFIABOT_AUTOPILOT_DNA"
AUTOPILOT_LEDGER_ENV = "MAFIABOT_AUTOPILOT_LEDGER"
# A libpq URL (postgresql://...): the queue and the ledger live in that database instead of the project's files.
DATABASE_URL_ENV = "MAFIABOT_DATABASE_URL"
ENV_VARS = (PROJECT_ROOT_ENV, CHECKOUT_ENV, HERMES_BIN_ENV, BODY_ENV, AGENT_REGISTRY_ENV, AUTOBOT_QUEUE_ENV,
            AUTOPILOT_SENTINEL_ENV, AUTOPILOT_DNA_ENV, AUTOPILOT_LEDGER_ENV, DATABASE_URL_ENV)

# The harness's state inside a project root: the cost ledger, the autobot queue.
STATE_DIR = Path(".agents") / "state"
# What tells a directory is a mafiabot checkout rather than, say, site-packages.
CHECKOUT_MARKERS = ("pyproject.toml", "mafiabot_core")
HERMES_VENV = Path(".hermes-venv")


def is_checkout(folder: Path) -> bool:
    return all((folder / marker).exists() for marker in CHECKOUT_MARKERS)


def _checkout_around_package() -> Path | None:
    parent = Path(__file__).resolve().parent.parent
    return parent if is_checkout(parent) else None


# Resolved once: where this package sits does not change while it runs. Tests replace it.
PACKAGE_CHECKOUT: Path | None = _checkout_around_package()


def environment(environ: Mapping[str, str] | None = None) -> Mapping[str, str]:
    return os.environ if environ is None else environ


def env_value(name: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The variable's value, None when unset or empty."""
    return environment(environ).get(name) or None


def env_path(name: str, environ: Mapping[str, str] | None = None) -> Path | None:
    """The variable as a path (`Given.path`), None when unset or empty."""
    chosen = given(None, name, name, environ)
    return chosen.path() if chosen is not None else None


# Linux's PATH_MAX and NAME_MAX: a longer path or name fails every system call with ENAMETOOLONG.
MAX_PATH_CHARS = 4096
MAX_NAME_BYTES = 255
PATH_RULE = f"at most {MAX_PATH_CHARS} characters, each name at most {MAX_NAME_BYTES} bytes"


def path_problem(text: str) -> str | None:
    """Why no system call would take `text` as a path, or None."""
    if len(text) > MAX_PATH_CHARS:
        return f"is {len(text)} characters long; a path has at most {MAX_PATH_CHARS}"
    if "\0" in text:
        return "contains a NUL character"
    for index, part in enumerate(text.split("/")):
        if len(part.encode("utf-8", errors="surrogateescape")) > MAX_NAME_BYTES:
            # Which component, not its text: a path can come from a file whose content no error repeats.
            return (f"has a component of more than {MAX_NAME_BYTES} bytes (component {index + 1}), longer than "
                    f"any file name can be")
    return None


def checked_path(text: str, what: str) -> Path:
    """`text` as a Path; ConfigError naming `what` when no system call would take it (PATH_RULE)."""
    problem = path_problem(text)
    if problem is not None:
        raise ConfigError(f"{what}: {problem}")
    return Path(text)


def user_home(environ: Mapping[str, str] | None = None) -> Path:
    env = environment(environ)
    if "HOME" in env:
        # posixpath.expanduser: a trailing slash is dropped, and an empty HOME means "/".
        return Path(env["HOME"].rstrip("/") or "/")
    return Path(pwd.getpwuid(os.getuid()).pw_dir)


@dataclass(frozen=True)
class Given:
    """A setting's value as a caller or the environment gave it, with the name of where it came from (`--ledger`,
    `$MAFIABOT_AUTOPILOT_LEDGER`), which every error about it quotes."""

    text: str
    source: str
    from_variable: bool

    def path(self) -> Path:
        """The value as a path, symlinks left as they are: an option's as given (it means its caller's current
        directory), a variable's checked, expanded (`~`) and absolute."""
        if not self.from_variable:
            return Path(self.text)
        return checked_path(self.text, self.source).expanduser().absolute()

    def resolved(self) -> Path:
        """The value as a path, expanded (`~`), absolute and its symlinks followed."""
        return resolved(self.text, self.source)


def given(explicit: str | os.PathLike[str] | None, option: str, variable: str | None = None,
          environ: Mapping[str, str] | None = None) -> Given | None:
    """The explicit value (an option, a tool's argument) named `option`, else the variable, else None, where the
    caller's own default applies: the one spelling of "flag, else variable, else default". An empty value is unset."""
    if explicit is not None and os.fspath(explicit) != "":
        return Given(os.fspath(explicit), option, from_variable=False)
    named = env_value(variable, environ) if variable is not None else None
    return Given(named, f"${variable}", from_variable=True) if named is not None else None


def project_root(explicit: str | os.PathLike[str] | None = None,
                 environ: Mapping[str, str] | None = None) -> Path:
    """The worktree a command acts on: the explicit one, else $MAFIABOT_PROJECT_ROOT, else the cwd; a named one
    must be an existing directory (`existing_project_root`)."""
    chosen = given(explicit, "--project-root", PROJECT_ROOT_ENV, environ)
    if chosen is None:
        return resolved(os.getcwd(), "the current directory")
    return existing_project_root(chosen.resolved(), chosen.source)


def existing_project_root(root: Path, source: str) -> Path:
    """`root`, when it is an existing directory; ConfigError naming `source` otherwise. A project is acted on where
    it is: a mistyped root would show an empty queue and ledger, and the first write would make a new project."""
    if not root.is_dir():
        kind = "not a directory" if root.exists() else "a directory that does not exist"
        raise ConfigError(f"{source}: {root} is {kind}")
    return root


def resolved(path: str | os.PathLike[str], what: str) -> Path:
    """`path` expanded (`~`) and absolute, its symlinks followed; ConfigError naming `what` when it cannot be."""
    given = checked_path(os.fspath(path), what)
    try:
        return given.expanduser().resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop, before Python 3.13
        cause = (exc.strerror if isinstance(exc, OSError) else None) or str(exc)
        raise ConfigError(f"{what}: {os.fspath(path)}: cannot be resolved: {cause}") from None


DATABASE_SCHEMES = ("postgresql://", "postgres://")


def database_url(explicit: str | None = None, environ: Mapping[str, str] | None = None) -> str | None:
    """The database the queue and the ledger live in: --database, else $MAFIABOT_DATABASE_URL, else None (the
    project's files). ConfigError when it is not a libpq URL; the URL itself is never quoted (it may hold a
    password)."""
    chosen = given(explicit, "--database", DATABASE_URL_ENV, environ)
    if chosen is None:
        return None
    if not chosen.text.startswith(DATABASE_SCHEMES):
        raise ConfigError(f"{chosen.source}: not a PostgreSQL URL (it must start with "
                          f"{' or '.join(DATABASE_SCHEMES)})")
    return chosen.text


def state_dir(root: Path) -> Path:
    return root / STATE_DIR


DEPRECATED_CHECKOUT_NOTE = (f"mafiabot-harness: note: ${PROJECT_ROOT_ENV} naming the mafiabot checkout is deprecated: "
                            f"set ${CHECKOUT_ENV} to it (${PROJECT_ROOT_ENV} is the project a command acts on)")
# The notes already written by this process: a deprecation is said once, not at every lookup.
NOTES_SAID: set[str] = set()


def _say_deprecated() -> None:
    if DEPRECATED_CHECKOUT_NOTE not in NOTES_SAID:
        NOTES_SAID.add(DEPRECATED_CHECKOUT_NOTE)
        sys.stderr.write(DEPRECATED_CHECKOUT_NOTE + "\n")


def checkout(environ: Mapping[str, str] | None = None) -> Path | None:
    """The mafiabot checkout: $MAFIABOT_CHECKOUT, else $MAFIABOT_PROJECT_ROOT where it names a checkout (deprecated,
    said once on stderr), else the one this package sits in, else None. ConfigError when $MAFIABOT_CHECKOUT names
    no checkout: a setting is reported, never replaced by a later step."""
    named = env_path(CHECKOUT_ENV, environ)
    if named is not None:
        if not is_checkout(named):
            raise ConfigError(f"${CHECKOUT_ENV}: {named} is not a mafiabot checkout (it has no "
                              f"{' and no '.join(CHECKOUT_MARKERS)})")
        return named
    project = env_path(PROJECT_ROOT_ENV, environ)
    if project is not None and is_checkout(project) and project != PACKAGE_CHECKOUT:
        _say_deprecated()
        return project
    return PACKAGE_CHECKOUT


def checkout_file(relative: str | os.PathLike[str], environ: Mapping[str, str] | None = None) -> Path | None:
    """A file of the checkout, whether or not it exists; None when there is no checkout."""
    root = checkout(environ)
    return root / relative if root is not None else None


def no_checkout_hint() -> str:
    return f"no mafiabot checkout: this harness is not installed from one and ${CHECKOUT_ENV} is not set"
