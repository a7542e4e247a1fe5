import ArgumentParser
import CheckmarkServer

/// The api_key and api_secret of a running server the replay tools talk to.
struct ServerCredentials: ParsableArguments {
    @Option(help: "The server's api_key (default: the development key).") var apiKey = ServerConfiguration.developmentAPIKey
    @Option(help: "The server's api_secret, to sign tokens (default: the development secret).")
    var apiSecret = ServerConfiguration.developmentAPISecret
}
