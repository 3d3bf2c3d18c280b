"""Where a webhook may go: hostile hosts, in every spelling a resolver accepts, refused;
public ones pass; an endpoint allowed the internal network reaches it, never a metadata
service."""

from __future__ import annotations

import ipaddress
import socket

import pytest

from turnstream.core.destinations import (
    address_refusal,
    embedded_ipv4,
    host_refusal,
    literal_address,
    url_host,
)

#: Hosts as a URL may spell them, and what they are. Each spelling is one the system's
#: resolver maps to the address (checked below with inet_aton where it applies).
HOSTILE = {
    "127.0.0.1": "loopback",
    "127.1": "loopback",
    "2130706433": "loopback",  # decimal
    "0x7f000001": "loopback",  # hex
    "0x7f.0x0.0x0.0x1": "loopback",
    "0177.0.0.1": "loopback",  # octal
    "017700000001": "loopback",
    "127.0.0.1.": "loopback",  # a trailing dot
    "[::1]": "loopback",
    "::ffff:127.0.0.1": "loopback",  # IPv4-mapped
    "::ffff:7f00:1": "loopback",
    "::127.0.0.1": "loopback",  # IPv4-compatible (deprecated)
    "64:ff9b::7f00:1": "loopback",  # NAT64
    "2002:7f00:1::": "loopback",  # 6to4
    "localhost": "loopback name",
    "LOCALHOST.": "loopback name",
    "desk.localhost": "loopback name",
    "0.0.0.0": "unspecified",
    "0": "unspecified",
    "::": "unspecified",
    "10.0.0.1": "private",
    "0xa000001": "private",
    "172.16.5.4": "private",
    "192.168.1.1": "private",
    "3232235777": "private",  # 192.168.1.1
    "fc00::1": "private",
    "fd12:3456::1": "private",
    "::ffff:10.1.2.3": "private",
    "100.64.0.1": "reserved",  # carrier-grade NAT
    "192.0.2.1": "private",  # documentation (TEST-NET-1)
    "224.0.0.1": "multicast",
    "ff02::1": "multicast",
    "169.254.1.1": "link-local",
    "fe80::1": "link-local",
    "169.254.169.254": "metadata",
    "0xa9fea9fe": "metadata",  # 169.254.169.254 in hex
    "2852039166": "metadata",  # and in decimal
    "0251.0376.0251.0376": "metadata",  # and in octal
    "::ffff:169.254.169.254": "metadata",
    "fd00:ec2::254": "metadata",
    "100.100.100.200": "metadata",
    "168.63.129.16": "metadata",
    "metadata.google.internal": "metadata service",
    "metadata": "metadata service",
    "instance-data": "metadata service",
    # Spellings IDNA maps to an address or a name (aiohttp's URL parser does, then
    # connects to the address without a resolver): enclosed and full-width digits,
    # ideographic dots, circled letters.
    "①②⑦.0.0.1": "loopback",
    "127。0。0。1": "loopback",
    "127｡0｡0｡1": "loopback",
    "１２７．０．０．１": "loopback",  # noqa: RUF001 (full-width: the point)
    "ⓛⓞⓒⓐⓛⓗⓞⓢⓣ": "loopback name",
    "①⑥⑨.②⑤④.①⑥⑨.②⑤④": "metadata",
    "ｍｅｔａｄａｔａ.google.internal": "metadata service",  # noqa: RUF001
}

PUBLIC = ["93.184.216.34", "hooks.example.com", "2606:2800:220:1:248:1893:25c8:1946",
          "8.8.8.8", "desk.example.org.", "1.1.1.1"]  # fmt: skip


@pytest.mark.parametrize(("host", "kind"), sorted(HOSTILE.items()))
def test_every_hostile_spelling_is_refused_naming_what_it_is(host: str, kind: str) -> None:
    why = host_refusal(host)
    assert why is not None, host
    assert kind in why, why


@pytest.mark.parametrize("host", PUBLIC)
def test_public_hosts_pass(host: str) -> None:
    assert host_refusal(host) is None
    assert host_refusal(host, allow_internal=True) is None


@pytest.mark.parametrize(
    ("host", "kind"), sorted((h, k) for h, k in HOSTILE.items() if "metadata" not in k)
)
def test_an_endpoint_allowed_the_internal_network_reaches_it(host: str, kind: str) -> None:
    if kind in ("multicast", "unspecified"):
        assert host_refusal(host, allow_internal=True) is not None  # not a network of yours
    else:
        assert host_refusal(host, allow_internal=True) is None


@pytest.mark.parametrize("host", sorted(h for h, k in HOSTILE.items() if "metadata" in k))
def test_a_metadata_service_is_refused_even_to_the_internal_network(host: str) -> None:
    why = host_refusal(host, allow_internal=True)
    assert why is not None and "metadata" in why


@pytest.mark.parametrize(
    "host",
    [h for h in HOSTILE if h.isascii() and h.replace(".", "").replace("x", "").isalnum()
     and ":" not in h
     and h.rstrip(".")[:1].isdigit()],
)  # fmt: skip
def test_the_ipv4_spellings_are_read_as_the_system_reads_them(host: str) -> None:
    name = host.rstrip(".")
    assert literal_address(name) == ipaddress.IPv4Address(socket.inet_aton(name))


@pytest.mark.parametrize(
    "host", ["1.2.3.4.5", "256.1.1.1", "1.2.3.256", "0x", "08.1.1.1", "example.com", "1..2", ""]
)
def test_names_and_impossible_numbers_are_not_addresses(host: str) -> None:
    assert literal_address(host) is None
    if host:
        with pytest.raises(OSError):
            socket.inet_aton(host)


def test_an_ipv6_address_is_judged_by_the_ipv4_address_it_carries() -> None:
    mapped = ipaddress.ip_address("::ffff:8.8.8.8")
    assert embedded_ipv4(mapped) == ipaddress.ip_address("8.8.8.8")
    teredo = ipaddress.ip_address("2001:0:4136:e378:8000:63bf:80ff:fffe")  # client 127.0.0.1
    assert embedded_ipv4(teredo) == ipaddress.ip_address("127.0.0.1")
    why = address_refusal(teredo)
    assert why is not None and "carrying 127.0.0.1" in why
    assert embedded_ipv4(ipaddress.ip_address("2606:4700::1111")) is None


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("http://user:pw@[::ffff:127.0.0.1]:8080/x", "::ffff:127.0.0.1"),
        ("https://desk.example.com@169.254.169.254/latest", "169.254.169.254"),
        ("http://HOOKS.Example.COM./h", "hooks.example.com"),
        ("http://①②⑦.0.0.1:8080/h", "127.0.0.1"),
        ("http://127。0。0。1/h", "127.0.0.1"),
    ],
)
def test_the_host_is_the_one_a_client_connects_to(url: str, host: str) -> None:
    assert url_host(url) == host
    if host != "hooks.example.com":
        assert host_refusal(url_host(url)) is not None
