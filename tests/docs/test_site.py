"""The docs site: every public name has a docstring and a place in the reference, and the
site builds with ``mkdocs build --strict`` (broken links, anchors, snippets and docstrings
fail it). Needs the ``docs`` extra (mkdocs-material, mkdocstrings[python])."""

from __future__ import annotations

import fcntl
import html
import inspect
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mkdocs", reason="the docs extra: pip install -e '.[docs]'")
pytest.importorskip("mkdocstrings_handlers.python", reason="the docs extra")
import griffe  # after the skip: it comes with the docs extra

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "reference"

#: The modules whose public names the reference documents (their ``__all__``; for a module
#: without one, every public name it defines).
MODULES = (
    "aqless",
    "aqless.puts",
    "aqless.errors",
    "aqless.contracts",
    "aqless.sync",
    "aqless.testing",
    "aqless.web",
    "aqless.metrics",
    "aqless.tracing",
    "aqless.sentry",
    "aqless.outbox",
    "aqless.flows",
    "aqless.events",
)

DIRECTIVE = re.compile(r"^:::\s+(\S+)\s*$", re.MULTILINE)


def package() -> griffe.Module:
    """aqless as mkdocstrings sees it: read from the source, nothing imported."""
    loaded = griffe.load("aqless", search_paths=[str(ROOT)], allow_inspection=False)
    assert isinstance(loaded, griffe.Module)
    return loaded


def module(root: griffe.Module, path: str) -> griffe.Module:
    found = root if path == "aqless" else root[path.removeprefix("aqless.")]
    assert isinstance(found, griffe.Module), path
    return found


def public_names(mod: griffe.Module) -> list[str]:
    if mod.exports is not None:
        return [str(name) for name in mod.exports]
    return [
        name for name, member in mod.members.items() if member.is_public and not member.is_alias
    ]


def directives() -> dict[str, tuple[str, bool]]:
    """Each ``::: path`` of the reference pages: its page, and whether options filter its
    members (then it covers only what it names)."""
    found: dict[str, tuple[str, bool]] = {}
    for page in sorted(REFERENCE.glob("*.md")):
        text = page.read_text()
        for match in DIRECTIVE.finditer(text):
            options = text[match.end() :].split("\n:::", 1)[0].split("\n\n", 1)[0]
            filtered = bool(re.search(r"^\s+(members|filters):", options, re.MULTILINE))
            found[match.group(1)] = (page.name, filtered)
    return found


def rendered_at(root: griffe.Module, path: str, name: str) -> str | None:
    """The ``:::`` path that renders ``path.name``: its own, or its module's (unfiltered), or,
    for a name the package re-exports, the module that defines it."""
    shown = directives()
    if f"{path}.{name}" in shown:
        return f"{path}.{name}"
    if path in shown and not shown[path][1]:
        return path
    member = module(root, path)[name]
    if member.is_alias:
        home: str = member.target_path.rpartition(".")[0]
        if home in shown and not shown[home][1] and name in public_names(module(root, home)):
            return home
    return None


def expected() -> list[tuple[str, str]]:
    root = package()
    return [(path, name) for path in MODULES for name in public_names(module(root, path))]


def test_every_public_name_has_a_docstring() -> None:
    root = package()
    missing = [
        f"{path}.{name}"
        for path, name in expected()
        if not (module(root, path)[name].docstring or "")
    ]
    assert not missing, f"public names without a docstring: {missing}"


def test_every_public_name_is_in_the_reference() -> None:
    root = package()
    missing = [
        f"{path}.{name}" for path, name in expected() if rendered_at(root, path, name) is None
    ]
    assert not missing, f"public names no docs/reference/*.md directive renders: {missing}"


