"""The declared outputSchema describes every trace the body returns, as the SDK client checks."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from harness.client import modern_params
from support import check_text_block, check_trace, turn_arguments

DEFAULT_FIXTURE = Path(__file__).resolve().parents[2] / "stubs" / "organs" / "default.json"
MAX_NAME_BYTES = 128  # Organs.Max_Name_Bytes

TRACE_REQUIRED = {"session", "turn", "energy", "passes_run", "steps", "route", "coherence", "output", "identity"}
# The optional members of an object of the trace, by that object's required members: the session's origin,
# which the body echoes from key_origin (set by the Level1 Hermes plugin) only when a call gives it.
OPTIONAL = {("uid", "channel", "server"): ["origin"]}
ORIGIN = "level1 cli session=20261201_113000_abc123"

# The default curve runs pass K iff energy >= (K - 1) / 8: a session pinned at (P - 1) / 8 runs P passes.
PINNED_FOR_PASSES = {passes: (passes - 1) * 0.125 for passes in range(1, 9)}


@pytest.fixture
def turn_tool(ready_body):
    [tool] = ready_body.list_tools()
    return tool


def test_input_and_output_schemas_are_valid_draft_2020_12(turn_tool):
    Draft202012Validator.check_schema(turn_tool["inputSchema"])
    Draft202012Validator.check_schema(turn_tool["outputSchema"])
    assert turn_tool["outputSchema"]["type"] == "object"
    assert set(turn_tool["outputSchema"]["required"]) >= TRACE_REQUIRED


def test_input_schema_rejects_an_extra_argument(turn_tool):
    validator = Draft202012Validator(turn_tool["inputSchema"])
    assert validator.is_valid({"input": "i", "uid": "u", "channel": "c", "server": "s"})
    assert not validator.is_valid({"input": "i", "uid": "u", "channel": "c", "server": "s", "x": "y"})


def test_every_trace_across_rooms_and_energies_validates(ready_body, turn_tool):
    validator = Draft202012Validator(turn_tool["outputSchema"])
    rooms = [("ana", "#a", "s1"), ("bob", "#a", "s1"), ("demo-tired", "general", "demo")]
    for n in range(12):
        for uid, channel, server in rooms[: 1 + n % 3]:
            trace = ready_body.call_turn(f"turn {n}: remember the {n}th clue?", uid, channel, server)
            validator.validate(trace)
            check_trace(trace)


@pytest.mark.parametrize("breakage", [
    "passes_run_9", "passes_run_0", "energy_above_1", "status_unknown", "steps_22", "output_missing",
    "session_missing_uid",
])
def test_output_schema_rejects_a_trace_that_breaks_the_contract(ready_body, turn_tool, breakage):
    trace = copy.deepcopy(ready_body.call_turn("hello", "u", "c", "s"))
    if breakage == "passes_run_9":
        trace["passes_run"] = 9
    elif breakage == "passes_run_0":
        trace["passes_run"] = 0
    elif breakage == "energy_above_1":
        trace["energy"] = 1.5
    elif breakage == "status_unknown":
        trace["steps"][0]["status"] = "maybe"
    elif breakage == "steps_22":
        trace["steps"].pop()
    elif breakage == "output_missing":
        del trace["output"]
    elif breakage == "session_missing_uid":
        del trace["session"]["uid"]
    assert not Draft202012Validator(turn_tool["outputSchema"]).is_valid(trace)


key_part = st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=40)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300),
       uid=key_part, channel=key_part, server=key_part)
def test_any_unicode_input_and_key_gives_a_valid_trace(module_body, text, uid, channel, server):
    [tool] = module_body.list_tools()
    trace = module_body.call_turn(text, uid, channel, server)
    Draft202012Validator(tool["outputSchema"]).validate(trace)
    check_trace(trace)
    assert trace["session"] == {"uid": uid, "channel": channel, "server": server}


def test_the_longest_names_a_fixture_may_give_still_make_whole_traces(spawn_body, tmp_path):
    """The worst turn the bounds allow: every card, position and move name at the 128-byte limit (in
    multi-byte characters, quoted ones included), key parts of 256 bytes, the longest recall. Every
    text and number of the trace is kept in one store sized for that; a store too small would cut them
    and the reply would not be JSON. The trace must validate and quote each name whole."""
    fixture = json.loads(DEFAULT_FIXTURE.read_text())

    def longest(tag: str, index: int) -> str:
        head = f'{tag}{index} "é" '
        return head + "ü" * ((MAX_NAME_BYTES - len(head.encode())) // 2) + "x" * ((MAX_NAME_BYTES - len(head.encode())) % 2)

    fixture["deck"]["cards"] = [longest("card", i) for i in range(len(fixture["deck"]["cards"]))]
    fixture["celtic_cross"]["positions"] = [longest("pos", i) for i in range(8)]
    fixture["cognition"]["descent"] = [longest("down", i) for i in range(4)]
    fixture["cognition"]["ascent"] = [longest("up", i) for i in range(4)]
    fixture["morag"]["excerpt_bytes"] = 1024
    assert all(len(name.encode()) == MAX_NAME_BYTES for name in fixture["deck"]["cards"])
    organs = tmp_path / "longest.json"
    organs.write_text(json.dumps(fixture, ensure_ascii=False))
    body = spawn_body(organs=organs)
    body.initialize()
    [tool] = body.list_tools()
    validator = Draft202012Validator(tool["outputSchema"])
    uid, channel, server = "u" * 256, "c" * 256, "s" * 256
    said = "remember " + "the long road, " * 120
    for _ in range(3):
        trace = body.call_turn(said, uid, channel, server)
        validator.validate(trace)
        check_trace(trace)
    assert trace["passes_run"] >= 1 and trace["route"]["intent"] == "remember"
    draws = [step["detail"] for step in trace["steps"] if step["name"].endswith("-draw") and step["status"] == "ran"]
    assert draws and all(any(card in draw for card in fixture["deck"]["cards"]) for draw in draws)
    assert 0 <= trace["coherence"]["score"] <= 1 and trace["coherence"]["score"] + trace["coherence"]["drift"] == 1


def test_a_name_longer_than_the_limit_refuses_to_start(body_exe, tmp_path):
    fixture = json.loads(DEFAULT_FIXTURE.read_text())
    fixture["cognition"]["ascent"][2] = "m" * (MAX_NAME_BYTES + 1)
    organs = tmp_path / "too-long.json"
    organs.write_text(json.dumps(fixture))
    run = subprocess.run([str(body_exe), "--organs", str(organs), "--no-soul"], capture_output=True,
                         timeout=5.0, stdin=subprocess.DEVNULL, check=False)
    assert run.returncode != 0 and run.stdout == b""
    assert "cognition.ascent[3]" in run.stderr.decode() and f"longer than {MAX_NAME_BYTES} bytes" in run.stderr.decode()


@pytest.fixture
def body_of_every_pass_count(spawn_body, tmp_path):
    """A body whose fixture pins one session per pass count, uid "p<passes>"."""
    fixture = json.loads(DEFAULT_FIXTURE.read_text())
    fixture["drive_box"]["pinned"] = [{"uid": f"p{passes}", "channel": "c", "server": "s", "energy": energy}
                                      for passes, energy in PINNED_FOR_PASSES.items()]
    organs = tmp_path / "every-pass-count.json"
    organs.write_text(json.dumps(fixture))
    return spawn_body(organs=organs)


def member_order(schema: dict, value: dict) -> None:
    """The value's members are the schema's properties, in the schema's order, object by object: the three
    are derived from one table of members (Turn_Tool.Result_Members), so their orders cannot differ. The one
    optional property, session.origin, is there exactly when the call gave key_origin (OPTIONAL)."""
    optional = [name for name in schema["properties"] if name not in schema["required"]]
    assert optional == OPTIONAL.get(tuple(schema["required"]), [])
    assert list(value) == [name for name in schema["properties"] if name in value]
    assert [name for name in value if name not in optional] == schema["required"]
    for name, member in schema["properties"].items():
        if member.get("type") == "object":
            member_order(member, value[name])


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_every_pass_count_in_both_eras_validates_against_the_advertised_schema(body_of_every_pass_count, era):
    body = body_of_every_pass_count
    if era == "legacy":
        body.initialize()
        params = None
    else:
        params = modern_params()
    [tool] = body.list_tools(params)
    schema = tool["outputSchema"]
    validator = Draft202012Validator(schema)
    seen = set()
    for passes, energy in PINNED_FOR_PASSES.items():
        for said, origin in (("remember the moon?", None), ('a "quoted" \\ turn, caf\u00e9', None),
                             ("who set my key?", ORIGIN)):
            given = turn_arguments(said, uid=f"p{passes}") | ({"key_origin": origin} if origin else {})
            result = body.call_tool("turn", given, params)
            trace = result["structuredContent"]
            assert trace["session"].get("origin") == origin
            validator.validate(trace)
            check_trace(trace)
            check_text_block(result)
            member_order(schema, trace)
            assert trace["passes_run"] == passes and trace["energy"] == energy
            seen.add(trace["passes_run"])
    assert seen == set(range(1, 9))


def test_the_text_block_copy_is_structured_content_byte_for_byte(ready_body):
    """Both copies of the result are filled from one template of the one table: the JSON text in the text block
    is structuredContent as the body wrote it, byte for byte (not merely equal once parsed)."""
    ready_body.send_raw(b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"turn","arguments":'
                        b'{"input":"say \\"hi\\" to caf\\u00e9","uid":"u","channel":"c","server":"s"}}}\n')
    line = ready_body.read_line(timeout=5.0, awaiting="the turn's reply")
    result = json.loads(line)["result"]
    raw_structured = line[line.index(b'"structuredContent":') + len(b'"structuredContent":'):line.rindex(b',"isError"')]
    text = result["content"][0]["text"]
    assert text.split("\n\n", 1)[1].encode() == raw_structured
