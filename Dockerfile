# Image of the turnstream CLI (worker, scheduler, ...); see docker-compose.yml.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
# Only what the package needs (no .venv/.cache/var from a developer checkout).
COPY pyproject.toml README.md ./
COPY turnstream ./turnstream
RUN pip install . && useradd --create-home --uid 10001 turnstream

USER turnstream
CMD ["turnstream", "--help"]
