// The interaction closures, through the reference host: the right closure gets the right item and position,
// also while batches arrive; fallbacks, defaults, edits that the source rejects.

@testable import SimpleSourceCore
@testable import SimpleSourceViews
@testable import SimpleSourceWire
import SimpleSourceTesting
import Testing

/// A view whose items with ids starting with "x" use the reuse identifier "Special", the others "Item".
@MainActor
private func makeTwoKindView() -> (Host, HostDataSource) {
  let host = Host()
  let factory = ViewFactory<TestSection, Host> { item, _ in item.id.hasPrefix("x") ? "Special" : "Item" }
  for identifier in ["Item", "Special"] {
    factory.registerCell(method: .class, reuseIdentifier: identifier, in: host) { (cell: ItemCell, item, _) in
      cell.item = item
    }
  }
  factory.registerHeaderText { section, _ in section.header }
  factory.registerFooterText { section, _ in section.footer }
  let dataSource = ListViewDataSource(view: host, factory: factory)
  host.dataSource = dataSource
  return (host, dataSource)
}

private struct Rejected: Error, Equatable {}

/// What the closures received, in order.
@MainActor
private final class Calls {
  var log: [String] = []
  func record(_ what: String, _ item: TestItem, _ position: ItemPosition) {
    log.append("\(what) \(item.id) \(position)")
  }
}

