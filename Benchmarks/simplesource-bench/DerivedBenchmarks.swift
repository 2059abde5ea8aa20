// Derived-source benchmarks: a projection's batch against its parent's, and a refilter against a full diff.

import Foundation
import SimpleSource

/// Median time from `mutate` to the next batch of `subscription`, over `rounds`.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func batchLatency<S: SectionType>(
  of subscription: Subscription<S>, rounds: Int, _ mutate: (Int) async -> Void
) async -> Double {
  var batches = subscription.batches.makeAsyncIterator()
  var times: [Double] = []
  for round in 0..<rounds {
    let start = ContinuousClock.now
    await mutate(round)
    _ = await batches.next()
    times.append(elapsedMS(since: start))
  }
  subscription.cancel()
  return median(times)
}

/// Median times from `mutate` to the next batch of `parent` and of `derived`, both subscribed through
/// every round: the rounds alternate which of the two is timed (the other's batch is then drained), so
/// both medians see the same work per edit and the same drift of the machine.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func interleavedLatency<P: SectionType, D: SectionType>(
  parent: Subscription<P>, derived: Subscription<D>, rounds: Int, _ mutate: (Int) async -> Void
) async -> (parentMS: Double, derivedMS: Double) {
  var parentBatches = parent.batches.makeAsyncIterator()
  var derivedBatches = derived.batches.makeAsyncIterator()
  var parentTimes: [Double] = []
  var derivedTimes: [Double] = []
  for round in 0..<(rounds * 2) {
    let start = ContinuousClock.now
    await mutate(round)
    if round % 2 == 0 {
      _ = await parentBatches.next()
      parentTimes.append(elapsedMS(since: start))
      _ = await derivedBatches.next()
    } else {
      _ = await derivedBatches.next()
      derivedTimes.append(elapsedMS(since: start))
      _ = await parentBatches.next()
    }
  }
  parent.cancel()
  derived.cancel()
  return (median(parentTimes), median(derivedTimes))
}

/// One `replaceItem` on a flat 100,000-item parent, to a subscriber of the parent and to a subscriber of a
/// projection showing the even ids; `vs_parent` is the projection's latency over the parent's.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func projectionOneEdit(iterations: Int) async -> RuntimeResult {
  let (parentMS, projectedMS) = await projectionEditLatency(items: 100_000, rounds: max(20, iterations * 4))
  return RuntimeResult(
    name: "projection-one-edit-100k", ms: projectedMS, floorMS: .nan,
    extra: ["vs_parent": projectedMS / parentMS, "parent_ms": parentMS],
    note: String(format: "parent %.2f ms; projection/parent %.2fx", parentMS, projectedMS / parentMS))
}

/// The same edit as `projection-one-edit-100k` on 1,000,000 items; `vs_100k` is the projection's latency
/// there over its latency on 100,000 items, measured in the same run: flat when the cost follows the edit.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func projectionOneEditMillion(iterations: Int) async -> RuntimeResult {
  let rounds = max(20, iterations * 4)
  let (_, smallMS) = await projectionEditLatency(items: 100_000, rounds: rounds)
  let (parentMS, largeMS) = await projectionEditLatency(
    items: sized(1_000_000, quick: 100_000), rounds: rounds)
  return RuntimeResult(
    name: "projection-one-edit-1m", ms: largeMS, floorMS: .nan,
    extra: ["vs_100k": largeMS / smallMS, "vs_parent": largeMS / parentMS, "ms_100k": smallMS],
    note: String(format: "100k %.3f ms; 1m/100k %.2fx; parent %.3f ms", smallMS, largeMS / smallMS, parentMS))
}

/// Latencies of one `replaceItem` of an even id on a flat parent of `items` items, to the parent's
/// subscriber and to a projection's (the even ids), interleaved.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func projectionEditLatency(items: Int, rounds: Int) async -> (parentMS: Double, derivedMS: Double) {
  guard let parent = try? BasicDataSource(sections: flatItems(items)) else { fatalError("invalid data") }
  // Even ids, replaced with a new version: the item stays shown and is refreshed.
  func edit(_ round: Int) async {
    _ = try? await parent.replaceItem(Item(id: (round * 7_919 % (items / 2)) * 2, version: round + 1))
  }
  guard let projected = try? await parent.projected(Projection(where: { $0.id % 2 == 0 })) else {
    fatalError("projection failed")
  }
  return await interleavedLatency(
    parent: await parent.subscribe(), derived: await projected.subscribe(), rounds: rounds, edit)
}

