"""A bounded soak: hostile clients of every kind at once against a real `checkmark serve` on
127.0.0.1, while 200 well-behaved clients keep receiving. Started by scripts/soak.sh, which runs the
server; this script only talks to it (and reads /proc/PID of it).

Phases: setup over REST; 200 well-behaved WebSocket clients (permessage-deflate on) in 10 channels
of 20 watch their channel while a few senders post messages over REST at a fixed rate; a baseline
without attackers (--baseline, 10 s); the attack (--duration, 60 s): the same load plus every hostile
kind at once, from a separate process; then the senders stop and deliveries drain; then the pending
flood alone (connections held idle past max_pending_connections: while the limit is full every new
HTTP connection gets 503, a sender's or /healthz's as well, so it cannot run beside them); and 10 s
after that (--settle) the server's RSS and descriptors are sampled again.

Checks: every well-behaved client got every message of its channel exactly once and in order, was
never closed, and had every confirmation answered without error; delivery p99 under attack within
--max-p99; /healthz answered within --max-health throughout (polled every 0.5 s by its own process;
during the pending flood 503 is its documented answer too);
each hostile kind got the documented answer (status or close code) and nothing else; RSS stayed
within --max-rss-peak of its start during the attack (one kind is issue 42's resume attack: one
user's connections each asking at connect to replay 4.9 MB and never reading); RSS and open
descriptors came back near their start. Prints `soak: N passed, M failed` last and exits non-zero
on any failure.

Roles: without --role, the soak itself; `--role hostile` and `--role health` are its child
processes (each prints its result as one JSON line on stdout)."""

import argparse
import asyncio
import base64
import collections
import hashlib
import hmac
import json
import os
import random
import resource
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.parse

import websockets
from websockets.asyncio.client import connect as ws_connect

HOST = "127.0.0.1"
GOOD = 200             # well-behaved clients
CHANNELS = 10          # channels of 20 well-behaved members (and 10 of the hostile users)
BAD_USERS = 100        # users the hostile clients connect as
FLOOD_USER = f"bad{BAD_USERS - 1}"   # the REST flood's alone
CHANNEL_TYPE = "soak"  # a channel type with delivery_events and read_events on
HISTORY_CHANNELS = 5   # channels with a history for the resume attack (issue 42); max_watched is 5
HISTORY_MESSAGES = 200 # messages of HISTORY_TEXT bytes in each: 4.9 MB to replay per connection
HISTORY_TEXT = 4900


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


def raise_descriptor_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = hard if hard != resource.RLIM_INFINITY else 65536
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


# --- tokens (HS256, as `checkmark token` makes them)

def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def make_token(secret, claims):
    head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    body = b64(json.dumps(claims, separators=(",", ":")).encode())
    signature = hmac.new(secret.encode(), f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64(signature)}"


def connect_url(port, key, token, user):
    query = urllib.parse.urlencode({
        "json": json.dumps({"user_id": user, "user_details": {"id": user}}),
        "api_key": key, "authorization": token, "stream-auth-type": "jwt"})
    return f"ws://{HOST}:{port}/connect?{query}"


# --- raw HTTP/1.1: one request per connection, exactly the bytes chosen

def status_of(answer):
    """'HTTP 408' from an answer's status line; what came instead otherwise."""
    if not answer:
        return "closed without answer"
    parts = answer.split(b"\r\n", 1)[0].split(b" ")
    if len(parts) >= 2 and parts[0].startswith(b"HTTP/") and parts[1].isdigit():
        return f"HTTP {int(parts[1])}"
    return "not HTTP: " + parts[0][:30].decode(errors="replace")


async def read_all(reader, timeout):
    """Everything until EOF (or what came before a reset or the timeout), and how it ended."""
    chunks = []
    end = "eof"
    deadline = time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                end = "timeout"
                break
            chunk = await asyncio.wait_for(reader.read(65536), left)
            if not chunk:
                break
            chunks.append(chunk)
    except asyncio.TimeoutError:
        end = "timeout"
    except (ConnectionResetError, BrokenPipeError):
        end = "reset"
    return b"".join(chunks), end


async def http(port, method, path, body=b"", token=None, key=None, timeout=30.0):
    """(status, body) of one request on its own connection (Connection: close); status 0 when no
    answer came."""
    reader, writer = await asyncio.wait_for(asyncio.open_connection(HOST, port), timeout)
    try:
        if key is not None:
            path += ("&" if "?" in path else "?") + "api_key=" + key
        head = f"{method} {path} HTTP/1.1\r\nHost: {HOST}\r\nConnection: close\r\n"
        if token is not None:
            head += f"Authorization: {token}\r\nstream-auth-type: jwt\r\n"
        if body or method in ("POST", "PUT", "PATCH"):
            head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        writer.write(head.encode() + b"\r\n" + body)
        try:
            await writer.drain()
        except (ConnectionResetError, BrokenPipeError):
            pass
        answer, _ = await read_all(reader, timeout)
    finally:
        writer.close()
    status = status_of(answer)
    return (int(status.split()[1]) if status.startswith("HTTP ") else 0), answer.partition(b"\r\n\r\n")[2]


def responses_in(data):
    """The (status, content type, body) of each HTTP response in a byte stream, in order (bodies
    by their Content-Length); what cannot be parsed ends the list."""
    responses = []
    while data.startswith(b"HTTP/"):
        head, separator, rest = data.partition(b"\r\n\r\n")
        if not separator:
            break
        lines = head.split(b"\r\n")
        fields = {}
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            fields[name.strip().lower()] = value.strip()
        length = int(fields.get(b"content-length", b"0") or 0)
        status = lines[0].split(b" ")
        responses.append((int(status[1]) if len(status) > 1 and status[1].isdigit() else 0,
                          fields.get(b"content-type", b"").decode(errors="replace"), rest[:length]))
        data = rest[length:]
    return responses


def metrics_sum(text, name):
    """The sum of a Prometheus metric's samples over its labels."""
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name) and line[len(name):len(name) + 1] in (" ", "{"):
            try:
                total += float(line.rsplit(" ", 1)[1])
            except ValueError:
                pass
    return total


# --- WebSocket frames by hand, for a client that must not behave like a library

