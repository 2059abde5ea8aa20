// CompositeDataSource against its model (the children's sections concatenated), under concurrent child
// writers and children added and removed, with clashing ids and the conformance suite.

import SimpleSource
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore

/// Applies a random edit to a child whose ids all carry `prefix`, so that children never clash.
func apply(_ edit: RandomEdit, prefix: String, to sections: inout [TestSection]) {
  func strip(_ id: String) -> String { String(id.dropFirst(prefix.count)) }
  var plain = sections.map { section in
    TestSection(
      id: strip(section.id), header: section.header,
      items: section.items.map { TestItem(strip($0.id), version: $0.version) })
  }
  edit.apply(to: &plain)
  sections = plain.map { section in
    TestSection(
      id: prefix + section.id, header: section.header,
      items: section.items.map { TestItem(prefix + $0.id, version: $0.version) })
  }
}

func child(_ prefix: String) throws -> BasicDataSource<TestSection> {
  try BasicDataSource(sections: layout("\(prefix)A: \(prefix)a \(prefix)b | \(prefix)B: \(prefix)c"))
}

@Suite("CompositeDataSource", .timeLimit(.minutes(30)))
struct CompositeDataSourceTests {
  static let settings = ProjectedDataSourceTests.settings

  @Test("after settling it shows its children's sections in order; children write and come and go")
  func model() async throws {
    let settings = Self.settings
    var random = SeededGenerator(seed: settings.seed(forShard: 60))
    var batches = 0
    for run in 0..<settings.cases {
      let children = try (0..<4).map { try child("c\($0)-") }
      let composite = try await CompositeDataSource(Array(children[0..<2]))
      let recorder = await BatchRecorder(await composite.subscribe(), refreshStyle: .reconfigure)
      let seeds = (0..<4).map { _ in random.next() }
      let removeFirst = Bool.random(using: &random)
      await withTaskGroup(of: Void.self) { group in
        for (index, child) in children.enumerated() {
          group.addTask {
            var random = SeededGenerator(seed: seeds[index])
            for _ in 0..<8 {
              let edit = RandomEdit(using: &random)
              _ = try? await child.update { apply(edit, prefix: "c\(index)-", to: &$0) }
            }
          }
        }
        group.addTask {
          try? await composite.append(children[2])
          try? await composite.insert(children[3], at: 1)
          if removeFirst { try? await composite.remove(children[0]) }
        }
      }
      await composite.settled()
      var expected: [TestSection] = []
      for child in await composite.children { expected += await child.snapshot.sections }
      let final = await composite.snapshot
      let place = "run \(run); \(settings.replay)"
      #expect(final.sections == expected, "\(place)")
      #expect(await composite.children.count == (removeFirst ? 3 : 4), "\(place)")
      await recorder.showing(final)
      let violations = await recorder.violations
      #expect(violations.isEmpty, "\(violations), \(place)")
      batches += await recorder.batches.count
      await recorder.cancel()
    }
    print("CompositeDataSource model: \(settings.cases) runs, \(batches) batches checked; \(settings.replay)")
  }

  @Test("keeps the contract (conformance suite)")
  func conformance() async {
    var conformance = DataSourceConformance(
      makeSource: {
        let children = [try child("x-"), try child("y-"), try child("z-")]
        return (source: try await CompositeDataSource(children), driver: children)
      },
      subscriberCount: { $0.subscriberCount },
      // Its own state: the children's sections, one after the other (G10).
      expecting: { _, children in
        var sections: [TestSection] = []
        for child in children { sections += await child.snapshot.sections }
        return (try? Snapshot(sections)) ?? Snapshot()
      }
    ) { children, random in
      let index = Int.random(in: 0..<children.count, using: &random)
      let child = children[index]
      let prefix = ["x-", "y-", "z-"][index]
      let edit = RandomEdit(using: &random)
      try await child.update { apply(edit, prefix: prefix, to: &$0) }
    }
    conformance.runs = ConformanceTests.settings.cases
    let report = await conformance.run(seed: ConformanceTests.settings.seed(forShard: 5))
    print("Conformance, CompositeDataSource: \(report)")
    #expect(report.passed, "\(report)")
    #expect(report.batches > 0)
  }

