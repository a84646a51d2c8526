"""Finding, verifying and downloading the dataset files (used by the loaders of ``data``).

Search order for dataset ``name``: ``$RECBIAS_DATA/<name>/``, then the user cache
``$RECBIAS_CACHE/<name>/`` (default: ``pooch.os_cache("recbias_tutorial")/<name>/``),
then a download into the cache when the dataset is public and downloads are allowed.
Every file read is checked against :data:`._registry.SHA256`.

Environment variables:

``RECBIAS_DATA``
    Folder holding one sub-folder per dataset (``coat/``, ``yahoo_r3/``, ...). Read-only
    for this package: nothing there is ever written or deleted.
``RECBIAS_CACHE``
    The user cache (downloads, first-seen checksums). Bad files found there are deleted,
    and so are download folders that interrupted downloads left behind.
``RECBIAS_OFFLINE``
    ``1`` disables downloads.
``RECBIAS_REQUIRE_DATA`` / ``CI``
    ``1`` / ``true``: a missing dataset is an error, never replaced by a stand-in.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import socket
import sys
import tempfile
import time
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlparse

from .._optional import available, install_hint, require
from .._validation import check_choice
from . import _checksums
from . import _registry as reg


def _pooch():
    """Import pooch lazily and quietly (it imports ``tqdm.auto``, which warns in notebooks
    without ipywidgets: "IProgress not found"), or say which extra installs it."""
    return require("pooch", "downloading a dataset")


def _os_cache(project: str) -> Path:
    """``pooch.os_cache(project)`` (platformdirs' user cache folder), also without pooch."""
    if available("pooch"):
        return Path(_pooch().os_cache(project))
    home = Path.home()
    if sys.platform == "darwin":
        return home / "Library" / "Caches" / project
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA") or str(home / "AppData" / "Local")
        return Path(local) / project / project / "Cache"
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(xdg) if xdg and Path(xdg).is_absolute() else home / ".cache") / project

_TRUE = {"1", "true", "yes", "on"}
FIRST_SEEN = _checksums.FIRST_SEEN  # trust-on-first-use record, in the cache folder
STALE_AFTER = 600.0  # seconds without a write after which a download folder is abandoned


class DatasetNotFoundError(FileNotFoundError):
    """A dataset's files are not on this machine (and could not be downloaded)."""


class DatasetChecksumError(ValueError):
    """A dataset file (or archive) does not have the expected sha256: corrupt or partial.

    Attributes ``path``, ``expected``, ``actual`` and ``removed`` (whether the bad file was
    deleted from the user cache) describe the failure.
    """

    def __init__(self, message: str, *, path: Path | str | None = None,
                 expected: str | None = None, actual: str | None = None,
                 removed: bool = False) -> None:
        super().__init__(message)
        self.path, self.expected, self.actual, self.removed = path, expected, actual, removed


def env_flag(name: str) -> bool:
    """Whether environment variable ``name`` is set to 1/true/yes/on (any case)."""
    return os.environ.get(name, "").strip().lower() in _TRUE


def offline() -> bool:
    """True when downloads are disabled (``RECBIAS_OFFLINE=1``)."""
    return env_flag("RECBIAS_OFFLINE")


def data_required() -> bool:
    """True when a missing dataset must be an error (``CI=true`` or ``RECBIAS_REQUIRE_DATA=1``)."""
    return env_flag("CI") or env_flag("RECBIAS_REQUIRE_DATA")


def data_root() -> Path | None:
    """``$RECBIAS_DATA`` as a path, or None when unset."""
    value = os.environ.get("RECBIAS_DATA", "").strip()
    return Path(value).expanduser() if value else None


def cache_root() -> Path:
    """``$RECBIAS_CACHE``, else ``pooch.os_cache("recbias_tutorial")``."""
    value = os.environ.get("RECBIAS_CACHE", "").strip()
    if value:
        return Path(value).expanduser()
    return _os_cache("recbias_tutorial")


