import CheckmarkServer
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
        ("{}", [:], ["max_request_body": "x"], "flag --max-request-body: max_request_body must be a whole number"),
        ("{}", [:], ["colour": "red"], "unknown setting colour"),
    ] as [(String, [String: String], [String: String], String)])
    func badSettingsAreRefusedNamingTheirSource(file: String, environment: [String: String], flags: [String: String], message: String) {
        #expect {
            _ = try ConfigurationLoader.load(file: (path: "c.json", contents: file), environment: environment, flags: flags)
        } throws: { error in
            "\(error)".contains(message)
        }
    }

    @Test func nonPositiveLimitsFailValidation() throws {
        var configuration = ServerConfiguration()
        configuration.maxRequestBodyBytes = 0
        #expect(throws: ServerConfiguration.Invalid.self) { try configuration.validate() }
    }
}
