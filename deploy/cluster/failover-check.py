#!/usr/bin/env python3
"""SIGKILL one node of a running loopback cluster (deploy/cluster/cluster.sh) under load and check that
nothing is lost and nothing repeated.

Readers connect through nginx (spread over the nodes by least connections) and watch one channel; a
writer sends messages through nginx's REST endpoint, one at a time, retrying a failed request with the
same message id (an "already exists" answer means the first attempt committed); readers confirm what
they read as they go. A third of the way in, node 1 is killed with SIGKILL. Readers whose connection
dropped reconnect through nginx, resuming the channel from the last `channel_seq` they saw. At the end every reader must
hold every accepted message exactly once, in order, with channel_seq strictly increasing, and readers
on the surviving nodes must never have been disconnected. Exits 1 otherwise. Stops by itself.

    deploy/cluster/failover-check.py [--readers 30] [--messages 600] [--rate 100]
"""
import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import websockets

from stream_token import token

CID = None  # messaging:<--channel>




class Cluster:
    def __init__(self, args):
        self.port = args.lb_port
        self.key = args.api_key
        self.secret = args.api_secret
        self.server_token = token(self.secret, {"server": True})

    def rest(self, method, path, body):
        url = f"http://127.0.0.1:{self.port}{path}?api_key={self.key}"
        request = urllib.request.Request(url, data=json.dumps(body).encode(), method=method, headers={
            "Authorization": self.server_token, "stream-auth-type": "jwt", "Content-Type": "application/json"})
        def parse(raw):
            try:
                return json.loads(raw or b"{}")
            except ValueError:
                return {"body": raw.decode(errors="replace")}  # nginx's own page: 502 when a node died mid-request
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, parse(response.read())
        except urllib.error.HTTPError as error:
            return error.code, parse(error.read())
        except (urllib.error.URLError, ConnectionError, TimeoutError) as error:
            return 0, {"error": str(error)}


class Reader:
    def __init__(self, cluster, user):
        self.cluster = cluster
        self.user = user
        self.messages = []      # message ids of message.new, in arrival order
        self.seqs = []          # channel_seq of every channel event, in arrival order
        self.disconnects = 0
        self.resumes = []       # (replayed, seconds from drop to resumed)
        self.ws = None
        self.done = asyncio.Event()
        self.request = 0

    async def connect(self, last_seq=None):
        # Reconnecting, resume on connect: the server holds the channel's live events from the moment
        # the connection opens, so that everything arrives in channel order.
        request = {"user_id": self.user}
        if last_seq is not None:
            request["resume"] = {CID: last_seq}
        query = urllib.parse.urlencode({
            "json": json.dumps(request), "api_key": self.cluster.key,
            "authorization": token(self.cluster.secret, {"user_id": self.user}), "stream-auth-type": "jwt"})
        self.ws = await websockets.connect(f"ws://127.0.0.1:{self.cluster.port}/connect?{query}", max_size=None,
                                           open_timeout=5)
        first = json.loads(await asyncio.wait_for(self.ws.recv(), 5))
        assert first["type"] == "health.check", first
        if last_seq is None:
            await self.ws.send(json.dumps({"type": "watch", "request_id": "watch", "cid": CID}))

    async def run(self, stop):
        await self.connect()
        while not stop.is_set():
            try:
                raw = await asyncio.wait_for(self.ws.recv(), 0.5)
            except asyncio.TimeoutError:
                continue
            except websockets.ConnectionClosed:
                dropped = time.monotonic()
                self.disconnects += 1
                last = self.seqs[-1] if self.seqs else 0
                while not stop.is_set():
                    try:
                        await self.connect(last_seq=last)
                        break
                    except (OSError, websockets.WebSocketException, asyncio.TimeoutError, AssertionError):
                        await asyncio.sleep(0.1)
                self.resumes.append([0, dropped])
                continue
            event = json.loads(raw)
            kind = event.get("type")
            if kind == "channel.resume_failed":
                raise AssertionError(f"{self.user}: resume failed: {event}")
            if kind == "channel.resumed" and self.resumes:
                self.resumes[-1] = [event.get("replayed"), time.monotonic() - self.resumes[-1][1]]
            if event.get("cid") == CID and "channel_seq" in event and not kind.startswith("channel.resume"):
                self.seqs.append(event["channel_seq"])
            if kind == "message.new":
                self.messages.append(event["message"]["id"])
                if len(self.messages) % 25 == 0:
                    self.request += 1
                    try:
                        await self.ws.send(json.dumps({"type": "mark_read", "request_id": f"r{self.request}", "cid": CID}))
                    except websockets.ConnectionClosed:
                        pass
        await self.ws.close()


