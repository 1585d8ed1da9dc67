"""C2SP tlog-policy (verify/tlog/policy.py): strict parsing, quorum semantics, checkpoints."""

from __future__ import annotations

import itertools

import pytest
from affidavit.attest.keyring import derive_test_key
from affidavit.verify.crypto import merkle
from affidavit.verify.tlog.policy import (
    MAX_GROUPS,
    MAX_LOGS,
    MAX_POLICY_BYTES,
    MAX_WITNESSES,
    Policy,
    display_name,
    parse_policy,
    require_quorum,
    verify_checkpoint_under_policy,
    verify_log_signature,
)

from tests.conftest import raises_code
from tests.verify.tlog.proof_fixtures import (
    ED_NAME,
    LOG,
    ORIGIN,
    OTHER_LOG,
    PQ_NAME,
    UNKNOWN_KEY,
    UNKNOWN_NAME,
    ed_cosignature,
    ed_cosigner,
    log_vkey,
    policy_text,
    pq_cosignature,
    pq_cosigner,
    signed_checkpoint,
    vkey_of,
    with_lines,
)

ROOT = merkle.root_of([merkle.leaf_hash(f"entry {i}".encode()) for i in range(3)])
NOTE = signed_checkpoint(3, ROOT)

# The example of tlog-policy ("Example policy"), with real keys of our own for the elided <vkey>.
EXAMPLE_NAMES = ("X1", "X2", "X3", "Y1", "Y2", "Y3")
EXAMPLE_KEYS = {
    n: derive_test_key(f"TEST-ONLY tlog-policy example witness {n}") for n in EXAMPLE_NAMES
}
EXAMPLE_LABELS = {n: f"{n.lower()}.witness.example" for n in EXAMPLE_NAMES}


def _example_vkey(name: str) -> str:
    return vkey_of(ed_cosigner(EXAMPLE_KEYS[name], EXAMPLE_LABELS[name]))


EXAMPLE = f"""log {log_vkey()}

witness X1 {_example_vkey("X1")}
witness X2 {_example_vkey("X2")}
witness X3 {_example_vkey("X3")}
group X-witnesses 2 X1 X2 X3

witness Y1 {_example_vkey("Y1")}
witness Y2 {_example_vkey("Y2")}
witness Y3 {_example_vkey("Y3")}
group Y-witnesses any Y1 Y2 Y3

group X-and-Y all X-witnesses Y-witnesses
quorum X-and-Y
"""


def _cosigned(note: str, names: tuple[str, ...]) -> str:
    lines = [ed_cosignature(note, EXAMPLE_KEYS[n], EXAMPLE_LABELS[n]) for n in names]
    return with_lines(note, lines)


def _simple(quorum: str = "W", *, witnesses: tuple[str, ...] = ("W",)) -> Policy:
    pairs = [
        (w, vkey_of(ed_cosigner(derive_test_key(f"w {w}"), f"{w}.example"))) for w in witnesses
    ]
    return parse_policy(policy_text(logs=[log_vkey()], witnesses=pairs, quorum=quorum))


# -- the spec's example ---------------------------------------------------------------------------


def test_the_spec_example_parses() -> None:
    policy = parse_policy(EXAMPLE.encode())
    assert [log.origin for log in policy.logs] == [ORIGIN]
    assert [w.name for w in policy.witnesses] == list(EXAMPLE_NAMES)
    assert [(g.name, g.threshold, g.members) for g in policy.groups] == [
        ("X-witnesses", 2, ("X1", "X2", "X3")),
        ("Y-witnesses", 1, ("Y1", "Y2", "Y3")),
        ("X-and-Y", 2, ("X-witnesses", "Y-witnesses")),
    ]
    assert policy.quorum == "X-and-Y"
    assert policy.describe() == (
        "X-and-Y = all of [X-witnesses = 2 of [X1, X2, X3], Y-witnesses = any of [Y1, Y2, Y3]]"
    )
    assert [w.line for w in policy.witnesses] == [3, 4, 5, 8, 9, 10]


