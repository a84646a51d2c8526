"""The first-seen checksum record (``SHA256SUMS.first-seen``) of files trusted on first use.

One line per file, ``<64 hex digits><two spaces><key>\\n``, as ``sha256sum`` writes it.
The record is only ever replaced whole (temporary file, ``fsync``, ``os.replace``) under an
exclusive ``flock`` on a lock file next to it, so a process killed while writing leaves
either the old or the new record, and two processes recording at once lose nothing.
A record written by an older version (appended to in place) may still hold a partial or
garbled line: such a line is reported with a warning and ignored, never trusted.

This module only knows paths and keys; ``_files`` decides where the record lives.
"""

from __future__ import annotations

import contextlib
import os
import re
import warnings
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

try:  # POSIX only; elsewhere writers are atomic but not serialised
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None

FIRST_SEEN = "SHA256SUMS.first-seen"
_LINE = re.compile(r"([0-9a-f]{64})  (\S(?:.*\S)?)")


class ChecksumRecordWarning(UserWarning):
    """A line of a first-seen checksum record is malformed and was ignored."""


def parse_record(text: str, keys: Iterable[str]) -> tuple[dict[str, str], list[str]]:
    """Valid ``{key: digest}`` entries of a record's text, and why other lines were rejected.

    A line counts only if it is ``<64 lowercase hex>  <key>`` with ``key`` in ``keys`` and
    ends with a newline (a last line without one may have been cut mid-write). The first
    entry for a key wins: it is the sum seen first.

    Examples
    --------
    >>> records, problems = parse_record("0" * 64 + "  a.csv\\n" + "1" * 64 + "  a.c",
    ...                                  ["a.csv"])
    >>> list(records), problems
    (['a.csv'], ['line 2 does not end with a newline (cut off while being written?)'])
    """
    keys = set(keys)
    records: dict[str, str] = {}
    problems: list[str] = []
    lines = text.split("\n")
    for number, line in enumerate(lines, start=1):
        last = number == len(lines)
        if last and line == "":
            break  # the text ended with a newline, as it should
        match = _LINE.fullmatch(line)
        if last:
            problems.append(f"line {number} does not end with a newline "
                            "(cut off while being written?)")
        elif match is None:
            problems.append(f"line {number} is not '<64 hex digits>  <file name>': "
                            f"{line[:80]!r}")
        elif match[2] not in keys:
            problems.append(f"line {number} names an unknown file {match[2]!r}")
        elif records.setdefault(match[2], match[1]) != match[1]:
            problems.append(f"line {number} gives a second, different sum for {match[2]!r} "
                            "(the first one is kept)")
    return records, problems


def read_record(path: Path, keys: Iterable[str], *, warn: bool = True
                ) -> tuple[dict[str, str], list[str]]:
    """Parse the record at ``path`` (missing or unreadable: empty), warning about bad lines.

    Returns what :func:`parse_record` returns. With ``warn``, one
    :class:`ChecksumRecordWarning` lists every ignored line.
    """
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except OSError:  # absent or unreadable: nothing is trusted yet
        return {}, []
    records, problems = parse_record(text, keys)
    if problems and warn:
        warnings.warn(
            f"{path}: ignored {len(problems)} malformed line(s), which are not trusted "
            f"as checksums ({'; '.join(problems)}); the sums will be recorded again after "
            "the files parse.", ChecksumRecordWarning, stacklevel=3)
    return records, problems


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    # The lock file, not the record, is locked: the record is replaced, which would
    # leave a second writer holding a lock on the old, unlinked inode.
    with open(path.with_name(f".{path.name}.lock"), "a") as handle:
        if fcntl is not None:
            fcntl.flock(handle, fcntl.LOCK_EX)  # released by the kernel if we are killed
        yield


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)  # makes the rename itself durable
    except OSError:
        pass
    finally:
        os.close(fd)


def add_to_record(path: Path, new: Mapping[str, str], keys: Iterable[str]) -> bool:
    """Add ``new`` ``{key: digest}`` entries to the record at ``path``, atomically.

    The record is re-read under the lock, so entries another process added meanwhile are
    kept; a key already recorded keeps its first sum. Malformed lines are dropped. Nothing
    is written when the record is already valid and complete. Returns whether it was
    rewritten; an unwritable cache only loses the record (returns False), not the data.
    """
    keys = list(keys)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with _locked(path):
            records, problems = read_record(path, keys, warn=False)
            missing = {key: digest for key, digest in new.items() if key not in records}
            if not missing and not problems:
                return False  # already valid and complete (or nothing to record)
            records.update(missing)
            tmp = path.with_name(f".{path.name}.tmp")  # one writer at a time: fixed name
            with open(tmp, "w", encoding="utf-8") as handle:
                handle.writelines(f"{digest}  {key}\n" for key, digest in records.items())
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
            _fsync_dir(path.parent)
            return True
    except OSError:  # read-only or full cache
        return False
