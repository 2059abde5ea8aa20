// Table-driven cases from shared/UIKIT_BATCH_RULES.md: valid batches accepted, invalid ones rejected by rule.

import SimpleSource
import SimpleSourceTesting
import Testing

private func at(_ section: Int, _ item: Int) -> ItemPosition { ItemPosition(section: section, item: item) }
private func move(_ from: ItemPosition, _ to: ItemPosition) -> StageCalls.Move<ItemPosition> {
  StageCalls.Move(from: from, to: to)
}
private func move(_ from: Int, _ to: Int) -> StageCalls.Move<Int> { StageCalls.Move(from: from, to: to) }

/// One batch applied to a view showing `before`, with the data source holding `after`.
struct BatchCase: Sendable, CustomTestStringConvertible {
  enum Outcome: Sendable, Equatable {
    case accepted
    case acceptedWithWarning(BatchRule)
    case rejected(BatchRule, hint: BatchRule? = nil)
  }
  let name: String
  let before: String
  let after: String
  let batch: StageCalls
  let outcome: Outcome

  init(_ name: String, _ before: String, _ after: String, _ batch: StageCalls, _ outcome: Outcome) {
    self.name = name
    self.before = before
    self.after = after
    self.batch = batch
    self.outcome = outcome
  }
  var testDescription: String { name }
}