def test_the_spec_example_quorum_is_two_x_and_one_y() -> None:
    policy = parse_policy(EXAMPLE)
    for size in range(len(EXAMPLE_NAMES) + 1):
        for subset in itertools.combinations(EXAMPLE_NAMES, size):
            xs = sum(name.startswith("X") for name in subset)
            ys = len(subset) - xs
            assert policy.quorum_met(subset) == (xs >= 2 and ys >= 1), subset


def test_the_spec_example_verifies_real_cosignatures() -> None:
    policy = parse_policy(EXAMPLE)
    verified = verify_checkpoint_under_policy(_cosigned(NOTE, ("X3", "Y2", "X1")), policy)
    assert verified.witnesses == ("X3", "Y2", "X1")
    assert verified.checkpoint.tree_size == 3
    assert [log.label for log in verified.logs] == [policy.logs[0].label]
    assert verified.quorum == "X-and-Y"
    assert verified.ignored_signatures == 0
    with raises_code("tlog.quorum_not_met") as caught:
        verify_checkpoint_under_policy(_cosigned(NOTE, ("X1", "Y1", "Y2", "Y3")), policy)
    assert caught.value.details["verified_witnesses"] == ["X1", "Y1", "Y2", "Y3"]
    assert caught.value.details["quorum"] == "X-and-Y"
    assert "2 of [X1, X2, X3]" in caught.value.details["needs"]


def test_groups_of_groups_use_only_witness_names() -> None:
    policy = parse_policy(EXAMPLE)
    # naming a group as if it had cosigned satisfies nothing
    assert not policy.quorum_met(["X-witnesses", "Y-witnesses", "X-and-Y"])
    assert policy.satisfied(["X1", "X2"]) == {"X1", "X2", "X-witnesses"}


# -- verifying checkpoints under a policy ---------------------------------------------------------


def test_quorum_none_needs_no_cosignature() -> None:
    policy = parse_policy(policy_text(logs=[log_vkey()], quorum="none"))
    verified = verify_checkpoint_under_policy(NOTE, policy)
    assert verified.witnesses == ()
    # unknown cosignatures are ignored and counted
    noisy = with_lines(NOTE, [ed_cosignature(NOTE, UNKNOWN_KEY, UNKNOWN_NAME)])
    assert verify_checkpoint_under_policy(noisy, policy).ignored_signatures == 1


def test_a_single_witness_quorum_with_ed25519_and_ml_dsa_44() -> None:
    witnesses = [("ed", vkey_of(ed_cosigner())), ("pq", vkey_of(pq_cosigner()))]
    both = policy_text(
        logs=[log_vkey()], witnesses=witnesses, groups=["both all ed pq"], quorum="both"
    )
    policy = parse_policy(both)
    note = with_lines(NOTE, [pq_cosignature(NOTE), ed_cosignature(NOTE)])
    assert verify_checkpoint_under_policy(note, policy).witnesses == ("pq", "ed")
    with raises_code("tlog.quorum_not_met"):
        verify_checkpoint_under_policy(with_lines(NOTE, [ed_cosignature(NOTE)]), policy)
    only_pq = parse_policy(policy_text(logs=[log_vkey()], witnesses=witnesses, quorum="pq"))
    assert verify_checkpoint_under_policy(with_lines(NOTE, [pq_cosignature(NOTE)]), only_pq)


def test_an_unknown_witness_only_does_not_meet_the_quorum() -> None:
    policy = parse_policy(
        policy_text(logs=[log_vkey()], witnesses=[("ed", vkey_of(ed_cosigner()))], quorum="ed")
    )
    note = with_lines(NOTE, [ed_cosignature(NOTE, UNKNOWN_KEY, UNKNOWN_NAME)])
    with raises_code("tlog.quorum_not_met") as caught:
        verify_checkpoint_under_policy(note, policy)
    assert caught.value.details["verified_witnesses"] == []
    assert "no witness of the policy" in caught.value.message


def test_a_bad_cosignature_from_a_policy_witness_rejects_the_checkpoint() -> None:
    policy = _simple("none", witnesses=("A",))
    other = signed_checkpoint(2, merkle.root_of([merkle.leaf_hash(b"x"), merkle.leaf_hash(b"y")]))
    key = derive_test_key("w A")
    bad = ed_cosignature(other, key, "A.example")
    with raises_code("tlog.cosignature_bad"):
        verify_checkpoint_under_policy(with_lines(NOTE, [bad]), policy)


