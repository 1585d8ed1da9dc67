"""MkDocs hook (``hooks:`` in mkdocs.yml): the generated reference pages, made at build time.

The CLI reference (``reference/cli.md``) comes from the click command tree and the error page
(``reference/errors.md``) from ``specs/error-codes.json``, both through ``tools/docs_reference.py``,
so neither can go stale. They exist only in the build, never under ``docs/``: a file of the same
name there is an error. The nav's Decisions section is filled with every ``docs/adr/NNNN-*.md``.
Any failure (a command module that does not import, a malformed code list) stops the build with
its reason.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from docs_reference import cli_reference_markdown, decision_pages, error_reference_markdown
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

# The generated pages: their path in the site's docs tree, and what writes them.
GENERATED: dict[str, Callable[[], str]] = {
    "reference/cli.md": cli_reference_markdown,
    "reference/errors.md": error_reference_markdown,
}

# The nav section that lists every decision record (mkdocs.yml: ``- Decisions: []``).
DECISIONS = "Decisions"


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Fill the nav's Decisions section with ``docs/adr/NNNN-*.md``, in number order."""
    for item in config.nav or []:
        if isinstance(item, dict) and DECISIONS in item:
            item[DECISIONS] = decision_pages(Path(config.docs_dir))
            return config
    raise PluginError(f"mkdocs.yml: the nav has no {DECISIONS!r} section to fill")


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the generated pages to the build (MkDocs calls this once the docs folder is read)."""
    for uri, render in GENERATED.items():
        if files.get_file_from_path(uri) is not None:
            raise PluginError(f"docs/{uri} must not exist: it is generated at build time")
        try:
            content = render()
        except Exception as e:  # a broken command or code list must stop the build, loudly
            raise PluginError(f"cannot generate {uri}: {type(e).__name__}: {e}") from e
        files.append(File.generated(config, uri, content=content))
    return files
