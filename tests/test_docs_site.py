"""The documentation site (mkdocs.yml, docs/, tools/docs_reference.py, tools/docs_hooks.py).

The CLI reference and the error-code page are generated at build time, so they cannot go stale;
these tests hold the generator to the whole click tree (lazy subcommands included, every option)
and to every code of specs/error-codes.json, check that every page under docs/ is in the nav, and
run the real `mkdocs build --strict`, which must print no warning.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import click
import pytest
import yaml
from affidavit.cli._group import SUBCOMMANDS, LazyGroup, affidavit
from affidavit.verify import codes as error_code

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
GENERATED = {"reference/api.md", "reference/cli.md", "reference/errors.md"}
MKDOCS = Path(sys.executable).parent / "mkdocs"


def _load_reference() -> ModuleType:
    """tools/docs_reference.py, loaded by path (tools/ is not a package)."""
    spec = importlib.util.spec_from_file_location(
        "docs_reference", ROOT / "tools" / "docs_reference.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["docs_reference"] = module
    spec.loader.exec_module(module)
    return module


reference = _load_reference()


@pytest.fixture(scope="module")
def cli_page() -> str:
    return str(reference.cli_reference_markdown())


def _tree() -> dict[str, Any]:
    """The click tree as click itself describes it (lazy subcommands are loaded by click)."""
    context = click.Context(affidavit, info_name="affidavit", **affidavit.context_settings)
    return affidavit.to_info_dict(context)


def _commands(info: dict[str, Any], path: tuple[str, ...]) -> list[tuple[tuple[str, ...], dict]]:
    found = [(path, info)]
    for name, sub in sorted(info.get("commands", {}).items()):
        if not sub.get("hidden"):
            found += _commands(sub, (*path, name))
    return found


def _sections(page: str) -> dict[str, str]:
    """Each command section of the page by its anchor, up to the next heading."""
    sections: dict[str, str] = {}
    current: str | None = None
    for line in page.splitlines():
        heading = re.match(r"^#+ .* \{#([a-z0-9-]+)\}$", line)
        if heading:
            current = heading.group(1)
            sections[current] = ""
        elif line.startswith("#"):
            current = None
        elif current is not None:
            sections[current] += line + "\n"
    return sections


def _table_rows(section: str, header: str) -> list[str]:
    """The body rows of the table whose header row starts with ``| header |``."""
    lines = section.splitlines()
    for index, line in enumerate(lines):
        if line.startswith(f"| {header} |"):
            rows = []
            for row in lines[index + 2 :]:
                if not row.startswith("|"):
                    break
                rows.append(row)
            return rows
    return []


# -- the CLI reference ----------------------------------------------------------------------------


def test_cli_reference_has_a_section_per_command_lazy_ones_included(cli_page: str) -> None:
    commands = _commands(_tree(), ("affidavit",))
    sections = _sections(cli_page)
    expected = {reference.anchor_for(path) for path, _ in commands}
    assert set(sections) == expected
    # every lazily loaded top-level command, and at least one level below the lazy groups
    for name in SUBCOMMANDS:
        assert f"## affidavit {name} {{#affidavit-{name}}}" in cli_page
    assert "affidavit-verify-bundle" in sections
    assert "affidavit-adapter-pins-check" in sections
    assert len(commands) > 60


def test_cli_reference_lists_every_option_and_argument(cli_page: str) -> None:
    sections = _sections(cli_page)
    for path, info in _commands(_tree(), ("affidavit",)):
        section = sections[reference.anchor_for(path)]
        assert f"```text\n{' '.join(path)}" in section, f"{path}: no usage line"
        options = [
            p
            for p in info["params"]
            if p["param_type_name"] == "option"
            and not p.get("hidden")
            and not set(p["opts"]) <= {"-h", "--help"}
        ]
        arguments = [p for p in info["params"] if p["param_type_name"] == "argument"]
        option_rows = _table_rows(section, "Option")
        assert len(option_rows) == len(options), f"{path}: option rows"
        assert len(_table_rows(section, "Argument")) == len(arguments), f"{path}: argument rows"
        for param, row in zip(options, option_rows, strict=True):
            for opt in [*param["opts"], *param["secondary_opts"]]:
                assert re.search(rf"[`, ]{re.escape(opt)}[ `,]", row), f"{path}: {opt} not in {row}"
            if param["type"]["param_type"] == "Choice":
                for choice in param["type"]["choices"]:
                    assert f"`{choice}`" in row, f"{path}: choice {choice} not listed"
            if param["required"]:
                assert "Required." in row
        children = info.get("commands", {})
        for name, sub in children.items():
            if not sub.get("hidden"):
                link = f"](#{reference.anchor_for((*path, name))})"
                assert link in section, f"{path}: no link to {name}"


def test_cli_reference_shows_defaults_help_and_environment(cli_page: str) -> None:
    sections = _sections(cli_page)
    check = sections["affidavit-adapter-pins-check"]
    assert "`--file FILE` | Default: `pinned_adapters.json`." in check
    assert "- with --manifest, the signed entry matches" in check  # click's \b list, as a list
    serve = sections["affidavit-registry-serve"]
    assert (
        "`--access-log / --no-access-log` | JSON access log on stderr. Default: `--access-log`."
        in (serve)
    )
    assert "Environment: `STIGMEM_API_KEY`." in sections["affidavit-facts-pull"]
    assert "Range: `1<=x<=64`." in sections["affidavit-verify-bundle"]
    assert "Sentinel" not in cli_page  # click's internal "no default" never leaks


def test_a_command_that_does_not_import_fails_the_reference() -> None:
    broken = LazyGroup(name="affidavit", lazy={"ghost": ("affidavit.cli.no_such_module", "ghost")})
    with pytest.raises(ModuleNotFoundError, match="no_such_module"):
        reference.cli_reference_markdown(broken)


def test_a_listed_command_that_cannot_be_loaded_fails_the_reference() -> None:
    class Liar(click.Group):
        def list_commands(self, ctx: click.Context) -> list[str]:
            return ["missing"]

    with pytest.raises(LookupError, match="missing"):
        reference.cli_reference_markdown(Liar(name="affidavit"))


@pytest.mark.parametrize(
    "text",
    [
        "A *.json file, <b>bold</b> & [link](x) {#id} under_score | pipe",
        "- not a list: leading dash",
        "# not a heading",
        "keeps `code *spans* <x>` and ``rst literals`` as code",
        "1. not an ordered list",
    ],
)
def test_help_text_renders_as_the_same_text(text: str) -> None:
    """Markdown special characters in help text are shown, never interpreted."""
    markdown = pytest.importorskip("markdown", reason="the docs extra is not installed")
    rendered = markdown.markdown(
        reference._inline(text), extensions=["attr_list", "tables", "def_list"]
    )
    shown = re.sub(r"</?(p|code)>", "", rendered)
    shown = shown.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    assert shown == text.replace("`", "")


# -- the error page -------------------------------------------------------------------------------


def test_error_page_lists_every_code_with_its_exit_and_status() -> None:
    page = reference.error_reference_markdown()
    codes = json.loads((ROOT / "specs" / "error-codes.json").read_text())["codes"]
    assert codes
    for entry in codes:
        code = entry["code"]
        row = next((line for line in page.splitlines() if f'<a id="{code}"></a>' in line), None)
        assert row is not None, f"{code} is not on the error page"
        assert f"`{code}` | {entry['exit_code']} | {entry['http_status']} |" in row
    assert page.count('<a id="') == len(codes)
    for family in {entry["family"] for entry in codes}:
        assert f"`{family}`" in page


def test_error_page_exit_codes_match_the_code() -> None:
    page = reference.error_reference_markdown()
    documented = {code for code, _ in reference.EXIT_CODES}
    assert documented == {0, error_code.FAILED, error_code.INPUT, error_code.REFUSED}
    for code, meaning in reference.EXIT_CODES:
        assert f"| `{code}` | {meaning} |" in page
    architecture = (DOCS / "architecture.md").read_text()
    for code, meaning in reference.EXIT_CODES:
        assert f"| {code} | {meaning} |" in architecture, "keep the wording of architecture.md"


def test_error_page_refuses_an_undocumented_exit_code(tmp_path: Path) -> None:
    bad = tmp_path / "codes.json"
    bad.write_text(json.dumps({"codes": [{"code": "x.y", "family": "a.B", "exit_code": 7}]}))
    with pytest.raises(ValueError, match="exit code 7"):
        reference.error_reference_markdown(bad)


# -- the site -------------------------------------------------------------------------------------


def _nav_pages(nav: Any) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [page for item in nav for page in _nav_pages(item)]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in _nav_pages(value)]
    return []


def test_every_page_is_in_the_nav_and_every_nav_entry_exists() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    design = next(item["Design"] for item in config["nav"] if "Design" in item)
    assert {"Decisions": []} in design, "the hook fills the Decisions section (one entry)"
    top = [next(iter(item)) if isinstance(item, dict) else item for item in config["nav"]]
    assert top[:3] == ["Home", "Five-minute start", "Guides"], "the guides come first"
    decisions = reference.decision_pages()
    assert decisions[0] == "adr/0001-layout-and-canonical-json.md"
    assert decisions == sorted(decisions)
    nav = _nav_pages(config["nav"]) + decisions
    assert len(nav) == len(set(nav)), "a page is listed twice"
    on_disk = {path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md")}
    assert on_disk == set(nav) - GENERATED, "add new pages to mkdocs.yml's nav"
    assert set(nav) >= GENERATED
    assert not (on_disk & GENERATED), "the reference pages are generated; do not add them"
    assert config["hooks"] == ["tools/docs_hooks.py"]
    assert config["strict"] is True


def test_auditor_guide_covers_dsse_and_receipts_with_no_placeholder_left() -> None:
    """The two sections the lead completes exist, and no page still carries a lead placeholder."""
    auditor = (DOCS / "guides" / "auditor.md").read_text()
    for heading, command in (
        ("## DSSE envelopes and in-toto Statements", "affidavit verify dsse"),
        ("## Transformation receipts", "affidavit verify receipt"),
    ):
        assert heading in auditor
        section = auditor.split(heading, 1)[1].split("\n## ", 1)[0]
        assert command in section, f"{heading}: no worked example"
    for page in DOCS.rglob("*.md"):
        assert "<!-- lead:" not in page.read_text(), f"{page}: placeholder left"


def test_mkdocs_build_is_strict_and_clean(tmp_path: Path) -> None:
    if not MKDOCS.exists():
        pytest.skip(f"mkdocs is not installed ({MKDOCS}): pip install -e '.[docs]'")
    site = tmp_path / "site"
    # Material 9.8 prints an end-of-life banner on every run (not a build warning); silence it
    # with the switch it names, so that "WARNING" below can only be a build warning.
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [str(MKDOCS), "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "WARNING" not in output, output
    cli_html = (site / "reference" / "cli.html").read_text()
    assert 'id="affidavit-verify-bundle"' in cli_html
    errors_html = (site / "reference" / "errors.html").read_text()
    assert 'id="bundle.hash_mismatch"' in errors_html
    assert (site / "search" / "search_index.json").exists()
    for page in site.rglob("*.html"):
        assert "fonts.googleapis.com" not in page.read_text(), f"{page} fetches web fonts"


def test_the_python_api_page_lists_each_rooms_all_and_nothing_else() -> None:
    """reference/api.md is made from ``__all__`` (docs/adr/0019): one section per room, whose
    table is exactly that room's ``__all__``, in order; no private module has a section."""
    page = reference.api_reference_markdown()
    tables: dict[str, list[str]] = {}
    current = ""
    for line in page.splitlines():
        heading = re.match(r"^## `([\w.]+)`$", line)
        if heading:
            current = heading.group(1)
            tables[current] = []
        elif current and (row := re.match(r"^\| `(\w+)` \|", line)):
            tables[current].append(row.group(1))
    rooms = reference.public_rooms()
    assert list(tables) == [room.__name__ for room in rooms]
    for room in rooms:
        assert tables[room.__name__] == list(room.__all__), room.__name__
    assert {"affidavit.verify", "affidavit.verify.errors", "affidavit.registry.clients"} <= set(
        tables
    )
    assert not [name for name in tables if "._" in name]
