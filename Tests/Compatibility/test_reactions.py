"""Reactions (docs/protocol.md, rules R1-R5) through the official SDK's `Channel.send_reaction`
(POST /messages/{id}/reaction), `Channel.delete_reaction` (DELETE /messages/{id}/reaction/{type}) and
`Channel.get_reactions` (GET /messages/{id}/reactions), through the SDK's plain `post` and `delete`
where it has no call (`enforce_unique`, a server-side call that names nobody), and with `requests` for
the one route docs/openapi.json does not list (POST /messages/{id}/reactions, 501), with independent
listeners watching
the channel: what the answers and the messages look like (`latest_reactions`, `own_reactions`,
`reaction_counts`, `reaction_scores`, `reaction_groups`), the `reaction.new`, `reaction.updated` and
`reaction.deleted` events every watcher receives, who may react, what is refused, and that reactions
move no unread count or read pointer."""

import copy
import queue
import time

import pytest
import requests

from conftest import API_KEY, Listener, reads_of, room, unique, watch
from stream_shapes import validate_event
from test_edits import at, refused, unread, watched_room

MAX_TYPES_PER_USER = 25
LATEST_REACTIONS = 10


def send_unique(client, message_id, type_, user, **reaction):
    """`enforce_unique`, which stream-chat-python's `send_reaction` cannot send."""
    return client.post(f"messages/{message_id}/reaction",
                       data={"reaction": {"type": type_, **reaction}, "user_id": user, "enforce_unique": True})


def latest(message):
    """A message's `latest_reactions` as (type, user, score)."""
    return [(r["type"], r["user_id"], r["score"]) for r in message["latest_reactions"]]


def listed(answer):
    """GET /messages/{id}/reactions as (type, user, score)."""
    return [(r["type"], r["user_id"], r["score"]) for r in answer["reactions"]]


def frames_until(listener, last_type, timeout=5.0):
    """Every frame `listener` receives from now on, up to and with the first of `last_type`."""
    deadline, frames = time.time() + timeout, []
    while not frames or frames[-1].get("type") != last_type:
        remaining = deadline - time.time()
        assert remaining > 0, f"{listener.user_id}: no {last_type} within {timeout}s, got {frames}"
        try:
            frames.append(listener.events.get(timeout=remaining))
        except queue.Empty:
            pass
    return frames


def assert_reaction(reaction, message_id, type_, user, score=1):
    """A ReactionResponse of `user`'s `type_` on the message."""
    assert reaction["message_id"] == message_id and reaction["type"] == type_ and reaction["score"] == score
    assert reaction["user_id"] == user and reaction["user"]["id"] == user
    assert isinstance(reaction["custom"], dict) and at(reaction["updated_at"]) >= at(reaction["created_at"])


def assert_reaction_event(event, kind, channel, message_id, type_, actor, score=1):
    """The fields every reaction event carries (rule R3); its message has no `own_reactions`."""
    assert event["type"] == f"reaction.{kind}"
    assert event["cid"] == channel.cid and event["channel_id"] == channel.id
    assert event["channel_type"] == channel.channel_type and event["channel"]["cid"] == channel.cid
    assert isinstance(event["channel_seq"], int) and not isinstance(event["channel_seq"], bool)
    assert event["message_id"] == message_id and event["message"]["id"] == message_id
    assert_reaction(event["reaction"], message_id, type_, actor, score)
    assert event["user"]["id"] == actor
    assert event["message"]["own_reactions"] == [], "events carry nobody's own reactions"
    assert isinstance(event["custom"], dict) and isinstance(event["created_at"], str)
    assert validate_event(event) == []


# Sending (rules R1, R2).

def test_a_reaction_answers_201_with_the_reaction_and_the_message_as_the_reacting_user_sees_it(client, users):
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    sent = channel.send_message({"text": "react"}, ann)["message"]
    answer = channel.send_reaction(sent["id"], {"type": "like"}, ben)
    assert answer.status_code() == 201 and isinstance(answer["duration"], str)
    reaction = answer["reaction"]
    assert_reaction(reaction, sent["id"], "like", ben)
    assert reaction["created_at"] == reaction["updated_at"] and reaction["custom"] == {}
    message = answer["message"]
    assert message["id"] == sent["id"] and message["text"] == "react" and message["user"]["id"] == ann
    assert message["latest_reactions"] == [reaction]
    assert message["own_reactions"] == [reaction], "the answer is the reacting user's view"
    assert message["reaction_counts"] == {"like": 1} and message["reaction_scores"] == {"like": 1}
    assert message["reaction_groups"] == {"like": {
        "count": 1, "sum_scores": 1, "first_reaction_at": reaction["created_at"],
        "last_reaction_at": reaction["created_at"],
        "latest_reactions_by": [{"user_id": ben, "created_at": reaction["created_at"]}]}}
    got = client.get_message(sent["id"])["message"]
    assert got["latest_reactions"] == [reaction] and got["reaction_counts"] == {"like": 1}


