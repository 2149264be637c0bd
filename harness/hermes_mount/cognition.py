"""The body's cognition in its Hermes entry: `--cognition stub|sampling`, and the `sampling:` block a sampled turn needs.

With `--cognition sampling` each reasoning pass that Energy lets run is one `sampling/createMessage` the body sends
while Hermes waits for the turn, and the synthesis is one more; Hermes answers each with its own model, governed by
the entry's `sampling:` block (tools/mcp_tool.py, SamplingHandler: `max_rpm` a sliding minute, `timeout` per call,
`max_tokens_cap` on each request's maxTokens). Its defaults (10 a minute) would refuse eight of the nine calls of the
second full turn in a minute, so mount sizes the block from the body's own bounds and the full turns a minute the
operator allows.

Invariants:
- One source of truth for a turn's calls: `CALLS_PER_FULL_TURN` is the passes of the trace (harness.trace) plus the
  synthesis; a drained turn runs one pass, so `CALLS_PER_DRAINED_TURN` is two. An entry whose args say
  `--intent model` asks the model once more a turn, for the intent (`INTENT_CALLS`, the body's
  `Cycle_Order.Model_Calls`): its bounds carry it (`SamplingBounds.full_turn_calls`), and every figure below that
  speaks of a full turn is that entry's.
- The body's bounds (`SamplingBounds`) are read off the entry's own command line when it sets them, else from the
  body's `--help`, which states every default: the body owns them, mount never restates a number of its own.
- `max_rpm` is the operator's spend brake, not a speed the body needs: the rate of sampled calls is bounded by the
  model's latency, so no bound of the body's own sizes it. `required_block(bounds, turns)` makes it
  `CALLS_PER_FULL_TURN` x the full turns a minute the operator allows (`--sampling-turns-per-minute`,
  `TURNS_PER_MINUTE_RANGE`, default `DEFAULT_TURNS_PER_MINUTE`), so it is never below one full turn: that many
  turns back to back in a minute are never throttled, and a loop calling `turn` faster still is. `timeout` is the
  body's per-request timeout (the body, not Hermes, decides a call took too long, and says so in its trace),
  `max_tokens_cap` the body's per-pass max tokens. `tool_timeout_floor(bounds)` is the least entry `timeout` that
  outlasts the body's turn deadline. `full_turns_a_minute(max_rpm, calls)` says what a block's max_rpm allows.
- Applying keeps what an operator set at least as large (their limit then stays theirs), raises what is smaller or
  unreadable with a note; an own max_rpm is kept whenever it lets one full turn through (`_keep_floor`: it is the
  operator's brake, and a remount for another reason must never loosen it); max_rpm is written exactly as asked
  when `--sampling-turns-per-minute` was given (a brake the operator just typed holds, even below the entry's own,
  with a note); `enabled: true` is set over a value Hermes reads as false; the keys mount does not size (`model`,
  `allowed_models`, `max_tool_rounds`, `log_level`) are never touched.
- Taking sampling back (`--cognition stub`) removes only the keys whose values are exactly what mount would write,
  and the block when nothing else is left in it; anything else in it is the operator's and stays.
- Values are judged the way Hermes coerces them (`hermes_number`: `int("50")`, a float for timeout, a bool is not
  a number), so a block Hermes reads as large enough is never rewritten.
"""

from __future__ import annotations

import math
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ruamel.yaml.comments import CommentedMap

from harness.errors import ConfigError
from harness.hermes_mount.config_file import child_mapping
from harness.trace import FIRST_PASS_STEP, LAST_PASS_STEP

COGNITION_OPTION = "--cognition"
STUB, SAMPLING = "stub", "sampling"
COGNITIONS = (STUB, SAMPLING)
SAMPLING_KEY = "sampling"
# The passes are every other step from the first pass step to the last (harness.trace): eight.
PASS_TOTAL = (LAST_PASS_STEP - FIRST_PASS_STEP) // 2 + 1
SYNTHESIS_CALLS = 1
CALLS_PER_FULL_TURN = PASS_TOTAL + SYNTHESIS_CALLS
CALLS_PER_DRAINED_TURN = 1 + SYNTHESIS_CALLS
INTENT_OPTION = "--intent"
INTENT_BY_MODEL = "model"
# --intent model: the intent (step 20) is one question more a turn, whatever the energy.
INTENT_CALLS = 1
# Hermes counts max_rpm over a sliding minute (SamplingHandler._check_rate_limit), so a minute is the brake's unit.
TURNS_PER_MINUTE_OPTION = "--sampling-turns-per-minute"
# One a minute is the least that lets a turn finish; past one a second a brake no longer brakes a runaway loop.
TURNS_PER_MINUTE_RANGE = (1, 60)
# Six full turns a minute (54 calls) is a brisk conversation, yet a loop is throttled within its seventh turn.
DEFAULT_TURNS_PER_MINUTE = 6
# The turn's reply still has to reach Hermes and be read once the body's deadline struck: a second is ample
# for one line on a pipe, and a whole second keeps the entry's timeout the plain integer mount writes.
DEADLINE_MARGIN_SECONDS = 1
# The body answers --help at once; this only stops a hang.
HELP_TIMEOUT = 10.0


