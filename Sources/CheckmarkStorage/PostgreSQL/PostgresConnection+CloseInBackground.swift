import PostgresNIO

extension PostgresConnection {
    /// Starts closing the connection without waiting, and keeps it alive until it is closed: the
    /// client library requires a connection to be closed before it is released (it asserts so), and
    /// a connection given up on is often the caller's last reference.
    func closeInBackground() {
        close().whenComplete { _ in withExtendedLifetime(self) {} }
    }
}
