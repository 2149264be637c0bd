"""The CLI's own readers of values: the counts and durations its options take, and dispatch's input file.

A count is an integer of at least 1; a duration a finite number of seconds above 0. Dispatch's
`--input-file` holds the inputs object, or the seed's {"skill", "inputs"} envelope around it; flags
override its fields. The edge tests give each option one hostile value; the boundaries are here.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

from harness.cli.dispatch_commands import gather_inputs
from harness.cli.hermes_options import positive_int, positive_seconds
from harness.dispatch.dispatch import DispatchInputError


@pytest.mark.parametrize("text, value", [("1", 1), ("2", 2), (" 7 ", 7), ("1000000", 1_000_000)])
def test_a_count_of_one_or_more_is_read(text: str, value: int) -> None:
    assert positive_int(text) == value


@pytest.mark.parametrize("text, says", [("0", "must be at least 1, got 0"), ("-1", "must be at least 1, got -1"),
                                        ("1.5", "not an integer: '1.5'"), ("", "not an integer: ''"),
                                        ("one", "not an integer: 'one'")])
def test_a_count_below_one_or_not_an_integer_is_refused_saying_why(text: str, says: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=f"^{re.escape(says)}$"):
        positive_int(text)


@pytest.mark.parametrize("text, value", [("0.5", 0.5), ("1", 1.0), ("1e-9", 1e-9), ("3600", 3600.0), ("1e308", 1e308)])
def test_a_positive_finite_duration_is_read(text: str, value: float) -> None:
    assert positive_seconds(text) == value


@pytest.mark.parametrize("text", ["0", "0.0", "-0", "-1", "-inf", "inf", "1e999", "nan"])
def test_a_duration_not_above_zero_or_not_finite_is_refused(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=f"^{re.escape(f'must be a positive number of seconds, got {text}')}$"):
        positive_seconds(text)


def test_a_duration_that_is_no_number_is_refused_naming_it() -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=r"^not a number of seconds: 'soon'$"):
        positive_seconds("soon")


def dispatch_args(input_file: Path | None = None, **flags: str) -> argparse.Namespace:
    values = {"target": None, "task_source": None, "context": None, "reference_id": None, **flags}
    return argparse.Namespace(input_file=str(input_file) if input_file else None, **values)


def written(tmp_path: Path, document: object) -> Path:
    path = tmp_path / "inputs.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_an_input_file_of_bare_inputs_is_read_as_they_are(tmp_path: Path) -> None:
    inputs = {"target": "andy", "task_source": "email-triage", "context": "a summary"}
    assert gather_inputs(dispatch_args(written(tmp_path, inputs))) == inputs


def test_an_input_file_of_the_seed_s_envelope_gives_its_inputs(tmp_path: Path) -> None:
    envelope = {"skill": "dispatch", "inputs": {"target": "cooper", "reference_id": "r-1"}}
    assert gather_inputs(dispatch_args(written(tmp_path, envelope))) == {"target": "cooper", "reference_id": "r-1"}


def test_an_inputs_field_that_is_no_object_is_an_input_like_any_other(tmp_path: Path) -> None:
    document = {"target": "andy", "inputs": "not an object"}
    assert gather_inputs(dispatch_args(written(tmp_path, document))) == document


@pytest.mark.parametrize("document", [[{"target": "andy"}], "andy", 3, None])
def test_an_input_file_that_holds_no_object_is_refused(tmp_path: Path, document: object) -> None:
    with pytest.raises(DispatchInputError, match="must hold a JSON object of inputs"):
        gather_inputs(dispatch_args(written(tmp_path, document)))


def test_flags_override_the_file_s_fields_and_a_context_flag_may_be_json(tmp_path: Path) -> None:
    path = written(tmp_path, {"target": "andy", "context": "old", "task_source": "email"})
    assert gather_inputs(dispatch_args(path, target="cooper", context='{"why": "new"}')) == {
        "target": "cooper", "context": {"why": "new"}, "task_source": "email"}


def test_no_file_and_no_flags_give_no_inputs() -> None:
    assert gather_inputs(dispatch_args()) == {}
