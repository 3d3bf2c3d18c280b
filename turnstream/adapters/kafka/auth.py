"""The keyword arguments every aiokafka client of this process gets from
``[broker.security]``: SASL credentials and a TLS context (docs/security.md).

One function, so that no client (the loops' consumers and producers, the admin calls, the
producer SDK, the CLI's lag and drain) can be built without them."""

from __future__ import annotations

import ssl
from typing import Any

from turnstream.config import BrokerSecurity, Settings
from turnstream.errors import ConfigError

__all__ = ["client_options", "ssl_context"]


def ssl_context(security: BrokerSecurity) -> ssl.SSLContext:
    """The TLS context of ``security``: the broker's certificate verified against
    ``ssl_cafile`` (or the system's CAs), with a client certificate when configured."""
    try:
        context = ssl.create_default_context(cafile=security.ssl_cafile)
        if security.ssl_certfile is not None:
            password = security.ssl_key_password
            context.load_cert_chain(
                security.ssl_certfile,
                security.ssl_keyfile,
                password.get_secret_value() if password is not None else None,
            )
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"broker.security: cannot load the TLS files: {exc}") from None
    context.check_hostname = security.ssl_check_hostname
    return context


def client_options(settings: Settings) -> dict[str, Any]:
    """``security_protocol`` and, as configured, the SASL mechanism and credentials and
    the ``ssl_context``: to splat into any aiokafka client (nothing for PLAINTEXT)."""
    security = settings.broker.security
    if security.protocol == "PLAINTEXT":
        return {}
    options: dict[str, Any] = {"security_protocol": security.protocol}
    if security.protocol.startswith("SASL_"):
        assert security.password is not None  # the section's validator
        options.update(
            sasl_mechanism=security.mechanism,
            sasl_plain_username=security.username,
            sasl_plain_password=security.password.get_secret_value(),
        )
    if security.tls:
        options["ssl_context"] = ssl_context(security)
    return options
