"""Fixtures of the compatibility suite: a real `checkmark serve` on 127.0.0.1, the official
`stream-chat` SDK pointed at it (server side, and client side with user tokens), and independent
WebSocket listeners on `/connect` (the `websockets` package). Every answer the SDK receives is checked
against docs/openapi.json and against Stream's own shapes (stream_shapes.py), and so is every frame a
listener receives: the whole suite is a shape check."""

import itertools
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

import jsonschema
import pytest
import re
from stream_chat import StreamChat
from websockets.sync.client import connect as ws_connect

import stream_shapes

API_KEY = "compat-key"
API_SECRET = "compat-secret-used-only-by-the-compatibility-suite"
ROOT = Path(__file__).resolve().parents[2]
# How long a listener waits to be sure an event does not come.
QUIET = 0.6

_counter = itertools.count()


def unique(prefix):
    """An id no other test uses (the server is shared by the whole session)."""
    return f"{prefix}-{os.getpid()}-{next(_counter)}"


def room(client, members, type_="messaging"):
    """A fresh channel of `type_` with `members`, created by the first."""
    channel = client.channel(type_, unique("room"), data={"members": members})
    channel.create(members[0])
    return channel


def watch(listener, channel):
    """Makes `listener` watch `channel` over the socket; returns the reply."""
    request_id = unique("w")
    listener.send({"type": "watch", "cid": channel.cid, "request_id": request_id})
    reply = listener.next("reply")
    assert reply["request_id"] == request_id
    return reply


def delivery_type(client, read_events=True):
    """A fresh channel type with delivery events on."""
    name = unique("dlv").replace("-", "_")
    client.create_channel_type({"name": name, "delivery_events": True, "read_events": read_events})
    return name


def reads_of(state):
    """A channel state's read states by user id."""
    return {r["user"]["id"]: r for r in state["read"]}


def _binary():
    path = os.environ.get("CHECKMARK_BINARY") or str(ROOT / ".build" / "debug" / "checkmark")
    if not os.path.exists(path):
        raise RuntimeError(f"no checkmark binary at {path}; build it first (swift build --product checkmark)")
    return path


