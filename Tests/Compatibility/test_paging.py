"""Message paging in channel queries with Stream's MessagePaginationParams (the SDK's load-more sends
`messages: {limit, id_lt}`), stop-watching over REST, and the channel object that
notification.message_new carries."""

import pytest
from stream_chat.base.exceptions import StreamAPIException

from conftest import unique


@pytest.fixture(scope="module")
def long_channel(client):
    """A channel of 300 channel messages with thread-only replies in between: the channel, a member,
    the messages and the replies."""
    ann, ben = unique("ann"), unique("ben")
    client.upsert_users([{"id": ann}, {"id": ben}])
    channel = client.channel("messaging", unique("long"), data={"members": [ann, ben]})
    channel.create(ann)
    messages, replies = [], []
    for index in range(300):
        messages.append(channel.send_message({"text": f"m{index}"}, ann if index % 2 else ben)["message"])
        if index % 50 == 0:
            replies.append(channel.send_message({"text": "thread only", "parent_id": messages[-1]["id"]}, ann)["message"])
    return channel, ann, messages, replies


def page(channel, user, **params):
    return [m["id"] for m in channel.query(user_id=user, messages=params)["messages"]]


def test_without_cursor_the_newest_page_oldest_first(long_channel):
    channel, ann, messages, replies = long_channel
    assert page(channel, ann, limit=25) == [m["id"] for m in messages[-25:]]


def test_walking_backwards_and_forwards_sees_every_message_once_in_order(long_channel):
    channel, ann, messages, replies = long_channel
    ids = [m["id"] for m in messages]
    seen = []
    current = page(channel, ann, limit=50)
    while current:
        seen = current + seen
        current = page(channel, ann, limit=50, id_lt=current[0])
    assert seen == ids
    forward = page(channel, ann, limit=50, id_gte=ids[0])
    walked = list(forward)
    while forward:
        forward = page(channel, ann, limit=50, id_gt=forward[-1])
        walked += forward
    assert walked == ids


def test_walking_by_time_sees_every_message_once_in_order(long_channel):
    channel, ann, messages, replies = long_channel
    ids = [m["id"] for m in messages]
    by_id = {m["id"]: m["created_at"] for m in messages}
    seen = []
    current = page(channel, ann, limit=50)
    while current:
        seen = current + seen
        current = page(channel, ann, limit=50, created_at_before=by_id[current[0]])
    assert seen == ids
    walked = page(channel, ann, limit=50, created_at_after_or_equal=by_id[ids[0]])
    forward = walked
    while forward:
        forward = page(channel, ann, limit=50, created_at_after=by_id[forward[-1]])
        walked = walked + forward
    assert walked == ids


def test_every_cursor_selects_its_page(long_channel):
    channel, ann, messages, replies = long_channel
    ids = [m["id"] for m in messages]
    at = {m["id"]: m["created_at"] for m in messages}
    assert page(channel, ann, limit=3, id_lte=ids[10]) == ids[8:11]
    assert page(channel, ann, limit=3, id_around=ids[10]) == ids[9:12]
    assert page(channel, ann, limit=3, created_at_before_or_equal=at[ids[10]]) == ids[8:11]
    assert page(channel, ann, limit=3, created_at_around=at[ids[10]]) == ids[9:12]
    assert page(channel, ann, limit=2, id_around=ids[0]) == ids[0:2]


def test_two_cursors_or_a_cursor_of_another_list_are_a_400_naming_them(long_channel):
    channel, ann, messages, replies = long_channel
    with pytest.raises(StreamAPIException) as both:
        page(channel, ann, limit=5, id_lt=messages[5]["id"], id_gt=messages[1]["id"])
    assert both.value.status_code == 400
    assert "id_lt" in both.value.error_message and "id_gt" in both.value.error_message
    with pytest.raises(StreamAPIException) as unknown:
        page(channel, ann, limit=5, id_lt="no-such-message")
    assert unknown.value.status_code == 400 and "id_lt" in unknown.value.error_message
    with pytest.raises(StreamAPIException) as reply:
        page(channel, ann, limit=5, id_gt=replies[0]["id"])
    assert reply.value.status_code == 400 and "id_gt" in reply.value.error_message, "a thread-only reply is not in the list"


def test_thread_only_replies_never_appear_in_the_channels_pages(long_channel):
    channel, ann, messages, replies = long_channel
    reply_ids = {r["id"] for r in replies}
    for params in ({"limit": 300}, {"limit": 3, "id_around": messages[50]["id"]},
                   {"limit": 3, "created_at_around": replies[1]["created_at"]}, {"limit": 10, "id_gte": messages[100]["id"]}):
        got = page(channel, ann, **params)
        assert got and not reply_ids & set(got), params


def test_stop_watching_over_rest_ends_the_channels_events_for_that_connection(client, users, listen):
    ann, ben = users("ann", "ben")
    channel = client.channel("messaging", unique("room"), data={"members": [ann, ben]})
    channel.create(ann)
    ben_socket = listen(ben)
    channel.query(user_id=ben, watch=True, connection_id=ben_socket.connection_id)
    channel.send_message({"text": "while watching"}, ann)
    assert ben_socket.next("message.new")["message"]["text"] == "while watching"
    client.post(f"channels/{channel.channel_type}/{channel.id}/stop-watching",
                data={"user_id": ben}, params={"connection_id": ben_socket.connection_id})
    channel.send_message({"text": "after"}, ann)
    notification = ben_socket.next("notification.message_new")
    assert notification["message"]["text"] == "after"
    ben_socket.none("message.new")


def test_notification_message_new_carries_the_channel_with_its_config(client, users, listen):
    ann, ben = users("ann", "ben")
    name = unique("dlv").replace("-", "_")
    client.create_channel_type({"name": name, "delivery_events": True})
    channel = client.channel(name, unique("room"), data={"members": [ann, ben]})
    channel.create(ann)
    ben_socket = listen(ben)
    channel.send_message({"text": "hello"}, ann)
    event = ben_socket.next("notification.message_new")
    config = event["channel"]["config"]
    assert config["read_events"] is True and config["delivery_events"] is True and config["name"] == name
    assert "delivery-events" in event["channel"]["own_capabilities"]


def test_me_has_what_the_javascript_sdk_dereferences(users, listen):
    (ann,) = users("ann")
    me = listen(ann).me
    assert me["mutes"] == [] and me["channel_mutes"] == [] and me["devices"] == []
    assert isinstance(me["unread_threads"], int) and isinstance(me["unread_channels"], int)
    assert me["privacy_settings"]["read_receipts"]["enabled"] is True
