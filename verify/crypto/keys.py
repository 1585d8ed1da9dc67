"""Ed25519 public keys: strict parsing at the boundary, key IDs. No private material here.

>>> key = Ed25519PublicKey.from_b64("11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=")
>>> key.b64
'11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo='
>>> key_id_c2sp("example.com/log", key.raw).hex()
'cc714670'

Every ``Ed25519PublicKey`` is 32 bytes (``key.wrong_length``), canonically encoded
(``key.non_canonical``, RFC 8032 §5.1.3), a point of edwards25519 (``key.not_on_curve``) and not
of small order (``key.weak``: such a key lets anyone forge signatures some verifiers accept);
mixed-order keys pass, as in libsodium (docs/adr/0002). Neither PyNaCl nor cryptography checks a
key when building it; this check is integer arithmetic, memoized per key.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from functools import lru_cache

from affidavit.verify import errors

__all__ = [
    "ED25519_KEY_BYTES",
    "Ed25519PublicKey",
    "b64decode_strict",
    "b64url_decode_strict",
    "b64url_encode",
    "key_id_c2sp",
]

ED25519_KEY_BYTES = 32

# edwards25519 (RFC 8032 §5.1): p = 2^255 - 19, d = -121665/121666, a = -1.
_P = 2**255 - 19
_D = (-121665 * pow(121666, _P - 2, _P)) % _P
_SQRT_M1 = pow(2, (_P - 1) // 4, _P)


def b64decode_strict(text: str | bytes) -> bytes:
    """Decode standard base64 (RFC 4648 §4) strictly: re-encoding must give back the input (no
    trailing bits, missing padding or whitespace).

    Raises:
        ValueError: the text is not canonical standard base64.
    """
    data = text.encode("ascii", "strict") if isinstance(text, str) else text
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as e:
        raise ValueError(f"not base64: {e}") from None
    if base64.b64encode(raw) != data:
        raise ValueError("not canonical base64 (padding or trailing bits)")
    return raw


def b64url_decode_strict(text: str) -> bytes:
    """Decode URL-safe base64 (RFC 4648 §5), padded or unpadded, in canonical form only.

    Raises:
        ValueError: the text is not canonical URL-safe base64.
    """
    try:
        data = text.encode("ascii")
    except UnicodeEncodeError:
        raise ValueError("not base64url: non-ASCII character") from None
    unpadded = data.rstrip(b"=")
    if len(data) - len(unpadded) > 2 or unpadded.translate(None, _B64URL_ALPHABET):
        raise ValueError("not base64url: character outside the alphabet")
    try:
        raw = base64.urlsafe_b64decode(unpadded + b"=" * (-len(unpadded) % 4))
    except (binascii.Error, ValueError) as e:
        raise ValueError(f"not base64url: {e}") from None
    canonical = base64.urlsafe_b64encode(raw)
    if data not in (canonical, canonical.rstrip(b"=")):
        raise ValueError("not canonical base64url (padding or trailing bits)")
    return raw


_B64URL_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def b64url_encode(raw: bytes) -> str:
    """URL-safe base64 without padding (the form Stigmem uses for fact signatures)."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


