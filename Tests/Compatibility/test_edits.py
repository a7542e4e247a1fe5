"""Editing and deleting messages (docs/protocol.md, rules M1-M6) through the official SDK's
`update_message` (POST /messages/{id}), `update_message_partial` (PUT) and `delete_message` (DELETE),
with independent listeners watching the channel: who may edit and delete, what the message looks like
after (`updated_at`, `message_text_updated_at`, `type: deleted`, `deleted_at`), the `message.updated` and
`message.deleted` events every watcher receives, and that a delete leaves unread counts and read
pointers where they were."""

import copy
import json
from datetime import datetime

import pytest
from stream_chat.base.exceptions import StreamAPIException

from conftest import reads_of, room, watch
from stream_shapes import validate_event

MAX_TEXT_BYTES = 5000


def refused(call, status, error_code):
    """Calls `call`, which must fail with Stream's error body of `status` and Checkmark's `error_code`."""
    with pytest.raises(StreamAPIException) as error:
        call()
    body = json.loads(error.value.response_text)
    assert error.value.status_code == status, body
    assert body["StatusCode"] == status and body["error_code"] == error_code, body
    return body


def at(value):
    """An RFC 3339 time as a datetime, to compare times written with different precisions."""
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def unread(client, user):
    return client.get("unread", params={"user_id": user})


def watched_room(client, users, listen, *names):
    """A fresh channel of `names`' users, each with a listener watching it: (ids, channel, listeners)."""
    ids = users(*names)
    channel = room(client, ids)
    sockets = [listen(user) for user in ids]
    for socket in sockets:
        watch(socket, channel)
    return ids, channel, sockets


def assert_event_names_the_message(event, channel, message_id, actor):
    """The fields every message.updated and message.deleted carries (rules M3, M4)."""
    assert event["cid"] == channel.cid and event["channel_id"] == channel.id
    assert event["channel_type"] == channel.channel_type
    assert event["message_id"] == message_id and event["message"]["id"] == message_id
    assert event["user"]["id"] == actor
    assert isinstance(event["custom"], dict) and isinstance(event["created_at"], str)


# Editing (rules M1-M3).

def test_edit_answers_the_message_with_its_new_text_and_edit_times(client, users):
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    sent = channel.send_message({"text": "first"}, ann)["message"]
    assert "message_text_updated_at" not in sent
    answer = client.update_message({"id": sent["id"], "text": "second", "user_id": ann})
    edited = answer["message"]
    assert isinstance(answer["duration"], str)
    assert edited["id"] == sent["id"] and edited["text"] == "second" and edited["user"]["id"] == ann
    assert edited["created_at"] == sent["created_at"] and edited["type"] == "regular"
    assert at(edited["updated_at"]) >= at(sent["created_at"])
    assert edited["message_text_updated_at"] == edited["updated_at"]
    assert "deleted_at" not in edited
    got = client.get_message(sent["id"])["message"]
    assert got["text"] == "second" and got["message_text_updated_at"] == edited["message_text_updated_at"]
    queried = [m for m in channel.query(user_id=ben)["messages"] if m["id"] == sent["id"]]
    assert queried[0]["text"] == "second" and queried[0]["updated_at"] == edited["updated_at"]


def test_edit_reaches_every_watcher_the_editor_included_as_message_updated(client, users, listen):
    (ann, ben, cat), channel, (ann_socket, ben_socket, _) = watched_room(client, users, listen, "ann", "ben", "cat")
    cat_elsewhere = listen(cat)  # a member's connection that does not watch
    sent = channel.send_message({"text": "hello"}, ann)["message"]
    cat_elsewhere.next("notification.message_new")
    edited = client.update_message({"id": sent["id"], "text": "hello, edited", "user_id": ann})["message"]
    for socket in (ann_socket, ben_socket):
        event = socket.next("message.updated")
        assert_event_names_the_message(event, channel, sent["id"], ann)
        assert event["message"]["text"] == "hello, edited" and event["message"]["user"]["id"] == ann
        assert event["message"]["updated_at"] == edited["updated_at"]
        assert event["message"]["message_text_updated_at"] == edited["message_text_updated_at"]
        assert at(event["created_at"]) == at(edited["updated_at"])
        assert validate_event(event) == []
    cat_elsewhere.none("message.updated")
    ben_socket.none("notification.message_new")


