// A subscriber that falls behind sustained writers catches up from the ids its missed versions touched.

@testable import SimpleSourceCore
import SimpleSourceTesting
import SimpleSourceViews
import Testing

@Suite("Catching up under sustained writes", .timeLimit(.minutes(30)))
struct CatchUpTests {
  /// A source of `count` items in four sections, each item at version 0.
  static func source(items count: Int) throws -> BasicDataSource<TestSection> {
    try BasicDataSource(
      sections: (0..<4).map { section in
        TestSection(
          id: "s\(section)", header: "", items: (0..<count / 4).map { TestItem("i\(section)-\($0)") })
      })
  }

  @Test(
    "a subscriber that lags sustained writers gets composed batches derived from the missed ids, never a full diff, and every batch is exact"
  )
  func laggingSubscriberNeverDiffsInFull() async throws {
    let writers = 4
    let perWriter = 1_500
    let source = try Self.source(items: 40_000)
    let final = writers * perWriter
    let subscription = await source.subscribe()
    // The consumer falls behind by design: after each batch it waits until the writers made 40 more
    // versions (or all of them), so every batch it gets after the first composes what it missed, and
    // the writers publish meanwhile, while its catch-up is diffed.
    let consumer = Task { () -> (batches: Int, problems: [String]) in
      var view = ReferenceListView(subscription.snapshot)
      var version = subscription.version
      var problems: [String] = []
      var batches = 0
      for await batch in subscription.batches {
        batches += 1
        if batch.from != version { problems.append("batch \(batch.from)→\(batch.to) after \(version)") }
        do { try view.apply(batch.changeset) } catch {
          problems.append("\(batch.from)→\(batch.to): \(error)")
        }
        if !view.shows(batch.snapshot.sections) { problems.append("\(batch.from)→\(batch.to) not exact") }
        version = batch.to
        if version >= final { break }
        await source.settled(through: min(version + 40, final))
      }
      return (batches, problems)
    }
    await withTaskGroup(of: Void.self) { group in
      for writer in 0..<writers {
        group.addTask {
          for step in 1...perWriter {
            let item = TestItem("i\(writer)-\((step * 7) % 200)", version: writer * perWriter + step)
            _ = try? await source.replaceItem(item)
          }
        }
      }
    }
    await source.settled()
    #expect(await source.version == final)
    let (batches, problems) = await consumer.value
    #expect(problems.isEmpty, "\(problems.prefix(5))")
    #expect(batches > 1)
    #expect(source.fullDiffCatchUps == 0, "catch-ups that fell back to a full diff")
  }

  @Test("a catch-up across a section move is a full diff, and says so in the count")
  func reshapedCatchUpIsCounted() async throws {
    let source = try Self.source(items: 400)
    let subscription = await source.subscribe()
    try await source.replaceItem(TestItem("i0-0", version: 1))
    await source.settled()
    try await source.moveSection("s3", to: 0)
    await source.settled()
    var iterator = subscription.batches.makeAsyncIterator()
    let batch = try #require(await iterator.next())
    #expect(batch.from == 0 && batch.to == 2, "one composed batch for both versions")
    #expect(source.fullDiffCatchUps == 1)
  }
}
