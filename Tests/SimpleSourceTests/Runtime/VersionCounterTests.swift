// Versions carry their counter: a wait for another counter's version throws at once instead of waiting.

import SimpleSource
import SimpleSourceTesting
import Testing

@Suite("Versions of another counter", .timeLimit(.minutes(30)))
struct VersionCounterTests {
  /// A source that made 50 versions, and a projection of it that shows only its first item: 2 versions.
  static func sourceAhead() async throws -> (BasicDataSource<TestSection>, ProjectedDataSource<TestSection>) {
    let source = try BasicDataSource(sections: layout("A: a b"))
    let projected = try await ProjectedDataSource(source, projection: Projection(where: { $0.id == "a" }))
    try await source.replaceItem(TestItem("a", version: 1))
    for step in 1..<50 { try await source.replaceItem(TestItem("b", version: step)) }
    await source.settled()
    await projected.settled()
    return (source, projected)
  }

  /// Waits with `wait` and expects ``VersionError/Code-swift.enum/otherCounter`` for `version`.
  static func expectOtherCounter(
    _ version: Version, isolation: isolated (any Actor)? = #isolation,
    sourceLocation: SourceLocation = #_sourceLocation, _ wait: () async throws(VersionError) -> Bool
  ) async {
    do {
      let reached = try await wait()
      Issue.record("answered \(reached) for \(version) instead of throwing", sourceLocation: sourceLocation)
    } catch {
      #expect(error.code == .otherCounter && error.version == version, sourceLocation: sourceLocation)
    }
  }

  @Test("a projection numbered by its own counter throws at once for its parent's version")
  func projectionOfItsOwn() async throws {
    let (source, projected) = try await Self.sourceAhead()
    let (sourceVersion, projectedVersion) = (await source.version, await projected.version)
    #expect(sourceVersion.number == 50 && projectedVersion.number == 1)
    #expect(sourceVersion.counter != projectedVersion.counter)
    let subscription = await projected.subscribe()
    await Self.expectOtherCounter(sourceVersion) { () throws(VersionError) in
      try await subscription.reached(sourceVersion)
    }
    #expect(try await subscription.reached(projectedVersion), "its own versions are answered")
    subscription.cancel()
  }

  @Test("a projection numbered by its parent answers the parent's versions, and counts with its counter")
  func projectionByParent() async throws {
    let source = try BasicDataSource(sections: layout("A: a b"))
    let projected = try await ProjectedDataSource(
      source, projection: Projection(where: { $0.id == "a" }), versions: .parent)
    let subscription = await projected.subscribe()
    #expect(subscription.counter == source.counter)
    // A consumer that keeps reading: it holds every version offered once it asks for the next batch.
    let consumer = Task { for await _ in subscription.batches {} }
    var last = await source.version
    for step in 1..<50 { last = try await source.replaceItem(TestItem("b", version: step)) }
    let projectedVersion = await projected.version
    #expect(last.number == 49 && projectedVersion.counter == source.counter)
    #expect(projectedVersion.number == 0, "the newest state it shows is the parent's at 0")
    // Nothing shown changed: the parent's version is held with no batch (G13), and the wait returns.
    #expect(try await subscription.reached(last))
    subscription.cancel()
    await consumer.value
  }

