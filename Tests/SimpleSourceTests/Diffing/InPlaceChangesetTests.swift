// Whole replacements that keep every id in place: the diff pairs items by position and the new snapshot
// shares the old index, so nothing is hashed; both agree with the general match.

@testable import SimpleSourceCore
@testable import SimpleSourceViews
@testable import SimpleSourceWire
import SimpleSourceTesting
import Testing

@Suite("Changesets and replacements that keep every id in place")
struct InPlaceChangesetTests {
  static let settings = RandomTestSettings.current(
    defaultCases: 600, casesVariable: "SIMPLESOURCE_DERIVED_CASES")

  /// `old` with some contents changed: item versions and section headers; sections left alone keep their
  /// items' storage.
  static func contentsChanged(
    _ old: [TestSection], using random: inout some RandomNumberGenerator
  ) -> [TestSection] {
    var new = old
    let rate = [0, 0.02, 0.3, 1][Int.random(in: 0..<4, using: &random)]
    for section in new.indices where Bool.random(using: &random) {
      if Int.random(in: 0..<4, using: &random) == 0 {
        new[section].header = (new[section].header ?? "") + "'"
      }
      for item in new[section].items.indices where Double.random(in: 0..<1, using: &random) < rate {
        new[section].items[item].version += 1
      }
    }
    return new
  }

  /// The changeset through the general match, never the in-place one.
  static func generalChangeset(
    from old: Snapshot<TestSection>, to new: Snapshot<TestSection>, refreshing: Set<String>
  ) -> Changeset<TestSection> {
    var planner = ChangesetPlanner(source: old, target: new, refreshing: refreshing)
    planner.matchSections()
    planner.matchItems()
    planner.findMoves()
    return Changeset(source: old, target: new, planner: planner, refreshing: refreshing)
  }

