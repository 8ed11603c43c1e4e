"""The socket ``ragloom serve`` listens on: the connections uvicorn's asyncio accepts from it
send small writes at once (TCP_NODELAY), so a kept-alive client does not wait for its own
delayed acknowledgement between a response's head and its body."""

from __future__ import annotations

import asyncio
import socket

import pytest

pytest.importorskip("fastapi", reason="needs the serve extra")

from ragloom.serve import listening_socket  # noqa: E402


def test_connections_accepted_by_asyncio_have_nodelay() -> None:
    sock = listening_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    seen: list[int] = []

    async def main() -> None:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            accepted = writer.get_extra_info("socket")
            seen.append(accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(handle, sock=sock)
        async with server:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            while not seen:
                await asyncio.sleep(0)
            writer.close()

    asyncio.run(main())
    assert seen and seen[0] != 0


def test_an_address_in_use_is_refused_with_the_os_error() -> None:
    first = listening_socket("127.0.0.1", 0)
    try:
        first.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 0)
        with pytest.raises(OSError):
            listening_socket("127.0.0.1", first.getsockname()[1])
    finally:
        first.close()