  @Test("every follower checks the counter: a source, a composite, an outline, a remote source, a model")
  @MainActor
  func everyFollower() async throws {
    let (source, projected) = try await Self.sourceAhead()
    let other = try BasicDataSource(sections: layout("B: x"))
    let otherVersion = try await other.replaceItem(TestItem("x", version: 1))

    let ofSource = await source.subscribe()
    await Self.expectOtherCounter(otherVersion) { () throws(VersionError) in
      try await ofSource.reached(otherVersion)
    }
    await Self.expectOtherCounter(otherVersion) { () throws(VersionError) in
      try await source.settled(through: otherVersion)
    }
    #expect(try await ofSource.reached(await source.version))
    #expect(try await source.settled(through: await source.version))
    ofSource.cancel()

    let composite = try await CompositeDataSource([source, other])
    let ofComposite = await composite.subscribe()
    let sourceVersion = await source.version
    await Self.expectOtherCounter(sourceVersion) { () throws(VersionError) in
      try await ofComposite.reached(sourceVersion)
    }
    ofComposite.cancel()

    let tree = try BasicDataSource(sections: OutlineDataSourceTests.forest())
    let outline = try await OutlineDataSource(tree)
    let ofOutline = await outline.subscribe()
    let treeVersion = try await tree.replaceItem(TreeNode(id: "b", children: [TreeNode(id: "b1")]))
    await Self.expectOtherCounter(treeVersion) { () throws(VersionError) in
      try await ofOutline.reached(treeVersion)
    }
    ofOutline.cancel()

    let remote = RemoteDataSource<TestSection>()
    let ofRemote = await remote.subscribe()
    await Self.expectOtherCounter(sourceVersion) { () throws(VersionError) in
      try await ofRemote.reached(sourceVersion)
    }
    ofRemote.cancel()

    let following = await ObservedList(following: projected, pacing: .immediate)
    await Self.expectOtherCounter(sourceVersion) { () throws(VersionError) in
      try await following.reached(sourceVersion)
    }
    #expect(try await following.reached(await projected.version))
    following.stop()
    let window = await ObservedWindow(following: projected, section: "A", range: 0..<1)
    await Self.expectOtherCounter(sourceVersion) { () throws(VersionError) in
      try await window.reached(sourceVersion)
    }
    window.stop()
  }

  @Test(
    "a batch's versions are its source's, waited for as they are; a stored number is a version again of the counter it was written under"
  )
  func batchesAndStoredNumbers() async throws {
    let (source, projected) = try await Self.sourceAhead()
    let subscription = await source.subscribe()
    let version = try await source.appendItems([TestItem("c")], toSection: "A")
    var batches = subscription.batches.makeAsyncIterator()
    let batch = try #require(await batches.next())
    #expect(batch.to == version && batch.counter == source.counter && batch.from == subscription.version)
    #expect(try await subscription.reached(batch.from))
    // A number kept outside (a database's column) read back: the source's version, under its counter.
    let stored = version.number
    #expect(source.counter.version(stored) == version)
    #expect(try await source.settled(through: source.counter.version(stored)))
    // Under another counter it is another version, which the source refuses at once.
    let elsewhere = await projected.version.counter.version(stored)
    #expect(elsewhere != version)
    await Self.expectOtherCounter(elsewhere) { () throws(VersionError) in
      try await source.settled(through: elsewhere)
    }
    subscription.cancel()
  }

  @Test("a list edit answered with another source's version is rolled back and throws")
  @MainActor
  func listEditOfAnotherSource() async throws {
    let source = try BasicDataSource(sections: layout("A: a b c"))
    let other = try BasicDataSource(sections: layout("A: a b c"))
    let list = await ObservedList(following: source, pacing: .immediate)
    let deleting = list.delete(atOffsets: [0], inSection: 0) { try await other.deleteItems($0) }
    await #expect(throws: VersionError.self) { try await deleting.value }
    #expect(list.sections.map { $0.rows.map(\.id) } == [["a", "b", "c"]], "the row came back")
    list.stop()
  }

  @Test("a move a view's delegate made in another source is undone and reported")
  @MainActor
  func moveInAnotherSource() async throws {
    let (host, dataSource) = makeView()
    let source = try TestSource(sections: layout("A: a b c"))
    let other = try TestSource(sections: layout("A: a b c"))
    dataSource.reorderingDelegate = other
    await dataSource.follow(source)
    var failures: [String] = []
    dataSource.reorderingFailed = { move, error in failures.append("\(move.itemID): \(type(of: error))") }
    host.beginInteractiveMove()
    host.endInteractiveMove(
      movingItemAt: ItemPosition(section: 0, item: 2), to: ItemPosition(section: 0, item: 0))
    #expect(dataSource.sections == layout("A: c a b"), "shown at once")
    await dataSource.settled()
    let original = await source.snapshot
    await dataSource.showing(original)
    #expect(dataSource.sections == layout("A: a b c"), "undone: the source never had the move")
    #expect(failures == ["c: VersionError"])
  }
}
