// ReferenceListView against an independent model of UIKit's rules, on arbitrary batches, and the regressions
// that such batches found.

import SimpleSource
import SimpleSourceTesting
import Testing

private func at(_ section: Int, _ item: Int) -> ItemPosition { ItemPosition(section: section, item: item) }

@Suite("ReferenceListView is total and agrees with an independent model of the rules")
struct ReferenceListViewModelTests {
  // MARK: - Regressions

  @Test("R27: item inserts inside a reloaded section are dropped unchecked, not a crash")
  func insertInsideReloadedSection() throws {
    var view = ReferenceListView(layout("A:"))
    try view.performBatchUpdates(
      StageCalls(reloadSections: [0], insertItems: [at(0, 40)]), data: layout("A:"))
    #expect(view.shows(layout("A:")))
    #expect(view.warnings.map(\.rule).contains(.r27))
  }

  @Test("R27: item inserts inside an inserted section are dropped unchecked, not a crash")
  func insertInsideInsertedSection() throws {
    var view = ReferenceListView(layout("A: a"))
    try view.performBatchUpdates(
      StageCalls(insertSections: [0], deleteItems: [at(0, 0)], insertItems: [at(0, 9), at(0, -3)]),
      data: layout("N: | A:"))
    #expect(view.shows(layout("N: | A:")))
  }

