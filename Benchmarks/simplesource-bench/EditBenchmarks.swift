// The edit cases: what one edit, a transaction and a whole replacement cost at 10k and 1M items, a new
// snapshot plus its diff against the Dictionary floor, and a 1M-item source's resident memory.

import Foundation
import SimpleSource

let editCaseNames = [
  "edit-replace-10k", "edit-replace-1m", "edit-insert-front-10k", "edit-insert-front-1m", "edit-move-far-10k",
  "edit-move-far-1m", "transaction-10-edits-1m", "update-one-edit-1m", "set-sections-one-edit-1m",
  "new-snapshot-diff", "resident-1m",
]

func flatItems(_ count: Int) -> [BenchSection] { [Section(id: 0, items: (0..<count).map { Item(id: $0) })] }

/// A flat source of `count` items and the median latency, over `rounds`, from `mutate` to the batch.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func editLatency(
  _ name: String, count: Int, rounds: Int,
  _ mutate: @escaping @Sendable (BasicDataSource<BenchSection>, Int) async -> Void
) async -> RuntimeResult {
  guard let source = try? BasicDataSource(sections: flatItems(count)) else { fatalError("invalid data") }
  let ms = await batchLatency(of: await source.subscribe(), rounds: rounds) { await mutate(source, $0) }
  return RuntimeResult(name: name, ms: ms, floorMS: .nan, note: "\(count) items, median of \(rounds)")
}

@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func runEditCase(named name: String, iterations: Int) async -> RuntimeResult {
  let big = name.hasSuffix("1m")
  let count = big ? sized(1_000_000, quick: 100_000) : 10_000
  // A round of a log-derived case costs well under a millisecond: 25 make its median robust to a busy
  // moment (the first round also builds the persistent form).
  let rounds = big ? max(25, iterations * 5) : max(20, iterations * 4)
  switch name {
  case "edit-replace-10k", "edit-replace-1m":
    return await editLatency(name, count: count, rounds: rounds) { source, round in
      _ = try? await source.replaceItem(Item(id: round * 7_919 % count, version: round + 1))
    }
  case "edit-insert-front-10k", "edit-insert-front-1m":
    return await editLatency(name, count: count, rounds: rounds) { source, round in
      // Each new item goes before the previous one, which is first.
      _ = try? await source.insertItems([Item(id: -1 - round)], before: round == 0 ? 0 : -round)
    }
  case "edit-move-far-10k", "edit-move-far-1m":
    // Round r moves the first item (r) after the last one (r - 1, or count - 1 at first).
    return await editLatency(name, count: count, rounds: rounds) { source, round in
      _ = try? await source.moveItem(round % count, after: (round + count - 1) % count)
    }
  case "transaction-10-edits-1m":
    return await editLatency(name, count: count, rounds: rounds) { source, round in
      // Ten replacements in one recorded transaction: one version, one batch derived from the log.
      _ = try? await source.transaction { transaction throws(BasicDataSource<BenchSection>.Error) in
        for edit in 0..<10 {
          try transaction.replaceItem(Item(id: (round * 10 + edit) * 7_919 % count, version: round + 1))
        }
      }
    }
  case "new-snapshot-diff":
    return newSnapshotDiff(iterations: iterations)
  default:
    return resident(count: sized(1_000_000, quick: 100_000))
  }
}

