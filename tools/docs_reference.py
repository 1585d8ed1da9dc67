"""Generate the reference pages of the documentation site from the code itself.

``cli_reference_markdown()`` walks the click command tree of ``affidavit`` (every lazily loaded
subcommand is imported: an import error propagates, so a broken command fails the docs build
instead of vanishing from it) and writes one section per command: its usage line, its help text,
its arguments and its options with their help, defaults, choices, ranges and environment variables.
``error_reference_markdown()`` renders ``specs/error-codes.json`` and the exit-code table;
``api_reference_markdown()`` lists every package's public names, its ``__all__`` and nothing
else (docs/adr/0019-public-surface.md); ``decision_pages()`` lists the decision records for the nav.

The MkDocs hook ``tools/docs_hooks.py`` calls both at build time, so the pages cannot go stale;
``tests/test_docs_site.py`` calls them too. Run this file to print a page:
``python tools/docs_reference.py cli|errors|api``.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import click

__all__ = [
    "DOCS",
    "ERROR_CODES",
    "EXIT_CODES",
    "CommandDoc",
    "anchor_for",
    "cli_reference_markdown",
    "decision_pages",
    "error_reference_markdown",
    "iter_commands",
    "load_error_codes",
]

ROOT = Path(__file__).resolve().parent.parent
ERROR_CODES = ROOT / "specs" / "error-codes.json"
DOCS = ROOT / "docs"

# The exit codes every command uses (verify/codes.py; docs/architecture.md, "Exit codes").
EXIT_CODES: tuple[tuple[int, str], ...] = (
    (0, "verified, or the command did what was asked"),
    (1, "the input was read and does not verify (or an audit found something)"),
    (2, "the input could not be read as what it claims to be, or the command was used wrongly"),
    (3, "refused by policy (pinning a revoked contract, a revoked pin at the gate)"),
)

# Where each error family lives, in layer order (root of trust first).
_LAYERS = ("affidavit.verify.", "affidavit.attest.", "affidavit.registry.")

_CODE_SPAN = re.compile(r"(``[^`\n]+``|`[^`\n]+`)")  # Markdown, or reST's double backticks
_ESCAPED = re.compile(r"([\\*_\[\]{}|`])")
_BLOCK_START = re.compile(r"^(#|[-+*] |=|>)")  # would start a heading, a list, a quote
_ORDERED_START = re.compile(r"^(\d+)([.)]) ")  # would start an ordered list


# -- the command tree -----------------------------------------------------------------------------


@dataclass(frozen=True)
class CommandDoc:
    """One command of the tree: its words (``("affidavit", "verify", "bundle")``) and context."""

    path: tuple[str, ...]
    command: click.Command
    context: click.Context

    @property
    def name(self) -> str:
        """The full command line that runs it, e.g. ``affidavit verify bundle``."""
        return " ".join(self.path)

    @property
    def anchor(self) -> str:
        """The section's id on the CLI page."""
        return anchor_for(self.path)

    @property
    def depth(self) -> int:
        """0 for ``affidavit`` itself, 1 for its subcommands, and so on."""
        return len(self.path) - 1


def anchor_for(path: Sequence[str]) -> str:
    """The id of a command's section: its words joined by dashes (``affidavit-verify-bundle``)."""
    return "-".join(path)


def _root_command() -> click.Command:
    from affidavit.cli._group import affidavit  # noqa: PLC0415 - imported when asked for

    return affidavit


def iter_commands(root: click.Command | None = None) -> list[CommandDoc]:
    """Every command of the tree, depth first, each group's subcommands in name order.

    Lazy subcommands are imported here; an import error or a name the group lists but cannot load
    propagates (a command must never drop out of the reference silently). Hidden commands are
    skipped, as ``--help`` skips them.
    """
    top = _root_command() if root is None else root
    name = top.name or "affidavit"
    context = click.Context(top, info_name=name, **top.context_settings)
    found: list[CommandDoc] = []
    _walk(top, (name,), context, found)
    return found


