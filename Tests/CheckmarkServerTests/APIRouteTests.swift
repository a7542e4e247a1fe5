import CheckmarkCore
import CheckmarkServer
import Foundation
import Testing

/// The route table (``APIRoute``) and `docs/openapi.json` describe the same API, and requests find their route.
@Suite("HTTP routes and the OpenAPI document")
struct APIRouteTests {
    static var documentURL: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/openapi.json").standardized
    }

    @Test func openAPIDocumentListsExactlyTheServedRoutes() throws {
        let document = try JSONParser.parse(Array(try Data(contentsOf: Self.documentURL)))
        #expect(document["openapi"]?.stringValue?.hasPrefix("3.1") == true)
        var documented: Set<String> = []
        for (template, item) in document["paths"]?.objectValue ?? [] {
            for (method, _) in item.objectValue ?? [] where method != "parameters" {
                documented.insert("\(method.uppercased()) \(template)")
            }
        }
        let served = Set(APIRoute.allCases.map { "\($0.method) \($0.template)" })
        #expect(documented.subtracting(served).isEmpty, "documented but not served: \(documented.subtracting(served).sorted())")
        #expect(served.subtracting(documented).isEmpty, "served but not documented: \(served.subtracting(documented).sorted())")
    }

    @Test(arguments: [
        ("POST", "/channels/messaging/query", APIRoute.queryDistinctChannel),
        ("POST", "/channels/messaging/general", .updateChannel),
        ("POST", "/channels/messaging/general/query", .queryChannel),
        ("POST", "/channels/read", .markAllRead),
        ("POST", "/channels/delivered", .markDelivered),
        ("POST", "/channels", .queryChannels),
        ("PATCH", "/users", .updateUsersPartial),
        ("GET", "/channeltypes/", .listChannelTypes),
        ("GET", "/channels/messaging/general/messages/m1/receipts", .messageReceipts),
    ])
    func literalSegmentsWinOverPlaceholders(method: String, path: String, route: APIRoute) {
        guard case .found(let found, _) = APIRoute.match(method: method, path: path) else {
            Issue.record("\(method) \(path) matched nothing")
            return
        }
        #expect(found == route)
    }

    @Test func pathParametersArePercentDecoded() {
        #expect(APIRoute.match(method: "POST", path: "/channels/messaging/%21members-ab/query")
            == .found(.queryChannel, parameters: ["type": "messaging", "id": "!members-ab"]))
    }

    @Test func wrongMethodListsTheAllowedOnes() {
        #expect(APIRoute.match(method: "DELETE", path: "/users") == .wrongMethod(allowed: ["POST", "PATCH"]))
        #expect(APIRoute.match(method: "GET", path: "/nothing/here") == .notFound)
    }
}