def test_the_log_must_be_in_the_policy_under_its_origin() -> None:
    policy = _simple("none")
    other_origin = signed_checkpoint(3, ROOT, origin="vectors.affidavit.test/other")
    with raises_code("tlog.log_untrusted") as caught:
        verify_checkpoint_under_policy(other_origin, policy)
    assert caught.value.details["origin"] == "vectors.affidavit.test/other"
    assert caught.value.details["policy_origins"] == [ORIGIN]
    # the policy's log key, signing under another name than its origin line
    renamed = signed_checkpoint(3, ROOT, origin="vectors.affidavit.test/other", name=ORIGIN)
    with raises_code("tlog.log_untrusted"):
        verify_checkpoint_under_policy(renamed, policy)
    # the origin is in the policy, but another key signed
    with raises_code("checkpoint.no_trusted_signature"):
        verify_checkpoint_under_policy(signed_checkpoint(3, ROOT, key=OTHER_LOG), policy)
    tampered = NOTE.replace("\n3\n", "\n2\n", 1)
    with raises_code("checkpoint.signature_bad"):
        verify_checkpoint_under_policy(tampered, policy)


def test_a_policy_without_logs_trusts_no_checkpoint() -> None:
    policy = parse_policy("quorum none\n")
    with raises_code("tlog.log_untrusted", match="lists no log"):
        verify_log_signature(NOTE, policy)


def test_two_keys_for_one_origin_both_count() -> None:
    text = policy_text(logs=[log_vkey(), log_vkey(OTHER_LOG)], quorum="none")
    policy = parse_policy(text)
    assert len(policy.logs_for(ORIGIN)) == 2
    assert verify_checkpoint_under_policy(signed_checkpoint(3, ROOT, key=OTHER_LOG), policy)
    both = with_lines(NOTE, [signed_checkpoint(3, ROOT, key=OTHER_LOG).split("\n\n")[1]])
    assert len(verify_checkpoint_under_policy(both, policy).logs) == 2


def test_require_quorum_deduplicates_and_ignores_strangers() -> None:
    policy = _simple("W")
    require_quorum(policy, ["W", "W", "stranger"])
    with raises_code("tlog.quorum_not_met"):
        require_quorum(policy, ["stranger"])


# -- parsing: what is accepted --------------------------------------------------------------------


def test_comments_blank_lines_whitespace_and_urls() -> None:
    w = vkey_of(ed_cosigner())
    text = (
        "# a comment\n"
        "   \t# an indented comment\n"
        "\n"
        " \t \n"
        f"\tlog \t{log_vkey()}   https://log.example/ \t\n"
        f"witness  W  {w}\thttps://w.example/\n"
        "quorum W   \n"
    )
    policy = parse_policy(text)
    assert policy.logs[0].url == "https://log.example/"
    assert policy.witnesses[0].url == "https://w.example/"
    assert (policy.witnesses[0].line, policy.logs[0].line) == (6, 5)
    assert policy.witnesses[0].cosigner == ed_cosigner()


def test_names_are_opaque_octets() -> None:
    kelvin = "\u212a"  # KELVIN SIGN, not "K"
    a, b = (vkey_of(ed_cosigner(derive_test_key(f"w {n}"), f"{n}.example")) for n in "ab")
    text = f"witness K {a}\nwitness {kelvin} {b}\ngroup g all K {kelvin}\nquorum g\n"
    policy = parse_policy(text.encode())
    assert [w.name for w in policy.witnesses] == ["K", kelvin]
    # a name that is not UTF-8, and a UTF-8 no-break space, which is not a separator
    raw = b"witness n\xff\xa0x " + a.encode() + b"\n# caf\xe9 \xff comment\nquorum n\xff\xa0x\n"
    odd = parse_policy(raw)
    assert display_name(odd.quorum) == "n\\xff\\xa0x"
    assert odd.quorum_met([odd.witnesses[0].name])


