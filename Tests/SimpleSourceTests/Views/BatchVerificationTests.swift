// Verified batches (ViewUpdate.verifyingBatches): a broken source's batch is reported with the rule it
// breaks before the view sees it, and the view is reloaded instead; the package's own batches all pass.

import SimpleSource
import SimpleSourceTesting
import Testing

/// A source that publishes whatever batch it is given, as a user's own broken `DataSourceType` might:
/// nothing checks that a batch's changeset starts from what its subscribers hold.
final class ScriptedSource: DataSourceType {
  typealias Section = TestSection
  let broadcaster: Broadcaster<TestSection>

  init(_ snapshot: Snapshot<TestSection>) { broadcaster = Broadcaster(snapshot: snapshot) }

  var snapshot: Snapshot<TestSection> { get async { broadcaster.snapshot } }
  var version: Version { get async { broadcaster.version } }
  func subscribe(pacing: Pacing) async -> Subscription<TestSection> { broadcaster.subscribe(pacing: pacing) }
  func settled() async {}
}

/// The invalid batches a view data source reported.
@MainActor
final class InvalidBatches {
  var all: [InvalidBatch<TestSection>] = []
}

@MainActor
@Suite("Verified batches", .timeLimit(.minutes(30)))
struct BatchVerificationTests {
  /// A batch diffed from "A: a b" while subscribers hold "A: a b c": it inserts d at [0, 2] of a section
  /// that would then hold four items where its data holds three.
  static let broken = UpdateBatch(
    from: 0, to: 1, changeset: Changeset(from: snapshot("A: a b"), to: snapshot("A: a b d")))

  @Test("a broken source's batch is reported with its rule, its batch and its source, and the view reloads")
  func reportsAndReloads() async throws {
    let source = ScriptedSource(snapshot("A: a b c"))
    let reports = InvalidBatches()
    let (host, dataSource) = makeView(.animated().verifyingBatches { reports.all.append($0) })
    await dataSource.follow(source)
    try source.broadcaster.publish(Self.broken)
    #expect(await dataSource.showing(snapshot("A: a b d")))
    let report = try #require(reports.all.first)
    #expect(reports.all.count == 1)
    #expect(report.error.rule == .r9, "\(report)")
    #expect(report.batch.from == 0 && report.batch.to == 1 && report.stage == 0)
    #expect(report.source == "ScriptedSource")
    #expect("\(report)".hasPrefix("ScriptedSource made batch 0 → 1, stage 0: R9"), "\(report)")
    // The view never saw the batch: it was reloaded with the batch's snapshot.
    #expect(dataSource.reloadCount == 1 && host.batchCount == 0)
    expectShowing(snapshot("A: a b d"), host, dataSource)
    dataSource.stop()
  }

  @Test("without verification the same batch reaches the view, which rejects it")
  func unverifiedReachesTheView() async throws {
    let source = ScriptedSource(snapshot("A: a b c"))
    let (host, dataSource) = makeView(.animated())
    await dataSource.follow(source)
    try source.broadcaster.publish(Self.broken)
    _ = await dataSource.showing(snapshot("A: a b d"))
    #expect(host.errors.map(\.rule) == [.r9])
    dataSource.stop()
  }

  @Test("a data source's own batches pass: nothing is reported, every batch is performed")
  func ownBatchesPass() async throws {
    let source = try BasicDataSource(sections: layout("A: a b c | B: d e"))
    let reports = InvalidBatches()
    let (host, dataSource) = makeView(.animated().verifyingBatches { reports.all.append($0) })
    await dataSource.follow(source)
    try await source.moveItem("a", after: "e")
    try await source.replaceItem(TestItem("b", version: 1))
    try await source.deleteItems(["d"])
    try await source.insertSections([TestSection(id: "C", items: [TestItem("f")])], before: "A")
    await source.settled()
    #expect(await dataSource.showing(await source.snapshot))
    #expect(reports.all.isEmpty, "\(reports.all)")
    #expect(dataSource.reloadCount == 0 && host.batchCount > 0)
    expectShowing(await source.snapshot, host, dataSource)
    dataSource.stop()
  }
}
