"""Events on /connect, received by an independent WebSocket client (`websockets`) as several users on
several connections, while the official SDK drives the server: who receives what, the fields, and who
receives nothing (each 'none' waits long enough to be sure), rule by rule."""

from conftest import delivery_type, room, watch


def test_first_event_is_health_check_with_connection_id_and_me(client, users, listen):
    (ann,) = users("ann")
    client.update_user_partial({"id": ann, "set": {"privacy_settings": {"read_receipts": {"enabled": False}}}})
    listener = listen(ann)
    assert listener.connection_id
    assert listener.me["id"] == ann
    assert listener.me["privacy_settings"]["read_receipts"]["enabled"] is False
    assert listener.me["total_unread_count"] == 0


def test_client_health_check_is_answered(users, listen):
    (ann,) = users("ann")
    listener = listen(ann)
    listener.send([{"type": "health.check", "client_id": listener.connection_id}])
    assert listener.next("health.check")["connection_id"] == listener.connection_id


def test_message_new_reaches_every_watching_connection_with_its_own_counts(client, users, listen):
    ann, ben, cat = users("ann", "ben", "cat")
    channel = room(client, [ann, ben, cat])
    ann1, ann2, ben1 = listen(ann), listen(ann), listen(ben)
    cat_elsewhere = listen(cat)  # a member's connection that does not watch
    for listener in (ann1, ann2, ben1):
        watch(listener, channel)
    channel.send_message({"text": "hello"}, ann)
    for listener in (ann1, ann2):
        event = listener.next("message.new")
        assert event["message"]["text"] == "hello" and event["user"]["id"] == ann
        assert event["unread_count"] == 0
    event = ben1.next("message.new")
    assert event["cid"] == channel.cid and event["channel_id"] == channel.id and event["channel_type"] == "messaging"
    assert event["unread_count"] == 1 and event["total_unread_count"] == 1 and event["unread_channels"] == 1
    assert event["watcher_count"] == 2
    notification = cat_elsewhere.next("notification.message_new")
    assert notification["message"]["text"] == "hello" and notification["channel"]["cid"] == channel.cid
    cat_elsewhere.none("message.new")
    ben1.none("notification.message_new")


def test_non_members_receive_nothing(client, users, listen):
    ann, ben, zed = users("ann", "ben", "zed")
    channel = room(client, [ann, ben])
    outsider = listen(zed)
    channel.send_message({"text": "private"}, ann)
    channel.mark_read(ben)
    outsider.none("message.new")
    outsider.none("notification.message_new")


def test_message_read_goes_to_watchers_and_mark_read_only_to_the_readers_connections(client, users, listen):
    ann, ben = users("ann", "ben")
    channel, other = room(client, [ann, ben]), room(client, [ann, ben])
    other.send_message({"text": "elsewhere"}, ann)
    message = channel.send_message({"text": "hi"}, ann)["message"]
    ann1, ben1, ben2 = listen(ann), listen(ben), listen(ben)
    watch(ann1, channel)
    watch(ben1, channel)
    channel.mark_read(ben)
    read = ann1.next("message.read")
    assert read["user"]["id"] == ben and read["last_read_message_id"] == message["id"] and read["cid"] == channel.cid
    assert ben1.next("message.read")["user"]["id"] == ben
    for own in (ben1, ben2):
        mark = own.next("notification.mark_read")
        assert mark["cid"] == channel.cid and mark["last_read_message_id"] == message["id"]
        # The other channel's unread message still counts in the totals (as at Stream, an event's
        # unread_count is the user's total, the same as total_unread_count).
        assert mark["total_unread_count"] == 1 and mark["unread_count"] == 1 and mark["unread_channels"] == 1
    ann1.none("notification.mark_read")


def test_read_receipts_off_suppresses_message_read_for_others_only(client, users, listen):
    # Rule 6.
    ann, ben = users("ann", "ben")
    client.update_user_partial({"id": ben, "set": {"privacy_settings": {"read_receipts": {"enabled": False}}}})
    channel = room(client, [ann, ben])
    channel.send_message({"text": "hi"}, ann)
    ann1, ben1 = listen(ann), listen(ben)
    watch(ann1, channel)
    watch(ben1, channel)
    channel.mark_read(ben)
    assert ben1.next("notification.mark_read")["total_unread_count"] == 0
    ann1.none("message.read")
    ben1.none("message.read")


