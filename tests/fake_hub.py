"""A tiny stand-in for the Hugging Face Hub on 127.0.0.1 (there is no network here): the two endpoints
huggingface_hub calls to judge and fetch a model, serving repos made in the test, recording every request.

- ``GET /api/models/{owner}/{name}[/revision/{rev}]`` (HfApi.model_info): ``{"id", "sha", "siblings"}``, each
  sibling ``{"rfilename", "size"}`` (the size a test may make lie, ``claimed``);
- ``HEAD`` / ``GET /{owner}/{name}/resolve/{rev}/{file}`` (hf_hub_download): the headers it expects (ETag,
  X-Repo-Commit, Content-Length; ``X-Error-Code`` RepoNotFound / EntryNotFound on a 404) and the bytes.

>>> with FakeHub() as hub:  # doctest: +SKIP
...     hub.add("someone/tiny", {"config.json": b"{}"})
...     use(monkeypatch, hub.url)  # then attn_models.load("someone/tiny") reads it
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

COMMIT = "0123456789abcdef" * 2 + "01234567"  # 40 hex digits: the one commit of every repo here


@dataclass
class Repo:
    files: dict[str, bytes]
    claimed: dict[str, int] = field(default_factory=dict)  # file -> the size the metadata says (a lie, if set)
    length: dict[str, int] = field(default_factory=dict)  # file -> the Content-Length its HEAD says (a lie, if set)


class FakeHub:
    """The fake Hub: ``add`` repos, read ``url``, look at ``requests`` ((method, path) in order)."""

    def __init__(self) -> None:
        self.repos: dict[str, Repo] = {}
        self.requests: list[tuple[str, str]] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                hub.answer(self, body=True)

            def do_HEAD(self) -> None:  # noqa: N802
                hub.answer(self, body=False)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeHub:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def add(self, repo_id: str, files: dict[str, bytes], **lies: dict[str, int]) -> None:
        """Serve ``files`` as the repo ``repo_id`` (``claimed=`` / ``length=``: sizes the Hub says instead)."""
        self.repos[repo_id] = Repo(dict(files), **lies)

    def add_folder(self, repo_id: str, folder: Path, **lies: dict[str, int]) -> None:
        """Serve every file of ``folder`` as the repo ``repo_id``."""
        self.add(repo_id, {f.name: f.read_bytes() for f in Path(folder).iterdir() if f.is_file()}, **lies)

    def fetched(self, name: str) -> list[str]:
        """The paths of every request for a file called ``name`` (its resolve address)."""
        return [p for _m, p in self.requests if p.endswith("/" + name) and "/resolve/" in p]

    def answer(self, h: BaseHTTPRequestHandler, *, body: bool) -> None:
        path = unquote(urlsplit(h.path).path)
        self.requests.append((h.command, path))
        parts = path.strip("/").split("/")
        if parts[:2] == ["api", "models"] and len(parts) >= 4:
            repo = self.repos.get("/".join(parts[2:4]))
            if repo is None:
                return self.error(h, 404, "RepoNotFound")
            siblings = [{"rfilename": n, "size": repo.claimed.get(n, len(b))} for n, b in repo.files.items()]
            return self.send(h, 200, json.dumps({"id": "/".join(parts[2:4]), "sha": COMMIT,
                                                 "siblings": siblings}).encode(), body=body)
        if len(parts) >= 5 and parts[2] == "resolve":
            repo = self.repos.get("/".join(parts[:2]))
            if repo is None:
                return self.error(h, 404, "RepoNotFound")
            name = "/".join(parts[4:])
            if name not in repo.files:
                return self.error(h, 404, "EntryNotFound")
            data = repo.files[name]
            return self.send(h, 200, data, body=body, length=repo.length.get(name), headers={
                "ETag": f'"{hashlib.sha256(data).hexdigest()}"', "X-Repo-Commit": COMMIT})
        return self.error(h, 404, "RepoNotFound")

    @staticmethod
    def send(h: BaseHTTPRequestHandler, status: int, data: bytes, *, body: bool, length: int | None = None,
             headers: dict[str, str] | None = None) -> None:
        h.send_response(status)
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(length if length is not None else len(data)))
        h.end_headers()
        if body:
            try:
                h.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client stopped reading (a file over its cap)
                pass

    def error(self, h: BaseHTTPRequestHandler, status: int, code: str) -> None:
        h.send_response(status)
        h.send_header("X-Error-Code", code)
        h.send_header("Content-Length", "0")
        h.end_headers()


def use(monkeypatch, url: str) -> None:
    """Point huggingface_hub at ``url`` for one test: its endpoint and the copies of it made at import, and
    online (HF_HUB_OFFLINE unset, also in the copy huggingface_hub made when it was first imported)."""
    from huggingface_hub import constants

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "ENDPOINT", url)
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", url + "/{repo_id}/resolve/{revision}/{filename}")
