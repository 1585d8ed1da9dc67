"""MkDocs hook (``hooks:`` in mkdocs.yml): the generated reference pages, made at build time.

The CLI reference (``reference/cli.md``) comes from the click command tree, the error page
(``reference/errors.md``) from ``specs/error-codes.json`` and the Python API
(``reference/api.md``) from each package's ``__all__``, all through ``tools/docs_reference.py``,
so none can go stale. They exist only in the build, never under ``docs/``: a file of the same
name there is an error. The nav's Decisions section is filled with every ``docs/adr/NNNN-*.md``.
Any failure (a command module that does not import, a malformed code list) stops the build with
its reason.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from docs_reference import (
    api_reference_markdown,
    cli_reference_markdown,
    decision_pages,
    error_reference_markdown,
)
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

# The generated pages: their path in the site's docs tree, and what writes them.
GENERATED: dict[str, Callable[[], str]] = {
    "reference/cli.md": cli_reference_markdown,
    "reference/errors.md": error_reference_markdown,
    "reference/api.md": api_reference_markdown,
}

# The nav section that lists every decision record (mkdocs.yml: ``- Decisions: []``).
DECISIONS = "Decisions"


def _decisions_section(nav: Any) -> dict[str, Any] | None:
    """The nav item ``{Decisions: [...]}``, at any depth (it sits in a section, collapsed)."""
    items = nav if isinstance(nav, list) else []
    for item in items:
        if isinstance(item, dict):
            if DECISIONS in item:
                return item
            for value in item.values():
                found = _decisions_section(value)
                if found is not None:
                    return found
    return None


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Fill the nav's Decisions section with ``docs/adr/NNNN-*.md``, in number order."""
    section = _decisions_section(config.nav)
    if section is None:
        raise PluginError(f"mkdocs.yml: the nav has no {DECISIONS!r} section to fill")
    section[DECISIONS] = decision_pages(Path(config.docs_dir))
    return config


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


# Inline code (never a code block: those sit in <pre>) and the longest word kept unbroken.
_PRE = re.compile(r"(<pre\b.*?</pre>)", re.DOTALL)
_INLINE_CODE = re.compile(r"<code>([^<]*)</code>")
NOBR_MAX = 48


def _nobr(match: re.Match[str]) -> str:
    words = match.group(1).split(" ")
    kept = [
        f'<span class="nobr">{word}</span>' if 0 < len(html.unescape(word)) <= NOBR_MAX else word
        for word in words
    ]
    return f"<code>{' '.join(kept)}</code>"


def keep_words_whole(page: str) -> str:
    """Each word of every inline code span in a ``nobr`` span: an error code or an option name
    never breaks inside (docs/stylesheets/extra.css); code blocks are left as they are."""
    parts = _PRE.split(page)
    return "".join(
        part if index % 2 else _INLINE_CODE.sub(_nobr, part) for index, part in enumerate(parts)
    )


def on_page_content(html: str, **_: Any) -> str:
    """Every page's HTML, before the theme wraps it: inline code keeps its words whole."""
    return keep_words_whole(html)