def candidate_dirs(name: str) -> list[tuple[Path, bool]]:
    """Folders searched for dataset ``name``, in order, as ``(folder, is_user_cache)``."""
    roots = [(root, False) for root in [data_root()] if root is not None]
    roots.append((cache_root(), True))
    subdirs = reg.SUBDIRS.get(name, ("",))
    return [(root / name / sub if sub else root / name, cached)
            for root, cached in roots for sub in subdirs]


_HASH_CACHE: dict[tuple, str] = {}


def sha256sum(path: Path | str) -> str:
    """Hex sha256 of a file (memoised on path, inode, size, and modification and change times).

    The change time (``st_ctime_ns``) cannot be set back by a program, so an edit that keeps
    the size and restores the modification time still invalidates the memo.

    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     f = pathlib.Path(tmp) / "x.txt"
    ...     _ = f.write_bytes(b"abc")
    ...     sha256sum(f)[:16]
    'ba7816bf8f01cfea'
    """
    path = Path(path)
    stat = path.stat()
    key = (str(path.resolve()), stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
    if key not in _HASH_CACHE:
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        _HASH_CACHE[key] = digest.hexdigest()
    return _HASH_CACHE[key]


def _inside(path: Path, root: Path | None) -> bool:
    return root is not None and path.resolve().is_relative_to(root.resolve())


def _first_seen_file(name: str) -> Path:
    return cache_root() / name / FIRST_SEEN


def _first_seen(name: str, *, warn: bool = True) -> tuple[dict[str, str], list[str]]:
    """Valid first-seen sums of ``name`` and the problems of the other lines (see
    :func:`._checksums.parse_record`); malformed lines are ignored, with a warning."""
    return _checksums.read_record(_first_seen_file(name), reg.SHA256[name], warn=warn)


def verify(path: Path, name: str, key: str, *, in_cache: bool,
           pending: dict[str, str] | None = None,
           first_seen: Mapping[str, str] | None = None) -> str:
    """Check ``path`` (file ``key`` of dataset ``name``) and return its sha256.

    Files with a registry sum of ``None`` (KuaiRec) are trusted on first use: the sum seen
    first is recorded in ``<cache>/<name>/SHA256SUMS.first-seen`` and later reads must
    match it. The sum is recorded only once the file has also parsed: here it is put in
    ``pending`` and :func:`record_first_seen` writes it after a successful parse.
    ``first_seen`` is the record already read (read here when None); a malformed line of
    it counts as absent. On a mismatch a file in the user cache is deleted (never one
    under ``$RECBIAS_DATA``) and :class:`DatasetChecksumError` is raised.
    """
    actual = sha256sum(path)
    expected = reg.SHA256[name][key]
    source = "the package's registry"
    if expected is None:
        if first_seen is None:
            first_seen = _first_seen(name)[0]
        expected = first_seen.get(key)
        source = f"the sum first seen, recorded in {_first_seen_file(name)}"
        if expected is None:
            if pending is None:
                raise ValueError("pending is required for files trusted on first use")
            pending[key] = actual
            return actual
    if actual == expected:
        return actual
    removed = in_cache and not _inside(path, data_root())
    if removed:
        path.unlink(missing_ok=True)
    action = ("It was deleted from the cache; run again to fetch a fresh copy."
              if removed else "Replace it with an intact copy.")
    hint = ("" if reg.SHA256[name][key] else
            f" If you replaced the file on purpose, delete {_first_seen_file(name)}.")
    raise DatasetChecksumError(
        f"{path} is corrupt or incomplete: sha256 {actual}, expected {expected} "
        f"({source}). {action}{hint}", path=path, expected=expected, actual=actual,
        removed=removed)


class Located(NamedTuple):
    """Verified files of one dataset (``pending``: first-seen sums not yet recorded)."""

    folder: Path
    paths: dict[str, Path]
    sha256: dict[str, str]
    pending: dict[str, str]


def record_first_seen(name: str, located: Located) -> None:
    """Record the first-seen sums of ``located`` (call only after its files parsed).

    The record is rewritten atomically, merged with what other processes recorded, and
    without its malformed lines, which is also done when nothing is pending.
    """
    record = _first_seen_file(name)
    if located.pending or _first_seen(name, warn=False)[1]:
        _checksums.add_to_record(record, located.pending, reg.SHA256[name])


def locate(name: str) -> Located:
    """Find, download if needed and allowed, and verify the files dataset ``name`` reads.

    Raises
    ------
    DatasetNotFoundError
        When the files are neither present nor downloadable.
    DatasetChecksumError
        When a file is corrupt.
    """
    check_choice(name, "name", reg.DATASETS)
    clean_stale_downloads()
    found = _find(name)
    if found is None:
        if name not in reg.SOURCES:
            reason = None
        elif offline():
            reason = "downloads are disabled (RECBIAS_OFFLINE=1)"
        elif not available("pooch"):
            reason = f"downloads need pooch, which is not installed ({install_hint('pooch')})"
        else:
            try:
                download(name)
            except DatasetChecksumError:
                raise
            except Exception as exc:  # network, HTTP, bad archive: report, don't crash
                raise DatasetNotFoundError(not_found_message(
                    name, f"the download failed ({type(exc).__name__}: {exc})")) from exc
            reason = "the download did not produce them"
        found = _find(name)
        if found is None:
            raise DatasetNotFoundError(not_found_message(name, reason))
    folder, in_cache = found
    paths = {key: folder / key for key in reg.REQUIRED[name]}
    pending: dict[str, str] = {}
    first_seen = _first_seen(name)[0] if None in reg.SHA256[name].values() else None
    sums = {key: verify(path, name, key, in_cache=in_cache, pending=pending,
                        first_seen=first_seen) for key, path in paths.items()}
    return Located(folder, paths, sums, pending)


def _find(name: str) -> tuple[Path, bool] | None:
    for folder, in_cache in candidate_dirs(name):
        if all((folder / key).is_file() for key in reg.REQUIRED[name]):
            return folder, in_cache
    return None


def download(name: str) -> Path:
    """Download and unzip a public dataset into ``<cache>/<name>/``; return that folder.

    The archive goes to a temporary folder inside the cache (pooch checks its hash when
    the registry knows it), every known file is checked, and only then are the files
    moved into place (each by an atomic rename), so an interrupted or corrupt download
    installs nothing unverified. The folder's name holds this process's id and host, so
    a folder left by a killed download is removed by :func:`clean_stale_downloads`.
    """
    pooch = _pooch()
    source = reg.SOURCES[name]
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    clean_stale_downloads()
    staging = Path(tempfile.mkdtemp(prefix=f".{name}-download-{_owner()}-", dir=root))
    try:
        try:
            members = pooch.retrieve(
                source.url, known_hash=source.known_hash, path=staging,
                fname=Path(urlparse(source.url).path).name,
                processor=pooch.Unzip(extract_dir="extracted"))
        except ValueError as exc:  # pooch's hash mismatch
            raise DatasetChecksumError(
                f"the archive downloaded from {source.url} failed its checksum and was "
                f"deleted: {exc}", path=source.url, expected=source.known_hash,
                removed=True) from exc
        found: dict[str, Path] = {}
        for member in map(Path, members):
            rel = member.relative_to(staging / "extracted").as_posix()
            if "__MACOSX" in rel:
                continue
            for key in reg.SHA256[name]:
                if rel == key or rel.endswith("/" + key):
                    found.setdefault(key, member)
        missing = [key for key in reg.REQUIRED[name] if key not in found]
        if missing:
            raise DatasetNotFoundError(
                f"the archive from {source.url} does not contain {missing}")
        for key, member in found.items():
            expected = reg.SHA256[name][key]
            actual = sha256sum(member)
            if expected is not None and actual != expected:
                raise DatasetChecksumError(
                    f"{key} in the archive from {source.url} has sha256 {actual}, expected "
                    f"{expected}; nothing was installed.", path=member, expected=expected,
                    actual=actual, removed=True)
        target = root / name
        for key, member in found.items():
            dest = target / key
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(member, dest)
        return target
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _owner() -> str:
    """``<pid>.<host hash>``: who made a download folder (host: the cache may be shared)."""
    host = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]
    return f"{os.getpid()}.{host}"


