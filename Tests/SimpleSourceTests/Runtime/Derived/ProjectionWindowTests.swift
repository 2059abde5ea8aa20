// A projection's window (`Projection.rows`): after every parent batch and every move it publishes the
// same rows as filtering, sorting and slicing the parent by plain code, its batches are valid, a change
// after the window publishes nothing, and a service offers it as a query parameter.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceWire

@Suite("Projection windows", .timeLimit(.minutes(30)))
struct ProjectionWindowTests {
  static let settings = RandomTestSettings.current(
    defaultCases: 600, casesVariable: "SIMPLESOURCE_DERIVED_CASES")
  static let windows = RandomProjection.windows

  @Test("every step publishes the model's window, as a valid batch, and nothing when the window stays")
  func stepsEqualTheModel() throws {
    let settings = Self.settings
    let tally = try Self.checkSteps(
      seed: settings.seed(forShard: 41), cases: settings.cases, replay: settings.replay)
    print("Projection windows: \(tally); \(settings.replay)")
    #expect(tally.unchanged > 0, "the path that skips a change after the window was never taken")
    #expect(tally.recounted > 0, "no replacement changed only how rows are counted")
    #expect(tally.refused > 0, "no replacement was refused")
  }

  @Test("the seed that found a replacement counting rows anew keeping the old window")
  func recountedWindowSeed() throws {
    // Before the fix this seed failed: a replacement that counted the same rows another way (across the
    // sections, then in each) changed nothing shown, and the old window stayed published.
    let tally = try Self.checkSteps(seed: 70, cases: 20, replay: "seed 70")
    #expect(tally.recounted > 0)
  }

  /// What ``checkSteps(seed:cases:replay:)`` took.
  struct StepTally: CustomStringConvertible {
    var published = 0, unchanged = 0, moved = 0, replaced = 0, recounted = 0, refused = 0
    var description: String {
      "\(published) batches, \(unchanged) parent changes after the window published nothing, \(moved) moves, "
        + "\(replaced) replacements (\(recounted) counting rows anew, \(refused) refused)"
    }
  }

