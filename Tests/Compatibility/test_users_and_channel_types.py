"""Users (upsert, partial update, privacy settings) and channel types through the official SDK."""

import pytest
from stream_chat.base.exceptions import StreamAPIException

from conftest import unique


def test_upsert_returns_users_with_privacy_settings_defaulting_to_enabled(client):
    ann, ben = unique("ann"), unique("ben")
    response = client.upsert_users([
        {"id": ann, "name": "Ann", "team": "blue"},
        {"id": ben, "privacy_settings": {"read_receipts": {"enabled": False}}},
    ])
    users = response["users"]
    assert users[ann]["name"] == "Ann" and users[ann]["team"] == "blue"
    assert users[ann]["privacy_settings"] == {"read_receipts": {"enabled": True}, "delivery_receipts": {"enabled": True},
                                              "typing_indicators": {"enabled": True}}
    assert users[ben]["privacy_settings"]["read_receipts"] == {"enabled": False}
    assert users[ben]["privacy_settings"]["delivery_receipts"] == {"enabled": True}
    assert "duration" in response


def test_partial_update_sets_and_unsets_fields_and_privacy(client):
    ann = unique("ann")
    client.upsert_user({"id": ann, "name": "Ann", "team": "blue"})
    updated = client.update_user_partial({
        "id": ann, "set": {"privacy_settings": {"delivery_receipts": {"enabled": False}}, "mood": "ok"},
        "unset": ["team"]})["users"][ann]
    assert updated["privacy_settings"] == {"read_receipts": {"enabled": True}, "delivery_receipts": {"enabled": False},
                                           "typing_indicators": {"enabled": True}}
    assert updated["mood"] == "ok" and "team" not in updated and updated["name"] == "Ann"


def test_user_token_updates_only_its_own_user(client, as_user):
    ann, ben = unique("ann"), unique("ben")
    client.upsert_users([{"id": ann}, {"id": ben}])
    own = as_user(ann).update_user_partial({"id": ann, "set": {"privacy_settings": {"read_receipts": {"enabled": False}}}})
    assert own["users"][ann]["privacy_settings"]["read_receipts"]["enabled"] is False
    with pytest.raises(StreamAPIException) as error:
        as_user(ann).update_user_partial({"id": ben, "set": {"name": "not yours"}})
    assert error.value.status_code == 403 and error.value.error_code == 17


def test_channel_type_is_created_read_updated_and_listed(client):
    name = unique("support").replace("-", "_")
    created = client.create_channel_type({"name": name, "delivery_events": True})
    assert created["name"] == name and created["read_events"] is True and created["delivery_events"] is True
    assert client.get_channel_type(name)["delivery_events"] is True
    updated = client.update_channel_type(name, read_events=False)
    assert updated["read_events"] is False and updated["delivery_events"] is True
    listed = client.list_channel_types()["channel_types"]
    assert listed[name]["read_events"] is False
    assert listed["messaging"] == {**listed["messaging"], "read_events": True, "delivery_events": False}


def test_duplicate_channel_type_is_refused(client):
    name = unique("dup").replace("-", "_")
    client.create_channel_type({"name": name})
    with pytest.raises(StreamAPIException) as error:
        client.create_channel_type({"name": name})
    assert error.value.status_code == 409


def test_unknown_channel_type_is_404(client):
    with pytest.raises(StreamAPIException) as error:
        client.get_channel_type("no_such_type")
    assert error.value.status_code == 404 and error.value.error_code == 16
