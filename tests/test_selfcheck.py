"""Self-check questions in every lesson, read from the ``.md`` sources (no build needed).

A question is plain HTML in a lesson's Markdown, so that it works unchanged on the built site
(MyST passes raw HTML through; ``page_fixes.py`` styles it), in the student edition and in
JupyterLab (jupyterlab-myst renders the HTML; an unknown directive would show as raw text):

    <div class="selfcheck">
    <p class="selfcheck-question"><strong>Self-check.</strong> The question?</p>
    <details class="selfcheck-option"><summary ...><span class="selfcheck-mark">&#9656;</span> A. An option</summary><p
      class="selfcheck-feedback selfcheck-right" ...>Right: why.</p></details>
    ... one <details> per option ...
    </div>

Clicking an option opens its ``<details>``: the feedback shows, no script needed. Checked here:
at least three questions per lesson, 3-4 options each, exactly one right, feedback for every
option that says "Right:" or "Wrong:" as its class does, the block one HTML block (no blank
line inside, no MyST inside, which raw HTML would show as typed), in a Markdown cell, at the
end of a section, short, and kept by the student edition. The built site's questions are
clicked in Chromium by ``tests/test_browser.py``; ``tests/test_lab.py`` counts them in JupyterLab.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import jupytext
import pytest
from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import pages as book_pages  # noqa: E402
import solutions  # noqa: E402

LESSONS = book_pages.lessons()
BLOCK = re.compile(r'^<div class="selfcheck">\n.*?^</div>\n', re.S | re.M)
#: what the prose measure counts as a number (scripts/prose_stats.py): none in a question
NUMBER = re.compile(r"\d*\.\d+|\d+(?:\.\d+)?\s?%")
MAX_WORDS = 60  # the question and its feedback (the words scripts/prose_stats.py counts)


def blocks(text: str) -> list[str]:
    return BLOCK.findall(text)


def parse(block: str) -> dict:
    """One question: its text and, per option, (label, right?, feedback)."""
    div = BeautifulSoup(block, "html.parser").select_one("div.selfcheck")
    options = []
    for details in div.select("details.selfcheck-option"):
        feedback = details.select("p.selfcheck-feedback")
        classes = [c for p in feedback for c in p["class"] if c in ("selfcheck-right", "selfcheck-wrong")]
        options.append({"label": details.summary.get_text(" ", strip=True) if details.summary else "",
                        "classes": classes,
                        "feedback": " ".join(p.get_text(" ", strip=True) for p in feedback)})
    question = div.select_one("p.selfcheck-question")
    return {"question": question.get_text(" ", strip=True) if question else "", "options": options}


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_each_lesson_has_three_self_check_questions(lesson):
    text = lesson.read_text(encoding="utf-8")
    assert len(blocks(text)) >= 3, f"{lesson.stem}: {len(blocks(text))} self-check questions"
    # every selfcheck div is a complete block of the expected form
    assert text.count('<div class="selfcheck">') == len(blocks(text))


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_each_question_has_one_right_option_and_feedback_for_all(lesson):
    for block in blocks(lesson.read_text(encoding="utf-8")):
        q = parse(block)
        assert q["question"].startswith("Self-check.") and q["question"].endswith("?"), q["question"]
        options = q["options"]
        assert 3 <= len(options) <= 4, f"{q['question']!r}: {len(options)} options"
        letters = [o["label"].lstrip("▸ ").split(".")[0] for o in options]
        assert letters == list("ABCD"[:len(options)]), letters
        for o in options:
            assert len(o["classes"]) == 1, f"{o['label']!r}: feedback {o['classes']}"
            word = "Right:" if o["classes"] == ["selfcheck-right"] else "Wrong:"
            assert o["feedback"].startswith(word) and len(o["feedback"].split()) >= 4, o
        right = [o for o in options if o["classes"] == ["selfcheck-right"]]
        assert len(right) == 1, f"{q['question']!r}: {len(right)} right options"


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_a_question_is_one_short_html_block_in_a_markdown_cell(lesson):
    text = lesson.read_text(encoding="utf-8")
    markdown = [c.source for c in jupytext.reads(text, fmt="md:myst").cells if c.cell_type == "markdown"]
    for block in blocks(text):
        assert "\n\n" not in block, "a blank line ends a raw HTML block: the rest would be Markdown"
        # raw HTML is shown as typed: no role, directive, maths or Markdown emphasis inside
        assert not re.search(r"[`${}]|\*\*|\]\(", block), block[:120]
        assert any(block.strip() in cell for cell in markdown), "not inside one Markdown cell"
        q = parse(block)
        words = len(q["question"].split()) + sum(len(o["feedback"].split()) for o in q["options"])
        assert words <= MAX_WORDS, f"{q['question']!r}: {words} words with its feedback"
        prose = q["question"] + " " + " ".join(o["label"] + " " + o["feedback"] for o in q["options"])
        assert not NUMBER.search(prose), NUMBER.search(prose).group()


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_a_question_ends_the_section_it_tests(lesson):
    """The next thing after a question is a heading (or the label of one)."""
    text = lesson.read_text(encoding="utf-8")
    for match in BLOCK.finditer(text):
        after = text[match.end():].lstrip("\n").splitlines()[0]
        assert re.match(r"#{2,3} |\([\w-]+\)=$", after), f"{lesson.stem}: a question before {after!r}"


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_the_student_edition_keeps_the_questions(lesson):
    text = lesson.read_text(encoding="utf-8")
    assert blocks(solutions.strip_solutions(text)) == blocks(text)


def test_the_checks_can_fail():
    good = ('<div class="selfcheck">\n<p class="selfcheck-question"><strong>Self-check.</strong> Q?</p>\n'
            + "".join(f'<details class="selfcheck-option"><summary>&#9656; {x}. o</summary><p class="'
                      f'selfcheck-feedback selfcheck-{k}">{w}: one two three.</p></details>\n'
                      for x, k, w in (("A", "right", "Right"), ("B", "wrong", "Wrong"), ("C", "wrong", "Wrong")))
            + "</div>\n")
    q = parse(blocks(good)[0])
    assert [o["classes"] for o in q["options"]] == [["selfcheck-right"], ["selfcheck-wrong"], ["selfcheck-wrong"]]
    two_right = good.replace("selfcheck-wrong\">Wrong", "selfcheck-right\">Right", 1)
    assert sum(o["classes"] == ["selfcheck-right"] for o in parse(blocks(two_right)[0])["options"]) == 2
    assert blocks(good.replace("</div>\n", "")) == []
