"""A bounded soak: hostile clients of every kind the outside attack used, against a real
`checkmark serve` on 127.0.0.1, while 200 well-behaved clients keep receiving. Run by scripts/soak.sh.

Phases: setup; a baseline (well-behaved clients only); the attack (the same load plus every hostile
kind at once); a quiet tail. Checks: every well-behaved client received every message of its channel
exactly once and in order; delivery p99 under attack within a bound; /healthz answered within a
second throughout; each hostile kind got the documented answer; the server's RSS and descriptors
return near where they started. Prints `soak: N passed, M failed` and exits non-zero on a failure."""

import argparse
import asyncio
import base64
import hashlib
import hmac
import json
import os
import random
import resource
import socket
import struct
import sys
import time
import urllib.parse

import websockets

KEY = "soak-key"
SECRET = "soak-secret-used-only-by-the-soak-test"


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def token(claims):
    head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64(json.dumps(claims).encode())
    signature = hmac.new(SECRET.encode(), f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64(signature)}"


SERVER = token({"server": True})


def frame(payload, opcode=1):
    """One masked client frame (RFC 6455 section 5.3)."""
    mask = os.urandom(4)
    head = bytes([0x80 | opcode])
    n = len(payload)
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 65536:
        head += bytes([0x80 | 126]) + struct.pack("!H", n)
    else:
        head += bytes([0x80 | 127]) + struct.pack("!Q", n)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def connect_query(user, bad_token=False):
    return urllib.parse.urlencode({
        "json": json.dumps({"user_id": user, "user_details": {"id": user}}),
        "api_key": KEY, "authorization": token({"user_id": "someone-else" if bad_token else user}),
        "stream-auth-type": "jwt"})


