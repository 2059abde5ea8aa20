// G8: a table of bad inputs, each a typed error naming what was wrong, with no change, version or batch.

import SimpleSource
import SimpleSourceTesting
import Testing

/// One bad mutation on a source holding `A: a b c | B: d e | C:`, and the error it must raise.
struct BadInput: Sendable, CustomTestStringConvertible {
  typealias Mutation = @Sendable (TestSource) async throws -> Void
  let name: String
  let mutation: Mutation
  let code: DataSourceErrorCode?
  let sectionID: String?
  let itemID: String?
  let sectionIndices: [Int]
  let positions: [ItemPosition]

  init(
    _ name: String, _ code: DataSourceErrorCode?, section: String? = nil, item: String? = nil,
    indices: [Int] = [],
    positions: [ItemPosition] = [], _ mutation: @escaping Mutation
  ) {
    self.name = name
    self.code = code
    self.sectionID = section
    self.itemID = item
    self.sectionIndices = indices
    self.positions = positions
    self.mutation = mutation
  }
  var testDescription: String { name }
}

struct Refusal: Error {}

private func at(_ section: Int, _ item: Int) -> ItemPosition { ItemPosition(section: section, item: item) }

@Suite("BasicDataSource rejects bad input atomically", .timeLimit(.minutes(30)))
struct DataSourceBadInputTests {
  static let cases: [BadInput] = [
    // Duplicate ids, in every position.
    .init(
      "append an item whose id exists in its section", .duplicateItemID, item: "a",
      positions: [at(0, 0), at(0, 3)]
    ) {
      try await $0.appendItems([item("a")], toSection: "A")
    },
    .init(
      "append an item whose id exists in another section", .duplicateItemID, item: "d",
      positions: [at(0, 3), at(1, 0)]
    ) {
      try await $0.appendItems([item("d")], toSection: "A")
    },
    .init("append two items with one id", .duplicateItemID, item: "x", positions: [at(2, 0), at(2, 1)]) {
      try await $0.appendItems([item("x"), item("x")], toSection: "C")
    },
    .init(
      "insert an existing id before an item", .duplicateItemID, item: "b", positions: [at(0, 0), at(0, 2)]
    ) {
      try await $0.insertItems([item("b")], before: "a")
    },
    .init(
      "insert an existing id after an item", .duplicateItemID, item: "e", positions: [at(0, 1), at(1, 1)]
    ) {
      try await $0.insertItems([item("e")], after: "a")
    },
    .init("append a section whose id exists", .duplicateSectionID, section: "A", indices: [0, 3]) {
      try await $0.appendSections([TestSection(id: "A")])
    },
    .init("append two sections with one id", .duplicateSectionID, section: "X", indices: [3, 4]) {
      try await $0.appendSections([TestSection(id: "X"), TestSection(id: "X")])
    },
    .init(
      "append a section holding an existing item id", .duplicateItemID, item: "a",
      positions: [at(0, 0), at(3, 0)]
    ) {
      try await $0.appendSections([TestSection(id: "X", items: [item("a")])])
    },
    .init(
      "append a section repeating an item id", .duplicateItemID, item: "x", positions: [at(3, 0), at(3, 1)]
    ) {
      try await $0.appendSections([TestSection(id: "X", items: [item("x"), item("x")])])
    },
    .init("insert a section whose id exists", .duplicateSectionID, section: "B", indices: [0, 2]) {
      try await $0.insertSections([TestSection(id: "B")], before: "A")
    },
    .init(
      "insert an existing section id after a section", .duplicateSectionID, section: "B", indices: [1, 2]
    ) {
      try await $0.insertSections([TestSection(id: "B")], after: "A")
    },
    .init(
      "insert an existing section id before the first", .duplicateSectionID, section: "C", indices: [0, 3]
    ) {
      try await $0.insertSections([TestSection(id: "C")], before: "A")
    },
    .init(
      "insert an existing id before a later item", .duplicateItemID, item: "c",
      positions: [at(0, 1), at(0, 3)]
    ) {
      try await $0.insertItems([item("c")], before: "b")
    },
    .init(
      "insert an existing id before an earlier item", .duplicateItemID, item: "a",
      positions: [at(0, 0), at(0, 2)]
    ) {
      try await $0.insertItems([item("a")], before: "c")
    },
    .init(
      "insert a section before one whose item it repeats", .duplicateItemID, item: "d",
      positions: [at(0, 0), at(2, 0)]
    ) {
      try await $0.insertSections([TestSection(id: "X", items: [item("d")])], before: "A")
    },
    .init("replace all with duplicate items", .duplicateItemID, item: "q", positions: [at(0, 0), at(1, 0)]) {
      try await $0.setSections(layout("A: q | B: q"))
    },
    .init("replace all with duplicate sections", .duplicateSectionID, section: "A", indices: [0, 1]) {
      try await $0.setSections(layout("A: | A:"))
    },
    .init(
      "a transaction that leaves a duplicate item", .duplicateItemID, item: "a",
      positions: [at(0, 0), at(1, 2)]
    ) {
      try await $0.update { $0[1].items.append(item("a")) }
    },
    .init(
      "a transaction that leaves a duplicate section", .duplicateSectionID, section: "C", indices: [2, 3]
    ) {
      try await $0.update { $0.append(TestSection(id: "C")) }
    },
    // Unknown ids.
    .init("append to an unknown section", .unknownSectionID, section: "Z") {
      try await $0.appendItems([item("x")], toSection: "Z")
    },
    .init("insert before an unknown item", .unknownItemID, item: "zz") {
      try await $0.insertItems([item("x")], before: "zz")
    },
    .init("insert after an unknown item", .unknownItemID, item: "zz") {
      try await $0.insertItems([item("x")], after: "zz")
    },
    .init("delete an unknown item", .unknownItemID, item: "zz") { try await $0.deleteItems(["zz"]) },
    .init("delete a known and an unknown item", .unknownItemID, item: "zz") {
      try await $0.deleteItems(["a", "zz"])
    },
    .init("replace an unknown item", .unknownItemID, item: "zz") { try await $0.replaceItem(item("zz", 1)) },
    .init("move an unknown item", .unknownItemID, item: "zz") { try await $0.moveItem("zz", before: "a") },
    .init("move before an unknown item", .unknownItemID, item: "zz") {
      try await $0.moveItem("a", before: "zz")
    },
    .init("move an item to an unknown section", .unknownSectionID, section: "Z") {
      try await $0.moveItem("a", toSection: "Z")
    },
    .init("refresh an unknown item", .unknownItemID, item: "zz") { try await $0.refreshItems(["b", "zz"]) },
    .init("insert before an unknown section", .unknownSectionID, section: "Z") {
      try await $0.insertSections([TestSection(id: "X")], before: "Z")
    },
    .init("insert after an unknown section", .unknownSectionID, section: "Z") {
      try await $0.insertSections([TestSection(id: "X")], after: "Z")
    },
    .init("delete an unknown section", .unknownSectionID, section: "Z") {
      try await $0.deleteSections(["A", "Z"])
    },
    .init("move after an unknown section", .unknownSectionID, section: "Z") {
      try await $0.moveSection("A", after: "Z")
    },
    .init("update an unknown section", .unknownSectionID, section: "Z") {
      try await $0.updateSection(TestSection(id: "Z", header: "new"))
    },
    // Indices out of range.
    .init("move from a section out of range", .sectionIndexOutOfRange, indices: [5]) {
      try await $0.moveItem(at: at(5, 0), to: at(0, 0))
    },
    .init("move from an item out of range", .itemIndexOutOfRange, positions: [at(0, 9)]) {
      try await $0.moveItem(at: at(0, 9), to: at(0, 0))
    },
    .init("move to a section out of range", .sectionIndexOutOfRange, indices: [7]) {
      try await $0.moveItem(at: at(0, 0), to: at(7, 0))
    },
    .init("move past the end of another section", .itemIndexOutOfRange, positions: [at(1, 3)]) {
      try await $0.moveItem(at: at(0, 0), to: at(1, 3))
    },
    .init("move past the end of its own section", .itemIndexOutOfRange, positions: [at(0, 3)]) {
      try await $0.moveItem(at: at(0, 0), to: at(0, 3))
    },
    .init("move from an empty section", .itemIndexOutOfRange, positions: [at(2, 0)]) {
      try await $0.moveItem(at: at(2, 0), to: at(0, 0))
    },
    .init("move a section out of range", .sectionIndexOutOfRange, indices: [3]) {
      try await $0.moveSection("A", to: 3)
    },
    // Moves relative to themselves.
    .init("move an item before itself", .moveRelativeToItself, item: "b", positions: [at(0, 1)]) {
      try await $0.moveItem("b", before: "b")
    },
    .init("move an item after itself", .moveRelativeToItself, item: "b", positions: [at(0, 1)]) {
      try await $0.moveItem("b", after: "b")
    },
    .init("move a section before itself", .moveRelativeToItself, section: "B", indices: [1]) {
      try await $0.moveSection("B", before: "B")
    },
    // Transactions whose body throws.
    .init("a transaction that throws before editing", nil) { try await $0.update { _ in throw Refusal() } },
    .init("a transaction that edits, then throws", nil) {
      try await $0.update { sections in
        sections.removeAll()
        throw Refusal()
      }
    },
    // Recorded transactions: a bad edit after good ones, and a body that throws after editing.
    .init("a recorded transaction whose third edit is bad", .unknownItemID, item: "z") {
      try await $0.transaction { transaction throws(TestSource.Error) in
        try transaction.deleteItems(["a"])
        try transaction.appendSections([TestSection(id: "D", items: [item("x")])])
        try transaction.moveItem("z", before: "b")
      }
    },
    .init("a recorded transaction that edits, then throws", nil) {
      try await $0.transaction { transaction in
        try transaction.replaceItem(item("b", 1))
        try transaction.refreshItems(["c"])
        throw Refusal()
      }
    },
  ]

