"""Validates JSON against the shapes Stream publishes for the objects and events Checkmark serves
(stream-shapes.json, a copy of the field names, types and required sets of Stream's client-side
OpenAPI description; its "about" names the source).

`validate(value, "OwnUserResponse")` returns a list of errors, each with the JSON path where it was
found: a required key missing or null, or a present key of the wrong type. Keys the description does
not list are allowed (Checkmark adds its own, e.g. `channel_seq`). A type named in the description but
not described in the file (ThreadResponse, ChannelMute, ...) only has to be a JSON object.

`validate_event(frame)` picks the shape by the frame's `type` (frames that are not Stream's events
pass) and also requires the few optional fields the SDKs read (EVENT_CONTRACT); `validate_response`
picks it by method and route (error answers pass)."""

import json
import re
from pathlib import Path

SHAPES = json.loads((Path(__file__).parent / "stream-shapes.json").read_text())["schemas"]

RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")

# Stream's event types (the frames Checkmark sends that Stream defines) and their shapes.
EVENTS = {
    "health.check": "HealthCheckEvent",
    "message.new": "MessageNewEvent",
    "message.updated": "MessageUpdatedEvent",
    "message.deleted": "MessageDeletedEvent",
    "notification.message_new": "NotificationNewMessageEvent",
    "message.read": "MessageReadEvent",
    "message.delivered": "MessageDeliveredEvent",
    "notification.mark_read": "NotificationMarkReadEvent",
    "notification.mark_unread": "NotificationMarkUnreadEvent",
    "notification.thread_message_new": "NotificationThreadMessageNewEvent",
    "typing.start": "TypingStartEvent",
    "typing.stop": "TypingStopEvent",
    "reaction.new": "ReactionNewEvent",
    "reaction.updated": "ReactionUpdatedEvent",
    "reaction.deleted": "ReactionDeletedEvent",
}

# REST answers (method, path pattern) and their shapes.
ROUTES = [
    ("POST", re.compile(r"^/channels/[^/]+/[^/]+/query$"), "ChannelStateResponse"),
    ("POST", re.compile(r"^/channels/[^/]+/query$"), "ChannelStateResponse"),
    ("POST", re.compile(r"^/channels$"), "QueryChannelsResponse"),
    ("POST", re.compile(r"^/channels/[^/]+/[^/]+/message$"), "SendMessageResponse"),
    ("POST", re.compile(r"^/channels/[^/]+/[^/]+/read$"), "MarkReadResponse"),
    ("POST", re.compile(r"^/channels/delivered$"), "MarkDeliveredResponse"),
    ("GET", re.compile(r"^/unread$"), "WrappedUnreadCountsResponse"),
    ("GET", re.compile(r"^/messages/[^/]+/replies$"), "RepliesResponse"),
    ("POST", re.compile(r"^/channels/[^/]+/[^/]+/event$"), "EventResponse"),
    ("GET", re.compile(r"^/messages/[^/]+$"), "GetMessageResponse"),
    ("POST", re.compile(r"^/messages/[^/]+$"), "UpdateMessageResponse"),
    ("PUT", re.compile(r"^/messages/[^/]+$"), "UpdateMessagePartialResponse"),
    ("DELETE", re.compile(r"^/messages/[^/]+$"), "DeleteMessageResponse"),
    ("POST", re.compile(r"^/threads$"), "QueryThreadsResponse"),
    ("GET", re.compile(r"^/threads/[^/]+$"), "GetThreadResponse"),
    ("POST", re.compile(r"^/messages/[^/]+/reaction$"), "SendReactionResponse"),
    ("DELETE", re.compile(r"^/messages/[^/]+/reaction/[^/]+$"), "DeleteReactionResponse"),
    ("GET", re.compile(r"^/messages/[^/]+/reactions$"), "GetReactionsResponse"),
]

# GET /messages/{parent_id}/replies: Stream's GetRepliesResponse, which the file does not list.
LOCAL = {
    "RepliesResponse": {"required": ["messages", "duration"],
                        "properties": {"messages": ["MessageResponse"], "duration": "string"}},
}


# Types the file names but does not describe that are not objects: Stream's description declares
# ChannelOwnCapability a string enum ("send-message", "read-events", ...).
ALIASES = {"ChannelOwnCapability": "string"}


def _schema(name):
    return SHAPES.get(name) or LOCAL.get(name)


