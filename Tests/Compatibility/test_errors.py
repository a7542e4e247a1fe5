"""Errors as Stream answers them: JSON {code, message, StatusCode, duration} with the right HTTP status
and Stream's numeric code, for each kind of bad request."""

import json
import time

import pytest
import requests
from stream_chat import StreamChat
from stream_chat.base.exceptions import StreamAPIException

from conftest import API_KEY, API_SECRET, unique


def refused(call, status, code):
    with pytest.raises(StreamAPIException) as error:
        call()
    body = json.loads(error.value.response_text)
    assert error.value.status_code == status, body
    assert body["code"] == code and body["StatusCode"] == status, body
    assert body["message"] and body["duration"].endswith("ms")
    return body


@pytest.fixture
def room(client, users):
    ann, ben = users("ann", "ben")
    channel = client.channel("messaging", unique("room"), data={"members": [ann, ben]})
    channel.create(ann)
    return channel, ann, ben


def test_bad_json_is_400(server, client):
    response = requests.post(f"{server.base_url}/channels/read", params={"api_key": API_KEY}, data="{not json",
                             headers={"Authorization": client.auth_token, "stream-auth-type": "jwt"})
    body = response.json()
    assert response.status_code == 400 and body["code"] == 4 and "JSON" in body["message"]


def test_missing_or_wrong_fields_are_400(client, room):
    channel, ann, _ = room
    refused(lambda: channel.send_message({"html": "no text"}, ann), 400, 4)
    refused(lambda: client.create_channel_type({"name": unique("t").replace("-", "_"), "read_events": "yes"}), 400, 4)
    refused(lambda: client.post("channels/delivered", data={"user_id": ann, "latest_delivered_messages": []}), 400, 4)
    refused(lambda: client.update_user_partial({"id": ann, "set": {"privacy_settings": {"read_receipts": {"enabled": "no"}}}}), 400, 4)
    refused(lambda: client.query_channels({"members": {"$in": [ann]}}), 400, 4)  # no user_id server side
    refused(lambda: client.query_channels({"name": "x"}, user_id=ann), 400, 4)  # unsupported filter field
    refused(lambda: client.query_channels({"members": {"$in": [ann]}}, user_id=ann, limit=31), 400, 4)


def test_unknown_channel_message_and_user_are_404(client, room):
    channel, ann, ben = room
    refused(lambda: client.channel("messaging", unique("missing")).mark_read(ann), 404, 16)
    refused(lambda: channel.mark_read(ben, message_id="no-such-message"), 404, 16)
    refused(lambda: channel.send_message({"text": "who?"}, unique("ghost")), 404, 16)
    refused(lambda: client.unread_counts(unique("ghost")), 404, 16)


def test_not_a_member_is_403(client, room, users):
    channel, _, _ = room
    (zed,) = users("zed")
    refused(lambda: channel.mark_read(zed), 403, 17)
    refused(lambda: channel.send_message({"text": "let me in"}, zed), 403, 17)


def test_user_token_may_not_act_for_others_or_call_server_routes(room, as_user):
    channel, ann, ben = room
    refused(lambda: as_user(ann).channel("messaging", channel.id).mark_read(ben), 403, 17)
    refused(lambda: as_user(ann).create_channel_type({"name": "mine"}), 403, 17)
    refused(lambda: as_user(ann).channel("messaging", channel.id).add_members([ann]), 403, 17)


def test_invalid_and_expired_tokens_are_401(server, client, room):
    channel, ann, _ = room
    wrong = StreamChat(api_key=API_KEY, api_secret="not-the-secret-but-as-long-as-a-real-one", base_url=server.base_url)
    refused(lambda: wrong.unread_counts(ann), 401, 5)
    expired = StreamChat(api_key=API_KEY, api_secret=API_SECRET, base_url=server.base_url)
    expired.auth_token = client.create_token(ann, exp=int(time.time()) - 60)
    refused(lambda: expired.unread_counts(ann), 401, 40)
    unknown_key = StreamChat(api_key="not-the-key", api_secret=API_SECRET, base_url=server.base_url)
    refused(lambda: unknown_key.unread_counts(ann), 401, 5)


def test_payload_too_large_is_413(client, room):
    channel, ann, _ = room
    refused(lambda: channel.send_message({"text": "x" * (2 << 20)}, ann), 413, 22)


def test_unknown_route_is_404_and_wrong_method_405(server, client):
    headers = {"Authorization": client.auth_token, "stream-auth-type": "jwt"}
    missing = requests.get(f"{server.base_url}/no/such/route", params={"api_key": API_KEY}, headers=headers)
    assert missing.status_code == 404 and missing.json()["code"] == 16
    wrong = requests.delete(f"{server.base_url}/users", params={"api_key": API_KEY}, headers=headers)
    assert wrong.status_code == 405 and "PATCH" in wrong.headers["Allow"] and "POST" in wrong.headers["Allow"]
