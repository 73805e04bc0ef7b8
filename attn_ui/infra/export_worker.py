"""The child process of attn_ui.infra.export: a Vega-Lite spec (JSON) on stdin, the image's bytes on stdout.

Run as a file (``python -I export_worker.py png|svg MAX_BYTES``), importing nothing of the app: only vl-convert, whose
embedded JavaScript engine (≈ 130 MB, kept by the process that loads it) goes with this process when it exits.

Exit codes: 0 the image on stdout; 2 vl-convert is not installed; 3 the image is larger than MAX_BYTES (nothing
written); 4 vl-convert refused the spec (its message on stderr).
"""

import sys

SCALE = 2  # a PNG at twice the chart's pixels: sharp on high-density screens


def main(fmt: str, max_bytes: int) -> int:
    spec = sys.stdin.read()
    try:
        import vl_convert as vlc
    except ImportError:
        return 2
    try:
        if fmt == "png":
            out = vlc.vegalite_to_png(spec, scale=SCALE)
        else:
            out = vlc.vegalite_to_svg(spec).encode("utf-8")
    except Exception as e:  # noqa: BLE001 - vl-convert's own errors (a ValueError for a bad spec): told to the parent
        sys.stderr.write(str(e)[:2000])
        return 4
    if len(out) > max_bytes:
        return 3
    sys.stdout.buffer.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2])))
