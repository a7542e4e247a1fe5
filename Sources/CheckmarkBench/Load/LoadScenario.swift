import CheckmarkCore

/// The named load shapes of `checkmark bench`, each built as a ``Workload`` from its parameters.
package enum LoadScenario {
    /// `broadcast`: `connections` users, `channels` channels of `membersPerChannel` members each (or
    /// Zipf-sized: channel k has about connections/(k+1) members, at least 2); each channel's first
    /// member publishes to it; `rate` messages per second in total; no confirmations.
    package static func broadcast(connections: Int, channels: Int, membersPerChannel: Int?, rate: Double,
                                 payloadBytes: Int, slowConsumers: Int) -> Workload {
        let lists: [[Int]] = (0..<channels).map { k in
            let size = membersPerChannel.map { min($0, connections) } ?? max(2, connections / (k + 1))
            return (0..<size).map { (k * size + $0) % connections }
        }
        var workload = Workload(channels: lists.map(Self.unique), users: connections)
        workload.messageRate = rate
        workload.payloadBytes = payloadBytes
        workload.slowConsumers = slowConsumers
        workload.publishers = Self.firstMembersPublish(workload.channels)
        return workload
    }

    /// `receipts`: one group channel of `members`, all connected and publishing in turn at `rate`
    /// messages per second; every client confirms delivery each `confirmInterval` seconds (batched, as
    /// Stream's SDKs do) and marks read the next round; the channel type has delivery events on.
    package static func receipts(members: Int, rate: Double, confirmInterval: Double, payloadBytes: Int) -> Workload {
        var workload = Workload(channels: [Array(0..<members)], users: members)
        workload.channelType = "bench_receipts"
        workload.deliveryEvents = true
        workload.messageRate = rate
        workload.payloadBytes = payloadBytes
        workload.publishers = Dictionary(uniqueKeysWithValues: (0..<members).map { ($0, [0]) })
        workload.confirmations = .init(intervalSeconds: confirmInterval, read: true)
        return workload
    }

    /// `mixed`: `users` users in many small channels (2 to 6 members, about users/2 of them) and a few
    /// large ones (3 of up to 200 members); one user in ten has read and delivery receipts off; every
    /// client confirms each second and now and then marks a channel unread again.
    package static func mixed(users: Int, rate: Double, payloadBytes: Int, seed: UInt64) -> Workload {
        var random = SplitMix64(seed: seed)
        var lists: [[Int]] = []
        for _ in 0..<max(1, users / 2) {
            let size = 2 + Int(random.next() % 5)
            lists.append((0..<size).map { _ in Int(random.next() % UInt64(users)) })
        }
        for k in 0..<3 {
            let size = min(users, 200)
            lists.append((0..<size).map { (k * 97 + $0) % users })
        }
        var workload = Workload(channels: lists.map(Self.unique).filter { $0.count >= 2 }, users: users)
        workload.channelType = "bench_mixed"
        workload.deliveryEvents = true
        workload.privacyOff = Set((0..<users).filter { $0 % 10 == 3 })
        workload.messageRate = rate
        workload.payloadBytes = payloadBytes
        workload.publishers = Self.firstMembersPublish(workload.channels)
        workload.confirmations = .init(intervalSeconds: 1, read: true, unreadProbability: 0.02)
        return workload
    }

    static func unique(_ members: [Int]) -> [Int] {
        var seen = Set<Int>()
        return members.filter { seen.insert($0).inserted }
    }

    static func firstMembersPublish(_ channels: [[Int]]) -> [Int: [Int]] {
        var publishers: [Int: [Int]] = [:]
        for (index, members) in channels.enumerated() where !members.isEmpty { publishers[members[0], default: []].append(index) }
        return publishers
    }
}
