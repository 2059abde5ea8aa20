// The observable list model: one edit on a 1,000,000-row source to an applied model against the same on
// 10,000 rows, and how many observations one edit invalidates.

import Foundation
import Observation
import SimpleSource

/// Median time from one `replaceItem` to the model holding its version, on a flat source of `count` items.
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
@MainActor
func observedEditLatency(count: Int, rounds: Int) async -> Double {
  guard let source = try? BasicDataSource(sections: flatItems(count)) else { fatalError("invalid data") }
  let list = await ObservedList(following: source, pacing: .immediate)
  var times: [Double] = []
  for round in 0..<rounds {
    let start = ContinuousClock.now
    guard let version = try? await source.replaceItem(Item(id: round * 7_919 % count, version: round + 1))
    else {
      fatalError("the edit failed")
    }
    await list.reached(version)
    times.append(elapsedMS(since: start))
  }
  list.stop()
  return median(times)
}

/// `observed-one-edit-1m`: `vs_10k` is the latency on 1,000,000 rows over the latency on 10,000.
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
@MainActor
func observedOneEdit(iterations: Int) async -> RuntimeResult {
  let rounds = max(20, iterations * 4)
  let small = await observedEditLatency(count: 10_000, rounds: rounds)
  let large = await observedEditLatency(count: 1_000_000, rounds: rounds)
  return RuntimeResult(
    name: "observed-one-edit-1m", ms: large, floorMS: .nan,
    extra: ["vs_10k": large / small, "ms_10k": small],
    note: String(format: "10k %.3f ms; 1m/10k %.2fx", small, large / small))
}

/// `observed-invalidations`: how many observations (the section list, each section's rows and content,
/// each row's item, all observed) one edit on a 10,000-row model invalidates.
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
@MainActor
func observedInvalidations() async -> RuntimeResult {
  guard let source = try? BasicDataSource(sections: flatItems(10_000)) else { fatalError("invalid data") }
  let list = await ObservedList(following: source, pacing: .immediate)
  // The model changes on the main actor, and tells observers synchronously there.
  @MainActor final class Count { var value = 0 }
  let count = Count()
  func observe(_ read: () -> Void) {
    withObservationTracking(read) { MainActor.assumeIsolated { count.value += 1 } }
  }
  observe { _ = list.sections }
  for section in list.sections {
    observe { _ = section.rows }
    observe { _ = section.content }
    for row in section.rows { observe { _ = row.item } }
  }
  guard let version = try? await source.replaceItem(Item(id: 5_000, version: 1)) else { fatalError("edit") }
  await list.reached(version)
  list.stop()
  return RuntimeResult(
    name: "observed-invalidations", ms: .nan, floorMS: .nan, extra: ["invalidations": Double(count.value)],
    note: "\(count.value) of \(10_002) observations invalidated by one edit (target 1)")
}