def test_reaction_new_reaches_every_watcher_the_reacting_user_included(client, users, listen):
    (ann, ben, cat), channel, sockets = watched_room(client, users, listen, "ann", "ben", "cat")
    cat_elsewhere = listen(cat)  # a member's connection that does not watch
    sent = channel.send_message({"text": "react"}, ann)["message"]
    seqs = [socket.next("message.new")["channel_seq"] for socket in sockets]
    cat_elsewhere.next("notification.message_new")
    reaction = channel.send_reaction(sent["id"], {"type": "like", "score": 2}, ben)["reaction"]
    reaction_seqs = set()
    for socket, seq in zip(sockets, seqs):
        event = socket.next("reaction.new")
        assert_reaction_event(event, "new", channel, sent["id"], "like", ben, score=2)
        assert event["channel_seq"] > seq, "journaled after the message"
        reaction_seqs.add(event["channel_seq"])
        assert event["reaction"] == reaction
        assert latest(event["message"]) == [("like", ben, 2)]
        assert event["message"]["reaction_counts"] == {"like": 1} and event["message"]["reaction_scores"] == {"like": 2}
        assert event["message"]["reaction_groups"]["like"]["sum_scores"] == 2
        assert at(event["created_at"]) >= at(reaction["created_at"])
    assert len(reaction_seqs) == 1, "one event, the same for every watcher"
    cat_elsewhere.none("reaction.new")


def test_latest_reactions_are_the_ten_newest_first_and_counts_scores_and_groups_sum_per_type(client, users, listen):
    (ann, ben, cat), channel, (ann_socket, _, _) = watched_room(client, users, listen, "ann", "ben", "cat")
    sent = channel.send_message({"text": "popular"}, ann)["message"]
    given = []
    for i in range(6):
        for user, score in ((ben, 1), (cat, 3)):
            channel.send_reaction(sent["id"], {"type": f"t{i}", "score": score}, user)
            given.append((f"t{i}", user, score))
    newest_first = given[::-1]
    last = None
    for _ in given:
        last = ann_socket.next("reaction.new")
    assert latest(last["message"]) == newest_first[:LATEST_REACTIONS]
    message = client.get_message(sent["id"])["message"]
    assert latest(message) == newest_first[:LATEST_REACTIONS]
    assert message["reaction_counts"] == {f"t{i}": 2 for i in range(6)}
    assert message["reaction_scores"] == {f"t{i}": 4 for i in range(6)}
    for i in range(6):
        group = message["reaction_groups"][f"t{i}"]
        assert group["count"] == 2 and group["sum_scores"] == 4
        assert [by["user_id"] for by in group["latest_reactions_by"]] == [cat, ben], "newest first"
        assert at(group["first_reaction_at"]) <= at(group["last_reaction_at"])
    assert last["message"]["reaction_counts"] == message["reaction_counts"]


def test_sending_the_same_type_again_replaces_its_score_and_keeps_one_reaction_in_its_place(client, users, listen):
    (ann, ben), channel, (ann_socket, _) = watched_room(client, users, listen, "ann", "ben")
    sent = channel.send_message({"text": "clap"}, ann)["message"]
    first = channel.send_reaction(sent["id"], {"type": "clap"}, ben)["reaction"]
    channel.send_reaction(sent["id"], {"type": "clap"}, ann)
    ann_socket.next("reaction.new")
    ann_socket.next("reaction.new")
    answer = channel.send_reaction(sent["id"], {"type": "clap", "score": 5}, ben)
    again = answer["reaction"]
    assert_reaction(again, sent["id"], "clap", ben, score=5)
    assert again["created_at"] == first["created_at"] and at(again["updated_at"]) >= at(first["updated_at"])
    assert latest(answer["message"]) == [("clap", ann, 1), ("clap", ben, 5)], "ben's keeps its place"
    assert answer["message"]["reaction_counts"] == {"clap": 2} and answer["message"]["reaction_scores"] == {"clap": 6}
    assert [r["score"] for r in answer["message"]["own_reactions"]] == [5]
    event = ann_socket.next("reaction.new")  # not reaction.updated: Stream's SDKs count it as new
    assert_reaction_event(event, "new", channel, sent["id"], "clap", ben, score=5)
    ann_socket.none("reaction.updated")
    assert listed(channel.get_reactions(sent["id"])) == [("clap", ann, 1), ("clap", ben, 5)]


