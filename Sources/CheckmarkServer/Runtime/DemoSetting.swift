/// The `demo` setting: whether `checkmark serve` serves the demo page at `/demo` (``DemoPage``).
package enum DemoSetting: String, Sendable, Hashable, CaseIterable {
    /// Served only while the server uses the development api_secret (loopback only).
    case auto
    /// Always served; with other credentials the page asks for a user token to be pasted.
    case on = "true"
    /// Never served: `/demo` is 404 like any unknown route.
    case off = "false"

    /// Whether the page is served by a server whose secret is (or is not) the development one.
    package func serves(usingDevelopmentSecret: Bool) -> Bool {
        switch self {
        case .auto: usingDevelopmentSecret
        case .on: true
        case .off: false
        }
    }
}
