"""Serving a fake API on 127.0.0.1 at a free port."""

from __future__ import annotations

from aiohttp import web


async def serve_on_loopback(app: web.Application) -> tuple[web.AppRunner, int]:
    """Start ``app`` on 127.0.0.1, port chosen by the OS; return its runner and port."""
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner, int(runner.addresses[0][1])
