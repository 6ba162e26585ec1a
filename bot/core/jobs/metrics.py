"""The work queue's Prometheus metrics: depth, age of the oldest job, re-runs and dead jobs.

Registered on the bot's registry, so ``/metrics`` shows them with the rest. Gauges are
read from the database when ``/metrics`` is scraped (``bot.core.jobs.upkeep``; the whole
queue, not this process's share of it); counters are this process's own.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge

from bot.core.jobs.queue import QueueStats


class JobMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.depth = Gauge(
            "runbook_jobs_depth",
            "Unfinished jobs in the queue, by state (queued: waiting; running: leased).",
            ["state"],
            registry=registry,
        )
        for state in ("queued", "running"):
            self.depth.labels(state)  # exposed (as 0) before the first refresh
        self.oldest_age = Gauge(
            "runbook_jobs_oldest_age_seconds",
            "Age of the oldest unfinished job (0 when the queue is empty).",
            registry=registry,
        )
        self.dead_kept = Gauge(
            "runbook_jobs_dead",
            "Jobs that ended in the 'could not answer in time' card, within the retention window.",
            registry=registry,
        )
        self.held = Gauge(
            "runbook_jobs_held_claims",
            "Acked deliveries whose claim this process could not write yet (database slow/down).",
            registry=registry,
        )
        self.runs = Counter(
            "runbook_jobs_runs",
            "Jobs this process ran, by kind and outcome (done, retry, dead, released).",
            ["kind", "outcome"],
            registry=registry,
        )
        self.reruns = Counter(
            "runbook_jobs_retried",
            "Claims of a job that had been claimed before (its worker died, or it failed).",
            registry=registry,
        )

    def observe(self, stats: QueueStats, *, held: int) -> None:
        self.depth.labels("queued").set(stats.queued)
        self.depth.labels("running").set(stats.running)
        self.oldest_age.set(stats.oldest_age_s)
        self.dead_kept.set(stats.dead)
        self.held.set(held)
