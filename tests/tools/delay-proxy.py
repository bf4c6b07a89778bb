#!/usr/bin/env python3
"""delay-proxy: a TCP proxy that delays every byte by a fixed time.

    delay-proxy.py LISTEN_HOST:PORT TARGET_HOST:PORT DELAY_MS [PORT_FILE]

Each piece of data read from either side is written to the other side
DELAY_MS milliseconds after it arrived, in order, so a connection through
it has a round trip 2 x DELAY_MS longer and the same bandwidth.  It stands
in for network latency where `tc netem` is not available (no sch_netem
module).  Port 0 listens on a free port; its number is written to
PORT_FILE once the proxy accepts connections.
"""
import asyncio
import sys


async def pump(reader, writer, delay):
    """Copies reader to writer, each piece DELAY seconds after it came."""
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue()

    async def send():
        while True:
            due, data = await queue.get()
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if data is None:
                break
            writer.write(data)
            await writer.drain()
        try:
            writer.write_eof()
        except (OSError, RuntimeError):
            pass

    sender = asyncio.ensure_future(send())
    try:
        while True:
            data = await reader.read(1 << 20)
            queue.put_nowait((loop.time() + delay, data if data else None))
            if not data:
                break
    except (OSError, asyncio.IncompleteReadError):
        queue.put_nowait((loop.time() + delay, None))
    try:
        await sender
    except OSError:
        pass


async def serve(listen, target, delay, port_file):
    thost, tport = target.rsplit(":", 1)

    async def handle(client_r, client_w):
        try:
            server_r, server_w = await asyncio.open_connection(thost, int(tport))
        except OSError as e:
            print(f"delay-proxy: cannot connect to {target}: {e}", file=sys.stderr)
            client_w.close()
            return
        await asyncio.gather(pump(client_r, server_w, delay), pump(server_r, client_w, delay),
                             return_exceptions=True)
        for w in (client_w, server_w):
            w.close()

    lhost, lport = listen.rsplit(":", 1)
    server = await asyncio.start_server(handle, lhost, int(lport))
    if port_file:
        with open(port_file + ".tmp", "w") as f:
            f.write(f"{server.sockets[0].getsockname()[1]}\n")
        import os
        os.rename(port_file + ".tmp", port_file)
    async with server:
        await server.serve_forever()


def main():
    if len(sys.argv) not in (4, 5):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        sys.exit(64)
    delay = float(sys.argv[3]) / 1000.0
    asyncio.run(serve(sys.argv[1], sys.argv[2], delay, sys.argv[4] if len(sys.argv) == 5 else None))


if __name__ == "__main__":
    main()
