"""The worker's HTTP API: the routes, the middleware that checks API keys, request bodies,
the console, `/v1/status`, the OpenAPI document."""