  @Test("clashing ids: a child is refused, or its clashing state held back and reported; nothing lost")
  func clashes() async throws {
    let first = try BasicDataSource(sections: layout("A: a b"))
    let second = try BasicDataSource(sections: layout("B: c"))
    let composite = try await CompositeDataSource([first, second])
    await #expect(throws: CompositionError(.duplicateSectionID, child: 2, id: "A")) {
      try await composite.append(try BasicDataSource(sections: layout("A: z")))
    }
    await #expect(throws: CompositionError(.duplicateItemID, child: 0, id: "a")) {
      try await composite.insert(try BasicDataSource(sections: layout("C: a")), at: 0)
    }
    await #expect(throws: CompositionError(.childAlreadyAdded, child: 1)) {
      try await composite.append(second)
    }
    await #expect(throws: CompositionError(.unknownChild)) { try await composite.remove(try child("q")) }
    await #expect(throws: CompositionError(.indexOutOfRange, child: 5)) {
      try await composite.insert(try child("q"), at: 5)
    }
    #expect(await composite.snapshot.sections == layout("A: a b | B: c"))
    #expect(await composite.version == 0)

    var errors = composite.errors.makeAsyncIterator()
    try await second.appendItems([TestItem("a")], toSection: "B")
    await composite.settled()
    #expect(await errors.next() == CompositionError(.duplicateItemID, child: 1, id: "a"))
    #expect(await composite.snapshot.sections == layout("A: a b | B: c"))
    try await first.deleteItems(["a"])
    await composite.settled()
    #expect(await composite.snapshot.sections == layout("A: b | B: c a"))
  }

  @Test("an empty composite, then children appended: the way to build one below iOS 16")
  func emptyThenAppended() async throws {
    let composite = CompositeDataSource<TestSection>()
    #expect(await composite.snapshot.sections.isEmpty)
    #expect(await composite.version == 0)
    let recorder = await BatchRecorder(await composite.subscribe())
    try await composite.append(try BasicDataSource(sections: layout("A: a b")))
    try await composite.append(try BasicDataSource(sections: layout("B: c")))
    await composite.settled()
    #expect(await composite.snapshot.sections == layout("A: a b | B: c"))
    await recorder.showing(await composite.snapshot)
    #expect(await composite.version == 2)
    #expect(await recorder.batches.last?.to.number == 2, "one batch per child, or both composed (G6)")
    #expect(await recorder.violations.isEmpty)
  }

  @Test("a child's one-item batch is shifted into place: positions in the composite's coordinates")
  func shiftedBatch() async throws {
    let first = try BasicDataSource(sections: layout("A: a b | B: c"))
    let second = try BasicDataSource(sections: layout("C: d e | D: f"))
    let composite = try await CompositeDataSource([first, second])
    let recorder = await BatchRecorder(await composite.subscribe())
    try await second.moveItem("f", before: "d")
    await composite.settled()
    await recorder.showing(await composite.snapshot)
    let batch = try #require(await recorder.batches.last)
    #expect(
      batch.changeset.itemChanges.moves == [
        ItemChange(id: "f", from: ItemPosition(section: 3, item: 0), to: ItemPosition(section: 2, item: 0))
      ])
    #expect(await composite.snapshot.sections == layout("A: a b | B: c | C: f d e | D:"))
    #expect(await composite.snapshot.position(ofItem: "e") == ItemPosition(section: 2, item: 2))
    #expect(await recorder.violations.isEmpty)
  }
}