def test_group_thresholds() -> None:
    keys = [vkey_of(ed_cosigner(derive_test_key(f"w {n}"), f"{n}.example")) for n in "abc"]
    witnesses = [(n, k) for n, k in zip("abc", keys, strict=True)]
    for spelled, k in (("all", 3), ("any", 1), ("2", 2), ("02", 2), ("3", 3)):
        text = policy_text(witnesses=witnesses, groups=[f"g {spelled} a b c"], quorum="g")
        policy = parse_policy(text)
        assert policy.groups[0].threshold == k
        assert policy.quorum_met(["a", "b", "c"][:k])
        assert not policy.quorum_met(["a", "b", "c"][: k - 1])


def test_the_quorum_may_be_a_witness_or_a_group_member() -> None:
    policy = _simple("W")
    assert policy.quorum_met(["W"])
    assert not policy.quorum_met([])
    assert policy.describe() == "W"


def test_implementation_limits_fit_at_least_32_and_refuse_more_than_the_maximum() -> None:
    assert min(MAX_LOGS, MAX_WITNESSES, MAX_GROUPS) >= 32
    logs = [log_vkey(derive_test_key(f"log {i}"), f"log{i}.example") for i in range(MAX_LOGS)]
    keys = [
        vkey_of(ed_cosigner(derive_test_key(f"w {i}"), f"w{i}.example"))
        for i in range(MAX_WITNESSES + 1)
    ]
    witnesses = [(f"w{i}", key) for i, key in enumerate(keys[:MAX_WITNESSES])]
    groups = [f"g{i} any w{i}" for i in range(MAX_GROUPS)]
    full = policy_text(logs=logs, witnesses=witnesses, groups=groups, quorum="g0")
    policy = parse_policy(full)
    assert (len(policy.logs), len(policy.witnesses), len(policy.groups)) == (128, 128, 128)
    assert len(full) < MAX_POLICY_BYTES
    extra_witness = policy_text(witnesses=[*witnesses, ("x", keys[-1])], quorum="x")
    with raises_code("tlog.policy_malformed", match="more than 128 witnesses"):
        parse_policy(extra_witness)
    extra_log = policy_text(logs=[*logs, log_vkey(derive_test_key("one more"), "x")])
    with raises_code("tlog.policy_malformed", match="more than 128 logs"):
        parse_policy(extra_log)
    extra_group = policy_text(witnesses=witnesses, groups=[*groups, "g128 any w128"])
    with raises_code("tlog.policy_malformed", match="more than 128 groups"):
        parse_policy(extra_group)


# -- parsing: what is refused ---------------------------------------------------------------------

W1 = vkey_of(ed_cosigner(derive_test_key("w 1"), "one.example"))
W2 = vkey_of(ed_cosigner(derive_test_key("w 2"), "two.example"))
L1 = log_vkey()

