"""Kafka's clients: the producer, topic administration (limits, lag, drain), the topology,
the clients' security options and fetch sizes, a role held through a consumer group."""
