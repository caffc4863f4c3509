"""Run a composite action's steps, or a workflow job's, the way the GitHub runner does.

What is reproduced (GitHub's documented runner behaviour, docs/sandbox.md): each ``run:`` step is a file
executed by ``bash --noprofile --norc -eo pipefail`` in the workspace; ``${{ }}`` is
expanded in ``env:``/``with:``/``if:`` and outputs only (a ``run:`` script containing one
is refused, the project's rule); every step gets fresh ``GITHUB_OUTPUT``,
``GITHUB_STEP_SUMMARY``, ``GITHUB_ENV`` and ``GITHUB_PATH`` files, read back afterwards
(``name=value`` and the ``name<<DELIM`` form); stdout lines are workflow commands
(annotations, ``add-mask``, ``stop-commands``); ``if:`` defaults to ``success()``;
cancelling sends SIGINT to the step's shell only, SIGTERM 7.5 s later, then kills.
Composite steps get no ``INPUT_*`` variables: the runner does not set them for composite
actions (actions/runner#665), so an action must pass inputs through ``env:``.

``uses:`` steps are delegated to a handler the test supplies (skip ``setup-python``, run
a nested composite action, copy artifacts between jobs).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}", re.S)
COMMAND = re.compile(r"^::([A-Za-z-]+)(?: ([^:]*))?::(.*)$")
BASH = ["bash", "--noprofile", "--norc", "-eo", "pipefail"]


# --- expressions -----------------------------------------------------------------------

class _Parser:
    """The subset of the Actions expression language the project's files use."""

    TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>-?\d+(?:\.\d+)?)|(?P<op>==|!=|&&|\|\||[!(),.\[\]])"
                       r"|(?P<name>[A-Za-z_][A-Za-z0-9_-]*))")

    def __init__(self, text: str, ctx: Mapping[str, Any]) -> None:
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        text = text.strip()
        while pos < len(text):
            m = self.TOKEN.match(text, pos)
            if not m or m.end() == pos:
                raise ValueError(f"cannot parse expression at {text[pos:]!r}")
            kind = m.lastgroup or ""
            self.tokens.append((kind, m.group(kind)))
            pos = m.end()
        self.i = 0
        self.ctx = ctx

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self, value: str | None = None) -> tuple[str, str]:
        tok = self.peek()
        if tok is None or (value is not None and tok[1] != value):
            raise ValueError(f"expected {value!r}, got {tok}")
        self.i += 1
        return tok

    def parse(self) -> Any:
        value = self.or_()
        if self.peek() is not None:
            raise ValueError(f"trailing tokens {self.tokens[self.i:]}")
        return value

    def or_(self) -> Any:
        left = self.and_()
        while self.peek() == ("op", "||"):
            self.take()
            right = self.and_()
            left = left if _truthy(left) else right
        return left

    def and_(self) -> Any:
        left = self.cmp()
        while self.peek() == ("op", "&&"):
            self.take()
            right = self.cmp()
            left = right if _truthy(left) else left
        return left

    def cmp(self) -> Any:
        left = self.unary()
        while self.peek() in (("op", "=="), ("op", "!=")):
            op = self.take()[1]
            right = self.unary()
            equal = _loose(left) == _loose(right)
            left = equal if op == "==" else not equal
        return left

    def unary(self) -> Any:
        if self.peek() == ("op", "!"):
            self.take()
            return not _truthy(self.unary())
        return self.postfix()

    def postfix(self) -> Any:
        value = self.primary()
        while self.peek() in (("op", "."), ("op", "[")):
            if self.take()[1] == ".":
                name = self.take()[1]
                value = value.get(name) if isinstance(value, Mapping) else None
            else:
                key = self.or_()
                self.take("]")
                value = value.get(key) if isinstance(value, Mapping) else None
        return value

    def primary(self) -> Any:
        kind, text = self.take()
        if kind == "str":
            return text[1:-1].replace("''", "'")
        if kind == "num":
            return float(text) if "." in text else int(text)
        if text == "(":
            value = self.or_()
            self.take(")")
            return value
        if kind != "name":
            raise ValueError(f"unexpected {text!r}")
        if text in ("true", "false"):
            return text == "true"
        if text == "null":
            return None
        if self.peek() == ("op", "("):
            self.take()
            args: list[Any] = []
            while self.peek() != ("op", ")"):
                args.append(self.or_())
                if self.peek() == ("op", ","):
                    self.take()
            self.take(")")
            return _call(text, args, self.ctx)
        return self.ctx.get(text)