def test_enforce_unique_replaces_the_users_other_types_and_sends_reaction_updated(client, users, listen):
    (ann, ben), channel, sockets = watched_room(client, users, listen, "ann", "ben")
    sent = channel.send_message({"text": "pick one"}, ann)["message"]
    channel.send_reaction(sent["id"], {"type": "like"}, ben)
    channel.send_reaction(sent["id"], {"type": "love"}, ben)
    channel.send_reaction(sent["id"], {"type": "like"}, ann)
    for socket in sockets:
        for _ in range(3):
            socket.next("reaction.new")
    answer = send_unique(client, sent["id"], "wow", ben, score=2)
    assert answer.status_code() == 201
    assert_reaction(answer["reaction"], sent["id"], "wow", ben, score=2)
    assert latest(answer["message"]) == [("wow", ben, 2), ("like", ann, 1)], "ben's like and love went, ann's like stayed"
    assert answer["message"]["reaction_counts"] == {"like": 1, "wow": 1}
    assert [r["type"] for r in answer["message"]["own_reactions"]] == ["wow"]
    for socket in sockets:
        event = socket.next("reaction.updated")
        assert_reaction_event(event, "updated", channel, sent["id"], "wow", ben, score=2)
        assert latest(event["message"]) == [("wow", ben, 2), ("like", ann, 1)]
        assert event["message"]["reaction_counts"] == {"like": 1, "wow": 1}
        socket.none("reaction.new")
    assert listed(channel.get_reactions(sent["id"])) == [("wow", ben, 2), ("like", ann, 1)]


def test_enforce_unique_with_no_other_type_to_replace_sends_reaction_new(client, users, listen):
    (ann, ben), channel, (ann_socket, _) = watched_room(client, users, listen, "ann", "ben")
    sent = channel.send_message({"text": "first"}, ann)["message"]
    send_unique(client, sent["id"], "like", ben)
    assert_reaction_event(ann_socket.next("reaction.new"), "new", channel, sent["id"], "like", ben)
    again = send_unique(client, sent["id"], "like", ben, score=3)  # only its own type: a new score
    assert latest(again["message"]) == [("like", ben, 3)]
    assert_reaction_event(ann_socket.next("reaction.new"), "new", channel, sent["id"], "like", ben, score=3)
    ann_socket.none("reaction.updated")


def test_a_reaction_to_a_thread_reply_reaches_the_channels_watchers_and_shows_in_the_thread(client, users, listen):
    (ann, ben), channel, (ann_socket, _) = watched_room(client, users, listen, "ann", "ben")
    parent = channel.send_message({"text": "parent"}, ann)["message"]
    reply = channel.send_message({"text": "reply", "parent_id": parent["id"]}, ben)["message"]
    channel.send_reaction(reply["id"], {"type": "like"}, ann)
    event = ann_socket.next("reaction.new")
    assert_reaction_event(event, "new", channel, reply["id"], "like", ann)
    assert event["message"]["parent_id"] == parent["id"]
    replies = channel.get_replies(parent["id"])["messages"]
    assert [(m["id"], m["reaction_counts"]) for m in replies] == [(reply["id"], {"like": 1})]
    got = client.get_message(parent["id"])["message"]
    assert got["reply_count"] == 1 and got["reaction_counts"] == {}, "the parent has none"


# Deleting (rule R4).