def test_every_directive_names_something() -> None:
    root = package()
    unknown = []
    for path in directives():
        try:
            root[path.removeprefix("aqless.")] if path != "aqless" else root
        except KeyError:
            unknown.append(path)
    assert not unknown, f"::: directives naming nothing: {unknown}"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built as ``nox -s docs`` builds it: once a run, by the first of the xdist
    workers to need it, the others waiting for it (each built its own before: 20 to 40 s of
    CPU each, as many times as workers ran a test of this module)."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the run's folder, above each worker's own
    out, outcome = shared / "docs-site", shared / "docs-site.json"
    with (shared / "docs-site.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when closed
        if not outcome.exists():
            started = time.monotonic()
            built = subprocess.run(
                [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=300,
                env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"},
            )
            seconds = time.monotonic() - started
            print(f"mkdocs build --strict: {seconds:.1f} s")  # noqa: T201
            result = {"returncode": built.returncode, "stderr": built.stderr[-4000:]}
            outcome.write_text(json.dumps(result))
    result = json.loads(outcome.read_text())
    assert result["returncode"] == 0, result["stderr"]
    return out


def test_the_site_builds_strict(site: Path) -> None:
    assert (site / "index.html").is_file()
    assert (site / "search" / "search_index.js").is_file()  # search from file://


def test_every_public_name_has_an_anchor(site: Path) -> None:
    """What the directives promise is on the pages: an element whose id is the name."""
    root = package()
    ids = set()
    for page in (site / "reference").glob("*.html"):
        ids |= set(re.findall(r'id="([^"]+)"', page.read_text()))
    missing = []
    for path, name in expected():
        at = rendered_at(root, path, name)
        anchor = f"{at}.{name}" if at is not None and not at.endswith(f".{name}") else at
        if anchor not in ids:
            missing.append(f"{path}.{name}")
    assert not missing, f"public names with no anchor in site/reference: {missing}"


def test_the_site_fetches_nothing(site: Path) -> None:
    """Offline: no web fonts, no script or style from a CDN."""
    remote = re.compile(r'<(?:script|link)[^>]+(?:src|href)="(https?:)?//[^"]+"')
    offenders = sorted(
        str(page.relative_to(site))
        for page in site.rglob("*.html")
        if remote.search(page.read_text()) or "fonts.googleapis" in page.read_text()
    )
    assert not offenders, f"pages that load something from the network: {offenders[:10]}"


def test_every_blocking_verb_is_in_the_reference(site: Path) -> None:
    """The blocking façades' derived verbs (``put = blocking(contracts.Queue.put)``) are
    methods on the reference page, each with its docstring, like the async verbs."""
    import aqless.sync
    from aqless.sync.facades import Verb

    page = (site / "reference" / "sync.html").read_text()
    missing = []
    for name in aqless.sync.__all__:
        cls = getattr(aqless.sync, name)
        if not isinstance(cls, type) or cls.__name__ != name:
            continue  # an alias (SyncShardedJobs is SyncJobs) is documented under its class
        verbs = {verb for klass in cls.__mro__ for verb, value in vars(klass).items()}
        for verb in sorted(verbs):
            if not isinstance(inspect.getattr_static(cls, verb), Verb):
                continue
            anchor = f'id="aqless.sync.{name}.{verb}"'
            at = page.find(anchor)
            heading_end = page.find(">", at)
            entry = page[heading_end : page.find('class="doc doc-heading"', heading_end)]
            if at < 0 or 'class="doc doc-contents' not in entry:
                missing.append(f"{name}.{verb}")
    assert not missing, f"blocking verbs without a documented entry in reference/sync: {missing}"


def test_every_contract_verb_is_documented(site: Path) -> None:
    """A contract's verbs carry their plain implementation's docstring on the reference page."""
    import aqless.contracts

    page = (site / "reference" / "contracts.html").read_text()
    missing = []
    for name, cls in vars(aqless.contracts).items():
        if not (isinstance(cls, type) and cls.__module__ == "aqless.contracts"):
            continue
        for verb, value in vars(cls).items():
            anchor = f'id="aqless.contracts.{name}.{verb}"'
            if verb.startswith("_") or not inspect.isfunction(value):
                continue
            heading_end = page.find(">", page.find(anchor))
            entry = page[heading_end : page.find('class="doc doc-heading"', heading_end)]
            if anchor not in page or "<p>" not in entry:
                missing.append(f"{name}.{verb}")
    assert not missing, f"contract verbs with no description in reference/contracts: {missing}"


def test_every_routed_verb_is_in_the_reference(site: Path) -> None:
    """The sharded classes' routed verbs (``length = routed(Queue.length, every, summed)``)
    are async methods on the reference page, each with its docstring."""
    import aqless
    from aqless._concurrency.routing import Routed

    page = (site / "reference" / "aqless.html").read_text()
    missing = []
    for name in aqless.__all__:
        cls = getattr(aqless, name)
        if not isinstance(cls, type) or not name.startswith("Sharded"):
            continue
        for verb, value in vars(cls).items():
            if not isinstance(value, Routed):
                continue
            at = page.find(f'id="aqless.{name}.{verb}"')
            heading_end = page.find(">", at)
            entry = page[heading_end : page.find('class="doc doc-heading"', heading_end)]
            if at < 0 or 'class="doc doc-contents' not in entry:
                missing.append(f"{name}.{verb}")
    assert not missing, f"routed verbs without a documented entry in reference/aqless: {missing}"


def test_the_reference_shows_no_private_module(site: Path) -> None:
    """The reference names public paths only: no link into a private module
    (``aqless._worker...``), no signature name whose tooltip is one, no text naming one;
    defaults read as values (``concurrency: int = 10``, not ``CONCURRENCY``), and a long
    signature is wrapped, one parameter a line. Links to a public name keep autorefs'
    tooltip, which gives its home for the curious."""
    private = re.compile(r"aqless\._[a-z]\w*")
    offenders = []
    for page in sorted((site / "reference").glob("*.html")):
        text = page.read_text()
        for href in re.findall(r'href="([^"]*)"', text):
            if private.search(href):
                offenders.append(f"{page.name}: link {href}")
        for title in re.findall(r'<span title="([^"]*)"', text):
            if private.search(title):
                offenders.append(f"{page.name}: name {title}")
        shown = html.unescape(re.sub(r"<[^>]+>", "", re.sub(r'title="[^"]*"', "", text)))
        offenders += [f"{page.name}: text {m.group(0)}" for m in private.finditer(shown)]
    assert not offenders, f"private modules in the reference: {offenders}"
    settings = (site / "reference" / "aqless.html").read_text()
    at = settings.find('id="aqless.WorkerSettings"')
    signature = html.unescape(re.sub(r"<[^>]+>", "", settings[at : at + 6000]))
    assert "concurrency: int = 10" in signature, signature[:800]
    # wrapped one parameter a line (ruff, which the docs extra brings, formats it)
    assert "WorkerSettings(\n    concurrency: int = 10,\n" in signature, signature[:800]
    assert '= "ordered"' in signature or "= 'ordered'" in signature, signature[:800]
