"""Launch buttons on every chapter: its notebook in Colab, on Binder, or on your JupyterHub.

As on QuantEcon's lectures, the chapters are MyST ``.md`` files here, and the notebooks a
student opens are their ``.ipynb`` versions kept on a branch of their own: ``make notebooks``
writes what that branch holds (the student edition's ``.ipynb``, no solutions, each opening
with a cell that installs the package where it is missing, and a ``requirements.txt`` for
Binder). sphinx-book-theme's own launch buttons would point at the ``.md`` sources, which
Colab cannot open; this extension adds the same kind of button group, pointing at that
branch. Everything is read from one place, ``_config.yml``'s ``sphinx.config.recbias_launch``:

* ``repository``: the course's GitHub repository (``https://github.com/<org>/<repo>``);
* ``notebooks_branch``: the branch holding the notebooks (default ``notebooks``);
* ``colab_url``, ``binderhub_url``, ``jupyterhub_url``: the services; an empty one gets no
  button. A JupyterHub link goes through nbgitpuller (the hub needs it installed).
"""

from __future__ import annotations

from urllib.parse import quote, urlencode

DEFAULTS = {"repository": "", "notebooks_branch": "notebooks",
            "colab_url": "https://colab.research.google.com",
            "binderhub_url": "https://mybinder.org", "jupyterhub_url": ""}


def settings(config: dict) -> dict:
    """The launch settings with their defaults; refuses a repository that is not GitHub's."""
    out = {**DEFAULTS, **(config or {})}
    unknown = set(out) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"recbias_launch: unknown setting(s) {sorted(unknown)}")
    repo = out["repository"].rstrip("/")
    if repo and (not repo.startswith("https://github.com/") or repo.count("/") != 4):
        raise ValueError("recbias_launch.repository must be https://github.com/<org>/<repo>, "
                         f"got {repo!r}")
    out["repository"] = repo
    return {k: v.rstrip("/") if isinstance(v, str) else v for k, v in out.items()}


def launch_urls(notebook: str, launch: dict) -> dict[str, str]:
    """``{service: url}`` opening ``notebook`` (a path in the notebooks branch)."""
    launch = settings(launch)
    if not launch["repository"]:
        return {}
    org, repo = launch["repository"].split("/")[3:5]
    branch = launch["notebooks_branch"]
    urls = {}
    if launch["colab_url"]:
        urls["Colab"] = f"{launch['colab_url']}/github/{org}/{repo}/blob/{branch}/{notebook}"
    if launch["binderhub_url"]:
        urls["Binder"] = (f"{launch['binderhub_url']}/v2/gh/{org}/{repo}/{quote(branch)}"
                          f"?urlpath={quote('lab/tree/' + notebook, safe='')}")
    if launch["jupyterhub_url"]:
        query = urlencode({"repo": launch["repository"], "branch": branch,
                           "urlpath": f"lab/tree/{repo}/{notebook}"}, safe="/")
        urls["JupyterHub"] = f"{launch['jupyterhub_url']}/hub/user-redirect/git-pull?{query}"
    return urls


_ICONS = {"Colab": "_static/images/logo_colab.png", "Binder": "_static/images/logo_binder.svg",
          "JupyterHub": "_static/images/logo_jupyterhub.svg"}


def add_launch_links(app, pagename, templatename, context, doctree):
    if "kernelspec" not in app.env.metadata.get(pagename, {}):
        return  # not a notebook page (the index, the API, the references)
    notebook = pagename.rsplit("/", 1)[-1] + ".ipynb"
    urls = launch_urls(notebook, app.config.recbias_launch)
    if not urls or "header_buttons" not in context:
        return
    context["header_buttons"].append({
        "type": "group", "tooltip": "Open this chapter as a notebook", "icon": "fas fa-rocket",
        "label": "launch-buttons",
        "buttons": [{"type": "link", "text": name, "tooltip": f"Open in {name}",
                     "icon": _ICONS[name], "url": url} for name, url in urls.items()]})


def setup(app):
    app.add_config_value("recbias_launch", {}, "html")
    app.connect("config-inited", lambda app, config: settings(config.recbias_launch))
    app.connect("html-page-context", add_launch_links, priority=502)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
