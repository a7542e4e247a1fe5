import CheckmarkCore
import CheckmarkStorage
import Logging

/// Builds a ``ServerConfiguration`` from its sources in one precedence order: defaults, then the
/// config file (a JSON object), then the environment (`CHECKMARK_<KEY>`), then command-line flags.
/// Every source uses the same keys (see ``keys``); an unknown key or a bad value is an error naming
/// its source.
package enum ConfigurationLoader {
    /// Every setting: its key (file and flag name with `_` for `-`; upper-cased for the environment)
    /// and what it means.
    package static let keys: [(key: String, help: String)] = [
        ("host", "address to listen on (default 127.0.0.1)"),
        ("port", "port to listen on, 0 picks a free one (default 8080)"),
        ("data_dir", "data directory, created if missing (default ./checkmark-data)"),
        ("postgres_url", "store in PostgreSQL instead, as one node of a cluster: postgres://user:password@host:5432/db[?schema=name] (docs/cluster.md; default: none, SQLite in data_dir)"),
        ("api_key", "the app's api_key (default: the development key)"),
        ("api_secret", "the app's api_secret, signs tokens (default: the development secret, loopback only)"),
        ("log_level", "trace, debug, info, notice, warning, error or critical (default info)"),
        ("log_format", "text or json, one JSON object a line with time, level, label, message and the metadata as fields (default text)"),
        ("access_log", "log one info line per REST request (method, route, status, duration, bytes, caller, request id, peer) and per closed WebSocket connection: true or false (default true)"),
        ("metrics", "serve /metrics: true or false (default true)"),
        ("demo", "serve the demo page at /demo: auto (only with the development credentials), true or false (default auto)"),
        ("cors_allowed_origins", "web origins whose pages may call the REST API: comma-separated scheme://host[:port], or * (default: none, no CORS)"),
        ("max_connections", "open WebSocket connections in total (default 100000)"),
        ("max_connections_per_user", "open connections per user (default 64)"),
        ("max_watched_channels", "channels one connection may watch (default 1000)"),
        ("commands_per_second", "commands per second per connection (default 200)"),
        ("command_burst", "commands a connection may send at once above the rate (default 400)"),
        ("max_outbound_buffer", "bytes queued for one connection before it is dropped as slow, 4009 (default 4194304)"),
        ("slow_consumer_grace", "milliseconds a connection may stay over max_outbound_buffer (default 5000)"),
        ("max_resume_events", "events one channel resume replays; further back the client re-reads state (default 10000)"),
        ("max_message_size", "largest WebSocket message in bytes, 1009 past it (default 16777216)"),
        ("max_request_body", "largest REST request body in bytes, 413 past it (default 1048576)"),
        ("request_timeout", "seconds a whole HTTP request may take to arrive (408 past it), and a keep-alive connection may idle (closed silently past it) (default 10)"),
        ("max_pending_connections", "HTTP connections that are not WebSocket yet, at once, 503 past it (default 4096)"),
        ("max_pipelined_bytes", "bytes of pipelined requests held while an earlier one is answered; past it the connection closes (default 2097152)"),
        ("accept_backoff", "milliseconds the listener stops accepting when out of descriptors or memory (default 1000)"),
        ("token_clock_skew", "seconds a token's nbf and iat may lie ahead of the server's clock, 4001 / 401 further (default 60)"),
        ("refusal_log_lines_per_second", "refusal lines logged per second at most, the rest counted as suppressed (default 20)"),
        ("rest_requests_per_second", "REST requests per second one user token may make; server tokens are not limited (default 100)"),
        ("rest_request_burst", "REST requests one user token may make at once above the rate, 429 past it (default 200)"),
        ("channel_events_per_second", "typing and custom events per second one user may send, all its connections together; server tokens are not limited (default 10)"),
        ("channel_event_burst", "typing and custom events one user may send at once above the rate, 429 past it (default 20)"),
        ("max_custom_event", "largest custom event (its JSON without the user Checkmark adds) in bytes, 400 past it (default 5120)"),
        ("max_user_profile", "largest user profile (name, image, custom fields) in bytes, 400 past it; equal on every node (default 5120)"),
        ("max_reactions_per_user", "reaction types one user may have on one message, 400 past it; equal on every node (default 25)"),
        ("channel_state_cache", "bytes of channel members, read states and messages kept encoded between watches, 0 keeps none (default 16777216)"),
        ("message_window", "newest messages of each channel whose texts stay in memory; older texts are read from storage when a page asks (default 100)"),
        ("channel_idle_timeout", "seconds a loaded channel stays in memory with no watcher and no change before it goes back to storage, 0 keeps it (default 300; single node only)"),
        ("wal_checkpoint_pages", "pages of the embedded database's write-ahead log at which a background checkpoint starts (default 1000)"),
        ("max_wal_pages", "pages of the write-ahead log at which a commit checkpoints before it returns, if background checkpoints fell behind (default 16000)"),
        ("sqlite_cache", "bytes of the embedded database's page cache, at most 1 TiB; a commit that changes more pages writes some to the log before it commits (default 16777216)"),
        ("json_max_depth", "deepest nesting of a JSON request body or WebSocket message, 400 / 1009 past it (default 64)"),
        ("json_max_keys", "most keys in one JSON object of a request or message, 400 / 1009 past it (default 1000)"),
        ("json_max_string", "longest JSON string in a request or message, in bytes, 400 / 1009 past it (default 65536)"),
        ("keepalive", "seconds of silence before the server pings, 0 disables (default 30)"),
        ("idle_timeout", "seconds without any client frame before 1001, 0 disables (default 120)"),
        ("compression", "permessage-deflate: true or false (default true)"),
        ("journal_max_age", "seconds of journal history kept, 0 keeps all (default 0)"),
        ("journal_max_events_per_channel", "journal events kept per channel; older ones can be neither resumed nor exported, 0 keeps all (default: max_resume_events)"),
        ("record", "write a live trace of every command and event to this file (docs/replay.md; default: none)"),
        ("shutdown_timeout", "seconds a graceful shutdown waits for clients (default 10)"),
        ("shard_lease", "seconds a cluster node's shard lease lasts unrenewed, renewed every fifth of it; a paused node's shards, and its commit in progress, go after it (default 5; cluster only)"),
        ("peer_link", "HOST:PORT where this node takes direct links from the other nodes of its cluster (an address they reach it at; they prove the api_secret), for forwarded commands and their answers; unset, those go through PostgreSQL (default: unset; cluster only)"),
    ]

    /// The unit of every numeric setting (a bare number is in this unit); other settings are text.
    package static let units: [String: SettingUnit] = [
        "port": .count, "max_connections": .count, "max_connections_per_user": .count, "max_watched_channels": .count,
        "commands_per_second": .count, "command_burst": .count, "max_outbound_buffer": .bytes,
        "slow_consumer_grace": .milliseconds, "max_resume_events": .count, "max_message_size": .bytes,
        "max_request_body": .bytes, "request_timeout": .seconds, "max_pending_connections": .count,
        "max_pipelined_bytes": .bytes, "accept_backoff": .milliseconds, "token_clock_skew": .seconds, "refusal_log_lines_per_second": .count,
        "rest_requests_per_second": .count, "rest_request_burst": .count, "max_user_profile": .bytes, "max_reactions_per_user": .count,
        "channel_events_per_second": .count, "channel_event_burst": .count, "max_custom_event": .bytes, "channel_state_cache": .bytes,
        "message_window": .count, "channel_idle_timeout": .seconds,
        "wal_checkpoint_pages": .count, "max_wal_pages": .count, "sqlite_cache": .bytes,
        "json_max_depth": .count, "json_max_keys": .count, "json_max_string": .bytes, "keepalive": .seconds,
        "idle_timeout": .seconds, "journal_max_age": .seconds, "journal_max_events_per_channel": .count,
        "shutdown_timeout": .seconds, "shard_lease": .seconds,
    ]

    /// `CHECKMARK_*` variables that other commands and scripts read: not settings, and not warned about.
    package static let otherVariables: Set<String> = [
        "CHECKMARK_TEST_POSTGRES_URL", "CHECKMARK_BINARY", "CHECKMARK_COMMIT", "CHECKMARK_CRASH_ROUNDS", "CHECKMARK_COMPAT_URL",
    ]

    package struct Invalid: Error, CustomStringConvertible {
        package var description: String
    }

    /// Everything the sources say: the configuration, where each key's value came from (`default`,
    /// `config file PATH`, `environment CHECKMARK_KEY`, `flag --key`), every error (each naming its
    /// source and key) and the warnings (unknown `CHECKMARK_*` variables, with a near key if any).
    package struct Report: Sendable {
        package var configuration = ServerConfiguration()
        package var sources: [String: String] = [:]
        package var errors: [String] = []
        package var warnings: [String] = []

        /// Where `key`'s value came from.
        package func source(of key: String) -> String { sources[key] ?? "default" }
    }

    /// Reads every source and validates the result, collecting every error instead of stopping at
    /// the first (what `checkmark config check` prints).
    package static func check(file: (path: String, contents: String)?, environment: [String: String], flags: [String: String]) -> Report {
        var report = Report()
        let known = Set(keys.map(\.key))
        func apply(_ key: String, _ value: String, source: String) {
            do {
                try Self.apply(key, value, source: source, to: &report.configuration)
                report.sources[key] = source
            } catch { report.errors.append(error.description) }
        }
        if let file {
            do {
                let json = try JSONParser.parse(file.contents)
                if let pairs = json.objectValue {
                    for (key, value) in pairs {
                        let source = "config file \(file.path)"
                        guard known.contains(key) else {
                            report.errors.append("\(source): unknown key \(key)\(hint(key))")
                            continue
                        }
                        switch value {
                        case .string(let s): apply(key, s, source: source)
                        case .bool(let b): apply(key, b ? "true" : "false", source: source)
                        case .number:
                            if let int = value.intValue { apply(key, String(int), source: source) } else {
                                report.errors.append("\(source): \(key) must be a whole number")
                            }
                        default: report.errors.append("\(source): \(key) must be a string, a number or true/false")
                        }
                    }
                } else {
                    report.errors.append("config file \(file.path) must hold a JSON object")
                }
            } catch {
                report.errors.append("config file \(file.path): \(error.description)")
            }
        }
        for (name, value) in environment.sorted(by: { $0.key < $1.key }) where name.hasPrefix("CHECKMARK_") {
            let key = String(name.dropFirst("CHECKMARK_".count)).lowercased()
            guard known.contains(key) else {
                if !otherVariables.contains(name) {
                    report.warnings.append("environment \(name) is not a setting and is ignored\(hint(key, prefix: "CHECKMARK_", upper: true))")
                }
                continue
            }
            apply(key, value, source: "environment \(name)")
        }
        for (key, value) in flags.sorted(by: { $0.key < $1.key }) {
            guard known.contains(key) else {
                report.errors.append("flag --set \(key): unknown setting \(key)\(hint(key))")
                continue
            }
            apply(key, value, source: "flag --\(key.replacingUnderscores())")
        }
        for problem in report.configuration.problems() {
            let message = problem.message.hasPrefix(problem.key) ? problem.message : "\(problem.key): \(problem.message)"
            report.errors.append("\(report.source(of: problem.key)): \(message)")
        }
        return report
    }

    /// `; did you mean X?` for the known key nearest to `key` (edit distance at most 2, or one a
    /// prefix of the other), or "".
    static func hint(_ key: String, prefix: String = "", upper: Bool = false) -> String {
        guard let near = nearest(key) else { return "" }
        return "; did you mean \(prefix)\(upper ? near.uppercased() : near)?"
    }

    /// The known key nearest to `key`, if one is near enough.
    package static func nearest(_ key: String) -> String? {
        guard !key.isEmpty else { return nil }
        var best: (key: String, distance: Int)?
        for candidate in keys.map(\.key) {
            var distance = editDistance(key, candidate)
            if distance > 2, candidate.hasPrefix(key) || key.hasPrefix(candidate), min(key.count, candidate.count) >= 3 { distance = 2 }
            if distance <= 2, distance < (best?.distance ?? .max) { best = (candidate, distance) }
        }
        return best?.key
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var previous = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...max(b.count, 1) where !b.isEmpty {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return a.isEmpty ? b.count : previous[b.count]
    }

    /// - Parameters:
    ///   - file: the config file's contents, if one was given, and its path (for messages).
    ///   - environment: the process environment; only `CHECKMARK_*` names are read.
    ///   - flags: values given on the command line, by key.
    package static func load(file: (path: String, contents: String)?, environment: [String: String], flags: [String: String]) throws(Invalid) -> ServerConfiguration {
        let report = check(file: file, environment: environment, flags: flags)
        if let first = report.errors.first { throw Invalid(description: first) }
        return report.configuration
    }

    private static func apply(_ key: String, _ value: String, source: String, to c: inout ServerConfiguration) throws(Invalid) {
        func int() throws(Invalid) -> Int {
            switch (units[key] ?? .count).parse(value) {
            case .success(let number): return number
            case .failure(let refusal): throw Invalid(description: "\(source): \(key) \(refusal.reason)")
            }
        }
        func bool() throws(Invalid) -> Bool {
            switch value.lowercased() {
            case "true", "1", "yes", "on": return true
            case "false", "0", "no", "off": return false
            default: throw Invalid(description: "\(source): \(key) must be true or false, not '\(value)'")
            }
        }
        switch key {
        case "host": c.host = value
        case "port": c.port = try int()
        case "data_dir": c.dataDirectory = value
        case "postgres_url": c.postgresURL = value.isEmpty ? nil : value
        case "api_key": c.apiKey = value
        case "api_secret": c.apiSecret = value
        case "log_level":
            guard let level = Logger.Level(rawValue: value.lowercased()) else {
                throw Invalid(description: "\(source): log_level must be trace, debug, info, notice, warning, error or critical, not '\(value)'")
            }
            c.logLevel = level
        case "log_format":
            guard let format = LogFormat(rawValue: value.lowercased()) else {
                throw Invalid(description: "\(source): log_format must be text or json, not '\(value)'")
            }
            c.logFormat = format
        case "access_log": c.accessLog = try bool()
        case "metrics": c.metricsEnabled = try bool()
        case "demo":
            if value.lowercased() == DemoSetting.auto.rawValue { c.demo = .auto } else { c.demo = try bool() ? .on : .off }
        case "cors_allowed_origins":
            do { c.cors = try CORSPolicy(setting: value) } catch {
                throw Invalid(description: "\(source): cors_allowed_origins: \(error.description)")
            }
        case "max_connections": c.gateway.maxConnections = try int()
        case "max_connections_per_user": c.gateway.maxConnectionsPerUser = try int()
        case "max_watched_channels": c.gateway.maxWatchedChannelsPerConnection = try int()
        case "commands_per_second": c.gateway.commandsPerSecond = try int()
        case "command_burst": c.gateway.commandBurst = try int()
        case "max_outbound_buffer": c.gateway.maxOutboundBufferBytes = try int()
        case "slow_consumer_grace": c.gateway.slowConsumerGraceMilliseconds = try int()
        case "max_resume_events": c.gateway.maxResumeEvents = try int()
        case "record": c.recordPath = value.isEmpty ? nil : value
        case "max_message_size": c.maxMessageBytes = try int()
        case "max_request_body": c.maxRequestBodyBytes = try int()
        case "max_user_profile": c.maxUserProfileBytes = try int()
        case "max_reactions_per_user": c.maxReactionsPerUser = try int()
        case "channel_state_cache": c.channelStateCacheBytes = try int()
        case "message_window": c.messageWindow = try int()
        case "channel_idle_timeout": c.channelIdleTimeoutSeconds = try int()
        case "shard_lease": c.shardLeaseSeconds = try int()
        case "peer_link": c.peerLink = value.isEmpty ? nil : value
        case "wal_checkpoint_pages": c.sqliteCheckpoints.backgroundPages = try int()
        case "max_wal_pages": c.sqliteCheckpoints.limitPages = try int()
        case "sqlite_cache": c.sqliteCacheBytes = try int()
        case "request_timeout": c.requestTimeoutSeconds = try int()
        case "max_pending_connections": c.maxPendingConnections = try int()
        case "max_pipelined_bytes": c.maxPipelinedBytes = try int()
        case "accept_backoff": c.acceptBackoffMilliseconds = try int()
        case "token_clock_skew": c.tokenClockSkewSeconds = try int()
        case "refusal_log_lines_per_second": c.refusalLogLinesPerSecond = try int()
        case "rest_requests_per_second": c.restRequestsPerSecond = try int()
        case "rest_request_burst": c.restRequestBurst = try int()
        case "channel_events_per_second": c.channelEventsPerSecond = try int()
        case "channel_event_burst": c.channelEventBurst = try int()
        case "max_custom_event": c.maxCustomEventBytes = try int()
        case "json_max_depth": c.gateway.json.maxDepth = try int()
        case "json_max_keys": c.gateway.json.maxKeysPerObject = try int()
        case "json_max_string": c.gateway.json.maxStringBytes = try int()
        case "keepalive": c.keepaliveSeconds = try int()
        case "idle_timeout": c.idleTimeoutSeconds = try int()
        case "compression": c.compression = try bool()
        case "journal_max_age":
            let seconds = try int()
            c.journalMaxAgeSeconds = seconds > 0 ? Int64(seconds) : nil
        case "journal_max_events_per_channel": c.journalMaxEventsPerChannel = try int()
        case "shutdown_timeout": c.shutdownTimeoutSeconds = try int()
        default: throw Invalid(description: "\(source): unknown setting \(key)")
        }
    }
}

extension ConfigurationLoader {
    /// `key`'s value in `c`, as a source would write it, with secrets masked: the api_secret as
    /// `********` (or `(development secret)`), a postgres_url's password as `****`.
    package static func displayValue(of key: String, in c: ServerConfiguration) -> String {
        switch key {
        case "host": c.host
        case "port": "\(c.port)"
        case "data_dir": c.dataDirectory
        case "postgres_url": c.postgresURL.map(maskingPassword) ?? ""
        case "api_key": c.apiKey
        case "api_secret": c.usesDevelopmentSecret ? "(development secret)" : "********"
        case "log_level": c.logLevel.rawValue
        case "log_format": c.logFormat.rawValue
        case "access_log": "\(c.accessLog)"
        case "metrics": "\(c.metricsEnabled)"
        case "max_connections": "\(c.gateway.maxConnections)"
        case "max_connections_per_user": "\(c.gateway.maxConnectionsPerUser)"
        case "max_watched_channels": "\(c.gateway.maxWatchedChannelsPerConnection)"
        case "commands_per_second": "\(c.gateway.commandsPerSecond)"
        case "command_burst": "\(c.gateway.commandBurst)"
        case "max_outbound_buffer": "\(c.gateway.maxOutboundBufferBytes)"
        case "slow_consumer_grace": "\(c.gateway.slowConsumerGraceMilliseconds)"
        case "max_resume_events": "\(c.gateway.maxResumeEvents)"
        case "max_message_size": "\(c.maxMessageBytes)"
        case "max_request_body": "\(c.maxRequestBodyBytes)"
        case "request_timeout": "\(c.requestTimeoutSeconds)"
        case "max_pending_connections": "\(c.maxPendingConnections)"
        case "max_pipelined_bytes": "\(c.maxPipelinedBytes)"
        case "accept_backoff": "\(c.acceptBackoffMilliseconds)"
        case "token_clock_skew": "\(c.tokenClockSkewSeconds)"
        case "refusal_log_lines_per_second": "\(c.refusalLogLinesPerSecond)"
        case "rest_requests_per_second": "\(c.restRequestsPerSecond)"
        case "rest_request_burst": "\(c.restRequestBurst)"
        case "channel_events_per_second": "\(c.channelEventsPerSecond)"
        case "channel_event_burst": "\(c.channelEventBurst)"
        case "max_custom_event": "\(c.maxCustomEventBytes)"
        case "max_user_profile": "\(c.maxUserProfileBytes)"
        case "max_reactions_per_user": "\(c.maxReactionsPerUser)"
        case "channel_state_cache": "\(c.channelStateCacheBytes)"
        case "message_window": "\(c.messageWindow)"
        case "channel_idle_timeout": "\(c.channelIdleTimeoutSeconds)"
        case "wal_checkpoint_pages": "\(c.sqliteCheckpoints.backgroundPages)"
        case "max_wal_pages": "\(c.sqliteCheckpoints.limitPages)"
        case "sqlite_cache": "\(c.sqliteCacheBytes)"
        case "json_max_depth": "\(c.gateway.json.maxDepth)"
        case "json_max_keys": "\(c.gateway.json.maxKeysPerObject)"
        case "json_max_string": "\(c.gateway.json.maxStringBytes)"
        case "keepalive": "\(c.keepaliveSeconds)"
        case "idle_timeout": "\(c.idleTimeoutSeconds)"
        case "compression": "\(c.compression)"
        case "journal_max_age": "\(c.retention.maxAgeSeconds ?? 0)"
        case "journal_max_events_per_channel": "\(c.retention.maxEventsPerChannel ?? 0)"
        case "record": c.recordPath ?? ""
        case "shutdown_timeout": "\(c.shutdownTimeoutSeconds)"
        case "shard_lease": "\(c.shardLeaseSeconds)"
        case "peer_link": c.peerLink ?? ""
        default: ""
        }
    }

    /// `postgres://user:****@host/db` for `postgres://user:secret@host/db`; other text as it is.
    static func maskingPassword(_ url: String) -> String {
        guard let scheme = url.firstRange(of: "://"), let at = url[scheme.upperBound...].lastIndex(of: "@") else { return url }
        let userInfo = url[scheme.upperBound..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return url }
        return String(url[..<url.index(after: colon)]) + "****" + String(url[at...])
    }
}

extension String {
    fileprivate func replacingUnderscores() -> String {
        String(map { $0 == "_" ? "-" : $0 })
    }
}