MALFORMED: dict[str, tuple[str | bytes, int]] = {
    "unknown-keyword": (f"logs {L1}\nquorum none\n", 1),
    "log-without-key": ("log\nquorum none\n", 1),
    "log-too-many-items": (f"log {L1} https://a/ https://b/\nquorum none\n", 1),
    "log-key-malformed": ("log example.com+00000000+AAAA\nquorum none\n", 1),
    "log-key-is-a-cosigner-key": (f"log {W1}\nquorum none\n", 1),
    "witness-key-is-a-log-key": (f"witness W {L1}\nquorum W\n", 1),
    "witness-without-key": ("witness W\nquorum none\n", 1),
    "witness-too-many-items": (f"witness W {W1} https://a/ x\nquorum W\n", 1),
    "witness-named-none": (f"witness none {W1}\nquorum none\n", 1),
    "name-defined-twice": (f"witness W {W1}\nwitness W {W2}\nquorum W\n", 2),
    "group-named-like-a-witness": (f"witness W {W1}\ngroup W any W\nquorum W\n", 2),
    "group-without-members": (f"witness W {W1}\ngroup g any\nquorum g\n", 2),
    "group-threshold-zero": (f"witness W {W1}\ngroup g 0 W\nquorum g\n", 2),
    "group-threshold-above-n": (f"witness W {W1}\ngroup g 2 W\nquorum g\n", 2),
    "group-threshold-not-decimal": (f"witness W {W1}\ngroup g +1 W\nquorum g\n", 2),
    "group-threshold-word": (f"witness W {W1}\ngroup g most W\nquorum g\n", 2),
    "group-references-a-later-name": (
        f"witness W {W1}\ngroup g all W V\nwitness V {W2}\nquorum g\n",
        2,
    ),
    "group-references-itself": (f"witness W {W1}\ngroup g all W g\nquorum g\n", 2),
    "group-member-none": (f"witness W {W1}\ngroup g any W none\nquorum g\n", 2),
    "group-member-twice": (f"witness W {W1}\ngroup g 1 W W\nquorum g\n", 2),
    "member-of-two-groups": (
        f"witness W {W1}\nwitness V {W2}\ngroup g any W\ngroup h any W V\nquorum h\n",
        4,
    ),
    "duplicate-witness-key-under-another-name": (f"witness A {W1}\nwitness B {W1}\nquorum A\n", 2),
    "duplicate-witness-key-under-another-key-name": (
        f"witness A {W1}\nwitness B {vkey_of(ed_cosigner(derive_test_key('w 1'), 'x.example'))}"
        "\nquorum A\n",
        2,
    ),
    "duplicate-log-key-under-another-origin": (
        f"log {L1}\nlog {log_vkey(LOG, 'another.example/log')}\nquorum none\n",
        2,
    ),
    "no-quorum": (f"witness W {W1}\n", 1),
    "empty-file": ("", 0),
    "two-quorums": (f"witness W {W1}\nquorum W\nquorum none\n", 3),
    "quorum-undefined": ("quorum W\n", 1),
    "quorum-before-its-witness": (f"quorum W\nwitness W {W1}\n", 1),
    "quorum-too-many-items": (f"witness W {W1}\nquorum W none\n", 2),
    "carriage-return": (f"witness W {W1}\r\nquorum W\n", 1),
    "nul-byte": (b"quorum none\x00\n", 1),
    "del-byte": (b"# \x7f\nquorum none\n", 1),
    "vertical-tab-separator": (b"quorum\x0bnone\n", 1),
    "no-final-newline": ("quorum none", 1),
    "vkey-not-utf8": (b"log a\xff+00000000+AAAA\nquorum none\n", 1),
    "too-large": (b"#" * MAX_POLICY_BYTES + b"\nquorum none\n", 0),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_policies_are_refused(case: str) -> None:
    text, line = MALFORMED[case]
    with raises_code("tlog.policy_malformed") as caught:
        parse_policy(text)
    assert caught.value.details["line"] == line, caught.value.message
    assert caught.value.message.startswith(f"policy line {line}: ")


def test_a_malformed_key_keeps_its_own_code_as_the_cause() -> None:
    with raises_code("tlog.policy_malformed") as caught:
        parse_policy(MALFORMED["log-key-is-a-cosigner-key"][0])
    assert caught.value.details["cause"] == "key.vkey_malformed"
    with raises_code("tlog.policy_malformed") as caught:
        parse_policy(MALFORMED["witness-key-is-a-log-key"][0])
    assert caught.value.details["cause"] == "tlog.cosigner_key_malformed"


def test_witness_keys_sharing_name_and_key_id_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    # Two keys whose vkeys share name and 4-byte key ID take ~2^32 tries to find; the parser's
    # key reader is replaced to produce such a pair.
    from affidavit.verify.tlog import policy as module
    from affidavit.verify.tlog.cosignature import Cosigner

    real = ed_cosigner()
    other_key = derive_test_key("clash").public_key.raw
    fake = {"A": real, "B": Cosigner(real.name, real.key_id, "ed25519", other_key)}
    monkeypatch.setattr(module, "parse_cosigner_vkey", lambda vkey: fake[vkey])
    with raises_code("tlog.policy_malformed", match="same key name and key ID"):
        parse_policy("witness a A\nwitness b B\nquorum a\n")


def test_witness_names_are_the_policys_not_the_vkeys() -> None:
    policy = parse_policy(
        policy_text(logs=[L1], witnesses=[(ED_NAME, vkey_of(pq_cosigner()))], quorum=ED_NAME)
    )
    # the witness is called ED_NAME here, its key is the ML-DSA-44 cosigner's (PQ_NAME)
    note = with_lines(NOTE, [pq_cosignature(NOTE)])
    assert verify_checkpoint_under_policy(note, policy).witnesses == (ED_NAME,)
    assert policy.witnesses[0].cosigner.name == PQ_NAME
