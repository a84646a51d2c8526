"""The lessons read as lessons (run by `make test` on the built site).

Each lesson page (the part *The course* of ``_toc.yml``) opens with a takeaway box before its
first section and keeps its prose within the limits of ``scripts/prose_stats.py``
(``LESSON_LIMITS`` and ``LESSON_MINIMA``: words, decimal or % numbers per 100 words between 0.3
and 1.5, sentence and paragraph lengths),
with no build or provenance talk. The replication pages are reports: only measured.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "_build" / "html"
sys.path.insert(0, str(ROOT / "book" / "_ext"))
sys.path.insert(0, str(ROOT / "scripts"))
import pages as book_pages  # noqa: E402
import prose_stats  # noqa: E402

if not (SITE / "index.html").exists():
    if os.environ.get("RECBIAS_REQUIRE_SITE") == "1":
        pytest.fail(f"the book is not built: {SITE} has no index.html", pytrace=False)
    pytest.skip("the book is not built (run `make book`)", allow_module_level=True)

LESSONS = [SITE / "book" / f"{p.stem}.html" for p in book_pages.lessons()]
#: Build and provenance talk that has no place in a lesson's prose.
BUILD_TALK = re.compile(r"\bcommit\b|\b(\d+|one|two|all|four|eight) (CPU )?cores?\b|\bCPUs?\b|\bcach(e|ed|ing)\b|sha256|\bbudget\b|"
                        r"stored (run|result)|make replicate|wall time", re.I)


@pytest.mark.parametrize("page", LESSONS, ids=lambda p: p.stem)
def test_a_lesson_keeps_its_prose_within_the_limits(page):
    stats = prose_stats.page_stats(page.read_text(encoding="utf-8"))
    print(page.stem, stats)
    assert prose_stats.over_limits(stats) == {}, f"{page.stem}: {prose_stats.over_limits(stats)}"


@pytest.mark.parametrize("page", LESSONS, ids=lambda p: p.stem)
def test_a_lesson_opens_with_its_takeaways(page):
    article = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser").select_one(
        "article.bd-article")
    box = article.select_one("div.admonition.takeaways")
    assert box is not None, f"{page.stem}: no takeaway box"
    first_section = article.find("h2")
    assert first_section is not None and box.sourceline < first_section.sourceline, (
        f"{page.stem}: the takeaway box is not before the first section")
    items = box.find_all("li")
    assert 3 <= len(items) <= 5, f"{page.stem}: {len(items)} takeaways (3-5)"
    assert all(item.get_text(strip=True) for item in items)


@pytest.mark.parametrize("page", LESSONS, ids=lambda p: p.stem)
def test_a_lesson_has_no_build_talk(page):
    talk = [b for b in prose_stats.prose_blocks(page.read_text(encoding="utf-8"))
            if BUILD_TALK.search(b)]
    assert not talk, f"{page.stem}: {talk[:2]}"


def test_the_prose_measure_counts_what_it_says():
    html = ("<article class='bd-article'><p>One short sentence. Another one, with 0.5 and "
            "30%.</p><div class='cell'><p>code 1.5</p></div><table><tr><td>2.5</td></tr>"
            "</table><p>e.g. this stays one sentence, as do et al. (2018) here.</p></article>")
    stats = prose_stats.page_stats(html)
    assert stats["words"] == 20
    assert stats["numbers_per_100"] == 10.0  # 0.5 and 30% in 20 words; code and tables out
    assert stats["mean_sentence"] == round(20 / 3, 1)
    long = "<article class='bd-article'><p>" + " ".join(["word"] * 160) + ".</p></article>"
    assert prose_stats.page_stats(long)["long_paragraphs"] == 1
    assert prose_stats.page_stats(long)["long_sentences"] == 1


@pytest.mark.parametrize("text, talk", [
    ("The run took an hour on 2 cores.", True), ("Each commit is checked.", True),
    ("The cached fit is reused.", True), ("The page's budget is three minutes.", True),
    ("The package's core estimator gives the same numbers.", False),
    ("A score of 0.8 is a good score.", False)])
def test_build_talk_is_told_from_the_subject(text, talk):
    assert bool(BUILD_TALK.search(text)) is talk


def test_the_limits_flag_bare_prose_and_crowded_prose():
    """A page under the floor of numbers (verdict words without their magnitudes) and one over
    the ceiling are both flagged; one in between is not."""
    base = {"words": 1000, "mean_sentence": 12.0, "long_sentences": 0, "long_paragraphs": 0}
    assert prose_stats.over_limits({**base, "numbers_per_100": 0.06}) == {"numbers_per_100": (0.06, 0.3)}
    assert prose_stats.over_limits({**base, "numbers_per_100": 2.0}) == {"numbers_per_100": (2.0, 1.5)}
    assert prose_stats.over_limits({**base, "numbers_per_100": 0.8}) == {}