  @Test("a bad mutation is a typed error and changes nothing", arguments: cases)
  func badInput(_ example: BadInput) async throws {
    let source = try TestSource(sections: layout("A: a b c | B: d e | C:"))
    let before = await source.snapshot
    let recorder = await BatchRecorder(await source.subscribe())
    do {
      try await example.mutation(source)
      Issue.record("expected an error")
    } catch let error as DataSourceError<String, String> {
      #expect(error.code == example.code, "\(error)")
      #expect(error.sectionID == example.sectionID, "\(error)")
      #expect(error.itemID == example.itemID, "\(error)")
      #expect(error.sectionIndices == example.sectionIndices, "\(error)")
      #expect(error.positions == example.positions, "\(error)")
    } catch {
      #expect(example.code == nil && error is Refusal, "unexpected \(error)")
    }
    #expect(await source.snapshot.sections == before.sections)
    #expect(await source.version == 0)
    // No batch: the next real change is the first batch, from version 0 to 1.
    try await source.appendItems([item("ok")], toSection: "C")
    await source.settled()
    await recorder.showing(await source.snapshot)
    #expect(await recorder.batches.map { [$0.from.number, $0.to.number] } == [[0, 1]])
    #expect(await recorder.violations == [])
  }

  @Test("the table holds at least 30 distinct bad inputs")
  func coverage() {
    #expect(Self.cases.count >= 30)
    #expect(Set(Self.cases.map(\.name)).count == Self.cases.count)
  }

  @Test("a source cannot be created with duplicate ids")
  func initValidates() {
    #expect(throws: DataSourceError<String, String>.self) { try TestSource(sections: layout("A: a | B: a")) }
  }
}
