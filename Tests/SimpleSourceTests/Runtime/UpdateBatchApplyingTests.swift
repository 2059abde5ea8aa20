// A batch applied to sections the caller keeps: equal to the batch's snapshot for random pairs, and a typed
// error that changes nothing when the sections are not the batch's starting state.

import SimpleSource
import SimpleSourceTesting
import Testing

@Suite("Applying a batch to your own sections")
struct UpdateBatchApplyingTests {
  static let settings = RandomTestSettings.current(
    defaultCases: 1_000, casesVariable: "SIMPLESOURCE_WIRE_CASES")

  @Test("random batches applied to arrays give the batches' snapshots")
  func randomBatches() throws {
    let settings = Self.settings
    var random = SeededGenerator(seed: settings.seed(forShard: 0))
    let pairs = RandomSnapshotPairs()
    for index in 0..<settings.cases {
      let (oldSections, newSections) = pairs.next(using: &random)
      let (old, new) = (try Snapshot(oldSections), try Snapshot(newSections))
      let batch = UpdateBatch(from: index, to: index + 1, changeset: Changeset(from: old, to: new))
      var kept = oldSections
      do {
        try batch.apply(to: &kept)
      } catch {
        Issue.record("case \(index): \(error)\nold: \(old)\nnew: \(new)\n\(settings.replay)")
        return
      }
      guard kept == new.sections else {
        Issue.record("case \(index): applied \(kept)\nexpected \(new.sections)\n\(settings.replay)")
        return
      }
    }
    print(
      "Applying batches: \(settings.cases) random batches applied to arrays equal their snapshots; \(settings.replay)"
    )
  }

  @Test("sections that are not the batch's starting state are refused by name, and left as they were")
  func refusesAnotherState() async throws {
    let source = try TestSource(sections: layout("A: a b c | B: d"))
    let subscription = await source.subscribe()
    var cache = subscription.snapshot.sections
    try await source.moveItem("a", after: "c")
    try await source.deleteItems(["d"])
    var batches = subscription.batches.makeAsyncIterator()
    let batch = try #require(await batches.next())
    // Another state than the batch's `from`: refused, unchanged.
    var stale = layout("A: x b c | B: d")
    let before = stale
    #expect {
      try batch.apply(to: &stale)
    } throws: { error in
      guard let error = error as? DataSourceError<String, String> else { return false }
      return error.code == .batchDoesNotApply && error.detail?.contains("holds x") == true
    }
    #expect(stale == before)
    var duplicate = layout("A: a b c | B: a")
    #expect {
      try batch.apply(to: &duplicate)
    } throws: { ($0 as? DataSourceError<String, String>)?.code == .duplicateItemID }
    // The right state: the batch's snapshot.
    try batch.apply(to: &cache)
    #expect(cache == batch.snapshot.sections)
    subscription.cancel()
  }
}
