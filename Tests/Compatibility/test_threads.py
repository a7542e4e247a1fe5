"""Thread reads as Stream has them (docs/protocol.md, Threads), through the official SDK and
independent listeners: replies count for the thread's participants and never in the channel; a
thread read moves only the thread; unread_threads everywhere the totals go; replies paged."""

import pytest
from stream_chat.base.exceptions import StreamAPIException

from conftest import delivery_type, reads_of, room, watch


def unread(client, user):
    return client.get("unread", params={"user_id": user})


def thread_of(client, user, parent_id):
    """The user's entry for the thread in GET /unread, or None."""
    entries = [t for t in unread(client, user)["threads"] if t["parent_message_id"] == parent_id]
    return entries[0] if entries else None


def test_reply_counts_for_the_parents_author_and_never_in_the_channel(client, users, listen):
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    parent = channel.send_message({"text": "parent"}, ann)["message"]
    ann_socket = listen(ann)
    watch(ann_socket, channel)
    channel.send_message({"text": "a reply", "parent_id": parent["id"]}, ben)
    event = ann_socket.next("message.new")
    assert event["message"]["parent_id"] == parent["id"]
    assert event["unread_count"] == 0, "a thread-only reply never counts in the channel"
    assert event["unread_threads"] == 1
    assert reads_of(channel.query(user_id=ann))[ann]["unread_messages"] == 0
    counts = unread(client, ann)
    assert counts["total_unread_count"] == 0 and counts["total_unread_threads_count"] == 1
    assert [t["parent_message_id"] for t in counts["threads"]] == [parent["id"]]
    assert counts["threads"][0]["unread_count"] == 1
    # The replier's own reply reads the thread for it.
    assert unread(client, ben)["total_unread_threads_count"] == 0
    # A new connection's me carries it too.
    assert listen(ann).me["unread_threads"] == 1


def test_thread_read_moves_only_the_thread_and_tells_watchers_with_the_thread(client, users, listen):
    ann, ben, cat = users("ann", "ben", "cat")
    channel = room(client, [ann, ben, cat])
    parent = channel.send_message({"text": "parent"}, ann)["message"]
    channel.send_message({"text": "r1", "parent_id": parent["id"]}, ben)
    last = channel.send_message({"text": "r2", "parent_id": parent["id"]}, cat)["message"]
    channel.send_message({"text": "in the channel"}, ben)
    ann_socket, cat_socket, ann_watching = listen(ann), listen(cat), listen(ann)
    watch(cat_socket, channel)
    watch(ann_watching, channel)
    answer = channel.mark_read(ann, thread_id=parent["id"])
    assert answer["event"]["thread_id"] == parent["id"]
    seen = cat_socket.next("message.read")
    assert seen["user"]["id"] == ann and seen["last_read_message_id"] == last["id"]
    assert seen["thread"]["parent_message_id"] == parent["id"] and seen["thread"]["channel_cid"] == channel.cid
    mark = ann_socket.next("notification.mark_read")
    assert mark["thread_id"] == parent["id"] and mark["unread_threads"] == 0
    assert mark["unread_count"] == 1 and mark["total_unread_count"] == 1 and mark["unread_channels"] == 1
    own = reads_of(channel.query(user_id=ann))[ann]
    assert own["unread_messages"] == 1, "the channel's own read state did not move"
    assert unread(client, ann)["total_unread_threads_count"] == 0
    assert ann_watching.next("notification.mark_read")["thread_id"] == parent["id"]
    ann_watching.none("message.read")  # the JavaScript SDK would take it as a read of the whole channel


def test_participants_are_the_author_and_the_repliers_and_silent_replies_do_not_count(client, users):
    ann, ben, cat = users("ann", "ben", "cat")
    channel = room(client, [ann, ben, cat])
    parent = channel.send_message({"text": "parent"}, ann)["message"]
    channel.send_message({"text": "r1", "parent_id": parent["id"]}, ben)
    entry = thread_of(client, ann, parent["id"])
    assert entry["unread_count"] == 1 and isinstance(entry["last_read"], str)
    assert unread(client, cat)["total_unread_threads_count"] == 0, "a member that never replied is no participant"
    silent = channel.send_message({"text": "quiet", "parent_id": parent["id"], "silent": True}, ben)["message"]
    assert thread_of(client, ann, parent["id"])["unread_count"] == 1, "a silent reply does not count"
    assert unread(client, ben)["total_unread_threads_count"] == 0
    channel.send_message({"text": "mine", "parent_id": parent["id"]}, ann)
    assert unread(client, ann)["total_unread_threads_count"] == 0, "her own reply read the thread up to it"
    entry = thread_of(client, ben, parent["id"])
    assert entry["unread_count"] == 1 and entry["last_read_message_id"] == silent["id"]
    assert unread(client, ben)["total_unread_threads_count"] == 1


