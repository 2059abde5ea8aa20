// What a seeded schedule costs a correct test: one run under a schedule against the same run plain.

import SimpleSource
import SimpleSourceTesting

/// `schedule-overhead`: a test body (a source, a subscriber that follows it, four writers, a settle) run
/// 200 times as `swift test` runs it, against the same body under 200 seeded schedules (one run each).
@available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *)
func scheduleOverhead(iterations: Int) async -> RuntimeResult {
  let runs = 200
  @Sendable func body() async throws {
    let source = try BasicDataSource(sections: [Section(id: 0, items: [Item(id: 0, version: 0)])])
    let batches = await source.subscribe().batches
    let reader = Task.schedulable("reader") {
      for await batch in batches where batch.to.number >= 4 { return }
    }
    await withTaskGroup(of: Void.self) { group in
      for writer in 1...4 {
        group.addTask { _ = try? await source.replaceItem(Item(id: 0, version: writer)) }
      }
    }
    await source.settled()
    await reader.value
  }
  var plain: [Double] = []
  var scheduled: [Double] = []
  for _ in 0..<max(1, iterations / 3) {
    var start = ContinuousClock.now
    for _ in 0..<runs { try? await body() }
    plain.append(elapsedMS(since: start) / Double(runs))
    start = ContinuousClock.now
    try? await exploreSchedules(count: runs, body)
    scheduled.append(elapsedMS(since: start) / Double(runs))
  }
  return RuntimeResult(
    name: "schedule-overhead", ms: median(scheduled), floorMS: median(plain),
    note:
      "one run of a test body (a source, a follower, 4 writers) under a seeded schedule; floor: the same run plain"
  )
}
