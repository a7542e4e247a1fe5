"""Shape conformance: every object and event Checkmark serves has the fields Stream's API description
marks required, with Stream's JSON types (stream-shapes.json). The validator is proven on real frames
and bodies with one field removed or mistyped (it must name exactly that field); then one run drives
every route and every event type, receipts with privacy on and off, thread reads and paging, edits and
deletes, reactions, and validates every body and frame it gets."""

import copy
import queue

import pytest

from conftest import QUIET, delivery_type, room, watch
from stream_shapes import EVENTS, ROUTES, validate_event, validate_first_health_check, validate_response


class Recorder:
    """Every REST answer of one SDK client, with its method and path, for explicit validation."""

    def __init__(self, client):
        self.answers = []
        self.client = client
        client.session.hooks["response"].append(self)

    def __call__(self, response, *args, **kwargs):
        path = response.request.path_url.split("?")[0]
        self.answers.append((response.request.method, path, response.status_code, response.json()))
        return response

    def stop(self):
        self.client.session.hooks["response"].remove(self)


@pytest.fixture
def recorded(client):
    """The answers the shared SDK client receives during the test (the hook is removed after it)."""
    recorder = Recorder(client)
    yield recorder
    recorder.stop()


def drain(listeners):
    """Every frame each listener has received, its first health.check included: each is asked for a
    health.check, and read until it has answered and then been quiet for a while."""
    for listener in listeners:
        listener.send([{"type": "health.check", "client_id": listener.connection_id}])
    received = []
    for listener in listeners:
        frames, answered = [listener.first], False
        while True:
            try:
                frame = listener.events.get(timeout=QUIET if answered else 5.0)
            except queue.Empty:
                break
            frames.append(frame)
            answered = answered or frame.get("type") == "health.check"
        assert answered, f"{listener.user_id}: no answer to its health.check"
        received.append(frames)
    return received


# The validator itself: it accepts what the server sends and names exactly the field taken away.

def test_the_validator_names_exactly_the_required_field_removed_from_a_real_frame(client, users, listen):
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    ann_socket = listen(ann)
    watch(ann_socket, channel)
    ben_elsewhere = listen(ben)  # a member that does not watch: notification.message_new

    health = ann_socket.first
    assert validate_event(health) == []
    without_mutes = copy.deepcopy(health)
    del without_mutes["me"]["mutes"]
    assert validate_event(without_mutes) == ["health.check.me: missing required 'mutes' (OwnUserResponse)"]
    without_me = {key: value for key, value in health.items() if key != "me"}
    assert validate_event(without_me) == []  # a keepalive's answer
    assert validate_first_health_check(without_me) == [
        "health.check: missing required 'me' (HealthCheckEvent, the connection's first)"]

    channel.send_message({"text": "hi"}, ann)
    new = ann_socket.next("message.new")
    assert validate_event(new) == []
    without_custom = copy.deepcopy(new)
    del without_custom["custom"]
    assert validate_event(without_custom) == ["message.new: missing required 'custom' (MessageNewEvent)"]

    notification = ben_elsewhere.next("notification.message_new")
    assert validate_event(notification) == []
    without_config = copy.deepcopy(notification)
    del without_config["channel"]["config"]
    assert validate_event(without_config) == [
        "notification.message_new.channel: missing required 'config' (ChannelResponse, as Checkmark sends it)"]


def test_the_validator_names_a_null_or_mistyped_field_and_a_removed_field_of_a_body(client, users, listen):
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    health = listen(ann).first
    null_count = copy.deepcopy(health)
    null_count["me"]["unread_threads"] = None
    assert validate_event(null_count) == ["health.check.me: required 'unread_threads' is null (OwnUserResponse)"]
    bool_count = copy.deepcopy(health)
    bool_count["me"]["total_unread_count"] = False
    assert validate_event(bool_count) == ["health.check.me.total_unread_count: expected an integer, got False"]
    bad_time = copy.deepcopy(health)
    bad_time["created_at"] = "yesterday"
    assert validate_event(bad_time) == ["health.check.created_at: expected an RFC 3339 time, got 'yesterday'"]

    answer = channel.send_message({"text": "hi"}, ann)
    path = f"/channels/messaging/{channel.id}/message"
    assert validate_response("POST", path, 201, answer) == []
    without_user = copy.deepcopy(dict(answer))
    del without_user["message"]["user"]
    assert validate_response("POST", path, 201, without_user) == [
        f"POST {path}.message: missing required 'user' (MessageResponse)"]
    text_count = copy.deepcopy(dict(answer))
    text_count["message"]["reply_count"] = "0"
    assert validate_response("POST", path, 201, text_count) == [
        f"POST {path}.message.reply_count: expected an integer, got '0'"]
    assert validate_response("POST", path, 400, {}) == [], "error answers have their own shape"


# Everything at once: every route and every event type, validated explicitly.

