"""``run --record DIR``: every request and response of a run, one scrubbed file each.

The client calls :meth:`Recorder.response` from an httpx response hook, so every answer is
written, redirects and retries included, whatever carries the request (the network, a
proxy, the sandbox in-process). Files are written by the ``write`` the recorder is given
(``run/files.safe_write_text`` with ``new_only``: this layer sits below ``run/``): whole, so
a run killed mid-write leaves no half file for ``sandbox verify`` to choke on, and never
through or over anything already at a file's name (a link or a FIFO planted in the folder
during the run). The first file that cannot be written stops the recording; the run goes
on (teardown must not depend on a recording) and ``run`` reports :attr:`Recorder.failure`
(exit 2). The token is scrubbed before anything is serialised, and the serialised bytes
are checked once more.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from redline_canary import __version__
from redline_canary.errors import BadInput, CanaryError
from redline_canary.github.recordings import SCRUBBED, file_name, interaction, scrub_text

MAX_INTERACTIONS = 100_000  # a week-long runaway run stops recording, not the disk


class Recorder:
    """Writes interaction files into ``folder`` (which must be new or hold no recording)."""

    def __init__(self, folder: str | Path, *, run_id: str, write: Callable[[Path, str], None],
                 secrets: tuple[str, ...] = ()) -> None:
        """``write(path, text)`` writes one new file whole, refusing (a CanaryError) a name
        that is already taken."""
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
        self.secrets = tuple(dict.fromkeys(s for s in secrets if s))
        self.count = 0  # interactions numbered so far
        self.written = 0  # files written: ``count`` unless a write failed
        self.failure: CanaryError | None = None  # the write that stopped the recording
        self._write_file = write
        self._lock = threading.Lock()

    def add_secret(self, secret: str) -> None:
        """Scrub ``secret`` from every later file. Called before every request of an App run
        (the installation token is asked each time): a secret already known is not added
        again, so the list holds each token once and scrubbing stays linear in the run."""
        with self._lock:
            if secret and secret not in self.secrets:
                self.secrets = (*self.secrets, secret)

    def response(self, resp: httpx.Response) -> None:
        """The httpx ``response`` event hook: read the body and write the interaction."""
        resp.read()
        req = resp.request
        host = req.url.host + (f":{req.url.port}" if req.url.port else "")
        with self._lock:
            index = self.count
            if index >= MAX_INTERACTIONS or self.failure is not None:
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
        try:
            self._write_file(self.folder / name, text)
        except CanaryError as exc:
            with self._lock:
                if self.failure is None:
                    self.failure = BadInput(f"--record: recording stopped: {exc}")
            return
        with self._lock:
            self.written += 1
