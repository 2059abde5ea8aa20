// G10: once settled() returns, the batch of every earlier mutation has been offered to subscribers.

import Foundation
@testable import SimpleSource
import Testing

@Suite("G10: settled() waits for publication", .timeLimit(.minutes(1)))
struct SettledTests {
  @Test("settled() returns only once the batch of an earlier mutation is offered to subscribers")
  func settledWaitsForPublication() async throws {
    let gate = DiffGate()
    let source = try BasicDataSource(sections: [Section(id: 0, items: [GatedItem(id: 0, version: 0, gate: gate)])])
    let subscription = await source.subscribe()
    // refreshItems compares no items itself, so the first `==` is the diff's, which waits at the gate.
    try await source.refreshItems([0])
    let offered = await source.openGateThenSettle(gate)
    #expect(offered == 1, "settled() returned before the batch was offered")
    _ = subscription.version
  }
}

extension BasicDataSource {
  /// Lets the held diff go, awaits settled(), and reads the version the subscribers were offered.
  ///
  /// The diff is held until here, so the batch cannot have been published before settled() is called.
  /// (This does not prove that a broken settled() would be caught every time: Swift may run the publish
  /// job when an isolated call returns, before the next line. The `settling` contract test covers the
  /// other side.)
  func openGateThenSettle(_ gate: DiffGate) async -> Int {
    gate.open()
    await settled()
    return hub.registry.withLock { $0.newestVersion }
  }
}

/// Holds a diff inside `==` until the test opens it.
final class DiffGate: Sendable {
  private let opened = DispatchSemaphore(value: 0)
  private let lock = NSLock()
  // Safe: `passed` is only read and written while `lock` is held.
  private nonisolated(unsafe) var passed = false

  /// Called by `==`: the first call waits until ``open()``; later calls pass.
  func pass() {
    let first = lock.withLock { () -> Bool in
      defer { passed = true }
      return !passed
    }
    if first { opened.wait() }
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