def test_deleting_a_reaction_answers_the_message_without_it_and_sends_reaction_deleted(client, users, listen):
    (ann, ben), channel, sockets = watched_room(client, users, listen, "ann", "ben")
    sent = channel.send_message({"text": "undo"}, ann)["message"]
    given = channel.send_reaction(sent["id"], {"type": "like", "score": 4}, ben)["reaction"]
    channel.send_reaction(sent["id"], {"type": "love"}, ann)
    answer = channel.delete_reaction(sent["id"], "like", ben)
    assert answer.status_code() == 200 and isinstance(answer["duration"], str)
    assert answer["reaction"] == given, "the reaction taken back, as it was"
    message = answer["message"]
    assert latest(message) == [("love", ann, 1)] and message["own_reactions"] == []
    assert message["reaction_counts"] == {"love": 1} and message["reaction_scores"] == {"love": 1}
    assert list(message["reaction_groups"]) == ["love"]
    for socket in sockets:
        event = socket.next("reaction.deleted")
        assert_reaction_event(event, "deleted", channel, sent["id"], "like", ben, score=4)
        assert latest(event["message"]) == [("love", ann, 1)] and event["message"]["reaction_counts"] == {"love": 1}
    assert listed(channel.get_reactions(sent["id"])) == [("love", ann, 1)]
    assert client.get_message(sent["id"])["message"]["reaction_counts"] == {"love": 1}


def test_deleting_a_reaction_the_user_does_not_have_is_404(client, users, listen):
    (ann, ben), channel, (ann_socket, _) = watched_room(client, users, listen, "ann", "ben")
    sent = channel.send_message({"text": "nothing here"}, ann)["message"]
    refused(lambda: channel.delete_reaction(sent["id"], "like", ben), 404, "unknown_reaction")
    channel.send_reaction(sent["id"], {"type": "like"}, ann)
    refused(lambda: channel.delete_reaction(sent["id"], "like", ben), 404, "unknown_reaction")  # ann's, not ben's
    channel.send_reaction(sent["id"], {"type": "love"}, ben)
    channel.delete_reaction(sent["id"], "love", ben)
    refused(lambda: channel.delete_reaction(sent["id"], "love", ben), 404, "unknown_reaction")  # twice
    refused(lambda: channel.delete_reaction("no-such-message", "love", ben), 404, "unknown_message")
    for event_type in ("reaction.new", "reaction.new", "reaction.deleted"):
        ann_socket.next(event_type)
    ann_socket.none("reaction.deleted")
    assert listed(channel.get_reactions(sent["id"])) == [("like", ann, 1)]


def test_a_hard_delete_of_the_message_takes_its_reactions_and_a_soft_delete_keeps_them(client, users, listen):
    (ann, ben), channel, (_, ben_socket) = watched_room(client, users, listen, "ann", "ben")
    soft = channel.send_message({"text": "soft"}, ann)["message"]
    hard = channel.send_message({"text": "hard"}, ann)["message"]
    for sent in (soft, hard):
        channel.send_reaction(sent["id"], {"type": "like"}, ben)
        channel.send_reaction(sent["id"], {"type": "love"}, ann)
    client.delete_message(soft["id"], deleted_by=ann)
    kept = ben_socket.next("message.deleted")["message"]
    assert latest(kept) == [("love", ann, 1), ("like", ben, 1)] and kept["reaction_counts"] == {"like": 1, "love": 1}
    assert client.get_message(soft["id"])["message"]["reaction_counts"] == {"like": 1, "love": 1}
    assert listed(channel.get_reactions(soft["id"])) == [("love", ann, 1), ("like", ben, 1)]
    client.delete_message(hard["id"], hard=True)
    gone = ben_socket.next("message.deleted")["message"]
    assert gone["latest_reactions"] == [] and gone["reaction_counts"] == {} and gone.get("reaction_groups", {}) == {}
    got = client.get_message(hard["id"])["message"]
    assert got["latest_reactions"] == [] and got["reaction_counts"] == {} and got["reaction_scores"] == {}
    assert listed(channel.get_reactions(hard["id"])) == []
    refused(lambda: channel.delete_reaction(hard["id"], "like", ben), 404, "unknown_reaction")
    queried = {m["id"]: m for m in channel.query(user_id=ben)["messages"]}
    assert queried[hard["id"]]["reaction_counts"] == {} and queried[soft["id"]]["reaction_counts"] == {"like": 1, "love": 1}


# Listing (GET /messages/{id}/reactions).