extension CompositeDataSourceTests {
  @Test("a held-back child is shown as soon as the child it clashed with is removed")
  func removeShowsHeldChild() async throws {
    let first = try BasicDataSource(sections: layout("A: a b"))
    let second = try BasicDataSource(sections: layout("B: c"))
    let composite = try await CompositeDataSource([first, second])
    try await second.appendItems([TestItem("a")], toSection: "B")
    await composite.settled()
    #expect(await composite.snapshot.sections == layout("A: a b | B: c"), "held back while it clashes")
    try await composite.remove(first)
    // No write to `second` since: removing `first` alone must show its newest state.
    #expect(await composite.snapshot.sections == layout("B: c a"))
  }

  @Test("a held-back child shown later refreshes the items its held batches refreshed")
  func heldRefreshesKept() async throws {
    let first = try BasicDataSource(sections: layout("A: a"))
    let second = try BasicDataSource(sections: layout("B: b c"))
    let composite = try await CompositeDataSource([first, second])
    let recorder = await BatchRecorder(await composite.subscribe(), refreshStyle: .reconfigure)
    try await second.appendItems([TestItem("a")], toSection: "B")  // clashes: held back
    try await second.refreshItems(["b"])  // equal content, refreshed while held back
    await composite.settled()
    #expect(await composite.snapshot.sections == layout("A: a | B: b c"))
    try await composite.remove(first)
    #expect(await composite.snapshot.sections == layout("B: b c a"))
    await recorder.showing(await composite.snapshot)
    let last = try #require(await recorder.batches.last)
    #expect(last.changeset.forcedRefreshes == ["b"])
    #expect(last.changeset.itemChanges.updates.map(\.id) == ["b"])
    #expect(await recorder.violations.isEmpty)
  }

  @Test("two children that swap ids are shown once both have swapped")
  func swappedIDs() async throws {
    let first = try BasicDataSource(sections: layout("A: x"))
    let second = try BasicDataSource(sections: layout("B: y"))
    let composite = try await CompositeDataSource([first, second])
    var errors = composite.errors.makeAsyncIterator()
    try await first.update { $0 = layout("A: y") }
    await composite.settled()
    #expect(await errors.next() == CompositionError(.duplicateItemID, child: 0, id: "y"))
    try await second.update { $0 = layout("B: x") }
    await composite.settled()
    #expect(await composite.snapshot.sections == layout("A: y | B: x"))
  }

  @Test("each clashing child state is reported once")
  func clashReportedOnce() async throws {
    let first = try BasicDataSource(sections: layout("A: a"))
    let second = try BasicDataSource(sections: layout("B: b"))
    let third = try BasicDataSource(sections: layout("C: c"))
    let composite = try await CompositeDataSource([first, second, third])
    var errors = composite.errors.makeAsyncIterator()
    try await second.appendItems([TestItem("a")], toSection: "B")
    await composite.settled()
    // A second, different clash marks the end of what the first one reported.
    try await third.appendItems([TestItem("b")], toSection: "C")
    await composite.settled()
    #expect(await errors.next() == CompositionError(.duplicateItemID, child: 1, id: "a"))
    #expect(await errors.next() == CompositionError(.duplicateItemID, child: 2, id: "b"))
  }

  @Test("a child's batch refreshes only the child's own items")
  func forcedRefreshesStayInTheChild() throws {
    let child = try Snapshot(layout("B: b"))
    var edited = layout("B: b")
    edited[0].items[0].version = 1
    let refreshed = try Snapshot(edited)
    // The child refreshed "a", which it no longer has; "a" is the other child's item in the composite.
    let changeset = Changeset(from: child, to: refreshed, refreshing: ["a", "b"])
    let composite = try Snapshot(layout("A: a | B: b"))
    let target = try Snapshot(layout("A: a") + edited)
    let placed = try #require(try composite.placingChildBatch(changeset, atSectionOffset: 1))
    let embedded = changeset.embedded(
      in: composite, target: target, offset: 1, prefix: composite.sections[..<1], suffix: [])
    for (name, change) in [("placed", placed.1), ("embedded", embedded)] {
      #expect(change.forcedRefreshes == ["b"], "\(name)")
      #expect(change.itemChanges.updates.map(\.id) == ["b"], "\(name)")
    }
    #expect(placed.0.sections == target.sections)
  }
}
