"""A chart saved as an image: a Vega-Lite spec drawn to PNG or SVG by vl-convert, in a short-lived child process.

vl-convert (what Altair's ``chart.save`` uses) draws with a JavaScript engine embedded in its Python module. Loaded in
the server, it stays: measured (bench/export.py), this process's peak rose 174 → 286 MiB with one PNG made in it, and
a module's memory is never given back. So :func:`to_image` runs it in a child process (attn_ui/infra/export_worker.py,
the spec as JSON on stdin, the image on stdout) that exits when the image is made: the child peaks at 112–124 MiB and
takes it with it; the server's peak did not move (174 → 175 MiB after four exports).

Bounded (figures for the largest charts the app draws: a 64 × 64 heatmap, attn_ui.widgets.heatmap.MAX_SIDE, larger
matrices are drawn in blocks; the model view of 12 × 12 heads; bench/export.py):

- :data:`SLOTS`: one export at a time in the process, first come first served (a :class:`budget.FairSlots` of its own,
  so a burst of exports waits its turn and never holds up a model's or the explorer's computations): at most one
  child, ≈ 125 MiB, at a time; with :data:`MAX_WAITING` exports queued already, one more is refused at once. A
  waiting export holds a thread of the event loop's default pool (Streamlit makes a deferred download with
  ``asyncio.to_thread``: min(32, cores + 4) threads, 6 on 2 cores), which Streamlit's other deferred downloads share.
- :data:`MAX_SPEC_BYTES`: the spec's JSON sent to the child, 4 MB, ten times the largest chart's (0.38 MB): the
  server holds it twice (text and bytes) while the child runs.
- :data:`TIMEOUT_S`: 30 s, then the child is killed. The largest charts took 1.6–4.1 s (SVG of the model view the
  longest) on a loaded 2-core machine.
- :data:`MAX_IMAGE_BYTES`: the image, 8 MB (the child writes nothing larger), five times the largest (the heatmap's
  PNG at scale 2, 1.44 MB): Streamlit keeps a made download's bytes in memory until its clean-up after two later
  script runs (runtime.media_file_manager.remove_orphaned_files).

Every failure is an :class:`ExportError` whose message says what went wrong in a visitor's words (in English: this
layer has no catalogs; attn_ui.shell.save_chart logs it, as a deferred download cannot show it); the child's own
output goes to the log.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Literal

from attn_ui.infra import budget, st_internals

Format = Literal["png", "svg"]
MAX_SPEC_BYTES = 4_000_000
MAX_IMAGE_BYTES = 8_000_000
TIMEOUT_S = 30.0
SLOTS = budget.FairSlots(1, "export")  # one child at a time
MAX_WAITING = 3  # exports queued for SLOTS beyond which another is refused (each waits ≤ TIMEOUT_S per one before it)
WORKER = Path(__file__).with_name("export_worker.py")
_LOG = st_internals.logger(__name__)


class ExportError(RuntimeError):
    """A chart that could not be saved; the message says why, for the visitor."""


def to_image(spec: dict, fmt: Format) -> bytes:
    """The chart of a Vega-Lite ``spec`` (JSON-able: data inline or as named ``datasets``) as PNG (at scale 2) or SVG.

    Raises :class:`ExportError` if the spec is too large, vl-convert is missing or refuses it, the image is too large,
    or it takes longer than :data:`TIMEOUT_S`.
    """
    if fmt not in ("png", "svg"):
        raise ValueError(f"an image format is png or svg, not {fmt!r}")
    try:
        text = json.dumps(spec, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as e:
        raise ExportError("This chart could not be saved: its data cannot be written out.") from e
    if len(text) > MAX_SPEC_BYTES:
        raise ExportError(f"This chart is too large to save ({len(text) / 1e6:.1f} MB of data; at most "
                          f"{MAX_SPEC_BYTES / 1e6:.0f} MB).")
    if SLOTS.waiting >= MAX_WAITING:
        raise ExportError("The server is saving other charts right now: try again in a moment.")
    with budget.compute_slot(SLOTS):
        return _convert(text, fmt)


def _convert(text: str, fmt: Format) -> bytes:
    """Run the worker on the spec's JSON; its image, or the ExportError its exit code means."""
    try:
        done = subprocess.run([sys.executable, "-I", str(WORKER), fmt, str(MAX_IMAGE_BYTES)], input=text.encode(),
                              capture_output=True, timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired as e:  # subprocess.run has killed the child
        raise ExportError(f"Saving this chart took longer than {TIMEOUT_S:.0f} s and was stopped.") from e
    except OSError as e:
        _LOG.warning("export: the worker did not start: %s", e)
        raise ExportError("Saving charts is not available on this server right now.") from e
    if done.returncode == 0 and done.stdout:
        return done.stdout
    reason = done.stderr.decode("utf-8", "replace")[-2000:]
    _LOG.warning("export: the worker exited with %s: %s", done.returncode, reason)
    if done.returncode == 2:
        raise ExportError("Saving charts is not available on this server (vl-convert-python is not installed).")
    if done.returncode == 3:
        raise ExportError(f"This chart's image would be larger than {MAX_IMAGE_BYTES / 1e6:.0f} MB: not saved.")
    raise ExportError("This chart could not be drawn as an image.")