def test_get_reactions_lists_newest_first_ten_by_default_with_limit_and_offset(client, users):
    ann, ben, cat = users("ann", "ben", "cat")
    channel = room(client, [ann, ben, cat])
    sent = channel.send_message({"text": "list"}, ann)["message"]
    given = []
    for i in range(6):
        for user in (ben, cat):
            channel.send_reaction(sent["id"], {"type": f"t{i}", "score": i + 1}, user)
            given.append((f"t{i}", user, i + 1))
    newest_first = given[::-1]
    answer = channel.get_reactions(sent["id"])
    assert isinstance(answer["duration"], str) and answer.status_code() == 200
    assert listed(answer) == newest_first[:10]
    for reaction in answer["reactions"]:
        assert_reaction(reaction, sent["id"], reaction["type"], reaction["user_id"], reaction["score"])
    assert listed(channel.get_reactions(sent["id"], limit=3, offset=2)) == newest_first[2:5]
    assert listed(channel.get_reactions(sent["id"], limit=300)) == newest_first
    assert listed(channel.get_reactions(sent["id"], offset=11)) == newest_first[11:]
    assert listed(channel.get_reactions(sent["id"], offset=12)) == []
    refused(lambda: channel.get_reactions(sent["id"], limit=301), 400, "invalid_argument")
    refused(lambda: channel.get_reactions(sent["id"], offset=-1), 400, "invalid_argument")
    refused(lambda: channel.get_reactions("no-such-message"), 404, "unknown_message")


def test_querying_reactions_is_not_served(server, client, users):
    """POST /messages/{id}/reactions (Stream's QueryReactions) answers 501; it is not in docs/openapi.json,
    so it is asked without the SDK's checked session."""
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    sent = channel.send_message({"text": "query me"}, ann)["message"]
    channel.send_reaction(sent["id"], {"type": "like"}, ben)
    response = requests.post(f"{server.base_url}/messages/{sent['id']}/reactions", params={"api_key": API_KEY},
                             json={"filter": {"type": "like"}},
                             headers={"Authorization": client.auth_token, "stream-auth-type": "jwt"})
    body = response.json()
    assert response.status_code == 501, body
    assert body["StatusCode"] == 501 and body["error_code"] == "not_served" and "reactions" in body["message"]
    assert listed(channel.get_reactions(sent["id"])) == [("like", ben, 1)]


# Who may react (rule R1).

def test_only_members_react(client, users, as_user, listen):
    (ann, ben), channel, (ann_socket, _) = watched_room(client, users, listen, "ann", "ben")
    (zed,) = users("zed")
    sent = channel.send_message({"text": "members only"}, ann)["message"]
    refused(lambda: channel.send_reaction(sent["id"], {"type": "like"}, zed), 403, "not_a_member")
    channel.send_reaction(sent["id"], {"type": "like"}, ben)
    ann_socket.next("reaction.new")
    refused(lambda: channel.delete_reaction(sent["id"], "like", zed), 403, "not_a_member")
    # A user token of a non-member does not see the message at all.
    zed_channel = as_user(zed).channel(channel.channel_type, channel.id)
    refused(lambda: zed_channel.send_reaction(sent["id"], {"type": "like"}, zed), 404, "unknown_message")
    refused(lambda: zed_channel.get_reactions(sent["id"]), 404, "unknown_message")
    ann_socket.none("reaction.new")
    assert listed(channel.get_reactions(sent["id"])) == [("like", ben, 1)]


def test_a_server_token_must_name_the_reacting_user(client, users, listen):
    (ann, ben, cat), channel, (ann_socket, _, _) = watched_room(client, users, listen, "ann", "ben", "cat")
    sent = channel.send_message({"text": "who?"}, ann)["message"]
    path = f"messages/{sent['id']}/reaction"
    refused(lambda: client.post(path, data={"reaction": {"type": "like"}}), 400, "invalid_argument")
    channel.send_reaction(sent["id"], {"type": "like"}, ben)  # the SDK names her as reaction.user.id
    refused(lambda: client.delete(f"{path}/like"), 400, "invalid_argument")
    ann_socket.next("reaction.new")
    ann_socket.none("reaction.deleted")
    client.post(path, data={"reaction": {"type": "love", "user_id": cat}})
    assert ann_socket.next("reaction.new")["user"]["id"] == cat
    client.post(path, data={"reaction": {"type": "wow"}, "user_id": ann})
    assert ann_socket.next("reaction.new")["user"]["id"] == ann
    assert listed(channel.get_reactions(sent["id"])) == [("wow", ann, 1), ("love", cat, 1), ("like", ben, 1)]


