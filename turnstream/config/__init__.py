"""The configuration: one frozen, validated settings object, read from one TOML file.

``load_settings`` reads it; nothing else in the product reads the environment.
"""

from turnstream.config.derivation import SignalsConfig
from turnstream.config.settings import (
    MAX_BATCH_SIZE,
    ApiSettings,
    BrokerSecurity,
    BrokerSettings,
    Feature,
    IdentitySettings,
    JobsSettings,
    RuleConfig,
    Settings,
    SpaceConfig,
    SqlSettings,
    StoreSettings,
    WebhookConfig,
    WorkerSettings,
    exposure_keys_variable,
    load_settings,
    producer_keys_variable,
    webhook_secret_variable,
)

__all__ = [
    "MAX_BATCH_SIZE",
    "ApiSettings",
    "BrokerSecurity",
    "BrokerSettings",
    "Feature",
    "IdentitySettings",
    "JobsSettings",
    "RuleConfig",
    "Settings",
    "SignalsConfig",
    "SpaceConfig",
    "SqlSettings",
    "StoreSettings",
    "WebhookConfig",
    "WorkerSettings",
    "exposure_keys_variable",
    "load_settings",
    "producer_keys_variable",
    "webhook_secret_variable",
]
