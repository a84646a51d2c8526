"""How a built page reads: the prose outside code cells, measured on the HTML.

Usage: ``python scripts/prose_stats.py [_build/html]`` prints one row per course page.

The prose is the page's article minus its code cells (inputs and outputs), tables, maths,
code blocks and the navigation: what a student reads as sentences. Measured on it:

* ``words``: whitespace-separated tokens that hold a letter or a digit;
* ``numbers_per_100``: literals with a decimal point (``0.38``) or a percent (``30%``) per
  100 words: tables and charts carry numbers, the prose says what they mean (the numbers of
  labels, "Exercise 5.2", "Fig. 2.1", "(4.3)" in a cross-reference, are not counted);
* ``mean_sentence``: words per sentence (a sentence ends at ``.``, ``!`` or ``?`` followed by a
  space and a capital, an opening bracket or a quote; ``e.g.``, ``i.e.``, ``et al.`` do not end one);
* ``long_sentences``: sentences of 40 words or more;
* ``long_paragraphs``: paragraphs (``<p>`` and list items) over 150 words;
* ``replication_share``: the share of the words in paragraphs that talk about reproducing a
  paper (the authors' code or protocol, stored runs, our replication): a rough keyword
  reading, printed to compare pages, not a target.

:data:`LESSON_LIMITS` (largest values) and :data:`LESSON_MINIMA` (smallest) are the targets of a
lesson page (issues "Lessons first" and "Lessons that are right": a finding carries its number);
``tests/test_site.py`` checks every lesson page against them.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

#: A lesson page's limits: (measure, largest value allowed).
LESSON_LIMITS: dict[str, float] = {"words": 4000, "numbers_per_100": 1.5, "mean_sentence": 18.0,
                                   "long_sentences": 2, "long_paragraphs": 0}

_NUMBER = re.compile(r"\d*\.\d+|\d+(?:\.\d+)?\s?%")
_WORD = re.compile(r"\S*[\w]\S*")
_ABBREVIATIONS = re.compile(r"\b(e\.g|i\.e|et al|cf|vs|Fig|Eq|resp|approx)\.\s", re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)]?\s+(?=[A-Z(“\"'$])")
_REPLICATION = re.compile(
    r"authors'? (?:code|protocol|notebook|script|repositor)|stored (?:run|result)|"
    r"replicat|reproduc|provenance|commit|\bcores?\b|\bcache|our run|the paper's (?:table|value|number)",
    re.I)
#: Where a number is a label: cross-references, caption and directive numbers.
_LABELS = ("a.reference.internal", "span.caption-number", "p.admonition-title",
           "span.section-number", "span.eqno", "a.footnote-reference")
_LABEL_NUMBER = re.compile(r"\d+(?:\.\d+)+")
#: What is not prose: code cells (input and output), tables, maths, code, navigation.
_NOT_PROSE = ("div.cell", "div.cell_output", "table", "span.math", "div.math", "pre",
              "div.highlight", "nav", "a.headerlink", "div.toctree-wrapper", "script", "style",
              "div.recbias-chart", "div.bd-sidebar", "div.prev-next-area")


def _article(html: str):
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    article = soup.select_one("article.bd-article") or soup.select_one("main") or soup
    for selector in _NOT_PROSE:
        for node in article.select(selector):
            node.decompose()
    # labels ("Exercise 5.2", "Fig. 2.1", an equation's "(4.3)") are words, not numbers
    for node in article.select(", ".join(_LABELS)):
        for text in node.find_all(string=True):
            text.replace_with(_LABEL_NUMBER.sub("N", text))
    return article


def _words(text: str) -> list[str]:
    return _WORD.findall(text)


def sentences(text: str) -> list[str]:
    """The sentences of a paragraph's text (see the module's rule)."""
    text = _ABBREVIATIONS.sub(lambda m: m.group(0).replace(".", "\u2024"), " ".join(text.split()))
    return [s for s in _SENTENCE_END.split(text) if _words(s)]


def prose_blocks(html: str) -> list[str]:
    """The text of each prose paragraph (``<p>``, or a list item without one) of a page."""
    article = _article(html)
    blocks = []
    for node in article.find_all(["p", "li", "dt", "dd", "figcaption"]):
        if node.name == "li" and node.find("p"):
            continue  # its paragraphs are counted themselves
        if node.find_parent(["p"]) is not None:
            continue
        text = " ".join(node.get_text(" ").split())
        if _words(text):
            blocks.append(text)
    return blocks


def page_stats(html: str) -> dict[str, float]:
    """The measures of one built page (see the module's docstring)."""
    blocks = prose_blocks(html)
    words = [len(_words(b)) for b in blocks]
    total = sum(words)
    sents = [s for b in blocks for s in sentences(b)]
    numbers = sum(len(_NUMBER.findall(b)) for b in blocks)
    replication = sum(w for b, w in zip(blocks, words) if _REPLICATION.search(b))
    return {"words": total,
            "numbers_per_100": round(100 * numbers / total, 2) if total else 0.0,
            "mean_sentence": round(total / len(sents), 1) if sents else 0.0,
            "long_sentences": sum(len(_words(s)) >= 40 for s in sents),
            "long_paragraphs": sum(w > 150 for w in words),
            "replication_share": round(replication / total, 2) if total else 0.0}


#: A lesson page's floors: (measure, smallest value allowed). Prose that states its findings
#: with their magnitudes holds at least 0.3 decimal or percent numbers per 100 words.
LESSON_MINIMA: dict[str, float] = {"numbers_per_100": 0.3}


def over_limits(stats: dict[str, float], limits: dict[str, float] = LESSON_LIMITS,
                minima: dict[str, float] = LESSON_MINIMA) -> dict:
    """The measures of ``stats`` above their limit or below their floor:
    {measure: (value, limit or floor)}."""
    return {**{k: (stats[k], v) for k, v in limits.items() if stats[k] > v},
            **{k: (stats[k], v) for k, v in minima.items() if stats[k] < v}}


def main(site: Path) -> None:
    pages = sorted((site / "book").glob("*.html"))
    header = ["page", *page_stats("<p>x</p>")]
    print(" | ".join(header))
    for page in pages:
        stats = page_stats(page.read_text(encoding="utf-8"))
        print(" | ".join([page.stem, *(f"{v:,}" if isinstance(v, int) else f"{v}"
                                        for v in stats.values())]))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("_build/html"))