class Ed25519PublicKey:
    """A validated Ed25519 public key (32 raw bytes), immutable and equal by ``raw``; a slotted
    class, not a dataclass, on the ``verify bundle`` path (docs/adr/0003-cold-start.md).

    Raises (on construction):
        ``key.wrong_length``, ``key.non_canonical``, ``key.not_on_curve``, ``key.weak``.
    """

    __slots__ = ("_raw",)
    __match_args__ = ("raw",)
    _raw: bytes

    def __init__(self, raw: bytes) -> None:
        if not isinstance(raw, bytes) or len(raw) != ED25519_KEY_BYTES:
            length = len(raw) if isinstance(raw, bytes | bytearray) else "?"
            raise errors.KeyMaterialError(
                "key.wrong_length",
                f"an Ed25519 public key is 32 bytes, got {length}",
                details={"length": length},
            )
        _check_point(raw)
        object.__setattr__(self, "_raw", raw)

    @property
    def raw(self) -> bytes:
        return self._raw

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Ed25519PublicKey) or other.__class__ is not self.__class__:
            return NotImplemented
        return self._raw == other._raw

    def __hash__(self) -> int:
        return hash(self._raw)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(raw={self._raw!r})"

    def __reduce__(self) -> tuple[type[Ed25519PublicKey], tuple[bytes]]:
        return (self.__class__, (self._raw,))  # unpickling re-runs the checks

    @classmethod
    def from_bytes(cls, raw: bytes) -> Ed25519PublicKey:
        """Validate 32 raw bytes as a public key (raises as the constructor)."""
        return cls(bytes(raw))

    @classmethod
    def from_b64(cls, text: str | bytes) -> Ed25519PublicKey:
        """Parse strict standard base64 of 32 bytes.

        Raises:
            ``key.bad_base64``: not canonical base64, or not text at all.
            ``key.*``: as the constructor.
        """
        if not isinstance(text, (str, bytes)):
            raise errors.KeyMaterialError(
                "key.bad_base64", f"public key: {type(text).__name__} is not base64 text"
            )
        try:
            raw = b64decode_strict(text)
        except (ValueError, UnicodeError) as e:
            raise errors.KeyMaterialError("key.bad_base64", f"public key: {e}") from None
        return cls(raw)

    @classmethod
    def from_hex(cls, text: str) -> Ed25519PublicKey:
        """Parse 64 hex characters (any case) as a public key.

        Raises:
            ``key.bad_base64``: not hex (the code covers every text encoding of a key).
        """
        try:
            raw = bytes.fromhex(text)
        except ValueError as e:
            raise errors.KeyMaterialError("key.bad_base64", f"public key: not hex: {e}") from None
        return cls(raw)

    @property
    def b64(self) -> str:
        """Standard base64 with padding (docs/formats.md §3: ``public_key_base64``)."""
        return base64.b64encode(self.raw).decode("ascii")

    def key_id_c2sp(self, name: str) -> bytes:
        return key_id_c2sp(name, self.raw)


def key_id_c2sp(name: str, raw: bytes) -> bytes:
    """First 4 bytes of SHA-256(name || 0x0A || 0x01 || public key) (docs/formats.md §6; 0x01:
    the signed-note type of Ed25519)."""
    return hashlib.sha256(name.encode("utf-8") + b"\n\x01" + raw).digest()[:4]


@lru_cache(maxsize=4096)
def _check_point(raw: bytes) -> None:
    """Decode ``raw`` per RFC 8032 §5.1.3 and refuse non-canonical, off-curve and small-order."""
    y = int.from_bytes(raw, "little") & ((1 << 255) - 1)
    sign = raw[31] >> 7
    if y >= _P:
        raise errors.KeyMaterialError(
            "key.non_canonical",
            "public key: y coordinate is not reduced modulo p (RFC 8032 §5.1.3)",
        )
    y2 = y * y % _P
    u = (y2 - 1) % _P
    v = (_D * y2 + 1) % _P
    # x = u v^3 (u v^7)^((p-5)/8)  (RFC 8032 §5.1.3 step 2)
    x = u * pow(v, 3, _P) * pow(u * pow(v, 7, _P), (_P - 5) // 8, _P) % _P
    vx2 = v * x * x % _P
    if vx2 == (-u) % _P:
        x = x * _SQRT_M1 % _P
    elif vx2 != u:
        raise errors.KeyMaterialError("key.not_on_curve", "public key: not a point of edwards25519")
    if x == 0 and sign == 1:
        raise errors.KeyMaterialError(
            "key.non_canonical", "public key: x = 0 with the sign bit set (RFC 8032 §5.1.3 step 4)"
        )
    if x & 1 != sign:
        x = _P - x
    px, py, pz = x, y, 1
    for _ in range(3):  # 8·A = identity  <=>  A has small order
        px, py, pz = _double(px, py, pz)
    if px == 0 and py == pz:
        raise errors.KeyMaterialError(
            "key.weak", "public key: small-order point (refused, docs/adr/0002)"
        )


def _double(x: int, y: int, z: int) -> tuple[int, int, int]:
    """Projective doubling on -x^2 + y^2 = 1 + d x^2 y^2 (RFC 8032 §5.1.4, no inversion)."""
    xx, yy = x * x % _P, y * y % _P
    c = 2 * z * z % _P
    e = ((x + y) * (x + y) - xx - yy) % _P
    g = (yy - xx) % _P  # a·X² + Y² with a = -1
    f = (g - c) % _P
    h = (-xx - yy) % _P
    return e * f % _P, g * h % _P, f * g % _P