/// Switching a 100,000-item projection between two filters (even ids, multiples of 3), to a subscriber,
/// against indexing the new list and diffing it from the old one.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func projectionRefilter(iterations: Int) async -> RuntimeResult {
  let rounds = max(12, iterations)
  guard let parent = try? BasicDataSource(sections: flatItems(100_000)) else {
    fatalError("invalid data")
  }
  let rules: [Projection<BenchSection>] = [
    Projection(where: { $0.id % 2 == 0 }), Projection(where: { $0.id % 3 == 0 }),
  ]
  guard let projected = try? await parent.projected(rules[0]) else { fatalError("projection failed") }
  let ours = await batchLatency(of: await projected.subscribe(), rounds: rounds) { round in
    _ = try? await projected.setProjection(rules[(round + 1) % 2])
  }
  let lists = [2, 3].map { divisor in
    [BenchSection(id: 0, items: flatItems(100_000)[0].items.filter { $0.id % divisor == 0 })]
  }
  // The same switches: index the new list, diff it from the old one (already indexed).
  let indexed = lists.map { try? Snapshot($0) }
  var floors: [Double] = []
  for round in 0..<rounds {
    guard let old = indexed[round % 2] else { fatalError("invalid data") }
    let start = ContinuousClock.now
    guard let new = try? Snapshot(lists[(round + 1) % 2]) else { fatalError("invalid data") }
    consume(Changeset(from: old, to: new))
    floors.append(elapsedMS(since: start))
  }
  return RuntimeResult(name: "projection-refilter-100k", ms: ours, floorMS: median(floors))
}

/// One `replaceItem` in one of 10 children of 10,000 items (10 sections each), to a subscriber of that
/// child and to a subscriber of the composite of all ten; `vs_parent` is the composite's latency over the
/// child's.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func compositeOneEdit(iterations: Int) async -> RuntimeResult {
  let rounds = max(20, iterations * 4)
  let children = (0..<10).map { child in
    guard
      let source = try? BasicDataSource(
        sections: (0..<10).map { section in
          BenchSection(
            id: child * 10 + section,
            items: (0..<1_000).map { Item(id: child * 10_000 + section * 1_000 + $0) })
        })
    else { fatalError("invalid data") }
    return source
  }
  let edited = children[4]
  func edit(_ round: Int) async {
    _ = try? await edited.replaceItem(Item(id: 40_000 + round * 7_919 % 10_000, version: round + 1))
  }
  guard let composite = try? await CompositeDataSource(children) else { fatalError("composition failed") }
  let (childMS, compositeMS) = await interleavedLatency(
    parent: await edited.subscribe(), derived: await composite.subscribe(), rounds: rounds, edit)
  return RuntimeResult(
    name: "composite-one-edit", ms: compositeMS, floorMS: .nan,
    extra: ["vs_parent": compositeMS / childMS, "parent_ms": childMS],
    note: String(format: "child %.2f ms; composite/child %.2fx", childMS, compositeMS / childMS))
}

/// A node of the outline benchmark.
struct BenchNode: OutlineNode {
  let id: Int
  var version = 0
  var children: [BenchNode] = []
}

/// One edit of a leaf in a 100,000-row outline (10,000 expanded top-level nodes with 9 children each),
/// to a subscriber of the parent and to a subscriber of the outline; `vs_parent` is the outline's latency
/// over the parent's.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func outlineOneEdit(iterations: Int) async -> RuntimeResult {
  let tops = 10_000
  func node(_ top: Int, version: Int = 0) -> BenchNode {
    BenchNode(
      id: top, children: (1...9).map { BenchNode(id: tops + top * 9 + $0, version: $0 == 5 ? version : 0) })
  }
  guard
    let parent = try? BasicDataSource(sections: [Section(id: 0, items: (0..<tops).map { node($0) })]),
    let outline = try? await OutlineDataSource(parent, expanded: Set(0..<tops))
  else { fatalError("invalid data") }
  let rows = await outline.snapshot.itemCount
  guard rows == tops * 10 else { fatalError("the outline shows \(rows) rows") }
  let (parentMS, outlineMS) = await interleavedLatency(
    parent: await parent.subscribe(), derived: await outline.subscribe(), rounds: max(20, iterations * 4)
  ) { round in
    _ = try? await parent.replaceItem(node(round * 7_919 % tops, version: round + 1))
  }
  return RuntimeResult(
    name: "outline-one-edit-100k", ms: outlineMS, floorMS: .nan,
    extra: ["vs_parent": outlineMS / parentMS, "parent_ms": parentMS],
    note: String(format: "parent %.3f ms; outline/parent %.2fx", parentMS, outlineMS / parentMS))
}

