// Copies kept outside the package: a batch of many mutations applied to a dictionary-and-order store
// through its edits by id, or to an array of sections, against taking the batch's snapshot.

import SimpleSource
import SimpleSourceTesting

let copyCaseNames = ["copy-by-edits", "copy-apply-array"]

/// How a subscriber keeps its copy.
enum CopyKind {
  /// `UpdateBatch.edits` into a `KeyedCopy`.
  case edits
  /// `UpdateBatch.apply(to:)` into an array of sections.
  case array
}

/// The median times, over `rounds` batches of `mutations` mixed mutations (content changes, inserts,
/// deletes and moves across sections) on `items` items in 15 sections, from the start of the batch's
/// transaction to a subscriber holding the batch's snapshot, and to a subscriber whose copy (`kind`) has
/// followed the batch. The two are timed on alternate rounds, both following every batch. `ownMS` is the
/// copy's own work; `unorderedMS`, for `.edits`, the same edits applied to a plain dictionary by id that
/// keeps no order (the documented cache): the least a copy by id pays per edit at this size, which
/// includes the memory's.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func copyLatency(items: Int, mutations: Int, rounds: Int, kind: CopyKind) async -> (
  snapshotMS: Double, copyMS: Double, ownMS: Double, unorderedMS: Double
) {
  let sectionCount = 15
  let perSection = items / sectionCount
  let sections = (0..<sectionCount).map { section in
    Section(id: section, items: (0..<perSection).map { Item(id: section * perSection + $0) })
  }
  guard let source = try? BasicDataSource(sections: sections) else { fatalError("invalid data") }
  let taking = await source.subscribe()
  let copying = await source.subscribe()
  var taken = taking.batches.makeAsyncIterator()
  var followed = copying.batches.makeAsyncIterator()
  var keyed = KeyedCopy(copying.snapshot)
  var array = copying.snapshot.sections
  var live = Array(0..<(perSection * sectionCount))
  var next = live.count
  var random = SeededGenerator(seed: 0xC0_FFEE)
  var snapshotTimes: [Double] = []
  var copyTimes: [Double] = []
  var ownTimes: [Double] = []
  var unordered = Dictionary(
    uniqueKeysWithValues: copying.snapshot.sections.lazy.flatMap(\.items).map { ($0.id, $0) })
  var unorderedTimes: [Double] = []
  func follow(_ batch: UpdateBatch<BenchSection>?) {
    guard let batch else { fatalError("the source ended") }
    let start = ContinuousClock.now
    defer { ownTimes.append(elapsedMS(since: start)) }
    switch kind {
    case .edits:
      do { try keyed.apply(batch.edits) } catch { fatalError("\(error)") }
    case .array:
      do { try batch.apply(to: &array) } catch { fatalError("\(error)") }
    }
  }
  func followUnordered(_ batch: UpdateBatch<BenchSection>) {
    let start = ContinuousClock.now
    defer { unorderedTimes.append(elapsedMS(since: start)) }
    for edit in batch.edits {
      switch edit {
      case .insertItem(let item, _), .updateItem(let item): unordered[item.id] = item
      case .deleteItem(let id): unordered[id] = nil
      case .moveItem(let id, _): if unordered[id] == nil { fatalError("moved \(id), not held") }
      case .insertSection, .moveSection, .updateSection, .deleteSection: break
      }
    }
  }
  for round in 0..<(rounds * 2) {
    // The batch's mutations, drawn before the clock starts: a fifth each of content changes, inserts,
    // deletes, moves within a section and moves to another section's item.
    var operations: [(kind: Int, id: Int, other: Int)] = []
    for _ in 0..<mutations {
      let kind = Int.random(in: 0..<5, using: &random)
      let index = Int.random(in: 0..<live.count, using: &random)
      let id = live[index]
      var other = live[Int.random(in: 0..<live.count, using: &random)]
      switch kind {
      case 1:
        other = id
        live.append(next)
        next += 1
      case 2:
        live.swapAt(index, live.count - 1)
        live.removeLast()
      default: break
      }
      operations.append((kind, id, other))
    }
    let first = next - operations.lazy.filter { $0.kind == 1 }.count
    let batch = operations
    let start = ContinuousClock.now
    _ = try? await source.transaction { transaction in
      var fresh = first
      var deleted = Set<Int>()
      for operation in batch {
        switch operation.kind {
        case 0:
          guard !deleted.contains(operation.id) else { continue }
          try transaction.replaceItem(Item(id: operation.id, version: round + 1))
        case 1:
          // After an item the batch may have deleted: then at the end of the first section.
          if deleted.contains(operation.id) {
            try transaction.appendItems([Item(id: fresh)], toSection: 0)
          } else {
            try transaction.insertItems([Item(id: fresh)], after: operation.id)
          }
          fresh += 1
        case 2:
          guard deleted.insert(operation.id).inserted else { continue }
          try transaction.deleteItems([operation.id])
        default:
          guard !deleted.contains(operation.id), !deleted.contains(operation.other),
            operation.id != operation.other
          else { continue }
          try transaction.moveItem(operation.id, before: operation.other)
        }
      }
    }
    if round % 2 == 0 {
      _ = await taken.next()?.snapshot
      snapshotTimes.append(elapsedMS(since: start))
      let batch = await followed.next()
      follow(batch)
      if kind == .edits, let batch { followUnordered(batch) }
    } else {
      let batch = await followed.next()
      follow(batch)
      copyTimes.append(elapsedMS(since: start))
      _ = await taken.next()
      if kind == .edits, let batch { followUnordered(batch) }
    }
  }
  let final = await source.snapshot.sections
  let copied = kind == .edits ? keyed.sections : array
  guard copied == final else { fatalError("the copy does not equal the source") }
  taking.cancel()
  copying.cancel()
  if kind == .edits, unordered.count != final.reduce(0, { $0 + $1.items.count }) {
    fatalError("the unordered copy does not hold the source's items")
  }
  return (
    median(snapshotTimes), median(copyTimes), median(ownTimes),
    unorderedTimes.isEmpty ? .nan : median(unorderedTimes)
  )
}