@dataclass(frozen=True)
class BodyBound:
    option: str
    what: str


REQUEST_TIMEOUT = BodyBound("--sampling-timeout-ms", "per-request timeout")
TURN_DEADLINE = BodyBound("--turn-deadline-ms", "turn deadline")
MAX_TOKENS = BodyBound("--sampling-max-tokens", "per-pass max tokens")
BODY_BOUNDS = (REQUEST_TIMEOUT, TURN_DEADLINE, MAX_TOKENS)


@dataclass(frozen=True)
class SamplingBounds:
    """The body's own bounds on a sampled turn, and where each came from ("the entry's args" or "the body's default")."""

    request_timeout_ms: int
    turn_deadline_ms: int
    max_tokens: int
    sources: tuple[str, ...] = ()
    intent_calls: int = 0
    # INTENT_CALLS when the entry's args say --intent model

    @property
    def full_turn_calls(self) -> int:
        """The model calls of one full-energy turn of this entry's body."""
        return CALLS_PER_FULL_TURN + self.intent_calls


@dataclass(frozen=True)
class SamplingBlock:
    """The sized keys of Hermes's per-server `sampling:` block."""

    max_rpm: int
    timeout: int | float  # seconds, as Hermes reads it
    max_tokens_cap: int
    full_turn_calls: int = CALLS_PER_FULL_TURN
    # Not a key: the calls of the full turn the block is sized for (the least max_rpm an operator's brake may be)

    def items(self) -> dict[str, int | float]:
        return {"max_rpm": self.max_rpm, "timeout": self.timeout, "max_tokens_cap": self.max_tokens_cap}


@dataclass(frozen=True)
class SamplingSpec:
    """What mount does with the entry's `sampling:` block: size it (`on`) or take back what it wrote.

    `turns_asked`: the operator gave --sampling-turns-per-minute, so `block.max_rpm` is written as it is."""

    block: SamplingBlock
    on: bool
    bounds: SamplingBounds
    turns_asked: bool = False
    budget: SessionBudget | None = None


ENERGY_OPTION = "--energy"
BUDGET = "budget"
BUDGET_CALLS = BodyBound("--budget-calls", "model calls a session may make in a window")
BUDGET_WINDOW = BodyBound("--budget-window-s", "the budget's sliding window, in seconds")
BUDGET_BOUNDS = (BUDGET_CALLS, BUDGET_WINDOW)
# Hermes's max_rpm counts a sliding minute (SamplingHandler._check_rate_limit).
RATE_WINDOW_SECONDS = 60


@dataclass(frozen=True)
class SessionBudget:
    """The body's per-session model budget (`--energy budget`, docs/energy.md): `calls` in any `window_s` seconds."""

    calls: int
    window_s: int

    def most_calls_a_minute(self) -> int:
        """The most calls one session can make in any minute: a minute splits into ceil(60 / window) stretches no
        longer than the window, and the body's sliding log lets at most `calls` through each."""
        return self.calls * math.ceil(RATE_WINDOW_SECONDS / self.window_s)


def option_value(argv: Sequence[str], option: str) -> str | None:
    """The last value a command line gives `option` (`--opt V` or `--opt=V`); None when it gives none."""
    value = None
    items = iter(argv)
    for item in items:
        name, joined, rest = item.partition("=")
        if name == option:
            value = rest if joined else next(items, None)
    return value


def cognition_of(body: Sequence[str]) -> str:
    """The cognition a body command line runs (the body's default, stub, when it names none)."""
    return option_value(body[1:], COGNITION_OPTION) or STUB


