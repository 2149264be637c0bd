"""The autobot intent schema: every field's type checked, the bad field named, defaults applied."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.autobot.intent import IntentError, load_intent_file, parse_intent


def base(project: Path, **payload) -> dict:
    return {"intent": "Summarise.", "project_root": str(project), "payload": payload}


def test_defaults_of_the_seed_apply_to_a_minimal_intent(project: Path) -> None:
    intent = parse_intent({"intent": "Summarise.", "project_root": str(project)})
    assert (intent.hermes_profile, intent.model, intent.expected_output, intent.max_chars, intent.timeout_seconds,
            intent.session_name, intent.write_to, intent.tags) == ("cstar-hub", "MiniMax-M3", "markdown", 4000, 300,
                                                                    None, None, ())


@pytest.mark.parametrize("payload, field", [
    ({"max_chars": "abc"}, "payload.max_chars"),
    ({"max_chars": True}, "payload.max_chars"),
    ({"max_chars": 0}, "payload.max_chars"),
    ({"timeout_seconds": None}, "payload.timeout_seconds"),
    ({"timeout_seconds": 1.5}, "payload.timeout_seconds"),
    ({"tags": "a,b"}, "payload.tags"),
    ({"tags": ["ok", 3]}, "payload.tags[1]"),
    ({"tags": ["has space"]}, "payload.tags[0]"),
    ({"expected_output": "yaml"}, "payload.expected_output"),
    ({"hermes_profile": "Cstar Hub"}, "payload.hermes_profile"),
    ({"model": ""}, "payload.model"),
    ({"session_name": 5}, "payload.session_name"),
    ({"write_to": ["a"]}, "payload.write_to"),
    ({"append_with_separator": "§"}, "payload.append_with_separator"),
    ({"max_char": 10}, "payload.max_char"),
])
def test_a_bad_payload_field_is_named(project: Path, payload: dict, field: str) -> None:
    with pytest.raises(IntentError) as caught:
        parse_intent(base(project, **payload))
    assert caught.value.field == field


@pytest.mark.parametrize("change, field", [
    ({"intent": ""}, "intent"),
    ({"intent": 7}, "intent"),
    ({"project_root": "/no/such/dir"}, "project_root"),
    ({"target_paths": "docs/a.md"}, "target_paths"),
    ({"target_paths": ["ok", None]}, "target_paths[1]"),
    ({"payload": None}, "payload"),
    ({"extra": 1}, "extra"),
])
def test_a_bad_top_level_field_is_named(project: Path, change: dict, field: str) -> None:
    with pytest.raises(IntentError) as caught:
        parse_intent({**base(project), **change})
    assert caught.value.field == field


def test_a_missing_required_field_is_named(project: Path) -> None:
    with pytest.raises(IntentError) as caught:
        parse_intent({"project_root": str(project)})
    assert caught.value.field == "intent"


def test_the_hash_depends_on_the_task_not_on_how_its_json_is_spelt(project: Path) -> None:
    spelt_out = parse_intent({"project_root": str(project) + "/docs/..", "intent": "Summarise.",
                              "payload": {"max_chars": 4000}})
    minimal = parse_intent({"intent": "Summarise.", "project_root": str(project)})
    other = parse_intent(base(project, max_chars=10))
    assert spelt_out.hash == minimal.hash != other.hash


def test_an_unreadable_or_malformed_intent_file_is_an_intent_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    for path in (bad, tmp_path / "missing.json"):
        with pytest.raises(IntentError) as caught:
            load_intent_file(path)
        assert caught.value.field == "(file)"
