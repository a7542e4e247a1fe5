"""Channels: create and query with members and read states, member changes, distinct channels,
query channels, watching over REST."""

import pytest
from stream_chat.base.exceptions import StreamAPIException

from conftest import unique


def test_create_returns_channel_members_and_every_members_read_state(client, users):
    ann, ben, cat = users("ann", "ben", "cat")
    cid_id = unique("room")
    channel = client.channel("messaging", cid_id, data={"members": [ann, ben, cat]})
    state = channel.create(ann)
    assert state["channel"]["cid"] == f"messaging:{cid_id}"
    assert state["channel"]["created_by"]["id"] == ann
    assert state["channel"]["member_count"] == 3
    assert {m["user_id"] for m in state["members"]} == {ann, ben, cat}
    reads = {r["user"]["id"]: r for r in state["read"]}
    assert set(reads) == {ann, ben, cat}
    assert all(r["unread_messages"] == 0 for r in reads.values())


def test_query_of_an_existing_channel_does_not_recreate_it(client, users):
    ann, ben = users("ann", "ben")
    channel = client.channel("messaging", unique("room"), data={"members": [ann, ben]})
    first = channel.create(ann)
    channel.send_message({"text": "one"}, ann)
    again = channel.query(user_id=ben)
    assert again["channel"]["created_at"] == first["channel"]["created_at"]
    assert [m["text"] for m in again["messages"]] == ["one"]
    assert {r["user"]["id"]: r["unread_messages"] for r in again["read"]}[ben] == 1


def test_members_are_added_and_removed(client, users):
    ann, ben, cat = users("ann", "ben", "cat")
    channel = client.channel("messaging", unique("room"), data={"members": [ann]})
    channel.create(ann)
    added = channel.add_members([ben, cat])
    assert {m["user_id"] for m in added["members"]} == {ann, ben, cat}
    removed = channel.remove_members([cat])
    assert {m["user_id"] for m in removed["members"]} == {ann, ben}
    assert removed["channel"]["member_count"] == 2


def test_channel_without_id_is_the_same_distinct_channel_for_the_same_members(client, users):
    ann, ben = users("ann", "ben")
    first = client.channel("messaging", data={"members": [ann, ben]})
    first.create(ann)
    second = client.channel("messaging", data={"members": [ben, ann]})
    second.create(ben)
    assert first.id == second.id and first.id.startswith("!members-")


def test_read_states_list_at_most_100_members_newest_first_with_the_viewer_included(client, users):
    # Rule 10.
    ids = users(*[f"m{i}" for i in range(105)])
    channel = client.channel("messaging", unique("big"), data={"members": ids})
    channel.create(ids[0])
    state = channel.query(user_id=ids[0])
    readers = [r["user"]["id"] for r in state["read"]]
    assert len(readers) == 100
    assert ids[0] in readers


def test_query_channels_finds_a_users_channels_by_membership_with_sort_limit_and_offset(client, users):
    ann, ben = users("ann", "ben")
    rooms = [unique("room") for _ in range(3)]
    for room in rooms:
        client.channel("messaging", room, data={"members": [ann, ben]}).create(ann)
    client.channel("messaging", rooms[0]).send_message({"text": "newest"}, ben)
    found = client.query_channels({"members": {"$in": [ann]}}, {"last_updated": -1}, user_id=ann, limit=2)
    assert [c["channel"]["id"] for c in found["channels"]] == [rooms[0], rooms[2]]
    rest = client.query_channels({"members": {"$in": [ann]}}, {"last_updated": -1}, user_id=ann, limit=2, offset=2)
    assert [c["channel"]["id"] for c in rest["channels"]] == [rooms[1]]
    first = found["channels"][0]
    assert {r["user"]["id"]: r["unread_messages"] for r in first["read"]}[ann] == 1


def test_query_channels_by_cid_in(client, users):
    ann, ben = users("ann", "ben")
    rooms = [unique("room") for _ in range(3)]
    for room in rooms:
        client.channel("messaging", room, data={"members": [ann, ben]}).create(ann)
    found = client.query_channels({"cid": {"$in": [f"messaging:{rooms[0]}", f"messaging:{rooms[2]}"]}},
                                  {"cid": 1}, user_id=ben)
    assert [c["channel"]["id"] for c in found["channels"]] == sorted([rooms[0], rooms[2]])


def test_user_token_query_channels_sees_only_its_own_channels(client, as_user, users):
    ann, ben, cat = users("ann", "ben", "cat")
    mine, theirs = unique("mine"), unique("theirs")
    client.channel("messaging", mine, data={"members": [ann, ben]}).create(ann)
    client.channel("messaging", theirs, data={"members": [ben, cat]}).create(ben)
    found = as_user(ann).query_channels({"type": "messaging"}, limit=30)
    assert [c["channel"]["id"] for c in found["channels"]] == [mine]


def test_user_token_cannot_query_a_channel_it_is_not_a_member_of(client, as_user, users):
    ann, ben, cat = users("ann", "ben", "cat")
    room = unique("room")
    client.channel("messaging", room, data={"members": [ann, ben]}).create(ann)
    with pytest.raises(StreamAPIException) as error:
        as_user(cat).channel("messaging", room).query()
    assert error.value.status_code == 403 and error.value.error_code == 17


def test_query_with_watch_and_connection_id_makes_the_connection_watch(client, as_user, users, listen):
    ann, ben = users("ann", "ben")
    room = unique("room")
    client.channel("messaging", room, data={"members": [ann, ben]}).create(ann)
    listener = listen(ben)
    as_user(ben).channel("messaging", room).query(watch=True, connection_id=listener.connection_id)
    client.channel("messaging", room).send_message({"text": "hello"}, ann)
    event = listener.next("message.new")
    assert event["cid"] == f"messaging:{room}" and event["message"]["text"] == "hello"