/// A note of the outline-from-rows benchmark: it names its parent.
struct BenchNote: OutlineRecord {
  let id: Int
  var parentID: Int?
  var siblingOrder: Int
  var version = 0
}

/// The latencies of one edit of a note among `notes` (a tenth of them top-level, each with nine
/// children; every tenth note expanded), to a subscriber of the flat source and to a subscriber of its
/// record outline. The edits alternate, each on a child of an expanded note: its content changed, and it
/// moved to the start of another expanded note's children.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func recordOutlineEditLatency(notes: Int, rounds: Int) async -> (parentMS: Double, outlineMS: Double) {
  let tops = notes / 10
  func note(_ id: Int) -> BenchNote {
    id < tops
      ? BenchNote(id: id, parentID: nil, siblingOrder: id)
      : BenchNote(id: id, parentID: (id - tops) / 9, siblingOrder: (id - tops) % 9)
  }
  guard
    let parent = try? BasicDataSource(sections: [Section(id: 0, items: (0..<notes).map(note))]),
    let outline = try? await RecordOutlineDataSource(
      parent, expanded: Set(stride(from: 0, to: notes, by: 10)))
  else { fatalError("invalid data") }
  _ = try? await parent.replaceItem(note(0))  // the parent's persistent form, built before the rounds
  await outline.settled()
  let (parentMS, outlineMS) = await interleavedLatency(
    parent: await parent.subscribe(), derived: await outline.subscribe(), rounds: rounds
  ) { round in
    // A child of an expanded top-level note (every tenth), so that every edit shows in the outline.
    let top = round * 7_919 % (tops / 10) * 10
    var edited = note(tops + top * 9 + round % 9)
    // `interleavedLatency` times the parent on even rounds and the outline on odd ones: each is timed on
    // edits and moves alike.
    if round / 2 % 2 == 0 {
      edited.version = round + 1
    } else {
      edited.parentID = (top + 10 * (1 + round % 5)) % tops
      edited.siblingOrder = -round
    }
    _ = try? await parent.replaceItem(edited)
  }
  return (parentMS, outlineMS)
}

/// One edit on 100,000 notes that name their parent, 10% of them expanded, to a subscriber of the flat
/// source and to a subscriber of its `RecordOutlineDataSource`: `vs_parent` is the outline's latency over
/// the flat source's, and `vs_10k` the outline's latency over its latency on 10,000 notes, measured in the
/// same run: flat when the cost follows the edit.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func outlineFromRowsOneEdit(iterations: Int) async -> RuntimeResult {
  // The two sizes alternate, in four chunks each, so that both see the same drift of the machine (one
  // size measured after the other read anywhere from 0.8 to 2.3 for the same build); each figure is the
  // median of its chunks' medians.
  let chunks = 4
  let rounds = max(10, iterations)
  var small: [Double] = []
  var parents: [Double] = []
  var outlines: [Double] = []
  for _ in 0..<chunks {
    small.append(await recordOutlineEditLatency(notes: 10_000, rounds: rounds).outlineMS)
    let large = await recordOutlineEditLatency(notes: 100_000, rounds: rounds)
    parents.append(large.parentMS)
    outlines.append(large.outlineMS)
  }
  let (smallMS, parentMS, outlineMS) = (median(small), median(parents), median(outlines))
  return RuntimeResult(
    name: "outline-from-rows-one-edit", ms: outlineMS, floorMS: .nan,
    extra: [
      "vs_parent": outlineMS / parentMS, "vs_10k": outlineMS / smallMS, "parent_ms": parentMS,
      "outline_10k_ms": smallMS,
    ],
    note: String(
      format: "parent %.3f ms; outline/parent %.2fx; 100k/10k %.2fx", parentMS, outlineMS / parentMS,
      outlineMS / smallMS))
}
