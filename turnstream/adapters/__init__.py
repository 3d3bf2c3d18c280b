"""What turnstream talks to: Kafka (:mod:`.kafka`), ClickHouse (:mod:`.clickhouse`), webhook
receivers (:mod:`.webhooks`), the API keys file, JSONL files, a running worker."""
