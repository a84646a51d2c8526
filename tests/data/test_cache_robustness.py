"""The user cache survives killed downloads, damaged checksum records and concurrent loads.

Downloads are faked (pooch.retrieve copies local files), never over the network. Killed
processes are real child processes that report each step and wait for the parent's
go-ahead, so the parent kills them at an exact, seeded point. Everything is written under
pytest's tmp dirs; ``$RECBIAS_DATA`` is only read.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from recbias_tutorial.data import (
    DatasetChecksumError,
    DatasetNotFoundError,
    _checksums,
    _files,
    _registry,
    load_coat,
    load_kuairec,
)

ROOT = Path(__file__).parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "kuairec"
REAL_DATA = _files.data_root()  # captured before any test changes the environment
COAT_FILES = ("test.ascii", "train.ascii")
CHUNK = 1 << 16  # the fake download writes 64 KiB, then reports a step
KUAIREC = ("small_matrix.csv", "big_matrix.csv")

# The child: fakes pooch.retrieve with a chunked local copy and reports every step (write
# of a chunk, install of a file by os.replace, fsync of the record), then blocks until the
# parent answers "go"; the parent kills it at the step it chose.
CHILD = r'''
import json, os, sys
from pathlib import Path
import pooch
from recbias_tutorial.data import _checksums, _files, _registry, load_coat, load_kuairec

mode, arg = sys.argv[1], sys.argv[2]
CHUNK = 1 << 16

def step(label):
    print(label, flush=True)
    if sys.stdin.readline().strip() != "go":
        os._exit(3)

if mode == "download":
    src = Path(arg)
    _registry.SHA256["coat"].update(json.loads(sys.argv[3]))

    def retrieve(url, known_hash=None, fname=None, path=None, processor=None, **kwargs):
        out = Path(path) / "extracted" / "coat"
        out.mkdir(parents=True)
        step("start")
        for name in sorted(os.listdir(src)):
            data = (src / name).read_bytes()
            with open(out / name, "wb") as handle:
                for start in range(0, len(data), CHUNK):
                    handle.write(data[start:start + CHUNK])
                    handle.flush()
                    step(f"write {name} {start}")
        return [str(p) for p in out.iterdir()]

    real_replace, real_download = os.replace, _files.download
    def replace(a, b):
        step(f"install {Path(b).name}")
        real_replace(a, b)
    def download(name):
        folder = real_download(name)
        step("downloaded")
        return folder
    pooch.retrieve, os.replace, _files.download = retrieve, replace, download
    load_coat()
elif mode == "record":  # a KuaiRec load killed while it writes the first-seen record
    real_fsync, real_replace = os.fsync, os.replace
    def fsync(fd):
        step("fsync")
        real_fsync(fd)
    def replace(a, b):
        step("replace")
        real_replace(a, b)
    os.fsync, os.replace = fsync, replace
    load_kuairec()
elif mode == "race":  # concurrent loads, started together
    step("ready")
    print(json.dumps(load_kuairec().info["sha256"]), flush=True)
elif mode == "stress":  # concurrent writers of one record, each adding its own keys
    ident, n, writers = (int(v) for v in sys.argv[3:6])
    keys = [f"k{w}_{i}" for w in range(writers) for i in range(n)]
    step("ready")
    for i in range(n):
        _checksums.add_to_record(Path(arg), {f"k{ident}_{i}": f"{ident:x}{i:063x}"}, keys)
print("done", flush=True)
'''


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path):
    """Offline, with an empty $RECBIAS_DATA and a fresh cache, unless a test says otherwise."""
    monkeypatch.setenv("RECBIAS_OFFLINE", "1")
    monkeypatch.setenv("RECBIAS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("RECBIAS_DATA", str(tmp_path / "empty"))
    monkeypatch.delenv("CI", raising=False)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECBIAS_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env.update(RECBIAS_CACHE=os.environ["RECBIAS_CACHE"],
               RECBIAS_DATA=os.environ["RECBIAS_DATA"], RECBIAS_OFFLINE="1")
    env.update(extra)
    return env


def _spawn(*args, env: dict[str, str]) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", CHILD, *map(str, args)], env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    watchdog = threading.Timer(20, proc.kill)  # a hung child fails the test, not the run
    watchdog.daemon = True
    watchdog.start()
    return proc


def _go(proc: subprocess.Popen) -> None:
    proc.stdin.write("go\n")
    proc.stdin.flush()


def _drive(proc: subprocess.Popen, kill_at: int | None, sig: int) -> list[str]:
    """Let the child take its steps, sending ``sig`` when it reports step ``kill_at``."""
    steps: list[str] = []
    for line in proc.stdout:
        if line.strip() == "done":
            break
        steps.append(line.strip())
        if len(steps) - 1 == kill_at:
            proc.send_signal(sig)
            break
        _go(proc)
    proc.wait(timeout=20)  # reaps it: its pid is dead from here on
    if kill_at is None or len(steps) <= kill_at:
        assert proc.returncode == 0, proc.stderr.read()
    else:
        assert proc.returncode == -sig
    return steps


def _staging(cache: Path) -> list[Path]:
    return [p for p in cache.iterdir() if "-download-" in p.name] if cache.is_dir() else []


@pytest.fixture
def coat_source(tmp_path, monkeypatch) -> tuple[Path, dict[str, str]]:
    """Coat's two files in a tmp folder (real when available, else synthetic 290x300
    matrices) and their sums, patched into the registry for synthetic files."""
    folder = tmp_path / "src"
    folder.mkdir()
    real = [REAL_DATA / "coat" / f for f in COAT_FILES] if REAL_DATA else []
    if real and all(p.is_file() for p in real):
        for path in real:
            shutil.copyfile(path, folder / path.name)
    else:
        rng = np.random.default_rng(0)
        for fname in COAT_FILES:
            matrix = np.where(rng.random((290, 300)) < 0.08, rng.integers(1, 6, (290, 300)), 0)
            (folder / fname).write_text("".join(
                "".join(f"{v} " for v in row) + "\n" for row in matrix))
    sums = {f: _files.sha256sum(folder / f) for f in COAT_FILES}
    for fname, digest in sums.items():
        monkeypatch.setitem(_registry.SHA256["coat"], fname, digest)
    return folder, sums


def _fast_retrieve(source: Path):
    def retrieve(url, known_hash=None, fname=None, path=None, processor=None, **kwargs):
        shutil.copytree(source, Path(path) / "extracted" / "coat")
        return [str(p) for p in (Path(path) / "extracted" / "coat").iterdir()]
    return retrieve


# Seeded kill points, as fractions of the child's steps (0 = download started, 1 = files
# installed, just before the loader reads them).
_RNG = np.random.default_rng(7)
KILLS = ([(signal.SIGKILL, f) for f in [0.0, *np.round(_RNG.random(4), 3), 1.0]]
         + [(signal.SIGTERM, f) for f in np.round(_RNG.random(2), 3)])


@pytest.mark.parametrize(("sig", "fraction"), KILLS,
                         ids=[f"{s.name}-{f:g}" for s, f in KILLS])
def test_killed_download_leaves_nothing_trusted_or_stale(sig, fraction, coat_source, tmp_path,
                                                          monkeypatch):
    import pooch

    source, sums = coat_source
    cache = tmp_path / "cache"
    n_steps = 1 + sum(-(-(source / f).stat().st_size // CHUNK) for f in COAT_FILES) + 3
    kill_at = min(int(fraction * n_steps), n_steps - 1)
    child = _spawn("download", source, json.dumps(sums), env=_env(RECBIAS_OFFLINE="0"))
    steps = _drive(child, kill_at, sig)
    assert len(steps) == kill_at + 1
    killed_after_install = steps[-1] == "downloaded"
    # A killed download leaves its staging folder (with its dead pid in the name) ...
    assert len(_staging(cache)) == (0 if killed_after_install else 1)
    # ... and never a partial file where the loader looks.
    for path in (cache / "coat").glob("*") if (cache / "coat").is_dir() else []:
        assert _files.sha256sum(path) == sums[path.name], path

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if killed_after_install:
            assert load_coat().info["sha256"] == sums
        else:
            with pytest.raises(DatasetNotFoundError, match="RECBIAS_OFFLINE"):
                load_coat()
    removed = [w for w in caught if "download folder" in str(w.message)]
    assert len(removed) == (0 if killed_after_install else 1)
    assert _staging(cache) == []

    monkeypatch.delenv("RECBIAS_OFFLINE")  # online again: the download completes
    monkeypatch.setattr(pooch, "retrieve", _fast_retrieve(source))
    data = load_coat()
    assert data.info["sha256"] == sums and data.info["source"] == str(cache / "coat")
    assert [p.name for p in cache.iterdir()] == ["coat"]


def _kuairec_cache(cache: Path) -> dict[str, str]:
    folder = cache / "kuairec"
    folder.mkdir(parents=True, exist_ok=True)
    for short, official in (("small", KUAIREC[0]), ("big", KUAIREC[1])):
        shutil.copyfile(FIXTURES / f"kuairec_{short}.fixture.csv", folder / official)
    return {key: _files.sha256sum(folder / key) for key in KUAIREC}


def _record(cache: Path) -> Path:
    return cache / "kuairec" / _files.FIRST_SEEN


def _assert_valid_record(record: Path, sums: dict[str, str]) -> None:
    text = record.read_text()
    assert text.endswith("\n")
    assert sorted(text.splitlines()) == sorted(f"{sums[k]}  {k}" for k in KUAIREC)


@pytest.mark.parametrize("kill_at", [0, 1, 2], ids=["before-fsync", "before-replace",
                                                    "after-replace"])
def test_killed_record_write_leaves_old_or_new_record(kill_at, tmp_path):
    cache = tmp_path / "cache"
    sums = _kuairec_cache(cache)
    old = f"{sums['small_matrix.csv']}  small_matrix.csv\n"  # big_matrix.csv is pending
    _record(cache).write_text(old)
    steps = _drive(_spawn("record", "-", env=_env()), kill_at, signal.SIGKILL)
    assert steps == ["fsync", "replace", "fsync"][: kill_at + 1]
    if kill_at < 2:  # killed before the rename: the old record, intact
        assert _record(cache).read_text() == old
    else:
        _assert_valid_record(_record(cache), sums)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no malformed line to warn about
        assert load_kuairec().info["sha256"] == sums
    _assert_valid_record(_record(cache), sums)


GARBAGE = ["not a checksum line", "0" * 63 + "  small_matrix.csv",
           "f" * 64 + "  other_file.csv"]


@pytest.mark.parametrize("wrong", [False, True], ids=["right-sum", "wrong-sum"])
def test_truncated_record_warns_is_not_trusted_and_is_rewritten(wrong, tmp_path):
    cache = tmp_path / "cache"
    sums = _kuairec_cache(cache)
    digest = "e" * 64 if wrong else sums["big_matrix.csv"]
    # A process killed while appending (older versions) left a last line without newline.
    _record(cache).write_text("\n".join(GARBAGE) + f"\n{digest}  big_matrix.csv")
    with pytest.warns(_checksums.ChecksumRecordWarning, match="ignored 4 malformed") as info:
        data = load_kuairec()  # a wrong sum in a cut line is not trusted: no checksum error
    message = str(info[0].message)
    assert str(_record(cache)) in message and "does not end with a newline" in message
    assert "unknown file 'other_file.csv'" in message and "not trusted" in message
    assert data.info["sha256"] == sums
    _assert_valid_record(_record(cache), sums)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_kuairec()  # the rewritten record is valid and now checked
    (cache / "kuairec" / "small_matrix.csv").write_text("user_id,video_id,watch_ratio\n1,2,3\n")
    with pytest.raises(DatasetChecksumError, match="first seen"):
        load_kuairec()


def test_garbage_next_to_valid_lines_is_dropped_after_a_parse(tmp_path):
    cache = tmp_path / "cache"
    sums = _kuairec_cache(cache)
    valid = "".join(f"{sums[k]}  {k}\n" for k in KUAIREC)
    _record(cache).write_text(valid + "\x00\x00garbage\n")
    with pytest.warns(_checksums.ChecksumRecordWarning, match="line 3"):
        load_kuairec()  # nothing pending, but the record is still cleaned
    assert _record(cache).read_text() == valid


def test_malformed_only_record_is_recorded_again_not_an_error(tmp_path):
    cache = tmp_path / "cache"
    sums = _kuairec_cache(cache)
    _record(cache).write_text("0123")
    with pytest.warns(_checksums.ChecksumRecordWarning):
        assert load_kuairec().info["sha256"] == sums
    _assert_valid_record(_record(cache), sums)


def test_record_is_not_rewritten_when_valid(tmp_path):
    cache = tmp_path / "cache"
    sums = _kuairec_cache(cache)
    load_kuairec()
    before = _record(cache).stat().st_mtime_ns, _record(cache).stat().st_ino
    load_kuairec()
    assert (_record(cache).stat().st_mtime_ns, _record(cache).stat().st_ino) == before
    _assert_valid_record(_record(cache), sums)


def _start_together(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        assert proc.stdout.readline().strip() == "ready"
    for proc in procs:
        _go(proc)


def test_two_processes_loading_at_once_both_succeed(tmp_path):
    cache = tmp_path / "cache"
    sums = _kuairec_cache(cache)
    procs = [_spawn("race", "-", env=_env()) for _ in range(2)]
    _start_together(procs)
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert json.loads(out.splitlines()[0]) == sums
    _assert_valid_record(_record(cache), sums)


def test_concurrent_record_writers_lose_nothing(tmp_path):
    record, n, writers = tmp_path / "rec" / _files.FIRST_SEEN, 15, 3
    procs = [_spawn("stress", record, w, n, writers, env=_env()) for w in range(writers)]
    _start_together(procs)
    for proc in procs:
        assert proc.wait(timeout=120) == 0, proc.stderr.read()
    keys = [f"k{w}_{i}" for w in range(writers) for i in range(n)]
    records, problems = _checksums.read_record(record, keys)
    assert problems == [] and len(record.read_text().splitlines()) == n * writers
    assert records == {f"k{w}_{i}": f"{w:x}{i:063x}" for w in range(writers) for i in range(n)}


# --- stale download folders, in process ---------------------------------------------------


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _make(cache: Path, name: str, age: float = 0.0) -> Path:
    folder = cache / name
    (folder / "extracted").mkdir(parents=True)
    (folder / "extracted" / "part").write_bytes(b"x")
    stamp = time.time() - age
    for path in (folder / "extracted" / "part", folder / "extracted", folder):
        os.utime(path, (stamp, stamp))
    return folder


def test_only_stale_download_folders_are_removed_with_one_warning(tmp_path):
    cache = tmp_path / "cache"
    host = _files._owner().split(".")[1]
    old = _files.STALE_AFTER + 60
    dead = [_make(cache, f".coat-download-{_dead_pid()}.{host}-a1"),
            _make(cache, f".kuairec-download-{os.getpid()}.{host}-b2", age=old),
            _make(cache, ".movielens_100k-download-x9y8z7", age=old)]  # older versions
    kept = [_make(cache, f".coat-download-{os.getpid()}.{host}-c3"),  # live and recent
            _make(cache, f".coat-download-{_dead_pid()}.0badc0de-d4"),  # another host
            _make(cache, ".coat-download-q1w2e3"),  # no owner, recent
            _make(cache, ".notadataset-download-1.00000000-e5", age=old),
            _make(cache, "coat", age=old)]
    with pytest.warns(UserWarning, match="removed 3 download folder") as caught:
        assert _files.clean_stale_downloads() == 3
    assert len([w for w in caught if "download folder" in str(w.message)]) == 1
    assert not any(p.exists() for p in dead) and all(p.exists() for p in kept)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _files.clean_stale_downloads() == 0  # nothing more to say


def test_live_download_writing_into_an_old_folder_is_kept(tmp_path):
    folder = _make(tmp_path / "cache", ".coat-download-q1w2e3", age=_files.STALE_AFTER * 2)
    os.utime(folder / "extracted" / "part")  # the archive is still growing
    assert _files.clean_stale_downloads() == 0 and folder.exists()


def test_nothing_under_recbias_data_is_cleaned(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    monkeypatch.setenv("RECBIAS_DATA", str(shared))
    monkeypatch.setenv("RECBIAS_CACHE", str(shared))
    host = _files._owner().split(".")[1]
    folder = _make(shared, f".coat-download-{_dead_pid()}.{host}-a1", age=10**6)
    assert _files.clean_stale_downloads() == 0 and folder.exists()