def test_an_edit_that_keeps_the_text_moves_updated_at_but_not_message_text_updated_at(client, users):
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    sent = channel.send_message({"text": "same"}, ann)["message"]
    edited = client.update_message({"id": sent["id"], "text": "same", "user_id": ann})["message"]
    assert edited["text"] == "same" and "message_text_updated_at" not in edited
    assert at(edited["updated_at"]) >= at(sent["created_at"])
    changed = client.update_message({"id": sent["id"], "text": "changed", "user_id": ann})["message"]
    again = client.update_message({"id": sent["id"], "text": "changed", "user_id": ann})["message"]
    assert again["message_text_updated_at"] == changed["message_text_updated_at"], "the text did not change"
    assert at(again["updated_at"]) >= at(changed["updated_at"])


def test_partial_update_sets_and_unsets_the_text(client, users, as_user, listen):
    (ann, ben), channel, (_, ben_socket) = watched_room(client, users, listen, "ann", "ben")
    sent = channel.send_message({"text": "draft"}, ann)["message"]
    answer = client.update_message_partial(sent["id"], {"set": {"text": "final"}}, ann)
    assert isinstance(answer["duration"], str)
    assert answer["message"]["text"] == "final" and answer["message"]["message_text_updated_at"]
    event = ben_socket.next("message.updated")
    assert_event_names_the_message(event, channel, sent["id"], ann)
    assert event["message"]["text"] == "final"
    cleared = as_user(ann).update_message_partial(sent["id"], {"unset": ["text"]}, ann)["message"]
    assert cleared["text"] == ""
    assert ben_socket.next("message.updated")["message"]["text"] == ""
    assert client.get_message(sent["id"])["message"]["text"] == ""
    by_body_user_id = client.put(f"messages/{sent['id']}", data={"set": {"text": "via user_id"}, "user_id": ann})
    assert by_body_user_id["message"]["text"] == "via user_id"


@pytest.mark.parametrize("updates", [
    {"set": {"pinned": True}},
    {"set": {"text": "ok", "custom_field": 1}},
    {"unset": ["pinned"]},
    {"set": {"text": "both"}, "unset": ["text"]},
    {"set": {"text": 5}},
    {},
], ids=["set-pinned", "set-text-and-custom", "unset-pinned", "set-and-unset-text", "text-not-a-string", "nothing"])
def test_partial_update_of_anything_but_the_text_is_400(client, users, updates):
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    sent = channel.send_message({"text": "keep"}, ann)["message"]
    refused(lambda: client.update_message_partial(sent["id"], updates, ann), 400, "invalid_argument")
    got = client.get_message(sent["id"])["message"]
    assert got["text"] == "keep" and "message_text_updated_at" not in got


def test_editing_a_thread_parent_keeps_its_reply_count(client, users, listen):
    (ann, ben), channel, (ann_socket, _) = watched_room(client, users, listen, "ann", "ben")
    parent = channel.send_message({"text": "parent"}, ann)["message"]
    channel.send_message({"text": "r1", "parent_id": parent["id"]}, ben)
    reply = channel.send_message({"text": "r2", "parent_id": parent["id"]}, ben)["message"]
    answer = client.update_message({"id": parent["id"], "text": "parent, edited", "user_id": ann})["message"]
    assert ann_socket.next("message.updated")["message"]["reply_count"] == 2
    assert client.get_message(parent["id"])["message"]["reply_count"] == 2
    assert answer["reply_count"] == 2, "the answer has the parent's replies, as the event and GET /messages/{id} do"
    edited = client.update_message({"id": reply["id"], "text": "r2, edited", "user_id": ben})["message"]
    assert edited["parent_id"] == parent["id"]
    assert [m["text"] for m in channel.get_replies(parent["id"])["messages"]] == ["r1", "r2, edited"]


# Who may edit and delete (rule M1).

def test_only_the_author_may_edit_or_delete_with_a_user_token(client, users, as_user, listen):
    (ann, ben), channel, (ann_socket, _) = watched_room(client, users, listen, "ann", "ben")
    sent = channel.send_message({"text": "ann's"}, ann)["message"]
    ben_client = as_user(ben)
    refused(lambda: ben_client.update_message({"id": sent["id"], "text": "ben was here"}), 403, "not_allowed")
    refused(lambda: ben_client.update_message_partial(sent["id"], {"set": {"text": "ben"}}, ben), 403, "not_allowed")
    refused(lambda: ben_client.delete_message(sent["id"]), 403, "not_allowed")
    ann_socket.none("message.updated")
    got = client.get_message(sent["id"])["message"]
    assert got["text"] == "ann's" and got["type"] == "regular"
    ann_client = as_user(ann)
    assert ann_client.update_message({"id": sent["id"], "text": "ann's, edited"})["message"]["text"] == "ann's, edited"
    assert ann_socket.next("message.updated")["user"]["id"] == ann
    assert ann_client.delete_message(sent["id"])["message"]["type"] == "deleted"
    assert ann_socket.next("message.deleted")["user"]["id"] == ann


