// The observable list model: a batch invalidates exactly the rows it changed, a section's row list only
// when rows come, go or move, and the model always equals its source.

import Observation
import SimpleSource
import SimpleSourceTesting
import Testing

/// Counts the invalidations of observations registered with it, by name; observations registered before
/// the last `reset()` no longer count.
@MainActor
final class Invalidations {
  private(set) var counts: [String: Int] = [:]
  private var generation = 0

  /// Observes what `read` reads, counting its first invalidation under `name`. The model changes on the
  /// main actor, so the invalidation is counted synchronously, before the change returns.
  func track(_ name: String, _ read: () -> Void) {
    let registered = generation
    withObservationTracking(read) { [weak self] in
      MainActor.assumeIsolated {
        guard let self, self.generation == registered else { return }
        self.counts[name, default: 0] += 1
      }
    }
  }

  func reset() {
    counts = [:]
    generation += 1
  }
}

@MainActor
@Suite("ObservedList", .timeLimit(.minutes(30)))
struct ObservedListTests {
  /// The model's content as sections of items.
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  static func shownContent(_ list: ObservedList<TestSection>) -> [TestSection] {
    list.sections.map { section in
      var copy = section.content
      copy.items = section.rows.map(\.item)
      return copy
    }
  }

  /// Observes the section list, every section's rows and content, and every row's item.
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  static func observeEverything(_ list: ObservedList<TestSection>, in invalidations: Invalidations) {
    invalidations.reset()
    invalidations.track("sections") { _ = list.sections }
    for section in list.sections {
      invalidations.track("rows \(section.id)") { _ = section.rows }
      invalidations.track("content \(section.id)") { _ = section.content }
      for row in section.rows { invalidations.track("row \(row.id)") { _ = row.item } }
    }
  }

  /// Waits until the model holds `version`, then until the invalidation callbacks ran.
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  static func awaitVersion(_ list: ObservedList<TestSection>, at version: Version) async throws {
    #expect(try await list.reached(version))
  }

  @Test("one edit on 100,000 rows invalidates exactly that row; an insert or a move only its section's list")
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  func invalidatesWhatChanged() async throws {
    let items = (0..<100_000).map { TestItem("i\($0)") }
    let source = try BasicDataSource(sections: [TestSection(id: "A", items: items)] + layout("B: b1 b2"))
    let list = await ObservedList(following: source, pacing: .immediate)
    let invalidations = Invalidations()

    Self.observeEverything(list, in: invalidations)
    var version = try await source.replaceItem(TestItem("i500", version: 1))
    try await Self.awaitVersion(list, at: version)
    #expect(invalidations.counts == ["row i500": 1], "an edit: that row only")

    Self.observeEverything(list, in: invalidations)
    version = try await source.insertItems([TestItem("new")], before: "i7")
    try await Self.awaitVersion(list, at: version)
    #expect(invalidations.counts == ["rows A": 1], "an insert: section A's list only")

    Self.observeEverything(list, in: invalidations)
    version = try await source.moveItem("i3", before: "i90000")
    try await Self.awaitVersion(list, at: version)
    #expect(invalidations.counts == ["rows A": 1], "a move within a section: its list only")

    Self.observeEverything(list, in: invalidations)
    version = try await source.refreshItems(["b2"])
    try await Self.awaitVersion(list, at: version)
    #expect(invalidations.counts == ["row b2": 1], "a forced refresh: that row")

    #expect(Self.shownContent(list) == (await source.snapshot).sections)
    list.stop()
  }

  @Test("rows and sections keep their objects while their ids are shown, across moves between sections")
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  func keepsIdentity() async throws {
    let source = try BasicDataSource(sections: layout("A: a b | B: c"))
    let list = await ObservedList(following: source, pacing: .immediate)
    let a = try #require(list.sections.first?.rows.first)
    let sectionB = list.sections[1]
    var version = try await source.moveItem("a", toSection: "B")
    try await Self.awaitVersion(list, at: version)
    #expect(list.sections[1].rows.last === a)
    try await source.update { $0.reverse() }  // sections move: the list is rebuilt
    version = await source.version
    try await Self.awaitVersion(list, at: version)
    #expect(list.sections[0] === sectionB && list.sections[0].rows.last === a)
    #expect(Self.shownContent(list) == (await source.snapshot).sections)
  }

