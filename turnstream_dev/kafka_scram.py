"""The local SASL broker's SCRAM credentials, made to match its users' password files.

KRaft keeps SCRAM credentials in the cluster's metadata, not in ``server.properties``: on
each ``up``, as the super user, every user's SCRAM-SHA-256 and SCRAM-SHA-512 credential
is written again from its password (a fresh salt, so the old password stops working), and
those of users no longer configured are deleted. Kafka's DescribeUserScramCredentials and
AlterUserScramCredentials APIs are declared here (aiokafka 0.14 has neither); the client
salts the password itself, so it never crosses the wire nor a command line.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from typing import Any

from aiokafka.protocol.api import Request, RequestStruct, Response
from aiokafka.protocol.types import (
    CompactArray,
    CompactBytes,
    CompactString,
    Int8,
    Int16,
    Int32,
    Schema,
    TaggedFields,
)

from turnstream.errors import TurnstreamError

__all__ = ["ITERATIONS", "MECHANISMS", "salted_password", "sync_scram"]

#: Kafka's ``ScramMechanism`` codes and hash of the SCRAM mechanisms the broker takes.
MECHANISMS = {"SCRAM-SHA-256": (1, "sha256"), "SCRAM-SHA-512": (2, "sha512")}
#: Kafka's minimum (and ``kafka-configs.sh``'s default) iteration count.
ITERATIONS = 4096


def salted_password(password: str, salt: bytes, mechanism: str, iterations: int) -> bytes:
    """SCRAM's ``Hi(password, salt, iterations)`` (RFC 5802): PBKDF2 with the mechanism's
    HMAC, what the broker derives its stored and server keys from."""
    _, digest = MECHANISMS[mechanism]
    return hashlib.pbkdf2_hmac(digest, password.encode(), salt, iterations)


_STRING = CompactString("utf-8")


class _DescribeResponse(Response):
    API_KEY = 50
    API_VERSION = 0
    SCHEMA = Schema(
        ("throttle_time_ms", Int32),
        ("error_code", Int16),
        ("error_message", _STRING),
        (
            "results",
            CompactArray(
                ("user", _STRING),
                ("error_code", Int16),
                ("error_message", _STRING),
                (
                    "credential_infos",
                    CompactArray(
                        ("mechanism", Int8), ("iterations", Int32), ("tags", TaggedFields)
                    ),
                ),
                ("tags", TaggedFields),
            ),
        ),
        ("tags", TaggedFields),
    )


class _DescribeStruct(RequestStruct):
    FLEXIBLE_VERSION = True
    API_KEY = 50
    API_VERSION = 0
    RESPONSE_TYPE = _DescribeResponse
    SCHEMA = Schema(
        ("users", CompactArray(("name", _STRING), ("tags", TaggedFields))),
        ("tags", TaggedFields),
    )


class _Describe(Request[_DescribeStruct]):
    """Every user's SCRAM credentials (``users`` null: all of them)."""

    API_KEY = 50

    def build(self, request_struct_class: type[_DescribeStruct]) -> _DescribeStruct:
        return request_struct_class(None, {})


class _AlterResponse(Response):
    API_KEY = 51
    API_VERSION = 0
    SCHEMA = Schema(
        ("throttle_time_ms", Int32),
        (
            "results",
            CompactArray(
                ("user", _STRING),
                ("error_code", Int16),
                ("error_message", _STRING),
                ("tags", TaggedFields),
            ),
        ),
        ("tags", TaggedFields),
    )


class _AlterStruct(RequestStruct):
    FLEXIBLE_VERSION = True
    API_KEY = 51
    API_VERSION = 0
    RESPONSE_TYPE = _AlterResponse
    SCHEMA = Schema(
        (
            "deletions",
            CompactArray(("name", _STRING), ("mechanism", Int8), ("tags", TaggedFields)),
        ),
        (
            "upsertions",
            CompactArray(
                ("name", _STRING),
                ("mechanism", Int8),
                ("iterations", Int32),
                ("salt", CompactBytes),
                ("salted_password", CompactBytes),
                ("tags", TaggedFields),
            ),
        ),
        ("tags", TaggedFields),
    )


class _Alter(Request[_AlterStruct]):
    API_KEY = 51

    def __init__(self, deletions: list[tuple[Any, ...]], upsertions: list[tuple[Any, ...]]):
        self._deletions = deletions
        self._upsertions = upsertions

    def build(self, request_struct_class: type[_AlterStruct]) -> _AlterStruct:
        return request_struct_class(self._deletions, self._upsertions, {})


def _upsertions(users: Mapping[str, str], mechanism: str) -> list[tuple[Any, ...]]:
    code, _ = MECHANISMS[mechanism]
    rows = []
    for name, password in sorted(users.items()):
        salt = os.urandom(32)
        salted = salted_password(password, salt, mechanism, ITERATIONS)
        rows.append((name, code, ITERATIONS, salt, salted, {}))
    return rows


async def sync_scram(bootstrap: str, options: dict[str, Any], users: Mapping[str, str]) -> None:
    """Make the SCRAM credentials of the broker at ``bootstrap`` those of ``users`` (name ->
    password): written again for each of them, deleted for any other user; as the client
    of ``options`` (a super user). TurnstreamError when the broker refuses a change."""
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, **options)
    await admin.start()
    try:
        described = await admin._send_request(_Describe())
        if described.error_code:
            raise TurnstreamError(
                "the broker would not list its SCRAM users: "
                f"{described.error_message or described.error_code}"
            )
        stale = [
            (user, mechanism)
            for user, _, _, infos, _ in described.results
            if user not in users
            for mechanism, _, _ in infos
        ]
        # A request alters a user once at most: one request per mechanism.
        for mechanism, (code, _) in MECHANISMS.items():
            deletions = [(user, code, {}) for user, used in stale if used == code]
            altered = await admin._send_request(_Alter(deletions, _upsertions(users, mechanism)))
            for user, error_code, error_message, _ in altered.results:
                if error_code:
                    raise TurnstreamError(
                        f"the broker refused the {mechanism} credentials of {user!r}: "
                        f"{error_message or error_code}"
                    )
    finally:
        await admin.close()
