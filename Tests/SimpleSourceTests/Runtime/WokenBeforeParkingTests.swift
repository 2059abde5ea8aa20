// A publisher may resume a consumer's wait before the consumer's task has suspended: between the moment
// the consumer leaves its waiter in its mailbox (under the mailbox's lock) and the suspension. The runtime
// then lets the task go on at once, ordering memory with an atomic ThreadSanitizer does not see (it hears
// of a resume only when a suspended task runs again), so what the publisher built before handing over
// must reach the consumer through the mailbox's lock as well. This test makes that order happen every
// time: the consumer's parking callback spins on a relaxed atomic (which orders nothing) until a thread of
// its own has advanced the source and resumed it. Under `swift test --sanitize=thread` it reports a race
// on the new snapshot when the consumer composes its catch-up without taking the lock after it wakes.

import Foundation
import Synchronization
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore

@Suite("A consumer woken before it parks")
struct WokenBeforeParkingTests {
  @available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *)
  @Test("composes its catch-up from all of what the publisher built before resuming it")
  func wokenBeforeParking() async throws {
    let start = Snapshot<TestSection>(tree: snapshot("A: a b").tree)
    let hub = SubscriptionHub<TestSection>(
      version: 0, snapshot: start, differ: Differ(), history: HistoryLimit(versions: 2, bytes: 1 << 20),
      counter: VersionCounter())
    let (mailbox, _, _) = try #require(hub.register(.newest))
    let resumed = Atomic<Bool>(false)
    // A task of its own on the global executor, as a subscription's consumer runs: nothing makes it hop
    // to another executor between waking and composing.
    let delivered = await Task.detached {
      let batch = await mailbox.next(
        sink: { _ in false },
        parkedWithSink: {
          // Inside the consumer's wait, before its task suspends: another thread makes the next state
          // (no batch is published for it, so the consumer composes one) and resumes the waiter.
          Thread.detachNewThread {
            hub.cancelledOut(
              to: 1, snapshot: Snapshot(tree: snapshot("A: b a c").tree), since: 0, touched: nil)
            resumed.store(true, ordering: .relaxed)
          }
          while !resumed.load(ordering: .relaxed) {}
        })
      return batch.map { ($0.from, $0.to, $0.snapshot.sections) }
    }.value
    let (from, to, shown) = try #require(delivered)
    #expect(from == 0 && to == 1)
    #expect(shown == snapshot("A: b a c").sections)
    hub.finish()
  }
}
