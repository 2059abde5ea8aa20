// What the default history keeps at a newcomer's load: a pipeline of deals of a few fields, edited a few
// at a time a thousand times a second.

import SimpleSource
import SimpleSourceTesting

import BenchAllocator

let historyCaseNames = ["history-window"]

/// A deal of a sales pipeline: the shape of item a new user's service keeps.
struct Deal: Identifiable, Equatable, Sendable {
  let id: Int
  var title: String
  var owner: String
  var stage: Int
  var valueCents: Int
  var probability: Double
  var updated: Int
}

typealias DealSection = Section<Int, Deal>

/// The load `history-window` models: batches a second, each of this many changed deals.
let historyBatchesPerSecond = 1_000.0
let historyChangesPerBatch = 3
/// What ``HistoryLimit/default`` says it keeps at that load.
let historyStatedSeconds = 60.0

/// Bytes the allocator holds for the process, where it can say.
func allocatedBytes() -> Int? {
  let bytes = Int(bench_allocated_bytes())
  return bytes == 0 ? nil : bytes
}

/// Drives `batches` batches of ``historyChangesPerBatch`` mixed changes (seven in ten a deal's value, the
/// rest a move to another stage, an insert or a delete) into a source of 60,000 deals in 15 stages with
/// `history`; returns the source and the allocator's growth while it ran.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func drivePipeline(batches: Int, history: HistoryLimit) async -> (BasicDataSource<DealSection>, held: Int?) {
  let stages = 15
  let perStage = 4_000
  let sections = (0..<stages).map { stage in
    DealSection(
      id: stage,
      items: (0..<perStage).map { index in
        let id = stage * perStage + index
        return Deal(
          id: id, title: "Deal \(id) with a customer", owner: "rep-\(id % 6)", stage: stage,
          valueCents: id * 100, probability: 0.5, updated: 0)
      })
  }
  let before = allocatedBytes()
  guard let source = try? BasicDataSource(sections: sections, history: history) else {
    fatalError("invalid data")
  }
  var live = Array(0..<(stages * perStage))
  var next = live.count
  var random = SeededGenerator(seed: 0x0DE_A15)
  for round in 0..<batches {
    var changes: [(kind: Int, id: Int, stage: Int)] = []
    for _ in 0..<historyChangesPerBatch {
      let roll = Int.random(in: 0..<20, using: &random)
      let index = Int.random(in: 0..<live.count, using: &random)
      let kind = roll < 14 ? 0 : roll < 17 ? 1 : roll < 19 ? 2 : 3
      let id = live[index]
      switch kind {
      case 2:
        live.append(next)
        changes.append((kind, next, Int.random(in: 0..<stages, using: &random)))
        next += 1
      case 3:
        live.swapAt(index, live.count - 1)
        live.removeLast()
        changes.append((kind, id, 0))
      default: changes.append((kind, id, Int.random(in: 0..<stages, using: &random)))
      }
    }
    let batch = changes
    _ = try? await source.transaction { transaction in
      var deleted = Set<Int>()
      for change in batch {
        switch change.kind {
        case 0:
          guard !deleted.contains(change.id) else { continue }
          try transaction.updateItem(change.id) {
            $0.valueCents += 100
            $0.updated = round
          }
        case 1:
          guard !deleted.contains(change.id) else { continue }
          try transaction.moveItem(change.id, toSection: change.stage)
        case 2:
          try transaction.appendItems(
            [
              Deal(
                id: change.id, title: "Deal \(change.id)", owner: "rep-\(change.id % 6)", stage: change.stage,
                valueCents: 0, probability: 0.1, updated: round)
            ], toSection: change.stage)
        default:
          deleted.insert(change.id)
          try transaction.deleteItems([change.id])
        }
      }
    }
    await source.settled()
  }
  let after = allocatedBytes()
  return (source, before.flatMap { before in after.map { $0 - before } })
}

/// `history-window`: the seconds of versions the default history keeps at a newcomer's load (60,000
/// deals of seven fields in 15 stages, 1,000 batches a second of 3 changed deals: 3,000 changes a second),
/// against what its description states (`vs_stated`, at least 1). `held_mib` is what the allocator holds
/// for the retained versions (the same run with `HistoryLimit.newest` subtracted) and `held_vs_limit` that
/// over the limit's bytes. `resume_ms` is a subscribe from the oldest retained version, which rebuilds
/// that version's state from its edits, and `resume_vs_subscribe` that over a subscribe to the newest.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
func historyWindow(iterations: Int) async -> RuntimeResult {
  let batches = sized(70_000, quick: 3_000)
  let (source, held) = await drivePipeline(batches: batches, history: .default)
  let retained = source.retainedVersions
  let seconds = Double(retained.count) / historyBatchesPerSecond
  var resumeTimes: [Double] = []
  var subscribeTimes: [Double] = []
  for _ in 0..<max(3, iterations / 3) {
    var start = ContinuousClock.now
    let resumption = await source.subscribe(from: retained[0])
    resumeTimes.append(elapsedMS(since: start))
    guard resumption.isResumed else { fatalError("the oldest retained version did not resume") }
    resumption.subscription.cancel()
    start = ContinuousClock.now
    let fresh = await source.subscribe()
    subscribeTimes.append(elapsedMS(since: start))
    fresh.cancel()
  }
  let (control, controlHeld) = await drivePipeline(batches: batches, history: .newest)
  guard await control.snapshot.sections == (await source.snapshot.sections) else {
    fatalError("the runs differ")
  }
  let heldBytes = held.flatMap { held in controlHeld.map { Double(held - $0) } } ?? .nan
  let mib = 1024.0 * 1024.0
  let resumeMS = median(resumeTimes)
  return RuntimeResult(
    name: "history-window", ms: resumeMS, floorMS: .nan,
    extra: [
      "seconds": seconds, "stated_seconds": historyStatedSeconds, "vs_stated": seconds / historyStatedSeconds,
      "versions": Double(retained.count), "held_mib": heldBytes / mib,
      "estimated_mib": Double(source.retainedBytes) / mib,
      "held_vs_estimated": heldBytes / Double(source.retainedBytes),
      "held_vs_limit": heldBytes / Double(HistoryLimit.default.bytes), "resume_ms": resumeMS,
      "resume_vs_subscribe": resumeMS / median(subscribeTimes),
    ],
    note: String(
      format: "%d versions: %.1f s at 1,000 batches/s (stated %.0f s); %.1f MiB held; resume %.2f ms",
      retained.count, seconds, historyStatedSeconds, heldBytes / mib, resumeMS))
}
