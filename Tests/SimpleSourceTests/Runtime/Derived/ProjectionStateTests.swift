// The pure steps of projections, against plain filtering and sorting: the derived path must give exactly
// what a full projection gives, and the touched-ids changeset exactly what a full diff gives.

@testable import SimpleSourceCore
@testable import SimpleSourceViews
@testable import SimpleSourceWire
import SimpleSourceTesting
import Testing

/// A random projection of test sections, drawn from a seed, with a plain model of what it shows.
struct RandomProjection: Sendable, CustomStringConvertible {
  var filter: Int
  var order: Int
  var sectionFilter: Int
  var hidesEmpty: Bool
  /// The window (``Projection/rows``); `nil` shows every row.
  var rows: Range<Int>? = nil
  /// Whether ``rows`` counts over the whole list (``Projection/rowsAcrossSections``).
  var acrossSections = false
  /// Whether every closure throws: a projection the source must refuse (with no section in the parent,
  /// nothing is asked and it is accepted; the model cannot say what it shows then).
  var refused = false

  /// The windows drawn: empty, inside, past the end, and none.
  static let windows: [Range<Int>?] = [0..<2, 1..<4, 2..<3, 0..<0, 3..<10, 5..<6, 0..<1, nil]

  init(using random: inout SeededGenerator) {
    filter = Int.random(in: 0..<4, using: &random)
    order = Int.random(in: 0..<4, using: &random)
    sectionFilter = Int.random(in: 0..<3, using: &random)
    hidesEmpty = Bool.random(using: &random)
  }

  /// A projection that also draws a window, counted in each section or across them, and, one time in
  /// `refusedOneIn`, closures that throw.
  init(windowedUsing random: inout SeededGenerator, refusedOneIn: Int = 0) {
    self.init(using: &random)
    rows = Self.windows.randomElement(using: &random)!
    acrossSections = Bool.random(using: &random)
    refused = refusedOneIn > 0 && Int.random(in: 0..<refusedOneIn, using: &random) == 0
  }

  /// The same rule with only how its window's rows are counted drawn again: the replacements that
  /// change nothing shown before the window.
  func recounted(using random: inout SeededGenerator) -> RandomProjection {
    var next = self
    next.refused = false
    switch Int.random(in: 0..<3, using: &random) {
    case 0: next.acrossSections.toggle()
    case 1: next.rows = Self.windows.randomElement(using: &random)!
    default:
      next.acrossSections.toggle()
      next.rows = Self.windows.randomElement(using: &random)!
    }
    return next
  }

  var description: String {
    var text = "filter \(filter), order \(order), sections \(sectionFilter), hidesEmpty \(hidesEmpty)"
    if let rows { text += ", rows \(rows)" + (acrossSections ? " across sections" : "") }
    return refused ? text + ", refused" : text
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
    guard !refused else {
      return Projection(
        where: { _ in throw Boom() }, sortedBy: { _, _ in throw Boom() },
        sectionsWhere: { _ in throw Boom() },
        hidingEmptySections: hidesEmpty, rows: rows, rowsAcrossSections: acrossSections)
    }
    return Projection(
      where: filter == 0 ? nil : { @Sendable item in copy.includes(item) },
      sortedBy: order == 0 ? nil : { @Sendable lhs, rhs in copy.before(lhs, rhs) },
      sectionsWhere: sectionFilter == 0 ? nil : { @Sendable section in copy.includes(section) },
      hidingEmptySections: hidesEmpty, rows: rows, rowsAcrossSections: acrossSections)
  }

  /// The model: filter, then sort by the order with ties in parent order (an explicit index, not the
  /// standard library's stability), then drop empty sections if asked, then keep the window: rows
  /// ``rows`` of each section, or of the whole list merged by the order (ties by section, then place).
  func model(_ sections: [TestSection]) -> [TestSection] {
    let shown = shownModel(sections)
    guard let rows else { return shown }
    guard acrossSections else {
      return shown.map { section in
        var section = section
        let count = section.items.count
        section.items = Array(section.items[min(rows.lowerBound, count)..<min(rows.upperBound, count)])
        return section
      }
    }
    let merged = shown.enumerated().flatMap { index, section in
      section.items.enumerated().map { (section: index, offset: $0.offset, item: $0.element) }
    }
    .sorted { lhs, rhs in
      if before(lhs.item, rhs.item) { return true }
      if before(rhs.item, lhs.item) { return false }
      return (lhs.section, lhs.offset) < (rhs.section, rhs.offset)
    }
    let kept = merged.indices.filter { rows.contains($0) }.map { merged[$0] }
    return shown.enumerated().map { index, section in
      var section = section
      section.items = kept.filter { $0.section == index }.map(\.item)
      return section
    }
  }

  /// What is shown before the window.
  func shownModel(_ sections: [TestSection]) -> [TestSection] {
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
