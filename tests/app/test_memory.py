"""attn_ui.infra.memory: glibc's malloc told to return large freed blocks, once per process (no timing here)."""

import ctypes
from pathlib import Path

from attn_ui.infra import memory


def test_limit_malloc_is_idempotent_and_reports_what_it_set():
    first = memory.limit_malloc()
    second = memory.limit_malloc()
    assert first == second
    assert set(first) <= {"M_MMAP_THRESHOLD", "M_ARENA_MAX"}
    for name, value in first.items():
        assert value == next(v for n, _, v in memory.SETTINGS.values() if n == name)


def test_glibc_gets_both_settings_unless_the_environment_has_them(monkeypatch):
    if memory._glibc_mallopt() is None:
        assert memory.limit_malloc() == {}  # macOS, musl: nothing, no error
        return
    monkeypatch.setattr(memory, "_done", None)
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    assert memory.limit_malloc() == {"M_MMAP_THRESHOLD": 1 << 20, "M_ARENA_MAX": 2}
    monkeypatch.setattr(memory, "_done", None)
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert memory.limit_malloc() == {"M_MMAP_THRESHOLD": 1 << 20}


def test_no_glibc_means_nothing_and_no_error(monkeypatch):
    monkeypatch.setattr(memory, "_done", None)

    def no_libc(*args, **kwargs):
        raise OSError("no C library here")
    monkeypatch.setattr(ctypes, "CDLL", no_libc)
    assert memory.limit_malloc() == {}
    assert memory.limit_malloc() == {}  # remembered


def test_the_router_calls_it():
    assert "memory.limit_malloc()" in (Path(memory.__file__).parents[2] / "streamlit_app.py").read_text()


def test_trim_gives_free_memory_back_on_glibc_and_does_nothing_elsewhere(monkeypatch):
    blocks = [bytearray(512 * 1024) for _ in range(64)]  # 32 MiB in blocks under the mmap threshold
    del blocks
    assert memory.trim() is (memory._glibc("malloc_trim") is not None)  # glibc: it released something

    def no_libc(*args, **kwargs):
        raise OSError("no C library here")
    monkeypatch.setattr(ctypes, "CDLL", no_libc)
    assert memory.trim() is False