def test_a_user_token_reacts_as_its_own_user_only(client, users, as_user, listen):
    (ann, ben), channel, (ann_socket, _) = watched_room(client, users, listen, "ann", "ben")
    sent = channel.send_message({"text": "mine"}, ann)["message"]
    ben_channel = as_user(ben).channel(channel.channel_type, channel.id)
    answer = ben_channel.send_reaction(sent["id"], {"type": "like"}, ben)
    assert_reaction(answer["reaction"], sent["id"], "like", ben)
    assert [r["user_id"] for r in answer["message"]["own_reactions"]] == [ben]
    assert_reaction_event(ann_socket.next("reaction.new"), "new", channel, sent["id"], "like", ben)
    refused(lambda: ben_channel.send_reaction(sent["id"], {"type": "love"}, ann), 403, "not_allowed")
    refused(lambda: ben_channel.delete_reaction(sent["id"], "like", ann), 403, "not_allowed")
    ann_socket.none("reaction.new")
    assert ben_channel.delete_reaction(sent["id"], "like", ben)["reaction"]["user_id"] == ben
    assert_reaction_event(ann_socket.next("reaction.deleted"), "deleted", channel, sent["id"], "like", ben)


# What is refused (rules R1, R2).

@pytest.mark.parametrize("reaction", [
    {"type": ""},
    {"type": "x" * 256},
    {"type": "\u00e9" * 128},  # 128 characters, 256 bytes
    {"type": "new\nline"},
    {"type": "tab\t"},
    {"type": "del\x7f"},
    {"type": 5},
    {"type": "like", "score": 0},
    {"type": "like", "score": -1},
    {"type": "like", "score": 2 ** 31},
    {"type": "like", "score": 1.5},
    {"type": "like", "score": "2"},
], ids=["empty-type", "type-of-256-bytes", "type-of-256-utf8-bytes", "newline", "tab", "delete-character",
        "type-not-a-string", "score-0", "score-negative", "score-over-int32", "score-fraction", "score-a-string"])
def test_a_bad_type_or_score_is_400(client, users, reaction):
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    sent = channel.send_message({"text": "bad"}, ann)["message"]
    refused(lambda: client.post(f"messages/{sent['id']}/reaction", data={"reaction": reaction, "user_id": ben}),
            400, "invalid_argument")
    assert listed(channel.get_reactions(sent["id"])) == []


def test_the_longest_type_and_score_and_any_printable_bytes_are_taken(client, users):
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    sent = channel.send_message({"text": "edges"}, ann)["message"]
    for reaction in ({"type": "x" * 255}, {"type": "\u00e9" * 127 + "x"}, {"type": "thumbs up \U0001F44D"},
                     {"type": "max", "score": 2 ** 31 - 1}):
        answer = channel.send_reaction(sent["id"], reaction, ben)["reaction"]
        assert answer["type"] == reaction["type"] and answer["score"] == reaction.get("score", 1)
    assert channel.delete_reaction(sent["id"], "thumbs up \U0001F44D", ben)["reaction"]["type"] == "thumbs up \U0001F44D"
    assert len(channel.get_reactions(sent["id"])["reactions"]) == 3


def test_a_reaction_without_a_reaction_object_is_400(client, users):
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    sent = channel.send_message({"text": "empty"}, ann)["message"]
    for body in ({"user_id": ben}, {"reaction": "like", "user_id": ben}, {"reaction": {}, "user_id": ben}):
        refused(lambda: client.post(f"messages/{sent['id']}/reaction", data=body), 400, "invalid_argument")


def test_a_deleted_message_takes_no_reaction(client, users, as_user, listen):
    (ann, ben), channel, (ann_socket, _) = watched_room(client, users, listen, "ann", "ben")
    soft = channel.send_message({"text": "soft"}, ann)["message"]
    hard = channel.send_message({"text": "hard"}, ann)["message"]
    client.delete_message(soft["id"], deleted_by=ann)
    client.delete_message(hard["id"], hard=True)
    for sent in (soft, hard):
        refused(lambda: channel.send_reaction(sent["id"], {"type": "like"}, ben), 400, "invalid_argument")
        refused(lambda: as_user(ben).channel(channel.channel_type, channel.id).send_reaction(
            sent["id"], {"type": "like"}, ben), 400, "invalid_argument")
    ann_socket.none("reaction.new")
    assert client.get_message(soft["id"])["message"]["reaction_counts"] == {}


