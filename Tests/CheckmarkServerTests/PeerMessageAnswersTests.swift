import CheckmarkCore
import Foundation
import Testing

@testable import CheckmarkServer

/// Issue 45: a forwarded command's answer reaches the asking node whole, so that it answers its
/// client exactly as the shard's owner would have.
@Suite("Forwarded commands and their answers travel whole between nodes")
struct PeerMessageAnswersTests {
    static let general = ChannelCID(type: "messaging", id: "general")

    private static func roundTrip(_ message: PeerMessage) -> PeerMessage? { PeerMessage(message.encoded) }

    @Test(arguments: [
        ReceiptsError.unknownUser("u"), .unknownChannel(general), .unknownChannelType("team"), .unknownMessage("m1"),
        .unknownConnection("c1"), .notAMember(user: "carol", cid: general), .messageTooOld("m0"), .duplicate("message m1"),
        .tooManyWatchedChannels(limit: 50), .tooManyConnections(user: "u", limit: 64), .invalidArgument("text is too long"),
        .archivedText(cid: general, position: 7), .channelsNotLoaded([general, ChannelCID(type: "team", id: "x")]),
        .notAllowed("custom events are off"),
    ])
    func everyRefusalKeepsItsCaseAndParts(_ error: ReceiptsError) {
        let message = PeerMessage.forwarded(to: "n1", id: 3, answer: .refused(error), body: nil)
        #expect(Self.roundTrip(message) == message)
    }

    /// A relayed typing or custom event keeps its parts, and the nodes it is for when the links
    /// reached the others (regression, review: NOTIFY sent it again to every node).
    @Test func aRelayedSignalKeepsItsPartsAndItsAddressees() {
        for to: [String]? in [nil, ["n2", "n3"]] {
            let message = PeerMessage.signal(from: "n1", type: "typing.start", cid: Self.general, user: "ann",
                                             event: #"{"type":"typing.start"}"#, to: to)
            #expect(Self.roundTrip(message) == message)
        }
    }

    @Test func everyAnswerKeepsItsKindAndAMessageItsFieldsButText() {
        let sent = Message(id: "m1", cid: Self.general, userID: "bob", text: "", kind: .regular, createdAt: Timestamp(rawValue: 1_700_000_000_000_123),
                           parentID: "p", showInChannel: true, silent: true)
        for answer: ForwardAnswer in [.applied(.none), .applied(.message(sent)), .applied(.channel(Self.general, created: true)),
                                      .unchanged, .notOwner, .failed("disk full")] {
            let message = PeerMessage.forwarded(to: "n1", id: 9, answer: answer, body: nil)
            #expect(Self.roundTrip(message) == message, "\(answer)")
        }
        // The text travels in the forwarded command, not back: the asking node puts it in again.
        let outcome = ForwardAnswer.applied(.message(sent)).outcome(of: .sendMessage(cid: Self.general, userID: "bob", draft: MessageDraft(id: "m1", text: "hello")))
        guard case .success(let result) = outcome, case .message(let message) = result.result else {
            Issue.record("no message in \(outcome)")
            return
        }
        #expect(message.text == "hello")
    }

    @Test func aResultNoOwnerGivesIsAnsweredAsAFailureNotAsTwoAnswers() {
        let encoded = PeerMessage.forwarded(to: "n1", id: 1, answer: .applied(.user(User(id: "u"))), body: nil).encoded
        #expect(encoded.components(separatedBy: "\"answer\"").count == 2, "\(encoded)")
        #expect(PeerMessage(encoded) == .forwarded(to: "n1", id: 1, answer: .failed("the owner's result cannot be forwarded"), body: nil))
    }

    @Test(arguments: [nil, CommandAnswer.message, .readState(cid: general, reader: "bob", thread: nil),
                      .readState(cid: general, reader: "bob", thread: "m0")])
    func aForwardedCommandArrivesAsSentWithTheAnswerItAsksFor(_ answering: CommandAnswer?) {
        let message = PeerMessage.forward(from: "n2", to: "n1", id: 4,
                                          command: .markRead(cid: Self.general, userID: "bob", messageID: "m1"), answering: answering)
        #expect(Self.roundTrip(message) == message)
    }

    /// Issue 45: the owner sends the REST answer back with the result, so that the asking node
    /// answers without first catching up with the owner's commit.
    @Test func theOwnersRESTAnswerTravelsWhole() {
        let body = #"{"event":{"type":"message.read","cid":"messaging:general","user":{"id":"bob","name":"Böb "quoted""}}}"#
        let message = PeerMessage.forwarded(to: "n1", id: 5, answer: .unchanged, body: body)
        #expect(Self.roundTrip(message) == message)
    }
}