def _truthy(v: Any) -> bool:
    return v not in (None, False, 0, "", 0.0)


def _loose(v: Any) -> Any:
    """Actions compares case-insensitively and coerces numbers; enough of that here."""
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return v.lower()
    if isinstance(v, bool):
        return float(v)
    if v is None:
        return ""  # null == '' is true in Actions (both coerce to 0)
    return float(v) if isinstance(v, int | float) else v


def _call(name: str, args: list[Any], ctx: Mapping[str, Any]) -> Any:
    status = ctx.get("__status__", {"failed": False, "cancelled": False})
    lname = name.lower()
    if lname == "always":
        return True
    if lname == "success":
        return not status["failed"] and not status["cancelled"]
    if lname == "failure":
        return bool(status["failed"])
    if lname == "cancelled":
        return bool(status["cancelled"])
    if lname == "fromjson":
        return json.loads(args[0])
    if lname == "tojson":
        return json.dumps(args[0], indent=2)
    raise ValueError(f"unsupported function {name}")


def evaluate(expr: str, ctx: Mapping[str, Any]) -> Any:
    return _Parser(expr, ctx).parse()


def as_string(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dict | list):
        return json.dumps(value)
    return str(value)


def substitute(value: Any, ctx: Mapping[str, Any]) -> str:
    text = as_string(value)
    return EXPR.sub(lambda m: as_string(evaluate(m.group(1), ctx)), text)


def condition(expr: str | bool | None, ctx: Mapping[str, Any]) -> bool:
    """A step's ``if:``; a status function is implied (``success() &&``) when none is named."""
    if expr is None:
        expr = "success()"
    if isinstance(expr, bool):
        return expr and _call("success", [], ctx)
    text = expr.strip()
    m = re.fullmatch(r"\$\{\{\s*(.*?)\s*\}\}", text, re.S)
    if m:
        text = m.group(1)
    if not re.search(r"\b(always|success|failure|cancelled)\s*\(", text):
        text = f"success() && ({text})"
    return _truthy(evaluate(text, ctx))


# --- workflow commands and file commands ------------------------------------------------

@dataclass
class Command:
    name: str
    props: dict[str, str]
    message: str


def _unescape(text: str, prop: bool = False) -> str:
    if prop:
        text = text.replace("%3A", ":").replace("%2C", ",")
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def parse_commands(stdout: str) -> list[Command]:
    """Workflow commands the runner would act on, honouring ``stop-commands``."""
    out: list[Command] = []
    stop: str | None = None
    for line in stdout.splitlines():
        if stop is not None:
            if line == f"::{stop}::":
                stop = None
            continue
        m = COMMAND.match(line)
        if not m:
            continue
        name, raw_props, message = m.group(1).lower(), m.group(2) or "", m.group(3)
        if name == "stop-commands":
            stop = message
            continue
        props = {}
        for part in filter(None, raw_props.split(",")):
            k, _, v = part.partition("=")
            props[k.strip().lower()] = _unescape(v, prop=True)
        out.append(Command(name, props, _unescape(message)))
    return out


def read_file_command(path: Path) -> dict[str, str]:
    """``name=value`` lines and ``name<<DELIM`` blocks, as GITHUB_OUTPUT/GITHUB_ENV hold."""
    values: dict[str, str] = {}
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delim = line.split("<<", 1)
            body: list[str] = []
            i += 1
            while i < len(lines) and lines[i] != delim:
                body.append(lines[i])
                i += 1
            if i >= len(lines):
                raise AssertionError(f"{path.name}: unterminated {delim}")
            values[name] = "\n".join(body)
        elif "=" in line:
            name, value = line.split("=", 1)
            values[name] = value
        elif line.strip():
            raise AssertionError(f"{path.name}: malformed line {line!r}")
        i += 1
    return values


