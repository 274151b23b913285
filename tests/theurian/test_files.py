"""theurian.files: the kernel's one bounded, non-blocking reader, its `too_large` flag, and the TOML reader every
config file goes through."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from theurian.errors import NotRegularFile, UnreadableFileError
from theurian.files import read_opened, read_toml, regular_status


def test_a_file_past_the_bound_is_refused_as_too_large_and_a_fifo_as_not_a_regular_file(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 10)
    assert read_opened(path, 10) == b"x" * 10
    with pytest.raises(NotRegularFile) as large:
        read_opened(path, 9)
    assert large.value.too_large is True and large.value.reason == "larger than 9 bytes, not read"
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(NotRegularFile) as fifo:
        read_opened(tmp_path / "fifo", 10)  # would block for ever on a blocking open
    assert fifo.value.too_large is False and fifo.value.reason == "not a regular file"
    with pytest.raises(NotRegularFile, match="not a regular file"):
        regular_status(tmp_path / "fifo")


def test_a_link_is_followed_only_when_the_caller_asks(tmp_path: Path) -> None:
    (tmp_path / "target").write_bytes(b"a = 1\n")
    (tmp_path / "link").symlink_to(tmp_path / "target")
    with pytest.raises(OSError):  # ELOOP: a path its caller resolved inside a root is never a link
        read_opened(tmp_path / "link", 100)
    assert read_toml(tmp_path / "link", 100, "the file", follow_link=True) == {"a": 1}


@pytest.mark.parametrize("data, reason, message_end", [
    (b"a = [\n", "is not valid TOML (", "; edit it by hand"),
    (b"a = '\xff'\n", "is not UTF-8 text (byte 5)", "(byte 5); edit it by hand"),
    (b"#" * 101, "cannot be read: larger than 100 bytes, not read", "not read"),
], ids=["not TOML", "not UTF-8", "past the bound"])
def test_a_toml_file_that_cannot_be_read_is_one_refusal_naming_it(tmp_path: Path, data: bytes, reason: str,
                                                                    message_end: str) -> None:
    path = tmp_path / "c.toml"
    path.write_bytes(data)
    with pytest.raises(UnreadableFileError) as refused:
        read_toml(path, 100, "c.toml")
    assert refused.value.reason.startswith(reason) and refused.value.message.startswith(f"c.toml {reason}")
    assert refused.value.message.endswith(message_end) and "\n" not in refused.value.message
    assert refused.value.too_large is (reason.startswith("cannot be read: larger"))