def test_a_thread_only_reply_leaves_the_channels_unread_where_it_was(client, users, listen):
    ann, ben, cat = users("ann", "ben", "cat")
    channel = room(client, [ann, ben, cat])
    parent = channel.send_message({"text": "parent"}, ann)["message"]
    cat_socket = listen(cat)
    watch(cat_socket, channel)
    channel.send_message({"text": "a reply", "parent_id": parent["id"]}, ben)
    event = cat_socket.next("message.new")
    assert event["message"]["parent_id"] == parent["id"]
    assert event["unread_count"] == 1 and event["total_unread_count"] == 1 and event["unread_channels"] == 1
    assert event["unread_threads"] == 0
    assert reads_of(channel.query(user_id=cat))[cat]["unread_messages"] == 1


def test_unread_threads_is_in_every_event_that_carries_counts(client, users, listen):
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    parent = channel.send_message({"text": "parent"}, ann)["message"]
    channel.send_message({"text": "a reply", "parent_id": parent["id"]}, ben)
    ann_socket = listen(ann)  # a member's connection that does not watch
    assert ann_socket.me["unread_threads"] == 1
    message = channel.send_message({"text": "in the channel"}, ben)["message"]
    assert ann_socket.next("notification.message_new")["unread_threads"] == 1
    channel.mark_read(ann)
    assert ann_socket.next("notification.mark_read")["unread_threads"] == 1, "a channel read leaves its threads"
    channel.mark_unread(ann, message_id=message["id"])
    assert ann_socket.next("notification.mark_unread")["unread_threads"] == 1
    channel.mark_read(ann, thread_id=parent["id"])
    assert ann_socket.next("notification.mark_read")["unread_threads"] == 0


def test_thread_read_in_a_channel_type_without_read_events_reaches_nobody_else(client, users, listen):
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben], delivery_type(client, read_events=False))
    parent = channel.send_message({"text": "parent"}, ann)["message"]
    channel.send_message({"text": "r1", "parent_id": parent["id"]}, ben)
    ann_socket, ben_socket = listen(ann), listen(ben)
    watch(ben_socket, channel)
    channel.mark_read(ann, thread_id=parent["id"])
    assert ann_socket.next("notification.mark_read")["thread_id"] == parent["id"]
    ben_socket.none("message.read")


def test_private_reader_thread_read_reaches_nobody_else(client, users, listen):
    ann, ben = users("ann", "ben")
    client.update_user_partial({"id": ann, "set": {"privacy_settings": {"read_receipts": {"enabled": False}}}})
    channel = room(client, [ann, ben])
    parent = channel.send_message({"text": "parent"}, ann)["message"]
    channel.send_message({"text": "r1", "parent_id": parent["id"]}, ben)
    ann_socket, ben_socket = listen(ann), listen(ben)
    watch(ben_socket, channel)
    channel.mark_read(ann, thread_id=parent["id"])
    assert ann_socket.next("notification.mark_read")["unread_threads"] == 0, "her own connections still learn it"
    ben_socket.none("message.read")


def test_unknown_thread_is_a_400_naming_thread_id(client, users):
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    with pytest.raises(StreamAPIException) as refused:
        channel.mark_read(ann, thread_id="no-such-message")
    assert refused.value.status_code == 400 and "thread_id" in refused.value.error_message
    reply = channel.send_message({"text": "p"}, ann)["message"]
    with pytest.raises(StreamAPIException) as both:
        channel.mark_read(ann, thread_id=reply["id"], message_id=reply["id"])
    assert both.value.status_code == 400


def test_replies_are_paged_oldest_first(client, users):
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    parent = channel.send_message({"text": "parent"}, ann)["message"]
    ids = [channel.send_message({"text": f"r{i}", "parent_id": parent["id"]}, ben)["message"]["id"] for i in range(12)]
    channel.send_message({"text": "not a reply"}, ann)
    assert [m["id"] for m in channel.get_replies(parent["id"], limit=5)["messages"]] == ids[-5:]
    assert [m["id"] for m in channel.get_replies(parent["id"], limit=5, id_lt=ids[7])["messages"]] == ids[2:7]
    assert [m["id"] for m in channel.get_replies(parent["id"], limit=3, id_gt=ids[2])["messages"]] == ids[3:6]
    assert [m["id"] for m in channel.get_replies(parent["id"], limit=3, id_lte=ids[7])["messages"]] == ids[5:8]
    assert [m["id"] for m in channel.get_replies(parent["id"], limit=3, id_gte=ids[7])["messages"]] == ids[7:10]
    state = channel.query(user_id=ann)
    parents = [m for m in state["messages"] if m["id"] == parent["id"]]
    assert parents[0]["reply_count"] == 12
    assert all(m.get("parent_id") is None for m in state["messages"]), "thread-only replies stay out of the channel"
