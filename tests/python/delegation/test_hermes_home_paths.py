"""A Hermes home whose path holds URI metacharacters (`#`, `%`, `?`) still yields Hermes's own accounting.

The state database is opened by a `file:` URI; unquoted, `#` cut the path (SQLite opened, and created, a
file at the truncated path, and the ledger lost Hermes's real tokens) and `%41` named another file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.autobot import delegate

from .conftest import PROFILES

USAGE = {"input": 321, "output": 45, "cost": 0.02}


@pytest.mark.parametrize("name", ["home#one", "home%41two", "home?mode=rw"])
def test_the_state_db_of_a_home_with_uri_metacharacters_is_read_where_it_is(
        fake_hermes, make_intent, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    root = tmp_path / name
    for profile in PROFILES:
        (root / "profiles" / profile).mkdir(parents=True)
    monkeypatch.setenv("HERMES_HOME", str(root))
    fake_hermes.script({"usage": USAGE})
    envelope = delegate(make_intent()).to_dict()
    assert envelope["status"] == "ok", envelope
    assert envelope["tokens"] == {"input": 321, "output": 45, "total": 366, "source": "hermes_state_db"}
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("home")) == [name]

