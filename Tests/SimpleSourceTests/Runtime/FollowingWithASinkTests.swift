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
    "parked with no task: following returns once parked; a refused batch and a catch-up start a task that handles them; the end is reported once"
  )
  func parkingWithNoTask() async throws {
    let source = try BasicDataSource(sections: layout("A: a b"))
    let subscription = await source.subscribe()
    let (events, handed) = AsyncStream.makeStream(of: Int.self)
    let (ends, ending) = AsyncStream.makeStream(of: Void.self)
    let offered = Locked<[Int]>([])
    let refusing = Locked(false)
    let endCount = Locked(0)
    // Returns: the follower parked with its sink and no task of the test's is left with it.
    await subscription.follow(
      parkingWith: { batch in
        offered.withLock { $0.append(batch.to.number) }
        return !refusing.withLock { $0 }
      },
      { event in
        if case .batch(let batch) = event { handed.yield(batch.to.number) }
        return true
      },
      ended: {
        endCount.withLock { $0 += 1 }
        ending.yield()
      })
    // Taken by the sink from the publisher's writer, held with no task woken.
    let first = try await source.appendItems([TestItem("c")], toSection: "A")
    #expect(try await subscription.reached(first))
    #expect(offered.withLock { $0 } == [first.number])
    // Refused: a task is started for it, which hands it over and parks again.
    refusing.withLock { $0 = true }
    let second = try await source.appendItems([TestItem("d")], toSection: "A")
    var handedBatches = events.makeAsyncIterator()
    #expect(await handedBatches.next() == second.number)
    #expect(try await subscription.reached(second))
    // Taken again once the sink takes frames.
    refusing.withLock { $0 = false }
    let third = try await source.appendItems([TestItem("e")], toSection: "A")
    #expect(try await subscription.reached(third))
    #expect(offered.withLock { $0 } == [first.number, second.number, third.number])
    // Ended by its cancellation, with no task of its own waiting: the end starts one, which reports it.
    subscription.cancel()
    var ended = ends.makeAsyncIterator()
    await ended.next()
    #expect(endCount.withLock { $0 } == 1)
    #expect(source.subscriberCount == 0)
    handed.finish()
    #expect(await handedBatches.next() == nil, "nothing handed over but the refused batch")
  }

  @Test("parked with no task, a handler that returns false ends the following and the subscription, once")
  func parkingHandlerEnds() async throws {
    let source = try BasicDataSource(sections: layout("A: a b"))
    let subscription = await source.subscribe()
    let (ends, ending) = AsyncStream.makeStream(of: Void.self)
    let endCount = Locked(0)
    await subscription.follow(
      parkingWith: { _ in false }, { _ in false },
      ended: {
        endCount.withLock { $0 += 1 }
        ending.yield()
      })
    try await source.appendItems([TestItem("c")], toSection: "A")
    var ended = ends.makeAsyncIterator()
    await ended.next()
    #expect(endCount.withLock { $0 } == 1)
    #expect(source.subscriberCount == 0)
    #expect(try await !subscription.reached(Version(99, of: subscription.counter)))
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

@Suite("Sinks in lanes")
struct SinksInLanesTests {
  @Test(
    "a publish hands the sinks to its writers lane by lane, lowest first, in the hub's order within a lane"
  )
  func sinksAreWrittenInLaneOrder() async throws {
    let source = try BasicDataSource(sections: layout("A: a b"))
    // Registered in this order, each with its lane.
    let lanes = [("a", 3), ("b", 0), ("c", 1), ("d", 0), ("e", 1)]
    var subscriptions: [Subscription<TestSection>] = []
    for _ in lanes { subscriptions.append(await source.subscribe()) }
    let written = Locked<[String]>([])
    let (parks, parked) = AsyncStream.makeStream(of: Void.self)
    let followers = zip(lanes, subscriptions).map { lane, subscription in
      Task {
        await subscription.follow(
          sinkingInto: { _ in
            written.withLock { $0.append(lane.0) }
            return true
          },
          lane: { SubscriptionLane(lane.1) }, parked: { parked.yield() }
        ) { _ in true }
      }
    }
    // Every follower parked with its sink before the batch: the publisher hands all five to one writer.
    var parking = parks.makeAsyncIterator()
    for _ in lanes { await parking.next() }
    let version = try await source.appendItems([TestItem("c")], toSection: "A")
    for subscription in subscriptions { #expect(try await subscription.reached(version)) }
    #expect(written.withLock { $0 } == ["b", "d", "c", "e", "a"])
    for subscription in subscriptions { subscription.cancel() }
    for follower in followers { await follower.value }
  }

  @Test("with every sink in the first lane, a publish keeps the hub's order")
  func firstLaneKeepsTheHubsOrder() async throws {
    let source = try BasicDataSource(sections: layout("A: a b"))
    let names = ["a", "b", "c", "d"]
    var subscriptions: [Subscription<TestSection>] = []
    for _ in names { subscriptions.append(await source.subscribe()) }
    let written = Locked<[String]>([])
    let (parks, parked) = AsyncStream.makeStream(of: Void.self)
    let followers = zip(names, subscriptions).map { name, subscription in
      Task {
        await subscription.follow(
          sinkingInto: { _ in
            written.withLock { $0.append(name) }
            return true
          },
          parked: { parked.yield() }
        ) { _ in true }
      }
    }
    var parking = parks.makeAsyncIterator()
    for _ in names { await parking.next() }
    let version = try await source.appendItems([TestItem("c")], toSection: "A")
    for subscription in subscriptions { #expect(try await subscription.reached(version)) }
    #expect(written.withLock { $0 } == names)
    for subscription in subscriptions { subscription.cancel() }
    for follower in followers { await follower.value }
  }

  @Test(
    "a publish wakes the consumers that wait in the first lane at once, then the others lane by lane, in the hub's order within a lane"
  )
  func waitingConsumersAreWokenInLaneOrder() async throws {
    let states = ["A: a", "A: a b"].map { Snapshot<TestSection>(tree: snapshot($0).tree) }
    let hub = SubscriptionHub<TestSection>(
      version: 0, snapshot: states[0], differ: Differ(), history: HistoryLimit(versions: 2, bytes: 1 << 20),
      counter: VersionCounter())
    let lanes = [("a", 3), ("b", 1), ("c", 0), ("d", 2), ("e", 1)]
    var mailboxes: [SubscriberMailbox<TestSection>] = []
    for _ in lanes {
      guard let (mailbox, _, _) = hub.register(.newest) else { throw CancellationError() }
      mailboxes.append(mailbox)
    }
    // Each consumer asks in its lane and waits: registered as waiting before it reports so.
    let (waits, waiting) = AsyncStream.makeStream(of: Void.self)
    let consumers = zip(lanes, mailboxes).map { lane, mailbox in
      Task {
        mailbox.asked(lane: SubscriptionLane(lane.1))
        let delivery = await withUnsafeContinuation { continuation in
          let handed = mailbox.state.withLock { $0.next(waiter: .task(continuation)) }
          #expect(handed == nil, "nothing is due before the publish")
          waiting.yield()
        }
        guard case .batch(let batch) = delivery else { return -1 }
        return batch.to.number
      }
    }
    var waited = waits.makeAsyncIterator()
    for _ in lanes { await waited.next() }
    let batch = UpdateBatch(from: 0, to: 1, changeset: Changeset(from: states[0], to: states[1]))
    let (later, due) = hub.offer(batch, refreshing: [], edits: nil)
    // The first lane's consumer is resumed already; the others wait for the end of the offers.
    #expect(await consumers[2].value == 1)
    let names = Dictionary(uniqueKeysWithValues: zip(mailboxes.map(ObjectIdentifier.init), lanes.map(\.0)))
    #expect(later.map { names[ObjectIdentifier($0.mailbox)] } == ["b", "e", "d", "a"])
    #expect(due.isEmpty)
    hub.deliver(later: later, due: due)
    for consumer in consumers { #expect(await consumer.value == 1) }
  }

  @Test("a projected source follows its parent in the lane it is given, read each time it asks")
  func projectedSourceFollowsInItsLane() async throws {
    let source = try BasicDataSource(sections: layout("A: a b"))
    let lane = Locked(SubscriptionLane(3))
    let projected = try await source.projected(
      .all, versions: .parent, history: .default, steps: ProjectionSteps(), lane: { lane.withLock { $0 } })
    let hub = await source.hub
    func parentLanes() -> [SubscriptionLane] {
      hub.registry.withLock { $0.mailboxes.map { $0.state.withLock(\.lane) } }
    }
    try await source.appendItems([TestItem("c")], toSection: "A")
    await projected.settled()
    #expect(parentLanes() == [SubscriptionLane(3)])
    lane.withLock { $0 = .first }
    try await source.appendItems([TestItem("d")], toSection: "A")
    await projected.settled()
    #expect(parentLanes() == [.first])
  }

  @Test("a lane's rank is never below the first")
  func negativeRankIsTheFirstLane() {
    #expect(SubscriptionLane(-4) == .first)
    #expect(SubscriptionLane(0) < SubscriptionLane(1))
  }
}