class Server:
    def __init__(self):
        self.data = tempfile.mkdtemp(prefix="checkmark-compat-")
        self.process = subprocess.Popen(
            [_binary(), "serve", "--port", "0", "--data-dir", self.data, "--api-key", API_KEY,
             "--api-secret", API_SECRET, "--log-level", "warning"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        deadline = time.time() + 30
        self.port = None
        while time.time() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            if line.startswith("checkmark listening on "):
                self.port = int(line.strip().rsplit(":", 1)[1])
                break
        if self.port is None:
            self.stop()
            raise RuntimeError("checkmark serve did not start")
        # Keep draining its output so that it never blocks on a full pipe.
        threading.Thread(target=lambda: [None for _ in self.process.stdout], daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self.port}"

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.data, ignore_errors=True)


class OpenAPIChecker:
    """Checks every HTTP response the SDK receives against docs/openapi.json: the route and method
    must be documented, and the JSON body must match the schema documented for its status."""

    def __init__(self):
        self.document = json.loads((ROOT / "docs" / "openapi.json").read_text())
        self.routes = []
        for template, item in self.document["paths"].items():
            pattern = re.sub(r"\\{[^/]+\\}", "[^/]+", re.escape(template))
            literal = template.count("{")
            self.routes.append((literal, re.compile(f"^{pattern}$"), template, item))
        self.routes.sort(key=lambda route: route[0])
        self.checked = 0

    def operation(self, method, path):
        for _, pattern, template, item in self.routes:
            if pattern.match(path) and method.lower() in item:
                return template, item[method.lower()]
        return None, None

    def __call__(self, response, *args, **kwargs):
        path = urllib.parse.urlparse(response.request.url).path
        template, operation = self.operation(response.request.method, path)
        assert operation is not None, f"{response.request.method} {path} is not in docs/openapi.json"
        documented = operation["responses"].get(str(response.status_code))
        assert documented is not None, f"{response.request.method} {template} answered {response.status_code}, which is not documented"
        schema = dict(documented["content"]["application/json"]["schema"])
        schema["components"] = self.document["components"]
        jsonschema.validate(response.json(), schema, cls=jsonschema.Draft202012Validator)
        errors = stream_shapes.validate_response(response.request.method, path, response.status_code, response.json())
        assert not errors, "answer does not have Stream's shape:\n" + "\n".join(errors)
        self.checked += 1
        return response


# Frames the listeners received that do not have Stream's shape, collected by their threads and
# reported by the `shapes_of_frames` fixture at the end of each test.
FRAME_SHAPE_ERRORS = []
FRAMES_CHECKED = {}


@pytest.fixture(autouse=True)
def shapes_of_frames():
    """Fails the test when any WebSocket frame received during it did not have Stream's shape."""
    FRAME_SHAPE_ERRORS.clear()
    yield
    errors = list(FRAME_SHAPE_ERRORS)
    FRAME_SHAPE_ERRORS.clear()
    assert not errors, "frames without Stream's shape:\n" + "\n".join(errors[:20])


@pytest.fixture(scope="session")
def openapi():
    return OpenAPIChecker()


class ExternalServer:
    """A server someone else runs, e.g. a cluster behind nginx (deploy/cluster/cluster.sh), named by
    CHECKMARK_COMPAT_URL (http://127.0.0.1:PORT); it must use this suite's API key and secret."""

    def __init__(self, url):
        parsed = urllib.parse.urlparse(url)
        self.port = parsed.port
        self.base_url = f"http://127.0.0.1:{self.port}"

    def stop(self):
        pass


@pytest.fixture(scope="session")
def server():
    url = os.environ.get("CHECKMARK_COMPAT_URL")
    s = ExternalServer(url) if url else Server()
    yield s
    s.stop()


@pytest.fixture(scope="session")
def client(server, openapi):
    """The official SDK with the server token, as a backend uses it. Every response it receives is
    checked against docs/openapi.json."""
    c = StreamChat(api_key=API_KEY, api_secret=API_SECRET, base_url=server.base_url)
    c.session.hooks["response"].append(openapi)
    return c


@pytest.fixture(scope="session")
def as_user(server, client, openapi):
    """`as_user("ann")`: the official SDK sending ann's user token instead of the server token,
    as client-side calls do."""
    def make(user_id):
        c = StreamChat(api_key=API_KEY, api_secret=API_SECRET, base_url=server.base_url)
        c.auth_token = client.create_token(user_id)
        c.session.hooks["response"].append(openapi)
        return c
    return make


class Listener:
    """One WebSocket connection on /connect as one user, collecting every event it receives."""

    def __init__(self, server, client, user_id):
        query = urllib.parse.urlencode({
            "json": json.dumps({"user_id": user_id, "user_details": {"id": user_id}}),
            "api_key": API_KEY,
            "authorization": client.create_token(user_id),
            "stream-auth-type": "jwt",
        })
        self.user_id = user_id
        # Entered as a context manager (newer `websockets` warn otherwise); compression is left on, so
        # events also cross Checkmark's permessage-deflate.
        self._context = ws_connect(f"ws://127.0.0.1:{server.port}/connect?{query}", open_timeout=10, max_size=None)
        self.socket = self._context.__enter__()
        self.events = queue.Queue()
        first = json.loads(self.socket.recv(timeout=10))
        assert first["type"] == "health.check", first
        self._check(first, validate=stream_shapes.validate_first_health_check)
        self.first = first
        self.connection_id = first["connection_id"]
        self.me = first["me"]
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    @staticmethod
    def _check(event, validate=stream_shapes.validate_event):
        errors = validate(event)
        FRAME_SHAPE_ERRORS.extend(errors)
        if isinstance(event, dict):
            FRAMES_CHECKED[event.get("type")] = FRAMES_CHECKED.get(event.get("type"), 0) + 1

    def _run(self):
        try:
            for text in self.socket:
                event = json.loads(text)
                self._check(event)
                self.events.put(event)
        except Exception:
            pass

    def next(self, event_type, timeout=5.0):
        """The next event of this type (others before it are skipped)."""
        deadline = time.time() + timeout
        while True:
            remaining = deadline - time.time()
            if remaining <= 0:
                raise AssertionError(f"{self.user_id}: no {event_type} within {timeout}s")
            try:
                event = self.events.get(timeout=remaining)
            except queue.Empty:
                continue
            if event.get("type") == event_type:
                return event

    def none(self, event_type, within=QUIET):
        """Asserts that no event of this type arrives within the window."""
        deadline = time.time() + within
        while True:
            remaining = deadline - time.time()
            if remaining <= 0:
                return
            try:
                event = self.events.get(timeout=remaining)
            except queue.Empty:
                return
            assert event.get("type") != event_type, f"{self.user_id} received an unexpected {event_type}: {event}"

    def send(self, command):
        self.socket.send(json.dumps(command))

    def close(self):
        self._context.__exit__(None, None, None)


@pytest.fixture
def listen(server, client):
    """`listen("ann")` opens a listener; all are closed after the test."""
    opened = []

    def make(user_id):
        listener = Listener(server, client, user_id)
        opened.append(listener)
        return listener
    yield make
    for listener in opened:
        listener.close()


@pytest.fixture
def users(client):
    """`users("ann", "ben")` upserts fresh users and returns their ids (unique per test)."""
    def make(*names, **privacy):
        ids = [unique(name) for name in names]
        client.upsert_users([{"id": i, "name": n} for i, n in zip(ids, names)])
        return ids
    return make