  @Test("R18 holds for a reload inside a reloaded section")
  func deleteAndReloadInsideReloadedSection() {
    var view = ReferenceListView(layout("A: a"))
    #expect(throws: ListViewError.self) {
      try view.performBatchUpdates(
        StageCalls(reloadSections: [0], deleteItems: [at(0, 0)], reloadItems: [at(0, 0)]), data: layout("A:")
      )
    }
    let rule = Self.rule(
      of: StageCalls(reloadSections: [0], deleteItems: [at(0, 0)], reloadItems: [at(0, 0)]),
      "A: a", "A:")
    #expect(rule == .r18)
  }

  @Test("R18 is raised before R26, as UIKit decomposes every reload first")
  func r18BeforeR26() {
    let rule = Self.rule(
      of: StageCalls(deleteSections: [0], deleteItems: [at(0, 0)], reloadItems: [at(0, 0)]), "A: a | B: b",
      "B: b")
    #expect(rule == .r18)
    let later = Self.rule(
      of: StageCalls(deleteSections: [0], deleteItems: [at(1, 0)], reloadItems: [at(0, 0), at(1, 0)]),
      "A: a | B: b", "B:")
    #expect(later == .r18)
  }

  @Test("NSIndexSet: a section deleted twice shifts a reload once")
  func duplicateSectionDeletes() throws {
    var view = ReferenceListView(layout("A: | B:"))
    try view.performBatchUpdates(
      StageCalls(deleteSections: [0, 0], reloadSections: [1]), data: layout("B:"))
    #expect(view.shows(layout("B:")))
    #expect(view.warnings.map(\.rule).contains(.r25))
  }

  @Test("NSIndexSet: a section inserted twice shifts a reload once")
  func duplicateSectionInserts() throws {
    var view = ReferenceListView(layout("A: a"))
    try view.performBatchUpdates(
      StageCalls(insertSections: [0, 0], reloadItems: [at(0, 0)]), data: layout("B: | A: a'"))
    #expect(view.shows(layout("B: | A: a'")))
  }

  @Test("an item index of Int.max is an item, not a section operation")
  func hugeItemIndexIsAnItem() {
    #expect(
      Self.rule(of: StageCalls(deleteSections: [0], reloadItems: [at(0, .max)]), "A: a | B: b", "B: b")
        == .r26)
    #expect(Self.rule(of: StageCalls(reloadItems: [at(0, .max)]), "A: a", "A: a") == .r13)
  }

  @Test("garbage indices are rejected by rule, never a trap", arguments: [Int.min, -1, 1 << 40, Int.max])
  func garbageIndices(_ index: Int) {
    let batches = [
      StageCalls(deleteSections: [index]), StageCalls(insertSections: [index]),
      StageCalls(reloadSections: [index]), StageCalls(moveSections: [.init(from: index, to: 0)]),
      StageCalls(moveSections: [.init(from: 0, to: index)]), StageCalls(reconfigureSections: [index]),
      StageCalls(deleteItems: [at(index, index)]), StageCalls(insertItems: [at(0, index)]),
      StageCalls(reloadItems: [at(0, index)]), StageCalls(reloadItems: [at(index, 0)]),
      StageCalls(reconfigureItems: [at(0, index)]),
      StageCalls(moveItems: [.init(from: at(0, 0), to: at(index, 0))]),
      StageCalls(
        deleteSections: [0], reloadItems: [at(1, index)], moveItems: [.init(from: at(index, 1), to: at(0, 0))]
      ),
    ]
    for batch in batches {
      #expect(Self.rule(of: batch, "A: a b | B: c", "A: a b | B: c") != nil, "\(batch)")
    }
  }

  @Test("an interactive move to a missing section or position is an R16 error, not a trap")
  func interactiveMoveOutOfRange() throws {
    var view = ReferenceListView(layout("A: a b | B: c"))
    for destination in [at(-1, 0), at(2, 0), at(0, 2), at(1, 2), at(0, -1)] {
      #expect(throws: ListViewError.self) { try view.moveCellInteractively(from: at(0, 0), to: destination) }
    }
    try view.moveCellInteractively(from: at(0, 0), to: at(0, 1))
    #expect(view.itemIDs == [["b", "a"], ["c"]])
    try view.moveCellInteractively(from: at(0, 0), to: at(1, 1))
    #expect(view.itemIDs == [["a"], ["c", "b"]])
  }

  private static func rule(of batch: StageCalls, _ before: String, _ after: String) -> BatchRule? {
    var view = ReferenceListView(layout(before))
    do {
      try view.performBatchUpdates(batch, data: layout(after))
      return nil
    } catch {
      return error.rule
    }
  }

  // MARK: - Random batches against the model

  static let settings = RandomTestSettings.current(
    defaultCases: 20_000, casesVariable: "SIMPLESOURCE_BATCH_CASES")

  @Test("arbitrary batches: no crash, and every verdict equals the model's", arguments: 0..<4)
  func randomBatches(shard: Int) {
    let settings = Self.settings
    var random = SeededGenerator(seed: settings.seed(forShard: shard))
    let count = settings.cases / 4 + (shard < settings.cases % 4 ? 1 : 0)
    var verdicts: [String: Int] = [:]
    var failures = 0
    for index in 0..<count {
      let (before, after, batch) = RandomBatches.next(using: &random)
      let expected = BatchRulesModel(before: before, after: after, batch: batch).verdict()
      let actual = ReferenceListView<TestSection>.verdict(before: before, after: after, batch: batch)
      switch actual {
      case .accepted: verdicts["accepted", default: 0] += 1
      case .rejected(let rule): verdicts[rule, default: 0] += 1
      }
      if actual != expected {
        failures += 1
        if failures <= 5 {
          Issue.record(
            """
            shard \(shard) case \(index): before \(describe(before)), after \(describe(after)), batch \(batch)
              ReferenceListView: \(actual)
              model:             \(expected)
            \(settings.replay)
            """)
        }
      }
    }
    let spread = verdicts.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }.joined(
      separator: ", ")
    print(
      "Batch model shard \(shard): \(count) batches, \(failures) disagreements (\(spread)); \(settings.replay)"
    )
    if shard == 0 && count >= 20_000 {
      // The generator must reach acceptance and the rules that guard the trickiest paths. Some (R20, R23,
      // R28) end about one batch in a thousand: 2,500 batches (the TSan step's shard) missed R28 in CI, and
      // 5,000 (the default) would miss it about once in 150 runs. From 20,000 (CI's full-strength step has
      // 25,000) a miss is a broken generator.
      for rule in ["accepted", "R9", "R13", "R18", "R19", "R20", "R25", "R28", "R31", "R32"] {
        #expect(verdicts[rule, default: 0] > 0, "no batch ended \(rule): \(spread)")
      }
    }
  }

  private func describe(_ sections: [TestSection]) -> String {
    "\""
      + sections.map { section in
        "\(section.id)\(section.header?.hasSuffix("v0") == false ? "'" : ""): "
          + section.items.map(\.description).joined(separator: " ")
      }.joined(separator: " | ") + "\""
  }
}

