// Tests that the reference view tracks cell identity: moves keep cells, reloads replace, reconfigures update.

import SimpleSource
import SimpleSourceTesting
import Testing

@Suite("ReferenceListView cell identity")
struct ReferenceListViewCellTests {
  private func at(_ section: Int, _ item: Int) -> ItemPosition { ItemPosition(section: section, item: item) }

  @Test("a moved item keeps its cell, a reloaded one gets a new cell, a reconfigured one keeps it")
  func identity() throws {
    var view = ReferenceListView(layout("A: a b c"))
    let a = view.cell(at: at(0, 0)).serial
    let b = view.cell(at: at(0, 1)).serial
    let c = view.cell(at: at(0, 2)).serial
    try view.performBatchUpdates(
      StageCalls(moveItems: [.init(from: at(0, 0), to: at(0, 2))]), data: layout("A: b c a"))
    #expect(view.cell(at: at(0, 2)).serial == a)
    try view.performBatchUpdates(StageCalls(reloadItems: [at(0, 0)]), data: layout("A: b' c a"))
    #expect(view.cell(at: at(0, 0)).serial != b)
    try view.performBatchUpdates(StageCalls(reconfigureItems: [at(0, 1)]), data: layout("A: b' c' a"))
    #expect(view.cell(at: at(0, 1)).serial == c)
    #expect(view.cell(at: at(0, 1)).item == TestItem("c", version: 1))
    #expect(view.batchCount == 3)
  }

  @Test("a rejected batch leaves cells, sections and warnings unchanged")
  func rejectionIsAtomic() {
    var view = ReferenceListView(layout("A: a b | B: c"))
    let before = view.sections.map { $0.cells.map(\.serial) }
    #expect(throws: ListViewError.self) {
      try view.performBatchUpdates(
        StageCalls(
          deleteSections: [0], deleteItems: [at(0, 0)], moveItems: [.init(from: at(0, 1), to: at(0, 1))]),
        data: layout("B: c b"))
    }
    #expect(view.sections.map { $0.cells.map(\.serial) } == before)
    #expect(view.warnings.isEmpty)
  }

  @Test("reloadData replaces every cell")
  func reloadData() {
    var view = ReferenceListView(layout("A: a"))
    let serial = view.cell(at: at(0, 0)).serial
    view.reloadData(layout("A: a | B: b"))
    #expect(view.cell(at: at(0, 0)).serial != serial)
    #expect(view.shows(layout("A: a | B: b")))
  }

  @Test("errors name the rule and the offending index paths")
  func errorNaming() {
    var view = ReferenceListView(layout("A: a b c"))
    do {
      try view.performBatchUpdates(
        StageCalls(deleteItems: [at(0, 0)], moveItems: [.init(from: at(0, 0), to: at(0, 1))]),
        data: layout("A: b c"))
      Issue.record("expected R19")
    } catch {
      #expect(error.rule == .r19)
      #expect(error.positions == [at(0, 0)])
      #expect(
        error.description.hasPrefix("R19: attempt to perform a delete and a move from the same index path"))
    }
  }
}
