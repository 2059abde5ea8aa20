// Table tests of Changeset on the classic crash cases, minimal moves, refreshes and addressing.

import SimpleSource
import SimpleSourceTesting
import Testing

/// A named pair of layouts and what the changeset must look like.
struct DiffCase: Sendable, CustomTestStringConvertible {
  let name: String
  let old: String
  let new: String
  let stages: [ChangeStage<TestSection>.Kind]
  let itemMoves: Int
  let sectionMoves: Int
  var testDescription: String { name }

  init(
    _ name: String, _ old: String, _ new: String, stages: [ChangeStage<TestSection>.Kind], itemMoves: Int = 0,
    sectionMoves: Int = 0
  ) {
    self.name = name
    self.old = old
    self.new = new
    self.stages = stages
    self.itemMoves = itemMoves
    self.sectionMoves = sectionMoves
  }
}

@Suite("Changeset")
struct ChangesetTests {
  static let cases: [DiffCase] = [
    .init("nothing changed", "A: a b | B: c", "A: a b | B: c", stages: []),
    .init("everything deleted", "A: a b | B: c", "", stages: [.structure]),
    .init("everything new", "", "A: a b | B: c", stages: [.structure]),
    .init("all items replaced", "A: a b", "A: c d", stages: [.structure]),
    .init("swap two items", "A: a b", "A: b a", stages: [.structure], itemMoves: 1),
    .init("rotate left", "A: a b c d e", "A: b c d e a", stages: [.structure], itemMoves: 1),
    .init("rotate right", "A: a b c d e", "A: e a b c d", stages: [.structure], itemMoves: 1),
    .init("reverse", "A: a b c d", "A: d c b a", stages: [.structure], itemMoves: 3),
    .init(
      "move and reload (R29)", "A: a b c d", "A: b' c d a'", stages: [.refresh, .structure], itemMoves: 1),
    .init(
      "move and reload across sections", "A: a b | B: c", "A: b | B: a' c", stages: [.refresh, .structure],
      itemMoves: 1),
    .init("reload next to deletes and inserts", "A: a b c", "A: x b' c", stages: [.refresh, .structure]),
    .init(
      "section move with item deletes and inserts inside (R28)", "A: a b | B: c | C: d",
      "B: c | C: d | A: b x",
      stages: [.deletes, .sectionInsertsAndMoves, .itemInsertsAndMoves], sectionMoves: 1),
    .init(
      "section move with items moving into it (R28)", "A: a | B: b | C: c", "C: c a | A: | B: b",
      stages: [.structure, .itemInsertsAndMoves], itemMoves: 1, sectionMoves: 1),
    .init(
      "section move with item deletes only (R28)", "A: a b | B: c | C: d", "B: c x | C: d | A: b",
      stages: [.deletes, .structure], sectionMoves: 1),
    .init(
      "section delete next to a moved section with inserts", "A: a | B: b | C: c", "C: c x | A: a",
      stages: [.structure, .itemInsertsAndMoves], sectionMoves: 1),
    .init(
      "the moved section is the one without item ops", "A: a b | B: c", "B: c | A: b x", stages: [.structure],
      sectionMoves: 1),
    .init(
      "section move without item ops stays one batch", "A: a | B: b x | C: c", "C: c | A: a | B: b",
      stages: [.structure], sectionMoves: 1),
    .init("swap sections", "A: a | B: b", "B: b | A: a", stages: [.structure], sectionMoves: 1),
    .init("item out of a deleted section (R21)", "A: a b | B: c", "B: c a", stages: [.structure]),
    .init("item into an inserted section (R22)", "A: a b", "N: a | A: b", stages: [.structure]),
    .init(
      "items across deleted and inserted sections", "A: a | B: b | C: c", "N: b | C: c a",
      stages: [.structure]),
    .init("header changed only", "A: a | B: b", "A: a | B': b", stages: [.refresh]),
    .init(
      "header changed and section moved", "A: a | B: b", "B': b | A: a", stages: [.refresh, .structure],
      sectionMoves: 1),
    .init("empty sections", "A: | B: | C:", "C: | A: | D:", stages: [.structure], sectionMoves: 1),
    .init(
      "moves between every pair of sections", "A: a b | B: c d | C: e f", "A: c e | B: a f | C: b d",
      stages: [.structure], itemMoves: 6),
  ]

  @Test("a classic case replays exactly and passes UIKit's rules", arguments: cases)
  func classic(_ example: DiffCase) throws {
    let old = snapshot(example.old)
    let new = snapshot(example.new)
    let changeset = Changeset(from: old, to: new)
    #expect(changeset.stages.map(\.kind) == example.stages)
    #expect(changeset.itemChanges.moves.count == example.itemMoves)
    #expect(changeset.sectionChanges.moves.count == example.sectionMoves)
    for style in [RefreshStyle.reload, .reconfigure] {
      var view = ReferenceListView(old)
      try view.apply(changeset, refreshing: style)
      #expect(view.shows(new.sections))
      #expect(view.warnings.isEmpty, "\(view.warnings)")
    }
    #expect(check(old, new) == nil)
  }

