#!/usr/bin/env python3
"""The load of deploy/cluster/scale-check.sh: many small channels, users each on the node
`crc32(user) mod N`, and per node a number of clients with one command in flight each (70% mark
read, 30% send), over REST with user tokens. `setup` creates the users and channels (through the
first node, with a server token); `run` measures and prints one JSON line: acknowledged commands per
second in all and per node, and the errors; `totals` asks every user's node for the user's totals
(`GET /unread`, and a new connection's `health.check`) and compares them with an oracle computed from
the stored rows (`--oracle`, a JSON object: user id to `[total unread messages, unread channels]`),
printing one JSON line with the mismatches. Stops by itself.

    deploy/cluster/scale-load.py setup --nodes http://10.77.0.11:9101 [--channels 2048 --members 8 --users 64]
    deploy/cluster/scale-load.py run --nodes URL,URL,... [--seconds 30 --clients-per-node 8]
    deploy/cluster/scale-load.py totals --nodes URL,URL,... --oracle FILE
"""
import argparse
import asyncio
import http.client
import json
import random
import sys
import threading
import time
import urllib.parse
import zlib
from concurrent.futures import ThreadPoolExecutor

from stream_token import token




def layout(args):
    """The users, and each channel's members: the same for every run of the same arguments."""
    users = [f"su{index}" for index in range(args.users)]
    rng = random.Random(7)
    channels = {f"sc{index}": rng.sample(users, args.members) for index in range(args.channels)}
    return users, channels


class Client:
    """One keep-alive HTTP connection to one node."""

    def __init__(self, url, api_key, auth):
        parts = urllib.parse.urlsplit(url)
        self.host, self.port = parts.hostname, parts.port or 80
        self.api_key = api_key
        self.auth = auth
        self.connection = None

    def post(self, path, body):
        return self.request("POST", path, json.dumps(body))

    def get(self, path):
        return self.request("GET", path, None)

    def request(self, method, path, body):
        for attempt in range(2):
            try:
                if self.connection is None:
                    self.connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
                self.connection.request(method, f"{path}?api_key={self.api_key}", body=body, headers={
                    "Authorization": self.auth, "stream-auth-type": "jwt", "Content-Type": "application/json"})
                response = self.connection.getresponse()
                data = response.read()
                return response.status, data
            except (OSError, http.client.HTTPException) as error:
                self.connection = None
                if attempt == 1:
                    return 0, str(error).encode()
        return 0, b""


def setup(args):
    users, channels = layout(args)
    node = args.nodes.split(",")[0]
    admin = Client(node, args.api_key, token(args.api_secret, {"server": True}))
    status, body = admin.post("/users", {"users": {user: {"id": user} for user in users}})
    if status not in (200, 201):
        sys.exit(f"scale-load: creating users failed: {status} {body[:200]!r}")

    def create(item):
        cid, members = item
        client = Client(node, args.api_key, token(args.api_secret, {"server": True}))
        status, body = client.post(f"/channels/messaging/{cid}/query", {"data": {"members": members, "created_by_id": members[0]}})
        if status not in (200, 201):
            raise RuntimeError(f"creating {cid} failed: {status} {body[:200]!r}")

    with ThreadPoolExecutor(max_workers=16) as pool:
        list(pool.map(create, channels.items()))
    print(json.dumps({"users": len(users), "channels": len(channels)}))


