"""The strict YAML reader: depth, aliases, duplicate keys and size bounded, one line naming the file for each refusal."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from harness.strict_json import DEFAULT_MAX_DEPTH, InputRejected
from harness.strict_yaml import MAX_EXPANDED_NODES, load_file, loads


def refusal(text: str) -> str:
    with pytest.raises(InputRejected) as caught:
        loads(text, "plan.yaml")
    message = str(caught.value)
    assert "\n" not in message and message.startswith("plan.yaml")
    return message


@pytest.mark.parametrize("opening", ["[", "{a: "])
def test_a_document_nested_a_hundred_thousand_levels_is_refused_without_recursing(opening: str) -> None:
    assert f"nests deeper than {DEFAULT_MAX_DEPTH} levels" in refusal(opening * 100_000)


def test_block_nesting_is_bounded_too_and_the_limit_itself_is_read() -> None:
    def block(levels: int) -> str:
        return "".join(f"{'  ' * level}k:\n" for level in range(levels)) + f"{'  ' * levels}leaf\n"
    assert "nests deeper than" in refusal(block(DEFAULT_MAX_DEPTH + 1))
    value = loads(block(DEFAULT_MAX_DEPTH), "t")
    for _ in range(DEFAULT_MAX_DEPTH):
        value = value["k"]
    assert value == "leaf"


def billion_laughs(levels: int) -> str:
    lines = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 9)}]" for n in range(1, levels)]
    return "\n".join(lines) + "\n"


def test_a_billion_laughs_is_refused_before_anything_walks_it() -> None:
    assert f"its aliases expand to {MAX_EXPANDED_NODES + 1} nodes or more" in refusal(billion_laughs(9))


def test_ordinary_anchors_still_work() -> None:
    assert loads(billion_laughs(3), "t")["l2"][8][8][8] == "lol"  # 9 * 9 * 9 leaves: well under the bound
    assert loads("base: &b {retries: 2}\nplan: *b\n", "t") == {"base": {"retries": 2}, "plan": {"retries": 2}}


def test_an_alias_inside_the_collection_it_names_is_refused() -> None:
    assert "an alias refers to a collection that contains it" in refusal("a: &x [1, *x]\n")


@pytest.mark.parametrize("text, key, line", [("goal: a\ngoal: b\n", "goal", 2),
                                             ("limits:\n  retries: 1\n  parallel: 2\n  retries: 3\n", "retries", 4),
                                             ("{secret-key: a, secret-key: b}\n", "secret-key", 1)])
def test_a_duplicate_key_is_refused_naming_its_line_not_the_key(text: str, key: str, line: int) -> None:
    said = refusal(text)
    assert f"a key appears twice in one mapping (line {line} column" in said and key not in said.split(":", 1)[1]


def test_a_lone_surrogate_escape_is_refused_as_in_json() -> None:
    assert "lone surrogate \\ud800" in refusal('input: "x\\ud800"\n')
    assert "lone surrogate" in refusal('"\\udcff": 1\n')
    assert loads('input: "\\U0001F600"\n', "t") == {"input": "\U0001F600"}


def test_only_plain_data_is_constructed() -> None:
    assert "is not valid YAML" in refusal("!!python/object/apply:os.system [echo hi]\n")


def test_files_get_the_json_readers_limits(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_bytes(codecs.BOM_UTF8 + b"turns: []\n")
    assert load_file(path) == {"turns": []}
    path.write_bytes(b"input: caf\xe9\n")
    with pytest.raises(InputRejected, match="is not UTF-8"):
        load_file(path)
    path.write_text("x: " + "y" * 200 + "\n")
    with pytest.raises(InputRejected, match="is larger than 100 bytes"):
        load_file(path, max_bytes=100)
    with pytest.raises(InputRejected, match="not a regular file"):
        load_file(Path("/dev/zero"))


def test_an_empty_file_is_no_document(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("# nothing here\n")
    assert load_file(path) is None
