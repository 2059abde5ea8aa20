// G9: no diff runs on the main actor, whoever mutates and whoever consumes.

import Foundation
import SimpleSource
import Testing

/// Marks the main dispatch queue, which runs the main actor's jobs.
let mainQueueKey: DispatchSpecificKey<Bool> = {
  let key = DispatchSpecificKey<Bool>()
  DispatchQueue.main.setSpecific(key: key, value: true)
  return key
}()

/// Whether the caller runs on the main queue, hence on the main actor's executor.
func isOnMainQueue() -> Bool { Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueKey) == true }

/// Records whether `==` runs on the main actor's executor; each test owns its probe.
final class ThreadProbe: Sendable {
  private let lock = NSLock()
  // Safe: `counts` is only read and written while `lock` is held.
  private nonisolated(unsafe) var counts = (onMain: 0, offMain: 0)

  func record() {
    let onMain = isOnMainQueue()
    lock.withLock { if onMain { counts.onMain += 1 } else { counts.offMain += 1 } }
  }
  var onMain: Int { lock.withLock { counts.onMain } }
  var offMain: Int { lock.withLock { counts.offMain } }
}

/// An item whose `==` (called by every diff on surviving items) reports its thread.
struct ProbeItem: Identifiable, Equatable, Sendable {
  let id: Int
  let version: Int
  let probe: ThreadProbe
  static func == (lhs: ProbeItem, rhs: ProbeItem) -> Bool {
    lhs.probe.record()
    return lhs.id == rhs.id && lhs.version == rhs.version
  }
}

@Suite("G9: diffs run off the main actor", .timeLimit(.minutes(30)))
struct OffMainActorTests {
  @Test("mutations and consumption on the main actor never diff on it")
  @MainActor
  func mainActorWritersAndReaders() async throws {
    #expect(isOnMainQueue(), "control: the probe recognises main-actor code")
    let probe = ThreadProbe()
    let items = (0..<100).map { ProbeItem(id: $0, version: 0, probe: probe) }
    let source = try BasicDataSource(sections: [Section(id: 0, items: items)])
    let subscription = await source.subscribe()
    // Two published batches, so that the stalled subscriber below must compose its own catch-up.
    for id in 0..<50 { try await source.replaceItem(ProbeItem(id: id, version: 1, probe: probe)) }
    await source.settled()
    for id in 50..<100 { try await source.replaceItem(ProbeItem(id: id, version: 1, probe: probe)) }
    await source.settled()
    var iterator = subscription.batches.makeAsyncIterator()
    let batch = try #require(await iterator.next())
    #expect(batch.from == 0 && batch.to == 100)
    #expect(batch.changeset.itemChanges.updates.count == 100)
    #expect(probe.offMain > 0)
    #expect(probe.onMain == 0, "a diff ran on the main actor")

    // A user's source on a Broadcaster, published from the main actor, diffs off it too.
    let broadcastProbe = ThreadProbe()
    let broadcaster = Broadcaster(
      snapshot: try Snapshot([Section(id: 0, items: [ProbeItem(id: 0, version: 0, probe: broadcastProbe)])]))
    let published = try await broadcaster.publish(
      try Snapshot([Section(id: 0, items: [ProbeItem(id: 0, version: 1, probe: broadcastProbe)])]), as: 1)
    #expect(published && broadcastProbe.offMain > 0)
    #expect(broadcastProbe.onMain == 0, "Broadcaster.publish diffed on the main actor")

    // Control: the probe does see a diff made on the main actor.
    _ = Changeset(from: subscription.snapshot, to: batch.snapshot)
    #expect(probe.onMain > 0)
  }
}
