"""``runbook demo``: the local job on the embedded defaults, no Slack needed.

Ingests the bundled corpus (incrementally: a second run embeds nothing) and answers one sample
question per tenant, taken from the golden set beside it. It never prunes: ``DATABASE_URL`` may
point at a real store whose tenants share names with the demo corpus.
"""

from __future__ import annotations

from pathlib import Path

from rag.evaluation.evaluate import load_golden
from rag.runtime import open_runtime
from rag.settings import Settings
from rag.textout import format_ask_result, format_ingest_report

DEFAULT_GOLDEN = Path("evals/golden.jsonl")


async def run_demo(settings: Settings, corpus: Path, golden: Path = DEFAULT_GOLDEN) -> int:
    async with open_runtime(settings) as runtime:
        report = await runtime.ingest(corpus, tenant=None, prune=False, progress=True)
        print(format_ingest_report(report))
        samples: dict[str, str] = {}
        for golden_question in load_golden(golden):
            if golden_question.expect != "abstain" and golden_question.tenant in report.tenants:
                samples.setdefault(golden_question.tenant, golden_question.question)
        for tenant, text in samples.items():
            print(f"\n=== {tenant}: {text}")
            result = await runtime.service.ask(tenant, text)
            print(format_ask_result(result))
    return 1 if report.failed else 0