def test_a_user_token_may_not_act_for_another_user(client, users, as_user):
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    sent = channel.send_message({"text": "ann's"}, ann)["message"]
    ben_client = as_user(ben)
    refused(lambda: ben_client.update_message({"id": sent["id"], "text": "x", "user_id": ann}), 403, "not_allowed")
    refused(lambda: ben_client.update_message_partial(sent["id"], {"set": {"text": "x"}}, ann), 403, "not_allowed")
    refused(lambda: ben_client.delete_message(sent["id"], deleted_by=ann), 403, "not_allowed")
    assert client.get_message(sent["id"])["message"]["text"] == "ann's"


def test_a_server_token_naming_a_user_acts_as_that_user_who_must_be_the_author(client, users, listen):
    (ann, ben), channel, (ann_socket, _) = watched_room(client, users, listen, "ann", "ben")
    sent = channel.send_message({"text": "ann's"}, ann)["message"]
    refused(lambda: client.update_message({"id": sent["id"], "text": "x", "user_id": ben}), 403, "not_allowed")
    refused(lambda: client.update_message_partial(sent["id"], {"set": {"text": "x"}}, ben), 403, "not_allowed")
    refused(lambda: client.delete_message(sent["id"], deleted_by=ben), 403, "not_allowed")
    ann_socket.none("message.updated")
    deleted = client.delete_message(sent["id"], deleted_by=ann)["message"]
    assert deleted["type"] == "deleted"
    event = ann_socket.next("message.deleted")
    assert_event_names_the_message(event, channel, sent["id"], ann)


def test_a_server_token_naming_nobody_may_edit_and_delete_any_message(client, users, listen):
    (ann, ben), channel, (_, ben_socket) = watched_room(client, users, listen, "ann", "ben")
    sent = channel.send_message({"text": "ann's"}, ann)["message"]
    edited = client.update_message({"id": sent["id"], "text": "moderated"})["message"]
    assert edited["text"] == "moderated" and edited["user"]["id"] == ann, "the author stays the author"
    event = ben_socket.next("message.updated")
    assert_event_names_the_message(event, channel, sent["id"], ann)  # the server edits as the author
    assert client.update_message_partial(sent["id"], {"set": {"text": "moderated twice"}}, None)["message"]["text"] \
        == "moderated twice"
    deleted = client.delete_message(sent["id"])["message"]
    assert deleted["type"] == "deleted" and deleted["user"]["id"] == ann
    assert ben_socket.next("message.deleted")["message_id"] == sent["id"]


def test_unknown_message_is_404(client, users, as_user):
    (ann,) = users("ann")
    refused(lambda: client.update_message({"id": "no-such-message", "text": "x"}), 404, "unknown_message")
    refused(lambda: client.update_message_partial("no-such-message", {"set": {"text": "x"}}, None), 404, "unknown_message")
    refused(lambda: client.delete_message("no-such-message"), 404, "unknown_message")
    refused(lambda: as_user(ann).delete_message("no-such-message"), 404, "unknown_message")


