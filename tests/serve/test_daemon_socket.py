import asyncio
import socket

from serve.daemon import bind
from serve.errors import PortInUseError
from tests.support.daemon import free_port


def test_accepted_connections_get_tcp_nodelay_so_small_responses_are_not_held_back() -> None:
    listener = bind("127.0.0.1", free_port())

    async def accept_one() -> int:
        accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            sock = writer.get_extra_info("socket")
            accepted.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(on_connect, sock=listener)
        _, writer = await asyncio.open_connection("127.0.0.1", listener.getsockname()[1])
        value = await asyncio.wait_for(accepted, timeout=5)
        writer.close()
        server.close()
        await server.wait_closed()
        return value

    assert asyncio.run(accept_one()) != 0


def test_binding_a_taken_port_is_a_clear_error() -> None:
    first = bind("127.0.0.1", free_port())
    try:
        port = first.getsockname()[1]
        try:
            bind("127.0.0.1", port)
        except PortInUseError as exc:
            assert f"127.0.0.1:{port} is already in use" in exc.message
        else:
            raise AssertionError("a second bind on a taken port succeeded")
    finally:
        first.close()
