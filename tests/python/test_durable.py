"""harness.durable's atomic replace refuses every target that is not a regular file or a link.

A rename over a device node replaces the node: run as root, `--output /dev/zero` once turned the
machine's /dev/zero into a text file. These tests make their special files in a temp folder.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from harness.durable import DurableWriteError, atomic_write


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder of its own (the autouse fixture puts the test's homes beside it in tmp_path)."""
    made = tmp_path / "work"
    made.mkdir()
    return made


def test_a_regular_file_is_replaced_whole(folder: Path) -> None:
    target = folder / "report.md"
    target.write_text("old")
    atomic_write(target, b"new")
    assert target.read_bytes() == b"new"
    assert sorted(p.name for p in folder.iterdir()) == ["report.md"]


def test_a_fifo_and_a_folder_are_refused_and_left_as_they_were(folder: Path) -> None:
    fifo, inner = folder / "pipe", folder / "inner"
    os.mkfifo(fifo)
    inner.mkdir()
    for target, kind in ((fifo, "a FIFO"), (inner, "a folder")):
        with pytest.raises(DurableWriteError, match=f"it is {kind}, not a regular file"):
            atomic_write(target, b"x")
    assert stat.S_ISFIFO(fifo.lstat().st_mode) and inner.is_dir()
    assert sorted(p.name for p in folder.iterdir()) == ["inner", "pipe"]


def test_a_device_node_is_refused_and_left_a_device(folder: Path) -> None:
    node = folder / "zero"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 5))
    except PermissionError:
        pytest.skip("this user cannot make a device node")
    with pytest.raises(DurableWriteError, match="it is a device, not a regular file"):
        atomic_write(node, b"x")
    assert stat.S_ISCHR(node.lstat().st_mode)
