"""The contracts room: AdapterContracts (docs/formats.md §2, §3; seed 003).

:mod:`.contract` hashes and lints a contract against :mod:`.schema`; :mod:`.validators` type an
adapter's output; :mod:`.policy` is the acceptance policy and its replay; :mod:`.lifecycle`,
:mod:`.manifest` and :mod:`.freshness` are publishing; :mod:`.pins` (pinning, and the pin check
behind the CI gate) and :mod:`.pin_file`.

This room is internal (docs/adr/0003-cold-start.md, "Amendment (issue 32)"): callers import a
name from the module that defines it; the library's public names are :mod:`affidavit.verify`'s.
"""

__all__: list[str] = []