@Suite("ReferenceListView applies UIKit's batch rules")
struct ReferenceListViewRuleTests {
  static let cases: [BatchCase] = [
    // Accepted: coordinate spaces, mapping and staging that UIKit allows.
    .init(
      "R1/R2 delete at old, insert at new index", "A: a b c", "A: a c d",
      StageCalls(deleteItems: [at(0, 1)], insertItems: [at(0, 2)]), .accepted),
    .init(
      "R3 move from before to after", "A: a b c", "A: c a b",
      StageCalls(moveItems: [move(at(0, 2), at(0, 0))]), .accepted),
    .init(
      "R7 implicit shifts need no moves", "A: a b c d", "A: b c d a",
      StageCalls(moveItems: [move(at(0, 0), at(0, 3))]), .accepted),
    .init(
      "R3 move across sections", "A: a b | B: c", "A: b | B: a c",
      StageCalls(moveItems: [move(at(0, 0), at(1, 0))]), .accepted),
    .init(
      "R1 section delete and insert", "A: a | B: b", "C: c | B: b",
      StageCalls(deleteSections: [0], insertSections: [0]), .accepted),
    .init(
      "R3 section move", "A: a | B: b | C: c", "C: c | A: a | B: b", StageCalls(moveSections: [move(2, 0)]),
      .accepted),
    .init("R4 reload alone", "A: a b", "A: a b'", StageCalls(reloadItems: [at(0, 1)]), .accepted),
    .init("R5 reconfigure alone", "A: a b", "A: a b'", StageCalls(reconfigureItems: [at(0, 1)]), .accepted),
    .init(
      "R4 reload adjusted by deletes", "A: a b c", "A: b c'",
      StageCalls(deleteItems: [at(0, 0)], reloadItems: [at(0, 2)]), .accepted),
    .init(
      "R4 reload adjusted by a deleted section", "A: a | B: b c", "B: b c'",
      StageCalls(deleteSections: [0], reloadItems: [at(1, 1)]), .accepted),
    .init(
      "R28 item ops in merely shifted sections", "A: a | B: b c", "N: | A: a | B: b",
      StageCalls(insertSections: [0], deleteItems: [at(1, 1)]), .accepted),
    .init(
      "R33 section reload with a changed header", "A: a | B: b", "A: a | B': b",
      StageCalls(reloadSections: [1]), .accepted),
    .init(
      "section header reconfigured in place", "A: a | B: b", "A: a | B': b",
      StageCalls(reconfigureSections: [1]), .accepted),
    .init(
      "R23 exact duplicate move is dropped", "A: a b c", "A: b c a",
      StageCalls(moveItems: [move(at(0, 0), at(0, 2)), move(at(0, 0), at(0, 2))]), .accepted),
    .init("everything deleted", "A: a | B: b", "", StageCalls(deleteSections: [0, 1]), .accepted),
    .init("everything new", "", "A: a | B: b", StageCalls(insertSections: [0, 1]), .accepted),
    .init(
      "swap by one move", "A: a b", "A: b a", StageCalls(moveItems: [move(at(0, 1), at(0, 0))]), .accepted),
    .init(
      "reload and moves that map correctly", "A: a b c", "A: c b' a",
      StageCalls(reloadItems: [at(0, 1)], moveItems: [move(at(0, 0), at(0, 2)), move(at(0, 2), at(0, 0))]),
      .accepted),
    .init("empty batch, unchanged data", "A: a", "A: a", StageCalls(), .accepted),

    // Warnings: legal but redundant, needless or fragile.
    .init(
      "R25 section lists merge duplicates", "A: a | B: b", "B: b", StageCalls(deleteSections: [0, 0]),
      .acceptedWithWarning(.r25)),
    .init(
      "R27 item delete inside a deleted section", "A: a | B: b", "B: b",
      StageCalls(deleteSections: [0], deleteItems: [at(0, 0)]), .acceptedWithWarning(.r27)),
    .init(
      "R27 item insert inside an inserted section", "A: a", "N: n | A: a",
      StageCalls(insertSections: [0], insertItems: [at(0, 0)]), .acceptedWithWarning(.r27)),
    .init(
      "R30 section reload mixed with inserts", "A: a | B: b", "A: a x | B': b",
      StageCalls(reloadSections: [1], insertItems: [at(0, 1)]), .acceptedWithWarning(.r30)),
    .init(
      "R33 reload of an unchanged item", "A: a b", "A: a b", StageCalls(reloadItems: [at(0, 0)]),
      .acceptedWithWarning(.r33)),
    .init(
      "R33 reconfigure of an unchanged item", "A: a b", "A: a b", StageCalls(reconfigureItems: [at(0, 0)]),
      .acceptedWithWarning(.r33)),
    .init(
      "R33 delete and insert of an unchanged item", "A: a b", "A: b a",
      StageCalls(deleteItems: [at(0, 0)], insertItems: [at(0, 1)]), .acceptedWithWarning(.r33)),
    .init(
      "R33 reload of an unchanged section", "A: a | B: b", "A: a | B: b", StageCalls(reloadSections: [1]),
      .acceptedWithWarning(.r33)),
    .init(
      "R5 reconfigure next to structural changes", "A: a b", "A: a' b x",
      StageCalls(insertItems: [at(0, 2)], reconfigureItems: [at(0, 0)]), .acceptedWithWarning(.r5)),

    // Rejected: counts.
    .init("R8 section count", "A: a", "A: a | B: b", StageCalls(), .rejected(.r8)),
    .init("R9 item count", "A: a b", "A: a", StageCalls(), .rejected(.r9)),
    .init(
      "R31 sequential delete indices instead of before-state ones", "A: a b c", "A: b",
      StageCalls(deleteItems: [at(0, 0), at(0, 1)]), .rejected(.r31)),
    .init(
      "R25 one item deleted twice", "A: a b c", "A: c",
      StageCalls(deleteItems: [at(0, 0), at(0, 0)]), .rejected(.r25)),
    // Rejected: ranges.
    .init(
      "R11 delete of a missing section", "A: a", "A: a", StageCalls(deleteSections: [3]), .rejected(.r11)),
    .init(
      "R11 reload of a missing section", "A: a", "A: a", StageCalls(reloadSections: [2]), .rejected(.r11)),
    .init("R12 insert past the end", "A: a", "N: | A: a", StageCalls(insertSections: [2]), .rejected(.r12)),
    .init(
      "R13 delete of a missing item", "A: a", "A: a", StageCalls(deleteItems: [at(0, 5)]), .rejected(.r13)),
    .init(
      "R13 delete in a missing section", "A: a", "A: a", StageCalls(deleteItems: [at(4, 0)]), .rejected(.r13)
    ),
    .init("R14 insert past the end", "A: a", "A: a b", StageCalls(insertItems: [at(0, 9)]), .rejected(.r14)),
    .init(
      "R15 move of a missing section", "A: a", "A: a", StageCalls(moveSections: [move(5, 0)]),
      .rejected(.r15)),
    .init(
      "R15 move to a missing section", "A: a | B: b", "B: b | A: a", StageCalls(moveSections: [move(0, 5)]),
      .rejected(.r15)),
    .init(
      "R16 move of a missing item", "A: a", "A: a", StageCalls(moveItems: [move(at(0, 9), at(0, 0))]),
      .rejected(.r16)),
    .init(
      "R16 move to a missing position", "A: a b", "A: b a",
      StageCalls(moveItems: [move(at(0, 0), at(0, 7))]),
      .rejected(.r16)),
    .init(
      "R17 reconfigure of a missing item", "A: a", "A: a", StageCalls(reconfigureItems: [at(0, 9)]),
      .rejected(.r17)),
    // Rejected: conflicts.
    .init(
      "R18 delete and reload one item", "A: a b", "A: a",
      StageCalls(deleteItems: [at(0, 1)], reloadItems: [at(0, 1)]),
      .rejected(.r18)),
    .init(
      "R18 delete and reload one section", "A: a | B: b", "B: b",
      StageCalls(deleteSections: [0], reloadSections: [0]),
      .rejected(.r18)),
    .init(
      "R19 delete and move one item", "A: a b c", "A: b c",
      StageCalls(deleteItems: [at(0, 0)], moveItems: [move(at(0, 0), at(0, 1))]), .rejected(.r19)),
    .init(
      "R19 delete and move one section", "A: a | B: b", "B: b",
      StageCalls(deleteSections: [0], moveSections: [move(0, 0)]), .rejected(.r19)),
    .init(
      "R19 reload and move one item (openradar 33662307)", "A: a b c", "A: b c a'",
      StageCalls(reloadItems: [at(0, 0)], moveItems: [move(at(0, 0), at(0, 2))]), .rejected(.r19, hint: .r29)
    ),
    .init(
      "R20 insert and move to one index path", "A: a b c", "A: c a b x",
      StageCalls(insertItems: [at(0, 0)], moveItems: [move(at(0, 2), at(0, 0))]), .rejected(.r20)),
    .init(
      "R20 insert and move to one section", "A: a | B: b", "B: b | A: a | N:",
      StageCalls(insertSections: [0], moveSections: [move(1, 0)]), .rejected(.r20)),
    .init(
      "R20 reload re-inserted at a move destination (dev forums)", "A: a b c d", "A: d a c'",
      StageCalls(
        deleteItems: [at(0, 1)], reloadItems: [at(0, 2)],
        moveItems: [move(at(0, 0), at(0, 1)), move(at(0, 3), at(0, 0))]), .rejected(.r20, hint: .r29)),
    .init(
      "R20 reload of a displaced section (IGListKit#690)", "A: | B: | C: | D: | E:",
      "A: | B: | N: | D': | C:",
      StageCalls(deleteSections: [4], insertSections: [2], reloadSections: [3], moveSections: [move(2, 4)]),
      .rejected(.r20)),
    .init(
      "R21 move out of a deleted section", "A: a | B: b", "B: b a",
      StageCalls(deleteSections: [0], moveItems: [move(at(0, 0), at(0, 1))]), .rejected(.r21)),
    .init(
      "R21 move out of a reloaded section", "A: a b | B: c", "A': b | B: a c",
      StageCalls(reloadSections: [0], moveItems: [move(at(0, 0), at(1, 0))]), .rejected(.r21)),
    .init(
      "R22 move into an inserted section", "A: a b", "N: a | A: b",
      StageCalls(insertSections: [0], moveItems: [move(at(0, 0), at(0, 0))]), .rejected(.r22)),
    .init(
      "R23 one item to two destinations", "A: a b c", "A: b c a",
      StageCalls(moveItems: [move(at(0, 0), at(0, 1)), move(at(0, 0), at(0, 2))]), .rejected(.r23)),
    .init(
      "R23 one section to two destinations", "A: | B: | C:", "B: | C: | A:",
      StageCalls(moveSections: [move(0, 1), move(0, 2)]), .rejected(.r23)),
    .init(
      "R24 two items to one destination", "A: a b c", "A: c a b",
      StageCalls(moveItems: [move(at(0, 0), at(0, 2)), move(at(0, 1), at(0, 2))]), .rejected(.r24)),
    .init(
      "R24 two sections to one destination", "A: | B: | C:", "C: | A: | B:",
      StageCalls(moveSections: [move(0, 2), move(1, 2)]), .rejected(.r24)),
    .init(
      "R25 one item inserted twice", "A: a", "A: a b c",
      StageCalls(insertItems: [at(0, 1), at(0, 1)]), .rejected(.r25)),
    .init(
      "R25 one item reloaded twice", "A: a", "A: a'", StageCalls(reloadItems: [at(0, 0), at(0, 0)]),
      .rejected(.r25)),
    .init(
      "R26 reload inside a deleted section", "A: a | B: b", "B: b",
      StageCalls(deleteSections: [0], reloadItems: [at(0, 0)]), .rejected(.r26)),
    // Rejected: known UIKit bugs.
    .init(
      "R28 item delete in a moved section", "A: a b | B: c", "B: c | A: b",
      StageCalls(moveSections: [move(0, 1)], deleteItems: [at(0, 0)]), .rejected(.r28)),
    .init(
      "R28 item insert into a moved section", "A: a | B: c", "B: c | A: a x",
      StageCalls(moveSections: [move(0, 1)], insertItems: [at(1, 1)]), .rejected(.r28)),
    .init(
      "R28 no-op section move with an item move (openradar 48941906)", "A: a | B: b", "A: a b | B:",
      StageCalls(moveSections: [move(1, 1)], moveItems: [move(at(1, 0), at(0, 1))]), .rejected(.r28)),
    .init(
      "R29 reload plus move shows a stale cell", "A: a b c d", "A: b' c d a",
      StageCalls(reloadItems: [at(0, 1)], moveItems: [move(at(0, 0), at(0, 3))]), .rejected(.r31, hint: .r29)
    ),
    // Rejected: wrong result.
    .init(
      "R31 moves that do not give the final order", "A: a b c", "A: c b a",
      StageCalls(moveItems: [move(at(0, 0), at(0, 2))]), .rejected(.r31)),
    .init("R31 section order not matching the data", "A: | B:", "B: | A:", StageCalls(), .rejected(.r31)),
    .init("R32 changed item not refreshed", "A: a b", "A: a b'", StageCalls(), .rejected(.r32)),
    .init(
      "R32 a move alone keeps the stale cell", "A: a b", "A: b' a",
      StageCalls(moveItems: [move(at(0, 1), at(0, 0))]), .rejected(.r32)),
    .init("R32 changed header not refreshed", "A: a", "A': a", StageCalls(), .rejected(.r32)),
    .init(
      "R5 reconfigure resolves another item after an insert", "A: a b c", "A: x a b' c",
      StageCalls(insertItems: [at(0, 0)], reconfigureItems: [at(0, 1)]), .rejected(.r5)),
  ]

