// Synchronous tests of the subscription state machine: no async, no tasks, every event and action.

@testable import SimpleSource
import SimpleSourceTesting
import Testing

@Suite("Subscription state machine")
struct SubscriptionStateMachineTests {
  typealias Machine = SubscriptionStateMachine<TestSection, String>

  let v0 = snapshot("A: a")
  let v1 = snapshot("A: a b")
  let v2 = snapshot("A: a b c")

  func batch(_ from: Snapshot<TestSection>, _ to: Snapshot<TestSection>, _ fromVersion: Int, _ toVersion: Int)
    -> UpdateBatch<TestSection>
  {
    UpdateBatch(from: fromVersion, to: toVersion, changeset: Changeset(from: from, to: to))
  }

  func register(_ machine: inout Machine, _ version: Int, _ snapshot: Snapshot<TestSection>) -> Int? {
    machine.register(version: version, snapshot: snapshot)
  }

  @Test("a waiting subscriber is resumed with the shared batch")
  func waitingGetsSharedBatch() throws {
    var machine = Machine(version: 0, snapshot: v0)
    let id = try #require(register(&machine, 0, v0))
    #expect(machine.next(id, waiter: "w") == nil)
    let resumes = machine.publish(batch(v0, v1, 0, 1), refreshing: [])
    #expect(resumes.count == 1)
    guard case .batch(let delivered)? = resumes.first?.1, resumes.first?.0 == "w" else {
      Issue.record("expected the shared batch")
      return
    }
    #expect(delivered.from == 0 && delivered.to == 1)
  }

  @Test("a subscriber that missed batches gets one composition from its own version")
  func laggingSubscriberComposes() throws {
    var machine = Machine(version: 0, snapshot: v0)
    let id = try #require(register(&machine, 0, v0))
    #expect(machine.publish(batch(v0, v1, 0, 1), refreshing: ["a"]).isEmpty)
    #expect(machine.publish(batch(v1, v2, 1, 2), refreshing: []).isEmpty)
    guard case .compose(let from, let fromVersion, let to, let toVersion, let refreshing)? = machine.next(id, waiter: "w")
    else {
      Issue.record("expected a composition")
      return
    }
    #expect(from.sections == v0.sections && to.sections == v2.sections)
    #expect(fromVersion == 0 && toVersion == 2)
    #expect(refreshing == ["a"], "force-refreshes of missed batches are kept")
    // Until it reports the delivery, a new batch composes from its old version again.
    machine.delivered(id, version: 2, snapshot: v2)
    let v3 = snapshot("A: a b c d")
    _ = machine.publish(batch(v2, v3, 2, 3), refreshing: [])
    guard case .batch(let next)? = machine.next(id, waiter: "w") else {
      Issue.record("expected the shared batch after delivery")
      return
    }
    #expect(next.from == 2)
  }

  @Test("an empty composition keeps the subscriber's version but not its wait")
  func emptyCompositionKeepsVersion() throws {
    var machine = Machine(version: 0, snapshot: v0)
    let id = try #require(register(&machine, 0, v0))
    _ = machine.publish(batch(v0, v1, 0, 1), refreshing: [])
    _ = machine.publish(batch(v1, v0, 1, 2), refreshing: [])
    guard case .compose? = machine.next(id, waiter: "w") else {
      Issue.record("expected a composition")
      return
    }
    // The consumer found it empty and did not report a delivery: it now waits for version 3.
    #expect(machine.next(id, waiter: "w") == nil)
    let resumes = machine.publish(batch(v0, v2, 2, 3), refreshing: [])
    guard case .compose(_, let fromVersion, _, let toVersion, _)? = resumes.first?.1 else {
      Issue.record("expected a composition from version 0")
      return
    }
    #expect(fromVersion == 0 && toVersion == 3)
  }

  @Test("a subscriber registered ahead of the published version skips older batches")
  func registeredAhead() throws {
    var machine = Machine(version: 0, snapshot: v0)
    let id = try #require(register(&machine, 2, v2))
    #expect(machine.publish(batch(v0, v1, 0, 1), refreshing: []).isEmpty)
    #expect(machine.next(id, waiter: "w") == nil)
  }

  @Test("cancel is idempotent and returns the waiter once; finish ends everyone")
  func cancelAndFinish() throws {
    var machine = Machine(version: 0, snapshot: v0)
    let first = try #require(register(&machine, 0, v0))
    let second = try #require(register(&machine, 0, v0))
    #expect(machine.next(first, waiter: "one") == nil)
    #expect(machine.cancel(first) == "one")
    #expect(machine.cancel(first) == nil)
    guard case .end? = machine.next(first, waiter: "late") else {
      Issue.record("a cancelled subscriber ends")
      return
    }
    #expect(machine.next(second, waiter: "two") == nil)
    #expect(machine.finish() == ["two"])
    #expect(machine.count == 0)
    #expect(machine.register(version: 0, snapshot: v0) == nil)
  }
}

extension SubscriptionDelivery: Equatable {
  static func == (lhs: Self, rhs: Self) -> Bool {
    switch (lhs, rhs) {
    case (.end, .end): true
    case (.batch(let l), .batch(let r)): l.from == r.from && l.to == r.to
    case (.compose(_, let lf, _, let lt, let lr), .compose(_, let rf, _, let rt, let rr)): lf == rf && lt == rt && lr == rr
    default: false
    }
  }
}
