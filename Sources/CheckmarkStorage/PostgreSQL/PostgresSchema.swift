/// The PostgreSQL schema as versioned migrations, applied in order at start-up by whichever node gets
/// there first (under an advisory lock, so nodes starting together do not race). A migration, once
/// released, never changes: changes come as new migrations. The tables mirror the SQLite schema.
enum PostgresSchema {
    /// The advisory lock (a SQL expression) held while migrating: one per schema.
    static let migrationLock = "hashtext('checkmark-migrate:' || current_schema())"
    /// The advisory lock held by a transaction appending to the journal: one per schema.
    static let appendLock = "hashtext('checkmark-append:' || current_schema())"

    /// The LISTEN/NOTIFY channel a commit announces its last journal sequence on, one per schema.
    static func notifyChannel(schema: String?) -> String {
        "checkmark_journal" + (schema.map { "_" + $0 } ?? "")
    }

    /// The channel nodes send each other requests on (connection commands for another node's
    /// connections), one per schema.
    static func peerChannel(schema: String?) -> String {
        "checkmark_peers" + (schema.map { "_" + $0 } ?? "")
    }

    static let migrations: [(id: String, sql: String)] = [
        ("v1-state-and-journal", """
            CREATE TABLE users (
                id TEXT PRIMARY KEY, name TEXT, image TEXT, custom TEXT NOT NULL,
                read_receipts BOOLEAN NOT NULL, delivery_receipts BOOLEAN NOT NULL,
                created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL);
            CREATE TABLE channel_types (
                name TEXT PRIMARY KEY, read_events BOOLEAN NOT NULL, delivery_events BOOLEAN NOT NULL,
                created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL);
            CREATE TABLE channels (cid TEXT PRIMARY KEY, created_by TEXT, created_at BIGINT NOT NULL);
            CREATE TABLE members (
                cid TEXT NOT NULL, user_id TEXT NOT NULL, position INTEGER NOT NULL, created_at BIGINT NOT NULL,
                read_position BIGINT NOT NULL, last_read BIGINT NOT NULL, last_read_message_id TEXT,
                delivered_position BIGINT NOT NULL, last_delivered_at BIGINT, last_delivered_message_id TEXT,
                marked_unread_message_id TEXT, read_passes BYTEA NOT NULL, delivered_passes BYTEA NOT NULL,
                PRIMARY KEY (cid, user_id));
            CREATE TABLE messages (
                cid TEXT NOT NULL, position BIGINT NOT NULL, id TEXT NOT NULL UNIQUE, user_id TEXT NOT NULL,
                text TEXT NOT NULL, type TEXT NOT NULL, created_at BIGINT NOT NULL, parent_id TEXT,
                show_in_channel BOOLEAN NOT NULL, silent BOOLEAN NOT NULL, PRIMARY KEY (cid, position));
            CREATE TABLE counters (name TEXT PRIMARY KEY, value BIGINT NOT NULL);
            CREATE TABLE journal (seq BIGINT PRIMARY KEY, at BIGINT NOT NULL, command TEXT NOT NULL);
            CREATE INDEX journal_at ON journal (at);
            CREATE TABLE journal_events (
                seq BIGINT PRIMARY KEY, command_seq BIGINT NOT NULL, cid TEXT, channel_seq BIGINT,
                type TEXT NOT NULL, payload TEXT NOT NULL, audience TEXT);
            CREATE INDEX journal_events_command ON journal_events (command_seq);
            CREATE UNIQUE INDEX journal_events_channel ON journal_events (cid, channel_seq);
            CREATE TABLE channel_sequences (cid TEXT PRIMARY KEY, last_seq BIGINT NOT NULL);
            """),
        ("v3-thread-reads", """
            CREATE TABLE thread_reads (
                cid TEXT NOT NULL, parent_id TEXT NOT NULL, user_id TEXT NOT NULL, read_count BIGINT NOT NULL,
                last_read BIGINT NOT NULL, last_read_message_id TEXT, PRIMARY KEY (cid, parent_id, user_id));
            """),
        // Message ids are unique within their channel, not across channels.
        ("v4-message-ids-per-channel", """
            ALTER TABLE messages DROP CONSTRAINT messages_id_key;
            ALTER TABLE messages ADD CONSTRAINT messages_cid_id_key UNIQUE (cid, id);
            """),
        // A message is stored once, in its `messages` row: a `message.new` event is journaled without
        // its message object and a `send_message` without its text. What was written before stays
        // whole (these columns NULL).
        ("v6-journaled-messages", """
            ALTER TABLE journal_events ADD COLUMN message_position BIGINT, ADD COLUMN message_at BIGINT,
                ADD COLUMN message_bytes BIGINT;
            ALTER TABLE journal ADD COLUMN message_position BIGINT;
            """),
    ]
}
