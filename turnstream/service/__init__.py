"""The use cases, each written once against small ports (:mod:`.ports`): ingesting a
batch (:mod:`.ingest`), deriving what is due (:mod:`.derive`) and serving the
constraints block (:mod:`.block`); what a use case refuses is said by kind
(:mod:`.errors`, :mod:`.spaces`). The Kafka loop, the replay and the HTTP routes are
adapters that hand them their work; the sinks provide the ports. Nothing here imports
Kafka, Faust or aiohttp.
"""
