"""C2SP tlog-policy: the logs and witnesses a verifier trusts, and the witness quorum.

>>> policy = parse_policy(b"# no witnesses needed\\nquorum none\\n")
>>> policy.quorum, policy.quorum_met([]), policy.describe()
('none', True, 'none (no cosignature needed)')

A policy file (https://c2sp.org/tlog-policy) is read strictly, line by line, with the rules and
limits docs/transparency.md "Policy files" lists: ``log``, ``witness`` and ``group`` lines, then
exactly one ``quorum``; anything else is ``tlog.policy_malformed`` with the line number. Names are
opaque octets (decoded with ``surrogateescape``; :func:`display_name` shows one); a vkey must be
UTF-8. :func:`verify_checkpoint_under_policy` applies a policy to a checkpoint note (tlog-proof
verification steps 2 and 3). Not on the ``verify bundle`` path (docs/adr/0003-cold-start.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final, TypeVar

from affidavit.verify import errors
from affidavit.verify.crypto.checkpoint import (
    Checkpoint,
    NoteVerifier,
    parse_checkpoint_body,
    parse_note,
    parse_verifier_key,
    verify_checkpoint,
)
from affidavit.verify.tlog.cosignature import Cosigner, parse_cosigner_vkey, verify_cosignatures

__all__ = [
    "MAX_GROUPS",
    "MAX_LOGS",
    "MAX_POLICY_BYTES",
    "MAX_WITNESSES",
    "NONE",
    "Policy",
    "PolicyCheckpoint",
    "PolicyGroup",
    "PolicyLog",
    "PolicyWitness",
    "WitnessCosignature",
    "display_name",
    "parse_policy",
    "require_quorum",
    "verify_checkpoint_under_policy",
    "verify_log_signature",
    "verify_witnesses",
]

NONE: Final = "none"  # "The special name `none` is predefined"
MAX_POLICY_BYTES: Final = 256 * 1024
MAX_LOGS: Final = 128
MAX_WITNESSES: Final = 128
MAX_GROUPS: Final = 128

_SEPARATOR: Final = re.compile(r"[ \t]+")  # "sequences of ASCII space and tab characters *only*"
_FORBIDDEN: Final = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]")  # all but 0x09, 0x0A, 0x20-0x7E, 0x80+
_DIGITS: Final = re.compile(r"[0-9]{1,9}")
_T = TypeVar("_T")


def display_name(name: str) -> str:
    """A policy name (or URL) for messages: its octets as UTF-8, others as ``\\xNN`` escapes."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


@dataclass(frozen=True, slots=True)
class PolicyLog:
    """A ``log`` line: the log's note verifier (its key name is the log's origin) and its URL."""

    verifier: NoteVerifier
    vkey: str
    url: str | None = None
    line: int = 0

    @property
    def origin(self) -> str:
        """The origin line the log signs checkpoints as (the vkey's key name)."""
        return self.verifier.name

    @property
    def label(self) -> str:
        """``name+hexkeyid``, how reports name this log key."""
        return f"{self.verifier.name}+{self.verifier.key_id.hex()}"


@dataclass(frozen=True, slots=True)
class PolicyWitness:
    """A ``witness`` line: the policy-local name, the cosigner key and its URL."""

    name: str
    cosigner: Cosigner
    vkey: str
    url: str | None = None
    line: int = 0


@dataclass(frozen=True, slots=True)
class PolicyGroup:
    """A ``group`` line: witnessed when at least ``threshold`` of ``members`` are."""

    name: str
    threshold: int
    members: tuple[str, ...]
    spelled: str  # "all", "any" or k as written
    line: int = 0


@dataclass(frozen=True, slots=True)
class WitnessCosignature:
    """A cosignature that verified, from a policy witness, and the time it states."""

    witness: PolicyWitness
    timestamp: int


