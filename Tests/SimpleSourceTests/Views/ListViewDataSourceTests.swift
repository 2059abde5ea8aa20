// View data sources on Linux: ReferenceListViewHost checks every batch they perform against UIKit's rules.

import SimpleSource
import SimpleSourceTesting
import Testing

@Suite("ListViewDataSource", .timeLimit(.minutes(30)))
@MainActor
struct ListViewDataSourceTests {
  @Test(
    "several views on one source with concurrent writers end showing exactly the source, every batch valid")
  func concurrentWritersSeveralViews() async throws {
    let source = try TestSource(sections: layout("A: a b c | B: d e | C:"))
    let views = [
      makeView(.animated(refreshing: .reconfigure)), makeView(.animated(refreshing: .reload)),
      makeView(.unanimated),
    ]
    for (_, dataSource) in views { await dataSource.follow(source) }
    await withTaskGroup(of: Void.self) { group in
      for writer in 0..<4 {
        group.addTask {
          for index in 0..<40 {
            let id = "w\(writer)-\(index)"
            _ = try? await source.appendItems([item(id)], toSection: ["A", "B", "C"][index % 3])
            if index % 4 == 0 { _ = try? await source.moveItem(id, before: "a") }
            if index % 5 == 0 { _ = try? await source.replaceItem(item("d", index)) }
            if index % 9 == 0 { _ = try? await source.moveSection("C", before: "A") }
          }
        }
      }
    }
    await source.settled()
    let final = await source.snapshot
    for (host, dataSource) in views {
      await dataSource.showing(final)
      expectShowing(final, host, dataSource)
    }
    #expect(views[0].0.animatedBatchCount > 0)
    #expect(views[2].0.batchCount == 0 && views[2].1.reloadCount > 0, "the unanimated policy reloads")
  }

  @Test("an off-screen view is reloaded instead of animated")
  func offScreen() async throws {
    let source = try TestSource(sections: layout("A: a"))
    let (host, dataSource) = makeView()
    await dataSource.follow(source)
    host.isOnScreen = false
    try await source.appendItems([item("b")], toSection: "A")
    await source.settled()
    await dataSource.showing(await source.snapshot)
    #expect(host.batchCount == 0)
    #expect(host.reloadCount == 3, "one when connected, one to start following, one for the batch")
    let final = await source.snapshot
    #expect(host.reference.shows(final.sections))
  }

  @Test("a batch larger than the threshold is reloaded; a small one is animated")
  func largeBatchThreshold() async throws {
    let source = try TestSource(sections: layout("A: a"))
    let (host, dataSource) = makeView(.animated(largeBatchThreshold: 3))
    await dataSource.follow(source)
    try await source.appendItems([item("b")], toSection: "A")
    await source.settled()
    await dataSource.showing(await source.snapshot)
    #expect(host.animatedBatchCount == 1)
    try await source.appendItems((0..<5).map { item("n\($0)") }, toSection: "A")
    await source.settled()
    await dataSource.showing(await source.snapshot)
    #expect(host.animatedBatchCount == 1 && dataSource.reloadCount == 1)
    #expect(host.errors == [])
  }

  @Test("a custom policy gets the view and each batch, and applies it its own way")
  func customPolicy() async throws {
    let source = try TestSource(sections: layout("A: a b"))
    let seen = Counter()
    let (host, dataSource) = makeView(
      .custom { context in
        seen.increment()
        if context.batch.changeset.itemChanges.inserts.isEmpty {
          context.reloadData()
        } else {
          context.performStages(refreshing: .reload, animated: false)
        }
      })
    await dataSource.follow(source)
    try await source.appendItems([item("c")], toSection: "A")
    await source.settled()
    await dataSource.showing(await source.snapshot)
    try await source.deleteItems(["a"])
    await source.settled()
    await dataSource.showing(await source.snapshot)
    #expect(seen.value == 2)
    #expect(host.batchCount == 1 && host.animatedBatchCount == 0)
    #expect(dataSource.reloadCount == 1)
    let final = await source.snapshot
    #expect(host.errors == [] && host.reference.shows(final.sections))
  }

