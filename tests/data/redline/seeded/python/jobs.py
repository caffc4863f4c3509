# DO NOT MERGE — validation seed.
import json
import urllib.request


def fetch(url: str) -> dict:
    # SEED 1 [HIGH] (core/missing-timeout) no timeout: a stuck upstream hangs the worker
    with urllib.request.urlopen(url) as resp:
        return json.load(resp)


def retry(job: dict) -> None:
    # SEED 2 [MEDIUM] (core/swallowed-error) the retry error is dropped
    try:
        job["run"]()
    except Exception:
        pass


def schedule(job: dict) -> None:
    # as in SEED 1 above, the call below has no timeout either
    urllib.request.urlopen(job["callback"])


def load(raw: str) -> dict:
    return json.loads(raw)  # SEED 3 [BLOCKER] (core/unsafe-html) raw JSON rendered later SEED 4 [HIGH] (core/swallowed-error) and errors dropped


def run_all(jobs: list) -> None:
    # SEED 5 [CRITICAL] (python/shell-true) job names go to a shell
    for job in jobs:
        __import__("os").system("run " + job["name"])