# --- steps ---------------------------------------------------------------------------

@dataclass
class StepRun:
    id: str | None
    name: str
    outcome: str  # success | failure | skipped | cancelled
    returncode: int | None = None
    stdout: str = ""
    stderr: str = ""
    outputs: dict[str, str] = field(default_factory=dict)
    summary: str = ""
    seconds_after_sigint: float | None = None  # how long the step took to end once cancelled


@dataclass
class Interrupt:
    """Cancel the run while step ``step_id`` runs, once ``when()`` is true."""

    step_id: str
    when: Callable[[], bool]
    timeout: float = 60.0


@dataclass
class Run:
    steps: list[StepRun] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)
    failed: bool = False
    cancelled: bool = False

    @property
    def stdout(self) -> str:
        return "".join(s.stdout for s in self.steps)

    @property
    def stderr(self) -> str:
        return "".join(s.stderr for s in self.steps)

    @property
    def summary(self) -> str:
        return "".join(s.summary for s in self.steps)

    @property
    def commands(self) -> list[Command]:
        return [c for s in self.steps for c in parse_commands(s.stdout)]

    def annotations(self, level: str | None = None) -> list[Command]:
        names = {level} if level else {"error", "warning", "notice"}
        return [c for c in self.commands if c.name in names]

    def step(self, step_id: str) -> StepRun:
        return next(s for s in self.steps if s.id == step_id)


UsesHandler = Callable[[Mapping[str, Any], dict[str, str], "Runner"], StepRun]