  /// Random steps of windowed projections (parent batches, moved windows, replaced projections: some
  /// counting the same rows another way, some refused), each state's published rows compared with the
  /// model, each batch checked against UIKit's rules.
  static func checkSteps(seed: UInt64, cases: Int, replay: String) throws -> StepTally {
    var random = SeededGenerator(seed: seed)
    let steps = ProjectionSteps<TestSection>()
    var tally = StepTally()
    for index in 0..<cases {
      var rule = RandomProjection(windowedUsing: &random)
      var sections = layout("A: a b c d e f g | B: h i' j k | C: | D: l m n o p")
      for _ in 0..<Int.random(in: 0..<6, using: &random) { RandomEdit(using: &random).apply(to: &sections) }
      guard var parent = try? Snapshot(sections) else { continue }
      var state = try ProjectionState(parent: parent, projection: rule.projection)
      #expect(state.published.sections == rule.model(parent.sections), "case \(index) start; \(replay)")
      for step in 0..<8 {
        let place = "case \(index) step \(step) (\(rule)); \(replay)"
        let next: ProjectionState<TestSection>
        let change: Changeset<TestSection>?
        switch Int.random(in: 0..<8, using: &random) {
        case 0, 1:
          rule.rows = windows.randomElement(using: &random)!
          (next, change) = steps.moveWindow(state, rule.rows)
          tally.moved += 1
        case 2, 3:
          let recount = Bool.random(using: &random)
          let replacement =
            recount
            ? rule.recounted(using: &random) : RandomProjection(windowedUsing: &random, refusedOneIn: 3)
          do {
            (next, change) = try steps.replace(state, replacement.projection)
          } catch {
            #expect(replacement.refused, "a valid projection refused: \(error), \(place)")
            tally.refused += 1
            continue
          }
          // With no section to ask, a refused projection is accepted, and shows nothing.
          if replacement.refused && !parent.sections.isEmpty {
            Issue.record("a projection whose closures throw was accepted, \(place)")
          }
          if replacement.refused { return tally }
          rule = replacement
          tally.replaced += 1
          if recount { tally.recounted += 1 }
        default:
          var edited = parent.sections
          for _ in 0..<Int.random(in: 1..<3, using: &random) { RandomEdit(using: &random).apply(to: &edited) }
          guard let target = try? Snapshot(edited) else { continue }
          (next, change) = try steps.apply(state, Changeset(from: parent, to: target), true)
          if change == nil && next.shown.sections != state.shown.sections { tally.unchanged += 1 }
          parent = target
        }
        let expected = rule.model(parent.sections)
        #expect(next.published.sections == expected, "published differs, \(place) → \(rule)")
        if let change {
          tally.published += 1
          #expect(!change.isEmpty, "an empty change, \(place)")
          #expect(
            check(state.published, try Snapshot(expected), changeset: change) == nil,
            "invalid batch, \(place)")
        } else {
          #expect(state.published.sections == expected, "no change published, \(place) → \(rule)")
        }
        if next.published.sections != expected { return tally }
        state = next
      }
    }
    return tally
  }

  @Test("a new projection that only counts its rows another way publishes the new window")
  func recountedWindow() async throws {
    let parent = try BasicDataSource(sections: [
      TestSection(
        id: "A", items: [TestItem("a1", version: 1), TestItem("a2", version: 2), TestItem("a3", version: 3)]),
      TestSection(id: "B", items: [TestItem("b1", version: 1), TestItem("b2", version: 2)]),
    ])
    let byVersion: @Sendable (TestItem, TestItem) -> Bool = { $0.version < $1.version }
    let projected = try await ProjectedDataSource(
      parent, projection: Projection(sortedBy: byVersion, rows: 0..<2, rowsAcrossSections: true))
    let recorder = await BatchRecorder(await projected.subscribe())
    #expect(await projected.snapshot.description == "[A: a1 | B: b1]")

    try await projected.setProjection(Projection(sortedBy: byVersion, rows: 0..<2, rowsAcrossSections: false))
    await projected.settled()
    #expect(await projected.snapshot.description == "[A: a1 a2 | B: b1 b2]", "two rows of each section")
    #expect(await projected.version == 1, "one batch")

    try await projected.setProjection(Projection(sortedBy: byVersion, rows: 0..<3, rowsAcrossSections: true))
    #expect(await projected.snapshot.description == "[A: a1 a2 | B: b1]", "and back, with another window")
    try await projected.setProjection(Projection(sortedBy: byVersion, rows: 0..<1, rowsAcrossSections: false))
    #expect(await projected.snapshot.description == "[A: a1 | B: b1]")

    try await parent.appendItems([TestItem("b0", version: 0)], toSection: "B")
    await projected.settled()
    #expect(await projected.snapshot.description == "[A: a1 | B: b0]")
    #expect(await recorder.showing(await projected.snapshot))
    #expect(await recorder.violations.isEmpty)
  }

  @Test("a negative bound counts as 0, in the initializer and when set")
  func clamped() {
    var projection = Projection<TestSection>(rows: -5..<3)
    #expect(projection.rows == 0..<3)
    projection.rows = -4 ..< -2
    #expect(projection.rows == 0..<0)
  }

  @Test("on 100,000 rows: an edit after the window asks one item and publishes nothing; inside, one batch")
  func largeSource() async throws {
    let count = 100_000
    let parent = try BasicDataSource(sections: [
      TestSection(id: "A", items: (0..<count).map { TestItem("i\($0)") })
    ])
    let asked = Tally()
    let projection = Projection<TestSection>(
      where: { item in
        asked.add()
        return item.version != 9
      }, rows: 0..<50)
    let page = try await ProjectedDataSource(parent, projection: projection)
    let recorder = await BatchRecorder(await page.subscribe(), refreshStyle: .reconfigure)
    func expected() async throws -> Snapshot<TestSection> {
      let shown = (await parent.snapshot).sections[0].items.filter { $0.version != 9 }
      return try Snapshot([TestSection(id: "A", items: Array(shown.prefix(50)))])
    }
    #expect(await page.snapshot.sections[0].items.map(\.id) == (0..<50).map { "i\($0)" })

    asked.reset()
    try await parent.replaceItem(TestItem("i90000", version: 1))
    try await parent.appendItems([TestItem("last")], toSection: "A")
    await page.settled()
    #expect(asked.value == 2, "one predicate call per touched item")
    #expect(await page.version == 0, "changes after the window publish nothing")

    try await parent.replaceItem(TestItem("i10", version: 1))
    await page.settled()
    #expect(await page.version == 1)
    try await parent.insertItems([TestItem("first")], before: "i0")
    await page.settled()
    try await parent.replaceItem(TestItem("i3", version: 9))  // leaves: i50 shifts in
    await page.settled()
    #expect(await page.version == 3)
    #expect(await recorder.showing(try await expected()))

    try await page.moveWindow(to: 100..<150)
    #expect(await page.version == 4, "moving the window is one batch")
    let moved = (await parent.snapshot).sections[0].items.filter { $0.version != 9 }[100..<150]
    #expect(await page.snapshot.sections[0].items == Array(moved))
    try await page.moveWindow(to: 100..<150)
    #expect(await page.version == 4, "a move to where it is publishes nothing")
    #expect(await recorder.showing(await page.snapshot))
    let violations = await recorder.violations
    #expect(violations.isEmpty, "\(violations)")
  }

  @Test("a view whose versions are the parent's keeps its window: moving it is refused, nothing changes")
  func fixedWindow() async throws {
    let parent = try BasicDataSource(sections: layout("A: a b c d"))
    let page = try await ProjectedDataSource(parent, projection: Projection(rows: 1..<3), versions: .parent)
    #expect(await page.snapshot.sections == layout("A: b c"))
    await #expect(throws: ProjectionError(.projectionFixed)) { try await page.moveWindow(to: 0..<1) }
    #expect(await page.snapshot.sections == layout("A: b c"))
    #expect(await page.projection.rows == 1..<3)

    // A page made late (another instance) resumes a client from what the parent retains: the window of
    // the parent's state then.
    try await parent.deleteItems(["a"])  // 1: c d
    await page.settled()
    try await parent.appendItems([TestItem("e")], toSection: "A")  // 2: c d (e below the page)
    await page.settled()
    try await parent.moveItem("e", before: "b")  // 3: b c
    await page.settled()
    let late = try await ProjectedDataSource(parent, projection: Projection(rows: 1..<3), versions: .parent)
    let resumption = await late.subscribe(from: 1, pacing: .immediate)
    guard case .resumed(let subscription) = resumption else {
      Issue.record("expected a resume from 1, got \(resumption)")
      return
    }
    #expect(subscription.snapshot.sections == layout("A: c d"))
    var batches = subscription.batches.makeAsyncIterator()
    let batch = try #require(await batches.next())
    #expect(batch.from == 1 && batch.to == 3 && batch.snapshot.sections == layout("A: b c"))
  }

  @Test("a service offers a window across sections: the cheapest rows of the whole list, live")
  func servedAcrossSections() async throws {
    let cheapest = WireQuery<TestSection>("cheapest", parameters: ["limit": .integer]) {
      arguments throws(WireQueryRefusal) in
      let limit = try arguments.integer("limit")
      guard (1...100).contains(limit) else { throw WireQueryRefusal("1 to 100 rows") }
      return Projection(sortedBy: { $0.version < $1.version }, rows: 0..<limit, rowsAcrossSections: true)
    }
    let source = try BasicDataSource(sections: [
      TestSection(id: "A", items: [TestItem("a", version: 5), TestItem("b", version: 1)]),
      TestSection(id: "B", items: [TestItem("c", version: 3), TestItem("d", version: 9)]),
    ])
    let service = WireService(source: source, stream: "s", queries: [cheapest])
    let (session, client) = await service.connect(
      subscribe(WireQueryRequest("cheapest", ["limit": .integer(2)])))
    await session.delivered(to: client)
    #expect(client.state.withLock { $0.held.description } == "[A: b | B: c]")
    try await source.updateItem("d") { $0.version = 0 }  // the cheapest now, in B
    await session.delivered(to: client)
    let state = client.state.withLock { $0 }
    #expect(state.held.description == "[A: b | B: d]", "c left the page, d entered it")
    #expect(state.violations.isEmpty, "\(state.violations)")
    await session.close()
  }

  @Test("a service offers the window as query parameters: each client receives only its page, live")
  func servedAsAQuery() async throws {
    let page = WireQuery<TestSection>("page", parameters: ["offset": .integer, "limit": .integer]) {
      arguments throws(WireQueryRefusal) in
      let (offset, limit) = (try arguments.integer("offset"), try arguments.integer("limit"))
      guard offset >= 0, (1...100).contains(limit) else {
        throw WireQueryRefusal("a page has an offset of 0 or more and 1 to 100 rows")
      }
      return Projection(sortedBy: { $0.version > $1.version }, rows: offset..<offset + limit)
    }
    let source = try BasicDataSource(sections: layout("A: a b c d e f g h"))
    let service = WireService(source: source, stream: "s", queries: [page])
    let request = WireQueryRequest("page", ["offset": .integer(2), "limit": .integer(3)])
    let (session, client) = await service.connect(subscribe(request))
    await session.delivered(to: client)
    #expect(client.state.withLock { $0.held.sections } == layout("A: c d e"))

    try await source.replaceItem(TestItem("h", version: 0))  // no change at all
    try await source.appendItems([TestItem("i")], toSection: "A")  // 1: after the page
    await session.delivered(to: client)
    #expect(client.state.withLock { $0.messages } == ["reset"], "nothing after the page is sent")
    try await source.replaceItem(TestItem("g", version: 1))  // 2: sorts first, shifts the page
    await session.delivered(to: client)
    let state = client.state.withLock { $0 }
    #expect(state.messages == ["reset", "batch"] && state.version == 2)
    #expect(state.held.sections == layout("A: b c d"))
    #expect(state.violations.isEmpty, "\(state.violations)")

    let (refused, refusedClient) = await service.connect(
      subscribe(WireQueryRequest("page", ["offset": .integer(0), "limit": .integer(1_000)])))
    await refused.settled()
    #expect(
      refusedClient.state.withLock { $0.errors.map(\.code) } == [.invalidParameters],
      "a page too large is refused by the query")
    await refused.close()
    await session.close()
  }
}