def help_defaults(help_text: str, bounds: Sequence[BodyBound] = BODY_BOUNDS) -> dict[str, int]:
    """The `(default N)` the body's --help states for each of `bounds` (its sampling bounds unless told)."""
    found: dict[str, int] = {}
    for bound in bounds:
        # The option's own lines: from its name to the next line that starts another option.
        match = re.search(rf"^\s*{re.escape(bound.option)}\b(.*?)(?=^\s*--|\Z)", help_text, re.MULTILINE | re.DOTALL)
        number = re.search(r"\(default:? (\d+)", match.group(1)) if match else None
        if number is not None:
            found[bound.option] = int(number.group(1))
    return found


def body_help(executable: str) -> str:
    try:
        completed = subprocess.run([executable, "--help"], check=False, capture_output=True, text=True, timeout=HELP_TIMEOUT,
                                   stdin=subprocess.DEVNULL, errors="replace")
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ConfigError(f"could not ask the body {executable} for its sampling defaults (--help): {exc}") from None
    return completed.stdout + completed.stderr


def sampling_bounds(body: Sequence[str], help_text: str | None = None) -> SamplingBounds:
    """The body's bounds on a sampled turn: the entry's args first, else the defaults its --help states."""
    args = body[1:]
    given = {bound.option: option_value(args, bound.option) for bound in BODY_BOUNDS}
    defaults: dict[str, int] = {}
    if any(value is None for value in given.values()):
        defaults = help_defaults(body_help(body[0]) if help_text is None else help_text)
    values, sources = [], []
    for bound in BODY_BOUNDS:
        text = given[bound.option]
        if text is not None:
            if not text.isdigit() or int(text) < 1:
                raise ConfigError(f"the entry's body argument {bound.option} {text}: not a positive whole number; "
                                  "the body would refuse to start")
            values.append(int(text))
            sources.append("the entry's args")
        elif bound.option in defaults:
            values.append(defaults[bound.option])
            sources.append("the body's default")
        else:
            raise ConfigError(f"the body {body[0]} does not state a default for {bound.option} in its --help: it "
                              f"predates {COGNITION_OPTION} {SAMPLING} (build the current body with `make build`)")
    timeout_ms, deadline_ms, max_tokens = values
    intent = INTENT_CALLS if option_value(args, INTENT_OPTION) == INTENT_BY_MODEL else 0
    return SamplingBounds(timeout_ms, deadline_ms, max_tokens, tuple(sources), intent)


def session_budget(body: Sequence[str], help_text: str | None = None) -> SessionBudget | None:
    """The per-session budget a body command line runs with (`--energy budget`), None without one: the entry's
    args first, else the defaults the body's --help states."""
    args = body[1:]
    if option_value(args, ENERGY_OPTION) != BUDGET:
        return None
    given = {bound.option: option_value(args, bound.option) for bound in BUDGET_BOUNDS}
    defaults: dict[str, int] = {}
    if any(value is None for value in given.values()):
        defaults = help_defaults(body_help(body[0]) if help_text is None else help_text, BUDGET_BOUNDS)
    values = []
    for bound in BUDGET_BOUNDS:
        text = given[bound.option]
        if text is not None and (not text.isdigit() or int(text) < 1):
            raise ConfigError(f"the entry's body argument {bound.option} {text}: not a positive whole number; "
                              "the body would refuse to start")
        if text is None and bound.option not in defaults:
            raise ConfigError(f"the body {body[0]} does not state a default for {bound.option} in its --help: it "
                              f"predates {ENERGY_OPTION} {BUDGET} (build the current body with `make build`)")
        values.append(int(text) if text is not None else defaults[bound.option])
    return SessionBudget(calls=values[0], window_s=values[1])


def check_turns_per_minute(turns: int) -> int:
    """`turns` when mount may size max_rpm from it; ConfigError otherwise."""
    low, high = TURNS_PER_MINUTE_RANGE
    if isinstance(turns, bool) or not isinstance(turns, int) or not low <= turns <= high:
        raise ConfigError(f"{TURNS_PER_MINUTE_OPTION} {turns}: give {low} to {high} full turns a minute (each is "
                          f"{CALLS_PER_FULL_TURN} model calls; the default is {DEFAULT_TURNS_PER_MINUTE}); "
                          "nothing was written")
    return turns


def required_block(bounds: SamplingBounds, turns_per_minute: int,
                   budget: SessionBudget | None = None) -> SamplingBlock:
    """The least block for `turns_per_minute` back-to-back full turns a minute (at least one) under the body's bounds,
    and, with a per-session budget, for all the calls one session's budget lets through in a minute: the body's
    budget then paces a session before Hermes's brake throttles it."""
    most = budget.most_calls_a_minute() if budget is not None else 0
    return SamplingBlock(max_rpm=max(max(turns_per_minute, 1) * bounds.full_turn_calls, most),
                         timeout=seconds(bounds.request_timeout_ms), max_tokens_cap=bounds.max_tokens,
                         full_turn_calls=bounds.full_turn_calls)