  @Test("headers follow section moves and renames")
  func headersFollowSections() async throws {
    let source = try TestSource(sections: layout("A: a | B: b | C: c"))
    let (host, dataSource) = makeView(.animated(refreshing: .reconfigure))
    await dataSource.follow(source)
    try await source.moveSection("C", before: "A")
    try await source.updateSection(TestSection(id: "B", header: "Bravo"))
    await source.settled()
    await dataSource.showing(await source.snapshot)
    #expect(dataSource.section(at: 0).header == "C v0")
    #expect(dataSource.section(at: 2).header == "Bravo")
    #expect(host.reference.sections.map(\.section.header) == ["C v0", "A v0", "Bravo"])
    #expect(host.errors == [])
  }

  @Test("stopping ends the subscription")
  func stopping() async throws {
    let source = try TestSource(sections: layout("A: a"))
    let (_, dataSource) = makeView()
    await dataSource.follow(source)
    #expect(source.subscriberCount == 1)
    dataSource.stop()
    await source.settled()
    try await source.appendItems([item("b")], toSection: "A")
    await source.settled()
    #expect(dataSource.sections == layout("A: a"))
  }

  @Test("a custom policy can perform each stage with the view's own API, swapping the data inside")
  func customStagePerformer() async throws {
    let source = try TestSource(sections: layout("A: a b c | B: d"))
    let stages = Counter()
    let (host, dataSource) = makeView(
      .custom { context in
        context.performStages(refreshing: .reload) { update, updateData in
          stages.increment()
          // What a skin does with, say, a row animation of its own: the host stands in for UIKit here.
          (context.view as? Host)?.performBatchUpdates(update, animated: false, updateData: updateData)
        }
      })
    await dataSource.follow(source)
    try await source.update { sections in
      sections.swapAt(0, 1)
      sections[1].items.removeFirst()
      sections[0].items.append(item("e"))
    }
    await source.settled()
    let final = await source.snapshot
    await dataSource.showing(final)
    expectShowing(final, host, dataSource)
    #expect(stages.value == host.batchCount && stages.value >= 1)
  }

  @Test("a data source made without a view shows the source once a view is attached")
  func attachLater() async throws {
    let source = try TestSource(sections: layout("A: a b"))
    let host = Host()
    let factory = ViewFactory<TestSection, Host> { _, _ in "Item" }
    factory.registerCell(method: .class, reuseIdentifier: "Item", in: host) { (cell: ItemCell, item, _) in
      cell.item = item
    }
    factory.registerHeaderText { section, _ in section.header }
    let dataSource = ListViewDataSource(factory: factory)
    await dataSource.follow(source)
    try await source.appendItems([item("c")], toSection: "A")
    await source.settled()
    let final = await source.snapshot
    await dataSource.showing(final)
    #expect(dataSource.view == nil && dataSource.batchCount == 1)
    host.dataSource = dataSource
    dataSource.attach(host)
    dataSource.attach(host)
    #expect(host.reloadCount == 2, "one when connected, one when attached; attaching twice does nothing")
    expectShowing(final, host, dataSource)
  }

  @Test("a factory reconfigures an existing header view in place")
  func configureSupplementaryInPlace() {
    let host = Host()
    let factory = ViewFactory<TestSection, Host> { _, _ in "Item" }
    factory.registerHeaderView(method: .class, reuseIdentifier: "Header", in: host) {
      (header: HeaderView, section, _) in
      header.title = section.header
    }
    let header = HeaderView()
    factory.configureSupplementaryView(
      header, ofKind: .header, for: TestSection(id: "A", header: "Alpha"),
      at: ItemPosition(section: 0, item: 0))
    #expect(header.title == "Alpha")
    factory.configureSupplementaryView(
      header, ofKind: .footer, for: TestSection(id: "A", header: "Beta"),
      at: ItemPosition(section: 0, item: 0))
    #expect(header.title == "Alpha", "no footer is registered")
  }
}