def _checkout_path() -> dict[str, str]:
    """``PYTHONPATH`` when the tests run with one (a worktree beside an editable install of
    another checkout): the steps' ``redline-canary`` must be the code under test, not the
    installed checkout's."""
    return {"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}


@dataclass
class Runner:
    """One job's worth of runner state: workspace, temp dir, env, and the contexts."""

    workspace: Path
    temp: Path
    env: dict[str, str]
    github: dict[str, Any]
    uses: UsesHandler | None = None
    timeout: float = 300.0
    extra_ctx: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def create(cls, base: Path, *, env: Mapping[str, str] | None = None,
               github: Mapping[str, Any] | None = None, uses: UsesHandler | None = None) -> Runner:
        workspace = base / "workspace"
        temp = base / "runner-temp"
        workspace.mkdir(parents=True, exist_ok=True)
        temp.mkdir(parents=True, exist_ok=True)
        gh = {"run_id": "4242", "run_attempt": "1", "repository": "acme/metrics", "job": "canary",
              "ref_name": "main", "workspace": str(workspace), **(github or {})}
        home = base / "home"
        home.mkdir(exist_ok=True)
        base_env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
            "CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_RUN_ID": str(gh["run_id"]), "GITHUB_RUN_ATTEMPT": str(gh["run_attempt"]),
            "GITHUB_REPOSITORY": str(gh["repository"]), "GITHUB_JOB": str(gh["job"]),
            "GITHUB_REF_NAME": str(gh["ref_name"]), "RUNNER_TEMP": str(temp), "RUNNER_OS": "Linux",
            "GIT_CONFIG_NOSYSTEM": "1", **_checkout_path(), **(env or {}),
        }
        return cls(workspace, temp, base_env, gh, uses)

    # -- contexts

    def context(self, run: Run, steps_ctx: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
        return {"github": self.github, "runner": {"temp": str(self.temp), "os": "Linux"},
                "env": dict(self.env), "steps": steps_ctx, **self.extra_ctx, **extra,
                "__status__": {"failed": run.failed, "cancelled": run.cancelled}}

    def run_steps(self, steps: list[Mapping[str, Any]], extra: Mapping[str, Any] | None = None,
                  *, interrupt: Interrupt | None = None, step_env: Mapping[str, str] | None = None,
                  skip: Mapping[str, Mapping[str, str]] | None = None) -> Run:
        """``skip`` maps step ids to the outputs to pretend they produced (a slow install)."""
        run = Run()
        steps_ctx: dict[str, Any] = {}
        extra = dict(extra or {})
        for number, step in enumerate(steps):
            sid = step.get("id")
            name = str(step.get("name") or sid or step.get("uses") or f"step {number}")
            ctx = self.context(run, steps_ctx, extra)
            if not condition(step.get("if"), ctx):
                result = StepRun(sid, name, "skipped")
            elif skip and sid in skip:
                result = StepRun(sid, name, "success", 0, outputs=dict(skip[str(sid)]))
            elif "uses" in step:
                if self.uses is None:
                    raise AssertionError(f"no handler for uses: {step['uses']}")
                with_ = {k: substitute(v, ctx) for k, v in (step.get("with") or {}).items()}
                result = self.uses(step, with_, self)
                result.id, result.name = sid, name
            else:
                env = {**(step_env or {}), **{k: substitute(v, ctx) for k, v in (step.get("env") or {}).items()}}
                result = self._run_script(sid, name, str(step["run"]), env,
                                          interrupt if interrupt and interrupt.step_id == sid else None, run)
            run.steps.append(result)
            if sid:
                steps_ctx[sid] = {"outputs": result.outputs, "outcome": result.outcome,
                                  "conclusion": "success" if step.get("continue-on-error") else result.outcome}
            if result.outcome == "failure" and not step.get("continue-on-error"):
                run.failed = True
            if result.outcome == "cancelled":
                run.cancelled = True
        run.outputs = {}
        return run

    def _run_script(self, sid: str | None, name: str, script: str, env: Mapping[str, str],
                    interrupt: Interrupt | None, run: Run) -> StepRun:
        if "${{" in script:
            raise AssertionError(f"step {name!r}: ${{{{ }}}} inside a run: script (pass it through env:)")
        step_dir = Path(tempfile.mkdtemp(prefix="step-", dir=self.temp))
        files = {k: step_dir / k.lower() for k in ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_ENV", "GITHUB_PATH")}
        for f in files.values():
            f.touch()
        script_file = step_dir / "script.sh"
        script_file.write_text(script, encoding="utf-8")
        full_env = {**self.env, **env, **{k: str(v) for k, v in files.items()}}
        proc = subprocess.Popen([*BASH, str(script_file)], cwd=self.workspace, env=full_env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        cancelled = False
        after_sigint: float | None = None
        if interrupt is not None:
            deadline = time.monotonic() + interrupt.timeout
            while proc.poll() is None and not interrupt.when():
                if time.monotonic() > deadline:
                    raise AssertionError("interrupt condition never became true")
                time.sleep(0.05)
            if proc.poll() is None:
                cancelled = True
                signalled = time.monotonic()
                proc.send_signal(signal.SIGINT)  # to the shell only, as the runner does
                try:
                    proc.wait(timeout=7.5)
                except subprocess.TimeoutExpired:
                    proc.send_signal(signal.SIGTERM)
                    try:
                        proc.wait(timeout=2.5)
                    except subprocess.TimeoutExpired:
                        os.killpg(proc.pid, signal.SIGKILL)
                        proc.wait()
                after_sigint = time.monotonic() - signalled
        try:
            stdout, stderr = proc.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
            raise AssertionError(f"step {name!r} timed out\n{stdout}\n{stderr}") from None
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # nothing a step started outlives it
        summary = files["GITHUB_STEP_SUMMARY"].read_text(encoding="utf-8")
        assert len(summary.encode("utf-8")) < 1024 * 1024, f"step {name!r}: summary above 1 MiB"
        for line in files["GITHUB_PATH"].read_text(encoding="utf-8").splitlines():
            if line.strip():
                self.env["PATH"] = f"{line.strip()}{os.pathsep}{self.env['PATH']}"
        self.env.update(read_file_command(files["GITHUB_ENV"]))
        outcome = "cancelled" if cancelled else ("success" if proc.returncode == 0 else "failure")
        return StepRun(sid, name, outcome, proc.returncode, stdout, stderr,
                       read_file_command(files["GITHUB_OUTPUT"]), summary, after_sigint)


# --- composite actions -----------------------------------------------------------------

def load_yaml(path: Path) -> dict[str, Any]:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    # YAML 1.1 reads the workflow key `on` as True.
    if True in doc:
        doc["on"] = doc.pop(True)
    return doc  # type: ignore[no-any-return]


def run_composite(action_dir: Path, inputs: Mapping[str, str], runner: Runner, *,
                  interrupt: Interrupt | None = None, skip: Mapping[str, Mapping[str, str]] | None = None) -> Run:
    """The action's steps in order with its inputs (defaults filled in), then its outputs."""
    action = load_yaml(action_dir / "action.yml")
    assert action["runs"]["using"] == "composite"
    declared = action.get("inputs") or {}
    unknown = set(inputs) - set(declared)
    assert not unknown, f"inputs not declared by the action: {unknown}"
    values = {k: as_string(inputs.get(k, spec.get("default", ""))) for k, spec in declared.items()}
    saved_github = runner.github
    runner.github = {**saved_github, "action_path": str(action_dir)}
    try:
        run = runner.run_steps(action["runs"]["steps"], {"inputs": values}, interrupt=interrupt,
                               step_env={"GITHUB_ACTION_PATH": str(action_dir)}, skip=skip)
        steps_ctx = {s.id: {"outputs": s.outputs, "outcome": s.outcome} for s in run.steps if s.id}
        ctx = runner.context(run, steps_ctx, {"inputs": values})
        run.outputs = {k: substitute(spec["value"], ctx) for k, spec in (action.get("outputs") or {}).items()}
    finally:
        runner.github = saved_github
    return run


def run_scripts_of(doc: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(where, script) for every ``run:`` in an action or a workflow."""
    found: list[tuple[str, str]] = []
    if "runs" in doc:
        for i, step in enumerate(doc["runs"].get("steps") or []):
            if "run" in step:
                found.append((f"runs.steps[{i}] {step.get('name', '')}", step["run"]))
    for job_id, job in (doc.get("jobs") or {}).items():
        for i, step in enumerate(job.get("steps") or []):
            if "run" in step:
                found.append((f"jobs.{job_id}.steps[{i}] {step.get('name', '')}", step["run"]))
    return found


# --- workflow jobs -------------------------------------------------------------------

def run_job(workflow: Mapping[str, Any], job_id: str, runner: Runner, *,
            inputs: Mapping[str, Any] | None = None, vars: Mapping[str, str] | None = None,
            secrets: Mapping[str, str] | None = None, matrix: Mapping[str, Any] | None = None,
            needs: Mapping[str, Any] | None = None, skip: Mapping[str, Mapping[str, str]] | None = None) -> Run:
    """One job of a workflow: workflow and job ``env:`` evaluated into the runner's
    environment, then the steps, then the job's ``outputs:``."""
    job = workflow["jobs"][job_id]
    runner.extra_ctx = {"inputs": dict(inputs or {}), "vars": dict(vars or {}), "secrets": dict(secrets or {}),
                        "matrix": dict(matrix or {}), "needs": dict(needs or {})}
    for block in (workflow.get("env") or {}, job.get("env") or {}):
        for k, v in block.items():
            runner.env[k] = substitute(v, runner.context(Run(), {}, {}))
    run = runner.run_steps(job["steps"], skip=skip)
    steps_ctx = {s.id: {"outputs": s.outputs, "outcome": s.outcome} for s in run.steps if s.id}
    ctx = runner.context(run, steps_ctx, {})
    run.outputs = {k: substitute(v, ctx) for k, v in (job.get("outputs") or {}).items()}
    return run


def runner_commands(*streams: str) -> list[tuple[str, str]]:
    """(name, rest) of every line the GitHub runner would act on: leading blanks trimmed,
    ``::name ...::`` or a legacy ``##[name]`` anywhere in the line, ``stop-commands``
    honoured per stream (the runner reads stdout and stderr alike)."""
    found: list[tuple[str, str]] = []
    for stream in streams:
        stop: str | None = None
        for raw in re.split(r"\r\n|\n|\r", stream):
            line = raw.lstrip()
            if stop is not None:
                if line == f"::{stop}::":
                    stop = None
                continue
            m = re.match(r"::([A-Za-z-]+)[ :]", line)
            if m:
                if m.group(1) == "stop-commands":
                    stop = line.split("::", 2)[2]
                found.append((m.group(1).lower(), line))
            elif "##[" in line:
                found.append(("legacy", line))
    return found
