"""Where a webhook may be sent: public addresses only, unless the endpoint is allowed the
operator's own network by name in the configuration; never a cloud metadata service.

Pure: the caller resolves names and passes the addresses in. The same rules run when the
configuration is checked (on what the URL says) and at every attempt (on each address the
name resolves to, the ones the connection then uses), so a name that resolves elsewhere
later, or a URL spelling an address in hex, octal or decimal, or an IPv6 address carrying
an IPv4 one, does not get past them.
"""

from __future__ import annotations

import ipaddress
import unicodedata
from urllib.parse import urlsplit

__all__ = [
    "METADATA_ADDRESSES",
    "METADATA_NAMES",
    "Address",
    "address_refusal",
    "embedded_ipv4",
    "host_refusal",
    "idna_mapped",
    "literal_address",
    "url_host",
]

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

#: Cloud instance-metadata services (credentials live there): refused even for an
#: endpoint allowed the internal network. AWS, GCP and Azure's IMDS; AWS over IPv6; ECS
#: task metadata; Alibaba; Azure's wire server; Oracle's and DigitalOcean's are the first.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "fd00:ec2::254", "169.254.170.2", "100.100.100.200",
              "168.63.129.16")
)  # fmt: skip
#: Names of metadata services that resolve only inside a cloud (refused by name).
METADATA_NAMES = frozenset(
    {"metadata", "metadata.google.internal", "metadata.goog", "instance-data",
     "instance-data.ec2.internal"}
)  # fmt: skip

_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


#: What IDNA reads as a dot between labels (UTS 46, IDNA 2003): the ideographic full stop
#: and its half-width form (the full-width one is a dot after NFKC already).
_LABEL_DOTS = str.maketrans({"\u3002": ".", "\uff61": "."})


def idna_mapped(host: str) -> str:
    """``host`` as an HTTP client connects to it: IDNA's mapping (NFKC, its label dots,
    lower case), so ``①②⑦.0.0.1`` and ``127。0。0。1`` are the address they become
    (aiohttp's URL parser maps them so, and then connects without asking a resolver)."""
    return unicodedata.normalize("NFKC", host.translate(_LABEL_DOTS)).translate(_LABEL_DOTS).lower()


def url_host(url: str) -> str:
    """The host of ``url`` as a client connects to it (:func:`idna_mapped`), without
    brackets or a trailing dot."""
    return idna_mapped(urlsplit(url).hostname or "").rstrip(".")


def _ipv4_part(text: str) -> int:
    """One part of an IPv4 address as ``inet_aton`` reads it: ``0x`` hex, a leading ``0``
    octal, else decimal."""
    if text[:2].lower() == "0x":
        return int(text[2:], 16)  # "0x" alone is no number
    if len(text) > 1 and text.startswith("0"):
        return int(text[1:], 8)
    return int(text, 10)


def literal_address(host: str) -> Address | None:
    """The address ``host`` spells, in any form a resolver accepts (``127.0.0.1``,
    ``2130706433``, ``0x7f000001``, ``0177.0.0.1``, ``127.1``, ``[::1]``), or None for a
    name."""
    host = host.strip("[]").rstrip(".")
    try:
        return ipaddress.ip_address(host.split("%")[0])  # an IPv6 zone is not the address
    except ValueError:
        pass
    parts = host.split(".")
    if not 1 <= len(parts) <= 4 or not all(parts):
        return None
    try:
        values = [_ipv4_part(p) for p in parts]
    except ValueError:
        return None
    *leading, last = values
    if any(not 0 <= v <= 255 for v in leading) or not 0 <= last < 256 ** (5 - len(values)):
        return None
    number = 0
    for v in leading:
        number = number << 8 | v
    number = number << 8 * (5 - len(values)) | last
    return ipaddress.IPv4Address(number)


def embedded_ipv4(address: Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped, compatible, 6to4, Teredo, NAT64)."""
    if isinstance(address, ipaddress.IPv4Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in _NAT64 or (address in _IPV4_COMPATIBLE and int(address) > 1):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def _kind(address: Address) -> str | None:
    """What makes ``address`` not a public one (None: it is public)."""
    if address in METADATA_ADDRESSES:
        return "a cloud metadata address"
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address"
    if address.is_unspecified:
        return "an unspecified address"
    if address.is_multicast:
        return "a multicast address"
    if address.is_private:
        return "a private address"
    if not address.is_global:
        return "a reserved address"
    return None


#: What an endpoint allowed the internal network may reach: the operator's own networks.
#: A metadata service, an unspecified or a multicast address stay refused.
_INTERNAL = frozenset(
    {"a loopback address", "a link-local address", "a private address", "a reserved address"}
)


def address_refusal(address: Address, allow_internal: bool = False) -> str | None:
    """Why a webhook may not be sent to ``address`` (None: it may), judged first by the
    IPv4 address it carries, if any. ``allow_internal``: the endpoint may reach the
    operator's networks (loopback, private, link-local, reserved), never a metadata
    service."""
    carried = embedded_ipv4(address)
    for kind in (_kind(carried) if carried is not None else None, _kind(address)):
        if kind is None or (allow_internal and kind in _INTERNAL):
            continue
        shown = f"{address} (carrying {carried})" if carried is not None else str(address)
        return f"{shown} is {kind}"
    return None


def host_refusal(host: str, allow_internal: bool = False) -> str | None:
    """Why a webhook may not go to ``host`` as the URL names it, before resolving it: an
    address in any spelling (see :func:`address_refusal`), a metadata service's name, or
    ``localhost``, each read as a client connects to it (:func:`idna_mapped`). A name
    that passes here is checked again on what it resolves to."""
    written = host.strip("[]").rstrip(".")
    name = idna_mapped(written).rstrip(".")
    if not name:
        return "the URL has no host"
    address = literal_address(name)
    if address is not None:
        why = address_refusal(address, allow_internal)
        if why is not None and str(address) != written.lower():
            return f"{written} spells {why}"
        return why
    if name in METADATA_NAMES:
        return f"{name} is a cloud metadata service"
    if (name == "localhost" or name.endswith(".localhost")) and not allow_internal:
        return f"{name} is a loopback name"
    return None
