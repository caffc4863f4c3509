"""``profile classify`` and ``profile list``: see how a profile reads a reviewer's words.

``classify`` exists so a user whose vendor changed its markup can paste one comment and
see at once whether the profile still finds the severity, the location and the
done/clean/skip signal, before a canary run turns red for the wrong reason.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from redline_canary.commands._groups import add_actions
from redline_canary.commands._learn import learn, load_examples, parse_expect, render
from redline_canary.commands._options import load_profile
from redline_canary.commands._profiles_file import build_profiles, load_profiles_file, read_profiles_doc
from redline_canary.corpus.severity import SCALE
from redline_canary.errors import EXIT_GATE_FAILED, EXIT_PASS, BadInput
from redline_canary.report.text import inert_line, json_text, terminal_safe
from redline_canary.review.comments import REACTION_CHANNEL, Channel, Comment
from redline_canary.review.profiles import PROFILES, Profile

CHANNELS = ("inline", "review", "issue", REACTION_CHANNEL)


def register(sub: Any) -> None:
    parser = sub.add_parser("profile", help="inspect reviewer profiles (dialects)")
    inner = add_actions(parser, "profile_command")
    c = inner.add_parser("classify", help="how a profile reads one comment body")
    c.add_argument("--reviewer", required=True, help="profile name")
    c.add_argument("--channel", required=True, choices=CHANNELS,
                   help="inline review comment, review body, issue comment (or a reaction)")
    c.add_argument("--login", help="author login (default: the profile's login for the channel)")
    c.add_argument("--body-file", required=True, help="file holding the comment body ('-' = stdin)")
    c.add_argument("--profiles", help="YAML file of custom reviewer profiles and overrides")
    c.add_argument("--json", action="store_true", help="machine-readable output")
    c.set_defaults(func=run_classify)
    lr = inner.add_parser(
        "learn", help="print the smallest --profiles override that reads one comment as expected",
        description="Given one comment a profile misreads and what it should read as, print the smallest "
                    "--profiles YAML that reads it right and reads every shipped example of the profile as "
                    "before (docs/dialects.md#teaching-a-profile-a-new-phrasing). Exit 0: printed (or already "
                    "reads right); 1: no such override found; 2: bad input.")
    lr.add_argument("--reviewer", required=True, help="profile name (a built-in, or one in --profiles)")
    lr.add_argument("--channel", choices=CHANNELS,
                    help="where the body was posted (default: inline for a bare severity=, else review)")
    lr.add_argument("--login", help="author login (default: the profile's login for the channel)")
    lr.add_argument("--body-file", required=True, help="file holding the comment body ('-' = stdin)")
    lr.add_argument("--expect", action="append", required=True, metavar="KEY=VALUE",
                    help="what it should read as: signal=S, notice=CLASS (timed-out, failed, busy, rate-limited, "
                         "paused, quota, not-enabled, declined, skipped, clean), severity=LEVEL, "
                         "location=path:line[-end] (with severity= in the same --expect: one finding); repeatable")
    lr.add_argument("--profiles", help="your YAML file of profiles: the override is built on it and printed whole")
    lr.set_defaults(func=run_learn)
    ls = inner.add_parser("list", help="every profile with its identities, trigger and severity mapping")
    ls.add_argument("--profiles", help="YAML file of custom reviewer profiles and overrides")
    ls.add_argument("--json", action="store_true", help="machine-readable output")
    ls.set_defaults(func=run_list)


def _read_body(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadInput(f"--body-file: {path}: file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"--body-file: {path}: cannot read ({exc.__class__.__name__})") from None


def classify(profile: Profile, channel: Channel, body: str, login: str | None = None) -> dict[str, Any]:
    """The signal and findings ``profile`` reads from one body posted on ``channel``."""
    comment = Comment(
        channel=channel, id=1, login=login or profile.login_for(channel), user_id=None,
        user_type="Bot", body=body, state="COMMENTED" if channel == "review" else None,
    )
    if not profile.is_reviewer(comment):
        return {"signal": "none", "notice": None, "findings": [],
                "note": f"{comment.login} is not {profile.name}"}
    extraction = profile.extract([comment])
    signal = extraction.signals[0][0] if extraction.signals else "none"
    # A skip or error notice is what the record will quote (docs/matching.md): show it, so a
    # user checking a reworded vendor notice sees it read as a notice, not as "done".
    notice = extraction.notice("skipped", "error") if signal in ("skipped", "error") else None
    return {
        "signal": signal,
        "notice": notice,
        "findings": [
            {"severity": f.severity.name if f.severity is not None else None, "path": f.path,
             "line": f.start, "end_line": f.end, "source": f.source}
            for f in extraction.findings
        ],
    }


def run_classify(args: argparse.Namespace) -> int:
    profile = load_profile(args.reviewer, (), args.profiles)
    result = classify(profile, args.channel, _read_body(args.body_file), args.login)
    if args.json:
        print(json_text(result))
        return EXIT_PASS
    # Paths and the login come from the pasted comment: one terminal-safe line each.
    if "note" in result:
        print(inert_line(f"note: {result['note']}"), file=sys.stderr)
    print(inert_line(f"signal: {result['signal']}"))
    if result.get("notice"):
        print(inert_line(f"notice: {result['notice']}"))
    for f in result["findings"]:
        where = f"{f['path'] or '-'}:{f['line'] if f['line'] is not None else '-'}"
        if f["end_line"] not in (None, f["line"]):
            where += f"-{f['end_line']}"
        print(inert_line(f"finding: {f['severity'] or 'unrated'} at {where} ({f['source']})"))
    return EXIT_PASS


def examples_dir() -> Path:
    """The shipped examples (a wheel carries them as ``_data/profiles``; a checkout in tests/)."""
    package = Path(__file__).resolve().parent.parent
    packaged = package / "_data" / "profiles"
    return packaged if packaged.is_dir() else package.parent / "tests" / "data" / "profiles"


def run_learn(args: argparse.Namespace) -> int:
    expectations = parse_expect(args.expect)
    # The file is read once: its document is what `learn` builds on, its profiles what it knows.
    base_doc = read_profiles_doc(args.profiles) if args.profiles else None
    known = {**PROFILES, **(build_profiles(base_doc, args.profiles) if args.profiles else {})}
    if args.reviewer not in known:
        raise BadInput(f"--reviewer: unknown profile {args.reviewer!r} (known: {', '.join(sorted(known))})")
    channel: Channel = args.channel or (
        "inline" if all(x.signal is None and x.path is None for x in expectations) else "review")
    if channel == "inline" and any(x.path is not None for x in expectations):
        raise BadInput("--expect location=: an inline comment's place comes from GitHub, not its body; "
                       "use --channel review or issue for a summary")
    body = _read_body(args.body_file)
    examples = load_examples(examples_dir(), args.reviewer)
    found = learn(args.reviewer, base_doc, channel, body, args.login, expectations, examples, classify)
    name = inert_line(args.reviewer)
    if found.already:
        print(inert_line(f"# {name} already reads this body as expected: no override needed"))
        return EXIT_PASS
    if found.entry is None:
        print(inert_line(f"profile learn: {name}: {found.reason} ({found.tries} candidates tried)"), file=sys.stderr)
        return EXIT_GATE_FAILED
    print(f"# profile learn: reads the body as expected; checked against {found.examples} shipped example(s) "
          f"of {name}: none reads differently")
    print(render(args.reviewer, found.entry), end="")
    return EXIT_PASS


def describe(profile: Profile) -> dict[str, Any]:
    """Everything ``profile list`` shows for one profile."""
    table: dict[str, list[str]] = {s.name: [] for s in SCALE}
    unrated: list[str] = []
    for level, label in profile.labels:
        (table[level.name] if level is not None else unrated).append(label)
    if not profile.labels:
        for pattern, level in (*profile.severity_overrides, *profile.severity_patterns,
                               *profile.severity_fallbacks):
            table[level.name].append(f"/{pattern.pattern}/")
    return {
        "name": profile.name,
        "description": profile.description,
        "logins": sorted(profile.logins) or (["any Bot user"] if profile.any_bot else []),
        "bot_ids": sorted(profile.bot_ids),
        "trigger": {"kind": profile.trigger.kind, "value": profile.trigger.value},
        "unrated": profile.unrated,
        "mine_summaries": profile.mine_summaries,
        "severity": table,
        "unrated_note": unrated,
    }


def run_list(args: argparse.Namespace) -> int:
    known = {**PROFILES, **(load_profiles_file(args.profiles) if args.profiles else {})}
    rows = [describe(p) for _, p in sorted(known.items())]
    if args.json:
        print(json_text(rows))
        return EXIT_PASS
    t = terminal_safe  # a --profiles file is outside text too
    for r in rows:
        trigger = t(r["trigger"]["kind"] + (f" {r['trigger']['value']}" if r["trigger"]["value"] else ""))
        print(t(f"{r['name']}: {r['description']}"))
        print(t(f"  identities: {', '.join(r['logins']) or '-'}")
              + (f" (ids {', '.join(map(str, r['bot_ids']))})" if r["bot_ids"] else ""))
        print(f"  trigger: {trigger}; unrated findings: {r['unrated']}"
              + ("; mines summaries" if r["mine_summaries"] else ""))
        print("  | level | vendor markup |")
        print("  |---|---|")
        for level, labels in r["severity"].items():
            print(t(f"  | {level} | {'; '.join(labels) or '-'} |"))
        if r["unrated_note"]:
            print(t(f"  unrated: {'; '.join(r['unrated_note'])}"))
        print()
    return EXIT_PASS
