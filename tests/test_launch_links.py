"""The launch buttons' links (book/_ext/launch_links.py) and the notebooks they open
(``make notebooks``: the student edition's .ipynb, an install cell first, requirements.txt)."""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import launch_links  # noqa: E402
import student_edition  # noqa: E402

REPO = {"repository": "https://github.com/org/course/"}


def test_each_service_opens_the_notebook_on_the_notebooks_branch():
    urls = launch_links.launch_urls("ch02_ips_snips.ipynb",
                                    {**REPO, "jupyterhub_url": "https://hub.example.edu/"})
    assert urls["Colab"] == ("https://colab.research.google.com/github/org/course/blob/"
                             "notebooks/ch02_ips_snips.ipynb")
    assert urls["Binder"] == ("https://mybinder.org/v2/gh/org/course/notebooks"
                              "?urlpath=lab%2Ftree%2Fch02_ips_snips.ipynb")
    hub = urlparse(urls["JupyterHub"])
    assert hub.netloc == "hub.example.edu" and hub.path == "/hub/user-redirect/git-pull"
    assert parse_qs(hub.query) == {"repo": ["https://github.com/org/course"],
                                   "branch": ["notebooks"],
                                   "urlpath": ["lab/tree/course/ch02_ips_snips.ipynb"]}


def test_an_empty_service_or_repository_gets_no_button():
    assert set(launch_links.launch_urls("a.ipynb", {**REPO, "binderhub_url": ""})) == {"Colab"}
    assert launch_links.launch_urls("a.ipynb", {"repository": ""}) == {}


@pytest.mark.parametrize("bad", [{"repository": "https://gitlab.com/org/course"},
                                 {"repository": "https://github.com/org"},
                                 {"repo": "https://github.com/org/course"}])
def test_bad_settings_are_refused(bad):
    with pytest.raises(ValueError, match="recbias_launch"):
        launch_links.settings(bad)


def test_the_config_has_one_repository_and_the_notebooks_install_from_it(tmp_path):
    repository = student_edition.launch_repository()
    launch_links.settings({"repository": repository})  # a GitHub repository
    student_edition.write_student_edition(tmp_path)
    spec = f"recbias_tutorial[notebook] @ git+{repository}"
    assert (tmp_path / "notebooks" / "requirements.txt").read_text() == spec + "\n"
    import jupytext

    for chapter in student_edition.chapters(ROOT / "book"):
        first = jupytext.read(tmp_path / "notebooks" / f"{chapter.stem}.ipynb").cells[0]
        assert first.cell_type == "code" and spec in first.source
        assert 'find_spec("recbias_tutorial") is None' in first.source
