import CheckmarkServer
import CheckmarkStorage
import Testing

/// `checkmark serve`'s settings: one key set for every source, later sources win, bad input is an
/// error naming its source.
@Suite("Configuration sources and precedence")
struct ConfigurationLoaderTests {
    @Test func flagsBeatTheEnvironmentWhichBeatsTheFileWhichBeatsDefaults() throws {
        let configuration = try ConfigurationLoader.load(
            file: (path: "c.json", contents: #"{"port": 9000, "max_request_body": 2048, "metrics": false, "host": "127.0.0.2"}"#),
            environment: ["CHECKMARK_PORT": "9001", "CHECKMARK_MAX_REQUEST_BODY": "4096", "CHECKMARK_OTHER_TOOL": "ignored"],
            flags: ["port": "9002"])
        #expect(configuration.port == 9002)
        #expect(configuration.maxRequestBodyBytes == 4096)
        #expect(configuration.metricsEnabled == false)
        #expect(configuration.host == "127.0.0.2")
        #expect(configuration.keepaliveSeconds == ServerConfiguration().keepaliveSeconds)
    }

    @Test(arguments: [
        (#"{"nope": 1}"#, [:], [:], "config file c.json: unknown key nope"),
        (#"{"port": "eighty"}"#, [:], [:], "config file c.json: port must be a whole number"),
        ("[1]", [:], [:], "must hold a JSON object"),
        ("{}", ["CHECKMARK_METRICS": "maybe"], [:], "environment CHECKMARK_METRICS: metrics must be true or false"),
        ("{}", [:], ["max_request_body": "x"], "flag --max-request-body: max_request_body must be a size"),
        ("{}", [:], ["colour": "red"], "unknown setting colour"),
    ] as [(String, [String: String], [String: String], String)])
    func badSettingsAreRefusedNamingTheirSource(file: String, environment: [String: String], flags: [String: String], message: String) {
        #expect {
            _ = try ConfigurationLoader.load(file: (path: "c.json", contents: file), environment: environment, flags: flags)
        } throws: { error in
            "\(error)".contains(message)
        }
    }

    /// Issue 18: the listener's pipelining cap and accept pause, the tokens' clock skew and the
    /// refusal log's rate were fixed values; they are settings like every other limit.
    @Test func theListenerTokenAndLogLimitsAreSettingsWithUnits() throws {
        let defaults = ServerConfiguration()
        #expect(defaults.maxPipelinedBytes == 2 << 20 && defaults.acceptBackoffMilliseconds == 1_000)
        #expect(defaults.tokenClockSkewSeconds == 60 && defaults.refusalLogLinesPerSecond == 20)
        let configuration = try ConfigurationLoader.load(
            file: (path: "c.json", contents: #"{"max_pipelined_bytes": "1MiB", "accept_backoff": "250ms"}"#),
            environment: ["CHECKMARK_TOKEN_CLOCK_SKEW": "2m"], flags: ["refusal_log_lines_per_second": "5"])
        #expect(configuration.maxPipelinedBytes == 1 << 20)
        #expect(configuration.acceptBackoffMilliseconds == 250)
        #expect(configuration.tokenClockSkewSeconds == 120)
        #expect(configuration.refusalLogLinesPerSecond == 5)
        #expect(throws: (any Error).self) {
            _ = try ConfigurationLoader.load(file: nil, environment: [:], flags: ["refusal_log_lines_per_second": "0"])
        }
    }

    @Test func channelStateCacheTakesASizeAndZeroTurnsItOff() throws {
        #expect(ServerConfiguration().channelStateCacheBytes == 16 << 20)
        let sized = try ConfigurationLoader.load(file: nil, environment: ["CHECKMARK_CHANNEL_STATE_CACHE": "1MiB"], flags: [:])
        #expect(sized.channelStateCacheBytes == 1 << 20)
        let off = try ConfigurationLoader.load(file: nil, environment: [:], flags: ["channel_state_cache": "0"])
        #expect(off.channelStateCacheBytes == 0)
    }

    @Test func walCheckpointSettingsReachThePolicy() throws {
        #expect(ServerConfiguration().sqliteCheckpoints == SQLiteCheckpointPolicy(backgroundPages: 1000, limitPages: 16000))
        let set = try ConfigurationLoader.load(file: nil, environment: ["CHECKMARK_WAL_CHECKPOINT_PAGES": "200"], flags: ["max_wal_pages": "4000"])
        #expect(set.sqliteCheckpoints == SQLiteCheckpointPolicy(backgroundPages: 200, limitPages: 4000))
    }

    @Test func sqliteCacheTakesASize() throws {
        #expect(ServerConfiguration().sqliteCacheBytes == 16 << 20)
        let sized = try ConfigurationLoader.load(file: nil, environment: ["CHECKMARK_SQLITE_CACHE": "64MiB"], flags: [:])
        #expect(sized.sqliteCacheBytes == 64 << 20)
    }

    @Test func nonPositiveLimitsFailValidation() throws {
        var configuration = ServerConfiguration()
        configuration.maxRequestBodyBytes = 0
        #expect(throws: ServerConfiguration.Invalid.self) { try configuration.validate() }
    }

    /// Issue 44: how many of each channel's newest texts stay in memory is a setting; none is refused
    /// (a message being sent is always held until it is stored).
    @Test func theMessageWindowIsACountAndMustBePositive() throws {
        #expect(ServerConfiguration().messageWindow == 100)
        let configured = try ConfigurationLoader.load(file: nil, environment: ["CHECKMARK_MESSAGE_WINDOW": "500"], flags: [:])
        #expect(configured.messageWindow == 500)
        #expect {
            _ = try ConfigurationLoader.load(file: nil, environment: [:], flags: ["message_window": "0"])
        } throws: { error in
            "\(error)".contains("flag --message-window: message_window must be positive, not 0")
        }
    }

    @Test(arguments: [
        (["CHECKMARK_PORT": "70000"], [:], "environment CHECKMARK_PORT: port must be between 0 and 65535, not 70000"),
        ([:], ["max_request_body": "0"], "flag --max-request-body: max_request_body must be positive, not 0"),
        (["CHECKMARK_KEEPALIVE": "-1"], [:], "environment CHECKMARK_KEEPALIVE: keepalive must not be negative, not -1"),
        ([:], ["channel_state_cache": "-1"], "flag --channel-state-cache: channel_state_cache must not be negative, not -1"),
        ([:], ["wal_checkpoint_pages": "0"], "flag --wal-checkpoint-pages: wal_checkpoint_pages must be positive, not 0"),
        ([:], ["max_wal_pages": "500"], "flag --max-wal-pages: max_wal_pages must be at least wal_checkpoint_pages (1000), not 500"),
        ([:], ["sqlite_cache": "0"], "flag --sqlite-cache: sqlite_cache must be between 1 and 1099511627776, not 0"),
        ([:], ["sqlite_cache": "2048GiB"], "flag --sqlite-cache: sqlite_cache must be between 1 and 1099511627776, not 2199023255552"),
        (["CHECKMARK_API_SECRET": "short"], [:], "environment CHECKMARK_API_SECRET: api_secret must be at least 16 bytes"),
        ([:], ["shard_lease": "0"], "flag --shard-lease: shard_lease must be between 1 and 3600 seconds, not 0"),
        (["CHECKMARK_POSTGRES_URL": "postgres://checkmark@db/checkmark"], ["peer_link": "10.0.0.7"],
         "flag --peer-link: peer_link must be HOST:PORT (port 0 to 65535), not '10.0.0.7'"),
        (["CHECKMARK_POSTGRES_URL": "postgres://checkmark@db/checkmark", "CHECKMARK_API_SECRET": "a-real-secret-0123456789"],
         ["peer_link": "0.0.0.0:9102"], "flag --peer-link: peer_link must name an address the other nodes reach this node at, not 0.0.0.0"),
        (["CHECKMARK_API_SECRET": "a-real-secret-0123456789"], ["peer_link": "10.0.0.7:9102"],
         "flag --peer-link: peer_link links the nodes of a cluster: set postgres_url too"),
        (["CHECKMARK_POSTGRES_URL": "postgres://checkmark@db/checkmark"], ["peer_link": "10.0.0.7:9102"],
         "flag --peer-link: peer_link must be a loopback address with the development api secret, not 10.0.0.7; set --api-secret or CHECKMARK_API_SECRET"),
    ] as [([String: String], [String: String], String)])
    func rangeErrorsNameTheirSourceAndKey(environment: [String: String], flags: [String: String], message: String) {
        let report = ConfigurationLoader.check(file: nil, environment: environment, flags: flags)
        #expect(report.errors == [message])
    }

    @Test func checkReportsEveryErrorNotOnlyTheFirst() {
        let report = ConfigurationLoader.check(
            file: (path: "c.json", contents: #"{"port": 70000, "max_conections": 5}"#),
            environment: ["CHECKMARK_METRICS": "maybe"], flags: ["max_request_bdy": "1"])
        #expect(report.errors.count == 4, "\(report.errors)")
        #expect(report.errors.contains("config file c.json: port must be between 0 and 65535, not 70000"))
    }

    @Test func nearMissKeysGetASuggestionAsErrorsInFileAndFlagsAndWarningsInTheEnvironment() {
        let report = ConfigurationLoader.check(
            file: (path: "c.json", contents: #"{"max_conections": 5}"#),
            environment: ["CHECKMARK_IDLE_TIMOUT": "5", "CHECKMARK_LOG": "debug", "CHECKMARK_TEST_POSTGRES_URL": "x", "CHECKMARK_CRASH_ROUNDS": "3"],
            flags: ["shutdown": "5"])
        #expect(report.errors.contains("config file c.json: unknown key max_conections; did you mean max_connections?"))
        #expect(report.errors.contains("flag --set shutdown: unknown setting shutdown; did you mean shutdown_timeout?"))
        #expect(report.warnings.contains("environment CHECKMARK_IDLE_TIMOUT is not a setting and is ignored; did you mean CHECKMARK_IDLE_TIMEOUT?"))
        #expect(report.warnings.count == 2, "CHECKMARK_LOG warned, the other commands' variables not: \(report.warnings)")
        #expect(ConfigurationLoader.nearest("colour") == nil)
    }

    /// The journal keeps by default what a resume may replay, and follows `max_resume_events`.
    @Test func journalRetentionDefaultsToWhatAResumeReplays() throws {
        let defaults = try ConfigurationLoader.load(file: nil, environment: [:], flags: [:])
        #expect(defaults.retention == RetentionPolicy(maxEventsPerChannel: defaults.gateway.maxResumeEvents))
        #expect(ConfigurationLoader.displayValue(of: "journal_max_events_per_channel", in: defaults) == "\(defaults.gateway.maxResumeEvents)")
        let moreResume = try ConfigurationLoader.load(file: nil, environment: [:], flags: ["max_resume_events": "50000"])
        #expect(moreResume.retention.maxEventsPerChannel == 50_000)
        let keepAll = try ConfigurationLoader.load(file: nil, environment: ["CHECKMARK_JOURNAL_MAX_EVENTS_PER_CHANNEL": "0"], flags: [:])
        #expect(keepAll.retention == .keepAll)
        let set = try ConfigurationLoader.load(file: nil, environment: [:], flags: ["journal_max_events_per_channel": "200", "journal_max_age": "1h"])
        #expect(set.retention == RetentionPolicy(maxAgeSeconds: 3600, maxEventsPerChannel: 200))
    }

    @Test func durationsAndSizesTakeUnitsEverywhereAndBareNumbersKeepTheKeysUnit() throws {
        let configuration = try ConfigurationLoader.load(
            file: (path: "c.json", contents: #"{"slow_consumer_grace": "2s", "request_timeout": 15, "max_outbound_buffer": "64KiB"}"#),
            environment: ["CHECKMARK_IDLE_TIMEOUT": "2m", "CHECKMARK_MAX_MESSAGE_SIZE": "1GiB", "CHECKMARK_JOURNAL_MAX_AGE": "1h"],
            flags: ["keepalive": "5000ms", "max_request_body": "4MiB", "shutdown_timeout": "7"])
        #expect(configuration.gateway.slowConsumerGraceMilliseconds == 2000)
        #expect(configuration.requestTimeoutSeconds == 15)
        #expect(configuration.gateway.maxOutboundBufferBytes == 64 << 10)
        #expect(configuration.idleTimeoutSeconds == 120)
        #expect(configuration.maxMessageBytes == 1 << 30)
        #expect(configuration.retention.maxAgeSeconds == 3600)
        #expect(configuration.keepaliveSeconds == 5)
        #expect(configuration.maxRequestBodyBytes == 4 << 20)
        #expect(configuration.shutdownTimeoutSeconds == 7)
        let report = ConfigurationLoader.check(file: nil, environment: [:], flags: ["keepalive": "500ms", "max_connections": "5s", "slow_consumer_grace": "250ms"])
        #expect(report.errors.sorted() == [
            "flag --keepalive: keepalive must be a whole number of seconds, not '500ms'",
            "flag --max-connections: max_connections must be a whole number, not '5s'",
        ])
        #expect(report.configuration.gateway.slowConsumerGraceMilliseconds == 250)
    }

    @Test func printShowsEachSourceAndMasksSecrets() {
        let report = ConfigurationLoader.check(
            file: (path: "c.json", contents: #"{"port": 9000}"#),
            environment: ["CHECKMARK_POSTGRES_URL": "postgres://app:hunter2@db:5432/checkmark", "CHECKMARK_API_SECRET": "a-long-production-secret"],
            flags: ["log_format": "json"])
        #expect(report.errors.isEmpty, "\(report.errors)")
        #expect(report.source(of: "port") == "config file c.json")
        #expect(report.source(of: "postgres_url") == "environment CHECKMARK_POSTGRES_URL")
        #expect(report.source(of: "log_format") == "flag --log-format")
        #expect(report.source(of: "host") == "default")
        #expect(ConfigurationLoader.displayValue(of: "postgres_url", in: report.configuration) == "postgres://app:****@db:5432/checkmark")
        #expect(ConfigurationLoader.displayValue(of: "api_secret", in: report.configuration) == "********")
        #expect(ConfigurationLoader.keys.allSatisfy { !ConfigurationLoader.displayValue(of: $0.key, in: report.configuration).contains("hunter2") })
        #expect(ConfigurationLoader.keys.allSatisfy { !ConfigurationLoader.displayValue(of: $0.key, in: report.configuration).contains("a-long-production-secret") })
    }
}
