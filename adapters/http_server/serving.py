"""A small TCP server on the standard library's asyncio, run on an event loop and a thread of its own:
what the webhook receiver and the fleet page share below their HTTP.

The socket is bound when the server is made (a port in use fails there, not on the thread). At most
`max_connections` connections are served at once, and one more is answered `_busy()` and closed
without a read; a connection that fails ends alone. Each is read through a buffer of `max_head`
bytes (a longer request head is the reader's `LimitOverrunError`). Connections are read by the one
event loop, so an idle one costs a socket, not a thread."""

from __future__ import annotations

import asyncio
import logging
import socket
import threading

_log = logging.getLogger(__name__)


class LoopServer:
    """A subclass answers one connection in `_serve_one` and says in `_busy` what one over the cap
    is told."""

    def __init__(self, *, host: str, port: int, max_connections: int, max_head: int, name: str) -> None:
        self._max_connections, self._max_head, self._name = max_connections, max_head, name
        self._socket = socket.create_server((host, port))  # bound now: a port in use fails here
        self._loop = asyncio.new_event_loop()
        self._thread: threading.Thread | None = None
        self.open_connections = 0  # changed only on the loop's thread

    async def _serve_one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError

    def _busy(self) -> bytes:
        raise NotImplementedError

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._socket.getsockname()[:2]
        return str(host), int(port)

    def start(self) -> None:
        ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(ready,), name=self._name, daemon=True)
        self._thread.start()
        ready.wait()

    def stop(self) -> None:
        if self._thread is None:
            self._socket.close()
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()

    def _serve(self, ready: threading.Event) -> None:
        loop = self._loop
        asyncio.set_event_loop(loop)
        server = loop.run_until_complete(
            asyncio.start_server(self._connection, sock=self._socket, limit=self._max_head)
        )
        ready.set()
        try:
            loop.run_forever()
        finally:
            server.close()
            pending = asyncio.all_tasks(loop)
            for task in pending:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.close()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.open_connections >= self._max_connections:
            writer.write(self._busy())
            writer.close()
            return
        self.open_connections += 1
        try:
            await self._serve_one(reader, writer)
        except (ConnectionError, OSError) as error:
            _log.debug("%s: connection dropped: %s", self._name, error)
        finally:
            self.open_connections -= 1
            writer.close()
