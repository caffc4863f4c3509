"""``run --record DIR``: every request and response of a run, one scrubbed file each.

The client calls :meth:`Recorder.response` from an httpx response hook, so every answer is
written, redirects and retries included, whatever carries the request (the network, a
proxy, the sandbox in-process). Files are written whole (a temporary name, then a rename):
a run killed mid-write leaves no half file for ``sandbox verify`` to choke on. The token is
scrubbed before anything is serialised, and the serialised bytes are checked once more.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import httpx

from redline_canary import __version__
from redline_canary.errors import BadInput
from redline_canary.github.recordings import SCRUBBED, file_name, interaction, scrub_text

MAX_INTERACTIONS = 100_000  # a week-long runaway run stops recording, not the disk


class Recorder:
    """Writes interaction files into ``folder`` (which must be new or hold no recording)."""

    def __init__(self, folder: str | Path, *, run_id: str, secrets: tuple[str, ...] = ()) -> None:
        self.folder = Path(folder)
        if self.folder.exists() and not self.folder.is_dir():
            raise BadInput(f"--record: {folder} is not a folder")
        if self.folder.is_dir() and any(self.folder.glob("*.json")):
            raise BadInput(f"--record: {folder} already holds a recording; give an empty or new folder")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BadInput(f"--record: cannot create {folder}: {exc.strerror or exc}") from None
        self.run_id = run_id
        self.secrets = tuple(s for s in secrets if s)
        self.count = 0
        self._lock = threading.Lock()

    def add_secret(self, secret: str) -> None:
        self.secrets = (*self.secrets, secret)

    def response(self, resp: httpx.Response) -> None:
        """The httpx ``response`` event hook: read the body and write the interaction."""
        resp.read()
        req = resp.request
        host = req.url.host + (f":{req.url.port}" if req.url.port else "")
        with self._lock:
            index = self.count
            if index >= MAX_INTERACTIONS:
                return
            self.count += 1
        source = {"repo": "redline-canary", "commit": __version__, "path": f"run {self.run_id}",
                  "interaction_index": index, "license": "the recording user's own traffic"}
        data = interaction(source=source, method=req.method, host=host, path=req.url.raw_path.decode("ascii"),
                           req_headers=req.headers.multi_items(), req_body=req.content,
                           status=resp.status_code, resp_headers=resp.headers.multi_items(),
                           resp_body=resp.content, secrets=self.secrets)
        self._write(file_name(index, req.method, req.url.path, resp.status_code), data)

    def _write(self, name: str, data: dict[str, Any]) -> None:
        text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
        text = scrub_text(text, self.secrets)  # belt and braces: no secret survives serialisation
        assert all(s not in text for s in self.secrets if len(s) >= 4), SCRUBBED
        final = self.folder / name
        tmp = final.with_suffix(".part")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, final)
