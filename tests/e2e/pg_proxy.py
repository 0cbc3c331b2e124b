"""A TCP proxy in front of PostgreSQL that a test controls: a host reaching the database through
it can be cut off (its connections closed, new ones refused) and let back in — a partition."""

from __future__ import annotations

import contextlib
import socket
import threading


class PgProxy:
    def __init__(self, target_port: int, *, host: str = "127.0.0.1") -> None:
        self._target = (host, target_port)
        self._listener = socket.create_server((host, 0))
        self.port = int(self._listener.getsockname()[1])
        self._blocked = threading.Event()
        self._closed = False
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._lock = threading.Lock()
        self.connections = 0
        threading.Thread(target=self._accept, name="pg-proxy", daemon=True).start()

    def block(self) -> None:
        """Cut off: every connection through the proxy is closed, new ones are closed at once."""
        self._blocked.set()
        with self._lock:
            for pair in self._pairs:
                for sock in pair:
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_RDWR)
                    sock.close()
            self._pairs.clear()

    def unblock(self) -> None:
        self._blocked.clear()

    def close(self) -> None:
        self._closed = True
        self.block()
        # shutdown wakes the thread blocked in accept(): a bare close would leave the socket listening
        # inside that call, and a later proxy bound to the same port would lose connections to it
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._connect, args=(client,), daemon=True).start()

    def _connect(self, client: socket.socket) -> None:
        if self._blocked.is_set():
            client.close()
            return
        try:
            upstream = socket.create_connection(self._target, timeout=5)
            upstream.settimeout(None)
        except OSError:
            client.close()
            return
        with self._lock:
            if self._blocked.is_set():  # cut off while this one was connecting
                client.close()
                upstream.close()
                return
            self._pairs.append((client, upstream))
            self.connections += 1
        for source, sink in ((client, upstream), (upstream, client)):
            threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            with self._lock:
                self._pairs = [p for p in self._pairs if source not in p]
