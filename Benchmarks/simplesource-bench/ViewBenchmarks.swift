// View benchmarks: what a ListViewDataSource adds on top of a bare subscriber, and what echo suppression costs.

import SimpleSource
import SimpleSourceTesting

/// A reordering delegate whose moves stay on their way until `release()`, so batches are rebased.
final class HeldDelegate: ReorderingDelegate {
  struct Released: Error {}
  let gate = Countdown(1)
  func reorder(_ move: InteractiveMove<BenchSection>) async throws -> Version {
    await gate.wait()
    throw Released()
  }
  func release() { gate.arrive() }
}

/// 100,000 items in one section; the target deletes 10,000, inserts 10,000, shuffles 2,000 and changes
/// every 100th item.
func viewData() -> (old: [BenchSection], new: [BenchSection]) {
  let (source, target) = flatIDs(
    count: 100_000, deleted: 50_000..<60_000, inserted: 10_000, insertAt: 20_000,
    shuffled: 70_000..<72_000)
  let new = target.map { Item(id: $0, version: $0 % 100 == 0 ? 1 : 0) }
  return ([Section(id: 0, items: source.map { Item(id: $0) })], [Section(id: 0, items: new)])
}

/// One batch from `setSections` until a bare subscriber has swapped in every stage's data.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func timeBareSubscriber(_ old: [BenchSection], _ new: [BenchSection]) async -> Double {
  guard let source = try? BasicDataSource(sections: old) else { fatalError("invalid data") }
  let subscription = await source.subscribe()
  var batches = subscription.batches.makeAsyncIterator()
  let start = ContinuousClock.now
  _ = try? await source.setSections(new)
  guard let batch = await batches.next() else { fatalError("no batch") }
  var shown = subscription.snapshot.sections
  for stage in batch.changeset.stages { shown = stage.state.sections }
  consume(shown == new)
  return elapsedMS(since: start)
}

/// One batch from `setSections` until a view data source on a no-op view shows it; with `rebased`, while
/// a move of the user's is on its way, so the batch is rebased onto it (one more diff, off main).
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
@MainActor
func timeViewDataSource(
  _ old: [BenchSection], _ new: [BenchSection], rebased: Bool, verified: Bool = false
) async -> Double {
  guard let source = try? BasicDataSource(sections: old) else { fatalError("invalid data") }
  let view = SilentListView()
  let factory = ViewFactory<BenchSection, SilentListView> { item, _ in item.version == 0 ? "plain" : "changed"
  }
  factory.registerCell(method: (), reuseIdentifier: "plain", in: view) { (_: SilentListView.Cell, _, _) in }
  factory.registerCell(method: (), reuseIdentifier: "changed", in: view) { (_: SilentListView.Cell, _, _) in }
  let update = ViewUpdate<BenchSection>.animated(largeBatchThreshold: nil)
  let viewDataSource = ListViewDataSource(
    view: view, factory: factory,
    update: verified
      ? update.verifyingBatches { fatalError("a benchmark batch broke a rule: \($0)") } : update)
  let delegate = HeldDelegate()
  viewDataSource.reorderingDelegate = delegate
  await viewDataSource.follow(source)
  var expected = new
  if rebased {
    // The user moved the first item one down; the move stays on its way while the batch arrives.
    viewDataSource.moveItem(at: ItemPosition(section: 0, item: 0), to: ItemPosition(section: 0, item: 1))
    expected[0].items.swapAt(0, 1)
  }
  guard let target = try? Snapshot(expected) else { fatalError("invalid data") }
  let start = ContinuousClock.now
  _ = try? await source.setSections(new)
  await viewDataSource.showing(target)
  let elapsed = elapsedMS(since: start)
  delegate.release()
  return elapsed
}

/// `view-apply`: a view data source against a bare subscriber. `view-rebased`: the same view data source
/// with a move on its way, against itself without one.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
@MainActor
func viewBatch(iterations: Int, rebased: Bool) async -> RuntimeResult {
  let (old, new) = viewData()
  var ours: [Double] = []
  var floors: [Double] = []
  for _ in 0..<iterations {
    floors.append(
      rebased ? await timeViewDataSource(old, new, rebased: false) : await timeBareSubscriber(old, new))
    ours.append(await timeViewDataSource(old, new, rebased: rebased))
  }
  return RuntimeResult(
    name: rebased ? "view-rebased" : "view-apply", ms: median(ours), floorMS: median(floors),
    note: rebased
      ? "floor: the same view with no move on its way" : "floor: a bare subscriber swapping stage data")
}

/// `view-apply-verified`: the view data source of `view-apply` with every batch verified against UIKit's
/// rules (`ViewUpdate.verifyingBatches`), against the same one unverified, interleaved in the same run.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
@MainActor
func viewBatchVerified(iterations: Int) async -> RuntimeResult {
  let (old, new) = viewData()
  var verified: [Double] = []
  var unverified: [Double] = []
  for _ in 0..<iterations {
    unverified.append(await timeViewDataSource(old, new, rebased: false))
    verified.append(await timeViewDataSource(old, new, rebased: false, verified: true))
  }
  let (ms, unverifiedMS) = (median(verified), median(unverified))
  return RuntimeResult(
    name: "view-apply-verified", ms: ms, floorMS: .nan,
    extra: ["vs_unverified": ms / unverifiedMS, "unverified_ms": unverifiedMS],
    note: String(format: "unverified %.2f ms; verified/unverified %.2fx", unverifiedMS, ms / unverifiedMS))
}
