/// The demo page's HTML, CSS and JavaScript (see ``DemoPage``), kept in the binary as one raw string
/// so that `checkmark` stays a single file. ``configMarker`` is replaced by the page's settings.
enum DemoPageHTML {
    static let configMarker = "/*CONFIG*/null"

    static let template = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Checkmark: receipts demo</title>
<style>
  :root { --gray: #8a939c; --blue: #2f8fe8; --mine: #dcf8c6; --theirs: #ffffff; --bg: #ece5dd; --ink: #1f2328; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 15px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); }
  header { display: flex; align-items: center; gap: 12px; padding: 10px 16px; background: #075e54; color: #fff; }
  header h1 { font-size: 17px; margin: 0; }
  header .who { font-weight: 600; }
  #conn { margin-left: auto; font-size: 13px; opacity: .85; }
  #conn[data-state="ready"]::before { content: "● "; color: #7ee081; }
  #conn[data-state="closed"]::before, #conn[data-state="error"]::before { content: "● "; color: #ff8a80; }
  main { max-width: 760px; margin: 0 auto; padding: 12px; }
  .panel { background: #fff; border-radius: 8px; padding: 12px 16px; margin-bottom: 12px; box-shadow: 0 1px 2px rgba(0,0,0,.12); }
  .panel h2 { font-size: 15px; margin: 0 0 8px; }
  .hint { color: #57606a; font-size: 13px; }
  #settings { display: flex; flex-wrap: wrap; gap: 8px 20px; align-items: center; }
  #settings label { cursor: pointer; }
  #privacy-state { font-size: 12px; color: var(--gray); }
  #unread { margin-left: auto; font-size: 13px; }
  #unread[data-count="0"] { visibility: hidden; }
  #others-privacy { margin: 0; font-size: 13px; color: #8a5a00; }
  #others-privacy:empty { display: none; }
  #typing { min-height: 18px; font-size: 13px; color: var(--gray); font-style: italic; }
  #unread b { background: #25d366; color: #fff; border-radius: 10px; padding: 1px 7px; }
  #messages { list-style: none; margin: 0; padding: 8px 4px; height: 52vh; min-height: 240px; overflow-y: auto; }
  .message { display: flex; margin: 4px 0; }
  .message.mine { justify-content: flex-end; }
  .bubble { max-width: 75%; padding: 6px 10px 4px; border-radius: 8px; background: var(--theirs); box-shadow: 0 1px 1px rgba(0,0,0,.1); }
  .mine .bubble { background: var(--mine); }
  .author { font-size: 12px; font-weight: 600; color: #a0522d; }
  .mine .author { display: none; }
  .text { white-space: pre-wrap; word-wrap: break-word; }
  .deleted .text { color: var(--gray); font-style: italic; }
  .deleted .edit-message, .deleted .delete-message, .deleted .edited { display: none; }
  .edited { font-style: italic; }
  .reactions { font-size: 12px; }
  .react-message[aria-pressed="true"] { font-weight: 700; }
  .edit-form { display: flex; gap: 4px; }
  .edit-form input { flex: 1; font: inherit; }
  .meta { display: flex; justify-content: flex-end; align-items: center; gap: 6px; font-size: 11px; color: var(--gray); }
  .meta button { border: 0; background: none; color: #3b6ea5; font-size: 11px; padding: 0; cursor: pointer; }
  .meta button:hover { text-decoration: underline; }
  /* The checks: one gray (sent), two gray (delivered), two blue (read); a clock while sending. */
  .checks { display: inline-flex; font-weight: 700; font-size: 15px; line-height: 1; color: var(--gray); }
  .checks .second { display: none; margin-left: -0.45em; }
  .checks[data-status="delivered"] .second, .checks[data-status="read"] .second { display: inline; }
  .checks[data-status="read"] { color: var(--blue); }
  .checks[data-status="sending"] .first { display: none; }
  .checks[data-status="sending"]::before { content: "\23F2"; letter-spacing: 0; font-weight: 400; }
  .checks[data-status="failed"] { color: #d32f2f; }
  .checks[data-status="failed"] .first { display: none; }
  .checks[data-status="failed"]::before { content: "!"; }
  .divider { text-align: center; margin: 8px 0; }
  .divider span { background: #e1f3fb; color: #35617a; font-size: 12px; padding: 2px 10px; border-radius: 10px; }
  #composer { display: flex; gap: 8px; }
  #composer input { flex: 1; padding: 9px 12px; border: 1px solid #ccd; border-radius: 18px; font: inherit; }
  #composer button, #paste button { padding: 8px 16px; border: 0; border-radius: 18px; background: #128c7e; color: #fff; font: inherit; cursor: pointer; }
  #receipts ul { margin: 4px 0 8px; padding-left: 18px; }
  #receipts time { font-variant-numeric: tabular-nums; }
  .legend > span { margin-right: 14px; white-space: nowrap; }
  .error { color: #b3261e; }
  textarea { width: 100%; font: 12px monospace; }
</style>
</head>
<body>
<header><h1>Checkmark</h1><span class="who" id="who"></span><span id="conn" data-state="idle">not connected</span></header>
<main>
  <section class="panel" id="picker" hidden>
    <h2>Who are you?</h2>
    <p>Open this page as two or three people, each in their own window, and talk:</p>
    <p><a href="?user=ivy">Ivy</a> · <a href="?user=leo">Leo</a> · <a href="?user=mia">Mia</a></p>
  </section>

  <section class="panel" id="paste" hidden>
    <h2>Paste a user token</h2>
    <p class="hint">This server does not use the development credentials, so the page cannot sign tokens
      itself and is never given the api_secret. Paste a user token (<code>checkmark token --user-id leo</code>
      on a machine that has the secret). Your backend must have created the channel below, of a channel
      type with <code>delivery_events</code> on, with you as a member.</p>
    <p><textarea id="token" rows="3" placeholder="eyJhbGciOiJIUzI1NiIs..."></textarea></p>
    <p><label>Channel <input id="cid-input" size="30"></label> <button id="paste-go" type="button">Connect</button></p>
  </section>

  <section class="panel" id="chat" hidden>
    <div id="settings">
      <label><input type="checkbox" id="read-receipts"> send read receipts</label>
      <label><input type="checkbox" id="delivery-receipts"> send delivery receipts</label>
      <label><input type="checkbox" id="typing-indicators"> show that I am typing</label>
      <span id="privacy-state" data-state="idle"></span>
      <span id="unread" data-count="0"><b></b> unread</span>
    </div>
    <ol id="messages"></ol>
    <p id="others-privacy" data-off=""></p>
    <p id="typing" data-users=""></p>
    <form id="composer"><input id="text" autocomplete="off" placeholder="Type a message"><button type="submit">Send</button></form>
    <p class="hint legend"><span><span class="checks" data-status="sent"><span class="first">✓</span><span class="second">✓</span></span> sent</span>
      <span><span class="checks" data-status="delivered"><span class="first">✓</span><span class="second">✓</span></span> delivered</span>
      <span><span class="checks" data-status="read"><span class="first">✓</span><span class="second">✓</span></span> read</span></p>
  </section>

  <section class="panel" id="receipts" hidden></section>
  <p class="error" id="error"></p>
</main>

<script>
"use strict";
// Settings from the server: api_key, the development secret (null with any other credentials) and
// the channel to talk in.
const CONFIG = /*CONFIG*/null;
// The page's own people (not the README's first session's Ana and Ben, whose settings it changes).
const PEOPLE = { ivy: "Ivy", leo: "Leo", mia: "Mia" };

const $ = (id) => document.getElementById(id);

// ---------------------------------------------------------------------------------------------
// Tokens: HS256 JWTs, signed here with WebCrypto (only with the development secret).

function base64url(bytes) {
  let text = "";
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

async function signToken(payload) {
  const encoder = new TextEncoder();
  const head = base64url(encoder.encode(JSON.stringify({ alg: "HS256", typ: "JWT" })));
  const body = base64url(encoder.encode(JSON.stringify(payload)));
  const key = await crypto.subtle.importKey("raw", encoder.encode(CONFIG.secret),
    { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const signature = await crypto.subtle.sign("HMAC", key, encoder.encode(head + "." + body));
  return head + "." + body + "." + base64url(new Uint8Array(signature));
}

// The user a pasted token is for (its payload is not secret; the server checks the signature).
function userOfToken(token) {
  const part = token.split(".")[1] || "";
  const json = atob(part.replace(/-/g, "+").replace(/_/g, "/"));
  return JSON.parse(json).user_id;
}

// ---------------------------------------------------------------------------------------------
// The REST API, as Stream's SDKs call it: ?api_key=, Authorization: <JWT>, stream-auth-type: jwt.

async function api(method, path, body, token) {
  const response = await fetch(path + (path.includes("?") ? "&" : "?") + "api_key=" + encodeURIComponent(CONFIG.apiKey), {
    method,
    headers: { "Authorization": token, "Stream-Auth-Type": "jwt", "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = new Error(json.message || (method + " " + path + ": " + response.status));
    error.status = response.status;
    throw error;
  }
  return json;
}

// ---------------------------------------------------------------------------------------------
// State of the one channel the page shows.

const state = {
  me: null,              // user id
  token: null,           // the user's token
  type: CONFIG.channelType, id: CONFIG.channelID,
  connectionID: null,
  messages: [],          // {id, text, user, created_at, acked, failed}, oldest first
  reads: {},             // user id -> read state {last_read, last_read_message_id, last_delivered_at, ...}
  myLastRead: "",        // own last_read (RFC 3339); messages of others after it are unread
  autoReadPaused: false, // after "mark unread", until a new message comes or the user marks read
  visible: new Set(),    // ids of messages on screen now
  typing: {},            // user id -> when their typing.start came (ms)
  others: {},            // user id -> their receipt switches, as their demo.privacy said
  typingSince: 0,        // when this page last sent typing.start (0: not typing)
  typingTimer: null,
};
const cid = () => state.type + ":" + state.id;
const channelPath = () => "/channels/" + encodeURIComponent(state.type) + "/" + encodeURIComponent(state.id);

// Server times are RFC 3339 with the same number of fraction digits, so they compare as text.
const atOrAfter = (a, b) => !!a && !!b && a >= b;

// What the sender sees for her own message. Delivered: another member's last_delivered_at or
// last_read is at or after the message; read: another member's last_read is (a read state without
// last_read_message_id is one the reader keeps private, or "nothing read yet").
function statusOf(message) {
  if (message.failed) return "failed";
  if (!message.acked) return "sending";
  let status = "sent";
  for (const [user, read] of Object.entries(state.reads)) {
    if (user === state.me) continue;
    if (read.last_read_message_id && atOrAfter(read.last_read, message.created_at)) return "read";
    if (atOrAfter(read.last_delivered_at, message.created_at) ||
        (read.last_read_message_id && atOrAfter(read.last_read, message.created_at))) status = "delivered";
  }
  return status;
}

// ---------------------------------------------------------------------------------------------
// Rendering. Every message is an <li data-id>; its checks carry data-status (sending, sent,
// delivered, read, failed) and data-history, every status it has shown, in order.

const observer = new IntersectionObserver((entries) => {
  for (const entry of entries) {
    const id = entry.target.dataset.id;
    if (entry.isIntersecting) state.visible.add(id); else state.visible.delete(id);
  }
  maybeMarkRead();
}, { threshold: 0.6 });

function timeOf(at) {
  if (!at) return "";
  const d = new Date(at);
  return d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

// Exact local time with milliseconds, e.g. 2026-11-24 10:15:03.482.
function exactTime(at) {
  const d = new Date(at);
  const pad = (n, w = 2) => String(n).padStart(w, "0");
  return d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " + pad(d.getHours()) + ":" +
    pad(d.getMinutes()) + ":" + pad(d.getSeconds()) + "." + pad(d.getMilliseconds(), 3);
}

function messageElement(message) {
  const li = document.createElement("li");
  li.className = "message " + (message.user === state.me ? "mine" : "theirs");
  li.dataset.id = message.id;
  li.dataset.user = message.user;
  const bubble = document.createElement("div");
  bubble.className = "bubble";
  const author = document.createElement("div");
  author.className = "author";
  author.textContent = PEOPLE[message.user] || message.user;
  const text = document.createElement("div");
  text.className = "text";
  text.textContent = message.text;
  const meta = document.createElement("div");
  meta.className = "meta";
  // A button of the message's own (`action` takes its id).
  const button = (className, label, action) => {
    const b = document.createElement("button");
    b.type = "button";
    b.className = className;
    b.textContent = label;
    b.addEventListener("click", () => action(message.id));
    return b;
  };
  meta.append(button("show-receipts", "read by / delivered to", showReceipts));
  if (message.user !== state.me) meta.append(button("mark-unread", "mark unread", markUnread));
  if (message.user === state.me) meta.append(button("edit-message", "edit", startEdit), button("delete-message", "delete", deleteMessage));
  const react = button("react-message", "like", toggleLike);
  const reactions = document.createElement("span");
  reactions.className = "reactions";
  reactions.dataset.counts = "";
  meta.append(react, reactions);
  const edited = document.createElement("span");
  edited.className = "edited";
  edited.textContent = "edited";
  edited.hidden = true;
  const time = document.createElement("time");
  meta.append(edited, time);
  if (message.user === state.me) {
    const checks = document.createElement("span");
    checks.className = "checks";
    checks.dataset.history = "";
    checks.innerHTML = '<span class="first">✓</span><span class="second">✓</span>';
    meta.append(checks);
  }
  bubble.append(author, text, meta);
  li.append(bubble);
  observer.observe(li);
  return li;
}

function render() {
  const list = $("messages");
  const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
  const byID = new Map([...list.querySelectorAll("li.message")].map((li) => [li.dataset.id, li]));
  list.querySelectorAll(".divider").forEach((d) => d.remove());
  // Put the elements in the messages' order, moving only those out of place.
  state.messages.forEach((message, index) => {
    let li = byID.get(message.id);
    if (!li) li = messageElement(message);
    if (list.children[index] !== li) list.insertBefore(li, list.children[index] || null);
  });
  // The first unread message of someone else gets the "unread messages" divider before it.
  const firstUnread = state.messages.find((m) => m.user !== state.me && m.created_at && !atOrAfter(state.myLastRead, m.created_at));
  if (firstUnread && state.myLastRead) {
    const divider = document.createElement("li");
    divider.className = "divider";
    divider.innerHTML = "<span>unread messages</span>";
    list.insertBefore(divider, list.querySelector('li.message[data-id="' + CSS.escape(firstUnread.id) + '"]'));
  }
  for (const message of state.messages) {
    const li = list.querySelector('li.message[data-id="' + CSS.escape(message.id) + '"]');
    // Edits and deletes (message.updated, message.deleted): the text as it is now.
    li.classList.toggle("deleted", !!message.deleted);
    const text = li.querySelector(".text");
    const shown = message.deleted ? "This message was deleted." : message.text;
    if (text && text.textContent !== shown) text.textContent = shown;
    li.querySelector(".edited").hidden = !message.edited || !!message.deleted;
    // Reactions: each type's count, and whether this user's like is among them.
    const counts = Object.entries(message.reactionCounts || {}).filter(([, n]) => n > 0);
    const reactions = li.querySelector(".reactions");
    reactions.dataset.counts = counts.map(([type, n]) => type + ":" + n).join(" ");
    reactions.textContent = counts.map(([type, n]) => n + " " + type).join(", ");
    li.querySelector(".react-message").setAttribute("aria-pressed", String(!!(message.own && message.own.includes("like"))));
    const time = li.querySelector("time");
    if (message.created_at) { time.dateTime = message.created_at; time.textContent = timeOf(message.created_at); }
    const checks = li.querySelector(".checks");
    if (checks) {
      const status = statusOf(message);
      if (checks.dataset.status !== status) {
        checks.dataset.status = status;
        checks.dataset.history = (checks.dataset.history + " " + status).trim();
        checks.title = { sending: "sending", sent: "sent", delivered: "delivered", read: "read", failed: "not sent" }[status];
      }
    }
  }
  const unread = unreadCount();
  $("unread").dataset.count = String(unread);
  $("unread").querySelector("b").textContent = String(unread);
  if (atBottom) list.scrollTop = list.scrollHeight;
}

function unreadCount() {
  return state.messages.filter((m) => m.user !== state.me && m.created_at && !atOrAfter(state.myLastRead, m.created_at)).length;
}

function showError(error) {
  $("error").textContent = String(error && error.message || error);
}

// ---------------------------------------------------------------------------------------------
// Confirmations, as an SDK sends them: delivery as soon as a message arrives; read when the page is
// visible and the message is on screen.

// Delivery confirmations go out one after the other, each for the newest message of someone else;
// a read waits for them, so that the sender sees "delivered" before "read", as with a phone that
// receives a message before its owner looks at it.
let deliveries = Promise.resolve();
function confirmDelivery() {
  deliveries = deliveries.then(async () => {
    const newest = [...state.messages].reverse().find((m) => m.user !== state.me && m.created_at);
    if (!newest || newest.id === state.deliveredID) return;
    try {
      await api("POST", "/channels/delivered", { latest_delivered_messages: [{ cid: cid(), id: newest.id }] }, state.token);
      state.deliveredID = newest.id;
    } catch (error) { showError(error); }
  });
  return deliveries;
}

let reading = false;
async function maybeMarkRead() {
  if (reading || state.autoReadPaused || document.visibilityState !== "visible") return;
  // The newest message of someone else that is on screen and not read yet.
  const target = [...state.messages].reverse().find((m) =>
    m.user !== state.me && m.created_at && state.visible.has(m.id) && !atOrAfter(state.myLastRead, m.created_at));
  if (!target) return;
  reading = true;
  await deliveries;
  let done = false;
  try {
    await api("POST", channelPath() + "/read", { message_id: target.id }, state.token);
    // notification.mark_read moves myLastRead; until it comes, do not ask again for the same.
    if (!atOrAfter(state.myLastRead, target.created_at)) state.myLastRead = target.created_at;
    done = true;
  } catch (error) { showError(error); }
  reading = false;
  render();
  if (done) maybeMarkRead();  // a message that came meanwhile
}
document.addEventListener("visibilitychange", maybeMarkRead);
window.addEventListener("focus", maybeMarkRead);

async function markUnread(messageID) {
  state.autoReadPaused = true;  // otherwise the message, still on screen, would be read again at once
  try {
    await api("POST", channelPath() + "/unread", { message_id: messageID }, state.token);
  } catch (error) { showError(error); }
}

// Editing and deleting one's own message (Stream's updateMessage and deleteMessage): the page changes
// when the server's message.updated or message.deleted comes, as every other watcher's does.
function startEdit(messageID) {
  const message = state.messages.find((m) => m.id === messageID);
  const li = $("messages").querySelector('li.message[data-id="' + CSS.escape(messageID) + '"]');
  if (!message || !li || li.querySelector(".edit-form")) return;
  const form = document.createElement("form");
  form.className = "edit-form";
  const input = document.createElement("input");
  input.className = "edit-text";
  input.value = message.text;
  const save = document.createElement("button");
  save.className = "save-edit";
  save.textContent = "save";
  form.append(input, save);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      await api("POST", "/messages/" + encodeURIComponent(messageID), { message: { id: messageID, text: input.value } }, state.token);
      form.remove();
    } catch (error) { showError(error); }
  });
  li.querySelector(".bubble").insertBefore(form, li.querySelector(".meta"));
  input.focus();
}

// Liking (Stream's sendReaction and deleteReaction): the count changes when the server's reaction
// event comes; this user's own reactions come with queries and follow its own reaction events.
async function toggleLike(messageID) {
  const message = state.messages.find((m) => m.id === messageID);
  if (!message) return;
  const path = "/messages/" + encodeURIComponent(messageID) + "/reaction";
  try {
    if (message.own && message.own.includes("like")) await api("DELETE", path + "/like", undefined, state.token);
    else await api("POST", path, { reaction: { type: "like" } }, state.token);
  } catch (error) { showError(error); }
}

async function deleteMessage(messageID) {
  try {
    await api("DELETE", "/messages/" + encodeURIComponent(messageID), undefined, state.token);
  } catch (error) { showError(error); }
}

async function showReceipts(messageID) {
  const panel = $("receipts");
  try {
    const receipts = await api("GET", channelPath() + "/messages/" + encodeURIComponent(messageID) + "/receipts", undefined, state.token);
    const message = state.messages.find((m) => m.id === messageID);
    panel.innerHTML = "";
    panel.dataset.messageId = messageID;
    const title = document.createElement("h2");
    title.textContent = "“" + (message ? message.text : messageID) + "”";
    panel.append(title);
    for (const [kind, label, list, field] of [["read", "Read by", receipts.read_by, "read_at"],
                                              ["delivered", "Delivered to, not read yet", receipts.delivered_to, "delivered_at"]]) {
      const heading = document.createElement("div");
      heading.textContent = label + (list.length ? "" : ": nobody yet");
      panel.append(heading);
      const ul = document.createElement("ul");
      for (const entry of list) {
        const li = document.createElement("li");
        li.dataset.kind = kind;
        li.dataset.user = entry.user.id;
        const name = document.createElement("b");
        name.textContent = entry.user.name || entry.user.id;
        const time = document.createElement("time");
        time.dateTime = entry[field];
        time.textContent = exactTime(entry[field]);
        li.append(name, " ", time);
        ul.append(li);
      }
      panel.append(ul);
    }
    const close = document.createElement("button");
    close.type = "button";
    close.textContent = "close";
    close.addEventListener("click", () => { panel.hidden = true; });
    panel.append(close);
    panel.hidden = false;
  } catch (error) { showError(error); }
}

// ---------------------------------------------------------------------------------------------
// Privacy: the user's own switches, applied with a partial update of the user (PATCH /users).

function showPrivacy(settings) {
  const read = settings && settings.read_receipts;
  const delivery = settings && settings.delivery_receipts;
  const typing = settings && settings.typing_indicators;
  $("read-receipts").checked = !read || read.enabled !== false;
  $("delivery-receipts").checked = !delivery || delivery.enabled !== false;
  $("typing-indicators").checked = !typing || typing.enabled !== false;
}

async function savePrivacy() {
  const privacy = {
    read_receipts: { enabled: $("read-receipts").checked },
    delivery_receipts: { enabled: $("delivery-receipts").checked },
    typing_indicators: { enabled: $("typing-indicators").checked },
  };
  $("privacy-state").dataset.state = "saving";
  $("privacy-state").textContent = "saving…";
  try {
    const result = await api("PATCH", "/users", { users: [{ id: state.me, set: { privacy_settings: privacy } }] }, state.token);
    const user = result.users && result.users[state.me];
    if (user) showPrivacy(user.privacy_settings);
    $("privacy-state").dataset.state = "saved";
    $("privacy-state").textContent = "saved";
    announcePrivacy();
  } catch (error) {
    $("privacy-state").dataset.state = "error";
    $("privacy-state").textContent = "not saved";
    showError(error);
  }
}
$("read-receipts").addEventListener("change", savePrivacy);
$("delivery-receipts").addEventListener("change", savePrivacy);
$("typing-indicators").addEventListener("change", savePrivacy);

// ---------------------------------------------------------------------------------------------
// Typing, as Stream's SDKs do it: typing.start at the first keystroke and again every 2 s while
// keys come, typing.stop 2 s after the last one or when the message goes. The server keeps it from
// everyone while the switch above is off; a typing user not heard of for 7 s is dropped.

function sendTyping(type) {
  api("POST", channelPath() + "/event?connection_id=" + encodeURIComponent(state.connectionID), { event: { type } }, state.token)
    .catch(showError);
}

function stopTyping() {
  clearTimeout(state.typingTimer);
  if (!state.typingSince) return;
  state.typingSince = 0;
  sendTyping("typing.stop");
}

$("text").addEventListener("input", () => {
  const now = Date.now();
  if (!state.typingSince || now - state.typingSince > 2000) {
    state.typingSince = now;
    sendTyping("typing.start");
  }
  clearTimeout(state.typingTimer);
  state.typingTimer = setTimeout(stopTyping, 2000);
});

function showTyping() {
  const now = Date.now();
  for (const [user, at] of Object.entries(state.typing)) if (now - at > 7000) delete state.typing[user];
  const users = Object.keys(state.typing).sort();
  $("typing").dataset.users = users.join(" ");
  $("typing").textContent = users.length ? users.join(", ") + (users.length > 1 ? " are" : " is") + " typing…" : "";
}
setInterval(showTyping, 500);

// ---------------------------------------------------------------------------------------------
// Sending: the message shows at once with a clock; one gray check once the server stored it.

$("composer").addEventListener("submit", async (event) => {
  event.preventDefault();
  const text = $("text").value.trim();
  if (!text) return;
  $("text").value = "";
  stopTyping();
  // crypto.randomUUID exists only in secure contexts (https, or loopback).
  const unique = crypto.randomUUID ? crypto.randomUUID() : Date.now().toString(36) + Math.random().toString(36).slice(2);
  const message = { id: state.me + "-" + unique, text, user: state.me, created_at: "", acked: false };
  state.messages.push(message);
  state.autoReadPaused = false;
  render();
  $("messages").scrollTop = $("messages").scrollHeight;
  try {
    const result = await api("POST", channelPath() + "/message", { message: { id: message.id, text } }, state.token);
    message.created_at = result.message.created_at;
    message.acked = true;
  } catch (error) {
    message.failed = true;
    showError(error);
  }
  render();
});

// ---------------------------------------------------------------------------------------------
// Events from /connect.

function readOf(user) {
  return state.reads[user] || (state.reads[user] = {});
}

function upsertMessage(m) {
  const existing = state.messages.find((x) => x.id === m.id);
  if (existing) {
    existing.created_at = m.created_at;
    existing.acked = true;
    existing.text = m.text;
    existing.deleted = m.type === "deleted";
    existing.edited = !!m.message_text_updated_at;
    existing.reactionCounts = m.reaction_counts || {};
    return false;
  }
  state.messages.push({ id: m.id, text: m.text, user: m.user.id, created_at: m.created_at, acked: true,
                        deleted: m.type === "deleted", edited: !!m.message_text_updated_at,
                        reactionCounts: m.reaction_counts || {}, own: (m.own_reactions || []).map((r) => r.type) });
  state.messages.sort((a, b) => (a.created_at || "\uffff") < (b.created_at || "\uffff") ? -1 : 1);
  return true;
}

function handleEvent(event) {
  if (event.cid && event.cid !== cid()) return;
  switch (event.type) {
    case "message.new": {
      if (event.message.parent_id && !event.message.show_in_channel) return;
      upsertMessage(event.message);
      if (event.user.id !== state.me) {
        state.autoReadPaused = false;
        confirmDelivery();
      }
      break;
    }
    case "message.delivered": {
      const read = readOf(event.user.id);
      read.last_delivered_at = event.last_delivered_at;
      read.last_delivered_message_id = event.last_delivered_message_id;
      break;
    }
    case "message.read": {
      if (event.thread) return;
      const read = readOf(event.user.id);
      read.last_read = event.created_at;
      read.last_read_message_id = event.last_read_message_id;
      if (event.user.id === state.me) state.myLastRead = event.created_at;
      break;
    }
    case "reaction.new":
    case "reaction.updated":
    case "reaction.deleted": {
      if (event.message.parent_id && !event.message.show_in_channel) return;
      upsertMessage(event.message);
      if (event.user.id === state.me) {
        // Events carry nobody's own reactions: this user's follow its own events.
        const message = state.messages.find((m) => m.id === event.message.id);
        const own = new Set(event.type === "reaction.updated" ? [] : message.own || []);
        if (event.type === "reaction.deleted") own.delete(event.reaction.type); else own.add(event.reaction.type);
        message.own = [...own];
      }
      break;
    }
    case "demo.privacy": {
      if (event.user.id === state.me) return;
      const first = !(event.user.id in state.others);
      state.others[event.user.id] = { read: event.read_receipts, delivery: event.delivery_receipts };
      showOthersPrivacy();
      if (first) announcePrivacy();
      return;
    }
    case "message.updated":
    case "message.deleted":
      if (event.message.parent_id && !event.message.show_in_channel) return;
      upsertMessage(event.message);
      break;
    case "typing.start":
    case "typing.stop":
      if (event.parent_id || event.user.id === state.me) return;
      if (event.type === "typing.start") state.typing[event.user.id] = Date.now(); else delete state.typing[event.user.id];
      showTyping();
      return;
    case "notification.mark_read":
      if (event.thread_id) return;
      state.myLastRead = event.created_at;
      break;
    case "notification.mark_unread":
      state.myLastRead = event.last_read_at || "";
      state.autoReadPaused = true;
      break;
    default:
      return;
  }
  render();
  maybeMarkRead();
}

// ---------------------------------------------------------------------------------------------
// Start: connect, then (development credentials) create the channel type and channel and join it,
// then query the channel with watch, as a Stream SDK's channel.watch() does.

function connect(userDetails) {
  return new Promise((resolve, reject) => {
    const query = new URLSearchParams({
      json: JSON.stringify({ user_id: state.me, user_details: userDetails }),
      api_key: CONFIG.apiKey, authorization: state.token, "stream-auth-type": "jwt",
    });
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const socket = new WebSocket(scheme + "//" + location.host + "/connect?" + query);
    let opened = false;
    socket.onmessage = (frame) => {
      const event = JSON.parse(frame.data);
      if (event.type === "health.check" && !opened) {
        opened = true;
        state.connectionID = event.connection_id;
        showPrivacy(event.me.privacy_settings);
        resolve(socket);
      } else if (event.type === "error" && !opened) {
        reject(new Error(event.error.message));
      } else {
        handleEvent(event);
      }
    };
    socket.onclose = (close) => {
      $("conn").dataset.state = "closed";
      $("conn").textContent = "disconnected (" + close.code + "), reconnecting…";
      clearInterval(socket.keepalive);
      if (!opened) reject(new Error("connection closed: " + close.code));
      else setTimeout(start, 2000);
    };
    // Stream's clients send a health check every 25 s; the server answers with one.
    socket.keepalive = setInterval(() => socket.send(JSON.stringify([{ type: "health.check", client_id: state.connectionID }])), 25000);
  });
}

async function setUpChannel() {
  // Server-side steps, done here only because the development secret lets the page sign a server
  // token; each asks first, so that no request of a page load fails.
  const server = await signToken({ server: true });
  const flags = { read_events: true, delivery_events: true };
  const types = await api("GET", "/channeltypes", undefined, server);
  if (types.channel_types && types.channel_types[state.type]) {
    await api("PUT", "/channeltypes/" + encodeURIComponent(state.type), flags, server);
  } else {
    await api("POST", "/channeltypes", { name: state.type, ...flags }, server);
  }
  // Every person of the page is a member from the first page load on, so that a message sent before
  // someone ever opened the page reaches them, and goes gray, double gray and blue as they read it.
  const channel = await api("POST", channelPath() + "/query", { data: { members: [state.me], created_by_id: state.me } }, server);
  const members = new Set((channel.members || []).map((m) => m.user_id));
  const missing = [...new Set([...Object.keys(PEOPLE), state.me])].filter((id) => !members.has(id));
  const unseen = missing.filter((id) => id !== state.me);
  if (unseen.length) {
    // People nobody made yet (not members, so no page of theirs ever loaded here).
    const users = {};
    for (const id of unseen) users[id] = { id, name: PEOPLE[id] };
    await api("POST", "/users", { users }, server);
  }
  if (missing.length) await api("POST", channelPath(), { add_members: missing }, server);
}

// The others' receipt switches, which Stream's API does not show other users: each page tells the
// channel its own with a custom event (demo.privacy) when it starts and when they change, and once
// more to anyone it hears from for the first time, who may have opened their page later.
async function announcePrivacy() {
  try {
    await api("POST", channelPath() + "/event", { event: {
      type: "demo.privacy", read_receipts: $("read-receipts").checked, delivery_receipts: $("delivery-receipts").checked,
    } }, state.token);
  } catch (error) { showError(error); }
}

function showOthersPrivacy() {
  const off = [];
  const lines = [];
  for (const [user, settings] of Object.entries(state.others).sort()) {
    const name = PEOPLE[user] || user;
    const kinds = [];
    if (settings.read === false) { off.push(user + ":read"); kinds.push("read"); }
    if (settings.delivery === false) { off.push(user + ":delivery"); kinds.push("delivery"); }
    const effect = kinds.length === 2 ? "your messages stay one gray for " + name
      : kinds[0] === "read" ? "your messages stay two gray for " + name
      : "your messages show one gray until " + name + " reads them";
    if (kinds.length) lines.push(name + " has " + kinds.join(" and ") + " receipts off: " + effect + ".");
  }
  $("others-privacy").dataset.off = off.join(" ");
  $("others-privacy").textContent = lines.join(" ");
}

async function start() {
  $("conn").dataset.state = "connecting";
  $("conn").textContent = "connecting…";
  try {
    const details = PEOPLE[state.me] ? { id: state.me, name: PEOPLE[state.me] } : { id: state.me };
    await connect(details);
    if (CONFIG.secret) await setUpChannel();
    const result = await api("POST", channelPath() + "/query", {
      state: true, watch: true, presence: false, connection_id: state.connectionID, messages: { limit: 50 },
    }, state.token);
    state.reads = {};
    for (const read of result.read || []) state.reads[read.user.id] = read;
    const own = state.reads[state.me];
    state.myLastRead = own ? own.last_read : "";
    for (const m of result.messages || []) upsertMessage(m);
    $("conn").dataset.state = "ready";
    $("conn").textContent = "connected to " + cid();
    $("chat").hidden = false;
    render();
    $("messages").scrollTop = $("messages").scrollHeight;
    confirmDelivery();
    maybeMarkRead();
    announcePrivacy();
  } catch (error) {
    $("conn").dataset.state = "error";
    $("conn").textContent = "not connected";
    showError(error);
  }
}

async function main() {
  const params = new URLSearchParams(location.search);
  if (CONFIG.secret) {
    const user = params.get("user");
    if (!user || !/^[A-Za-z0-9_-]{1,64}$/.test(user)) { $("picker").hidden = false; return; }
    state.me = user;
    state.token = await signToken({ user_id: user });
  } else {
    // Other credentials: a pasted user token, and the channel the backend made.
    $("paste").hidden = false;
    $("cid-input").value = params.get("cid") || cid();
    await new Promise((resolve) => $("paste-go").addEventListener("click", resolve));
    const [type, ...rest] = $("cid-input").value.trim().split(":");
    state.type = type; state.id = rest.join(":");
    state.token = $("token").value.trim();
    try { state.me = userOfToken(state.token); } catch { showError("that is not a token"); return; }
    $("paste").hidden = true;
  }
  $("who").textContent = PEOPLE[state.me] || state.me;
  document.title = (PEOPLE[state.me] || state.me) + " · Checkmark demo";
  await start();
}

main();
</script>
</body>
</html>
"""#
}