@dataclass(frozen=True, slots=True)
class Policy:
    """A parsed tlog-policy (build it with :func:`parse_policy`)."""

    logs: tuple[PolicyLog, ...]
    witnesses: tuple[PolicyWitness, ...]
    groups: tuple[PolicyGroup, ...]
    quorum: str  # a witness or group name, or NONE

    def logs_for(self, origin: str) -> tuple[PolicyLog, ...]:
        """The policy logs whose key name is ``origin`` (several during a key rotation)."""
        return tuple(log for log in self.logs if log.origin == origin)

    @property
    def cosigners(self) -> tuple[Cosigner, ...]:
        return tuple(w.cosigner for w in self.witnesses)

    def satisfied(self, witnesses: Iterable[str]) -> frozenset[str]:
        """Every witness and group name witnessed, given the witness names that cosigned (others
        ignored); groups in definition order, since members are defined earlier."""
        known = {w.name for w in self.witnesses}
        done = {name for name in witnesses if name in known}
        for group in self.groups:
            if sum(member in done for member in group.members) >= group.threshold:
                done.add(group.name)
        return frozenset(done)

    def quorum_met(self, witnesses: Iterable[str]) -> bool:
        """Whether the quorum holds when exactly ``witnesses`` (names) cosigned."""
        return self.quorum == NONE or self.quorum in self.satisfied(witnesses)

    def describe(self, name: str | None = None) -> str:
        """What ``name`` (default: the quorum) needs, spelled out, e.g.
        ``X-and-Y = all of [X = 2 of [X1, X2, X3], Y = any of [Y1, Y2]]``."""
        target = self.quorum if name is None else name
        if target == NONE:
            return "none (no cosignature needed)"
        group = next((g for g in self.groups if g.name == target), None)
        if group is None:
            return display_name(target)
        members = ", ".join(self.describe(member) for member in group.members)
        return f"{display_name(group.name)} = {group.spelled} of [{members}]"


@dataclass(frozen=True, slots=True)
class PolicyCheckpoint:
    """A checkpoint that verified under a policy: the log key(s) that signed it, the witnesses
    whose cosignatures verified, and the quorum they meet."""

    checkpoint: Checkpoint
    logs: tuple[PolicyLog, ...]  # the policy log keys whose signature verified
    cosignatures: tuple[WitnessCosignature, ...]
    quorum: str
    ignored_signatures: int  # lines from keys that are neither a policy log nor a witness

    @property
    def witnesses(self) -> tuple[str, ...]:
        """The policy names of the witnesses whose cosignatures verified, in note order."""
        return tuple(c.witness.name for c in self.cosignatures)

    @classmethod
    def assemble(
        cls,
        note: str | bytes,
        policy: Policy,
        checkpoint: Checkpoint,
        labels: tuple[str, ...],
        cosignatures: tuple[WitnessCosignature, ...],
    ) -> PolicyCheckpoint:
        """From :func:`verify_log_signature` and :func:`verify_witnesses`, once
        :func:`require_quorum` passed."""
        logs = tuple(log for log in policy.logs if log.label in labels)
        ignored = len(parse_note(note).signatures) - len(labels) - len(cosignatures)
        return cls(checkpoint, logs, cosignatures, policy.quorum, ignored)