def test_text_over_5000_bytes_is_400(client, users):
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    sent = channel.send_message({"text": "short"}, ann)["message"]
    refused(lambda: client.update_message({"id": sent["id"], "text": "x" * (MAX_TEXT_BYTES + 1), "user_id": ann}),
            400, "invalid_argument")
    two_byte = "\u00e9" * (MAX_TEXT_BYTES // 2 + 1)  # 2501 characters, 5002 bytes
    refused(lambda: client.update_message_partial(sent["id"], {"set": {"text": two_byte}}, ann), 400, "invalid_argument")
    assert client.get_message(sent["id"])["message"]["text"] == "short"
    longest = "x" * MAX_TEXT_BYTES
    assert client.update_message({"id": sent["id"], "text": longest, "user_id": ann})["message"]["text"] == longest


# Deleting (rules M4-M6).

def test_soft_delete_keeps_the_text_and_marks_the_message_deleted(client, users, listen):
    (ann, ben), channel, sockets = watched_room(client, users, listen, "ann", "ben")
    sent = channel.send_message({"text": "regrettable"}, ann)["message"]
    answer = client.delete_message(sent["id"], deleted_by=ann)
    deleted = answer["message"]
    assert isinstance(answer["duration"], str)
    assert deleted["id"] == sent["id"] and deleted["type"] == "deleted" and deleted["text"] == "regrettable"
    assert deleted["deleted_at"] == deleted["updated_at"] and at(deleted["deleted_at"]) >= at(sent["created_at"])
    assert deleted["created_at"] == sent["created_at"] and deleted["user"]["id"] == ann
    for socket in sockets:
        event = socket.next("message.deleted")
        assert_event_names_the_message(event, channel, sent["id"], ann)
        assert event["hard_delete"] is False and event["deleted_for_me"] is False
        assert event["message"]["type"] == "deleted" and event["message"]["text"] == "regrettable"
        assert event["message"]["deleted_at"] == deleted["deleted_at"]
        assert validate_event(event) == []
    got = client.get_message(sent["id"])["message"]
    assert got["type"] == "deleted" and got["deleted_at"] == deleted["deleted_at"] and got["text"] == "regrettable"
    queried = [m for m in channel.query(user_id=ben)["messages"] if m["id"] == sent["id"]]
    assert queried and queried[0]["type"] == "deleted" and queried[0]["deleted_at"] == deleted["deleted_at"]


def test_hard_delete_erases_the_text_everywhere(client, users, listen):
    (ann, ben), channel, (_, ben_socket) = watched_room(client, users, listen, "ann", "ben")
    parent = channel.send_message({"text": "parent"}, ann)["message"]
    reply = channel.send_message({"text": "secret reply", "parent_id": parent["id"]}, ben)["message"]
    sent = channel.send_message({"text": "secret"}, ann)["message"]
    deleted = client.delete_message(sent["id"], hard=True)["message"]
    assert deleted["type"] == "deleted" and deleted["text"] == "" and deleted["deleted_at"]
    event = ben_socket.next("message.deleted")
    assert_event_names_the_message(event, channel, sent["id"], ann)
    assert event["hard_delete"] is True and event["deleted_for_me"] is False and event["message"]["text"] == ""
    assert client.get_message(sent["id"])["message"]["text"] == ""
    queried = [m for m in channel.query(user_id=ben)["messages"] if m["id"] == sent["id"]]
    assert queried and queried[0]["text"] == "" and queried[0]["type"] == "deleted"
    client.delete_message(reply["id"], hard=True)
    assert ben_socket.next("message.deleted")["message"]["parent_id"] == parent["id"]
    replies = channel.get_replies(parent["id"])["messages"]
    assert [(m["id"], m["text"], m["type"]) for m in replies] == [(reply["id"], "", "deleted")]


def test_hard_delete_needs_a_server_token(client, users, as_user):
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    sent = channel.send_message({"text": "mine"}, ann)["message"]
    refused(lambda: as_user(ann).delete_message(sent["id"], hard=True), 403, "not_allowed")
    got = client.get_message(sent["id"])["message"]
    assert got["type"] == "regular" and got["text"] == "mine"


def test_deleting_again_changes_nothing_but_a_hard_delete_after_a_soft_one_erases_the_text(client, users, listen):
    (ann, ben), channel, (_, ben_socket) = watched_room(client, users, listen, "ann", "ben")
    sent = channel.send_message({"text": "twice"}, ann)["message"]
    first = client.delete_message(sent["id"], deleted_by=ann)["message"]
    assert ben_socket.next("message.deleted")["hard_delete"] is False
    again = client.delete_message(sent["id"], deleted_by=ann)["message"]
    assert again["deleted_at"] == first["deleted_at"] and again["text"] == "twice"
    ben_socket.none("message.deleted")
    hard = client.delete_message(sent["id"], hard=True)["message"]
    assert hard["text"] == "" and hard["deleted_at"] == first["deleted_at"], "deleted_at is the first delete's"
    event = ben_socket.next("message.deleted")
    assert event["hard_delete"] is True and event["message"]["text"] == ""
    assert client.delete_message(sent["id"], hard=True)["message"]["text"] == ""
    ben_socket.none("message.deleted")


def test_editing_a_deleted_message_is_400(client, users, as_user, listen):
    (ann, ben), channel, (_, ben_socket) = watched_room(client, users, listen, "ann", "ben")
    sent = channel.send_message({"text": "gone"}, ann)["message"]
    client.delete_message(sent["id"], deleted_by=ann)
    ben_socket.next("message.deleted")
    refused(lambda: client.update_message({"id": sent["id"], "text": "back", "user_id": ann}), 400, "invalid_argument")
    refused(lambda: as_user(ann).update_message({"id": sent["id"], "text": "back"}), 400, "invalid_argument")
    refused(lambda: client.update_message_partial(sent["id"], {"set": {"text": "back"}}, None), 400, "invalid_argument")
    ben_socket.none("message.updated")
    got = client.get_message(sent["id"])["message"]
    assert got["type"] == "deleted" and got["text"] == "gone"


def test_delete_for_me_is_not_served_and_deletes_nothing(client, users):
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    sent = channel.send_message({"text": "still here"}, ann)["message"]
    body = refused(lambda: client.delete(f"messages/{sent['id']}", {"delete_for_me": "true", "deleted_by": ann}),
                   501, "not_served")
    assert "delete_for_me" in body["message"]
    assert client.get_message(sent["id"])["message"]["type"] == "regular"


def test_the_sdks_delete_for_me_is_not_served_and_deletes_nothing(client, users):
    """stream-chat-python's `delete_message(id, delete_for_me=True, deleted_by=...)` sends its flag in
    the DELETE's body (`{"delete_for_me": true, "user": {"id": ...}}`), not in the query."""
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    sent = channel.send_message({"text": "still here"}, ann)["message"]
    try:
        refused(lambda: client.delete_message(sent["id"], delete_for_me=True, deleted_by=ann), 501, "not_served")
    finally:
        got = client.get_message(sent["id"])["message"]
        assert got["type"] == "regular" and "deleted_at" not in got, "a delete for one user deleted it for everyone"


def test_deleting_leaves_unread_counts_where_they_were(client, users, listen):
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    ben_elsewhere = listen(ben)  # not watching: its counts come in notifications
    sent = [channel.send_message({"text": f"m{i}"}, ann)["message"] for i in range(3)]
    assert unread(client, ben)["total_unread_count"] == 3
    client.delete_message(sent[2]["id"], deleted_by=ann)
    client.delete_message(sent[1]["id"], hard=True)
    counts = unread(client, ben)
    assert counts["total_unread_count"] == 3
    assert [c["unread_count"] for c in counts["channels"] if c["channel_id"] == channel.cid] == [3]
    assert reads_of(channel.query(user_id=ben))[ben]["unread_messages"] == 3
    ben_elsewhere.none("message.deleted")
    assert listen(ben).me["total_unread_count"] == 3
    channel.mark_read(ben)
    assert unread(client, ben)["total_unread_count"] == 0


def test_deleting_leaves_read_pointers_where_they_were(client, users, listen):
    (ann, ben), channel, (ann_socket, _) = watched_room(client, users, listen, "ann", "ben")
    first = channel.send_message({"text": "first"}, ann)["message"]
    last = channel.send_message({"text": "last"}, ann)["message"]
    channel.mark_read(ben)
    ann_socket.next("message.read")
    before = reads_of(channel.query(user_id=ann))[ben]
    assert before["last_read_message_id"] == last["id"] and before["unread_messages"] == 0
    client.delete_message(last["id"], hard=True)
    client.delete_message(first["id"], deleted_by=ann)
    after = reads_of(channel.query(user_id=ann))[ben]
    assert after["last_read_message_id"] == last["id"] and after["unread_messages"] == 0
    assert after["last_read"] == before["last_read"]
    ann_socket.none("message.read")


def test_the_validator_names_a_field_removed_from_a_real_message_deleted_frame(client, users, listen):
    (ann, ben), channel, (_, ben_socket) = watched_room(client, users, listen, "ann", "ben")
    sent = channel.send_message({"text": "x"}, ann)["message"]
    client.update_message({"id": sent["id"], "text": "y", "user_id": ann})
    updated = ben_socket.next("message.updated")
    without_message_id = copy.deepcopy(updated)
    del without_message_id["message_id"]
    assert validate_event(without_message_id) == ["message.updated: missing required 'message_id' (MessageUpdatedEvent)"]
    client.delete_message(sent["id"])
    deleted = ben_socket.next("message.deleted")
    without_hard = copy.deepcopy(deleted)
    del without_hard["hard_delete"]
    assert validate_event(without_hard) == ["message.deleted: missing required 'hard_delete' (MessageDeletedEvent)"]
    bad_deleted_at = copy.deepcopy(deleted)
    bad_deleted_at["message"]["deleted_at"] = 0
    assert validate_event(bad_deleted_at) == ["message.deleted.message.deleted_at: expected a string, got int"]