def full_turns_a_minute(max_rpm: int | float, full_turn_calls: int = CALLS_PER_FULL_TURN) -> str:
    """The full turns a minute Hermes answers whole under `max_rpm`, in words ("6 full turns")."""
    turns = int(max_rpm // full_turn_calls)
    return f"{turns} full turn{'' if turns == 1 else 's'}"


def tool_timeout_floor(bounds: SamplingBounds) -> int:
    """The least whole-second entry `timeout` that outlasts the body's turn deadline."""
    return math.floor(bounds.turn_deadline_ms / 1000) + DEADLINE_MARGIN_SECONDS


def seconds(milliseconds: int) -> int | float:
    value = milliseconds / 1000
    return int(value) if value.is_integer() else value


def hermes_number(value: Any, kind: type) -> int | float | None:
    """`value` as SamplingHandler's _safe_numeric coerces it; None where Hermes would fall back to its default."""
    if isinstance(value, bool):
        return None  # int(True) is 1: a YAML `yes` is no limit anyone meant
    try:
        number = kind(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def hermes_enabled(block: Mapping[str, Any]) -> bool:
    """Whether Hermes answers the server's sampling requests (`sampling_config.get("enabled", True)`, truthiness)."""
    return bool(block.get("enabled", True))


def _kind(key: str) -> type:
    return float if key == "timeout" else int


def shortfalls(block: Any, required: SamplingBlock) -> list[str]:
    """What in a `sampling:` block as Hermes read it falls short of `required`, one phrase each; [] when nothing."""
    if block is None:
        block = {}
    if not isinstance(block, dict):
        return [f"sampling: {block!r} is not a mapping"]
    problems = [] if hermes_enabled(block) else [f"sampling.enabled: {block.get('enabled')!r}"]
    for key, least in required.items().items():
        read = hermes_number(block.get(key), _kind(key)) if key in block else None
        if read is None or read < _keep_floor(key, least, required.full_turn_calls):
            problems.append(f"sampling.{key}: {block.get(key, 'absent')!r} < {least}")
    return problems


def sampling_block_of(entry: CommentedMap, name: str, create: bool) -> CommentedMap | None:
    return child_mapping(entry, SAMPLING_KEY, create, f"mcp_servers.{name}.{SAMPLING_KEY}")


def apply_sampling(entry: CommentedMap, name: str, spec: SamplingSpec) -> list[str]:
    """Size the entry's block (or take back what mount wrote); returns notes for the operator."""
    return _size(entry, name, spec) if spec.on else _take_back(entry, name, spec.block)


def _exact(spec: SamplingSpec, key: str) -> bool:
    return spec.turns_asked and key == "max_rpm"


def _size(entry: CommentedMap, name: str, spec: SamplingSpec) -> list[str]:
    block = sampling_block_of(entry, name, create=True)
    assert block is not None
    notes, kept = [], []
    if not hermes_enabled(block):
        notes.append(f"sampling.enabled was {block['enabled']!r}, so Hermes would not answer the body's requests and "
                     "the body would think with its stub organs: set to true")
        block["enabled"] = True
    for key, least in spec.block.items().items():
        if key not in block:
            block[key] = least
            continue
        read = hermes_number(block[key], _kind(key))
        held = _held(spec, key, read, least)
        if held != least:
            kept.append(f"{key} {block[key]}")
        elif read == least:
            continue
        elif _exact(spec, key):
            notes.append(f"set sampling.max_rpm from {block[key]!r} to {least}: {TURNS_PER_MINUTE_OPTION} "
                         f"{least // spec.block.full_turn_calls} asks for it")
            block[key] = least
        else:
            notes.append(f"raised sampling.{key} from {block[key]!r} to {least}: "
                         f"{_why(key, spec.block.full_turn_calls)}")
            block[key] = least
    if kept:
        notes.append(f"kept the entry's own sampling {', '.join(kept)} (at least what a full turn needs)")
    rpm = hermes_number(block.get("max_rpm"), int)
    if spec.budget is not None and rpm is not None and rpm < spec.budget.most_calls_a_minute():
        notes.append(f"sampling.max_rpm {rpm} is below the {spec.budget.most_calls_a_minute()} calls a minute the "
                     f"body's budget ({BUDGET_CALLS.option} {spec.budget.calls} in {BUDGET_WINDOW.option} "
                     f"{spec.budget.window_s}) lets one session make: Hermes will refuse some calls the budget allows "
                     "(the trace marks them failed); kept, as it is your brake")
    return notes


def _held(spec: SamplingSpec, key: str, read: int | float | None, least: int | float) -> int | float:
    """The value a sized key ends with: the operator's own where mount keeps it, else mount's `least`."""
    if _exact(spec, key) or read is None or read < _keep_floor(key, least, spec.block.full_turn_calls):
        return least
    return read


def _keep_floor(key: str, least: int | float, full_turn_calls: int) -> int | float:
    """The least value of the entry's own that mount keeps when the operator did not ask for a number now.

    An operator's max_rpm is their brake on spend: any that lets one full turn through stays theirs, tighter than
    the default or not (a remount for another reason must not loosen it). The other keys must reach the body's
    bounds, or Hermes would cut calls the body still waits for.
    """
    return full_turn_calls if key == "max_rpm" else least


def _why(key: str, full_turn_calls: int) -> str:
    return {"max_rpm": f"below it Hermes refuses calls of the full turns a minute it allows ({full_turn_calls} "
                       "each)",
            "timeout": "below it Hermes gives up on a call the body still waits for",
            "max_tokens_cap": "below it Hermes cuts every pass's answer short of the body's budget"}[key]


def _take_back(entry: CommentedMap, name: str, written: SamplingBlock) -> list[str]:
    block = sampling_block_of(entry, name, create=False)
    if block is None:
        return []
    removed = [key for key, value in written.items().items()
               if key in block and hermes_number(block[key], _kind(key)) == value]
    for key in removed:
        del block[key]
    if not removed:
        return []
    left = [str(key) for key in block]
    if not left and not block.ca.comment and not block.ca.items:
        del entry[SAMPLING_KEY]
        return [f"removed the sampling block mount wrote ({', '.join(removed)})"]
    kept = ", ".join(left) if left else "comments"
    return [f"removed sampling.{', sampling.'.join(removed)} (what mount wrote); kept the entry's own {kept}"]


def restate_sampling(entry: CommentedMap, name: str, spec: SamplingSpec) -> None:
    """Assign the block's sized keys as plain values (see entry.restate_entry)."""
    if not spec.on:
        return
    block = sampling_block_of(entry, name, create=True)
    assert block is not None
    for key, least in spec.block.items().items():
        block[key] = _held(spec, key, hermes_number(block.get(key), _kind(key)), least)
    if "enabled" in block:
        block["enabled"] = True


def describe(spec: SamplingSpec, tool_timeout: float) -> list[str]:
    """What mount chose and why, in two lines."""
    bounds, block = spec.bounds, spec.block
    sources = dict(zip((b.option for b in BODY_BOUNDS), spec.bounds.sources, strict=True))
    rpm = f"max_rpm {block.max_rpm}" if spec.turns_asked else f"max_rpm >= {block.max_rpm}"
    intent = " + the intent" if bounds.intent_calls else ""
    chosen = (f"sampling: {rpm}, timeout >= {block.timeout} s, max_tokens_cap >= {block.max_tokens_cap}: a full "
              f"turn is {bounds.full_turn_calls} model calls ({PASS_TOTAL} passes{intent} + the synthesis, "
              f"{CALLS_PER_DRAINED_TURN + bounds.intent_calls} drained), and Hermes answers "
              f"{'' if spec.turns_asked else 'at least '}"
              f"{full_turns_a_minute(block.max_rpm, bounds.full_turn_calls)} a minute back to back "
              f"({TURNS_PER_MINUTE_OPTION}), then throttles: the brake on a runaway loop")
    why = (f"          Hermes waits a call as long as the body ({REQUEST_TIMEOUT.option} {bounds.request_timeout_ms}, "
           f"{sources[REQUEST_TIMEOUT.option]}), caps no pass below {MAX_TOKENS.option} {bounds.max_tokens}, and the "
           f"tool timeout {tool_timeout:g} s outlasts {TURN_DEADLINE.option} {bounds.turn_deadline_ms}")
    if spec.budget is None:
        return [chosen, why]
    budget = (f"          the body's budget ({ENERGY_OPTION} {BUDGET}): {BUDGET_CALLS.option} {spec.budget.calls} "
              f"in {BUDGET_WINDOW.option} {spec.budget.window_s} a session, at most "
              f"{spec.budget.most_calls_a_minute()} calls of one session a minute, within max_rpm; its passes fall "
              "as it spends (docs/energy.md)")
    return [chosen, why, budget]

