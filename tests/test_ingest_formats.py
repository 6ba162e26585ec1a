"""`runbook ingest` finds reStructuredText, AsciiDoc and HTML runbooks beside Markdown, and the
ask pipeline answers from them; a file that cannot be parsed fails alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag import FastEmbedder, RagService, Settings, Store, ingest_limits, ingest_path
from rag.answering.answerers import ExtractiveAnswerer
from rag.ingest.files import path_document_id, scan_folder

MARKDOWN = """\
# Disk full on a build agent

## Mitigation

Remove docker images older than a week with docker image prune, then grow the volume by 20%.
"""

RST = """\
:service: analytics

Analytics replica lag
=====================

Reports on the analytics replica show stale numbers when WAL replay falls behind.

Reduce replica lag
------------------

Long analytical queries block WAL replay. Cap how long replay may wait for them:

.. code-block:: sql

   ALTER SYSTEM SET max_standby_streaming_delay = '30s';
   SELECT pg_reload_conf();
"""

ADOC = """\
= Dispatch consumer lag
:service: dispatch

== Scale the consumers

The dispatch.assignments topic has 12 partitions, so replicas beyond 12 consumers sit idle.

[source,bash]
----
kubectl -n dispatch scale deploy/dispatch-planner --replicas=12
----
"""

HTML = """\
<!DOCTYPE html>
<html><head><title>SMS provider outage</title><meta name="service" content="notify"></head>
<body>
<h1>SMS provider outage</h1>
<p>Delivery-day texts arrive late or not at all when Textwell has an outage.</p>
<h2>Fail over to the secondary provider</h2>
<p>Switch the SMS channel to SignalPost as the primary provider:</p>
<pre><code class="language-bash">notifyctl provider set --channel sms \\
  --primary signalpost --secondary textwell</code></pre>
</body></html>
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_every_runbook_format_is_listed_and_named_without_its_suffix(tmp_path: Path) -> None:
    for name in ("a.md", "b/c.rst", "b/d.adoc", "e.html", "f.htm", "g.markdown"):
        write(tmp_path / name, "x")
    for name in ("notes.txt", "h.RST", "image.png", "page.html.bak"):
        write(tmp_path / name, "x")
    (tmp_path / "link.rst").symlink_to(tmp_path / "a.md")
    listing = scan_folder(tmp_path)
    assert [path_document_id(tmp_path, p) for p in listing.files] == [
        "a", "b/c", "b/d", "e", "f", "g",
    ]  # fmt: skip
    assert [s.path.name for s in listing.skipped] == ["link.rst"]


@pytest.mark.slow  # embeds four runbooks with the real model
async def test_a_tenant_of_four_formats_is_ingested_and_answered_from_each(
    store: Store, embedder: FastEmbedder, settings: Settings, unique_tenant: str, tmp_path: Path
) -> None:
    write(tmp_path / "db" / "disk-full.md", MARKDOWN)
    write(tmp_path / "db" / "replica-lag.rst", RST)
    write(tmp_path / "dispatch" / "consumer-lag.adoc", ADOC)
    write(tmp_path / "notify" / "sms-outage.html", HTML)
    write(tmp_path / "notify" / "empty-page.html", "<html><body><img src=x></body></html>")
    write(tmp_path / "broken.html", "<div>" * 300 + "deep" + "</div>" * 300)

    report = await ingest_path(
        store,
        embedder,
        tmp_path,
        tenant=unique_tenant,
        prune=False,
        limits=ingest_limits(settings),
    )

    assert report.added == 4
    assert [(Path(f.path).name, f.reason) for f in report.failed] == [
        ("broken.html", "unreadable HTML: elements nested too deeply")
    ]
    assert [(Path(s.path).name, s.reason) for s in report.skipped] == [
        ("empty-page.html", "no text to index")
    ]
    service = RagService(
        store=store, embedder=embedder, answerer=ExtractiveAnswerer(), settings=settings
    )
    cases = {
        "analytics replica reports are stale, how long may WAL replay wait for queries?": (
            "db/replica-lag",
            "max_standby_streaming_delay",
        ),
        "texts are not being delivered by textwell, how do I switch SMS to the other vendor?": (
            "notify/sms-outage",
            "--primary signalpost",
        ),
    }
    for question, (document_id, snippet) in cases.items():
        result = await service.ask(unique_tenant, question)
        assert result.status == "answered", (question, result.reason_code)
        first = result.citations[0].evidence
        assert first.document_id == document_id, (question, result.answer)
        assert snippet in first.content
        assert result.evidence[0].document_id == document_id
