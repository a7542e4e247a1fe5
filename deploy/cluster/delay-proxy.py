#!/usr/bin/env python3
"""A TCP proxy that delays every byte by a fixed time each way, in order: a network's round trip
between cluster nodes and PostgreSQL on one machine, whose kernel may have no `netem`. Each chunk
read is written to the other side `--delay-ms` after it arrived; chunks never overtake each other.
Runs until killed (SIGTERM or SIGINT).

    deploy/cluster/delay-proxy.py --listen 10.77.0.1:55435 --to 127.0.0.1:55434 --delay-ms 1
"""
import argparse
import asyncio
import signal


async def pump(reader, writer, delay):
    """Reads chunks and writes each `delay` seconds after it arrived, in order."""
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue()

    async def deliver():
        while True:
            due, chunk = await queue.get()
            if chunk is None:
                break
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(chunk)
            await writer.drain()

    delivering = asyncio.ensure_future(deliver())
    try:
        while True:
            chunk = await reader.read(65536)
            if not chunk:
                break
            queue.put_nowait((loop.time() + delay, chunk))
        queue.put_nowait((0, None))
        await delivering
    except (ConnectionError, asyncio.CancelledError):
        delivering.cancel()
    finally:
        try:
            writer.close()
        except ConnectionError:
            pass


async def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--listen", required=True, help="HOST:PORT to listen on")
    parser.add_argument("--to", required=True, help="HOST:PORT to connect each client to")
    parser.add_argument("--delay-ms", type=float, default=1.0, help="delay each way, in milliseconds (default 1)")
    args = parser.parse_args()
    listen_host, listen_port = args.listen.rsplit(":", 1)
    to_host, to_port = args.to.rsplit(":", 1)
    delay = args.delay_ms / 1000

    async def relay(client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection(to_host, int(to_port))
        except OSError:
            client_writer.close()
            return
        try:
            await asyncio.gather(pump(client_reader, server_writer, delay), pump(server_reader, client_writer, delay))
        except asyncio.CancelledError:
            pass  # one side went away (a database stopped by the fault round): both are closed

    server = await asyncio.start_server(relay, listen_host, int(listen_port))
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    async with server:
        await stop.wait()


if __name__ == "__main__":
    asyncio.run(main())
