import CheckmarkCore

/// The PostgreSQL schema as versioned migrations, applied in order at start-up by whichever node gets
/// there first (under an advisory lock, so nodes starting together do not race). A migration, once
/// released, never changes: changes come as new migrations. The tables mirror the SQLite schema.
enum PostgresSchema {
    /// The advisory lock (a SQL expression) held while migrating: one per schema.
    static let migrationLock = "hashtext('checkmark-migrate:' || current_schema())"
    /// The advisory lock held by a transaction appending to the journal: one per schema. Taken shared
    /// by commits of owned shards only, which may run side by side; exclusively by any other commit.
    static let appendLock = "hashtext('checkmark-append:' || current_schema())"
    /// The advisory locks (this key and a slot) a writer's session holds for its numbering slot
    /// (``JournalNumbering``) as long as it lasts: one slot per session at a time, per schema.
    static let numberingSlotLock = "hashtext('checkmark-numbering:' || current_schema())"
    /// How many writers' sessions can hold a numbering slot at once (the numbering's stride).
    static let numberingSlots: Int64 = 1024

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
        // Unread counts are stored, so that a start reads no message to know them: each message with
        // the count of countable messages before it (channel messages, not silent; rule 4), each
        // member with its unread count and the channel's countable total it is as of. The existing
        // rows are counted once here.
        ("v7-stored-unread-counts", """
            ALTER TABLE messages ADD COLUMN countable_before BIGINT NOT NULL DEFAULT 0;
            ALTER TABLE members ADD COLUMN unread_messages BIGINT NOT NULL DEFAULT 0,
                ADD COLUMN countable_seen BIGINT NOT NULL DEFAULT 0;
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
                countable_seen = COALESCE((SELECT countable_before + CASE WHEN (parent_id IS NULL OR show_in_channel) AND NOT silent THEN 1 ELSE 0 END
                    FROM messages WHERE messages.cid = members.cid ORDER BY position DESC LIMIT 1), 0);
            """),
        // Threads' unread replies are stored as channels' unread counts are (v7): each thread with its
        // reply counts, each participant with its unread replies and the thread's countable replies it
        // is as of. The existing rows are counted once here.
        ("v8-stored-thread-counts", """
            CREATE TABLE threads (
                cid TEXT NOT NULL, parent_id TEXT NOT NULL, reply_count BIGINT NOT NULL, countable_replies BIGINT NOT NULL,
                PRIMARY KEY (cid, parent_id));
            ALTER TABLE thread_reads ADD COLUMN unread_replies BIGINT NOT NULL DEFAULT 0,
                ADD COLUMN replies_seen BIGINT NOT NULL DEFAULT 0;
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
            """),
        // A message found by its id alone (a thread's replies asked for without the channel) among
        // channels not in memory: one index look-up instead of one per channel.
        ("v9-messages-by-id", "CREATE INDEX messages_by_id ON messages (id);"),
        // A member's passes move out of its row (16-byte little-endian records, StoredPasses) into
        // rows of their own, so that a confirmation appends one row instead of rewriting them all.
        ("v10-pointer-passes-as-rows", """
            CREATE TABLE pointer_passes (
                cid TEXT NOT NULL, user_id TEXT NOT NULL, kind BIGINT NOT NULL, ordinal BIGINT NOT NULL,
                position BIGINT NOT NULL, at BIGINT NOT NULL,
                PRIMARY KEY (cid, user_id, kind, ordinal));
            INSERT INTO pointer_passes (cid, user_id, kind, ordinal, position, at)
                SELECT m.cid, m.user_id, 0, g.i, (get_byte(m.read_passes, g.i * 16 + 0)::bigint | (get_byte(m.read_passes, g.i * 16 + 1)::bigint << 8) | (get_byte(m.read_passes, g.i * 16 + 2)::bigint << 16) | (get_byte(m.read_passes, g.i * 16 + 3)::bigint << 24) | (get_byte(m.read_passes, g.i * 16 + 4)::bigint << 32) | (get_byte(m.read_passes, g.i * 16 + 5)::bigint << 40) | (get_byte(m.read_passes, g.i * 16 + 6)::bigint << 48) | (get_byte(m.read_passes, g.i * 16 + 7)::bigint << 56)),
                       (get_byte(m.read_passes, g.i * 16 + 8 + 0)::bigint | (get_byte(m.read_passes, g.i * 16 + 8 + 1)::bigint << 8) | (get_byte(m.read_passes, g.i * 16 + 8 + 2)::bigint << 16) | (get_byte(m.read_passes, g.i * 16 + 8 + 3)::bigint << 24) | (get_byte(m.read_passes, g.i * 16 + 8 + 4)::bigint << 32) | (get_byte(m.read_passes, g.i * 16 + 8 + 5)::bigint << 40) | (get_byte(m.read_passes, g.i * 16 + 8 + 6)::bigint << 48) | (get_byte(m.read_passes, g.i * 16 + 8 + 7)::bigint << 56))
                FROM members m CROSS JOIN LATERAL generate_series(0, length(m.read_passes) / 16 - 1) AS g(i)
                WHERE length(m.read_passes) >= 16;
            INSERT INTO pointer_passes (cid, user_id, kind, ordinal, position, at)
                SELECT m.cid, m.user_id, 1, g.i, (get_byte(m.delivered_passes, g.i * 16 + 0)::bigint | (get_byte(m.delivered_passes, g.i * 16 + 1)::bigint << 8) | (get_byte(m.delivered_passes, g.i * 16 + 2)::bigint << 16) | (get_byte(m.delivered_passes, g.i * 16 + 3)::bigint << 24) | (get_byte(m.delivered_passes, g.i * 16 + 4)::bigint << 32) | (get_byte(m.delivered_passes, g.i * 16 + 5)::bigint << 40) | (get_byte(m.delivered_passes, g.i * 16 + 6)::bigint << 48) | (get_byte(m.delivered_passes, g.i * 16 + 7)::bigint << 56)),
                       (get_byte(m.delivered_passes, g.i * 16 + 8 + 0)::bigint | (get_byte(m.delivered_passes, g.i * 16 + 8 + 1)::bigint << 8) | (get_byte(m.delivered_passes, g.i * 16 + 8 + 2)::bigint << 16) | (get_byte(m.delivered_passes, g.i * 16 + 8 + 3)::bigint << 24) | (get_byte(m.delivered_passes, g.i * 16 + 8 + 4)::bigint << 32) | (get_byte(m.delivered_passes, g.i * 16 + 8 + 5)::bigint << 40) | (get_byte(m.delivered_passes, g.i * 16 + 8 + 6)::bigint << 48) | (get_byte(m.delivered_passes, g.i * 16 + 8 + 7)::bigint << 56))
                FROM members m CROSS JOIN LATERAL generate_series(0, length(m.delivered_passes) / 16 - 1) AS g(i)
                WHERE length(m.delivered_passes) >= 16;
            UPDATE members SET read_passes = ''::bytea, delivered_passes = ''::bytea
                WHERE length(read_passes) > 0 OR length(delivered_passes) > 0;
            """),
        // Shards (ShardMap) owned by nodes under leases whose epoch fences commits, and the nodes
        // that take them: each with the database session that marks it live.
        ("v11-shard-leases", """
            CREATE TABLE cluster_nodes (node_id TEXT PRIMARY KEY, backend_pid INTEGER NOT NULL, seen_at TIMESTAMPTZ NOT NULL);
            CREATE TABLE shards (shard INTEGER PRIMARY KEY, owner TEXT, epoch BIGINT NOT NULL DEFAULT 0, expires_at TIMESTAMPTZ);
            INSERT INTO shards (shard) SELECT generate_series(0, 255);
            """),
        // Each entry is numbered in its stream too (a shard's, or the cluster's: JournalStream); the
        // entries already written are the cluster stream's, numbered as in the journal.
        ("v12-journal-streams", """
            ALTER TABLE journal ADD COLUMN stream INTEGER, ADD COLUMN stream_seq BIGINT;
            UPDATE journal SET stream = \(JournalStream.cluster.rawValue), stream_seq = seq;
            ALTER TABLE journal ALTER COLUMN stream SET NOT NULL, ALTER COLUMN stream_seq SET NOT NULL;
            CREATE UNIQUE INDEX journal_stream ON journal (stream, stream_seq);
            """),
        // A channel object is stored once for the events that carry the same bytes (JournaledChannel):
        // such an event is journaled without it (which object, and where it goes in the JSON). What
        // was written before stays whole (these columns NULL).
        ("v13-journaled-channels", """
            CREATE TABLE journal_channels (cid TEXT NOT NULL, since BIGINT NOT NULL, object TEXT NOT NULL, PRIMARY KEY (cid, since));
            ALTER TABLE journal_events ADD COLUMN channel_since BIGINT, ADD COLUMN channel_at BIGINT, ADD COLUMN channel_bytes BIGINT;
            """),
        // What other nodes committed past a node's position in each stream, with the texts of the
        // messages their sends stored, in one statement that first takes the append lock for the
        // transaction (take_lock 1 shared, 2 exclusive, 0 none): each statement of a volatile
        // function sees what was committed before it began, so the entries read are those committed
        // before the lock was granted. A commit cycle's read costs one round trip, not three.
        ("v14-follow-function", """
            CREATE FUNCTION checkmark_follow(take_lock INTEGER, applied BIGINT[], row_limit BIGINT)
            RETURNS TABLE (seq BIGINT, at BIGINT, command TEXT, message_position BIGINT, stream INTEGER, stream_seq BIGINT, message_text TEXT)
            LANGUAGE plpgsql VOLATILE AS $$
            BEGIN
                IF take_lock = 1 THEN
                    PERFORM pg_advisory_xact_lock_shared(\(appendLock));
                ELSIF take_lock = 2 THEN
                    PERFORM pg_advisory_xact_lock(\(appendLock));
                END IF;
                -- Planned for these positions at each call, as a statement of its own would be: a
                -- plan cached for any positions may scan the whole journal.
                RETURN QUERY EXECUTE '
                    SELECT j.seq, j.at, j.command, j.message_position, j.stream, j.stream_seq, m.text
                    FROM unnest($1) WITH ORDINALITY AS p(last_applied, n)
                    JOIN journal j ON j.stream = p.n - 1 AND j.stream_seq > p.last_applied
                    LEFT JOIN messages m ON j.message_position IS NOT NULL
                        AND m.cid = j.command::json ->> ''cid'' AND m.position = j.message_position
                    ORDER BY j.seq
                    LIMIT $2' USING applied, row_limit;
            END
            $$;
            """),
        // Typing's privacy setting and the channel types' typing and custom event flags, on for what
        // was stored before (Stream's defaults).
        ("v15-typing-and-custom-events", """
            ALTER TABLE users ADD COLUMN typing_indicators BOOLEAN NOT NULL DEFAULT true;
            ALTER TABLE channel_types ADD COLUMN typing_events BOOLEAN NOT NULL DEFAULT true, ADD COLUMN custom_events BOOLEAN NOT NULL DEFAULT true;
            """),
        // Edits and deletions: a message's row keeps the text it was sent with (what the journal
        // refers to), this one its revision and current text.
        ("v16-message-edits", """
            CREATE TABLE message_edits (cid TEXT NOT NULL, position BIGINT NOT NULL, text TEXT, updated_at BIGINT NOT NULL,
                text_updated_at BIGINT, deleted_at BIGINT, hard_deleted BOOLEAN NOT NULL, PRIMARY KEY (cid, position));
            """),
        // Each user's reaction of each type to each message; a message's are rewritten together.
        ("v17-reactions", """
            CREATE TABLE reactions (cid TEXT NOT NULL, position BIGINT NOT NULL, user_id TEXT NOT NULL, type TEXT NOT NULL,
                score BIGINT NOT NULL, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL, PRIMARY KEY (cid, position, user_id, type));
            """),
    ]

    /// `sql`'s statements: split at each `;` outside a `$$`-quoted body (a function's). Migrations
    /// quote bodies with `$$` only, and hold no `;` inside string literals.
    static func statements(_ sql: String) -> [String] {
        var statements: [String] = []
        var current = ""
        var quoted = false
        var rest = Substring(sql)
        while let next = rest.first {
            if rest.hasPrefix("$$") {
                quoted.toggle()
                current += "$$"
                rest = rest.dropFirst(2)
                continue
            }
            rest = rest.dropFirst()
            if next == ";" && !quoted {
                statements.append(current)
                current = ""
            } else {
                current.append(next)
            }
        }
        statements.append(current)
        return statements.filter { !$0.allSatisfy(\.isWhitespace) }
    }
}
