// The default history keeps what its description states, at a newcomer's load.

import Foundation
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore

@Suite("History window")
struct HistoryWindowTests {
  /// A deal of a sales pipeline: several fields, two of them strings.
  struct Deal: Identifiable, Equatable, Sendable {
    let id: Int
    var title: String
    var owner: String
    var valueCents: Int
    var probability: Double
    var updated: Int
  }

  typealias Stage = Section<Int, Deal>

  @Test(
    "a consumer that stops and comes back a minute later, at a thousand batches a second, resumes from the version it held"
  )
  func newcomerResumesWithinTheWindow() async throws {
    // 20,000 deals in 10 stages; one batch of 3 changed deals per millisecond of the modelled load (3,000
    // changes a second): a minute is 60,000 batches.
    let stages = 10
    let perStage = 2_000
    let source = try BasicDataSource(
      sections: (0..<stages).map { stage in
        Stage(
          id: stage,
          items: (0..<perStage).map { index in
            let id = stage * perStage + index
            return Deal(
              id: id, title: "Deal \(id)", owner: "rep-\(id % 6)", valueCents: id, probability: 0.5,
              updated: 0)
          })
      })
    var random = SeededGenerator(seed: 0x5EED_0065)
    let warmUp = 2_000
    // A minute. Under the thread sanitizer CI shortens it (the sanitizer has nothing to find in one task's
    // transactions, and runs them ten times slower); the window itself is checked by the plain run.
    let window =
      Int(ProcessInfo.processInfo.environment["SIMPLESOURCE_HISTORY_WINDOW_BATCHES"] ?? "") ?? 60_000
    var held: (version: Int, snapshot: Snapshot<Stage>)?
    for batch in 0..<(warmUp + window) {
      if batch == warmUp {
        // The consumer stops here, holding this version.
        let subscription = await source.subscribe()
        held = (subscription.version.number, subscription.snapshot)
        subscription.cancel()
      }
      let ids = (0..<3).map { _ in Int.random(in: 0..<(stages * perStage), using: &random) }
      let stage = Int.random(in: 0..<stages, using: &random)
      try await source.transaction { transaction in
        try transaction.updateItem(ids[0]) { $0.valueCents += 1 }
        try transaction.updateItem(ids[1]) { $0.updated = batch }
        try transaction.moveItem(ids[2], toSection: stage)
      }
      await source.settled()
    }
    let (version, snapshot) = try #require(held)
    let newest = await source.version.number
    #expect(newest - version >= window, "every one of the minute's batches made a version")
    let resumption = await source.subscribe(from: version)
    #expect(resumption.isResumed, "the version held a minute ago is retained")
    let subscription = resumption.subscription
    #expect(subscription.snapshot.sections == snapshot.sections)
    // Its one catch-up batch, applied to what it held, gives the newest state.
    var sections = snapshot.sections
    for await batch in subscription.batches {
      try batch.apply(to: &sections)
      if batch.to >= newest { break }
    }
    subscription.cancel()
    #expect(sections == (await source.snapshot).sections)
  }
}