class Soak:
    def __init__(self, port, pid, args):
        self.port, self.pid, self.args = port, pid, args
        self.results = []
        self.outcomes = {}
        self.latencies = {"baseline": [], "attack": []}
        self.phase = "setup"
        self.received = {}
        self.sent = {}
        self.health_worst = 0.0
        self.sending = True

    def check(self, ok, what):
        self.results.append(ok)
        print(f"soak: {'ok  ' if ok else 'FAIL'} {what}", flush=True)

    def outcome(self, kind, answer):
        self.outcomes.setdefault(kind, {})
        self.outcomes[kind][answer] = self.outcomes[kind].get(answer, 0) + 1

    # --- the server's process

    def sample(self):
        with open(f"/proc/{self.pid}/status") as status:
            rss = next(int(line.split()[1]) for line in status if line.startswith("VmRSS")) * 1024
        return rss, len(os.listdir(f"/proc/{self.pid}/fd"))

    # --- HTTP without a library: exactly the bytes chosen

    async def http(self, method, path, body=None, token_=SERVER, raw=None):
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else b"")
        sep = "&" if "?" in path else "?"
        head = (f"{method} {path}{sep}api_key={KEY} HTTP/1.1\r\nHost: x\r\nAuthorization: {token_}\r\n"
                f"stream-auth-type: jwt\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\nConnection: close\r\n\r\n")
        writer.write(head.encode() + data)
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), 30)
        writer.close()
        status = int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1") else 0
        return status, answer.partition(b"\r\n\r\n")[2]

    async def setup(self):
        users = {f"good{i}": {"id": f"good{i}"} for i in range(200)}
        users.update({f"bad{i}": {"id": f"bad{i}"} for i in range(100)})
        status, _ = await self.http("POST", "/users", {"users": users})
        assert status == 200, status
        self.channels = [f"soak{c}" for c in range(10)]
        for c, cid in enumerate(self.channels):
            members = [f"good{c * 20 + i}" for i in range(20)] + [f"bad{c * 10 + i}" for i in range(10)]
            status, _ = await self.http("POST", f"/channels/messaging/{cid}/query",
                                        {"data": {"members": members, "created_by_id": members[0]}})
            assert status == 200, status
            self.sent[cid] = []

    # --- well-behaved clients

    async def good_client(self, index, ready):
        user = f"good{index}"
        cid = f"messaging:{self.channels[index // 20]}"
        async with websockets.connect(f"ws://127.0.0.1:{self.port}/connect?{connect_query(user)}", max_size=None) as ws:
            assert json.loads(await ws.recv())["type"] == "health.check"
            await ws.send(json.dumps({"type": "watch", "cid": cid, "request_id": "w"}))
            got = self.received.setdefault(user, [])
            ready.set_result(None) if not ready.done() else None
            try:
                async for text in ws:
                    event = json.loads(text)
                    if event.get("type") == "message.new":
                        message = event["message"]
                        got.append(message["id"])
                        sent_at = float(message["text"].split()[1])
                        self.latencies.setdefault(self.phase, []).append(time.time() - sent_at)
                        if random.random() < 0.05:
                            await ws.send(json.dumps({"type": "mark_read", "cid": cid}))
            except websockets.ConnectionClosed:
                pass

    async def senders(self):
        n = 0
        while self.sending:
            started = time.time()
            for c, channel in enumerate(self.channels):
                n += 1
                message_id = f"{channel}-{n}"
                self.sent[channel].append(message_id)
                status, _ = await self.http("POST", f"/channels/messaging/{channel}/message", {
                    "message": {"id": message_id, "text": f"t {time.time():.6f}", "user_id": f"good{c * 20}"}})
                if status != 200:
                    self.sent[channel].pop()
                    self.outcome("well-behaved sender", f"HTTP {status}")
            await asyncio.sleep(max(0, 1 / self.args.rate - (time.time() - started)))

    def health(self):
        """Polls /healthz from its own thread (so that the soak's own event loop, busy with hundreds
        of clients, does not count as the server's latency), every 0.5 s."""
        import urllib.request
        while self.sending:
            started = time.time()
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=5) as answer:
                    ok = answer.status == 200
            except Exception:
                ok = False
            elapsed = time.time() - started
            if elapsed > self.health_worst:
                self.health_worst_phase = self.phase
            self.health_worst = max(self.health_worst, elapsed if ok else 5.0)
            time.sleep(0.5)

    # --- hostile clients, each kind bounded

    async def slowloris(self, count, seconds):
        async def one():
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
                writer.write(b"POST /users HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{")
                deadline = time.time() + seconds
                answer = b""
                while time.time() < deadline and not answer:
                    writer.write(b" ")
                    try:
                        answer = await asyncio.wait_for(reader.read(200), 1.0)
                    except asyncio.TimeoutError:
                        pass
                self.outcome("slowloris body", answer.split(b"\r\n")[0].decode()[:12] if answer else "still open")
                writer.close()
            except OSError as error:
                self.outcome("slowloris body", f"connect: {error.errno}")
        await asyncio.gather(*(one() for _ in range(count)))

    async def idle_tcp(self, count, seconds):
        async def one():
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
                answer = await asyncio.wait_for(reader.read(200), seconds)
                self.outcome("idle TCP", answer.split(b"\r\n")[0].decode()[:12] if answer else "closed")
                writer.close()
            except asyncio.TimeoutError:
                self.outcome("idle TCP", "still open")
            except OSError as error:
                self.outcome("idle TCP", f"connect: {error.errno}")
        await asyncio.gather(*(one() for _ in range(count)))

    async def huge_rest_bodies(self, count):
        wide = {"users": {"x": {"id": "x", **{f"k{i}": i for i in range(50_000)}}}}
        deep = {"users": {"x": {"id": "x", "deep": json.loads("[" * 500 + "]" * 500)}}}
        long = {"users": {"x": {"id": "x", "bio": "x" * 200_000}}}
        for index in range(count):
            body = (wide, deep, long)[index % 3]
            status, answer = await self.http("POST", "/users", body)
            self.outcome(("REST 50,000 keys", "REST nesting 500", "REST 200 KB string")[index % 3], f"HTTP {status}")

    async def ws_hostile(self, kind, count):
        """WebSocket clients that misbehave, seen through the close code they get."""
        async def one(i):
            user = f"bad{(i * 7 + hash(kind)) % 100}"
            try:
                async with websockets.connect(f"ws://127.0.0.1:{self.port}/connect?{connect_query(user, kind == 'bad token')}",
                                              max_size=None, open_timeout=10) as ws:
                    if kind == "WS 50,000 keys":
                        await ws.send(json.dumps({"type": "mark_read", "cid": "messaging:soak0", **{f"k{i}": 1 for i in range(50_000)}}))
                    elif kind == "binary flood":
                        for _ in range(3_000):
                            await ws.send(b"\x00\x01")
                    elif kind == "command flood":
                        for _ in range(5_000):
                            await ws.send(json.dumps({"type": "mark_read", "cid": "messaging:soak0"}))
                    # Reads what comes (the library stops reading the socket while messages wait) until
                    # the server closes, or 20 s pass.
                    deadline = time.time() + 20
                    try:
                        while time.time() < deadline:
                            await asyncio.wait_for(ws.recv(), max(0.1, deadline - time.time()))
                        self.outcome(kind, "still open after 20 s")
                    except asyncio.TimeoutError:
                        self.outcome(kind, "still open after 20 s")
            except websockets.ConnectionClosed as closed:
                self.outcome(kind, f"close {closed.rcvd.code if closed.rcvd else 'none'}")
            except Exception as error:
                self.outcome(kind, type(error).__name__)
        await asyncio.gather(*(one(i) for i in range(count)))

    async def slow_consumer_disconnects(self):
        status, body = await self.http("GET", "/metrics")
        for line in body.decode().splitlines():
            if line.startswith("checkmark_slow_consumer_disconnects_total"):
                return int(float(line.split()[-1]))
        return 0

    async def non_readers(self, count, seconds):
        """Send watch after watch and never read: the replies pile up on the server's side, which
        must close each such client as a slow consumer (counted by its own metric)."""
        before = await self.slow_consumer_disconnects()
        await self._non_readers(count, seconds)
        closed = await self.slow_consumer_disconnects() - before
        self.outcome("non-reader", "closed as a slow consumer" if closed == count else f"{closed} of {count} closed as slow consumers")

    async def _non_readers(self, count, seconds):
        async def one(i):
            user = f"bad{i}"
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.setblocking(False)
            try:
                await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", self.port))
                reader, writer = await asyncio.open_connection(sock=sock)
                writer.write((f"GET /connect?{connect_query(user)} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                              "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
                # bad{i} is a member of soak{i // 10}: every watch is answered with the channel's state.
                watch = frame(json.dumps({"type": "watch", "cid": f"messaging:soak{i // 10}"}).encode())
                deadline = time.time() + seconds
                while time.time() < deadline:
                    writer.write(watch * 20)
                    try:
                        await asyncio.wait_for(writer.drain(), 1.0)
                    except (asyncio.TimeoutError, ConnectionError):
                        pass
                    if writer.transport.is_closing():
                        break
                    await asyncio.sleep(0.05)
                writer.close()
            except OSError as error:
                self.outcome("non-reader error", f"error {error.errno}")
        await asyncio.gather(*(one(i) for i in range(count)))

    # --- the run

    async def run(self):
        await self.setup()
        readies = [asyncio.get_running_loop().create_future() for _ in range(200)]
        goods = [asyncio.create_task(self.good_client(i, readies[i])) for i in range(200)]
        await asyncio.wait_for(asyncio.gather(*readies), 60)
        await asyncio.sleep(1)
        self.phase = "baseline"
        sender = asyncio.create_task(self.senders())
        import threading
        poller = threading.Thread(target=self.health, daemon=True)
        poller.start()
        await asyncio.sleep(self.args.baseline)
        start_rss, start_fds = self.sample()
        self.phase = "attack"
        duration = self.args.duration
        peak = [(start_rss, start_fds)]

        async def sampler():
            while self.phase == "attack":
                peak.append(self.sample())
                await asyncio.sleep(1)
        sampling = asyncio.create_task(sampler())
        await asyncio.gather(
            self.slowloris(100, duration), self.idle_tcp(100, duration),
            self.huge_rest_bodies(30), self.non_readers(20, min(duration, 20)),
            self.ws_hostile("WS 50,000 keys", 20), self.ws_hostile("binary flood", 20),
            self.ws_hostile("command flood", 20), self.ws_hostile("bad token", 20))
        self.phase = "tail"
        await sampling
        await asyncio.sleep(self.args.tail)
        self.sending = False
        await sender
        poller.join(timeout=10)
        await asyncio.sleep(2)
        end_rss, end_fds = self.sample()
        peak_rss = max(rss for rss, _ in peak)
        peak_fds = max(fds for _, fds in peak)
        for task in goods:
            task.cancel()

        print("soak: hostile kinds and what the server answered:")
        for kind, answers in sorted(self.outcomes.items()):
            print(f"  {kind:22} {', '.join(f'{answer} x{count}' for answer, count in sorted(answers.items()))}")

        def p99(values):
            return sorted(values)[int(len(values) * 0.99)] if values else float("nan")
        base, attack = p99(self.latencies["baseline"]), p99(self.latencies["attack"] + self.latencies.get("tail", []))
        print(f"soak: delivery p99 baseline {base * 1000:.0f} ms, under attack {attack * 1000:.0f} ms; "
              f"/healthz worst {self.health_worst * 1000:.0f} ms (during the {getattr(self, 'health_worst_phase', '-')})")
        print(f"soak: RSS start {start_rss >> 20} MiB, peak {peak_rss >> 20} MiB, end {end_rss >> 20} MiB; "
              f"descriptors start {start_fds}, peak {peak_fds}, end {end_fds}")

        lost = 0
        for index in range(200):
            channel = self.channels[index // 20]
            if self.received.get(f"good{index}", []) != self.sent[channel]:
                lost += 1
        self.check(lost == 0, f"every well-behaved client got every message of its channel once, in order ({200 - lost}/200)")
        self.check(attack <= self.args.max_p99, f"delivery p99 under attack {attack * 1000:.0f} ms <= {self.args.max_p99 * 1000:.0f} ms")
        self.check(self.health_worst < 1.0, f"/healthz answered within 1 s throughout (worst {self.health_worst * 1000:.0f} ms)")
        expected = {
            "slowloris body": "HTTP/1.1 408", "idle TCP": "HTTP/1.1 408", "REST 50,000 keys": "HTTP 400",
            "REST nesting 500": "HTTP 400", "REST 200 KB string": "HTTP 400", "WS 50,000 keys": "close 1009",
            "binary flood": "close 4008", "command flood": "close 4008", "bad token": "close 4001",
            "non-reader": "closed as a slow consumer",
        }
        for kind, answer in expected.items():
            answers = self.outcomes.get(kind, {})
            self.check(answers and set(answers) == {answer}, f"{kind}: every one answered '{answer}' ({answers})")
        self.check(end_rss <= start_rss + self.args.max_rss_growth, f"RSS back near the start (+{(end_rss - start_rss) >> 20} MiB)")
        self.check(end_fds <= start_fds + 20, f"descriptors back near the start ({start_fds} -> {end_fds})")
        passed = sum(self.results)
        failed = len(self.results) - passed
        print(f"soak: {passed} passed, {failed} failed")
        return failed == 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--baseline", type=float, default=10)
    parser.add_argument("--duration", type=float, default=30, help="seconds of attack")
    parser.add_argument("--tail", type=float, default=10)
    parser.add_argument("--rate", type=float, default=2, help="messages a second per channel")
    parser.add_argument("--max-p99", type=float, default=2.0)
    parser.add_argument("--max-rss-growth", type=int, default=64 << 20)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    ok = asyncio.run(asyncio.wait_for(Soak(args.port, args.pid, args).run(), args.baseline + args.duration + args.tail + 120))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