  @Test("the model equals its source after every batch of random edits (seeded)")
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  func equalsItsSource() async throws {
    let settings = RandomTestSettings.current(defaultCases: 30, casesVariable: "SIMPLESOURCE_VIEW_CASES")
    var random = SeededGenerator(seed: settings.seed(forShard: 80))
    for run in 0..<settings.cases {
      let source = try BasicDataSource(sections: layout("A: a b c | B: d | C:"))
      let list = await ObservedList(following: source, pacing: .immediate)
      for step in 0..<20 {
        let ids = (await source.snapshot).sections.flatMap(\.items).map(\.id)
        let sections = (await source.snapshot).sections.map(\.id)
        switch Int.random(in: 0..<6, using: &random) {
        case 0:
          try await source.appendItems(
            [TestItem("n\(step)")], toSection: sections.randomElement(using: &random)!)
        case 1 where !ids.isEmpty: try await source.deleteItems([ids.randomElement(using: &random)!])
        case 2 where !ids.isEmpty:
          try await source.moveItem(
            ids.randomElement(using: &random)!, toSection: sections.randomElement(using: &random)!)
        case 3 where !ids.isEmpty:
          try await source.replaceItem(TestItem(ids.randomElement(using: &random)!, version: step))
        case 4:
          let order = Array(sections.indices).shuffled(using: &random)
          try await source.update { current in current = order.map { current[$0] } }
        default: try await source.refreshItems(ids.prefix(1))
        }
        let version = await source.version
        #expect(try await list.reached(version))
        #expect(
          Self.shownContent(list) == (await source.snapshot).sections,
          "run \(run) step \(step); \(settings.replay)")
      }
      list.stop()
    }
    print("ObservedList model: \(settings.cases) runs; \(settings.replay)")
  }

  @Test("with writers racing on other tasks, the model equals its source whenever the writers pause (seeded)")
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  func racingWriters() async throws {
    let settings = RandomTestSettings.current(defaultCases: 10, casesVariable: "SIMPLESOURCE_VIEW_CASES")
    let seed = settings.seed(forShard: 82)
    for run in 0..<settings.cases {
      let source = try BasicDataSource(sections: layout("A: a b c d | B: e f | C:"))
      let list = await ObservedList(following: source, pacing: .immediate)
      for round in 0..<5 {
        // Three writers at once, each its own seeded sequence of edits; the interleaving is the scheduler's.
        try await withThrowingTaskGroup(of: Void.self) { group in
          for writer in 0..<3 {
            group.addTask {
              var random = SeededGenerator(seed: seed &+ UInt64(run * 1_000 + round * 10 + writer))
              let picks = (0..<8).map { _ in (0..<3).map { _ in Int.random(in: 0..<1_000, using: &random) } }
              for (step, pick) in picks.enumerated() {
                try await Self.randomEdit(source, name: "w\(writer)-\(round)-\(step)", picks: pick)
              }
            }
          }
          try await group.waitForAll()
        }
        await source.settled()
        // The version offered: racing writers' edits can cancel out (a reverse, then another), and the
        // versions they made are carried by no batch (G4).
        #expect(await list.reached(await source.offeredVersion))
        #expect(
          Self.shownContent(list) == (await source.snapshot).sections,
          "run \(run) round \(round); \(settings.replay)")
      }
      list.stop()
    }
    print("ObservedList racing writers: \(settings.cases) runs; \(settings.replay)")
  }

  /// One edit chosen by `picks` (three numbers): an append, delete, move, replace or section reorder.
  static func randomEdit(_ source: BasicDataSource<TestSection>, name: String, picks: [Int]) async throws {
    let snapshot = await source.snapshot
    let ids = snapshot.sections.flatMap(\.items).map(\.id)
    let sections = snapshot.sections.map(\.id)
    let id = ids.isEmpty ? nil : ids[picks[1] % ids.count]
    let section = sections[picks[2] % sections.count]
    do {
      switch (picks[0] % 5, id) {
      case (0, _), (_, nil): try await source.appendItems([TestItem(name)], toSection: section)
      case (1, let id?): try await source.deleteItems([id])
      case (2, let id?): try await source.moveItem(id, toSection: section)
      case (3, let id?): try await source.replaceItem(TestItem(id, version: picks[2] + 1))
      default: try await source.update { $0.reverse() }
      }
    } catch {
      // Another writer took the item away since the snapshot was read: refused, and nothing changed.
      guard error.code == .unknownItemID else { throw error }
    }
  }

  @Test("a model held back by its pacing reaches the versions whose composed batch cancelled out")
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  func reachesCancelledOut() async throws {
    let clock = ManualClock()
    let source = try BasicDataSource(sections: layout("A: a | B: b"))
    let list = await ObservedList(following: source, pacing: .interval(.milliseconds(16), clock: clock))
    let first = try await source.appendItems([TestItem("c")], toSection: "A")
    #expect(try await list.reached(first), "the first batch is not held")
    await clock.sleepers(atLeast: 1)  // the model now waits out its interval
    try await source.update { $0.reverse() }
    await source.settled()
    try await source.update { $0.reverse() }
    await source.settled()
    let back = await source.offeredVersion
    #expect(back == first + 2, "two versions, each offered")
    clock.advance(by: .milliseconds(16))
    // What the model composes from `first` to `back` is empty: no batch, and still the model holds `back`.
    #expect(await list.reached(back))
    let now = await source.snapshot
    #expect(list.version == first && Self.shownContent(list) == now.sections)
    list.stop()
  }

  @Test("after stop, the model keeps what it shows and a later version is never reached")
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  func stops() async throws {
    let source = try BasicDataSource(sections: layout("A: a"))
    let list = await ObservedList(following: source, pacing: .immediate)
    list.stop()
    let version = try await source.appendItems([TestItem("b")], toSection: "A")
    #expect(try await list.reached(version) == false)
    #expect(Self.shownContent(list) == layout("A: a"))
  }
}