# Older versions wrote ".<name>-download-<random>" (no owner): only their age counts.
_STAGING = re.compile(r"\.(?P<name>\w+)-download-(?:(?P<pid>\d+)\.(?P<host>[0-9a-f]{8})-)?.+")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: only checks that the process exists
    except (ProcessLookupError, OverflowError):
        return False
    except OSError:  # e.g. owned by another user: it exists, or we cannot tell
        pass
    return True


def _is_stale(folder: Path, match: re.Match, now: float) -> bool:
    pid, host = match["pid"], match["host"]
    if pid is not None and host == _owner().split(".")[1] and not _alive(int(pid)):
        return True  # its process is gone: nobody will finish or remove it
    # A live process (or one on another host) may still be downloading, which keeps some
    # file's mtime fresh: only STALE_AFTER seconds without a write (or a recycled pid)
    # make the folder abandoned.
    times = [folder.lstat().st_mtime]
    for base, dirs, files in os.walk(folder):
        for entry in dirs + files:
            with contextlib.suppress(OSError):  # removed meanwhile
                times.append(os.lstat(os.path.join(base, entry)).st_mtime)
    return now - max(times) > STALE_AFTER


def clean_stale_downloads() -> int:
    """Remove download folders that interrupted downloads left in the user cache.

    A ``.<name>-download-*`` folder is stale when the process that made it (on this host)
    no longer exists, or nothing in it was written for :data:`STALE_AFTER` seconds.
    Folders of live downloads are kept, and nothing under ``$RECBIAS_DATA`` is touched.
    One warning says how many folders were removed.

    Returns
    -------
    int
        The number of folders removed.
    """
    root, data = cache_root(), data_root()
    if _inside(root, data) or not root.is_dir():
        return 0
    now, removed = time.time(), []
    for folder in root.iterdir():
        match = _STAGING.fullmatch(folder.name)
        if (match is None or match["name"] not in reg.SHA256 or folder.is_symlink()
                or not folder.is_dir() or (data is not None and _inside(data, folder))):
            continue
        try:
            stale = _is_stale(folder, match, now)
        except OSError:  # removed meanwhile by another process
            continue
        if stale:
            shutil.rmtree(folder, ignore_errors=True)
            if not folder.exists():
                removed.append(folder.name)
    if removed:
        warnings.warn(f"removed {len(removed)} download folder(s) left in {root} by "
                      f"interrupted downloads: {', '.join(sorted(removed))}", stacklevel=3)
    return len(removed)


