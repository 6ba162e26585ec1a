"""``runbook bench ingest|scale|peer|embed``: the benchmark command, added to ``runbook`` by
``bot.cli`` so the core's own command line never imports benchmark code."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.quiet import QuietRules

if TYPE_CHECKING:
    from rag import Settings


def add_bench_command(commands: Any) -> None:
    """Register ``bench`` on the subcommand action of ``rag.build_parser()``."""
    bench = commands.add_parser("bench", help="benchmarks that print JSON")
    bench.add_argument("name", choices=["ingest", "scale", "peer", "embed"])
    bench.add_argument(
        "--corpus",
        type=Path,
        default=Path("corpus"),
        help="ingest: a folder of tenant folders (the GitLab runbooks: evals/collections/gitlab)",
    )
    bench.add_argument(
        "--modes",
        default="old,new",
        help="ingest: which settings to measure, each in its own process (comma-separated)",
    )
    bench.add_argument("--output", type=Path, default=Path("bench/results"))
    bench.add_argument("--chunks", type=int, default=100_000, help="scale, peer: store size")
    bench.add_argument("--tenants", type=int, default=1000, help="scale, peer: tenant count")
    bench.add_argument("--queries", type=int, default=50, help="scale, peer: per size bucket")
    bench.add_argument("--warmup", type=int, default=5, help="scale, peer: untimed per bucket")
    bench.add_argument("--seed", type=int, default=7, help="scale, peer: synthetic data seed")
    bench.add_argument(
        "--rebuild", action="store_true", help="scale, peer: reload even if the store exists"
    )
    bench.add_argument(
        "--variants",
        default="all",
        help="scale: labelled alternatives to measure (comma-separated), 'all' or 'none'",
    )
    bench.add_argument(
        "--load-only",
        action="store_true",
        help="scale, peer: load the store (or reuse it) and stop before measuring",
    )
    bench.add_argument(
        "--max-load",
        type=float,
        default=0.1,
        help="scale, peer: measure only when the 1-minute load average is under this",
    )
    bench.add_argument(
        "--wait-quiet",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="scale, peer: wait up to this long for the load average to fall under --max-load",
    )
    bench.add_argument(
        "--max-foreign-cpu",
        type=float,
        default=0.05,
        help="scale, peer: CPU other processes may use while measuring, as a share of one "
        "core; above it the result is written with valid=false and the command exits 1",
    )
    bench.add_argument("--questions", type=int, default=200, help="embed, ingest: single questions")
    bench.add_argument("--batch-texts", type=int, default=256, help="embed: ~250-token texts")


async def bench_command(args: argparse.Namespace, settings: Settings) -> int:
    # A benchmark's modules load only when it runs, so no other command pays for them.
    if args.name == "scale":
        from bench.scale import run_scale_benchmark
        from bench.scale_variants import VARIANTS

        every = ",".join(VARIANTS)
        chosen = {"all": every, "none": ""}.get(args.variants, args.variants)
        return await run_scale_benchmark(
            settings,
            **_synthetic_options(args),
            variants=[name for name in chosen.split(",") if name],
        )
    if args.name == "peer":
        from bench.peer import run_peer_benchmark

        return await run_peer_benchmark(settings, **_synthetic_options(args))
    if args.name == "embed":
        from bench.embed import run_embed_benchmark

        return await run_embed_benchmark(
            settings, questions=args.questions, batch_texts=args.batch_texts, output=args.output
        )
    from bench.ingest import run_ingest_benchmark

    modes = [mode for mode in args.modes.split(",") if mode]
    if not set(modes) <= {"old", "new"}:
        raise SystemExit("bench ingest: --modes takes old, new or both")
    return await run_ingest_benchmark(
        settings, corpus=args.corpus, modes=modes, questions=args.questions, output=args.output
    )


def _synthetic_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options the scale and peer benchmarks share: the same synthetic store and queries."""
    return {
        "chunks": args.chunks,
        "tenants": args.tenants,
        "queries": args.queries,
        "warmup": args.warmup,
        "seed": args.seed,
        "rebuild": args.rebuild,
        "output": args.output,
        "load_only": args.load_only,
        "rules": QuietRules(
            max_load=args.max_load,
            wait_seconds=args.wait_quiet,
            max_foreign_cpu=args.max_foreign_cpu,
        ),
    }