def _check(value, kind, path, errors):
    """Checks `value` against a type of the notation (see the module's doc)."""
    if isinstance(kind, list):
        if not isinstance(value, list):
            errors.append(f"{path}: expected an array, got {type(value).__name__}")
            return
        for index, item in enumerate(value):
            _check(item, kind[0], f"{path}[{index}]", errors)
        return
    if isinstance(kind, dict):
        if not isinstance(value, dict):
            errors.append(f"{path}: expected an object, got {type(value).__name__}")
            return
        for key, item in value.items():
            _check(item, kind["*"], f"{path}.{key}", errors)
        return
    if kind == "any":
        return
    kind = ALIASES.get(kind, kind)
    if kind.startswith("string"):
        if not isinstance(value, str):
            errors.append(f"{path}: expected a string, got {type(value).__name__}")
        elif kind == "string:date-time" and not RFC3339.match(value):
            errors.append(f"{path}: expected an RFC 3339 time, got {value!r}")
        return
    if kind.startswith("integer"):
        if isinstance(value, bool) or not isinstance(value, int):
            errors.append(f"{path}: expected an integer, got {value!r}")
        return
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            errors.append(f"{path}: expected a number, got {value!r}")
        return
    if kind == "boolean":
        if not isinstance(value, bool):
            errors.append(f"{path}: expected a boolean, got {value!r}")
        return
    schema = _schema(kind)
    if schema is None:
        if not isinstance(value, dict):
            errors.append(f"{path}: expected an object ({kind}), got {type(value).__name__}")
        return
    _check_object(value, schema, kind, path, errors)


def _check_object(value, schema, name, path, errors):
    if not isinstance(value, dict):
        errors.append(f"{path}: expected an object ({name}), got {type(value).__name__}")
        return
    for key in schema["required"]:
        if key not in value:
            errors.append(f"{path}: missing required '{key}' ({name})")
        elif value[key] is None:
            errors.append(f"{path}: required '{key}' is null ({name})")
    for key, kind in schema["properties"].items():
        if key in value and value[key] is not None:
            _check(value[key], kind, f"{path}.{key}", errors)


def validate(value, name, path=None):
    """Errors of `value` against the shape `name`; empty when it conforms."""
    errors = []
    _check(value, name, path or name, errors)
    return errors


# Fields Stream's description leaves optional but that Checkmark's events always carry because the
# SDKs read them (docs/protocol.md, Events): the JavaScript SDK takes the channel's config of a
# notification.message_new as the config of a channel it never queried (read_events and
# delivery_events decide its receipts). The reaction events' message, reaction and user are optional
# in Stream's description, but stream-chat-js applies a reaction event only when it has its message and
# reaction (`channel.state.addReaction(event.reaction, event.message)`). A connection's first
# health.check carries `me` too, and only the first (`validate_first_health_check`; test_sdk_keys.py).
_REACTION_CONTRACT = [((), "message", "MessageResponse"), ((), "reaction", "ReactionResponse"),
                      ((), "user", "UserResponseCommonFields"), ((), "cid", "string")]
EVENT_CONTRACT = {
    "notification.message_new": [(("channel",), "config", "ChannelResponse")],
    "typing.start": [((), "user", "UserResponseCommonFields"), ((), "cid", "string")],
    "typing.stop": [((), "user", "UserResponseCommonFields"), ((), "cid", "string")],
    "reaction.new": _REACTION_CONTRACT,
    "reaction.updated": _REACTION_CONTRACT,
    "reaction.deleted": _REACTION_CONTRACT,
}

# Stream's own namespaces (as Checkmark reserves them): a frame of any other type is a custom event.
RESERVED_NAMESPACES = {"app", "channel", "connection", "draft", "health", "member", "message", "notification", "poll",
                       "reaction", "reminder", "thread", "typing", "user", "user_group"}


def validate_first_health_check(event):
    """Errors of a connection's first frame: a health.check with `me` (the JavaScript SDK copies it
    into its user: me.mutes, me.channel_mutes; Android takes it for the connection)."""
    if not isinstance(event, dict) or event.get("type") != "health.check":
        return [f"first frame: expected a health.check, got {event!r:.200}"]
    errors = validate_event(event)
    if event.get("me") is None:
        errors.append("health.check: missing required 'me' (HealthCheckEvent, the connection's first)")
    return errors


def validate_event(event):
    """Errors of a WebSocket frame: Stream's events against their shapes, with the fields of
    EVENT_CONTRACT required too; others (replies, errors, Checkmark's channel.resumed) are not
    Stream's and pass."""
    name = EVENTS.get(event.get("type")) if isinstance(event, dict) else None
    if name is None and isinstance(event, dict) and isinstance(event.get("type"), str) and "cid" in event \
            and event["type"].split(".")[0] not in RESERVED_NAMESPACES:
        name = "CustomEvent"
    if name is None:
        return []
    errors = validate(event, name, event["type"])
    for parents, key, shape in EVENT_CONTRACT.get(event["type"], []):
        owner, path = event, event["type"]
        for parent in parents:
            owner, path = owner.get(parent) if isinstance(owner, dict) else None, f"{path}.{parent}"
        if isinstance(owner, dict) and owner.get(key) is None:
            errors.append(f"{path}: missing required '{key}' ({shape}, as Checkmark sends it)")
    return errors


def shape_of_response(method, path):
    """The shape of a REST answer, or None for routes the description does not cover."""
    for route_method, pattern, name in ROUTES:
        if route_method == method and pattern.match(path):
            return name
    return None


def validate_response(method, path, status, body):
    """Errors of a REST answer (success answers only; errors have their own checks)."""
    name = shape_of_response(method, path)
    if name is None or status >= 400:
        return []
    return validate(body, name, f"{method} {path}")
