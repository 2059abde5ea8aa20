// A follower with a sink: a shared batch that was already waiting when it asked goes to its sink from its
// own task, as one published while it is parked goes from the publisher's; only what the sink refuses is
// handed to the follower, and each batch is offered to the sink once.

import Dispatch
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
          offered.withLock { $0.append(batch.to.number) }
          return !refusing.withLock { $0 }
        }
      ) { event in
        if case .batch(let batch) = event { handed.withLock { $0.append(batch.to.number) } }
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

  @Test(
    "a sink that blocks delays neither the publisher nor a waiting subscriber, another sink past the next batch, and catches up after"
  )
  func blockingSinkDelaysNoOne() async throws {
    let source = try BasicDataSource(sections: layout("A: a b"))
    let blocked = await source.subscribe()
    let sinking = await source.subscribe()
    let waiting = await source.subscribe()
    let (parks, parked) = AsyncStream.makeStream(of: Void.self)
    let (entered, enter) = AsyncStream.makeStream(of: Int.self)
    let release = DispatchSemaphore(value: 0)
    let offered = Locked<[Int]>([])
    // The first batch blocks its sink until the test releases it, once every other subscriber has it
    // (a hang guard of 300 s lets a failing build end).
    let blocking = Task {
      await blocked.follow(
        sinkingInto: { batch in
          let first = offered.withLock { offered in
            offered.append(batch.to.number)
            return offered.count == 1
          }
          if first {
            enter.yield(batch.to.number)
            _ = release.wait(timeout: .now() + 300)
          }
          return true
        },
        parked: { parked.yield() }
      ) { _ in true }
    }
    let other = Task {
      await sinking.follow(sinkingInto: { _ in true }, parked: { parked.yield() }) { _ in true }
    }
    let consumer = Task { for await _ in waiting.batches {} }
    // Both sinks' followers are parked: the batch goes to their sinks through the hub's writers.
    var parking = parks.makeAsyncIterator()
    await parking.next()
    await parking.next()
    let first = try await source.appendItems([TestItem("c")], toSection: "A")
    var arrivals = entered.makeAsyncIterator()
    #expect(await arrivals.next() == first.number)
    // The blocked sink holds the writer: a waiting subscriber gets the batch, and the publisher goes on.
    #expect(try await waiting.reached(first))
    // The next batch frees the other sink's subscriber: it catches up by itself, or a second writer
    // writes to it.
    let second = try await source.appendItems([TestItem("d")], toSection: "A")
    await source.settled()
    #expect(try await sinking.reached(second))
    #expect(try await waiting.reached(second))
    #expect(blocked.heldVersion < first.number, "the blocked sink has not taken its batch yet")
    release.signal()
    // Released, it takes its batch, then the one published meanwhile, in order.
    #expect(try await blocked.reached(second))
    #expect(offered.withLock { $0 } == [first.number, second.number])
    blocked.cancel()
    sinking.cancel()
    waiting.cancel()
    await blocking.value
    await other.value
    await consumer.value
  }

  @Test("a sink may cancel its own subscription: its follower ends, and the source publishes on")
  func sinkCancelsItsSubscription() async throws {
    let source = try BasicDataSource(sections: layout("A: a b"))
    let subscription = await source.subscribe()
    let other = await source.subscribe()
    let offered = Locked<[Int]>([])
    let (parks, parked) = AsyncStream.makeStream(of: Void.self)
    let follower = Task {
      await subscription.follow(
        sinkingInto: { batch in
          offered.withLock { $0.append(batch.to.number) }
          // Inside the write: under a lock of the subscription, this would never return.
          subscription.cancel()
          return true
        },
        parked: { parked.yield() }
      ) { _ in true }
    }
    let consumer = Task { for await _ in other.batches {} }
    var parking = parks.makeAsyncIterator()
    await parking.next()
    let first = try await source.appendItems([TestItem("c")], toSection: "A")
    await follower.value
    let second = try await source.appendItems([TestItem("d")], toSection: "A")
    #expect(try await other.reached(second))
    #expect(offered.withLock { $0 } == [first.number], "nothing is written after the cancel")
    other.cancel()
    await consumer.value
  }
}
