# Image of the turnstream CLI (worker, scheduler, ...); see docker-compose.yml.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
# Only what the package needs (no .venv/.cache/var from a developer checkout:
# .dockerignore keeps them, and the secret, out of the build context).
COPY pyproject.toml README.md ./
COPY turnstream ./turnstream
# var/: Faust's data directory with a ClickHouse server (worker.data_dir's default,
# var/faust, relative to /app), writable by the user the containers run as; var/keys/:
# the API keys, where compose mounts its api-keys volume (a new named volume takes the
# image directory's owner, so the keys service can write there).
RUN pip install ".[worker]" && useradd --create-home --uid 10001 turnstream \
    && mkdir -p /app/var/keys && chown -R turnstream:turnstream /app/var
# The documents the configuration names by relative path (examples/measurement.toml),
# and a default configuration: compose mounts deploy/turnstream.toml over it.
COPY examples ./examples
COPY deploy/turnstream.toml /etc/turnstream/turnstream.toml
ENV TURNSTREAM_CONFIG=/etc/turnstream/turnstream.toml

USER turnstream
CMD ["turnstream", "--help"]