/// `copy-by-edits`: batches of 10,000 mixed mutations on 60,000 items in 15 sections, applied to a
/// `KeyedCopy` (items in a dictionary, the order by neighbours) through `UpdateBatch.edits`: `vs_snapshot`
/// is its latency over a subscriber that takes `batch.snapshot`, and `vs_10k` its latency at 1,000,000
/// items over its time at 10,000, each measured in the same run: the copy's own work (reading the edits
/// and applying them), which follows the change. `latency_vs_10k` is the same ratio for the whole latency,
/// which includes the source's own transaction and batch. `unordered_vs_10k` is the ratio for a plain
/// dictionary that applies the same edits by id and keeps no order, the least work a copy by id can do:
/// what memory alone adds at 1,000,000 items, whose entries no cache holds. `copy_vs_unordered_1m` is the
/// copy's own work over that dictionary's at 1,000,000 items.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func copyByEdits(iterations: Int) async -> RuntimeResult {
  let rounds = max(3, iterations / 2)
  let (snapshotMS, copyMS, _, _) = await copyLatency(
    items: 60_000, mutations: 10_000, rounds: rounds, kind: .edits)
  let small = await copyLatency(items: 10_000, mutations: 10_000, rounds: rounds, kind: .edits)
  let large = await copyLatency(
    items: sized(1_000_000, quick: 100_000), mutations: 10_000, rounds: rounds, kind: .edits)
  return RuntimeResult(
    name: "copy-by-edits", ms: copyMS, floorMS: .nan,
    extra: [
      "vs_snapshot": copyMS / snapshotMS, "vs_10k": large.ownMS / small.ownMS,
      "latency_vs_10k": large.copyMS / small.copyMS, "snapshot_ms": snapshotMS, "copy_10k_ms": small.ownMS,
      "copy_1m_ms": large.ownMS, "unordered_vs_10k": large.unorderedMS / small.unorderedMS,
      "copy_vs_unordered_1m": large.ownMS / large.unorderedMS,
    ],
    note: String(
      format:
        "snapshot %.1f ms; edits/snapshot %.2fx; copy's own work 1M/10k %.2fx (%.1f ms, %.1f ms); "
        + "unordered dictionary 1M/10k %.2fx; copy/unordered at 1M %.2fx",
      snapshotMS, copyMS / snapshotMS, large.ownMS / small.ownMS, large.ownMS, small.ownMS,
      large.unorderedMS / small.unorderedMS, large.ownMS / large.unorderedMS))
}

/// `copy-apply-array`: the batches of `copy-by-edits` applied to an array of sections with
/// `UpdateBatch.apply(to:)`, which reads and writes the whole array: `vs_snapshot` as there.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func copyApplyArray(iterations: Int) async -> RuntimeResult {
  let rounds = max(3, iterations / 2)
  let (snapshotMS, copyMS, _, _) = await copyLatency(
    items: 60_000, mutations: 10_000, rounds: rounds, kind: .array)
  return RuntimeResult(
    name: "copy-apply-array", ms: copyMS, floorMS: .nan,
    extra: ["vs_snapshot": copyMS / snapshotMS, "snapshot_ms": snapshotMS],
    note: String(format: "snapshot %.1f ms; array/snapshot %.2fx", snapshotMS, copyMS / snapshotMS))
}