def _walk(
    command: click.Command, path: tuple[str, ...], context: click.Context, out: list[CommandDoc]
) -> None:
    out.append(CommandDoc(path, command, context))
    if not isinstance(command, click.Group):
        return
    for sub_name in command.list_commands(context):
        sub = command.get_command(context, sub_name)
        if sub is None:
            raise LookupError(f"{context.command_path} lists {sub_name!r} but cannot load it")
        if sub.hidden:
            continue
        sub_context = click.Context(sub, parent=context, info_name=sub_name, **sub.context_settings)
        _walk(sub, (*path, sub_name), sub_context, out)


# -- markdown helpers -----------------------------------------------------------------------------


def _escape_text(text: str) -> str:
    """Escape the characters Markdown would read as markup (outside code spans)."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _ESCAPED.sub(r"\\\1", text)


def _inline(text: str) -> str:
    """One line of Markdown from plain help text: code spans kept, everything else escaped."""
    words = " ".join(text.split())
    parts = _CODE_SPAN.split(words)
    rendered = "".join(
        part if index % 2 else _escape_text(part) for index, part in enumerate(parts)
    )
    if _BLOCK_START.match(rendered):  # a paragraph must not turn into a heading or a list
        rendered = "\\" + rendered
    return _ORDERED_START.sub(r"\1\\\2 ", rendered)


def _code(text: str) -> str:
    """A code span that survives any backticks inside it."""
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _help_markdown(help_text: str) -> list[str]:
    """Click help text as Markdown paragraphs.

    Click joins the lines of a paragraph; a paragraph that starts with ``\\b`` keeps its lines
    (click's "no rewrap" marker), so it becomes a preformatted block here too. Everything after
    ``\\f`` is for the code, not for users (click's rule).
    """
    text = help_text.partition("\f")[0].strip("\n")
    lines: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        if not paragraph.strip():
            continue
        if paragraph.lstrip(" ").startswith("\b"):
            lines += _kept_lines(paragraph.lstrip(" ").removeprefix("\b").strip("\n"))
        else:
            lines += [_inline(paragraph), ""]
    return lines


def _kept_lines(body: str) -> list[str]:
    """A paragraph click keeps as written: a "- " list becomes a Markdown list, else a block."""
    intro: list[str] = []
    items: list[str] = []
    for line in body.splitlines():
        if line.startswith("- "):
            items.append(line[2:])
        elif items and line.startswith("  "):
            items[-1] += " " + line.strip()
        elif not items:
            intro.append(line)
        else:  # a shape we do not know: show it exactly as --help does
            return ["```text", *body.splitlines(), "```", ""]
    lines = [_inline(" ".join(intro)), ""] if intro else []
    if items:
        lines += [*(f"- {_inline(item)}" for item in items), ""]
    return lines


def _cell(text: str) -> str:
    """Text for one table cell (a pipe outside a code span would end the cell)."""
    return text.replace("\n", " ")


# -- the CLI page ---------------------------------------------------------------------------------


def _usage(doc: CommandDoc) -> str:
    pieces = doc.command.collect_usage_pieces(doc.context)
    return " ".join([doc.context.command_path, *pieces])


def _default_text(param: click.Parameter, context: click.Context) -> str | None:
    """The default a user gets, as ``--help`` would word it; None when there is nothing to say."""
    del context  # the tree has no default_map: a parameter's own default is the default
    value: Any = param.to_info_dict()["default"]  # click's public view: "no default" is None
    if isinstance(param, click.Option) and param.is_flag and param.is_bool_flag:
        if param.secondary_opts:
            return (param.opts if value else param.secondary_opts)[0]
        return "on" if value else None
    if value is None or (isinstance(value, (list, tuple)) and not value):
        return None
    if callable(value):
        return "(computed when the command runs)"
    if isinstance(value, (list, tuple)):
        return ", ".join(str(item) for item in value)
    if value == "":
        return '""'
    return str(value)


def _type_notes(param: click.Parameter, context: click.Context) -> list[str]:
    notes: list[str] = []
    if isinstance(param.type, click.Choice):
        choices = ", ".join(_code(str(choice)) for choice in param.type.choices)
        notes.append(f"One of {choices}.")
    if isinstance(param, click.Option):
        extra = param.get_help_extra(context)
        if "range" in extra:
            notes.append(f"Range: {_code(extra['range'])}.")
    return notes


def _option_rows(doc: CommandDoc) -> list[str]:
    rows: list[str] = []
    for param in doc.command.get_params(doc.context):
        if not isinstance(param, click.Option) or param.hidden:
            continue
        if set(param.opts) <= set(doc.context.help_option_names):
            continue  # every command has -h/--help; the page says so once
        names = ", ".join(param.opts)
        if param.secondary_opts:
            names += " / " + ", ".join(param.secondary_opts)
        if not param.is_flag and not param.count:
            names += " " + param.make_metavar(doc.context)
        notes = [_inline(param.help)] if param.help else []
        notes += _type_notes(param, doc.context)
        default = _default_text(param, doc.context)
        if default is not None:
            notes.append(f"Default: {_code(default)}.")
        if param.required:
            notes.append("Required.")
        if param.multiple and "repeatable" not in (param.help or "").lower():
            notes.append("Repeatable.")
        envvars = [param.envvar] if isinstance(param.envvar, str) else list(param.envvar or ())
        if envvars:
            notes.append("Environment: " + ", ".join(_code(v) for v in envvars) + ".")
        rows.append(f"| {_code(names)} | {_cell(' '.join(notes))} |")
    return rows


def _argument_rows(doc: CommandDoc) -> list[str]:
    rows: list[str] = []
    for param in doc.command.get_params(doc.context):
        if not isinstance(param, click.Argument):
            continue
        metavar = param.make_metavar(doc.context)
        if param.nargs == -1:
            count = "one or more" if param.required else "any number"
        elif param.nargs > 1:
            count = f"exactly {param.nargs}"
        else:
            count = "required" if param.required else "optional"
        notes = [f"{count[0].upper()}{count[1:]}."]
        notes += _type_notes(param, doc.context)
        default = _default_text(param, doc.context)
        if default is not None:
            notes.append(f"Default: {_code(default)}.")
        help_text = getattr(param, "help", None)
        if isinstance(help_text, str) and help_text:
            notes.insert(0, _inline(help_text))
        rows.append(f"| {_code(metavar)} | {_cell(' '.join(notes))} |")
    return rows


def _subcommand_rows(children: Iterable[CommandDoc]) -> list[str]:
    rows: list[str] = []
    for child in children:
        summary = _inline(child.command.get_short_help_str(limit=200))
        rows.append(f"| [{_code(child.path[-1])}](#{child.anchor}) | {_cell(summary)} |")
    return rows


def _command_section(doc: CommandDoc, children: Sequence[CommandDoc]) -> list[str]:
    level = "#" * min(doc.depth + 1, 4) if doc.depth else "##"
    lines = [f"{level} {doc.name} {{#{doc.anchor}}}", ""]
    if doc.command.deprecated:
        lines += ["**Deprecated.**", ""]
    lines += ["```text", _usage(doc), "```", ""]
    lines += _help_markdown(doc.command.help or doc.command.short_help or "")
    arguments = _argument_rows(doc)
    if arguments:
        lines += ["| Argument | Description |", "|---|---|", *arguments, ""]
    options = _option_rows(doc)
    if options:
        lines += ["| Option | Description |", "|---|---|", *options, ""]
    if children:
        lines += [
            "| Subcommand | What it does |",
            "|---|---|",
            *_subcommand_rows(children),
            "",
        ]
    return lines


def cli_reference_markdown(root: click.Command | None = None) -> str:
    """The CLI reference page: one section per command, generated from the click tree."""
    docs = iter_commands(root)
    children: dict[tuple[str, ...], list[CommandDoc]] = {}
    for doc in docs[1:]:
        children.setdefault(doc.path[:-1], []).append(doc)
    lines = [
        "# CLI reference",
        "",
        "<!-- Generated at build time by tools/docs_reference.py from the click commands; "
        "do not edit. -->",
        "",
        "Every command below is generated from the `affidavit` command itself when the site is "
        "built, so this page lists exactly what the installed version accepts. Every command "
        "takes `-h`/`--help`; almost every one takes `--json` (one JSON document on stdout). "
        "Exit codes and error codes: [Exit and error codes](errors.md).",
        "",
    ]
    for doc in docs:
        lines += _command_section(doc, children.get(doc.path, []))
    return "\n".join(lines).rstrip("\n") + "\n"


# -- the error page -------------------------------------------------------------------------------


def load_error_codes(path: Path = ERROR_CODES) -> list[dict[str, Any]]:
    """The entries of ``specs/error-codes.json`` (code, family, exit_code, http_status, ...)."""
    document = json.loads(path.read_text(encoding="utf-8"))
    codes = document["codes"]
    if not isinstance(codes, list):
        raise TypeError(f"{path}: 'codes' is not a list")
    return codes


def _family_key(family: str) -> tuple[int, str]:
    layer = next((i for i, prefix in enumerate(_LAYERS) if family.startswith(prefix)), len(_LAYERS))
    return layer, family.rsplit(".", 1)[-1]


def _family_anchor(family: str) -> str:
    return "family-" + family.rsplit(".", 1)[-1].lower()


def _prefixes(entries: Iterable[dict[str, Any]]) -> str:
    prefixes = sorted({str(e["code"]).split(".")[0] + ".*" for e in entries if "." in e["code"]})
    bare = sorted(str(e["code"]) for e in entries if "." not in e["code"])
    return ", ".join(_code(p) for p in [*prefixes, *bare])


def error_reference_markdown(path: Path = ERROR_CODES) -> str:
    """The exit-code table and every error code of ``specs/error-codes.json``, by family."""
    codes = load_error_codes(path)
    known_exits = {code for code, _ in EXIT_CODES}
    for entry in codes:
        if entry["exit_code"] not in known_exits:
            raise ValueError(f"{entry['code']}: exit code {entry['exit_code']} is not documented")
    by_family: dict[str, list[dict[str, Any]]] = {}
    for entry in codes:
        by_family.setdefault(str(entry["family"]), []).append(entry)
    families = sorted(by_family, key=_family_key)

    lines = [
        "# Exit and error codes",
        "",
        "<!-- Generated at build time by tools/docs_reference.py from specs/error-codes.json; "
        "do not edit. -->",
        "",
        "## Exit codes {#exit-codes}",
        "",
        "Every command exits with one of these; every error code maps to exactly one of them "
        "(`verify/codes.py`).",
        "",
        "| Exit | Meaning |",
        "|---|---|",
        *(f"| `{code}` | {meaning} |" for code, meaning in EXIT_CODES),
        "",
        "A failure prints one line on stderr, `error: <code>: <message>`, never a traceback. "
        "The registry answers the same codes as `{code, message, details}` with the HTTP status "
        "listed below: by code first, else 400 for exit 2, 422 for exit 1, 403 for exit 3; an "
        "unexpected exception is `http.internal` (500) with no details.",
        "",
        "## Error codes {#error-codes}",
        "",
        f"{len(codes)} codes, generated from the error families of every layer "
        "(`specs/error-codes.json`, written by `tools/gen_error_codes.py`). Codes are stable: "
        "never renamed, safe to match in scripts. A family says *where* something went wrong; "
        "the code says *what*.",
        "",
        "| Family | Codes | Count |",
        "|---|---|---|",
    ]
    for family in families:
        short = family.rsplit(".", 1)[-1]
        entries = by_family[family]
        lines.append(
            f"| [{short}](#{_family_anchor(family)}) | {_prefixes(entries)} | {len(entries)} |"
        )
    lines.append("")
    for family in families:
        short = family.rsplit(".", 1)[-1]
        lines += [
            f"### {short} {{#{_family_anchor(family)}}}",
            "",
            f"`{family}`",
            "",
            "| Code | Exit | HTTP | Description |",
            "|---|---|---|---|",
        ]
        for entry in sorted(by_family[family], key=lambda e: str(e["code"])):
            code = str(entry["code"])
            lines.append(
                f'| <a id="{code}"></a>{_code(code)} | {entry["exit_code"]} | '
                f"{entry['http_status']} | {_cell(_inline(str(entry['description'])))} |"
            )
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


# -- the Python API -------------------------------------------------------------------------------

# The distribution's top-level packages, in the one direction of imports (docs/architecture.md).
API_PACKAGES = (
    "affidavit.verify",
    "affidavit.attest",
    "affidavit.registry",
    "affidavit.witness",
    "affidavit.cli",
)


def public_rooms(tops: Sequence[str] = API_PACKAGES) -> list[ModuleType]:
    """Every room below ``tops``, parents first: each package, and each module directly in a top
    package (``affidavit.verify.errors``, ``affidavit.registry.auth``), which is a room of its
    own (docs/adr/0019). The command line's modules are reached through its commands, so only its
    packages are listed. An import error propagates."""
    found: list[ModuleType] = []
    for top in tops:
        package = importlib.import_module(top)
        found.append(package)
        found.extend(
            importlib.import_module(info.name)
            for info in pkgutil.iter_modules(package.__path__, f"{top}.")
            if not info.ispkg and top != "affidavit.cli" and not _private(info.name)
        )
        found.extend(
            importlib.import_module(info.name)
            for info in pkgutil.walk_packages(package.__path__, f"{top}.")
            if info.ispkg and not _private(info.name)
        )
    return found


def _private(name: str) -> bool:
    return name.rsplit(".", 1)[1].startswith("_")


_ROLE = re.compile(r":[a-z]+:`~?\.?([^`]+)`")  # reST's :func:`name`, as a Markdown code span


def _first_paragraph(doc: str) -> str:
    """A docstring's first paragraph on one line, reST roles and double backticks as code spans."""
    text = doc.split("\n\n", 1)[0].replace("\n", " ").strip()
    return _ROLE.sub(r"`\1`", text).replace("``", "`")


def _summary(value: object) -> str:
    """The first paragraph of a public name's docstring (a constant: its type)."""
    if isinstance(value, (type, ModuleType)) or callable(value):
        return _first_paragraph(inspect.getdoc(value) or "")
    return f"a constant ({type(value).__name__})"


def _kind(value: object) -> str:
    if isinstance(value, ModuleType):
        return "module"
    if isinstance(value, type):
        return "exception" if issubclass(value, BaseException) else "class"
    return "function" if callable(value) else "constant"


def api_reference_markdown(tops: Sequence[str] = API_PACKAGES) -> str:
    """The API reference: for each package, its docstring's first paragraph and its ``__all__``.

    A name is public exactly when its package's ``__all__`` lists it (docs/adr/0019): the page
    is made from those lists, so it shows nothing else and cannot go stale. A package without
    ``__all__`` or a listed name that does not resolve is an error.
    """
    lines = [
        "# Python API",
        "",
        "Generated from each package's `__all__` when the site is built: a name is public when",
        "its package lists it, and only then (`docs/adr/0019-public-surface.md`). Modules not",
        "named here are the implementation: importable and typed, free to change between",
        "releases. `affidavit.verify` is the library most users want: verify, walk, hash.",
        "",
    ]
    for package in public_rooms(tops):
        names = getattr(package, "__all__", None)
        if names is None:
            raise ValueError(f"{package.__name__} has no __all__")
        doc = _first_paragraph(inspect.getdoc(package) or "")
        lines += [f"## `{package.__name__}`", "", doc, ""]
        if not names:
            lines += ["No public names: its commands or modules are the interface.", ""]
            continue
        lines += ["| name | kind | summary |", "|---|---|---|"]
        for name in names:
            value = getattr(package, name)  # a name that does not resolve stops the build
            lines.append(f"| `{name}` | {_kind(value)} | {_cell(_summary(value))} |")
        lines.append("")
    return "\n".join(lines)


# -- the decisions --------------------------------------------------------------------------------


def decision_pages(docs_dir: Path = DOCS) -> list[str]:
    """The decision records ``adr/NNNN-*.md`` under ``docs_dir``, in number order (nav paths)."""
    found = (docs_dir / "adr").glob("[0-9][0-9][0-9][0-9]-*.md")
    return sorted(path.relative_to(docs_dir).as_posix() for path in found)


if __name__ == "__main__":
    if sys.argv[1:] == ["cli"]:
        sys.stdout.write(cli_reference_markdown())
    elif sys.argv[1:] == ["errors"]:
        sys.stdout.write(error_reference_markdown())
    elif sys.argv[1:] == ["api"]:
        sys.stdout.write(api_reference_markdown())
    else:
        sys.exit("usage: python tools/docs_reference.py cli|errors|api")
