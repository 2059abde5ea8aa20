// The observable list model: one edit on a 1,000,000-row source to an applied model against the same on
// 10,000 rows, and how many observations one edit invalidates.

import Foundation
import Observation
import SimpleSource

/// The median time, over `rounds`, from one `replaceItem` of the item `id(round)` of `source` until
/// `reached` returns for the version it made.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
@MainActor
func medianEditLatency(
  _ source: BasicDataSource<BenchSection>, rounds: Int, id: (Int) -> Int,
  until reached: (Version) async throws -> Void
) async -> Double {
  var times: [Double] = []
  for round in 0..<rounds {
    let start = ContinuousClock.now
    guard let version = try? await source.replaceItem(Item(id: id(round), version: round + 1)) else {
      fatalError("the edit failed")
    }
    do { try await reached(version) } catch { fatalError("\(error)") }
    times.append(elapsedMS(since: start))
  }
  return median(times)
}

/// Median time from one `replaceItem` to the model holding its version, on a flat source of `count` items.
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
@MainActor
func observedEditLatency(count: Int, rounds: Int) async -> Double {
  guard let source = try? BasicDataSource(sections: flatItems(count)) else { fatalError("invalid data") }
  let list = await ObservedList(following: source, pacing: .immediate)
  let latency = await medianEditLatency(source, rounds: rounds, id: { $0 * 7_919 % count }) {
    try await list.reached($0)
  }
  list.stop()
  return latency
}

/// `observed-one-edit-1m`: `vs_10k` is the latency on 1,000,000 rows over the latency on 10,000.
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
@MainActor
func observedOneEdit(iterations: Int) async -> RuntimeResult {
  let rounds = max(20, iterations * 4)
  let small = await observedEditLatency(count: 10_000, rounds: rounds)
  let large = await observedEditLatency(count: sized(1_000_000, quick: 100_000), rounds: rounds)
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
  do { try await list.reached(version) } catch { fatalError("\(error)") }
  list.stop()
  return RuntimeResult(
    name: "observed-invalidations", ms: .nan, floorMS: .nan, extra: ["invalidations": Double(count.value)],
    note: "\(count.value) of \(10_002) observations invalidated by one edit (target 1)")
}

/// Median time from one `replaceItem` to a 50-row window over a flat source of `count` items holding its
/// version, for edits outside the window (`inside == false`) or inside it.
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
@MainActor
func observedWindowLatency(count: Int, inside: Bool, rounds: Int) async -> Double {
  guard let source = try? BasicDataSource(sections: flatItems(count)) else { fatalError("invalid data") }
  let start = count / 2
  let window = await ObservedWindow(
    following: source, section: 0, range: start..<(start + 50), pacing: .immediate)
  // Inside: one of the 50 rows shown; outside: a row far from them.
  let latency = await medianEditLatency(
    source, rounds: rounds, id: { inside ? start + $0 % 50 : $0 * 7_919 % (count / 4) }
  ) { try await window.reached($0) }
  window.stop()
  return latency
}

/// `observed-window-1m`: a 50-row window over 1,000,000 rows, one edit outside it and one inside, each to
/// the applied window; `outside_vs_10k` and `inside_vs_10k` against the same on 10,000 rows.
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
@MainActor
func observedWindow(iterations: Int) async -> RuntimeResult {
  let rounds = max(20, iterations * 4)
  let outsideSmall = await observedWindowLatency(count: 10_000, inside: false, rounds: rounds)
  let insideSmall = await observedWindowLatency(count: 10_000, inside: true, rounds: rounds)
  let count = sized(1_000_000, quick: 100_000)
  let outside = await observedWindowLatency(count: count, inside: false, rounds: rounds)
  let inside = await observedWindowLatency(count: count, inside: true, rounds: rounds)
  return RuntimeResult(
    name: "observed-window-1m", ms: inside, floorMS: .nan,
    extra: [
      "outside_ms": outside, "inside_ms": inside, "outside_vs_10k": outside / outsideSmall,
      "inside_vs_10k": inside / insideSmall,
    ],
    note: String(
      format: "1m: outside %.3f ms, inside %.3f ms; vs 10k %.2fx / %.2fx", outside, inside,
      outside / outsideSmall, inside / insideSmall))
}
