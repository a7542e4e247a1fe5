import CheckmarkCore
import Testing

/// The engine's users, found by id, each held once.
@Suite("The user table")
struct UserTableTests {
    @Test func aUserIsFoundByIdAndReplacedWhenStoredAgain() {
        var table = UserTable()
        table["a"] = User(id: "a", name: "Ann")
        table["b"] = User(id: "b")
        #expect(table["a"]?.name == "Ann" && table["b"] != nil && table["c"] == nil)
        table["a"] = User(id: "a", name: "Anna", privacy: PrivacySettings(readReceipts: false))
        #expect(table.count == 2, "storing a user again replaces it")
        #expect(table["a"]?.name == "Anna" && table["a"]?.privacy.readReceipts == false)
        table["a"]?.image = "https://example.com/a.png"
        #expect(table["a"]?.image == "https://example.com/a.png" && table["a"]?.name == "Anna", "a change in place keeps the rest")
    }

    @Test func storingNilRemovesTheUser() {
        var table = UserTable()
        table["a"] = User(id: "a")
        table["a"] = nil
        table["missing"] = nil
        #expect(table.isEmpty && table["a"] == nil)
    }

    @Test func tablesAreEqualOnlyWhenEveryUserIsEqualFieldForField() {
        var one = UserTable(), other = UserTable()
        one["a"] = User(id: "a", name: "Ann")
        other["a"] = User(id: "a", name: "Ann")
        #expect(one == other)
        other["a"] = User(id: "a", name: "Anne")
        #expect(one != other, "same ids, another name")
        other["a"] = User(id: "a", name: "Ann")
        other["b"] = User(id: "b")
        #expect(one != other, "one more user")
    }

    @Test func theTableListsEveryUserOnce() {
        var table = UserTable()
        for id in ["c", "a", "b", "a"] { table[id] = User(id: id) }
        #expect(table.values.map(\.id).sorted() == ["a", "b", "c"])
        #expect(table.map(\.id).sorted() == ["a", "b", "c"])
    }
}