@MainActor
@Suite("Interactions", .timeLimit(.minutes(30)))
struct InteractionsTests {
  @Test("a reuse identifier's closure wins over the data-source-wide one, which handles the rest")
  func perKindThenFallback() async throws {
    let (host, dataSource) = makeTwoKindView()
    let calls = Calls()
    dataSource.interactions.forItems(withReuseIdentifier: "Special") { special in
      special.didSelect = { item, position in
        calls.record("special", item, position)
        return .keep
      }
    }
    dataSource.interactions.all.didSelect = { item, position in
      calls.record("all", item, position)
      return .deselect
    }
    await dataSource.follow(try BasicDataSource(sections: layout("A: a x1 | B: b")))
    #expect(host.tap(at: ItemPosition(section: 0, item: 1)) == .keep)
    #expect(host.tap(at: ItemPosition(section: 1, item: 0)) == .deselect)
    #expect(calls.log == ["special x1 [0, 1]", "all b [1, 0]"])
    #expect(
      host.selectedPositions == [ItemPosition(section: 0, item: 1)], "the deselect behaviour is applied")
  }

  @Test("without any closure nothing runs and the view keeps its defaults")
  func noClosures() async throws {
    let (host, dataSource) = makeTwoKindView()
    await dataSource.follow(try BasicDataSource(sections: layout("A: a")))
    let position = ItemPosition(section: 0, item: 0)
    #expect(host.tap(at: position) == nil)
    #expect(host.selectedPositions == [position], "UIKit keeps a row selected when nobody deselects it")
    #expect(dataSource.heightOfItem(at: position) == nil)
    #expect(dataSource.heightOfHeader(inSection: 0) == nil)
    #expect(!dataSource.canEditItem(at: position), "no edit closure and no reordering: not editable")
    #expect(dataSource.editingAction(at: position) == nil)
    #expect(host.swipe(.trailing, at: position) == nil)
    for interaction in ListInteraction.allCases { #expect(!dataSource.interactions.handles(interaction)) }
  }

  @Test("a tap on a row a batch just moved reaches the item now there; a removed position runs nothing")
  func tapsFollowBatches() async throws {
    let (host, dataSource) = makeTwoKindView()
    let calls = Calls()
    dataSource.interactions.all.didSelect = { item, position in
      calls.record("tap", item, position)
      return .deselect
    }
    let source = try BasicDataSource(sections: layout("A: a b c"))
    await dataSource.follow(source)
    try await source.moveItem(at: ItemPosition(section: 0, item: 2), to: ItemPosition(section: 0, item: 0))
    await source.settled()
    await dataSource.showing(await source.snapshot)
    host.tap(at: ItemPosition(section: 0, item: 0))
    try await source.deleteItems(["a", "b"])
    await source.settled()
    await dataSource.showing(await source.snapshot)
    #expect(host.tap(at: ItemPosition(section: 0, item: 2)) == nil, "no row there any more")
    #expect(dataSource.didSelectItem(at: ItemPosition(section: 0, item: 2)) == nil, "nor for a late report")
    #expect(dataSource.didSelectItem(at: ItemPosition(section: 3, item: 0)) == nil)
    #expect(calls.log == ["tap c [0, 0]"])
  }

  @Test("a selection moves with its row through batches")
  func selectionMovesWithRow() async throws {
    let (host, dataSource) = makeTwoKindView()
    let source = try BasicDataSource(sections: layout("A: a b c"))
    await dataSource.follow(source)
    host.tap(at: ItemPosition(section: 0, item: 0))
    try await source.moveItem(at: ItemPosition(section: 0, item: 0), to: ItemPosition(section: 0, item: 2))
    await source.settled()
    await dataSource.showing(await source.snapshot)
    #expect(host.selectedPositions == [ItemPosition(section: 0, item: 2)])
  }

  @Test("display, heights and accessory taps reach their closures with the item and position")
  func displayHeightsAccessory() async throws {
    let (host, dataSource) = makeTwoKindView()
    let calls = Calls()
    dataSource.interactions.all.willDisplay = { item, position in calls.record("display", item, position) }
    dataSource.interactions.forItems(withReuseIdentifier: "Special") { special in
      special.height = { _, _ in 88 }
      special.estimatedHeight = { _, _ in 80 }
      special.accessoryTapped = { item, position in calls.record("accessory", item, position) }
    }
    dataSource.interactions.all.height = { _, _ in 44 }
    dataSource.interactions.headerHeight = { section, index in section.id == "A" ? 30 : Double(index) }
    dataSource.interactions.footerHeight = { _, _ in 10 }
    dataSource.interactions.estimatedHeaderHeight = { _, _ in 28 }
    dataSource.interactions.estimatedFooterHeight = { _, _ in 8 }
    let source = try BasicDataSource(sections: layout("A: a x1 | B:"))
    await dataSource.follow(source)
    #expect(calls.log == ["display a [0, 0]", "display x1 [0, 1]"])
    try await source.appendItems([TestItem("x2")], toSection: "B")
    await source.settled()
    await dataSource.showing(await source.snapshot)
    #expect(calls.log.last == "display x2 [1, 0]", "a cell inserted by a batch is displayed")
    #expect(dataSource.heightOfItem(at: ItemPosition(section: 0, item: 0)) == 44)
    #expect(dataSource.heightOfItem(at: ItemPosition(section: 0, item: 1)) == 88)
    #expect(dataSource.estimatedHeightOfItem(at: ItemPosition(section: 0, item: 0)) == nil)
    #expect(dataSource.estimatedHeightOfItem(at: ItemPosition(section: 1, item: 0)) == 80)
    #expect(dataSource.heightOfHeader(inSection: 0) == 30 && dataSource.heightOfHeader(inSection: 1) == 1)
    #expect(dataSource.heightOfFooter(inSection: 1) == 10 && dataSource.heightOfFooter(inSection: 2) == nil)
    #expect(dataSource.estimatedHeightOfHeader(inSection: 0) == 28)
    #expect(dataSource.estimatedHeightOfFooter(inSection: 0) == 8)
    host.tapAccessory(at: ItemPosition(section: 0, item: 0))
    host.tapAccessory(at: ItemPosition(section: 1, item: 0))
    #expect(calls.log.last == "accessory x2 [1, 0]", "only Special rows have an accessory closure")
    #expect(dataSource.interactions.handles(.accessoryTap) && !dataSource.interactions.handles(.select))
  }

  @Test("a committed delete becomes a mutation of the source, and the row goes with its batch")
  func commitDelete() async throws {
    let (host, dataSource) = makeTwoKindView()
    let source = try BasicDataSource(sections: layout("A: a b"))
    dataSource.interactions.all.commitEdit = { action, item, _ in
      #expect(action == .delete)
      try await source.deleteItems([item.id])
    }
    await dataSource.follow(source)
    let position = ItemPosition(section: 0, item: 0)
    #expect(dataSource.canEditItem(at: position) && dataSource.editingAction(at: position) == .delete)
    #expect(await host.commitEdit(.insert, at: position) == false, "the row offers delete, not insert")
    #expect(await host.commitEdit(.delete, at: position))
    await source.settled()
    await dataSource.showing(await source.snapshot)
    expectShowing(snapshot("A: b"), host, dataSource)
  }

  @Test("an edit the source rejects leaves the row as it was and reaches the failure handler")
  func rejectedEdit() async throws {
    let (host, dataSource) = makeTwoKindView()
    let source = try BasicDataSource(sections: layout("A: a b"))
    var failures: [String] = []
    dataSource.interactions.interactionFailed = { item, error in failures.append("\(item.id) \(error)") }
    dataSource.interactions.all.commitEdit = { _, _, _ in
      // A delete of an id the source does not have: a typed error, nothing changes.
      try await source.deleteItems(["nope"])
    }
    dataSource.interactions.all.canEdit = { item, _ in item.id == "a" }
    await dataSource.follow(source)
    #expect(
      await host.commitEdit(.delete, at: ItemPosition(section: 0, item: 1)) == false, "b is not editable")
    #expect(await host.commitEdit(.delete, at: ItemPosition(section: 0, item: 0)))
    await source.settled()
    #expect(failures.count == 1 && failures[0].hasPrefix("a "))
    #expect(await source.version == 0)
    expectShowing(snapshot("A: a b"), host, dataSource)
  }

  @Test("swipe actions are described per edge and run with the item; a throwing action reports and fails")
  func swipeActions() async throws {
    let (host, dataSource) = makeTwoKindView()
    let source = try BasicDataSource(sections: layout("A: a x1"))
    var failures: [String] = []
    dataSource.interactions.interactionFailed = { item, _ in failures.append(item.id) }
    dataSource.interactions.all.trailingSwipeActions = { item, _ in
      SwipeActions([
        SwipeAction(title: "Delete", style: .destructive) { item, _ in
          try await source.deleteItems([item.id])
          return true
        },
        SwipeAction(title: "Fail") { _, _ in throw Rejected() },
      ])
    }
    dataSource.interactions.forItems(withReuseIdentifier: "Special") { special in
      special.leadingSwipeActions = { _, _ in SwipeActions([], performsFirstActionWithFullSwipe: false) }
    }
    await dataSource.follow(source)
    let x1 = ItemPosition(section: 0, item: 1)
    #expect(host.swipe(.leading, at: ItemPosition(section: 0, item: 0)) == nil)
    #expect(host.swipe(.leading, at: x1)?.performsFirstActionWithFullSwipe == false)
    #expect(host.swipe(.trailing, at: x1)?.actions.map(\.title) == ["Delete", "Fail"])
    #expect(host.swipe(.trailing, at: x1)?.actions.first?.style == .destructive)
    #expect(await host.performSwipeAction(1, swiping: .trailing, at: x1) == false)
    #expect(failures == ["x1"])
    #expect(await host.performSwipeAction(5, swiping: .trailing, at: x1) == false, "no such action")
    #expect(await host.performSwipeAction(0, swiping: .trailing, at: x1))
    await source.settled()
    await dataSource.showing(await source.snapshot)
    expectShowing(snapshot("A: a"), host, dataSource)
  }

  @Test("with reordering enabled rows are editable (for the reorder control) but offer no delete")
  func reorderingMakesRowsEditable() async throws {
    let (host, dataSource) = makeTwoKindView()
    let source = try BasicDataSource(sections: layout("A: a"))
    dataSource.reorderingDelegate = source
    await dataSource.follow(source)
    let position = ItemPosition(section: 0, item: 0)
    #expect(dataSource.canEditItem(at: position))
    #expect(dataSource.editingAction(at: position) == nil)
    dataSource.interactions.all.editingAction = { _, _ in .insert }
    #expect(dataSource.editingAction(at: position) == .insert)
    #expect(host.errors.isEmpty)
  }
}