async def writer(cluster, channel, count, rate, accepted, on_progress):
    interval = 1.0 / rate
    loop = asyncio.get_running_loop()
    for index in range(count):
        started = time.monotonic()
        message_id = f"{channel}-{index}"
        for attempt in range(100):
            status, body = await loop.run_in_executor(None, cluster.rest, "POST", f"/channels/messaging/{channel}/message",
                                                      {"message": {"id": message_id, "text": f"message {index}", "user_id": "writer"}})
            if status == 201 or status == 200:
                break
            if "already exists" in json.dumps(body):
                break  # an earlier attempt committed
            await asyncio.sleep(0.1)
        else:
            raise AssertionError(f"message {message_id} never accepted: {status} {body}")
        accepted.append(message_id)
        on_progress(index + 1)
        await asyncio.sleep(max(0.0, interval - (time.monotonic() - started)))


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--readers", type=int, default=30)
    parser.add_argument("--messages", type=int, default=600)
    parser.add_argument("--rate", type=float, default=100)
    parser.add_argument("--lb-port", type=int, default=int(os.environ.get("LB_PORT", "9100")))
    parser.add_argument("--api-key", default=os.environ.get("CHECKMARK_API_KEY", "checkmark-dev-key"))
    parser.add_argument("--api-secret", default=os.environ.get("CHECKMARK_API_SECRET", "checkmark-dev-secret-NOT-FOR-PRODUCTION"))
    parser.add_argument("--kill-node", type=int, default=1)
    parser.add_argument("--channel", default=f"failover-{int(time.time())}", help="channel id (messaging type), new for each run")
    args = parser.parse_args()
    global CID
    CID = f"messaging:{args.channel}"
    cluster = Cluster(args)

    users = [f"reader{i}" for i in range(args.readers)]
    status, body = cluster.rest("POST", "/users", {"users": {u: {"id": u} for u in users + ["writer"]}})
    assert status == 201 or status == 200, (status, body)
    status, body = cluster.rest("POST", f"/channels/messaging/{args.channel}/query", {"data": {"members": users + ["writer"]}})
    assert status == 201 or status == 200, (status, body)

    stop = asyncio.Event()
    readers = [Reader(cluster, u) for u in users]
    tasks = [asyncio.create_task(r.run(stop)) for r in readers]
    await asyncio.sleep(1.0)
    accepted = []
    killed_at = []

    def progress(sent):
        if sent == args.messages // 3 and not killed_at:
            subprocess.run(["deploy/cluster/cluster.sh", "kill-node", str(args.kill_node)], check=True)
            killed_at.append(time.monotonic())
            print(f"failover: killed node {args.kill_node} with SIGKILL after {sent} messages", flush=True)

    started = time.monotonic()
    await writer(cluster, args.channel, args.messages, args.rate, accepted, progress)
    elapsed = time.monotonic() - started
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(len(r.messages) < len(accepted) for r in readers):
        await asyncio.sleep(0.2)
    await asyncio.sleep(0.5)
    stop.set()
    await asyncio.gather(*tasks)

    failures = []
    for r in readers:
        if r.messages != accepted:
            missing = [m for m in accepted if m not in set(r.messages)]
            repeated = len(r.messages) - len(set(r.messages))
            failures.append(f"{r.user}: {len(r.messages)} of {len(accepted)} messages, {len(missing)} missing "
                            f"(first {missing[:3]}), {repeated} repeated, disconnects {r.disconnects}")
        if any(b <= a for a, b in zip(r.seqs, r.seqs[1:])):
            failures.append(f"{r.user}: channel_seq not strictly increasing")
    dropped = [r for r in readers if r.disconnects]
    if not dropped:
        failures.append("no reader was on the killed node: nothing was tested")
    if len(dropped) == len(readers):
        failures.append("every reader was disconnected: the surviving nodes' clients were interrupted")
    if any(r.disconnects > 1 for r in readers):
        failures.append("a reader was disconnected more than once")
    resume_times = sorted(t for r in dropped for _, t in r.resumes)
    replayed = sum(n or 0 for r in dropped for n, _ in r.resumes)
    print(f"failover: {len(readers)} readers, {len(accepted)} messages at {len(accepted) / elapsed:.0f}/s, "
          f"{len(dropped)} readers on the killed node reconnected and resumed ({replayed} events replayed, "
          f"drop to resumed p50 {resume_times[len(resume_times) // 2] * 1000:.0f} ms, max {resume_times[-1] * 1000:.0f} ms), "
          f"{len(readers) - len(dropped)} readers never interrupted" if resume_times else "failover: no resumes")
    for failure in failures:
        print("FAIL", failure)
    print(f"failover: {'0 failed' if not failures else f'{len(failures)} failed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