def test_a_user_may_give_25_types_to_a_message_and_the_26th_is_400(client, users, listen):
    (ann, ben), channel, (ann_socket, _) = watched_room(client, users, listen, "ann", "ben")
    sent = channel.send_message({"text": "many"}, ann)["message"]
    for i in range(MAX_TYPES_PER_USER):
        channel.send_reaction(sent["id"], {"type": f"t{i}"}, ben)
    for _ in range(MAX_TYPES_PER_USER):
        ann_socket.next("reaction.new")
    refused(lambda: channel.send_reaction(sent["id"], {"type": "one-too-many"}, ben), 400, "invalid_argument")
    ann_socket.none("reaction.new")
    assert channel.send_reaction(sent["id"], {"type": "t0", "score": 9}, ben)["reaction"]["score"] == 9, \
        "a type she has is only a new score"
    channel.send_reaction(sent["id"], {"type": "one-too-many"}, ann)  # the limit is per user
    channel.delete_reaction(sent["id"], "t1", ben)
    channel.send_reaction(sent["id"], {"type": "one-more"}, ben)
    message = client.get_message(sent["id"])["message"]
    assert sum(message["reaction_counts"].values()) == MAX_TYPES_PER_USER + 1
    assert len(channel.get_reactions(sent["id"], limit=300)["reactions"]) == MAX_TYPES_PER_USER + 1


# What reactions leave alone (rule R5) and who sees whose (own_reactions).

def test_reactions_leave_unread_counts_and_read_pointers_where_they_were(client, users, listen):
    ann, ben, cat = users("ann", "ben", "cat")
    channel = room(client, [ann, ben, cat])
    ann_socket = listen(ann)
    watch(ann_socket, channel)
    ben_elsewhere = listen(ben)  # a member that does not watch: reactions do not reach it
    first = channel.send_message({"text": "first"}, ann)["message"]
    channel.send_message({"text": "second"}, ann)
    channel.mark_read(cat)
    ann_socket.next("message.read")
    before = reads_of(channel.query(user_id=ann))
    assert unread(client, ben)["total_unread_count"] == 2 and unread(client, cat)["total_unread_count"] == 0
    channel.send_reaction(first["id"], {"type": "like"}, ben)
    channel.send_reaction(first["id"], {"type": "love"}, cat)
    send_unique(client, first["id"], "wow", cat)
    channel.delete_reaction(first["id"], "like", ben)
    for event_type in ("reaction.new", "reaction.new", "reaction.updated", "reaction.deleted"):
        ann_socket.next(event_type)
    for user, count in ((ann, 0), (ben, 2), (cat, 0)):
        counts = unread(client, user)
        assert counts["total_unread_count"] == count, (user, counts)
        assert [c["unread_count"] for c in counts["channels"] if c["channel_id"] == channel.cid] in ([count], [])
    after = reads_of(channel.query(user_id=ann))
    for user in (ann, ben, cat):
        assert after[user]["unread_messages"] == before[user]["unread_messages"]
        assert after[user]["last_read"] == before[user]["last_read"]
        assert after[user].get("last_read_message_id") == before[user].get("last_read_message_id")
    ann_socket.none("message.read")
    for event_type in ("reaction.new", "notification.message_new", "notification.mark_read"):
        ben_elsewhere.none(event_type, within=0.2)
    assert listen(ben).me["total_unread_count"] == 2


def reacted_message(client, users):
    """A message ben reacted to twice (like, then wow) and ann once (love, between): (ann, ben, channel, message)."""
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    sent = channel.send_message({"text": "whose?"}, ann)["message"]
    channel.send_reaction(sent["id"], {"type": "like"}, ben)
    channel.send_reaction(sent["id"], {"type": "love"}, ann)
    channel.send_reaction(sent["id"], {"type": "wow"}, ben)
    return ann, ben, channel, sent


def own(message):
    return [(r["type"], r["user_id"]) for r in message["own_reactions"]]


def in_state(state, message_id):
    """The message of a channel state."""
    return [m for m in state["messages"] if m["id"] == message_id][0]


def test_own_reactions_are_the_token_users_in_channel_queries_and_get_message(client, users, as_user):
    ann, ben, channel, sent = reacted_message(client, users)
    ben_client, ann_client = as_user(ben), as_user(ann)
    assert own(in_state(ben_client.channel(channel.channel_type, channel.id).query(), sent["id"])) \
        == [("wow", ben), ("like", ben)], "newest first"
    assert own(in_state(ann_client.channel(channel.channel_type, channel.id).query(), sent["id"])) == [("love", ann)]
    assert own(in_state(ben_client.query_channels({"cid": channel.cid})["channels"][0], sent["id"])) \
        == [("wow", ben), ("like", ben)]
    assert own(ben_client.get_message(sent["id"])["message"]) == [("wow", ben), ("like", ben)]
    assert own(ann_client.get_message(sent["id"])["message"]) == [("love", ann)]
    everyone = ann_client.get_message(sent["id"])["message"]
    assert latest(everyone) == [("wow", ben, 1), ("love", ann, 1), ("like", ben, 1)], "latest_reactions are everyone's"


