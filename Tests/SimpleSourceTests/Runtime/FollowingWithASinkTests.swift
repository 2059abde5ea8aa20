// A follower with a sink: a shared batch that was already waiting when it asked goes to its sink from its
// own task, as one published while it is parked goes from the publisher's; only what the sink refuses is
// handed to the follower, and each batch is offered to the sink once.

import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore

@Suite("Following with a sink")
struct FollowingWithASinkTests {
  @Test(
    "a batch waiting when the follower asks goes to its sink; a refused one goes to the follower, offered once"
  )
  func waitingBatchGoesToTheSink() async throws {
    let source = try BasicDataSource(sections: layout("A: a b"))
    let subscription = await source.subscribe()
    let first = try await source.appendItems([TestItem("c")], toSection: "A")
    // Offered, and waiting in the subscription: nothing follows it yet.
    await source.settled()
    let offered = Locked<[Int]>([])
    let handed = Locked<[Int]>([])
    let refusing = Locked(false)
    let follower = Task {
      await subscription.follow(
        sinkingInto: { batch in
          offered.withLock { $0.append(batch.to) }
          return !refusing.withLock { $0 }
        }
      ) { event in
        if case .batch(let batch) = event { handed.withLock { $0.append(batch.to) } }
        return true
      }
    }
    #expect(try await subscription.reached(first))
    #expect(offered.withLock { $0 } == [first.number] && handed.withLock { $0 }.isEmpty)
    refusing.withLock { $0 = true }
    let second = try await source.appendItems([TestItem("d")], toSection: "A")
    #expect(try await subscription.reached(second))
    #expect(offered.withLock { $0 } == [first.number, second.number])
    #expect(handed.withLock { $0 } == [second.number])
    follower.cancel()
    await follower.value
  }
}
