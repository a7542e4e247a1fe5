/// Who is in a load run and what they do: users (one connection each, plus optional slow extra
/// connections), channels with their members, who publishes where and how fast, and how clients
/// confirm. Built by a scenario (``LoadScenario``), executed by ``LoadRun``.
package struct Workload: Sendable {
    /// Members of each channel, as user indices. Every member watches its channels.
    package var channels: [[Int]]
    package var users: Int
    /// Channel type of every channel (created when it is not `messaging`).
    package var channelType = "messaging"
    package var deliveryEvents = false
    /// Users whose read and delivery receipts are turned off.
    package var privacyOff: Set<Int> = []
    /// Publishing users and the channels each sends to, round robin.
    package var publishers: [Int: [Int]] = [:]
    /// Messages per second over all publishers.
    package var messageRate: Double = 0
    package var payloadBytes = 100
    /// How clients confirm (nil: they do not).
    package var confirmations: Confirmations?
    /// Extra connections (of user 0, watching its channels) that stop reading once set up.
    package var slowConsumers = 0

    package struct Confirmations: Sendable {
        /// How often each client confirms delivery of what it received (Stream's SDKs: about a second).
        package var intervalSeconds: Double = 1
        /// Mark read what the previous round confirmed delivered.
        package var read = true
        /// Chance per round that a client marks a channel unread again.
        package var unreadProbability = 0.0

        package init(intervalSeconds: Double = 1, read: Bool = true, unreadProbability: Double = 0) {
            self.intervalSeconds = intervalSeconds
            self.read = read
            self.unreadProbability = unreadProbability
        }
    }

    package init(channels: [[Int]], users: Int) {
        self.channels = channels
        self.users = users
    }

    /// The channels of each user.
    package func membership() -> [[Int]] {
        var result = Array(repeating: [Int](), count: users)
        for (channel, members) in channels.enumerated() {
            for member in members { result[member].append(channel) }
        }
        return result
    }

    /// Deliveries one message causes on average (the members watching its channel).
    package var meanFanOut: Double {
        let published = publishers.values.flatMap { $0 }
        guard !published.isEmpty else { return 0 }
        return Double(published.map { channels[$0].count }.reduce(0, +)) / Double(published.count)
    }
}