def run(args):
    users, channels = layout(args)
    nodes = args.nodes.split(",")
    of_user = {user: [] for user in users}
    for cid, members in channels.items():
        for member in members:
            of_user[member].append(cid)
    counts = [[0, 0] for _ in nodes]  # per node: acknowledged, errors
    lock = threading.Lock()
    started = time.monotonic()
    measuring_from = started + args.warmup
    until = measuring_from + args.seconds
    errors_seen = []

    def client(node_index, user, seed):
        rng = random.Random(seed)
        http_client = Client(nodes[node_index], args.api_key, token(args.api_secret, {"user_id": user}))
        mine = of_user[user]
        while True:
            now = time.monotonic()
            if now >= until:
                return
            cid = rng.choice(mine)
            if rng.random() < 0.3:
                status, body = http_client.post(f"/channels/messaging/{cid}/message", {"message": {"text": "scale check"}})
            else:
                status, body = http_client.post(f"/channels/messaging/{cid}/read", {})
            if now < measuring_from:
                continue
            with lock:
                if status in (200, 201):
                    counts[node_index][0] += 1
                else:
                    counts[node_index][1] += 1
                    if len(errors_seen) < 5:
                        errors_seen.append(f"{status} {body[:160]!r}")

    threads = []
    for node_index in range(len(nodes)):
        here = [user for user in users if node_of(user, len(nodes)) == node_index]
        for index in range(args.clients_per_node):
            user = here[index % len(here)]
            threads.append(threading.Thread(target=client, args=(node_index, user, node_index * 1000 + index), daemon=True))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    acknowledged = sum(count[0] for count in counts)
    print(json.dumps({
        "nodes": len(nodes), "seconds": args.seconds, "acknowledged_per_second": round(acknowledged / args.seconds, 1),
        "per_node": [round(count[0] / args.seconds, 1) for count in counts], "errors": sum(count[1] for count in counts),
        "first_errors": errors_seen,
    }))


def node_of(user, count):
    return zlib.crc32(user.encode()) % count


async def health_check(url, args, user):
    """The `me` of a new connection's `health.check`: the user's totals as a client first sees them."""
    import websockets
    parts = urllib.parse.urlsplit(url)
    query = urllib.parse.urlencode({
        "json": json.dumps({"user_id": user}), "api_key": args.api_key,
        "authorization": token(args.api_secret, {"user_id": user}), "stream-auth-type": "jwt"})
    async with websockets.connect(f"ws://{parts.hostname}:{parts.port}/connect?{query}", open_timeout=10) as ws:
        first = json.loads(await asyncio.wait_for(ws.recv(), 10))
        if first.get("type") != "health.check":
            raise RuntimeError(f"first event for {user} is {first.get('type')}")
        return first["me"]


def totals(args):
    users, _ = layout(args)
    nodes = args.nodes.split(",")
    with open(args.oracle) as file:
        oracle = {user: tuple(value) for user, value in json.load(file).items()}
    mismatches = []
    for user in users:
        url = nodes[node_of(user, len(nodes))]
        expected = oracle.get(user, (0, 0))
        status, body = Client(url, args.api_key, token(args.api_secret, {"user_id": user})).get("/unread")
        if status != 200:
            mismatches.append(f"{user}: GET /unread answered {status} {body[:160]!r}")
            continue
        unread = json.loads(body)
        rest = (unread["total_unread_count"], unread["total_unread_channels"])
        me = asyncio.run(health_check(url, args, user))
        connected = (me["total_unread_count"], me["unread_channels"])
        if rest != expected or connected != expected:
            mismatches.append(f"{user} on node {node_of(user, len(nodes)) + 1}: stored {expected}, GET /unread {rest}, health.check {connected}")
    print(json.dumps({"users": len(users), "mismatches": len(mismatches), "first_mismatches": mismatches[:5]}))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["setup", "run", "totals"])
    parser.add_argument("--nodes", required=True, help="the nodes' base URLs, comma-separated, node 1 first")
    parser.add_argument("--api-key", default="scale-check-key")
    parser.add_argument("--api-secret", default="scale-check-secret-0123456789")
    parser.add_argument("--users", type=int, default=64)
    parser.add_argument("--channels", type=int, default=2048)
    parser.add_argument("--members", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--warmup", type=float, default=3)
    parser.add_argument("--clients-per-node", type=int, default=8)
    parser.add_argument("--oracle", help="totals: the stored totals per user, as JSON")
    args = parser.parse_args()
    {"setup": setup, "run": run, "totals": totals}[args.mode](args)


if __name__ == "__main__":
    main()