def frame(payload, opcode=1):
    """One masked client frame (RFC 6455 section 5.3)."""
    mask = os.urandom(4)
    n = len(payload)
    head = bytes([0x80 | opcode])
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 65536:
        head += bytes([0x80 | 126]) + struct.pack("!H", n)
    else:
        head += bytes([0x80 | 127]) + struct.pack("!Q", n)
    repeated = (mask * (n // 4 + 1))[:n]
    masked = (int.from_bytes(payload, "big") ^ int.from_bytes(repeated, "big")).to_bytes(n, "big") if n else b""
    return head + mask + masked


def close_codes_in(data):
    """Close codes of the (unmasked, uncompressed) server frames in a byte stream."""
    codes = []
    i = 0
    while i + 2 <= len(data):
        opcode = data[i] & 0x0F
        n = data[i + 1] & 0x7F
        j = i + 2
        if n == 126:
            if j + 2 > len(data):
                break
            n = struct.unpack("!H", data[j:j + 2])[0]
            j += 2
        elif n == 127:
            if j + 8 > len(data):
                break
            n = struct.unpack("!Q", data[j:j + 8])[0]
            j += 8
        if data[i + 1] & 0x80:
            j += 4
        if opcode == 8 and j + 2 <= len(data):
            codes.append(struct.unpack("!H", data[j:j + 2])[0])
        i = j + n
    return codes


# ============================================================================ the hostile process

def describe(sample):
    """A short text of what an answer said: an HTTP error's message, a close reason."""
    if isinstance(sample, (bytes, bytearray)):
        body = bytes(sample).partition(b"\r\n\r\n")[2] or bytes(sample)
        try:
            return json.loads(body).get("message", "")[:70]
        except (ValueError, AttributeError):
            return body[:70].decode(errors="replace")
    if isinstance(sample, tuple) and sample and isinstance(sample[0], str):
        return sample[0][:70]
    return ""


class Hostile:
    """Every hostile kind at once, each bounded in concurrency, in total count and in time."""

    # kind: (the answers expected, an answer that must be among them or None)
    EXPECTED = {
        "slowloris body (1 B/s)": ({"HTTP 408"}, None),
        "slowloris head (1 B/s)": ({"HTTP 408"}, None),
        "idle TCP, no request": ({"HTTP 408"}, None),
        "REST 50,000-key object": ({"HTTP 400"}, None),
        "REST nesting 100,000": ({"HTTP 400"}, None),
        "REST 200 KB string": ({"HTTP 400"}, None),
        "REST 2 MiB body": ({"HTTP 413"}, None),
        "REST flood, user token": ({"HTTP 200", "HTTP 429"}, "HTTP 429"),
        "WS 50,000-key object": ({"close 1009"}, None),
        "WS nesting 100,000": ({"close 1009"}, None),
        "WS 200 KB string": ({"close 1009"}, None),
        "WS 17 MiB deflate bomb": ({"close 1009"}, None),
        "WS binary flood": ({"close 4008"}, None),
        "WS command flood": ({"close 4008"}, None),
        "WS watch, never read": ({"close 4009", "dropped"}, None),
        "WS resume 5 channels from 0, never read": ({"close 4009", "dropped"}, None),
        "WS bad signature": ({"close 4001"}, None),
        "WS token of another user": ({"close 4001"}, None),
        "WS wrong api_key": ({"close 4001"}, None),
        "WS no token": ({"close 4001"}, None),
        "WS expired token": ({"close 4002"}, None),
        "WS token nbf 2 min ahead": ({"close 4001"}, None),
        "WS token iat 2 min ahead": ({"close 4001"}, None),
        "REST token nbf 2 min ahead": ({"HTTP 401"}, None),
        "REST token iat 2 min ahead": ({"HTTP 401"}, None),
        "HTTP chunk size not hex": ({"HTTP 400 JSON"}, None),
        "HTTP Transfer-Encoding: gzip": ({"HTTP 400 JSON"}, None),
        "HTTP Content-Length twice": ({"HTTP 400 JSON"}, None),
        "HTTP good GET, bad request, 1 write": ({"HTTP 200 then HTTP 400 JSON"}, None),
        "WS user past 64 connections": ({"close 4003"}, None),
        "WS unknown user, no user_details": ({"close 4004"}, None),
        "WS 6 KiB profile in user_details": ({"close 1008"}, None),
        "REST 6 KiB profile": ({"HTTP 400"}, None),
        "REST watch past max_watched_channels": ({"HTTP 429 too_many_watched_channels"}, None),
        # In its own phase after the attack (see Soak._run): connections held idle past
        # max_pending_connections; those within the limit are closed by the client before any answer.
        "HTTP pending past max_pending_connections": ({"HTTP 503", "held (within the limit)"}, "HTTP 503"),
    }
    PENDING_KIND = "HTTP pending past max_pending_connections"

    def __init__(self, args):
        self.args = args
        self.port = args.port
        self.end = time.monotonic() + args.duration
        self.outcomes = collections.defaultdict(collections.Counter)
        self.seconds = collections.defaultdict(float)   # slowest answer per kind
        self.samples = {}                              # one unexpected answer per kind, for the report
        self.first = {}                                # what the first answer said, per kind
        self.notes = collections.Counter()
        self.crowd_rounds = 0                          # rounds of "WS user past 64 connections" begun
        self.token = lambda claims: make_token(args.secret, claims)
        c = lambda n: max(1, int(n * args.scale))
        # kind: (concurrency, total cap, seconds an attempt needs: none starts later than that before
        # the end). A kind's attempts are spread over the attack so that its cap is reached near the
        # end rather than in its first seconds. At scale 1 they hold about 350 descriptors at once.
        self.plan = {
            "slowloris body (1 B/s)": (c(100), 400, 13), "slowloris head (1 B/s)": (c(20), 80, 13),
            "idle TCP, no request": (c(100), 400, 13),
            "REST 50,000-key object": (1, 60, 0), "REST nesting 100,000": (1, 60, 0), "REST 200 KB string": (1, 60, 0),
            "REST 2 MiB body": (1, 60, 0), "REST flood, user token": (c(20), 9000, 0),
            "WS 50,000-key object": (c(5), 100, 0), "WS nesting 100,000": (c(5), 100, 0), "WS 200 KB string": (c(5), 100, 0),
            "WS 17 MiB deflate bomb": (c(2), 20, 0), "WS binary flood": (c(5), 60, 0), "WS command flood": (c(5), 60, 0),
            "WS watch, never read": (c(20), 60, 16),
            # One user's connections (under its limit of 64), each asking at connect to replay 4.9 MB.
            "WS resume 5 channels from 0, never read": (c(20), 60, 16),
            "WS bad signature": (c(3), 100, 0), "WS token of another user": (c(3), 100, 0), "WS wrong api_key": (c(3), 100, 0),
            "WS no token": (c(3), 100, 0), "WS expired token": (c(3), 100, 0),
            "WS token nbf 2 min ahead": (c(2), 60, 0), "WS token iat 2 min ahead": (c(2), 60, 0),
            "REST token nbf 2 min ahead": (1, 60, 0), "REST token iat 2 min ahead": (1, 60, 0),
            "HTTP chunk size not hex": (1, 60, 0), "HTTP Transfer-Encoding: gzip": (1, 60, 0),
            "HTTP Content-Length twice": (1, 60, 0), "HTTP good GET, bad request, 1 write": (1, 60, 0),
            # One user's 64 connections held open while more try (66 descriptors per attempt).
            "WS user past 64 connections": (1, 5, 15),
            "WS unknown user, no user_details": (c(2), 60, 0),
            "WS 6 KiB profile in user_details": (c(2), 60, 0), "REST 6 KiB profile": (1, 60, 0),
            "REST watch past max_watched_channels": (1, 30, 5),
        }
        self.user_counter = 0
        # How far an attempt of a kind has got (said when it times out).
        self.step = {}

    def bad_user(self):
        """The next of the hostile users, never FLOOD_USER: its REST flood spends the per-user request
        rate, and a kind that needs a request within the limit must not share it."""
        self.user_counter += 1
        return f"bad{self.user_counter % (BAD_USERS - 1)}"

    def record(self, kind, answer, seconds, sample=None):
        self.outcomes[kind][answer] += 1
        if kind not in self.first and sample is not None:
            self.first[kind] = describe(sample)
        self.seconds[kind] = max(self.seconds[kind], seconds)
        if answer not in self.EXPECTED[kind][0] and kind not in self.samples:
            self.samples[kind] = f"{answer}: {sample!r}"[:300]

    async def repeat(self, kind, one):
        concurrency, cap, needs = self.plan[kind]
        spacing = concurrency * self.args.duration / cap
        started = [0]

        async def worker(w):
            await asyncio.sleep(spacing * w / concurrency)   # the workers of a kind start spread out
            while time.monotonic() + needs < self.end and started[0] < cap:
                started[0] += 1
                t0 = time.monotonic()
                sample = None
                self.step.pop(kind, None)
                try:
                    answer, sample = await asyncio.wait_for(one(), 60)
                except asyncio.TimeoutError:
                    # A timeout of the attempt's own (an open_timeout) is named apart from the 60 s
                    # budget; either says how far the attempt got when it says.
                    waited = "no answer in 60 s" if time.monotonic() - t0 >= 59 else "TimeoutError"
                    answer = f"{waited} ({self.step[kind]})" if kind in self.step else waited
                except (ConnectionRefusedError, ConnectionResetError, BrokenPipeError) as error:
                    answer = type(error).__name__
                except OSError as error:
                    answer = f"OSError {error.errno}"
                except Exception as error:  # noqa: BLE001 (whatever happens is the answer)
                    answer = type(error).__name__
                    sample = str(error)
                self.record(kind, answer, time.monotonic() - t0, sample)
                await asyncio.sleep(max(0.0, t0 + spacing - time.monotonic()))
        await asyncio.gather(*(worker(w) for w in range(concurrency)))

    # --- HTTP kinds

    async def slowloris(self, head_only):
        """A request sent a byte a second: the head (after its request line), or the body of a
        `POST /users` with Content-Length: 1000."""
        reader, writer = await asyncio.open_connection(HOST, self.port)
        try:
            if head_only:
                writer.write(f"POST /users?api_key={self.args.key} HTTP/1.1\r\nHost: {HOST}\r\n".encode())
                trickle = b"X-Slow: " + b"a" * 200
            else:
                writer.write((f"POST /users?api_key={self.args.key} HTTP/1.1\r\nHost: {HOST}\r\n"
                              "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n").encode())
                trickle = b'{"users":{' + b" " * 990
            deadline = time.monotonic() + 40
            for i in range(len(trickle)):
                if time.monotonic() > deadline:
                    return "still open after 40 s", None
                try:
                    writer.write(trickle[i:i + 1])
                    await writer.drain()
                except (ConnectionResetError, BrokenPipeError):
                    break
                try:
                    chunk = await asyncio.wait_for(reader.read(4096), 1.0)
                except asyncio.TimeoutError:
                    continue
                except ConnectionResetError:
                    return "reset", None
                rest, _ = await read_all(reader, 5)
                return status_of(chunk + rest), (chunk + rest)[:200]
            answer, end = await read_all(reader, 5)
            return (status_of(answer) if answer else end), answer[:200]
        finally:
            writer.close()

    async def idle_tcp(self):
        """A TCP connection that never sends a byte."""
        reader, writer = await asyncio.open_connection(HOST, self.port)
        try:
            answer, end = await read_all(reader, 40)
            if end == "timeout" and not answer:
                return "still open after 40 s", None
            return (status_of(answer) if answer else end), answer[:200]
        finally:
            writer.close()

    async def rest_body(self, path, body):
        try:
            status, answer = await http(self.port, "POST", path, body, token=self.server_token, key=self.args.key)
        except (ConnectionResetError, BrokenPipeError):
            return "reset", None
        return (f"HTTP {status}" if status else "closed without answer"), answer[:200]

    async def rest_as(self, token):
        status, answer = await http(self.port, "GET", "/unread", token=token, key=self.args.key)
        return (f"HTTP {status}" if status else "closed without answer"), answer[:200]

    async def rest_flood(self):
        status, answer = await http(self.port, "GET", "/unread", token=self.flood_token, key=self.args.key)
        return (f"HTTP {status}" if status else "closed without answer"), answer[:200]

    async def malformed(self, request):
        """One write of raw bytes on a fresh connection; the answers, in order, as 'HTTP 200 then HTTP
        400 JSON' ('JSON' when an error's body is a JSON object with an error_code)."""
        reader, writer = await asyncio.open_connection(HOST, self.port)
        try:
            writer.write(request)
            try:
                await writer.drain()
            except (ConnectionResetError, BrokenPipeError):
                pass
            answer, end = await read_all(reader, 15)
        finally:
            writer.close()
        responses = responses_in(answer)
        if not responses:
            return (status_of(answer) if answer else f"closed without answer ({end})"), answer[:200]
        said = []
        for status, content_type, body in responses:
            text = f"HTTP {status}"
            if status >= 400:
                try:
                    text += " JSON" if "json" in content_type and "error_code" in json.loads(body) else " not JSON"
                except (ValueError, TypeError):
                    text += " not JSON"
            said.append(text)
        return " then ".join(said), answer[-200:]

    def malformed_request(self, fields, body=b"", before=b""):
        """A `POST /users` (server token) with the given extra header lines and raw body."""
        head = (f"POST /users?api_key={self.args.key} HTTP/1.1\r\nHost: {HOST}\r\nAuthorization: {self.server_token}\r\n"
                "stream-auth-type: jwt\r\nContent-Type: application/json\r\n" + "".join(f"{f}\r\n" for f in fields) + "\r\n")
        return before + head.encode() + body

    async def pending_flood(self):
        """Opens max_pending_connections + 50 connections that send nothing, in batches, holds them
        a second and records what each got: past the limit a 503 and a close; within it nothing
        (those are closed by the client well before request_timeout)."""
        kind = self.PENDING_KIND
        count = self.args.max_pending + 50
        opened = []
        t0 = time.monotonic()
        try:
            for start in range(0, count, 100):
                batch = await asyncio.gather(*(asyncio.open_connection(HOST, self.port)
                                               for _ in range(start, min(count, start + 100))), return_exceptions=True)
                for one in batch:
                    if isinstance(one, BaseException):
                        self.record(kind, f"connect failed: {type(one).__name__}", time.monotonic() - t0, str(one))
                    else:
                        opened.append(one)
            answers = await asyncio.gather(*(read_all(reader, 1.0) for reader, _ in opened))
            for answer, end in answers:
                if answer:
                    self.record(kind, status_of(answer), time.monotonic() - t0, answer[:200])
                else:
                    self.record(kind, "held (within the limit)" if end == "timeout" else f"closed without answer ({end})",
                                time.monotonic() - t0)
        finally:
            for _, writer in opened:
                writer.close()
            await asyncio.sleep(0.5)

    async def crowd(self):
        """One user holds max_connections_per_user (64) connections open while two more try; the
        answer is what the extra ones got (and any held one that was closed). Each round has a user
        of its own: the previous round's closes reach a loaded server after this round's opens may,
        and a slot is only free once the server has seen its connection close."""
        kind = "WS user past 64 connections"
        self.crowd_rounds += 1
        url = self.user_url(f"crowd{self.crowd_rounds}")
        held = []
        t0 = time.monotonic()
        try:
            for i in range(64):
                self.step[kind] = f"opening held connection {i + 1} of 64 after {time.monotonic() - t0:.1f} s"
                held.append(await ws_connect(url, max_size=None, open_timeout=15, close_timeout=5, ping_interval=None))
            extra = []
            for i in range(2):
                self.step[kind] = f"extra connection {i + 1} after {time.monotonic() - t0:.1f} s"
                extra.append(await self.ws(kind, url, wait=15))
            await asyncio.sleep(0.2)
            dropped = [w.close_code for w in held if w.close_code is not None]
            if dropped:
                return f"a held connection closed {dropped[0]}", None
            answers = sorted({answer for answer, _ in extra})
            return " and ".join(answers), extra[0][1]
        finally:
            await asyncio.gather(*(w.close() for w in held), return_exceptions=True)

    async def watch_past_limit(self):
        """A connection's first max_watched_channels REST watches (`POST /channels/messaging/{id}/query`
        with `watch` and its `connection_id`) answer 200; the answer to the next one is the result."""
        user = self.bad_user()
        token = self.token({"user_id": user})
        async with ws_connect(self.user_url(user, token), max_size=None, open_timeout=15, close_timeout=5,
                              ping_interval=None) as ws:
            first = json.loads(await asyncio.wait_for(ws.recv(), 15))
            body = {"watch": True, "connection_id": first.get("connection_id"),
                    "data": {"members": [user], "created_by_id": user}}
            for i in range(self.args.max_watched + 1):
                status, answer = await http(self.port, "POST", f"/channels/messaging/hw-{user}-{i}/query",
                                            json.dumps(body).encode(), token=token, key=self.args.key)
                if i < self.args.max_watched and status != 200:
                    return f"HTTP {status} within the limit (watch {i + 1})", answer[:200]
            try:
                code = json.loads(answer).get("error_code", "")
            except (ValueError, AttributeError):
                code = "not JSON"
            return f"HTTP {status} {code}".strip(), answer[:200]

    # --- WebSocket kinds (the websockets library, compression on, reading all the server sends)

    async def ws(self, kind, url, action=None, wait=30):
        """Opens /connect, runs action(ws) while reading everything that arrives, and returns the
        close code the server sent (or that the connection was still open `wait` seconds on)."""
        try:
            async with ws_connect(url, max_size=None, open_timeout=15, close_timeout=5, ping_interval=None) as ws:
                errors = collections.Counter()

                async def drain():
                    try:
                        async for text in ws:
                            if isinstance(text, str) and '"type":"error"' in text:
                                event = json.loads(text)
                                errors[event.get("error", {}).get("error_code", "?")] += 1
                    except websockets.ConnectionClosed:
                        pass
                reader = asyncio.create_task(drain())
                try:
                    if action is not None:
                        await action(ws)
                except websockets.ConnectionClosed:
                    pass
                try:
                    await asyncio.wait_for(asyncio.shield(reader), wait)
                except asyncio.TimeoutError:
                    reader.cancel()
                    return f"still open after {wait} s", dict(errors)
                for code, n in errors.items():
                    self.notes[f"{kind}: error events {code}"] += n
                return f"close {ws.close_code}", (ws.close_reason, dict(errors))
        except websockets.InvalidStatus as refused:
            return f"HTTP {refused.response.status_code}", refused.response.body[:200]

    def user_url(self, user=None, token=None, key=None):
        user = user or self.bad_user()
        return connect_url(self.port, key or self.args.key, token if token is not None else self.token({"user_id": user}), user)

    async def ws_payload(self, kind, payload):
        async def action(ws):
            await ws.send(payload)
        return await self.ws(kind, self.user_url(), action)

    async def ws_binary_flood(self):
        async def action(ws):
            for _ in range(3000):
                await ws.send(b"\x00\x01\x02")
        return await self.ws("WS binary flood", self.user_url(), action)

    async def ws_command_flood(self):
        user = self.bad_user()
        command = json.dumps({"type": "mark_read", "cid": f"{CHANNEL_TYPE}:soak{int(user[3:]) // 10}"})

        async def action(ws):
            for _ in range(5000):
                await ws.send(command)
        return await self.ws("WS command flood", self.user_url(user), action)

    async def open_non_reader(self, path):
        """A connection with a tiny receive buffer (no compression), upgraded at `path` (/connect?...)."""
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, (HOST, self.port))
        reader, writer = await asyncio.open_connection(sock=sock)
        writer.write((f"GET {path} HTTP/1.1\r\nHost: {HOST}:{self.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        return reader, writer

    @staticmethod
    async def close_of_non_reader(reader):
        """Reads what is left (10 s at most) to find the close frame; closed or reset without one is
        'dropped'."""
        data, end = await read_all(reader, 10)
        head, _, frames = data.partition(b"\r\n\r\n")
        codes = close_codes_in(frames)
        if codes:
            return f"close {codes[-1]}", None
        if end == "timeout":
            return "still open after 22 s", head[:100]
        return "dropped", (end, head[:60])

    async def non_reader(self):
        """Connects with a tiny receive buffer (no compression), sends `watch` after `watch` under the
        command rate and never reads: the server must drop it as a slow consumer (4009)."""
        user = self.bad_user()
        cid = f"{CHANNEL_TYPE}:soak{int(user[3:]) // 10}"   # one of the measured channels: its events too
        reader, writer = await self.open_non_reader(self.user_url(user).split(f"{HOST}:{self.port}", 1)[1])
        try:
            watch = frame(json.dumps({"type": "watch", "cid": cid}).encode())
            deadline = time.monotonic() + 12
            while time.monotonic() < deadline:
                try:
                    writer.write(watch * 10)          # 100 a second: under the command rate (200)
                    await asyncio.wait_for(writer.drain(), 0.1)
                except asyncio.TimeoutError:
                    pass                              # the server stopped reading it: keep trying
                except (ConnectionResetError, BrokenPipeError):
                    break
                if writer.transport.is_closing():
                    break
                await asyncio.sleep(0.1)
            return await self.close_of_non_reader(reader)
        finally:
            writer.close()

    async def resume_non_reader(self):
        """Issue 42's attack: one user's connections, each resuming HISTORY_CHANNELS channels (4.9 MB
        in all) from channel_seq 0 at connect, with a tiny receive buffer, never reading. The server must
        replay as the connection drains, so it holds a page per connection, not the whole replay, and
        drop each as a slow consumer (4009) after the grace period."""
        user = "bad98"   # one user for all of them: the limit is per user
        resume = {f"{CHANNEL_TYPE}:hist{c}": 0 for c in range(HISTORY_CHANNELS)}
        query = urllib.parse.urlencode({
            "json": json.dumps({"user_id": user, "resume": resume}), "api_key": self.args.key,
            "authorization": self.token({"user_id": user}), "stream-auth-type": "jwt"})
        reader, writer = await self.open_non_reader(f"/connect?{query}")
        try:
            await writer.drain()
            await asyncio.sleep(12)   # never reads: the grace period (5 s) passes meanwhile
            return await self.close_of_non_reader(reader)
        finally:
            writer.close()

    async def metric(self, name):
        try:
            _, body = await http(self.port, "GET", "/metrics", timeout=10)
            return metrics_sum(body.decode(errors="replace"), name)
        except OSError:
            return float("nan")

    async def run(self):
        self.server_token = self.token({"server": True})
        if self.args.phase == "pending":
            for _ in range(2):
                await self.pending_flood()
            return self.result()
        self.flood_token = self.token({"user_id": FLOOD_USER})
        wide = json.dumps({"users": {"hostile": {"id": "hostile", **{f"k{i}": i for i in range(50_000)}}}}).encode()
        deep = b'{"users":{"hostile":{"id":"hostile","deep":' + b"[" * 100_000 + b"]" * 100_000 + b"}}}"
        long = json.dumps({"users": {"hostile": {"id": "hostile", "bio": "x" * 200_000}}}).encode()
        huge = b'{"users":{"hostile":{"id":"hostile","bio":"' + b"x" * (2 << 20) + b'"}}}'
        ws_wide = json.dumps({"type": "mark_read", "cid": "messaging:none", **{f"k{i}": i for i in range(50_000)}})
        ws_deep = '{"type":"mark_read","cid":"messaging:none","deep":' + "[" * 100_000 + "]" * 100_000 + "}"
        ws_long = json.dumps({"type": "mark_read", "cid": "x" * 200_000})
        ws_bomb = '{"type":"mark_read","cid":"' + "x" * (17 << 20) + '"}'
        slow_before = await self.metric("checkmark_slow_consumer_disconnects_total")
        rejected_before = await self.metric("checkmark_commands_rejected_total")
        ahead = lambda user, claim: self.token({"user_id": user, claim: int(time.time()) + 120})
        counter = iter(range(1 << 30))

        def url_with(user, details):
            query = {"user_id": user, **({"user_details": details} if details is not None else {})}
            return (f"ws://{HOST}:{self.port}/connect?" + urllib.parse.urlencode({
                "json": json.dumps(query), "api_key": self.args.key,
                "authorization": self.token({"user_id": user}), "stream-auth-type": "jwt"}))
        fat = lambda user: {"id": user, "name": "fat", "bio": "x" * 6144}   # over max_user_profile (5 KiB)
        fat_url = lambda user: url_with(user, fat(user))
        fat_rest = json.dumps({"users": {"fat": fat("fat")}}).encode()
        users = b'{"users":{}}'
        other = lambda user: self.token({"user_id": user + "-other"})
        expired = lambda user: self.token({"user_id": user, "exp": int(time.time()) - 60})
        kinds = {
            "slowloris body (1 B/s)": lambda: self.slowloris(False),
            "slowloris head (1 B/s)": lambda: self.slowloris(True),
            "idle TCP, no request": self.idle_tcp,
            "REST 50,000-key object": lambda: self.rest_body("/users", wide),
            "REST nesting 100,000": lambda: self.rest_body("/users", deep),
            "REST 200 KB string": lambda: self.rest_body("/users", long),
            "REST 2 MiB body": lambda: self.rest_body("/users", huge),
            "REST flood, user token": self.rest_flood,
            "WS 50,000-key object": lambda: self.ws_payload("WS 50,000-key object", ws_wide),
            "WS nesting 100,000": lambda: self.ws_payload("WS nesting 100,000", ws_deep),
            "WS 200 KB string": lambda: self.ws_payload("WS 200 KB string", ws_long),
            "WS 17 MiB deflate bomb": lambda: self.ws_payload("WS 17 MiB deflate bomb", ws_bomb),
            "WS binary flood": self.ws_binary_flood,
            "WS command flood": self.ws_command_flood,
            "WS watch, never read": self.non_reader,
            "WS resume 5 channels from 0, never read": self.resume_non_reader,
            "WS bad signature": lambda: self.ws("WS bad signature", self.user_url(user="bad1", token=make_token("not-the-secret-at-all", {"user_id": "bad1"}))),
            "WS token of another user": lambda: self.ws("WS token of another user", self.user_url(user="bad2", token=other("bad2"))),
            "WS wrong api_key": lambda: self.ws("WS wrong api_key", self.user_url(key="not-the-key")),
            "WS no token": lambda: self.ws("WS no token", self.user_url(token="")),
            "WS expired token": lambda: self.ws("WS expired token", self.user_url(user="bad3", token=expired("bad3"))),
            "WS token nbf 2 min ahead": lambda: self.ws("WS token nbf 2 min ahead", self.user_url(user="bad4", token=ahead("bad4", "nbf"))),
            "WS token iat 2 min ahead": lambda: self.ws("WS token iat 2 min ahead", self.user_url(user="bad5", token=ahead("bad5", "iat"))),
            "REST token nbf 2 min ahead": lambda: self.rest_as(ahead("bad6", "nbf")),
            "REST token iat 2 min ahead": lambda: self.rest_as(ahead("bad7", "iat")),
            "HTTP chunk size not hex": lambda: self.malformed(self.malformed_request(
                ["Transfer-Encoding: chunked"], b"zz\r\n" + users + b"\r\n0\r\n\r\n")),
            "HTTP Transfer-Encoding: gzip": lambda: self.malformed(self.malformed_request(["Transfer-Encoding: gzip"], users)),
            "HTTP Content-Length twice": lambda: self.malformed(self.malformed_request(
                [f"Content-Length: {len(users)}", f"Content-Length: {len(users) + 1}"], users + b" ")),
            "HTTP good GET, bad request, 1 write": lambda: self.malformed(self.malformed_request(
                [f"Content-Length: {len(users)}", f"Content-Length: {len(users) + 1}"], users + b" ",
                before=f"GET /healthz HTTP/1.1\r\nHost: {HOST}\r\n\r\n".encode())),
            "WS user past 64 connections": self.crowd,
            "WS unknown user, no user_details": lambda: self.ws(
                "WS unknown user, no user_details", url_with(f"ghost{next(counter)}", None)),
            "WS 6 KiB profile in user_details": lambda: self.ws(
                "WS 6 KiB profile in user_details", fat_url(f"fat{next(counter)}")),
            "REST 6 KiB profile": lambda: self.rest_body("/users", fat_rest),
            "REST watch past max_watched_channels": self.watch_past_limit,
        }
        await asyncio.gather(*(self.repeat(kind, one) for kind, one in kinds.items()))
        slow_after = await self.metric("checkmark_slow_consumer_disconnects_total")
        rejected_after = await self.metric("checkmark_commands_rejected_total")
        return self.result(slow_after - slow_before, rejected_after - rejected_before)

    def result(self, slow_consumer_disconnects=0, commands_rejected=0):
        return {
            "outcomes": {k: dict(v) for k, v in self.outcomes.items()},
            "slowest": dict(self.seconds), "samples": self.samples, "notes": dict(self.notes), "first": self.first,
            "expected": {k: [sorted(v[0]), v[1]] for k, v in self.EXPECTED.items()},
            "slow_consumer_disconnects": slow_consumer_disconnects,
            "commands_rejected": commands_rejected,
        }


def hostile_main(args):
    raise_descriptor_limit()
    result = asyncio.run(asyncio.wait_for(Hostile(args).run(), args.duration + 120))
    print(json.dumps(result), flush=True)


# ============================================================================ the health poller

def health_main(args):
    """GET /healthz every 0.5 s on a fresh connection until stdin closes (or --duration passes);
    prints [[unix time, seconds, status], ...]."""
    stop = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    polls = []
    deadline = time.monotonic() + args.duration
    request = f"GET /healthz HTTP/1.1\r\nHost: {HOST}\r\nConnection: close\r\n\r\n".encode()
    while not stop.is_set() and time.monotonic() < deadline:
        started_wall, started = time.time(), time.monotonic()
        status = 0
        try:
            with socket.create_connection((HOST, args.port), timeout=5) as sock:
                sock.sendall(request)
                answer = b""
                while b"\r\n\r\n" not in answer:
                    chunk = sock.recv(4096)
                    if not chunk:
                        break
                    answer += chunk
                status = int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/") else 0
        except (OSError, ValueError, IndexError):
            status = 0
        polls.append([started_wall, time.monotonic() - started, status])
        stop.wait(max(0.0, 0.5 - (time.monotonic() - started)))
    print(json.dumps(polls), flush=True)


# ============================================================================ the soak

class GoodClient:
    def __init__(self, index):
        self.index = index
        self.user = f"good{index}"
        self.channel = f"soak{index // (GOOD // CHANNELS)}"
        self.cid = f"{CHANNEL_TYPE}:{self.channel}"
        self.messages = []          # (channel_seq, message id, monotonic time of receipt)
        self.events = collections.Counter()
        self.errors = []
        self.confirmations_sent = 0
        self.confirmations_answered = 0
        self.compressed = False
        self.closed = None          # (code, reason) when the server closed it
        self.failure = None
        self.ws = None
        self.rng = random.Random(index)


class Soak:
    def __init__(self, args):
        self.args = args
        self.port, self.pid = args.port, args.pid
        self.server = make_token(args.secret, {"server": True})
        self.results = []
        self.phase = "setup"
        self.phase_started = {"setup": time.time()}
        self.sent = {f"soak{c}": [] for c in range(CHANNELS)}    # ids answered 200, in order
        self.sent_at = {}            # message id: (monotonic time of the send, phase)
        self.uncertain = set()       # sends that were not answered 200
        self.send_failures = collections.Counter()
        self.sending = True
        self.closing = False
        self.clients = [GoodClient(i) for i in range(GOOD)]

    def check(self, ok, what):
        self.results.append(bool(ok))
        print(f"soak: {'ok  ' if ok else 'FAIL'} {what}", flush=True)
        return ok

    def set_phase(self, phase):
        self.phase = phase
        self.phase_started[phase] = time.time()
        log(f"soak: {phase} ({time.strftime('%H:%M:%S')})")

    def sample(self):
        with open(f"/proc/{self.pid}/status") as status:
            rss = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) * 1024
        return rss, len(os.listdir(f"/proc/{self.pid}/fd"))

    def server_descriptor_limit(self):
        with open(f"/proc/{self.pid}/limits") as limits:
            for line in limits:
                if line.startswith("Max open files"):
                    value = line.split()[3]
                    return 1 << 20 if value == "unlimited" else int(value)
        return 1024

    async def rest(self, method, path, body, accept=(200, 201)):
        status, answer = await http(self.port, method, path, json.dumps(body).encode(), token=self.server, key=self.args.key)
        if status not in accept:
            raise RuntimeError(f"setup: {method} {path} answered {status}: {answer[:300]!r}")
        return status

    async def setup(self):
        await self.rest("POST", "/channeltypes", {"name": CHANNEL_TYPE, "delivery_events": True, "read_events": True},
                        accept=(200, 201, 409))
        users = {f"good{i}": {"id": f"good{i}", "name": f"Good {i}"} for i in range(GOOD)}
        users.update({f"bad{i}": {"id": f"bad{i}", "name": f"Bad {i}"} for i in range(BAD_USERS)})
        await self.rest("POST", "/users", {"users": users})
        per, bad_per = GOOD // CHANNELS, BAD_USERS // CHANNELS
        for c in range(CHANNELS):
            members = [f"good{c * per + i}" for i in range(per)] + [f"bad{c * bad_per + i}" for i in range(bad_per)]
            await self.rest("POST", f"/channels/{CHANNEL_TYPE}/soak{c}/query",
                            {"data": {"members": members, "created_by_id": members[0]}})
        # The history the resume attack asks to replay: HISTORY_CHANNELS channels of the hostile users.
        bad = [f"bad{i}" for i in range(BAD_USERS)]

        async def history(c):
            await self.rest("POST", f"/channels/{CHANNEL_TYPE}/hist{c}/query", {"data": {"members": bad, "created_by_id": "bad0"}})
            for n in range(HISTORY_MESSAGES):
                await self.rest("POST", f"/channels/{CHANNEL_TYPE}/hist{c}/message",
                                {"message": {"id": f"hist{c}-{n}", "text": "h" * HISTORY_TEXT, "user_id": "bad0"}})
        await asyncio.gather(*(history(c) for c in range(HISTORY_CHANNELS)))

    # --- well-behaved clients

    async def good_client(self, client, ready):
        token = make_token(self.args.secret, {"user_id": client.user})
        cid = client.cid
        confirmations = 0
        try:
            async with ws_connect(connect_url(self.port, self.args.key, token, client.user), max_size=None,
                                  open_timeout=30, close_timeout=5) as ws:
                client.ws = ws
                client.compressed = "permessage-deflate" in (ws.response.headers.get("Sec-WebSocket-Extensions") or "")
                first = json.loads(await ws.recv())
                if first.get("type") != "health.check":
                    raise RuntimeError(f"first event {first.get('type')}")
                await ws.send(json.dumps({"type": "watch", "cid": cid, "request_id": "watch"}))
                async for text in ws:
                    now = time.monotonic()
                    event = json.loads(text)
                    kind = event.get("type")
                    client.events[kind] += 1
                    if kind == "message.new":
                        message_id = event["message"]["id"]
                        client.messages.append((event.get("channel_seq"), message_id, now))
                        if self.closing:
                            continue
                        # Now and then confirm: delivered often, read sometimes.
                        if client.rng.random() < 0.2:
                            confirmations += 1
                            client.confirmations_sent += 1
                            await ws.send(json.dumps({"type": "mark_delivered", "request_id": f"c{confirmations}",
                                                      "latest_delivered_messages": [{"cid": cid, "id": message_id}]}))
                        if client.rng.random() < 0.05:
                            confirmations += 1
                            client.confirmations_sent += 1
                            await ws.send(json.dumps({"type": "mark_read", "request_id": f"c{confirmations}",
                                                      "cid": cid, "message_id": message_id}))
                    elif kind == "reply":
                        if event.get("request_id") == "watch":
                            if not ready.done():
                                ready.set_result(None)
                        else:
                            client.confirmations_answered += 1
                    elif kind == "error":
                        client.errors.append(event)
                        if event.get("request_id") == "watch" and not ready.done():
                            ready.set_exception(RuntimeError(f"{client.user}: watch refused: {event}"))
            if not self.closing:
                client.closed = (ws.close_code, ws.close_reason)
        except websockets.ConnectionClosed as closed:
            if not self.closing:
                client.closed = (closed.rcvd.code, closed.rcvd.reason) if closed.rcvd else (None, "no close frame")
        except Exception as error:  # noqa: BLE001
            client.failure = f"{type(error).__name__}: {error}"
            if not ready.done():
                ready.set_exception(error)

    async def sender(self, channels):
        """Sends one message to each of its channels every 1/rate seconds over REST (server token,
        for the channel's first member); the next message to a channel goes only after the previous
        one was answered, so the channel's order is the order of `sent`."""
        per = GOOD // CHANNELS
        n = 0
        interval = 1.0 / self.args.rate
        next_tick = time.monotonic()
        while self.sending:
            for channel in channels:
                n += 1
                message_id = f"{channel}-{n:06d}"
                started = time.monotonic()
                self.sent_at[message_id] = (started, self.phase)
                body = {"message": {"id": message_id, "text": f"soak {self.phase} {n}", "user_id": f"good{int(channel[4:]) * per}"}}
                try:
                    status, _ = await http(self.port, "POST", f"/channels/{CHANNEL_TYPE}/{channel}/message",
                                           json.dumps(body).encode(), token=self.server, key=self.args.key, timeout=15)
                except (OSError, asyncio.TimeoutError):
                    status = 0
                if status == 200:
                    self.sent[channel].append(message_id)
                else:
                    self.uncertain.add(message_id)
                    self.send_failures[f"HTTP {status}" if status else "no answer"] += 1
            next_tick += interval
            await asyncio.sleep(max(0.0, next_tick - time.monotonic()))

    def delivered_all(self):
        return all(len(c.messages) >= len(self.sent[c.channel]) for c in self.clients)

    # --- the run

    async def run(self):
        a = self.args
        health = subprocess.Popen([sys.executable, __file__, "--role", "health", "--port", str(self.port),
                                   "--duration", str(a.baseline + a.duration + a.settle + 200)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            await self._run(health)
        finally:
            if health.poll() is None:
                health.kill()
                health.wait()

    async def _run(self, health):
        a = self.args
        await self.setup()
        readies = [asyncio.get_running_loop().create_future() for _ in self.clients]
        tasks = [asyncio.create_task(self.good_client(c, r)) for c, r in zip(self.clients, readies)]
        try:
            await asyncio.wait_for(asyncio.gather(*readies), 60)
        except Exception as error:  # noqa: BLE001
            self.check(False, f"{GOOD} well-behaved clients connected and watching ({type(error).__name__}: {error})")
            raise
        self.check(all(c.compressed for c in self.clients),
                   f"{GOOD} well-behaved clients connected and watching, permessage-deflate on "
                   f"({sum(c.compressed for c in self.clients)} compressed)")

        # The baseline: the load alone.
        self.set_phase("baseline")
        groups = [[f"soak{c}" for c in range(CHANNELS) if c % a.senders == s] for s in range(a.senders)]
        senders = [asyncio.create_task(self.sender(g)) for g in groups if g]
        await asyncio.sleep(a.baseline)
        start = self.sample()
        metrics_start = (await http(self.port, "GET", "/metrics"))[1].decode(errors="replace")

        # The attack: the same load, and every hostile kind at once from its own process, scaled down
        # if the descriptors of the server or of this machine would not suffice.
        budget = min(self.server_descriptor_limit(), raise_descriptor_limit()) - start[1] - GOOD - 100
        scale = min(1.0, max(0.05, budget / 400))
        self.set_phase("attack")
        hostile = await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--role", "hostile", "--port", str(self.port), "--duration", str(a.duration),
            "--key", a.key, "--secret", a.secret, "--scale", f"{scale:.3f}", "--max-watched", str(a.max_watched),
            stdout=asyncio.subprocess.PIPE)
        peak = [start]
        sampling = [True]

        async def sampler():
            while sampling[0]:
                try:
                    peak.append(self.sample())
                except (OSError, StopIteration):
                    pass
                await asyncio.sleep(0.5)
        sampler_task = asyncio.create_task(sampler())
        hostile_result = None
        try:
            out, _ = await asyncio.wait_for(hostile.communicate(), a.duration + 150)
            lines = out.decode().strip().splitlines()
            hostile_result = json.loads(lines[-1]) if lines else None
        except asyncio.TimeoutError:
            hostile.kill()
            await hostile.wait()

        # The senders stop and deliveries drain.
        self.set_phase("drain")
        self.sending = False
        await asyncio.gather(*senders)
        drain_deadline = time.monotonic() + 15
        while not self.delivered_all() and time.monotonic() < drain_deadline:
            await asyncio.sleep(0.2)

        # The pending-connection flood, alone: while it holds every one of max_pending_connections, any
        # new HTTP connection gets 503 (a sender's or /healthz's as well), so it runs once the senders
        # have stopped; the well-behaved WebSocket clients stay connected (they are not pending).
        self.set_phase("pending flood")
        flood = await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--role", "hostile", "--phase", "pending", "--port", str(self.port),
            "--duration", "30", "--key", a.key, "--secret", a.secret, "--max-pending", str(a.max_pending),
            stdout=asyncio.subprocess.PIPE)
        try:
            out, _ = await asyncio.wait_for(flood.communicate(), 60)
            lines = out.decode().strip().splitlines()
            flooded = json.loads(lines[-1]) if lines else None
        except asyncio.TimeoutError:
            flood.kill()
            await flood.wait()
            flooded = None
        if hostile_result is not None:
            for key in ("outcomes", "slowest", "samples", "first"):
                hostile_result[key].update((flooded or {}).get(key, {}))
        hostile_stopped = time.monotonic()

        # After: the server settles.
        self.set_phase("after")
        await asyncio.sleep(max(0.0, hostile_stopped + a.settle - time.monotonic()))
        sampling[0] = False
        await sampler_task
        end = self.sample()
        metrics_end = (await http(self.port, "GET", "/metrics"))[1].decode(errors="replace")
        alive_status, _ = await http(self.port, "GET", "/healthz", timeout=5)
        health.stdin.close()
        out = await asyncio.to_thread(health.stdout.read)
        polls = json.loads(out) if out.strip() else []
        await asyncio.to_thread(health.wait)

        self.closing = True
        await asyncio.gather(*(c.ws.close() for c in self.clients if c.ws is not None), return_exceptions=True)
        await asyncio.wait(tasks, timeout=10)
        for task in tasks:
            task.cancel()
        self.report(hostile_result, polls, start, peak, end, metrics_start, metrics_end, alive_status)

    def report(self, hostile, polls, start, peak, end, metrics_start, metrics_end, alive_status):
        a = self.args
        # --- what the hostile clients were answered
        print("soak: hostile clients: attempts, what the server answered, slowest answer")
        if hostile is None:
            self.check(False, "the hostile clients' process finished and reported")
            hostile = {"outcomes": {}, "expected": {k: [sorted(v[0]), v[1]] for k, v in Hostile.EXPECTED.items()},
                       "slowest": {}, "samples": {}, "notes": {}, "slow_consumer_disconnects": 0, "commands_rejected": 0}
        width = max(len(k) for k in hostile["expected"])
        for kind in hostile["expected"]:
            answers = hostile["outcomes"].get(kind, {})
            shown = ", ".join(f"{answer} x{n}" for answer, n in sorted(answers.items(), key=lambda x: -x[1])) or "none"
            said = hostile.get("first", {}).get(kind)
            print(f"  {kind:{width}}  {sum(answers.values()):5}  {shown}  ({hostile['slowest'].get(kind, 0):.1f} s)"
                  + (f"  \"{said}\"" if said else ""))
        for note, n in sorted(hostile["notes"].items()):
            print(f"  ({note} x{n})")
        print(f"  slow-consumer disconnects during the attack: {hostile['slow_consumer_disconnects']:.0f}; "
              f"commands rejected: {hostile['commands_rejected']:.0f}")

        # --- latency, from the send to the receipt, per phase of the send
        def p99(values):
            values = sorted(values)
            return values[max(0, -(-len(values) * 99 // 100) - 1)] if values else float("nan")
        latencies = collections.defaultdict(list)
        for c in self.clients:
            for _, message_id, received in c.messages:
                sent = self.sent_at.get(message_id)
                if sent:
                    latencies[sent[1]].append(received - sent[0])
        base, attack = p99(latencies["baseline"]), p99(latencies["attack"])
        print(f"soak: delivery p99 baseline {base * 1000:.0f} ms ({len(latencies['baseline'])} deliveries), "
              f"under attack {attack * 1000:.0f} ms ({len(latencies['attack'])} deliveries; "
              f"max {max(latencies['attack'], default=0) * 1000:.0f} ms)")

        # --- /healthz, worst per phase
        phases = sorted(self.phase_started.items(), key=lambda x: x[1])

        def phase_of(t):
            current = phases[0][0]
            for name, started in phases:
                if t >= started:
                    current = name
            return current
        worst = collections.defaultdict(float)
        bad_polls = 0
        flood_polls = collections.Counter()   # during the pending flood a 503 is the documented answer
        flood_worst = 0.0
        for started, seconds, status in polls:
            if phase_of(started) == "pending flood":
                flood_polls[f"HTTP {status}" if status else "no answer"] += 1
                flood_worst = max(flood_worst, seconds)
                continue
            bad_polls += status != 200
            worst[phase_of(started)] = max(worst[phase_of(started)], seconds if status == 200 else max(seconds, 5.0))
        print(f"soak: /healthz {len(polls) - sum(flood_polls.values())} polls, {bad_polls} not 200; worst: " +
              ", ".join(f"{p} {worst[p] * 1000:.0f} ms" for p, _ in phases if p in worst)
              + f"; during the pending flood (200 or 503 expected): "
              + (", ".join(f"{k} x{v}" for k, v in sorted(flood_polls.items())) or "none") + f", worst {flood_worst * 1000:.0f} ms")

        # --- the server's resources
        mib = lambda b: f"{b / (1 << 20):.1f} MiB"
        (start_rss, start_fds), (end_rss, end_fds) = start, end
        peak_rss, peak_fds = max(r for r, _ in peak), max(f for _, f in peak)
        print(f"soak: server RSS start {mib(start_rss)}, peak {mib(peak_rss)}, end {mib(end_rss)}; "
              f"descriptors start {start_fds}, peak {peak_fds}, end {end_fds}")
        for name in ("checkmark_connections", "checkmark_commands_rejected_total",
                     "checkmark_slow_consumer_disconnects_total", "checkmark_frames_in_total", "checkmark_frames_out_total"):
            print(f"  {name}: {metrics_sum(metrics_start, name):.0f} at the start, {metrics_sum(metrics_end, name):.0f} at the end")
        events = collections.Counter()
        for c in self.clients:
            events.update(c.events)
        print("soak: events the well-behaved clients received: " + ", ".join(f"{k} {v}" for k, v in sorted(events.items())))

        # --- the checks
        lost = repeated = disordered = 0
        example = None
        for c in self.clients:
            expected = self.sent[c.channel]
            got = [m for _, m, _ in c.messages if m not in self.uncertain]
            seqs = [s for s, _, _ in c.messages]
            missing = set(expected) - set(got)
            lost += bool(missing)
            repeated += len(set(got)) != len(got)
            out_of_order = (not missing and len(set(got)) == len(got) and got != expected) \
                or any(not isinstance(s, int) for s in seqs) or any(x >= y for x, y in zip(seqs, seqs[1:]))
            disordered += out_of_order
            if got != expected and example is None:
                example = f"{c.user}: {len(got)} of {len(expected)}, missing e.g. {sorted(missing)[:3]}"
        total = sum(len(v) for v in self.sent.values())
        self.check(not self.send_failures,
                   f"every message of the well-behaved senders was accepted ({total} sent, "
                   f"{sum(self.send_failures.values())} not: {dict(self.send_failures)})")
        self.check(total and not (lost or repeated or disordered),
                   f"every well-behaved client got every message of its channel exactly once and in order "
                   f"(missing some at {lost}, repeats at {repeated}, out of order at {disordered} of {GOOD} clients"
                   + (f"; {example}" if example else "") + ")")
        closed = [c for c in self.clients if c.closed or c.failure]
        self.check(not closed, f"no well-behaved client was closed or failed ({len(closed)}"
                   + (f"; e.g. {closed[0].user}: {closed[0].closed or closed[0].failure}" if closed else "") + ")")
        errors = [c for c in self.clients if c.errors]
        sent_confirmations = sum(c.confirmations_sent for c in self.clients)
        unanswered = sent_confirmations - sum(c.confirmations_answered for c in self.clients)
        self.check(not errors and unanswered == 0,
                   f"every confirmation of the well-behaved clients was answered, none with an error "
                   f"({sent_confirmations} sent, {unanswered} unanswered, {len(errors)} clients got errors"
                   + (f"; e.g. {errors[0].errors[0]}" if errors else "") + ")")
        self.check(attack == attack and attack <= a.max_p99,
                   f"delivery p99 under attack {attack * 1000:.0f} ms <= {a.max_p99 * 1000:.0f} ms (baseline {base * 1000:.0f} ms)")
        self.check(set(flood_polls) <= {"HTTP 200", "HTTP 503"} and flood_worst < a.max_health,
                   f"/healthz during the pending flood answered 200 or 503 within {a.max_health * 1000:.0f} ms "
                   f"({', '.join(f'{k} x{v}' for k, v in sorted(flood_polls.items())) or 'no polls'}; worst {flood_worst * 1000:.0f} ms)")
        overall = max(worst.values(), default=float("inf"))
        self.check(polls and overall < a.max_health and alive_status == 200,
                   f"/healthz answered within {a.max_health * 1000:.0f} ms throughout (worst {overall * 1000:.0f} ms, "
                   f"{bad_polls} failed polls; at the end: HTTP {alive_status})")
        for kind, (expected, required) in hostile["expected"].items():
            answers = hostile["outcomes"].get(kind, {})
            ok = bool(answers) and set(answers) <= set(expected) and (required is None or required in answers)
            detail = ", ".join(f"{k} x{v}" for k, v in sorted(answers.items())) or "no attempt"
            sample = hostile["samples"].get(kind)
            self.check(ok, f"{kind}: expected {' or '.join(expected)}" + (f" (some {required})" if required else "")
                       + f"; got {detail}" + (f" [e.g. {sample}]" if sample and not ok else ""))
        non_readers = sum(sum(hostile["outcomes"].get(kind, {}).values())
                          for kind in ("WS watch, never read", "WS resume 5 channels from 0, never read"))
        self.check(non_readers and hostile["slow_consumer_disconnects"] >= non_readers,
                   f"every client that never read was dropped as a slow consumer "
                   f"({hostile['slow_consumer_disconnects']:.0f} slow-consumer disconnects for {non_readers} such clients)")
        self.check(peak_rss <= start_rss + (a.max_rss_peak << 20),
                   f"RSS during the attack within bounds: peak {mib(peak_rss)} from {mib(start_rss)} "
                   f"(bound start + {a.max_rss_peak} MiB; the resume attack alone asked for "
                   f"{HISTORY_CHANNELS * HISTORY_MESSAGES * HISTORY_TEXT * 20 / 1e6:.0f} MB of replay at once)")
        self.check(end_rss <= start_rss + (a.max_rss_growth << 20),
                   f"RSS back near the start: {mib(start_rss)} -> {mib(end_rss)} (peak {mib(peak_rss)}; "
                   f"bound start + {a.max_rss_growth} MiB)")
        self.check(end_fds <= start_fds + a.max_fd_growth,
                   f"descriptors back near the start: {start_fds} -> {end_fds} (peak {peak_fds}; bound start + {a.max_fd_growth})")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--role", choices=["soak", "hostile", "health"], default="soak")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pid", type=int, help="the server's process id (its RSS and descriptors are read from /proc)")
    parser.add_argument("--key", default="soak-key")
    parser.add_argument("--secret", default="soak-secret-used-only-by-the-soak-test")
    parser.add_argument("--baseline", type=float, default=10, help="seconds of load without attackers (default 10)")
    parser.add_argument("--duration", type=float, default=60, help="seconds of attack (default 60)")
    parser.add_argument("--settle", type=float, default=10, help="seconds after the attack before the end sample (default 10)")
    parser.add_argument("--rate", type=float, default=2, help="messages a second per channel (default 2)")
    parser.add_argument("--senders", type=int, default=5, help="sender tasks (default 5)")
    parser.add_argument("--max-p99", type=float, default=2.0, help="bound on the delivery p99 under attack, seconds (default 2)")
    parser.add_argument("--max-health", type=float, default=1.0, help="bound on /healthz latency, seconds (default 1)")
    parser.add_argument("--max-rss-growth", type=int, default=64, help="MiB the end RSS may exceed the start by (default 64)")
    parser.add_argument("--max-rss-peak", type=int, default=256,
                        help="MiB the RSS may exceed the start by at its peak during the attack (default 256)")
    parser.add_argument("--max-fd-growth", type=int, default=20, help="descriptors the end may exceed the start by (default 20)")
    parser.add_argument("--max-watched", type=int, default=1000,
                        help="the server's max_watched_channels (scripts/soak.sh sets it; default 1000)")
    parser.add_argument("--max-pending", type=int, default=4096,
                        help="the server's max_pending_connections (scripts/soak.sh sets it; default 4096)")
    parser.add_argument("--scale", type=float, default=1.0, help=argparse.SUPPRESS)
    parser.add_argument("--phase", choices=["attack", "pending"], default="attack", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "hostile":
        hostile_main(args)
        return
    if args.role == "health":
        health_main(args)
        return
    if args.pid is None:
        parser.error("--pid is required")
    raise_descriptor_limit()
    soak = Soak(args)
    budget = args.baseline + args.duration + args.settle + 120
    try:
        asyncio.run(asyncio.wait_for(soak.run(), budget))
    except asyncio.TimeoutError:
        soak.check(False, f"the soak finished within its hard timeout ({budget:.0f} s)")
    except Exception as error:  # noqa: BLE001
        soak.check(False, f"the soak ran to its end ({type(error).__name__}: {error})")
    passed = sum(soak.results)
    failed = len(soak.results) - passed
    print(f"soak: {passed} passed, {failed} failed", flush=True)
    sys.exit(0 if failed == 0 and passed > 0 else 1)


if __name__ == "__main__":
    main()