@MainActor
@Suite("Interactions: which delegate methods the UIKit skin answers")
struct InteractionSelectorTests {
  @Test("a method is answered only when a closure is registered for it; others go to the fallbacks")
  func answeredOnlyWithClosures() {
    let interactions = ListInteractions<TestSection>()
    let height = "tableView:heightForRowAtIndexPath:"
    #expect(interactions.answers(selectorNamed: height, in: .table) == false)
    #expect(interactions.answers(selectorNamed: "scrollViewDidScroll:", in: .table) == nil, "not ours")
    interactions.forItems(withReuseIdentifier: "Item") { $0.height = { _, _ in 44 } }
    #expect(interactions.answers(selectorNamed: height, in: .table) == true)
    #expect(interactions.answers(selectorNamed: "tableView:canEditRowAtIndexPath:", in: .table) == false)
    interactions.all.commitEdit = { _, _, _ in }
    for editing in [
      "canEditRowAtIndexPath:", "editingStyleForRowAtIndexPath:", "commitEditingStyle:forRowAtIndexPath:",
    ] {
      #expect(interactions.answers(selectorNamed: "tableView:" + editing, in: .table) == true)
    }
    #expect(
      interactions.answers(selectorNamed: "collectionView:didSelectItemAtIndexPath:", in: .collection)
        == false)
    interactions.all.didSelect = { _, _ in .deselect }
    #expect(
      interactions.answers(selectorNamed: "collectionView:didSelectItemAtIndexPath:", in: .collection) == true
    )
  }

  @Test("setting or removing a closure is announced, and the answered methods follow it")
  func changesAreAnnounced() {
    let interactions = ListInteractions<TestSection>()
    var changes = 0
    interactions.onChange = { changes += 1 }
    #expect(interactions.answeredSelectors(in: .table).isEmpty)
    interactions.all.commitEdit = { _, _, _ in }
    #expect(changes == 1)
    #expect(
      interactions.answeredSelectors(in: .table) == [
        "tableView:canEditRowAtIndexPath:", "tableView:editingStyleForRowAtIndexPath:",
        "tableView:commitEditingStyle:forRowAtIndexPath:",
      ])
    interactions.forItems(withReuseIdentifier: "Item") { $0.height = { _, _ in 44 } }
    interactions.headerHeight = { _, _ in 20 }
    #expect(changes == 3)
    #expect(interactions.answeredSelectors(in: .table).contains("tableView:heightForRowAtIndexPath:"))
    interactions.all.commitEdit = nil
    interactions.items = [:]
    interactions.headerHeight = nil
    #expect(changes == 6)
    #expect(interactions.answeredSelectors(in: .table).isEmpty)
  }

  @Test("every interaction has a table view method")
  func everyInteractionMapped() {
    let mapped = Set(ListInteractions<TestSection>.selectors(of: .table).values.flatMap { $0 })
    #expect(mapped == Set(ListInteraction.allCases))
  }
}
