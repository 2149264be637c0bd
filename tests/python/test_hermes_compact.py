"""What the real Hermes (0.19.0) hands the model for one turn, the body mounted full and `--compact`.

Hermes 0.19.0 gives the model `{"result": <the text block>, "structuredContent": <the result>}`
(tools/mcp_tool.py), so compact removes the text block's copy of the trace, not the trace:
what the model reads falls by about half, not by the text block's factor. docs/hermes.md states
both figures; this test measures them with the stub model and holds docs/hermes.md to them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from harness.cli import main
from hermes_support import SCRIPTS, StubModel, offline_config, requires_hermes, run_hermes
from support import REPO

pytestmark = requires_hermes
PROFILE = "tester"
# Spaces match any white space: the sentence may be wrapped anywhere.
STATED_FIGURES = re.compile(r"Hermes 0\.19\.0 hands the model (\d[\d,]*) bytes for it in full and (\d[\d,]*) "
                            r"bytes compact".replace(" ", r"\s+"))


def bytes_the_model_reads(tmp_path: Path, *mount_flags: str) -> int:
    """The tool message's bytes in the model's second call, after one `hermes chat` turn."""
    home, root = tmp_path / "home", tmp_path / "hermes-root"
    profile_home = root / "profiles" / PROFILE
    profile_home.mkdir(parents=True)
    home.mkdir()
    script = json.loads((SCRIPTS / "turn_then_quote.json").read_text())
    with StubModel(script, tmp_path / "model") as model:
        (profile_home / "config.yaml").write_text(offline_config(model.base_url), encoding="utf-8")
        # The script's own key, as in the example turn of docs/hermes.md: Level1 would put the profile's CLI key and its
        # origin in the session instead (measured: 8,382 bytes full, 4,423 compact).
        assert main(["mount", "--hermes-home", str(root), "--profile", PROFILE, "--discovery-timeout", "30",
                     "--no-level1", *mount_flags]) == 0
        completed = run_hermes(["-p", PROFILE, "chat", "-Q", "-q", "Who sits at the head of the table?",
                                "-t", "mafiabot", "--source", "tool"], home, root, tmp_path / "cwd")
        calls = model.agent_calls()
    assert completed.returncode == 0, completed.stdout + completed.stderr
    [tool_message] = [m for m in calls[1]["body"]["messages"] if m.get("role") == "tool"]
    content = tool_message["content"]
    text = content if isinstance(content, str) else "".join(part.get("text", "") for part in content)
    assert '"passes_run": 8' in text, "the model should read the turn's result"
    return len(text.encode())


def test_compact_cuts_what_hermes_hands_the_model_per_turn_and_the_readme_says_by_how_much(body_exe, tmp_path):
    full = bytes_the_model_reads(tmp_path / "full")
    compact = bytes_the_model_reads(tmp_path / "compact", "--compact")
    assert compact < full
    stated = STATED_FIGURES.search((REPO / "docs" / "hermes.md").read_text(encoding="utf-8"))
    assert stated, f"docs/hermes.md should say: {STATED_FIGURES.pattern}"
    assert [int(figure.replace(",", "")) for figure in stated.groups()] == [full, compact]