def not_found_message(name: str, reason: str | None = None) -> str:
    """Explain where to put which files for dataset ``name``."""
    files = "\n".join(f"    {key}" for key in reg.REQUIRED[name])
    root = data_root()
    folders = [f"    $RECBIAS_DATA/{name}/  "
               + (f"(= {root / name})" if root else "(RECBIAS_DATA is not set)"),
               f"    {cache_root() / name}/  (the user cache; set RECBIAS_CACHE to move it)"]
    lines = [f"{reg.TITLES[name]} was not found.", ""]
    if name == "yahoo_r3":
        lines += [
            "Yahoo! R3 is never downloaded automatically: Yahoo! Webscope distributes it "
            "only to people who accept the Yahoo! Data Sharing Agreement (non-commercial "
            "research use, no redistribution). Request dataset R3 ('Yahoo! Music ratings "
            "for User Selected and Randomly Selected songs, version 1.0') at",
            f"    {reg.WEBSCOPE_URL}",
            "then unpack the archive you receive.", ""]
    elif name in reg.SOURCES:
        source = reg.SOURCES[name]
        lines += [f"It is downloaded automatically from {source.url} when online"
                  + (f", but {reason}." if reason else "."),
                  f"To install it by hand, get it from {source.homepage} and unpack it.", ""]
    lines += ["Put these files", files, "into one of these folders:", *folders]
    if name == "kuairec":
        lines += ["(or into their 'KuaiRec 2.0/data/' sub-folder, as in KuaiRec.zip)."]
    return "\n".join(lines)
