// Every wait of the package returns when its task is cancelled, says so, and leaves nothing parked.

import SimpleSource
import SimpleSourceTesting
import Testing

@testable import SimpleSourceCore
@testable import SimpleSourceViews
@testable import SimpleSourceWire

@Suite("Cancelled waits", .timeLimit(.minutes(30)))
struct CancelledWaitsTests {
  /// How many times the main-actor waits are cancelled: the scheduler cancels some before they park, some
  /// after. The waits off the main actor run under seeded schedules instead, which choose both orders.
  static let rounds = 50

  @available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "settled(through:) returns false when cancelled, before or after it parks; true when its version is cut",
    .seededSchedules(50, quietPeriod: .milliseconds(250)))
  func settledThrough() async throws {
    let source = try TestSource(sections: layout("A: a"))
    let waiter = Task.schedulable("a waiter") { await source.settled(through: 1_000) }
    waiter.cancel()
    #expect(await waiter.value == false)
    #expect(await source.publishing.settleWaiters.isEmpty, "nothing left parked")
    let version = try await source.appendItems([item("b")], toSection: "A")
    #expect(try await source.settled(through: version))
  }

  @available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *)
  @Test(
    "a remote source's reached(remoteVersion:) returns false when cancelled, before or after it parks",
    .seededSchedules(50, quietPeriod: .milliseconds(250)))
  func remoteReached() async throws {
    let remote = RemoteDataSource<TestSection>()
    let waiter = Task.schedulable("a waiter") { await remote.reached(remoteVersion: 5) }
    waiter.cancel()
    #expect(await waiter.value == false)
    #expect(await remote.state.waiters.isEmpty)
    try await remote.receive(.reset(stream: "s", version: 5, snapshot: try Snapshot(layout("A: a"))))
    #expect(await remote.reached(remoteVersion: 5))
  }

  @Test(
    "a view data source's showing(_:) and a recorder's showing(_:) and finished() return false when cancelled"
  )
  @MainActor
  func viewsAndRecorders() async throws {
    let source = try TestSource(sections: layout("A: a"))
    let (_, dataSource) = makeView()
    await dataSource.follow(source)
    let recorder = await BatchRecorder(await source.subscribe())
    let never = try Snapshot(layout("Z: z"))
    for _ in 0..<Self.rounds {
      let showing = Task { await dataSource.showing(never) }
      let recorded = Task { await recorder.showing(never) }
      let finished = Task { await recorder.finished() }
      showing.cancel()
      recorded.cancel()
      finished.cancel()
      #expect(await showing.value == false)
      #expect(await recorded.value == false)
      #expect(await finished.value == false)
    }
    #expect(await dataSource.showing(await source.snapshot))
    #expect(await recorder.showing(await source.snapshot))
    await recorder.cancel()
    #expect(await recorder.finished())
  }
}
