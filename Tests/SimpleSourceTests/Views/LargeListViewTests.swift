// A view following a long list shows the source's persistent snapshots themselves: no copy per batch.

import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceViews
@testable import SimpleSourceWire

@Suite("A view of a long list", .timeLimit(.minutes(30)))
@MainActor
struct LargeListViewTests {
  @Test("a view of 200,000 items answers from the batch's own snapshot, never copying the list into arrays")
  func noCopyPerBatch() async throws {
    let count = 200_000
    let source = try BasicDataSource(sections: [
      Section(id: 0, items: (0..<count).map { TestItem("i\($0)") })
    ])
    let view = SilentListView()
    let factory = ViewFactory<Section<Int, TestItem>, SilentListView> { _, _ in "Item" }
    factory.registerCell(method: (), reuseIdentifier: "Item", in: view) { (_: SilentListView.Cell, _, _) in }
    let dataSource = ListViewDataSource(
      view: view, factory: factory, update: .animated(refreshing: .reconfigure))
    await dataSource.follow(source)
    for round in 0..<5 {
      try await source.replaceItem(TestItem("i\(round * 1_000)", version: 1))
      try await source.insertItems([TestItem("new\(round)")], before: "i\(round * 7)")
      try await source.moveItem("i\(count - 1 - round)", after: "i0")
    }
    await source.settled()
    let final = await source.snapshot
    await dataSource.showing(final)
    let shown = dataSource.shown
    #expect(shown.storage === final.storage, "the view holds the source's snapshot itself")
    #expect(!shown.hasArrays, "no batch copied the list into arrays")
    #expect(dataSource.batchCount > 0 && dataSource.reloadCount == 0)
    #expect(dataSource.numberOfItems(inSection: 0) == count + 5)
    #expect(dataSource.item(at: ItemPosition(section: 0, item: 2)).id == "i\(count - 5)")
    #expect(dataSource.position(ofShownItem: "i4000") == final.position(ofItem: "i4000"))
  }
}
