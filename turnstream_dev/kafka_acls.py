"""The local SASL broker's ACLs: who may read and write which of turnstream's topics.

Derived from the deployment's names (``worker.topic_prefix``, ``worker.app_id``) and two
roles: a **worker** user reads and writes every topic and consumer group of turnstream
(it creates the topics, consumes the inputs, writes the accepted, inference and dead-letter
topics, commits its groups' offsets); a **producer** user may only write (and describe)
the input topics. Anyone else gets nothing (``allow.everyone.if.no.acl.found=false``);
the broker's own user is the super user. Applied through Kafka's admin API (aiokafka has
the requests, not the calls): every ACL of the broker is replaced on each ``up``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from turnstream.adapters.kafka.topology import TopicNames
from turnstream.errors import TurnstreamError

__all__ = ["Acl", "Operation", "Pattern", "Resource", "acls_of", "apply_acls"]


class Resource(IntEnum):
    """Kafka's ``ResourceType`` codes."""

    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4


class Pattern(IntEnum):
    """Kafka's ``PatternType`` codes."""

    ANY = 1
    LITERAL = 3
    PREFIXED = 4


class Operation(IntEnum):
    """Kafka's ``AclOperation`` codes (those used here)."""

    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    DESCRIBE = 8


_ALLOW = 3
_ANY_PERMISSION = 1
_ANY_HOST = "*"


@dataclass(frozen=True)
class Acl:
    """One ALLOW binding: ``user`` may ``operation`` on the resource, from any host."""

    user: str
    resource: Resource
    name: str
    pattern: Pattern
    operation: Operation

    @property
    def principal(self) -> str:
        return f"User:{self.user}"


def acls_of(
    names: TopicNames, app_id: str, workers: Iterable[str], producers: Iterable[str]
) -> list[Acl]:
    """The ACLs of ``workers`` (everything on the topics under ``names.prefix``; read, so
    join and commit, the consumer groups under ``app_id``) and ``producers`` (write and
    describe the input topics, named one by one)."""
    acls: list[Acl] = []
    for user in sorted(set(workers)):
        acls += [
            Acl(user, Resource.TOPIC, f"{names.prefix}.", Pattern.PREFIXED, Operation.ALL),
            Acl(user, Resource.GROUP, app_id, Pattern.PREFIXED, Operation.READ),
        ]
    for user in sorted(set(producers)):
        acls += [
            Acl(user, Resource.TOPIC, topic, Pattern.LITERAL, operation)
            for topic in names.inputs
            for operation in (Operation.WRITE, Operation.DESCRIBE)
        ]
    return acls


async def apply_acls(bootstrap: str, options: dict[str, Any], acls: list[Acl]) -> None:
    """Replace every ACL of the broker at ``bootstrap`` by ``acls``, as the client of
    ``options`` (a super user); TurnstreamError when the broker refuses a change."""
    from aiokafka.admin import AIOKafkaAdminClient
    from aiokafka.protocol.admin import CreateAclsRequest, DeleteAclsRequest

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, **options)
    await admin.start()
    try:
        anything = DeleteAclsRequest(
            Resource.ANY, None, Pattern.ANY, None, None, Operation.ANY, _ANY_PERMISSION
        )
        _check(await admin._send_request(anything), "filter_responses")
        for acl in acls:
            request = CreateAclsRequest(
                acl.resource,
                acl.name,
                acl.pattern,
                acl.principal,
                _ANY_HOST,
                acl.operation,
                _ALLOW,
            )
            _check(await admin._send_request(request), "creation_responses")
    finally:
        await admin.close()


def _check(response: Any, field: str) -> None:
    for entry in getattr(response, field):
        error_code, error_message = entry[0], entry[1]
        if error_code:
            raise TurnstreamError(
                f"the broker refused an ACL change: {error_message or error_code}"
            )
