"""Keep the server's memory from growing: glibc's malloc told to return freed large blocks (issue 17).

At the caps (n_seq 256, d_model 512, 8 heads) a trace is ≈ 16.8 MB: 51 numpy arrays of up to 2 MiB, and
st.cache_data keeps it as one pickled bytes object of that size. glibc's malloc serves a block of 128 KiB or more
with its own mmap and unmaps it on free, but each time such a block is freed it raises this threshold to the
block's size (its "dynamic mmap threshold", up to 32 MiB). Once a pickled trace has been freed, the arrays and the
pickles come from the malloc arenas (the main heap, and one per thread that allocates, up to 8 per core:
Streamlit runs the script in threads of its own), where a freed block is kept for later allocations and seldom
given back. The server's RSS grew with time though every cache is bounded.

:func:`limit_malloc` calls glibc's ``mallopt`` once per process: a fixed mmap threshold of 1 MiB (every array of
1 MiB or more is its own mapping, returned to the system when freed; setting it also turns the dynamic threshold
off) and at most 2 arenas. It does what ``MALLOC_MMAP_THRESHOLD_=1048576 MALLOC_ARENA_MAX=2`` in the environment
would do, which Community Cloud gives no way to set before the process starts; a value set that way wins.
Where the C library is not glibc (macOS, musl) it does nothing, and it never raises.

Measured with bench/load.py --soak 600 --sessions 4 --sizes caps seed000 (2 learners at the caps, 2 at seed 000,
coming and going, 10 minutes; 2 cores, other work running; bench/RESULTS.md, "Many learners on one server"), RSS of
the server in MiB, with the sessions open → after 1, 4, 6, 8, 10 minutes → at the end:

- as glibc does by default: 358 → 527, 681, 785, 809, 808 → 792;
- ``MALLOC_MMAP_THRESHOLD_=1048576 MALLOC_ARENA_MAX=2`` in the server's environment: 291 → 360, 486, 520, 559, 524
  → 536;
- this function (called by streamlit_app.py): 308 → 390, 575, 523, 555, 539 → 561.

What stayed then (issue 17, before the byte budget of attn_ui.infra.budget) was mostly what the caches held:
st.cache_data kept a trace pickled, ≈ 16.8 MB at the caps, and kept 16 of them. With 4 learners at the caps this
levels off at ≈ 870–930 MiB (5 minutes): by the look of it held by the caches' bounds, and still over the 800 MB
target. The arena limit acts only on arenas made after the call (some exist by the first run of the app's script), so
it matters less than the threshold here.
"""

from __future__ import annotations

import ctypes
import os
import threading

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8

#: mallopt parameter -> (its name, the environment variable glibc reads at start, the value set here)
SETTINGS = {
    M_MMAP_THRESHOLD: ("M_MMAP_THRESHOLD", "MALLOC_MMAP_THRESHOLD_", 1 << 20),
    M_ARENA_MAX: ("M_ARENA_MAX", "MALLOC_ARENA_MAX", 2),
}

_lock = threading.Lock()
_done: dict[str, int] | None = None


def _glibc(name: str):
    """The glibc function ``name`` of this process, or None where the C library is not glibc."""
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018 - only glibc has it (musl has a mallopt that does nothing)
        return getattr(libc, name)
    except (OSError, AttributeError):
        return None


def _glibc_mallopt():
    """glibc's ``mallopt`` of this process, or None where the C library is not glibc."""
    mallopt = _glibc("mallopt")
    if mallopt is not None:
        mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
        mallopt.restype = ctypes.c_int
    return mallopt


def trim() -> bool:
    """Give the free memory inside glibc's malloc arenas back to the system (``malloc_trim(0)``); True if it did.

    Blocks under the 1 MiB threshold (a trace's [256, 256] matrices are 512 KiB each) come from the arenas, and when
    freed they stay the process's until the arena's top is free. Called after a large release (attn_ui.infra.budget): 3
    learners at the caps who closed their tabs left the RSS 21 MB lower without it, 110 MB lower with it
    (bench/RESULTS.md). Does nothing where the C library is not glibc; never raises.
    """
    malloc_trim = _glibc("malloc_trim")
    if malloc_trim is None:
        return False
    try:
        malloc_trim.argtypes = [ctypes.c_size_t]
        malloc_trim.restype = ctypes.c_int
        return bool(malloc_trim(0))
    except Exception:  # noqa: BLE001 - a memory tweak must never stop the app
        return False


def limit_malloc() -> dict[str, int]:
    """Set glibc's mmap threshold and arena count (see the module's docstring), once per process.

    Returns what was set, e.g. ``{"M_MMAP_THRESHOLD": 1048576, "M_ARENA_MAX": 2}`` (the same on every later
    call, nothing set again); ``{}`` where the C library is not glibc. A setting whose environment variable is set
    is left to it. Never raises.
    """
    global _done
    with _lock:
        if _done is None:
            done: dict[str, int] = {}
            try:
                mallopt = _glibc_mallopt()
                if mallopt is not None:
                    for param, (name, env, value) in SETTINGS.items():
                        if env not in os.environ and mallopt(param, value) == 1:
                            done[name] = value
            except Exception:  # noqa: BLE001 - a memory tweak must never stop the app
                pass
            _done = done
        return dict(_done)
