// A gate that holds a data source's diff, so tests can act while a batch is being prepared.

import Foundation
@testable import SimpleSourceCore
@testable import SimpleSourceViews
@testable import SimpleSourceWire

/// Holds a diff inside `==` until the test opens it, and tells the test when a diff is held.
final class DiffGate: Sendable {
  private struct State: Sendable {
    var isHeld = false
    var heldWaiters: [CheckedContinuation<Void, Never>] = []
  }
  private let opened = DispatchSemaphore(value: 0)
  private let state = Locked(State())

  /// Called by `==`: the first call waits until ``open()``; later calls pass.
  func pass() {
    let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>]? in
      if state.isHeld { return nil }
      state.isHeld = true
      defer { state.heldWaiters = [] }
      return state.heldWaiters
    }
    guard let waiters else { return }
    for waiter in waiters { waiter.resume() }
    opened.wait()
  }

  /// Returns once a diff is held at the gate (at once if one already was).
  func held() async {
    await withCheckedContinuation { continuation in
      let isHeld = state.withLock { state in
        if !state.isHeld { state.heldWaiters.append(continuation) }
        return state.isHeld
      }
      if isHeld { continuation.resume() }
    }
  }

  func open() { opened.signal() }
}

/// An item whose `==` (called by the diff on surviving items) waits at a gate.
struct GatedItem: Identifiable, Equatable, Sendable {
  let id: Int
  let version: Int
  let gate: DiffGate
  static func == (lhs: GatedItem, rhs: GatedItem) -> Bool {
    lhs.gate.pass()
    return lhs.id == rhs.id && lhs.version == rhs.version
  }
}

extension BasicDataSource {
  /// Lets the held diff go and awaits settled() in the same turn of the actor, then reads the newest
  /// version offered to subscribers.
  ///
  /// Publishing a batch needs this actor, which this method holds until settled() suspends. So a
  /// settled() that returns without waiting returns before anything is offered, and the version read is
  /// the old one: the check is deterministic (a no-op settled() fails it every time).
  func openGateThenSettle(_ gate: DiffGate) async -> Int {
    gate.open()
    await settled()
    return offeredVersion
  }

  /// The newest version offered to subscribers.
  var offeredVersion: Int { hub.registry.withLock { $0.newestVersion } }

  /// The versions of the newest batch offered to subscribers.
  var newestOfferedBatch: (from: Int, to: Int)? {
    hub.registry.withLock { registry in registry.newest.map { ($0.from.number, $0.to.number) } }
  }
}
