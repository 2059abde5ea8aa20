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
@Suite("ObservedList", .timeLimit(.minutes(2)))
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
  static func awaitVersion(_ list: ObservedList<TestSection>, at version: Int) async {
    #expect(await list.reached(version))
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
    await Self.awaitVersion(list, at: version)
    #expect(invalidations.counts == ["row i500": 1], "an edit: that row only")

    Self.observeEverything(list, in: invalidations)
    version = try await source.insertItems([TestItem("new")], before: "i7")
    await Self.awaitVersion(list, at: version)
    #expect(invalidations.counts == ["rows A": 1], "an insert: section A's list only")

    Self.observeEverything(list, in: invalidations)
    version = try await source.moveItem("i3", before: "i90000")
    await Self.awaitVersion(list, at: version)
    #expect(invalidations.counts == ["rows A": 1], "a move within a section: its list only")

    Self.observeEverything(list, in: invalidations)
    version = try await source.refreshItems(["b2"])
    await Self.awaitVersion(list, at: version)
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
    await Self.awaitVersion(list, at: version)
    #expect(list.sections[1].rows.last === a)
    try await source.update { $0.reverse() }  // sections move: the list is rebuilt
    version = await source.version
    await Self.awaitVersion(list, at: version)
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
        #expect(await list.reached(version))
        #expect(
          Self.shownContent(list) == (await source.snapshot).sections,
          "run \(run) step \(step); \(settings.replay)")
      }
      list.stop()
    }
    print("ObservedList model: \(settings.cases) runs; \(settings.replay)")
  }

  @Test("after stop, the model keeps what it shows and a later version is never reached")
  @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
  func stops() async throws {
    let source = try BasicDataSource(sections: layout("A: a"))
    let list = await ObservedList(following: source, pacing: .immediate)
    list.stop()
    let version = try await source.appendItems([TestItem("b")], toSection: "A")
    #expect(await list.reached(version) == false)
    #expect(Self.shownContent(list) == layout("A: a"))
  }
}
