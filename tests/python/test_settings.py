"""The settings and Hermes layer: one name per variable, Hermes's home rules, its YAML, and mount's re-read.

Hermes's own functions are the oracle where they can be: `Path.home()` for the home, PyYAML's safe
loader (what Hermes 0.19.0 loads config.yaml with) for what a written file means.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from harness import body, resolve, settings
from harness.autobot.queue import QUEUE_DIR
from harness.autopilot.config import load_sentinel
from harness.cli import main
from harness.errors import ConfigError
from harness.hermes import RunRequest, locate
from harness.hermes.config_yaml import hermes_bool, load_as_hermes, server_enabled
from harness.hermes_mount.entry import EntrySpec, hermes_mismatches
from harness.hermes_mount.home import resolve_home
from harness.ledger import default_ledger_path

HARNESS = Path(settings.__file__).resolve().parent
SETTINGS_PREFIX = "MAFIABOT_"


def test_every_mafiabot_variable_is_named_only_in_settings() -> None:
    named_elsewhere = {}
    for path in HARNESS.rglob("*.py"):
        if path == Path(settings.__file__).resolve():
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and node.value.startswith(SETTINGS_PREFIX) and node.value.isupper():
                named_elsewhere.setdefault(node.value, []).append(str(path.relative_to(HARNESS)))
    assert named_elsewhere == {}
    assert all(name.startswith(SETTINGS_PREFIX) for name in settings.ENV_VARS)
    assert len(set(settings.ENV_VARS)) == len(settings.ENV_VARS)


def test_no_setting_reaches_a_test() -> None:
    assert [name for name in os.environ if name.startswith(SETTINGS_PREFIX)] == []


def test_the_fixture_scrubs_settings_exported_by_the_developer(tmp_path: Path) -> None:
    env = dict(os.environ, **{name: str(tmp_path / "from-outside") for name in settings.ENV_VARS})
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             f"{__file__}::test_no_setting_reaches_a_test"],
                            env=env, cwd=Path(__file__).parent, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-2000:]
    assert "1 passed" in result.stdout


# --- homes: Hermes's rules, HOME from the given environment -----------------------------------------

def test_the_user_home_is_path_home_for_this_process() -> None:
    assert settings.user_home() == Path.home()


@pytest.mark.parametrize("home", ["/srv/u", "/srv/u/", ""])
def test_the_user_home_follows_home_as_path_home_would(home: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", home)
    assert settings.user_home() == Path.home()
    assert settings.user_home({"HOME": home}) == Path.home()


def test_the_user_home_without_home_is_the_password_database_s(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HOME")
    assert settings.user_home({}) == Path.home()


def test_a_given_environment_s_home_wins_over_the_process_s(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path / "child")}
    assert locate.active_home(environ=env) == tmp_path / "child" / ".hermes"
    assert locate.hermes_root(environ=env) == tmp_path / "child" / ".hermes"


@pytest.mark.parametrize("hermes_home, root", [
    ("custom", "custom"),
    ("custom/profiles/coder", "custom"),
    ("{home}/.hermes/profiles/coder", "{home}/.hermes"),
    ("{home}/.hermes/elsewhere", "{home}/.hermes"),
])
def test_the_root_is_derived_as_hermes_derives_it(hermes_home: str, root: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {"HOME": str(home), "HERMES_HOME": str(tmp_path / hermes_home.format(home=home))}
    assert locate.hermes_root(environ=env) == tmp_path / root.format(home=home)


def test_mount_and_the_transport_agree_on_a_profile_s_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.hermes import HermesTransport
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "root" / "profiles" / "other"))
    coder = tmp_path / "root" / "profiles" / "coder"
    assert resolve_home(None, "coder").path == HermesTransport().home_of("coder") == coder
    assert resolve_home(None, "default").path == HermesTransport().home_of(None) == tmp_path / "root"
    assert resolve_home().path == tmp_path / "root" / "profiles" / "other"


def test_a_whitespace_hermes_home_is_unset_as_for_hermes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERMES_HOME", "  ")
    assert locate.active_home() == Path.home() / ".hermes"


# --- the profile-name rule ---------------------------------------------------------------------------

@pytest.mark.parametrize("name, ok", [("coder", True), ("a", True), ("0-x_y", True), ("a" * 64, True),
                                      ("a" * 65, False), ("Coder", False), ("-x", False), ("_x", False),
                                      ("a.b", False), ("", False), ("a b", False), ("é", False)])
def test_one_profile_rule_for_mount_transport_registry_and_intent(name: str, ok: bool) -> None:
    from harness.autobot.intent import IntentError, parse_intent
    from harness.dispatch.registry import RegistryError, parse_registry
    from harness.hermes.outcome import InvalidRunRequest
    assert locate.is_profile_name(name) is ok
    verdicts = []
    for attempt, refused in ((lambda: resolve_home(None, name), ConfigError),
                             (lambda: RunRequest(prompt="p", profile=name), InvalidRunRequest),
                             (lambda: parse_registry({"agents": {"x": {"profile": name}}}, "r"), RegistryError),
                             (lambda: parse_intent({"intent": "i", "project_root": "/",
                                                    "payload": {"hermes_profile": name}}), IntentError)):
        try:
            attempt()
            verdicts.append(True)
        except refused:
            verdicts.append(False)
    assert verdicts == [ok] * 4


# --- config.yaml as Hermes reads it ------------------------------------------------------------------

@pytest.mark.parametrize("text, enabled", [
    ("off", False), ("no", False), ("false", False), ("Off", False), ("'off'", False), ('"0"', False),
    ("on", True), ("yes", True), ("true", True), ("'YES'", True), ("0", True), ("1", True), ("~", True),
    ("[]", True), ("maybe", True)])
def test_enabled_is_coerced_as_hermes_s_mcp_loader_coerces_it(text: str, enabled: bool) -> None:
    assert server_enabled(load_as_hermes(f"enabled: {text}\n")) is enabled


@pytest.mark.parametrize("value", [None, 0, 1, 2.5, [], {}, "maybe", ""])
def test_a_value_that_is_no_boolean_word_takes_the_default(value: object) -> None:
    assert (hermes_bool(value, default=True), hermes_bool(value, default=False)) == (True, False)


def test_the_loader_is_pyyaml_s_safe_loader() -> None:
    text = "a: 0o17\nb: 017\nc: 1:30\nd: off\ne:\n"
    assert load_as_hermes(text) == yaml.safe_load(text) == {"a": "0o17", "b": 15, "c": 90, "d": False, "e": None}
    assert load_as_hermes("") == {}


@pytest.mark.parametrize("spelled", ["off", "no", "0", "'off'", '"no"', "false", "Off"])
def test_after_mount_hermes_reads_an_entry_left_disabled_as_enabled(spelled: str, body_exe: Path, tmp_path: Path,
                                                                    capsys) -> None:
    home = tmp_path / "hermes-home"
    home.mkdir()
    (home / "config.yaml").write_text("mcp_servers:\n  mafiabot:\n    command: /old/mafiabot\n"
                                      f"    enabled: {spelled}   # parked\n", encoding="utf-8")
    assert main(["mount", "--hermes-home", str(home), "--body", str(body_exe)]) == 0
    written = (home / "config.yaml").read_text(encoding="utf-8")
    entry = yaml.safe_load(written)["mcp_servers"]["mafiabot"]
    assert entry["enabled"] is True and entry["command"] == str(body_exe.absolute())
    assert "# parked" in written
    assert "Hermes would have read the entry's enabled: " in capsys.readouterr().out
    assert main(["mount", "--hermes-home", str(home), "--body", str(body_exe)]) == 0
    assert (home / "config.yaml").read_text(encoding="utf-8") == written


def test_an_entry_hermes_already_reads_as_enabled_is_left_as_spelled(body_exe: Path, tmp_path: Path) -> None:
    home = tmp_path / "hermes-home"
    home.mkdir()
    (home / "config.yaml").write_text("mcp_servers:\n  mafiabot:\n    enabled: yes\n", encoding="utf-8")
    assert main(["mount", "--hermes-home", str(home), "--body", str(body_exe)]) == 0
    assert "enabled: yes" in (home / "config.yaml").read_text(encoding="utf-8")


def test_an_owned_key_spelled_the_yaml_1_2_way_is_restated_for_hermes(body_exe: Path, tmp_path: Path,
                                                                      capsys) -> None:
    # ruamel reads 0o74 as 60 and keeps the spelling; Hermes (YAML 1.1) would read the string "0o74".
    home = tmp_path / "hermes-home"
    home.mkdir()
    (home / "config.yaml").write_text("mcp_servers:\n  mafiabot:\n    timeout: 0o74\n", encoding="utf-8")
    assert main(["mount", "--hermes-home", str(home), "--body", str(body_exe)]) == 0
    assert yaml.safe_load((home / "config.yaml").read_text())["mcp_servers"]["mafiabot"]["timeout"] == 60
    assert "timeout: '0o74'" in capsys.readouterr().out


def test_what_hermes_would_read_differently_is_named_key_by_key() -> None:
    spec = EntrySpec("mafiabot", Path("/b/mafiabot"), ("--organs", "/o.json"), Path("/h"))
    read = load_as_hermes("command: /b/mafiabot\nargs: [--organs, /o.json]\nenv: {HERMES_HOME: /h, LANG: C}\n"
                          "timeout: 60\nconnect_timeout: 30\n")
    assert hermes_mismatches(read, spec) == []
    assert hermes_mismatches({**read, "enabled": True}, spec) == []
    assert hermes_mismatches({**read, "enabled": "on"}, spec) == ["enabled: 'on'"]
    assert hermes_mismatches({**read, "timeout": "0o74", "env": {}}, spec) == ["timeout: '0o74'", "env: {}"]
    assert hermes_mismatches({key: v for key, v in read.items() if key != "args"},
                             EntrySpec("mafiabot", Path("/b/mafiabot"), (), Path("/h"))) == []
    assert hermes_mismatches(None, spec) == ["mcp_servers.mafiabot as NoneType"]


# --- the project root and the checkout ---------------------------------------------------------------

def test_the_project_root_is_the_option_else_the_variable_else_the_cwd(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert settings.project_root() == tmp_path.resolve()
    monkeypatch.setenv(settings.PROJECT_ROOT_ENV, "")
    assert settings.project_root() == tmp_path.resolve()
    (tmp_path / "from-env").mkdir()
    (tmp_path / "given").mkdir()
    monkeypatch.setenv(settings.PROJECT_ROOT_ENV, str(tmp_path / "from-env"))
    assert settings.project_root() == (tmp_path / "from-env").resolve()
    assert settings.project_root(tmp_path / "given") == (tmp_path / "given").resolve()
    assert settings.state_dir(tmp_path) == tmp_path / ".agents" / "state"


def test_a_named_project_root_that_is_no_existing_directory_is_refused_naming_where_it_came_from(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "file").write_text("")
    monkeypatch.setenv(settings.PROJECT_ROOT_ENV, str(tmp_path / "typo"))
    with pytest.raises(ConfigError, match=r"^\$MAFIABOT_PROJECT_ROOT: .*/typo is a directory that does not exist$"):
        settings.project_root()
    with pytest.raises(ConfigError, match=r"^--project-root: .*/file is not a directory$"):
        settings.project_root(tmp_path / "file")


def a_checkout(folder: Path) -> Path:
    (folder / "mafiabot_core").mkdir(parents=True)
    (folder / "pyproject.toml").write_text("[project]\n", encoding="utf-8")
    return folder


def test_the_checkout_is_its_own_variable_else_the_package_s_else_none(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(settings, "PACKAGE_CHECKOUT", tmp_path / "package")
    assert settings.checkout() == tmp_path / "package"
    named = a_checkout(tmp_path / "named")
    assert settings.checkout({settings.CHECKOUT_ENV: str(named)}) == named
    with pytest.raises(ConfigError, match="is not a mafiabot checkout"):
        settings.checkout({settings.CHECKOUT_ENV: str(tmp_path / "package")})
    monkeypatch.setattr(settings, "PACKAGE_CHECKOUT", None)
    assert settings.checkout() is None and settings.checkout_file("stubs") is None


def test_a_project_root_that_is_not_a_checkout_leaves_the_package_s_checkout_in_place(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # The user's project (issue 26): `MAFIABOT_PROJECT_ROOT=~/work/myproj mafiabot-harness delegate ...` from the
    # checkout must still find the checkout's Hermes, body and fixture.
    monkeypatch.setattr(settings, "PACKAGE_CHECKOUT", tmp_path / "package")
    project = tmp_path / "myproj"
    (project / "src").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[project]\n", encoding="utf-8")
    environ = {settings.PROJECT_ROOT_ENV: str(project)}
    assert settings.checkout(environ) == tmp_path / "package"
    assert settings.project_root(environ=environ) == project.resolve()
    assert capsys.readouterr().err == ""


def test_the_old_variable_names_the_checkout_only_where_it_is_one_and_says_it_is_deprecated(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(settings, "PACKAGE_CHECKOUT", None)
    monkeypatch.setattr(settings, "NOTES_SAID", set())
    old = a_checkout(tmp_path / "old-style")
    assert settings.checkout({settings.PROJECT_ROOT_ENV: str(old)}) == old
    assert settings.checkout({settings.PROJECT_ROOT_ENV: str(old)}) == old
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and settings.CHECKOUT_ENV in err and "deprecated" in err, "one line, once"
    new = a_checkout(tmp_path / "new-style")
    assert settings.checkout({settings.PROJECT_ROOT_ENV: str(old), settings.CHECKOUT_ENV: str(new)}) == new
    assert capsys.readouterr().err == "", "the new variable set: nothing to warn about"


def test_this_suite_runs_from_a_checkout_the_package_recognises() -> None:
    from support import REPO
    assert settings._checkout_around_package() == REPO


@pytest.mark.parametrize("spelled, disabled", [("off", True), ("'no'", True), ("0", False), ("on", False)])
def test_doctor_judges_enabled_as_hermes_reads_it(spelled: str, disabled: bool, body_exe: Path,
                                                  tmp_path: Path) -> None:
    from harness.hermes_mount.doctor import FAIL, run_doctor
    home = tmp_path / "hermes-home"
    home.mkdir()
    (home / "config.yaml").write_text(f"mcp_servers:\n  mafiabot:\n    command: {body_exe}\n    enabled: {spelled}\n"
                                      f"    env: {{HERMES_HOME: {home}}}\n", encoding="utf-8")
    run = run_doctor(resolve_home(home), "mafiabot", use_hermes=False)
    failed = [check.name for check in run.checks if check.status == FAIL]
    assert failed == (["enabled"] if disabled else [])


# --- every variable: the option, else the variable, else the default ----------------------------------

def executable(path: Path) -> Path:
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def yaml_file(text: str) -> Callable[[Path], Path]:
    def write(path: Path) -> Path:
        path.write_text(text, encoding="utf-8")
        return path
    return write


def folder(path: Path) -> Path:
    path.mkdir()
    return path


@dataclass(frozen=True)
class Setting:
    """How one variable is read: `make` builds a usable value at a path; `read(option, environ, project)` is what
    the setting resolves to (the option None: not given); `default` what it is when neither is set."""

    make: Callable[[Path], Path | str]
    read: Callable[[Path | None, dict[str, str], Path], object]
    default: Callable[[Path], object]


REGISTRY = "agents: {scout: {profile: tester}}\n"
# Each variable that an option can override, with the resolver both edges call (harness.resolve) or the reader
# below it; a variable that no option overrides is in NOT_OVERRIDDEN with why.
SETTINGS: dict[str, Setting] = {
    settings.PROJECT_ROOT_ENV: Setting(folder, lambda given, env, project: resolve.project_root(given, env),
                                       lambda project: project),
    settings.AUTOBOT_QUEUE_ENV: Setting(folder, lambda given, env, project: resolve.queue(given, project, env).where,
                                        lambda project: project / QUEUE_DIR),
    settings.AUTOPILOT_LEDGER_ENV: Setting(
        yaml_file(""), lambda given, env, project: resolve.ledger_path(given, project, settings.AUTOPILOT_LEDGER_ENV,
                                                                       env),
        default_ledger_path),
    settings.AGENT_REGISTRY_ENV: Setting(yaml_file(REGISTRY), lambda given, env, project: resolve.registry(given).source,
                                         lambda project: "built-in defaults"),
    settings.AUTOPILOT_SENTINEL_ENV: Setting(
        yaml_file("{}\n"), lambda given, env, project: load_sentinel(given, env).source, lambda project: "built-in defaults"),
    settings.HERMES_BIN_ENV: Setting(executable, lambda given, env, project: locate.find_executable(given, env),
                                     lambda project: None),
    settings.BODY_ENV: Setting(executable, lambda given, env, project: body.body_path(given), lambda project: None),
    settings.DATABASE_URL_ENV: Setting(lambda path: f"postgresql:///{path.name}",
                                       lambda given, env, project: settings.database_url(given and str(given), env),
                                       lambda project: None),
}
NOT_OVERRIDDEN = {
    settings.CHECKOUT_ENV: "the checkout has no option: tested above with the old variable's deprecation",
    settings.AUTOPILOT_DNA_ENV: "set by a parent kernel for its children, never by a person (tests/python/autopilot)",
}


def test_every_variable_is_read_here_with_its_option_or_said_why_not() -> None:
    assert set(SETTINGS) | set(NOT_OVERRIDDEN) == set(settings.ENV_VARS)
    assert not set(SETTINGS) & set(NOT_OVERRIDDEN)


def _comparable(value: object) -> object:
    return str(Path(value).resolve()) if isinstance(value, (str, Path)) and str(value).startswith("/") else value


@pytest.mark.parametrize("variable", sorted(SETTINGS))
def test_the_option_wins_over_the_variable_which_wins_over_the_default(
        variable: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    setting = SETTINGS[variable]
    project = folder(tmp_path / "project")
    monkeypatch.chdir(project)
    monkeypatch.setattr(settings, "PACKAGE_CHECKOUT", None)  # no checkout's Hermes or body as a default
    named, given = setting.make(tmp_path / "from-variable"), setting.make(tmp_path / "from-option")

    def read(option: Path | None, value: str | None) -> object:
        env = {"PATH": ""} if value is None else {"PATH": "", variable: value}
        for name, text in env.items():  # the readers that take no environment read the process's
            monkeypatch.setenv(name, text)
        if value is None:
            monkeypatch.delenv(variable, raising=False)
        return _comparable(setting.read(option, env, project))

    expected = _comparable(setting.default(project))
    assert read(None, None) == expected, "neither set: the default"
    assert read(None, "") == expected, "an empty variable is unset"
    assert read(None, str(named)) == _comparable(named), "the variable"
    assert read(given, str(named)) == _comparable(given), "the option wins over the variable"
    assert read(given, None) == _comparable(given)
