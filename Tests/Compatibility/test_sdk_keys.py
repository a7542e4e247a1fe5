"""What Stream's official SDKs key on, rule by rule (docs/protocol.md, "What the SDKs key on").

Each rule names the field an SDK uses to tell one event from another, or to route or apply it, and
what that SDK does when the field is missing: stream-chat-swift 5.4.0 (`EventType.swift`,
`EventPayload.swift`, the `*EventDTO` types and the event middlewares), stream-chat-js 9.49.0
(`client.ts`, `channel.ts`, `thread.ts`) and stream-chat-android (`EventAdapter.kt`, `EventDtos.kt`,
`ChatSocket.kt`). The SDKs cannot run here; these tests hold the fields in place."""

from conftest import delivery_type, room, watch

# Android parses these per-channel event types into DTOs whose `cid`, `channel_type` and `channel_id`
# are non-null: a frame without one fails to parse and Android reconnects.
CHANNEL_FIELDS = ("cid", "channel_type", "channel_id", "created_at", "user")

# What a `thread` object needs to decode: iOS `ThreadDetailsPayload` and Android `DownstreamThreadInfoDto`.
THREAD_FIELDS = ("channel_cid", "parent_message_id", "created_by_user_id", "title", "reply_count",
                 "participant_count", "created_at", "updated_at")

# What a `channel` object needs to decode: iOS `ChannelDetailPayload`, Android `DownstreamChannelDto`.
CHANNEL_OBJECT_FIELDS = ("cid", "id", "type", "created_at", "updated_at", "disabled", "frozen", "config")


def has_all(event, fields):
    missing = [f for f in fields if event.get(f) is None]
    assert not missing, f"{event['type']} lacks {missing}: {event}"


def test_a_channels_notification_mark_read_carries_its_channel_object(client, users, listen):
    # iOS: `channel == nil ? NotificationMarkAllReadEventDTO : NotificationMarkReadEventDTO`. Without
    # the object a read of one channel zeroes every channel of the reader on their devices.
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    message = channel.send_message({"text": "hi"}, ann)["message"]
    ben1 = listen(ben)
    channel.mark_read(ben)
    mark = ben1.next("notification.mark_read")
    has_all(mark, CHANNEL_FIELDS)
    has_all(mark["channel"], CHANNEL_OBJECT_FIELDS)
    assert mark["channel"]["cid"] == mark["cid"] == channel.cid
    assert mark["last_read_message_id"] == message["id"]
    assert "thread" not in mark, "iOS and Android take a notification.mark_read with `thread` for a thread read"


def test_mark_all_read_sends_one_notification_without_cid_or_channel_and_numeric_totals(client, users, listen):
    # Android: no `cid` key -> MarkAllReadEventDto (`"*"` or `""` fails to parse, or drops the batch).
    # iOS: no `channel` -> mark-all-read. JS: `unread_channels === 0` clears every open channel.
    ann, ben = users("ann", "ben")
    one, two = room(client, [ann, ben]), room(client, [ann, ben])
    one.send_message({"text": "1"}, ann)
    two.send_message({"text": "2"}, ann)
    ben1 = listen(ben)
    client.mark_all_read(ben)
    mark = ben1.next("notification.mark_read")
    for absent in ("cid", "channel", "channel_type", "channel_id", "thread"):
        assert absent not in mark, f"mark-all-read carries {absent}: {mark}"
    assert mark["unread_channels"] == 0 and mark["total_unread_count"] == 0
    assert type(mark["unread_channels"]) is int and type(mark["unread_threads"]) is int
    has_all(mark, ("user", "created_at"))


