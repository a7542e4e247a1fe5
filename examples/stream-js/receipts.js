// Stream's JavaScript SDK (stream-chat) against Checkmark, configured as docs/clients.md says.
//
// Ana sends Ben a message and watches it as her app would: sent, delivered (Ben's SDK confirms
// delivery on its own), read (Ben opens the channel). Ben types, reacts, Ana edits, and Ben's
// unread counts go up and down. Every step is printed; the program exits 1 if an event it waits
// for does not arrive within TIMEOUT_MS, 0 when all of them did.
//
//   STREAM_CHAT_SDK       the SDK to require (default: "stream-chat", as installed from npm)
//   CHECKMARK_URL         Checkmark's base URL (default: http://127.0.0.1:8080)
//   CHECKMARK_API_KEY     default: the development key
//   CHECKMARK_API_SECRET  default: the development secret (loopback only)
'use strict';

const { StreamChat } = require(process.env.STREAM_CHAT_SDK || 'stream-chat');

const BASE_URL = process.env.CHECKMARK_URL || 'http://127.0.0.1:8080';
const API_KEY = process.env.CHECKMARK_API_KEY || 'checkmark-dev-key';
const API_SECRET = process.env.CHECKMARK_API_SECRET || 'checkmark-dev-secret-NOT-FOR-PRODUCTION';
const TIMEOUT_MS = 5000;

// A channel type with delivery events on: Stream's (and Checkmark's) "messaging" type has them off,
// and the SDK reports delivery only where the channel's config says delivery_events.
const CHANNEL_TYPE = 'receipts';
const CHANNEL_ID = `demo-${Date.now().toString(36)}`;

// One line per step: who sees it, the check marks Ana's app would show (if any), what happened.
function step(who, what, marks = '') {
  console.log(`${who.padEnd(5)} ${marks.padEnd(3)} ${what}`);
}

// The next event of `type` on `channel` for which `matches` holds; rejects after TIMEOUT_MS.
// Call it before the action that causes the event.
function nextEvent(channel, type, matches = () => true) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      subscription.unsubscribe();
      reject(new Error(`no ${type} on ${channel.cid} within ${TIMEOUT_MS} ms`));
    }, TIMEOUT_MS);
    const subscription = channel.on(type, (event) => {
      if (!matches(event)) return;
      clearTimeout(timer);
      subscription.unsubscribe();
      resolve(event);
    });
  });
}

// The sender's view of a message: who has it, who read it (the SDK's own receipts tracker).
function checks(channel, message) {
  const ref = { timestampMs: new Date(message.created_at).getTime(), msgId: message.id };
  const ids = (users) => users.map((user) => user.id).join(', ') || 'nobody';
  return `delivered to ${ids(channel.messageReceiptsTracker.deliveredForMessage(ref))}, ` +
    `read by ${ids(channel.messageReceiptsTracker.readersForMessage(ref))}`;
}