  @Test("a contents-only change is matched in place and equals the general match, with exact refreshes")
  func randomContentsChanges() throws {
    let settings = Self.settings
    var random = SeededGenerator(seed: settings.seed(forShard: 73))
    let pairs = RandomSnapshotPairs(maxSections: 12, maxItems: 200)
    for index in 0..<settings.cases {
      let oldSections = pairs.next(using: &random).old
      let newSections = Self.contentsChanged(oldSections, using: &random)
      let old = try Snapshot(oldSections)
      let new = try Snapshot(newSections)
      let ids = oldSections.flatMap(\.items).map(\.id)
      let refreshing: Set<String> =
        Bool.random(using: &random) || ids.isEmpty
        ? [] : Set((0..<3).map { _ in ids.randomElement(using: &random)! } + ["not-an-id"])
      let place = "case \(index): \(old) → \(new), refreshing \(refreshing.sorted()); \(settings.replay)"

      var planner = ChangesetPlanner(source: old, target: new, refreshing: refreshing)
      planner.matchSections()
      let inPlace = planner.matchItemsInPlace()
      #expect(inPlace, "\(place)")
      let changeset = Changeset(from: old, to: new, refreshing: refreshing)
      let general = Self.generalChangeset(from: old, to: new, refreshing: refreshing)
      #expect(changeset.itemChanges == general.itemChanges, "\(place)")
      #expect(changeset.sectionChanges == general.sectionChanges, "\(place)")
      #expect(changeset.stages.map(\.kind) == general.stages.map(\.kind), "\(place)")
      #expect(changeset.stages.map(\.itemChanges) == general.stages.map(\.itemChanges), "\(place)")
      #expect(changeset.stages.map(\.sectionChanges) == general.stages.map(\.sectionChanges), "\(place)")

      // Exactly the changed or refreshed items are updated, at their own positions; nothing else.
      var expected: [ItemPosition] = []
      for (section, items) in oldSections.map(\.items).enumerated() {
        for (item, old) in items.enumerated()
        where old != newSections[section].items[item] || refreshing.contains(old.id) {
          expected.append(ItemPosition(section: section, item: item))
        }
      }
      #expect(changeset.itemChanges.updates.map(\.from) == expected, "\(place)")
      #expect(changeset.itemChanges.updates.allSatisfy { $0.from == $0.to }, "\(place)")
      #expect(changeset.itemChanges.deletes.isEmpty && changeset.itemChanges.inserts.isEmpty, "\(place)")
      #expect(changeset.itemChanges.moves.isEmpty && changeset.sectionChanges.moves.isEmpty, "\(place)")
      #expect(changeset.stages.count <= 1, "\(place)")
      if let last = changeset.stages.last { #expect(last.state.sections == newSections, "\(place)") }
      if refreshing.isEmpty, let failure = check(old, new) {
        Issue.record("\(place)\n\(failure)")
        return
      }
    }
  }

  @Test(
    "an item or a section out of place sends the diff to the general match",
    arguments: [
      ("A: a b c | B: d e f | C:", "A: a b c | B: d x f | C:"),
      ("A: a b c | B: d e f | C:", "A: a b c | B: f e d | C:"),
      ("A: a b c | B: d e f | C:", "A: a b c | B: d e f | C: y"),
      ("A: a b | B: c | C: d", "B: c | A: a b | C: d"),
      ("A: a b | B: c | C: d", "A: a b | B: c"), ("A: a b | B: c | C: d", "A: a b | X: c | C: d"),
    ])
  func outOfPlace(before: String, after: String) throws {
    let (oldSections, newSections) = (layout(before), layout(after))
    let old = try Snapshot(oldSections)
    let new = try Snapshot(newSections)
    var planner = ChangesetPlanner(source: old, target: new)
    planner.matchSections()
    let inPlace = planner.matchItemsInPlace()
    #expect(!inPlace)
    #expect(planner.itemSummary.updates.isEmpty)
    let changeset = Changeset(from: old, to: new)
    #expect(changeset.itemChanges == Self.generalChangeset(from: old, to: new, refreshing: []).itemChanges)
    #expect(!changeset.isEmpty)
    #expect(check(old, new) == nil)
    #expect(try FlatSnapshot(oldSections).reindexed(newSections) == nil)
  }

  @Test("a contents-only change hashes nothing, and compares only the sections that were edited")
  func inPlaceCalls() throws {
    let counter = CallCounter()
    let sectionSize = 100
    let sections = (0..<200).map { section in
      Section(
        id: section,
        items: ChangesetComplexityTests.items(
          (section * sectionSize)..<((section + 1) * sectionSize), counting: counter))
    }
    var edited = sections
    edited[7].items[42] = CountingItem(id: edited[7].items[42].id, version: 1)
    let old = try Snapshot(sections)
    let new = try Snapshot(edited)
    let copy = try Snapshot(sections)
    counter.reset()
    let changeset = Changeset(from: old, to: new)
    // The edited section: one id comparison and one `==` per item; the other 199 share storage.
    #expect(counter.hashes == 0, "hashes: \(counter.hashes)")
    #expect(counter.equalities <= 2 * sectionSize, "equalities: \(counter.equalities)")
    counter.reset()
    let unchanged = Changeset(from: old, to: copy)
    #expect(counter.hashes == 0 && counter.equalities == 0)
    #expect(unchanged.isEmpty)
    #expect(changeset.itemChanges.updates.map(\.from) == [ItemPosition(section: 7, item: 42)])
    #expect(changeset.stages.map(\.kind) == [.refresh])
  }

  @Test("a snapshot of the same ids in place shares the index and finds every item")
  func reindexed() throws {
    let oldSections = layout("A: a b c | B: d e | C:")
    var newSections = oldSections
    newSections[0].items[1].version = 3
    newSections[1].header = "B v1"
    let flat = try FlatSnapshot(oldSections)
    let shared = try #require(flat.reindexed(newSections))
    let snapshot = Snapshot(flat: shared)
    #expect(snapshot.sections == newSections)
    for (section, items) in newSections.map(\.items).enumerated() {
      for (index, item) in items.enumerated() {
        #expect(snapshot.position(ofItem: item.id) == ItemPosition(section: section, item: index))
        #expect(snapshot.item(withID: item.id) == item)
      }
    }
    #expect(snapshot.index(ofSection: "C") == 2)
  }
}

@Suite("BasicDataSource whole replacements that keep every id in place", .timeLimit(.minutes(30)))
struct InPlaceReplacementTests {
  @Test("setSections and update with the same ids hash no id, and publish exactly the changed items")
  func replacementHashesNothing() async throws {
    let counter = CallCounter()
    let sections = (0..<10).map { section in
      Section(
        id: section,
        items: ChangesetComplexityTests.items((section * 1_000)..<((section + 1) * 1_000), counting: counter))
    }
    let source = try BasicDataSource(sections: sections)
    var batches = await source.subscribe().batches.makeAsyncIterator()
    var edited = sections
    edited[3].items[500] = CountingItem(id: edited[3].items[500].id, version: 1)
    counter.reset()
    try await source.setSections(edited)
    let first = try #require(await batches.next())
    // The batch names the one updated id (one hash); validation and the diff hash nothing.
    #expect(counter.hashes <= 2, "hashes: \(counter.hashes)")
    #expect(first.changeset.itemChanges.updates.map(\.from) == [ItemPosition(section: 3, item: 500)])

    counter.reset()
    try await source.update { sections in
      sections[9].items[0] = CountingItem(id: sections[9].items[0].id, version: 2)
    }
    let second = try #require(await batches.next())
    #expect(counter.hashes <= 2, "hashes: \(counter.hashes)")
    #expect(second.changeset.itemChanges.updates.map(\.from) == [ItemPosition(section: 9, item: 0)])
    let snapshot = await source.snapshot
    for section in 0..<10 {
      for item in stride(from: 0, to: 1_000, by: 97) {
        let id = CountingID(value: section * 1_000 + item, counter: counter)
        #expect(snapshot.position(ofItem: id) == ItemPosition(section: section, item: item))
      }
    }
  }

  @Test("after a replacement in place, a duplicate id is still rejected and the source left as it was")
  func duplicateAfterReplacementInPlace() async throws {
    let source = try TestSource(sections: layout("A: a b c | B: d e"))
    try await source.setSections(layout("A: a b' c | B: d e"))
    let before = await source.snapshot
    await #expect(throws: DataSourceError<String, String>.self) {
      try await source.setSections(layout("A: a b c | B: d a"))
    }
    #expect(await source.snapshot.sections == before.sections)
    try await source.setSections(layout("A: a b c | B: e d"))
    #expect(await source.snapshot.sections == layout("A: a b c | B: e d"))
    #expect(await source.snapshot.position(ofItem: "d") == ItemPosition(section: 1, item: 1))
  }
}
