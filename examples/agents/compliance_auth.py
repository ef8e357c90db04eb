"""Example-only access tokens for the compliance server: RS256 JWTs with the standard library.

The key pair is fixed and public (it is an example): a test harness mints tokens the server
accepts (``mint``), the server verifies them (``verify``) and publishes the public key as a
JWKS. Never use this key for anything real.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from typing import Any

KID = "compliance-example-1"
E = 65537
N = int(
    "d8eadd12a48bec503c47498adeb4942586e2a9484d703df7160f996780f793f8f4cdc0210f7c7b3100957a913cfb9812"
    "cb2caa88277489ff47f7a249eed3ebd7c2d7ef4487b1c9065a98ecf046e358f48546722a69b714ccc5d75ee50ad4c62f"
    "1125b3945d007d3cb7f1f2633e19bdc1e5b5e77b60bf1fe54fd22655735682419260270881b5d8c3c882acd1c7b2d99a"
    "be9171bc70a9f721e02615686c7eab7e33baba15eeb507bfba12fac05698d71b7b076a9d0a4979ee2f6eb8c98287dbbe"
    "c93a6131c0ff08e4a89a81a0b134d6b54a68f491fb6636d9fa5f0663b90a1bbbe7658edaccdac26a725ca7f72b4c6d50"
    "42df9bf99e1d31554e7c35e37c72e2a3",
    16,
)
D = int(
    "31d46a2a91302f7e130ad1431c7be11869cf01d2412fca9c4b2e143069b8f5fe17c6781f601e59725d4ef95409ed45f6"
    "f343747d488b05f465c4e63c13a80d228878f0570ed0f17c0b2ddc282a30a9cbaa1e0fb5dc8919371d2fa775f831fec0"
    "eb307cfb550dfab70b0e827ef7d213fc49d7aab075fe11c6acba7ae1e057fc1dc5c34e7a65723843442b0004fb2faca8"
    "16d62fcaf94b6396596219345c7cb2249b9898e037c6d34a3d863c86185e9bdd28c665f2dacad7d81188d71db2a5f4dc"
    "e1efd00b1757dbc9d2dbf40bd00ce638312e96db58ecdb1920d970d5ce706c037ad5d35063463e3448bb01a67e714378"
    "2af16f45d847c5694b5cbc09b43eaa31",
    16,
)
# N's two primes: signing modulo each (the Chinese remainder theorem) takes 9 ms a token where
# pow(m, D, N) took 21 ms; the signature is the same.
P = int(
    "f1ee2f53bd2de4326602db28321054167dafcf27ae3cab6445ebccd4716a8e740a760a9c77a107366f2c4f0c976856c5"
    "ab377e649d6e5557fd1d5c48c70b2d048e719d58c4f64b1fe3e8401faa8a3a381ecce80fb79a3eaa53ab3c9ef61980e0"
    "3ca62d8eec187899dc969f1303eaa502bd5e26da600941df934c32e9a6d34049",
    16,
)
Q = int(
    "e5884a48bd9534e76b564635d9814386e177290c6ad9396a18418d260d986574b6f638313c997c1f603763aee704c321"
    "d196926638e55e62c93b9157d74b83acde1daafd29c275cfcf655477c1cdc9e3904307d56fc891769c70636eb2ae0ad5"
    "4afdb7216cd8c6e3bba77d0e64176c8ea41a6cb7977e3c102f6db6a7304d238b",
    16,
)
_DP, _DQ, _QINV = D % (P - 1), D % (Q - 1), pow(Q, -1, P)
_SHA256_PREFIX = bytes.fromhex("3031300d060960864801650304020105000420")  # PKCS#1 v1.5 DigestInfo
_SIZE = (N.bit_length() + 7) // 8


class TokenError(Exception):
    """A token that is not accepted; ``code`` is ``invalid_token`` or ``token_expired``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _encoded(message: bytes) -> int:
    digest = _SHA256_PREFIX + hashlib.sha256(message).digest()
    padded = b"\x00\x01" + b"\xff" * (_SIZE - len(digest) - 3) + b"\x00" + digest
    return int.from_bytes(padded, "big")


def _sign(message: int) -> int:
    """``pow(message, D, N)``, computed modulo each prime."""
    mp, mq = pow(message, _DP, P), pow(message, _DQ, Q)
    return mq + (_QINV * (mp - mq) % P) * Q


def mint(
    issuer: str, subject: str, scopes: list[str], expires_in: int = 3600, now: float | None = None
) -> str:
    """A signed token; ``expires_in`` below zero gives an expired one."""
    issued = int(time.time() if now is None else now)
    header = {"alg": "RS256", "typ": "JWT", "kid": KID}
    claims = {
        "iss": issuer,
        "sub": subject,
        "scope": " ".join(scopes),
        "iat": issued,
        "exp": issued + expires_in,
    }
    signing = f"{b64url(json.dumps(header).encode())}.{b64url(json.dumps(claims).encode())}".encode()
    signature = _sign(_encoded(signing)).to_bytes(_SIZE, "big")
    return f"{signing.decode()}.{b64url(signature)}"


def verify(token: str, now: float | None = None) -> dict[str, Any]:
    """The token's claims; raises TokenError when it is malformed, forged or expired."""
    parts = token.split(".")
    if len(parts) != 3:
        raise TokenError("invalid_token", "the token is not a JWT (header.payload.signature)")
    try:
        header = json.loads(_unb64url(parts[0]))
        claims = json.loads(_unb64url(parts[1]))
        signature = int.from_bytes(_unb64url(parts[2]), "big")
    except ValueError:
        raise TokenError("invalid_token", "the token cannot be decoded") from None
    if not isinstance(header, dict) or header.get("alg") != "RS256" or not isinstance(claims, dict):
        raise TokenError("invalid_token", "the token is not an RS256 JWT")
    if pow(signature, E, N) != _encoded(f"{parts[0]}.{parts[1]}".encode()):
        raise TokenError("invalid_token", "the token signature is not valid")
    if not isinstance(claims.get("exp"), (int, float)) or claims["exp"] <= (
        time.time() if now is None else now
    ):
        raise TokenError("token_expired", "the token has expired; request a new one")
    return claims


def scopes(claims: dict[str, Any]) -> set[str]:
    return set(str(claims.get("scope") or "").split())


def jwks() -> dict[str, Any]:
    n = N.to_bytes(_SIZE, "big")
    return {
        "keys": [
            {
                "kty": "RSA",
                "kid": KID,
                "use": "sig",
                "alg": "RS256",
                "n": b64url(n),
                "e": b64url(E.to_bytes(3, "big")),
            }
        ]
    }


def openid_configuration(issuer: str) -> dict[str, Any]:
    return {
        "issuer": issuer,
        "jwks_uri": f"{issuer}/.well-known/jwks.json",
        "token_endpoint": f"{issuer}/auth/token",
        "grant_types_supported": ["client_credentials"],
        "id_token_signing_alg_values_supported": ["RS256"],
    }
