"""The runner's workflow-command syntax: ``::name k=v::message`` and ``$GITHUB_OUTPUT`` entries. Pure.

Runner facts this follows (``docs/github.md`` §10): message data escapes
``%``, CR and LF; property values additionally ``:`` and ``,``. Why a module of its own:
every other Actions module (annotations, the outputs, the edge in ``actions.py``) builds
on this one escaping, and an escaping bug is an injection bug, so it is read in one place.
"""

from __future__ import annotations


def escape_data(text: str) -> str:
    """A command's message: a newline in reviewer or corpus text must not start a new
    command, so CR/LF (and the escape character itself) are percent-encoded."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_command(name: str, message: str, **props: str | int | None) -> str:
    """``::name k=v,k=v::message`` with the runner's escaping; ``None`` props are left out."""
    given = [(k, v) for k, v in props.items() if v is not None and v != ""]
    head = f"::{name}"
    if given:
        head += " " + ",".join(f"{k}={escape_property(str(v))}" for k, v in given)
    return f"{head}::{escape_data(message)}"


def output_entry(name: str, value: str, delimiter: str) -> str:
    """One ``$GITHUB_OUTPUT`` entry. Single-line values use ``name=value``; anything with a
    newline uses the heredoc form, whose delimiter (chosen by the caller, random) must not
    occur as a line of the value."""
    if "\n" not in value and "\r" not in value:
        return f"{name}={value}\n"
    if delimiter in value.splitlines():
        raise ValueError("output delimiter occurs in the value")
    return f"{name}<<{delimiter}\n{value}\n{delimiter}\n"
