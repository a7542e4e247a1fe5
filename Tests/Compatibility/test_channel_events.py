"""Typing and custom events (`POST /channels/{type}/{id}/event`) driven by the official SDK's
`channel.send_event`, received by independent WebSocket listeners: who receives them, what the
privacy setting and the channel type's flags suppress, and Stream's errors for what is refused."""

import pytest
from stream_chat.base.exceptions import StreamAPIException

from conftest import room, unique, watch


def two_watching(client, users, listen):
    """Ann and Ben, members of a fresh channel, each with a listener watching it."""
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    ann1, ben1 = listen(ann), listen(ben)
    watch(ann1, channel)
    watch(ben1, channel)
    return ann, ben, channel, ann1, ben1


def test_typing_reaches_the_other_watchers_with_streams_shape(client, users, listen):
    ann, ben, channel, ann1, ben1 = two_watching(client, users, listen)
    answer = channel.send_event({"type": "typing.start", "parent_id": "p1"}, ben)
    assert answer["event"]["type"] == "typing.start" and answer["event"]["user"]["id"] == ben
    event = ann1.next("typing.start")
    assert event["user"]["id"] == ben and event["cid"] == channel.cid and event["parent_id"] == "p1"
    channel.send_event({"type": "typing.stop", "parent_id": "p1"}, ben)
    assert ann1.next("typing.stop")["user"]["id"] == ben
    ben1.none("typing.start")


def test_typing_indicators_off_keeps_typing_from_everyone(client, users, listen):
    ann, ben = users("ann", "ben")
    client.update_user_partial({"id": ben, "set": {"privacy_settings": {"typing_indicators": {"enabled": False}}}})
    channel = room(client, [ann, ben])
    ann1 = listen(ann)
    watch(ann1, channel)
    channel.send_event({"type": "typing.start"}, ben)
    ann1.none("typing.start")
    client.update_user_partial({"id": ben, "set": {"privacy_settings": {"typing_indicators": {"enabled": True}}}})
    channel.send_event({"type": "typing.start"}, ben)
    assert ann1.next("typing.start")["user"]["id"] == ben


def test_typing_events_off_in_the_channel_type_keeps_typing_from_everyone(client, users, listen):
    ann, ben = users("ann", "ben")
    name = unique("quiet").replace("-", "_")
    client.create_channel_type({"name": name, "typing_events": False})
    assert client.get_channel_type(name)["typing_events"] is False
    channel = room(client, [ann, ben], type_=name)
    ann1 = listen(ann)
    watch(ann1, channel)
    channel.send_event({"type": "typing.start"}, ben)
    ann1.none("typing.start")
    state = channel.query(user_id=ann)
    assert state["channel"]["config"]["typing_events"] is False


def test_a_custom_event_reaches_every_watcher_the_sender_included(client, users, listen):
    ann, ben, channel, ann1, ben1 = two_watching(client, users, listen)
    channel.send_event({"type": "friendship_request", "text": "Hey there", "custom": {"level": 2}}, ben)
    for listener in (ann1, ben1):
        event = listener.next("friendship_request")
        assert event["text"] == "Hey there" and event["custom"] == {"level": 2} and event["user"]["id"] == ben


@pytest.mark.parametrize("event, status", [
    ({"type": "message.new"}, 400),
    ({"type": "health.check"}, 400),
    ({"text": "no type"}, 400),
    ({"type": "big", "text": "x" * 6000}, 400),
])
def test_refused_events_get_streams_error(client, users, event, status):
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    with pytest.raises(StreamAPIException) as refused:
        channel.send_event(event, ann)
    assert refused.value.status_code == status


def test_a_non_member_may_not_send_events(client, users):
    ann, ben, zed = users("ann", "ben", "zed")
    channel = room(client, [ann, ben])
    with pytest.raises(StreamAPIException) as refused:
        channel.send_event({"type": "typing.start"}, zed)
    assert refused.value.status_code == 403


def test_get_message_answers_the_message_with_its_channel(client, users, as_user):
    ann, ben, zed = users("ann", "ben", "zed")
    channel = room(client, [ann, ben])
    parent = channel.send_message({"text": "parent"}, ann)["message"]
    channel.send_message({"text": "reply", "parent_id": parent["id"]}, ben)
    got = as_user(ben).get_message(parent["id"])["message"]
    assert got["id"] == parent["id"] and got["text"] == "parent" and got["reply_count"] == 1
    assert got["channel"]["cid"] == channel.cid and got["user"]["id"] == ann
    for caller, message_id in ((as_user(zed), parent["id"]), (client, "no-such-message")):
        with pytest.raises(StreamAPIException) as refused:
            caller.get_message(message_id)
        assert refused.value.status_code == 404


def test_query_threads_lists_the_users_threads_as_the_thread_managers_read_them(client, users, as_user):
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    parent = channel.send_message({"text": "parent"}, ann)["message"]
    channel.send_message({"text": "r1", "parent_id": parent["id"]}, ben)
    channel.send_message({"text": "r2", "parent_id": parent["id"]}, ben)
    listed = as_user(ann).query_threads(limit=5, reply_limit=1, participant_limit=10)
    thread = next(t for t in listed["threads"] if t["parent_message_id"] == parent["id"])
    assert thread["reply_count"] == 2 and [r["text"] for r in thread["latest_replies"]] == ["r2"]
    assert thread["channel"]["cid"] == channel.cid and thread["title"] == "parent"
    assert {p["user_id"] for p in thread["thread_participants"]} == {ann, ben}
    own = next(r for r in thread["read"] if r["user"]["id"] == ann)
    assert own["unread_messages"] == 2
    with pytest.raises(StreamAPIException) as refused:
        as_user(ann).query_threads(filter={"channel_cid": channel.cid})
    assert refused.value.status_code == 400