/// Random batches of every kind: real stages of a diff, stages perturbed by one or two edits, and garbage
/// (negative, huge and repeated indices, every operation mixed), on small layouts.
enum RandomBatches {
  static func next(using random: inout SeededGenerator) -> ([TestSection], [TestSection], StageCalls) {
    let pairs = RandomSnapshotPairs(maxSections: 4, maxItems: 9)
    var (old, new) = pairs.next(using: &random)
    if Int.random(in: 0..<10, using: &random) < 5, let stage = stage(old, new, using: &random) {
      var batch = stage.batch
      for _ in 0..<[0, 1, 1, 2][Int.random(in: 0..<4, using: &random)] { perturb(&batch, using: &random) }
      return (stage.before, stage.after, batch)
    }
    if Bool.random(using: &random) { new = pairs.next(using: &random).new }
    var batch = StageCalls()
    for _ in 0..<Int.random(in: 0...6, using: &random) { perturb(&batch, using: &random) }
    return (old, new, batch)
  }

  /// One stage of the diff of `old` to `new`, with the data before and after it.
  private static func stage(_ old: [TestSection], _ new: [TestSection], using random: inout SeededGenerator)
    -> (before: [TestSection], after: [TestSection], batch: StageCalls)?
  {
    guard let source = try? Snapshot(old), let target = try? Snapshot(new) else { return nil }
    let stages = Changeset(from: source, to: target).stages
    guard !stages.isEmpty else { return nil }
    let index = Int.random(in: 0..<stages.count, using: &random)
    let before = index == 0 ? old : stages[index - 1].state.sections
    let style: RefreshStyle = Bool.random(using: &random) ? .reload : .reconfigure
    return (before, stages[index].state.sections, stages[index].calls(refreshing: style))
  }

  private static func index(using random: inout SeededGenerator) -> Int {
    switch Int.random(in: 0..<24, using: &random) {
    case 0: -1
    case 1: .max
    case 2: .min
    case 3: 1 << 40
    default: Int.random(in: 0...5, using: &random)
    }
  }

  private static func position(using random: inout SeededGenerator) -> ItemPosition {
    ItemPosition(section: index(using: &random), item: index(using: &random))
  }

  /// One edit: add an operation (sometimes a copy of one already there), remove one, or shift one by one.
  static func perturb(_ batch: inout StageCalls, using random: inout SeededGenerator) {
    func edit(_ list: inout [Int]) {
      switch Int.random(in: 0..<4, using: &random) {
      case 0 where !list.isEmpty: list.remove(at: Int.random(in: 0..<list.count, using: &random))
      case 1 where !list.isEmpty: list.append(list[Int.random(in: 0..<list.count, using: &random)])
      case 2 where !list.isEmpty:
        let at = Int.random(in: 0..<list.count, using: &random)
        list[at] = list[at] &+ (Bool.random(using: &random) ? 1 : -1)
      default: list.append(index(using: &random))
      }
    }
    func edit(_ list: inout [ItemPosition]) {
      switch Int.random(in: 0..<4, using: &random) {
      case 0 where !list.isEmpty: list.remove(at: Int.random(in: 0..<list.count, using: &random))
      case 1 where !list.isEmpty: list.append(list[Int.random(in: 0..<list.count, using: &random)])
      case 2 where !list.isEmpty:
        let at = Int.random(in: 0..<list.count, using: &random)
        list[at].item = list[at].item &+ (Bool.random(using: &random) ? 1 : -1)
      default: list.append(position(using: &random))
      }
    }
    func edit<P>(_ list: inout [StageCalls.Move<P>], _ make: (inout SeededGenerator) -> P) {
      switch Int.random(in: 0..<3, using: &random) {
      case 0 where !list.isEmpty: list.remove(at: Int.random(in: 0..<list.count, using: &random))
      case 1 where !list.isEmpty:
        let move = list[Int.random(in: 0..<list.count, using: &random)]
        list.append(Bool.random(using: &random) ? move : StageCalls.Move(from: move.from, to: make(&random)))
      default: list.append(StageCalls.Move(from: make(&random), to: make(&random)))
      }
    }
    switch Int.random(in: 0..<10, using: &random) {
    case 0: edit(&batch.deleteSections)
    case 1: edit(&batch.insertSections)
    case 2: edit(&batch.reloadSections)
    case 3: edit(&batch.moveSections) { index(using: &$0) }
    case 4: edit(&batch.reconfigureSections)
    case 5: edit(&batch.deleteItems)
    case 6: edit(&batch.insertItems)
    case 7: edit(&batch.reloadItems)
    case 8: edit(&batch.reconfigureItems)
    default: edit(&batch.moveItems) { position(using: &$0) }
    }
  }
}