class _Builder:
    """The state of one parse: what earlier lines defined (tlog-policy "Structure")."""

    def __init__(self) -> None:
        self.logs: list[PolicyLog] = []
        self.witnesses: list[PolicyWitness] = []
        self.groups: list[PolicyGroup] = []
        self.quorum: str | None = None
        self.defined: dict[str, int] = {}  # name -> line
        self.members: dict[str, str] = {}  # name listed as a member -> its group
        self.line = 0

    def fail(self, message: str, **details: object) -> errors.ProofError:
        return errors.ProofError(
            "tlog.policy_malformed",
            f"policy line {self.line}: {message}",
            details={"line": self.line, **details},
        )

    def define(self, name: str) -> None:
        if name == NONE:
            raise self.fail("the name 'none' is reserved")
        if name in self.defined:
            raise self.fail(
                f"{display_name(name)!r} is already defined on line {self.defined[name]}"
                " (witnesses and groups share one namespace)"
            )
        self.defined[name] = self.line

    def log(self, items: list[str]) -> None:
        if len(items) not in (2, 3):
            raise self.fail("a log line is 'log <vkey> [<url>]'")
        if len(self.logs) == MAX_LOGS:
            raise self.fail(f"more than {MAX_LOGS} logs")
        verifier = self._key(items[1], parse_verifier_key)
        for other in self.logs:
            if other.verifier.key.raw == verifier.key.raw:
                raise self.fail(f"duplicate log: the public key of the log on line {other.line}")
        self.logs.append(PolicyLog(verifier, items[1], _url(items, 2), self.line))

    def witness(self, items: list[str]) -> None:
        if len(items) not in (3, 4):
            raise self.fail("a witness line is 'witness <name> <vkey> [<url>]'")
        if len(self.witnesses) == MAX_WITNESSES:
            raise self.fail(f"more than {MAX_WITNESSES} witnesses")
        name = items[1]
        self.define(name)
        cosigner = self._key(items[2], parse_cosigner_vkey)
        for other in self.witnesses:
            if other.cosigner.public_key == cosigner.public_key:
                raise self.fail(
                    f"duplicate witness: the public key of witness {display_name(other.name)!r}"
                    f" (line {other.line})"
                )
            if (other.cosigner.name, other.cosigner.key_id) == (cosigner.name, cosigner.key_id):
                raise self.fail(
                    f"witness {display_name(other.name)!r} (line {other.line}) has the same key"
                    " name and key ID: their cosignatures could not be told apart"
                )
        self.witnesses.append(PolicyWitness(name, cosigner, items[2], _url(items, 3), self.line))

    def group(self, items: list[str]) -> None:
        if len(items) < 4:
            raise self.fail("a group line is 'group <name> all|any|<k> <name>...'")
        if len(self.groups) == MAX_GROUPS:
            raise self.fail(f"more than {MAX_GROUPS} groups")
        name, spelled, members = items[1], items[2], tuple(items[3:])
        self.define(name)
        for member in members:
            self._member(name, member)
        threshold = self._threshold(spelled, len(members))
        self.groups.append(PolicyGroup(name, threshold, members, spelled, self.line))

    def _member(self, group: str, member: str) -> None:
        shown = display_name(member)
        if member == NONE:
            raise self.fail("'none' cannot be a group member")
        if member not in self.defined or member == group:
            raise self.fail(f"member {shown!r} is not defined on an earlier line")
        if member in self.members:
            where = self.members[member]
            raise self.fail(
                f"{shown!r} is already a member of group {display_name(where)!r}: a name can be"
                " listed as a group member only once"
            )
        self.members[member] = group

    def _threshold(self, spelled: str, n: int) -> int:
        if spelled == "all":
            return n
        if spelled == "any":
            return 1
        if not _DIGITS.fullmatch(spelled) or not 1 <= int(spelled) <= n:
            raise self.fail(f"the threshold must be all, any or a decimal k with 1 <= k <= {n}")
        return int(spelled)

    def set_quorum(self, items: list[str]) -> None:
        if len(items) != 2:
            raise self.fail("a quorum line is 'quorum <name>'")
        if self.quorum is not None:
            raise self.fail("a second quorum line (a policy has exactly one)")
        name = items[1]
        if name != NONE and name not in self.defined:
            raise self.fail(f"quorum {display_name(name)!r} is not defined on an earlier line")
        self.quorum = name

    def _key(self, vkey: str, parse: Callable[[str], _T]) -> _T:
        try:
            vkey.encode("utf-8")
        except UnicodeEncodeError:
            raise self.fail("a vkey must be UTF-8 (it names a signed-note key)") from None
        try:
            return parse(vkey)
        except (errors.KeyMaterialError, errors.ProofError) as e:
            if e.code == "tlog.cosigner_unsupported":
                raise
            raise self.fail(e.message, cause=e.code) from None