  @Test("a batch from the rules document", arguments: cases)
  func batch(_ example: BatchCase) {
    var view = ReferenceListView(layout(example.before))
    let initial = view.itemIDs
    do {
      try view.performBatchUpdates(example.batch, data: layout(example.after))
      switch example.outcome {
      case .accepted:
        #expect(view.warnings.isEmpty, "unexpected warnings: \(view.warnings)")
      case .acceptedWithWarning(let rule):
        #expect(view.warnings.map(\.rule).contains(rule), "expected a \(rule) warning, got \(view.warnings)")
      case .rejected(let rule, _):
        Issue.record("expected \(rule), but the batch was accepted")
      }
      #expect(view.shows(layout(example.after)))
    } catch {
      guard case .rejected(let rule, let hint) = example.outcome else {
        Issue.record("expected acceptance, got \(error)")
        return
      }
      #expect(error.rule == rule, "\(error)")
      if let hint { #expect(error.hint == hint, "\(error)") }
      #expect(view.itemIDs == initial, "a rejected batch must leave the view unchanged")
      #expect(view.batchCount == 0)
    }
  }

  @Test("the table covers at least 40 cases")
  func coverage() {
    #expect(Self.cases.count >= 40)
    #expect(Set(Self.cases.map(\.name)).count == Self.cases.count, "case names are unique")
  }
}
