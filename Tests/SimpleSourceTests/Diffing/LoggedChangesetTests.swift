// Changesets derived from the mutation log against the full diff of the same two snapshots.

import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceViews
@testable import SimpleSourceWire

@Suite("Changeset from the mutation log")
struct LoggedChangesetTests {
  /// `SIMPLESOURCE_LOGGED_CASES`: 400 sequences here, 4,000 in CI.
  static let settings = RandomTestSettings.current(
    defaultCases: 400, casesVariable: "SIMPLESOURCE_LOGGED_CASES")

  @Test(
    "a batch from the log equals the full diff: same changes, as many moves (minimal), valid in the reference view"
  )
  func loggedMatchesFull() throws {
    let settings = Self.settings
    var random = SeededGenerator(seed: settings.seed(forShard: 8))
    var failures = 0
    for index in 0..<settings.cases where failures < 3 {
      var store = SectionStore(trusted: try Snapshot(Self.randomSections(using: &random)))
      // Half the cases start from the persistent form, after edits whose log is dropped.
      if Bool.random(using: &random) {
        for _ in 0..<3 { Self.randomEdit(&store, serial: -1, using: &random) }
        _ = store.takeLog()
      }
      let old = store.snapshot
      var refreshing = Set<String>()
      for serial in 0..<Int.random(in: 1...12, using: &random) {
        Self.randomEdit(&store, serial: serial, using: &random)
      }
      if Int.random(in: 0..<4, using: &random) == 0,
        let id = store.snapshot.sections.randomElement(using: &random)?
          .items.randomElement(using: &random)?.id
      {
        refreshing.insert(id)
      }
      let log = store.takeLog()
      let new = store.snapshot
      let touched = log.touching ?? []
      let place = "case \(index): \(old) → \(new), touched \(touched.sorted()); \(settings.replay)"
      #expect(log != .reshaped, "\(place)")
      guard let logged = Changeset(from: old, to: new, logged: touched, refreshing: refreshing) else {
        failures += 1
        Issue.record("no logged changeset: \(place)")
        continue
      }
      let full = Changeset(
        from: Snapshot(trusted: old.sections), to: Snapshot(trusted: new.sections), refreshing: refreshing)
      var problems: [String] = []
      if logged.itemChanges.deletes != full.itemChanges.deletes { problems.append("deletes") }
      if logged.itemChanges.inserts != full.itemChanges.inserts { problems.append("inserts") }
      if logged.itemChanges.updates != full.itemChanges.updates { problems.append("updates") }
      if logged.itemChanges.moves.count != full.itemChanges.moves.count { problems.append("move count") }
      if logged.sectionChanges != full.sectionChanges { problems.append("section changes") }
      if logged.stages.map(\.kind) != full.stages.map(\.kind) { problems.append("stage kinds") }
      if refreshing.isEmpty, let failure = check(old, new, changeset: logged) { problems.append(failure) }
      if logged.stages.last.map({ $0.state.sections != new.sections }) ?? false {
        problems.append("last stage's data")
      }
      if !problems.isEmpty {
        failures += 1
        Issue.record(
          "\(problems): \(place)\nlogged \(logged.itemChanges)\nfull \(full.itemChanges)")
      }
    }
    print("Logged changesets: \(settings.cases) random edit sequences checked; \(settings.replay)")
  }

  @Test("runs of untouched items split where a touched item stood, so the moves stay minimal")
  func splitRuns() throws {
    // r1 A1 A2 r2 r3 B1 B2 r4 → A1 A2 r1 r2 r3 r4 B1 B2: moving r1 and r4 is minimal (2), whereas
    // taking r1…r4 as one run would move A1, A2, B1 and B2 (4).
    var store = SectionStore(trusted: try Snapshot(layout("S: r1 A1 A2 r2 r3 B1 B2 r4")))
    _ = try store.moveItem(at: ItemPosition(section: 0, item: 1), to: ItemPosition(section: 0, item: 0))
    _ = try store.moveItem(at: ItemPosition(section: 0, item: 2), to: ItemPosition(section: 0, item: 1))
    _ = try store.moveItem(at: ItemPosition(section: 0, item: 5), to: ItemPosition(section: 0, item: 7))
    _ = try store.moveItem(at: ItemPosition(section: 0, item: 5), to: ItemPosition(section: 0, item: 7))
    let log = store.takeLog()
    #expect(store.snapshot.description == "[S: A1 A2 r1 r2 r3 r4 B1 B2]")
    #expect(log == .touched(["A1", "A2", "B1", "B2"]))
    let old = try Snapshot(layout("S: r1 A1 A2 r2 r3 B1 B2 r4"))
    let logged = try #require(
      Changeset(from: old, to: store.snapshot, logged: log.touching ?? [], refreshing: []))
    #expect(logged.itemChanges.moves.map(\.id).sorted() == ["r1", "r4"])
    #expect(check(old, store.snapshot, changeset: logged) == nil)
  }

  @Test("a reshaped log has no logged changeset: sections inserted or deleted need the full diff")
  func reshapedFallsBack() throws {
    let old = try Snapshot(layout("A: a b | B: c"))
    let new = try Snapshot(layout("B: c | A: a b"))
    #expect(Changeset(from: old, to: new, logged: [], refreshing: []) == nil)
    let fewer = try Snapshot(layout("A: a b"))
    #expect(Changeset(from: old, to: fewer, logged: ["c"], refreshing: []) == nil)
  }

  static func randomSections(using random: inout SeededGenerator) -> [TestSection] {
    let sectionCount = Int.random(in: 1...4, using: &random)
    var next = 0
    return (0..<sectionCount).map { section in
      let count = Int.random(in: 0...(section == 0 ? 60 : 20), using: &random)
      defer { next += count }
      return TestSection(
        id: "S\(section)", header: "S\(section)", items: (next..<(next + count)).map { TestItem("i\($0)") })
    }
  }

  /// One random item or section-content edit through the store, which logs what it touches.
  static func randomEdit(
    _ store: inout SectionStore<TestSection>, serial: Int, using random: inout SeededGenerator
  ) {
    let snapshot = store.snapshot
    let section = Int.random(in: 0..<snapshot.sectionCount, using: &random)
    let count = snapshot.itemCount(inSection: section)
    let position = ItemPosition(section: section, item: Int.random(in: 0...count, using: &random))
    let existing = position.item < count ? snapshot[position] : nil
    switch Int.random(in: 0..<10, using: &random) {
    case 0..<3:
      let items = (0..<Int.random(in: 1...3, using: &random)).map { TestItem("n\(serial)_\($0)") }
      _ = try? store.insertItems(items, at: position)
    case 3..<5:
      if let existing { _ = try? store.deleteItems([existing.id]) }
    case 5..<8:
      let target = Int.random(in: 0..<snapshot.sectionCount, using: &random)
      let limit = snapshot.itemCount(inSection: target) - (target == section ? 1 : 0)
      if existing != nil, limit >= 0 {
        _ = try? store.moveItem(
          at: position, to: ItemPosition(section: target, item: Int.random(in: 0...limit, using: &random)))
      }
    case 8:
      if var existing {
        existing.version += 1
        _ = try? store.replaceItem(existing)
      }
    default:
      var content = snapshot.section(at: section)
      content.header = (content.header ?? "") + "'"
      _ = try? store.replaceSectionContent(content)
    }
  }
}