def test_a_privacy_flip_takes_effect_for_the_very_next_event(client, users, listen):
    # Rule 9.
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    ann1 = listen(ann)
    watch(ann1, channel)
    channel.send_message({"text": "1"}, ann)
    client.update_user_partial({"id": ben, "set": {"privacy_settings": {"read_receipts": {"enabled": False}}}})
    channel.mark_read(ben)
    ann1.none("message.read")
    client.update_user_partial({"id": ben, "set": {"privacy_settings": {"read_receipts": {"enabled": True}}}})
    channel.send_message({"text": "2"}, ann)
    channel.mark_read(ben)
    assert ann1.next("message.read")["user"]["id"] == ben


def test_delivered_events_follow_the_channel_type_flag_and_privacy(client, users, listen):
    # Rules 5, 7, 8.
    ann, ben, cat = users("ann", "ben", "cat")
    client.update_user_partial({"id": cat, "set": {"privacy_settings": {"delivery_receipts": {"enabled": False}}}})
    plain = room(client, [ann, ben, cat])  # messaging: delivery_events off
    tracked = room(client, [ann, ben, cat], delivery_type(client))
    ann1 = listen(ann)
    watch(ann1, plain)
    watch(ann1, tracked)
    m1 = plain.send_message({"text": "p"}, ann)["message"]
    m2 = tracked.send_message({"text": "t"}, ann)["message"]
    client.mark_delivered_simple(ben, m1["id"], plain.cid)
    ann1.none("message.delivered")
    client.mark_delivered_simple(ben, m2["id"], tracked.cid)
    event = ann1.next("message.delivered")
    assert event["user"]["id"] == ben and event["cid"] == tracked.cid
    assert event["last_delivered_message_id"] == m2["id"] and event["last_delivered_at"]
    client.mark_delivered_simple(cat, m2["id"], tracked.cid)
    ann1.none("message.delivered")


def test_read_events_off_suppresses_message_read_but_not_own_notification(client, users, listen):
    # Rule 8, and a channel type flag flip taking effect at once (rule 9).
    ann, ben = users("ann", "ben")
    type_ = delivery_type(client)
    channel = room(client, [ann, ben], type_)
    ann1, ben1 = listen(ann), listen(ben)
    watch(ann1, channel)
    client.update_channel_type(type_, read_events=False)
    channel.send_message({"text": "hi"}, ann)
    channel.mark_read(ben)
    assert ben1.next("notification.mark_read")["cid"] == channel.cid
    ann1.none("message.read")
    client.update_channel_type(type_, read_events=True)
    channel.send_message({"text": "again"}, ann)
    channel.mark_read(ben)
    assert ann1.next("message.read")["user"]["id"] == ben


def test_mark_unread_notifies_only_the_acting_users_connections(client, users, listen):
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    sent = [channel.send_message({"text": str(i)}, ann)["message"] for i in range(3)]
    channel.mark_read(ben)
    ann1, ben1 = listen(ann), listen(ben)
    watch(ann1, channel)
    watch(ben1, channel)
    channel.mark_unread(ben, message_id=sent[1]["id"])
    event = ben1.next("notification.mark_unread")
    assert event["first_unread_message_id"] == sent[1]["id"] and event["last_read_message_id"] == sent[0]["id"]
    assert event["unread_messages"] == 2 and event["total_unread_count"] == 2 and event["unread_channels"] == 1
    assert event["last_read_at"]
    ann1.none("notification.mark_unread")


def test_events_of_a_channel_arrive_in_commit_order_on_every_connection(client, users, listen):
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    watchers = [listen(ann), listen(ben), listen(ben)]
    for listener in watchers:
        watch(listener, channel)
    texts = [str(i) for i in range(20)]
    for text in texts:
        channel.send_message({"text": text}, ann if int(text) % 2 else ben)
    for listener in watchers:
        assert [listener.next("message.new")["message"]["text"] for _ in texts] == texts
