"""Shape conformance: every object and event Checkmark serves has the fields Stream's API description
marks required, with Stream's JSON types (stream-shapes.json). The validator is proven on real frames
with a required field removed; then one run drives every route and every event type, receipts with
privacy on and off, thread reads and paging, and validates every body and frame it gets."""

import copy

from conftest import FRAMES_CHECKED, room, unique, watch
from stream_shapes import EVENTS, validate, validate_event, validate_response


class Recorder:
    """Every REST answer of one SDK client, with its method and path, for explicit validation."""

    def __init__(self, client):
        self.answers = []
        client.session.hooks["response"].append(self)

    def __call__(self, response, *args, **kwargs):
        path = response.request.path_url.split("?")[0]
        self.answers.append((response.request.method, path, response.status_code, response.json()))
        return response


def test_the_validator_finds_a_removed_required_field(client, users, listen):
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    ann_socket = listen(ann)
    watch(ann_socket, channel)
    ben_elsewhere = listen(ben)
    health = ann_socket.first
    assert validate_event(health) == []
    without_mutes = copy.deepcopy(health)
    del without_mutes["me"]["mutes"]
    assert validate_event(without_mutes) == ["health.check.me: missing required 'mutes' (OwnUserResponse)"]

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
    assert validate(without_config["channel"], "ChannelResponse") == []  # config is optional in the channel...
    without_config["channel"]["config"] = {"name": "x"}
    assert any("missing required 'read_events'" in error for error in validate_event(without_config))  # ...but whole when there
    wrong_type = copy.deepcopy(new)
    wrong_type["message"]["reply_count"] = "0"
    assert validate_event(wrong_type) == ["message.new.message.reply_count: expected an integer, got '0'"]


def test_every_route_and_every_event_has_streams_shape(client, users, listen):
    recorder = Recorder(client)
    FRAMES_CHECKED.clear()
    ann, ben, cat, pri = users("ann", "ben", "cat", "pri")
    client.update_user_partial({"id": pri, "set": {"privacy_settings": {
        "read_receipts": {"enabled": False}, "delivery_receipts": {"enabled": False}}}})
    type_ = unique("shp").replace("-", "_")
    client.create_channel_type({"name": type_, "delivery_events": True, "read_events": True})
    channel = room(client, [ann, ben, cat, pri], type_)
    frames = []
    sockets = {user: listen(user) for user in (ann, ben, cat, pri)}
    elsewhere = listen(cat)  # a member's connection that does not watch: notification.message_new
    for user, socket in sockets.items():
        watch(socket, channel)

    parent = channel.send_message({"text": "parent"}, ann)["message"]
    for i in range(4):
        channel.send_message({"text": f"m{i}"}, ben)
    channel.send_message({"text": "reply", "parent_id": parent["id"]}, ben)
    channel.send_message({"text": "shown reply", "parent_id": parent["id"], "show_in_channel": True}, cat)
    last = channel.send_message({"text": "last"}, ann)["message"]
    # Receipts with privacy on (ann, ben, cat) and off (pri): reads, deliveries, unread, thread reads.
    for user in (ben, pri):
        client.mark_delivered_simple(user, last["id"], channel.cid)
        channel.mark_read(user)
        channel.mark_unread(user, message_id=last["id"])
        channel.mark_read(user, thread_id=parent["id"])
    client.mark_channels_read(cat) if hasattr(client, "mark_channels_read") else client.post("channels/read", data={"user_id": cat})
    client.post("channels/read", data={"user_id": ann})
    client.query_channels({"cid": channel.cid}, user_id=ann)
    channel.query(user_id=ann, messages={"limit": 3, "id_lt": last["id"]})
    channel.query(user_id=pri, messages={"limit": 3, "created_at_around": last["created_at"]})
    client.channel(type_, data={"members": [ann, ben]}).query(user_id=ann)  # the distinct channel
    channel.get_replies(parent["id"], limit=5)
    client.get("unread", params={"user_id": ben})
    client.get("unread", params={"user_id": pri})

    for socket in list(sockets.values()) + [elsewhere]:
        socket.send([{"type": "health.check", "client_id": socket.connection_id}])
        while True:
            try:
                frames.append(socket.events.get(timeout=1.0))
            except Exception:
                break
    errors = []
    for frame in frames:
        errors += validate_event(frame)
    for method, path, status, body in recorder.answers:
        errors += validate_response(method, path, status, body)
    assert errors == []
    checked_routes = {(method, path.split("/")[1]) for method, path, status, _ in recorder.answers if status == 200}
    assert {("POST", "channels"), ("GET", "unread"), ("GET", "messages")} <= checked_routes
    seen = {frame.get("type") for frame in frames} | set(FRAMES_CHECKED)
    assert set(EVENTS) <= seen, f"event types never seen: {set(EVENTS) - seen}"
