"""Where the body is and how to spell its command line.

Invariants:
- The body executable is `$MAFIABOT_BODY` when set, else `<checkout>/mafiabot_core/bin/mafiabot`
  (`harness.settings.checkout`); an explicit path always wins over both. Without a checkout and
  without `$MAFIABOT_BODY` there is no body, and BodyNotFound says which variable to set.
- The organ fixture defaults to `<checkout>/stubs/organs/default.json` when that file exists;
  otherwise `--organs` is left out and the body falls back to its own default.
- `BodyOptions.argv()` is a pure function of the options: the same options give the same
  command line, which is what the determinism tests rely on.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from harness import settings
from harness.errors import BodyNotFound

BUILT_BODY = Path("mafiabot_core") / "bin" / "mafiabot"
# The static build's name, and the dynamic one's (the only one linking libpq)
STATIC_BODY = BUILT_BODY.name
DYNAMIC_BODY = "mafiabot-dynamic"
SHIPPED_ORGANS = Path("stubs") / "organs" / "default.json"
BODY_ENV_VAR = settings.BODY_ENV
# For --help texts, so every command states the same defaults.
BODY_HELP = f"the body executable (default: ${BODY_ENV_VAR}, else the checkout's {BUILT_BODY})"
ORGANS_HELP = f"organ fixture JSON (default: the checkout's {SHIPPED_ORGANS})"


def body_path(explicit: str | os.PathLike[str] | None = None) -> Path | None:
    """The body executable to run, whether or not it exists yet; None when nothing says where it is."""
    chosen = settings.given(explicit, "--body", BODY_ENV_VAR)
    return chosen.path() if chosen is not None else settings.checkout_file(BUILT_BODY)


def find_body(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The body executable; raises BodyNotFound when it is missing or not executable."""
    path = body_path(explicit)
    if path is None:
        raise BodyNotFound(f"no body executable: {settings.no_checkout_hint()}; point {BODY_ENV_VAR} at the body "
                           f"or {settings.CHECKOUT_ENV} at a mafiabot checkout")
    if not path.is_file():
        raise BodyNotFound(f"the body executable {path} does not exist (build it with `make build`, "
                           f"or point {BODY_ENV_VAR} at it)")
    if not os.access(path, os.X_OK):
        raise BodyNotFound(f"the body {path} is not executable")
    return path


def database_client(body: Path) -> Path:
    """The build of the body that can open a `--state postgresql://...`: only the dynamic one links libpq
    (docs/scale-out.md), so the static build (`mafiabot`) gives way to `mafiabot-dynamic` beside it, and any other
    build is itself. BodyNotFound when the dynamic build is missing."""
    if body.name != STATIC_BODY:
        return body
    dynamic = body.with_name(DYNAMIC_BODY)
    if not dynamic.is_file():
        raise BodyNotFound(f"only {DYNAMIC_BODY} has a PostgreSQL client, and {dynamic} does not exist (build it with "
                           f"`make build-dynamic`, or name one with --body)")
    return dynamic


def default_organs() -> Path | None:
    """The shipped organ fixture, or None when there is no checkout holding one."""
    path = settings.checkout_file(SHIPPED_ORGANS)
    return path if path is not None and path.is_file() else None


@dataclass(frozen=True)
class BodyOptions:
    """The body's command-line options; None means "leave the flag out"."""

    body: Path | None = None
    organs: Path | None = None
    max_line_bytes: int | None = None
    max_depth: int | None = None
    max_elements: int | None = None
    max_sessions: int | None = None
    thresholds: tuple[float, ...] | str | None = None
    hermes_home: Path | None = None
    no_soul: bool = False
    extra_args: tuple[str, ...] = field(default_factory=tuple)

    def executable(self) -> Path:
        return find_body(self.body)

    def argv(self) -> list[str]:
        """The full command line, executable first; raises BodyNotFound if it is missing."""
        argv = [str(self.executable())]
        organs = self.organs if self.organs is not None else default_organs()
        if organs is not None:
            argv += ["--organs", str(organs)]
        for flag, value in (
            ("--max-line-bytes", self.max_line_bytes),
            ("--max-depth", self.max_depth),
            ("--max-elements", self.max_elements),
            ("--max-sessions", self.max_sessions),
        ):
            if value is not None:
                argv += [flag, str(value)]
        if self.thresholds is not None:
            argv += ["--thresholds", _thresholds_csv(self.thresholds)]
        if self.hermes_home is not None:
            argv += ["--hermes-home", str(self.hermes_home)]
        if self.no_soul:
            argv.append("--no-soul")
        argv += list(self.extra_args)
        return argv


def _thresholds_csv(thresholds: tuple[float, ...] | str) -> str:
    if isinstance(thresholds, str):
        return thresholds
    return ",".join(repr(float(t)) for t in thresholds)
