// Tests of Snapshot: validation with typed errors, O(1) lookups both ways, and Codable round trips.

import Foundation
import SimpleSource
import SimpleSourceTesting
import Testing

@Suite("Snapshot")
struct SnapshotTests {
  @Test("looks up items and sections by id and by position")
  func lookups() {
    let value = snapshot("A: a b | B: | C: c")
    #expect(value.itemCount == 3)
    #expect(value.index(ofSection: "C") == 2)
    #expect(value.index(ofSection: "Z") == nil)
    #expect(value.position(ofItem: "c") == ItemPosition(section: 2, item: 0))
    #expect(value.position(ofItem: "z") == nil)
    #expect(value[ItemPosition(section: 0, item: 1)].id == "b")
    #expect(value.item(withID: "b") == TestItem("b"))
    #expect(value.section(withID: "B")?.items.isEmpty == true)
    #expect(value.contains(item: "a") && !value.contains(item: "q"))
    #expect(
      value.contains(ItemPosition(section: 0, item: 1)) && !value.contains(ItemPosition(section: 1, item: 0)))
    #expect(value.sectionIDs == ["A", "B", "C"])
    #expect(value.itemIDs(inSection: 0) == ["a", "b"])
    #expect(Snapshot<TestSection>().isEmpty)
  }

  @Test(
    "rejects duplicate item ids anywhere, naming the id and both positions",
    arguments: [
      ("A: a a", "a", [ItemPosition(section: 0, item: 0), ItemPosition(section: 0, item: 1)]),
      ("A: a b | B: c b", "b", [ItemPosition(section: 0, item: 1), ItemPosition(section: 1, item: 1)]),
      ("A: | B: x | C: y x", "x", [ItemPosition(section: 1, item: 0), ItemPosition(section: 2, item: 1)]),
    ] as [(String, String, [ItemPosition])])
  func duplicateItems(text: String, id: String, positions: [ItemPosition]) {
    #expect {
      try Snapshot(layout(text))
    } throws: { error in
      guard let error = error as? DataSourceError<String, String> else { return false }
      return error.code == .duplicateItemID && error.itemID == id && error.positions == positions
    }
  }

  @Test("rejects duplicate section ids, naming the id and both indices")
  func duplicateSections() {
    do {
      _ = try Snapshot(layout("A: a | B: b | A: c"))
      Issue.record("expected an error")
    } catch {
      #expect(error.code == .duplicateSectionID)
      #expect(error.sectionID == "A")
      #expect(error.sectionIndices == [0, 2])
      #expect("\(error)".contains("A"))
    }
  }

  @Test("round-trips through JSON, and decoding validates")
  func codable() throws {
    let value = snapshot("A': a b'' | B: c")
    let data = try JSONEncoder().encode(value)
    let decoded = try JSONDecoder().decode(Snapshot<TestSection>.self, from: data)
    #expect(decoded == value)
    #expect(decoded.position(ofItem: "c") == ItemPosition(section: 1, item: 0))
    let bad = try JSONEncoder().encode(layout("A: a | B: a"))
    #expect(throws: DecodingError.self) { try JSONDecoder().decode(Snapshot<TestSection>.self, from: bad) }
  }

  @Test("a section's own content is separate from its items")
  func sectionContent() {
    let plain = Section<Int, TestItem>(id: 1, header: "One", items: [TestItem("a")])
    var renamed = plain
    renamed.header = "Uno"
    var refilled = plain
    refilled.items = []
    #expect(!plain.isContentEqual(to: renamed))
    #expect(plain.isContentEqual(to: refilled))
  }
}