def test_a_server_token_sees_the_named_users_own_reactions_and_none_naming_nobody(client, users):
    ann, ben, channel, sent = reacted_message(client, users)
    assert own(client.get_message(sent["id"])["message"]) == [], "naming nobody: a third party's view"
    named = {
        "POST /channels (user_id)": own(in_state(client.query_channels({"cid": channel.cid}, user_id=ben)["channels"][0],
                                                 sent["id"])),
        "POST /channels/{type}/{id}/query (user_id)": own(in_state(channel.query(user_id=ben), sent["id"])),
    }
    assert named == {key: [("wow", ben), ("like", ben)] for key in named}, "a query acts for the user it names"
    assert latest(client.get_message(sent["id"])["message"]) == [("wow", ben, 1), ("love", ann, 1), ("like", ben, 1)]


# Resuming (reactions are journaled).

def test_reaction_events_are_replayed_to_a_watcher_that_resumes(server, client, users, listen):
    ann, ben = users("ann", "ben")
    channel = room(client, [ann, ben])
    away = Listener(server, client, ben)  # closed before the reactions, so not the fixture's
    watch(away, channel)
    sent = channel.send_message({"text": "while away"}, ann)["message"]
    seen = away.next("message.new")["channel_seq"]
    away.close()
    channel.send_reaction(sent["id"], {"type": "like"}, ann)
    send_unique(client, sent["id"], "love", ann)
    channel.delete_reaction(sent["id"], "love", ann)
    back = listen(ben)
    request_id = unique("resume")
    back.send({"type": "watch", "cid": channel.cid, "last_seq": seen, "request_id": request_id})
    assert back.next("reply")["request_id"] == request_id
    replayed = frames_until(back, "channel.resumed")
    kinds = [(e["type"], e.get("reaction", {}).get("type")) for e in replayed]
    assert kinds == [("reaction.new", "like"), ("reaction.updated", "love"), ("reaction.deleted", "love"),
                     ("channel.resumed", None)], kinds
    seqs = [e["channel_seq"] for e in replayed]
    assert seen < seqs[0] < seqs[1] < seqs[2] == seqs[3], seqs
    assert replayed[-1]["replayed"] == 3 and replayed[-1]["last_seq"] == seen


# The validator on real reaction frames.

def test_the_validator_names_a_field_removed_from_a_real_reaction_frame(client, users, listen):
    (ann, ben), channel, (_, ben_socket) = watched_room(client, users, listen, "ann", "ben")
    sent = channel.send_message({"text": "x"}, ann)["message"]
    channel.send_reaction(sent["id"], {"type": "like"}, ann)
    new = ben_socket.next("reaction.new")
    without_score = copy.deepcopy(new)
    del without_score["reaction"]["score"]
    assert validate_event(without_score) == ["reaction.new.reaction: missing required 'score' (ReactionResponse)"]
    without_reaction = copy.deepcopy(new)
    del without_reaction["reaction"]
    assert validate_event(without_reaction) == [
        "reaction.new: missing required 'reaction' (ReactionResponse, as Checkmark sends it)"]
    bad_group = copy.deepcopy(new)
    del bad_group["message"]["reaction_groups"]["like"]["latest_reactions_by"]
    assert validate_event(bad_group) == [
        "reaction.new.message.reaction_groups.like: missing required 'latest_reactions_by' (ReactionGroupResponse)"]
    send_unique(client, sent["id"], "love", ann)
    updated = ben_socket.next("reaction.updated")
    without_message_id = copy.deepcopy(updated)
    del without_message_id["message_id"]
    assert validate_event(without_message_id) == [
        "reaction.updated: missing required 'message_id' (ReactionUpdatedEvent)"]
    channel.delete_reaction(sent["id"], "love", ann)
    deleted = ben_socket.next("reaction.deleted")
    without_channel = copy.deepcopy(deleted)
    del without_channel["channel"]
    assert validate_event(without_channel) == ["reaction.deleted: missing required 'channel' (ReactionDeletedEvent)"]