  @Test("one element from the front to the back of 1,000 is one move")
  func frontToBack() throws {
    let ids = (0..<1000).map { "\($0)" }
    let old = try Snapshot([TestSection(id: "A", items: ids.map { TestItem($0) })])
    let new = try Snapshot([TestSection(id: "A", items: (ids.dropFirst() + ["0"]).map { TestItem($0) })])
    let changeset = Changeset(from: old, to: new)
    #expect(
      changeset.itemChanges.moves == [
        ItemChange(id: "0", from: .init(section: 0, item: 0), to: .init(section: 0, item: 999))
      ])
    #expect(changeset.stages.count == 1)
  }

  @Test("an empty changeset has no stages and empty summaries")
  func empty() {
    let changeset = Changeset(from: snapshot("A: a"), to: snapshot("A: a"))
    #expect(changeset.isEmpty)
    #expect(changeset.stages.isEmpty)
    #expect(changeset.itemChanges.isEmpty && changeset.sectionChanges.isEmpty)
  }

  @Test("every change is addressed by id and by old and new position")
  func addressing() {
    let changeset = Changeset(from: snapshot("A: a b c | B: d"), to: snapshot("B: d' c | A: x a"))
    let items = changeset.itemChanges
    #expect(items.deletes == [.init(id: "b", from: .init(section: 0, item: 1))])
    #expect(items.inserts == [.init(id: "x", to: .init(section: 1, item: 0))])
    #expect(
      items.moves == [ItemChange(id: "c", from: .init(section: 0, item: 2), to: .init(section: 0, item: 1))])
    #expect(
      items.updates == [ItemChange(id: "d", from: .init(section: 1, item: 0), to: .init(section: 0, item: 0))]
    )
    #expect(changeset.sectionChanges.moves.count == 1)
    #expect(ItemPosition(section: 1, item: 0).indexPath == [1, 0])
  }

  @Test("a refresh stage holds the old shape with new contents")
  func refreshStageData() throws {
    let changeset = Changeset(from: snapshot("A: a b | B: c"), to: snapshot("B: c' | A: b a"))
    let refresh = try #require(changeset.stages.first)
    #expect(refresh.kind == .refresh)
    #expect(refresh.state.sections.map(\.id) == ["A", "B"])
    #expect(refresh.state.sections[1].items == [TestItem("c", version: 1)])
    #expect(
      refresh.itemChanges.updates == [
        ItemChange(id: "c", from: .init(section: 1, item: 0), to: .init(section: 1, item: 0))
      ])
    #expect(refresh.state.position(ofItem: "c") == ItemPosition(section: 1, item: 0))
  }

  @Test("reload style reloads a changed section; reconfigure style keeps its cells")
  func sectionRefreshStyles() throws {
    let old = snapshot("A: a | B: b")
    let changeset = Changeset(from: old, to: snapshot("A: a | B': b'"))
    let stage = try #require(changeset.stages.first)
    #expect(stage.calls(refreshing: .reload) == StageCalls(reloadSections: [1]))
    #expect(
      stage.calls(refreshing: .reconfigure)
        == StageCalls(reconfigureSections: [1], reconfigureItems: [ItemPosition(section: 1, item: 0)]))
    var view = ReferenceListView(old)
    let serial = view.cell(at: ItemPosition(section: 1, item: 0)).serial
    try view.apply(changeset, refreshing: .reconfigure)
    #expect(view.cell(at: ItemPosition(section: 1, item: 0)).serial == serial)
    #expect(view.sections[1].section.header == "B v1")
  }

  @Test("S4: the staged batches collapsed into one are rejected")
  func collapsedStagesAreRejected() throws {
    let old = snapshot("A: a b | B: c | C: d")
    let new = snapshot("B: c | C: d | A: b x")
    let stages = Changeset(from: old, to: new).stages.map { $0.calls() }
    #expect(stages.count == 3)
    var collapsed = StageCalls()
    for stage in stages {
      collapsed.deleteSections += stage.deleteSections
      collapsed.insertSections += stage.insertSections
      collapsed.moveSections += stage.moveSections
      collapsed.deleteItems += stage.deleteItems
      collapsed.insertItems += stage.insertItems
      collapsed.moveItems += stage.moveItems
    }
    var view = ReferenceListView(old)
    #expect(throws: ListViewError.self) { try view.performBatchUpdates(collapsed, data: new.sections) }
  }
}

@Suite("Readable changes")
struct ChangeDescriptionTests {
  @Test("changes, changesets and batches print their ids and positions")
  func descriptions() throws {
    let before = try Snapshot(layout("A: alice grace | B: bob"))
    let after = try Snapshot(layout("A: bob alice | B: carol"))
    let changeset = Changeset(from: before, to: after)
    #expect(
      changeset.itemChanges.description
        == "delete grace at [0, 1], insert carol at [1, 0], move bob [1, 0] → [0, 0]")
    #expect(changeset.description == "items: \(changeset.itemChanges)")
    #expect(ChangeList<String, Int>().description == "no change")
    let batch = UpdateBatch(from: 3, to: 5, changeset: changeset)
    #expect(batch.description == "3 → 5: \(changeset)")
    let sections = Changeset(from: before, to: try Snapshot(layout("A: alice grace | B: bob | S:")))
    #expect(sections.description == "sections: insert S at 2")
  }
}
