// The pure steps of projections, against plain filtering and sorting: the derived path must give exactly
// what a full projection gives, and the touched-ids changeset exactly what a full diff gives.

@testable import SimpleSourceCore
@testable import SimpleSourceViews
@testable import SimpleSourceWire
import SimpleSourceTesting
import Testing

/// A random projection of test sections, drawn from a seed, with a plain model of what it shows.
struct RandomProjection: Sendable, CustomStringConvertible {
  let filter: Int
  let order: Int
  let sectionFilter: Int
  let hidesEmpty: Bool

  init(using random: inout SeededGenerator) {
    filter = Int.random(in: 0..<4, using: &random)
    order = Int.random(in: 0..<4, using: &random)
    sectionFilter = Int.random(in: 0..<3, using: &random)
    hidesEmpty = Bool.random(using: &random)
  }

  var description: String {
    "filter \(filter), order \(order), sections \(sectionFilter), hidesEmpty \(hidesEmpty)"
  }

  static func weight(_ id: String) -> Int { id.utf8.reduce(0) { $0 + Int($1) } }

  func includes(_ item: TestItem) -> Bool {
    switch filter {
    case 1: item.version % 2 == 0
    case 2: Self.weight(item.id) % 3 != 0
    case 3: false
    default: true
    }
  }

  /// Strict weak orderings with many ties, so that the parent-order tie-break matters.
  func before(_ lhs: TestItem, _ rhs: TestItem) -> Bool {
    switch order {
    case 1: lhs.version < rhs.version
    case 2: Self.weight(lhs.id) % 5 > Self.weight(rhs.id) % 5
    case 3: lhs.id > rhs.id
    default: false
    }
  }

  func includes(_ section: TestSection) -> Bool {
    switch sectionFilter {
    case 1: Self.weight(section.id) % 2 == 0
    case 2: !(section.header ?? "").contains("1")
    default: true
    }
  }

  var projection: Projection<TestSection> {
    let copy = self
    return Projection(
      where: filter == 0 ? nil : { @Sendable item in copy.includes(item) },
      sortedBy: order == 0 ? nil : { @Sendable lhs, rhs in copy.before(lhs, rhs) },
      sectionsWhere: sectionFilter == 0 ? nil : { @Sendable section in copy.includes(section) },
      hidingEmptySections: hidesEmpty)
  }

  /// The model: filter, then sort by the order with ties in parent order (an explicit index, not the
  /// standard library's stability), then drop empty sections if asked.
  func model(_ sections: [TestSection]) -> [TestSection] {
    sections.compactMap { section in
      guard includes(section) else { return nil }
      var shown = section
      shown.items = section.items.enumerated().filter { includes($0.element) }
        .sorted { lhs, rhs in
          if before(lhs.element, rhs.element) { return true }
          if before(rhs.element, lhs.element) { return false }
          return lhs.offset < rhs.offset
        }
        .map(\.element)
      return hidesEmpty && shown.items.isEmpty ? nil : shown
    }
  }
}

@Suite("Projection steps")
struct ProjectionStateTests {
  static let settings = RandomTestSettings.current(
    defaultCases: 800, casesVariable: "SIMPLESOURCE_DERIVED_CASES")

  @Test("a parent batch's derived projection equals the full projection, and its batch the full diff")
  func derivedEqualsFull() throws {
    let settings = Self.settings
    var random = SeededGenerator(seed: settings.seed(forShard: 40))
    var derivedSteps = 0
    for index in 0..<settings.cases {
      let rule = RandomProjection(using: &random)
      var sections = layout("A: a b c d | B: e f' g | C: | D: h i")
      for _ in 0..<Int.random(in: 0..<8, using: &random) { RandomEdit(using: &random).apply(to: &sections) }
      guard var parent = try? Snapshot(sections) else { continue }
      var state = try ProjectionState(parent: parent, projection: rule.projection)
      for step in 0..<6 {
        var next = parent.sections
        for _ in 0..<Int.random(in: 1..<4, using: &random) { RandomEdit(using: &random).apply(to: &next) }
        guard let target = try? Snapshot(next) else { continue }
        let parentChange = Changeset(from: parent, to: target)
        let (derived, change) = try state.applying(parentChange, startsAtParent: true)
        derivedSteps += 1
        let expected = rule.model(target.sections)
        let place = "case \(index) step \(step) (\(rule)): \(parent) → \(target); \(settings.replay)"
        #expect(derived.shown.sections == expected, "derived projection differs, \(place)")
        let full = Changeset(from: state.shown, to: try Snapshot(expected))
        // The same changes as the full diff, and as many moves: which of equally minimal moves is free.
        let (items, fullItems) = (change.itemChanges, full.itemChanges)
        #expect(items.deletes == fullItems.deletes, "deletes differ from the full diff, \(place)")
        #expect(items.inserts == fullItems.inserts, "inserts differ from the full diff, \(place)")
        #expect(items.updates == fullItems.updates, "updates differ from the full diff, \(place)")
        #expect(items.moves.count == fullItems.moves.count, "not minimal moves, \(place)")
        #expect(change.sectionChanges == full.sectionChanges, "section changes differ, \(place)")
        #expect(change.stages.map(\.kind) == full.stages.map(\.kind), "stages differ, \(place)")
        #expect(
          check(state.shown, try Snapshot(expected), changeset: change) == nil, "invalid batch, \(place)")
        if derived.shown.sections != expected { return }
        state = derived
        parent = target
      }
    }
    print("Projection steps: \(derivedSteps) derived steps matched the model; \(settings.replay)")
  }
}

extension ProjectionStateTests {
  @Test("a parent batch that keeps what is shown in place hashes only the ids it touched, not one per item")
  func inPlaceStepHashesTouchedIDs() throws {
    let counter = CallCounter()
    let count = 20_000
    let sections = [Section(id: 0, items: ChangesetComplexityTests.items(0..<count, counting: counter))]
    let evens = Projection<Section<Int, CountingItem>>(where: { $0.id.value % 2 == 0 })
    let parent = try Snapshot(sections)
    let state = try ProjectionState(parent: parent, projection: evens)
    _ = state.shown.tree  // as a projected source builds it when it starts
    var edited = sections
    edited[0].items[1_000] = CountingItem(id: edited[0].items[1_000].id, version: 1)
    let target = try Snapshot(edited)
    let parentChange = Changeset(from: parent, to: target)
    counter.reset()
    let (next, change) = try state.applying(parentChange, startsAtParent: true)
    // The touched id, looked up on each side and in the changeset: a few hashes. Indexing the new shown
    // list anew hashed all 10,000 shown ids.
    #expect(counter.hashes <= 20, "hashes: \(counter.hashes)")
    #expect(change.itemChanges.updates.map(\.from) == [ItemPosition(section: 0, item: 500)])
    #expect(next.shown.position(ofItem: edited[0].items[1_998].id) == ItemPosition(section: 0, item: 999))
    #expect(next.shown.sections == [Section(id: 0, items: edited[0].items.filter { $0.id.value % 2 == 0 })])
  }
}
