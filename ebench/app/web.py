"""`ebench play --web`: the app served as a web page by textual-serve, each browser tab running its
own `ebench play` process (the app itself is unchanged: Textual's web driver draws it in the page)."""

from __future__ import annotations

import asyncio
import logging
import shlex
import socket
import sys
from typing import Any


class WebServeError(Exception):
    """The server cannot start (an address in use, an unknown host); the message is the one line to print."""


def play_command_line(play_args: list[str]) -> str:
    """The shell command run for each browser connection: `ebench play` with `play_args`, by this
    interpreter (so the served app is this installation, whatever PATH says)."""
    return shlex.join([sys.executable, "-m", "ebench", "play", *play_args])


def unusable(host: str, port: int, exc: OSError) -> WebServeError:
    return WebServeError(f"cannot serve on {host}:{port}: {exc.strerror}; choose another --port")


def check_address(host: str, port: int) -> None:
    """Refuse, before anything is printed, an address the server could not listen on."""
    try:
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise WebServeError(f"--host {host}: {exc.strerror}") from None
    for family, kind, proto, _, address in addresses:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as aiohttp will: a port in TIME_WAIT is free
            try:
                probe.bind(address)
            except OSError as exc:
                raise unusable(host, port, exc) from None


def serve(play_args: list[str], host: str, port: int) -> None:
    """Serve `ebench play <play_args>` on http://host:port until Ctrl+C (or SIGTERM), then return.
    Raises WebServeError when the address cannot be listened on."""
    from textual_serve.server import Server

    announcement = (
        f"ebench in the browser: http://{host}:{port}, each tab running {shlex.join(['ebench', 'play', *play_args])} (Ctrl+C stops)"
    )

    class EBenchServer(Server):
        def __init__(self, command: str, **options: Any) -> None:
            super().__init__(command, **options)
            self.open_tabs: set[asyncio.Task[Any]] = set()

        def initialize_logging(self) -> None:
            # Warnings and errors only (an app process that failed to start): not a line per request.
            logging.basicConfig(level=logging.WARNING, format="%(message)s")

        async def on_startup(self, app: Any) -> None:
            print(announcement, flush=True)

        async def handle_websocket(self, request: Any) -> Any:
            tab = asyncio.current_task()
            assert tab is not None
            self.open_tabs.add(tab)
            try:
                return await super().handle_websocket(request)
            finally:
                self.open_tabs.discard(tab)

        async def on_shutdown(self, app: Any) -> None:
            # A cancelled tab tells its app to quit and waits for it (textual-serve's own handling). Left
            # open, a tab would hold the server for aiohttp's shutdown timeout, and its app process
            # would outlive the event loop (a traceback at exit).
            for tab in self.open_tabs:
                tab.cancel()
            await asyncio.gather(*self.open_tabs, return_exceptions=True)

    check_address(host, port)
    server = EBenchServer(play_command_line(play_args), host=host, port=port, title="ebench")
    try:
        server.serve()
    except OSError as exc:  # taken between the check and the bind
        raise unusable(host, port, exc) from None
