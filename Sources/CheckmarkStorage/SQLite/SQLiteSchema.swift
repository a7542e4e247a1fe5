import CheckmarkCore
import GRDB

/// The SQLite schema as versioned migrations, applied in order at start-up. A migration, once
/// released, never changes: changes come as new migrations.
enum SQLiteSchema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-state-and-journal") { db in
            try db.execute(sql: """
                CREATE TABLE users (
                    id TEXT PRIMARY KEY NOT NULL,
                    name TEXT,
                    image TEXT,
                    custom TEXT NOT NULL,
                    read_receipts INTEGER NOT NULL,
                    delivery_receipts INTEGER NOT NULL,
                    created_at INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL
                );
                CREATE TABLE channel_types (
                    name TEXT PRIMARY KEY NOT NULL,
                    read_events INTEGER NOT NULL,
                    delivery_events INTEGER NOT NULL,
                    created_at INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL
                );
                CREATE TABLE channels (
                    cid TEXT PRIMARY KEY NOT NULL,
                    created_by TEXT,
                    created_at INTEGER NOT NULL
                );
                CREATE TABLE members (
                    cid TEXT NOT NULL,
                    user_id TEXT NOT NULL,
                    position INTEGER NOT NULL,
                    created_at INTEGER NOT NULL,
                    read_position INTEGER NOT NULL,
                    last_read INTEGER NOT NULL,
                    last_read_message_id TEXT,
                    delivered_position INTEGER NOT NULL,
                    last_delivered_at INTEGER,
                    last_delivered_message_id TEXT,
                    marked_unread_message_id TEXT,
                    read_passes BLOB NOT NULL,
                    delivered_passes BLOB NOT NULL,
                    PRIMARY KEY (cid, user_id)
                ) WITHOUT ROWID;
                CREATE TABLE messages (
                    cid TEXT NOT NULL,
                    position INTEGER NOT NULL,
                    id TEXT NOT NULL UNIQUE,
                    user_id TEXT NOT NULL,
                    text TEXT NOT NULL,
                    type TEXT NOT NULL,
                    created_at INTEGER NOT NULL,
                    parent_id TEXT,
                    show_in_channel INTEGER NOT NULL,
                    silent INTEGER NOT NULL,
                    PRIMARY KEY (cid, position)
                ) WITHOUT ROWID;
                CREATE TABLE counters (
                    name TEXT PRIMARY KEY NOT NULL,
                    value INTEGER NOT NULL
                );
                CREATE TABLE journal (
                    seq INTEGER PRIMARY KEY NOT NULL,
                    at INTEGER NOT NULL,
                    command TEXT NOT NULL
                );
                CREATE INDEX journal_at ON journal(at);
                CREATE TABLE journal_events (
                    seq INTEGER PRIMARY KEY NOT NULL,
                    command_seq INTEGER NOT NULL,
                    cid TEXT,
                    channel_seq INTEGER,
                    type TEXT NOT NULL,
                    payload TEXT NOT NULL
                );
                CREATE INDEX journal_events_command ON journal_events(command_seq);
                CREATE UNIQUE INDEX journal_events_channel ON journal_events(cid, channel_seq);
                CREATE TABLE channel_sequences (
                    cid TEXT PRIMARY KEY NOT NULL,
                    last_seq INTEGER NOT NULL
                );
                """)
        }
        migrator.registerMigration("v2-event-audience") { db in
            // Who each event is for (EventAudience.storedValue); NULL for events written before.
            try db.execute(sql: "ALTER TABLE journal_events ADD COLUMN audience TEXT")
        }
        migrator.registerMigration("v3-thread-reads") { db in
            // Each thread participant's read pointer; unread replies are derived on load.
            try db.execute(sql: """
                CREATE TABLE thread_reads (
                    cid TEXT NOT NULL,
                    parent_id TEXT NOT NULL,
                    user_id TEXT NOT NULL,
                    read_count INTEGER NOT NULL,
                    last_read INTEGER NOT NULL,
                    last_read_message_id TEXT,
                    PRIMARY KEY (cid, parent_id, user_id)
                ) WITHOUT ROWID
                """)
        }
        migrator.registerMigration("v4-message-ids-per-channel") { db in
            // Message ids are unique within their channel, not across channels (a global check told a
            // user that an id was taken in a channel it cannot see). SQLite cannot drop a constraint:
            // the table is rebuilt.
            try db.execute(sql: """
                CREATE TABLE messages_v4 (
                    cid TEXT NOT NULL,
                    position INTEGER NOT NULL,
                    id TEXT NOT NULL,
                    user_id TEXT NOT NULL,
                    text TEXT NOT NULL,
                    type TEXT NOT NULL,
                    created_at INTEGER NOT NULL,
                    parent_id TEXT,
                    show_in_channel INTEGER NOT NULL,
                    silent INTEGER NOT NULL,
                    PRIMARY KEY (cid, position),
                    UNIQUE (cid, id)
                ) WITHOUT ROWID;
                INSERT INTO messages_v4 (cid, position, id, user_id, text, type, created_at, parent_id, show_in_channel, silent)
                    SELECT cid, position, id, user_id, text, type, created_at, parent_id, show_in_channel, silent FROM messages;
                DROP TABLE messages;
                ALTER TABLE messages_v4 RENAME TO messages;
                """)
        }
        migrator.registerMigration("v5-pointer-passes-as-rows") { db in
            // A member's pointer passes become rows appended as they are made: kept in the member's
            // row, every confirmation rewrote the member's whole history. `kind` is 0 for the read
            // pointer and 1 for the delivered pointer; `seq` is the order they were written in. The
            // members' two pass columns stay, written empty from now on.
            try db.execute(sql: """
                CREATE TABLE pointer_passes (
                    seq INTEGER PRIMARY KEY,
                    cid TEXT NOT NULL,
                    user_id TEXT NOT NULL,
                    kind INTEGER NOT NULL,
                    position INTEGER NOT NULL,
                    at INTEGER NOT NULL
                );
                CREATE INDEX pointer_passes_channel ON pointer_passes(cid);
                """)
            let insert = try db.makeStatement(sql: "INSERT INTO pointer_passes (cid, user_id, kind, position, at) VALUES (?, ?, ?, ?, ?)")
            let members = try Row.fetchCursor(db, sql: """
                SELECT cid, user_id, read_passes, delivered_passes FROM members
                WHERE length(read_passes) > 0 OR length(delivered_passes) > 0 ORDER BY cid, position
                """)
            while let member = try members.next() {
                let cid: String = member[0], userID: String = member[1]
                for (kind, column) in [(Int64(0), 2), (Int64(1), 3)] {
                    for pass in try StoredPasses.decode(member[column]) {
                        try insert.execute(arguments: [cid, userID, kind, Int64(pass.position), pass.at.rawValue])
                    }
                }
            }
            try db.execute(sql: "UPDATE members SET read_passes = X'', delivered_passes = X'' WHERE length(read_passes) > 0 OR length(delivered_passes) > 0")
        }
        migrator.registerMigration("v6-journaled-messages") { db in
            // A message is stored once, in its `messages` row: a `message.new` event is journaled
            // without its message object (which message, and where it goes in the JSON), and a
            // `send_message` without its text (which message). What was written before stays whole
            // (these columns NULL).
            try db.execute(sql: """
                ALTER TABLE journal_events ADD COLUMN message_position INTEGER;
                ALTER TABLE journal_events ADD COLUMN message_at INTEGER;
                ALTER TABLE journal_events ADD COLUMN message_bytes INTEGER;
                ALTER TABLE journal ADD COLUMN message_position INTEGER;
                """)
        }
        migrator.registerMigration("v7-stored-unread-counts") { db in
            // Unread counts are stored, so that a start reads no message to know them: each message
            // with the count of countable messages before it (channel messages, not silent; rule 4),
            // each member with its unread count and the channel's countable total it is as of. The
            // existing rows are counted once here.
            try db.execute(sql: """
                ALTER TABLE messages ADD COLUMN countable_before INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE members ADD COLUMN unread_messages INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE members ADD COLUMN countable_seen INTEGER NOT NULL DEFAULT 0;
                UPDATE messages SET countable_before = counted.before
                FROM (SELECT cid, position, COALESCE(SUM(CASE WHEN (parent_id IS NULL OR show_in_channel) AND NOT silent THEN 1 ELSE 0 END)
                          OVER (PARTITION BY cid ORDER BY position ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
                      FROM messages) AS counted
                WHERE messages.cid = counted.cid AND messages.position = counted.position AND counted.before > 0;
                UPDATE members SET
                    unread_messages = (SELECT COUNT(*) FROM messages
                        WHERE messages.cid = members.cid AND messages.position >= members.read_position
                          AND (messages.parent_id IS NULL OR messages.show_in_channel) AND NOT messages.silent
                          AND messages.user_id <> members.user_id),
                    countable_seen = COALESCE((SELECT countable_before + ((parent_id IS NULL OR show_in_channel) AND NOT silent) FROM messages
                        WHERE messages.cid = members.cid ORDER BY position DESC LIMIT 1), 0);
                """)
        }
        migrator.registerMigration("v8-stored-thread-counts") { db in
            // Threads' unread replies are stored as channels' unread counts are (v7): each thread with
            // its reply counts, each participant with its unread replies and the thread's countable
            // replies it is as of. The existing rows are counted once here.
            try db.execute(sql: """
                CREATE TABLE threads (
                    cid TEXT NOT NULL,
                    parent_id TEXT NOT NULL,
                    reply_count INTEGER NOT NULL,
                    countable_replies INTEGER NOT NULL,
                    PRIMARY KEY (cid, parent_id)
                ) WITHOUT ROWID;
                ALTER TABLE thread_reads ADD COLUMN unread_replies INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE thread_reads ADD COLUMN replies_seen INTEGER NOT NULL DEFAULT 0;
                INSERT INTO threads (cid, parent_id, reply_count, countable_replies)
                    SELECT cid, parent_id, COUNT(*), SUM(CASE WHEN silent THEN 0 ELSE 1 END) FROM messages
                    WHERE parent_id IS NOT NULL GROUP BY cid, parent_id;
                UPDATE thread_reads SET unread_replies = counted.unread
                FROM (SELECT r.cid, r.parent_id, r.user_id, COUNT(*) AS unread
                      FROM thread_reads AS r
                      JOIN (SELECT cid, parent_id, user_id, silent,
                                   ROW_NUMBER() OVER (PARTITION BY cid, parent_id ORDER BY position) - 1 AS ordinal
                            FROM messages WHERE parent_id IS NOT NULL) AS reply
                        ON reply.cid = r.cid AND reply.parent_id = r.parent_id AND reply.ordinal >= r.read_count
                           AND NOT reply.silent AND reply.user_id <> r.user_id
                      GROUP BY r.cid, r.parent_id, r.user_id) AS counted
                WHERE thread_reads.cid = counted.cid AND thread_reads.parent_id = counted.parent_id AND thread_reads.user_id = counted.user_id;
                UPDATE thread_reads SET replies_seen = threads.countable_replies
                FROM threads WHERE threads.cid = thread_reads.cid AND threads.parent_id = thread_reads.parent_id;
                """)
        }
        migrator.registerMigration("v9-messages-by-id") { db in
            // A message found by its id alone (a thread's replies asked for without the channel) among
            // channels not in memory: one index look-up instead of one per channel.
            try db.execute(sql: "CREATE INDEX messages_by_id ON messages (id);")
        }
        migrator.registerMigration("v10-journal-streams") { db in
            // Each entry is numbered in its stream too (a shard's, or the cluster's: JournalStream);
            // the entries already written are the cluster stream's, numbered as in the journal.
            try db.execute(sql: """
                ALTER TABLE journal ADD COLUMN stream INTEGER NOT NULL DEFAULT \(JournalStream.cluster.rawValue);
                ALTER TABLE journal ADD COLUMN stream_seq INTEGER NOT NULL DEFAULT 0;
                UPDATE journal SET stream_seq = seq;
                CREATE UNIQUE INDEX journal_stream ON journal (stream, stream_seq);
                """)
        }
        migrator.registerMigration("v11-journaled-channels") { db in
            // A channel object is stored once for the events that carry the same bytes (JournaledChannel):
            // such an event is journaled without it (which object, and where it goes in the JSON).
            // What was written before stays whole (these columns NULL).
            try db.execute(sql: """
                CREATE TABLE journal_channels (
                    cid TEXT NOT NULL,
                    since INTEGER NOT NULL,
                    object TEXT NOT NULL,
                    PRIMARY KEY (cid, since)
                ) WITHOUT ROWID;
                ALTER TABLE journal_events ADD COLUMN channel_since INTEGER;
                ALTER TABLE journal_events ADD COLUMN channel_at INTEGER;
                ALTER TABLE journal_events ADD COLUMN channel_bytes INTEGER;
                """)
        }
        migrator.registerMigration("v12-typing-and-custom-events") { db in
            // Typing's privacy setting and the channel types' typing and custom event flags, on for
            // what was stored before (Stream's defaults).
            try db.execute(sql: """
                ALTER TABLE users ADD COLUMN typing_indicators INTEGER NOT NULL DEFAULT 1;
                ALTER TABLE channel_types ADD COLUMN typing_events INTEGER NOT NULL DEFAULT 1;
                ALTER TABLE channel_types ADD COLUMN custom_events INTEGER NOT NULL DEFAULT 1;
                """)
        }
        migrator.registerMigration("v13-message-edits") { db in
            // Edits and deletions: a message's row keeps the text it was sent with (what the journal
            // refers to), this one its revision and current text.
            try db.execute(sql: """
                CREATE TABLE message_edits (
                    cid TEXT NOT NULL,
                    position INTEGER NOT NULL,
                    text TEXT,
                    updated_at INTEGER NOT NULL,
                    text_updated_at INTEGER,
                    deleted_at INTEGER,
                    hard_deleted INTEGER NOT NULL,
                    PRIMARY KEY (cid, position)
                ) WITHOUT ROWID;
                """)
        }
        migrator.registerMigration("v14-reactions") { db in
            // Each user's reaction of each type to each message; a message's are rewritten together.
            try db.execute(sql: """
                CREATE TABLE reactions (
                    cid TEXT NOT NULL,
                    position INTEGER NOT NULL,
                    user_id TEXT NOT NULL,
                    type TEXT NOT NULL,
                    score INTEGER NOT NULL,
                    created_at INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL,
                    PRIMARY KEY (cid, position, user_id, type)
                ) WITHOUT ROWID;
                """)
        }
        return migrator
    }
}