def parse_policy(data: bytes | str) -> Policy:
    """Parse a tlog-policy file strictly (module docstring).

    Raises:
        ``tlog.policy_malformed``: at ``details.line``; a key's own code is ``details.cause``.
        ``tlog.cosigner_unsupported``: an ML-DSA-44 witness where ``cryptography`` lacks ML-DSA.
    """
    raw = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
    builder = _Builder()
    if len(raw) > MAX_POLICY_BYTES:
        raise builder.fail(f"the policy is larger than {MAX_POLICY_BYTES} bytes")
    bad = _FORBIDDEN.search(raw)
    if bad is not None:
        builder.line = raw.count(b"\n", 0, bad.start()) + 1
        hint = " (CRLF line ends?)" if bad.group() == b"\r" else ""
        raise builder.fail(f"control character 0x{bad.group()[0]:02x} is not allowed{hint}")
    if raw and not raw.endswith(b"\n"):
        builder.line = raw.count(b"\n") + 1
        raise builder.fail("the last line does not end with a newline")
    lines = raw.decode("utf-8", "surrogateescape").split("\n")[:-1]
    handlers = {
        "log": builder.log,
        "witness": builder.witness,
        "group": builder.group,
        "quorum": builder.set_quorum,
    }
    for number, line in enumerate(lines, start=1):
        builder.line = number
        stripped = line.strip(" \t")
        if not stripped or stripped.startswith("#"):
            continue
        items = _SEPARATOR.split(stripped)
        handler = handlers.get(items[0])
        if handler is None:
            keyword = display_name(items[0])
            raise builder.fail(f"unknown line type {keyword!r} (log, witness, group or quorum)")
        handler(items)
    if builder.quorum is None:
        builder.line = len(lines)
        raise builder.fail("no quorum line (a policy has exactly one; 'quorum none' for none)")
    return Policy(
        tuple(builder.logs), tuple(builder.witnesses), tuple(builder.groups), builder.quorum
    )


def _url(items: list[str], position: int) -> str | None:
    return items[position] if len(items) > position else None


def verify_log_signature(note: str | bytes, policy: Policy) -> tuple[Checkpoint, tuple[str, ...]]:
    """Step 2: a policy log whose key name is the origin (read unverified, to pick the logs)
    signed the checkpoint. Returns it and the ``name+keyid`` of each log key that verified.

    Raises:
        ``checkpoint.malformed``: the note or its body is malformed.
        ``tlog.log_untrusted``: no policy log is named by the checkpoint's origin.
        ``checkpoint.no_trusted_signature``: no signature by such a log's key.
        ``checkpoint.signature_bad``: such a signature does not verify.
    """
    origin = parse_checkpoint_body(parse_note(note).text).origin
    logs = policy.logs_for(origin)
    if not logs:
        raise errors.ProofError(
            "tlog.log_untrusted",
            f"no log of the policy signs as origin {origin!r}"
            + ("" if policy.logs else " (the policy lists no log)"),
            details={"origin": origin, "policy_origins": sorted({g.origin for g in policy.logs})},
        )
    verified = verify_checkpoint(note, [log.verifier for log in logs], origin=origin)
    return verified.checkpoint, verified.verified_by


def verify_witnesses(note: str | bytes, policy: Policy) -> tuple[WitnessCosignature, ...]:
    """Step 3, first half: every cosignature from a policy witness verifies; others are ignored.

    Raises:
        ``checkpoint.malformed``, ``tlog.cosignature_malformed``, ``tlog.cosignature_bad``: as
            :func:`~affidavit.verify.tlog.cosignature.verify_cosignatures`.
    """
    witnesses = {w.cosigner: w for w in reversed(policy.witnesses)}  # the first, were one twice
    return tuple(
        WitnessCosignature(witnesses[verified.cosigner], verified.timestamp)
        for verified in verify_cosignatures(note, policy.cosigners)
    )


def require_quorum(policy: Policy, witnesses: Iterable[str]) -> None:
    """Step 3, second half: the witnesses that cosigned meet the policy's quorum.

    Raises:
        ``tlog.quorum_not_met``: they do not; the details name them and what the quorum needs.
    """
    names = list(dict.fromkeys(witnesses))
    if policy.quorum_met(names):
        return
    shown = [display_name(name) for name in names]
    raise errors.ProofError(
        "tlog.quorum_not_met",
        f"the quorum is not met: it needs {policy.describe()}; verified cosignatures from "
        + (", ".join(shown) if shown else "no witness of the policy"),
        details={
            "quorum": display_name(policy.quorum),
            "needs": policy.describe(),
            "verified_witnesses": shown,
        },
    )


def verify_checkpoint_under_policy(note: str | bytes, policy: Policy) -> PolicyCheckpoint:
    """Verify a checkpoint note under ``policy``: log signature, cosignatures, quorum.

    Raises:
        everything :func:`verify_log_signature`, :func:`verify_witnesses` and
        :func:`require_quorum` raise.
    """
    checkpoint, labels = verify_log_signature(note, policy)
    cosignatures = verify_witnesses(note, policy)
    require_quorum(policy, (c.witness.name for c in cosignatures))
    return PolicyCheckpoint.assemble(note, policy, checkpoint, labels, cosignatures)
