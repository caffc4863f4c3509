"""GitHub's references, checked the way GitHub finds them.

cmark-gfm turns Markdown into HTML; GitHub then links (and, for a mention, notifies) from
the *text* of that HTML, server-side: user mentions ``@user``, team mentions
``@org/team``, issues ``#N``, ``GH-N`` and ``owner/repo#N``, commits ``owner/repo@sha``,
``user@sha`` and bare SHAs of 7 to 40 hex digits. It leaves alone text inside ``<code>``,
``<pre>`` and ``<a>``, and it reads each text node on its own. :func:`live_references`
does the same, a little more eagerly (any ``@`` before a letter or digit, any ``#`` or
``GH-`` before a digit, any run of 7 or more hex digits), so whatever it finds would be
linked or would ping someone; a reference broken by an invisible character or shown as a
code span is not found.
"""

from __future__ import annotations

import html.parser
import re

import cmarkgfm
from cmarkgfm.cmark import Options

LIVE_REFERENCE = re.compile(
    r"[A-Za-z0-9_.-]*@[A-Za-z0-9][A-Za-z0-9_./-]*"  # @user, @org/team, user@sha, owner/repo@sha
    r"|[A-Za-z0-9_./-]*#[0-9]+"  # #N, owner/repo#N
    r"|GH-[0-9]+"  # GH-N
    r"|(?<![A-Za-z0-9])[0-9a-f]{7,}(?![A-Za-z0-9])",  # a commit SHA
    re.IGNORECASE,
)
_SKIPPED = {"code", "pre", "a"}


class _Text(html.parser.HTMLParser):
    """Each text node outside code, pre and links, split wherever a tag starts or ends."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0
        self.nodes: list[str] = [""]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.nodes.append("")
        self.depth += tag in _SKIPPED

    def handle_endtag(self, tag: str) -> None:
        self.nodes.append("")
        self.depth -= tag in _SKIPPED

    def handle_data(self, data: str) -> None:
        if self.depth == 0:
            self.nodes[-1] += data


def rendered_html(markdown: str) -> str:
    """GitHub's Markdown (cmark-gfm with its extensions), raw HTML let through."""
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


def live_references(markdown: str) -> list[str]:
    """Every reference GitHub would link or notify from ``markdown`` once rendered."""
    doc = _Text()
    doc.feed(rendered_html(markdown))
    doc.close()
    return [m.group(0) for node in doc.nodes for m in LIVE_REFERENCE.finditer(node)]
