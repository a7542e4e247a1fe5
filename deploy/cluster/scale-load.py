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
import bisect
import http.client
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
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
    latencies = []  # seconds from request to answer of each acknowledged command
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
            answered = time.monotonic()
            with lock:
                if status in (200, 201):
                    counts[node_index][0] += 1
                    latencies.append(answered - now)
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
    latencies.sort()
    percentile = lambda p: round(1000 * latencies[min(len(latencies) - 1, int(p * len(latencies)))], 1) if latencies else None
    print(json.dumps({
        "nodes": len(nodes), "seconds": args.seconds, "acknowledged_per_second": round(acknowledged / args.seconds, 1),
        "per_node": [round(count[0] / args.seconds, 1) for count in counts], "errors": sum(count[1] for count in counts),
        "first_errors": errors_seen, "latency_ms": {"p50": percentile(0.5), "p90": percentile(0.9), "p99": percentile(0.99)},
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


class Log:
    """Every command of a fault round: when it went and came back, what, where, and the answer."""

    def __init__(self):
        self.lock = threading.Lock()
        self.rows = []  # (sent, done, kind, cid, user, node index, status, message id)

    def add(self, *row):
        with self.lock:
            self.rows.append(row)


def scrape(url, name):
    """A metric's value from a node's /metrics (None when the node does not answer)."""
    try:
        with urllib.request.urlopen(f"{url}/metrics", timeout=2) as response:
            for line in response.read().decode().splitlines():
                if line.startswith(name + " ") or line.startswith(name + "{"):
                    return float(line.rsplit(" ", 1)[1])
    except OSError:
        return None
    return 0.0


def fault_load(args, nodes, live, log, stop, seed_base):
    """Clients as in `run`, each retrying on the next live node when its own is unreachable (as a
    load balancer would); sends carry their own message ids so that the check can find them."""
    users, channels = layout(args)
    of_user = {user: [] for user in users}
    for cid, members in channels.items():
        for member in members:
            of_user[member].append(cid)

    def client(node_index, user, seed):
        rng = random.Random(seed)
        clients = {}
        number = 0
        while not stop.is_set():
            if node_index not in live:
                node_index = min(live, key=lambda index: (index - node_index) % len(nodes))
            if node_index not in clients:
                clients[node_index] = Client(nodes[node_index], args.api_key, token(args.api_secret, {"user_id": user}))
            cid = rng.choice(of_user[user])
            sent = time.monotonic()
            if rng.random() < 0.3:
                number += 1
                message_id = f"{user}-{seed}-{number}"
                status, _ = clients[node_index].post(f"/channels/messaging/{cid}/message", {"message": {"id": message_id, "text": "fault round"}})
                log.add(sent, time.monotonic(), "send", cid, user, node_index, status, message_id)
            else:
                status, _ = clients[node_index].post(f"/channels/messaging/{cid}/read", {})
                log.add(sent, time.monotonic(), "read", cid, user, node_index, status, None)
            if status == 0:
                time.sleep(0.05)

    threads = []
    for node_index in range(len(nodes)):
        here = [user for user in users if node_of(user, len(nodes)) == node_index]
        for index in range(args.clients_per_node):
            threads.append(threading.Thread(target=client, args=(node_index, here[index % len(here)], seed_base + node_index * 1000 + index), daemon=True))
    for thread in threads:
        thread.start()
    return threads


def psql(args, sql):
    output = subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(args.pg_port), "-U", "checkmark", "-d", "checkmark", "-tAF", "\t", "-c", sql],
                            env={**os.environ, "PGPASSWORD": "checkmark"}, capture_output=True, text=True, timeout=60)
    if output.returncode != 0:
        raise RuntimeError(f"psql: {output.stderr.strip()}")
    return [line.split("\t") for line in output.stdout.splitlines() if line]


def shard_of(cid):
    """The shard of `messaging:<cid>` as Checkmark computes it: jump_hash(fnv1a64(cid), 256)."""
    key = 0xcbf29ce484222325
    for byte in f"messaging:{cid}".encode():
        key = ((key ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    b, j = -1, 0
    while j < 256:
        b = j
        key = (key * 2862933555777941757 + 1) & 0xFFFFFFFFFFFFFFFF
        j = int((b + 1) * (float(1 << 31) / float((key >> 33) + 1)))
    return b


def faults(args):
    """The fault round of scale-check.sh: SIGKILL the node owning most shards at 20 s, SIGSTOP another
    for 8 s at 40 s, then PostgreSQL stopped for 15 s under load, then the checks."""
    nodes = args.nodes.split(",")
    pids = [int(pid) for pid in args.pids.split(",")]
    live = set(range(len(nodes)))
    log = Log()
    failures = []
    report = {}
    schema = args.schema
    stop = threading.Event()
    start = time.monotonic()
    threads = fault_load(args, nodes, live, log, stop, 0)

    time.sleep(max(0, start + args.kill_at - time.monotonic()))
    owned = [scrape(url, "checkmark_shards_owned") or 0 for url in nodes]
    victim = max(range(len(nodes)), key=lambda index: owned[index])
    before = dict((int(shard), owner) for shard, owner in psql(args, f"SELECT shard, owner FROM {schema}.shards"))
    os.kill(pids[victim], signal.SIGKILL)
    killed_at = time.monotonic()
    live.discard(victim)
    report["killed"] = {"node": victim + 1, "shards_owned": owned[victim]}

    time.sleep(max(0, start + args.stop_at - time.monotonic()))
    after = dict((int(shard), owner) for shard, owner in psql(args, f"SELECT shard, owner FROM {schema}.shards"))
    gone = set(before.values()) - set(after.values())
    killed_shards = {shard for shard, owner in before.items() if owner in gone}
    paused = min(live, key=lambda index: (index - victim) % len(nodes))
    fenced_before = scrape(nodes[paused], "checkmark_fence_rejections_total") or 0
    os.kill(pids[paused], signal.SIGSTOP)
    stopped_at = time.monotonic()
    time.sleep(args.pause)
    os.kill(pids[paused], signal.SIGCONT)
    time.sleep(max(0, start + args.seconds - time.monotonic()))
    fenced_after = scrape(nodes[paused], "checkmark_fence_rejections_total") or 0
    report["paused"] = {"node": paused + 1, "seconds": args.pause, "fence_rejections": fenced_after - fenced_before,
                        "reloads": (scrape(nodes[paused], "checkmark_storage_reloads_total") or 0)}

    # PostgreSQL stopped under load, then started again.
    subprocess.run(["deploy/cluster/postgres.sh", "stop", args.pg_dir], check=True)
    pg_down = time.monotonic()
    time.sleep(args.pg_down)
    subprocess.run(["deploy/cluster/postgres.sh", "start", args.pg_dir, str(args.pg_port)], check=True, capture_output=True)
    pg_up = time.monotonic()
    time.sleep(args.recover + 10)
    stop.set()
    for thread in threads:
        thread.join()
    end = time.monotonic()
    rows = log.rows

    # Every acknowledged send is stored; every acknowledged read covers what was acknowledged before it.
    acknowledged = [row for row in rows if row[6] in (200, 201)]
    stored_ids = {row[0] for row in psql(args, f"SELECT id FROM {schema}.messages")}
    lost = [row[7] for row in acknowledged if row[2] == "send" and row[7] not in stored_ids]
    if lost:
        failures.append(f"{len(lost)} acknowledged sends are not stored, e.g. {lost[:3]}")
    sends = {}
    for row in acknowledged:
        if row[2] == "send":
            sends.setdefault(row[3], []).append(row[1])
    for times in sends.values():
        times.sort()
    needed = {}
    for row in acknowledged:
        if row[2] == "read":
            count = bisect.bisect_left(sends.get(row[3], []), row[0])
            needed[(row[4], row[3])] = max(needed.get((row[4], row[3]), 0), count)
    positions = {(user, cid.split(":", 1)[1]): int(position)
                 for cid, user, position in psql(args, f"SELECT cid, user_id, read_position FROM {schema}.members")}
    uncovered = [key for key, count in needed.items() if positions.get(key, 0) < count]
    if uncovered:
        failures.append(f"{len(uncovered)} acknowledged reads are not covered by the stored read position, e.g. {uncovered[:3]}")

    # Every channel's events and every stream's entries are numbered without gaps.
    gaps = psql(args, f"""SELECT cid FROM {schema}.journal_events WHERE cid IS NOT NULL GROUP BY cid
                           HAVING min(channel_seq) <> 1 OR max(channel_seq) <> count(*)""")
    if gaps:
        failures.append(f"{len(gaps)} channels' journals have gaps, e.g. {gaps[:3]}")
    stream_gaps = psql(args, f"SELECT stream FROM {schema}.journal GROUP BY stream HAVING max(stream_seq) - min(stream_seq) + 1 <> count(*)")
    if stream_gaps:
        failures.append(f"{len(stream_gaps)} journal streams have gaps")

    # After the kill, commands on the killed node's shards fail for at most 8 s; on others never.
    def failed(row):
        return row[6] not in (200, 201) and row[6] != 0  # 0: the client's own node unreachable
    # (Commands answered before the second node was stopped: those it held meanwhile are its fault.)
    window = [row for row in rows if killed_at <= row[0] and row[1] < stopped_at]
    on_killed = [row for row in window if failed(row) and shard_of(row[3]) in killed_shards]
    on_others = [row for row in window if failed(row) and shard_of(row[3]) not in killed_shards]
    longest = max((row[0] - killed_at for row in on_killed), default=0)
    report["kill"] = {"killed_shards": len(killed_shards), "failed_on_them": len(on_killed), "failing_for_s": round(longest, 1),
                      "first_failure_s": round(min((row[0] - killed_at for row in on_killed), default=0), 1),
                      "failed_elsewhere": len(on_others), "statuses": sorted({row[6] for row in on_killed + on_others})}
    if longest > 8:
        failures.append(f"commands on the killed node's shards failed for {longest:.1f} s (at most 8)")
    if on_others:
        failures.append(f"{len(on_others)} commands on other shards failed after the kill, e.g. {[(row[3], row[6]) for row in on_others[:3]]}")
    if not killed_shards:
        failures.append("the killed node owned no shard: nothing was tested")

    # PostgreSQL down: commands fail retryably (503) meanwhile; every node carries on afterwards.
    down = [row for row in rows if pg_down <= row[0] < pg_up + args.recover]
    wrong = sorted({row[6] for row in down if row[6] not in (200, 201, 503, 0)})
    recovered = [row for row in rows if row[0] >= pg_up + args.recover]
    failing_after = [row for row in recovered if row[6] not in (200, 201)]
    nodes_after = sorted({row[5] + 1 for row in recovered if row[6] in (200, 201)})
    report["postgres_restart"] = {"down_s": args.pg_down, "answers_meanwhile": sorted({row[6] for row in down}),
                                  f"failed_after_{args.recover}s": len(failing_after), "nodes_answering_after": nodes_after}
    if wrong:
        failures.append(f"while PostgreSQL was down, commands were answered {wrong} (retryable is 503)")
    if failing_after:
        failures.append(f"{len(failing_after)} commands failed {args.recover} s after PostgreSQL was back, e.g. {[row[6] for row in failing_after[:3]]}")
    if set(nodes_after) != {index + 1 for index in live}:
        failures.append(f"not every live node answered after PostgreSQL was back: {nodes_after}")
    report["commands"] = len(rows)
    report["acknowledged"] = len(acknowledged)
    report["seconds"] = round(end - start, 1)
    report["live"] = sorted(index + 1 for index in live)
    report["failures"] = failures
    print(json.dumps(report))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["setup", "run", "totals", "faults"])
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
    parser.add_argument("--pids", help="faults: the nodes' process ids, in --nodes order")
    parser.add_argument("--schema", help="faults: the cluster's schema")
    parser.add_argument("--pg-dir", help="faults: PostgreSQL's data directory (deploy/cluster/postgres.sh)")
    parser.add_argument("--pg-port", type=int, help="faults: PostgreSQL's port on 127.0.0.1")
    parser.add_argument("--kill-at", type=float, default=20, help="faults: seconds into the load")
    parser.add_argument("--stop-at", type=float, default=40, help="faults: seconds into the load")
    parser.add_argument("--pause", type=float, default=8, help="faults: how long the second node stays stopped")
    parser.add_argument("--pg-down", type=float, default=15, help="faults: how long PostgreSQL stays stopped")
    parser.add_argument("--recover", type=float, default=15, help="faults: seconds after PostgreSQL is back by which every command succeeds")
    args = parser.parse_args()
    {"setup": setup, "run": run, "totals": totals, "faults": faults}[args.mode](args)


if __name__ == "__main__":
    main()