def test_a_thread_read_carries_the_thread_object_on_both_events_and_the_channel_on_the_readers(client, users, listen):
    # iOS and Android tell a thread read from a channel read only by a decodable `thread` object (they
    # ignore `thread_id`; without it the channel's unread count is wiped); JS matches
    # `thread.parent_message_id`. The reader's own event also needs `channel` (see the first rule).
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    parent = channel.send_message({"text": "parent"}, ann)["message"]
    channel.send_message({"text": "reply", "parent_id": parent["id"]}, ben)
    ann_watching, ben_own = listen(ann), listen(ben)
    watch(ann_watching, channel)
    channel.send_message({"text": "again", "parent_id": parent["id"]}, ann)
    channel.mark_read(ben, thread_id=parent["id"])
    seen = ann_watching.next("message.read")
    has_all(seen, CHANNEL_FIELDS)
    has_all(seen["thread"], THREAD_FIELDS)
    assert seen["thread"]["parent_message_id"] == parent["id"] and seen["thread"]["channel_cid"] == channel.cid
    mark = ben_own.next("notification.mark_read")
    has_all(mark, CHANNEL_FIELDS)
    has_all(mark["thread"], THREAD_FIELDS)
    has_all(mark["channel"], CHANNEL_OBJECT_FIELDS)
    assert mark["thread_id"] == mark["thread"]["parent_message_id"] == parent["id"]


def test_mark_unread_names_the_last_read_message_when_one_precedes_the_first_unread(client, users, listen):
    # iOS takes a notification.mark_unread without `last_read_message_id` for a thread unread; Android
    # and JS store the absence as the read state's last read message.
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    first = channel.send_message({"text": "1"}, ann)["message"]
    second = channel.send_message({"text": "2"}, ann)["message"]
    channel.mark_read(ben)
    ben1 = listen(ben)
    channel.mark_unread(ben, message_id=second["id"])
    event = ben1.next("notification.mark_unread")
    has_all(event, CHANNEL_FIELDS + ("first_unread_message_id", "last_read_at", "unread_messages"))
    assert event["first_unread_message_id"] == second["id"] and event["last_read_message_id"] == first["id"]
    assert event["unread_messages"] == 1


def test_the_first_health_check_has_me_and_a_keepalives_answer_has_not(users, listen):
    # Android: a health.check with `me` is a ConnectedEvent (a new connection: its connected handling
    # runs again), one without is the keepalive ack it needs every 30 s. It pings with a single object
    # carrying its stored `me`; JS pings with an array.
    (ann,) = users("ann")
    listener = listen(ann)
    has_all(listener.first, ("connection_id", "created_at", "me"))
    has_all(listener.me, ("id", "role", "created_at", "updated_at", "total_unread_count", "unread_channels"))
    assert listener.me["banned"] is False and listener.me["online"] is True
    android_ping = {"type": "health.check", "created_at": listener.first["created_at"],
                    "connection_id": listener.connection_id, "me": listener.me}
    for ping in (android_ping, [{"type": "health.check", "client_id": listener.connection_id}]):
        listener.send(ping)
        answer = listener.next("health.check")
        has_all(answer, ("connection_id", "created_at"))
        assert answer["connection_id"] == listener.connection_id
        assert "me" not in answer, answer


def test_notification_message_new_carries_the_channels_watcher_count(client, users, listen):
    # JS sets a loaded channel's `watcher_count` from any event that has one.
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    ann1, ben_elsewhere = listen(ann), listen(ben)
    watch(ann1, channel)
    channel.send_message({"text": "hi"}, ann)
    assert ann1.next("message.new")["watcher_count"] == 1
    notification = ben_elsewhere.next("notification.message_new")
    assert notification["watcher_count"] == 1
    has_all(notification, CHANNEL_FIELDS + ("channel", "message", "message_id"))


def test_every_channel_event_has_the_fields_android_requires(client, users, listen):
    # Android's per-channel DTOs have non-null `cid`, `channel_type`, `channel_id`, `created_at`, `user`
    # and their own fields; any one missing fails the frame and Android reconnects.
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben], type_=delivery_type(client))
    ann1 = listen(ann)
    watch(ann1, channel)
    message = channel.send_message({"text": "hi"}, ann)["message"]
    has_all(ann1.next("message.new"), CHANNEL_FIELDS + ("message",))
    client.mark_delivered_simple(ben, message["id"], channel.cid)
    has_all(ann1.next("message.delivered"), CHANNEL_FIELDS + ("last_delivered_at", "last_delivered_message_id"))
    channel.mark_read(ben)
    has_all(ann1.next("message.read"), CHANNEL_FIELDS)
