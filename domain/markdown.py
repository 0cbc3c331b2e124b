"""What of a comment Markdown shows as text, and what as code or a quote — the little of CommonMark
the control verbs and the agent marker need (a verb or a marker shown as code is only mentioned)."""

from __future__ import annotations

import re
from collections.abc import Iterator

_CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")
_FENCE = re.compile(r"(`{3,}|~{3,})")


def indent(line: str) -> int:
    """Columns of leading blanks, a tab reaching the next multiple of four (CommonMark's rule)."""
    column = 0
    for char in line:
        if char == " ":
            column += 1
        elif char == "\t":
            column += 4 - column % 4
        else:
            break
    return column


def prose_lines(body: str) -> Iterator[str]:
    """The lines Markdown shows as text, stripped, with their code spans taken out: not those of a
    fenced or indented code block, nor of a block quote (a lazy continuation line included)."""
    fence = ""  # the open fence's run of ``` or ~~~; "" outside one
    previous = ""  # "": a blank line before (or the start); "text", "quote"
    for line in body.splitlines():
        text = line.strip()
        if fence:
            if indent(line) < 4 and text.startswith(fence[0] * len(fence)) and not text.strip(fence[0]):
                fence = ""
            continue
        if not text:
            previous = ""
            continue
        opening = _FENCE.match(text)
        if indent(line) < 4 and opening and not (opening[1][0] == "`" and "`" in text[len(opening[1]) :]):
            fence, previous = opening[1], ""
        elif text.startswith(">") or previous == "quote":
            previous = "quote"
        elif indent(line) >= 4 and previous != "text":
            continue  # an indented code block (an indented line after text only continues it)
        else:
            previous = "text"
            yield _CODE_SPAN.sub("", text)
