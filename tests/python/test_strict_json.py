"""The strict JSON reader refuses every input past a limit with one line naming it, and reads the rest as json does."""

from __future__ import annotations

import codecs
import json
import os
from pathlib import Path

import pytest

from harness import strict_json
from harness.strict_json import DEFAULT_MAX_DEPTH, INT64_MAX, InputRejected, load_file, loads, nesting_depth

DEEP = 100_000


def refusal(text: str, as_sent: bool = False) -> str:
    with pytest.raises(InputRejected) as caught:
        loads(text, "in.json", as_sent=as_sent)
    message = str(caught.value)
    assert "\n" not in message and message.startswith("in.json")
    return message


@pytest.mark.parametrize("opening, closing", [("[", "]"), ('{"a":', "}")])
def test_a_document_nested_a_hundred_thousand_levels_is_refused_with_its_depth(opening: str, closing: str) -> None:
    assert f"nests {DEEP} levels deep; at most {DEFAULT_MAX_DEPTH}" in refusal(opening * DEEP + "1" + closing * DEEP)


def test_nesting_up_to_the_limit_is_read_and_brackets_inside_strings_do_not_count() -> None:
    at_limit = "[" * DEFAULT_MAX_DEPTH + "]" * DEFAULT_MAX_DEPTH
    assert nesting_depth(at_limit) == DEFAULT_MAX_DEPTH and loads(at_limit, "t") is not None
    text = json.dumps({"a": "[{" * DEEP, "b": ['\\"[', "]"]})
    assert nesting_depth(text) == 2 and loads(text, "t")["a"] == "[{" * DEEP


@pytest.mark.parametrize("escape", ["\\ud800", "\\udbff", "\\udc80", "\\udfff", "\\ud800\\u0041"])
def test_a_lone_surrogate_escape_is_refused(escape: str) -> None:
    assert "lone surrogate" in refusal(f'{{"k": "x{escape}"}}')
    assert "lone surrogate" in refusal(f'{{"x{escape}": 1}}')


def test_a_surrogate_pair_is_one_character_and_as_sent_keeps_lone_surrogates() -> None:
    assert loads('"\\ud83d\\ude00"', "t") == "\U0001F600"
    assert loads('"\\udcff"', "t", as_sent=True) == "\udcff"


def test_a_utf8_byte_order_mark_is_dropped_and_utf16_or_utf32_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(codecs.BOM_UTF8 + b'{"a": 1}')
    assert load_file(path) == {"a": 1}
    for mark, codec, name in ((codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16"), (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16"),
                              (codecs.BOM_UTF32_LE, "utf-32-le", "UTF-32")):
        path.write_bytes(mark + '{"a": 1}'.encode(codec))
        with pytest.raises(InputRejected, match=f"is {name} text"):
            load_file(path)


def test_bytes_that_are_not_utf8_are_refused_naming_the_first_bad_byte(tmp_path: Path) -> None:
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"name": "caf\xe9"}')
    with pytest.raises(InputRejected, match=r"is not UTF-8 \(byte 0xe9 at offset 13\)"):
        load_file(path)


def test_a_raw_nul_is_no_json_while_an_escaped_one_is_a_character_left_to_the_models() -> None:
    assert "is not valid JSON" in refusal('{"a": "x\0y"}')
    assert "is not valid JSON" in refusal('{"a": 1}\0')
    assert loads('{"a": "x\\u0000y"}', "t") == {"a": "x\0y"}


@pytest.mark.parametrize("text, key", [('{"a": 1, "a": 2}', '"a"'), ('{"o": {"k": 1, "b": 0, "k": 1}}', '"k"'),
                                       ('[{"\\u0061": 1, "a": 2}]', '"a"')])
def test_a_duplicate_key_is_refused_without_quoting_it(text: str, key: str) -> None:
    said = refusal(text)
    assert "a key appears twice in one object" in said and key not in said


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_refused(constant: str) -> None:
    assert f"{constant} is not a JSON number" in refusal(f'{{"x": {constant}}}')


@pytest.mark.parametrize("number", ["1e400", "-1e400", "1.5E+309"])
def test_a_number_past_a_double_is_refused_rather_than_read_as_infinity(number: str) -> None:
    said = refusal(f"[{number}]")
    assert "a number does not fit a double" in said and number not in said


def test_integers_are_read_up_to_64_bits_and_refused_past_them_whatever_their_length() -> None:
    assert loads(f"[{INT64_MAX}, {-INT64_MAX}, 1e308, 0.5]", "t") == [INT64_MAX, -INT64_MAX, 1e308, 0.5]
    assert "does not fit 64 bits" in refusal(str(INT64_MAX + 1))
    assert "does not fit 64 bits" in refusal("9" * 5000)  # past Python's own int() digit limit


def test_as_sent_keeps_nan_and_big_integers_but_still_refuses_duplicates_and_depth() -> None:
    assert loads("[NaN, 123456789012345678901234567890]", "t", as_sent=True)[1] == 123456789012345678901234567890
    assert "appears twice" in refusal('{"a": 1, "a": 1}', as_sent=True)
    assert "levels deep" in refusal("[" * DEEP, as_sent=True)
    assert "in.json" in refusal("9" * 5000, as_sent=True)


def test_a_file_over_the_size_cap_is_refused_and_one_at_the_cap_is_read(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text('"' + "x" * 98 + '"')
    assert load_file(path, max_bytes=100) == "x" * 98
    path.write_text('"' + "x" * 99 + '"')
    with pytest.raises(InputRejected, match="is larger than 100 bytes"):
        load_file(path, max_bytes=100)


def test_stdin_is_read_no_further_than_the_cap(tmp_path: Path) -> None:
    with open("/dev/zero", "rb") as endless, pytest.raises(InputRejected, match="stdin is larger than 1000 bytes"):
        strict_json.load_stream(endless, "stdin", max_bytes=1000)


def hostile_paths(tmp_path: Path) -> dict[str, Path]:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    return {"a regular file": Path("/dev/zero"), "FIFO": fifo, "directory": tmp_path, "symbolic links": loop,
            "No such file": dangling, "File name too long": tmp_path / ("n" * 300), "Not a directory": Path("/dev/null/x")}


def test_devices_fifos_directories_loops_dangling_links_and_long_names_are_one_line_refusals(tmp_path: Path) -> None:
    for cause, path in hostile_paths(tmp_path).items():
        with pytest.raises(InputRejected) as caught:
            load_file(path)
        message = str(caught.value)
        assert cause in message and "\n" not in message, (path, message)


def test_a_path_with_undecodable_bytes_is_named_without_breaking_the_message(tmp_path: Path) -> None:
    odd = Path(os.fsdecode(bytes(tmp_path) + b"/caf\xe9.json"))
    with pytest.raises(InputRejected) as caught:
        load_file(odd)
    assert "caf\\udce9.json" in str(caught.value)
    str(caught.value).encode("utf-8")  # printable as it is