/// `update { }` and `setSections` each changing one item of a flat source, in alternating rounds on two
/// sources, so that the allocator's state and the machine's load affect both alike (measured one after
/// the other, whichever ran first in the all-cases run paid up to 1.6× the other, for page faults of memory
/// the second one reused). Each round starts from the same point, one item to change: `update`'s body
/// edits a copy of the sections, and the `setSections` client edits the sections it keeps and passes
/// them. Both copy the edited section's items, since the source shares them; the client's copy is
/// timed too (`call_ms` leaves it out). `vs_set_sections` is the ratio of the two `ms`. Returns the case
/// `name` first.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func wholeListOneEdit(first name: String, iterations: Int) async -> [RuntimeResult] {
  // A round costs O(n).
  let (count, rounds) = (sized(1_000_000, quick: 100_000), max(5, iterations))
  guard let updated = try? BasicDataSource(sections: flatItems(count)),
    let replaced = try? BasicDataSource(sections: flatItems(count))
  else { fatalError("invalid data") }
  var updateBatches = await updated.subscribe().batches.makeAsyncIterator()
  var replaceBatches = await replaced.subscribe().batches.makeAsyncIterator()
  var sections = flatItems(count)
  var (updateTimes, replaceTimes, callTimes): ([Double], [Double], [Double]) = ([], [], [])
  for round in 0..<rounds {
    let index = round * 7_919 % count
    func update() async {
      let start = ContinuousClock.now
      _ = try? await updated.update { sections in sections[0].items[index].version += 1 }
      _ = await updateBatches.next()
      updateTimes.append(elapsedMS(since: start))
    }
    func replace() async {
      let start = ContinuousClock.now
      sections[0].items[index].version += 1
      let call = ContinuousClock.now
      _ = try? await replaced.setSections(sections)
      _ = await replaceBatches.next()
      replaceTimes.append(elapsedMS(since: start))
      callTimes.append(elapsedMS(since: call))
    }
    // Each goes first in every other round.
    if round % 2 == 0 {
      await update()
      await replace()
    } else {
      await replace()
      await update()
    }
  }
  let note = "\(count) items, median of \(rounds), alternating rounds"
  let (update, replace) = (median(updateTimes), median(replaceTimes))
  let results = [
    RuntimeResult(
      name: "update-one-edit-1m", ms: update, floorMS: .nan, extra: ["vs_set_sections": update / replace],
      note: note + String(format: "; %.2fx set-sections", update / replace)),
    RuntimeResult(
      name: "set-sections-one-edit-1m", ms: replace, floorMS: .nan, extra: ["call_ms": median(callTimes)],
      note: note + String(format: "; %.3f ms from the call", median(callTimes))),
  ]
  return name == results[0].name ? results : results.reversed()
}

/// A new snapshot of 100,000 items built from a plain array and diffed from the old one (already held),
/// for Int, UUID and String ids, against the floor: one Dictionary build plus one lookup pass over the
/// same ids. `vs_floor` is the worst of the three.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func newSnapshotDiff(iterations: Int) -> RuntimeResult {
  let (sourceIDs, targetIDs) = flatIDs(
    count: 100_000, deleted: 20_000..<30_000, inserted: 10_000, insertAt: 30_000, shuffled: 0..<2_000)
  var random = SplitMix64(state: 7)
  let uuids = (0..<110_000).map { _ in
    UUID(uuid: withUnsafeBytes(of: (random.next(), random.next())) { $0.load(as: uuid_t.self) })
  }
  func ratio<ID: Hashable & Sendable>(_ id: (Int) -> ID) -> (ms: Double, floor: Double) {
    typealias S = Section<Int, Item<ID>>
    let old = [S(id: 0, items: sourceIDs.map { Item(id: id($0)) })]
    let new = [S(id: 0, items: targetIDs.map { Item(id: id($0)) })]
    guard let held = try? Snapshot(old) else { fatalError("invalid data") }
    let (oldIDs, newIDs) = (sourceIDs.map(id), targetIDs.map(id))
    // Alternating iterations, so that a change in the machine's load between the two affects both alike.
    let (ours, floor) = measureAlternately(
      iterations,
      {
        guard let snapshot = try? Snapshot(new) else { fatalError("invalid data") }
        consume(Changeset(from: held, to: snapshot))
      }, { dictionaryFloorPass(oldIDs, newIDs) })
    return (ours.median, floor.median)
  }
  let int = ratio { $0 }
  let uuid = ratio { uuids[$0] }
  let string = ratio { "item-\($0)-\($0 &* 2_654_435_761 % 1_000_003)" }
  let ratios = [int, uuid, string].map { $0.ms / $0.floor }
  return RuntimeResult(
    name: "new-snapshot-diff", ms: uuid.ms, floorMS: uuid.floor,
    extra: [
      "vs_floor": ratios.max() ?? .nan, "vs_floor_int": ratios[0], "vs_floor_uuid": ratios[1],
      "vs_floor_string": ratios[2],
    ],
    note: String(
      format: "100k ids vs floor: Int %.2fx, UUID %.2fx, String %.2fx", ratios[0], ratios[1], ratios[2]))
}

/// The resident memory a 1,000,000-item source adds (`bytes`), against the plain `[Item]` array of the
/// same items (`floor_bytes`: count × stride).
func resident(count: Int) -> RuntimeResult {
  let before = trimmedResidentBytes()
  let source = try? BasicDataSource(sections: flatItems(count))
  let bytes = residentBytes() - before
  withExtendedLifetime(source) {}
  let floor = Double(count * MemoryLayout<Item<Int>>.stride)
  return RuntimeResult(
    name: "resident-1m", ms: .nan, floorMS: .nan, extra: ["bytes": bytes, "floor_bytes": floor],
    note: String(format: "%.1f MB, %.1fx the plain array (%.1f MB)", bytes / 1e6, bytes / floor, floor / 1e6))
}