def test_every_route_and_every_event_has_streams_shape(client, users, listen, recorded):
    ann, ben, cat, pri = users("ann", "ben", "cat", "pri")
    client.update_user_partial({"id": pri, "set": {"privacy_settings": {
        "read_receipts": {"enabled": False}, "delivery_receipts": {"enabled": False}}}})
    type_ = delivery_type(client)  # read_events and delivery_events on
    channel = room(client, [ann, ben, cat, pri], type_)
    sockets = {user: listen(user) for user in (ann, ben, cat, pri)}
    elsewhere = listen(cat)  # a member's connection that does not watch: notification.message_new
    for socket in sockets.values():
        watch(socket, channel)

    parent = channel.send_message({"text": "parent"}, ann)["message"]
    for i in range(4):
        channel.send_message({"text": f"m{i}"}, ben)
    channel.send_message({"text": "reply", "parent_id": parent["id"]}, ben)
    channel.send_message({"text": "shown reply", "parent_id": parent["id"], "show_in_channel": True}, cat)
    last = channel.send_message({"text": "last"}, ann)["message"]
    # Receipts with privacy on (ben) and off (pri): deliveries, reads, unread, thread reads.
    for user in (ben, pri):
        client.mark_delivered_simple(user, last["id"], channel.cid)
        channel.mark_read(user)
        channel.mark_unread(user, message_id=last["id"])
        channel.mark_read(user, thread_id=parent["id"])
    client.post("channels/read", data={"user_id": cat})  # mark many: notification.mark_read without a channel
    client.query_channels({"cid": channel.cid}, user_id=ann)
    channel.query(user_id=ann, messages={"limit": 3, "id_lt": last["id"]})
    channel.query(user_id=pri, messages={"limit": 3, "created_at_around": last["created_at"]})
    client.channel(type_, data={"members": [ann, ben]}).query(user_id=ann)  # a distinct channel: /channels/{type}/query
    replies = channel.get_replies(parent["id"], limit=5)["messages"]
    client.get_message(parent["id"])
    client.query_threads(user_id=ben, limit=5, reply_limit=2)
    client.get(f"threads/{parent['id']}", params={"user_id": ben})
    channel.get_replies(parent["id"], limit=1, id_gt=replies[0]["id"])
    client.get("unread", params={"user_id": ben})
    client.get("unread", params={"user_id": pri})
    # Typing (with and without a thread) and a custom event: never stored, same shapes.
    channel.send_event({"type": "typing.start", "parent_id": parent["id"]}, ben)
    channel.send_event({"type": "typing.stop", "parent_id": parent["id"]}, ben)
    channel.send_event({"type": "typing.start"}, ben)
    channel.send_event({"type": "typing.stop"}, ben)
    channel.send_event({"type": "friendship_request", "text": "hi"}, ann)
    # Edits and deletes (soft, then hard): message.updated and message.deleted to every watcher.
    edited = channel.send_message({"text": "to edit"}, ben)["message"]
    client.update_message({"id": edited["id"], "text": "edited", "user_id": ben})
    client.update_message_partial(edited["id"], {"set": {"text": "edited again"}}, ben)
    client.delete_message(edited["id"], deleted_by=ben)
    client.delete_message(edited["id"], hard=True)
    # Reactions: a new one, one whose score is replaced, enforce_unique's reaction.updated, the list,
    # a delete: reaction.new, reaction.updated and reaction.deleted to every watcher.
    reacted = channel.send_message({"text": "react to me"}, ann)["message"]
    channel.send_reaction(reacted["id"], {"type": "like"}, ben)
    channel.send_reaction(reacted["id"], {"type": "like"}, cat)
    channel.send_reaction(reacted["id"], {"type": "like", "score": 3}, ben)
    client.post(f"messages/{reacted['id']}/reaction",
                data={"reaction": {"type": "love"}, "user_id": ben, "enforce_unique": True})
    channel.get_reactions(reacted["id"], limit=5)
    channel.delete_reaction(reacted["id"], "love", ben)

    received = dict(zip(list(sockets) + ["elsewhere"], drain(list(sockets.values()) + [elsewhere])))
    frames = [frame for got in received.values() for frame in got]
    errors = []
    for frame in frames:
        errors += validate_event(frame)
    for method, path, status, body in recorded.answers:
        errors += validate_response(method, path, status, body)
    assert errors == []

    answered = {index for method, path, status, _ in recorded.answers if status < 400
                for index, (route_method, pattern, _) in enumerate(ROUTES)
                if route_method == method and pattern.match(path)}
    assert answered == set(range(len(ROUTES))), \
        f"routes never answered: {[ROUTES[i][:2] for i in set(range(len(ROUTES))) - answered]}"
    seen = {frame.get("type") for frame in frames}
    assert set(EVENTS) <= seen, f"event types never seen: {set(EVENTS) - seen}"

    def by(user, event_type, at):
        return [f for f in received[at] if f.get("type") == event_type and f.get("user", {}).get("id") == user]
    # Privacy on: ann sees ben's receipts, a thread read among them; privacy off: only pri's own.
    assert by(ben, "message.read", ann) and by(ben, "message.delivered", ann)
    assert any("thread" in f for f in by(ben, "message.read", ann))
    assert not by(pri, "message.read", ann) and not by(pri, "message.delivered", ann)
    assert by(pri, "notification.mark_read", pri) and by(pri, "notification.mark_unread", pri)
    assert any(f.get("thread_id") == parent["id"] for f in by(pri, "notification.mark_read", pri))