async function main() {
  // The app's backend: a server-side client (api_key and api_secret) creates users, the channel
  // type and the channel, and signs each user's token.
  const server = new StreamChat(API_KEY, API_SECRET, { baseURL: BASE_URL });
  await server.upsertUsers([{ id: 'ana', name: 'Ana' }, { id: 'ben', name: 'Ben' }]);
  const type = { read_events: true, delivery_events: true, typing_events: true };
  await server.createChannelType({ name: CHANNEL_TYPE, ...type }).catch((error) => {
    if (error.status !== 409) throw error; // it exists from an earlier run
    return server.updateChannelType(CHANNEL_TYPE, type);
  });
  await server.channel(CHANNEL_TYPE, CHANNEL_ID, { members: ['ana', 'ben'], created_by_id: 'ana' }).create();
  step('setup', `${server.getUserAgent()} against ${BASE_URL}`);
  step('setup', `users ana and ben, channel ${CHANNEL_TYPE}:${CHANNEL_ID} (read and delivery events on)`);

  // The apps: one client per user, with the token the backend made.
  // (allowServerSideConnect only silences the SDK's warning about connecting users from Node.)
  const clientOptions = { baseURL: BASE_URL, allowServerSideConnect: true };
  const ana = new StreamChat(API_KEY, clientOptions);
  const ben = new StreamChat(API_KEY, clientOptions);
  await ana.connectUser({ id: 'ana', name: 'Ana' }, server.createToken('ana'));
  await ben.connectUser({ id: 'ben', name: 'Ben' }, server.createToken('ben'));
  const anaChannel = ana.channel(CHANNEL_TYPE, CHANNEL_ID);
  const benChannel = ben.channel(CHANNEL_TYPE, CHANNEL_ID);
  await anaChannel.watch();
  await benChannel.watch();
  step('setup', `ana and ben connected (WebSocket ${ana.wsBaseURL}/connect) and watching`);

  // Sent: the answer to sendMessage is the stored message.
  const arrived = nextEvent(benChannel, 'message.new');
  const delivered = nextEvent(anaChannel, 'message.delivered', (event) => event.user.id === 'ben');
  const { message } = await anaChannel.sendMessage({ text: 'hello Ben' });
  step('ana', `sent "${message.text}" at ${message.created_at}`, '✓');
  const newMessage = await arrived;
  step('ben', `message.new "${newMessage.message.text}": unread ${newMessage.unread_count} here, ` +
    `${newMessage.total_unread_count} in total (countUnread() = ${benChannel.countUnread()})`);

  // Delivered: Ben's SDK confirms delivery by itself (POST /channels/delivered, about a second later).
  const delivery = await delivered;
  step('ana', `message.delivered: ben has it since ${delivery.last_delivered_at}; ` +
    checks(anaChannel, message), '✓✓');

  // Typing: keystroke() sends typing.start, stopTyping() typing.stop, to the other watchers.
  let typing = nextEvent(anaChannel, 'typing.start', (event) => event.user.id === 'ben');
  await benChannel.keystroke();
  await typing;
  step('ana', `typing.start: ${Object.keys(anaChannel.state.typing).join(', ')} is typing`);
  typing = nextEvent(anaChannel, 'typing.stop', (event) => event.user.id === 'ben');
  await benChannel.stopTyping();
  await typing;
  step('ana', `typing.stop: nobody is typing (state.typing: [${Object.keys(anaChannel.state.typing).join(', ')}])`);

  // Read: Ben opens the channel.
  const read = nextEvent(anaChannel, 'message.read', (event) => event.user.id === 'ben');
  await benChannel.markRead();
  const reading = await read;
  step('ana', `message.read: ben read it at ${reading.created_at} (blue); ` +
    checks(anaChannel, message), '✓✓');
  const unread = await ben.getUnreadCount();
  step('ben', `markRead(): unread ${benChannel.countUnread()} here, ` +
    `${unread.total_unread_count} in total (getUnreadCount())`);

  // A reaction: every watcher gets reaction.new with the message's counts.
  const reacted = nextEvent(anaChannel, 'reaction.new');
  await benChannel.sendReaction(message.id, { type: 'like' });
  const reaction = await reacted;
  step('ana', `reaction.new: ${reaction.user.id} ${reaction.reaction.type}s it, ` +
    `reaction_counts ${JSON.stringify(reaction.message.reaction_counts)}`);

  // An edit: only the author may; every watcher gets message.updated.
  const updated = nextEvent(benChannel, 'message.updated');
  await ana.partialUpdateMessage(message.id, { set: { text: 'hello Ben (edited)' } });
  const edit = await updated;
  step('ben', `message.updated: "${edit.message.text}", edited at ${edit.message.message_text_updated_at}`);

  // Unread counts follow new messages and reads.
  const second = nextEvent(benChannel, 'message.new');
  await anaChannel.sendMessage({ text: 'are you there?' });
  await second;
  const before = await ben.getUnreadCount();
  step('ben', `a second message: unread ${benChannel.countUnread()} here, ${before.total_unread_count} in total`);
  await benChannel.markRead();
  const after = await ben.getUnreadCount();
  step('ben', `markRead(): unread ${benChannel.countUnread()} here, ${after.total_unread_count} in total`);

  await ana.disconnectUser();
  await ben.disconnectUser();
  step('done', 'every expected event arrived');
}

main().then(
  () => process.exit(0),
  (error) => {
    const body = error.response && error.response.data ? ` ${JSON.stringify(error.response.data)}` : '';
    console.error(`FAILED: ${error.message}${body}`);
    process.exit(1);
  },
);
